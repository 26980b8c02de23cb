-------------------- MODULE MCStopAtFirstRedLetterFailure --------------------
(***************************************************************************)
(* MUST FAIL. Bug: a machine stops recording on all its input buffers as   *)
(* soon as it receives its first red letter, instead of stopping on each   *)
(* buffer at that buffer's red letter. Expected: Lemma0 is violated.       *)
(***************************************************************************)
EXTENDS ChandyLamportToken

MCProc          == {"p1", "p2", "p3"}
MCChan          == {<<"p1", "p2">>, <<"p2", "p1">>, <<"p1", "p3">>,
                    <<"p3", "p1">>, <<"p2", "p3">>, <<"p3", "p2">>}
MCTokens        == [p1 |-> 1, p2 |-> 1, p3 |-> 0]
MCSnap          == {1}
MCStarters      == 1 :> {"p1"}
MCSequential    == FALSE
MCMaxAppActions == 2

\* The bug: recording on every buffer of p ends at the first red letter p receives.
StopAtFirst(k, p, c) == p \in red[k] /\ In(p) \cap redBuf[k] = {}
=============================================================================
