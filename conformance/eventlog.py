"""The event-log format: NDJSON logs an implementation writes while it runs.

An implementation that runs its own scheduler (real sockets, threads, timers)
cannot be driven step by step; instead it writes an NDJSON event log, which the
log judge (:mod:`redletter.conformance.judges.log`) replays in the model.  This
module reads, merges and writes such logs.

The log format (NDJSON: one JSON object per line, UTF-8; blank lines skipped)::

    {"node": "p1", "seq": 4, "vc": {"p1": 4, "p2": 2}, "event": "receive",
     "channel": ["p2", "p1"], "msg": {"app": 3}, "state": 5}

``node`` (string, required)
    the machine that logged the event.
``seq`` (integer >= 1, required)
    the event's number at that node: 1, 2, 3, ... with no gap, so that a lost
    line is seen (:mod:`redletter.conformance.logcheck` checks it before any
    verdict; :func:`parse_log` alone only requires it to increase).
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
    "dump_log",
    "merge_logs",
    "parse_line",
    "parse_log",
    "read_log",
    "read_log_bytes",
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
)
#: The events that are actions of the model (the others are their effects).
ACTIONS: Final = frozenset({"send", "receive", "internal", "start_snapshot"})
Json: TypeAlias = p.JsonValue
CODE: Final = "RL-INPUT-LOG"


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
    obj = loads(text, path=path, code=CODE, line=line)
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
