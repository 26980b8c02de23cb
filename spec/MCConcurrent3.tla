--------------------------- MODULE MCConcurrent3 ----------------------------
(***************************************************************************)
(* Two concurrent snapshots on three machines: the directed ring p1 -> p2  *)
(* -> p3 -> p1, one token, p1 starts snapshot 1 and p2 starts snapshot 2,  *)
(* so the red letters of both travel the ring in the same buffers.         *)
(***************************************************************************)
EXTENDS ChandyLamportToken

MCProc          == {"p1", "p2", "p3"}
MCChan          == {<<"p1", "p2">>, <<"p2", "p3">>, <<"p3", "p1">>}
MCTokens        == [p1 |-> 1, p2 |-> 0, p3 |-> 0]
MCSnap          == {1, 2}
MCStarters      == (1 :> {"p1"}) @@ (2 :> {"p2"})
MCSequential    == FALSE
MCMaxAppActions == 2
=============================================================================
