--------------------- MODULE MCResentRedLettersFailure ----------------------
(***************************************************************************)
(* MUST FAIL. Bug: a red machine sends red letters again each time a red   *)
(* letter closes one of its input buffers.  The lemmas hold (red letters   *)
(* are invisible to the application), but a buffer carries two red letters *)
(* of one snapshot.  Expected: OneRedLetterPerBuffer is violated.          *)
(***************************************************************************)
EXTENDS ChandyLamportToken

MCProc          == {"p1", "p2"}
MCChan          == {<<"p1", "p2">>, <<"p2", "p1">>}
MCTokens        == [p1 |-> 1, p2 |-> 0]
MCSnap          == {1}
MCStarters      == 1 :> {"p1"}
MCSequential    == FALSE
MCMaxAppActions == 2

\* The bug (resent-red-letters): a red machine sends red letters again each
\* time a red letter closes one of its input buffers.
ResendOnWhite(p, k, c) == IF c \in redBuf[k] THEN {} ELSE Out(p)
=============================================================================
