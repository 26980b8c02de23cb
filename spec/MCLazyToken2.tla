---------------------------- MODULE MCLazyToken2 -----------------------------
(***************************************************************************)
(* Lazy red letters on MCToken2's network: two machines connected both     *)
(* ways, passing two tokens that p1 holds at first, one snapshot either    *)
(* machine may start.  p2 may never send again (it holds no token until it *)
(* receives one), so the red letter it owes p1 is paid only by fairness.   *)
(***************************************************************************)
EXTENDS LazyChandyLamportToken

MCProc          == {"p1", "p2"}
MCChan          == {<<"p1", "p2">>, <<"p2", "p1">>}
MCTokens        == [p1 |-> 2, p2 |-> 0]
MCSnap          == {1}
MCStarters      == 1 :> {"p1", "p2"}
MCSequential    == FALSE
MCMaxAppActions == 3
=============================================================================
