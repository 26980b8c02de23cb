"""Write redletter's NDJSON event log from your own program (standard library only).

A program that schedules itself (its own processes, threads, sockets, timers)
cannot be driven step by step by the kit; instead each node writes an event log
while it runs, and ``redletter conform validate MODEL LOG...`` replays the logs
in the model.  This module writes those logs.  It imports nothing but the
standard library: copy this one file into your project, or import it as
``redletter.conformance.adapters.instrument`` when the kit is installed.

One :class:`Recorder` per node (per process, or per node object)::

    rec = Recorder("p1", "logs/p1.ndjson")

    # an application message: log the send, carry the clock on the message
    clock = rec.send_app("p2", 3, state=tokens)           # tokens: the state after it
    sock.sendall(encode(attach({"tokens": 3}, clock)))     # "vc" rides on the message

    # on receipt: detach the clock, log the receive (state: after it)
    body, clock = detach(decode(data))
    rec.receive_app("p2", body["tokens"], clock, state=tokens)

    # the snapshot algorithm: the action, then its effects, in one step
    with rec.step():
        rec.receive_marker("p2", 1, clock)
        rec.record_state(1, tokens)                        # first marker: turn red
        for q in outputs:
            rec.send_marker(q, 1)                          # ... and send the markers
        rec.close_channel(1, "p2")
        rec.complete(1, state=tokens, channels={"p2": []}) # when every input closed

The events and fields are exactly those of the log format
(``redletter/conformance/eventlog.py``): ``send``, ``receive``, ``internal``,
``start_snapshot`` (the model's actions) and ``record_state``,
``record_message``, ``close_channel``, ``complete`` (their effects).  An effect
belongs to the action logged just before it at the same node, so log the
effects of an action right after it (a :meth:`Recorder.step` makes that one
write).  Log a marker send (:meth:`Recorder.send_marker`) before the bytes of
any later application message on that link.

Each event gets the node's next ``seq`` (1, 2, 3, ... with no gaps, so a lost
line shows) and a vector clock ``vc``: the recorder counts its own events and
merges the clock each received message carries.  Only vector clocks order the
events of different nodes; wall clocks are never written, so clock skew between
machines cannot matter.

Writing: every event is one line written with one ``os.write`` on a file
opened with ``O_APPEND`` (no user-space buffer, so nothing is lost when the
process dies afterwards, and lines of several threads or processes sharing a
file never interleave), under a lock (the seq order is the file order).  A
:meth:`Recorder.step` collects the lines of one action and its effects and
writes them with a single ``os.write``, so a crash cannot separate an action
from its effects.  ``durable=True`` also ``fsync``\\ s every write (slow; only
for power failures).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from types import TracebackType
from typing import Any, Final, TypeAlias

__all__ = ["CLOCK_KEY", "Clock", "Recorder", "attach", "detach"]

Clock: TypeAlias = dict[str, int]
"""A vector clock: node -> the seq of its last event known here."""

CLOCK_KEY: Final = "vc"
"""The key :func:`attach` puts the vector clock under in a JSON message."""

_UNSET: Final[Any] = object()


def attach(message: Mapping[str, Any], clock: Mapping[str, int]) -> dict[str, Any]:
    """``message`` (a JSON object) with ``clock`` under :data:`CLOCK_KEY`."""
    return {**message, CLOCK_KEY: dict(clock)}


def detach(message: Mapping[str, Any]) -> tuple[dict[str, Any], Clock | None]:
    """``message`` without its clock, and the clock (None if it carries none)."""
    body = dict(message)
    raw = body.pop(CLOCK_KEY, None)
    if raw is None:
        return body, None
    if not isinstance(raw, dict) or not all(
        isinstance(k, str) and type(v) is int and v >= 0 for k, v in raw.items()
    ):
        raise ValueError(f"a message's {CLOCK_KEY!r} must map nodes to integers >= 0: {raw!r}")
    return body, dict(raw)


def _count(name: str, value: object, low: int) -> int:
    if type(value) is not int or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return value


def _node(name: str, value: object) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{name} must be a non-empty string, got {value!r}")
    return value


class Recorder:
    """The event log of one node: thread-safe, one line per write, flushed.

    ``path``: the log file (created; emptied first unless ``append=True``, which
    lets several recorders, in several processes too, share one file).
    """

    def __init__(
        self,
        node: str,
        path: str | os.PathLike[str],
        *,
        append: bool = False,
        durable: bool = False,
    ) -> None:
        self.node = _node("node", node)
        self.path = os.fspath(path)
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | (0 if append else os.O_TRUNC)
        self._fd: int | None = os.open(self.path, flags, 0o644)
        self._durable = durable
        self._lock = threading.RLock()
        self._seq = 0
        self._vc: Clock = {}
        self._batch: list[bytes] | None = None
        self._depth = 0

    # -- the clock ------------------------------------------------------------

    @property
    def seq(self) -> int:
        """The seq of the last event logged (0 before the first)."""
        with self._lock:
            return self._seq

    @property
    def clock(self) -> Clock:
        """A copy of the current vector clock."""
        with self._lock:
            return dict(self._vc)

    # -- the model's actions --------------------------------------------------

    def send_app(self, dst: str, n: int, *, state: Any = _UNSET) -> Clock:
        """Log an application send of ``n`` on ``node -> dst`` (``state``: after it);
        return the clock to carry on the message."""
        return self._log(
            "send",
            {
                "channel": [self.node, _node("dst", dst)],
                "msg": {"app": _count("an app message", n, 0)},
            },
            state=state,
        )

    def send_marker(self, dst: str, snapshot: int) -> Clock:
        """Log the marker of ``snapshot`` sent on ``node -> dst``; return its clock."""
        return self._log(
            "send",
            {
                "channel": [self.node, _node("dst", dst)],
                "msg": {"marker": _count("snapshot", snapshot, 1)},
            },
        )

    def receive_app(
        self, src: str, n: int, clock: Mapping[str, int] | None, *, state: Any = _UNSET
    ) -> None:
        """Log the receipt of application message ``n`` on ``src -> node``; ``clock``
        is the one the message carried (``state``: the state after it)."""
        self._log(
            "receive",
            {
                "channel": [_node("src", src), self.node],
                "msg": {"app": _count("an app message", n, 0)},
            },
            clock,
            state=state,
        )

    def receive_marker(self, src: str, snapshot: int, clock: Mapping[str, int] | None) -> None:
        """Log the receipt of the marker of ``snapshot`` on ``src -> node``."""
        self._log(
            "receive",
            {
                "channel": [_node("src", src), self.node],
                "msg": {"marker": _count("snapshot", snapshot, 1)},
            },
            clock,
        )

    def internal(self, e: int, *, state: Any = _UNSET) -> None:
        """Log internal event ``e`` (``state``: after it)."""
        self._log("internal", {"msg": {"internal": _count("an internal event", e, 0)}}, state=state)

    def start_snapshot(self, snapshot: int) -> None:
        """Log that this node starts ``snapshot`` (then log its effects: the state
        recorded and the markers sent)."""
        self._log("start_snapshot", {"snapshot": _count("snapshot", snapshot, 1)})

    # -- the effects ------------------------------------------------------------

    def record_state(self, snapshot: int, state: Any) -> None:
        """Log the local state recorded for ``snapshot`` (when the node turns red)."""
        self._log("record_state", {"snapshot": _count("snapshot", snapshot, 1)}, state=state)

    def record_message(self, snapshot: int, src: str, n: int) -> None:
        """Log app message ``n`` recorded on ``src -> node`` in ``snapshot``."""
        self._log(
            "record_message",
            {
                "snapshot": _count("snapshot", snapshot, 1),
                "channel": [_node("src", src), self.node],
                "msg": {"app": _count("an app message", n, 0)},
            },
        )

    def close_channel(self, snapshot: int, src: str) -> None:
        """Log that ``src -> node`` is closed in ``snapshot`` (its marker arrived)."""
        self._log(
            "close_channel",
            {
                "snapshot": _count("snapshot", snapshot, 1),
                "channel": [_node("src", src), self.node],
            },
        )

    def complete(
        self,
        snapshot: int,
        *,
        state: Any = _UNSET,
        channels: Mapping[str, Sequence[int]] | None = None,
    ) -> None:
        """Log that ``snapshot`` is complete here; optionally with the node's own
        report of it: the state and ``channels`` {source: [app payloads]}."""
        fields: dict[str, Any] = {"snapshot": _count("snapshot", snapshot, 1)}
        if state is not _UNSET:
            fields["state"] = state
        if channels is not None:
            fields["channels"] = {
                _node("a channel's source", q): [_count("an app message", m, 0) for m in ms]
                for q, ms in channels.items()
            }
        self._log("complete", fields)

    # -- writing ----------------------------------------------------------------

    @contextmanager
    def step(self) -> Iterator[Recorder]:
        """Log one action and its effects as one write (nested steps join the outer
        one); other threads' events wait until the step ends."""
        with self._lock:
            outer = self._depth == 0
            if outer:
                self._batch = []
            self._depth += 1
            try:
                yield self
            finally:
                self._depth -= 1
                if outer:
                    lines, self._batch = self._batch or [], None
                    if lines:
                        self._write(b"".join(lines))

    def _log(
        self,
        event: str,
        fields: dict[str, Any],
        merge: Mapping[str, int] | None = None,
        *,
        state: Any = _UNSET,
    ) -> Clock:
        with self._lock:
            if self._fd is None:
                raise ValueError(f"the recorder of {self.node} is closed")
            seq = self._seq + 1
            vc = dict(self._vc)
            for q, n in (merge or {}).items():
                if q != self.node and _count("a clock entry", n, 0) > vc.get(q, 0):
                    vc[_node("a clock's node", q)] = n
            vc[self.node] = seq
            line: dict[str, Any] = {"node": self.node, "seq": seq, "vc": vc, "event": event}
            line.update(fields)
            if state is not _UNSET:
                line["state"] = state
            data = (json.dumps(line, separators=(",", ":"), allow_nan=False) + "\n").encode()
            self._seq, self._vc = seq, vc
            if self._batch is not None:
                self._batch.append(data)
            else:
                self._write(data)
            return dict(vc)

    def _write(self, data: bytes) -> None:
        if self._fd is None:
            raise ValueError(f"the recorder of {self.node} is closed")
        view = memoryview(data)
        while view:
            n = os.write(self._fd, view)
            view = view[n:]
        if self._durable:
            os.fsync(self._fd)

    def close(self) -> None:
        """Close the log file (later events raise ValueError)."""
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def __enter__(self) -> Recorder:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
