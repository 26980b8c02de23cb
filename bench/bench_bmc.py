"""Seconds per depth of :func:`redletter.python_model.symbolic.bmc`, flat vs legacy encoding.

    python bench/bench_bmc.py [--depth 10] [--encodings flat,legacy] [--models ring4-1,...]
                              [--mutants] [--timeout 300]

Models: ``ring4-S`` (directed ring p1→p2→p3→p4→p1, tokens 2,1,0,0, S snapshots),
``biring4-S`` (bidirectional ring), ``k3-S`` (complete graph on 3 machines, one token
each).  Each run is a child process killed after ``--timeout`` seconds (reported as
TIMEOUT with the depths it finished), run one after the other (2-core machine).
``--mutants`` also runs every mutant on ``k3-2`` (depth 8) and prints the depth of its
counterexample.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from redletter.python_model.symbolic import Mutant, SymParams, bmc, complete_graph, exact_capacity


def model(name: str, depth: int, mutant: Mutant = Mutant.CORRECT) -> SymParams:
    kind, snaps = name.rsplit("-", 1)
    ns = int(snaps)
    if kind == "k3":
        return complete_graph(3, snapshots=ns, record_capacity=depth, mutant=mutant)
    procs = ("p1", "p2", "p3", "p4")
    ring = tuple((procs[i], procs[(i + 1) % 4]) for i in range(4))
    chans = ring if kind == "ring4" else tuple(sorted({*ring, *((b, a) for a, b in ring)}))
    tokens = (2, 1, 0, 0)
    return SymParams(
        procs,
        chans,
        tokens,
        tuple(range(1, ns + 1)),
        tuple(frozenset(procs) for _ in range(ns)),
        False,
        exact_capacity(tokens, ns),
        depth,
        mutant,
    )


def _child(name: str, depth: int, encoding: str, mutant: str, q: mp.Queue[object]) -> None:
    params = model(name, depth, Mutant(mutant))
    result = bmc(
        params,
        depth,
        encoding="flat" if encoding == "flat" else "legacy",
        on_depth=lambda d, s: q.put(("depth", d, s)),
    )
    q.put(("done", result.depth, result.violated, result.inductive))


def run(name: str, depth: int, encoding: str, mutant: Mutant, timeout: float) -> str:
    ctx = mp.get_context("spawn")
    q: mp.Queue[object] = ctx.Queue()
    proc = ctx.Process(target=_child, args=(name, depth, encoding, mutant.value, q))
    t0 = time.perf_counter()
    proc.start()
    per_depth: list[str] = []
    outcome = "TIMEOUT"
    while time.perf_counter() - t0 < timeout:
        try:
            msg = q.get(timeout=0.5)
        except Exception:  # queue.Empty
            if not proc.is_alive():
                outcome = "CRASHED"
                break
            continue
        assert isinstance(msg, tuple)
        if msg[0] == "depth":
            per_depth.append(f"{msg[1]}:{msg[2]:.2f}")
        else:
            verdict = f"violates {', '.join(msg[2])}" if msg[2] else "no violation"
            outcome = f"{verdict} at depth {msg[1]}" + (" (inductive)" if msg[3] else "")
            break
    wall = time.perf_counter() - t0
    if proc.is_alive():
        proc.kill()
    proc.join()
    return f"{name:10} {mutant.value:16} {encoding:7} {wall:7.1f}s  {outcome}\n    " + " ".join(
        per_depth
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--depth", type=int, default=10)
    ap.add_argument("--encodings", default="flat,legacy")
    ap.add_argument("--models", default="ring4-1,ring4-2,biring4-1,k3-2")
    ap.add_argument("--mutants", action="store_true")
    ap.add_argument("--timeout", type=float, default=300)
    args = ap.parse_args()
    for name in args.models.split(","):
        for encoding in args.encodings.split(","):
            print(run(name, args.depth, encoding, Mutant.CORRECT, args.timeout), flush=True)
    if args.mutants:
        for mutant in Mutant:
            if mutant is Mutant.CORRECT:
                continue
            for encoding in args.encodings.split(","):
                print(run("k3-2", 8, encoding, mutant, args.timeout), flush=True)


if __name__ == "__main__":
    main()
