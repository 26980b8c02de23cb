----------------------- MODULE MCTokenComplete3Huge --------------------------
(***************************************************************************)
(* MCTokenComplete3Large with six application actions per snapshot instead *)
(* of four: three machines, every pair connected both ways, two tokens,    *)
(* and one snapshot that p1 or p2 (or both) may start.  About 7 million    *)
(* distinct states: the model of docs/spark.md that a single process       *)
(* capped at 1 GiB cannot explore, and Spark with bounded workers can.     *)
(*                                                                         *)
(* Its configuration checks the type invariant, the red-letter invariant   *)
(* and Dijkstra's two lemmas (Lemma0, Lemma1); the stable-property         *)
(* invariants and the shadow property of MCTokenComplete3Large are left    *)
(* out so that TLC, the explorer and the Spark search all check the same   *)
(* four invariants in minutes, not hours.                                  *)
(***************************************************************************)
EXTENDS ChandyLamportToken

MCProc          == {"p1", "p2", "p3"}
MCChan          == {<<"p1", "p2">>, <<"p2", "p1">>, <<"p1", "p3">>,
                    <<"p3", "p1">>, <<"p2", "p3">>, <<"p3", "p2">>}
MCTokens        == [p1 |-> 1, p2 |-> 1, p3 |-> 0]
MCSnap          == {1}
MCStarters      == 1 :> {"p1", "p2"}
MCSequential    == FALSE
MCMaxAppActions == 6
=============================================================================
