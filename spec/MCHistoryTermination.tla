------------------------ MODULE MCHistoryTermination ------------------------
(***************************************************************************)
(* A scripted computation on the directed ring P1 -> P2 -> P3 -> P1 (A, B: *)
(* P1's internal event and send to P2; D, E: P2's receipt and send to P3;  *)
(* F, G: P3's receipt and send to P1; C: P1's receipt) whose termination   *)
(* is the stable predicate.  P2 starts the snapshot right after its last   *)
(* event E, while the others may or may not have finished, so the snapshot *)
(* state, the initial state and the final state are stable in some         *)
(* behaviours and not in others: the stable-predicate lemmas are not       *)
(* vacuous here, unlike in MCSeed.                                         *)
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
=============================================================================
