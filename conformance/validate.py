"""Validate an event log: replay an implementation's own run in the model.

An implementation that runs its own scheduler (real sockets, threads, timers)
cannot be driven step by step; instead it writes an NDJSON event log, and the
kit replays that log in the model (:mod:`redletter.python_model.actions`), event by event.

The log format (NDJSON: one JSON object per line, UTF-8; blank lines skipped)::

    {"node": "p1", "seq": 4, "vc": {"p1": 4, "p2": 2}, "event": "receive",
     "channel": ["p2", "p1"], "msg": {"app": 3}, "state": 5}

``node`` (string, required)
    the machine that logged the event.
``seq`` (integer >= 1, required)
    the event's number at that node, strictly increasing in the node's events.
``vc`` (object node -> integer, optional)
    a vector clock: ``vc[q]`` is the ``seq`` of the last event of ``q`` that
    happened before this one (``vc[node]`` is ``seq``).
``event`` (required), one of
    ``send`` (``channel`` [node, q], ``msg``; an app send is the model's
    ``SendApp``, a marker send an effect of turning red), ``receive``
    (``channel`` [q, node], ``msg``: ``ReceiveApp`` or ``ReceiveRedLetter``),
    ``internal`` (``msg`` {"internal": e}: ``InternalEvent``),
    ``start_snapshot`` (``snapshot``: ``StartSnapshot``), and the recording
    effects ``record_state`` (``snapshot``, ``state``), ``record_message``
    (``snapshot``, ``channel`` [q, node], ``msg`` {"app": n}),
    ``close_channel`` (``snapshot``, ``channel`` [q, node]) and ``complete``
    (``snapshot``; optionally the node's report for it: ``state`` and
    ``channels`` {source: [payloads]}).
``channel`` ([src, dst]), ``msg`` ({"app": n} with n >= 0, {"marker": k}, or
{"internal": e}), ``snapshot`` (integer >= 1), ``state`` (the node's app state
as JSON: a token count, {"active", "sent", "recvd"}, or a list of event names;
on an app action the state *after* it, optional).

Several logs (one per node) are merged into one total order consistent with
their vector clocks and with FIFO channels (the n-th receive on a channel after
the n-th send on it); one log holding every node is taken in file order.

The replay: app actions and marker receipts are model actions (a receive must
find its message at the head of the channel, as the log itself sent it, and
the model must be able to take the step); the effects a node logs after an
action (markers sent, state and messages recorded, channels closed, snapshot
complete) are compared with what the model does in that step, as a multiset;
a marker the model sends must be logged before the node's next app send on
that channel.  The result (:class:`Validation`) names the first event the
model cannot take (file, line, what the model expected) and says, for each
snapshot, whether the one the log records is the one the algorithm must
record for that execution, and which lemma it breaks if not.

:func:`drive_and_log` produces such a log from a node run under the
:class:`~redletter.conformance.driver.Driver` (for tests and for the mutant zoo).
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeAlias, cast

from redletter.conformance import protocol as p
from redletter.conformance.driver import Driver, InProcessTransport
from redletter.conformance.net import Topology
from redletter.conformance.node import NodeFactory, NodeHost
from redletter.errors import InputError, RedletterError
from redletter.python_model.actions import (
    ActionDisabled,
    app_action_bound,
    init_states,
    step,
    successors,
)
from redletter.python_model.config import ModelConfig
from redletter.python_model.invariants import replay
from redletter.python_model.state import GState, Local, State

__all__ = [
    "EVENTS",
    "Divergence",
    "LogEvent",
    "SnapshotVerdict",
    "Validation",
    "drive_and_log",
    "dump_log",
    "json_of_local",
    "local_of_json",
    "merge_logs",
    "model_walk",
    "parse_log",
    "read_log",
    "validate",
    "validate_files",
]

EVENTS = (
    "send",
    "receive",
    "internal",
    "start_snapshot",
    "record_state",
    "record_message",
    "close_channel",
    "complete",
)
ACTIONS = frozenset({"send", "receive", "internal", "start_snapshot"})
Json: TypeAlias = p.JsonValue
ScheduleStep: TypeAlias = tuple[str, dict[str, object]]
CODE = "RL-INPUT-LOG"


# --------------------------------------------------------------------------- events


@dataclass(frozen=True)
class LogEvent:
    """One line of a log.  ``msg``: ("app", n), ("marker", k), ("internal", e) or None."""

    node: str
    seq: int
    event: str
    vc: tuple[tuple[str, int], ...] | None = None
    channel: tuple[str, str] | None = None
    msg: tuple[str, int] | None = None
    snapshot: int | None = None
    state: Json = None
    has_state: bool = False
    channels: tuple[tuple[str, tuple[int, ...]], ...] | None = None
    path: str = "<log>"
    line: int = 0

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"

    def describe(self) -> str:
        """``p2 receive marker 1 on p1 -> p2``."""
        parts = [self.node, self.event.replace("_", " ")]
        if self.msg is not None:
            parts.append(f"{self.msg[0]} {self.msg[1]}")
        if self.channel is not None:
            parts.append(f"on {self.channel[0]} -> {self.channel[1]}")
        if self.snapshot is not None and self.event not in ("send", "receive"):
            parts.append(f"for snapshot {self.snapshot}")
        return " ".join(parts)


def _bad(msg: str, path: str, line: int) -> InputError:
    return InputError(msg, code=CODE, path=path, line=line)


def _field_int(obj: Mapping[str, object], key: str, path: str, line: int, low: int) -> int:
    v = obj.get(key)
    if type(v) is not int or v < low:
        raise _bad(f"'{key}' must be an integer >= {low}, got {json.dumps(v)}", path, line)
    return v


def _field_channel(obj: Mapping[str, object], path: str, line: int) -> tuple[str, str]:
    v = obj.get("channel")
    if not (isinstance(v, list) and len(v) == 2 and all(isinstance(x, str) for x in v)):
        raise _bad(f"'channel' must be [src, dst] (two strings), got {json.dumps(v)}", path, line)
    return (str(v[0]), str(v[1]))


def _field_msg(obj: Mapping[str, object], path: str, line: int) -> tuple[str, int]:
    v = obj.get("msg")
    if isinstance(v, dict) and len(v) == 1:
        ((kind, n),) = v.items()
        low = 1 if kind == "marker" else 0
        if kind in ("app", "marker", "internal") and type(n) is int and n >= low:
            return (str(kind), n)
    raise _bad(
        '\'msg\' must be {"app": n >= 0}, {"marker": k >= 1} or {"internal": e >= 0}, '
        f"got {json.dumps(v)}",
        path,
        line,
    )


def parse_line(text: str, *, path: str = "<log>", line: int = 1) -> LogEvent:
    """Parse one NDJSON line into a :class:`LogEvent` (InputError with file and line)."""
    try:
        obj = json.loads(text)
    except ValueError as exc:
        raise _bad(f"not JSON: {exc}", path, line) from None
    except RecursionError:
        raise _bad("not JSON: nested too deeply", path, line) from None
    if not isinstance(obj, dict):
        raise _bad(f"expected a JSON object, got {type(obj).__name__}", path, line)
    node = obj.get("node")
    if not isinstance(node, str) or not node:
        raise _bad(f"'node' must be a non-empty string, got {json.dumps(node)}", path, line)
    seq = _field_int(obj, "seq", path, line, 1)
    event = obj.get("event")
    if event not in EVENTS:
        raise _bad(
            f"'event' must be one of {', '.join(EVENTS)}, got {json.dumps(event)}", path, line
        )
    vc_raw = obj.get("vc")
    vc: tuple[tuple[str, int], ...] | None = None
    if vc_raw is not None:
        if not (
            isinstance(vc_raw, dict) and all(type(x) is int and x >= 0 for x in vc_raw.values())
        ):
            raise _bad(
                f"'vc' must map nodes to integers >= 0, got {json.dumps(vc_raw)}", path, line
            )
        vc = tuple(sorted((str(k), int(x)) for k, x in vc_raw.items()))
    channel = msg = snapshot = None
    if event in ("send", "receive", "record_message", "close_channel"):
        channel = _field_channel(obj, path, line)
        end = channel[0] if event == "send" else channel[1]
        if end != node:
            side = "src" if event == "send" else "dst"
            raise _bad(
                f"a {event} event of {node} must have {node} as the channel's {side}, "
                f"got {channel[0]} -> {channel[1]}",
                path,
                line,
            )
    if event in ("send", "receive", "record_message", "internal"):
        msg = _field_msg(obj, path, line)
        want = {"internal": ("internal",), "record_message": ("app",)}.get(
            str(event), ("app", "marker")
        )
        if msg[0] not in want:
            raise _bad(f"a {event} event's 'msg' cannot be {{\"{msg[0]}\": ...}}", path, line)
    if event in ("start_snapshot", "record_state", "record_message", "close_channel", "complete"):
        snapshot = _field_int(obj, "snapshot", path, line, 1)
    if event == "record_state" and "state" not in obj:
        raise _bad("a record_state event needs 'state'", path, line)
    channels: tuple[tuple[str, tuple[int, ...]], ...] | None = None
    if event == "complete" and "channels" in obj:
        ch = obj["channels"]
        if not (
            isinstance(ch, dict)
            and all(
                isinstance(v, list) and all(type(x) is int and x >= 0 for x in v)
                for v in ch.values()
            )
        ):
            raise _bad(
                f"'channels' must map sources to lists of payloads, got {json.dumps(ch)[:80]}",
                path,
                line,
            )
        channels = tuple(sorted((str(k), tuple(int(x) for x in v)) for k, v in ch.items()))
    return LogEvent(
        node,
        seq,
        str(event),
        vc,
        channel,
        msg,
        snapshot,
        cast(Json, obj.get("state")),
        "state" in obj,
        channels,
        path,
        line,
    )


def parse_log(data: str | bytes, *, path: str = "<log>") -> list[LogEvent]:
    """Parse a whole NDJSON log; per node, ``seq`` must increase strictly."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(
                f"expected UTF-8 text, got a byte that is not UTF-8 at offset {exc.start}",
                code=CODE,
                path=path,
            ) from None
    out: list[LogEvent] = []
    last: dict[str, tuple[int, int]] = {}
    for no, raw in enumerate(data.splitlines(), start=1):
        if not raw.strip():
            continue
        ev = parse_line(raw, path=path, line=no)
        prev = last.get(ev.node)
        if prev is not None and ev.seq <= prev[0]:
            raise _bad(
                f"seq {ev.seq} of {ev.node} does not follow seq {prev[0]} (line {prev[1]}): "
                "a node's seq must increase",
                path,
                no,
            )
        last[ev.node] = (ev.seq, no)
        out.append(ev)
    return out


