------------------------------ MODULE MCToken2 -------------------------------
(***************************************************************************)
(* Two machines connected both ways, passing two tokens; one snapshot that *)
(* either machine may start (so it may have two starters). The smallest    *)
(* model of the algorithm. Every constant of a model is a literal TLA+     *)
(* value defined here, so the Python model reads the same definitions TLC  *)
(* does.                                                                   *)
(***************************************************************************)
EXTENDS ChandyLamportToken

MCProc          == {"p1", "p2"}
MCChan          == {<<"p1", "p2">>, <<"p2", "p1">>}
MCTokens        == [p1 |-> 2, p2 |-> 0]
MCSnap          == {1}
MCStarters      == 1 :> {"p1", "p2"}
MCSequential    == FALSE
MCMaxAppActions == 3
=============================================================================
