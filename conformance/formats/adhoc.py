"""Adapter: run adhoccomputing's ``ChandyLamportComponentModel`` on COS 418 scenarios.

adhoccomputing (PyPI ``adhoccomputing``, "Ad Hoc Computing Library", GPL-3) ships
``adhoccomputing.DistributedAlgorithms.Snapshot.Snapshot.ChandyLamportComponentModel``.
How it works (read from its source, version 2.1.7):

- A component's *local state* is ``recv_events``: every event its queue handler
  dispatched (``on_pre_event``).  Recording copies that list into ``state``.
- ``take_snapshot`` (event ``SnapshotEventTypes.TS``) records and broadcasts a
  ``MARK`` (a ``GenericMessage``) with ``send_down`` to every DOWN connector.
- ``mark_recv``: on the first MARK it records, broadcasts, and stores the MARK's
  channel as empty; on a later MARK it copies the events it logged on that
  channel into ``in_chnl_states`` — keyed by the *event* instead of the channel.
- A component's snapshot is complete when the channels that MARKs came from equal
  ``chnls``, the channels registered through ``on_connected_to_component``; it
  then floods a ``GSU`` message holding a ``ChandyLamportState`` (component id,
  the recorded events, the channel states); components forward each component's
  GSU once, and a component that started a snapshot reports GSUs in
  ``on_gsu_recv`` (a debug log line in the library; here, collected).
- There are no snapshot ids: one recording per component until ``reset_state``.

The adapter drives the component objects directly (``num_worker_threads=0``, no
threads), doing what the library's queue handler and ``GenericChannel`` do:
``on_pre_event`` then the event's handler; the network is FIFO per directed link,
with a seeded delivery order.  The token app is a subclass: a ``PASS`` event
handled by the component sends ``Tokens(n)`` on the one link to the destination
(so sends are part of the recorded event history), receipts add tokens.  The
recorded tokens of a component are its initial tokens less the PASS events plus
the token receipts in its recorded events; recorded channel messages are the
token events in its channel states (each event carries its channel).  Snapshot k
is read from the GSU reports its starter received: the j-th snapshot a server
started takes each component's j-th report (there are no ids to go by).
"""

from __future__ import annotations

import logging
import random
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from redletter.conformance.formats.cos418 import (
    RecordedMessage,
    Scenario,
    Send,
    Snap,
    Snapshot,
    Tick,
    Topology,
    check_scenario,
)
from redletter.errors import EnvironmentMissing

__all__ = ["AdhocRun", "Tokens", "adhoc_version", "run_adhoc"]

PACKAGE = "adhoccomputing"


def _import() -> Any:
    try:
        from adhoccomputing.DistributedAlgorithms.Snapshot import (  # type: ignore[import-untyped,import-not-found,unused-ignore]
            Snapshot as snapmod,
        )
    except ImportError as exc:
        raise EnvironmentMissing(
            f"cannot import {PACKAGE} ({exc}); install it with "
            "`.venv/bin/pip install adhoccomputing==2.1.7 networkx requests` "
            "(it imports networkx and requests without declaring them)",
            code="RL-ENV-ADHOC",
        ) from None
    # The library logs to the "AHC" logger; keep its errors off the user's terminal.
    logging.getLogger("AHC").addHandler(logging.NullHandler())
    logging.getLogger("AHC").propagate = False
    return snapmod


