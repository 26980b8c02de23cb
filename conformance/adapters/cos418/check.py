"""Judge a COS 418 package: the one home of the campaign.

:func:`check_package` does everything ``redletter cos418 test`` promises, in this
order, and returns a :class:`~redletter.conformance.adapters.cos418.summary.PackageCheck`:

1. reads the package (:func:`~.package.inspect_package`: its dialect, its own
   tests) and plans the runs: generated scenarios of four classes and the
   package's own ``test_data/`` scenarios, each under several simulator seeds;
2. builds it on its own first (a package whose code does not compile is a
   fail quoting the compiler, whatever names it has), then, when it has every
   name of its dialect the driver uses (else bad input), with the kit's driver
   (an error only in the driver means a name of the interface has another
   shape: bad input);
3. runs the package's own tests as they are, when it ships them, for the
   course's verdict beside the kit's;
4. runs the campaign (``jobs`` runs at a time, stopping at the first failure
   unless asked for every run), each run driven exactly as the course's harness
   drives a package and judged on the evidence of :mod:`.judge`;
5. shrinks the first failure, says why the course's verdict differs if it does,
   writes the run folder (``results.json``, ``report.html``, the shrunk
   scenario, its diagram) and, if asked, the ``go test`` reproduction.

The command line only parses options, calls this and prints.
"""

from __future__ import annotations

import contextlib
import re
import shlex
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from redletter.conformance.adapters.cos418.campaign import (
    STOPS_CAMPAIGN,
    Case,
    CaseRun,
    Shrunk,
    generate_cases,
    jobs_of,
    package_cases,
    run_campaign,
    shrink,
)
from redletter.conformance.adapters.cos418.course import CourseTest, compare, run_course_test
from redletter.conformance.adapters.cos418.export import check_export, write_export
from redletter.conformance.adapters.cos418.judge import TimedOutcome
from redletter.conformance.adapters.cos418.package import inspect_package
from redletter.conformance.adapters.cos418.report import write_report
from redletter.conformance.adapters.cos418.summary import CheckOptions, PackageCheck, overall
from redletter.conformance.adapters.cos418.workspace import Build, Workspace, confinement
from redletter.conformance.formats.cos418 import check_scenario, read_scenario, read_topology
from redletter.conformance.report import new_run_folder
from redletter.conformance.sandbox import SandboxPolicy, cleanup_stale
from redletter.conformance.verdict import Verdict
from redletter.errors import InputError
from redletter.project import kit_command
from redletter.safewrite import FolderError, SafeFolder

__all__ = ["CheckEvents", "check_package", "kit_command", "replay_command"]


@dataclass(frozen=True)
class CheckEvents:
    """What :func:`check_package` tells as it goes (for a progress display)."""

    phase: Callable[[str], None] = lambda _: None  #: a new phase begins (in words)
    planned: Callable[[int], None] = lambda _: None  #: the number of runs planned
    run: Callable[[CaseRun], None] = lambda _: None  #: a run was judged
    phase_done: Callable[[], None] = lambda: None  #: the phase ended


def replay_command(
    package: Path, top: Path, events: Path, seed: int, *, race: bool, kit: str = "redletter"
) -> str:
    """The one command that replays a scenario under one seed."""
    cmd = (
        f"{kit} cos418 test {shlex.quote(str(package))} --top {shlex.quote(str(top))}"
        f" --events {shlex.quote(str(events))} --seed {seed} --seeds 1"
    )
    return cmd + (" --race" if race else "")


def _cases(
    pkg_source: Path, options: CheckOptions, test_data: Path | None
) -> tuple[list[Case], list[str]]:
    if options.given is not None:
        top, events = options.given
        topology, scenario = read_topology(top), read_scenario(events)
        check_scenario(topology, scenario, str(events))
        if not topology.strongly_connected():
            raise InputError(
                "the topology is not strongly connected, so a snapshot may never complete",
                code="RL-INPUT-COS418",
                path=str(top),
            )
        return [Case(events.stem, "given", topology, scenario, f"{top} with {events}")], []
    cases = generate_cases(options.seed, options.scenarios)
    notes: list[str] = []
    if options.test_data and test_data is not None:
        own, skipped = package_cases(test_data)
        cases += own
        notes += skipped
    return cases, notes


