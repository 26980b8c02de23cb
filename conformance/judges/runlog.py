"""The model-free log judge: EWD 864's rules and lemmas on a program's own run.

A program that schedules itself writes one event log per process (the format:
:mod:`redletter.conformance.eventlog`).  This judge needs no model: the run's
processes, its directed channels, the initial local states, the payloads
(opaque JSON values), the snapshot ids (any string or integer) and the starters
are all read from the logs.  The logs are read once, as a stream
(:class:`~redletter.conformance.logcheck.LogMerge`: one order consistent with
every process's order, the vector clocks and FIFO channels); memory holds what
is in flight and the snapshots still open, never the logs.  On that run:

1. **The run itself.** A channel that delivers out of order is a fail naming
   both lines; logs that contradict themselves are an input error.
2. **EWD 864's rules, per snapshot,** on the run's real order (so an ``await``
   between recording and sending is fine where the algorithm allows it): upon
   turning red, each machine records its own state, the state it has then; the
   receipt of a red letter turns a white machine red before it takes another
   message from that buffer; a red machine sends one red letter over each of its
   output buffers, after recording and before any other message on that buffer;
   each red machine records for each input buffer the stream of messages it
   receives from it as long as the buffer is white: none missed, none twice, none
   after the buffer turned red, none its recorded state already holds, and no red
   letter recorded as a message.
3. **A message in two halves** (a send whose state change and write are two
   events, a receipt applied to the state later: ``apply`` events): what EWD 864
   needs is that the recorded states and the channel streams agree on which side
   of the cut each message lies.  A send whose state change is in the sender's
   recorded state must be written before the red letter on its channel, and one
   written before it must be in that state (``straddling-send``,
   ``red-letter-order``); a message taken in before the receiver recorded and
   applied after must be recorded in the channel's stream (``missing-record``).
4. **Lemma 0 and Lemma 1 concretely,** as Dijkstra's shadow networks replayed on
   the run's own events (a message counts where its state changes): from the
   state just before the first machine turned red, the white machines' actions
   must be possible and end in the recorded snapshot state; from the snapshot
   state the red machines' actions must be possible and end in the final state
   (when the last red letter is received).
5. **Completion**, by the one cut rule both judges apply
   (:func:`~redletter.conformance.logcheck.settle`): a snapshot complete before
   the logs stop is judged whatever came after; one left open is a liveness
   failure when the logs hold the whole run, and not judged (unknown) when a log
   stops early (a crash, a cut); a run without a snapshot is unknown.

A snapshot is complete when every process recorded its state, every channel's
red letter arrived, and every process logged its part ``complete`` (or its log
holds its whole run): then its records are final, and it is judged and
forgotten.  Every finding is listed (the first thousand of each kind); the
verdict is the one :class:`~redletter.conformance.verdict.Verdict` every judge
returns.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, TypeAlias

from redletter.conformance import protocol as p
from redletter.conformance.eventlog import LogEvent, SnapshotId, show, show_chan, show_snapshot
from redletter.conformance.judges.log import SnapshotCheck, Validation
from redletter.conformance.logcheck import (
    CODE_CONFLICT,
    MAX_LOGS_TOTAL,
    LogMerge,
    Matched,
    require_events,
    settle,
)
from redletter.conformance.verdict import Divergence
from redletter.errors import InputError
from redletter.untrusted import show_id

__all__ = [
    "MAX_FINDINGS",
    "RULES",
    "RULE_NAMES",
    "Invariant",
    "conserved_sum",
    "validate_run",
    "validate_run_files",
]

Json: TypeAlias = p.JsonValue
Chan: TypeAlias = tuple[str, str]

#: The most findings kept of each kind (the others are counted).
MAX_FINDINGS: Final = 1000

#: EWD 864's words for each rule this judge checks (the name a finding cites).
RULES: Final = {
    "record-state": "EWD 864: “upon turning red, each machine records its own state”",
    "turn-red": (
        "EWD 864: on “the receipt of a red letter”, “if the receiving machine was white, it "
        "sends one red letter over each of its output buffers and becomes red” (here: it "
        "records before it takes another message from that buffer)"
    ),
    "starter": (
        "EWD 864: a machine turns red when it receives a red letter, or as the starter, "
        "“by acting as if it has received a red letter (from “nowhere”)”"
    ),
    "red-letter-first": (
        "EWD 864: “each buffer from a red machine to a white one contains precisely 1 red "
        "letter”: a red machine sends its red letter over each output buffer before any "
        "other message on it"
    ),
    "one-red-letter": (
        "EWD 864: “if the receiving machine was already red, it remains so and it sends no "
        "further red letters”"
    ),
    "record-channel": (
        "EWD 864: “each red machine records for each of its input buffers the stream of "
        "messages that it receives from that buffer as long as the latter is white”"
    ),
    "fifo": "EWD 864's buffers are first-in first-out",
    "complete": (
        "EWD 864: “when the last red letter is received, the only still white buffer becomes "
        "red”: a machine's part of a snapshot is complete when every input buffer is red"
    ),
    "liveness": (
        "EWD 864: “on account of the fairness of that white machine, the latter will receive "
        "the red letter and turn red itself”: every started snapshot completes"
    ),
    "Lemma0": (
        "Lemma 0 (replaying the white machines' actions from the initial state of the "
        "snapshot is possible and ends in the snapshot state)"
    ),
    "Lemma1": (
        "Lemma 1 (replaying the red machines' actions from the snapshot state is possible "
        "and ends in the final state)"
    ),
}


#: The name of every rule a finding of this judge cites (docs/instrument.md's table
#: of rules spells them): a finding's line starts with it.  The ``liveness-`` rules
#: are findings only where the logs hold the whole run.
RULE_NAMES: Final = (
    "not-fifo",
    "record-without-marker",
    "record-state-twice",
    "wrong-state",
    "late-record",
    "red-letter-order",
    "red-letter-while-white",
    "straddling-send",
    "extra-red-letter",
    "record-without-message",
    "marker-recorded",
    "recorded-twice",
    "record-after-close",
    "record-before-red",
    "wrong-record",
    "missing-record",
    "wrong-channel",
    "report-contradicts-record",
    "early-complete",
    "after-complete",
    "Lemma0",
    "Lemma1",
    "invariant",
    "liveness",
    "liveness-never-red",
    "liveness-missing-red-letter",
    "liveness-open-channel",
)


def _canon(v: Json) -> str:
    return json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _same(a: object, b: object) -> bool:
    """Whether two JSON values are the same value: as their canonical texts compare
    (``1`` is not ``1.0`` nor ``true``), without writing them."""
    t = type(a)
    if t is not type(b):
        return False
    if t is dict:
        # (typed by annotation, not cast(): this runs for every message of a Lemma
        # window, and cast is a call)
        d: dict[str, object] = a  # type: ignore[assignment]
        e: dict[str, object] = b  # type: ignore[assignment]
        if d.keys() != e.keys():
            return False
        for k, v in d.items():  # (a loop: faster than all() of a generator)
            w = e[k]
            tv = type(v)
            if tv is not type(w):
                return False
            if tv is dict or tv is list:
                if not _same(v, w):
                    return False
            elif v != w:
                return False
        return True
    if t is list:
        x: list[object] = a  # type: ignore[assignment]
        y: list[object] = b  # type: ignore[assignment]
        return len(x) == len(y) and all(map(_same, x, y))
    return a == b


def _same_list(a: Sequence[object], b: Sequence[object]) -> bool:
    return len(a) == len(b) and all(map(_same, a, b))


def _list(vs: Iterable[Json]) -> str:
    return "[" + ", ".join(show(v) for v in vs) + "]"


def _conflict(ev: LogEvent, msg: str) -> InputError:
    return InputError(msg, code=CODE_CONFLICT, path=ev.path, line=ev.line)


_UNKNOWN: Final = object()


# -- the application's invariant ----------------------------------------------------

Invariant: TypeAlias = Callable[
    [dict[str, Json], dict[Chan, list[Json]], dict[str, Json]], str | None
]
"""An application invariant: (recorded states, recorded channels, initial states)
-> None when it holds, else what is wrong in words.  One made by
:func:`conserved_sum` also tells the judge how much a state or a payload counts
(its ``amount``), so that a finding can point at where the run's own total first
changed."""


def conserved_sum(field: str | None) -> Invariant:
    """The invariant "the recorded states and channels hold the initial total":
    a value counts as itself when a number, as its ``field`` when an object
    (``field`` None: numbers only)."""

    def amount(v: Json) -> float:
        if isinstance(v, bool):
            return 0
        if isinstance(v, int | float):
            return v
        if field is not None and isinstance(v, dict):
            x = v.get(field)
            if isinstance(x, int | float) and not isinstance(x, bool):
                return x
        return 0

    def check(
        states: dict[str, Json], channels: dict[Chan, list[Json]], init: dict[str, Json]
    ) -> str | None:
        if not init:
            return "no init event gives the initial states, so the total is not known"
        want = sum(amount(v) for v in init.values())
        got = sum(amount(v) for v in states.values()) + sum(
            amount(m) for ms in channels.values() for m in ms
        )
        if got == want:
            return None
        held = sum(amount(v) for v in states.values())
        return (
            f"the snapshot holds a total of {got:g} (states {held:g}, channels "
            f"{got - held:g}); the run started with {want:g}"
        )

    check.amount = amount  # type: ignore[attr-defined]
    return check


# -- messages -------------------------------------------------------------------------


class _Msg:
    """One application message, from its sender's state change to its receiver's.

    ``write``: the send event (where its place on the channel is fixed); ``sstate``:
    the sender's state change (the send itself when atomic, its apply otherwise);
    ``recv``: the receipt; ``rstate``: the receiver's state change (the receipt
    when atomic, its apply otherwise).  Positions are in the merged order."""

    __slots__ = ("chan", "recv", "rpos", "rspos", "rstate", "spos", "sstate", "value", "wpos",
                 "write")  # fmt: skip

    def __init__(
        self, chan: Chan, value: Json, sstate: LogEvent | None = None, spos: int = -1
    ) -> None:
        self.chan, self.value = chan, value
        self.write: LogEvent | None = None
        self.wpos = -1
        self.sstate, self.spos = sstate, spos
        self.recv: LogEvent | None = None
        self.rpos = -1
        self.rstate: LogEvent | None = None
        self.rspos = -1


# -- findings -------------------------------------------------------------------------


def _div(pos: int, kind: str, ev: LogEvent, text: str, k: SnapshotId | None = None) -> Divergence:
    """A finding at ``ev``; ``why`` names the snapshot it is about (if one)."""
    why = "" if k is None else f"snapshot {show_snapshot(k)}"
    return Divergence(
        kind, ev.node, ev.describe(), text, why=why, step=pos + 1, path=ev.path, line=ev.line
    )


class _Findings:
    """Findings as they are found: the first :data:`MAX_FINDINGS` of each kind kept,
    the others counted."""

    def __init__(self) -> None:
        self.kept: list[Divergence] = []
        self.count: Counter[str] = Counter()

    def add(self, d: Divergence) -> None:
        assert d.kind in RULE_NAMES, d.kind  # every rule is named in the docs' table
        self.count[d.kind] += 1
        if self.count[d.kind] <= MAX_FINDINGS:
            self.kept.append(d)

    def dropped(self) -> dict[str, int]:
        return {k: n - MAX_FINDINGS for k, n in self.count.items() if n > MAX_FINDINGS}


# -- one snapshot ---------------------------------------------------------------------


@dataclass
class _Snap:
    """What the judge holds of one open snapshot ``k``."""

    k: SnapshotId
    first: int  #: the position of its first event
    first_ev: LogEvent  #: its first event
    rec: dict[str, LogEvent] = field(default_factory=dict)
    rec_pos: dict[str, int] = field(default_factory=dict)
    start: dict[str, LogEvent] = field(default_factory=dict)
    start_pos: dict[str, int] = field(default_factory=dict)
    first_in: dict[str, LogEvent] = field(default_factory=dict)  #: node -> first red letter in
    marker_in: dict[Chan, LogEvent] = field(default_factory=dict)
    marker_in_pos: dict[Chan, int] = field(default_factory=dict)
    marker_out: dict[Chan, LogEvent] = field(default_factory=dict)
    marker_out_pos: dict[Chan, int] = field(default_factory=dict)
    records: dict[Chan, list[LogEvent]] = field(default_factory=dict)
    linked: dict[Chan, dict[int, tuple[LogEvent, LogEvent]]] = field(default_factory=dict)
    due: dict[Chan, list[LogEvent]] = field(default_factory=dict)  #: must be recorded
    complete: dict[str, LogEvent] = field(default_factory=dict)
    once: set[tuple[str, object]] = field(default_factory=set)  #: (rule, where) reported
    #: red-letter-order findings waiting for the red letter and the receipt they name
    overtaken: list[tuple[int, LogEvent, _Msg, Chan, str]] = field(default_factory=list)
    #: Lemma 0 and 1: the window from the first machine turning red to the last red letter
    s0: int = -1
    sf: int = -1
    white: defaultdict[Chan, deque[_Msg]] = field(default_factory=lambda: defaultdict(deque))
    red: defaultdict[Chan, list[tuple[int, str, Json, LogEvent | None]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    final: dict[Chan, list[Json]] = field(default_factory=dict)
    lemma0: Divergence | None = None
    local: dict[str, tuple[object, LogEvent]] = field(default_factory=dict)  #: state before rec


@dataclass
class _Done:
    """What is kept of a snapshot judged and forgotten."""

    last: LogEvent | None  #: the event that completed it


class _Judge:
    def __init__(self, merge: LogMerge, invariant: Invariant | None) -> None:
        self.merge = merge
        self.invariant = invariant
        self.amount: Callable[[Json], float] | None = getattr(invariant, "amount", None)
        self.found = _Findings()
        self.pending: list[Divergence] = []
        self.snaps: dict[SnapshotId, _Snap] = {}
        self.done: dict[SnapshotId, _Done] = {}
        self.checks: dict[SnapshotId, SnapshotCheck] = {}
        self.order: list[SnapshotId] = []
        self.opened = 0
        self.not_judged = 0
        self.init: dict[str, Json] = {}
        self.state: dict[str, object] = {}
        self.state_at: dict[str, LogEvent] = {}
        self.chans: dict[Chan, None] = {}
        self.undeclared = False
        self.nodes: dict[str, None] = {}
        self.by_write: dict[int, _Msg] = {}  #: id of the send event -> its message
        self.in_channel: dict[Chan, dict[int, _Msg]] = {}  #: written, state not yet taken in
        self.pend_write: dict[str, dict[int, _Msg]] = {}  #: applied, not yet written
        self.pend_state: dict[str, dict[int, _Msg]] = {}  #: written, state change later
        self.held: dict[str, dict[int, _Msg]] = {}  #: taken in, applied later
        self.last_recv: dict[Chan, LogEvent] = {}
        self.recent: dict[Chan, deque[tuple[LogEvent, _Msg | None]]] = {}
        self.pos = 0
        self.cur: LogEvent | None = None
        self.failed: Counter[SnapshotId] = Counter()  #: findings per snapshot
        # the running total of the application's invariant (states + messages)
        self.node_amount: dict[str, float | None] = {}
        self.unknown = 0  #: nodes whose amount is not known
        self.states_sum = 0.0
        self.flight_sum = 0.0
        self.want: float | None = None
        self.moved: tuple[LogEvent, int, float, float] | None = None  #: where it first changed

    # -- helpers --------------------------------------------------------------------------

    def fail(self, kind: str, ev: LogEvent, text: str, k: SnapshotId | None, pos: int) -> None:
        self.found.add(_div(pos, kind, ev, text, k))
        if k is not None:
            self.failed[k] += 1

    def once(self, sn: _Snap, rule: str, key: object) -> bool:
        """True the first time ``rule`` is reported for ``key`` in ``sn``."""
        if (rule, key) in sn.once:
            return False
        sn.once.add((rule, key))
        return True

    def inputs(self, n: str) -> list[Chan]:
        return [c for c in self.chans if c[1] == n]

    def add_chan(self, c: Chan) -> None:
        if c not in self.chans:
            self.chans[c] = None
            self.in_channel.setdefault(c, {})
            for sn in self.snaps.values():
                if sn.s0 >= 0 and sn.sf < 0:
                    sn.white.setdefault(c, deque())
                    sn.red.setdefault(c, [])

    def snap(self, k: SnapshotId, ev: LogEvent, pos: int) -> _Snap | None:
        """Snapshot ``k``'s record (made at its first event); None when ``k`` was judged
        and forgotten already (the event comes after it completed everywhere)."""
        sn = self.snaps.get(k)
        if sn is not None:
            return sn
        gone = self.done.get(k)
        if gone is not None:
            self.fail(
                "after-complete",
                ev,
                f"{show_id(ev.node)} logs this for snapshot {show_snapshot(k)} after it completed "
                f"at every process (the last part at {gone.last.where if gone.last else '?'}): a "
                "snapshot's events "
                "come before its completion",
                k,
                pos,
            )
            return None
        sn = self.snaps[k] = _Snap(k, pos, ev)
        self.order.append(k)
        self.opened += 1
        return sn

    def begin_window(self, sn: _Snap, pos: int) -> None:
        """The first machine turns red in ``sn``: the Lemma 0 replay starts from what
        is in the channels now."""
        if sn.s0 >= 0:
            return
        sn.s0 = pos
        for c in self.chans:
            sn.white[c] = deque(self.in_channel.get(c, {}).values())
            sn.red[c] = []

    # -- the events -----------------------------------------------------------------------

    def run(self, merge: LogMerge) -> None:
        """Take every event of the run, in order (:meth:`take`).

        Run once per event of logs of millions of events, so the most common ones
        (an app message's send or receive, one atomic step, of a known node on a
        known channel, received in order) are taken inline here, each step as
        :meth:`write`, :meth:`receipt`, :meth:`set_state`, :meth:`remember` and
        :meth:`taken_in` take it; every other event, and each finding, goes to
        those methods."""
        if self.amount is not None:  # the running total: every event counted there
            for taken in merge:
                self.take(*taken)
            return
        take, nodes, chans, snaps = self.take, self.nodes, self.chans, self.snaps
        state, state_at, by_write, in_channel = (
            self.state,
            self.state_at,
            self.by_write,
            self.in_channel,
        )
        last_recv, recent, unknown = self.last_recv, self.recent, _UNKNOWN
        pos = self.pos
        ev: LogEvent | None = self.cur
        for pos, ev, m in merge:
            e = ev.event
            if (
                (e == "send" or e == "receive")
                and (c := ev.channel) in chans
                and (node := ev.node) in nodes
                and (v := ev.msg) is not None
                and v[0] == "app"
                and ev.of is None
                and not ev.split
            ):
                if e == "send":  # write(), atomic
                    msg = _Msg(c, v[1], ev, pos)
                    state[node] = ev.state if ev.has_state else unknown
                    state_at[node] = ev
                    msg.write, msg.wpos = ev, pos
                    by_write[id(ev)] = msg
                    in_channel[c][id(msg)] = msg
                    for sn in snaps.values():
                        rec = sn.rec.get(node)
                        if (rec is None) == (c in sn.marker_out):  # a finding, maybe
                            self.sides_at_write(sn, msg, ev, pos)
                        if sn.s0 >= 0 and sn.sf < 0:
                            if rec is None:
                                sn.white[c].append(msg)
                            else:
                                sn.red[c].append((pos, "send", msg.value, None))
                    continue
                assert m is not None
                if m.overtaken is None:  # receipt(), in order and atomic
                    s = m.send
                    msg_ = by_write.pop(id(s), None) if s is not None else None
                    if msg_ is None:  # its send is not in the logs (the run is cut)
                        msg_ = _Msg(c, v[1])
                    msg = msg_
                    msg.recv, msg.rpos = ev, pos
                    last_recv[c] = ev
                    state[node] = ev.state if ev.has_state else unknown
                    state_at[node] = ev
                    q = recent.get(c)
                    if q is None:
                        q = recent[c] = deque()
                    q.append((ev, msg))
                    if len(q) > 32:
                        self.trim(c, q)
                    msg.rstate, msg.rspos = ev, pos
                    in_channel[c].pop(id(msg), None)
                    for sn in snaps.values():
                        # (receipt's and taken_in's steps for a snapshot: they touch
                        # nothing of each other's, nor of what set_state and
                        # remember do, so one pass takes both)
                        rec = sn.rec.get(node)
                        fi = sn.first_in.get(node)
                        if fi is not None and rec is None and fi.channel == c:
                            self.late_take(sn, ev, pos)
                        if rec is not None and c not in sn.marker_in:
                            sn.due.setdefault(c, []).append(ev)
                        if sn.s0 >= 0 and sn.sf < 0:
                            self.shadow_take(sn, msg, ev, pos, rec is None)
                    continue
            take(pos, ev, m)
        self.pos, self.cur = pos, ev  # (where take would have left them)

    def take(self, pos: int, ev: LogEvent, m: Matched | None) -> None:
        self.pos, self.cur = pos, ev
        self.event(pos, ev, m)
        if self.amount is not None:
            self.moved_at(ev)

    def event(self, pos: int, ev: LogEvent, m: Matched | None) -> None:
        e = ev.event
        if ev.node not in self.nodes:
            self.nodes[ev.node] = None
            if e != "init" or ev.inputs is None or ev.outputs is None:
                self.undeclared = True
        if e == "send" or e == "receive":
            assert ev.channel is not None and ev.msg is not None
            if ev.channel not in self.chans:
                self.add_chan(ev.channel)
            if ev.msg[0] == "marker":
                if e == "send":
                    self.marker_send(ev, pos)
                else:
                    self.marker_receive(ev, pos)
            elif e == "send":
                self.write(ev, pos)
            else:
                assert m is not None
                self.receipt(ev, pos, m)
        elif e == "apply":
            self.apply(ev, pos)
        elif e == "internal":
            self.set_state(ev, True)
        elif e == "init":
            self.init[ev.node] = ev.state
            self.want = None  # the initial total, counted again
            self.state[ev.node] = ev.state
            self.state_at[ev.node] = ev
            self.count_state(ev)
            if ev.inputs is not None and ev.outputs is not None:
                for q in ev.inputs:
                    self.add_chan((q, ev.node))
                for q in ev.outputs:
                    self.add_chan((ev.node, q))
        elif e == "end":
            pass
        else:
            k = ev.snapshot
            assert k is not None
            sn = self.snap(k, ev, pos)
            if sn is None:
                return
            if e == "record_state":
                self.record_state(sn, ev, pos)
            elif e == "start_snapshot":
                if ev.node not in sn.start:
                    sn.start[ev.node] = ev
                    sn.start_pos[ev.node] = pos
                    self.begin_window(sn, pos)
            elif e == "record_message":
                self.record_message(sn, ev, pos)
            elif e == "complete":
                self.complete(sn, ev, pos)
            # close_channel: the judge knows from the red letters when a channel closes

    def set_state(self, ev: LogEvent, atomic: bool) -> None:
        """A state change (``atomic``: the event is one; else only when it says its state)."""
        if ev.has_state:
            self.state[ev.node] = ev.state
        elif atomic:
            self.state[ev.node] = _UNKNOWN
        else:
            return
        self.state_at[ev.node] = ev
        if self.amount is not None:
            self.count_state(ev)

    # -- sends ------------------------------------------------------------------------------

    def write(self, ev: LogEvent, pos: int) -> None:
        """An application message's write (the send event)."""
        c = ev.channel
        assert c is not None and ev.msg is not None
        node = ev.node
        if ev.of is not None:
            msg = self.pend_write.get(node, {}).pop(ev.of, None)
            if msg is None:
                raise _conflict(
                    ev,
                    f"this send says its state change is {show_id(node)}'s event {ev.of}, which "
                    f"is not an apply of an unwritten message on {show_chan(c)}",
                )
            if not _same(msg.value, ev.value):
                raise _conflict(
                    ev,
                    f"this send writes {show(ev.value)}, but its state change "
                    f"({msg.sstate.where if msg.sstate else '?'}) is of {show(msg.value)}",
                )
            self.set_state(ev, False)
        elif not ev.split:  # one atomic step: the write is the state change
            msg = _Msg(c, ev.msg[1], ev, pos)
            self.set_state(ev, True)
            if self.amount is not None:
                self.count_flight(msg, 1)
        else:
            msg = _Msg(c, ev.msg[1])
            self.pend_state.setdefault(node, {})[ev.seq] = msg
            self.set_state(ev, False)
        msg.write, msg.wpos = ev, pos
        self.by_write[id(ev)] = msg
        self.in_channel[c][id(msg)] = msg  # (add_chan made it)
        for sn in self.snaps.values():
            self.sides_at_write(sn, msg, ev, pos)
            if sn.s0 >= 0 and sn.sf < 0:
                rec = sn.rec_pos.get(node)
                if msg.spos >= 0 and (rec is None or msg.spos < rec):
                    sn.white[c].append(msg)
                elif msg.spos >= 0 or rec is not None:  # red: its state change is after
                    sn.red[c].append((pos, "send", msg.value, None))
                else:  # its state change is still to come: white until it comes
                    sn.white[c].append(msg)

    def sides_at_write(self, sn: _Snap, msg: _Msg, ev: LogEvent, pos: int) -> None:
        """At a write: does the channel stream put the message on the same side of
        snapshot ``sn``'s cut as the sender's recorded state?"""
        c, node, k = msg.chan, ev.node, sn.k
        rec = sn.rec.get(node)
        marker = sn.marker_out.get(c)
        if marker is None and rec is not None:
            # Before the red letter: the state change must be before the recording.
            if msg.spos >= 0 and msg.spos < sn.rec_pos[node]:
                return
            if self.once(sn, "red-letter-order", c):
                sn.overtaken.append((pos, ev, msg, c, "red-letter-order"))
        elif (
            marker is not None
            and msg.sstate is not None
            and (rec is None or msg.spos < sn.rec_pos[node])
        ):
            # After the red letter, with the state change before the recording.
            if msg.sstate is not ev:
                return  # a straddling send: said when the red letter went out first
            if self.once(sn, "red-letter-while-white", c):
                self.fail(
                    "red-letter-while-white",
                    ev,
                    f"{show_id(node)} sent red letter {show_snapshot(k)} on {show_chan(c)} "
                    f"({marker.where}) before recording its state "
                    + (f"({rec.where})" if rec else "(it never does)")
                    + " and sends this message on it in between: the message follows "
                    f"the red letter, so {show_id(c[1])} does not record it, yet {show_id(node)}'s "
                    f"recorded state has sent it; {RULES['record-state']}, before its red letters",
                    k,
                    pos,
                )

    def apply(self, ev: LogEvent, pos: int) -> None:
        c = ev.channel
        assert c is not None and ev.msg is not None
        node = ev.node
        if c[0] == node:  # the state change of a send
            if ev.of is None:  # before its write
                msg = _Msg(c, ev.value)
                msg.sstate, msg.spos = ev, pos
                self.pend_write.setdefault(node, {})[ev.seq] = msg
            else:  # after its write
                msg_ = self.pend_state.get(node, {}).pop(ev.of, None)
                if msg_ is None:
                    raise _conflict(
                        ev,
                        f"this apply says it is the state change of {show_id(node)}'s event "
                        f"{ev.of}, which is not a split send on {show_chan(c)} still waiting "
                        "for its state change",
                    )
                msg = msg_
                self.check_value(ev, msg)
                msg.sstate, msg.spos = ev, pos
                for sn in self.snaps.values():
                    self.late_state_change(sn, msg, ev, pos)
            self.set_state(ev, True)
            if self.amount is not None:
                self.count_flight(msg, 1)
            return
        # the application of a receipt
        if ev.of is None:
            raise _conflict(
                ev,
                f"this apply of a message {show_id(node)} receives names no receipt ('of'): a "
                "message is applied after it is taken in",
            )
        held = self.held.get(node, {}).pop(ev.of, None)
        if held is None:
            raise _conflict(
                ev,
                f"this apply says it applies {show_id(node)}'s event {ev.of}, which is not a "
                f"split receive on {show_chan(c)} still waiting to be applied",
            )
        self.check_value(ev, held)
        self.set_state(ev, True)
        self.taken_in(held, ev, pos)

    def check_value(self, ev: LogEvent, msg: _Msg) -> None:
        if not _same(ev.value, msg.value) or ev.channel != msg.chan:
            raise _conflict(
                ev,
                f"this apply is of {show(ev.value)} on {show_chan(ev.channel)} "  # type: ignore[arg-type]
                f"but event {ev.of} is of {show(msg.value)} on {show_chan(msg.chan)}",
            )

    def late_state_change(self, sn: _Snap, msg: _Msg, ev: LogEvent, pos: int) -> None:
        """A split send's state change, after its write."""
        node, c, k = ev.node, msg.chan, sn.k
        rec = sn.rec.get(node)
        marker = sn.marker_out.get(c)
        wrote = msg.write.where if msg.write else "?"
        # written after the red letter, its state change still before the recording
        if (
            rec is None
            and marker is not None
            and msg.wpos > sn.marker_out_pos[c]
            and self.once(sn, "straddling-send", c)
        ):
            self.fail(
                "straddling-send",
                ev,
                f"{show_id(node)} wrote this message on {show_chan(c)} ({wrote}) "
                f"after red letter {show_snapshot(k)} ({marker.where}), and changes its "
                f"state for it here, before it records its state for snapshot "
                f"{show_snapshot(k)}: the recorded state has sent a message that the "
                f"channel's stream puts after the cut, so the snapshot loses it; "
                f"{RULES['red-letter-first']}",
                k,
                pos,
            )

    def marker_send(self, ev: LogEvent, pos: int) -> None:
        c = ev.channel
        assert c is not None
        k = ev.value
        sn = self.snap(k, ev, pos)  # type: ignore[arg-type]
        if sn is None:
            return
        node = ev.node
        first = sn.marker_out.get(c)
        if first is not None:
            self.fail(
                "extra-red-letter",
                ev,
                f"{show_id(node)} sends red letter {show_snapshot(sn.k)} on {show_chan(c)} again "
                f"(first at {first.where}); {RULES['one-red-letter']}",
                sn.k,
                pos,
            )
            return
        sn.marker_out[c] = ev
        sn.marker_out_pos[c] = pos
        rec = sn.rec.get(node)
        # a message whose state change the sender already made, not yet written on c
        for msg in self.pend_write.get(node, {}).values():
            if msg.chan != c:
                continue
            if self.once(sn, "straddling-send", c):
                self.fail(
                    "straddling-send",
                    ev,
                    f"{show_id(node)} changed its state for {show(msg.value)} on {show_chan(c)} "
                    f"({msg.sstate.where if msg.sstate else '?'}) before "
                    + (f"recording its state ({rec.where})" if rec else "recording its state")
                    + " and writes that message only after this red letter: the recorded state "
                    "has sent a message that the channel's stream puts after the cut, so the "
                    f"snapshot loses it; {RULES['red-letter-first']}",
                    sn.k,
                    pos,
                )

    # -- receipts ---------------------------------------------------------------------------

    def receipt(self, ev: LogEvent, pos: int, m: Matched) -> None:
        c = ev.channel
        assert c is not None
        node = ev.node
        if m.overtaken is not None and m.send is not None:
            self.fail(
                "not-fifo",
                ev,
                f"{show_chan(c)} delivers {show(ev.value)} (sent at {m.send.where}) before "
                f"{show(m.overtaken.value)}, sent before it ({m.overtaken.where}): the channel is "
                f"not FIFO ({RULES['fifo']})",
                None,
                pos,
            )
        msg = self.by_write.pop(id(m.send), None) if m.send is not None else None
        if msg is None:  # its send is not in the logs (the run is said to be cut)
            msg = _Msg(c, ev.msg[1])  # type: ignore[index]
        msg.recv, msg.rpos = ev, pos
        self.last_recv[c] = ev
        for sn in self.snaps.values():
            self.late_take(sn, ev, pos)
            rec = sn.rec_pos.get(node)
            if rec is not None and c not in sn.marker_in:
                sn.due.setdefault(c, []).append(ev)
        if ev.split:
            self.held.setdefault(node, {})[ev.seq] = msg
            self.set_state(ev, False)
            self.remember(c, ev, msg)
            return
        self.set_state(ev, True)
        self.remember(c, ev, msg)
        self.taken_in(msg, ev, pos)

    def remember(self, c: Chan, ev: LogEvent, msg: _Msg | None) -> None:
        """Keep a receipt a record_message may name later (see :meth:`lookup`)."""
        q = self.recent.get(c)
        if q is None:
            q = self.recent[c] = deque()
        q.append((ev, msg))
        if len(q) > 32:
            self.trim(c, q)

    def trim(self, c: Chan, q: deque[tuple[LogEvent, _Msg | None]]) -> None:
        """Forget the receipts on ``c`` no open snapshot may record (now and then)."""
        low = self.keep_from(c)
        while len(q) > 1 and q[0][0].seq < low:
            q.popleft()

    def keep_from(self, c: Chan) -> int:
        """The earliest seq of a receipt on ``c`` an open snapshot may still record."""
        n = c[1]
        low = 1 << 62
        for sn in self.snaps.values():
            r = sn.rec.get(n)
            if r is not None and c not in sn.marker_in:
                low = min(low, r.seq)
        for seq in self.held.get(n, {}):
            low = min(low, seq)
        return low

    def taken_in(self, msg: _Msg, ev: LogEvent, pos: int) -> None:
        """The receiver's state change of ``msg`` (the receipt, or its apply)."""
        msg.rstate, msg.rspos = ev, pos
        c = msg.chan
        self.in_channel[c].pop(id(msg), None)  # (add_chan made it at the receipt)
        if self.amount is not None and (msg.sstate is not None or msg.write is not None):
            self.count_flight(msg, -1)
        node = ev.node
        for sn in self.snaps.values():
            if sn.s0 >= 0 and sn.sf < 0:
                self.shadow_take(sn, msg, ev, pos, node not in sn.rec)

    def shadow_take(self, sn: _Snap, msg: _Msg, ev: LogEvent, pos: int, white: bool) -> None:
        """``msg`` is taken in (``ev``) inside ``sn``'s Lemma window, by a white machine
        (Lemma 0's replay: it must be first in its shadow buffer) or a red one."""
        c = msg.chan
        if white:
            q = sn.white[c]
            if q and q[0] is msg:
                q.popleft()
            else:
                self.white_miss(sn, msg, ev, pos, q)
        else:
            sn.red[c].append((pos, "take", msg.value, ev))

    def white_miss(self, sn: _Snap, msg: _Msg, ev: LogEvent, pos: int, q: deque[_Msg]) -> None:
        """A white machine takes ``msg`` in, which is not first in its shadow buffer
        ``q``: Lemma 0 breaks here (the first place is kept)."""
        c, node = msg.chan, ev.node
        if sn.lemma0 is None:
            send_node = c[0]
            red_send = (
                msg.spos >= 0 and send_node in sn.rec_pos and msg.spos > sn.rec_pos[send_node]
            )
            why = (
                f"its message was sent by {show_id(send_node)} after it turned red "
                f"({msg.sstate.where if msg.sstate else '?'})"
                if red_send or msg not in q
                else f"the shadow buffer holds {_list(x.value for x in q)}"
            )
            sn.lemma0 = _div(
                pos,
                "Lemma0",
                ev,
                f"snapshot {show_snapshot(sn.k)} breaks {RULES['Lemma0']} here: the white "
                f"machine {show_id(node)} cannot take this message in the shadow network: " + why,
                sn.k,
            )
        if msg in q:
            q.remove(msg)

    def late_take(self, sn: _Snap, ev: LogEvent, pos: int) -> None:
        """A message taken from a channel whose red letter arrived, before recording."""
        node = ev.node
        c = ev.channel
        first_in = sn.first_in.get(node)
        if first_in is None or node in sn.rec or first_in.channel != c:
            return
        st = sn.start.get(node)
        if st is not None and st.seq < first_in.seq:
            return
        if self.once(sn, "late-record", node):
            self.fail(
                "late-record",
                ev,
                f"{show_id(node)} takes this message from {show_chan(c)} after red letter "  # type: ignore[arg-type]
                f"{show_snapshot(sn.k)} arrived on it ({first_in.where}) and before recording its "
                f"state; {RULES['turn-red']}; its recorded state counts a message "
                f"{show_id(c[0])} sent after turning red",  # type: ignore[index]
                sn.k,
                pos,
            )

    def marker_receive(self, ev: LogEvent, pos: int) -> None:
        c = ev.channel
        assert c is not None
        sn = self.snap(ev.value, ev, pos)  # type: ignore[arg-type]
        if sn is None:
            return
        node = ev.node
        self.last_recv[c] = ev
        self.remember(c, ev, None)
        self.late_take(sn, ev, pos)
        for other in self.snaps.values():
            if other is not sn:
                self.late_take(other, ev, pos)
        if c in sn.marker_in:
            return
        sn.marker_in[c] = ev
        sn.marker_in_pos[c] = pos
        sn.first_in.setdefault(node, ev)
        self.closed(sn, pos)

    def closed(self, sn: _Snap, pos: int) -> None:
        """A channel closed: when every channel is, the Lemma window ends here."""
        if sn.sf >= 0 or sn.s0 < 0:
            return
        if any(c not in sn.marker_in for c in self.chans):
            return
        sn.sf = pos
        for c in self.chans:
            sn.final[c] = [m.value for m in self.in_channel.get(c, {}).values()]
        self.maybe_done(sn)

    # -- recording --------------------------------------------------------------------------

    def record_state(self, sn: _Snap, ev: LogEvent, pos: int) -> None:
        node, k = ev.node, sn.k
        first = sn.rec.get(node)
        if first is not None:
            self.fail(
                "record-state-twice",
                ev,
                f"{show_id(node)} records its state for snapshot {show_snapshot(k)} a second time "
                f"(first at {first.where}); {RULES['record-state']}, once",
                k,
                pos,
            )
            return
        self.begin_window(sn, pos)
        sn.rec[node] = ev
        sn.rec_pos[node] = pos
        cause = [e for e in (sn.first_in.get(node), sn.start.get(node)) if e is not None]
        if not cause:
            self.fail(
                "record-without-marker",
                ev,
                f"{show_id(node)} records its state for snapshot {show_snapshot(k)} before any "
                f"red letter of it reached {show_id(node)} and without starting it "
                f"({RULES['starter']})",
                k,
                pos,
            )
        was = self.state.get(node, _UNKNOWN)
        where = self.state_at.get(node)
        sn.local[node] = (was, ev)
        if was is not _UNKNOWN and not _same(ev.state, was):
            assert where is not None
            self.fail(
                "wrong-state",
                ev,
                f"{show_id(node)} records {show(ev.state)}, but its state then was "
                f"{show(was)} (after {where.where}); {RULES['record-state']}",  # type: ignore[arg-type]
                k,
                pos,
            )
        # a message written before its red letter whose state change is still to come
        for msg in self.pend_state.get(node, {}).values():
            c = msg.chan
            marker_pos = sn.marker_out_pos.get(c)
            if (marker_pos is None or msg.wpos < marker_pos) and self.once(
                sn, "red-letter-order", c
            ):
                assert msg.write is not None
                sn.overtaken.append((msg.wpos, msg.write, msg, c, "split-after"))
        # a message taken in before recording and applied after: the channel's record
        for msg in self.held.get(node, {}).values():
            c = msg.chan
            assert msg.recv is not None
            closed = sn.marker_in.get(c)
            if closed is None or msg.recv.seq < closed.seq:
                sn.due.setdefault(c, []).append(msg.recv)

    def lookup(self, node: str, c: Chan, seq: int, line: LogEvent) -> tuple[LogEvent, _Msg | None]:
        """The receipt event ``seq`` of ``node`` a record_message names (``of``): one
        kept, or (a receipt long past) read again from its log."""
        for ev, msg in reversed(self.recent.get(c, ())):
            if ev.seq == seq:
                return ev, msg
            if ev.seq < seq:
                break
        found = self._reread(node, seq)
        if found is None or found.event != "receive" or found.channel != c:
            raise _conflict(
                line,
                f"this record_message says it records {show_id(node)}'s event {seq}, which is "
                + (
                    found.describe() + f" ({found.where})"
                    if found is not None
                    else "not in the log"
                )
                + f", not an earlier receive on {show_chan(c)}",
            )
        return found, None

    def _reread(self, node: str, seq: int) -> LogEvent | None:
        """An event no longer held, read again from its log (only for a record that
        names a receipt long past)."""
        info = self.merge.nodes.get(node)
        if info is None:
            return None
        return next(
            (e for e in self.merge._events_of(info.src) if e.node == node and e.seq == seq),
            None,
        )

    def record_message(self, sn: _Snap, line: LogEvent, pos: int) -> None:
        c = line.channel
        assert c is not None
        n, k = c[1], sn.k
        sn.records.setdefault(c, []).append(line)
        rec = sn.rec.get(n)
        closed = sn.marker_in.get(c)
        msg: _Msg | None = None
        of: LogEvent | None
        if line.of is not None:
            of, msg = self.lookup(n, c, line.of, line)
        else:
            last = self.last_recv.get(c)
            of = last
            if last is not None:
                for ev, mm in reversed(self.recent.get(c, ())):
                    if ev is last:
                        msg = mm
                        break
        as_marker = line.msg is not None and line.msg[0] == "marker"
        of_marker = of is not None and of.msg is not None and of.msg[0] == "marker"
        if as_marker or of_marker:
            what = of if of_marker else line
            assert what is not None
            mk = what.msg[1] if what.msg is not None else None
            self.fail(
                "marker-recorded",
                line,
                f"{show_id(n)} records the red letter of snapshot {show_snapshot(mk)} "  # type: ignore[arg-type]
                + (f"(received at {what.where}) " if what is of else "")
                + f"as a message of {show_chan(c)} in snapshot {show_snapshot(k)}; a red letter "
                f"is not a message of the computation; {RULES['record-channel']}",
                k,
                pos,
            )
            return
        if of is None:
            self.fail(
                "record-without-message",
                line,
                f"{show_id(n)} records {show(line.value)} on {show_chan(c)} in snapshot "
                f"{show_snapshot(k)}, but has taken no message from {show_chan(c)} before; "
                f"{RULES['record-channel']}",
                k,
                pos,
            )
            return
        links = sn.linked.setdefault(c, {})
        first = links.get(of.seq)
        if first is not None:
            self.fail(
                "recorded-twice",
                line,
                f"{show_id(n)} records the message received at {of.where} a second time in "
                f"snapshot {show_snapshot(k)} (first at {first[0].where}); "
                f"{RULES['record-channel']}, once each",
                k,
                pos,
            )
            return
        links[of.seq] = (line, of)
        # where the message entered the receiver's state: its receipt, or its apply
        in_state = (
            msg.rstate
            if msg is not None and msg.rstate is not None
            else (None if msg is not None else of)
        )
        if closed is not None and of.seq > closed.seq:
            self.fail(
                "record-after-close",
                line,
                f"{show_id(n)} records {show(line.value)} on {show_chan(c)} in snapshot "
                f"{show_snapshot(k)} after the channel turned red: its red letter arrived at "
                f"{closed.where} and this message after it ({of.where}); {RULES['record-channel']}",
                k,
                pos,
            )
        elif rec is None or (in_state is not None and in_state.seq < rec.seq):
            held = in_state is not None and in_state is not of
            self.fail(
                "record-before-red",
                line,
                f"{show_id(n)} records the message it received at {of.where} in snapshot "
                f"{show_snapshot(k)}, but it "
                + (
                    f"applied that message ({in_state.where})"
                    if held and in_state
                    else "took that message in"
                )
                + " before recording its state "
                + (f"({rec.where})" if rec else "(it never records it)")
                + f", so the message is in its recorded state already; {RULES['record-channel']}",
                k,
                pos,
            )
        elif not _same(line.value, of.value):
            self.fail(
                "wrong-record",
                line,
                f"{show_id(n)} records {show(line.value)} for the message it received at "
                f"{of.where}, which is {show(of.value)}; {RULES['record-channel']}",
                k,
                pos,
            )

    def complete(self, sn: _Snap, ev: LogEvent, pos: int) -> None:
        n, k = ev.node, sn.k
        if n in sn.complete:
            return
        sn.complete[n] = ev
        rec = sn.rec.get(n)
        if rec is not None and ev.has_state and not _same(ev.state, rec.state):
            self.fail(
                "report-contradicts-record",
                ev,
                f"{show_id(n)}'s report of snapshot {show_snapshot(k)} gives its state as "
                f"{show(ev.state)}, but it recorded {show(rec.state)} ({rec.where}): it reports "
                "what it did not record",
                k,
                pos,
            )
        late = [c for c in self.inputs(n) if c not in sn.marker_in]
        if rec is None:
            self.fail(
                "early-complete",
                ev,
                f"{show_id(n)} declares snapshot {show_snapshot(k)} complete before recording its "
                f"state; {RULES['complete']}",
                k,
                pos,
            )
        elif late:
            self.fail(
                "early-complete",
                ev,
                f"{show_id(n)} declares snapshot {show_snapshot(k)} complete while "
                + ", ".join(show_chan(c) for c in late)
                + (" is" if len(late) == 1 else " are")
                + f" still white (no red letter yet); {RULES['complete']}",
                k,
                pos,
            )
        self.maybe_done(sn)

    # -- the running total ------------------------------------------------------------------

    def count_state(self, ev: LogEvent) -> None:
        """The node's amount after a state change (unknown when not logged)."""
        if self.amount is None:
            return
        n = ev.node
        old = self.node_amount.get(n)
        was_unknown = n in self.node_amount and old is None
        new = self.amount(ev.state) if ev.has_state else None
        self.node_amount[n] = new
        self.unknown += int(new is None) - int(was_unknown)
        self.states_sum += (new or 0) - (old or 0)

    def count_flight(self, msg: _Msg, sign: int) -> None:
        if self.amount is not None:
            self.flight_sum += sign * self.amount(msg.value)

    def moved_at(self, ev: LogEvent) -> None:
        """Where the sum of the states and the messages in flight first differs from
        the initial total (the finding of the invariant points there)."""
        if self.moved is not None or self.unknown or len(self.init) < len(self.merge.nodes):
            return  # (every process's initial state first)
        assert self.amount is not None
        if self.want is None:
            self.want = sum(self.amount(v) for v in self.init.values())
        got = self.states_sum + self.flight_sum
        if got != self.want:
            self.moved = (ev, self.pos, self.want, got)

    # -- judging a snapshot -----------------------------------------------------------------

    def settled(self, sn: _Snap, n: str) -> bool:
        """Whether ``n``'s records of ``sn`` are final: it logged its part complete, or
        its log holds its whole run."""
        return n in sn.complete or self.merge.ended(n)

    def maybe_done(self, sn: _Snap) -> None:
        """Judge and forget ``sn`` once it is complete everywhere."""
        if sn.sf < 0:
            return
        if any(n not in sn.rec or n not in sn.complete for n in self.nodes):
            return
        if any(c not in sn.marker_in for c in self.chans):
            return
        self.judge(sn)
        del self.snaps[sn.k]
        self.done[sn.k] = _Done(self.cur)

    def judge(self, sn: _Snap) -> None:
        """Judge ``sn``: complete, or open where the logs stop."""
        k = sn.k
        nodes = list(self.nodes)
        unlogged = sorted({x for c in self.chans for x in c if x not in self.merge.nodes})
        missing = [n for n in nodes if n not in sn.rec]
        shut = [c for c in self.chans if c not in sn.marker_in and c[1] in self.merge.nodes]
        unsettled = [n for n in nodes if not self.settled(sn, n)]
        done = not unlogged and not missing and not shut and not unsettled
        # the red-letter-order findings, now that their red letter and receipt are known
        for at, app, msg, c, form in sn.overtaken:
            self.red_letter_order(sn, at, app, msg, c, form)
        pend: list[Divergence] = []
        self.open_parts(sn, pend)
        recorded = self.channels(sn, pend)
        if done:
            broken = self.lemmas(sn, recorded)
            states = {n: sn.rec[n].state for n in nodes}
            note = ""
            if self.invariant is not None:
                bad = self.invariant(states, recorded, self.init)
                if bad is not None:
                    note = f"; the application's invariant does not hold: {bad}"
                    self.invariant_finding(sn, bad)
            ok = not self.failed[k] and not broken and not note
            text = (
                f"snapshot {show_snapshot(k)}: complete, consistent (Lemma 0 and Lemma 1 hold on "
                "this run), recorded as EWD 864 says"
                if ok
                else f"snapshot {show_snapshot(k)}: wrong"
                + (": it breaks " + " and ".join(broken) if broken else "")
                + note
            )
            self.checks[k] = SnapshotCheck(k, ok, text, tuple(broken))
            return
        self.not_judged += 1
        if unsettled and not missing and not shut and not unlogged:
            what = (
                f"{', '.join(show_id(n) for n in unsettled)} "
                + ("stops" if len(unsettled) == 1 else "stop")
                + " before logging "
                + ("its" if len(unsettled) == 1 else "their")
                + " part complete, so the records may not be final"
            )
        else:
            what = "; ".join(
                (
                    [f"no log holds the events of {', '.join(show_id(x) for x in unlogged)}"]
                    if unlogged
                    else []
                )
                + (
                    [
                        f"{', '.join(show_id(n) for n in missing)} never recorded"
                        + (" its state" if len(missing) == 1 else " their states")
                    ]
                    if missing
                    else []
                )
                + (
                    [f"no red letter arrived on {', '.join(show_chan(c) for c in shut)}"]
                    if shut
                    else []
                )
            )
        self.checks[k] = SnapshotCheck(
            k, False, f"snapshot {show_snapshot(k)}: never completes: {what}"
        )
        if not pend:
            pend.append(
                _div(
                    sn.first,
                    "liveness",
                    sn.first_ev,
                    f"snapshot {show_snapshot(k)} never completes ({RULES['liveness']})",
                    k,
                )
            )
        self.pending += pend

    def open_parts(self, sn: _Snap, pend: list[Divergence]) -> None:
        """What keeps ``sn`` open: a machine that never turns red, a red letter never sent."""
        k = sn.k

        def later(kind: str, ev: LogEvent, pos: int, text: str) -> None:
            pend.append(_div(pos, kind, ev, text, k))

        for n in self.nodes:
            if n in sn.rec:
                continue
            fi = sn.first_in.get(n)
            st = sn.start.get(n)
            if (
                fi is not None
                and (st is None or st.seq > fi.seq)
                and ("late-record", n) not in sn.once
            ):
                c = fi.channel
                later(
                    "never-red",
                    fi,
                    sn.marker_in_pos.get(c, sn.first) if c is not None else sn.first,
                    f"{show_id(n)} receives the red letter of snapshot {show_snapshot(k)} while "
                    f"white and never records its state ({RULES['turn-red']})",
                )
            if st is not None:
                later(
                    "never-red",
                    st,
                    sn.start_pos[n],
                    f"{show_id(n)} starts snapshot {show_snapshot(k)} and never records its state "
                    f"({RULES['record-state']})",
                )
        for c in self.chans:
            n = c[0]
            if n not in self.merge.nodes:
                continue
            sent = sn.marker_out.get(c)
            if (
                sent is not None
                and n not in sn.rec
                and not any(
                    d.kind == "red-letter-while-white"
                    and d.why == f"snapshot {show_snapshot(k)}"
                    and d.node == n
                    for d in self.found.kept
                )
            ):
                later(
                    "never-red",
                    sent,
                    sn.marker_out_pos[c],
                    f"{show_id(n)} sends red letter {show_snapshot(k)} on {show_chan(c)} and never "
                    f"records its state ({RULES['record-state']})",
                )
            rec = sn.rec.get(n)
            if rec is not None and sent is None:
                later(
                    "missing-red-letter",
                    rec,
                    sn.rec_pos[n],
                    f"{show_id(n)} turned red here and never sends red letter {show_snapshot(k)} "
                    f"on {show_chan(c)} ({RULES['turn-red']})",
                )

    def red_letter_order(
        self, sn: _Snap, at: int, app: LogEvent, msg: _Msg, c: Chan, form: str
    ) -> None:
        k, node = sn.k, c[0]
        rec = sn.rec[node]
        marker = sn.marker_out.get(c)
        before = f"before red letter {show_snapshot(k)} " + (
            f"({marker.where})" if marker else "(never sent)"
        )
        if form == "red-letter-order" and msg.sstate is app:
            head = (
                f"{show_id(node)} recorded its state for snapshot {show_snapshot(k)} "
                f"({rec.where}) and sends this message on {show_chan(c)} {before}"
            )
        else:
            change = (
                f"changes its state for it at {msg.sstate.where}"
                if msg.sstate is not None
                else "has not changed its state for it yet"
            )
            head = (
                f"{show_id(node)} writes this message on {show_chan(c)} {before}, but "
                f"{change}, after recording its state for snapshot {show_snapshot(k)} "
                f"({rec.where}): the recorded state has not sent it"
            )
        self.fail(
            "red-letter-order",
            app,
            f"{head}; {RULES['red-letter-first']}; " + self.overtaken_text(sn, msg, c),
            k,
            at,
        )

    def overtaken_text(self, sn: _Snap, msg: _Msg, c: Chan) -> str:
        """What became of an app message sent after its sender recorded, before the red
        letter on that channel."""
        r = msg.recv
        q = c[1]
        if r is None:
            return f"{show_id(q)} never receives it"
        qrec = sn.rec.get(q)
        closed = sn.marker_in.get(c)
        if qrec is None or r.seq < qrec.seq:
            return (
                f"it reached {show_id(q)} while {show_id(q)} was still white ({r.where}), so "
                f"{show_id(q)}'s recorded state counts a message that {show_id(c[0])}'s recorded "
                "state has not sent"
            )
        if closed is None or r.seq < closed.seq:
            return (
                f"it reached {show_id(q)} after {show_id(q)} turned red and while {show_chan(c)} "
                f"was still white ({r.where}), so the recorded channel holds a message that "
                f"{show_id(c[0])}'s recorded state has not sent"
            )
        return f"it reached {show_id(q)} after the channel turned red ({r.where})"

    def channels(self, sn: _Snap, pend: list[Divergence]) -> dict[Chan, list[Json]]:
        """Check each channel's recording; the recorded contents per channel."""
        k = sn.k
        got: dict[Chan, list[Json]] = {}
        for c in self.chans:
            n = c[1]
            if n not in self.merge.nodes:
                continue
            rec = sn.rec.get(n)
            closed = sn.marker_in.get(c)
            lines = sn.records.get(c, [])
            comp = sn.complete.get(n)
            report = dict(comp.channels).get(c[0]) if comp and comp.channels is not None else None
            values = [_value_of(x) for x in lines]
            if report is not None and lines and not _same_list(report, values):
                assert comp is not None
                self.fail(
                    "report-contradicts-record",
                    comp,
                    f"{show_id(n)}'s report of snapshot {show_snapshot(k)} gives {show_chan(c)} as "
                    f"{_list(report)}, but its record_message lines record {_list(values)} "
                    f"({lines[0].where} ...): it reports what it did not record",
                    k,
                    self.pos,
                )
            got[c] = list(report) if report is not None else values
            if rec is None:
                continue
            if closed is None:
                # A channel whose red letter never came cannot be judged short of a
                # record: a program may write a channel's stream when its red letter
                # arrives.  The open channel is the finding: liveness on a whole run.
                pend.append(
                    _div(
                        sn.rec_pos[n],
                        "open-channel",
                        rec,
                        f"{show_chan(c)} never turns red in snapshot {show_snapshot(k)}: red "
                        f"letter {show_snapshot(k)} never arrives on it ({RULES['liveness']})",
                        k,
                    )
                )
                continue
            if not self.settled(sn, n):
                continue  # its records may come later (a cut log): not judged
            due = sn.due.get(c, [])
            linked = sn.linked.get(c, {})
            if report is not None and not lines:
                want = [e.value for e in due]
                if not _same_list(report, want):
                    assert comp is not None
                    left = _left_out(report, due)
                    if left is not None:
                        self.missing(sn, left, rec, closed, report=report)
                    else:
                        self.fail(
                            "wrong-channel",
                            comp,
                            f"{show_id(n)} reports {show_chan(c)} as {_list(report)} in snapshot "
                            f"{show_snapshot(k)}; the messages it received on it after recording "
                            f"its state ({rec.where}) and before the red letter ({closed.where}) "
                            f"are {_list(want)}; {RULES['record-channel']}",
                            k,
                            self.pos,
                        )
                continue
            for e in due:
                if e.seq not in linked:
                    self.missing(sn, e, rec, closed)
        return got

    def missing(
        self,
        sn: _Snap,
        e: LogEvent,
        rec: LogEvent,
        closed: LogEvent,
        report: Sequence[Json] | None = None,
    ) -> None:
        n, k = e.node, sn.k
        c = e.channel
        assert c is not None
        if e.seq < rec.seq:  # taken in before recording, applied after
            why = (
                f"{show_id(n)} took it in before recording its state ({rec.where}) and applied "
                "it only after, so its recorded state does not hold it, and the channel's "
                "record must"
            )
        else:
            why = (
                f"it came after {show_id(n)} recorded its state ({rec.where}) and before the red "
                f"letter on the channel ({closed.where})"
            )
        self.fail(
            "missing-record",
            e,
            f"{show_id(n)} does not record this message of {show_chan(c)} in snapshot "
            f"{show_snapshot(k)}"
            + (f" (its report gives {_list(report)})" if report is not None else "")
            + f": {why}; {RULES['record-channel']}",
            k,
            self.pos,
        )

    def lemmas(self, sn: _Snap, recorded: dict[Chan, list[Json]]) -> list[str]:
        """Lemma 0 and Lemma 1 on the shadow networks; the lemmas broken.  One finding
        per snapshot: the first place either breaks."""
        k = sn.k
        broken: list[str] = []
        found = sn.lemma0
        if found is not None:
            broken.append("Lemma0")
        else:
            for c in self.chans:
                have = [m.value for m in sn.white.get(c, ())]
                want = recorded.get(c, [])
                if not _same_list(have, want):
                    broken.append("Lemma0")
                    at = sn.rec[c[1]]
                    found = _div(
                        sn.rec_pos[c[1]],
                        "Lemma0",
                        at,
                        f"snapshot {show_snapshot(k)} breaks {RULES['Lemma0']}: the replay ends "
                        f"with {show_chan(c)} holding {_list(have)}; the snapshot records "
                        f"{_list(want)}",
                        k,
                    )
                    break
        if "Lemma0" not in broken:
            for n in self.nodes:
                v, at = sn.local.get(n, (_UNKNOWN, sn.rec[n]))
                if v is not _UNKNOWN and not _same(v, sn.rec[n].state):
                    broken.append("Lemma0")
                    found = _div(
                        sn.rec_pos[n],
                        "Lemma0",
                        at,
                        f"snapshot {show_snapshot(k)} breaks {RULES['Lemma0']}: the replay ends "
                        f"with {show_id(n)} in the state {show(v)}; the snapshot records "  # type: ignore[arg-type]
                        f"{show(sn.rec[n].state)}",
                        k,
                    )
                    break
        # Lemma 1: the red machines' actions from the snapshot state, per channel
        first: Divergence | None = None
        red_q: dict[Chan, list[Json]] = {}
        for c in self.chans:
            q = list(recorded.get(c, []))
            for pos, kind, value, ev in sorted(sn.red.get(c, []), key=lambda x: x[0]):
                if pos > sn.sf:
                    break
                if kind == "send":
                    q.append(value)
                    continue
                if not q or not _same(q[0], value):
                    assert ev is not None
                    d = _div(
                        pos,
                        "Lemma1",
                        ev,
                        f"snapshot {show_snapshot(k)} breaks {RULES['Lemma1']} here: the red "
                        f"machine {show_id(ev.node)} takes {show(value)} from {show_chan(c)}, but "
                        f"from the snapshot state the shadow buffer holds {_list(q)}",
                        k,
                    )
                    if first is None or d.step < first.step:
                        first = d
                    q = []
                    break
                q.pop(0)
            red_q[c] = q
        if first is not None:
            broken.append("Lemma1")
            found = found or first
        else:
            for c in self.chans:
                fin = sn.final.get(c, [])
                if not _same_list(red_q[c], fin):
                    broken.append("Lemma1")
                    last = max(sn.marker_in.values(), key=lambda e: sn.marker_in_pos[e.channel])  # type: ignore[index]
                    found = found or _div(
                        sn.sf,
                        "Lemma1",
                        last,
                        f"snapshot {show_snapshot(k)} breaks {RULES['Lemma1']}: the replay ends "
                        f"with {show_chan(c)} holding {_list(red_q[c])}; in the final state (after "
                        f"{last.where}) it holds {_list(fin)}",
                        k,
                    )
                    break
        if found is not None:
            self.found.add(found)
            self.failed[k] += 1
        return list(dict.fromkeys(broken))

    def invariant_finding(self, sn: _Snap, bad: str) -> None:
        k = sn.k
        if self.moved is not None and self.moved[1] <= sn.sf:
            ev, pos, want, got = self.moved
            self.fail(
                "invariant",
                ev,
                f"snapshot {show_snapshot(k)}: {bad}; the run's own total (the states and the "
                f"messages in flight) first changes here, from {want:g} to {got:g}",
                k,
                pos,
            )
            return
        if sn.marker_in:
            last = max(sn.marker_in.values(), key=lambda e: sn.marker_in_pos[e.channel])  # type: ignore[index]
        else:  # no channel: the snapshot ends with the last state recorded
            last = max(sn.rec.values(), key=lambda e: sn.rec_pos[e.node])
        self.fail(
            "invariant",
            last,
            f"snapshot {show_snapshot(k)}: {bad}; the run's own total (the states and the messages "
            "in flight) never changes, so the snapshot records what the run never held",
            k,
            sn.sf,
        )

    # -- the end ----------------------------------------------------------------------------

    def finish(self) -> Validation:
        for k in list(self.snaps):
            self.judge(self.snaps.pop(k))
        ending = self.merge.ending
        findings = self.found.kept
        findings.sort(key=lambda d: (d.kind.startswith("Lemma") or d.kind == "invariant", d.step))
        pending = sorted(self.pending, key=lambda d: d.step)
        live = [
            Divergence(
                _live(d.kind),
                d.node,
                d.summary,
                d.model_did,
                why=d.why,
                step=d.step,
                path=d.path,
                line=d.line,
            )
            for d in pending
        ]
        notes: list[str] = []
        if self.undeclared:
            notes.append(
                "the channels are read from the traffic (no init event lists every node's inputs "
                "and outputs): a channel that carried nothing is not known"
            )
        failed = bool(findings) or bool(pending and ending.whole)
        verdict, case = settle(
            failed=failed, snapshots=self.opened, open_=self.not_judged, ending=ending
        )
        alls = list(findings) + (live if ending.whole else [])
        if not self.opened:
            notes.append("no snapshot in the logs: nothing to judge (start one in the run)")
        if pending and not ending.whole:
            notes.append(
                "not judged: "
                + "; ".join(d.model_did for d in pending[:3])
                + ("; ..." if len(pending) > 3 else "")
            )
        if not ending.whole:
            reasons = ending.reasons
            notes.append(
                "the logs may not hold the whole run: "
                + "; ".join(reasons[:5])
                + (f"; and {len(reasons) - 5} more" if len(reasons) > 5 else "")
            )
        for kind, n in sorted(self.found.dropped().items()):
            notes.append(f"{n} more {kind} findings are not listed (the first {MAX_FINDINGS} are)")
        checks = [self.checks[k] for k in self.order if k in self.checks]
        return Validation(
            verdict,
            self.merge.events,
            alls[0] if alls else None,
            tuple(checks),
            tuple(dict.fromkeys(notes)),
            divergences=tuple(alls),
            what=f"of {_processes(len(self.merge.nodes))} judged on their own run (no model)",
            case=case,
        )


