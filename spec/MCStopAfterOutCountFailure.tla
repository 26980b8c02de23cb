--------------------- MODULE MCStopAfterOutCountFailure ---------------------
(***************************************************************************)
(* MUST FAIL. Bug: a machine stops recording once it has received as many  *)
(* red letters as it has output buffers.  On a balanced topology that is   *)
(* harmless; here p3 has two input buffers and one output buffer, so it    *)
(* stops at its first red letter and misses the token p2 sends it.         *)
(* Expected: Lemma0 is violated.                                           *)
(***************************************************************************)
EXTENDS ChandyLamportToken

MCProc          == {"p1", "p2", "p3"}
MCChan          == {<<"p1", "p2">>, <<"p2", "p3">>, <<"p3", "p1">>, <<"p1", "p3">>}
MCTokens        == [p1 |-> 1, p2 |-> 1, p3 |-> 0]
MCSnap          == {1}
MCStarters      == 1 :> {"p1"}
MCSequential    == FALSE
MCMaxAppActions == 2

\* The bug (stop-after-out-count): a machine stops recording once it has
\* received as many red letters as it has output buffers (it counts Out(p),
\* not In(p)).
StopAfterOut(k, p, c) ==
    /\ p \in red[k] /\ c \notin redBuf[k]
    /\ Cardinality(In(p) \cap redBuf[k]) < Cardinality(Out(p))
=============================================================================
