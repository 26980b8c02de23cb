------------------------ MODULE MCNeverForwardFailure ------------------------
(***************************************************************************)
(* MUST FAIL. Bug: only a starter sends red letters; a machine turned red  *)
(* by a red letter never forwards red letters, so the red-letter traffic   *)
(* stops. Expected: RedLetterInvariant is violated.                        *)
(***************************************************************************)
EXTENDS ChandyLamportToken

MCProc          == {"p1", "p2", "p3"}
MCChan          == {<<"p1", "p2">>, <<"p2", "p3">>, <<"p3", "p1">>}
MCTokens        == [p1 |-> 1, p2 |-> 0, p3 |-> 0]
MCSnap          == {1}
MCStarters      == 1 :> {"p1"}
MCSequential    == FALSE
MCMaxAppActions == 2

\* The bug: a machine that turns red on receiving a red letter sends none.
StarterOnly(p, k, from) == IF from = {} THEN Out(p) ELSE {}
=============================================================================
