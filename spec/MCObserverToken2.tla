-------------------------- MODULE MCObserverToken2 ---------------------------
(***************************************************************************)
(* The observer formulation with message counts, over MCToken2's network   *)
(* with non-FIFO buffers: two machines connected both ways, passing two    *)
(* tokens that p1 holds at first; p1 is the observer.  Messages overtake   *)
(* one another, and a white message may reach p1 long after every saved    *)
(* state has: the observer waits for it because the counts say so.         *)
(***************************************************************************)
EXTENDS ObserverSnapshotToken

MCProc     == {"p1", "p2"}
MCChan     == {<<"p1", "p2">>, <<"p2", "p1">>}
MCTokens   == [p1 |-> 2, p2 |-> 0]
MCSnap     == {1}
MCObserver == 1 :> "p1"
MCMaxSends == 2
=============================================================================
