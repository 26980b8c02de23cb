"""Judge an outcome: do the snapshots a black box produced come from SOME FIFO schedule?

Given a COS 418 scenario (topology, initial tokens, the sends and snapshot starts
with their tick structure) and the ``.snap`` snapshots an implementation produced,
:func:`judge_outcome` searches the FIFO schedules of the scenario for one whose
Chandy–Lamport snapshots are exactly those recorded.

The schedules searched: the scenario's events split at ``tick`` lines into groups;
events of one group happen in any order (they are concurrent), groups in file
order; an app send happens at its event (and needs the sender to hold the tokens),
a message (app or red letter) is delivered at any point after it was sent, each
channel FIFO.  Snapshot k is the k-th ``snapshot`` line.  The search is a DFS with
memoisation, pruned as soon as a recorded value departs from the expected one.

Verdicts: ``pass`` with a witness schedule (steps in the spec's vocabulary),
``fail`` with an explanation (which field is unreachable, and the closest schedule:
the one matching the most fields), ``unknown`` when the search budget (states
expanded) runs out.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

from redletter.conformance.cos418 import Link, Scenario, Send, Snap, Step, Topology, check_scenario
from redletter.errors import InputError

__all__ = ["DEFAULT_BUDGET", "Field", "Judgement", "judge_outcome", "replay_snapshots"]

DEFAULT_BUDGET = 200_000

#: A recorded field: ``("tokens", k, server)`` or ``("channel", k, "src -> dst")``.
Field: TypeAlias = tuple[str, int, str]

_NOT_YET = -2  # channel not recording yet (its owner has not recorded this snapshot)
_CLOSED = -1  # the channel's red letter arrived: recording over
_DIVERGED = -3  # recording, and already different from the expected (relaxed search only)


@dataclass(frozen=True)
class Judgement:
    """The verdict, its explanation, and the schedules that back it."""

    verdict: Literal["pass", "fail", "unknown"]
    message: str
    witness: tuple[Step, ...] | None = None
    closest: tuple[Step, ...] | None = None
    matched: int = 0
    fields: int = 0
    states: int = 0


class _BudgetExhausted(Exception):
    pass


# State: (group, done-mask, balances, queues, recorded, channels)
_State: TypeAlias = tuple[
    int, int, tuple[int, ...], tuple[tuple[int, ...], ...], tuple[int, ...], tuple[int, ...]
]


@dataclass(frozen=True)
class _Problem:
    ids: tuple[str, ...]
    links: tuple[Link, ...]
    inbound: tuple[tuple[int, ...], ...]
    outbound: tuple[tuple[int, ...], ...]
    groups: tuple[tuple[tuple[int, int, int], ...], ...]  # (kind 0 send/1 snap, a, b)
    k_count: int
    exp_tokens: tuple[int | None, ...]  # index k * S + s
    exp_chan: tuple[tuple[int, ...] | None, ...]  # index k * L + l


def _compile(
    topology: Topology,
    scenario: Scenario,
    expected: dict[int, Snap],
    only: Field | None = None,
) -> _Problem:
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
            want = only is None or only == ("tokens", kk, s)
            exp_tokens.append(toks.get(s) if snap is not None and want else None)
        for link in links:
            want = only is None or only == ("channel", kk, f"{link[0]} -> {link[1]}")
            exp_chan.append(snap.channel(link) if snap is not None and want else None)
    return _Problem(
        ids, links, inbound, outbound, tuple(groups), k, tuple(exp_tokens), tuple(exp_chan)
    )


def _successors(p: _Problem, st: _State, relaxed: bool) -> Iterator[tuple[Step, _State, int]]:
    """Every enabled step: (step, next state, number of fields it finalises wrongly).

    In strict mode (``relaxed`` false) steps that record a wrong value are not
    yielded at all.
    """
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
    ) -> int | None:
        cost = 0
        want = p.exp_tokens[k * n_s + server]
        if want is not None and want != balv[server]:
            if not relaxed:
                return None
            cost += 1
        recl[k * n_s + server] = 1
        for li in p.inbound[server]:
            idx = k * n_l + li
            if li == first:
                chl[idx] = _CLOSED
                exp = p.exp_chan[idx]
                if exp:  # the first red letter's channel is recorded empty
                    if not relaxed:
                        return None
                    cost += 1
            else:
                chl[idx] = 0
        for li in p.outbound[server]:
            qs[li] = (*qs[li], -(k + 1))
        return cost

    # deliveries: the head of each non-empty channel
    for li, q in enumerate(queues):
        if not q:
            continue
        head = q[0]
        src, dst = p.links[li]
        qs = list(queues)
        qs[li] = q[1:]
        recl, chl = list(rec), list(chan)
        cost = 0
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
                elif relaxed:
                    chl[idx] = _DIVERGED
                else:
                    ok = False
                    break
            if ok:
                yield (
                    ("ReceiveApp", {"c": [src, dst], "i": 1}),
                    (g, done, tuple(b), tuple(qs), rec, tuple(chl)),
                    0,
                )
            continue
        k = -head - 1
        d = p.ids.index(dst)
        if not rec[k * n_s + d]:
            c = record(d, k, li, bal, qs, recl, chl)
            if c is None:
                continue
            cost = c
        else:
            idx = k * n_l + li
            r = chl[idx]
            exp = p.exp_chan[idx]
            chl[idx] = _CLOSED
            if exp is not None and (r == _DIVERGED or r != len(exp)):
                if not relaxed:
                    continue
                cost = 1
        yield (
            ("ReceiveRedLetter", {"c": [src, dst], "i": 1}),
            (g, done, bal, tuple(qs), tuple(recl), tuple(chl)),
            cost,
        )

    # the events of the current group not done yet
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
            src, dst = p.links[a]
            s = p.ids.index(src)
            if bal[s] < b_:
                continue
            bl = list(bal)
            bl[s] -= b_
            qs = list(queues)
            qs[a] = (*qs[a], b_)
            yield (
                ("SendApp", {"c": [src, dst], "m": b_}),
                (ng, ndone, tuple(bl), tuple(qs), rec, chan),
                0,
            )
        else:
            qs = list(queues)
            recl, chl = list(rec), list(chan)
            c = record(a, b_, None, bal, qs, recl, chl)
            if c is None:
                continue
            yield (
                ("StartSnapshot", {"p": p.ids[a], "k": b_}),
                (ng, ndone, bal, tuple(qs), tuple(recl), tuple(chl)),
                c,
            )


def _initial(p: _Problem, topology: Topology) -> _State:
    return (
        0,
        0,
        tuple(s.tokens for s in topology.servers),
        tuple(() for _ in p.links),
        tuple(0 for _ in range(p.k_count * len(p.ids))),
        tuple(_NOT_YET for _ in range(p.k_count * len(p.links))),
    )


def _accepting(p: _Problem, st: _State) -> bool:
    return st[0] >= len(p.groups) and all(st[4]) and all(c == _CLOSED for c in st[5])


def _strict_search(p: _Problem, init: _State, budget: int) -> tuple[list[Step] | None, int]:
    """DFS for an accepting path; raises _BudgetExhausted."""
    seen: set[_State] = set()
    path: list[Step] = []

    def dfs(st: _State) -> bool:
        if _accepting(p, st):
            return True
        if st in seen:
            return False
        seen.add(st)
        if len(seen) > budget:
            raise _BudgetExhausted
        for step, nxt, _ in _successors(p, st, relaxed=False):
            path.append(step)
            if dfs(nxt):
                return True
            path.pop()
        return False

    found = dfs(init)
    return (path if found else None), len(seen)


def _closest_search(p: _Problem, init: _State, budget: int) -> tuple[int, list[Step]] | None:
    """Minimum number of wrong fields over all complete schedules, with one schedule.

    ``None`` when no schedule can perform all events and complete every snapshot.
    """
    inf = 1 << 30
    memo: dict[_State, tuple[int, Step | None, _State | None]] = {}

    def best(st: _State) -> int:
        got = memo.get(st)
        if got is not None:
            return got[0]
        if _accepting(p, st):
            memo[st] = (0, None, None)
            return 0
        if len(memo) > budget:
            raise _BudgetExhausted
        memo[st] = (inf, None, None)  # no cycles exist; guards re-entry anyway
        choice: tuple[int, Step | None, _State | None] = (inf, None, None)
        for step, nxt, cost in _successors(p, st, relaxed=True):
            total = cost + best(nxt)
            if total < choice[0]:
                choice = (total, step, nxt)
                if total == 0:
                    break
        memo[st] = choice
        return choice[0]

    total = best(init)
    if total >= inf:
        return None
    steps: list[Step] = []
    st: _State | None = init
    while st is not None:
        _, step, nxt = memo[st]
        if step is None:
            break
        steps.append(step)
        st = nxt
    return total, steps


def replay_snapshots(
    topology: Topology, steps: Sequence[Step]
) -> dict[int, tuple[dict[str, int], dict[Link, tuple[int, ...]]]]:
    """The snapshots a correct Chandy–Lamport token app records along ``steps``."""
    tokens = {s.id: s.tokens for s in topology.servers}
    queues: dict[Link, list[int]] = {link: [] for link in topology.links}
    rec: dict[int, tuple[dict[str, int], dict[Link, list[int]], dict[Link, tuple[int, ...]]]] = {}

    def record(server: str, k: int, first: Link | None) -> None:
        toks, open_, closed = rec.setdefault(k, ({}, {}, {}))
        toks[server] = tokens[server]
        for link in topology.inbound(server):
            if link == first:
                closed[link] = ()
            else:
                open_[link] = []
        for link in topology.outbound(server):
            queues[link].append(-(k + 1))

    for action, params in steps:
        if action == "StartSnapshot":
            record(str(params["p"]), int(str(params["k"])), None)
            continue
        c = params["c"]
        assert isinstance(c, list)
        link = (str(c[0]), str(c[1]))
        if action == "SendApp":
            n = int(str(params["m"]))
            tokens[link[0]] -= n
            queues[link].append(n)
        elif action in ("ReceiveApp", "ReceiveRedLetter"):
            head = queues[link].pop(0)
            if head > 0:
                tokens[link[1]] += head
                for _, open_, _ in rec.values():
                    if link in open_:
                        open_[link].append(head)
            else:
                k = -head - 1
                if link[1] not in rec.get(k, ({}, {}, {}))[0]:
                    record(link[1], k, link)
                else:
                    _, open_, closed = rec[k]
                    closed[link] = tuple(open_.pop(link))
    return {k: (toks, closed) for k, (toks, _, closed) in rec.items()}


def _show_msgs(ns: Sequence[int]) -> str:
    return "[" + ", ".join(f"token({n})" for n in ns) + "]"


def _structure(
    topology: Topology, scenario: Scenario, snaps: Sequence[Snap], require_all: bool
) -> str | None:
    starters = scenario.snapshot_starters
    ids = set(topology.ids)
    links = set(topology.links)
    seen: set[int] = set()
    for snap in snaps:
        if snap.id in seen:
            return f"two snapshots have the id {snap.id}"
        seen.add(snap.id)
        if snap.id >= len(starters):
            started = (
                "it starts no snapshot"
                if not starters
                else "it starts snapshots " + ", ".join(str(i) for i in range(len(starters)))
            )
            return f"snapshot {snap.id} is not started by the scenario ({started})"
        toks = snap.tokens_dict()
        for server in toks:
            if server not in ids:
                return (
                    f"snapshot {snap.id} records tokens for {server}, "
                    "which is not a server of the topology"
                )
        for server in topology.ids:
            if server not in toks:
                return f"snapshot {snap.id} records no tokens for {server}"
        for m in snap.messages:
            if (m.src, m.dst) not in links:
                return (
                    f"snapshot {snap.id} records a message on {m.src} -> {m.dst}, "
                    "which is not a link of the topology"
                )
        at_servers = sum(toks.values())
        in_flight = sum(m.n for m in snap.messages)
        if at_servers + in_flight != topology.total:
            return (
                f"snapshot {snap.id} does not conserve tokens: it records {at_servers} tokens "
                f"at the servers and {in_flight} in flight, {at_servers + in_flight} in all, "
                f"but the system holds {topology.total}"
            )
    if require_all:
        for k, starter in enumerate(starters):
            if k not in seen:
                return f"snapshot {k} (started by {starter}) was not produced"
    return None


def _fields(topology: Topology, snaps: Sequence[Snap]) -> list[Field]:
    out: list[Field] = []
    for snap in sorted(snaps, key=lambda s: s.id):
        out += [("tokens", snap.id, s) for s in topology.ids]
        out += [("channel", snap.id, f"{a} -> {b}") for a, b in topology.links]
    return out


def _value(topology: Topology, snaps: dict[int, Snap], f: Field) -> str:
    kind, k, name = f
    snap = snaps[k]
    if kind == "tokens":
        return f"{snap.tokens_dict()[name]} tokens"
    a, b = name.split(" -> ")
    return _show_msgs(snap.channel((a, b)))


def _got(
    topology: Topology, rec: dict[int, tuple[dict[str, int], dict[Link, tuple[int, ...]]]], f: Field
) -> str:
    kind, k, name = f
    toks, chans = rec.get(k, ({}, {}))
    if kind == "tokens":
        return f"{toks.get(name, '?')} tokens"
    a, b = name.split(" -> ")
    return _show_msgs(chans.get((a, b), ()))


def judge_outcome(
    topology: Topology,
    scenario: Scenario,
    snaps: Sequence[Snap],
    *,
    budget: int = DEFAULT_BUDGET,
    require_all: bool = True,
) -> Judgement:
    """Decide whether some FIFO schedule of ``scenario`` yields exactly ``snaps``.

    ``budget`` bounds the states each search expands; ``require_all`` demands one
    snap per snapshot the scenario starts.
    """
    check_scenario(topology, scenario)
    if not topology.strongly_connected():
        raise InputError(
            "the topology is not strongly connected, so a snapshot may never complete",
            code="RL-INPUT-COS418",
        )
    problem_text = _structure(topology, scenario, snaps, require_all)
    fields = _fields(topology, snaps)
    if problem_text is not None:
        return Judgement("fail", problem_text, fields=len(fields))
    by_id = {s.id: s for s in snaps}
    p = _compile(topology, scenario, by_id)
    init = _initial(p, topology)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        try:
            witness, states = _strict_search(p, init, budget)
        except _BudgetExhausted:
            return Judgement(
                "unknown",
                f"the search budget of {budget} states ran out before a FIFO schedule "
                "yielding these snapshots was found or ruled out",
                fields=len(fields),
                states=budget,
            )
        if witness is not None:
            return Judgement(
                "pass",
                f"a FIFO schedule of {len(witness)} steps yields these snapshots",
                witness=tuple(witness),
                matched=len(fields),
                fields=len(fields),
                states=states,
            )
        return _explain(topology, scenario, by_id, p, init, fields, budget, states)
    finally:
        sys.setrecursionlimit(limit)


def _explain(
    topology: Topology,
    scenario: Scenario,
    by_id: dict[int, Snap],
    p: _Problem,
    init: _State,
    fields: list[Field],
    budget: int,
    states: int,
) -> Judgement:
    head = "no FIFO schedule of the scenario yields these snapshots"
    try:
        closest = _closest_search(p, init, budget)
    except _BudgetExhausted:
        return Judgement(
            "fail",
            f"{head} (the closest schedule was not found within the budget of {budget} states)",
            fields=len(fields),
            states=states,
        )
    if closest is None:
        return Judgement(
            "fail",
            f"{head}: no schedule can perform every event and complete every snapshot",
            fields=len(fields),
            states=states,
        )
    wrong, steps = closest
    rec = replay_snapshots(topology, steps)
    lines = [head + ":"]
    for f in fields:
        kind, k, name = f
        want, got = _value(topology, by_id, f), _got(topology, rec, f)
        if want == got:
            continue
        alone = _compile(topology, scenario, by_id, only=f)
        try:
            path, _ = _strict_search(alone, init, budget)
            reachable: bool | None = path is not None
        except _BudgetExhausted:
            reachable = None
        what = f"{name} with {want}" if kind == "tokens" else f"{want} on {name}"
        if reachable is False:
            lines.append(
                f"- no FIFO schedule records {what} for snapshot {k} "
                f"(the closest schedule records {got})"
            )
        elif reachable:
            lines.append(
                f"- snapshot {k} records {what}: some schedule gives that, but none together "
                f"with the other fields (the closest schedule records {got})"
            )
        else:
            lines.append(
                f"- snapshot {k} records {what}: undecided within the budget "
                f"(the closest schedule records {got})"
            )
    matched = len(fields) - wrong
    lines.append(
        f"the closest schedule ({len(steps)} steps) matches {matched} of {len(fields)} fields"
    )
    return Judgement(
        "fail",
        "\n".join(lines),
        closest=tuple(steps),
        matched=matched,
        fields=len(fields),
        states=states,
    )
