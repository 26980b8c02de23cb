---------------------- MODULE MCReorderAfterCutFailure ----------------------
(***************************************************************************)
(* MUST FAIL. Bug: once a buffer is red its messages are received in any   *)
(* order.  The cut is right (Lemma0 holds), but after it a machine may     *)
(* receive 2 tokens sent after 1 token first, which the application alone  *)
(* cannot do.  Expected: Lemma1 is violated (three tokens make the         *)
(* messages differ).                                                       *)
(***************************************************************************)
EXTENDS ChandyLamportToken

MCProc          == {"p1", "p2"}
MCChan          == {<<"p1", "p2">>, <<"p2", "p1">>}
MCTokens        == [p1 |-> 3, p2 |-> 0]
MCSnap          == {1}
MCStarters      == 1 :> {"p2"}
MCSequential    == FALSE
MCMaxAppActions == 2

\* The bug (reorder-after-cut): once a buffer is red in every snapshot its
\* messages are received in any order (the implementation keeps order only
\* while it records).
AnyPositionOnceRed(c) ==
    IF buf[c] = << >> THEN {}
    ELSE IF \A k \in Snap : c \in redBuf[k] THEN 1..Len(buf[c]) ELSE {1}
=============================================================================
