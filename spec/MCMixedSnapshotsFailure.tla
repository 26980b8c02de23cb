----------------------- MODULE MCMixedSnapshotsFailure -----------------------
(***************************************************************************)
(* MUST FAIL. Bug: the state of concurrent snapshots is mixed up: a red    *)
(* letter of one snapshot turns its buffer red in every snapshot its       *)
(* receiver takes part in, so recording for the other snapshot stops too   *)
(* early. Expected: Lemma0 is violated.                                    *)
(***************************************************************************)
EXTENDS ChandyLamportToken

MCProc          == {"p1", "p2"}
MCChan          == {<<"p1", "p2">>, <<"p2", "p1">>}
MCTokens        == [p1 |-> 1, p2 |-> 1]
MCSnap          == {1, 2}
MCStarters      == (1 :> {"p1"}) @@ (2 :> {"p2"})
MCSequential    == FALSE
MCMaxAppActions == 2

\* The bug: the snapshot id on the red letter is ignored.
TurnsRedInAll(c, k) == {k} \cup {j \in Snap : Dst(c) \in red[j]}
=============================================================================
