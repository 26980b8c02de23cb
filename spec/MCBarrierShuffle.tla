-------------------------- MODULE MCBarrierShuffle ---------------------------
(***************************************************************************)
(* Aligned barrier snapshots on a keyed shuffle, the shape of the Flink    *)
(* experiment: sources s1 and s2 each read keys 1 and 2 and send each      *)
(* record to the counter of its key (k1 or k2), so every counter has two   *)
(* inputs to align; one checkpoint.                                        *)
(***************************************************************************)
EXTENDS BarrierSnapshot

MCProc      == {"s1", "s2", "k1", "k2"}
MCChan      == {<<"s1", "k1">>, <<"s1", "k2">>, <<"s2", "k1">>, <<"s2", "k2">>}
MCSources   == {"s1", "s2"}
MCBackEdges == {}
MCInput     == [s1 |-> <<1, 2>>, s2 |-> <<2, 1>>]
MCRouteTo   == [s1 |-> (1 :> "k1" @@ 2 :> "k2"), s2 |-> (1 :> "k1" @@ 2 :> "k2"),
                k1 |-> (1 :> "k1" @@ 2 :> "k1"), k2 |-> (1 :> "k2" @@ 2 :> "k2")]
MCMaxRounds == 0
MCCkpt      == {1}
MCMode      == "aligned"
=============================================================================
