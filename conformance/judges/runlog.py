"""The model-free log judge: EWD 864's rules and lemmas on a program's own run.

A program that schedules itself writes one event log per process (the format:
:mod:`redletter.conformance.eventlog`).  This judge needs no model: the run's
processes, its directed channels, the initial local states, the payloads
(opaque JSON values), the snapshot ids (any string or integer) and the starters
are all read from the logs.  Then, on that concrete run:

1. **The run itself.** The n-th receive on a channel is matched with the n-th
   send on it (FIFO); a receive whose message was sent later is a FIFO
   violation (a fail, naming both lines); a receive that matches no send, a
   happened-before cycle (a send logged after its message already caused
   something): an input error naming both lines (``RL-INPUT-LOG-CONFLICT``).
   A ``complete`` report that contradicts the process's own ``record_state`` or
   ``record_message`` lines is a fail naming both (the report is judged).  One total
   order consistent with program order and send-before-receive is built.
2. **EWD 864's rules, per snapshot,** judged on the run's real order (so an
   ``await`` between recording and sending is fine where the algorithm allows
   it): upon turning red, each machine records its own state (and the state it
   records is its state then); the receipt of a red letter turns a white
   machine red before it takes another message from that buffer; a red machine
   sends one red letter over each of its output buffers, after recording and
   before any other message on that buffer; each red machine records for each
   input buffer the stream of messages it receives from it as long as the buffer
   is white: no message missed, none recorded twice, none recorded after the
   buffer turned red, none taken in before the machine turned red, and no red
   letter recorded as a message.
3. **Lemma 0 and Lemma 1 concretely,** as Dijkstra's shadow networks replayed on
   the run's own events: from the state just before the first machine turned
   red, the white machines' actions must be possible and end in the recorded
   snapshot state; from the snapshot state the red machines' actions must be
   possible and end in the final state (when the last red letter is received).
4. **Completion.** A started snapshot that never completes is a fail (liveness)
   when every log ends cleanly (an ``end`` event, or ``whole_run``), and
   unknown, with the reason, when a log is empty, cut short or ends without its
   ``end`` (a process that crashed): never a pass.  A run without a snapshot is
   unknown too (nothing was judged).

Every finding is listed (:attr:`Validation.divergences`); the verdict is the
one :class:`~redletter.conformance.verdict.Verdict` every judge returns.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, TypeAlias

from redletter.conformance import protocol as p
from redletter.conformance.eventlog import LogEvent, SnapshotId, show
from redletter.conformance.judges.log import SnapshotCheck, Validation
from redletter.conformance.logcheck import check_logs, read_logs_tolerant, require_events
from redletter.conformance.verdict import Divergence, Verdict
from redletter.errors import InputError

__all__ = [
    "RULES",
    "Invariant",
    "Run",
    "build_run",
    "conserved_sum",
    "judge_run",
    "validate_run",
    "validate_run_files",
]

Json: TypeAlias = p.JsonValue
Chan: TypeAlias = tuple[str, str]
Key: TypeAlias = tuple[str, int]  #: (node, seq): one event
CONFLICT: Final = "RL-INPUT-LOG-CONFLICT"

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


def _canon(v: Json) -> str:
    return json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _chan(c: Chan) -> str:
    return f"{c[0]} -> {c[1]}"


def _snap(k: SnapshotId) -> str:
    return show(k)


def _list(vs: Sequence[Json]) -> str:
    return "[" + ", ".join(show(v) for v in vs) + "]"


def _conflict(ev: LogEvent, msg: str) -> InputError:
    return InputError(msg, code=CONFLICT, path=ev.path, line=ev.line)


_BASIC: Final = ("send", "receive", "internal")


def _is_app(ev: LogEvent) -> bool:
    return ev.event in _BASIC and ev.msg is not None and ev.msg[0] != "marker"


def _is_marker(ev: LogEvent, k: SnapshotId | None = None) -> bool:
    return (
        ev.event in ("send", "receive")
        and ev.msg is not None
        and ev.msg[0] == "marker"
        and (k is None or ev.msg[1] == k)
    )


@dataclass(frozen=True)
class Run:
    """A concrete run read from logs: per-node events, the FIFO matching of
    receives with sends, and one total order consistent with both."""

    nodes: tuple[str, ...]
    events: dict[str, tuple[LogEvent, ...]]  #: per node, in seq order
    order: tuple[LogEvent, ...]  #: one linearization of happened-before
    pos: dict[Key, int]  #: (node, seq) -> position in ``order``
    sent_by: dict[Key, LogEvent]  #: a receive -> its send
    received_by: dict[Key, LogEvent]  #: a send -> its receive
    chans: tuple[Chan, ...]  #: every directed channel (from init and traffic)
    unclean: tuple[str, ...]  #: why the logs may not hold the whole run
    findings: tuple[Divergence, ...]  #: FIFO violations found while matching
    declared: bool  #: every node's init lists its inputs and outputs

    def key(self, ev: LogEvent) -> Key:
        return (ev.node, ev.seq)

    def at(self, ev: LogEvent) -> int:
        return self.pos[(ev.node, ev.seq)]

    def inputs(self, node: str) -> list[Chan]:
        return [c for c in self.chans if c[1] == node]

    def outputs(self, node: str) -> list[Chan]:
        return [c for c in self.chans if c[0] == node]


def _div(
    run_pos: int, kind: str, ev: LogEvent, text: str, k: SnapshotId | None = None
) -> Divergence:
    """A finding at ``ev``; ``why`` names the snapshot it is about (if one)."""
    why = "" if k is None else f"snapshot {_snap(k)}"
    return Divergence(
        kind, ev.node, ev.describe(), text, why=why, step=run_pos + 1, path=ev.path, line=ev.line
    )


def build_run(
    logs: Sequence[Sequence[LogEvent]],
    *,
    unclean: Sequence[str] = (),
    whole_run: bool = False,
) -> Run:
    """Check the logs' integrity, match receives with sends and order the run.

    ``unclean``: reasons known before (an empty log, a cut last line);
    ``whole_run``: the logs hold the whole run even without ``end`` events."""
    check_logs([list(x) for x in logs])
    per: dict[str, list[LogEvent]] = {}
    for log in logs:
        for ev in log:
            per.setdefault(ev.node, []).append(ev)
    reasons = list(unclean)
    declared = True
    chans: dict[Chan, None] = {}
    for node, evs in per.items():
        evs.sort(key=lambda e: e.seq)
        for i, ev in enumerate(evs):
            if ev.event == "init" and i != 0:
                raise _conflict(
                    ev,
                    f"{node} logs init as its event {ev.seq}, after {evs[0].describe()} "
                    f"({evs[0].where}): init is a node's first event",
                )
            if ev.event == "end" and i != len(evs) - 1:
                nxt = evs[i + 1]
                raise _conflict(
                    nxt,
                    f"{node} logs {nxt.describe()} after its end ({ev.where}): end is a "
                    "node's last event",
                )
        first = evs[0]
        if first.event == "init" and first.inputs is not None and first.outputs is not None:
            for q in first.inputs:
                chans[(q, node)] = None
            for q in first.outputs:
                chans[(node, q)] = None
        else:
            declared = False
        if not whole_run and evs[-1].event != "end":
            reasons.append(
                f"{node}'s log ends without its end event ({evs[-1].where}): the process may "
                "have crashed or its log been cut short"
            )
    for evs in per.values():
        for ev in evs:
            if ev.event in ("send", "receive") and ev.channel is not None:
                chans.setdefault(ev.channel, None)
    for c in chans:
        for n in c:
            if n not in per:
                reasons.append(
                    f"no log holds {n}'s events (channel {_chan(c)}): give every process's log"
                )
    sends: dict[Chan, list[LogEvent]] = {c: [] for c in chans}
    recvs: dict[Chan, list[LogEvent]] = {c: [] for c in chans}
    for evs in per.values():
        for ev in evs:
            if ev.event == "send" and ev.channel is not None:
                sends[ev.channel].append(ev)
            elif ev.event == "receive" and ev.channel is not None:
                recvs[ev.channel].append(ev)
    sent_by: dict[Key, LogEvent] = {}
    received_by: dict[Key, LogEvent] = {}
    fifo: list[tuple[LogEvent, str]] = []
    for c in chans:
        free, rs = list(sends[c]), recvs[c]
        for i, r in enumerate(rs):
            if not free:
                ss = sends[c]
                if c[0] not in per or (not whole_run and per[c[0]][-1].event != "end"):
                    reasons.append(
                        f"{r.describe()} ({r.where}) has no send in the logs: the log of "
                        f"{c[0]} is missing or cut short"
                    )
                    continue
                last = f"its last at {ss[-1].where}" if ss else "none"
                raise _conflict(
                    r,
                    f"{r.describe()} has no send: {c[0]} logs {len(ss)} sends on "
                    f"{_chan(c)} ({last}) and this is receive {i + 1} on it; log every "
                    "send where the message leaves the process",
                )
            s = free[0]
            if s.msg != r.msg:
                later = next((x for x in free[1:] if x.msg == r.msg), None)
                if later is None:
                    raise _conflict(
                        r,
                        f"{r.describe()} matches no send: the next message sent on "
                        f"{_chan(c)} is {s.msg[0] if s.msg else '?'} {show(s.value)} "
                        f"({s.where}), and no later send on it carries this one",
                    )
                fifo.append(
                    (
                        r,
                        f"{_chan(c)} delivers {show(r.value)} (sent at {later.where}) before "
                        f"{show(s.value)}, sent before it ({s.where}): the channel is not "
                        f"FIFO ({RULES['fifo']})",
                    )
                )
                s = later
            free.remove(s)
            sent_by[(r.node, r.seq)] = s
            received_by[(s.node, s.seq)] = r
    # One total order: program order and every send before its receive (Kahn).
    heads = {n: 0 for n in per}
    taken: set[Key] = set()
    order: list[LogEvent] = []
    total = sum(len(v) for v in per.values())
    while len(order) < total:
        progress = False
        for n, evs in per.items():
            while heads[n] < len(evs):
                ev = evs[heads[n]]
                dep = sent_by.get((ev.node, ev.seq))
                if dep is not None and (dep.node, dep.seq) not in taken:
                    break
                order.append(ev)
                taken.add((ev.node, ev.seq))
                heads[n] += 1
                progress = True
        if not progress:
            stuck = [per[n][heads[n]] for n in per if heads[n] < len(per[n])]
            r = stuck[0]
            s = sent_by[(r.node, r.seq)]
            raise _conflict(
                r,
                f"{r.describe()} cannot follow its send ({s.where}): the logs make the send "
                f"follow events that this receive precedes (a happened-before cycle); "
                f"{s.node} logs the send after the message left the process: log it "
                "before the message is written",
            )
    pos = {(ev.node, ev.seq): i for i, ev in enumerate(order)}
    findings = tuple(
        _div(pos[(r.node, r.seq)], "not-fifo", r, text)
        for r, text in sorted(fifo, key=lambda x: pos[(x[0].node, x[0].seq)])
    )
    return Run(
        tuple(per),
        {n: tuple(v) for n, v in per.items()},
        tuple(order),
        pos,
        sent_by,
        received_by,
        tuple(chans),
        tuple(dict.fromkeys(reasons)),
        findings,
        declared,
    )


# -- local states -------------------------------------------------------------

_UNKNOWN: Final = object()


def _state_before(run: Run, node: str, seq: int) -> tuple[object, LogEvent | None]:
    """The node's state just before its event ``seq`` (``_UNKNOWN`` when a basic
    event since the last logged state carried none), and where it was logged."""
    cur: object = _UNKNOWN
    where: LogEvent | None = None
    for ev in run.events[node]:
        if ev.seq >= seq:
            break
        if ev.event == "init":
            cur, where = ev.state, ev
        elif _is_app(ev):
            cur, where = (ev.state, ev) if ev.has_state else (_UNKNOWN, ev)
    return cur, where


def _state_at(run: Run, node: str, at: int) -> object:
    """The node's state after every event of it at positions <= ``at``."""
    cur: object = _UNKNOWN
    for ev in run.events[node]:
        if run.at(ev) > at:
            break
        if ev.event == "init":
            cur = ev.state
        elif _is_app(ev):
            cur = ev.state if ev.has_state else _UNKNOWN
    return cur