def read_log(path: Path) -> list[LogEvent]:
    """Read and parse one log file."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(
            f"cannot read the log: {exc.strerror}", code=CODE, path=str(path)
        ) from None
    return parse_log(data, path=str(path))


def merge_logs(logs: Sequence[Sequence[LogEvent]]) -> list[LogEvent]:
    """One total order of several logs, consistent with vector clocks and FIFO.

    Each log keeps its own order.  An event is ready when every event its vector
    clock depends on has been taken, and a receive when its channel has a sent
    message not yet received.  Among ready heads the first log wins.  When no head
    is ready (a receive of a message never sent), the first head is taken anyway
    and the replay reports it.
    """
    if len(logs) == 1:
        return list(logs[0])
    queues = [list(reversed(log)) for log in logs]
    taken: dict[str, int] = {}
    in_flight: Counter[tuple[str, str]] = Counter()
    out: list[LogEvent] = []

    def ready(ev: LogEvent) -> bool:
        if ev.vc is not None:
            for q, n in ev.vc:
                if q != ev.node and taken.get(q, 0) < n:
                    return False
        return not (ev.event == "receive" and ev.channel and in_flight[ev.channel] <= 0)

    while any(queues):
        pick = next((q for q in queues if q and ready(q[-1])), None)
        if pick is None:
            pick = next(q for q in queues if q)
        ev = pick.pop()
        taken[ev.node] = ev.seq
        if ev.channel is not None and ev.event == "send":
            in_flight[ev.channel] += 1
        elif ev.channel is not None and ev.event == "receive":
            in_flight[ev.channel] -= 1
        out.append(ev)
    return out


# --------------------------------------------------------------------------- states


def json_of_local(cfg: ModelConfig, local: Local) -> Json:
    """A model local state as the protocol's JSON app state."""
    mod = cfg.app_module
    if mod == "TokenApp":
        return cast(int, local)
    if mod == "DiffusingApp":
        active, sent, recvd = cast(tuple[bool, int, int], local)
        return {"active": active, "sent": sent, "recvd": recvd}
    return list(cast(tuple[str, ...], local))


