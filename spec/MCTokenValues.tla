--------------------------- MODULE MCTokenValues ----------------------------
(***************************************************************************)
(* Two machines connected both ways and three tokens, so that messages     *)
(* carry different values (1, 2 or 3 tokens) and the order of two messages *)
(* in a buffer or in a recorded stream can be seen: with two tokens every  *)
(* pair in flight is <<1, 1>>.  One snapshot, started by p2.               *)
(***************************************************************************)
EXTENDS ChandyLamportToken

MCProc          == {"p1", "p2"}
MCChan          == {<<"p1", "p2">>, <<"p2", "p1">>}
MCTokens        == [p1 |-> 3, p2 |-> 0]
MCSnap          == {1}
MCStarters      == 1 :> {"p2"}
MCSequential    == FALSE
MCMaxAppActions == 2
=============================================================================
