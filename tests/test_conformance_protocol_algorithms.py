"""init.algorithm and the idle turn: what every node library must do with them."""

from __future__ import annotations

import pytest

from redletter.conformance import protocol as p
from redletter.conformance.node import NodeHost
from redletter.conformance.nodes.reference import ReferenceNode
from redletter.errors import InputError


def _init(algorithm: str | None) -> p.Init:
    return p.Init(
        msg_id=1,
        node_id="p1",
        node_ids=("p1", "p2"),
        in_channels=(("p2", "p1"),),
        out_channels=(("p1", "p2"),),
        app="token",
        app_state=3,
        algorithm=algorithm,
    )


def test_chandy_lamport_is_the_default_and_is_omitted_on_the_wire() -> None:
    line = p.encode(p.Envelope(p.HARNESS, "p1", _init(None)))
    assert "algorithm" not in line
    assert p.decode(line).body == _init(None)
    host = NodeHost(ReferenceNode)
    assert host.handle("p1", _init("chandy-lamport")) == p.InitOk(1)


def test_a_node_asked_for_another_algorithm_answers_unsupported() -> None:
    host = NodeHost(ReferenceNode)
    assert host.handle("p1", _init("lazy")) == p.Error(
        1, None, "unsupported", "this node runs the chandy-lamport algorithm, not lazy"
    )
    assert "p1" not in host.nodes


def test_an_unknown_algorithm_is_a_protocol_error() -> None:
    line = p.encode(p.Envelope(p.HARNESS, "p1", _init(None)))
    bad = line.replace('"app_state":3', '"app_state":3,"algorithm":"paxos"')
    with pytest.raises(InputError) as info:
        p.decode(bad)
    assert (
        "body.algorithm must be one of chandy-lamport, lazy, observer, barrier"
        in info.value.message
    )


def test_an_idle_turn_of_a_chandy_lamport_node_does_nothing() -> None:
    host = NodeHost(ReferenceNode)
    host.handle("p1", _init(None))
    host.handle("p1", p.StartSnapshot(msg_id=2, snapshot=1))
    assert host.handle("p1", p.Idle(msg_id=3)) == p.IdleOk(3)
