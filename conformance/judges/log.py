"""The log judge: replay an implementation's own run, from its event log, in the model.

An implementation that runs its own scheduler (real sockets, threads, timers)
cannot be driven step by step; instead it writes an NDJSON event log (the format:
:mod:`redletter.conformance.eventlog`), and this judge replays that log in the
model (:mod:`redletter.python_model.actions`), event by event.

The replay: app actions and marker receipts are model actions (a receive must
find its message at the head of the channel, as the log itself sent it, and
the model must be able to take the step); the effects a node logs after an
action (markers sent, state and messages recorded, channels closed, snapshot
complete) are compared with what the model does in that step, as a multiset;
a marker the model sends must be logged before the node's next app send on
that channel.  The result (:class:`Validation`, a
:class:`~redletter.conformance.verdict.Result`) names the first event the model
cannot take (file, line, what the model expected) and says, for each snapshot,
whether the one the log records is the one the algorithm must record for that
execution, and which lemma it breaks if not.  Verdicts: ``pass``, ``fail``, or
``unknown`` where the logs cannot tell: a snapshot left open, or a step's records
still owed where a log without its end event stops (a crashed process's log, or
one cut short).
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, TypeAlias, cast

from redletter.conformance import protocol as p
from redletter.conformance.eventlog import ACTIONS, LogEvent, SnapshotId, show
from redletter.conformance.logcheck import MAX_LOGS_TOTAL, Ending, LogMerge, require_events, settle
from redletter.conformance.verdict import Divergence, Verdict
from redletter.errors import InputError
from redletter.python_model.actions import ActionDisabled, init_states, step
from redletter.python_model.config import ModelConfig
from redletter.python_model.invariants import replay
from redletter.python_model.state import GState, Local, State

__all__ = [
    "RULE_NAMES",
    "SnapshotCheck",
    "Validation",
    "validate",
    "validate_files",
    "validate_logs",
]

#: The name of every rule a finding of the model's replay cites (docs/instrument.md's
#: table of rules spells them): a finding's line starts with it.
RULE_NAMES: Final = (
    "missing-effect",
    "unexpected-record-state",
    "unexpected-record-message",
    "unexpected-close-channel",
    "unexpected-complete",
    "red-letter-order",
    "extra-red-letter",
    "missing-red-letter",
    "not-fifo",
    "wrong-message",
    "disabled",
    "wrong-state",
    "unknown-node",
    "unknown-channel",
    "unknown-snapshot",
    "liveness",
)

Json: TypeAlias = p.JsonValue


def _show(v: Json) -> str:
    return json.dumps(v, separators=(", ", ": "))


def _show_msgs(ms: Iterable[int]) -> str:
    return "[" + ", ".join(str(m) for m in ms) + "]"


def _chan(c: tuple[str, str]) -> str:
    return f"{c[0]} -> {c[1]}"


@dataclass(frozen=True)
class SnapshotCheck:
    """Whether the log's snapshot ``snapshot`` is the one the algorithm records."""

    snapshot: SnapshotId
    ok: bool
    message: str
    broken: tuple[str, ...] = ()  #: lemmas the log's snapshot breaks


@dataclass(frozen=True)
class Validation:
    """The log judge's result: the verdict, the first divergence, and a check of each
    snapshot the log records (a :class:`~redletter.conformance.verdict.Result`)."""

    verdict: Verdict
    events: int  #: how many events were replayed
    divergence: Divergence | None
    snapshots: tuple[SnapshotCheck, ...]
    notes: tuple[str, ...] = ()
    #: every divergence found, in run order (the first is :attr:`divergence`)
    divergences: tuple[Divergence, ...] = ()
    #: what the events were (after "N events" in the verdict line)
    what: str = "replayed in the model"
    #: the case of the cut rule the run is (:data:`~redletter.conformance.logcheck.CASES`)
    case: str = ""

    @property
    def first(self) -> Divergence | None:
        """The first divergence (the same as :attr:`divergence`)."""
        return self.divergence

    @property
    def schedule(self) -> None:
        """None: the log itself is the schedule."""
        return None

    def explanation(self) -> str:
        """The verdict in words (several lines): the verdict and the case of the cut
        rule; the first finding in full and the others one line each, each led by
        its rule's name; each snapshot; the notes.  No line is printed twice."""
        noun = "event" if self.events == 1 else "events"
        lines = [
            f"{self.verdict}: {self.events} {noun} {self.what}"
            + (f": {self.case}" if self.case else "")
        ]
        if self.divergence is not None:
            lines.append(f"{self.divergence.kind}: {self.divergence.describe()}")
        rest = [d for d in self.divergences if d is not self.divergence]
        if rest:
            lines.append(f"{len(rest)} more:")
            lines += [
                f"  {d.kind}"
                + (f" ({d.why})" if d.why and d.path is not None else "")
                + f": {d.path}:{d.line}: {d.summary}"
                for d in rest
            ]
        lines += [s.message for s in self.snapshots]
        lines += self.notes
        return "\n".join(dict.fromkeys(lines))

    def explain(self) -> str:
        """The verdict in words (the same as :meth:`explanation`)."""
        return self.explanation()


