----------------------- MODULE MCLateRedLetterFailure ------------------------
(***************************************************************************)
(* MUST FAIL. Bug: a machine that has just turned red lets an application  *)
(* message overtake the red letter on the same buffer (it sends the red    *)
(* letter after the message), so the message is counted twice: in the      *)
(* sender's recorded state and in the buffer's recorded stream. Expected:  *)
(* Lemma0 is violated.                                                     *)
(***************************************************************************)
EXTENDS ChandyLamportToken

MCProc          == {"p1", "p2"}
MCChan          == {<<"p1", "p2">>, <<"p2", "p1">>}
MCTokens        == [p1 |-> 2, p2 |-> 0]
MCSnap          == {1}
MCStarters      == 1 :> {"p1", "p2"}
MCSequential    == FALSE
MCMaxAppActions == 3

\* The bug: a message sent right after the red letter goes in front of it.
LateEnqueue(s, m) ==
    IF s # << >> /\ s[Len(s)].kind = "red"
    THEN Append(SubSeq(s, 1, Len(s) - 1), m) \o << s[Len(s)] >>
    ELSE Append(s, m)
=============================================================================
