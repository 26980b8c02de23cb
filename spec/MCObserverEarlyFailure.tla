----------------------- MODULE MCObserverEarlyFailure ------------------------
(***************************************************************************)
(* MUST FAIL. Bug: the observer declares the snapshot complete as soon as  *)
(* it holds every process's saved state, as the text of seeds/003 leaves   *)
(* it to do; it cannot know that a white message is still travelling (the  *)
(* buffers are not FIFO, so it can arrive arbitrarily late).  The message  *)
(* is missing from the snapshot, whose tokens no longer add up.  Expected: *)
(* Lemma0 is violated.                                                     *)
(***************************************************************************)
EXTENDS ObserverSnapshotToken

MCProc     == {"p1", "p2"}
MCChan     == {<<"p1", "p2">>, <<"p2", "p1">>}
MCTokens   == [p1 |-> 2, p2 |-> 0]
MCSnap     == {1}
MCObserver == 1 :> "p1"
MCMaxSends == 2

\* The bug: every saved state is in, so the snapshot is declared complete.
AllSavedStatesIn(k) == DOMAIN recMachine[k] = Proc
=============================================================================