Effect: TypeAlias = tuple[object, ...]


@dataclass
class _Pending:
    ev: LogEvent
    order: int
    effects: list[Effect]


@dataclass
class _Recorded:
    states: dict[int, dict[str, Json]] = field(default_factory=dict)
    channels: dict[int, dict[tuple[str, str], list[int]]] = field(default_factory=dict)
    closed: dict[int, set[tuple[str, str]]] = field(default_factory=dict)
    completed: dict[int, dict[str, LogEvent]] = field(default_factory=dict)
    first_record: dict[int, dict[tuple[str, str], LogEvent]] = field(default_factory=dict)


def _describe_effect(e: Effect) -> str:
    kind = e[0]
    if kind == "record_state":
        return f"records the state {_show(cast(Json, e[3]))} of {e[2]} for snapshot {e[1]}"
    if kind == "record_message":
        c = cast(tuple[str, str], e[2])
        return f"records app {e[3]} on {_chan(c)} for snapshot {e[1]}"
    if kind == "close_channel":
        return f"closes {_chan(cast(tuple[str, str], e[2]))} in snapshot {e[1]}"
    return f"completes snapshot {e[1]} at {e[2]}"


class _Replay:
    def __init__(self, cfg: ModelConfig) -> None:
        self.cfg = cfg
        self.s: State = init_states(cfg)[0]
        self.log_net: dict[tuple[str, str], list[tuple[str, Json]]] = {c: [] for c in cfg.chans}
        self.pending: dict[str, _Pending] = {}
        self.markers: dict[str, list[tuple[tuple[str, str], int, LogEvent, int]]] = {}
        self.divergences: list[Divergence] = []
        self.rec = _Recorded()
        self.stopped = False
        #: what a log without its end event leaves owed at its end, in words
        self.cut: list[str] = []
        #: snapshot -> why it is not judged (a log cut inside its part)
        self.unjudged: dict[int, str] = {}

    def diverge(self, kind: str, ev: LogEvent, order: int, expected: str) -> None:
        assert kind in RULE_NAMES, kind  # every rule is named in the docs' table
        self.divergences.append(
            Divergence(
                kind, ev.node, ev.describe(), expected, step=order + 1, path=ev.path, line=ev.line
            )
        )

    # -- actions --------------------------------------------------------------

    def close_step(self, node: str, before: str) -> None:
        pend = self.pending.pop(node, None)
        if pend is None or not pend.effects:
            return
        missing = "; ".join(_describe_effect(e) for e in pend.effects)
        self.diverge(
            "missing-effect",
            pend.ev,
            pend.order,
            f"the model {missing} in this step; the log does not ({before})",
        )

    def action(self, ev: LogEvent, order: int) -> None:
        cfg = self.cfg
        if ev.event == "send" and ev.msg is not None and ev.msg[0] == "marker":
            self.marker_send(ev, order)
            return
        self.close_step(ev.node, f"next event of {ev.node}: line {ev.line}")
        if ev.node not in cfg.proc_index:
            self.diverge(
                "unknown-node",
                ev,
                order,
                f"{ev.node} is not a machine of {cfg.name} ({', '.join(cfg.procs)})",
            )
            self.stopped = True
            return
        assert ev.msg is not None or ev.event == "start_snapshot"
        if ev.event == "send":
            assert ev.channel is not None and ev.msg is not None
            for c, k, at, _ in self.markers.get(ev.node, []):
                if c == ev.channel:
                    self.diverge(
                        "red-letter-order",
                        ev,
                        order,
                        f"the model put marker {k} on {_chan(c)} when {ev.node} turned red "
                        f"({at.where}), before this app message; the log sends the app message "
                        "first, so it overtakes its red letter: whether its receiver is white or "
                        "red when it arrives, the snapshot counts a message that the sender's "
                        "recorded state has not sent (Lemma0 breaks)",
                    )
                    self.stopped = True
                    return
            action, params = "SendApp", {"c": list(ev.channel), "m": ev.msg[1]}
        elif ev.event == "internal":
            assert ev.msg is not None
            action, params = "InternalEvent", {"p": ev.node, "e": ev.msg[1]}
        elif ev.event == "start_snapshot":
            action, params = "StartSnapshot", {"p": ev.node, "k": ev.snapshot}
        else:
            assert ev.channel is not None and ev.msg is not None
            q = self.log_net.get(ev.channel)
            if q is None:
                self.diverge(
                    "unknown-channel",
                    ev,
                    order,
                    f"{_chan(ev.channel)} is not a channel of {cfg.name}",
                )
                self.stopped = True
                return
            if not q or q[0] != ev.msg:
                head = f"{q[0][0]} {q[0][1]}" if q else "nothing"
                self.diverge(
                    "not-fifo",
                    ev,
                    order,
                    f"the log sent {head} next on {_chan(ev.channel)}; a FIFO channel cannot "
                    f"deliver {ev.msg[0]} {ev.msg[1]} here",
                )
                self.stopped = True
                return
            ci = cfg.chan_index[ev.channel]
            mh = self.s.buf[ci][0] if self.s.buf[ci] else None
            want = ev.msg[1] if ev.msg[0] == "app" else -cast(int, ev.msg[1])
            if mh != want:
                shown = "nothing" if mh is None else (f"app {mh}" if mh >= 0 else f"marker {-mh}")
                self.diverge(
                    "wrong-message",
                    ev,
                    order,
                    f"the model has {shown} at the head of {_chan(ev.channel)}, "
                    f"not {ev.msg[0]} {ev.msg[1]}",
                )
                self.stopped = True
                return
            q.pop(0)
            action = "ReceiveApp" if ev.msg[0] == "app" else "ReceiveRedLetter"
            params = {"c": list(ev.channel), "i": 1}
        if ev.event == "send":
            assert ev.channel is not None and ev.msg is not None
            self.log_net[ev.channel].append(ev.msg)
        try:
            t = step(cfg, self.s, action, params)
        except ActionDisabled as exc:
            self.diverge("disabled", ev, order, f"the model cannot take it: {exc.message}")
            self.stopped = True
            return
        except InputError as exc:
            self.diverge("disabled", ev, order, f"the model cannot take it: {exc.message}")
            self.stopped = True
            return
        pi = cfg.proc_index[ev.node]
        if (
            ev.has_state
            and ev.event != "start_snapshot"
            and ev.state != cfg.app.local_to_json(t.local[pi])
        ):
            self.diverge(
                "wrong-state",
                ev,
                order,
                f"after it the model's state of {ev.node} is "
                f"{_show(cfg.app.local_to_json(t.local[pi]))}, the log says {_show(ev.state)}",
            )
        self.expect(ev, order, self.s, t)
        self.s = t

    def expect(self, ev: LogEvent, order: int, s: State, t: State) -> None:
        cfg = self.cfg
        pi = cfg.proc_index[ev.node]
        node = ev.node
        effects: list[Effect] = []
        for j, kid in enumerate(cfg.snaps):
            if s.rec_machine[j][pi] is None and t.rec_machine[j][pi] is not None:
                effects.append(
                    ("record_state", kid, node, cfg.app.local_to_json(t.rec_machine[j][pi]))
                )
            for c, chan in enumerate(cfg.chans):
                added = t.rec_buf[j][c][len(s.rec_buf[j][c]) :]
                for m in added:
                    effects.append(("record_message", kid, chan, m))
                if t.red_buf[j] >> c & 1 and not s.red_buf[j] >> c & 1:
                    effects.append(("close_channel", kid, chan))
            inm = cfg.in_mask[pi]
            if t.red_buf[j] & inm == inm and s.red_buf[j] & inm != inm:
                effects.append(("complete", kid, node))
        for c, chan in enumerate(cfg.chans):
            if cfg.chan_src[c] != pi:
                continue
            before = Counter(v for v in s.buf[c] if v < 0)
            after = Counter(v for v in t.buf[c] if v < 0)
            if ev.event == "receive" and ev.channel == chan:
                pass
            for v, n in (after - before).items():
                for _ in range(n):
                    self.markers.setdefault(node, []).append((chan, -v, ev, order))
        self.pending[node] = _Pending(ev, order, effects)

    # -- effects --------------------------------------------------------------

    def marker_send(self, ev: LogEvent, order: int) -> None:
        assert ev.channel is not None and ev.msg is not None
        k = cast(int, ev.msg[1])
        owed = self.markers.get(ev.node, [])
        for i, (c, kk, _, _) in enumerate(owed):
            if c == ev.channel and kk == k:
                del owed[i]
                if ev.channel in self.log_net:
                    self.log_net[ev.channel].append(ev.msg)
                return
        self.diverge(
            "extra-red-letter",
            ev,
            order,
            f"the model sends no marker {k} on {_chan(ev.channel)} here "
            f"(OneRedLetterPerBuffer: a machine sends one red letter per output channel, "
            f"when it turns red)",
        )
        self.stopped = True

    def effect(self, ev: LogEvent, order: int) -> None:
        cfg = self.cfg
        k = cast(int, ev.snapshot)
        assert k is not None
        rec = self.rec
        if ev.event == "record_state":
            rec.states.setdefault(k, {})[ev.node] = ev.state
            mine: Effect = ("record_state", k, ev.node, ev.state)
        elif ev.event == "record_message":
            assert ev.channel is not None and ev.msg is not None
            if ev.msg[0] == "marker":
                self.diverge(
                    "unexpected-record-message",
                    ev,
                    order,
                    f"a marker is not a message of the application: the model records "
                    f"only app messages on {_chan(ev.channel)}",
                )
                return
            if ev.node not in rec.completed.get(k, {}):
                rec.channels.setdefault(k, {}).setdefault(ev.channel, []).append(
                    cast(int, ev.msg[1])
                )
                rec.first_record.setdefault(k, {}).setdefault(ev.channel, ev)
            mine = ("record_message", k, ev.channel, ev.msg[1])
        elif ev.event == "close_channel":
            assert ev.channel is not None
            rec.closed.setdefault(k, set()).add(ev.channel)
            mine = ("close_channel", k, ev.channel)
        else:
            rec.completed.setdefault(k, {}).setdefault(ev.node, ev)
            mine = ("complete", k, ev.node)
        pend = self.pending.get(ev.node)
        if pend is not None and mine in pend.effects:
            pend.effects.remove(mine)
            return
        if k not in cfg.snap_index:
            self.diverge(
                "unknown-snapshot", ev, order, f"snapshot {k} is not a snapshot of {cfg.name}"
            )
            return
        j = cfg.snap_index[k]
        s = self.s
        pi = cfg.proc_index.get(ev.node)
        if pi is None:
            self.diverge("unknown-node", ev, order, f"{ev.node} is not a machine of {cfg.name}")
            return
        same = [e for e in (pend.effects if pend else []) if e[0] == mine[0] and e[1] == k]
        if ev.event == "record_state":
            if same:
                why = (
                    f"the model records {_show(cast(Json, same[0][3]))} "
                    "(the local state when it turned red)"
                )
            else:
                why = f"the model does not record the state of {ev.node} for snapshot {k} here"
        elif ev.event == "record_message":
            assert ev.channel is not None
            ci = cfg.chan_index.get(ev.channel)
            if not s.red[j] >> pi & 1:
                why = f"{ev.node} is white in snapshot {k}: nothing is recorded yet"
            elif ci is not None and s.red_buf[j] >> ci & 1:
                why = (
                    f"{_chan(ev.channel)} is closed (red) in snapshot {k}: its marker arrived, "
                    "so the model records nothing more on it"
                )
            elif same:
                why = "the model records " + ", ".join(
                    f"app {e[3]} on {_chan(cast(tuple[str, str], e[2]))}" for e in same
                )
            else:
                why = f"the model records app {ev.msg and ev.msg[1]} once, in the receive step"
        elif ev.event == "close_channel":
            assert ev.channel is not None
            why = (
                f"the model does not close {_chan(ev.channel)} in snapshot {k} here "
                f"(a channel closes when its own marker {k} arrives on it)"
            )
        else:
            white = [
                _chan(c)
                for ci, c in enumerate(cfg.chans)
                if cfg.chan_dst[ci] == pi and not s.red_buf[j] >> ci & 1
            ]
            why = f"the model does not complete snapshot {k} at {ev.node} here: " + (
                ", ".join(white)
                + (" is" if len(white) == 1 else " are")
                + f" still white (open) in snapshot {k}"
                if white
                else "it already did"
            )
        self.diverge("unexpected-" + ev.event.replace("_", "-"), ev, order, why)

    # -- the end ---------------------------------------------------------------

    def finish(self, ended: frozenset[str]) -> None:
        """What the logs still owe at their end.  A log with its end event is whole,
        so an effect or a marker it never logs is missing (fail); a log without one
        may be a crashed process's or cut short, so what it owes at its end is not
        known (the snapshots it concerns are not judged)."""
        for node in list(self.pending):
            if node in ended:
                self.close_step(node, "the log ends")
                continue
            pend = self.pending.pop(node)
            if pend.effects:
                owed = "; ".join(_describe_effect(e) for e in pend.effects)
                self.cut_short(
                    node,
                    {cast(int, e[1]) for e in pend.effects},
                    f"{pend.ev.where}: {node}'s log ends in the step of {pend.ev.describe()}, "
                    f"where the model {owed}",
                )
        for node, owed_markers in self.markers.items():
            for c, k, at, at_order in owed_markers:
                if node not in ended:
                    self.cut_short(
                        node,
                        {k},
                        f"{at.where}: the model sends marker {k} on {_chan(c)} when {node} "
                        f"turns red, and {node}'s log ends before it does",
                    )
                    continue
                self.diverge(
                    "missing-red-letter",
                    at,
                    at_order,
                    f"the model sends marker {k} on {_chan(c)} when {node} turns red; the log "
                    f"never does (RedLetterInvariant: a channel from a red machine to a white "
                    f"one holds one red letter)",
                )

    def cut_short(self, node: str, snaps: set[int], what: str) -> None:
        self.cut.append(
            f"{what}; its log has no end event (a process that crashed, or a log cut "
            "short): whether it would have is not known"
        )
        for k in snaps:
            self.unjudged.setdefault(
                k, f"{node}'s log ends without its end event before it logs its part"
            )


