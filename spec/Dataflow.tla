------------------------------ MODULE Dataflow -------------------------------
(***************************************************************************)
(* The topology of a streaming dataflow (seeds/002: Flink's Source,        *)
(* Transformation and Sink operators): the machines and buffers of         *)
(* Channels, where the Sources have no input buffers and every other       *)
(* machine -- an operator -- has at least one.  The graph of the forward   *)
(* buffers is acyclic, so records flow from the sources down to the sinks; *)
(* a cyclic dataflow (an iteration) is this graph plus BackEdges, buffers  *)
(* that lead back up the forward graph and close the cycles.               *)
(*                                                                         *)
(* EWD 864's strong connectivity does not hold here, and is not needed:    *)
(* the snapshot is started at every source, and every operator is reached  *)
(* from one (an operator has a forward input, and following inputs back    *)
(* up an acyclic graph ends at a source).                                  *)
(***************************************************************************)
EXTENDS Channels, Integers, FiniteSets

CONSTANTS
    \* @type: Set(Str);
    Sources,    \* the machines that read the input: they have no input buffers
    \* @type: Set(<<Str, Str>>);
    BackEdges   \* the buffers that close cycles (empty for an acyclic dataflow)

Ops     == Proc \ Sources       \* the operators: every machine that is not a source
Forward == Chan \ BackEdges     \* the forward buffers

ForwardIn(p) == In(p) \ BackEdges   \* the forward input buffers of machine p

-----------------------------------------------------------------------------
ASSUME DataflowAssumption ==
    /\ Sources \subseteq Proc /\ Sources # {}
    /\ BackEdges \subseteq Chan
    /\ SourcesHaveNoInputs::      \A s \in Sources : In(s) = {}
    /\ OperatorsHaveAnInput::     \A p \in Ops : ForwardIn(p) # {}
    /\ ForwardGraphIsAcyclic::    \A c \in Forward : Src(c) \notin ReachAlong({Dst(c)}, Forward)
    /\ BackEdgesCloseCycles::     \A c \in BackEdges : Src(c) \in ReachAlong({Dst(c)}, Forward)
=============================================================================
