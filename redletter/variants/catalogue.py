"""The snapshot algorithms of the seeds, as the comparison page describes them.

One :class:`Variant` per algorithm: where it comes from, what it records, what it
assumes of channels and topology, what it costs, which properties hold, its models
in ``spec/manifest.json`` and the models that must fail, each with the story its
counterexample tells.  One :class:`Family` per spec module family: the cost state
functions the probe measures (:mod:`redletter.variants.measure`) and the variables
a shortened counterexample shows.

This is the written half of ``docs/variants.md``; everything with a number in it
comes from measurements (TLC's, kept in ``docs/variants.json``) or from the manifest.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

__all__ = [
    "FAMILIES",
    "GROUPS",
    "VARIANTS",
    "CostGroup",
    "Failure",
    "Family",
    "Metric",
    "Property",
    "Variant",
    "cost_models",
    "failure_models",
]


@dataclass(frozen=True)
class Metric:
    """A cost state function the probe measures: per completed snapshot (over every
    ``k \\in DOMAIN Sf``) or per state."""

    name: str  #: the TLA+ operator, ``ControlMessages`` or ``ControlMessages(k)``
    per_snapshot: bool
    title: str  #: its column in the cost tables


CONTROL = Metric("ControlMessages", True, "messages the snapshot sends")
STORED = Metric("StoredMessages", True, "messages stored as buffer state")
WAITING = Metric("Waiting", False, "application work held back at once")


@dataclass(frozen=True)
class Family:
    """A family of spec modules: how to measure its costs and show its traces."""

    key: str
    metrics: tuple[Metric, ...]
    #: TLA+ definitions the probe adds when the spec does not define its metrics
    probe_definitions: tuple[str, ...]
    #: the variables a shortened counterexample shows (the history variables are hidden)
    shown: tuple[str, ...]


FAMILIES: Final[Mapping[str, Family]] = MappingProxyType(
    {
        f.key: f
        for f in (
            Family(
                "chandy-lamport",
                (CONTROL, STORED),
                (
                    "\\* EWD 864's costs, defined here: ChandyLamport.tla stays as it is.",
                    "ControlMessages(k) == Sum([p \\in red[k] |-> Cardinality(Out(p))])",
                    "StoredMessages(k) == Sum([c \\in Chan |-> Len(recBuf[k][c])])",
                ),
                ("local", "buf", "red", "redBuf", "recMachine", "recBuf"),
            ),
            Family(
                "lazy",
                (CONTROL, STORED, WAITING),
                (),
                ("local", "buf", "red", "owed", "redBuf", "recMachine", "recBuf"),
            ),
            Family(
                "observer",
                (CONTROL, STORED),
                (),
                (
                    "local",
                    "buf",
                    "red",
                    "requests",
                    "nSent",
                    "nRecv",
                    "recMachine",
                    "repSent",
                    "repRecv",
                    "recBuf",
                ),
            ),
            Family(
                "barrier",
                (CONTROL, STORED, WAITING),
                (),
                (
                    "pos",
                    "state",
                    "buf",
                    "snapped",
                    "barrierIn",
                    "recPos",
                    "recState",
                    "recChan",
                    "restored",
                ),
            ),
        )
    }
)


@dataclass(frozen=True)
class Property:
    """A named property of the spec and what it says."""

    name: str
    meaning: str


@dataclass(frozen=True)
class Failure:
    """A model that must fail, and what its counterexample shows."""

    model: str
    explanation: str


@dataclass(frozen=True)
class Variant:
    """One algorithm of the seeds."""

    key: str
    title: str
    source: str
    family: str
    modules: tuple[str, ...]
    records: str
    channels: str
    topology: str
    messages: str
    waits: str
    holds: tuple[Property, ...]
    models: tuple[str, ...]
    failures: tuple[Failure, ...]
    costs_on: tuple[str, ...]
    glance_records: str
    glance_channels: str
    glance_messages: str
    glance_waits: str
    glance_holds: str


def failure_models(v: Variant) -> tuple[str, ...]:
    """The models of ``v`` that must fail, whose counterexamples the page shows."""
    return tuple(f.model for f in v.failures)


def cost_models(v: Variant) -> tuple[str, ...]:
    """The models ``v``'s costs are measured on."""
    return v.costs_on


