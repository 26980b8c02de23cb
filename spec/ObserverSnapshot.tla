-------------------------- MODULE ObserverSnapshot ---------------------------
(***************************************************************************)
(* The observer formulation of the snapshot (seeds/003, its Algorithm      *)
(* section), in which the marker is not a message of its own but a token   *)
(* piggybacked on the application's messages:                              *)
(*                                                                         *)
(*  1. The observer process (the process taking a snapshot) saves its own  *)
(*     local state and sends a snapshot request message bearing a snapshot *)
(*     token to all other processes.                                       *)
(*  2. A process receiving the snapshot token for the first time on any    *)
(*     message sends the observer process its own saved state, and         *)
(*     attaches the snapshot token to all subsequent messages.             *)
(*  3. When a process that has already received the snapshot token         *)
(*     receives a message that does not bear the snapshot token, it        *)
(*     forwards that message to the observer process.                      *)
(*                                                                         *)
(* In EWD 864's words a machine is red once it holds the token, a message  *)
(* is red when it bears it, and the red messages do the red letters' work: *)
(* a white machine turns red before it accepts a red message, so no red    *)
(* message is ever received by a white machine.  Since no message is       *)
(* needed to separate white messages from red ones in a buffer, the        *)
(* buffers need not be FIFO: here they are bags, and any message in a      *)
(* buffer may be received next (Lai and Yang's algorithm, 1987).           *)
(*                                                                         *)
(* What the text leaves open is how the observer knows that the snapshot   *)
(* is complete.  Every saved state arrives once every process holds the    *)
(* token; but a white message may still be travelling, to be forwarded     *)
(* arbitrarily later.  It cannot know without counting messages: each      *)
(* process counts the application messages it sends over each output       *)
(* buffer and receives from each input buffer, and reports the counts with *)
(* its saved state; the white messages in transit on buffer c are then     *)
(* exactly (sent on c before Src(c) turned red) - (received from c before  *)
(* Dst(c) turned red), and the observer waits for that many forwards       *)
(* (CompletionRule).  The model that must fail without the counts is       *)
(* MCObserverEarlyFailure.                                                 *)
(*                                                                         *)
(* Modelling choices.  The observer's own channels (requests out, saved    *)
(* states and forwards in) are not application buffers: a request may      *)
(* arrive at any time (a set of pending requests), while saved states and  *)
(* forwards reach the observer in the step that sends them -- delaying     *)
(* them would only delay the observer's knowledge, which the counts        *)
(* already wait for.  The application is given by the constant operators   *)
(* App*, as in ChandyLamport; its global states keep buffers as sequences  *)
(* of values, which for a bag are its values in increasing order, so the   *)
(* application's own predicates (TokenApp's Inv, ...) apply unchanged.     *)
(***************************************************************************)
EXTENDS Network, Bags, Integers, Sequences, FiniteSets, TLC

CONSTANTS
    \* @type: Set(Int);
    Snap,       \* the snapshot ids
    \* @type: Int -> Str;
    Observer,   \* Observer[k]: the process that takes snapshot k
    \* @type: Int;
    MaxSends    \* the bound on application messages sent over each buffer in a run

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

ASSUME ObserverAssumption ==
    /\ Snap \subseteq Nat \ {0}
    /\ Observer \in [Snap -> Proc]
    /\ MaxSends \in Nat

-----------------------------------------------------------------------------
(***************************************************************************)
(* Messages.  An application message carries its value and the snapshot    *)
(* tokens its sender held when it sent it: the message is red in those     *)
(* snapshots, white in the others.                                         *)
(***************************************************************************)
\* @typeAlias: omsg = {val: Int, toks: Set(Int)};
\* @typeAlias: act = {kind: Str, p: Str, q: Str, val: Int};
\* @typeAlias: gstate = {local: Str -> $local, buf: <<Str, Str>> -> Seq(Int)};
ObserverTypeAliases == TRUE

\* @type: (Int, Set(Int)) => $omsg;
Msg(v, T) == [val |-> v, toks |-> T]

Acts    == [kind : {"send", "receive", "internal"}, p : Proc, q : Proc, val : Int]
GStates == [local : [Proc -> AppLocalStates], buf : [Chan -> Seq(Int)]]

\* The messages of a bag, and the bag with one more or one fewer message m.
Elems(B)     == BagToSet(B)
Plus(B, m)   == B (+) SetToBag({m})
Minus(B, m)  == B (-) SetToBag({m})

VARIABLES
    \* @type: Str -> $local;
    local,       \* local[p]: the application state of machine p
    \* @type: <<Str, Str>> -> ($omsg -> Int);
    buf,         \* buf[c]: the bag of messages in buffer c (not FIFO)
    \* @type: Int -> Set(Str);
    red,         \* red[k]: the machines that hold the token of snapshot k
    \* @type: Int -> Set(Str);
    requests,    \* requests[k]: the machines k's request has not reached yet
    \* @type: <<Str, Str>> -> Int;
    nSent,       \* nSent[c]: application messages Src(c) has sent over c
    \* @type: <<Str, Str>> -> Int;
    nRecv,       \* nRecv[c]: application messages Dst(c) has received from c
    \* @type: Int -> (Str -> $local);
    recMachine,  \* recMachine[k][p]: the saved state p sent the observer of k
    \* @type: Int -> (<<Str, Str>> -> Int);
    repSent,     \* repSent[k][c]: nSent[c] as Src(c) reported it with its saved state
    \* @type: Int -> (<<Str, Str>> -> Int);
    repRecv,     \* repRecv[k][c]: nRecv[c] as Dst(c) reported it with its saved state
    \* @type: Int -> (<<Str, Str>> -> (Int -> Int));
    recBuf,      \* recBuf[k][c]: the bag of message values forwarded to the observer from c
    (***********************************************************************)
    (* History variables, as in ChandyLamport: they make the lemmas        *)
    (* expressible as invariants and do not influence the algorithm.       *)
    (***********************************************************************)
    \* @type: Int -> $gstate;
    S0,          \* S0[k]: the global state just before the observer saved its state
    \* @type: Int -> $gstate;
    Sf,          \* Sf[k]: the global state when the observer declared k complete
    \* @type: Int -> Seq($act);
    whiteActs,   \* whiteActs[k]: application actions of white machines since S0[k]
    \* @type: Int -> Seq($act);
    redActs      \* redActs[k]: application actions of red machines since S0[k]

vars == <<local, buf, red, requests, nSent, nRecv, recMachine, repSent, repRecv, recBuf,
          S0, Sf, whiteActs, redActs>>

TypeOK ==
    /\ local \in [Proc -> AppLocalStates]
    /\ DOMAIN buf = Chan
    /\ \A c \in Chan : IsABag(buf[c]) /\ Elems(buf[c]) \subseteq [val : Int, toks : SUBSET Snap]
    /\ red \in [Snap -> SUBSET Proc]
    /\ requests \in [Snap -> SUBSET Proc]
    /\ nSent \in [Chan -> Nat]
    /\ nRecv \in [Chan -> Nat]
    /\ DOMAIN recMachine = Snap
    /\ \A k \in Snap : recMachine[k] \in [red[k] -> AppLocalStates]
    /\ \A k \in Snap : repSent[k] \in [UNION {Out(p) : p \in red[k]} -> Nat]
    /\ \A k \in Snap : repRecv[k] \in [UNION {In(p) : p \in red[k]} -> Nat]
    /\ DOMAIN recBuf = Snap
    /\ \A k \in Snap : DOMAIN recBuf[k] = Chan /\ \A c \in Chan : IsABag(recBuf[k][c])
    /\ DOMAIN S0 \subseteq Snap /\ \A k \in DOMAIN S0 : S0[k] \in GStates
    /\ DOMAIN Sf \subseteq DOMAIN S0 /\ \A k \in DOMAIN Sf : Sf[k] \in GStates
    /\ whiteActs \in [Snap -> Seq(Acts)]
    /\ redActs \in [Snap -> Seq(Acts)]

-----------------------------------------------------------------------------
(***************************************************************************)
(* Global application states, with every buffer shown as the sequence of   *)
(* its values in increasing order (a bag has no other order).              *)
(***************************************************************************)
\* s (sorted) with v inserted in its place.
Insert(s, v) == LET n == Cardinality({i \in 1..Len(s) : s[i] < v})
                IN  SubSeq(s, 1, n) \o << v >> \o SubSeq(s, n + 1, Len(s))

\* s without one occurrence of v (s contains v).
RemoveOne(s, v) == LET i == CHOOSE j \in 1..Len(s) : s[j] = v
                   IN  SubSeq(s, 1, i - 1) \o SubSeq(s, i + 1, Len(s))

RECURSIVE MsgValues(_)
MsgValues(B) ==     \* the values of the messages of bag B, in increasing order
    IF Elems(B) = {} THEN << >>
    ELSE LET m == CHOOSE x \in Elems(B) : TRUE
         IN  Insert(MsgValues(Minus(B, m)), m.val)

RECURSIVE BagValues(_)
BagValues(B) ==     \* the integers of bag B, in increasing order
    IF Elems(B) = {} THEN << >>
    ELSE LET v == CHOOSE x \in Elems(B) : TRUE
         IN  Insert(BagValues(Minus(B, v)), v)

\* @type: $gstate;
AppState == [local |-> local, buf |-> [c \in Chan |-> MsgValues(buf[c])]]

Started(k)    == k \in DOMAIN S0     \* the observer has saved its state
Complete(k)   == k \in DOMAIN Sf     \* the observer has declared the snapshot complete
InProgress(k) == Started(k) /\ ~Complete(k)

(***************************************************************************)
(* "From this, the observer builds up a complete snapshot: a saved state   *)
(* for each process and all messages `in the ether'".                      *)
(***************************************************************************)
\* @type: (Int) => $gstate;
Snapshot(k) == [local |-> recMachine[k], buf |-> [c \in Chan |-> BagValues(recBuf[k][c])]]

(***************************************************************************)
(* Application actions on global application states, for replaying the     *)
(* recorded histories.  As in ChandyLamport, except that a receipt may     *)
(* take any message of the buffer, not only the oldest.                    *)
(***************************************************************************)
ActEnabled(g, a) ==
    CASE a.kind = "send"     -> a.val \in AppSendable(a.p, a.q, g.local[a.p])
      [] a.kind = "internal" -> a.val \in AppEvents(a.p, g.local[a.p])
      [] a.kind = "receive"  -> LET c == <<a.q, a.p>>
                                IN  /\ \E i \in 1..Len(g.buf[c]) : g.buf[c][i] = a.val
                                    /\ AppCanReceive(a.p, a.q, a.val, g.local[a.p])

ActResult(g, a) ==
    CASE a.kind = "send" ->
            [local |-> [g.local EXCEPT ![a.p] = AppAfterSend(a.p, a.q, a.val, @)],
             buf   |-> [g.buf EXCEPT ![<<a.p, a.q>>] = Insert(@, a.val)]]
      [] a.kind = "internal" ->
            [local |-> [g.local EXCEPT ![a.p] = AppAfterEvent(a.p, a.val, @)],
             buf   |-> g.buf]
      [] a.kind = "receive" ->
            [local |-> [g.local EXCEPT ![a.p] = AppAfterReceive(a.p, a.q, a.val, @)],
             buf   |-> [g.buf EXCEPT ![<<a.q, a.p>>] = RemoveOne(@, a.val)]]

RECURSIVE Replay(_, _)
Replay(g, acts) ==
    IF acts = << >> THEN [ok |-> TRUE, g |-> g]
    ELSE IF ActEnabled(g, Head(acts))
         THEN Replay(ActResult(g, Head(acts)), Tail(acts))
         ELSE [ok |-> FALSE, g |-> g]

(***************************************************************************)
(* The history of application actions: an action of machine a.p goes, for  *)
(* every snapshot in progress, to whiteActs or redActs by the colour of    *)
(* a.p when it acts (R: the red machines per snapshot at that moment).     *)
(***************************************************************************)
RecordAct(a, R) ==
    /\ whiteActs' = [k \in Snap |-> IF InProgress(k) /\ a.p \notin R[k]
                                    THEN Append(whiteActs[k], a) ELSE whiteActs[k]]
    /\ redActs'   = [k \in Snap |-> IF InProgress(k) /\ a.p \in R[k]
                                    THEN Append(redActs[k], a) ELSE redActs[k]]

-----------------------------------------------------------------------------
(***************************************************************************)
(* The step a model that must fail overrides: when the observer may        *)
(* declare snapshot k complete.  It has every process's saved state, and   *)
(* from every buffer as many forwarded messages as the counts say were in  *)
(* transit.                                                                *)
(***************************************************************************)
CompletionRule(k) ==
    /\ AllSavedStates::  DOMAIN recMachine[k] = Proc
    /\ AllInTransit::    \A c \in Chan :
                            BagCardinality(recBuf[k][c]) = repSent[k][c] - repRecv[k][c]

\* The tokens machine p holds: "attaches the snapshot token to all subsequent messages".
TokensHeld(p) == {k \in Snap : p \in red[k]}

(***************************************************************************)
(* Machine p turns red in every snapshot of K: it saves its state and      *)
(* "sends the observer process its own saved state", with its counts: of   *)
(* the messages it has sent over each output buffer and received from each *)
(* input buffer so far.                                                    *)
(***************************************************************************)
TurnRed(p, K) ==
    /\ BecomesRed::   red'        = [k \in Snap |-> IF k \in K THEN red[k] \cup {p} ELSE red[k]]
    /\ SendsState::   recMachine' = [k \in Snap |-> IF k \in K THEN recMachine[k] @@ (p :> local[p])
                                                    ELSE recMachine[k]]
    /\ SendsCounts::  /\ repSent' = [k \in Snap |-> IF k \in K
                                                    THEN repSent[k] @@ [c \in Out(p) |-> nSent[c]]
                                                    ELSE repSent[k]]
                      /\ repRecv' = [k \in Snap |-> IF k \in K
                                                    THEN repRecv[k] @@ [c \in In(p) |-> nRecv[c]]
                                                    ELSE repRecv[k]]

-----------------------------------------------------------------------------
Init ==
    /\ local      = [p \in Proc |-> AppLocalInit(p)]
    /\ buf        = [c \in Chan |-> EmptyBag]
    /\ red        = [k \in Snap |-> {}]
    /\ requests   = [k \in Snap |-> {}]
    /\ nSent      = [c \in Chan |-> 0]
    /\ nRecv      = [c \in Chan |-> 0]
    /\ recMachine = [k \in Snap |-> << >>]
    /\ repSent    = [k \in Snap |-> << >>]
    /\ repRecv    = [k \in Snap |-> << >>]
    /\ recBuf     = [k \in Snap |-> [c \in Chan |-> EmptyBag]]
    /\ S0         = << >>
    /\ Sf         = << >>
    /\ whiteActs  = [k \in Snap |-> << >>]
    /\ redActs    = [k \in Snap |-> << >>]

(***************************************************************************)
(* Rule 1: the observer "saves its own local state" and "sends a snapshot  *)
(* request message bearing a snapshot token to all other processes".       *)
(***************************************************************************)
StartSnapshot(k) ==
    LET p == Observer[k]
    IN  /\ ~Started(k)
        /\ AppMayStart(p, k, local[p])
        /\ TurnRed(p, {k})
        /\ SendsRequests::  requests' = [requests EXCEPT ![k] = Proc \ {p}]
        /\ InitialState::   S0' = S0 @@ (k :> AppState)
        /\ UNCHANGED <<local, buf, nSent, nRecv, recBuf, Sf, whiteActs, redActs>>

(***************************************************************************)
(* Rule 2 on a request: its receiver, if it holds no token of k yet, turns *)
(* red.                                                                    *)
(***************************************************************************)
ReceiveRequest(p, k) ==
    /\ p \in requests[k]
    /\ requests' = [requests EXCEPT ![k] = @ \ {p}]
    /\ IF p \in red[k] THEN UNCHANGED <<red, recMachine, repSent, repRecv>>
                       ELSE TurnRed(p, {k})
    /\ UNCHANGED <<local, buf, nSent, nRecv, recBuf, S0, Sf, whiteActs, redActs>>

(***************************************************************************)
(* An application message, bearing the tokens its sender holds (rule 2,    *)
(* "attaches the snapshot token to all subsequent messages").              *)
(***************************************************************************)
SendApp(c) ==
    LET p == Src(c)
        q == Dst(c)
    IN  \E v \in AppSendable(p, q, local[p]) :
            /\ local' = [local EXCEPT ![p] = AppAfterSend(p, q, v, @)]
            /\ buf'   = [buf EXCEPT ![c] = Plus(@, Msg(v, TokensHeld(p)))]
            /\ nSent' = [nSent EXCEPT ![c] = @ + 1]
            /\ RecordAct([kind |-> "send", p |-> p, q |-> q, val |-> v], red)
            /\ UNCHANGED <<red, requests, nRecv, recMachine, repSent, repRecv, recBuf, S0, Sf>>

InternalEvent(p) ==
    \E e \in AppEvents(p, local[p]) :
        /\ local' = [local EXCEPT ![p] = AppAfterEvent(p, e, @)]
        /\ RecordAct([kind |-> "internal", p |-> p, q |-> p, val |-> e], red)
        /\ UNCHANGED <<buf, red, requests, nSent, nRecv, recMachine, repSent, repRecv, recBuf,
                       S0, Sf>>

(***************************************************************************)
(* The receipt of message m from buffer c, any message of the bag.  Rule 2 *)
(* first: for every token m bears that its receiver p does not hold yet, p *)
(* turns red, saving its state as it was before the receipt.  Rule 3: for  *)
(* every snapshot in which p was red already and m bears no token, p       *)
(* forwards m to the observer, as a message that was in transit.  Then p   *)
(* accepts m, a red action in every snapshot in which p is now red.        *)
(***************************************************************************)
Receive(c, m) ==
    LET p == Dst(c)
        q == Src(c)
        K == {k \in m.toks : p \notin red[k]}
        F == {k \in Snap : k \notin m.toks /\ p \in red[k]}
    IN  /\ CopiesIn(m, buf[c]) > 0
        /\ AppCanReceive(p, q, m.val, local[p])
        /\ Rule2::  TurnRed(p, K)
        /\ Rule3::  recBuf' = [k \in Snap |-> IF k \in F
                                              THEN [recBuf[k] EXCEPT ![c] = Plus(@, m.val)]
                                              ELSE recBuf[k]]
        /\ local' = [local EXCEPT ![p] = AppAfterReceive(p, q, m.val, @)]
        /\ buf'   = [buf EXCEPT ![c] = Minus(@, m)]
        /\ nRecv' = [nRecv EXCEPT ![c] = @ + 1]
        /\ RecordAct([kind |-> "receive", p |-> p, q |-> q, val |-> m.val], red')
        /\ UNCHANGED <<requests, nSent, S0, Sf>>

ReceiveApp(c) == \E m \in Elems(buf[c]) : Receive(c, m)

(***************************************************************************)
(* The observer declares snapshot k complete; the state at that moment is  *)
(* the final state of the snapshot algorithm.                              *)
(***************************************************************************)
DeclareComplete(k) ==
    /\ InProgress(k)
    /\ CompletionRule(k)
    /\ FinalState::  Sf' = Sf @@ (k :> AppState)
    /\ UNCHANGED <<local, buf, red, requests, nSent, nRecv, recMachine, repSent, repRecv,
                   recBuf, S0, whiteActs, redActs>>

(***************************************************************************)
(* The next-state relation (LOCAL, and restated by ObserverSnapshotToken   *)
(* outside the instance, for the reason given in ChandyLamport).           *)
(***************************************************************************)
LOCAL Next ==
    \/ \E c \in Chan : SendApp(c)
    \/ \E p \in Proc : InternalEvent(p)
    \/ \E c \in Chan : ReceiveApp(c)
    \/ \E k \in Snap : StartSnapshot(k)
    \/ \E p \in Proc : \E k \in Snap : ReceiveRequest(p, k)
    \/ \E k \in Snap : DeclareComplete(k)

LOCAL Spec == Init /\ [][Next]_vars

(***************************************************************************)
(* Fairness: every message and every request eventually arrives, and the   *)
(* observer does not wait for ever once it may declare completion.  Weak   *)
(* fairness per buffer suffices for "each message ... eventually leaves"   *)
(* here because sends are bounded (SendBound): a buffer is eventually      *)
(* only drained.                                                           *)
(***************************************************************************)
Fairness ==
    /\ \A c \in Chan : WF_vars(ReceiveApp(c))
    /\ \A p \in Proc : \A k \in Snap : WF_vars(ReceiveRequest(p, k))
    /\ \A k \in Snap : WF_vars(DeclareComplete(k))

LOCAL FairSpec == Spec /\ Fairness

(***************************************************************************)
(* The bound that keeps models finite (a state constraint): at most        *)
(* MaxSends application messages over each buffer in a run.  The counts,   *)
(* unlike ChandyLamport's state, remember every message since the start,   *)
(* so the bound is on the whole run rather than on the actions while a     *)
(* snapshot runs.  It cuts sends only, never a receipt, so the fairness of *)
(* receipt is not cut short at the bound.                                  *)
(***************************************************************************)
SendBound == \A c \in Chan : nSent[c] <= MaxSends

-----------------------------------------------------------------------------
(***************************************************************************)
(*                                 INVARIANTS                              *)
(*                                                                         *)
(* What the counts rest on: once both ends of buffer c are red in k, the   *)
(* white messages of c not yet received (still in the buffer) and those    *)
(* already forwarded to the observer are exactly as many as the two        *)
(* reports say were in transit.                                            *)
(***************************************************************************)
WhiteIn(B, k) == BagCardinality(
                    [m \in {x \in Elems(B) : k \notin x.toks} |-> CopiesIn(m, B)])

CountsInvariant ==
    \A k \in Snap : \A c \in Chan :
        (Src(c) \in red[k] /\ Dst(c) \in red[k]) =>
            repSent[k][c] - repRecv[k][c] = BagCardinality(recBuf[k][c]) + WhiteIn(buf[c], k)

(***************************************************************************)
(* No red message reaches a white machine: a white machine that receives   *)
(* a message bearing a token turns red first.  So every red message in a   *)
(* buffer was sent by a red machine, and is headed for a machine that will *)
(* take it red.                                                            *)
(***************************************************************************)
RedMessagesFromRedMachines ==
    \A k \in Snap : \A c \in Chan : \A m \in Elems(buf[c]) :
        k \in m.toks => Src(c) \in red[k]

(***************************************************************************)
(* Lemma 0 and Lemma 1 in EWD 864's sense, over bags: the white machines'  *)
(* actions replayed from the initial state end in the snapshot state, and  *)
(* the red machines' actions replayed from the snapshot state end in the   *)
(* final state.                                                            *)
(***************************************************************************)
Lemma0 ==
    \A k \in DOMAIN Sf :
        LET r == Replay(S0[k], whiteActs[k])
        IN  /\ WhiteActionsPossible(k):: r.ok
            /\ EndsInSnapshotState(k)::  r.g = Snapshot(k)

Lemma1 ==
    \A k \in DOMAIN Sf :
        LET r == Replay(Snapshot(k), redActs[k])
        IN  /\ RedActionsPossible(k):: r.ok
            /\ EndsInFinalState(k)::   r.g = Sf[k]

StableLemma0 == \A k \in DOMAIN Sf : AppStable(S0[k]) => AppStable(Snapshot(k))
StableLemma1 == \A k \in DOMAIN Sf : AppStable(Snapshot(k)) => AppStable(Sf[k])
StableDetection == \A k \in DOMAIN Sf : AppStable(Snapshot(k)) => AppStable(AppState)
SnapshotSatisfiesAppInv == \A k \in DOMAIN Sf : AppInv(Snapshot(k))

(***************************************************************************)
(* Once declared complete, a snapshot is final: nothing more is forwarded  *)
(* to its observer (an action property).                                   *)
(***************************************************************************)
CompleteIsFinal == [][\A k \in DOMAIN Sf : recBuf'[k] = recBuf[k]]_vars

\* Liveness: every snapshot that has started is eventually declared complete.
SnapshotsComplete == \A k \in Snap : Started(k) ~> Complete(k)

-----------------------------------------------------------------------------
(***************************************************************************)
(* What a snapshot costs, as state functions the comparison page           *)
(* (docs/variants.md) measures with TLC over every reachable state: the    *)
(* messages of the observer's own channels for snapshot k (its requests,   *)
(* the saved states sent to it, the messages forwarded to it), and the     *)
(* messages it stores as in transit.  No application action ever waits.    *)
(***************************************************************************)
StoredMessages(k)  == Sum([c \in Chan |-> BagCardinality(recBuf[k][c])])
ControlMessages(k) == (Cardinality(Proc) - 1) + (Cardinality(DOMAIN recMachine[k]) - 1)
                        + StoredMessages(k)

-----------------------------------------------------------------------------
THEOREM Spec => [](TypeOK /\ CountsInvariant /\ RedMessagesFromRedMachines /\ Lemma0 /\ Lemma1)
THEOREM Spec => [](StableLemma0 /\ StableLemma1 /\ StableDetection /\ SnapshotSatisfiesAppInv)
THEOREM Spec => CompleteIsFinal
THEOREM FairSpec => SnapshotsComplete
=============================================================================
