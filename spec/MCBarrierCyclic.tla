--------------------------- MODULE MCBarrierCyclic ---------------------------
(***************************************************************************)
(* Aligned barrier snapshots on a cyclic dataflow, an iteration: source s  *)
(* feeds the head h of a loop, h feeds the tail t, and t sends each record *)
(* back to h over the back edge t -> h for one more round (MaxRounds = 1). *)
(* h does not block the back edge (its barrier comes only after h has sent *)
(* its own), so h logs the records it receives from the back edge between  *)
(* its snapshot and that barrier: they are the checkpoint's channel state. *)
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
=============================================================================
