"""What one induction run is about: a topology, a number of machines and snapshots,
an application, and the algorithm's variant (the correct one or a bug class).

Everything else is left open on purpose, so that one proof covers every choice of
it: any machine may start any snapshot (``Starters[k] = Proc``; fewer starters
only remove behaviours), snapshots may run concurrently (``Sequential = FALSE``;
the sequential runs are among them), buffers are unbounded, application values
and local states are unbounded integers, and the run has no bound on its length.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

from redletter.errors import InputError
from redletter.python_model.topology import Topology, complete, directed_ring, ring

__all__ = ["APPS", "TOPOLOGIES", "VARIANTS", "Case", "Variant", "variant_named"]

Chan = tuple[str, str]

TOPOLOGIES: Mapping[str, str] = {
    "ring": "p1 <-> p2 <-> ... <-> pn <-> p1: a buffer each way between neighbours",
    "directed-ring": "p1 -> p2 -> ... -> pn -> p1: one buffer to the next machine",
    "complete": "a buffer between every ordered pair of machines",
}
"""The topologies, as :mod:`redletter.python_model.topology` builds them."""

APPS: Mapping[str, str] = {
    "generic": (
        "any application: local states and message values are integers, and "
        "Sendable, AfterSend, Events, AfterEvent, CanReceive, AfterReceive, MayStart "
        "are uninterpreted functions of them (TokenApp, DiffusingApp and HistoryApp "
        "are instances)"
    ),
    "token": "TokenApp: a machine holds tokens, sends 1..s of them, receives any message",
}
"""The applications the snapshot algorithm is superposed on in the proof."""


@dataclass(frozen=True)
class Variant:
    """A variant of the algorithm: the correct one or one bug class.

    ``override`` names the spec's overridable step and the mutant definition that a
    ``spec/MC*Failure.cfg`` model binds (``Recording <- NoRecording``), or says in
    words what changes when the spec has no such model yet.
    """

    name: str
    override: str
    bug: str
    breaks: str  #: what the induction shows it breaks
    needs_snapshots: int = 1  #: the fewest snapshots for the bug to show


VARIANTS: Mapping[str, Variant] = {
    v.name: v
    for v in (
        Variant("correct", "", "none: the algorithm as EWD 864 states it", "nothing"),
        Variant(
            "no-channel-recording",
            "Recording <- NoRecording (MCNoChannelRecordingFailure)",
            "in-flight messages are not recorded",
            "Lemma 0 (the shadow of Lemma 0 loses a message)",
        ),
        Variant(
            "late-red-letter",
            "Enqueue <- LateEnqueue (MCLateRedLetterFailure)",
            "a red letter is sent after an application message on the same buffer",
            "Lemma 0 (a message sent while red lands before the red letter)",
        ),
        Variant(
            "stop-at-first-red-letter",
            "Recording <- StopAtFirst (MCStopAtFirstRedLetterFailure)",
            "all recording stops at the first red letter received",
            "Lemma 0 (messages still in flight on white buffers are not recorded)",
        ),
        Variant(
            "non-fifo",
            "Deliverable <- AnyPosition (MCNonFifoFailure)",
            "buffers are not FIFO: any message may be received",
            "Lemma 0 and the red-letter traffic",
        ),
        Variant(
            "mixed-snapshots",
            "TurnsRed <- TurnsRedInAll (MCMixedSnapshotsFailure)",
            "a red letter of k turns its buffer red in every snapshot its receiver is red in",
            "the red-letter traffic of the other snapshot",
            needs_snapshots=2,
        ),
        Variant(
            "never-forward",
            "RedLettersOut <- StarterOnly (MCNeverForwardFailure)",
            "red letters are never forwarded: only the first machine to turn red sends them",
            "the red-letter traffic (RedLetterInvariant)",
        ),
        Variant(
            "swallowing-recording",
            "ReceiveApp: a message that a red machine records is not delivered to the "
            "application (local state unchanged)",
            "recording consumes the message: the snapshot is right, the system is wrong",
            "Lemma 1 only (the shadow of Lemma 1 delivers the message, reality does not)",
        ),
        Variant(
            "newest-first-recording",
            "ReceiveApp: recBuf' = <<m>> \\o recBuf (the recorded stream newest first)",
            "a recorded stream is kept newest first",
            "Lemma 0 (the recorded stream is not the shadow's buffer)",
        ),
        Variant(
            "resent-red-letters",
            "ReceiveRedLetter: a red machine that receives a red letter sends red "
            "letters again over every output buffer",
            "red letters are sent again",
            "the red-letter traffic (a buffer carries two red letters of one snapshot)",
        ),
    )
}
"""Every variant the induction encodes, by name."""

_ALIASES: Mapping[str, str] = {
    "no-recording": "no-channel-recording",
    "stop-at-first": "stop-at-first-red-letter",
}


def variant_named(name: str) -> Variant:
    """The variant called ``name`` (also the symbolic engine's ``--mutant`` names)."""
    key = _ALIASES.get(name, name)
    if key not in VARIANTS:
        raise InputError(
            f"unknown variant {name!r}; expected one of {', '.join(VARIANTS)}",
            code="RL-INPUT-USAGE",
        )
    return VARIANTS[key]


@dataclass(frozen=True)
class Case:
    """One induction problem: ``topology`` over machines p1..pN, snapshots 1..S."""

    topology: str
    machines: int
    snapshots: int
    app: str = "generic"
    variant: str = "correct"
    #: the buffers of a ``digraph`` case (any directed graph, from :meth:`digraph`)
    edges: tuple[Chan, ...] = ()

    @classmethod
    def digraph(
        cls, machines: int, edges: tuple[Chan, ...], snapshots: int, variant: str = "correct"
    ) -> Case:
        """A case over any directed graph of machines ``p1..pN`` (no bound on N or on
        the snapshots): the every-N proof replays its counterexamples here, on the
        finite network z3 chose."""
        return cls("digraph", machines, snapshots, "generic", variant, tuple(sorted(edges)))

    def __post_init__(self) -> None:
        def bad(what: str) -> InputError:
            return InputError(what, code="RL-INPUT-USAGE")

        if self.topology == "digraph":
            names = {f"p{i + 1}" for i in range(self.machines)}
            if (
                self.machines < 1
                or self.snapshots < 1
                or any(a not in names or b not in names or a == b for a, b in self.edges)
            ):
                raise bad(f"a digraph case needs machines p1..pN and buffers between them: {self}")
            v = variant_named(self.variant)
            if v.name != self.variant:
                object.__setattr__(self, "variant", v.name)
            return
        if self.topology not in TOPOLOGIES:
            raise bad(
                f"--topology: unknown topology {self.topology!r}; expected one of "
                + ", ".join(TOPOLOGIES)
            )
        if not 2 <= self.machines <= 8:
            raise bad(f"--machines: expected 2 to 8 machines, got {self.machines}")
        if not 1 <= self.snapshots <= 3:
            raise bad(f"--snapshots: expected 1 to 3 snapshots, got {self.snapshots}")
        if self.app not in APPS:
            raise bad(f"--app: unknown application {self.app!r}; expected one of {', '.join(APPS)}")
        v = variant_named(self.variant)
        if v.name != self.variant:
            object.__setattr__(self, "variant", v.name)

    @cached_property
    def procs(self) -> tuple[str, ...]:
        return tuple(self._topology.procs)

    @cached_property
    def chans(self) -> tuple[Chan, ...]:
        return tuple(self._topology.chans)

    @property
    def snaps(self) -> tuple[int, ...]:
        """Snapshot ids 1..S."""
        return tuple(range(1, self.snapshots + 1))

    @cached_property
    def _topology(self) -> Topology:
        if self.topology == "digraph":
            procs = tuple(f"p{i + 1}" for i in range(self.machines))
            return Topology(procs, self.edges, f"digraph {list(self.edges)}")
        make = {"ring": ring, "directed-ring": directed_ring, "complete": complete}
        return make[self.topology](self.machines)

    def src(self, c: int) -> int:
        """The index of buffer c's source machine."""
        return self.procs.index(self.chans[c][0])

    def dst(self, c: int) -> int:
        """The index of buffer c's destination machine."""
        return self.procs.index(self.chans[c][1])

    def ins(self, p: int) -> tuple[int, ...]:
        """The indices of In(p)."""
        return tuple(c for c in range(len(self.chans)) if self.dst(c) == p)

    def outs(self, p: int) -> tuple[int, ...]:
        """The indices of Out(p)."""
        return tuple(c for c in range(len(self.chans)) if self.src(c) == p)

    def chan_name(self, c: int) -> str:
        a, b = self.chans[c]
        return f"{a}→{b}"

    @property
    def name(self) -> str:
        """``ring-3m-2s`` (plus ``/token`` and ``/<variant>`` when not the defaults)."""
        out = f"{self.topology}-{self.machines}m-{self.snapshots}s"
        if self.app != "generic":
            out += f"/{self.app}"
        if self.variant != "correct":
            out += f"/{self.variant}"
        return out

    def describe(self) -> str:
        return (
            f"{self.topology} of {self.machines} machines ({len(self.chans)} buffers), "
            f"{self.snapshots} snapshot{'s' * (self.snapshots > 1)}, "
            f"application {self.app}, variant {self.variant}"
        )
