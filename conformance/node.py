"""The node library for implementers in Python: parse, dispatch, reply.

An implementer subclasses :class:`SnapshotNode` and writes only the snapshot
algorithm, in four hooks (:meth:`~SnapshotNode.on_start_snapshot`,
:meth:`~SnapshotNode.on_marker`, :meth:`~SnapshotNode.on_app_message`,
:meth:`~SnapshotNode.report`), using the effect methods (:meth:`send`,
:meth:`send_markers`, :meth:`record_state`, :meth:`record_message`,
:meth:`close_channel`, :meth:`complete`).  The library does the rest: it keeps
the local app state the harness gives it (``self.state``), puts app messages
on the wire, turns the effects of a step into its reply, and routes requests
to nodes by ``dest`` when one process hosts several nodes::

    class MyNode(SnapshotNode):
        ...

    if __name__ == "__main__":
        serve(MyNode)

Raise :class:`NodeFailure` from a hook to answer with an ``error`` body.
"""

from __future__ import annotations

import json
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import IO, ClassVar, NamedTuple

from redletter.conformance import protocol as p
from redletter.conformance.protocol import JsonValue
from redletter.conformance.protocol.schema import WIRE_MSG
from redletter.errors import InputError


class NodeFailure(Exception):
    """Raised by a node to answer the current request with an ``error`` body."""

    def __init__(self, code: str, text: str) -> None:
        super().__init__(text)
        self.code = code
        self.text = text


class SnapshotNode(ABC):
    """One node: the library's part (app state, wire, replies) and the hooks."""

    #: The algorithm this node runs (``init.algorithm``; see docs/protocol.md).
    algorithm: ClassVar[str] = "chandy-lamport"

    def __init__(self, init: p.Init) -> None:
        self.node_id = init.node_id
        self.node_ids = init.node_ids
        self.in_channels = init.in_channels
        self.out_channels = init.out_channels
        #: the sources of the input channels, in order
        self.in_from = tuple(c[0] for c in init.in_channels)
        #: the destinations of the output channels, in order
        self.out_to = tuple(c[1] for c in init.out_channels)
        self.app = init.app
        #: the local app state, as the harness last gave it
        self.state: JsonValue = init.app_state
        self._sent: list[p.Sent] = []
        self._recorded: list[p.Recorded] = []
        self._completed: list[int] = []

    # -- effects (call these from the hooks) ----------------------------------

    def send(self, to: str, msg: p.WireMsg) -> None:
        """Put ``msg`` at the tail of channel [self, to]."""
        self._sent.append(p.Sent((self.node_id, to), msg))

    def send_markers(self, k: int) -> None:
        """Send one marker of snapshot k on every output channel, in order."""
        for to in self.out_to:
            self.send(to, p.Marker(k))

    def record_state(self, k: int) -> None:
        """Record the current local state for snapshot k."""
        self._recorded.append(p.RecordState(k, self.state))

    def record_message(self, k: int, frm: str, payload: int) -> None:
        """Append ``payload`` to the recording of channel [frm, self] for k."""
        self._recorded.append(p.RecordMessage(k, (frm, self.node_id), payload))

    def close_channel(self, k: int, frm: str) -> None:
        """Stop recording channel [frm, self] for k."""
        self._recorded.append(p.CloseChannel(k, (frm, self.node_id)))

    def complete(self, k: int) -> None:
        """Declare this node's part of snapshot k complete."""
        self._completed.append(k)

    # -- the app part (override only to model a bug) --------------------------

    def on_app_send(self, to: str, payload: int) -> None:
        """Perform an app send: the app message goes on channel [self, to]."""
        self.send(to, p.AppMsg(payload))

    def on_app_internal(self, event: int) -> None:  # noqa: B027 (a hook; empty by default)
        """Perform an internal event: nothing for the snapshot algorithm."""

    def on_idle(self) -> None:  # noqa: B027 (a hook; empty by default)
        """An idle turn: take the steps the algorithm may take at any time (none for
        Chandy-Lamport: a red machine sends its red letters when it turns red)."""

    # -- the algorithm (the implementer writes these) ------------------------

    @abstractmethod
    def on_start_snapshot(self, k: int) -> None:
        """Start snapshot k, as if a red letter came from nowhere."""

    @abstractmethod
    def on_marker(self, frm: str, k: int) -> None:
        """A marker of snapshot k arrived on channel [frm, self]."""

    @abstractmethod
    def on_app_message(self, frm: str, payload: int) -> None:
        """An app message arrived on [frm, self]; ``self.state`` is already updated."""

    @abstractmethod
    def report(self, k: int) -> tuple[JsonValue, Mapping[str, tuple[int, ...]], bool]:
        """(recorded local state or None, {src: recorded payloads}, complete)."""

    # -- dispatch ------------------------------------------------------------

    def handle(self, body: p.Request) -> p.Reply:
        """Perform one request and return its reply (an ``error`` on NodeFailure)."""
        self._sent, self._recorded, self._completed = [], [], []
        reply_to = body.msg_id
        try:
            if isinstance(body, p.Deliver):
                if body.from_ not in self.in_from:
                    raise NodeFailure(
                        "bad-request", f"{body.from_} -> {self.node_id} is not an input channel"
                    )
                msg = body.msg
                if isinstance(msg, p.Marker):
                    self.on_marker(body.from_, msg.snapshot)
                elif isinstance(msg, p.AppMsg):
                    self.state = body.new_state
                    self.on_app_message(body.from_, msg.payload)
                else:
                    raise NodeFailure(
                        "unsupported", f"{self.algorithm} has no {msg_type(msg)} message"
                    )
                return p.DeliverOk(reply_to, None, *self._effects())
            if isinstance(body, p.AppSend):
                if body.to not in self.out_to:
                    raise NodeFailure(
                        "bad-request", f"{self.node_id} -> {body.to} is not an output channel"
                    )
                self.state = body.new_state
                self.on_app_send(body.to, body.payload)
                return p.AppSendOk(reply_to, None, *self._effects())
            if isinstance(body, p.StartSnapshot):
                self.on_start_snapshot(body.snapshot)
                return p.StartSnapshotOk(reply_to, None, *self._effects())
            if isinstance(body, p.AppInternal):
                self.state = body.new_state
                self.on_app_internal(body.event)
                return p.AppInternalOk(reply_to, None, *self._effects())
            if isinstance(body, p.Idle):
                self.on_idle()
                return p.IdleOk(reply_to, None, *self._effects())
            if isinstance(body, p.Report):
                state, channels, complete = self.report(body.snapshot)
                return p.ReportOk(reply_to, None, state, dict(channels), complete)
            if isinstance(body, p.Init):
                raise NodeFailure("bad-request", f"{self.node_id} is already initialised")
            raise NodeFailure("unsupported", f"unsupported request {body.type}")
        except NodeFailure as exc:
            return p.Error(reply_to, None, exc.code, exc.text)

    def _effects(self) -> tuple[tuple[p.Sent, ...], tuple[p.Recorded, ...], tuple[int, ...]]:
        return tuple(self._sent), tuple(self._recorded), tuple(self._completed)


