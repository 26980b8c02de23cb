------------------- MODULE MCBarrierAtLeastOnceCutFailure --------------------
(***************************************************************************)
(* MUST FAIL. Alignment skipped, as in MCBarrierAtLeastOnceFailure,        *)
(* checked for what goes wrong first: the checkpoint records k's state     *)
(* with a record that s1 sent after recording its position, a record       *)
(* received in the cut but not sent in it. Expected: ConsistentCut is      *)
(* violated as the checkpoint completes (Lemma0 with it), before any       *)
(* failure.                                                                *)
(***************************************************************************)
EXTENDS BarrierSnapshot

MCProc      == {"s1", "s2", "k"}
MCChan      == {<<"s1", "k">>, <<"s2", "k">>}
MCSources   == {"s1", "s2"}
MCBackEdges == {}
MCInput     == [s1 |-> <<1, 1>>, s2 |-> <<1>>]
MCRouteTo   == [s1 |-> (1 :> "k"), s2 |-> (1 :> "k"), k |-> (1 :> "k")]
MCMaxRounds == 0
MCCkpt      == {1}
MCMode      == "aligned"

\* The bug: the operator keeps processing every input while it waits for the other barriers.
NeverBlocked(c) == FALSE
=============================================================================
