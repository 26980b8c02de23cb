"""The harness is the network: FIFO queues per channel, and what every step showed.

Nodes never talk to each other: each step reply lists what the node put on
the wire, the harness appends it to its own FIFO queue of each channel, and it
decides which channel's head to deliver next.  So the harness knows every
message in flight without trusting the implementation.

Everything here is immutable: :class:`Network` values are replaced, never
changed, and :class:`Observation` is the record of one step as the judges see
it (the seam for the model-comparing judges: compare an observation with the
model's step).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from redletter.conformance.protocol import (
    AppMsg,
    Barrier,
    Channel,
    CloseChannel,
    JsonValue,
    Marker,
    Recorded,
    RecordMessage,
    RecordState,
    SavedState,
    Sent,
    SnapshotRequest,
    StreamRecord,
    WireMsg,
)
from redletter.errors import Exit, InputError, RedletterError, escape_terminal


class ChannelViolation(RedletterError):
    """A node put a message on a channel that is not one of its output channels."""

    code = "RL-NODE-CHANNEL"
    exit_code = Exit.FAIL


def show_channel(c: Channel) -> str:
    """``p1 -> p2``."""
    return f"{c[0]} -> {c[1]}"


def show_msg(m: WireMsg) -> str:
    """``app 3`` / ``marker 1`` (the observer algorithm's: ``app 3 [tokens 1]``,
    ``request 1``, ``saved_state 1``, ``forward 1 (app 3 from p2)``; the barrier
    algorithm's ``barrier 1``, ``record s1#2 round 1``)."""
    if isinstance(m, AppMsg):
        return f"app {m.payload}" + (f" [tokens {_ids(m.tokens)}]" if m.tokens else "")
    if isinstance(m, Marker):
        return f"marker {m.snapshot}"
    # --- barrier ---
    if isinstance(m, Barrier):
        return f"barrier {m.checkpoint}"
    if isinstance(m, StreamRecord):
        return f"record {m.source}#{m.index}" + (f" round {m.round}" if m.round else "")
    # --- observer ---
    if isinstance(m, SnapshotRequest):
        return f"request {m.snapshot}"
    if isinstance(m, SavedState):
        return f"saved_state {m.snapshot}"
    return f"forward {m.snapshot} (app {m.payload} from {m.from_})"


def _ids(xs: Iterable[int]) -> str:
    return ", ".join(str(x) for x in xs)


@dataclass(frozen=True)
class Topology:
    """The machines and the directed channels between them (as in Network.tla)."""

    nodes: tuple[str, ...]
    channels: tuple[Channel, ...]

    def __post_init__(self) -> None:
        problems: list[str] = []
        if len(set(self.nodes)) != len(self.nodes) or len(self.nodes) < 2:
            problems.append("it needs at least two distinct nodes")
        for c in self.channels:
            if c[0] not in self.nodes or c[1] not in self.nodes:
                problems.append(f"channel {show_channel(c)} names an unknown node")
            elif c[0] == c[1]:
                problems.append(f"channel {show_channel(c)} goes from a node to itself")
        if len(set(self.channels)) != len(self.channels):
            problems.append("a channel is listed twice")
        if not problems:
            for p in self.nodes:
                if self.reach(p) != frozenset(self.nodes):
                    problems.append(f"it is not strongly connected (from {p})")
                    break
        if problems:
            raise InputError("bad topology: " + "; ".join(problems), code="RL-INPUT-TOPOLOGY")

    def reach(self, p: str) -> frozenset[str]:
        """The nodes reachable from p along channels."""
        seen = {p}
        todo = [p]
        while todo:
            x = todo.pop()
            for c in self.channels:
                if c[0] == x and c[1] not in seen:
                    seen.add(c[1])
                    todo.append(c[1])
        return frozenset(seen)

    def in_channels(self, p: str) -> tuple[Channel, ...]:
        """The input channels [q, p] of p, in topology order."""
        return tuple(c for c in self.channels if c[1] == p)

    def out_channels(self, p: str) -> tuple[Channel, ...]:
        """The output channels [p, q] of p, in topology order."""
        return tuple(c for c in self.channels if c[0] == p)

    @staticmethod
    def complete(nodes: Sequence[str]) -> Topology:
        """Every ordered pair of distinct nodes."""
        return Topology(tuple(nodes), tuple((a, b) for a in nodes for b in nodes if a != b))

    @staticmethod
    def ring(nodes: Sequence[str]) -> Topology:
        """A bidirectional ring."""
        n = len(nodes)
        pairs: list[Channel] = []
        for i in range(n):
            a, b = nodes[i], nodes[(i + 1) % n]
            for c in ((a, b), (b, a)):
                if c not in pairs:
                    pairs.append(c)
        return Topology(tuple(nodes), tuple(pairs))

    @staticmethod
    def directed_ring(nodes: Sequence[str]) -> Topology:
        """A one-way ring p1 -> p2 -> ... -> p1."""
        n = len(nodes)
        return Topology(tuple(nodes), tuple((nodes[i], nodes[(i + 1) % n]) for i in range(n)))


@dataclass(frozen=True)
class Network:
    """The contents of every channel, oldest message first."""

    topology: Topology
    queues: Mapping[Channel, tuple[WireMsg, ...]]

    @staticmethod
    def empty(topology: Topology) -> Network:
        """Every channel empty (the spec's Init)."""
        return Network(topology, {c: () for c in topology.channels})

    def head(self, c: Channel) -> WireMsg | None:
        """The oldest message of channel c, or None when it is empty."""
        q = self.queues[c]
        return q[0] if q else None

    def deliverable(self) -> tuple[Channel, ...]:
        """The channels with a message to deliver, in topology order."""
        return tuple(c for c in self.topology.channels if self.queues[c])

    def in_flight(self) -> tuple[tuple[Channel, WireMsg], ...]:
        """Every message in flight, channel by channel, oldest first."""
        return tuple((c, m) for c in self.topology.channels for m in self.queues[c])

    def app_contents(self, c: Channel) -> tuple[int, ...]:
        """The app payloads in channel c, markers left out (the spec's AppValues)."""
        return tuple(m.payload for m in self.queues[c] if isinstance(m, AppMsg))

    def enqueue(self, sender: str, sent: Iterable[Sent]) -> Network:
        """The network after ``sender`` put ``sent`` on the wire, in order.

        Raises :class:`ChannelViolation` if a message goes on a channel that is
        not an output channel of the sender.
        """
        queues = dict(self.queues)
        for s in sent:
            if s.channel[0] != sender or s.channel not in queues:
                outs = ", ".join(show_channel(c) for c in self.topology.out_channels(sender))
                # The channel and message are the node's words: quoted on one line.
                said = f"{show_msg(s.msg)} on channel {show_channel(s.channel)}"
                raise ChannelViolation(
                    f"node {sender} put {escape_terminal(said, newlines=True)}, "
                    f"which is not one of its output channels ({outs})"
                )
            queues[s.channel] = (*queues[s.channel], s.msg)
        return Network(self.topology, queues)

    def pop(self, c: Channel) -> tuple[WireMsg, Network]:
        """The head of channel c and the network without it (c must not be empty)."""
        q = self.queues[c]
        if not q:
            raise InputError(
                f"channel {show_channel(c)} is empty: nothing to deliver",
                code="RL-INPUT-SCHEDULE",
            )
        queues = dict(self.queues)
        queues[c] = q[1:]
        return q[0], Network(self.topology, queues)


@dataclass(frozen=True)
class Observation:
    """Everything observable about one step, in the spec's vocabulary.

    ``action``/``params`` name the step as the spec does (``SendApp``
    ``{"c": [p, q], "m": 3}``, ...); ``node`` is the machine that acted;
    ``delivered`` the message it received (for a receive); ``new_state`` the
    app state the harness gave it (None when unchanged); ``sent``,
    ``recorded``, ``completed`` what it reported; ``network`` the channels
    after the step.
    """

    index: int
    action: str
    params: Mapping[str, object]
    node: str
    delivered: WireMsg | None
    new_state: JsonValue
    sent: tuple[Sent, ...]
    recorded: tuple[Recorded, ...]
    completed: tuple[int, ...]
    network: Network
    #: why the harness did not perform the step ("" when it did): a variant's judge skips
    #: a step of the trace that the node's own choices left disabled in the model
    skipped: str = ""

    def describe(self) -> str:
        """One line for humans: ``#3 ReceiveRedLetter p2 -> p1 (marker 1): sent ...``."""
        where = (
            show_channel((str(self.params["c"][0]), str(self.params["c"][1])))  # type: ignore[index]
            if "c" in self.params
            else str(self.params.get("p", self.node))
        )
        parts = [f"#{self.index} {self.action} {where}"]
        if self.skipped:
            return " ".join(parts) + f": skipped ({self.skipped})"
        if self.delivered is not None:
            parts.append(f"({show_msg(self.delivered)})")
        effects = []
        if self.sent:
            effects.append(
                "sent "
                + ", ".join(f"{show_msg(s.msg)} on {show_channel(s.channel)}" for s in self.sent)
            )
        if self.recorded:
            effects.append("recorded " + ", ".join(describe_recorded(r) for r in self.recorded))
        if self.completed:
            effects.append("completed " + ", ".join(str(k) for k in self.completed))
        return " ".join(parts) + (": " + "; ".join(effects) if effects else "")


def describe_recorded(r: Recorded) -> str:
    """``state of snapshot 1 = 3`` and the like."""
    if isinstance(r, RecordState):
        return f"state for snapshot {r.snapshot}"
    if isinstance(r, RecordMessage):
        return f"app {r.payload} on {show_channel(r.channel)} for snapshot {r.snapshot}"
    if isinstance(r, CloseChannel):
        return f"closed {show_channel(r.channel)} for snapshot {r.snapshot}"
    # --- barrier ---
    return f"stored {show_msg(r.record)} of {show_channel(r.channel)} for checkpoint {r.snapshot}"


def receive_action(msg: WireMsg) -> str:
    """The spec action that receives ``msg``: ReceiveApp or ReceiveRedLetter."""
    return "ReceiveRedLetter" if isinstance(msg, Marker) else "ReceiveApp"
