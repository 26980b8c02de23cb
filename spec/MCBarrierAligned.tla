-------------------------- MODULE MCBarrierAligned ---------------------------
(***************************************************************************)
(* Aligned barrier snapshots on the smallest dataflow with an operator of  *)
(* several inputs: sources s1 and s2 (reading two records and one) both    *)
(* send to the keyed counter k, a shuffle onto one key group; one          *)
(* checkpoint. k must align: it blocks the input whose barrier came first  *)
(* until the other's arrives. The job may fail once after the checkpoint   *)
(* completed and restore it.                                               *)
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
=============================================================================