def _check_store(store: Path) -> Path:
    """The store folder, made and proven writable before any work starts (by a fresh
    file made with ``O_EXCL | O_NOFOLLOW``: nothing planted there is followed)."""
    try:
        with SafeFolder(store, code="RL-INPUT-USAGE") as folder:
            folder.probe()
    except FolderError as exc:
        raise InputError(
            f"cannot write run folders into {store}: {exc.reason}; give a writable"
            " folder with --store",
            code="RL-INPUT-USAGE",
            path=str(store),
        ) from None
    return store


def _lacking(build: Build) -> str:
    """The interface names the compiler says the driver could not find."""
    found = []
    for line in build.output.splitlines():
        m = re.search(r"redletter_driver_test\.go:\d+:\d+: (.+)$", line)
        if m:
            found.append(m.group(1).strip())
    return "; ".join(dict.fromkeys(found)) or build.output.strip().splitlines()[0]


def _message(
    verdict: Verdict, build: Build, runs: tuple[CaseRun, ...], shown: CaseRun | None
) -> str:
    if not build.ok:
        lines = build.error_lines(60)
        located = [ln for ln in lines if re.match(r"^\S+\.go:\d+", ln.strip())]
        line = (located or lines or ["?"])[0].strip()
        alone = " on its own" if build.stage == "package" else ""
        return f"the package does not build{alone} ({build.command}): {line}"
    if shown is not None:
        return shown.result.message
    if verdict == Verdict.PASS:
        return (
            f"every one of the {len(runs)} runs gave the snapshots Chandy–Lamport records for the"
            " run that happened, and passed the course's checks"
        )
    undecided = [r for r in runs if r.result.verdict == Verdict.UNKNOWN]
    return (
        f"{len(undecided)} of {len(runs)} runs could not be decided (no run failed); the first:"
        f" {undecided[0].result.message if undecided else '?'}"
    )


