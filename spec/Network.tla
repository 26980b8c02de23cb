------------------------------ MODULE Network ------------------------------
(***************************************************************************)
(* The network of EWD 864: "a finite network of sequential machines,       *)
(* strongly connected by uni-directional, first-in-first-out message       *)
(* buffers".  A buffer is identified with the ordered pair <<src, dst>> of *)
(* the machines it connects; the topology is the constant set Chan of such *)
(* pairs.  Buffer contents are sequences (Head = oldest message), which is *)
(* what makes them FIFO.                                                   *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets

CONSTANTS
    \* @type: Set(Str);
    Proc,   \* the machines
    \* @type: Set(<<Str, Str>>);
    Chan    \* the buffers: <<p, q>> \in Chan carries messages from p to q

Src(c) == c[1]  \* the machine that sends into buffer c
Dst(c) == c[2]  \* the machine that receives from buffer c (c is its input buffer)

In(p)  == {c \in Chan : Dst(c) = p}  \* the input buffers of machine p
Out(p) == {c \in Chan : Src(c) = p}  \* the output buffers of machine p

-----------------------------------------------------------------------------
(***************************************************************************)
(* Reach(p) is the set of machines reachable from p along buffers.  It is  *)
(* computed as a least fixed point so that TLC can evaluate it.            *)
(***************************************************************************)
RECURSIVE ReachFrom(_)
ReachFrom(S) ==
    LET S2 == S \cup {Dst(c) : c \in {d \in Chan : Src(d) \in S}}
    IN  IF S2 = S THEN S ELSE ReachFrom(S2)

Reach(p) == ReachFrom({p})

(***************************************************************************)
(* Sum(f) is the sum of the values of the function f (finite domain).      *)
(***************************************************************************)
RECURSIVE SumOn(_, _)
SumOn(f, S) == IF S = {} THEN 0
               ELSE LET x == CHOOSE y \in S : TRUE IN f[x] + SumOn(f, S \ {x})

Sum(f) == SumOn(f, DOMAIN f)

-----------------------------------------------------------------------------
ASSUME NetworkAssumption ==
    /\ Cardinality(Proc) >= 2
    /\ Chan \subseteq Proc \X Proc
    /\ NoBufferToItself::  \A c \in Chan : Src(c) # Dst(c)
    /\ StronglyConnected:: \A p \in Proc : Reach(p) = Proc
=============================================================================
