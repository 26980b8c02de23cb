------------------------ MODULE MCDiffusingComplete3 -------------------------
(***************************************************************************)
(* LARGE. A diffusing computation over three machines connected both ways; *)
(* p1 is the root and each machine may send one work message; any machine  *)
(* may start the snapshot. About half a million states.                    *)
(***************************************************************************)
EXTENDS ChandyLamportDiffusing

MCProc          == {"p1", "p2", "p3"}
MCChan          == {<<"p1", "p2">>, <<"p2", "p1">>, <<"p1", "p3">>,
                    <<"p3", "p1">>, <<"p2", "p3">>, <<"p3", "p2">>}
MCRoot          == "p1"
MCBudget        == 1
MCSnap          == {1}
MCStarters      == 1 :> {"p1", "p2", "p3"}
MCSequential    == FALSE
MCMaxAppActions == 4
=============================================================================
