---------------------------- MODULE MCSequential -----------------------------
(***************************************************************************)
(* Two snapshots one after the other (snapshot 2 may start only when       *)
(* snapshot 1 has completed), either machine may start either.             *)
(***************************************************************************)
EXTENDS ChandyLamportToken

MCProc          == {"p1", "p2"}
MCChan          == {<<"p1", "p2">>, <<"p2", "p1">>}
MCTokens        == [p1 |-> 1, p2 |-> 0]
MCSnap          == {1, 2}
MCStarters      == (1 :> {"p1", "p2"}) @@ (2 :> {"p1", "p2"})
MCSequential    == TRUE
MCMaxAppActions == 2
=============================================================================
