--------------------- MODULE MCNoChannelRecordingFailure ---------------------
(***************************************************************************)
(* MUST FAIL. Bug: a red machine never records the messages it receives    *)
(* from white input buffers, so the tokens in flight when the snapshot is  *)
(* taken are lost from it. Expected: Lemma0 is violated.                   *)
(***************************************************************************)
EXTENDS ChandyLamportToken

MCProc          == {"p1", "p2"}
MCChan          == {<<"p1", "p2">>, <<"p2", "p1">>}
MCTokens        == [p1 |-> 2, p2 |-> 0]
MCSnap          == {1}
MCStarters      == 1 :> {"p1", "p2"}
MCSequential    == FALSE
MCMaxAppActions == 3

\* The bug: nothing is ever recorded for a buffer.
NoRecording(k, p, c) == FALSE
=============================================================================
