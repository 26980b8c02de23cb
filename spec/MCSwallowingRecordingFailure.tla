-------------------- MODULE MCSwallowingRecordingFailure --------------------
(***************************************************************************)
(* MUST FAIL. Bug: a red machine that records an in-flight message keeps   *)
(* it from its application: the snapshot is right (Lemma0 holds), but the  *)
(* tokens recorded in flight never arrive, so the final state holds fewer  *)
(* tokens than the snapshot and no run of the application leads there.     *)
(* Expected: Lemma1 is violated, and Lemma1 alone of the lemmas.           *)
(***************************************************************************)
EXTENDS ChandyLamportToken

MCProc          == {"p1", "p2"}
MCChan          == {<<"p1", "p2">>, <<"p2", "p1">>}
MCTokens        == [p1 |-> 2, p2 |-> 0]
MCSnap          == {1}
MCStarters      == 1 :> {"p1", "p2"}
MCSequential    == FALSE
MCMaxAppActions == 3

\* The bug (swallowing-recording): a red machine that records an in-flight
\* message keeps it from its application (recording consumes the message).
ConsumeRecorded(p, c) == \E k \in Snap : Recording(k, p, c)
=============================================================================