# -- one snapshot -----------------------------------------------------------------

Invariant: TypeAlias = Callable[
    [dict[str, Json], dict[Chan, list[Json]], dict[str, Json]], str | None
]
"""An application invariant: (recorded states, recorded channels, initial states)
-> None when it holds, else what is wrong in words."""


def conserved_sum(field: str | None) -> Invariant:
    """The invariant "the recorded states and channels hold the initial total":
    a value counts as itself when a number, as its ``field`` when an object."""

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

    return check


class _Snapshot:
    """The checks of one snapshot ``k`` on the run."""

    def __init__(self, run: Run, k: SnapshotId) -> None:
        self.run, self.k = run, k
        self.out: list[Divergence] = []
        self.pending: list[Divergence] = []  # liveness: fail on a clean run, else unknown
        self.rec: dict[str, LogEvent] = {}
        self.start: dict[str, LogEvent] = {}
        self.marker_in: dict[Chan, LogEvent] = {}
        self.marker_out: dict[Chan, list[LogEvent]] = {}
        self.records: dict[Chan, list[LogEvent]] = {}
        self.complete: dict[str, LogEvent] = {}
        for n in run.nodes:
            for ev in run.events[n]:
                self._index(ev)

    def _index(self, ev: LogEvent) -> None:
        k = self.k
        if ev.event == "record_state" and ev.snapshot == k:
            first = self.rec.setdefault(ev.node, ev)
            if first is not ev:
                self.fail(
                    "record-state-twice",
                    ev,
                    f"{ev.node} records its state for snapshot {_snap(k)} a second time "
                    f"(first at {first.where}); {RULES['record-state']}, once",
                )
        elif ev.event == "start_snapshot" and ev.snapshot == k:
            self.start.setdefault(ev.node, ev)
        elif _is_marker(ev, k) and ev.channel is not None:
            if ev.event == "receive":
                self.marker_in.setdefault(ev.channel, ev)
            else:
                self.marker_out.setdefault(ev.channel, []).append(ev)
        elif ev.event == "record_message" and ev.snapshot == k and ev.channel is not None:
            self.records.setdefault(ev.channel, []).append(ev)
        elif ev.event == "complete" and ev.snapshot == k:
            self.complete.setdefault(ev.node, ev)

    def fail(self, kind: str, ev: LogEvent, text: str) -> None:
        self.out.append(_div(self.run.at(ev), kind, ev, text, self.k))

    def later(self, kind: str, ev: LogEvent, text: str) -> None:
        self.pending.append(_div(self.run.at(ev), kind, ev, text, self.k))

    # -- turning red ------------------------------------------------------------

    def turning_red(self) -> None:
        run, k = self.run, self.k
        for n in run.nodes:
            rec = self.rec.get(n)
            first_in = min(
                (e for c, e in self.marker_in.items() if c[1] == n),
                key=lambda e: e.seq,
                default=None,
            )
            st = self.start.get(n)
            if rec is not None:
                cause = [e for e in (first_in, st) if e is not None and e.seq < rec.seq]
                if not cause:
                    self.fail(
                        "record-without-marker",
                        rec,
                        f"{n} records its state for snapshot {_snap(k)} before any red letter "
                        f"of it reached {n} and without starting it ({RULES['starter']})",
                    )
                self._recorded_value(n, rec)
            if (
                first_in is not None
                and (rec is None or first_in.seq < rec.seq)
                and (st is None or st.seq > first_in.seq)
            ):
                c = first_in.channel
                assert c is not None
                took = next(
                    (
                        e
                        for e in run.events[n]
                        if e.seq > first_in.seq
                        and (rec is None or e.seq < rec.seq)
                        and e.event == "receive"
                        and e.channel == c
                    ),
                    None,
                )
                if took is not None:
                    self.fail(
                        "late-record",
                        took,
                        f"{n} takes this message from {_chan(c)} after red letter "
                        f"{_snap(k)} arrived on it ({first_in.where}) and before recording its "
                        + (f"state ({rec.where})" if rec else "state (it never does)")
                        + f"; {RULES['turn-red']}; its recorded state counts a message "
                        f"{c[0]} sent after turning red",
                    )
                elif rec is None:
                    self.later(
                        "never-red",
                        first_in,
                        f"{n} receives the red letter of snapshot {_snap(k)} while white and "
                        f"never records its state ({RULES['turn-red']})",
                    )
            if st is not None and rec is None:
                self.later(
                    "never-red",
                    st,
                    f"{n} starts snapshot {_snap(k)} and never records its state "
                    f"({RULES['record-state']})",
                )

    def _recorded_value(self, n: str, rec: LogEvent) -> None:
        was, where = _state_before(self.run, n, rec.seq)
        if was is _UNKNOWN or _canon(rec.state) == _canon(was):  # type: ignore[arg-type]
            return
        assert where is not None
        self.fail(
            "wrong-state",
            rec,
            f"{n} records {show(rec.state)}, but its state then was {show(was)} (after "  # type: ignore[arg-type]
            f"{where.where}); {RULES['record-state']}",
        )

    # -- red letters ---------------------------------------------------------------

    def red_letters(self) -> None:
        run, k = self.run, self.k
        for c in run.chans:
            n = c[0]
            if n not in run.events:
                continue
            rec = self.rec.get(n)
            sent = self.marker_out.get(c, [])
            for extra in sent[1:]:
                self.fail(
                    "extra-red-letter",
                    extra,
                    f"{n} sends red letter {_snap(k)} on {_chan(c)} again (first at "
                    f"{sent[0].where}); {RULES['one-red-letter']}",
                )
            if sent and (rec is None or sent[0].seq < rec.seq):
                # Logged before the state: fine when nothing goes on c in between
                # (the receipt of a red letter is one atomic action in EWD 864).
                behind = next(
                    (
                        e
                        for e in run.events[n]
                        if e.seq > sent[0].seq
                        and (rec is None or e.seq < rec.seq)
                        and e.event == "send"
                        and e.channel == c
                        and _is_app(e)
                    ),
                    None,
                )
                if behind is not None:
                    self.fail(
                        "red-letter-while-white",
                        behind,
                        f"{n} sent red letter {_snap(k)} on {_chan(c)} ({sent[0].where}) before "
                        "recording its state "
                        + (f"({rec.where})" if rec else "(it never does)")
                        + f" and sends this message on it in between: the message follows "
                        f"the red letter, so {c[1]} does not record it, yet {n}'s recorded "
                        f"state has sent it; {RULES['record-state']}, before its red letters",
                    )
                elif rec is None:
                    self.later(
                        "never-red",
                        sent[0],
                        f"{n} sends red letter {_snap(k)} on {_chan(c)} and never records its "
                        f"state ({RULES['record-state']})",
                    )
            if rec is None:
                continue
            marker = sent[0] if sent else None
            app = next(
                (
                    e
                    for e in run.events[n]
                    if e.seq > rec.seq
                    and e.event == "send"
                    and e.channel == c
                    and _is_app(e)
                    and (marker is None or e.seq < marker.seq)
                ),
                None,
            )
            if app is not None:
                self.fail(
                    "red-letter-order",
                    app,
                    f"{n} recorded its state for snapshot {_snap(k)} ({rec.where}) and sends "
                    f"this message on {_chan(c)} before red letter {_snap(k)} "
                    + (f"({marker.where})" if marker else "(never sent)")
                    + f"; {RULES['red-letter-first']}; "
                    + self._overtaken(app, c),
                )
            if marker is None:
                self.later(
                    "missing-red-letter",
                    rec,
                    f"{n} turned red here and never sends red letter {_snap(k)} on "
                    f"{_chan(c)} ({RULES['turn-red']})",
                )

    def _overtaken(self, app: LogEvent, c: Chan) -> str:
        """What became of an app message sent after its sender recorded, before the
        red letter on that channel."""
        r = self.run.received_by.get((app.node, app.seq))
        q = c[1]
        if r is None:
            return f"{q} never receives it"
        qrec = self.rec.get(q)
        closed = self.marker_in.get(c)
        if qrec is None or r.seq < qrec.seq:
            return (
                f"it reached {q} while {q} was still white ({r.where}), so {q}'s recorded "
                f"state counts a message that {app.node}'s recorded state has not sent"
            )
        if closed is None or r.seq < closed.seq:
            return (
                f"it reached {q} after {q} turned red and while {_chan(c)} was still white "
                f"({r.where}), so the recorded channel holds a message that "
                f"{app.node}'s recorded state has not sent"
            )
        return f"it reached {q} after the channel turned red ({r.where})"

    # -- channel recording --------------------------------------------------------

    def channels(self) -> dict[Chan, list[Json]]:
        """Check each channel's recording; the recorded contents per channel."""
        run, k = self.run, self.k
        got: dict[Chan, list[Json]] = {}
        for c in run.chans:
            n = c[1]
            if n not in run.events:
                continue
            rec = self.rec.get(n)
            closed = self.marker_in.get(c)
            lines = self.records.get(c, [])
            linked: dict[Key, LogEvent] = {}
            for line in lines:
                self._record_line(line, c, rec, closed, linked)
            comp = self.complete.get(n)
            report = dict(comp.channels).get(c[0]) if comp and comp.channels is not None else None
            values = [self._value_of(x) for x in lines]
            if (
                report is not None
                and lines
                and [_canon(v) for v in report] != [_canon(v) for v in values]
            ):
                assert comp is not None
                self.fail(
                    "report-contradicts-record",
                    comp,
                    f"{n}'s report of snapshot {_snap(k)} gives {_chan(c)} as "
                    f"{_list(report)}, but its record_message lines record {_list(values)} "
                    f"({lines[0].where} ...): it reports what it did not record",
                )
            got[c] = list(report) if report is not None else values
            if rec is None:
                continue
            due = [
                e
                for e in run.events[n]
                if e.seq > rec.seq
                and (closed is None or e.seq < closed.seq)
                and e.event == "receive"
                and e.channel == c
                and _is_app(e)
            ]
            if report is not None and not lines:
                want = [e.value for e in due]
                if [_canon(v) for v in report] != [_canon(v) for v in want]:
                    assert comp is not None
                    self.fail(
                        "wrong-channel",
                        comp,
                        f"{n} reports {_chan(c)} as {_list(report)} in snapshot {_snap(k)}; "
                        f"the messages it received on it after recording its state "
                        f"({rec.where}) and before the red letter "
                        + (f"({closed.where})" if closed else "(never)")
                        + f" are {_list(want)}; {RULES['record-channel']}",
                    )
                continue
            # A channel whose red letter never came cannot be judged short of a
            # record: a program may write a channel's stream when its red letter
            # arrives (the crash or the end came first).  The open channel is
            # judged below: liveness fail on a whole run, unknown on a cut one.
            for e in due if closed is not None else ():
                if closed is not None and (e.node, e.seq) not in linked:
                    self.fail(
                        "missing-record",
                        e,
                        f"{n} does not record this message of {_chan(c)} in snapshot "
                        f"{_snap(k)}: it came after {n} recorded its state ({rec.where}) and "
                        "before the red letter on the channel "
                        + f"({closed.where}); {RULES['record-channel']}",
                    )
            if closed is None:
                self.later(
                    "open-channel",
                    rec,
                    f"{_chan(c)} never turns red in snapshot {_snap(k)}: red letter "
                    f"{_snap(k)} never arrives on it ({RULES['liveness']})",
                )
        return got

    def _value_of(self, line: LogEvent) -> Json:
        if line.msg is not None and line.msg[0] == "marker":
            return {"marker": line.msg[1]}
        return line.value

    def _record_line(
        self,
        line: LogEvent,
        c: Chan,
        rec: LogEvent | None,
        closed: LogEvent | None,
        linked: dict[Key, LogEvent],
    ) -> None:
        run, k, n = self.run, self.k, c[1]
        evs = run.events[n]
        if line.of is not None:
            of = evs[line.of - 1] if 0 < line.of <= len(evs) else None
            if of is None or of.event != "receive" or of.channel != c or of.seq > line.seq:
                raise _conflict(
                    line,
                    f"this record_message says it records {n}'s event {line.of}, which is "
                    + (of.describe() + f" ({of.where})" if of else "not in the log")
                    + f", not an earlier receive on {_chan(c)}",
                )
        else:
            of = next(
                (
                    e
                    for e in reversed(evs[: line.seq - 1])
                    if e.event == "receive" and e.channel == c
                ),
                None,
            )
        as_marker = line.msg is not None and line.msg[0] == "marker"
        if as_marker or (of is not None and _is_marker(of)):
            what = of if of is not None and _is_marker(of) else line
            self.fail(
                "marker-recorded",
                line,
                f"{n} records the red letter of snapshot {show(what.value)} "
                + (f"(received at {what.where}) " if what is of else "")
                + f"as a message of {_chan(c)} in snapshot {_snap(k)}; a red letter is "
                f"not a message of the computation; {RULES['record-channel']}",
            )
            return
        if of is None:
            self.fail(
                "record-without-message",
                line,
                f"{n} records {show(line.value)} on {_chan(c)} in snapshot {_snap(k)}, but "
                f"has taken no message from {_chan(c)} before; {RULES['record-channel']}",
            )
            return
        first = linked.setdefault((of.node, of.seq), line)
        if first is not line:
            self.fail(
                "recorded-twice",
                line,
                f"{n} records the message received at {of.where} a second time in snapshot "
                f"{_snap(k)} (first at {first.where}); {RULES['record-channel']}, once each",
            )
            return
        if closed is not None and of.seq > closed.seq:
            self.fail(
                "record-after-close",
                line,
                f"{n} records {show(line.value)} on {_chan(c)} in snapshot {_snap(k)} after "
                f"the channel turned red: its red letter arrived at {closed.where} and this "
                f"message after it ({of.where}); {RULES['record-channel']}",
            )
        elif rec is None or of.seq < rec.seq:
            self.fail(
                "record-before-red",
                line,
                f"{n} records the message it received at {of.where} in snapshot {_snap(k)}, "
                f"but it took that message in before recording its state "
                + (f"({rec.where})" if rec else "(it never records it)")
                + f", so the message is in its recorded state already; {RULES['record-channel']}",
            )
        elif _canon(line.value) != _canon(of.value):
            self.fail(
                "wrong-record",
                line,
                f"{n} records {show(line.value)} for the message it received at {of.where}, "
                f"which is {show(of.value)}; {RULES['record-channel']}",
            )

    # -- completion ------------------------------------------------------------------

    def completion(self) -> bool:
        """Check complete events; whether the snapshot completed everywhere."""
        run, k = self.run, self.k
        done = not any(n not in run.events for c in run.chans for n in c)
        for n in run.nodes:
            ins = run.inputs(n)
            comp = self.complete.get(n)
            rec = self.rec.get(n)
            if rec is None:
                done = False
            late = [
                c
                for c in ins
                if comp is not None
                and (c not in self.marker_in or self.marker_in[c].seq > comp.seq)
            ]
            if any(c not in self.marker_in for c in ins):
                done = False
            if (
                comp is not None
                and rec is not None
                and comp.has_state
                and _canon(comp.state) != _canon(rec.state)
            ):
                self.fail(
                    "report-contradicts-record",
                    comp,
                    f"{n}'s report of snapshot {_snap(k)} gives its state as "
                    f"{show(comp.state)}, but it recorded {show(rec.state)} ({rec.where}): "
                    "it reports what it did not record",
                )
            if comp is not None and (rec is None or comp.seq < rec.seq):
                self.fail(
                    "early-complete",
                    comp,
                    f"{n} declares snapshot {_snap(k)} complete before recording its state; "
                    + RULES["complete"],
                )
            elif comp is not None and late:
                self.fail(
                    "early-complete",
                    comp,
                    f"{n} declares snapshot {_snap(k)} complete while "
                    + ", ".join(_chan(c) for c in late)
                    + (" is" if len(late) == 1 else " are")
                    + " still white (no red letter yet); "
                    + RULES["complete"],
                )
        return done

    # -- the shadow networks ------------------------------------------------------------

    def lemmas(
        self, recorded: dict[Chan, list[Json]]
    ) -> tuple[list[str], dict[str, Json], Divergence | None]:
        """Lemma 0 and Lemma 1 as shadow replays; (broken lemmas, states, finding)."""
        run, k = self.run, self.k
        reds = list(self.rec.values())
        s0 = min([run.at(e) for e in reds] + [run.at(e) for e in self.start.values()])
        sf = max(run.at(e) for e in self.marker_in.values()) if self.marker_in else s0
        states = {n: self.rec[n].state for n in run.nodes}
        shadow: dict[Chan, list[LogEvent]] = {c: [] for c in run.chans}
        for ev in run.order[:s0]:
            if ev.event == "send" and _is_app(ev) and ev.channel is not None:
                shadow[ev.channel].append(ev)
            elif ev.event == "receive" and _is_app(ev) and ev.channel is not None:
                sent = run.sent_by.get((ev.node, ev.seq))
                if sent is not None and sent in shadow[ev.channel]:
                    shadow[ev.channel].remove(sent)
        local: dict[str, object] = {n: _state_at(run, n, s0 - 1) for n in run.nodes}
        broken: list[str] = []
        found: Divergence | None = None

        def div(at: int, kind: str, ev: LogEvent, text: str) -> Divergence:
            return _div(at, kind, ev, text, k)

        def white(ev: LogEvent) -> bool:
            return ev.seq < self.rec[ev.node].seq

        # Lemma 0: the white machines' actions from the initial state.
        for ev in run.order[s0 : sf + 1]:
            if not (_is_app(ev) and white(ev)):
                continue
            if ev.event == "send" and ev.channel is not None:
                shadow[ev.channel].append(ev)
            elif ev.event == "receive" and ev.channel is not None:
                q = shadow[ev.channel]
                s = run.sent_by.get((ev.node, ev.seq))
                if s is None:
                    continue  # its send is not in the logs (the run is said unknown)
                if not q or q[0] is not s:
                    red_send = s.seq > self.rec[s.node].seq
                    why = (
                        f"its message was sent by {s.node} after it turned red ({s.where})"
                        if red_send
                        else f"the shadow buffer holds {_list([x.value for x in q])}"
                    )
                    broken.append("Lemma0")
                    found = found or div(
                        run.at(ev),
                        "Lemma0",
                        ev,
                        f"snapshot {_snap(k)} breaks {RULES['Lemma0']} here: the white "
                        f"machine {ev.node} cannot take this message in the shadow network: " + why,
                    )
                    break
                q.pop(0)
            local[ev.node] = ev.state if ev.has_state else _UNKNOWN
        if "Lemma0" not in broken:
            for c in run.chans:
                have = [x.value for x in shadow[c]]
                if [_canon(v) for v in have] != [_canon(v) for v in recorded.get(c, [])]:
                    broken.append("Lemma0")
                    at = self.rec.get(c[1])
                    assert at is not None
                    found = found or div(
                        run.at(at),
                        "Lemma0",
                        at,
                        f"snapshot {_snap(k)} breaks {RULES['Lemma0']}: the replay ends with "
                        f"{_chan(c)} holding {_list(have)}; the snapshot records "
                        f"{_list(recorded.get(c, []))}",
                    )
                    break
        if "Lemma0" not in broken:
            for n in run.nodes:
                v = local[n]
                if v is not _UNKNOWN and _canon(v) != _canon(states[n]):  # type: ignore[arg-type]
                    broken.append("Lemma0")
                    at = self.rec[n]
                    found = found or div(
                        run.at(at),
                        "Lemma0",
                        at,
                        f"snapshot {_snap(k)} breaks {RULES['Lemma0']}: the replay ends with "
                        f"{n} in the state {show(v)}; the snapshot records "  # type: ignore[arg-type]
                        f"{show(states[n])}",
                    )
                    break
        # Lemma 1: the red machines' actions from the snapshot state.
        red_q: dict[Chan, list[Json]] = {c: list(recorded.get(c, [])) for c in run.chans}
        for ev in run.order[s0 : sf + 1]:
            if not _is_app(ev) or white(ev):
                continue
            if ev.event == "send" and ev.channel is not None:
                red_q[ev.channel].append(ev.value)
            elif ev.event == "receive" and ev.channel is not None:
                q2 = red_q[ev.channel]
                if not q2 or _canon(q2[0]) != _canon(ev.value):
                    broken.append("Lemma1")
                    found = found or div(
                        run.at(ev),
                        "Lemma1",
                        ev,
                        f"snapshot {_snap(k)} breaks {RULES['Lemma1']} here: the red "
                        f"machine {ev.node} takes {show(ev.value)} from {_chan(ev.channel)}, "
                        f"but from the snapshot state the shadow buffer holds {_list(q2)}",
                    )
                    break
                q2.pop(0)
        if "Lemma1" not in broken:
            final: dict[Chan, list[Json]] = {c: [] for c in run.chans}
            for ev in run.order[: sf + 1]:
                if ev.event == "send" and _is_app(ev) and ev.channel is not None:
                    final[ev.channel].append(ev.value)
                elif (
                    ev.event == "receive"
                    and _is_app(ev)
                    and ev.channel is not None
                    and final[ev.channel]
                ):
                    final[ev.channel].pop(0)
            for c in run.chans:
                if [_canon(v) for v in red_q[c]] != [_canon(v) for v in final[c]]:
                    broken.append("Lemma1")
                    last = run.order[sf]
                    found = found or div(
                        sf,
                        "Lemma1",
                        last,
                        f"snapshot {_snap(k)} breaks {RULES['Lemma1']}: the replay ends with "
                        f"{_chan(c)} holding {_list(red_q[c])}; in the final state (after "
                        f"{last.where}) it holds {_list(final[c])}",
                    )
                    break
        return broken, states, found


