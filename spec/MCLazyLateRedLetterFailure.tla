--------------------- MODULE MCLazyLateRedLetterFailure ----------------------
(***************************************************************************)
(* MUST FAIL. Bug: the lazy rule without its deadline.  A machine that     *)
(* owes a red letter to a buffer sends application messages over it        *)
(* anyway, so a message sent after the sender recorded its state reaches   *)
(* a white receiver ahead of the red letter and is counted twice: in the   *)
(* sender's recorded state and in the receiver's.  "before p sends further *)
(* messages along c" is what the guard MaySend enforces.  Expected: Lemma0 *)
(* is violated.                                                            *)
(***************************************************************************)
EXTENDS LazyChandyLamportToken

MCProc          == {"p1", "p2"}
MCChan          == {<<"p1", "p2">>, <<"p2", "p1">>}
MCTokens        == [p1 |-> 2, p2 |-> 0]
MCSnap          == {1}
MCStarters      == 1 :> {"p1", "p2"}
MCSequential    == FALSE
MCMaxAppActions == 3

\* The bug: a buffer owed a red letter takes application messages all the same.
SendAnyway(c) == TRUE
=============================================================================
