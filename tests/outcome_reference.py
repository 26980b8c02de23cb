"""Reference searches the outcome judge is checked against (tests and bench only).

- :func:`old_search`: the outcome judge as it was before the prefix method (a DFS
  over FIFO schedules with memoisation, in which the events of one tick happen in
  any order and a message may be delivered between them).  Kept as written, to
  cross-check the new judge wherever it finishes.
- :func:`tick_search`: a brute-force search over the schedules the new judge
  decides about (the simulator's ticks: deliveries only during ticks, a message
  delivered at a tick after the one it was sent in, each link's head only, at
  most one message per sending server per tick, within a tick in the sorted
  order of the links), for tiny scenarios.
- :func:`random_tick_schedule` and :func:`random_any_schedule`: one random
  schedule of each kind, replayed into the snapshots a correct implementation
  records along it.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TypeAlias

from redletter.conformance.formats.cos418 import (
    Link,
    RecordedMessage,
    Scenario,
    Send,
    Snap,
    Snapshot,
    Tick,
    Topology,
)

__all__ = ["old_search", "random_any_schedule", "random_tick_schedule", "tick_search"]


# ---------------------------------------------------------------------------
# the old search (verdict only)

_NOT_YET = -2
_CLOSED = -1

_State: TypeAlias = tuple[
    int, int, tuple[int, ...], tuple[tuple[int, ...], ...], tuple[int, ...], tuple[int, ...]
]


class _Budget(Exception):
    pass


@dataclass(frozen=True)
class _Problem:
    ids: tuple[str, ...]
    links: tuple[Link, ...]
    inbound: tuple[tuple[int, ...], ...]
    outbound: tuple[tuple[int, ...], ...]
    groups: tuple[tuple[tuple[int, int, int], ...], ...]
    k_count: int
    exp_tokens: tuple[int | None, ...]
    exp_chan: tuple[tuple[int, ...] | None, ...]


def _compile(topology: Topology, scenario: Scenario, expected: dict[int, Snap]) -> _Problem:
    ids = topology.ids
    sidx = {s: i for i, s in enumerate(ids)}
    links = topology.links
    lidx = {link: i for i, link in enumerate(links)}
    inbound = tuple(tuple(lidx[link] for link in topology.inbound(s)) for s in ids)
    outbound = tuple(tuple(lidx[link] for link in topology.outbound(s)) for s in ids)
    groups = []
    k = 0
    for group in scenario.groups():
        g = []
        for e in group:
            if isinstance(e, Send):
                g.append((0, lidx[(e.src, e.dst)], e.n))
            else:
                g.append((1, sidx[e.server], k))
                k += 1
        groups.append(tuple(g))
    exp_tokens: list[int | None] = []
    exp_chan: list[tuple[int, ...] | None] = []
    for kk in range(k):
        snap = expected.get(kk)
        toks = snap.tokens_dict() if snap is not None else {}
        for s in ids:
            exp_tokens.append(toks.get(s) if snap is not None else None)
        for link in links:
            exp_chan.append(snap.channel(link) if snap is not None else None)
    return _Problem(
        ids, links, inbound, outbound, tuple(groups), k, tuple(exp_tokens), tuple(exp_chan)
    )


def _successors(p: _Problem, st: _State) -> Iterator[_State]:
    g, done, bal, queues, rec, chan = st
    n_s, n_l = len(p.ids), len(p.links)

    def record(
        server: int,
        k: int,
        first: int | None,
        balv: tuple[int, ...],
        qs: list[tuple[int, ...]],
        recl: list[int],
        chl: list[int],
    ) -> bool:
        want = p.exp_tokens[k * n_s + server]
        if want is not None and want != balv[server]:
            return False
        recl[k * n_s + server] = 1
        for li in p.inbound[server]:
            idx = k * n_l + li
            if li == first:
                chl[idx] = _CLOSED
                if p.exp_chan[idx]:
                    return False
            else:
                chl[idx] = 0
        for li in p.outbound[server]:
            qs[li] = (*qs[li], -(k + 1))
        return True

    for li, q in enumerate(queues):
        if not q:
            continue
        head = q[0]
        _, dst = p.links[li]
        qs = list(queues)
        qs[li] = q[1:]
        recl, chl = list(rec), list(chan)
        if head > 0:
            b = list(bal)
            b[p.ids.index(dst)] += head
            ok = True
            for k in range(p.k_count):
                idx = k * n_l + li
                r = chl[idx]
                if r < 0:
                    continue
                exp = p.exp_chan[idx]
                if exp is None:
                    continue
                if r < len(exp) and exp[r] == head:
                    chl[idx] = r + 1
                else:
                    ok = False
                    break
            if ok:
                yield (g, done, tuple(b), tuple(qs), rec, tuple(chl))
            continue
        k = -head - 1
        d = p.ids.index(dst)
        if not rec[k * n_s + d]:
            if not record(d, k, li, bal, qs, recl, chl):
                continue
        else:
            idx = k * n_l + li
            r = chl[idx]
            exp = p.exp_chan[idx]
            chl[idx] = _CLOSED
            if exp is not None and r != len(exp):
                continue
        yield (g, done, bal, tuple(qs), tuple(recl), tuple(chl))

    if g >= len(p.groups):
        return
    group = p.groups[g]
    for i, (kind, a, b_) in enumerate(group):
        if done & (1 << i):
            continue
        ndone = done | (1 << i)
        ng = g
        if ndone == (1 << len(group)) - 1:
            ng, ndone = g + 1, 0
        if kind == 0:
            s = p.ids.index(p.links[a][0])
            if bal[s] < b_:
                continue
            bl = list(bal)
            bl[s] -= b_
            qs = list(queues)
            qs[a] = (*qs[a], b_)
            yield (ng, ndone, tuple(bl), tuple(qs), rec, chan)
        else:
            qs = list(queues)
            recl, chl = list(rec), list(chan)
            if not record(a, b_, None, bal, qs, recl, chl):
                continue
            yield (ng, ndone, bal, tuple(qs), tuple(recl), tuple(chl))


def old_search(
    topology: Topology, scenario: Scenario, snaps: Sequence[Snap], budget: int = 200_000
) -> bool | None:
    """The old judge's answer on well-formed snaps: True (a schedule yields them),
    False (none does), None (its budget ran out)."""
    p = _compile(topology, scenario, {s.id: s for s in snaps})
    init: _State = (
        0,
        0,
        tuple(s.tokens for s in topology.servers),
        tuple(() for _ in p.links),
        tuple(0 for _ in range(p.k_count * len(p.ids))),
        tuple(_NOT_YET for _ in range(p.k_count * len(p.links))),
    )
    seen: set[_State] = set()

    def accepting(st: _State) -> bool:
        return st[0] >= len(p.groups) and all(st[4]) and all(c == _CLOSED for c in st[5])

    def dfs(st: _State) -> bool:
        if accepting(st):
            return True
        if st in seen:
            return False
        seen.add(st)
        if len(seen) > budget:
            raise _Budget
        return any(dfs(nxt) for nxt in _successors(p, st))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        return dfs(init)
    except _Budget:
        return None
    finally:
        sys.setrecursionlimit(limit)


# ---------------------------------------------------------------------------
# the simulator's schedules, by brute force


@dataclass(frozen=True)
class _Tiny:
    ids: tuple[str, ...]
    links: tuple[Link, ...]
    order: tuple[int, ...]  # links in the order a tick visits them
    inbound: tuple[tuple[int, ...], ...]
    outbound: tuple[tuple[int, ...], ...]
    src: tuple[int, ...]
    dst: tuple[int, ...]
    groups: tuple[tuple[tuple[int, int, int], ...], ...]  # (0 send, link, n) / (1 snap, s, k)
    gaps: tuple[int, ...]  # ticks between group g and group g+1
    first_gap: int  # ticks before group 0
    k_count: int


def _tiny(topology: Topology, scenario: Scenario) -> _Tiny:
    ids = topology.ids
    sidx = {s: i for i, s in enumerate(ids)}
    links = topology.links
    lidx = {link: i for i, link in enumerate(links)}
    groups: list[tuple[tuple[int, int, int], ...]] = []
    gaps: list[int] = []
    cur: list[tuple[int, int, int]] = []
    pending = 0
    first_gap = 0
    k = 0
    for e in scenario.events:
        if isinstance(e, Tick):
            if cur:
                groups.append(tuple(cur))
                cur = []
            pending += e.n
            continue
        if not cur:
            if groups:
                gaps.append(pending)
            else:
                first_gap = pending
            pending = 0
        if isinstance(e, Send):
            cur.append((0, lidx[(e.src, e.dst)], e.n))
        else:
            assert isinstance(e, Snapshot)
            cur.append((1, sidx[e.server], k))
            k += 1
    if cur:
        groups.append(tuple(cur))
    return _Tiny(
        ids,
        links,
        tuple(sorted(range(len(links)), key=lambda i: links[i])),
        tuple(tuple(lidx[link] for link in topology.inbound(s)) for s in ids),
        tuple(tuple(lidx[link] for link in topology.outbound(s)) for s in ids),
        tuple(sidx[a] for a, _ in links),
        tuple(sidx[b] for _, b in links),
        tuple(groups),
        tuple(gaps),
        first_gap,
        k,
    )


# a run's state: tokens, queues (payload, sent this tick), recorded tokens per (k, s)
# (-1: not yet), recorded channel per (k, l) (None: not recording / closed)
_Run: TypeAlias = tuple[
    tuple[int, ...],
    tuple[tuple[int, ...], ...],
    tuple[int, ...],
    tuple[tuple[int, ...] | None, ...],
    tuple[tuple[int, ...] | None, ...],
]


class _Sim:
    """A mutable run of the token app with a correct Chandy–Lamport implementation."""

    def __init__(self, t: _Tiny, init: Sequence[int]) -> None:
        self.t = t
        n_s, n_l = len(t.ids), len(t.links)
        self.tokens = list(init)
        self.queues: list[list[int]] = [[] for _ in range(n_l)]
        self.rec_tokens = [-1] * (t.k_count * n_s)
        self.recording: list[list[int] | None] = [None] * (t.k_count * n_l)
        self.closed: list[tuple[int, ...] | None] = [None] * (t.k_count * n_l)
        self.fresh: set[tuple[int, int]] = set()  # (link, position) sent during this tick

    def key(self) -> _Run:
        return (
            tuple(self.tokens),
            tuple(tuple(q) for q in self.queues),
            tuple(self.rec_tokens),
            tuple(None if r is None else tuple(r) for r in self.recording),
            tuple(self.closed),
        )

    def record(self, s: int, k: int, first: int | None) -> None:
        t = self.t
        n_s, n_l = len(t.ids), len(t.links)
        self.rec_tokens[k * n_s + s] = self.tokens[s]
        for li in t.inbound[s]:
            if li == first:
                self.closed[k * n_l + li] = ()
            else:
                self.recording[k * n_l + li] = []
        for li in t.outbound[s]:
            self.queues[li].append(-(k + 1))

    def deliver(self, li: int) -> None:
        t = self.t
        n_s, n_l = len(t.ids), len(t.links)
        head = self.queues[li].pop(0)
        d = t.dst[li]
        if head > 0:
            self.tokens[d] += head
            for k in range(t.k_count):
                r = self.recording[k * n_l + li]
                if r is not None:
                    r.append(head)
            return
        k = -head - 1
        if self.rec_tokens[k * n_s + d] < 0:
            self.record(d, k, li)
        else:
            r = self.recording[k * n_l + li]
            assert r is not None
            self.closed[k * n_l + li] = tuple(r)
            self.recording[k * n_l + li] = None

    def snaps(self) -> list[Snap]:
        t = self.t
        n_s, n_l = len(t.ids), len(t.links)
        out = []
        for k in range(t.k_count):
            toks = tuple((t.ids[s], self.rec_tokens[k * n_s + s]) for s in range(n_s))
            msgs = [
                RecordedMessage(t.links[li][0], t.links[li][1], n)
                for li in range(n_l)
                for n in self.closed[k * n_l + li] or ()
            ]
            out.append(Snap(k, toks, tuple(msgs)))
        return out


def _choices(
    t: _Tiny, queues: Sequence[Sequence[int]], one_per_sender: bool = True
) -> list[tuple[int, ...]]:
    """The sets of links a tick may deliver on: a head each, one per sending server
    (or, with ``one_per_sender=False``, any set of links)."""
    per: dict[int, list[int | None]] = {}
    for li in range(len(t.links)):
        if queues[li]:
            per.setdefault(t.src[li] if one_per_sender else li, [None]).append(li)
    out: list[tuple[int, ...]] = [()]
    for opts in per.values():
        out = [(*c, li) if li is not None else c for c in out for li in opts]
    return [tuple(sorted(c, key=t.order.index)) for c in out]


def _tick(sim: _Sim, chosen: Sequence[int]) -> None:
    """One tick: the chosen links deliver their heads, in the tick's order.  A red
    letter sent during the tick is not delivered in it (a link whose head was
    sent in this tick is skipped)."""
    before = [len(q) for q in sim.queues]
    for li in chosen:
        if before[li] and sim.queues[li]:
            sim.deliver(li)


def _matches(sim: _Sim, want: dict[int, Snap]) -> bool:
    t = sim.t
    got = sim.snaps()
    for k, snap in want.items():
        mine = got[k]
        if mine.tokens_dict() != snap.tokens_dict():
            return False
        if any(mine.channel(link) != snap.channel(link) for link in t.links):
            return False
    return True


def _consistent(sim: _Sim, want: dict[int, Snap]) -> bool:
    """No recorded value departs from the wanted one so far."""
    t = sim.t
    n_s, n_l = len(t.ids), len(t.links)
    for k, snap in want.items():
        toks = snap.tokens_dict()
        for s in range(n_s):
            r = sim.rec_tokens[k * n_s + s]
            if r >= 0 and r != toks[t.ids[s]]:
                return False
        for li in range(n_l):
            exp = snap.channel(t.links[li])
            closed = sim.closed[k * n_l + li]
            if closed is not None and closed != exp:
                return False
            open_ = sim.recording[k * n_l + li]
            if open_ is not None and tuple(open_) != exp[: len(open_)]:
                return False
    return True


def tick_search(
    topology: Topology,
    scenario: Scenario,
    snaps: Sequence[Snap],
    budget: int = 300_000,
    *,
    one_per_sender: bool = True,
) -> bool | None:
    """Whether some schedule of the simulator's kind yields ``snaps`` (by brute
    force over the links each tick delivers on); None past ``budget`` states.
    ``one_per_sender=False`` drops the simulator's rule that a server delivers on
    one of its links per tick (the outcome judge does not require it)."""
    t = _tiny(topology, scenario)
    want = {s.id: s for s in snaps}
    init = [s.tokens for s in topology.servers]
    seen: set[tuple[int, int, _Run]] = set()
    count = 0

    def copy(sim: _Sim) -> _Sim:
        new = _Sim(t, init)
        new.tokens = sim.tokens[:]
        new.queues = [q[:] for q in sim.queues]
        new.rec_tokens = sim.rec_tokens[:]
        new.recording = [None if r is None else r[:] for r in sim.recording]
        new.closed = sim.closed[:]
        return new

    def run_group(sim: _Sim, g: int) -> bool:
        for kind, a, b in t.groups[g]:
            if kind == 0:
                s = t.src[a]
                if sim.tokens[s] < b:
                    return False
                sim.tokens[s] -= b
                sim.queues[a].append(b)
            else:
                sim.record(a, b, None)
        return _consistent(sim, want)

    def search(sim: _Sim, g: int, left: int) -> bool:
        """Before group g (g == len: the drain), ``left`` ticks to go first."""
        nonlocal count
        key = (g, left if g < len(t.groups) else -1, sim.key())
        if key in seen:
            return False
        seen.add(key)
        count += 1
        if count > budget:
            raise _Budget
        if g == len(t.groups):
            if not any(sim.queues):
                return _matches(sim, want)
            for chosen in _choices(t, sim.queues, one_per_sender):
                if not chosen:
                    continue
                nxt = copy(sim)
                _tick(nxt, chosen)
                if _consistent(nxt, want) and search(nxt, g, -1):
                    return True
            return False
        if left == 0:
            nxt = copy(sim)
            if not run_group(nxt, g):
                return False
            return search(nxt, g + 1, t.gaps[g] if g < len(t.gaps) else -1)
        for chosen in _choices(t, sim.queues, one_per_sender):
            nxt = copy(sim)
            _tick(nxt, chosen)
            if _consistent(nxt, want) and search(nxt, g, left - 1):
                return True
        return False

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        if not t.groups:
            return _matches(_Sim(t, init), want)
        return search(_Sim(t, init), 0, t.first_gap)
    except _Budget:
        return None
    finally:
        sys.setrecursionlimit(limit)


def random_tick_schedule(topology: Topology, scenario: Scenario, seed: int) -> list[Snap] | None:
    """The snapshots along one random schedule of the simulator's kind (None if a
    send cannot be paid for on it)."""
    rng = random.Random(seed)
    t = _tiny(topology, scenario)
    sim = _Sim(t, [s.tokens for s in topology.servers])
    wait = rng.random()

    def some_tick() -> None:
        opts = _choices(t, sim.queues)
        busy = [c for c in opts if c]
        pick = rng.choice(busy) if busy and rng.random() > wait else rng.choice(opts)
        _tick(sim, pick)

    for g, group in enumerate(t.groups):
        gap = t.first_gap if g == 0 else t.gaps[g - 1]
        for _ in range(gap):
            some_tick()
        for kind, a, b in group:
            if kind == 0:
                if sim.tokens[t.src[a]] < b:
                    return None
                sim.tokens[t.src[a]] -= b
                sim.queues[a].append(b)
            else:
                sim.record(a, b, None)
    while any(sim.queues):
        opts = [c for c in _choices(t, sim.queues) if c]
        _tick(sim, rng.choice(opts))
    return sim.snaps()


def random_any_schedule(topology: Topology, scenario: Scenario, seed: int) -> list[Snap] | None:
    """The snapshots along one random FIFO schedule of the old judge's kind: the
    events of a group in any order, a delivery anywhere (None if a send cannot be
    paid for on it)."""
    rng = random.Random(seed)
    t = _tiny(topology, scenario)
    sim = _Sim(t, [s.tokens for s in topology.servers])
    for group in t.groups:
        todo = list(group)
        rng.shuffle(todo)
        while todo:
            ready = [li for li, q in enumerate(sim.queues) if q]
            if ready and rng.random() < 0.5:
                sim.deliver(rng.choice(ready))
                continue
            kind, a, b = todo.pop()
            if kind == 0:
                if sim.tokens[t.src[a]] < b:
                    return None
                sim.tokens[t.src[a]] -= b
                sim.queues[a].append(b)
            else:
                sim.record(a, b, None)
    while any(sim.queues):
        sim.deliver(rng.choice([li for li, q in enumerate(sim.queues) if q]))
    return sim.snaps()