def judge_run(run: Run, *, invariant: Invariant | None = None) -> Validation:
    """Judge a :class:`Run` (see the module docstring)."""
    ks: dict[SnapshotId, int] = {}
    for ev in run.order:
        k = ev.snapshot
        if k is None and _is_marker(ev):
            k = ev.value  # type: ignore[assignment]
        if k is not None and ev.event != "record_message":
            ks.setdefault(k, run.at(ev))
    findings: list[Divergence] = list(run.findings)
    pending: list[Divergence] = []
    checks: list[SnapshotCheck] = []
    init = {n: evs[0].state for n, evs in run.events.items() if evs and evs[0].event == "init"}
    for k in ks:
        sn = _Snapshot(run, k)
        sn.turning_red()
        sn.red_letters()
        recorded = sn.channels()
        done = sn.completion()
        own_fail = bool(sn.out)
        findings += sn.out
        pending += sn.pending
        if not done:
            missing = [n for n in run.nodes if n not in sn.rec]
            shut = [c for c in run.chans if c not in sn.marker_in and c[1] in run.events]
            unlogged = sorted({x for c in run.chans for x in c if x not in run.events})
            what = "; ".join(
                ([f"no log holds the events of {', '.join(unlogged)}"] if unlogged else [])
                + (
                    [
                        f"{', '.join(missing)} never recorded"
                        + (" its state" if len(missing) == 1 else " their states")
                    ]
                    if missing
                    else []
                )
                + (
                    [f"no red letter arrived on {', '.join(_chan(c) for c in shut)}"]
                    if shut
                    else []
                )
            )
            checks.append(SnapshotCheck(k, False, f"snapshot {_snap(k)}: never completes: {what}"))
            if not sn.pending:
                at = run.order[ks[k]]
                pending.append(
                    _div(
                        ks[k],
                        "liveness",
                        at,
                        f"snapshot {_snap(k)} never completes: {what} ({RULES['liveness']})",
                        k,
                    )
                )
            continue
        broken, states, found = sn.lemmas(recorded)
        if found is not None:
            findings.append(found)
        note = ""
        if invariant is not None:
            bad = invariant(states, recorded, init)
            if bad is not None:
                note = f"; the application's invariant does not hold: {bad}"
                at = max(sn.marker_in.values(), key=run.at)
                findings.append(_div(run.at(at), "invariant", at, f"snapshot {_snap(k)}: {bad}", k))
        ok = not own_fail and not broken and not note
        if ok:
            text = (
                f"snapshot {_snap(k)}: complete, consistent (Lemma 0 and Lemma 1 hold on "
                "this run), recorded as EWD 864 says"
            )
        else:
            text = (
                f"snapshot {_snap(k)}: wrong"
                + (": it breaks " + " and ".join(dict.fromkeys(broken)) if broken else "")
                + note
            )
        checks.append(SnapshotCheck(k, ok, text, tuple(dict.fromkeys(broken))))
    # The rules first (they say what the program did), then the lemmas they break.
    findings.sort(key=lambda d: (d.kind.startswith("Lemma") or d.kind == "invariant", d.step))
    pending.sort(key=lambda d: d.step)
    notes: list[str] = []
    if not run.declared:
        notes.append(
            "the channels are read from the traffic (no init event lists every node's inputs "
            "and outputs): a channel that carried nothing is not known"
        )
    live = [
        Divergence(
            d.kind if d.kind == "liveness" else f"liveness-{d.kind}",
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
    if findings:
        verdict = Verdict.FAIL
        alls = findings + (live if not run.unclean else [])
    elif pending and not run.unclean:
        verdict = Verdict.FAIL
        alls = live
        notes.append("every log ends with its end event, so the run is over: a liveness failure")
    elif pending or not ks:
        verdict = Verdict.UNKNOWN
        alls = []
        if not ks:
            notes.append("no snapshot in the logs: nothing to judge (start one in the run)")
        if pending:
            notes.append(
                "not judged: "
                + "; ".join(d.model_did for d in pending[:3])
                + ("; ..." if len(pending) > 3 else "")
            )
        if run.unclean:
            notes.append("the logs may not hold the whole run: " + "; ".join(run.unclean))
    else:
        verdict = Verdict.PASS
        alls = []
        if run.unclean:
            notes.append("every snapshot completed before the logs end; " + "; ".join(run.unclean))
    events = len(run.order)
    return Validation(
        verdict,
        events,
        alls[0] if alls else None,
        tuple(checks),
        tuple(notes),
        divergences=tuple(alls),
        what=f"events of {len(run.nodes)} processes judged on their own run (no model)",
    )


def validate_run(
    logs: Sequence[Sequence[LogEvent]],
    *,
    unclean: Sequence[str] = (),
    whole_run: bool = False,
    invariant: Invariant | None = None,
) -> Validation:
    """Build the run from parsed logs and judge it."""
    return judge_run(build_run(logs, unclean=unclean, whole_run=whole_run), invariant=invariant)


def validate_run_files(
    paths: Sequence[Path], *, whole_run: bool = False, invariant: Invariant | None = None
) -> Validation:
    """Read one log per process (or one holding them all) and judge the run they
    record; an empty log or a cut last line makes a snapshot it leaves open unknown."""
    logs, unclean = read_logs_tolerant(paths)
    require_events(logs, paths)
    return validate_run(
        [x for x in logs if x], unclean=unclean, whole_run=whole_run, invariant=invariant
    )
