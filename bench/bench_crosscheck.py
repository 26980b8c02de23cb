"""The cross-check end to end on a model of about a million states, time per phase.

    python bench/bench_crosscheck.py [--model MCTokenComplete3Large] [--workers 2]
                                     [--full-cfg] [--sequential]

What runs (:func:`redletter.python_model.crosscheck.crosscheck`): TLC with ``-dump
dot,actionlabels`` into a named pipe (the DOT is never written to disk), a reader
process parsing it while TLC writes (labels converted per variable with a memo,
states sent back as value ids), the Python explorer at the same time in the main
process, then the rebuild of TLC's states from the ids and the exact comparison
(states, initial states, labelled edges, counts).  By default TLC runs on a copy of
the cfg without invariants and properties (``--graph-only``: the comparison is of
graphs; the invariants are ``redletter check``'s, and the Python explorer checks them
all the same); ``--full-cfg`` keeps them.  Prints each phase's seconds (``parse`` is
the reader's whole time, overlapped with TLC; ``parse tail`` the wait for it after
TLC ended), the wall time and the verdict; exit 1 when the cross-check is not exact.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from redletter.project import project_at
from redletter.python_model.crosscheck import crosscheck, format_result

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    ap.add_argument("--model", default="MCTokenComplete3Large")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--full-cfg", action="store_true", help="TLC checks the cfg's properties too")
    ap.add_argument("--sequential", action="store_true", help="TLC, then the explorer")
    args = ap.parse_args()
    wall = time.perf_counter()
    r = crosscheck(
        args.model,
        project_at(ROOT),
        workers=args.workers,
        parallel=not args.sequential,
        graph_only=not args.full_cfg,
    )
    total = time.perf_counter() - wall
    what = "the cfg as it is" if args.full_cfg else "the graph only (no invariants, no properties)"
    print(f"model {args.model}: {r.distinct:,} distinct states, {r.total:,} generated")
    print(f"  TLC ({args.workers} workers) checks {what}; the Python explorer checks the cfg")
    for phase, seconds in r.seconds.items():
        print(f"  {phase:<28} {seconds:8.1f} s")
    print(f"  total (wall)                 {total:8.1f} s  (target: < 300 s)")
    for line in format_result(r):
        print(line)
    return 0 if r.exact else 1


if __name__ == "__main__":
    raise SystemExit(main())
