--------------------- MODULE MCBarrierCyclicNoLogFailure ---------------------
(***************************************************************************)
(* MUST FAIL. MCBarrierCyclic without the back-edge log: the head h        *)
(* records nothing it receives from the back edge after its snapshot, so a *)
(* record in flight round the loop when the checkpoint is taken is in no   *)
(* recorded state and in no buffer, and its source does not replay it: a   *)
(* restore loses it.  Expected: ExactlyOnceAfterRestore is violated.       *)
(***************************************************************************)
EXTENDS BarrierSnapshot

MCProc      == {"s", "h", "t"}
MCChan      == {<<"s", "h">>, <<"h", "t">>, <<"t", "h">>}
MCSources   == {"s"}
MCBackEdges == {<<"t", "h">>}
MCInput     == [s |-> <<1, 1>>]
MCRouteTo   == [s |-> (1 :> "h"), h |-> (1 :> "t"), t |-> (1 :> "h")]
MCMaxRounds == 1
MCCkpt      == {1}
MCMode      == "aligned"

\* The bug: the records of back edges are not logged.
NoLogging(n, p, c) == FALSE
=============================================================================
