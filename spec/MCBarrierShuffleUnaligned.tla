---------------------- MODULE MCBarrierShuffleUnaligned ----------------------
(***************************************************************************)
(* Unaligned barrier snapshots on MCBarrierShuffle's keyed shuffle: each   *)
(* counter snapshots at the first of its two barriers, and stores what the *)
(* barriers overtake and what arrives from the other input before its      *)
(* barrier.                                                                *)
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
MCMode      == "unaligned"
=============================================================================