def _log_snapshot(cfg: ModelConfig, rec: _Recorded, k: int) -> tuple[GState | None, list[str]]:
    """The snapshot k the log records, as a model GState (None if a state is missing)."""
    problems: list[str] = []
    states = rec.states.get(k, {})
    done = rec.completed.get(k, {})
    locs: list[Local | None] = []
    for node in cfg.procs:
        comp = done.get(node)
        v = comp.state if comp is not None and comp.has_state else states.get(node)
        if node not in states and not (comp is not None and comp.has_state):
            problems.append(f"{node} recorded no state")
            locs.append(None)
            continue
        loc = cfg.app.local_from_json(v)
        if loc is None:
            problems.append(f"{node} recorded {_show(v)}, not a {cfg.app_module} state")
        locs.append(loc)
    bufs: list[tuple[int, ...]] = []
    for ci, chan in enumerate(cfg.chans):
        dst = cfg.procs[cfg.chan_dst[ci]]
        comp = done.get(dst)
        if comp is not None and comp.channels is not None:
            report = cast(tuple[int, ...], dict(comp.channels).get(chan[0], ()))
            lines = rec.channels.get(k, {}).get(chan)
            if lines and tuple(lines) != report:
                first = rec.first_record[k][chan]
                problems.append(
                    f"{dst}'s report of it ({comp.where}) gives {_chan(chan)} as "
                    f"{_show_msgs(report)}, but its record_message lines record "
                    f"{_show_msgs(lines)} ({first.where} ...): it reports what it did not record"
                )
            bufs.append(report)
        else:
            bufs.append(tuple(rec.channels.get(k, {}).get(chan, [])))
    if any(x is None for x in locs):
        return None, problems
    return (tuple(locs), tuple(bufs)), problems