def _processes(n: int) -> str:
    return f"{n} process" if n == 1 else f"{n} processes"


def _live(kind: str) -> str:
    name = kind if kind == "liveness" else f"liveness-{kind}"
    assert name in RULE_NAMES, name
    return name


def _value_of(line: LogEvent) -> Json:
    if line.msg is not None and line.msg[0] == "marker":
        return {"marker": line.msg[1]}
    return line.value


def _left_out(report: Sequence[Json], due: Sequence[LogEvent]) -> LogEvent | None:
    """The first due receipt a report leaves out, when the report is the due
    messages with some left out (else None: it says something else)."""
    want = [_canon(e.value) for e in due]
    have = [_canon(v) for v in report]  # (an error path: the texts are compared)
    i = 0
    first: LogEvent | None = None
    for j, w in enumerate(want):
        if i < len(have) and have[i] == w:
            i += 1
        elif first is None:
            first = due[j]
    return first if i == len(have) else None


def judge(merge: LogMerge, *, invariant: Invariant | None = None) -> Validation:
    """Judge the run ``merge`` streams (see the module docstring)."""
    j = _Judge(merge, invariant)
    j.run(merge)
    return j.finish()


def validate_run(
    logs: Sequence[Sequence[LogEvent]],
    *,
    unclean: Sequence[str] = (),
    whole_run: bool = False,
    invariant: Invariant | None = None,
) -> Validation:
    """Judge logs already parsed (one list per process, or one holding them all);
    ``unclean``: reasons known before that the logs may not hold the whole run."""
    merge = LogMerge.of_lists([x for x in logs if x], tolerant=True, whole_run=whole_run)
    merge.unclean.extend(unclean)
    for i, log in enumerate(logs):
        if not log:
            merge.unclean.append(f"log {i + 1} is empty: its process wrote no event")
    return judge(merge, invariant=invariant)


def validate_run_files(
    paths: Sequence[Path],
    *,
    whole_run: bool = False,
    invariant: Invariant | None = None,
    limit: int = MAX_LOGS_TOTAL,
) -> Validation:
    """Read one log per process (or one holding them all), a line at a time, and judge
    the run they record; an empty log or a cut last line is a crashed process's, and a
    snapshot it leaves open is unknown.  ``limit``: the most bytes read in all."""
    merge = LogMerge.of_files(paths, tolerant=True, whole_run=whole_run, limit=limit)
    v = judge(merge, invariant=invariant)
    require_events(merge.events, paths)
    return v
