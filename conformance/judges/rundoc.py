"""The document the COS 418 driver writes for one run (format ``redletter-cos418-run``).

The driver (``conformance/adapters/cos418/driver/``) runs one scenario in a
package exactly as the course's own harness does and writes one JSON document:
the topology and the scenario it was asked to run (with the digest of the
request, so the kit can tell that it ran what it asked for), every step it took
(an injected event or one ``Tick``) that the simulator's logger gained events
in, the snapshots ``CollectSnapshot`` returned and when, and why a run stopped
early (a hang, with every goroutine's stack; a panic; snapshots never
collected).  :func:`parse_run_document` reads it into immutable values; nothing
in it is trusted beyond its shape: the judges check it against what the kit
asked for.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from redletter.conformance.formats.cos418 import (
    Event,
    Link,
    RecordedMessage,
    Scenario,
    Send,
    Server,
    Snap,
    Snapshot,
    Tick,
    Topology,
)
from redletter.errors import InputError
from redletter.untrusted import loads

__all__ = [
    "FORMAT",
    "VERSION",
    "Frame",
    "Goroutine",
    "LoggedEvent",
    "RecordedSnapshot",
    "RunDocument",
    "RunError",
    "RunStep",
    "parse_run_document",
    "read_run_document",
    "scenario_json",
    "topology_json",
]

#: The ``format`` field of the driver's documents, and the version read here.
FORMAT: Final = "redletter-cos418-run"
VERSION: Final = 2
#: The largest run document the kit reads.
MAX_DOCUMENT_BYTES: Final = 64 << 20


@dataclass(frozen=True, slots=True)
class LoggedEvent:
    """One event of the simulator's log (or a message of a returned snapshot).

    ``event`` is ``send``, ``receive``, ``snapshot_start`` or ``snapshot_end``
    (``recorded`` for a snapshot's message); a send or receipt has ``src``,
    ``dest`` and a message (``message`` is ``token`` with ``tokens``, ``marker``
    with ``snapshot_id``, or ``other`` with ``type``); a start or end has
    ``server`` and ``snapshot_id``.
    """

    event: str
    src: str = ""
    dest: str = ""
    server: str = ""
    message: str = ""
    tokens: int = 0
    snapshot_id: int = -1
    type: str = ""

    @property
    def link(self) -> Link:
        return (self.src, self.dest)

    def show_message(self) -> str:
        """``token(3)``, ``marker(1)`` or the type of an unknown message."""
        if self.message == "token":
            return f"token({self.tokens})"
        if self.message == "marker":
            return f"marker({self.snapshot_id})"
        return f"a message of type {self.type or '?'}"

    def same_message(self, other: LoggedEvent) -> bool:
        return (self.message, self.tokens, self.snapshot_id) == (
            other.message,
            other.tokens,
            other.snapshot_id,
        )


@dataclass(frozen=True, slots=True)
class RunStep:
    """One step of the driver that the logger gained events in: ``setup``,
    ``inject`` (one scenario event) or ``tick``.

    ``time`` is the number of ticks so far (for a tick: including it);
    ``event_index`` the scenario event (``None`` for setup and for the ticks after
    the last event).  Ticks in which nothing was logged have no step.
    """

    phase: str
    time: int
    event_index: int | None
    events: tuple[LoggedEvent, ...]


@dataclass(frozen=True, slots=True)
class Frame:
    """One frame of a goroutine's stack: the function and ``file:line``."""

    func: str
    file: str


@dataclass(frozen=True, slots=True)
class Goroutine:
    """A goroutine's stack as the driver read it (``runtime.Stack``)."""

    id: int
    state: str  #: ``chan send``, ``sync.Mutex.Lock``, ``sleep``, ``running``, ...
    package: bool  #: it runs the package's own code
    frames: tuple[Frame, ...]
    created: str = ""


@dataclass(frozen=True, slots=True)
class RunError:
    """Why a run stopped early: a ``hang`` (cause ``deadlock`` or ``timeout``), a
    ``panic``, snapshots not collected (``incomplete``, cause ``stuck`` or
    ``timeout``) or a ``driver`` error."""

    kind: str
    message: str
    cause: str = ""
    stack: str = ""
    phase: str = ""
    time: int = 0
    event_index: int | None = None
    goroutines: tuple[Goroutine, ...] = ()


@dataclass(frozen=True, slots=True)
class RecordedSnapshot:
    """A snapshot as the driver saw it: started, collected (when), and what it held."""

    id: int
    initiator: str
    event_index: int
    start_time: int
    status: str  #: collected, not_collected, panic or nil
    returned_time: int | None = None  #: ticks so far when the collector's result was taken
    collected_ms: int | None = None  #: milliseconds after the last event
    returned_id: int | None = None
    tokens: tuple[tuple[str, int], ...] | None = None
    messages: tuple[LoggedEvent, ...] | None = None  #: ``event`` is ``recorded``
    error: str = ""
    collector: Goroutine | None = None  #: the collector's stack, if it never returned

    @property
    def collected(self) -> bool:
        return self.status == "collected"

    def as_snap(self) -> Snap | None:
        """The returned snapshot as a ``.snap`` value (tokens and token messages);
        ``None`` unless it was collected."""
        if not self.collected or self.tokens is None:
            return None
        msgs = tuple(
            RecordedMessage(m.src, m.dest, m.tokens)
            for m in self.messages or ()
            if m.message == "token" and m.tokens > 0
        )
        return Snap(self.id, self.tokens, msgs)

    def total(self) -> int:
        """Tokens it holds: recorded states plus recorded token messages (markers
        and other messages count zero), as the course's check counts them."""
        return sum(n for _, n in self.tokens or ()) + sum(
            m.tokens for m in self.messages or () if m.message == "token"
        )


@dataclass(frozen=True)
class RunDocument:
    """A parsed ``redletter-cos418-run`` document (see the driver's README)."""

    dialect: str
    package: str
    go_version: str
    request_sha256: str
    nonce: str
    seed: int
    seed_effective: bool
    topology: Topology
    scenario: Scenario
    outcome: str  #: complete, incomplete, hang, panic or driver_error
    error: RunError | None
    time: int
    extra_ticks: int
    collect_stopped: str  #: "", "stuck" or "timeout"
    collect_waited_ms: int
    idle_ticks: int
    schedule_available: bool
    schedule_note: str
    other_records: int
    steps: tuple[RunStep, ...]
    snapshots: tuple[RecordedSnapshot, ...]
    #: steps whose events the driver read after a later step (the package's
    #: goroutines were running in between), given to their steps by epoch
    deferred_steps: int = 0
    gomaxprocs: int = 0  #: ``runtime.GOMAXPROCS(0)`` of the run

    def snaps(self) -> tuple[Snap, ...]:
        """The collected snapshots as ``.snap`` values, in id order."""
        out = [s.as_snap() for s in self.snapshots]
        return tuple(sorted((s for s in out if s is not None), key=lambda s: s.id))


def topology_json(topology: Topology) -> dict[str, object]:
    """A topology as the driver's request and document carry it."""
    return {
        "servers": [{"id": s.id, "tokens": s.tokens} for s in topology.servers],
        "links": [{"src": a, "dest": b} for a, b in topology.links],
    }


def scenario_json(scenario: Scenario) -> list[dict[str, object]]:
    """A scenario's events as the driver's request and document carry them."""
    out: list[dict[str, object]] = []
    for e in scenario.events:
        if isinstance(e, Send):
            out.append({"kind": "send", "src": e.src, "dest": e.dst, "tokens": e.n})
        elif isinstance(e, Snapshot):
            out.append({"kind": "snapshot", "server": e.server})
        elif isinstance(e, Tick):
            out.append({"kind": "tick", "ticks": e.n})
    return out


def _bad(message: str, path: str | None) -> InputError:
    return InputError(message, code="RL-INPUT-COS418-RUN", path=path)


def _get(
    obj: Mapping[str, object],
    key: str,
    kind: type | tuple[type, ...],
    path: str | None,
    where: str,
    default: object = ...,
) -> object:
    if key not in obj or obj[key] is None:
        if default is not ...:
            return default
        raise _bad(f"{where}: the key {key!r} is missing", path)
    value = obj[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        raise _bad(f"{where}: {key!r} has the wrong type ({type(value).__name__})", path)
    return value


def _str(
    obj: Mapping[str, object], key: str, path: str | None, where: str, default: str = ""
) -> str:
    value = _get(obj, key, str, path, where, default)
    assert isinstance(value, str)
    return value


def _int(
    obj: Mapping[str, object], key: str, path: str | None, where: str, default: int = 0
) -> int:
    value = _get(obj, key, int, path, where, default)
    assert isinstance(value, int)
    return value


def _opt_int(obj: Mapping[str, object], key: str, path: str | None, where: str) -> int | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise _bad(f"{where}: {key!r} has the wrong type ({type(value).__name__})", path)
    return value


def _mapping(value: object, path: str | None, where: str) -> Mapping[str, object]:
    if not isinstance(value, dict):
        raise _bad(f"{where}: expected a JSON object, got {type(value).__name__}", path)
    return value


def _list(obj: Mapping[str, object], key: str, path: str | None, where: str) -> list[object]:
    value = obj.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise _bad(f"{where}: {key!r} has the wrong type ({type(value).__name__})", path)
    return value


def _event(raw: object, path: str | None, where: str, kind: str | None = None) -> LoggedEvent:
    e = _mapping(raw, path, where)
    ev = kind if kind is not None else _str(e, "event", path, where)
    return LoggedEvent(
        event=ev,
        src=_str(e, "src", path, where),
        dest=_str(e, "dest", path, where),
        server=_str(e, "server", path, where),
        message=_str(e, "message", path, where),
        tokens=_int(e, "tokens", path, where),
        snapshot_id=_int(e, "snapshot_id", path, where, -1),
        type=_str(e, "type", path, where),
    )


def _goroutine(raw: object, path: str | None) -> Goroutine:
    g = _mapping(raw, path, "a goroutine")
    frames = tuple(
        Frame(_str(f, "func", path, "a frame"), _str(f, "file", path, "a frame"))
        for f in (_mapping(x, path, "a frame") for x in _list(g, "frames", path, "a goroutine"))
    )
    return Goroutine(
        id=_int(g, "id", path, "a goroutine"),
        state=_str(g, "state", path, "a goroutine"),
        package=bool(g.get("package", False)),
        frames=frames,
        created=_str(g, "created", path, "a goroutine"),
    )


def _scenario(data: Mapping[str, object], path: str | None) -> Scenario:
    events: list[Event] = []
    for raw in _list(data, "scenario", path, "document"):
        e = _mapping(raw, path, "a scenario event")
        kind = _str(e, "kind", path, "a scenario event")
        if kind == "send":
            events.append(
                Send(
                    _str(e, "src", path, "send"),
                    _str(e, "dest", path, "send"),
                    _int(e, "tokens", path, "send"),
                )
            )
        elif kind == "snapshot":
            events.append(Snapshot(_str(e, "server", path, "snapshot")))
        elif kind == "tick":
            events.append(Tick(_int(e, "ticks", path, "tick", 1)))
        else:
            raise _bad(f"a scenario event of unknown kind {kind!r}", path)
    return Scenario(tuple(events))


def _snapshot(raw: object, path: str | None) -> RecordedSnapshot:
    s = _mapping(raw, path, "a snapshot")
    toks = s.get("tokens")
    tokens = None
    if isinstance(toks, dict):
        tokens = tuple(
            (str(k), v) for k, v in toks.items() if isinstance(v, int) and not isinstance(v, bool)
        )
    msgs_raw = s.get("messages")
    msgs = None
    if isinstance(msgs_raw, list):
        msgs = tuple(_event(x, path, "a recorded message", "recorded") for x in msgs_raw)
    collector = s.get("collector")
    return RecordedSnapshot(
        id=_int(s, "id", path, "a snapshot"),
        initiator=_str(s, "initiator", path, "a snapshot"),
        event_index=_int(s, "event_index", path, "a snapshot"),
        start_time=_int(s, "start_time", path, "a snapshot"),
        status=_str(s, "status", path, "a snapshot"),
        returned_time=_opt_int(s, "returned_time", path, "a snapshot"),
        collected_ms=_opt_int(s, "collected_ms", path, "a snapshot"),
        returned_id=_opt_int(s, "returned_id", path, "a snapshot"),
        tokens=tokens,
        messages=msgs,
        error=_str(s, "error", path, "a snapshot"),
        collector=_goroutine(collector, path) if collector is not None else None,
    )


def parse_run_document(data: Mapping[str, object], path: str | None = None) -> RunDocument:
    """Read a driver document (already decoded from JSON); :class:`InputError`
    (``RL-INPUT-COS418-RUN``) naming the key when it is not one."""
    if data.get("format") != FORMAT:
        raise _bad(f"not a {FORMAT} document (format {data.get('format')!r})", path)
    if data.get("version") != VERSION:
        raise _bad(f"{FORMAT} version {data.get('version')!r}; this kit reads {VERSION}", path)
    top = _mapping(data.get("topology") or {}, path, "topology")
    servers = tuple(
        Server(_str(s, "id", path, "a server"), _int(s, "tokens", path, "a server"))
        for s in (_mapping(x, path, "a server") for x in _list(top, "servers", path, "topology"))
    )
    links = tuple(
        (_str(x, "src", path, "a link"), _str(x, "dest", path, "a link"))
        for x in (_mapping(y, path, "a link") for y in _list(top, "links", path, "topology"))
    )
    err_raw = data.get("error")
    error = None
    if err_raw is not None:
        e = _mapping(err_raw, path, "error")
        error = RunError(
            kind=_str(e, "kind", path, "error"),
            message=_str(e, "message", path, "error"),
            cause=_str(e, "cause", path, "error"),
            stack=_str(e, "stack", path, "error"),
            phase=_str(e, "phase", path, "error"),
            time=_int(e, "time", path, "error"),
            event_index=_opt_int(e, "event_index", path, "error"),
            goroutines=tuple(_goroutine(g, path) for g in _list(e, "goroutines", path, "error")),
        )
    steps = []
    for raw in _list(data, "schedule", path, "document"):
        s = _mapping(raw, path, "a step")
        steps.append(
            RunStep(
                phase=_str(s, "phase", path, "a step"),
                time=_int(s, "time", path, "a step"),
                event_index=_opt_int(s, "event_index", path, "a step"),
                events=tuple(
                    _event(x, path, "a logged event") for x in _list(s, "events", path, "a step")
                ),
            )
        )
    collect = _mapping(data.get("collect") or {}, path, "collect")
    return RunDocument(
        dialect=_str(data, "dialect", path, "document"),
        package=_str(data, "package", path, "document"),
        go_version=_str(data, "go_version", path, "document"),
        request_sha256=_str(data, "request_sha256", path, "document"),
        nonce=_str(data, "nonce", path, "document"),
        seed=_int(data, "seed", path, "document"),
        seed_effective=bool(data.get("seed_effective", False)),
        topology=Topology(servers, links),
        scenario=_scenario(data, path),
        outcome=_str(data, "outcome", path, "document"),
        error=error,
        time=_int(data, "time", path, "document"),
        extra_ticks=_int(data, "extra_ticks", path, "document"),
        collect_stopped=_str(collect, "stopped", path, "collect"),
        collect_waited_ms=_int(collect, "waited_ms", path, "collect"),
        idle_ticks=_int(collect, "idle_ticks", path, "collect"),
        schedule_available=bool(data.get("schedule_available", False)),
        schedule_note=_str(data, "schedule_note", path, "document"),
        other_records=_int(data, "other_records", path, "document"),
        steps=tuple(steps),
        snapshots=tuple(_snapshot(x, path) for x in _list(data, "snapshots", path, "document")),
        deferred_steps=_int(data, "deferred_steps", path, "document"),
        gomaxprocs=_int(data, "gomaxprocs", path, "document"),
    )


def read_run_document(path: Path) -> RunDocument:
    """Read and parse a driver document from a file (at most
    :data:`MAX_DOCUMENT_BYTES`, never through a link)."""
    import os
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise _bad(f"cannot read the file: {exc.strerror}", str(path)) from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise _bad("not a regular file", str(path))
        raw = f.read(MAX_DOCUMENT_BYTES + 1)
    if len(raw) > MAX_DOCUMENT_BYTES:
        raise _bad(f"the file holds more than {MAX_DOCUMENT_BYTES:,} bytes", str(path))
    data = loads(raw, path=str(path), code="RL-INPUT-COS418-RUN")
    return parse_run_document(_mapping(data, str(path), "document"), str(path))
