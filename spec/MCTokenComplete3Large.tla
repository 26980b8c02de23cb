----------------------- MODULE MCTokenComplete3Large -------------------------
(***************************************************************************)
(* MCTokenComplete3 made large for the cross-check benchmark: three        *)
(* machines, every pair connected both ways, two tokens, up to four        *)
(* application actions per snapshot, and one snapshot that p1 or p2 (or    *)
(* both) may start.  About 0.9 million distinct states.                    *)
(***************************************************************************)
EXTENDS ChandyLamportToken

MCProc          == {"p1", "p2", "p3"}
MCChan          == {<<"p1", "p2">>, <<"p2", "p1">>, <<"p1", "p3">>,
                    <<"p3", "p1">>, <<"p2", "p3">>, <<"p3", "p2">>}
MCTokens        == [p1 |-> 1, p2 |-> 1, p3 |-> 0]
MCSnap          == {1}
MCStarters      == 1 :> {"p1", "p2"}
MCSequential    == FALSE
MCMaxAppActions == 4
=============================================================================
