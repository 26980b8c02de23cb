------------------------- MODULE MCLazyUnpaidFailure -------------------------
(***************************************************************************)
(* MUST FAIL (liveness). Bug: no fairness for paying owed red letters,     *)
(* only EWD 864's fairness of receipt.  Once p2 has turned red it owes p1  *)
(* a red letter, but it need never send to p1 again (the application       *)
(* sends when it likes); nothing then forces it to pay, the buffer         *)
(* p2 -> p1 stays white for ever, and the snapshot never completes.        *)
(* Expected: SnapshotsComplete is violated (TLC 2.15 does not name the     *)
(* temporal property it reports violated).                                 *)
(***************************************************************************)
EXTENDS LazyChandyLamportToken

MCProc          == {"p1", "p2"}
MCChan          == {<<"p1", "p2">>, <<"p2", "p1">>}
MCTokens        == [p1 |-> 2, p2 |-> 0]
MCSnap          == {1}
MCStarters      == 1 :> {"p1", "p2"}
MCSequential    == FALSE
MCMaxAppActions == 3

\* The bug: owed red letters are paid when the machine feels like it, or never.
NoRedLetterFairness == TRUE
=============================================================================