def adhoc_version() -> str:
    """The installed adhoccomputing version."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(PACKAGE)
    except PackageNotFoundError as exc:
        raise EnvironmentMissing(f"{PACKAGE} is not installed", code="RL-ENV-ADHOC") from exc


@dataclass(frozen=True)
class Tokens:
    """An app message: n tokens (a plain payload, not a GenericMessage)."""

    n: int


class _TokenEventTypes(Enum):
    PASS = "PASS"


class _Link:
    """A directed FIFO link standing in for a GenericChannel, named ``"i-j"``."""

    def __init__(self, src: int, dst: int) -> None:
        self.src, self.dst = src, dst
        self.componentinstancenumber = f"{src}-{dst}"
        self.componentname = "FifoLink"
        self.queue: deque[Any] = deque()

    def trigger_event(self, event: Any) -> None:
        self.queue.append(event)


@dataclass(frozen=True)
class AdhocRun:
    """The snaps converted from the reports, and what happened on the way."""

    snaps: tuple[Snap, ...]
    reports: int  # GSU reports collected at starters
    crashed: str | None  # an exception the library raised, if any
    steps: int  # events dispatched to components


def _make_node_class(snapmod: Any) -> Any:
    base = snapmod.ChandyLamportComponentModel
    generics = snapmod

    class TokenNode(base):  # type: ignore[misc,valid-type]
        def __init__(self, number: int, tokens: int) -> None:
            super().__init__("TokenNode", number, num_worker_threads=0)
            self.tokens = tokens
            self.reports: list[tuple[int, Any]] = []  # (dispatch counter, state)
            self.out_links: dict[int, _Link] = {}
            self.clock = 0
            self.eventhandlers[_TokenEventTypes.PASS] = self.on_pass

        def on_pass(self, eventobj: Any) -> None:
            dst, n = eventobj.eventcontent
            self.tokens -= n
            ev = generics.Event(self, generics.EventTypes.MFRT, Tokens(n))
            self.out_links[dst].trigger_event(ev)

        def msg_recv(self, event: Any) -> Any:
            out = super().msg_recv(event)
            if isinstance(event.eventcontent, Tokens):
                self.tokens += event.eventcontent.n
            return out

        def on_gsu_recv(self, state: Any) -> None:
            super().on_gsu_recv(state)
            if self.init_snapshot:
                self.reports.append((self.clock, state))

    return TokenNode


def _dispatch(node: Any, event: Any) -> None:
    """What GenericModel.queue_handler does with one work item."""
    if event.event in node.eventhandlers:
        node.on_pre_event(event)
        node.eventhandlers[event.event](eventobj=event)


def run_adhoc(
    topology: Topology,
    scenario: Scenario,
    seed: int,
    *,
    register_inbound: bool = True,
    deliver_probability: float = 0.5,
    max_steps: int = 100_000,
) -> AdhocRun:
    """Run the scenario on adhoccomputing's Chandy–Lamport components.

    ``register_inbound``: call ``on_connected_to_component`` for each inbound link
    (the library's ``Topology`` never does, and without it no snapshot completes).
    Delivery: after each event, while ``random() < deliver_probability`` the head of
    a random non-empty link is delivered; after the last event all links drain in a
    random order.  ``random.Random(seed)`` makes the run reproducible.
    """
    check_scenario(topology, scenario)
    snapmod = _import()
    generics = snapmod
    node_cls = _make_node_class(snapmod)
    rng = random.Random(seed)
    ids = topology.ids
    idx = {s: i for i, s in enumerate(ids)}
    nodes = [node_cls(i, s.tokens) for i, s in enumerate(topology.servers)]
    links: list[_Link] = []
    for a, b in topology.links:
        link = _Link(idx[a], idx[b])
        links.append(link)
        nodes[idx[a]].connect_me_to_component(generics.ConnectorTypes.DOWN, link)
        nodes[idx[a]].out_links[idx[b]] = link
        if register_inbound:
            nodes[idx[b]].on_connected_to_component(generics.ConnectorTypes.UP, link)
    initial = [s.tokens for s in topology.servers]
    starts: list[tuple[int, int]] = []  # (node, clock at start) per snapshot id
    counter = 0
    crashed: str | None = None

    def step(node: Any, event: Any) -> None:
        nonlocal counter
        counter += 1
        node.clock = counter
        _dispatch(node, event)

    def deliver_one() -> bool:
        busy = [link for link in links if link.queue]
        if not busy:
            return False
        link = rng.choice(busy)
        sent = link.queue.popleft()
        ev = generics.Event(
            None,
            generics.EventTypes.MFRB,
            sent.eventcontent,
            fromchannel=link.componentinstancenumber,
            eventid=sent.eventid,
            eventsource_componentname=sent.eventsource_componentname,
            eventsource_componentinstancenumber=sent.eventsource_componentinstancenumber,
        )
        step(nodes[link.dst], ev)
        return True

    try:
        for e in scenario.events:
            if isinstance(e, Tick):
                continue
            if isinstance(e, Send):
                ev = generics.Event(None, _TokenEventTypes.PASS, (idx[e.dst], e.n))
                step(nodes[idx[e.src]], ev)
            elif isinstance(e, Snapshot):
                starts.append((idx[e.server], counter + 1))
                step(
                    nodes[idx[e.server]], generics.Event(None, snapmod.SnapshotEventTypes.TS, None)
                )
            while rng.random() < deliver_probability and deliver_one():
                if counter > max_steps:
                    break
        while counter <= max_steps and deliver_one():
            pass
    except Exception as exc:  # the library under test raised: that is a finding
        crashed = f"{type(exc).__name__}: {exc}"

    snaps = _convert(topology, nodes, starts, initial)
    reports = sum(len(n.reports) for n in nodes)
    return AdhocRun(tuple(snaps), reports, crashed, counter)


def _tokens_of(events: Sequence[Any], initial: int) -> int:
    total = initial
    for ev in events:
        content = ev.eventcontent
        if ev.event == _TokenEventTypes.PASS:
            total -= content[1]
        elif isinstance(content, Tokens):
            total += content.n
    return total


def _convert(
    topology: Topology,
    nodes: Sequence[Any],
    starts: Sequence[tuple[int, int]],
    initial: Sequence[int],
) -> list[Snap]:
    ids = topology.ids
    out: list[Snap] = []
    for k, (starter, clock) in enumerate(starts):
        # the j-th snapshot this starter started takes each component's j-th report
        ordinal = sum(1 for s, _ in starts[:k] if s == starter)
        first = min(c for s, c in starts if s == starter)
        seen: dict[int, int] = {}
        chosen: dict[int, Any] = {}
        for at, state in nodes[starter].reports:
            if at < first:
                continue
            comp = int(state.component_id)
            if seen.get(comp, 0) == ordinal and at >= clock:
                chosen[comp] = state
            seen[comp] = seen.get(comp, 0) + 1
        if not chosen:
            continue
        tokens: list[tuple[str, int]] = []
        messages: list[RecordedMessage] = []
        for comp in sorted(chosen):
            state = chosen[comp]
            tokens.append((ids[comp], _tokens_of(state.component_state, initial[comp])))
            for _key, lists in state.chnl_states.items():
                for lst in lists:
                    for ev in lst:
                        if isinstance(ev.eventcontent, Tokens):
                            a, b = (int(x) for x in str(ev.fromchannel).split("-"))
                            messages.append(RecordedMessage(ids[a], ids[b], ev.eventcontent.n))
        out.append(Snap(k, tuple(tokens), tuple(messages)))
    return out
