------------------------ MODULE ObserverSnapshotToken ------------------------
(***************************************************************************)
(* The observer formulation (ObserverSnapshot) superposed on the           *)
(* token-preserving network of TokenApp, as ChandyLamportToken does for    *)
(* EWD 864's algorithm: the module instantiated with its application       *)
(* operators App* bound to TokenApp's.  The models MCObserverToken2,       *)
(* MCObserverComplete3 and MCObserverEarlyFailure extend this module and   *)
(* give the constants in their .cfg; the model that must fail overrides    *)
(* the completion rule (CompletionRule <- [ObserverSnapshot] ...).         *)
(*                                                                         *)
(* The variables are ObserverSnapshot's, declared again as an instance     *)
(* requires.  Next and the specifications are restated outside the         *)
(* instance so that TLC names each transition after its action (see Next   *)
(* in ChandyLamport).                                                      *)
(***************************************************************************)
EXTENDS TokenApp

CONSTANTS
    \* @type: Set(Int);
    Snap,       \* the snapshot ids
    \* @type: Int -> Str;
    Observer,   \* Observer[k]: the process that takes snapshot k
    \* @type: Int;
    MaxSends    \* the bound on application messages sent over each buffer in a run

VARIABLES
    \* @type: Str -> Int;
    local,       \* local[p]: the application state of machine p
    \* @type: <<Str, Str>> -> ({val: Int, toks: Set(Int)} -> Int);
    buf,         \* buf[c]: the bag of messages in buffer c (not FIFO)
    \* @type: Int -> Set(Str);
    red,         \* red[k]: the machines that hold the token of snapshot k
    \* @type: Int -> Set(Str);
    requests,    \* requests[k]: the machines k's request has not reached yet
    \* @type: <<Str, Str>> -> Int;
    nSent,       \* nSent[c]: application messages Src(c) has sent over c
    \* @type: <<Str, Str>> -> Int;
    nRecv,       \* nRecv[c]: application messages Dst(c) has received from c
    \* @type: Int -> (Str -> Int);
    recMachine,  \* recMachine[k][p]: the saved state p sent the observer of k
    \* @type: Int -> (<<Str, Str>> -> Int);
    repSent,     \* repSent[k][c]: nSent[c] as Src(c) reported it with its saved state
    \* @type: Int -> (<<Str, Str>> -> Int);
    repRecv,     \* repRecv[k][c]: nRecv[c] as Dst(c) reported it with its saved state
    \* @type: Int -> (<<Str, Str>> -> (Int -> Int));
    recBuf,      \* recBuf[k][c]: the bag of message values forwarded to the observer from c
    \* @type: Int -> {local: Str -> Int, buf: <<Str, Str>> -> Seq(Int)};
    S0,          \* S0[k]: the global state just before the observer saved its state
    \* @type: Int -> {local: Str -> Int, buf: <<Str, Str>> -> Seq(Int)};
    Sf,          \* Sf[k]: the global state when the observer declared k complete
    \* @type: Int -> Seq({kind: Str, p: Str, q: Str, val: Int});
    whiteActs,   \* whiteActs[k]: application actions of white machines since S0[k]
    \* @type: Int -> Seq({kind: Str, p: Str, q: Str, val: Int});
    redActs      \* redActs[k]: application actions of red machines since S0[k]

INSTANCE ObserverSnapshot WITH
    AppLocalStates  <- LocalStates,
    AppLocalInit    <- LocalInit,
    AppSendable     <- Sendable,
    AppAfterSend    <- AfterSend,
    AppEvents       <- Events,
    AppAfterEvent   <- AfterEvent,
    AppCanReceive   <- CanReceive,
    AppAfterReceive <- AfterReceive,
    AppMayStart     <- MayStart,
    AppStable       <- Stable,
    AppInv          <- Inv

-----------------------------------------------------------------------------
(***************************************************************************)
(* The next-state relation and the specifications: Spec, and FairSpec with *)
(* every message and request delivered and completion declared.            *)
(***************************************************************************)
Next ==
    \/ \E c \in Chan : SendApp(c)
    \/ \E p \in Proc : InternalEvent(p)
    \/ \E c \in Chan : ReceiveApp(c)
    \/ \E k \in Snap : StartSnapshot(k)
    \/ \E p \in Proc : \E k \in Snap : ReceiveRequest(p, k)
    \/ \E k \in Snap : DeclareComplete(k)

Spec     == Init /\ [][Next]_vars
FairSpec == Spec /\ Fairness

THEOREM FairSpec => SnapshotsComplete
=============================================================================