def check_package(
    source: Path,
    options: CheckOptions | None = None,
    *,
    events: CheckEvents | None = None,
    policy: SandboxPolicy | None = None,
    go: str | None = None,
) -> PackageCheck:
    """Judge the package in ``source`` (module docstring).

    Raises :class:`~redletter.errors.InputError` (exit 5) for a folder that is not
    a package of either dialect, a package that lacks a name the driver uses, bad
    options or an unwritable store; :class:`~redletter.errors.EnvironmentMissing`
    (exit 3) without Go (or a C compiler for ``race``).
    """
    opts = options if options is not None else CheckOptions()
    ev = events if events is not None else CheckEvents()
    started = time.monotonic()
    cleanup_stale()  # what kits killed earlier left behind
    pkg = inspect_package(source, strict=False)
    store = _check_store(opts.store if opts.store is not None else Path.cwd() / "store")
    if opts.export is not None:
        check_export(opts.export)
    notes = list(pkg.notes)
    cases, skipped = _cases(pkg.source, opts, pkg.test_data)
    notes += skipped
    seeds = tuple(range(opts.seed, opts.seed + opts.seeds))
    jobs = jobs_of(cases, seeds)
    if not jobs:
        raise InputError("nothing to run: --scenarios 0 and no test_data/", code="RL-INPUT-USAGE")
    pool = TimedOutcome(opts.outcome_timeout)
    runs: list[CaseRun] = []
    first: CaseRun | None = None
    shrunk: Shrunk | None = None
    course: CourseTest | None = None
    seconds = 0.0
    with Workspace(pkg, race=opts.race, go=go, policy=policy) as ws:
        ev.phase(
            f"building {pkg.name} ({pkg.dialect.key} dialect) with the kit's driver"
            + (" under the race detector" if opts.race else "")
        )
        build = ws.build()
        touches, unscanned = ws.scan()
        ev.phase_done()
        if ws.go_note:
            notes.append(ws.go_note)
        if unscanned:
            notes.append(
                "the kit could not scan the package's source for code that touches the kit:"
                f" {unscanned}"
            )
        if not build.ok and build.driver_only:
            raise InputError(
                f"the package does not build with the kit's driver, which uses only names of"
                f" {pkg.dialect.title} of the COS 418 interface: {_lacking(build)}; see"
                " docs/cos418.md for the names each dialect has",
                code=pkg.dialect.code,
                path=str(source),
            )
        # The package's own tests run beside the campaign (a hanging one costs its
        # whole time limit: the course's harness has no other).
        course_box: list[CourseTest] = []
        course_thread: threading.Thread | None = None
        if build.ok and opts.course_test and pkg.has_course_test:

            def course_job() -> None:
                with contextlib.suppress(KeyboardInterrupt):
                    course_box.append(run_course_test(ws, timeout=opts.course_timeout))

            course_thread = threading.Thread(
                target=course_job, name="redletter-course", daemon=True
            )
            course_thread.start()
        if build.ok:
            ev.planned(len(jobs))
            campaign_started = time.monotonic()
            runs = run_campaign(
                ws,
                jobs,
                opts.limits,
                stop_at_first=not opts.all_runs,
                workers=opts.jobs,
                outcome=pool,
                on_result=ev.run,
            )
            seconds = time.monotonic() - campaign_started
            ev.phase_done()
            first = next((r for r in runs if r.result.verdict == Verdict.FAIL), None)
            if first is not None and opts.shrink and first.result.kind not in STOPS_CAMPAIGN:
                ev.phase(f"shrinking {first.case.name} (seed {first.seed})")
                shrunk = shrink(ws, first, opts.limits, seeds=seeds, outcome=pool)
                ev.phase_done()
        if course_thread is not None:
            if course_thread.is_alive():
                how = "go test -race" if opts.race else "go test"
                ev.phase(
                    f"waiting for the package's own tests ({how}, at most"
                    f" {opts.course_timeout:g} s)"
                )
                while course_thread.is_alive():
                    course_thread.join(0.2)
                ev.phase_done()
            course = course_box[0] if course_box else None
        sandbox = ws.sandbox_report.to_json() if ws.sandbox_report is not None else None
    verdict = overall(runs) if build.ok else Verdict.FAIL
    shown_run = CaseRun(shrunk.case, shrunk.seed, shrunk.result) if shrunk is not None else first
    message = _message(verdict, build, tuple(runs), shown_run)
    if course is not None and course.races and verdict != Verdict.FAIL:
        verdict = Verdict.FAIL
        message = (
            f"the race detector found {course.races} data race(s) in the package's own tests"
            f" ({course.command}), which the kit's runs did not trigger (races depend on"
            " timing); see the course's output in the report"
        )
    undecided = sum(
        r.result.outcome_verdict == Verdict.UNKNOWN for r in runs if r.result.verdict == "pass"
    )
    if undecided:
        notes.append(
            f"the outcome judge left {undecided} passing run(s) undecided ({pool.timeouts} over its"
            f" {opts.outcome_timeout:g} s limit): those were judged against their own log only"
        )
    disagreement = compare(course, verdict, runs, first) if course is not None else ""
    folder = new_run_folder(store, f"cos418-{pkg.source.name}")
    replay = ""
    if first is not None:
        replay = replay_command(
            pkg.source,
            folder.path / "shrunk.top",
            folder.path / "shrunk.events",
            shrunk.seed if shrunk is not None else first.seed,
            race=opts.race,
            kit=kit_command(),
        )
    check = PackageCheck(
        package=pkg,
        build=build,
        verdict=verdict,
        options=opts,
        seeds=seeds,
        runs=tuple(runs),
        planned=len(jobs),
        seconds=seconds,
        first_failure=first,
        shrunk=shrunk,
        course=course,
        disagreement=disagreement,
        message=message,
        replay=replay,
        notes=tuple(notes),
        outcome_timeouts=pool.timeouts,
        stopped_early=first is not None and len(runs) < len(jobs),
        folder=folder.path,
        extra={"confinement": confinement(), **({"sandbox": sandbox} if sandbox else {})},
        total_seconds=time.monotonic() - started,
        touches=touches,
    )
    exported: tuple[Path, ...] = ()
    if opts.export is not None and check.shown is not None:
        exported = write_export(opts.export, check)
    check = replace(check, exported=exported)
    write_report(folder, check)
    return check
