--------------------------- MODULE BarrierSnapshot ---------------------------
(***************************************************************************)
(* Asynchronous Barrier Snapshots, Flink's checkpointing (seeds/002, after *)
(* "Lightweight Asynchronous Snapshots for Distributed Dataflows"): the    *)
(* snapshot of EWD 864 on a dataflow graph, where the red letter is called *)
(* a barrier and the machines are sources and operators.                   *)
(*                                                                         *)
(*   "Barriers are injected periodically into all the sources; a source    *)
(*    that sees a barrier records its state at once and sends the barrier  *)
(*    on to the operators."  An operator that receives a barrier from an   *)
(*    input blocks that input ("trigger (block | input)"); once every      *)
(*    input is blocked it broadcasts the barrier to all its outputs,       *)
(*    snapshots its state and unblocks its inputs.  "When all barriers     *)
(*    have reached the sinks and all sinks have completed their            *)
(*    checkpoint, this round of the snapshot is complete."                 *)
(*                                                                         *)
(* Blocking (alignment) is what lets the checkpoint record no buffer at    *)
(* all on an acyclic graph: an operator's state never includes a record    *)
(* sent after a barrier, and every record sent before one has been         *)
(* processed when the operator snapshots.  The variants, one constant or   *)
(* one step apart:                                                         *)
(*                                                                         *)
(*  - Mode = "aligned", the pseudo-code above; on a cyclic graph the back  *)
(*    edges are not blocked (their barrier comes only after the operator   *)
(*    has forwarded its own) and the records received from a back edge     *)
(*    between the snapshot and its barrier are logged with the checkpoint, *)
(*    EWD 864's recording rule 2 for those buffers only;                   *)
(*  - Mode = "unaligned": an operator snapshots at the first barrier it    *)
(*    sees, and a barrier overtakes the records ahead of it in a buffer;   *)
(*    the records it overtakes, and those received from an input before    *)
(*    its barrier, are stored with the checkpoint (rule 2 for every        *)
(*    buffer); nothing blocks;                                             *)
(*  - alignment skipped ("at least once"), the aligned mode with the step  *)
(*    Blocked overridden to block nothing: "an operator keeps processing   *)
(*    all inputs, even after some checkpoint barriers for checkpoint n     *)
(*    arrived ... On a restore, these records will occur as duplicates"    *)
(*    (MCBarrierAtLeastOnceFailure).                                       *)
(*                                                                         *)
(* The application is a keyed dataflow: each source reads a fixed,         *)
(* replayable sequence of records (Input[s], each a key) and sends each    *)
(* one, by its key, to the operator RouteTo[s][key]; an operator applies   *)
(* every record it processes to its state and sends it on to               *)
(* RouteTo[p][key], or nowhere if that is p itself; a record sent over a   *)
(* back edge starts a new round, up to MaxRounds.  An operator's state is  *)
(* the bag of the effects it has applied, an effect being <<source, index, *)
(* round>>, so that an effect applied twice shows as two copies.           *)
(*                                                                         *)
(* The property Flink claims, "exactly once": restoring any completed      *)
(* checkpoint and replaying the sources from their recorded positions      *)
(* yields every record's effect exactly once.  The job fails once, at any  *)
(* moment after a checkpoint completed, and restores that checkpoint       *)
(* (Restore); ExactlyOnceAfterRestore says that no effect is ever applied  *)
(* twice and that every effect is there once the input is drained.         *)
(* ConsistentCut states that the recorded cut is consistent, and Lemma0,   *)
(* Lemma1 are EWD 864's, over the dataflow's actions.                      *)
(***************************************************************************)
EXTENDS Dataflow, Bags, Integers, Sequences, FiniteSets, TLC

CONSTANTS
    \* @type: Set(Int);
    Ckpt,        \* the checkpoint ids
    \* @type: Str -> Seq(Int);
    Input,       \* Input[s]: the keys of the records source s reads, in order (replayable)
    \* @type: Str -> (Int -> Str);
    RouteTo,     \* RouteTo[p][key]: the machine p sends a record with this key to (p: nowhere)
    \* @type: Int;
    MaxRounds,   \* how many times a record may be sent back over a back edge
    \* @type: Str;
    Mode         \* "aligned" or "unaligned"

Range(s) == {s[i] : i \in 1..Len(s)}         \* the elements of a sequence
Keys     == UNION {Range(Input[s]) : s \in Sources}  \* every key of the input

ASSUME BarrierAssumption ==
    /\ Ckpt \subseteq Nat \ {0}
    /\ Mode \in {"aligned", "unaligned"}
    /\ MaxRounds \in Nat
    /\ DOMAIN Input = Sources /\ \A s \in Sources : Input[s] \in Seq(Int)
    /\ DOMAIN RouteTo = Proc /\ \A p \in Proc : DOMAIN RouteTo[p] = Keys
    /\ SourcesRouteEveryKey::  \A s \in Sources : \A k \in Keys : <<s, RouteTo[s][k]>> \in Chan
    /\ OperatorsRouteOnward::  \A p \in Ops : \A k \in Keys :
                                   RouteTo[p][k] = p \/ <<p, RouteTo[p][k]>> \in Chan

-----------------------------------------------------------------------------
(***************************************************************************)
(* Messages: records and barriers, records of the same shape so that a     *)
(* buffer is a sequence of one type.  A record is named by its source, its *)
(* index in the source's input and its round; that triple is also the      *)
(* effect it has on an operator.                                           *)
(***************************************************************************)
\* @typeAlias: bmsg = {kind: Str, src: Str, idx: Int, round: Int, ckpt: Int};
\* @typeAlias: bact = {kind: Str, p: Str, c: <<Str, Str>>, m: $bmsg};
(* @typeAlias: bstate = {pos: Str -> Int, state: Str -> (<<Str, Int, Int>> -> Int),
                         buf: <<Str, Str>> -> Seq($bmsg)}; *)
BarrierTypeAliases == TRUE

\* @type: (Str, Int, Int) => $bmsg;
Rec(s, i, r) == [kind |-> "rec", src |-> s, idx |-> i, round |-> r, ckpt |-> 0]
\* @type: (Int) => $bmsg;
Barrier(n)   == [kind |-> "barrier", src |-> "", idx |-> 0, round |-> 0, ckpt |-> n]

Effect(m) == <<m.src, m.idx, m.round>>   \* the effect of record m on the operator that processes it
KeyOf(m)  == Input[m.src][m.idx]         \* the key of record m

Records(s) == SelectSeq(s, LAMBDA x : x.kind = "rec")   \* the records of a buffer, in order

Msgs    == [kind : {"rec"}, src : Sources, idx : Nat, round : 0..MaxRounds, ckpt : {0}]
             \cup [kind : {"barrier"}, src : {""}, idx : {0}, round : {0}, ckpt : Ckpt]
Effects == Sources \X Nat \X (0..MaxRounds)

IsEffectBag(B) == IsABag(B) /\ BagToSet(B) \subseteq Effects   \* B is a bag of effects

(***************************************************************************)
(* Where a machine sends a record after reading or processing it: a set of *)
(* at most one hop [c |-> buffer, m |-> record as sent].  A record sent    *)
(* over a back edge starts its next round; after MaxRounds it stops.       *)
(***************************************************************************)
Outputs(p, m) ==
    LET q == RouteTo[p][KeyOf(m)]
    IN  IF q = p THEN {}
        ELSE IF <<p, q>> \in BackEdges
             THEN IF m.round < MaxRounds
                  THEN {[c |-> <<p, q>>, m |-> [m EXCEPT !.round = @ + 1]]}
                  ELSE {}
             ELSE {[c |-> <<p, q>>, m |-> m]}

\* The buffers b with the hops O appended.
Send(b, O) == [d \in DOMAIN b |-> IF \E o \in O : o.c = d
                                  THEN Append(b[d], (CHOOSE o \in O : o.c = d).m)
                                  ELSE b[d]]

(***************************************************************************)
(* The path of a record through the graph: the sequence of its hops from   *)
(* its source, each hop the buffer it is sent over and the record as sent. *)
(* It is finite: the forward graph is acyclic and rounds are bounded.      *)
(***************************************************************************)
RECURSIVE PathFrom(_, _)
PathFrom(p, m) ==
    IF Outputs(p, m) = {} THEN << >>
    ELSE LET o == CHOOSE x \in Outputs(p, m) : TRUE
         IN  << o >> \o PathFrom(Dst(o.c), o.m)

Path(s, i) == PathFrom(s, Rec(s, i, 0))

\* Every record of the input, named <<source, index>>.
RecordIds == UNION {{<<s, i>> : i \in 1..Len(Input[s])} : s \in Sources}

-----------------------------------------------------------------------------
VARIABLES
    \* @type: Str -> Int;
    pos,         \* pos[s]: how many records source s has read
    \* @type: Str -> (<<Str, Int, Int>> -> Int);
    state,       \* state[p]: the bag of the effects operator p has applied
    \* @type: <<Str, Str>> -> Seq($bmsg);
    buf,         \* buf[c]: the contents of buffer c, oldest first (FIFO)
    \* @type: Int -> Set(Str);
    snapped,     \* snapped[n]: the machines that have taken their snapshot for checkpoint n
    \* @type: Int -> Set(<<Str, Str>>);
    barrierIn,   \* barrierIn[n]: the buffers whose barrier n has been received
    \* @type: Int -> (Str -> Int);
    recPos,      \* recPos[n][s]: the position source s recorded for checkpoint n
    \* @type: Int -> (Str -> (<<Str, Int, Int>> -> Int));
    recState,    \* recState[n][p]: the state operator p recorded for checkpoint n
    \* @type: Int -> (<<Str, Str>> -> Seq($bmsg));
    recChan,     \* recChan[n][c]: the records stored with checkpoint n for buffer c
    \* @type: Int;
    restored,    \* 0 before the failure; then the checkpoint the job was restored from
    (***********************************************************************)
    (* History variables, as in ChandyLamport.  A machine is white in      *)
    (* checkpoint n until it snapshots, red after.                         *)
    (***********************************************************************)
    \* @type: Int -> $bstate;
    S0,          \* S0[n]: the global state just before the first source recorded n
    \* @type: Int -> $bstate;
    Sf,          \* Sf[n]: the global state when the last barrier of n was received
    \* @type: Int -> Seq($bact);
    whiteActs,   \* whiteActs[n]: dataflow actions of machines white in n, since S0[n]
    \* @type: Int -> Seq($bact);
    redActs      \* redActs[n]: dataflow actions of machines red in n, since S0[n]

algVars  == <<snapped, barrierIn, recPos, recState, recChan>>
histVars == <<S0, Sf, whiteActs, redActs>>
vars     == <<pos, state, buf, snapped, barrierIn, recPos, recState, recChan, restored,
              S0, Sf, whiteActs, redActs>>

TypeOK ==
    /\ pos \in [Sources -> Nat]
    /\ DOMAIN state = Ops /\ \A p \in Ops : IsEffectBag(state[p])
    /\ buf \in [Chan -> Seq(Msgs)]
    /\ snapped \in [Ckpt -> SUBSET Proc]
    /\ barrierIn \in [Ckpt -> SUBSET Chan]
    /\ DOMAIN recPos = Ckpt /\ \A n \in Ckpt : recPos[n] \in [snapped[n] \cap Sources -> Nat]
    /\ DOMAIN recState = Ckpt
    /\ \A n \in Ckpt : /\ DOMAIN recState[n] = snapped[n] \cap Ops
                       /\ \A p \in DOMAIN recState[n] : IsEffectBag(recState[n][p])
    /\ recChan \in [Ckpt -> [Chan -> Seq(Msgs)]]
    /\ restored \in {0} \cup Ckpt
    /\ DOMAIN S0 \subseteq Ckpt
    /\ DOMAIN Sf \subseteq DOMAIN S0
    /\ DOMAIN whiteActs = Ckpt /\ DOMAIN redActs = Ckpt

-----------------------------------------------------------------------------
(***************************************************************************)
(* Global states of the dataflow: the sources' positions, the operators'   *)
(* states and the records in the buffers (barriers are invisible to it).   *)
(***************************************************************************)
\* @type: $bstate;
AppState == [pos |-> pos, state |-> state, buf |-> [c \in Chan |-> Records(buf[c])]]

Live          == restored = 0                       \* the job has not failed
Started(n)    == n \in DOMAIN S0                    \* a source has recorded n
Complete(n)   == n \in DOMAIN Sf                    \* every barrier of n has been received
InProgress(n) == Started(n) /\ ~Complete(n) /\ Live

\* "the snapshot state" of checkpoint n, once it is complete.
\* @type: (Int) => $bstate;
Snapshot(n) == [pos |-> recPos[n], state |-> recState[n], buf |-> recChan[n]]

(***************************************************************************)
(* The dataflow's own actions on global states, for replaying histories:   *)
(* a.kind = "emit" (source a.p reads record a.m and sends it over a.c) or  *)
(* "process" (operator a.p takes record a.m from its input a.c).           *)
(***************************************************************************)
ActEnabled(g, a) ==
    CASE a.kind = "emit"    -> g.pos[a.p] + 1 = a.m.idx
      [] a.kind = "process" -> g.buf[a.c] # << >> /\ Head(g.buf[a.c]) = a.m

ActResult(g, a) ==
    CASE a.kind = "emit" ->
            [g EXCEPT !.pos[a.p] = @ + 1, !.buf = Send(@, Outputs(a.p, a.m))]
      [] a.kind = "process" ->
            [g EXCEPT !.state[a.p] = @ (+) SetToBag({Effect(a.m)}),
                      !.buf = Send([@ EXCEPT ![a.c] = Tail(@)], Outputs(a.p, a.m))]

RECURSIVE Replay(_, _)
Replay(g, acts) ==
    IF acts = << >> THEN [ok |-> TRUE, g |-> g]
    ELSE IF ActEnabled(g, Head(acts))
         THEN Replay(ActResult(g, Head(acts)), Tail(acts))
         ELSE [ok |-> FALSE, g |-> g]

\* The action a goes, for every checkpoint in progress, to whiteActs or redActs.
RecordAct(a) ==
    /\ whiteActs' = [n \in Ckpt |-> IF InProgress(n) /\ a.p \notin snapped[n]
                                    THEN Append(whiteActs[n], a) ELSE whiteActs[n]]
    /\ redActs'   = [n \in Ckpt |-> IF InProgress(n) /\ a.p \in snapped[n]
                                    THEN Append(redActs[n], a) ELSE redActs[n]]

-----------------------------------------------------------------------------
(***************************************************************************)
(* The steps the variants and the models that must fail override.          *)
(***************************************************************************)

\* Input c is blocked: aligned mode, c's barrier of some checkpoint n has arrived and its
\* operator has not snapshotted n yet ("trigger (block | input)").  Back edges never block,
\* nor does anything once the job has failed: the restart aborts every alignment.
Blocked(c) ==
    /\ Live
    /\ Mode = "aligned"
    /\ c \notin BackEdges
    /\ \E n \in Ckpt : c \in barrierIn[n] /\ Dst(c) \notin snapped[n]

\* Operator p snapshots n once the barrier inputs I hold: every forward input when aligned
\* ("if blocked inputs = inputs"), the first one when unaligned.
Aligned(p, n, I) == Mode = "unaligned" \/ ForwardIn(p) \subseteq I

\* The positions in buffer c from which a barrier may be taken: the oldest message, or
\* when unaligned the first barrier wherever it is, overtaking the records ahead of it.
BarrierPositions(c) ==
    LET bs == {i \in 1..Len(buf[c]) : buf[c][i].kind = "barrier"}
        first == CHOOSE i \in bs : \A j \in bs : i <= j
    IN  IF bs = {} THEN {}
        ELSE IF first = 1 \/ Mode = "unaligned" THEN {first} ELSE {}

\* The records a barrier overtook, as stored with the checkpoint.
Overtaken(ahead) == ahead

\* Recording rule 2: a machine red in n records the records it processes from input c
\* as long as c's barrier of n has not arrived (in aligned mode: back edges only).
Logging(n, p, c) == Live /\ p \in snapped[n] /\ c \notin barrierIn[n]

RemoveAt(s, i) == SubSeq(s, 1, i - 1) \o SubSeq(s, i + 1, Len(s))  \* s without its i-th element

(***************************************************************************)
(* Machine p records its state for checkpoint n and sends barrier n on all *)
(* its outputs; b is the buffers after the step's receipt.                 *)
(***************************************************************************)
TakeSnapshot(p, n, b) ==
    /\ RecordsState::  snapped'  = [snapped EXCEPT ![n] = @ \cup {p}]
    /\ recState' = IF p \in Ops THEN [recState EXCEPT ![n] = @ @@ (p :> state[p])] ELSE recState
    /\ recPos'   = IF p \in Sources THEN [recPos EXCEPT ![n] = @ @@ (p :> pos[p])] ELSE recPos
    /\ Broadcast::     buf' = [d \in Chan |-> IF d \in Out(p) THEN Append(b[d], Barrier(n))
                                                              ELSE b[d]]

-----------------------------------------------------------------------------
Init ==
    /\ pos       = [s \in Sources |-> 0]
    /\ state     = [p \in Ops |-> EmptyBag]
    /\ buf       = [c \in Chan |-> << >>]
    /\ snapped   = [n \in Ckpt |-> {}]
    /\ barrierIn = [n \in Ckpt |-> {}]
    /\ recPos    = [n \in Ckpt |-> << >>]
    /\ recState  = [n \in Ckpt |-> << >>]
    /\ recChan   = [n \in Ckpt |-> [c \in Chan |-> << >>]]
    /\ restored  = 0
    /\ S0        = << >>
    /\ Sf        = << >>
    /\ whiteActs = [n \in Ckpt |-> << >>]
    /\ redActs   = [n \in Ckpt |-> << >>]

(***************************************************************************)
(* Source s reads its next record and sends it towards its key's operator. *)
(***************************************************************************)
Emit(s) ==
    /\ pos[s] < Len(Input[s])
    /\ LET m == Rec(s, pos[s] + 1, 0)
           o == CHOOSE x \in Outputs(s, m) : TRUE
       IN  /\ pos' = [pos EXCEPT ![s] = @ + 1]
           /\ buf' = Send(buf, {o})
           /\ RecordAct([kind |-> "emit", p |-> s, c |-> o.c, m |-> m])
    /\ UNCHANGED <<state, snapped, barrierIn, recPos, recState, recChan, restored, S0, Sf>>

(***************************************************************************)
(* Operator Dst(c) processes the record at the head of its input c, unless *)
(* c is blocked: it applies the record's effect and sends it on.  A red    *)
(* operator logs it for every checkpoint whose barrier on c is still to    *)
(* come (recording rule 2).                                                *)
(***************************************************************************)
Process(c) ==
    LET p == Dst(c)
        m == Head(buf[c])
    IN  /\ ~Blocked(c)
        /\ buf[c] # << >>
        /\ m.kind = "rec"
        /\ state' = [state EXCEPT ![p] = @ (+) SetToBag({Effect(m)})]
        /\ buf'   = Send([buf EXCEPT ![c] = Tail(@)], Outputs(p, m))
        /\ RecordingRule2::  recChan' = [n \in Ckpt |-> IF Logging(n, p, c)
                                                        THEN [recChan[n] EXCEPT ![c] = Append(@, m)]
                                                        ELSE recChan[n]]
        /\ RecordAct([kind |-> "process", p |-> p, c |-> c, m |-> m])
        /\ UNCHANGED <<pos, snapped, barrierIn, recPos, recState, restored, S0, Sf>>

(***************************************************************************)
(* "Barriers are injected periodically into all the sources": source s     *)
(* records its position for checkpoint n, at once, and sends the barrier   *)
(* on; n after n-1 at each source.  The first source to do so fixes the    *)
(* initial state of checkpoint n.                                          *)
(***************************************************************************)
InjectBarrier(s, n) ==
    /\ Live
    /\ s \notin snapped[n]
    /\ \A j \in Ckpt : j < n => s \in snapped[j]
    /\ TakeSnapshot(s, n, buf)
    /\ InitialState::  S0' = IF Started(n) THEN S0 ELSE S0 @@ (n :> AppState)
    /\ UNCHANGED <<pos, state, barrierIn, recChan, restored, Sf, whiteActs, redActs>>

(***************************************************************************)
(* Operator Dst(c) receives barrier n from input c ("upon event (receive | *)
(* input, (barrier))"): when aligned the barrier at the head of c, which   *)
(* then blocks; when unaligned the first barrier in c, overtaking the      *)
(* records ahead of it, which are stored with the checkpoint.  Once        *)
(* aligned, the operator snapshots and broadcasts the barrier.  When the   *)
(* last barrier of n is received, n is complete.                           *)
(***************************************************************************)
ReceiveBarrier(c) ==
    \E i \in BarrierPositions(c) :
        LET p     == Dst(c)
            n     == buf[c][i].ckpt
            ahead == SubSeq(buf[c], 1, i - 1)
            b     == [buf EXCEPT ![c] = RemoveAt(@, i)]
            I     == barrierIn[n] \cup {c}
        IN  /\ ~Blocked(c)
            /\ BlocksInput(i)::  barrierIn' = [barrierIn EXCEPT ![n] = I]
            /\ Overtakes(i)::    recChan' = [recChan EXCEPT ![n][c] = @ \o Overtaken(ahead)]
            /\ Snapshots(i)::    IF p \notin snapped[n] /\ Aligned(p, n, I)
                                 THEN TakeSnapshot(p, n, b)
                                 ELSE /\ buf' = b
                                      /\ UNCHANGED <<snapped, recState, recPos>>
            /\ FinalState(i)::   Sf' = IF snapped'[n] = Proc /\ I = Chan
                                       THEN Sf @@ (n :> AppState) ELSE Sf
            /\ UNCHANGED <<pos, state, restored, S0, whiteActs, redActs>>

(***************************************************************************)
(* The job fails once, after checkpoint n has completed, and restarts from *)
(* it: every operator's state, every source's position and the stored      *)
(* buffer contents are restored; the barriers in flight are lost with the  *)
(* rest.  The sources then replay their input from the recorded positions. *)
(***************************************************************************)
Restore(n) ==
    /\ Live
    /\ Complete(n)
    /\ pos'      = recPos[n]
    /\ state'    = recState[n]
    /\ buf'      = recChan[n]
    /\ restored' = n
    /\ UNCHANGED <<snapped, barrierIn, recPos, recState, recChan, S0, Sf, whiteActs, redActs>>

(***************************************************************************)
(* The next-state relation.  The models extend this module (the dataflow   *)
(* application is part of it, so there is no instance to hide the actions  *)
(* behind), and TLC names each transition after its action.                *)
(***************************************************************************)
Next ==
    \/ \E s \in Sources : Emit(s)
    \/ \E c \in Chan : Process(c)
    \/ \E s \in Sources : \E n \in Ckpt : InjectBarrier(s, n)
    \/ \E c \in Chan : ReceiveBarrier(c)
    \/ \E n \in Ckpt : Restore(n)

Spec == Init /\ [][Next]_vars

(***************************************************************************)
(* Fairness: every source eventually reads its input and injects every     *)
(* barrier, and every record and barrier eventually leaves its buffer      *)
(* (weak fairness is enough: a buffer blocked by alignment is unblocked    *)
(* once its operator has every barrier).  The failure is not fair: it may  *)
(* never happen.                                                           *)
(***************************************************************************)
Fairness ==
    /\ \A s \in Sources : WF_vars(Emit(s))
    /\ \A s \in Sources : \A n \in Ckpt : WF_vars(InjectBarrier(s, n))
    /\ \A c \in Chan : WF_vars(Process(c)) /\ WF_vars(ReceiveBarrier(c))

FairSpec == Spec /\ Fairness

-----------------------------------------------------------------------------
(***************************************************************************)
(*                                 INVARIANTS                              *)
(*                                                                         *)
(* The barrier invariant, EWD 864's red-letter invariant on a dataflow:    *)
(* while the job runs, each buffer from a machine that has snapshotted n   *)
(* whose barrier n has not been received holds precisely one barrier n.    *)
(***************************************************************************)
BarrierInvariant ==
    Live =>
        \A n \in Ckpt : \A c \in Chan :
            (Src(c) \in snapped[n] /\ c \notin barrierIn[n]) =>
                Cardinality({i \in 1..Len(buf[c]) : buf[c][i] = Barrier(n)}) = 1

(***************************************************************************)
(* Exactly once after restore: after the failure no effect is ever applied *)
(* twice, and once the input is drained (every source has read all of it,  *)
(* every buffer is empty) every hop of every record has had its effect     *)
(* once.                                                                   *)
(***************************************************************************)
Drained == /\ \A s \in Sources : pos[s] = Len(Input[s])
           /\ \A c \in Chan : Records(buf[c]) = << >>

ExactlyOnceAfterRestore ==
    restored # 0 =>
        /\ NoEffectTwice::
               \A p \in Ops : \A e \in BagToSet(state[p]) : CopiesIn(e, state[p]) = 1
        /\ EveryEffectOnceDrained::
               Drained => \A r \in RecordIds : \A h \in 1..Len(Path(r[1], r[2])) :
                              LET hop == Path(r[1], r[2])[h]
                              IN  CopiesIn(Effect(hop.m), state[Dst(hop.c)]) = 1

(***************************************************************************)
(* The recorded cut is consistent: for every hop of every record, the      *)
(* record is sent across the cut (read by the source before it recorded,   *)
(* or processed by the sending operator before it snapshotted) exactly as  *)
(* often as it is received in the cut (processed by the receiving operator *)
(* before it snapshotted) or stored in the buffer: no record received      *)
(* that was not sent, none sent that is lost, none counted twice.          *)
(***************************************************************************)
SentAcross(n, r, h) ==
    IF h = 1 THEN IF r[2] <= recPos[n][r[1]] THEN 1 ELSE 0
    ELSE LET prev == Path(r[1], r[2])[h - 1]
         IN  CopiesIn(Effect(prev.m), recState[n][Dst(prev.c)])

ConsistentCut ==
    \A n \in DOMAIN Sf : \A r \in RecordIds : \A h \in 1..Len(Path(r[1], r[2])) :
        LET hop == Path(r[1], r[2])[h]
            received == CopiesIn(Effect(hop.m), recState[n][Dst(hop.c)])
            kept     == recChan[n][hop.c]
            stored   == Cardinality({j \in 1..Len(kept) : kept[j] = hop.m})
        IN  SentAcross(n, r, h) = received + stored

(***************************************************************************)
(* Aligned checkpoints store no records of a forward buffer: on an acyclic *)
(* graph the channel state is empty, on a cyclic one only back edges have  *)
(* one (the logged records).                                               *)
(***************************************************************************)
NoForwardChannelState ==
    Mode = "aligned" => \A n \in Ckpt : \A c \in Forward : recChan[n][c] = << >>

(***************************************************************************)
(* Lemma 0 and Lemma 1 in EWD 864's sense, over the dataflow's actions.    *)
(***************************************************************************)
Lemma0 ==
    \A n \in DOMAIN Sf :
        LET r == Replay(S0[n], whiteActs[n])
        IN  /\ WhiteActionsPossible(n):: r.ok
            /\ EndsInSnapshotState(n)::  r.g = Snapshot(n)

Lemma1 ==
    \A n \in DOMAIN Sf :
        LET r == Replay(Snapshot(n), redActs[n])
        IN  /\ RedActionsPossible(n):: r.ok
            /\ EndsInFinalState(n)::   r.g = Sf[n]

(***************************************************************************)
(* Liveness: every checkpoint that starts completes, unless the failure    *)
(* aborts it; and the input is eventually drained.                         *)
(***************************************************************************)
CheckpointsComplete == \A n \in Ckpt : Started(n) ~> (Complete(n) \/ ~Live)

EventuallyDrained == <>Drained

-----------------------------------------------------------------------------
(***************************************************************************)
(* What a checkpoint costs, as state functions the comparison page         *)
(* (docs/variants.md) measures with TLC over every reachable state: the    *)
(* barriers sent for checkpoint n, the records stored with it, and the     *)
(* records held back right now in inputs blocked by alignment.             *)
(***************************************************************************)
ControlMessages(n) == Sum([p \in snapped[n] |-> Cardinality(Out(p))])
StoredMessages(n)  == Sum([c \in Chan |-> Len(recChan[n][c])])
Waiting            == Sum([c \in {d \in Chan : Blocked(d)} |-> Len(Records(buf[c]))])

-----------------------------------------------------------------------------
THEOREM Spec => [](TypeOK /\ BarrierInvariant /\ ConsistentCut /\ Lemma0 /\ Lemma1)
THEOREM Spec => [](ExactlyOnceAfterRestore)
THEOREM (Mode = "aligned") => (Spec => []NoForwardChannelState)
THEOREM FairSpec => CheckpointsComplete /\ EventuallyDrained
=============================================================================
