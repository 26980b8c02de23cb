------------------------------- MODULE MCSeed --------------------------------
(***************************************************************************)
(* The worked example of seeds/001 (after Gupta's CS425 notes): three      *)
(* machines P1, P2, P3 connected both ways, events A..J, and P1 starts the *)
(* snapshot right after its event B. Every interleaving of the scripts is  *)
(* explored; in the one drawn in the example P1 records {A, B}, P2 records *)
(* {F, G, H}, P3 records {I}, and the buffer P2 -> P1 records the message  *)
(* sent at H.                                                              *)
(***************************************************************************)
EXTENDS ChandyLamportHistory

MCProc          == {"P1", "P2", "P3"}
MCChan          == {<<"P1", "P2">>, <<"P2", "P1">>, <<"P1", "P3">>,
                    <<"P3", "P1">>, <<"P2", "P3">>, <<"P3", "P2">>}
MCScript        ==
    [P1 |-> << [name |-> "A", kind |-> "internal", peer |-> "P1"],
               [name |-> "B", kind |-> "send",     peer |-> "P2"],
               [name |-> "C", kind |-> "internal", peer |-> "P1"],
               [name |-> "D", kind |-> "receive",  peer |-> "P2"],
               [name |-> "E", kind |-> "receive",  peer |-> "P3"] >>,
     P2 |-> << [name |-> "F", kind |-> "internal", peer |-> "P2"],
               [name |-> "G", kind |-> "receive",  peer |-> "P1"],
               [name |-> "H", kind |-> "send",     peer |-> "P1"] >>,
     P3 |-> << [name |-> "I", kind |-> "internal", peer |-> "P3"],
               [name |-> "J", kind |-> "send",     peer |-> "P1"] >>]
MCStartAfter    == 1 :> 2
MCSnap          == {1}
MCStarters      == 1 :> {"P1"}
MCSequential    == FALSE
MCMaxAppActions == 10
=============================================================================
