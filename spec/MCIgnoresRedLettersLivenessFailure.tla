----------------- MODULE MCIgnoresRedLettersLivenessFailure -----------------
(***************************************************************************)
(* MUST FAIL (liveness). Bug: a machine that is already red ignores the    *)
(* red letters it receives, so their buffers never turn red and the        *)
(* snapshot never completes.  The lemmas hold vacuously (they speak of     *)
(* completed snapshots only); TLC reports 'Temporal properties were        *)
(* violated' for SnapshotsComplete.  The application is bounded in the     *)
(* guards, not by a state constraint, so the verdict is sound.             *)
(***************************************************************************)
EXTENDS ChandyLamportToken

MCProc          == {"p1", "p2"}
MCChan          == {<<"p1", "p2">>, <<"p2", "p1">>}
MCTokens        == [p1 |-> 1, p2 |-> 0]
MCSnap          == {1}
MCStarters      == 1 :> {"p1"}
MCSequential    == FALSE
MCMaxAppActions == 2

\* The bug (ignores-red-letters-once-red): a machine that is already red
\* ignores the red letters it receives: their buffers never turn red.
IgnoredOnceRed(c, k) == IF Dst(c) \in red[k] THEN {} ELSE {k}
=============================================================================