NodeFactory = Callable[[p.Init], SnapshotNode]


class NodeHost:
    """Every node of one process, routed by ``dest``; created by their ``init``."""

    def __init__(self, factory: NodeFactory) -> None:
        self.factory = factory
        self.nodes: dict[str, SnapshotNode] = {}

    def handle(self, dest: str, body: p.Request) -> p.Reply:
        """The reply of node ``dest`` to ``body`` (``init`` creates the node)."""
        if isinstance(body, p.Init):
            if body.node_id != dest:
                return p.Error(body.msg_id, None, "bad-request", "init.node_id differs from dest")
            if dest in self.nodes:
                return p.Error(body.msg_id, None, "bad-request", f"{dest} is already initialised")
            made = self.factory(body)
            asked = body.algorithm or p.ALGORITHMS[0]
            if made.algorithm != asked:
                return p.Error(
                    body.msg_id,
                    None,
                    "unsupported",
                    f"this node runs the {made.algorithm} algorithm, not {asked}",
                )
            self.nodes[dest] = made
            return p.InitOk(body.msg_id)
        node = self.nodes.get(dest)
        if node is None:
            return p.Error(body.msg_id, None, "not-initialised", f"no node {dest} was initialised")
        return node.handle(body)

    def serve(self, stdin: IO[str], stdout: IO[str], stderr: IO[str]) -> int:
        """Answer every line of ``stdin`` on ``stdout`` until end of input; exit status."""
        for line in stdin:
            if not line.strip():
                continue
            try:
                env = p.decode(line, source="stdin")
            except InputError as exc:
                stderr.write(f"{exc.message}\n")
                stderr.flush()
                stdout.write(_error_line(line, exc.message) + "\n")
                stdout.flush()
                continue
            body = env.body
            if not isinstance(body, p.Request):
                reply: p.Reply = p.Error(0, None, "bad-request", f"{body.type} is not a request")
            else:
                reply = self.handle(env.dest, body)
            stdout.write(p.encode(p.Envelope(env.dest, env.src, reply)) + "\n")
            stdout.flush()
        return 0


def msg_type(m: p.WireMsg) -> str:
    """The wire type of a message (``app``, ``marker``, ``request`` ...)."""
    return WIRE_MSG.by_cls[type(m)].tag_value


def _error_line(line: str, text: str) -> str:
    """An error reply to an invalid line, answering its msg_id if one can be read."""
    reply_to = 0
    try:
        obj = json.loads(line)
        body = obj.get("body") if isinstance(obj, dict) else None
        msg_id = body.get("msg_id") if isinstance(body, dict) else None
        if type(msg_id) is int and msg_id >= 0:
            reply_to = msg_id
        dest = obj.get("dest") if isinstance(obj, dict) else None
        src = dest if isinstance(dest, str) and dest else "unknown"
    except (ValueError, AttributeError):
        src = "unknown"
    return p.encode(p.Envelope(src, p.HARNESS, p.Error(reply_to, None, "bad-request", text)))


class Mutant(NamedTuple):
    """A variant's mutant node: how to build it, and what it breaks (the spec's words)."""

    factory: NodeFactory
    breaks: str


def serve_choice(program: str, nodes: Mapping[str, NodeFactory], argv: list[str] | None) -> None:
    """The ``__main__`` of a module of nodes: serve the node named by the one argument
    (the first of ``nodes`` when there is none); a usage line and exit 5 otherwise."""
    args = sys.argv[1:] if argv is None else argv
    name = args[0] if len(args) == 1 else next(iter(nodes)) if not args else ""
    if name not in nodes:
        sys.stderr.write(f"usage: python -m {program} [NAME]\nnodes: " + ", ".join(nodes) + "\n")
        raise SystemExit(5)
    serve(nodes[name])


def serve(factory: NodeFactory) -> None:
    """Run a node program on stdin/stdout (the ``__main__`` of a node); exits."""
    raise SystemExit(NodeHost(factory).serve(sys.stdin, sys.stdout, sys.stderr))
