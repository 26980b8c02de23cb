-------------------------- MODULE MCConcurrentLive ---------------------------
(***************************************************************************)
(* LARGE. MCConcurrent with the application bounded in the guards only     *)
(* (no state constraint), so that TLC's liveness check of                  *)
(* SnapshotsComplete is sound on its constants.                            *)
(* Two concurrent snapshots with different starters (p1 starts snapshot 1, *)
(* p2 starts snapshot 2) over two machines passing two tokens: the red     *)
(* letters of both travel the same buffers.                                *)
(***************************************************************************)
EXTENDS ChandyLamportToken

MCProc          == {"p1", "p2"}
MCChan          == {<<"p1", "p2">>, <<"p2", "p1">>}
MCTokens        == [p1 |-> 1, p2 |-> 1]
MCSnap          == {1, 2}
MCStarters      == (1 :> {"p1"}) @@ (2 :> {"p2"})
MCSequential    == FALSE
MCMaxAppActions == 2
=============================================================================
