------------------------ MODULE MCTokenDirectedRing3 -------------------------
(***************************************************************************)
(* Three machines on a directed ring p1 -> p2 -> p3 -> p1 (strongly        *)
(* connected with one buffer per machine), two tokens; one snapshot        *)
(* started by p1.                                                          *)
(***************************************************************************)
EXTENDS ChandyLamportToken

MCProc          == {"p1", "p2", "p3"}
MCChan          == {<<"p1", "p2">>, <<"p2", "p3">>, <<"p3", "p1">>}
MCTokens        == [p1 |-> 2, p2 |-> 0, p3 |-> 0]
MCSnap          == {1}
MCStarters      == 1 :> {"p1"}
MCSequential    == FALSE
MCMaxAppActions == 3
=============================================================================
