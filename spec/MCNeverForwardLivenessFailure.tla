-------------------- MODULE MCNeverForwardLivenessFailure --------------------
(***************************************************************************)
(* MUST FAIL (liveness). Bug: only a starter sends red letters; a machine  *)
(* turned red by a red letter never forwards any, so no buffer into the    *)
(* starter ever turns red and the snapshot never completes, under weak     *)
(* fairness of receipt.  The model checks no invariant (the same bug also  *)
(* breaks RedLetterInvariant: see MCNeverForwardFailure), so the failure   *)
(* TLC and the Python model report is SnapshotsComplete's.                 *)
(***************************************************************************)
EXTENDS ChandyLamportToken

MCProc          == {"p1", "p2"}
MCChan          == {<<"p1", "p2">>, <<"p2", "p1">>}
MCTokens        == [p1 |-> 1, p2 |-> 0]
MCSnap          == {1}
MCStarters      == 1 :> {"p1"}
MCSequential    == FALSE
MCMaxAppActions == 2

\* The bug: a machine that turns red on receiving a red letter sends none.
StarterOnly(p, k, from) == IF from = {} THEN Out(p) ELSE {}
=============================================================================