def _judge_snapshots(
    cfg: ModelConfig,
    s: State,
    rec: _Recorded,
    stopped_at: LogEvent | None = None,
    unjudged: dict[int, str] | None = None,
) -> list[SnapshotCheck]:
    out: list[SnapshotCheck] = []
    for j, k in enumerate(cfg.snaps):
        if s.s0[j] is None:
            continue
        if unjudged and k in unjudged:
            out.append(SnapshotCheck(k, True, f"snapshot {k}: not judged: {unjudged[k]}"))
            continue
        if s.sf[j] is None:
            why = (
                f"not judged: the replay stopped at {stopped_at.where}, before it completes"
                if stopped_at is not None
                else "not complete when the log ends"
            )
            out.append(SnapshotCheck(k, True, f"snapshot {k}: {why}"))
            continue
        missing = [n for n in cfg.procs if n not in rec.completed.get(k, {})]
        got, problems = _log_snapshot(cfg, rec, k)
        want: GState = (s.rec_machine[j], s.rec_buf[j])
        notes: list[str] = []
        if missing:
            notes.append(f"{', '.join(missing)} never reported it complete")
        if got is None:
            out.append(
                SnapshotCheck(
                    k,
                    False,
                    f"snapshot {k}: incomplete in the log: " + "; ".join(problems + notes),
                    ("SnapshotsComplete",),
                )
            )
            continue
        notes += problems  # (a complete report that contradicts the record lines)
        if got == want and not missing and not notes:
            out.append(SnapshotCheck(k, True, f"snapshot {k}: the one the algorithm must record"))
            continue
        diffs: list[str] = []
        for pi, node in enumerate(cfg.procs):
            if got[0][pi] != want[0][pi]:
                diffs.append(
                    f"{node}'s state is {_show(cfg.app.local_to_json(got[0][pi]))}, the algorithm "
                    f"records {_show(cfg.app.local_to_json(want[0][pi]))}"
                )
        for ci, chan in enumerate(cfg.chans):
            if got[1][ci] != want[1][ci]:
                diffs.append(
                    f"{_chan(chan)} holds {_show_msgs(got[1][ci])}, the algorithm records "
                    f"{_show_msgs(want[1][ci])}"
                )
        broken: list[str] = []
        s0, sf = s.s0[j], s.sf[j]
        assert s0 is not None
        ok0, g0 = replay(cfg, s0, s.white_acts[j])
        if not (ok0 and g0 == got):
            broken.append("Lemma0")
        ok1, g1 = replay(cfg, got, s.red_acts[j])
        if not (ok1 and g1 == sf):
            broken.append("Lemma1")
        words = {
            "Lemma0": "Lemma0 (replaying the white machines' actions from S0 does not end in it)",
            "Lemma1": "Lemma1 (replaying the red machines' actions from it does not end in Sf)",
        }
        tail = "; it breaks " + " and ".join(words[b] for b in broken) if broken else ""
        out.append(
            SnapshotCheck(
                k,
                False,
                f"snapshot {k}: not the one the algorithm must record: "
                + "; ".join(diffs + notes)
                + tail,
                tuple(broken),
            )
        )
    return out


