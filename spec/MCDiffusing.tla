----------------------------- MODULE MCDiffusing -----------------------------
(***************************************************************************)
(* A diffusing computation over three machines on a directed ring p1 -> p2 *)
(* -> p3 -> p1; p1 is the root and each machine may send one work message. *)
(* Its termination is the stable predicate: a snapshot that shows          *)
(* termination proves it (StableDetection).                                *)
(***************************************************************************)
EXTENDS ChandyLamportDiffusing

MCProc          == {"p1", "p2", "p3"}
MCChan          == {<<"p1", "p2">>, <<"p2", "p3">>, <<"p3", "p1">>}
MCRoot          == "p1"
MCBudget        == 1
MCSnap          == {1}
MCStarters      == 1 :> {"p1", "p2", "p3"}
MCSequential    == FALSE
MCMaxAppActions == 6
=============================================================================
