----------------------------- MODULE HistoryApp -----------------------------
(***************************************************************************)
(* An event-history application: each machine follows a fixed script of    *)
(* events (internal events, sends and receives), and its local state is    *)
(* the list of the names of the events it has performed.  This is the      *)
(* application of the classic worked example (seeds/001: three processes,  *)
(* events A..J), drawn as a space-time diagram, in which a recorded local  *)
(* state is the set of circled events.  A message is the position of its   *)
(* send event in the sender's script, so a diagram can name it.  The       *)
(* interface is the one described in TokenApp.                             *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets

CONSTANTS
    \* @type: Set(Str);
    Proc,        \* the machines (see Network)
    \* @type: Set(<<Str, Str>>);
    Chan,        \* the buffers (see Network)
    \* @type: Str -> Seq({name: Str, kind: Str, peer: Str});
    Script,      \* Script[p]: the events of p, in order
    \* @type: Int -> Int;
    StartAfter   \* StartAfter[k]: a starter of snapshot k starts right after its StartAfter[k]-th event

LOCAL INSTANCE Network

\* @typeAlias: local = Seq(Str);
HistoryTypeAliases == TRUE

Names == UNION {{Script[p][i].name : i \in 1..Len(Script[p])} : p \in Proc}  \* every event's name
LocalStates == Seq(Names)  \* the type of a machine's local state

-----------------------------------------------------------------------------
NextIndex(p, s) == Len(s) + 1                      \* the index of p's next event
HasNextIndex(p, s) == NextIndex(p, s) <= Len(Script[p])
NextIs(p, s, kind, q) == /\ HasNextIndex(p, s)
                         /\ Script[p][NextIndex(p, s)].kind = kind
                         /\ Script[p][NextIndex(p, s)].peer = q
Did(p, s) == Append(s, Script[p][NextIndex(p, s)].name)

LocalInit(p) == << >>
Sendable(p, q, s) == IF NextIs(p, s, "send", q) THEN {NextIndex(p, s)} ELSE {}
AfterSend(p, q, m, s) == Did(p, s)
Events(p, s) == IF NextIs(p, s, "internal", p) THEN {NextIndex(p, s)} ELSE {}
AfterEvent(p, e, s) == Did(p, s)
CanReceive(p, q, m, s) == NextIs(p, s, "receive", q)
AfterReceive(p, q, m, s) == Did(p, s)
MayStart(p, k, s) == Len(s) = StartAfter[k]

-----------------------------------------------------------------------------
\* How many of the first n events of p's script are of the given kind with peer q.
Count(p, n, kind, q) == Cardinality({i \in 1..n : Script[p][i].kind = kind /\ Script[p][i].peer = q})

(***************************************************************************)
(* A consistent cut: on every buffer, what the receiver has received is a  *)
(* prefix of what the sender has sent, and the buffer holds exactly the    *)
(* rest.  Every reachable state is one, so every correct snapshot is one   *)
(* ("no messages go backwards in time").                                   *)
(***************************************************************************)
Inv(g) == \A c \in Chan :
            LET sent == Count(Src(c), Len(g.local[Src(c)]), "send", Dst(c))
                recv == Count(Dst(c), Len(g.local[Dst(c)]), "receive", Src(c))
            IN  /\ recv <= sent
                /\ Len(g.buf[c]) = sent - recv

(***************************************************************************)
(* The stable predicate: the scripted computation has terminated, every    *)
(* script has run to its end and no message is in flight.  In a reachable  *)
(* state the second half follows from the first (every send has its        *)
(* receipt in a script), but not in a snapshot that records a message      *)
(* wrongly, and a termination detector must see both.                      *)
(***************************************************************************)
Terminated(g) == /\ \A p \in Proc : Len(g.local[p]) = Len(Script[p])
                 /\ \A c \in Chan : g.buf[c] = << >>

Stable(g) == Terminated(g)
=============================================================================
