--------------------------- MODULE ChandyLamport ---------------------------
(***************************************************************************)
(* The distributed snapshot of Chandy, Lamport and Misra, as presented by  *)
(* Dijkstra in EWD 864 "The distributed snapshot of Chandy/Lamport/Misra"  *)
(* (1983).  We follow his words and his two-stage presentation: first the  *)
(* red-letter traffic, then the recording it triggers.                     *)
(*                                                                         *)
(* The algorithm is superposed on an application (TokenApp, DiffusingApp,  *)
(* HistoryApp), which it receives through the constant operators App*. One *)
(* module per application instantiates this one with App* bound to that    *)
(* application's operators (ChandyLamportToken, ChandyLamportDiffusing,    *)
(* ChandyLamportHistory); a model (an MC*.tla module and its .cfg) extends *)
(* one of those and gives the constants.                                   *)
(*                                                                         *)
(* Several snapshots run over the same network, each identified by a       *)
(* snapshot id k \in Snap: every machine and every input buffer has a      *)
(* colour per snapshot, and every red letter carries its snapshot's id.  A *)
(* snapshot may have several starters: every white machine of Starters[k]  *)
(* may act "as if it has received a red letter (from nowhere)".            *)
(*                                                                         *)
(* The steps that the classic bugs get wrong (what is recorded, which      *)
(* buffers get a red letter, which messages may be received, which         *)
(* snapshot a red letter turns red) are separate operators, so that each   *)
(* model that must fail overrides exactly one of them in its .cfg.  The    *)
(* bug classes and the models that plant them are listed in one registry   *)
(* (python_model/bugs.py; docs/teeth.md shows which property catches       *)
(* each).                                                                  *)
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
    MaxAppActions   \* the budget of application actions while a snapshot runs (see AppBudgetLeft)

(***************************************************************************)
(* The application, as a set of constant operators (TokenApp describes the *)
(* interface).  Local states are of the application's type $local;         *)
(* messages and internal events are integers.                              *)
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

ASSUME SnapshotAssumption ==
    /\ Snap \subseteq Nat \ {0}
    /\ \A k \in Snap : Starters[k] \subseteq Proc
    /\ Sequential \in BOOLEAN
    /\ MaxAppActions \in Nat

-----------------------------------------------------------------------------
(***************************************************************************)
(* Messages.  An application message carries an integer; a red letter      *)
(* carries the id of its snapshot.  Both are records of the same shape so  *)
(* that a buffer is a sequence of one type.                                *)
(***************************************************************************)
\* @typeAlias: msg = {kind: Str, snap: Int, val: Int};
\* @typeAlias: act = {kind: Str, p: Str, q: Str, val: Int};
\* @typeAlias: gstate = {local: Str -> $local, buf: <<Str, Str>> -> Seq(Int)};
ChandyLamportTypeAliases == TRUE

\* @type: (Int) => $msg;
AppMsg(v)    == [kind |-> "app", snap |-> 0, val |-> v]
\* @type: (Int) => $msg;
RedLetter(k) == [kind |-> "red", snap |-> k, val |-> 0]

Msgs    == [kind : {"app"}, snap : {0}, val : Int] \cup [kind : {"red"}, snap : Snap, val : {0}]
Acts    == [kind : {"send", "receive", "internal"}, p : Proc, q : Proc, val : Int]
GStates == [local : [Proc -> AppLocalStates], buf : [Chan -> Seq(Int)]]

VARIABLES
    \* @type: Str -> $local;
    local,       \* local[p]: the application state of machine p
    \* @type: <<Str, Str>> -> Seq($msg);
    buf,         \* buf[c]: the contents of buffer c, oldest message first
    \* @type: Int -> Set(Str);
    red,         \* red[k]: the machines that are red in snapshot k
    \* @type: Int -> Set(<<Str, Str>>);
    redBuf,      \* redBuf[k]: the input buffers that are red in snapshot k
    \* @type: Int -> (Str -> $local);
    recMachine,  \* recMachine[k][p]: the state machine p recorded for k on turning red
    \* @type: Int -> (<<Str, Str>> -> Seq(Int));
    recBuf,      \* recBuf[k][c]: the messages recorded for buffer c in snapshot k
    (***********************************************************************)
    (* History variables: they do not influence the algorithm; they make   *)
    (* Dijkstra's two lemmas expressible as invariants.                    *)
    (***********************************************************************)
    \* @type: Int -> $gstate;
    S0,          \* S0[k]: "the initial state (of the snapshot algorithm)"
    \* @type: Int -> $gstate;
    Sf,          \* Sf[k]: "the final state (of the snapshot algorithm)"
    \* @type: Int -> Seq($act);
    whiteActs,   \* whiteActs[k]: application actions of white machines since S0[k]
    \* @type: Int -> Seq($act);
    redActs      \* redActs[k]: application actions of red machines since S0[k]

algVars  == <<red, redBuf, recMachine, recBuf>>           \* the snapshot algorithm's
histVars == <<S0, Sf, whiteActs, redActs>>                \* the history variables
vars     == <<local, buf, red, redBuf, recMachine, recBuf, S0, Sf, whiteActs, redActs>>

TypeOK ==
    /\ local \in [Proc -> AppLocalStates]
    /\ buf \in [Chan -> Seq(Msgs)]
    /\ red \in [Snap -> SUBSET Proc]
    /\ redBuf \in [Snap -> SUBSET Chan]
    /\ DOMAIN recMachine = Snap
    /\ \A k \in Snap : recMachine[k] \in [red[k] -> AppLocalStates]
    /\ recBuf \in [Snap -> [Chan -> Seq(Int)]]
    /\ DOMAIN S0 \subseteq Snap /\ \A k \in DOMAIN S0 : S0[k] \in GStates
    /\ DOMAIN Sf \subseteq DOMAIN S0 /\ \A k \in DOMAIN Sf : Sf[k] \in GStates
    /\ whiteActs \in [Snap -> Seq(Acts)]
    /\ redActs \in [Snap -> Seq(Acts)]

-----------------------------------------------------------------------------
(***************************************************************************)
(* Global application states: "the state of the network is deemed to be    *)
(* fully described by the states of all machines and the contents of all   *)
(* buffers".  For the application, red letters are invisible.              *)
(***************************************************************************)
AppValues(s) == LET apps == SelectSeq(s, LAMBDA m : m.kind = "app")
                IN  [i \in 1..Len(apps) |-> apps[i].val]

\* @type: $gstate;
AppState == [local |-> local, buf |-> [c \in Chan |-> AppValues(buf[c])]]

Started(k)    == k \in DOMAIN S0                   \* some machine has turned red in k
Complete(k)   == k \in DOMAIN Sf                   \* the last red letter of k was received
InProgress(k) == Started(k) /\ ~Complete(k)

(***************************************************************************)
(* "the snapshot state": the recorded machine states and buffer streams.   *)
(* It is meaningful once snapshot k is complete.                           *)
(***************************************************************************)
\* @type: (Int) => $gstate;
Snapshot(k) == [local |-> recMachine[k], buf |-> recBuf[k]]

-----------------------------------------------------------------------------
(***************************************************************************)
(* Application actions on global application states, used to replay the    *)
(* recorded action sequences (Lemma 0 and Lemma 1) and to step the shadow  *)
(* network.  An action a is a record: a.kind \in {"send", "receive",       *)
(* "internal"}, a.p the machine that acts, a.q its peer (the receiver of a *)
(* send, the sender of a receive, a.p itself for an internal event) and    *)
(* a.val the message or the event.                                         *)
(***************************************************************************)
ActEnabled(g, a) ==
    CASE a.kind = "send"     -> a.val \in AppSendable(a.p, a.q, g.local[a.p])
      [] a.kind = "internal" -> a.val \in AppEvents(a.p, g.local[a.p])
      [] a.kind = "receive"  -> LET c == <<a.q, a.p>>
                                IN  /\ g.buf[c] # << >>
                                    /\ Head(g.buf[c]) = a.val
                                    /\ AppCanReceive(a.p, a.q, a.val, g.local[a.p])

ActResult(g, a) ==
    CASE a.kind = "send" ->
            [local |-> [g.local EXCEPT ![a.p] = AppAfterSend(a.p, a.q, a.val, @)],
             buf   |-> [g.buf EXCEPT ![<<a.p, a.q>>] = Append(@, a.val)]]
      [] a.kind = "internal" ->
            [local |-> [g.local EXCEPT ![a.p] = AppAfterEvent(a.p, a.val, @)],
             buf   |-> g.buf]
      [] a.kind = "receive" ->
            [local |-> [g.local EXCEPT ![a.p] = AppAfterReceive(a.p, a.q, a.val, @)],
             buf   |-> [g.buf EXCEPT ![<<a.q, a.p>>] = Tail(@)]]

(***************************************************************************)
(* Replay(g, acts) performs the actions acts one after the other from g.   *)
(* Its ok field says whether every action was enabled when its turn came;  *)
(* its g field is the state reached (or the state where it got stuck).     *)
(***************************************************************************)
RECURSIVE Replay(_, _)
Replay(g, acts) ==
    IF acts = << >> THEN [ok |-> TRUE, g |-> g]
    ELSE IF ActEnabled(g, Head(acts))
         THEN Replay(ActResult(g, Head(acts)), Tail(acts))
         ELSE [ok |-> FALSE, g |-> g]

-----------------------------------------------------------------------------
(***************************************************************************)
(* The steps that the classic bugs get wrong.  Each is overridden by the   *)
(* models that must fail with that bug (see the MC*Failure.cfg files),     *)
(* which name this module: Enqueue <- [ChandyLamport] LateEnqueue, since   *)
(* the step is used inside the instance of this module.  A step reads the  *)
(* state but never changes it; the actions below apply what it says.       *)
(***************************************************************************)

\* The positions of buffer c whose message may be received next.  FIFO: only the oldest.
Deliverable(c) == IF buf[c] = << >> THEN {} ELSE {1}

\* The buffer s after an application message m is sent into it.
Enqueue(s, m) == Append(s, m)

\* The output buffers over which machine p sends red letters of snapshot k when it
\* turns red ("it sends one red letter over each of its output buffers").  from is
\* the set of buffers the red letter that turns p red came from: {} for a starter,
\* which acts "as if it has received a red letter (from nowhere)", else {c}.
RedLettersOut(p, k, from) == Out(p)

\* The output buffers over which p, already red in k, sends red letters of k again
\* when it receives one from buffer c: none, "if the receiving machine was already
\* red, it remains so and it sends no further red letters".
RedLettersAgain(p, k, c) == {}

\* Recording rule 2: red machine p records the messages it receives from
\* input buffer c for snapshot k "as long as the latter is white".
Recording(k, p, c) == p \in red[k] /\ c \notin redBuf[k]

\* The recorded stream s after message m is recorded: streams are kept like
\* buffers, oldest message first.
RecordMessage(s, m) == Append(s, m)

\* What the red letter that ends the recording of buffer c in snapshot k adds to the
\* recorded stream: nothing (see "The recorded strings" below: the spec records the
\* application's part of Dijkstra's string, which ends with that red letter).
RedLetterRecord(k, p, c) == << >>

\* Does the message red machine p records from buffer c stay with the recording
\* instead of reaching p's application?  Never: recording observes the messages
\* it records, the application receives them as if nothing were recorded.
RecordingConsumes(p, c) == FALSE

\* The snapshots in which input buffer c turns red when a red letter of k is received from it.
TurnsRed(c, k) == {k}

RemoveAt(s, i) == SubSeq(s, 1, i - 1) \o SubSeq(s, i + 1, Len(s))  \* s without its i-th element

-----------------------------------------------------------------------------
(***************************************************************************)
(* The history of application actions: an action of machine a.p is         *)
(* appended, for every snapshot in progress, to whiteActs or redActs by    *)
(* the colour of a.p in that snapshot.                                     *)
(***************************************************************************)
RecordAct(a) ==
    /\ whiteActs' = [k \in Snap |-> IF InProgress(k) /\ a.p \notin red[k]
                                    THEN Append(whiteActs[k], a) ELSE whiteActs[k]]
    /\ redActs'   = [k \in Snap |-> IF InProgress(k) /\ a.p \in red[k]
                                    THEN Append(redActs[k], a) ELSE redActs[k]]

(***************************************************************************)
(* Turning red: machine p, white in snapshot k, "sends one red letter over *)
(* each of its output buffers and becomes red" (part 2 of the receipt of a *)
(* red letter, the first stage), and "upon turning red, records its own    *)
(* state" (rule 1 of the recording, the second stage).  b is the buffer    *)
(* contents the red letters are appended to, and from the buffers the red  *)
(* letter came from ({} for a starter).  If p is the first machine to turn *)
(* red in k, the current state is "the initial state (of the snapshot      *)
(* algorithm)".                                                            *)
(***************************************************************************)
TurnRed(p, k, b, from) ==
    /\ BecomesRed::      red'        = [red EXCEPT ![k] = @ \cup {p}]
    /\ RecordingRule1::  recMachine' = [recMachine EXCEPT ![k] = @ @@ (p :> local[p])]
    /\ SendsRedLetters:: buf'        = [c \in Chan |-> IF c \in RedLettersOut(p, k, from)
                                                       THEN Append(b[c], RedLetter(k))
                                                       ELSE b[c]]
    /\ InitialState::    S0'         = IF Started(k) THEN S0 ELSE S0 @@ (k :> AppState)

-----------------------------------------------------------------------------
(***************************************************************************)
(* The initial state: "Initially all machines and all buffers are white."  *)
(***************************************************************************)
Init ==
    /\ local      = [p \in Proc |-> AppLocalInit(p)]
    /\ buf        = [c \in Chan |-> << >>]
    /\ red        = [k \in Snap |-> {}]
    /\ redBuf     = [k \in Snap |-> {}]
    /\ recMachine = [k \in Snap |-> << >>]
    /\ recBuf     = [k \in Snap |-> [c \in Chan |-> << >>]]
    /\ S0         = << >>
    /\ Sf         = << >>
    /\ whiteActs  = [k \in Snap |-> << >>]
    /\ redActs    = [k \in Snap |-> << >>]

(***************************************************************************)
(* The bound that keeps a model finite.  The history variables grow with   *)
(* every application action while a snapshot is in progress, so a model    *)
(* bounds them: a machine may start a send or an internal event only while *)
(* fewer than MaxAppActions application actions have happened in every     *)
(* snapshot in progress.  Receipts are never refused: a refused receipt    *)
(* would keep the red letters queued behind the message from being         *)
(* received, and the snapshot from completing, for a reason that lies in   *)
(* the bound and not in the algorithm.  They are finite all the same: each *)
(* takes a message that the initial state of the snapshot or a bounded     *)
(* send put into its buffer.                                               *)
(*                                                                         *)
(* Because the bound lies in the guards, every behaviour of the bounded    *)
(* application is explored to its end, so TLC's liveness verdicts are      *)
(* sound for it.  A model may also name the state constraint               *)
(* AppActionBound (below), which cuts behaviours at the bound: fewer       *)
(* states, sound for invariants and action properties within the bound,    *)
(* but not for liveness (TLC warns), so a model that checks a temporal     *)
(* property never names it.                                                *)
(***************************************************************************)
AppBudgetLeft ==
    \A k \in Snap : InProgress(k) => Len(whiteActs[k]) + Len(redActs[k]) < MaxAppActions

(***************************************************************************)
(* Application actions.  They are the application's own, with the history  *)
(* recorded; a red machine additionally records, per rule 2, the messages  *)
(* it receives from white input buffers.                                   *)
(***************************************************************************)
SendApp(c) ==
    LET p == Src(c)
        q == Dst(c)
    IN  /\ AppBudgetLeft
        /\ \E m \in AppSendable(p, q, local[p]) :
              /\ local' = [local EXCEPT ![p] = AppAfterSend(p, q, m, @)]
              /\ buf'   = [buf EXCEPT ![c] = Enqueue(@, AppMsg(m))]
              /\ RecordAct([kind |-> "send", p |-> p, q |-> q, val |-> m])
              /\ UNCHANGED <<red, redBuf, recMachine, recBuf, S0, Sf>>

InternalEvent(p) ==
    /\ AppBudgetLeft
    /\ \E e \in AppEvents(p, local[p]) :
          /\ local' = [local EXCEPT ![p] = AppAfterEvent(p, e, @)]
          /\ RecordAct([kind |-> "internal", p |-> p, q |-> p, val |-> e])
          /\ UNCHANGED <<buf, red, redBuf, recMachine, recBuf, S0, Sf>>

(***************************************************************************)
(* The receipt of an application message: the application receives it      *)
(* (unless a faulty recording consumes it: RecordingConsumes), and a red   *)
(* machine records it for every snapshot in which its buffer is still      *)
(* white (recording rule 2).  A consumed message is no action of the       *)
(* application, so the history does not list it.                           *)
(***************************************************************************)
ReceiveApp(c) ==
    \E i \in Deliverable(c) :
        LET p == Dst(c)
            q == Src(c)
            m == buf[c][i].val
        IN  /\ buf[c][i].kind = "app"
            /\ AppCanReceive(p, q, m, local[p])
            /\ Delivery(i):: local' = IF RecordingConsumes(p, c) THEN local
                                      ELSE [local EXCEPT ![p] = AppAfterReceive(p, q, m, @)]
            /\ buf'    = [buf EXCEPT ![c] = RemoveAt(@, i)]
            /\ RecordingRule2(i)::
                   recBuf' = [k \in Snap |-> IF Recording(k, p, c)
                                             THEN [recBuf[k] EXCEPT ![c] = RecordMessage(@, m)]
                                             ELSE recBuf[k]]
            /\ IF RecordingConsumes(p, c) THEN UNCHANGED <<whiteActs, redActs>>
               ELSE RecordAct([kind |-> "receive", p |-> p, q |-> q, val |-> m])
            /\ UNCHANGED <<red, redBuf, recMachine, S0, Sf>>

(***************************************************************************)
(* "The snapshot algorithm is fired by one of the machines -- the          *)
(* `starter' -- by acting as if it has received a red letter (from         *)
(* nowhere)."  For the red letter from nowhere no buffer turns red.        *)
(***************************************************************************)
StartSnapshot(p, k) ==
    /\ p \in Starters[k]
    /\ p \notin red[k]
    /\ AppMayStart(p, k, local[p])
    /\ Sequential => \A j \in Snap : j < k => Complete(j)
    /\ TurnRed(p, k, buf, {})
    /\ UNCHANGED <<local, redBuf, recBuf, Sf, whiteActs, redActs>>

(***************************************************************************)
(* "The atomic action describing the receipt of a red letter":             *)
(*   1. the input buffer from which the red letter is received (was white  *)
(*      and) becomes red,                                                  *)
(*   2. if the receiving machine was white, it sends one red letter over   *)
(*      each of its output buffers and becomes red; if it was already red, *)
(*      it remains so and it sends no further red letters.                 *)
(* The red letter also ends the recording of its buffer (rule 2: "as long  *)
(* as the latter is white"), which adds nothing to the recorded stream     *)
(* (RedLetterRecord).  When the last red letter of k is received, every    *)
(* buffer is red in k: the state at that moment is "the final state (of    *)
(* the snapshot algorithm)".                                               *)
(***************************************************************************)
ReceiveRedLetter(c) ==
    \E i \in Deliverable(c) :
        LET p == Dst(c)
            k == buf[c][i].snap
            b == [buf EXCEPT ![c] = RemoveAt(@, i)]
        IN  /\ buf[c][i].kind = "red"
            /\ Receipt1(i):: redBuf' = [j \in Snap |-> IF j \in TurnsRed(c, k)
                                                       THEN redBuf[j] \cup {c}
                                                       ELSE redBuf[j]]
            /\ Receipt2(i):: IF p \in red[k]
                             THEN /\ buf' = [d \in Chan |-> IF d \in RedLettersAgain(p, k, c)
                                                            THEN Append(b[d], RedLetter(k))
                                                            ELSE b[d]]
                                  /\ UNCHANGED <<red, recMachine, S0>>
                             ELSE TurnRed(p, k, b, {c})
            /\ RecordingEnds(i):: recBuf' = [recBuf EXCEPT ![k][c] = @ \o RedLetterRecord(k, p, c)]
            /\ FinalState(i):: Sf' = LET done == {j \in Snap : ~Complete(j) /\ redBuf'[j] = Chan}
                                     IN  Sf @@ [j \in done |-> AppState]
            /\ UNCHANGED <<local, whiteActs, redActs>>

(***************************************************************************)
(* The next-state relation.  Every action is named by the operator it      *)
(* comes from, and the quantifiers whose bounds depend on the state sit    *)
(* inside the actions, so that TLC labels each transition with its         *)
(* action's name (see its -dump output, which the cross-check with the     *)
(* Python model reads).                                                    *)
(*                                                                         *)
(* Next and the specifications built on it are LOCAL: each module that     *)
(* instantiates this one restates them (ChandyLamportToken, ...).  TLC     *)
(* 2.15 sees the actions of a next-state relation only when the            *)
(* disjunction lies outside any INSTANCE with substitutions; inside one,   *)
(* the whole relation is a single action to it, and every transition of    *)
(* its state graph would be labelled "UnnamedAction".                      *)
(***************************************************************************)
LOCAL Next ==
    \/ \E c \in Chan : SendApp(c)
    \/ \E p \in Proc : InternalEvent(p)
    \/ \E c \in Chan : ReceiveApp(c)
    \/ \E c \in Chan : ReceiveRedLetter(c)
    \/ \E p \in Proc : \E k \in Snap : StartSnapshot(p, k)

LOCAL Spec == Init /\ [][Next]_vars

(***************************************************************************)
(* "we assume ... that each message entering a buffer eventually leaves it *)
(* at its other end": weak fairness of receipt on every buffer.            *)
(***************************************************************************)
Fairness == \A c \in Chan : WF_vars(ReceiveRedLetter(c)) /\ WF_vars(ReceiveApp(c))

LOCAL FairSpec == Spec /\ Fairness

(***************************************************************************)
(* An application that runs a fixed script to its end (HistoryApp) needs   *)
(* more: a machine that can act does not stop for ever.  Without it a      *)
(* machine may never reach the receive that frees a red letter queued      *)
(* behind an application message, and the snapshot never completes.        *)
(***************************************************************************)
Progress == /\ \A p \in Proc : WF_vars(InternalEvent(p))
            /\ \A c \in Chan : WF_vars(SendApp(c))

LOCAL ProgressSpec == FairSpec /\ Progress

(***************************************************************************)
(* A state constraint a model may name besides the bound in the guards     *)
(* (AppBudgetLeft): at most MaxAppActions application actions, receipts    *)
(* included, while any one snapshot is in progress.  It cuts behaviours,   *)
(* so only models that check no temporal property name it.                 *)
(***************************************************************************)
AppActionBound == \A k \in Snap : Len(whiteActs[k]) + Len(redActs[k]) <= MaxAppActions

-----------------------------------------------------------------------------
(***************************************************************************)
(*                                 INVARIANTS                              *)
(*                                                                         *)
(* Dijkstra's red-letter invariant: "each buffer from a red machine to a   *)
(* white one contains precisely 1 red letter".                             *)
(***************************************************************************)
RedLetterInvariant ==
    \A k \in Snap : \A c \in Chan :
        (Src(c) \in red[k] /\ Dst(c) \notin red[k]) =>
            Cardinality({i \in 1..Len(buf[c]) : buf[c][i] = RedLetter(k)}) = 1

(***************************************************************************)
(* "Since each buffer is the output buffer of some machine that has turned *)
(* red once, each buffer has accepted 1 red letter: when the last red      *)
(* letter is received, the only still white buffer becomes red."  In       *)
(* every snapshot, a buffer carries exactly one red letter from the moment *)
(* its source turns red until the receipt of that letter turns the buffer  *)
(* red, and none before: a buffer is never red without its letter having   *)
(* arrived, never holds two, and never loses its letter unread.  This is   *)
(* the safety half of Dijkstra's argument that the snapshot completes;     *)
(* RedLetterInvariant looks only at buffers from red to white machines.    *)
(***************************************************************************)
OneRedLetterPerBuffer ==
    \A k \in Snap : \A c \in Chan :
        Cardinality({i \in 1..Len(buf[c]) : buf[c][i] = RedLetter(k)})
            + (IF c \in redBuf[k] THEN 1 ELSE 0)
        = IF Src(c) \in red[k] THEN 1 ELSE 0

(***************************************************************************)
(* Lemma 0 rests on "the snapshot state is reachable from the initial      *)
(* state in reality": the actions of white machines, replayed from S0, are *)
(* each possible in turn and end in the snapshot state.  This is stronger  *)
(* than reachability: it checks one witness, the white machines' own       *)
(* actions in the order they were taken.  Where a bug reorders what a      *)
(* machine receives, the witness can fail while the snapshot state is      *)
(* still reachable along another path (redletter lemmas searches every     *)
(* path and says where the two disagree).                                  *)
(***************************************************************************)
Lemma0Holds(k) ==
    LET r == Replay(S0[k], whiteActs[k])
    IN  /\ WhiteActionsPossible:: r.ok
        /\ EndsInSnapshotState::  r.g = Snapshot(k)

Lemma0 == \A k \in DOMAIN Sf : Lemma0Holds(k)

(***************************************************************************)
(* Lemma 1 rests on "the final state in reality is reachable from the      *)
(* snapshot state": the actions of red machines, replayed from the         *)
(* snapshot state, are each possible in turn and end in the final state    *)
(* (one witness again).                                                    *)
(***************************************************************************)
Lemma1Holds(k) ==
    LET r == Replay(Snapshot(k), redActs[k])
    IN  /\ RedActionsPossible:: r.ok
        /\ EndsInFinalState::   r.g = Sf[k]

Lemma1 == \A k \in DOMAIN Sf : Lemma1Holds(k)

(***************************************************************************)
(* The lemmas as EWD 864 states them, for the application's stable         *)
(* predicate: Lemma 0, "If the initial state of the snapshot algorithm     *)
(* satisfies a stable predicate, the snapshot state satisfies it", and     *)
(* Lemma 1, "If the snapshot state satisfies a stable predicate, the final *)
(* state of the snapshot algorithm satisfies it"; and the detection they   *)
(* justify: a stable predicate seen in a snapshot holds from then on.      *)
(***************************************************************************)
StableLemma0 ==
    \A k \in DOMAIN Sf : AppStable(S0[k]) => AppStable(Snapshot(k))

StableLemma1 ==
    \A k \in DOMAIN Sf : AppStable(Snapshot(k)) => AppStable(Sf[k])

StableDetection ==
    \A k \in DOMAIN Sf : AppStable(Snapshot(k)) => AppStable(AppState)

\* A property of every reachable application state holds of every snapshot
\* (a consequence of Lemma 0: the snapshot state is a reachable state).
SnapshotSatisfiesAppInv ==
    \A k \in DOMAIN Sf : AppInv(Snapshot(k))

-----------------------------------------------------------------------------
(***************************************************************************)
(* Lemma 0 implies Lemma 1, when the snapshot algorithm leaves the         *)
(* application alone.  "The snapshot algorithm does not interfere with the *)
(* normal execution of the processes" (the assumptions of Chandy and       *)
(* Lamport, seeds/003): seen through AppState, every step is either no     *)
(* step of the application at all or exactly one of its actions, taken as  *)
(* the application alone takes it -- FIFO buffers included.  The snapshot  *)
(* algorithm's own variables (colours, records, the red letters' places)   *)
(* do not enter it.                                                        *)
(***************************************************************************)
AppActions(g) ==     \* every action the application alone could take in g
    UNION {{[kind |-> "send", p |-> Src(c), q |-> Dst(c), val |-> m] :
                m \in AppSendable(Src(c), Dst(c), g.local[Src(c)])} : c \in Chan}
    \cup UNION {{[kind |-> "internal", p |-> p, q |-> p, val |-> e] :
                    e \in AppEvents(p, g.local[p])} : p \in Proc}
    \cup {[kind |-> "receive", p |-> Dst(c), q |-> Src(c), val |-> Head(g.buf[c])] :
            c \in {d \in Chan : g.buf[d] # << >>}}

AppStep ==
    \/ NoAppStep::  AppState' = AppState
    \/ OneAppStep:: \E a \in AppActions(AppState) :
                        /\ ActEnabled(AppState, a)
                        /\ AppState' = ActResult(AppState, a)

NoInterference == [][AppStep]_vars

(***************************************************************************)
(* Then Lemma 0, in the form this spec checks it, implies Lemma 1 for      *)
(* every completed snapshot.  Proof sketch.  Let R be the application's    *)
(* actions from S0[k] to Sf[k] as they happened; NoInterference makes R a  *)
(* run of the application alone, with FIFO buffers, from S0[k] to Sf[k].   *)
(* whiteActs[k] (W) and redActs[k] (D) split R, each in its order, and a   *)
(* machine's white actions all precede its red ones (a machine stays red). *)
(* A machine's local state depends on its own actions only, so after W it  *)
(* is the state it had on turning red, and after W then D its state in     *)
(* Sf[k].  On a buffer, the i-th receipt in R takes the i-th message of    *)
(* "contents in S0[k], then the sends", in R and in any replay alike, so a *)
(* replay can fail only by finding the buffer empty.  If W replays from    *)
(* S0[k] (WhiteActionsPossible), no white receipt took a message a red     *)
(* machine sent: the buffer would have been empty.  So every message a red *)
(* receipt takes was in the buffer after W or is sent by an earlier action *)
(* of D, and D replays from the state W reaches, ending where R ends,      *)
(* Sf[k].  By EndsInSnapshotState the state W reaches is Snapshot(k):      *)
(* Lemma1Holds(k).                                                         *)
(*                                                                         *)
(* The proof uses none of the steps a bug overrides (Deliverable, Enqueue, *)
(* RedLettersOut, RedLettersAgain, Recording, RecordMessage,               *)
(* RedLetterRecord, RecordingConsumes, TurnsRed): it holds for every model *)
(* that overrides them, as long as NoInterference holds -- for bugs in     *)
(* colouring, recording and red-letter handling over FIFO buffers.  So a   *)
(* model violates Lemma1 alone (with Lemma0 holding) only through a bug    *)
(* that interferes with the application after the cut; such bugs violate   *)
(* Lemma0ImpliesLemma1 and NoInterference too.  TLC checks both on every   *)
(* model of the manifest, must-fail ones included (make check-teeth).      *)
(***************************************************************************)
Lemma0ImpliesLemma1 ==
    \A k \in DOMAIN Sf : Lemma0Holds(k) => Lemma1Holds(k)

-----------------------------------------------------------------------------
(***************************************************************************)
(* Lemma 0 in Dijkstra's own form: the shadow network.  While snapshot k   *)
(* runs, its state is defined from reality by his rules (i)-(iii):         *)
(*   (i)   the colour of a machine is as in reality (the shadow shares     *)
(*         red[k] and redBuf[k]);                                          *)
(*   (ii)  the state of a machine is, (a) for a white machine, as in       *)
(*         reality, (b) for a red machine, as in the snapshot state;       *)
(*   (iii) the contents of a buffer are the stream recorded so far for     *)
(*         it, followed by what reality holds before the buffer's red      *)
(*         letter: all of it while the source is white, (a) and (d); up    *)
(*         to the red letter from red to white, (c); from red to red, (b), *)
(*         what the red receiver has still to record, and nothing once     *)
(*         the buffer is red.                                              *)
(* One formula covers his four cases (a)-(d) of (iii).  The                *)
(* correspondence: "to an action performed in reality by a white machine   *)
(* corresponds in the shadow network exactly the same action, to one       *)
(* performed by a red machine corresponds in the shadow network a skip".   *)
(* (Lemma 1's shadow is defined from the future of reality; it is checked  *)
(* offline, on whole traces, by the Python model.)                         *)
(***************************************************************************)
RECURSIVE Before(_, _)
Before(s, k) ==     \* the application messages of s before the red letter of snapshot k
    IF s = << >> \/ Head(s) = RedLetter(k) THEN << >>
    ELSE (IF Head(s).kind = "app" THEN << Head(s).val >> ELSE << >>) \o Before(Tail(s), k)

Shadow0(k) ==
    [local |-> RuleII::  [p \in Proc |-> IF p \in red[k] THEN recMachine[k][p]  \* (ii, b)
                                                         ELSE local[p]],        \* (ii, a)
     buf   |-> RuleIII:: [c \in Chan |-> recBuf[k][c] \o (IF c \in redBuf[k] THEN << >>
                                                                             ELSE Before(buf[c], k))]]

ShadowStep(k) ==
    /\ ShadowStartsInInitialState::
           (~Started(k) /\ (k \in DOMAIN S0')) => Shadow0(k)' = S0'[k]
    /\ Correspondence::
           InProgress(k) =>
               IF Len(whiteActs'[k]) > Len(whiteActs[k])
               THEN LET a == whiteActs'[k][Len(whiteActs'[k])]
                    IN  /\ WhiteActionPossible:: ActEnabled(Shadow0(k), a)
                        /\ WhiteActionCopied::   Shadow0(k)' = ActResult(Shadow0(k), a)
               ELSE SkipOtherwise:: Shadow0(k)' = Shadow0(k)

ShadowLemma0 == [][\A k \in Snap : ShadowStep(k)]_vars

(***************************************************************************)
(* Liveness: every snapshot that has started completes ("on account of the *)
(* fairness of that white machine, the latter will receive the red letter  *)
(* and turn red itself").                                                  *)
(***************************************************************************)
SnapshotsComplete == \A k \in Snap : Started(k) ~> Complete(k)

-----------------------------------------------------------------------------
(***************************************************************************)
(*                    Where this spec departs from EWD 864                 *)
(*                                                                         *)
(* Atomic actions.  In EWD 864 "each atomic action ... may comprise the    *)
(* reception of one message from one of the machine's input buffers and    *)
(* may comprise the sending of at most one message per output buffer".     *)
(* Here every application action has one effect: one send, one receipt or  *)
(* one internal event.  Nothing is lost for the lemmas: an atomic action   *)
(* of several effects is the sequence of its effects taken by one machine  *)
(* without interruption, and its colour cannot change in between (the      *)
(* receipt of a red letter is an atomic action of its own in EWD 864 too), *)
(* so the behaviours with composite actions are among this spec's, with    *)
(* states added between the effects, and whiteActs and redActs list the    *)
(* effects in order.  The spec has more behaviours, not fewer.             *)
(*                                                                         *)
(* The recorded strings.  EWD 864 records for each buffer "the empty       *)
(* string" if a white machine received a red letter from it, and otherwise *)
(* a string that "ends with the red letter carried by that buffer".  recBuf*)
(* holds the application messages of that string: its red letter is        *)
(* implied (the buffer is red), and the snapshot state is a state of the   *)
(* application, in which red letters do not exist.  RedLetterRecord says   *)
(* what the closing red letter adds to recBuf: nothing.  Lemma 1's shadow  *)
(* network keeps the red letters in its buffers, as EWD 864's does; it is  *)
(* defined from the future of reality and is run offline, along whole      *)
(* traces, by the Python model (python_model/lemmas/shadow.py), not here.  *)
(*                                                                         *)
(* One red letter per buffer.  EWD 864 argues that "each buffer has        *)
(* accepted 1 red letter"; OneRedLetterPerBuffer states it, so a machine   *)
(* that sends red letters twice, or drops one, breaks an invariant.        *)
(*                                                                         *)
(* The collection.  "The record of the snapshot state can be collected in  *)
(* the starter, which then can investigate whether the snapshot state      *)
(* satisfies the stable predicate."  The collection is not modelled: the   *)
(* invariants read the records where they lie, as if collected at the      *)
(* moment the snapshot completes (StableDetection asks the question from   *)
(* then on), and SnapshotsComplete asks for completion of the recording,   *)
(* not for delivery of the records to the starter.                         *)
(***************************************************************************)

-----------------------------------------------------------------------------
(***************************************************************************)
(* The claims.  Safety: the invariants hold in every reachable state, and  *)
(* the shadow network of Lemma 0 follows reality step by step.  The        *)
(* stable-predicate corollaries hold provided AppStable is stable and      *)
(* AppInv an invariant of the application (each application says why its   *)
(* own are).  Lemma 0 implies Lemma 1 for every override of the steps that *)
(* leaves the application alone (see NoInterference).  Liveness: every     *)
(* snapshot that starts completes, provided a machine that can act         *)
(* eventually does (ProgressSpec); where a machine can always accept a     *)
(* message, weak fairness of receipt suffices (see ChandyLamportToken).    *)
(* TLC checks the claims on the models (MC*.cfg): for their constants,     *)
(* with the application bounded by MaxAppActions.                          *)
(***************************************************************************)
THEOREM Spec => [](TypeOK /\ RedLetterInvariant /\ OneRedLetterPerBuffer /\ Lemma0 /\ Lemma1)
THEOREM Spec => [](StableLemma0 /\ StableLemma1 /\ StableDetection /\ SnapshotSatisfiesAppInv)
THEOREM Spec => ShadowLemma0 /\ NoInterference
THEOREM Spec /\ NoInterference => []Lemma0ImpliesLemma1
THEOREM ProgressSpec => SnapshotsComplete
=============================================================================
