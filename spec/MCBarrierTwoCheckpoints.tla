----------------------- MODULE MCBarrierTwoCheckpoints -----------------------
(***************************************************************************)
(* Aligned barrier snapshots with two checkpoints on MCBarrierAligned's    *)
(* graph (one record per source): checkpoint 2 may be injected at one      *)
(* source while checkpoint 1 is still aligning at k, so barriers of both   *)
(* are in flight at once, and the job may restore either.                  *)
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
MCMode      == "aligned"
=============================================================================
