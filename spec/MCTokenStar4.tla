---------------------------- MODULE MCTokenStar4 ----------------------------
(***************************************************************************)
(* A star: the hub p1 connected both ways with three leaves p2, p3, p4, so *)
(* the hub records three input buffers at once and every red letter        *)
(* between leaves passes through it.  Two tokens at the leaves p2 and p3;  *)
(* the leaf p2 starts the snapshot; one application action may start while *)
(* it runs (tokens sent before it may be in flight on every buffer).       *)
(***************************************************************************)
EXTENDS ChandyLamportToken

MCProc          == {"p1", "p2", "p3", "p4"}
MCChan          == {<<"p1", "p2">>, <<"p2", "p1">>, <<"p1", "p3">>, <<"p3", "p1">>,
                   <<"p1", "p4">>, <<"p4", "p1">>}
MCTokens        == [p1 |-> 0, p2 |-> 1, p3 |-> 1, p4 |-> 0]
MCSnap          == {1}
MCStarters      == 1 :> {"p2"}
MCSequential    == FALSE
MCMaxAppActions == 1
=============================================================================
