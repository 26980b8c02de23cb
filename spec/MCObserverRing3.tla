--------------------------- MODULE MCObserverRing3 ---------------------------
(***************************************************************************)
(* The observer formulation with message counts on MCTokenDirectedRing3's  *)
(* network: three machines in a directed ring p1 -> p2 -> p3 -> p1 with    *)
(* non-FIFO buffers, p1 holding two tokens and observing.  The request to  *)
(* p3 races with the red messages that reach it round the ring.            *)
(***************************************************************************)
EXTENDS ObserverSnapshotToken

MCProc     == {"p1", "p2", "p3"}
MCChan     == {<<"p1", "p2">>, <<"p2", "p3">>, <<"p3", "p1">>}
MCTokens   == [p1 |-> 2, p2 |-> 0, p3 |-> 0]
MCSnap     == {1}
MCObserver == 1 :> "p1"
MCMaxSends == 2
=============================================================================
