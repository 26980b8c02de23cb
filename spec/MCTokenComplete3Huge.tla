----------------------- MODULE MCTokenComplete3Huge --------------------------
(***************************************************************************)
(* MCTokenComplete3Large made larger than one process's memory: three      *)
(* machines, every pair connected both ways, a token on each, up to five   *)
(* application actions per snapshot, and one snapshot that p1 or p2 (or   *)
(* both) may start.  Several million distinct states: the single-process   *)
(* explorer needs more than 1 GiB for it, the Spark search does not (see   *)
(* docs/spark.md).                                                         *)
(***************************************************************************)
EXTENDS ChandyLamportToken

MCProc          == {"p1", "p2", "p3"}
MCChan          == {<<"p1", "p2">>, <<"p2", "p1">>, <<"p1", "p3">>,
                    <<"p3", "p1">>, <<"p2", "p3">>, <<"p3", "p2">>}
MCTokens        == [p1 |-> 1, p2 |-> 1, p3 |-> 1]
MCSnap          == {1}
MCStarters      == 1 :> {"p1", "p2"}
MCSequential    == FALSE
MCMaxAppActions == 5
=============================================================================
