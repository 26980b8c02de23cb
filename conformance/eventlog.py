"""The event-log format: NDJSON logs an implementation writes while it runs.

An implementation that runs its own scheduler (real sockets, threads, timers)
cannot be driven step by step; instead it writes an NDJSON event log, which a
log judge checks: without a model, on the run's own events
(:mod:`redletter.conformance.judges.runlog`, the default), or replayed in a
model (:mod:`redletter.conformance.judges.log`).  This module reads, merges and
writes such logs.

The log format (NDJSON: one JSON object per line, UTF-8; blank lines skipped)::

    {"node": "alice", "seq": 4, "vc": {"alice": 4, "bob": 2}, "event": "receive",
     "channel": ["bob", "alice"], "msg": {"app": "hi"}, "state": {"seen": 3}}

``node`` (string, required)
    the process that logged the event (any name).
``seq`` (integer >= 1, required)
    the event's number at that node: 1, 2, 3, ... with no gap, so that a lost
    line is seen (:mod:`redletter.conformance.logcheck` checks it before any
    verdict; :func:`parse_log` alone only requires it to increase).
``vc`` (object node -> integer, optional)
    a vector clock: ``vc[q]`` is the ``seq`` of the last event of ``q`` that
    happened before this one (``vc[node]`` is ``seq``).
``event`` (required), one of
    ``send`` (``channel`` [node, q], ``msg``: where the message leaves the
    process), ``receive`` (``channel`` [q, node], ``msg``: where it is taken
    in), ``internal`` (``msg`` {"internal": e}), ``start_snapshot``
    (``snapshot``), the recording ``record_state`` (``snapshot``, ``state``),
    ``record_message`` (``snapshot``, ``channel`` [q, node], ``msg``: what was
    recorded, and optionally ``of``: the ``seq`` of the receive it records;
    the recorders fill it in), ``close_channel`` (``snapshot``, ``channel``
    [q, node]) and ``complete`` (``snapshot``; optionally the node's report
    for it: ``state`` and ``channels`` {source: [payloads]}); and the two ends
    of a log: ``init`` (first; ``state``, the initial local state, and
    optionally ``inputs`` / ``outputs``, the node's neighbours) and ``end``
    (last; the process stopped cleanly: a log without it may be cut short).
``channel`` ([src, dst]: a directed channel), ``msg`` ({"app": v} with v any
JSON value, {"marker": k}, or {"internal": e}), ``snapshot`` (an integer >= 1
or a non-empty string), ``state`` (the node's local state as JSON; on an app
action the state *after* it, optional).

A model (:mod:`redletter.conformance.judges.log`) takes integer payloads and
snapshot ids only; the model-free judge takes any.

Several logs (one per node) are merged into one total order consistent with
their vector clocks and with FIFO channels (the n-th receive on a channel after
the n-th send on it); one log holding every node is taken in file order.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, TypeAlias, cast

from redletter.conformance import protocol as p
from redletter.errors import InputError
from redletter.untrusted import MAX_LOG_BYTES, decode_utf8, loads, read_input

__all__ = [
    "ACTIONS",
    "EVENTS",
    "LogEvent",
    "SnapshotId",
    "dump_log",
    "merge_logs",
    "parse_line",
    "parse_log",
    "read_log",
    "read_log_bytes",
    "show",
]

EVENTS: Final = (
    "send",
    "receive",
    "internal",
    "start_snapshot",
    "record_state",
    "record_message",
    "close_channel",
    "complete",
    "init",
    "end",
)
#: The events that are actions of the model (the others are their effects).
ACTIONS: Final = frozenset({"send", "receive", "internal", "start_snapshot"})
Json: TypeAlias = p.JsonValue
SnapshotId: TypeAlias = int | str
CODE: Final = "RL-INPUT-LOG"


def show(v: Json) -> str:
    """A JSON value as the explanations print it: ``3``, ``"hi"``, ``{"a": 1}``."""
    return json.dumps(v, separators=(", ", ": "), ensure_ascii=False)


@dataclass(frozen=True)
class LogEvent:
    """One line of a log.  ``msg``: ("app", v), ("marker", k), ("internal", e) or None."""

    node: str
    seq: int
    event: str
    vc: tuple[tuple[str, int], ...] | None = None
    channel: tuple[str, str] | None = None
    msg: tuple[str, Json] | None = None
    snapshot: SnapshotId | None = None
    state: Json = None
    has_state: bool = False
    channels: tuple[tuple[str, tuple[Json, ...]], ...] | None = None
    path: str = "<log>"
    line: int = 0
    of: int | None = None  #: record_message: the seq of the receive it records
    inputs: tuple[str, ...] | None = None  #: init: the sources of the node's channels
    outputs: tuple[str, ...] | None = None  #: init: the destinations of its channels

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"

    @property
    def value(self) -> Json:
        """The payload of ``msg`` (the app value, the marker's snapshot, the event)."""
        return None if self.msg is None else self.msg[1]

    def describe(self) -> str:
        """``p2 receive marker 1 on p1 -> p2``."""
        parts = [self.node, self.event.replace("_", " ")]
        if self.msg is not None:
            parts.append(f"{self.msg[0]} {show(self.msg[1])}")
        if self.channel is not None:
            parts.append(f"on {self.channel[0]} -> {self.channel[1]}")
        if self.snapshot is not None and self.event not in ("send", "receive"):
            parts.append(f"for snapshot {show(self.snapshot)}")
        return " ".join(parts)


def _bad(msg: str, path: str, line: int) -> InputError:
    return InputError(msg, code=CODE, path=path, line=line)


def _field_int(obj: Mapping[str, object], key: str, path: str, line: int, low: int) -> int:
    v = obj.get(key)
    if type(v) is not int or v < low:
        raise _bad(f"'{key}' must be an integer >= {low}, got {_dump(v)}", path, line)
    return v


def _dump(v: object) -> str:
    return json.dumps(v, ensure_ascii=False)[:80]


def _is_snapshot(v: object) -> bool:
    return (type(v) is int and v >= 1) or (isinstance(v, str) and v != "")


def _field_snapshot(obj: Mapping[str, object], path: str, line: int) -> SnapshotId:
    v = obj.get("snapshot")
    if not _is_snapshot(v):
        raise _bad(
            f"'snapshot' must be an integer >= 1 or a non-empty string, got {_dump(v)}",
            path,
            line,
        )
    return cast(SnapshotId, v)


def _field_channel(obj: Mapping[str, object], path: str, line: int) -> tuple[str, str]:
    v = obj.get("channel")
    if not (isinstance(v, list) and len(v) == 2 and all(isinstance(x, str) and x for x in v)):
        raise _bad(f"'channel' must be [src, dst] (two names), got {_dump(v)}", path, line)
    return (str(v[0]), str(v[1]))


def _field_names(obj: Mapping[str, object], key: str, path: str, line: int) -> tuple[str, ...]:
    v = obj.get(key)
    if not (isinstance(v, list) and all(isinstance(x, str) and x for x in v)):
        raise _bad(f"'{key}' must be a list of node names, got {_dump(v)}", path, line)
    return tuple(str(x) for x in v)


def _field_msg(obj: Mapping[str, object], path: str, line: int) -> tuple[str, Json]:
    v = obj.get("msg")
    if isinstance(v, dict) and len(v) == 1:
        ((kind, x),) = v.items()
        if kind in ("app", "internal") or (kind == "marker" and _is_snapshot(x)):
            return (str(kind), cast(Json, x))
    raise _bad(
        '\'msg\' must be {"app": any value}, {"marker": snapshot} or {"internal": e}, '
        f"got {_dump(v)}",
        path,
        line,
    )


def parse_line(text: str, *, path: str = "<log>", line: int = 1) -> LogEvent:
    """Parse one NDJSON line into a :class:`LogEvent` (InputError with file and line)."""
    obj = loads(text, path=path, code=CODE, line=line)
    if not isinstance(obj, dict):
        raise _bad(f"expected a JSON object, got {type(obj).__name__}", path, line)
    node = obj.get("node")
    if not isinstance(node, str) or not node:
        raise _bad(f"'node' must be a non-empty string, got {_dump(node)}", path, line)
    seq = _field_int(obj, "seq", path, line, 1)
    event = obj.get("event")
    if event not in EVENTS:
        raise _bad(f"'event' must be one of {', '.join(EVENTS)}, got {_dump(event)}", path, line)
    vc_raw = obj.get("vc")
    vc: tuple[tuple[str, int], ...] | None = None
    if vc_raw is not None:
        if not (
            isinstance(vc_raw, dict) and all(type(x) is int and x >= 0 for x in vc_raw.values())
        ):
            raise _bad(f"'vc' must map nodes to integers >= 0, got {_dump(vc_raw)}", path, line)
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
        want = {"internal": ("internal",), "record_message": ("app", "marker")}.get(
            str(event), ("app", "marker")
        )
        if msg[0] not in want:
            raise _bad(f"a {event} event's 'msg' cannot be {{\"{msg[0]}\": ...}}", path, line)
    if event in ("start_snapshot", "record_state", "record_message", "close_channel", "complete"):
        snapshot = _field_snapshot(obj, path, line)
    if event in ("record_state", "init") and "state" not in obj:
        raise _bad(f"a {event} event needs 'state'", path, line)
    of = None
    if event == "record_message" and "of" in obj:
        of = _field_int(obj, "of", path, line, 1)
    inputs = outputs = None
    if event == "init":
        if "inputs" in obj:
            inputs = _field_names(obj, "inputs", path, line)
        if "outputs" in obj:
            outputs = _field_names(obj, "outputs", path, line)
    channels: tuple[tuple[str, tuple[Json, ...]], ...] | None = None
    if event == "complete" and "channels" in obj:
        ch = obj["channels"]
        if not (isinstance(ch, dict) and all(isinstance(v, list) for v in ch.values())):
            raise _bad(
                f"'channels' must map sources to lists of payloads, got {_dump(ch)}", path, line
            )
        channels = tuple(sorted((str(k), tuple(cast(list[Json], v))) for k, v in ch.items()))
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
        of,
        inputs,
        outputs,
    )


def parse_log(data: str | bytes, *, path: str = "<log>") -> list[LogEvent]:
    """Parse a whole NDJSON log; per node, ``seq`` must increase strictly."""
    if isinstance(data, bytes):
        data = decode_utf8(data, path=path, code=CODE)
    out: list[LogEvent] = []
    last: dict[str, tuple[int, int]] = {}
    # NDJSON lines end with \n only (a JSON string may hold U+2028, which
    # str.splitlines would take for a line break).
    for no, raw in enumerate(data.split("\n"), start=1):
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


def read_log_bytes(path: Path) -> bytes:
    """The bytes of one log file: a regular file of at most
    :data:`~redletter.untrusted.MAX_LOG_BYTES` (else an :class:`InputError`)."""
    return read_input(path, code=CODE, limit=MAX_LOG_BYTES, what="the log")


def read_log(path: Path) -> list[LogEvent]:
    """Read and parse one log file."""
    return parse_log(read_log_bytes(path), path=str(path))


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


def dump_log(lines: Iterable[Mapping[str, Json]]) -> str:
    """The NDJSON text of a log."""
    return "".join(json.dumps(dict(x), separators=(",", ":")) + "\n" for x in lines)
