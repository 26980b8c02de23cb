"""The outcome judge (z3) against two independent searches, on every small scenario.

- :func:`tick_search` is a brute force over the simulator's schedules tick by
  tick.  With ``one_per_sender=False`` it decides exactly the judge's question
  (the judge does not require one delivery per sending server and tick), so the
  two must agree wherever the brute force finishes; with the rule kept, its
  passes are runs the simulator can produce, which the judge must pass too.
- :func:`old_search` is the judge as it was before ticks were respected (a DFS
  over FIFO interleavings, the events of one tick in any order).  On a scenario
  with a tick between every two events it asks the judge's ``ticks=False``
  question, so the two must agree; on the scenario as written the old search
  admits more, so a judge pass must be an old pass.

Candidate snapshots come from random schedules of both kinds (right for some
schedule, or right only for a reordering the simulator never does) and from
small perturbations of them (mostly wrong).  Every case is seeded; a failure
prints the seed.
"""

from __future__ import annotations

import random

import pytest

from redletter.conformance.formats.cos418 import (
    Scenario,
    Send,
    Server,
    Snap,
    Snapshot,
    Tick,
    Topology,
    generate_topology,
)
from redletter.conformance.judges.outcome import judge_outcome
from tests.outcome_reference import (
    old_search,
    random_any_schedule,
    random_tick_schedule,
    tick_search,
)


def _scenario(seed: int) -> tuple[Topology, Scenario]:
    """2-3 servers, 2-4 sends, 1-2 snapshots, ticks of 1-2 between some events."""
    rng = random.Random(seed)
    top0 = generate_topology(seed, 2 + seed % 2, max_tokens=4, extra_links=seed % 2)
    top = Topology(tuple(Server(s.id, rng.randint(1, 4)) for s in top0.servers), top0.links)
    balance = {s.id: s.tokens for s in top.servers}
    kinds = ["send"] * rng.randint(2, 4) + ["snap"] * rng.randint(1, 2)
    rng.shuffle(kinds)
    events: list[Send | Snapshot | Tick] = []
    for kind in kinds:
        if events and rng.random() < 0.5:
            events.append(Tick(rng.randint(1, 2)))
        if kind == "snap":
            events.append(Snapshot(rng.choice(top.ids)))
            continue
        able = [link for link in top.links if balance[link[0]] > 0]
        if not able:
            continue
        src, dst = rng.choice(able)
        n = rng.randint(1, balance[src])
        balance[src] -= n
        events.append(Send(src, dst, n))
    return top, Scenario(tuple(events))


def _separated(scenario: Scenario) -> Scenario:
    """The scenario with a tick between every two events."""
    events: list[Send | Snapshot | Tick] = []
    for e in scenario.events:
        if isinstance(e, Tick):
            continue
        if events:
            events.append(Tick(1))
        events.append(e)
    return Scenario(tuple(events))


def _perturbed(snaps: list[Snap], rng: random.Random) -> list[Snap]:
    """One token moved from one server to another, or a recorded message dropped
    and its tokens given to a server (tokens stay conserved either way)."""
    out = list(snaps)
    i = rng.randrange(len(out))
    s = out[i]
    toks = list(s.tokens)
    msgs = list(s.messages)
    rich = [j for j, (_, n) in enumerate(toks) if n > 0]
    if msgs and (not rich or rng.random() < 0.5):
        m = msgs.pop(rng.randrange(len(msgs)))
        j = rng.randrange(len(toks))
        toks[j] = (toks[j][0], toks[j][1] + m.n)
    elif rich:
        a = rng.choice(rich)
        b = rng.choice([j for j in range(len(toks)) if j != a])
        toks[a] = (toks[a][0], toks[a][1] - 1)
        toks[b] = (toks[b][0], toks[b][1] + 1)
    out[i] = Snap(s.id, tuple(toks), tuple(msgs))
    return out


def _candidates(top: Topology, sc: Scenario, seed: int) -> list[tuple[str, list[Snap]]]:
    rng = random.Random(seed)
    out: list[tuple[str, list[Snap]]] = []
    for n in range(2):
        right = random_tick_schedule(top, sc, seed * 10 + n)
        if right is not None:
            out.append(("simulator schedule", right))
            out.append(("perturbed", _perturbed(right, rng)))
        loose = random_any_schedule(top, sc, seed * 10 + n)
        if loose is not None:
            out.append(("any interleaving", loose))
    return out


#: 40 seeds in the fast tests, all 120 in `make test-long` (CI time: each seed is
#: about a second of z3 and brute force; the other 80 are the same sweep, longer).
SEEDS = [
    *range(40),
    *(pytest.param(seed, marks=pytest.mark.long) for seed in range(40, 120)),
]


@pytest.mark.parametrize("seed", SEEDS)
def test_judge_agrees_with_the_brute_force_over_ticks(seed: int) -> None:
    top, sc = _scenario(seed)
    for what, snaps in _candidates(top, sc, seed):
        j = judge_outcome(top, sc, snaps)
        relaxed = tick_search(top, sc, snaps, one_per_sender=False)
        if relaxed is not None:
            assert (j.verdict == "pass") is relaxed, f"seed {seed}, {what}: {j.message}"
        strict = tick_search(top, sc, snaps)
        if strict:
            assert j.verdict == "pass", f"seed {seed}, {what}: the simulator can do it"
        if what == "simulator schedule":
            assert j.verdict == "pass", f"seed {seed}: {j.message}"


@pytest.mark.parametrize("seed", SEEDS)
def test_judge_agrees_with_the_old_search(seed: int) -> None:
    top, sc = _scenario(seed)
    for what, snaps in _candidates(top, sc, seed):
        untimed = judge_outcome(top, sc, snaps, ticks=False)
        old = old_search(top, _separated(sc), snaps)
        if old is not None:
            assert (untimed.verdict == "pass") is old, f"seed {seed}, {what}: {untimed.message}"
        if judge_outcome(top, sc, snaps).verdict == "pass":
            assert old_search(top, sc, snaps) is not False, f"seed {seed}, {what}"