_LEMMAS = (
    Property(
        "Lemma0",
        "the actions of white machines, replayed from the initial state, are each"
        " possible in turn and end in the snapshot state (EWD 864's Lemma 0)",
    ),
    Property(
        "Lemma1",
        "the actions of red machines, replayed from the snapshot state, are each"
        " possible in turn and end in the final state (EWD 864's Lemma 1)",
    ),
)
_STABLE = Property(
    "StableLemma0, StableLemma1, StableDetection, SnapshotSatisfiesAppInv",
    "the lemmas' corollaries for the application's stable predicate and invariant",
)

VARIANTS: Final[tuple[Variant, ...]] = (
    Variant(
        key="chandy-lamport",
        title="Chandy–Lamport, as EWD 864 tells it (the baseline)",
        source="EWD 864 (`seeds/000`)",
        family="chandy-lamport",
        modules=("ChandyLamport.tla",),
        records=(
            "Each machine records its state when it turns red (rule 1); each red machine"
            " records, for each input buffer, the messages it receives from it while that"
            " buffer is white (rule 2): the messages in transit across the cut."
        ),
        channels="FIFO buffers (sequences), every message eventually received.",
        topology="Strongly connected (`Network.tla` assumes it), at least two machines.",
        messages=(
            "One red letter per buffer and snapshot, all sent in the atomic step in which"
            " the machine turns red."
        ),
        waits="Nothing: no step of the algorithm disables an application action.",
        holds=(
            Property(
                "RedLetterInvariant",
                "each buffer from a red machine to a white one holds precisely one red letter",
            ),
            *_LEMMAS,
            _STABLE,
            Property("ShadowLemma0", "Dijkstra's shadow network for Lemma 0 follows reality"),
            Property("SnapshotsComplete", "every snapshot that starts completes (liveness)"),
        ),
        models=("MCToken2",),
        failures=(),
        costs_on=("MCToken2",),
        glance_records="machine states + messages in transit",
        glance_channels="FIFO",
        glance_messages="1 red letter per buffer, atomically",
        glance_waits="nothing",
        glance_holds="both lemmas, liveness under fairness of receipt",
    ),
    Variant(
        key="lazy",
        title="Lazy red letters",
        source="`seeds/002`, the pseudo-code",
        family="lazy",
        modules=("LazyChandyLamport.tla", "LazyChandyLamportToken.tla"),
        records="As EWD 864: machine states on turning red, messages in transit (rule 2).",
        channels="FIFO buffers, every message eventually received.",
        topology="Strongly connected (`Network.tla`).",
        messages=(
            "One red letter per buffer and snapshot, as in EWD 864, but each in a step of"
            " its own: \u201csend one Marker along c after p records its state and before p"
            " sends further messages along c\u201d.  A machine that turns red owes each"
            " output buffer a red letter and pays it at any time up to its next send there."
        ),
        waits=(
            "An application send over a buffer that owes a red letter waits until the red"
            " letter is paid (`MaySend`); the measure is the number of buffers on which the"
            " application could send but must first pay."
        ),
        holds=(
            Property(
                "RedLetterInvariant",
                "each buffer from a red machine to a white one holds precisely one red"
                " letter, or holds none and is owed one",
            ),
            *_LEMMAS,
            _STABLE,
            Property(
                "ShadowLemma0",
                "Dijkstra's shadow network for Lemma 0, unchanged: it follows reality",
            ),
            Property(
                "SnapshotsComplete",
                "every snapshot that starts completes, under fairness of receipt and weak"
                " fairness of paying owed red letters (`RedLetterFairness`)",
            ),
        ),
        models=("MCLazyToken2", "MCLazyComplete3"),
        failures=(
            Failure(
                "MCLazyLateRedLetterFailure",
                "The deadline dropped: p1 starts the snapshot and owes p2 a red letter, but"
                " sends it an application message first.  p2 receives the message while"
                " still white, so the tokens are in p1's recorded state (p1 recorded before"
                " sending) and again in p2's: the white machines' actions replayed from the"
                " initial state do not end in the snapshot state.",
            ),
            Failure(
                "MCLazyUnpaidFailure",
                "No fairness for paying: both machines start the snapshot (either may), so"
                " each owes the other a red letter.  Neither need send again (the"
                " application sends when it likes), and nothing else forces a debt to be"
                " paid: both buffers stay white for ever and the snapshot never completes,"
                " although every message is received.  Fairness of receipt is EWD 864's;"
                " the lazy rule needs its own for a buffer its machine never sends on"
                " again.",
            ),
        ),
        costs_on=("MCLazyToken2",),
        glance_records="as EWD 864",
        glance_channels="FIFO",
        glance_messages=(
            "1 red letter per buffer, each when the machine chooses, before its next send"
        ),
        glance_waits="sends over a buffer owed a red letter",
        glance_holds="both lemmas; liveness needs fairness of paying too",
    ),
    Variant(
        key="observer",
        title="The observer, with the token piggybacked",
        source="`seeds/003`, its Algorithm section",
        family="observer",
        modules=("ObserverSnapshot.tla", "ObserverSnapshotToken.tla"),
        records=(
            "The observer collects every process's saved state (sent to it when the"
            " process first sees the token) and every message without the token that"
            " reaches a process holding it (forwarded as in transit); with the saved"
            " states come the process's counts of the messages it sent over each output"
            " buffer and received from each input buffer."
        ),
        channels=(
            "Not FIFO: buffers are bags and any message may be received next; every"
            " message eventually received.  The observer's own channels (requests out,"
            " saved states and forwards in) are modelled apart from the application's."
        ),
        topology=(
            "The application's network as in EWD 864 (`Network.tla`), with the observer"
            " able to reach every process and be reached by it."
        ),
        messages=(
            "No marker: the token rides on every application message sent after the"
            " sender saved its state.  The observer sends a request to every other"
            " process; each sends back its saved state and counts; each message in"
            " transit is forwarded to it once."
        ),
        waits="Nothing waits; the observer itself waits to declare completion.",
        holds=(
            Property(
                "CountsInvariant",
                "once both ends of a buffer are red, the white messages still in it plus"
                " those forwarded are exactly as many as the two reported counts say were"
                " in transit",
            ),
            Property(
                "RedMessagesFromRedMachines",
                "a message bearing a token was sent by a machine holding it",
            ),
            *_LEMMAS,
            _STABLE,
            Property(
                "CompleteIsFinal",
                "nothing is forwarded to the observer after it declared the snapshot"
                " complete (an action property)",
            ),
            Property(
                "SnapshotsComplete",
                "every snapshot that starts is declared complete (liveness), under fairness"
                " of receipt, of requests and of the observer",
            ),
        ),
        models=("MCObserverToken2", "MCObserverRing3"),
        failures=(
            Failure(
                "MCObserverEarlyFailure",
                "Without counts the observer declares completion once every saved state is"
                " in, which is all the text of `seeds/003` gives it.  Here p1 sends a"
                " message to p2, then starts the snapshot; p2 saves its state on the"
                " request before the message arrives, and the observer declares the"
                " snapshot complete.  The message is still in transit and will be forwarded"
                " later: the snapshot misses it, and its tokens do not add up.  The counts"
                " (p1 reports 1 sent on p1 \u2192 p2, p2 reports 0 received) make the"
                " observer wait for that forward.",
            ),
        ),
        costs_on=("MCObserverToken2",),
        glance_records="saved states + forwarded messages + counts, at the observer",
        glance_channels="any order (bags)",
        glance_messages=(
            "no marker; N\u22121 requests, N\u22121 saved states, 1 forward per message"
            " in transit; a token on every message"
        ),
        glance_waits="nothing",
        glance_holds="both lemmas with non-FIFO buffers, only with message counts",
    ),
    Variant(
        key="aligned",
        title="Asynchronous Barrier Snapshots, aligned",
        source="`seeds/002`, Flink's ABS",
        family="barrier",
        modules=("BarrierSnapshot.tla", "Dataflow.tla"),
        records=(
            "Each source's position in its input when the barrier is injected, each"
            " operator's state when it has a barrier on every forward input.  On an"
            " acyclic graph no buffer is recorded; on a cyclic one, the records an"
            " operator receives over a back edge between its snapshot and that back"
            " edge's barrier (the logged records)."
        ),
        channels="FIFO buffers, every record eventually processed.",
        topology=(
            "A dataflow graph (`Dataflow.tla`): sources without inputs, an acyclic forward"
            " graph, and back edges that close cycles; not strongly connected."
        ),
        messages=("One barrier per buffer and checkpoint, injected at every source."),
        waits=(
            "Alignment: an input whose barrier has arrived is blocked until every forward"
            " input of the operator has its barrier; the measure is the number of records"
            " queued in blocked inputs at one moment."
        ),
        holds=(
            Property(
                "BarrierInvariant",
                "each buffer from a machine that has snapshotted, whose barrier has not been"
                " received, holds precisely one barrier (EWD 864's red-letter invariant)",
            ),
            Property(
                "ExactlyOnceAfterRestore",
                "after the job fails and restores a completed checkpoint, replaying the"
                " sources from their recorded positions, no effect is ever applied twice"
                " and, once the input is drained, every record's effect is there once",
            ),
            Property(
                "ConsistentCut",
                "every record is sent across the recorded cut exactly as often as it is"
                " received in it or stored in its buffer",
            ),
            Property(
                "NoForwardChannelState",
                "no forward buffer has recorded records: empty channel state on an acyclic"
                " graph, only back edges on a cyclic one",
            ),
            *_LEMMAS,
            Property(
                "CheckpointsComplete, EventuallyDrained",
                "every checkpoint that starts completes unless the failure aborts it, and"
                " the input is drained (liveness)",
            ),
        ),
        models=(
            "MCBarrierAligned",
            "MCBarrierTwoCheckpoints",
            "MCBarrierCyclic",
            "MCBarrierShuffle",
        ),
        failures=(
            Failure(
                "MCBarrierCyclicNoLogFailure",
                "The cyclic extension without its log.  Both records go once round the"
                " loop s \u2192 h \u2192 t \u2192 h, and t has sent them back to h for"
                " their second round when s injects the barrier.  The head h snapshots,"
                " then takes the two records from the back edge before t's barrier comes"
                " round.  Without the log their second round is in no recorded state (h"
                " applied it after its snapshot, t after the barrier), in no recorded"
                " buffer, and in no replay (s read both records before recording its"
                " position): after the restore it never happens.",
            ),
        ),
        costs_on=("MCBarrierAligned", "MCBarrierCyclic"),
        glance_records="source positions + operator states; back-edge logs on cycles",
        glance_channels="FIFO",
        glance_messages="1 barrier per buffer",
        glance_waits="records behind a blocked input (alignment)",
        glance_holds="exactly once after restore, consistent cut, both lemmas",
    ),
    Variant(
        key="at-least-once",
        title="Barrier snapshots with alignment skipped (at least once)",
        source="`seeds/002`, the last paragraph",
        family="barrier",
        modules=("BarrierSnapshot.tla", "with `Blocked` overridden to block nothing"),
        records=(
            "As aligned, but an operator keeps processing every input until its last"
            " barrier arrives, and then snapshots."
        ),
        channels="FIFO buffers.",
        topology="A dataflow graph (`Dataflow.tla`).",
        messages="One barrier per buffer and checkpoint, as aligned.",
        waits="Nothing waits: that is the point of skipping alignment.",
        holds=(
            Property("BarrierInvariant", "as aligned"),
            Property("NoForwardChannelState", "no buffer is recorded"),
            Property(
                "ExactlyOnceAfterRestore, ConsistentCut, Lemma0",
                "violated: see the counterexamples",
            ),
        ),
        models=(),
        failures=(
            Failure(
                "MCBarrierAtLeastOnceFailure",
                "\u201cthe operator also processes elements that belong to checkpoint n+1"
                " before the state snapshot for checkpoint n was taken\u201d: s1 injects"
                " barrier 1, then reads its first record; k receives the barrier from s1"
                " but does not block that input, processes the record, and snapshots only"
                " when s2's barrier arrives.  The checkpoint holds the record in k's state"
                " and position 0 for s1.  After the failure s1 replays from position 0 and"
                " k applies the record a second time: \u201cthese records will occur as"
                " duplicates\u201d.",
            ),
            Failure(
                "MCBarrierAtLeastOnceCutFailure",
                "The same run, judged at the moment the checkpoint completes, before any"
                " failure: k's recorded state holds a record that s1 read after recording"
                " its position, a record received in the cut that was never sent in it.",
            ),
        ),
        costs_on=("MCBarrierAtLeastOnceFailure",),
        glance_records="as aligned, but states include records after the barrier",
        glance_channels="FIFO",
        glance_messages="1 barrier per buffer",
        glance_waits="nothing",
        glance_holds="fails: duplicates after restore, inconsistent cut",
    ),
    Variant(
        key="unaligned",
        title="Unaligned checkpoints",
        source="Flink's unaligned checkpoints (the issue's variant 4)",
        family="barrier",
        modules=("BarrierSnapshot.tla", 'with `Mode = "unaligned"`'),
        records=(
            "Each source's position and each operator's state at the first barrier the"
            " operator sees; the records a barrier overtakes in a buffer, and the records"
            " an operator processes from an input before that input's barrier, are stored"
            " with the checkpoint as the buffer's state."
        ),
        channels=(
            "FIFO for records; a barrier may be taken from the middle of its buffer,"
            " overtaking the records ahead of it."
        ),
        topology="A dataflow graph (`Dataflow.tla`); cycles need no special case.",
        messages="One barrier per buffer and checkpoint, as aligned.",
        waits="Nothing waits; the checkpoint stores buffered records instead.",
        holds=(
            Property("BarrierInvariant", "as aligned"),
            Property("ExactlyOnceAfterRestore", "as aligned"),
            Property("ConsistentCut", "as aligned"),
            *_LEMMAS,
            Property("CheckpointsComplete, EventuallyDrained", "as aligned (liveness)"),
        ),
        models=(
            "MCBarrierUnaligned",
            "MCBarrierTwoCheckpointsUnaligned",
            "MCBarrierShuffleUnaligned",
        ),
        failures=(
            Failure(
                "MCBarrierUnalignedLostFailure",
                "Overtaken records not stored: both sources read their records, then inject"
                " their barriers; k takes each barrier from behind the records, snapshots"
                " an empty state, and the checkpoint completes.  The overtaken records are"
                " in no state, no stored buffer and no replay (the sources recorded their"
                " positions after reading them): restored from that checkpoint, the job"
                " loses them all.",
            ),
        ),
        costs_on=("MCBarrierUnaligned",),
        glance_records="positions + states at the first barrier + overtaken and in-flight records",
        glance_channels="FIFO; barriers overtake records",
        glance_messages="1 barrier per buffer",
        glance_waits="nothing",
        glance_holds="exactly once after restore, consistent cut, both lemmas",
    ),
)


