-------------------------- MODULE MCNonFifoFailure ---------------------------
(***************************************************************************)
(* MUST FAIL. Bug: buffers are not FIFO: any message in a buffer may be    *)
(* received, so an application message can overtake a red letter.          *)
(* Expected: Lemma0 is violated.                                           *)
(***************************************************************************)
EXTENDS ChandyLamportToken

MCProc          == {"p1", "p2"}
MCChan          == {<<"p1", "p2">>, <<"p2", "p1">>}
MCTokens        == [p1 |-> 2, p2 |-> 0]
MCSnap          == {1}
MCStarters      == 1 :> {"p1", "p2"}
MCSequential    == FALSE
MCMaxAppActions == 3

\* The bug: every position of the buffer is deliverable.
AnyPosition(c) == 1..Len(buf[c])
=============================================================================
