------------------------- MODULE MCBarrierUnaligned --------------------------
(***************************************************************************)
(* Unaligned barrier snapshots on MCBarrierAligned's dataflow: k snapshots *)
(* at the first barrier it sees, a barrier overtakes the records ahead of  *)
(* it in k's input, and the overtaken records, like those k processes from *)
(* the other input before its barrier, are stored with the checkpoint.     *)
(* Nothing blocks; exactly-once holds, with channel state.                 *)
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
MCMode      == "unaligned"
=============================================================================
