"""Benchmark of the outcome judge (``redletter cos418 judge``) by scenario size.

    .venv/bin/python bench/bench_outcome.py [--count 5] [--large] [--seed 0]

For each size, ``--count`` seeded scenarios (random strongly connected topology,
100 tokens a server, sends of 1-5 tokens, a tick of 1-3 before an event with
probability 0.3, snapshots started by random servers).  Each is run through the
kit's own simulator, and its snapshots are judged twice:

- as produced (a correct outcome: the judge must say pass);
- with one token moved between two servers of the middle snapshot (a wrong
  outcome: the judge must say fail), the explanation included.

Reported per size: the largest and median seconds of each, and how the fail was
explained (the closest schedule, or fields that clash when the closest schedule
was not found within the explanation time).  Sizes: the assignment's (2, 3 and
8 servers with concurrent snapshots; 10 servers, 10 snapshots, 100 sends) and,
with ``--large``, 50 servers with 1,000 sends (5 and 10 snapshots).  Targets
(issue 10): every assignment-size scenario decided, never unknown, in under a
second, its explanation included; 50 servers / 1,000 sends in under 10 s.

Also the cross-check figure: on 120 small scenarios, how many candidate
outcomes the old judge (any order within a tick) passed that the tick-respecting
judge fails (tests/test_outcome_crosscheck.py asserts agreement itself).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from redletter.conformance.formats.cos418 import (
    Scenario,
    Send,
    Server,
    Snap,
    Snapshot,
    Tick,
    Topology,
    generate_topology,
    simulate,
)
from redletter.conformance.judges.outcome import judge_outcome

SIZES = [  # (servers, sends, snapshots)
    (2, 10, 1),
    (3, 20, 2),
    (8, 40, 4),
    (10, 100, 10),
]
LARGE = [(50, 1000, 5), (50, 1000, 10)]


def scenario(seed: int, n: int, sends: int, snaps: int) -> tuple[Topology, Scenario]:
    rng = random.Random(seed)
    top0 = generate_topology(seed, n, extra_links=n)
    tokens = 100 if sends <= 200 else 1000
    top = Topology(tuple(Server(s.id, tokens) for s in top0.servers), top0.links)
    balance = {s: tokens for s in top.ids}
    kinds = ["send"] * sends + ["snap"] * snaps
    rng.shuffle(kinds)
    events: list[Send | Snapshot | Tick] = []
    for kind in kinds:
        if events and rng.random() < 0.3:
            events.append(Tick(rng.randint(1, 3)))
        if kind == "snap":
            events.append(Snapshot(rng.choice(top.ids)))
            continue
        src, dst = rng.choice([link for link in top.links if balance[link[0]] > 0])
        m = rng.randint(1, min(5, balance[src]))
        balance[src] -= m
        events.append(Send(src, dst, m))
    return top, Scenario(tuple(events))


def wrong(snaps: list[Snap]) -> list[Snap]:
    """One token moved between the first two servers of the middle snapshot."""
    out = list(snaps)
    s = out[len(out) // 2]
    t = list(s.tokens)
    a, b = (0, 1) if t[0][1] > 0 else (1, 0)
    t[a] = (t[a][0], t[a][1] - 1)
    t[b] = (t[b][0], t[b][1] + 1)
    out[len(out) // 2] = Snap(s.id, tuple(t), s.messages)
    return out


def size_row(n: int, sends: int, snaps: int, count: int, seed0: int) -> None:
    ok_s: list[float] = []
    bad_s: list[float] = []
    how: dict[str, int] = {}
    verdicts: dict[str, int] = {}
    for seed in range(seed0, seed0 + count):
        top, sc = scenario(seed, n, sends, snaps)
        out = simulate(top, sc, seed)
        j = judge_outcome(top, sc, out)
        verdicts[f"right:{j.verdict}"] = verdicts.get(f"right:{j.verdict}", 0) + 1
        ok_s.append(j.seconds)
        j2 = judge_outcome(top, sc, wrong(out))
        verdicts[f"wrong:{j2.verdict}"] = verdicts.get(f"wrong:{j2.verdict}", 0) + 1
        bad_s.append(j2.seconds)
        kind = "closest schedule" if j2.closest is not None else "clashing fields"
        how[kind] = how.get(kind, 0) + 1
    print(
        f"{n:>3} servers {sends:>5} sends {snaps:>3} snapshots | "
        f"right: max {max(ok_s):6.2f} s median {statistics.median(ok_s):6.2f} s | "
        f"wrong: max {max(bad_s):6.2f} s median {statistics.median(bad_s):6.2f} s | "
        + ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items()))
        + " | explained by "
        + ", ".join(f"{k} {v}" for k, v in sorted(how.items())),
        flush=True,
    )


def crosscheck_figure() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tests.outcome_reference import old_search
    from tests.test_outcome_crosscheck import SEEDS, _candidates, _scenario

    total = old_pass_new_fail = 0
    for seed in SEEDS:
        top, sc = _scenario(seed)
        for _, snaps in _candidates(top, sc, seed):
            total += 1
            if old_search(top, sc, snaps) and judge_outcome(top, sc, snaps).verdict == "fail":
                old_pass_new_fail += 1
    print(
        f"cross-check: {total} candidate outcomes on {len(SEEDS)} small scenarios; the old "
        f"judge passed {old_pass_new_fail} that the tick-respecting judge fails"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=5, help="scenarios per size")
    ap.add_argument("--seed", type=int, default=0, help="first seed")
    ap.add_argument("--large", action="store_true", help="also 50 servers / 1,000 sends")
    args = ap.parse_args()
    print("outcome judge: seconds per judgement (right = as simulated, wrong = one token moved)")
    for n, sends, snaps in SIZES + (LARGE if args.large else []):
        size_row(n, sends, snaps, args.count, args.seed)
    crosscheck_figure()


if __name__ == "__main__":
    main()
