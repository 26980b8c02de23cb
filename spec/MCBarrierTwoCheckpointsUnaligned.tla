------------------ MODULE MCBarrierTwoCheckpointsUnaligned -------------------
(***************************************************************************)
(* Unaligned barrier snapshots with two checkpoints in flight, on          *)
(* MCBarrierTwoCheckpoints' graph.                                         *)
(***************************************************************************)
EXTENDS BarrierSnapshot

MCProc      == {"s1", "s2", "k"}
MCChan      == {<<"s1", "k">>, <<"s2", "k">>}
MCSources   == {"s1", "s2"}
MCBackEdges == {}
MCInput     == [s1 |-> <<1>>, s2 |-> <<1>>]
MCRouteTo   == [s1 |-> (1 :> "k"), s2 |-> (1 :> "k"), k |-> (1 :> "k")]
MCMaxRounds == 0
MCCkpt      == {1, 2}
MCMode      == "unaligned"
=============================================================================
