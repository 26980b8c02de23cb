---------------------------- MODULE DiffusingApp ----------------------------
(***************************************************************************)
(* A diffusing computation, EWD 864's first example of a stable predicate: *)
(* "the diffusing computation has terminated".  Initially only the Root is *)
(* active.  An active machine may send a work message to a neighbour (at   *)
(* most Budget messages in all, which keeps the model finite) and may      *)
(* become idle; a machine that receives a work message becomes active.     *)
(* Each machine counts what it sent and received, so the conservation of   *)
(* messages (sent = received + travelling) is a property of every          *)
(* reachable state, and hence of every correct snapshot.  The interface is *)
(* the one described in TokenApp.                                          *)
(***************************************************************************)
EXTENDS Integers, Sequences

CONSTANTS
    \* @type: Set(Str);
    Proc,    \* the machines (see Network)
    \* @type: Set(<<Str, Str>>);
    Chan,    \* the buffers (see Network)
    \* @type: Str;
    Root,    \* the machine that is active initially
    \* @type: Int;
    Budget   \* how many work messages each machine may send in all

LOCAL INSTANCE Network

\* @typeAlias: local = {active: Bool, sent: Int, recvd: Int};
DiffusingTypeAliases == TRUE

LocalStates == [active : BOOLEAN, sent : 0..Budget, recvd : Nat]  \* the type of a local state

-----------------------------------------------------------------------------
LocalInit(p) == [active |-> p = Root, sent |-> 0, recvd |-> 0]
Sendable(p, q, s) == IF s.active /\ s.sent < Budget THEN {1} ELSE {}
AfterSend(p, q, m, s) == [s EXCEPT !.sent = @ + 1]
Events(p, s) == IF s.active THEN {0} ELSE {}   \* event 0: become idle
AfterEvent(p, e, s) == [s EXCEPT !.active = FALSE]
CanReceive(p, q, m, s) == TRUE
AfterReceive(p, q, m, s) == [s EXCEPT !.active = TRUE, !.recvd = @ + 1]
MayStart(p, k, s) == TRUE

-----------------------------------------------------------------------------
Terminated(g) == /\ \A p \in Proc : ~g.local[p].active
                 /\ \A c \in Chan : g.buf[c] = << >>

Stable(g) == Terminated(g)   \* "the diffusing computation has terminated"
Inv(g) == Sum([p \in Proc |-> g.local[p].sent])
            = Sum([p \in Proc |-> g.local[p].recvd]) + Sum([c \in Chan |-> Len(g.buf[c])])
=============================================================================
