------------------------------ MODULE Network ------------------------------
(***************************************************************************)
(* The network of EWD 864: "a finite network of sequential machines,       *)
(* strongly connected by uni-directional, first-in-first-out message       *)
(* buffers".  The machines Proc and the buffers Chan (ordered pairs        *)
(* <<src, dst>>) are Channels'; this module adds what EWD 864 assumes of   *)
(* their graph: at least two machines, strongly connected.  Chandy-Lamport *)
(* keeps buffer contents as sequences (Head = oldest message), which is    *)
(* what makes them FIFO.                                                   *)
(***************************************************************************)
EXTENDS Channels, Integers, Sequences, FiniteSets

-----------------------------------------------------------------------------
ASSUME NetworkAssumption ==
    /\ Cardinality(Proc) >= 2
    /\ Chan \subseteq Proc \X Proc
    /\ NoBufferToItself::  \A c \in Chan : Src(c) # Dst(c)
    /\ StronglyConnected:: \A p \in Proc : Reach(p) = Proc
=============================================================================
