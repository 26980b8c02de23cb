"""Judge the whole mutant zoo (and the reference node) on model walks; print one line.

    .venv/bin/python bench/bench_zoo.py [--seeds N]

For each mutant: drive it in process along seeded walks of MCToken2,
MCTokenComplete3 and MCConcurrent until the log validation fails (the walk
that exposes it), then time the whole zoo.  Output:
``zoo: 15 mutants, 15 caught, reference passes N walks, X s``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from redletter.conformance.eventlog import dump_log, parse_log  # noqa: E402
from redletter.conformance.judges.log import validate  # noqa: E402
from redletter.conformance.nodes.mutants import MUTANTS  # noqa: E402
from redletter.conformance.nodes.reference import ReferenceNode  # noqa: E402
from redletter.conformance.verdict import Verdict  # noqa: E402
from redletter.conformance.walks import drive_and_log, model_walk  # noqa: E402
from redletter.python_model.config import load_model  # noqa: E402

MODELS = ("MCToken2", "MCTokenComplete3", "MCConcurrent")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=40)
    args = ap.parse_args()
    cfgs = [load_model(m, ROOT / "spec") for m in MODELS]
    start = time.perf_counter()
    caught = 0
    for name, mutant in MUTANTS.items():
        hit = None
        for cfg in cfgs:
            for seed in range(args.seeds):
                log = dump_log(drive_and_log(cfg, mutant.factory, model_walk(cfg, seed)))
                v = validate(cfg, parse_log(log))
                if v.verdict == Verdict.FAIL and mutant.lemma in v.explain():
                    hit = (cfg.name, seed)
                    break
            if hit:
                break
        caught += hit is not None
        print(f"  {name}: {'caught on ' + hit[0] + ' seed ' + str(hit[1]) if hit else 'MISSED'}")
    zoo = time.perf_counter() - start
    ref_ok = 0
    for cfg in cfgs:
        for seed in range(10):
            log = dump_log(drive_and_log(cfg, ReferenceNode, model_walk(cfg, seed)))
            ref_ok += validate(cfg, parse_log(log)).verdict != Verdict.FAIL
    print(
        f"zoo: {len(MUTANTS)} mutants, {caught} caught in {zoo:.2f} s; "
        f"reference never fails: {ref_ok}/{10 * len(cfgs)} walks"
    )
    return 0 if caught == len(MUTANTS) and ref_ok == 10 * len(cfgs) else 1


if __name__ == "__main__":
    raise SystemExit(main())