@dataclass(frozen=True)
class CostGroup:
    """Variants whose costs are compared on the same model constants."""

    title: str
    text: str
    models: tuple[str, ...]


GROUPS: Final[tuple[CostGroup, ...]] = (
    CostGroup(
        "On EWD 864's network: two machines, two tokens",
        "The constants of `MCToken2`: machines p1 and p2 connected both ways, p1 holding"
        " both tokens, one snapshot.  EWD 864 and the lazy rule run under the same bound"
        " (at most 3 application actions while the snapshot runs); the observer's counts"
        " remember the whole run, so its model bounds the run instead (at most 2 messages"
        " per buffer), and its buffers are bags.",
        ("MCToken2", "MCLazyToken2", "MCObserverToken2"),
    ),
    CostGroup(
        "On a dataflow: two sources into one keyed counter",
        "The constants of `MCBarrierAligned`: s1 reads two records, s2 one, both send to"
        " the counter k, one checkpoint, one failure after it at most.  The three modes run"
        " on the same graph and input; alignment skipped is measured on its must-fail model"
        " with the cost probe as the only invariant.  The cyclic graph (`MCBarrierCyclic`:"
        " s \u2192 h \u2192 t \u2192 h, two records, one extra round) is a row of its own.",
        (
            "MCBarrierAligned",
            "MCBarrierUnaligned",
            "MCBarrierAtLeastOnceFailure",
            "MCBarrierCyclic",
        ),
    ),
)
