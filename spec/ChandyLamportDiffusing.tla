----------------------- MODULE ChandyLamportDiffusing -----------------------
(***************************************************************************)
(* The snapshot algorithm superposed on the diffusing computation of       *)
(* DiffusingApp: ChandyLamport instantiated with its application operators *)
(* App* bound to DiffusingApp's.  A model (MCDiffusing,                    *)
(* MCDiffusingComplete3) extends this module and gives the constants in    *)
(* its .cfg.                                                               *)
(*                                                                         *)
(* A model that must fail also overrides one of ChandyLamport's steps in   *)
(* its .cfg, and names the module, as in                                   *)
(*       Enqueue <- [ChandyLamport] LateEnqueue                            *)
(* since the actions use ChandyLamport's own definition of the step: a     *)
(* plain override would replace only this module's instance of it.         *)
(*                                                                         *)
(* The variables are ChandyLamport's, declared again as an instance        *)
(* requires; so are its constants Snap, Starters, Sequential and           *)
(* MaxAppActions (DiffusingApp declares the network's and its own).  Next  *)
(* and the specifications are restated here, outside the instance, so that *)
(* TLC names each transition after its action (see Next in ChandyLamport). *)
(***************************************************************************)
EXTENDS DiffusingApp

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
    \* @type: Str -> {active: Bool, sent: Int, recvd: Int};
    local,       \* local[p]: the application state of machine p
    \* @type: <<Str, Str>> -> Seq({kind: Str, snap: Int, val: Int});
    buf,         \* buf[c]: the contents of buffer c, oldest message first
    \* @type: Int -> Set(Str);
    red,         \* red[k]: the machines that are red in snapshot k
    \* @type: Int -> Set(<<Str, Str>>);
    redBuf,      \* redBuf[k]: the input buffers that are red in snapshot k
    \* @type: Int -> (Str -> {active: Bool, sent: Int, recvd: Int});
    recMachine,  \* recMachine[k][p]: the state machine p recorded for k on turning red
    \* @type: Int -> (<<Str, Str>> -> Seq(Int));
    recBuf,      \* recBuf[k][c]: the messages recorded for buffer c in snapshot k
    \* @type: Int -> {local: Str -> {active: Bool, sent: Int, recvd: Int}, buf: <<Str, Str>> -> Seq(Int)};
    S0,          \* S0[k]: "the initial state (of the snapshot algorithm)"
    \* @type: Int -> {local: Str -> {active: Bool, sent: Int, recvd: Int}, buf: <<Str, Str>> -> Seq(Int)};
    Sf,          \* Sf[k]: "the final state (of the snapshot algorithm)"
    \* @type: Int -> Seq({kind: Str, p: Str, q: Str, val: Int});
    whiteActs,   \* whiteActs[k]: application actions of white machines since S0[k]
    \* @type: Int -> Seq({kind: Str, p: Str, q: Str, val: Int});
    redActs      \* redActs[k]: application actions of red machines since S0[k]

INSTANCE ChandyLamport WITH
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
(* ChandyLamport's next-state relation and its specifications: Spec, with  *)
(* weak fairness of receipt (FairSpec), and with progress of every machine *)
(* too (ProgressSpec).                                                     *)
(***************************************************************************)
Next ==
    \/ \E c \in Chan : SendApp(c)
    \/ \E p \in Proc : InternalEvent(p)
    \/ \E c \in Chan : ReceiveApp(c)
    \/ \E c \in Chan : ReceiveRedLetter(c)
    \/ \E p \in Proc : \E k \in Snap : StartSnapshot(p, k)

Spec         == Init /\ [][Next]_vars
FairSpec     == Spec /\ Fairness
ProgressSpec == FairSpec /\ Progress

(***************************************************************************)
(* A machine of the diffusing computation can always accept a message      *)
(* (CanReceive is TRUE), so weak fairness of receipt alone lets every      *)
(* started snapshot complete.                                              *)
(***************************************************************************)
THEOREM FairSpec => SnapshotsComplete
=============================================================================
