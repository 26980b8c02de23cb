----------------- MODULE MCHistoryRedLetterRecordedFailure ------------------
(***************************************************************************)
(* MUST FAIL. Bug: the red letter that ends a buffer's recording is        *)
(* recorded as a message (the value 0).  In the computation of             *)
(* MCHistoryTermination, a snapshot started after everything has           *)
(* terminated then shows a message in flight: termination is not detected. *)
(* Expected: StableLemma0 is violated.                                     *)
(***************************************************************************)
EXTENDS ChandyLamportHistory

MCProc          == {"P1", "P2", "P3"}
MCChan          == {<<"P1", "P2">>, <<"P2", "P3">>, <<"P3", "P1">>}
MCScript        ==
    [P1 |-> << [name |-> "A", kind |-> "internal", peer |-> "P1"],
               [name |-> "B", kind |-> "send",     peer |-> "P2"],
               [name |-> "C", kind |-> "receive",  peer |-> "P3"] >>,
     P2 |-> << [name |-> "D", kind |-> "receive",  peer |-> "P1"],
               [name |-> "E", kind |-> "send",     peer |-> "P3"] >>,
     P3 |-> << [name |-> "F", kind |-> "receive",  peer |-> "P2"],
               [name |-> "G", kind |-> "send",     peer |-> "P1"] >>]
MCStartAfter    == 1 :> 2
MCSnap          == {1}
MCStarters      == 1 :> {"P2"}
MCSequential    == FALSE
MCMaxAppActions == 7

\* The bug (red-letter-recorded): the red letter that ends a buffer's
\* recording is recorded as a message.
RecordsRedLetter(k, p, c) ==
    IF p \in red[k] /\ c \notin redBuf[k] THEN << 0 >> ELSE << >>
=============================================================================
