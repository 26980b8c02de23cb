--------------------------- MODULE MCLazyComplete3 ---------------------------
(***************************************************************************)
(* Lazy red letters on MCTokenComplete3's network: three machines          *)
(* connected every way, p1 and p2 holding a token each, p1 the starter.    *)
(* Each machine that turns red owes two red letters, and pays each when it *)
(* likes before its next send on that buffer.                              *)
(***************************************************************************)
EXTENDS LazyChandyLamportToken

MCProc          == {"p1", "p2", "p3"}
MCChan          == {<<"p1", "p2">>, <<"p2", "p1">>, <<"p1", "p3">>,
                    <<"p3", "p1">>, <<"p2", "p3">>, <<"p3", "p2">>}
MCTokens        == [p1 |-> 1, p2 |-> 1, p3 |-> 0]
MCSnap          == {1}
MCStarters      == 1 :> {"p1"}
MCSequential    == FALSE
MCMaxAppActions == 2
=============================================================================