def _model_value(cfg: ModelConfig, ev: LogEvent) -> None:
    """Raise an InputError at an event a model cannot hold: a payload or snapshot id
    that is not an integer, or a message in two halves (an apply event, a split send
    or receive: the model takes a message as one step)."""

    def whole(v: object, low: int) -> bool:
        return type(v) is int and v >= low

    if ev.event == "apply" or ev.split or (ev.event == "send" and ev.of is not None):
        raise InputError(
            f"{ev.describe()}: the model {cfg.name} takes a send or a receipt as one step, "
            "so it cannot replay a message whose state change is logged on its own (an apply "
            "event, or a split send or receive); judge the logs on their own run instead, "
            "without a model, which judges both halves: "
            ".venv/bin/redletter conform validate --from-log LOG...",
            code="RL-INPUT-LOG",
            path=ev.path,
            line=ev.line,
        )
    bad: object = None
    if ev.snapshot is not None and not whole(ev.snapshot, 1):
        bad = ev.snapshot
    elif ev.msg is not None and not whole(ev.msg[1], 1 if ev.msg[0] == "marker" else 0):
        bad = ev.msg[1]
    elif ev.channels is not None and not all(whole(m, 0) for _, ms in ev.channels for m in ms):
        bad = next(m for _, ms in ev.channels for m in ms if not whole(m, 0))
    if bad is not None:
        raise InputError(
            f"{ev.describe()}: the model {cfg.name} holds integer payloads (>= 0) and "
            f"integer snapshot ids (>= 1), not {show(cast(Json, bad))}; judge the logs "
            "on their own run instead, without a model: "
            ".venv/bin/redletter conform validate --from-log LOG...",
            code="RL-INPUT-LOG",
            path=ev.path,
            line=ev.line,
        )