def local_of_json(cfg: ModelConfig, v: Json) -> Local | None:
    """The model local state for a JSON app state, or None if it is not one."""
    mod = cfg.app_module
    if mod == "TokenApp":
        return v if type(v) is int else None
    if mod == "DiffusingApp":
        if isinstance(v, dict) and set(v) == {"active", "sent", "recvd"}:
            a, s, r = v["active"], v["sent"], v["recvd"]
            if isinstance(a, bool) and type(s) is int and type(r) is int:
                return (a, s, r)
        return None
    if isinstance(v, list) and all(isinstance(x, str) for x in v):
        return tuple(str(x) for x in v)
    return None


def _show(v: Json) -> str:
    return json.dumps(v, separators=(", ", ": "))


def _show_msgs(ms: Iterable[int]) -> str:
    return "[" + ", ".join(str(m) for m in ms) + "]"


def _chan(c: tuple[str, str]) -> str:
    return f"{c[0]} -> {c[1]}"


# --------------------------------------------------------------------------- replay


@dataclass(frozen=True)
class Divergence:
    """The first event the model cannot take, or an effect it does not have."""

    path: str
    line: int
    event: str  #: the event, described
    expected: str  #: what the model does there, in words
    order: int = 0  #: position in the merged order (for sorting)

    def describe(self) -> str:
        return f"{self.path}:{self.line}: {self.event}: {self.expected}"


