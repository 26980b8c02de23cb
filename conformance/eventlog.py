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
    ``send`` (``channel`` [node, q], ``msg``: where the message's place on its
    channel is fixed, its *write*), ``receive`` (``channel`` [q, node], ``msg``:
    where it is taken in, its *receipt*), ``apply`` (``channel``, ``msg``: the
    other half of a message whose state change is not where it is written or
    taken in: the debit of a send, the application of a receipt; see below),
    ``internal`` (``msg`` {"internal": e}), ``start_snapshot``
    (``snapshot``), the recording ``record_state`` (``snapshot``, ``state``),
    ``record_message`` (``snapshot``, ``channel`` [q, node], ``msg``: what was
    recorded, and optionally ``of``: the ``seq`` of the receive it records;
    the recorders fill it in), ``close_channel`` (``snapshot``, ``channel``
    [q, node]) and ``complete`` (``snapshot``; optionally the node's report
    for it: ``state`` and ``channels`` {source: [payloads]}); and the two ends
    of a log: ``init`` (first; ``state``, the initial local state, and
    optionally ``inputs`` / ``outputs``, the node's neighbours) and ``end``
    (last; the process stopped cleanly: a log without it may be cut short).
A message in two halves: a send or a receive whose state change is logged on
its own says ``"split": true``, and its ``apply`` event follows with ``of``, the
seq of that send or receive; a send whose state change came first (a debit, then
the write) is logged as an ``apply`` of the outgoing message, and the ``send``
that writes it carries ``of``, the seq of that apply.  Without ``split`` or
``of``, a send or receive is its own state change (one atomic step).

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
from collections.abc import Iterable, Iterator, Mapping
from itertools import accumulate
from pathlib import Path
from typing import Final, NamedTuple, TypeAlias, cast

from redletter.conformance import protocol as p
from redletter.errors import InputError
from redletter.untrusted import (
    MAX_LOG_BYTES,
    FastRefused,
    InputBudget,
    LineReader,
    decode_utf8,
    fast_loads,
    loads,
    read_input,
    show_id,
    show_json,
)

__all__ = [
    "ACTIONS",
    "EVENTS",
    "LogEvent",
    "LogFile",
    "SnapshotId",
    "dump_log",
    "parse_line",
    "parse_line_clock",
    "parse_log",
    "read_log",
    "read_log_bytes",
    "show",
    "show_chan",
    "show_id",
    "show_snapshot",
]

EVENTS: Final = (
    "send",
    "receive",
    "apply",
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
    """A JSON value as the explanations print it: ``3``, ``"hi"``, ``{"a": 1}``
    (:func:`redletter.untrusted.show_json`: nothing in it can act on a terminal)."""
    return show_json(v)


def show_snapshot(k: SnapshotId) -> str:
    """A snapshot id as the explanations print it: ``1``, ``"audit-1"`` (a string
    always quoted, every character outside printable ASCII escaped)."""
    return str(k) if isinstance(k, int) else json.dumps(k, ensure_ascii=True)


def show_chan(c: tuple[str, str]) -> str:
    """``p1 -> p2`` (each end as :func:`~redletter.untrusted.show_id` prints it)."""
    return f"{show_id(c[0])} -> {show_id(c[1])}"


class LogEvent(NamedTuple):
    """One line of a log (immutable).  ``msg``: ("app", v), ("marker", k), ("internal",
    e) or None.  A named tuple: made at C speed, since a log has millions."""

    node: str
    seq: int
    event: str
    vc: Mapping[str, int] | None = None  #: as the line gives it (node -> seq)
    channel: tuple[str, str] | None = None
    msg: tuple[str, Json] | None = None
    snapshot: SnapshotId | None = None
    state: Json = None
    has_state: bool = False
    channels: tuple[tuple[str, tuple[Json, ...]], ...] | None = None
    path: str = "<log>"
    line: int = 0
    #: record_message: the seq of the receive it records; apply: of the send or
    #: receive it is the state change of; send: of the apply that came first
    of: int | None = None
    inputs: tuple[str, ...] | None = None  #: init: the sources of the node's channels
    outputs: tuple[str, ...] | None = None  #: init: the destinations of its channels
    split: bool = False  #: send / receive: its state change is an apply logged later

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"

    @property
    def value(self) -> Json:
        """The payload of ``msg`` (the app value, the marker's snapshot, the event)."""
        return None if self.msg is None else self.msg[1]

    def describe(self) -> str:
        """``p2 receive marker 1 on p1 -> p2``; every name and value from the log is
        printed so that it cannot act on a terminal or pass for another."""
        parts = [show_id(self.node), self.event.replace("_", " ")]
        if self.msg is not None:
            v = self.msg[1]
            shown = show_snapshot(v) if self.msg[0] == "marker" else show(v)  # type: ignore[arg-type]
            parts.append(f"{self.msg[0]} {shown}")
        if self.channel is not None:
            parts.append(f"on {show_chan(self.channel)}")
        if self.snapshot is not None and self.event not in ("send", "receive"):
            parts.append(f"for snapshot {show_snapshot(self.snapshot)}")
        return " ".join(parts)


def _bad(msg: str, path: str, line: int) -> InputError:
    return InputError(msg, code=CODE, path=path, line=line)


def _field_int(obj: Mapping[str, object], key: str, path: str, line: int, low: int) -> int:
    v = obj.get(key)
    if type(v) is not int or v < low:
        raise _bad(f"'{key}' must be an integer >= {low}, got {_dump(v)}", path, line)
    return v


def _dump(v: object) -> str:
    text = show_json(v)
    return text if len(text) <= 80 else text[:77] + "..."


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
    if type(v) is list and len(v) == 2:
        a, b = v
        if type(a) is str and type(b) is str and a and b:
            return (a, b)
    raise _bad(f"'channel' must be [src, dst] (two names), got {_dump(v)}", path, line)


def _field_names(obj: Mapping[str, object], key: str, path: str, line: int) -> tuple[str, ...]:
    v = obj.get(key)
    if not (isinstance(v, list) and all(isinstance(x, str) and x for x in v)):
        raise _bad(f"'{key}' must be a list of node names, got {_dump(v)}", path, line)
    return tuple(str(x) for x in v)


def _field_msg(obj: Mapping[str, object], path: str, line: int) -> tuple[str, Json]:
    v = obj.get("msg")
    if type(v) is dict and len(v) == 1:
        ((kind, x),) = v.items()
        if kind == "app" or kind == "internal" or (kind == "marker" and _is_snapshot(x)):
            return (kind, cast(Json, x))
    raise _bad(
        '\'msg\' must be {"app": any value}, {"marker": snapshot} or {"internal": e}, '
        f"got {_dump(v)}",
        path,
        line,
    )


_INT: Final = {int}
_NEW: Final = tuple.__new__
#: Per event: (has a channel, the end it is at: 0 src, 1 dst, -1 either, the kinds
#: of its msg (empty: none), has a snapshot, needs a state, "of"/"split"/"both"/"").
_SPEC: Final[dict[str, tuple[bool, int, tuple[str, ...], bool, bool, str]]] = {
    "send": (True, 0, ("app", "marker"), False, False, "both"),
    "receive": (True, 1, ("app", "marker"), False, False, "split"),
    "apply": (True, -1, ("app",), False, False, "of"),
    "internal": (False, 0, ("internal",), False, False, ""),
    "start_snapshot": (False, 0, (), True, False, ""),
    "record_state": (False, 0, (), True, True, ""),
    "record_message": (True, 1, ("app", "marker"), True, False, "of"),
    "close_channel": (True, 1, (), True, False, ""),
    "complete": (False, 0, (), True, False, ""),
    "init": (False, 0, (), False, True, ""),
    "end": (False, 0, (), False, False, ""),
}


def parse_line(text: str | bytes, *, path: str = "<log>", line: int = 1) -> LogEvent:
    """Parse one NDJSON line into a :class:`LogEvent` (InputError with file and line)."""
    ev, vc = parse_line_clock(text, path=path, line=line)
    return ev if vc is None else ev._replace(vc=vc)


def parse_line_clock(
    text: str | bytes, *, path: str = "<log>", line: int = 1
) -> tuple[LogEvent, Mapping[str, int] | None]:
    """:func:`parse_line`, with the vector clock apart from the event (whose ``vc`` is
    None): a reader that checks the clocks as it goes keeps no event's clock longer
    than it needs it, and clocks can hold thousands of entries.

    Run once per line of logs of millions of lines, so written for speed: the common
    case of each field is tested inline, and the functions that name what is wrong
    (``_field_*``) are called only when it fails."""
    return _checked(loads(text, path=path, code=CODE, line=line), path, line)


def _checked(obj: object, path: str, line: int) -> tuple[LogEvent, Mapping[str, int] | None]:
    """The event a decoded line says, every field checked (:func:`parse_line_clock`)."""
    if type(obj) is not dict:
        raise _bad(f"expected a JSON object, got {type(obj).__name__}", path, line)
    get = obj.get
    node = get("node")
    if type(node) is not str or not node:
        raise _bad(f"'node' must be a non-empty string, got {_dump(node)}", path, line)
    seq = get("seq")
    if type(seq) is not int or seq < 1:
        raise _bad(f"'seq' must be an integer >= 1, got {_dump(seq)}", path, line)
    event = get("event")
    try:
        spec = _SPEC[event]  # type: ignore[index]  # (any JSON value: see the except)
    except (KeyError, TypeError):  # not one of EVENTS, or not even hashable
        raise _bad(
            f"'event' must be one of {', '.join(EVENTS)}, got {_dump(event)}", path, line
        ) from None
    vc = get("vc")
    if vc is not None:
        ok = type(vc) is dict
        if ok and len(vc) <= 16:  # the usual clock: a Python loop beats building a set
            for n in vc.values():
                if type(n) is not int or n < 0:
                    ok = False
                    break
        elif ok:  # in C: a clock can hold thousands of entries
            ok = set(map(type, vc.values())) == _INT and min(vc.values()) >= 0
        if not ok:
            raise _bad(f"'vc' must map nodes to integers >= 0, got {_dump(vc)}", path, line)
    has_channel, end, kinds, has_snapshot, needs_state, linked = spec
    channel = msg = snapshot = None
    if has_channel:
        v = get("channel")
        if type(v) is list and len(v) == 2:
            a, b = v
            if type(a) is str and type(b) is str and a and b:
                channel = (a, b)
        if channel is None:
            channel = _field_channel(obj, path, line)  # raises, saying what is wrong
        if end < 0:  # an apply: either end
            if node not in channel:
                raise _bad(
                    f"an apply event of {show_id(node)} must have {show_id(node)} as the "
                    f"channel's src or dst, got {show_chan(channel)}",
                    path,
                    line,
                )
        elif channel[end] != node:
            raise _bad(
                f"a {event} event of {show_id(node)} must have {show_id(node)} as the "
                f"channel's {'src' if end == 0 else 'dst'}, got {show_chan(channel)}",
                path,
                line,
            )
    if kinds:
        v = get("msg")
        if type(v) is dict and len(v) == 1 and "app" in v and kinds[0] == "app":
            msg = ("app", v["app"])  # the common case: an app message where one may be
        else:
            msg = _field_msg(obj, path, line)
            if msg[0] not in kinds:
                raise _bad(f"a {event} event's 'msg' cannot be {{\"{msg[0]}\": ...}}", path, line)
    if has_snapshot:
        snapshot = get("snapshot")
        if not ((type(snapshot) is int and snapshot >= 1) or (type(snapshot) is str and snapshot)):
            snapshot = _field_snapshot(obj, path, line)  # raises, saying what is wrong
    has_state = "state" in obj
    if needs_state and not has_state:
        raise _bad(f"a {event} event needs 'state'", path, line)
    of = None
    split = False
    if linked:
        if "of" in obj and linked != "split":
            of = _field_int(obj, "of", path, line, 1)
            if of >= seq:
                raise _bad(
                    f"'of' names the seq of an earlier event of {show_id(node)}, got {of} on "
                    f"its event {seq}",
                    path,
                    line,
                )
        if "split" in obj and linked != "of":
            if obj["split"] is not True and obj["split"] is not False:
                raise _bad(f"'split' must be true or false, got {_dump(obj['split'])}", path, line)
            split = obj["split"]
            if split and msg is not None and msg[0] != "app":
                raise _bad("only an app message is split (a marker changes no state)", path, line)
            if split and of is not None:
                raise _bad(
                    "a send with 'of' is the second half of its message (its apply came "
                    "first), so it cannot be 'split' too",
                    path,
                    line,
                )
    inputs = outputs = None
    channels: tuple[tuple[str, tuple[Json, ...]], ...] | None = None
    if event == "init":
        if "inputs" in obj:
            inputs = _field_names(obj, "inputs", path, line)
        if "outputs" in obj:
            outputs = _field_names(obj, "outputs", path, line)
    elif event == "complete" and "channels" in obj:
        ch = obj["channels"]
        if not (isinstance(ch, dict) and all(isinstance(v, list) for v in ch.values())):
            raise _bad(
                f"'channels' must map sources to lists of payloads, got {_dump(ch)}", path, line
            )
        channels = tuple(sorted((str(k), tuple(cast(list[Json], v))) for k, v in ch.items()))
    # tuple.__new__ makes the named tuple from its fields at C speed (its own __new__ is
    # a Python function); the order is LogEvent's.
    return _NEW(
        LogEvent,
        (
            node,
            seq,
            event,
            None,
            channel,
            msg,
            snapshot,
            get("state"),
            has_state,
            channels,
            path,
            line,
            of,
            inputs,
            outputs,
            split,
        ),
    ), vc


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


class LogFile:
    """One log file read an event at a time (memory: one chunk and one line), under
    a byte budget shared with the run's other logs.

    A last line without its newline (the writer stopped in the middle of it) is
    :attr:`cut`; with ``tolerant`` it is dropped and said in :attr:`cut_reason`
    (a crashed process's log), else it is parsed, and an error there is
    ``RL-INPUT-LOG-LOST`` ("the last line is cut short")."""

    def __init__(self, path: Path | str, budget: InputBudget, *, tolerant: bool) -> None:
        self.path = str(path)
        self.reader = LineReader(path, code=CODE, budget=budget, what="the log")
        self.tolerant = tolerant
        self.events = 0  #: the events read (counted a chunk at a time)
        self.size = self.reader.size
        self.cut_reason: str | None = None
        # the chunk of lines being read: its lines, the number of the first, the
        # bytes before it, and the bytes up to the end of each of its lines (made
        # when asked: see progress_through)
        self._chunk: list[bytes] = []
        self._first = 1
        self._base = 0
        self._ends: list[int] | None = None
        self._cut_at = 0  #: the number of the last line, when it is cut short
        #: the events left, each without its clock and with its clock (a generator:
        #: ``next(clocked, None)`` is the cheapest call per line there is)
        self.clocked: Iterator[tuple[LogEvent, Mapping[str, int] | None]] = self._clocked()

    def next_event(self) -> LogEvent | None:
        """The next event of the file (its ``vc`` as the line gives it), or None."""
        got = self.next_clocked()
        if got is None:
            return None
        ev, vc = got
        return ev if vc is None else ev._replace(vc=vc)

    def next_clocked(self) -> tuple[LogEvent, Mapping[str, int] | None] | None:
        """The next event of the file without its clock, and its clock; None at the end."""
        return next(self.clocked, None)

    def progress_through(self, line: int) -> float:
        """The share of the file read (0 to 1) when its line ``line``, the last event
        read, was read: lines are counted as they are read, not a chunk at a time,
        so that a merge's order does not depend on the chunks' size.  (A last line
        cut short counts for nothing.)"""
        if not self.size:
            return 1.0
        if line == self._cut_at:
            return self._base / self.size
        ends = self._ends
        if ends is None:
            ends = self._ends = list(accumulate(map(len, self._chunk)))
        k = line - self._first
        return (self._base + ends[k] + k + 1) / self.size

    def _clocked(self) -> Iterator[tuple[LogEvent, Mapping[str, int] | None]]:
        """The events of the file, each without its clock, and its clock.

        Run once per line of logs of millions of lines, so the most common lines
        (a send or a receive with a clock and nothing else) are read here at once:
        each check :func:`_checked` makes on such a line is made inline, and a line
        that fails any of them, or is of another shape, is read by :func:`_checked`
        (or :func:`parse_line_clock`), which names what is wrong."""
        reader, path = self.reader, self.path
        no, events = reader.line, 0
        new, plain_loads, event_of = _NEW, fast_loads, _checked
        for lines in reader.chunks():
            self._chunk, self._first, self._ends = lines, no + 1, None
            self._base = reader.consumed
            if reader.cut:
                self._cut_at = no + 1
                got = self._cut_line(lines[0], no + 1)
                self.events = events + (got is not None)
                if got is not None:
                    yield got
                return
            self.events = events
            if not reader.plain:  # a run of 19 digits: loads reads every line
                for raw in lines:
                    no += 1
                    if raw and not raw.isspace():  # (as `raw.strip()`, without copying it)
                        events += 1
                        yield parse_line_clock(raw, path=path, line=no)
                continue
            for raw in lines:
                no += 1
                try:
                    obj = plain_loads(raw)
                except FastRefused:  # (a blank line too) read again below
                    obj = None
                if type(obj) is dict:
                    try:
                        node, seq, event = obj["node"], obj["seq"], obj["event"]
                        vc, ch, msg = obj["vc"], obj["channel"], obj["msg"]
                    except KeyError:  # another shape of line
                        pass
                    else:
                        n = len(obj)
                        if (
                            type(node) is str
                            and node
                            and type(seq) is int
                            and seq >= 1
                            and type(ch) is list
                            and len(ch) == 2
                            and type(msg) is dict
                            and len(msg) == 1
                            and type(vc) is dict
                            and len(vc) <= 16
                            and (n == 6 or (n == 7 and "state" in obj))
                        ):
                            a, b = ch
                            if (
                                type(a) is str
                                and type(b) is str
                                and a
                                and b
                                and (
                                    (event == "send" and a == node)
                                    or (event == "receive" and b == node)
                                )
                            ):
                                for x in vc.values():
                                    if type(x) is not int or x < 0:
                                        break
                                else:
                                    m: tuple[str, Json] | None
                                    if "app" in msg:
                                        m = ("app", msg["app"])
                                    else:
                                        k = msg.get("marker")
                                        m = (
                                            ("marker", k)
                                            if (type(k) is int and k >= 1) or (type(k) is str and k)
                                            else None
                                        )
                                    if m is not None:
                                        events += 1
                                        yield (
                                            new(
                                                LogEvent,
                                                (
                                                    node,
                                                    seq,
                                                    event,
                                                    None,
                                                    (a, b),
                                                    m,
                                                    None,
                                                    obj.get("state"),
                                                    n == 7,
                                                    None,
                                                    path,
                                                    no,
                                                    None,
                                                    None,
                                                    None,
                                                    False,
                                                ),
                                            ),
                                            vc,
                                        )
                                        continue
                    got = event_of(obj, path, no)
                elif raw and not raw.isspace():  # (as `raw.strip()`, without copying it)
                    got = parse_line_clock(raw, path=path, line=no)
                else:
                    continue  # a blank line
                events += 1
                yield got
        self.events = events

    def _cut_line(self, raw: bytes, no: int) -> tuple[LogEvent, Mapping[str, int] | None] | None:
        """The last line, cut short: dropped and said (``tolerant``: None), else read;
        an error there is ``RL-INPUT-LOG-LOST``."""
        if self.tolerant:
            self.cut_reason = (
                f"the last line of {self.path} (line {no}) is cut short: its process "
                "stopped in the middle of writing it"
            )
            return None
        try:
            return parse_line_clock(raw, path=self.path, line=no)
        except InputError as exc:
            said = exc.message.removeprefix(f"{exc.path}:{exc.line}: ")
            raise InputError(
                f"the last line is cut short ({said}): the writer stopped in the "
                "middle of a line, so the log's end is lost",
                code="RL-INPUT-LOG-LOST",
                path=self.path,
                line=no,
            ) from None


def dump_log(lines: Iterable[Mapping[str, Json]]) -> str:
    """The NDJSON text of a log."""
    return "".join(json.dumps(dict(x), separators=(",", ":")) + "\n" for x in lines)
