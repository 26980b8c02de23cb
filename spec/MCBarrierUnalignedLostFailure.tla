-------------------- MODULE MCBarrierUnalignedLostFailure --------------------
(***************************************************************************)
(* MUST FAIL. Unaligned barrier snapshots whose overtaken records are not  *)
(* stored: MCBarrierUnaligned, but a barrier that overtakes records        *)
(* forgets them. They are in no recorded state and no stored buffer, and   *)
(* their source does not replay them, so a restore loses them. Expected:   *)
(* ExactlyOnceAfterRestore is violated.                                    *)
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

\* The bug: the records a barrier overtakes are not stored.
Forgotten(ahead) == << >>
=============================================================================
