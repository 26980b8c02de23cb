------------------------- MODULE MCTokenAsymmetric3 -------------------------
(***************************************************************************)
(* An asymmetric strongly connected topology: the directed ring p1 -> p2   *)
(* -> p3 -> p1 with a chord p1 -> p3, so p1 has two output buffers and one *)
(* input buffer and p3 two input buffers and one output buffer (in every   *)
(* other model each machine has as many of each).  Two tokens, one at p1   *)
(* and one at p2; p1 starts the snapshot.                                  *)
(***************************************************************************)
EXTENDS ChandyLamportToken

MCProc          == {"p1", "p2", "p3"}
MCChan          == {<<"p1", "p2">>, <<"p2", "p3">>, <<"p3", "p1">>, <<"p1", "p3">>}
MCTokens        == [p1 |-> 1, p2 |-> 1, p3 |-> 0]
MCSnap          == {1}
MCStarters      == 1 :> {"p1"}
MCSequential    == FALSE
MCMaxAppActions == 2
=============================================================================
