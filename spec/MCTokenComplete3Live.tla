------------------------ MODULE MCTokenComplete3Live -------------------------
(***************************************************************************)
(* LARGE. MCTokenComplete3 with the application bounded in the guards only *)
(* (no state constraint), so that TLC's liveness check of                  *)
(* SnapshotsComplete is sound on its constants.                            *)
(* Three machines, every pair connected both ways, two tokens; one         *)
(* snapshot started by p1.                                                 *)
(***************************************************************************)
EXTENDS ChandyLamportToken

MCProc          == {"p1", "p2", "p3"}
MCChan          == {<<"p1", "p2">>, <<"p2", "p1">>, <<"p1", "p3">>,
                    <<"p3", "p1">>, <<"p2", "p3">>, <<"p3", "p2">>}
MCTokens        == [p1 |-> 1, p2 |-> 1, p3 |-> 0]
MCSnap          == {1}
MCStarters      == 1 :> {"p1"}
MCSequential    == FALSE
MCMaxAppActions == 2
=============================================================================
