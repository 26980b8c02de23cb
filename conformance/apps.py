"""The three applications at the level of the protocol (JSON local states).

The harness computes the application and tells a node its new local state
(``new_state``), so it needs each app's rules.  These mirror TokenApp.tla,
DiffusingApp.tla and HistoryApp.tla over the JSON encoding of their local
states: token: an int; diffusing: ``{"active": bool, "sent": int, "recvd": int}``;
history: the list of the names of the events performed.

:func:`random_walk` drives a :class:`~redletter.conformance.driver.Driver` along a seeded
random schedule of enabled steps (for smoke runs and benchmarks; the judges
take their schedules from the model).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from redletter.conformance.protocol import AppMsg, JsonValue

if TYPE_CHECKING:
    from redletter.conformance.driver import Driver
    from redletter.conformance.net import Observation


class AppRules(Protocol):
    """An application's rules over JSON local states (the App* operators)."""

    @property
    def name(self) -> str: ...

    def initial(self, p: str) -> JsonValue: ...
    def sendable(self, p: str, q: str, s: JsonValue) -> Sequence[int]: ...
    def after_send(self, p: str, q: str, m: int, s: JsonValue) -> JsonValue: ...
    def events(self, p: str, s: JsonValue) -> Sequence[int]: ...
    def after_event(self, p: str, e: int, s: JsonValue) -> JsonValue: ...
    def can_receive(self, p: str, q: str, m: int, s: JsonValue) -> bool: ...
    def after_receive(self, p: str, q: str, m: int, s: JsonValue) -> JsonValue: ...


def _int(s: JsonValue) -> int:
    assert isinstance(s, int)
    return s


def _rec(s: JsonValue) -> dict[str, JsonValue]:
    assert isinstance(s, dict)
    return s


@dataclass(frozen=True)
class TokenRules:
    """TokenApp: a machine holds tokens and passes any positive number of them."""

    tokens: Mapping[str, int]
    name: str = "token"

    def initial(self, p: str) -> JsonValue:
        return self.tokens[p]

    def sendable(self, p: str, q: str, s: JsonValue) -> Sequence[int]:
        return range(1, _int(s) + 1)

    def after_send(self, p: str, q: str, m: int, s: JsonValue) -> JsonValue:
        return _int(s) - m

    def events(self, p: str, s: JsonValue) -> Sequence[int]:
        return ()

    def after_event(self, p: str, e: int, s: JsonValue) -> JsonValue:
        return s

    def can_receive(self, p: str, q: str, m: int, s: JsonValue) -> bool:
        return True

    def after_receive(self, p: str, q: str, m: int, s: JsonValue) -> JsonValue:
        return _int(s) + m


@dataclass(frozen=True)
class DiffusingRules:
    """DiffusingApp: active machines send work (Budget each) and may go idle."""

    root: str
    budget: int
    name: str = "diffusing"

    def initial(self, p: str) -> JsonValue:
        return {"active": p == self.root, "sent": 0, "recvd": 0}

    def sendable(self, p: str, q: str, s: JsonValue) -> Sequence[int]:
        r = _rec(s)
        return (1,) if r["active"] and _int(r["sent"]) < self.budget else ()

    def after_send(self, p: str, q: str, m: int, s: JsonValue) -> JsonValue:
        r = _rec(s)
        return {**r, "sent": _int(r["sent"]) + 1}

    def events(self, p: str, s: JsonValue) -> Sequence[int]:
        return (0,) if _rec(s)["active"] else ()

    def after_event(self, p: str, e: int, s: JsonValue) -> JsonValue:
        return {**_rec(s), "active": False}

    def can_receive(self, p: str, q: str, m: int, s: JsonValue) -> bool:
        return True

    def after_receive(self, p: str, q: str, m: int, s: JsonValue) -> JsonValue:
        r = _rec(s)
        return {**r, "active": True, "recvd": _int(r["recvd"]) + 1}


@dataclass(frozen=True)
class ScriptEvent:
    """One event of a HistoryApp script."""

    name: str
    kind: str  #: "internal", "send" or "receive"
    peer: str


