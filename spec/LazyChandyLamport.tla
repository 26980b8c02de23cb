-------------------------- MODULE LazyChandyLamport --------------------------
(***************************************************************************)
(* Lazy red letters: the marker rule of the pseudo-code in seeds/002,      *)
(*                                                                         *)
(*     "send one Marker along c after p records its state and before p     *)
(*      sends further messages along c",                                   *)
(*                                                                         *)
(* which is lazier than EWD 864's atomic action, in which a machine that   *)
(* turns red "sends one red letter over each of its output buffers" in the *)
(* same step.  Here a machine that turns red records its state and owes a  *)
(* red letter to each of its output buffers; it pays each debt in a step   *)
(* of its own, at any time up to its next send on that buffer: a buffer    *)
(* that owes a red letter takes no application message.                    *)
(*                                                                         *)
(* Everything else is ChandyLamport's, reused through the instance CL:     *)
(* the recording rules, the receipt of application messages, the history   *)
(* variables, and the statements of Lemma 0, Lemma 1 and the shadow        *)
(* network, which must still hold.  What changes is the red-letter         *)
(* invariant (a buffer from a red machine to a white one holds one red     *)
(* letter or owes one) and liveness: a machine that never sends on a       *)
(* buffer again must still pay its debt there, so the snapshot completes   *)
(* only under weak fairness of paying (RedLetterFairness) besides EWD's    *)
(* fairness of receipt.                                                    *)
(*                                                                         *)
(* The steps a model that must fail overrides (see MCLazy*Failure.cfg):    *)
(* MaySend, the guard that keeps an application message from overtaking    *)
(* an owed red letter, and RedLetterFairness.                              *)
(***************************************************************************)
EXTENDS Network, Integers, Sequences, FiniteSets, TLC

CONSTANTS
    \* @type: Set(Int);
    Snap,           \* the snapshot ids
    \* @type: Int -> Set(Str);
    Starters,       \* Starters[k]: the machines that may start snapshot k
    \* @type: Bool;
    Sequential,     \* TRUE: snapshot k may start only when every j < k has completed
    \* @type: Int;
    MaxAppActions   \* the bound on application actions while a snapshot runs

(***************************************************************************)
(* The application, as in ChandyLamport (TokenApp describes it).           *)
(***************************************************************************)
CONSTANTS
    AppLocalStates,              \* the set of possible local states
    AppLocalInit(_),             \* AppLocalInit(p)
    AppSendable(_, _, _),        \* AppSendable(p, q, s)
    AppAfterSend(_, _, _, _),    \* AppAfterSend(p, q, m, s)
    AppEvents(_, _),             \* AppEvents(p, s)
    AppAfterEvent(_, _, _),      \* AppAfterEvent(p, e, s)
    AppCanReceive(_, _, _, _),   \* AppCanReceive(p, q, m, s)
    AppAfterReceive(_, _, _, _), \* AppAfterReceive(p, q, m, s)
    AppMayStart(_, _, _),        \* AppMayStart(p, k, s)
    AppStable(_),                \* AppStable(g): a stable predicate of global app states
    AppInv(_)                    \* AppInv(g): true of every reachable global app state

VARIABLES
    \* @type: Str -> $local;
    local,       \* local[p]: the application state of machine p
    \* @type: <<Str, Str>> -> Seq({kind: Str, snap: Int, val: Int});
    buf,         \* buf[c]: the contents of buffer c, oldest message first
    \* @type: Int -> Set(Str);
    red,         \* red[k]: the machines that are red in snapshot k
    \* @type: Int -> Set(<<Str, Str>>);
    redBuf,      \* redBuf[k]: the input buffers that are red in snapshot k
    \* @type: Int -> (Str -> $local);
    recMachine,  \* recMachine[k][p]: the state machine p recorded for k on turning red
    \* @type: Int -> (<<Str, Str>> -> Seq(Int));
    recBuf,      \* recBuf[k][c]: the messages recorded for buffer c in snapshot k
    \* @type: Int -> {local: Str -> $local, buf: <<Str, Str>> -> Seq(Int)};
    S0,          \* S0[k]: "the initial state (of the snapshot algorithm)"
    \* @type: Int -> {local: Str -> $local, buf: <<Str, Str>> -> Seq(Int)};
    Sf,          \* Sf[k]: "the final state (of the snapshot algorithm)"
    \* @type: Int -> Seq({kind: Str, p: Str, q: Str, val: Int});
    whiteActs,   \* whiteActs[k]: application actions of white machines since S0[k]
    \* @type: Int -> Seq({kind: Str, p: Str, q: Str, val: Int});
    redActs,     \* redActs[k]: application actions of red machines since S0[k]
    \* @type: Int -> Set(<<Str, Str>>);
    owed         \* owed[k]: the output buffers of red machines still owed a red letter of k

(***************************************************************************)
(* ChandyLamport over the same constants and variables (all but owed):     *)
(* its actions, history and lemmas, for reuse below.                       *)
(***************************************************************************)
CL == INSTANCE ChandyLamport

vars == <<local, buf, red, redBuf, recMachine, recBuf, S0, Sf, whiteActs, redActs, owed>>

TypeOK ==
    /\ CL!TypeOK
    /\ owed \in [Snap -> SUBSET Chan]
    /\ OwedByRedMachinesOnly:: \A k \in Snap : \A c \in owed[k] : Src(c) \in red[k]

-----------------------------------------------------------------------------
(***************************************************************************)
(* The steps a model that must fail overrides.                             *)
(***************************************************************************)

\* "before p sends further messages along c": no application message enters a
\* buffer that is still owed a red letter.
MaySend(c) == \A k \in Snap : c \notin owed[k]

\* The output buffers machine p owes a red letter of k when it turns red: all of them.
RedLettersOwed(p, k) == Out(p)

(***************************************************************************)
(* Turning red, lazily: machine p, white in snapshot k, becomes red and    *)
(* records its state (rule 1) as in ChandyLamport's TurnRed, but instead   *)
(* of sending its red letters it now owes one to each output buffer.  b is *)
(* the buffer contents after the step's receipt (if any).                  *)
(***************************************************************************)
TurnRedLazily(p, k, b) ==
    /\ BecomesRed::      red'        = [red EXCEPT ![k] = @ \cup {p}]
    /\ RecordingRule1::  recMachine' = [recMachine EXCEPT ![k] = @ @@ (p :> local[p])]
    /\ OwesRedLetters::  owed'       = [owed EXCEPT ![k] = @ \cup RedLettersOwed(p, k)]
    /\ buf' = b
    /\ InitialState::    S0'         = IF CL!Started(k) THEN S0 ELSE S0 @@ (k :> CL!AppState)

-----------------------------------------------------------------------------
Init == CL!Init /\ owed = [k \in Snap |-> {}]

\* An application message, sent only over a buffer that owes no red letter.
SendApp(c) == MaySend(c) /\ CL!SendApp(c) /\ UNCHANGED owed

InternalEvent(p) == CL!InternalEvent(p) /\ UNCHANGED owed

ReceiveApp(c) == CL!ReceiveApp(c) /\ UNCHANGED owed

(***************************************************************************)
(* "send one Marker along c after p records its state": paying the red     *)
(* letter of k owed to buffer c, in a step of its own.                     *)
(***************************************************************************)
PayRedLetter(c, k) ==
    /\ c \in owed[k]
    /\ buf'  = [buf EXCEPT ![c] = Append(@, CL!RedLetter(k))]
    /\ owed' = [owed EXCEPT ![k] = @ \ {c}]
    /\ UNCHANGED <<local, red, redBuf, recMachine, recBuf, S0, Sf, whiteActs, redActs>>

SendRedLetter(c) == \E k \in Snap : PayRedLetter(c, k)

(***************************************************************************)
(* The starter "acts as if it has received a red letter (from nowhere)".   *)
(***************************************************************************)
StartSnapshot(p, k) ==
    /\ p \in Starters[k]
    /\ p \notin red[k]
    /\ AppMayStart(p, k, local[p])
    /\ Sequential => \A j \in Snap : j < k => CL!Complete(j)
    /\ TurnRedLazily(p, k, buf)
    /\ UNCHANGED <<local, redBuf, recBuf, Sf, whiteActs, redActs>>

(***************************************************************************)
(* The receipt of a red letter, as in ChandyLamport, except that a white   *)
(* receiver turns red lazily.                                              *)
(***************************************************************************)
ReceiveRedLetter(c) ==
    \E i \in CL!Deliverable(c) :
        LET p == Dst(c)
            k == buf[c][i].snap
            b == [buf EXCEPT ![c] = CL!RemoveAt(@, i)]
        IN  /\ buf[c][i].kind = "red"
            /\ Receipt1(i):: redBuf' = [j \in Snap |-> IF j \in CL!TurnsRed(c, k)
                                                       THEN redBuf[j] \cup {c}
                                                       ELSE redBuf[j]]
            /\ Receipt2(i):: IF p \in red[k]
                             THEN /\ buf' = b
                                  /\ UNCHANGED <<red, recMachine, S0, owed>>
                             ELSE TurnRedLazily(p, k, b)
            /\ FinalState(i):: Sf' = LET done == {j \in Snap : ~CL!Complete(j) /\ redBuf'[j] = Chan}
                                     IN  Sf @@ [j \in done |-> CL!AppState]
            /\ UNCHANGED <<local, recBuf, whiteActs, redActs>>

(***************************************************************************)
(* The next-state relation; LOCAL for the reason given in ChandyLamport:   *)
(* LazyChandyLamportToken restates it outside the instance.                *)
(***************************************************************************)
LOCAL Next ==
    \/ \E c \in Chan : SendApp(c)
    \/ \E p \in Proc : InternalEvent(p)
    \/ \E c \in Chan : ReceiveApp(c)
    \/ \E c \in Chan : SendRedLetter(c)
    \/ \E c \in Chan : ReceiveRedLetter(c)
    \/ \E p \in Proc : \E k \in Snap : StartSnapshot(p, k)

LOCAL Spec == Init /\ [][Next]_vars

(***************************************************************************)
(* Fairness.  EWD 864's: every message entering a buffer eventually leaves *)
(* it.  And the lazy rule's own: a red letter owed is eventually paid,     *)
(* even over a buffer the machine never sends on again (nothing else would *)
(* force the payment there).                                               *)
(***************************************************************************)
ReceiptFairness == \A c \in Chan : WF_vars(ReceiveRedLetter(c)) /\ WF_vars(ReceiveApp(c))

RedLetterFairness == \A c \in Chan : \A k \in Snap : WF_vars(PayRedLetter(c, k))

Fairness == ReceiptFairness /\ RedLetterFairness

LOCAL FairSpec == Spec /\ Fairness

AppActionBound == CL!AppActionBound   \* the state constraint, as in ChandyLamport

-----------------------------------------------------------------------------
(***************************************************************************)
(*                                 INVARIANTS                              *)
(*                                                                         *)
(* The red-letter invariant, lazily: each buffer from a red machine to a   *)
(* white one contains precisely 1 red letter, or contains none and is      *)
(* still owed one.                                                         *)
(***************************************************************************)
RedLetterInvariant ==
    \A k \in Snap : \A c \in Chan :
        (Src(c) \in red[k] /\ Dst(c) \notin red[k]) =>
            LET n == Cardinality({i \in 1..Len(buf[c]) : buf[c][i] = CL!RedLetter(k)})
            IN  \/ OneRedLetter(k, c):: n = 1 /\ c \notin owed[k]
                \/ OneOwed(k, c)::      n = 0 /\ c \in owed[k]

\* EWD 864's lemmas and their corollaries, exactly as ChandyLamport states them.
Lemma0                  == CL!Lemma0
Lemma1                  == CL!Lemma1
StableLemma0            == CL!StableLemma0
StableLemma1            == CL!StableLemma1
StableDetection         == CL!StableDetection
SnapshotSatisfiesAppInv == CL!SnapshotSatisfiesAppInv

(***************************************************************************)
(* Dijkstra's shadow network for Lemma 0 needs no change: while a red      *)
(* letter is owed the buffer holds only messages sent before its source    *)
(* turned red, all of which rule (iii) puts in the shadow buffer, and      *)
(* paying the debt appends the red letter behind them.                     *)
(***************************************************************************)
ShadowLemma0 == [][\A k \in Snap : CL!ShadowStep(k)]_vars

\* Liveness: every snapshot that has started completes.
SnapshotsComplete == \A k \in Snap : CL!Started(k) ~> CL!Complete(k)

-----------------------------------------------------------------------------
(***************************************************************************)
(* What a snapshot costs, as state functions the comparison page           *)
(* (docs/variants.md) measures with TLC over every reachable state: the    *)
(* red letters sent for snapshot k, the messages recorded in its buffers,  *)
(* and the buffers on which an application send waits right now for the    *)
(* red letter owed before it.                                              *)
(***************************************************************************)
ControlMessages(k) == Sum([p \in red[k] |-> Cardinality(Out(p))]) - Cardinality(owed[k])
StoredMessages(k)  == Sum([c \in Chan |-> Len(recBuf[k][c])])
Waiting == Cardinality({c \in Chan : /\ ~MaySend(c)
                                     /\ AppSendable(Src(c), Dst(c), local[Src(c)]) # {}})

-----------------------------------------------------------------------------
(***************************************************************************)
(* The claims: lazy red letters keep both lemmas and the shadow network;   *)
(* every started snapshot completes under both fairness conditions, and    *)
(* not under fairness of receipt alone (MCLazyUnpaidFailure).              *)
(***************************************************************************)
THEOREM Spec => [](TypeOK /\ RedLetterInvariant /\ Lemma0 /\ Lemma1)
THEOREM Spec => [](StableLemma0 /\ StableLemma1 /\ StableDetection /\ SnapshotSatisfiesAppInv)
THEOREM Spec => ShadowLemma0
THEOREM FairSpec => SnapshotsComplete
=============================================================================
