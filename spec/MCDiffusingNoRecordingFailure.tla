------------------- MODULE MCDiffusingNoRecordingFailure --------------------
(***************************************************************************)
(* MUST FAIL. Bug: a red machine never records in-flight messages, in a    *)
(* diffusing computation on two machines.  A work message in flight at the *)
(* cut is lost from the snapshot, which then shows every machine idle and  *)
(* no message travelling: the kit 'detects' termination while the receiver *)
(* of that message is active.  Expected: StableDetection is violated (and  *)
(* StableLemma1, not StableLemma0).                                        *)
(***************************************************************************)
EXTENDS ChandyLamportDiffusing

MCProc          == {"p1", "p2"}
MCChan          == {<<"p1", "p2">>, <<"p2", "p1">>}
MCRoot          == "p1"
MCBudget        == 1
MCSnap          == {1}
MCStarters      == 1 :> {"p1", "p2"}
MCSequential    == FALSE
MCMaxAppActions == 4

\* The bug (no-channel-recording): a red machine never records the messages
\* it receives from white input buffers.
NoRecording(k, p, c) == FALSE
=============================================================================