@dataclass(frozen=True)
class SnapshotVerdict:
    """Whether the log's snapshot ``snapshot`` is the one the algorithm records."""

    snapshot: int
    ok: bool
    message: str
    broken: tuple[str, ...] = ()  #: lemmas the log's snapshot breaks


@dataclass(frozen=True)
class Validation:
    """The verdict of a log: pass / fail, the first divergence, per-snapshot verdicts."""

    verdict: Literal["pass", "fail"]
    events: int
    first: Divergence | None
    snapshots: tuple[SnapshotVerdict, ...]
    notes: tuple[str, ...] = ()

    def explain(self) -> str:
        """The verdict in words (several lines)."""
        lines = [f"{self.verdict}: {self.events} events replayed in the model"]
        if self.first is not None:
            lines.append("first divergence: " + self.first.describe())
        lines += [s.message for s in self.snapshots]
        lines += self.notes
        return "\n".join(lines)


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
        self.log_net: dict[tuple[str, str], list[tuple[str, int]]] = {c: [] for c in cfg.chans}
        self.pending: dict[str, _Pending] = {}
        self.markers: dict[str, list[tuple[tuple[str, str], int, LogEvent]]] = {}
        self.divergences: list[Divergence] = []
        self.rec = _Recorded()
        self.stopped = False
        self.order_of: dict[int, int] = {}

    def diverge(self, ev: LogEvent, order: int, expected: str) -> None:
        self.divergences.append(Divergence(ev.path, ev.line, ev.describe(), expected, order))

    # -- actions --------------------------------------------------------------

    def close_step(self, node: str, before: str) -> None:
        pend = self.pending.pop(node, None)
        if pend is None or not pend.effects:
            return
        missing = "; ".join(_describe_effect(e) for e in pend.effects)
        self.diverge(
            pend.ev, pend.order, f"the model {missing} in this step; the log does not ({before})"
        )

    def action(self, ev: LogEvent, order: int) -> None:
        cfg = self.cfg
        if ev.event == "send" and ev.msg is not None and ev.msg[0] == "marker":
            self.marker_send(ev, order)
            return
        self.close_step(ev.node, f"next event of {ev.node}: line {ev.line}")
        if ev.node not in cfg.proc_index:
            self.diverge(
                ev, order, f"{ev.node} is not a machine of {cfg.name} ({', '.join(cfg.procs)})"
            )
            self.stopped = True
            return
        assert ev.msg is not None or ev.event == "start_snapshot"
        if ev.event == "send":
            assert ev.channel is not None and ev.msg is not None
            for c, k, at in self.markers.get(ev.node, []):
                if c == ev.channel:
                    self.diverge(
                        ev,
                        order,
                        f"the model put marker {k} on {_chan(c)} when {ev.node} turned red "
                        f"({at.where}), before this app message; the log sends the app message "
                        "first, so it overtakes its red letter and a message sent by a red machine "
                        "reaches a white one (Lemma0 breaks)",
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
                self.diverge(ev, order, f"{_chan(ev.channel)} is not a channel of {cfg.name}")
                self.stopped = True
                return
            if not q or q[0] != ev.msg:
                head = f"{q[0][0]} {q[0][1]}" if q else "nothing"
                self.diverge(
                    ev,
                    order,
                    f"the log sent {head} next on {_chan(ev.channel)}; a FIFO channel cannot "
                    f"deliver {ev.msg[0]} {ev.msg[1]} here",
                )
                self.stopped = True
                return
            ci = cfg.chan_index[ev.channel]
            mh = self.s.buf[ci][0] if self.s.buf[ci] else None
            want = ev.msg[1] if ev.msg[0] == "app" else -ev.msg[1]
            if mh != want:
                shown = "nothing" if mh is None else (f"app {mh}" if mh >= 0 else f"marker {-mh}")
                self.diverge(
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
            self.diverge(ev, order, f"the model cannot take it: {exc.message}")
            self.stopped = True
            return
        except InputError as exc:
            self.diverge(ev, order, f"the model cannot take it: {exc.message}")
            self.stopped = True
            return
        pi = cfg.proc_index[ev.node]
        if (
            ev.has_state
            and ev.event != "start_snapshot"
            and ev.state != json_of_local(cfg, t.local[pi])
        ):
            self.diverge(
                ev,
                order,
                f"after it the model's state of {ev.node} is "
                f"{_show(json_of_local(cfg, t.local[pi]))}, the log says {_show(ev.state)}",
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
                    ("record_state", kid, node, json_of_local(cfg, t.rec_machine[j][pi]))
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
                    self.markers.setdefault(node, []).append((chan, -v, ev))
        self.pending[node] = _Pending(ev, order, effects)

    # -- effects --------------------------------------------------------------

    def marker_send(self, ev: LogEvent, order: int) -> None:
        assert ev.channel is not None and ev.msg is not None
        k = ev.msg[1]
        owed = self.markers.get(ev.node, [])
        for i, (c, kk, _) in enumerate(owed):
            if c == ev.channel and kk == k:
                del owed[i]
                if ev.channel in self.log_net:
                    self.log_net[ev.channel].append(ev.msg)
                return
        self.diverge(
            ev,
            order,
            f"the model sends no marker {k} on {_chan(ev.channel)} here "
            f"(a machine sends one red letter per output channel when it turns red)",
        )
        self.stopped = True

    def effect(self, ev: LogEvent, order: int) -> None:
        cfg = self.cfg
        k = ev.snapshot
        assert k is not None
        rec = self.rec
        if ev.event == "record_state":
            rec.states.setdefault(k, {})[ev.node] = ev.state
            mine: Effect = ("record_state", k, ev.node, ev.state)
        elif ev.event == "record_message":
            assert ev.channel is not None and ev.msg is not None
            if ev.node not in rec.completed.get(k, {}):
                rec.channels.setdefault(k, {}).setdefault(ev.channel, []).append(ev.msg[1])
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
            self.diverge(ev, order, f"snapshot {k} is not a snapshot of {cfg.name}")
            return
        j = cfg.snap_index[k]
        s = self.s
        pi = cfg.proc_index.get(ev.node)
        if pi is None:
            self.diverge(ev, order, f"{ev.node} is not a machine of {cfg.name}")
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
        self.diverge(ev, order, why)

    # -- the end ---------------------------------------------------------------

    def finish(self) -> None:
        for node in list(self.pending):
            self.close_step(node, "the log ends")
        for node, owed in self.markers.items():
            for c, k, at in owed:
                self.diverge(
                    at,
                    self.order_of.get(id(at), 0),
                    f"the model sends marker {k} on {_chan(c)} when {node} turns red; the log "
                    f"never does (RedLetterInvariant: a channel from a red machine to a white "
                    f"one holds one red letter)",
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
        loc = local_of_json(cfg, v)
        if loc is None:
            problems.append(f"{node} recorded {_show(v)}, not a {cfg.app_module} state")
        locs.append(loc)
    bufs: list[tuple[int, ...]] = []
    for ci, chan in enumerate(cfg.chans):
        dst = cfg.procs[cfg.chan_dst[ci]]
        comp = done.get(dst)
        if comp is not None and comp.channels is not None:
            bufs.append(dict(comp.channels).get(chan[0], ()))
        else:
            bufs.append(tuple(rec.channels.get(k, {}).get(chan, [])))
    if any(x is None for x in locs):
        return None, problems
    return (tuple(locs), tuple(bufs)), problems


def _judge_snapshots(cfg: ModelConfig, s: State, rec: _Recorded) -> list[SnapshotVerdict]:
    out: list[SnapshotVerdict] = []
    for j, k in enumerate(cfg.snaps):
        if s.s0[j] is None:
            continue
        if s.sf[j] is None:
            out.append(SnapshotVerdict(k, True, f"snapshot {k}: not complete when the log ends"))
            continue
        missing = [n for n in cfg.procs if n not in rec.completed.get(k, {})]
        got, problems = _log_snapshot(cfg, rec, k)
        want: GState = (s.rec_machine[j], s.rec_buf[j])
        notes: list[str] = []
        if missing:
            notes.append(f"{', '.join(missing)} never reported it complete")
        if got is None:
            out.append(
                SnapshotVerdict(
                    k,
                    False,
                    f"snapshot {k}: incomplete in the log: " + "; ".join(problems + notes),
                    ("SnapshotsComplete",),
                )
            )
            continue
        if got == want and not missing:
            out.append(SnapshotVerdict(k, True, f"snapshot {k}: the one the algorithm must record"))
            continue
        diffs: list[str] = []
        for pi, node in enumerate(cfg.procs):
            if got[0][pi] != want[0][pi]:
                diffs.append(
                    f"{node}'s state is {_show(json_of_local(cfg, got[0][pi]))}, the algorithm "
                    f"records {_show(json_of_local(cfg, want[0][pi]))}"
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
            SnapshotVerdict(
                k,
                False,
                f"snapshot {k}: not the one the algorithm must record: "
                + "; ".join(diffs + notes)
                + tail,
                tuple(broken),
            )
        )
    return out


def validate(cfg: ModelConfig, events: Sequence[LogEvent]) -> Validation:
    """Replay ``events`` (one total order) in model ``cfg``; see the module docstring."""
    r = _Replay(cfg)
    r.order_of = {}
    n = 0
    for order, ev in enumerate(events):
        r.order_of[id(ev)] = order
        n += 1
        if ev.event in ACTIONS:
            r.action(ev, order)
        else:
            r.effect(ev, order)
        if r.stopped:
            break
    if not r.stopped:
        r.finish()
    first = min(r.divergences, key=lambda d: d.order) if r.divergences else None
    snaps = _judge_snapshots(cfg, r.s, r.rec)
    notes: list[str] = []
    if r.stopped:
        notes.append(
            f"the replay stopped at the first event the model cannot take ({n} of {len(events)})"
        )
    ok = first is None and all(v.ok for v in snaps)
    open_ = [j for j, g in enumerate(r.s.sf) if r.s.s0[j] is not None and g is None]
    if not ok and open_:
        ks = ", ".join(str(cfg.snaps[j]) for j in open_)
        notes.append(
            f"snapshot {ks} never completes in this execution (SnapshotsComplete: every "
            "started snapshot completes)"
        )
    return Validation("pass" if ok else "fail", n, first, tuple(snaps), tuple(notes))


def validate_files(cfg: ModelConfig, paths: Sequence[Path]) -> Validation:
    """Read, merge and validate one log or one log per node."""
    return validate(cfg, merge_logs([read_log(path) for path in paths]))


# --------------------------------------------------------------------------- producing logs


def model_walk(cfg: ModelConfig, seed: int, *, max_steps: int = 200) -> list[ScheduleStep]:
    """A seeded random walk of the model under its CONSTRAINT, until no step is left."""
    rng = random.Random(seed)
    s = init_states(cfg)[0]
    out: list[ScheduleStep] = []
    for _ in range(max_steps):
        nxt = [
            (a, prm, t)
            for a, prm, t in successors(cfg, s)
            if not cfg.constraints or app_action_bound(cfg, t)
        ]
        if not nxt:
            break
        a, prm, s = nxt[rng.randrange(len(nxt))]
        out.append((a, dict(prm)))
    return out


def _actor(action: str, params: Mapping[str, object]) -> str:
    """The machine that takes a step of the spec's vocabulary."""
    if action in ("SendApp", "ReceiveApp", "ReceiveRedLetter"):
        c = cast(Sequence[str], params["c"])
        return str(c[0] if action == "SendApp" else c[1])
    return str(params["p"])


def _msg_json(m: p.WireMsg) -> dict[str, Json]:
    return {"app": m.payload} if isinstance(m, p.AppMsg) else {"marker": m.snapshot}


def drive_and_log(
    cfg: ModelConfig, factory: NodeFactory, schedule: Sequence[ScheduleStep]
) -> list[dict[str, Json]]:
    """Run nodes built by ``factory`` in process along ``schedule`` (steps of the
    model) and return the event log they would write (see the module docstring).

    The run stops at the first step the nodes cannot perform (a node failed, or a
    message the schedule receives is not at the head of its channel); the log ends
    there, with that step's action logged.  ``complete`` events carry the node's
    final report for the snapshot.
    """
    topo = Topology(cfg.procs, cfg.chans)
    app = {"TokenApp": "token", "DiffusingApp": "diffusing", "HistoryApp": "history"}[
        cfg.app_module
    ]
    s = init_states(cfg)[0]
    initial = {n: json_of_local(cfg, s.local[i]) for i, n in enumerate(cfg.procs)}
    log: list[dict[str, Json]] = []
    seq: dict[str, int] = dict.fromkeys(cfg.procs, 0)
    vcs: dict[str, dict[str, int]] = {n: {} for n in cfg.procs}
    sent_vc: dict[tuple[str, str], list[dict[str, int]]] = {c: [] for c in cfg.chans}
    completes: list[tuple[dict[str, Json], str, int]] = []

    def emit(
        node: str, event: str, merge: dict[str, int] | None = None, **kw: Json
    ) -> dict[str, Json]:
        seq[node] += 1
        vc = vcs[node]
        if merge:
            for q, v in merge.items():
                vc[q] = max(vc.get(q, 0), v)
        vc[node] = seq[node]
        line: dict[str, Json] = {"node": node, "seq": seq[node], "vc": dict(vc), "event": event}
        line.update(kw)
        log.append(line)
        return line

    driver = Driver(InProcessTransport(NodeHost(factory)), topo, app, initial)
    with driver:
        driver.init()
        for action, params in schedule:
            try:
                t = step(cfg, s, action, params)
            except RedletterError:
                break
            node = _actor(action, params)
            pi = cfg.proc_index[node]
            new = json_of_local(cfg, t.local[pi]) if action != "StartSnapshot" else None
            head = None
            if action in ("ReceiveApp", "ReceiveRedLetter"):
                c = cast(list[str], params["c"])
                head = driver.network.head((c[0], c[1]))
                mh = s.buf[cfg.chan_index[(c[0], c[1])]][0]
                if head is None or _msg_json(head) != ({"app": mh} if mh >= 0 else {"marker": -mh}):
                    break  # the nodes did not send what the model did: the run ends
            try:
                obs = driver.perform(action, params, new if action != "ReceiveRedLetter" else None)
            except Exception:
                if action == "StartSnapshot":
                    emit(node, "start_snapshot", snapshot=cast(int, params["k"]))
                elif action == "InternalEvent":
                    emit(node, "internal", msg={"internal": cast(int, params["e"])}, state=new)
                elif head is not None:
                    c = cast(list[str], params["c"])
                    emit(
                        node,
                        "receive",
                        sent_vc[(c[0], c[1])].pop(0),
                        channel=list(c),
                        msg=_msg_json(head),
                    )
                break
            s = t
            if action == "StartSnapshot":
                emit(node, "start_snapshot", snapshot=cast(int, params["k"]))
            elif action == "InternalEvent":
                emit(node, "internal", msg={"internal": cast(int, params["e"])}, state=new)
            elif action in ("ReceiveApp", "ReceiveRedLetter"):
                assert obs.delivered is not None
                c = cast(list[str], params["c"])
                kw: dict[str, Json] = {"channel": list(c), "msg": _msg_json(obs.delivered)}
                if isinstance(obs.delivered, p.AppMsg):
                    kw["state"] = new
                emit(node, "receive", sent_vc[(c[0], c[1])].pop(0), **kw)
            for snt in obs.sent:
                extra: dict[str, Json] = {}
                if action == "SendApp" and isinstance(snt.msg, p.AppMsg):
                    extra["state"] = new
                extra["channel"] = list(snt.channel)
                extra["msg"] = _msg_json(snt.msg)
                line = emit(node, "send", None, **extra)
                sent_vc[snt.channel].append(dict(cast(dict[str, int], line["vc"])))
            for r in obs.recorded:
                if isinstance(r, p.RecordState):
                    emit(node, "record_state", snapshot=r.snapshot, state=r.state)
                elif isinstance(r, p.RecordMessage):
                    emit(
                        node,
                        "record_message",
                        snapshot=r.snapshot,
                        channel=list(r.channel),
                        msg={"app": r.payload},
                    )
                else:
                    emit(node, "close_channel", snapshot=r.snapshot, channel=list(r.channel))
            for k in obs.completed:
                completes.append((emit(node, "complete", snapshot=k), node, k))
        for line, node, k in completes:
            try:
                rep = driver.report(node, k)
            except Exception:
                continue
            line["state"] = rep.local_state
            line["channels"] = {q: list(ms) for q, ms in rep.channels.items()}
    return log


def dump_log(lines: Iterable[Mapping[str, Json]]) -> str:
    """The NDJSON text of a log."""
    return "".join(json.dumps(dict(x), separators=(",", ":")) + "\n" for x in lines)
