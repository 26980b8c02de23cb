---------------- MODULE MCRedLetterLeftUnreadLivenessFailure ----------------
(***************************************************************************)
(* MUST FAIL (liveness). Bug: a machine that is red in a red letter's      *)
(* snapshot never takes that letter from its buffer.  Every invariant      *)
(* holds (the letter stays where it is, one per buffer), but the snapshot  *)
(* never completes: only the liveness property sees this bug.              *)
(***************************************************************************)
EXTENDS ChandyLamportToken

MCProc          == {"p1", "p2"}
MCChan          == {<<"p1", "p2">>, <<"p2", "p1">>}
MCTokens        == [p1 |-> 1, p2 |-> 0]
MCSnap          == {1}
MCStarters      == 1 :> {"p1"}
MCSequential    == FALSE
MCMaxAppActions == 2

\* The bug (red-letter-left-unread): a machine that is red in a red letter's
\* snapshot never takes that letter from its buffer (it stops reading red
\* letters once red).
LeavesRedLetters(c) ==
    IF buf[c] = << >> THEN {}
    ELSE IF buf[c][1].kind = "red" /\ Dst(c) \in red[buf[c][1].snap] THEN {}
    ELSE {1}
=============================================================================
