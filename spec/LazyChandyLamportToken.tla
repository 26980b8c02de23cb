----------------------- MODULE LazyChandyLamportToken ------------------------
(***************************************************************************)
(* Lazy red letters (LazyChandyLamport) superposed on the token-preserving *)
(* network of TokenApp, as ChandyLamportToken does for EWD 864's           *)
(* algorithm: the module instantiated with its application operators App*  *)
(* bound to TokenApp's.  The models MCLazyToken2, MCLazyComplete3,         *)
(* MCLazyLateRedLetterFailure and MCLazyUnpaidFailure extend this module   *)
(* and give the constants in their .cfg; a model that must fail overrides  *)
(* one step, naming the module it comes from                               *)
(* (MaySend <- [LazyChandyLamport] ...).                                   *)
(*                                                                         *)
(* The variables are LazyChandyLamport's, declared again as an instance    *)
(* requires.  Next and the specifications are restated outside the         *)
(* instance so that TLC names each transition after its action (see Next   *)
(* in ChandyLamport).                                                      *)
(***************************************************************************)
EXTENDS TokenApp

CONSTANTS
    \* @type: Set(Int);
    Snap,           \* the snapshot ids
    \* @type: Int -> Set(Str);
    Starters,       \* Starters[k]: the machines that may start snapshot k
    \* @type: Bool;
    Sequential,     \* TRUE: snapshot k may start only when every j < k has completed
    \* @type: Int;
    MaxAppActions   \* the bound on application actions while a snapshot runs

VARIABLES
    \* @type: Str -> Int;
    local,       \* local[p]: the application state of machine p
    \* @type: <<Str, Str>> -> Seq({kind: Str, snap: Int, val: Int});
    buf,         \* buf[c]: the contents of buffer c, oldest message first
    \* @type: Int -> Set(Str);
    red,         \* red[k]: the machines that are red in snapshot k
    \* @type: Int -> Set(<<Str, Str>>);
    redBuf,      \* redBuf[k]: the input buffers that are red in snapshot k
    \* @type: Int -> (Str -> Int);
    recMachine,  \* recMachine[k][p]: the state machine p recorded for k on turning red
    \* @type: Int -> (<<Str, Str>> -> Seq(Int));
    recBuf,      \* recBuf[k][c]: the messages recorded for buffer c in snapshot k
    \* @type: Int -> {local: Str -> Int, buf: <<Str, Str>> -> Seq(Int)};
    S0,          \* S0[k]: "the initial state (of the snapshot algorithm)"
    \* @type: Int -> {local: Str -> Int, buf: <<Str, Str>> -> Seq(Int)};
    Sf,          \* Sf[k]: "the final state (of the snapshot algorithm)"
    \* @type: Int -> Seq({kind: Str, p: Str, q: Str, val: Int});
    whiteActs,   \* whiteActs[k]: application actions of white machines since S0[k]
    \* @type: Int -> Seq({kind: Str, p: Str, q: Str, val: Int});
    redActs,     \* redActs[k]: application actions of red machines since S0[k]
    \* @type: Int -> Set(<<Str, Str>>);
    owed         \* owed[k]: the output buffers of red machines still owed a red letter of k

INSTANCE LazyChandyLamport WITH
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
(* EWD 864's fairness of receipt and the fairness of paying owed red       *)
(* letters.                                                                *)
(***************************************************************************)
Next ==
    \/ \E c \in Chan : SendApp(c)
    \/ \E p \in Proc : InternalEvent(p)
    \/ \E c \in Chan : ReceiveApp(c)
    \/ \E c \in Chan : SendRedLetter(c)
    \/ \E c \in Chan : ReceiveRedLetter(c)
    \/ \E p \in Proc : \E k \in Snap : StartSnapshot(p, k)

Spec     == Init /\ [][Next]_vars
FairSpec == Spec /\ Fairness

THEOREM FairSpec => SnapshotsComplete
=============================================================================
