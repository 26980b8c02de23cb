--------------------- MODULE MCBarrierAtLeastOnceFailure ---------------------
(***************************************************************************)
(* MUST FAIL. Alignment skipped ("at least once"): MCBarrierAligned's      *)
(* dataflow, but an input whose barrier has arrived is not blocked, so k   *)
(* processes a record s1 sent after its barrier before k snapshots; the    *)
(* record is in k's recorded state, and s1 replays it after a restore:     *)
(* "these records will occur as duplicates". Expected:                     *)
(* ExactlyOnceAfterRestore is violated (the recorded cut is inconsistent   *)
(* before that: MCBarrierAtLeastOnceCutFailure).                           *)
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