def validate(
    cfg: ModelConfig,
    events: Iterable[LogEvent],
    *,
    whole_run: bool = False,
    may_be_cut: bool = True,
    merge: LogMerge | None = None,
) -> Validation:
    """Replay ``events`` (one total order; a list, or a :class:`LogMerge` streaming
    files) in model ``cfg``; see the module docstring.

    A log that ends with its end event (every log, with ``whole_run``) holds its
    process's whole run: what it never logs is missing.  A log without one may be a
    crashed process's or cut short: what it owes at its end makes the snapshots it
    concerns not judged, never a fail; the verdict then follows the one cut rule of
    :func:`~redletter.conformance.logcheck.settle`.  ``may_be_cut`` False: every
    log holds all its process did, though the run may stop early (a driver's run,
    stopped by the driver): what a log owes at its end is missing, and a snapshot
    left open is unknown.  ``merge``: the merge ``events`` come from (it says how the
    logs end: empty, cut mid-line, or whole)."""
    # MaxAppActions bounds the application for model checking (the guard
    # AppBudgetLeft); a real execution has no such bound, so the replay lifts it.
    cfg = dataclasses.replace(cfg, max_app_actions=sys.maxsize)
    r = _Replay(cfg)
    n = 0
    seen: set[str] = set()
    ends: set[str] = set()
    first_of: dict[int, tuple[LogEvent, int]] = {}  # snapshot -> the event that started it
    stopped_at: LogEvent | None = None
    stop_n = 0
    it = iter(events)
    for order, ev in enumerate(it):
        n += 1
        seen.add(ev.node)
        _model_value(cfg, ev)
        if ev.event in ("init", "end"):
            if ev.event == "end":
                ends.add(ev.node)
            continue  # the model's own initial state and end are checked as they are
        started = [j for j, g in enumerate(r.s.s0) if g is not None]
        if ev.event in ACTIONS:
            r.action(ev, order)
        else:
            r.effect(ev, order)
        for j, g in enumerate(r.s.s0):
            if g is not None and j not in started:
                first_of.setdefault(j, (ev, order))
        if r.stopped:
            stopped_at, stop_n = ev, n
            break
    for ev in it:  # the rest of the logs: read, so a damaged one is still an error
        n += 1
        seen.add(ev.node)
        _model_value(cfg, ev)
        if ev.event == "end":
            ends.add(ev.node)
    ended = frozenset(cfg.procs) if whole_run else frozenset(ends)
    whole = whole_run or (set(cfg.procs) <= ended and (merge is None or merge.ending.whole))
    if not r.stopped:
        r.finish(ended if may_be_cut else frozenset(cfg.procs))
    first = min(r.divergences, key=lambda d: d.step) if r.divergences else None
    snaps = _judge_snapshots(cfg, r.s, r.rec, stopped_at, r.unjudged)
    notes: list[str] = []
    if r.stopped:
        notes.append(
            f"the replay stopped at the first event the model cannot take ({stop_n} of {n})"
        )
    started = [j for j, g in enumerate(r.s.s0) if g is not None]
    open_ = [j for j in started if r.s.sf[j] is None or cfg.snaps[j] in r.unjudged]
    liveness: list[Divergence] = []
    if open_ and whole and not r.stopped:
        for j in open_:
            if cfg.snaps[j] in r.unjudged:
                continue
            got = first_of.get(j)
            if got is not None:
                at, at_order = got
                liveness.append(
                    Divergence(
                        "liveness",
                        at.node,
                        at.describe(),
                        f"snapshot {cfg.snaps[j]} never completes, and the logs hold the whole "
                        "run (SnapshotsComplete: every started snapshot completes)",
                        step=at_order + 1,
                        path=at.path,
                        line=at.line,
                    )
                )
    failed = first is not None or not all(v.ok for v in snaps) or bool(liveness)
    reasons = list(merge.ending.reasons) if merge is not None else []
    reasons += [
        f"{p}'s log ends without its end event (a process that crashed, or a log cut short)"
        for p in cfg.procs
        if p not in ended and p in seen and merge is None
    ] + [f"no log holds {p}'s events" for p in cfg.procs if p not in seen]
    ending = Ending(whole, tuple(dict.fromkeys(reasons)))
    verdict, case = settle(failed=failed, snapshots=len(started), open_=len(open_), ending=ending)
    if open_ and not whole and not r.stopped:
        ks = ", ".join(str(cfg.snaps[j]) for j in open_ if cfg.snaps[j] not in r.unjudged)
        unended = ", ".join(p for p in cfg.procs if p not in ended)
        if ks and failed:
            notes.append(
                f"snapshot {ks} never completes in this execution (SnapshotsComplete: every "
                "started snapshot completes)"
            )
        elif ks:
            notes.append(
                f"snapshot {ks} is not complete when the logs end, and the log of {unended} "
                "has no end event (a process that crashed, or a log cut short): whether it "
                "completes is not known"
            )
    if not started:
        notes.append("no snapshot in the logs: nothing to judge (start one in the run)")
    notes += r.cut
    if not ending.whole and ending.reasons:
        notes.append("the logs may not hold the whole run: " + "; ".join(ending.reasons[:5]))
    divs = sorted(r.divergences, key=lambda d: d.step) + liveness
    return Validation(
        verdict,
        n,
        divs[0] if divs else None,
        tuple(snaps),
        tuple(dict.fromkeys(notes)),
        divergences=tuple(divs),
        case=case,
    )


