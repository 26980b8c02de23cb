------------------------------ MODULE Channels -------------------------------
(***************************************************************************)
(* The topology every variant of the snapshot shares: a finite set Proc of *)
(* machines and a set Chan of uni-directional buffers between them, a      *)
(* buffer being identified with the ordered pair <<src, dst>> of the       *)
(* machines it connects.  This module assumes nothing about the shape of   *)
(* the graph beyond "no buffer from a machine to itself": EWD 864's        *)
(* network (Network) adds strong connectivity, a dataflow graph (Dataflow) *)
(* adds sources and acyclicity.  Nor does it say how a buffer orders its   *)
(* messages: Chandy-Lamport's buffers are FIFO sequences, the observer's   *)
(* are bags.                                                               *)
(***************************************************************************)
EXTENDS Integers, FiniteSets

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
(* ReachAlong(S, C) is the set of machines reachable from the set S along  *)
(* the buffers C; Reach(p) those reachable from p along every buffer.      *)
(* Both are least fixed points, so that TLC can evaluate them.             *)
(***************************************************************************)
RECURSIVE ReachAlong(_, _)
ReachAlong(S, C) ==
    LET S2 == S \cup {Dst(c) : c \in {d \in C : Src(d) \in S}}
    IN  IF S2 = S THEN S ELSE ReachAlong(S2, C)

ReachFrom(S) == ReachAlong(S, Chan)

Reach(p) == ReachFrom({p})

(***************************************************************************)
(* Sum(f) is the sum of the values of the function f (finite domain).      *)
(***************************************************************************)
RECURSIVE SumOn(_, _)
SumOn(f, S) == IF S = {} THEN 0
               ELSE LET x == CHOOSE y \in S : TRUE IN f[x] + SumOn(f, S \ {x})

Sum(f) == SumOn(f, DOMAIN f)

-----------------------------------------------------------------------------
ASSUME ChannelsAssumption ==
    /\ Chan \subseteq Proc \X Proc
    /\ NoBufferToItself:: \A c \in Chan : Src(c) # Dst(c)
=============================================================================
