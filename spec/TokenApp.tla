------------------------------ MODULE TokenApp ------------------------------
(***************************************************************************)
(* A token-preserving network, EWD 864's second example of a stable        *)
(* predicate: "the number of tokens travelling the network equals 7". A    *)
(* machine's local state is the number of tokens it holds; it may pass any *)
(* positive number of them to a neighbour in one message, and a received   *)
(* message adds its tokens to the receiver's.  The model is finite without *)
(* a constraint on the application itself: every message carries at least  *)
(* one token, so at most Total messages are in flight.                     *)
(*                                                                         *)
(* Every application module offers the same interface, which the snapshot  *)
(* algorithm (ChandyLamport) is superposed on:                             *)
(*   LocalInit(p)             initial local state of machine p             *)
(*   Sendable(p, q, s)        messages p may send to q in local state s    *)
(*   AfterSend(p, q, m, s)    p's local state after sending m to q         *)
(*   Events(p, s)             internal events p may perform in state s     *)
(*   AfterEvent(p, e, s)      p's local state after internal event e       *)
(*   CanReceive(p, q, m, s)   p in state s may accept m from <<q, p>>      *)
(*   AfterReceive(p, q, m, s) p's local state after accepting m            *)
(*   MayStart(p, k, s)        p may start snapshot k in local state s      *)
(*   Stable(g)                a stable predicate of global app states      *)
(*   Inv(g)                   a predicate true of every reachable global   *)
(*                            app state, so of every correct snapshot      *)
(* A global app state g is a record [local |-> [Proc -> local state], buf  *)
(* |-> [Chan -> Seq(message)]]: the machines and the buffers without any   *)
(* red letters.  Messages are integers in every application.               *)
(*                                                                         *)
(* An application runs on a network: it declares the network's constants   *)
(* and uses Network's operators through a LOCAL INSTANCE, so that a module *)
(* can extend it and instantiate ChandyLamport (which extends Network)     *)
(* without defining Network's operators twice.                             *)
(***************************************************************************)
EXTENDS Integers, Sequences

CONSTANTS
    \* @type: Set(Str);
    Proc,   \* the machines (see Network)
    \* @type: Set(<<Str, Str>>);
    Chan,   \* the buffers (see Network)
    \* @type: Str -> Int;
    Tokens  \* Tokens[p]: the tokens machine p holds initially

LOCAL INSTANCE Network

Total == Sum(Tokens)  \* the number of tokens in the network

\* @typeAlias: local = Int;
TokenTypeAliases == TRUE

LocalStates == 0..Total  \* the type of a machine's local state

-----------------------------------------------------------------------------
\* @type: (Str) => Int;
LocalInit(p) == Tokens[p]
Sendable(p, q, s) == 1..s
AfterSend(p, q, m, s) == s - m
Events(p, s) == {}
AfterEvent(p, e, s) == s
CanReceive(p, q, m, s) == TRUE
AfterReceive(p, q, m, s) == s + m
MayStart(p, k, s) == TRUE

-----------------------------------------------------------------------------
RECURSIVE SeqSum(_)
SeqSum(s) == IF s = << >> THEN 0 ELSE Head(s) + SeqSum(Tail(s))  \* the sum of a sequence

(***************************************************************************)
(* The tokens in a global app state: held by machines plus travelling.     *)
(***************************************************************************)
TokensIn(g) == Sum(g.local) + Sum([c \in Chan |-> SeqSum(g.buf[c])])

Stable(g) == TokensIn(g) = Total   \* "the number of tokens travelling equals Total"
Inv(g)    == TokensIn(g) = Total   \* conserved: true of every reachable state
=============================================================================