@dataclass(frozen=True)
class HistoryRules:
    """HistoryApp: each machine runs a fixed script; its state is what it did."""

    script: Mapping[str, tuple[ScriptEvent, ...]]
    name: str = "history"

    def initial(self, p: str) -> JsonValue:
        return []

    def _next(self, p: str, s: JsonValue, kind: str, q: str) -> int | None:
        assert isinstance(s, list)
        i = len(s) + 1
        events = self.script[p]
        if i <= len(events) and events[i - 1].kind == kind and events[i - 1].peer == q:
            return i
        return None

    def _did(self, p: str, s: JsonValue) -> JsonValue:
        assert isinstance(s, list)
        return [*s, self.script[p][len(s)].name]

    def sendable(self, p: str, q: str, s: JsonValue) -> Sequence[int]:
        i = self._next(p, s, "send", q)
        return () if i is None else (i,)

    def after_send(self, p: str, q: str, m: int, s: JsonValue) -> JsonValue:
        return self._did(p, s)

    def events(self, p: str, s: JsonValue) -> Sequence[int]:
        i = self._next(p, s, "internal", p)
        return () if i is None else (i,)

    def after_event(self, p: str, e: int, s: JsonValue) -> JsonValue:
        return self._did(p, s)

    def can_receive(self, p: str, q: str, m: int, s: JsonValue) -> bool:
        return self._next(p, s, "receive", q) is not None

    def after_receive(self, p: str, q: str, m: int, s: JsonValue) -> JsonValue:
        return self._did(p, s)


def random_walk(
    driver: Driver,
    rules: AppRules,
    *,
    seed: int,
    steps: int,
    snapshots: Sequence[int] = (1,),
    start_weight: float = 0.05,
) -> list[Observation]:
    """Perform up to ``steps`` random enabled steps (fewer if none is enabled).

    Each step is chosen uniformly among the enabled ones (an app send picks a
    uniformly random message), except that starting a snapshot is chosen with
    probability ``start_weight`` when enabled.  Snapshot k may be started by
    any machine not yet red in k.  Deterministic for a given ``seed``.
    """
    rng = random.Random(seed)
    topo = driver.topology
    out: list[Observation] = []
    for _ in range(steps):
        states = driver.states
        net = driver.network
        starts = [
            (p, k) for k in snapshots for p in topo.nodes if p not in driver.red.get(k, frozenset())
        ]
        if starts and rng.random() < start_weight:
            p, k = starts[rng.randrange(len(starts))]
            out.append(driver.start_snapshot(p, k))
            continue
        moves: list[tuple[str, object]] = []
        for c in topo.channels:
            if rules.sendable(c[0], c[1], states[c[0]]):
                moves.append(("send", c))
            head = net.head(c)
            if head is not None and (
                not isinstance(head, AppMsg)
                or rules.can_receive(c[1], c[0], head.payload, states[c[1]])
            ):
                moves.append(("deliver", c))
        for p in topo.nodes:
            for e in rules.events(p, states[p]):
                moves.append(("internal", (p, e)))
        if not moves:
            if not starts:
                break
            p, k = starts[rng.randrange(len(starts))]
            out.append(driver.start_snapshot(p, k))
            continue
        kind, arg = moves[rng.randrange(len(moves))]
        if kind == "send":
            assert isinstance(arg, tuple)
            p, q = arg
            options = rules.sendable(p, q, states[p])
            m = options[rng.randrange(len(options))]
            out.append(driver.app_send(p, q, m, rules.after_send(p, q, m, states[p])))
        elif kind == "deliver":
            assert isinstance(arg, tuple)
            q, p = arg
            head = net.head(arg)
            new = (
                rules.after_receive(p, q, head.payload, states[p])
                if isinstance(head, AppMsg)
                else None
            )
            out.append(driver.deliver((q, p), new))
        else:
            assert isinstance(arg, tuple)
            p, e = arg
            out.append(driver.app_internal(p, e, rules.after_event(p, e, states[p])))
    return out
