------------------- MODULE MCNewestFirstRecordingFailure --------------------
(***************************************************************************)
(* MUST FAIL. Bug: a recorded stream is kept newest first.  With three     *)
(* tokens two messages of different values can be recorded on one buffer,  *)
(* and the snapshot holds them in the wrong order.  Expected: Lemma0 is    *)
(* violated.                                                               *)
(***************************************************************************)
EXTENDS ChandyLamportToken

MCProc          == {"p1", "p2"}
MCChan          == {<<"p1", "p2">>, <<"p2", "p1">>}
MCTokens        == [p1 |-> 3, p2 |-> 0]
MCSnap          == {1}
MCStarters      == 1 :> {"p2"}
MCSequential    == FALSE
MCMaxAppActions == 2

\* The bug (newest-first-recording): a recorded stream is kept newest first.
RecordNewestFirst(s, m) == << m >> \o s
=============================================================================