def validate_logs(
    cfg: ModelConfig, logs: Sequence[Sequence[LogEvent]], *, whole_run: bool = False
) -> Validation:
    """:func:`validate_files` for logs already parsed (one list per process, or one
    holding them all): merged and checked as the files are, and read as a crashed
    run's where a log is empty or has no end event."""
    merge = LogMerge.of_lists(logs, tolerant=True, whole_run=whole_run)
    for i, log in enumerate(logs):
        if not log:
            merge.unclean.append(f"log {i + 1} is empty: its process wrote no event")
    return validate(cfg, (ev for _, ev, _ in merge), whole_run=whole_run, merge=merge)


def validate_files(
    cfg: ModelConfig,
    paths: Sequence[Path],
    *,
    whole_run: bool = False,
    limit: int = MAX_LOGS_TOTAL,
) -> Validation:
    """Read one log or one log per node a line at a time, merged and checked as they
    are read (:class:`~redletter.conformance.logcheck.LogMerge`: a damaged log is an
    input error naming file and line, never a verdict; an empty log or a cut last line
    is a crashed process's), and replay them in ``cfg``."""
    merge = LogMerge.of_files(paths, tolerant=True, whole_run=whole_run, limit=limit)
    v = validate(cfg, (ev for _, ev, _ in merge), whole_run=whole_run, merge=merge)
    require_events(merge.events, paths)
    return v
