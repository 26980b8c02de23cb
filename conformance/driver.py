"""The app driver: performs the steps of a schedule on the nodes under test.

A :class:`Driver` tells a node to perform an app action (with the new local
state the harness computed), delivers the head of a channel of its choosing,
asks a node to start snapshot k, and collects the replies; the network
(:class:`~redletter.conformance.net.Network`) lives here, in the harness.  Every step
returns an :class:`~redletter.conformance.net.Observation`, the seam the judges compare
with the model.

Nodes are reached through a :class:`Transport`:

- :class:`InProcessTransport` calls Python node objects directly (the same
  request and reply dataclasses, no JSON, no process): for benchmarks and for
  developing a node;
- :class:`ProcessTransport` talks the line protocol to child processes
  (:class:`~redletter.conformance.process.NodeProcess`), one per node
  (:meth:`ProcessTransport.per_node`) or one hosting every node
  (:meth:`ProcessTransport.hosted`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Protocol, TypeVar

from redletter.conformance import protocol as p
from redletter.conformance.net import (
    ChannelViolation,
    Network,
    Observation,
    Topology,
    receive_action,
    show_channel,
)
from redletter.conformance.node import NodeHost
from redletter.conformance.process import (
    Limits,
    NodeCrashed,
    NodeError,
    NodeErrorReply,
    NodeProcess,
    NodeProtocolError,
    is_urgent,
    quote_node_text,
)
from redletter.conformance.sandbox import Sandbox, SandboxPolicy, SandboxReport
from redletter.errors import InputError

R = TypeVar("R", bound=p.Reply)


class Transport(Protocol):
    """How the driver reaches the nodes."""

    def call(self, node: str, body: p.Request) -> p.Reply:
        """Send ``body`` to ``node`` and return its reply (of any type)."""

    def fail(self, node: str, cls: type[NodeError], what: str) -> NodeError:
        """The error to raise for a misbehaving node (ends that node's process)."""

    def finish(self) -> dict[str, str | NodeError]:
        """End every node after its last reply; per node that did not end as the
        protocol says (none: not in the result), the first line it wrote after its
        last reply, else the error of its exit (a status other than 0, a signal)."""

    def close(self, *, urgent: bool = False) -> None:
        """Stop every node (``urgent``: kill at once, e.g. on Ctrl-C)."""

    @property
    def sandbox_report(self) -> SandboxReport | None:
        """The layers of the sandbox the nodes ran in (None: in this process)."""


class InProcessTransport:
    """Nodes as Python objects in this process (a :class:`NodeHost`).

    An exception a node object raises is a crash of that node (a verdict), not
    an error of the kit."""

    def __init__(self, host: NodeHost) -> None:
        self.host = host

    def call(self, node: str, body: p.Request) -> p.Reply:
        try:
            return self.host.handle(node, body)
        except Exception as exc:  # the node's code failed: a verdict about the node
            raise NodeCrashed(
                f"node {node} raised {type(exc).__name__} on {body.type} (msg_id "
                f"{body.msg_id}): {quote_node_text(str(exc))}.",
                node=node,
            ) from exc

    def fail(self, node: str, cls: type[NodeError], what: str) -> NodeError:
        return cls(f"{what}.", node=node)

    def finish(self) -> dict[str, str | NodeError]:
        self.host.nodes.clear()
        return {}

    def close(self, *, urgent: bool = False) -> None:
        self.host.nodes.clear()

    @property
    def sandbox_report(self) -> SandboxReport | None:
        return None


def _policy(isolate: bool, policy: SandboxPolicy | None) -> SandboxPolicy:
    if not isolate:
        return SandboxPolicy.off()
    return policy if policy is not None else SandboxPolicy()


class ProcessTransport:
    """Nodes as child processes speaking the line protocol; ``routes`` maps each
    node id to its process (several ids may share one hosting process).  Every
    process of a run shares one :class:`~redletter.conformance.sandbox.Sandbox`
    (one cgroup: memory and processes are bounded for the whole run), closed
    with the transport."""

    def __init__(self, routes: Mapping[str, NodeProcess], sandbox: Sandbox | None = None) -> None:
        self.routes = dict(routes)
        self.sandbox = sandbox

    @staticmethod
    def per_node(
        argv: Sequence[str],
        nodes: Sequence[str],
        *,
        log_dir: Path,
        limits: Limits | None = None,
        isolate: bool = True,
        policy: SandboxPolicy | None = None,
    ) -> ProcessTransport:
        """One process per node, each running ``argv``; logs ``<log_dir>/<node>.log``."""
        sandbox = Sandbox(_policy(isolate, policy), name="run")
        procs: dict[str, NodeProcess] = {}
        try:
            for n in nodes:
                procs[n] = NodeProcess(
                    argv, name=n, log_dir=log_dir, limits=limits, sandbox=sandbox
                )
        except BaseException:
            for proc in procs.values():
                proc.close(urgent=True)
            sandbox.close()
            raise
        return ProcessTransport(procs, sandbox)

    @staticmethod
    def hosted(
        argv: Sequence[str],
        nodes: Sequence[str],
        *,
        log_dir: Path,
        limits: Limits | None = None,
        isolate: bool = True,
        name: str = "nodes",
        policy: SandboxPolicy | None = None,
    ) -> ProcessTransport:
        """One process hosting every node (routed by ``dest``); log ``<log_dir>/<name>.log``."""
        sandbox = Sandbox(_policy(isolate, policy), name="run")
        try:
            proc = NodeProcess(argv, name=name, log_dir=log_dir, limits=limits, sandbox=sandbox)
        except BaseException:
            sandbox.close()
            raise
        return ProcessTransport({n: proc for n in nodes}, sandbox)

    @property
    def sandbox_report(self) -> SandboxReport | None:
        return self.sandbox.report() if self.sandbox is not None else None

    def _procs(self) -> list[NodeProcess]:
        return list({id(x): x for x in self.routes.values()}.values())

    def call(self, node: str, body: p.Request) -> p.Reply:
        proc = self.routes[node]
        reply = proc.request(p.Envelope(p.HARNESS, node, body))
        if reply.src != node or reply.dest != p.HARNESS:
            raise self.fail(
                node,
                NodeProtocolError,
                f"node {node} answered {body.type} (msg_id {body.msg_id}) from "
                f"{reply.src!r} to {reply.dest!r}; a reply goes from {node!r} to {p.HARNESS!r}",
            )
        assert isinstance(reply.body, p.Reply)
        return reply.body

    def fail(self, node: str, cls: type[NodeError], what: str) -> NodeError:
        return self.routes[node].failure(cls, what)

    def finish(self) -> dict[str, str | NodeError]:
        out: dict[str, str | NodeError] = {}
        for proc in self._procs():
            ending = proc.finish()
            if ending is not None:
                out[proc.name] = ending
        return out

    def close(self, *, urgent: bool = False) -> None:
        try:
            for proc in self._procs():
                proc.close(urgent=urgent)
        finally:
            if self.sandbox is not None:
                self.sandbox.close()


def call(transport: Transport, node: str, body: p.Request, expected: type[R]) -> R:
    """Send ``body`` to ``node`` and return its reply of type ``expected``; an ``error``
    reply or a reply of another type is the node's failure (raised as a
    :class:`~redletter.conformance.process.NodeError` with its last lines)."""
    reply = transport.call(node, body)
    if isinstance(reply, expected):
        return reply
    what = f"{body.type} (msg_id {body.msg_id})"
    if isinstance(reply, p.Error):
        raise transport.fail(
            node,
            NodeErrorReply,
            f"node {node} answered {what} with error {reply.code}: {quote_node_text(reply.text)}",
        )
    raise transport.fail(
        node,
        NodeProtocolError,
        f"node {node} answered {what} with {reply.type}; expected {expected.type}",
    )


def init_nodes(
    transport: Transport,
    topology: Topology,
    app: str,
    initial_states: Mapping[str, p.JsonValue],
    *,
    algorithm: str | None = None,
    first_id: int = 1,
) -> int:
    """Send ``init`` to every node of ``topology``, in order (``algorithm``: the
    variant asked for, None for Chandy-Lamport); the next free msg_id."""
    msg_id = first_id
    for n in topology.nodes:
        body = p.Init(
            msg_id,
            n,
            topology.nodes,
            topology.in_channels(n),
            topology.out_channels(n),
            app,
            initial_states[n],
            algorithm,
        )
        call(transport, n, body, p.InitOk)
        msg_id += 1
    return msg_id


class Driver:
    """Drives the nodes of one run: the network, the local states, the steps."""

    def __init__(
        self,
        transport: Transport,
        topology: Topology,
        app: str,
        initial_states: Mapping[str, p.JsonValue],
    ) -> None:
        self.transport = transport
        self.topology = topology
        self.app = app
        self._states: dict[str, p.JsonValue] = {n: initial_states[n] for n in topology.nodes}
        self._network = Network.empty(topology)
        self._red: dict[int, frozenset[str]] = {}
        self._msg_id = 0
        self._index = 0
        self._initialised = False

    # -- state ---------------------------------------------------------------

    @property
    def network(self) -> Network:
        """The channels now (every message in flight)."""
        return self._network

    @property
    def states(self) -> Mapping[str, p.JsonValue]:
        """The local app state of every node, as last given to it."""
        return dict(self._states)

    @property
    def red(self) -> Mapping[int, frozenset[str]]:
        """Per snapshot: the nodes that reported recording their state for it."""
        return dict(self._red)

    # -- requests ------------------------------------------------------------

    def _next_id(self) -> int:
        self._msg_id += 1
        return self._msg_id

    def _call(self, node: str, body: p.Request, expected: type[R]) -> R:
        return call(self.transport, node, body, expected)

    def init(self) -> None:
        """Send ``init`` to every node, in topology order."""
        self._msg_id = (
            init_nodes(
                self.transport, self.topology, self.app, self._states, first_id=self._msg_id + 1
            )
            - 1
        )
        self._initialised = True

    def _step(
        self,
        node: str,
        body: p.Request,
        expected: type[p.StepReply],
        action: str,
        params: Mapping[str, object],
        delivered: p.WireMsg | None,
        new_state: p.JsonValue,
        network: Network,
    ) -> Observation:
        if not self._initialised:
            raise InputError("the driver must init the nodes before any step", code="RL-INTERNAL")
        reply = self._call(node, body, expected)
        try:
            after = network.enqueue(node, reply.sent)
        except ChannelViolation as exc:
            raise self.transport.fail(node, NodeProtocolError, exc.message) from None
        for r in reply.recorded:
            if isinstance(r, p.RecordState):
                self._red[r.snapshot] = self._red.get(r.snapshot, frozenset()) | {node}
        self._network = after
        self._index += 1
        return Observation(
            self._index,
            action,
            params,
            node,
            delivered,
            new_state,
            reply.sent,
            reply.recorded,
            reply.completed,
            after,
        )

    def app_send(self, node: str, to: str, payload: int, new_state: p.JsonValue) -> Observation:
        """SendApp on [node, to] with message ``payload``; ``new_state`` after it."""
        self._states[node] = new_state
        return self._step(
            node,
            p.AppSend(self._next_id(), to, payload, new_state),
            p.AppSendOk,
            "SendApp",
            {"c": [node, to], "m": payload},
            None,
            new_state,
            self._network,
        )

    def app_internal(self, node: str, event: int, new_state: p.JsonValue) -> Observation:
        """InternalEvent ``event`` of ``node``; ``new_state`` after it."""
        self._states[node] = new_state
        return self._step(
            node,
            p.AppInternal(self._next_id(), event, new_state),
            p.AppInternalOk,
            "InternalEvent",
            {"p": node, "e": event},
            None,
            new_state,
            self._network,
        )

    def deliver(self, channel: p.Channel, new_state: p.JsonValue = None) -> Observation:
        """Deliver the head of ``channel`` (ReceiveApp or ReceiveRedLetter).

        For an app message ``new_state`` is the receiver's state after it (required).
        """
        msg, rest = self._network.pop(channel)
        src, node = channel
        if isinstance(msg, p.AppMsg):
            if new_state is None:
                raise InputError(
                    f"delivering app {msg.payload} on {show_channel(channel)} needs the "
                    "receiver's new state",
                    code="RL-INPUT-SCHEDULE",
                )
            self._states[node] = new_state
        else:
            new_state = None
        return self._step(
            node,
            p.Deliver(self._next_id(), src, msg, new_state),
            p.DeliverOk,
            receive_action(msg),
            {"c": [src, node], "i": 1},
            msg,
            new_state,
            rest,
        )

    def start_snapshot(self, node: str, snapshot: int) -> Observation:
        """StartSnapshot of ``snapshot`` at ``node``."""
        return self._step(
            node,
            p.StartSnapshot(self._next_id(), snapshot),
            p.StartSnapshotOk,
            "StartSnapshot",
            {"p": node, "k": snapshot},
            None,
            None,
            self._network,
        )

    def report(self, node: str, snapshot: int) -> p.ReportOk:
        """What ``node`` recorded for ``snapshot`` (not a step)."""
        return self._call(node, p.Report(self._next_id(), snapshot), p.ReportOk)

    def perform(
        self, action: str, params: Mapping[str, object], new_state: p.JsonValue = None
    ) -> Observation:
        """One step in the spec's vocabulary (see the preamble of docs/protocol.md).

        ``new_state`` is the acting node's app state after an app action.
        ReceiveApp/ReceiveRedLetter must name position 1 (FIFO) and find a
        message of their kind at the head of the channel.
        """
        try:
            if action == "SendApp":
                c = _channel(params["c"])
                return self.app_send(c[0], c[1], _int(params["m"]), new_state)
            if action == "InternalEvent":
                return self.app_internal(str(params["p"]), _int(params["e"]), new_state)
            if action in ("ReceiveApp", "ReceiveRedLetter"):
                c = _channel(params["c"])
                if params.get("i", 1) != 1:
                    raise InputError(
                        f"{action} at position {params['i']}: the network is FIFO, only "
                        "position 1 can be received",
                        code="RL-INPUT-SCHEDULE",
                    )
                head = self._network.head(c)
                if head is None or receive_action(head) != action:
                    what = "is empty" if head is None else f"has {receive_action(head)} next"
                    raise InputError(
                        f"{action} on {show_channel(c)} is not enabled: the channel {what}",
                        code="RL-INPUT-SCHEDULE",
                    )
                return self.deliver(c, new_state)
            if action == "StartSnapshot":
                return self.start_snapshot(str(params["p"]), _int(params["k"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(
                f"bad parameters for {action}: {params!r} ({exc})", code="RL-INPUT-SCHEDULE"
            ) from None
        raise InputError(f"unknown action {action!r}", code="RL-INPUT-SCHEDULE")

    def close(self, *, urgent: bool = False) -> None:
        """Stop every node (``urgent``: at once)."""
        self.transport.close(urgent=urgent)

    def __enter__(self) -> Driver:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        # Ctrl-C (KeyboardInterrupt) and the like: kill at once, no grace period.
        self.close(urgent=is_urgent(exc_type))


def _channel(v: object) -> p.Channel:
    if isinstance(v, list | tuple) and len(v) == 2 and all(isinstance(x, str) for x in v):
        return (str(v[0]), str(v[1]))
    raise ValueError(f"a channel is [src, dst], got {v!r}")


def _int(v: object) -> int:
    if type(v) is not int:
        raise ValueError(f"expected an integer, got {v!r}")
    return v
