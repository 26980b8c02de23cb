"""``redletter cos418 test|judge|generate``: Princeton COS 418 snapshot packages and files.

- ``redletter cos418 test DIR``: judge a Go package written against either dialect
  of the COS 418 assignment as it is, driven exactly as the course's own harness
  drives it (:func:`redletter.conformance.adapters.cos418.check_package` does the
  work; this module parses options and prints).
- ``redletter cos418 judge TOP EVENTS SNAP...``: is there a FIFO schedule of the
  scenario whose Chandy–Lamport snapshots are exactly these ``.snap`` files?
  ``--batch DIR...`` judges every scenario of the directories in one process;
  ``--json`` and ``--verdict-only`` change the output.
- ``redletter cos418 generate --seed S --servers N --events M --out DIR``: write
  ``seed<S>.top``, ``seed<S>.events`` and the snapshots the kit's own simulator
  gives for one schedule, ``seed<S>.snap<k>`` (examples, never golden files).

Exit codes (every command): 0 pass, 1 fail, 2 unknown, 3 environment missing
(no Go), 4 internal error, 5 bad input.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

import redletter.cli.ui as ui
from redletter.cli.options import (
    MIN_PROGRAM_SECONDS,
    StoreOption,
    count,
    done,
    existing_file,
    existing_path,
    output_dir,
    seconds_option,
)
from redletter.cli.pipeline import MasterOption, MemoryOption
from redletter.errors import Exit, InputError
from redletter.untrusted import check_regular

if TYPE_CHECKING:
    from redletter.conformance.adapters.cos418 import CheckEvents, PackageCheck
    from redletter.conformance.adapters.cos418.campaign import CaseRun
    from redletter.conformance.formats.cos418 import Snap
    from redletter.conformance.judges.outcome import Judgement

__all__ = ["app"]

EXIT_CODES = (
    "Exit codes: 0 pass, 1 fail, 2 unknown (undecided), 3 environment missing"
    " (e.g. no Go toolchain), 4 internal error, 5 bad input."
)

#: ``--course-test/--no-course-test`` of ``test`` and ``grade``.
CourseTestOption = Annotated[
    bool,
    typer.Option(
        "--course-test/--no-course-test",
        help="Also run the package's own tests (go test) as they are, and show their"
        " verdict beside the kit's.",
    ),
]
#: ``--course-timeout`` of ``test`` and ``grade``.
CourseTimeoutOption = Annotated[
    float,
    typer.Option(
        help="Seconds the package's own tests (go test) may take in all.",
        callback=seconds_option(minimum=MIN_PROGRAM_SECONDS),
    ),
]

app = typer.Typer(
    help="Judge COS 418 snapshot packages and files (.top/.events/.snap).",
    no_args_is_help=True,
)


# --------------------------------------------------------------------------- judge


def _judgement_json(j: Judgement) -> dict[str, object]:
    def steps(xs: object) -> object:
        if xs is None:
            return None
        return [[a, p] for a, p in xs]  # type: ignore[attr-defined]

    return {
        "verdict": str(j.verdict),
        "exit_code": int({"pass": Exit.OK, "fail": Exit.FAIL}.get(str(j.verdict), Exit.UNKNOWN)),
        "explanation": j.explanation(),
        "witness": steps(getattr(j, "witness", None)),
        "closest": steps(getattr(j, "closest", None)),
        "matched": getattr(j, "matched", None),
        "fields": getattr(j, "fields", None),
    }


def _verdict_exit(verdict: str) -> Exit:
    return {"pass": Exit.OK, "fail": Exit.FAIL}.get(str(verdict), Exit.UNKNOWN)


def _batch_sets(dirs: Sequence[Path]) -> list[tuple[str, Path, Path, list[Path]]]:
    """``(name, top, events, snaps)`` for every ``X.events`` of the directories: the
    ``.top`` whose name is the longest prefix of X, and the snaps ``X.snap``,
    ``X<k>.snap`` or ``X.snap<k>``."""
    out = []
    for d in dirs:
        if not d.is_dir():
            raise InputError(
                "not a directory (--batch takes directories of .top/.events/.snap files)",
                code="RL-INPUT-USAGE",
                path=str(d),
            )
        # Every scenario file is checked before any is read: a FIFO must not hang
        # the batch half-way (nor a *.snap one be skipped as "not a file"), and a
        # link is refused, never followed (its target's lines would be quoted).
        for f in sorted(d.iterdir()):
            if f.suffix in (".top", ".events") or ".snap" in f.name:
                check_regular(f, code="RL-INPUT-COS418", found=True)
        tops = sorted(d.glob("*.top"))
        snaps = sorted(p for p in d.iterdir() if ".snap" in p.name and p.is_file())
        for ev in sorted(d.glob("*.events")):
            x = ev.stem
            match = [t for t in tops if x.startswith(t.stem)]
            if not match:
                raise InputError(
                    f"no .top file whose name starts {ev.name} in {d}",
                    code="RL-INPUT-COS418",
                    path=str(ev),
                )
            top = max(match, key=lambda t: len(t.stem))
            mine = [
                s
                for s in snaps
                if s.name == f"{x}.snap"
                or (s.suffix == ".snap" and s.stem.startswith(x) and s.stem[len(x) :].isdigit())
                or (s.name.startswith(f"{x}.snap") and s.name[len(x) + 5 :].isdigit())
            ]
            out.append((f"{d.name}/{x}" if len(dirs) > 1 else x, top, ev, mine))
    if not out:
        raise InputError("no .events file in " + ", ".join(map(str, dirs)), code="RL-INPUT-USAGE")
    return out


@app.command("judge", epilog=EXIT_CODES)
def judge_cmd(
    files: Annotated[
        list[Path] | None,
        typer.Argument(
            help="TOP EVENTS SNAP...: the .top, the .events and the .snap files the"
            " implementation wrote (with --batch: directories).",
            show_default=False,
            callback=existing_path,
        ),
    ] = None,
    batch: Annotated[
        bool,
        typer.Option(
            "--batch",
            help="The arguments are directories: judge every X.events in them with the"
            " .top named by its longest prefix and the X.snap / X<k>.snap / X.snap<k> files,"
            " all in one process.",
        ),
    ] = False,
    budget: Annotated[
        int | None,
        typer.Option(
            help="z3 resource units each judgement may spend before answering unknown"
            " (deterministic, unlike --timeout; default: no bound).",
            callback=count(1),
        ),
    ] = None,
    timeout: Annotated[
        float,
        typer.Option(
            help="Seconds each judgement may take to decide before answering unknown.",
            callback=seconds_option(),
        ),
    ] = 300.0,
    explain: Annotated[
        float,
        typer.Option(
            help="Seconds a fail's explanation may take to find the closest schedule (then it"
            " names fields that cannot all hold together; 0: do not look).",
            callback=seconds_option(zero=True),
        ),
    ] = 30.0,
    partial: Annotated[
        bool, typer.Option("--partial", help="Do not require one .snap per snapshot started.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
    verdict_only: Annotated[
        bool,
        typer.Option(
            "--verdict-only", "-q", help="Print only the verdict (pass, fail or unknown)."
        ),
    ] = False,
) -> None:
    """Judge the snapshots by outcome: does some FIFO schedule yield them?"""
    from redletter.conformance.formats.cos418 import read_scenario, read_snap, read_topology
    from redletter.conformance.judges.outcome import judge_outcome

    paths = list(files or [])
    kwargs: dict[str, object] = {
        "require_all": not partial,
        "timeout": timeout,
        "explain": explain,
    }
    if budget is not None:
        kwargs["budget"] = budget

    def judge(top: Path, events: Path, snaps: Sequence[Path]) -> Judgement:
        # The files of --batch folders were found there, not named: never followed.
        return judge_outcome(
            read_topology(top, found=batch),
            read_scenario(events, found=batch),
            [read_snap(s, found=batch) for s in snaps],
            **kwargs,  # type: ignore[arg-type]
        )

    if not batch:
        if len(paths) < 3:
            raise InputError(
                f"expected TOP EVENTS SNAP... (at least 3 files), got {len(paths)}; or"
                " --batch DIR...",
                code="RL-INPUT-USAGE",
            )
        j = judge(paths[0], paths[1], paths[2:])
        if as_json:
            ui.info(json.dumps(_judgement_json(j)))
        elif verdict_only:
            ui.info(str(j.verdict))
        else:
            ui.cos418_judgement(j)
        done(_verdict_exit(j.verdict))
    if not paths:
        raise InputError("--batch needs at least one directory", code="RL-INPUT-USAGE")
    results: list[tuple[str, Path, Path, list[Path], Judgement | None, float]] = []
    for name, top, events, snaps in _batch_sets(paths):
        started = time.monotonic()
        if not snaps:
            results.append((name, top, events, snaps, None, 0.0))
            continue
        j = judge(top, events, snaps)
        results.append((name, top, events, snaps, j, time.monotonic() - started))
        if not as_json:
            shown = (
                str(j.verdict)
                if verdict_only
                else f"{j.verdict}: {j.explanation().splitlines()[0]}"
            )
            ui.info(f"{name}: {shown}")
    verdicts = [str(j.verdict) for *_, j, _ in results if j is not None]
    worst = "fail" if "fail" in verdicts else "unknown" if "unknown" in verdicts else "pass"
    if as_json:
        ui.info(
            json.dumps(
                {
                    "verdict": worst,
                    "exit_code": int(_verdict_exit(worst)),
                    "counts": {v: verdicts.count(v) for v in ("pass", "fail", "unknown")},
                    "runs": [
                        {
                            "name": name,
                            "top": str(top),
                            "events": str(events),
                            "snaps": [str(s) for s in snaps],
                            "seconds": round(sec, 4),
                            **(
                                _judgement_json(j)
                                if j is not None
                                else {
                                    "verdict": None,
                                    "explanation": "no .snap file for this scenario: not judged",
                                }
                            ),
                        }
                        for name, top, events, snaps, j, sec in results
                    ],
                }
            )
        )
    else:
        skipped = [name for name, *_, j, _ in results if j is None]
        for name in skipped:
            ui.info(f"{name}: not judged (no .snap file)")
        if not verdict_only:
            ui.info(
                f"{worst}: {len(verdicts)} scenario(s) judged: {verdicts.count('pass')} pass,"
                f" {verdicts.count('fail')} fail, {verdicts.count('unknown')} unknown"
            )
    done(_verdict_exit(worst))


# --------------------------------------------------------------------------- generate


GOLDEN_WARNING = (
    "these .snap files come from the kit's own simulator, for one schedule (one seed):"
    " they are examples, not golden files. A correct implementation draws its random"
    " delays in its own order and matches them only about half the time; judge its"
    " snapshots with `.venv/bin/redletter cos418 judge` (any FIFO schedule) or the package itself"
    " with `.venv/bin/redletter cos418 test`."
)


@app.command("generate", epilog=EXIT_CODES)
def generate_cmd(
    seed: Annotated[
        int, typer.Option(help="Seed of the topology, scenario and delays.", callback=count(0))
    ],
    servers: Annotated[
        int, typer.Option(help="Number of servers (at least 2).", callback=count(2, 1000))
    ] = 3,
    events: Annotated[
        int, typer.Option(help="Number of token sends.", callback=count(0, 100_000))
    ] = 6,
    snapshots: Annotated[
        int, typer.Option(help="Number of snapshots started.", callback=count(0, 1000))
    ] = 1,
    out: Annotated[
        Path, typer.Option(help="Directory to write the files into.", callback=output_dir)
    ] = Path("."),
) -> None:
    """Write a random scenario and the snapshots the kit's own simulator gives.

    The .snap files are what the kit's simulator records for one schedule (one
    seed): examples, not golden files. A correct implementation draws its random
    delays in its own order and matches them only about half the time: judge with
    `.venv/bin/redletter cos418 judge` (any FIFO schedule) or `.venv/bin/redletter cos418 test`.
    """
    from redletter.conformance.formats.cos418 import (
        format_snap,
        generate_scenario,
        generate_topology,
        simulate,
        write_scenario,
        write_snap,
        write_topology,
    )

    topology = generate_topology(seed, servers)
    scenario = generate_scenario(topology, seed, events, snapshots)
    result = simulate(topology, scenario, seed)
    try:
        out.mkdir(parents=True, exist_ok=True)
        write_topology(out / f"seed{seed}.top", topology)
        write_scenario(out / f"seed{seed}.events", scenario)
        for snap in result:
            write_snap(out / f"seed{seed}.snap{snap.id}", snap)
    except OSError as exc:
        raise InputError(
            f"cannot write into {out}: {exc.strerror}", code="RL-INPUT-USAGE", path=str(out)
        ) from None
    ui.info(
        f"wrote {out / f'seed{seed}.top'}, {out / f'seed{seed}.events'} and "
        f"{len(result)} .snap files (seed {seed})"
    )
    ui.lines(
        f"snapshot {snap.id}: " + format_snap(snap).strip().replace("\n", "; ") for snap in result
    )
    ui.info(f"note: {GOLDEN_WARNING}")
    done(Exit.OK)


# --------------------------------------------------------------------------- test


def _show_snap(s: Snap | None, *, expected: bool) -> str:
    if s is None:
        return (
            "not known (the run's log could not be used to compute it)"
            if expected
            else "not returned"
        )
    toks = ", ".join(f"{p} {n}" for p, n in s.tokens)
    msgs = ", ".join(f"{m.src}→{m.dst} token({m.n})" for m in s.messages)
    return f"tokens {toks}; in flight: {msgs or 'nothing'}"


def _print_summary(s: PackageCheck) -> None:
    from rich.table import Table

    from redletter.conformance.adapters.cos418.campaign import STOPS_CAMPAIGN
    from redletter.conformance.adapters.cos418.summary import class_rows
    from redletter.conformance.formats.cos418 import format_scenario, format_topology

    console = ui.console
    colour = {"pass": "green", "fail": "red", "unknown": "yellow"}[str(s.verdict)]
    pkg = s.package
    ui.info(f"package {pkg.name} at {pkg.source}: {pkg.dialect.title}")
    if not s.build.ok:
        console.print(
            f"[bold red]FAIL[/]: the package {pkg.name} does not build ({s.build.command}):",
            soft_wrap=True,
        )
        ui.lines(f"  {line}" for line in s.build.error_lines())
    else:
        table = Table(title=f"cos418 test {pkg.name}", title_justify="left")
        for col in ("class", "scenarios", "schedules", "passed", "failed", "unknown"):
            table.add_column(col, justify="left" if col == "class" else "right")
        for row in class_rows(s.runs):
            style = "bold" if row.klass == "all" else ""
            table.add_row(
                f"[{style}]{row.klass}[/]" if style else row.klass,
                str(row.scenarios),
                str(row.schedules),
                str(row.passed),
                f"[red]{row.failed}[/]" if row.failed else "0",
                f"[yellow]{row.unknown}[/]" if row.unknown else "0",
            )
        console.print(table)
        rate = len(s.runs) / s.seconds if s.seconds > 0 else 0.0
        final = s.first_failure is not None and s.first_failure.result.kind in STOPS_CAMPAIGN
        ran = (
            f"stopped at the first failure after {len(s.runs)} of {s.planned} runs"
            + (" (no other run would say more)" if final else " (--all runs every one)")
            if s.stopped_early
            else f"{len(s.runs)} of {s.planned} runs"
        )
        console.print(
            f"[bold {colour}]{str(s.verdict).upper()}[/]: {ran} in {s.seconds:.1f} s"
            f" ({rate:.1f} runs/s)",
            soft_wrap=True,
        )
    if s.touches:
        ui.info(
            f"touches the kit: {ui.plural(len(s.touches), 'place')} of its code do what the"
            " assignment never needs and an attack on the kit does (the instructor decides):"
        )
        ui.lines(f"  {t.show()}" for t in s.touches)
    if s.course is not None:
        ui.info(f"the package's own tests ({s.course.command}): {s.course.summary()}")
        for t in s.course.failed[:3]:
            ui.lines(f"  | {t.name}: {m}" for m in t.messages[:2])
        ui.info(
            f"the kit: {s.verdict}"
            + (f". Why they differ: {s.disagreement}" if s.disagreement else "")
        )
    ui.lines(f"note: {n}" for n in s.notes)
    shown = s.shown
    first = s.first_failure
    if shown is not None and first is not None:
        r = shown.result
        sh = s.shrunk
        ui.info(
            f"first failure: {first.case.name} ({first.case.klass}, {first.case.size()}),"
            f" simulator seed {first.seed}"
        )
        if sh is not None and sh.case is sh.original:
            ui.info(
                "no smaller scenario fails the same way"
                + ("" if sh.confirmed else " (the shrunk one did not fail again when rerun)")
            )
        elif sh is not None:
            ui.info(
                f"shrunk to {shown.case.size()} in {sh.runs} runs ({sh.seconds:.1f} s),"
                f" seed {shown.seed}"
            )
        ui.info(f"why: {r.message}")
        if r.evidence:
            ui.info(f"it rests on: {'; '.join(r.evidence)}")
        ui.lines(f"  | {line}" for line in r.details)
        ui.lines(f"note: {n}" for n in r.notes)
        ui.info("scenario:")
        ui.lines("  " + line for line in format_topology(shown.case.topology).splitlines())
        ui.lines("  " + line for line in format_scenario(shown.case.scenario).splitlines())
        exp = {x.id: x for x in r.expected}
        rec = {x.id: x for x in r.recorded}
        started = [sn.id for sn in r.document.snapshots] if r.document is not None else []
        for k in sorted(set(exp) | set(rec) | set(started)):
            if k not in exp and k not in rec:
                continue
            same = " (the same)" if exp.get(k) == rec.get(k) else ""
            ui.info(f"snapshot {k} expected: {_show_snap(exp.get(k), expected=True)}")
            ui.info(f"snapshot {k} recorded: {_show_snap(rec.get(k), expected=False)}{same}")
    elif (s.verdict != "fail" or s.build.ok) and not shown:
        ui.info(s.message)
    sandbox = s.extra.get("sandbox")
    if isinstance(sandbox, dict):
        layers = [x for x in sandbox.get("layers", []) if isinstance(x, dict)]
        on = [str(x["layer"]) for x in layers if x.get("active")]
        off = [f"{x['layer']} NOT active ({x['detail']})" for x in layers if not x.get("active")]
        ui.info(
            f"sandbox ({sandbox.get('mode')}): {', '.join(on) or 'no layer'} active"
            + (f"; {'; '.join(off)}" if off else "")
        )
    confinement = s.extra.get("confinement")
    if isinstance(confinement, str) and confinement:
        ui.info(f"the package's runs: {confinement}")
    if s.folder is not None:
        ui.info(f"report: {s.folder / 'report.html'}")
    if s.replay:
        ui.info(f"replay: {s.replay}")
    if s.exported:
        ui.info(f"exported for go test: {', '.join(str(p) for p in s.exported)}")


@app.command("test", epilog=EXIT_CODES)
def test_cmd(
    package_dir: Annotated[
        Path,
        typer.Argument(
            help="The Go package (a folder written against either dialect of the COS 418"
            " assignment).",
            show_default=False,
        ),
    ],
    seed: Annotated[
        int,
        typer.Option(
            help="Seed of the campaign: scenarios are drawn from it, and the simulator"
            " seeds are SEED, SEED+1, ...",
            callback=count(0),
        ),
    ] = 0,
    scenarios: Annotated[
        int, typer.Option(help="Generated scenarios.", callback=count(0, 1_000_000))
    ] = 50,
    seeds: Annotated[
        int, typer.Option(help="Simulator seeds per scenario.", callback=count(1, 10_000))
    ] = 4,
    all_runs: Annotated[
        bool, typer.Option("--all", help="Run every scenario (default: stop at the first failure).")
    ] = False,
    race: Annotated[
        bool, typer.Option("--race", help="Build and run under Go's race detector (needs cgo).")
    ] = False,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json", help="Print one JSON document, every run listed (no progress, no table)."
        ),
    ] = False,
    top: Annotated[
        Path | None,
        typer.Option(help="Run only this topology (with --events).", callback=existing_file),
    ] = None,
    events: Annotated[
        Path | None,
        typer.Option(help="Run only this scenario (with --top).", callback=existing_file),
    ] = None,
    test_data: Annotated[
        bool,
        typer.Option(
            "--test-data/--no-test-data", help="Also run the package's own test_data/ scenarios."
        ),
    ] = True,
    course_test: CourseTestOption = True,
    shrink_failure: Annotated[
        bool, typer.Option("--shrink/--no-shrink", help="Shrink the first failure.")
    ] = True,
    step_timeout: Annotated[
        float,
        typer.Option(
            help="Seconds one InjectEvent/ProcessEvent or Tick may take while some goroutine of"
            " the package still runs or sleeps, before the run hangs.",
            callback=seconds_option(minimum=MIN_PROGRAM_SECONDS),
        ),
    ] = 30.0,
    deadlock_after: Annotated[
        float,
        typer.Option(
            help="Seconds every goroutine of the package may wait on locks or channels, with"
            " nothing left to wake it, before the run deadlocks.",
            callback=seconds_option(minimum=MIN_PROGRAM_SECONDS),
        ),
    ] = 2.0,
    collect_timeout: Annotated[
        float,
        typer.Option(
            help="Seconds after the last event for every snapshot to be collected.",
            callback=seconds_option(minimum=MIN_PROGRAM_SECONDS),
        ),
    ] = 60.0,
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout",
            help="Seconds one run may take in all before it is killed (after Go prints its"
            " goroutines).",
            callback=seconds_option(minimum=MIN_PROGRAM_SECONDS),
        ),
    ] = 180.0,
    course_timeout: CourseTimeoutOption = 60.0,
    outcome_timeout: Annotated[
        float,
        typer.Option(
            help="Seconds the outcome judge may take to decide one run (then: unknown).",
            callback=seconds_option(),
        ),
    ] = 60.0,
    jobs: Annotated[int, typer.Option(help="Runs at a time.", callback=count(1, 64))] = 2,
    export: Annotated[
        Path | None,
        typer.Option(
            help="Write the shrunk failure into this folder as test_data files and a"
            " redletter_repro_test.go, so that `go test -run Redletter` reproduces it in the"
            " package's folder without the kit.",
            callback=output_dir,
        ),
    ] = None,
    store: StoreOption = None,
) -> None:
    """Judge a COS 418 Go package as the course's own harness runs it: build it once,
    run a campaign of scenarios, judge every run, shrink the first failure.

    The folder is copied to a temporary directory (never written); the kit's driver
    is added as a _test.go file and the package built with the project's Go
    (packages without go.mod build in GOPATH mode). Both dialects of the assignment
    are recognised by their names. Hangs (with the goroutine dump), panics, Go
    runtime fatal errors, data races (--race) and build errors are verdicts of their
    own; the package's own tests run beside, for the course's verdict.
    """
    from redletter.conformance.adapters.cos418 import (
        CheckOptions,
        RunLimits,
        check_package,
    )

    if (top is None) != (events is None):
        raise InputError("--top and --events go together", code="RL-INPUT-USAGE")
    limits = RunLimits(
        step_timeout=step_timeout,
        deadlock_after=deadlock_after,
        collect_timeout=collect_timeout,
        kill_after=max(timeout, 1.0),
    )
    if timeout < step_timeout or timeout < collect_timeout:
        raise InputError(
            f"--timeout {timeout:g} is shorter than --step-timeout ({step_timeout:g}) or"
            f" --collect-timeout ({collect_timeout:g}): a whole run must be allowed at least as"
            " long as each of its parts",
            code="RL-INPUT-USAGE",
        )
    cwd = Path.cwd()
    options = CheckOptions(
        seed=seed,
        scenarios=scenarios,
        seeds=seeds,
        all_runs=all_runs,
        race=race,
        test_data=test_data,
        course_test=course_test,
        course_timeout=course_timeout,
        shrink=shrink_failure,
        limits=limits,
        outcome_timeout=outcome_timeout,
        jobs=jobs,
        given=(cwd / top, cwd / events) if top is not None and events is not None else None,
        store=cwd / store if store is not None else None,
        export=cwd / export if export is not None else None,
    )
    ui.keeps(
        "the runs were stopped and their temporary folders removed; the campaign writes"
        " nothing before it ends, so run it again"
    )
    if as_json:
        check = check_package(cwd / package_dir, options)
        ui.info(json.dumps(_json_of(check)))
    else:
        with _Progress() as progress:
            check = check_package(cwd / package_dir, options, events=progress.events())
        _print_summary(check)
    done(check.verdict.exit_code)


def _json_of(check: PackageCheck) -> dict[str, object]:
    from redletter.conformance.adapters.cos418.report import summary_json

    return summary_json(check)


class _Progress:
    """Phases behind a spinner and the campaign behind a progress bar on stderr; off a
    terminal, one line per phase and one per 25 runs (or 10 s)."""

    def __init__(self) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
        )

        self.live = ui.err_console.is_terminal
        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[failed]}"),
            TimeElapsedColumn(),
            console=ui.err_console,
            transient=True,
            disable=not self.live,
        )
        self.task: object = None
        self.failed = 0
        self.seen = 0
        self.total = 0
        self.last = time.monotonic()

    def __enter__(self) -> _Progress:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def _say(self, text: str) -> None:
        if not self.live:
            ui.err_console.print(text, markup=False, soft_wrap=True)

    def phase(self, text: str) -> None:
        self._say(f"{text} ...")
        self.task = self.progress.add_task(text, total=None, failed="")

    def planned(self, n: int) -> None:
        self.total = n
        self._say(f"running {n} runs ...")
        self.task = self.progress.add_task("runs", total=n, failed="")

    def run(self, cr: CaseRun) -> None:
        self.seen += 1
        self.failed += cr.result.verdict == "fail"
        if self.task is not None:
            self.progress.update(
                self.task,  # type: ignore[arg-type]
                advance=1,
                failed=f"[red]{self.failed} failed[/]" if self.failed else "",
                description=cr.case.klass,
            )
        if not self.live and (self.seen % 25 == 0 or time.monotonic() - self.last > 10):
            self.last = time.monotonic()
            self._say(f"  {self.seen} of {self.total} runs, {self.failed} failed")

    def phase_done(self) -> None:
        if self.task is not None:
            self.progress.remove_task(self.task)  # type: ignore[arg-type]
            self.task = None

    def events(self) -> CheckEvents:
        from redletter.conformance.adapters.cos418 import CheckEvents

        return CheckEvents(
            phase=self.phase, planned=self.planned, run=self.run, phase_done=self.phase_done
        )


# --------------------------------------------------------------------------- grade


@app.command("grade", epilog=EXIT_CODES)
def grade_cmd(
    submissions: Annotated[
        Path,
        typer.Argument(
            help="The class: a folder of submissions (one folder each), or a .csv class list"
            " (name,path).",
            show_default=False,
            callback=existing_path,
        ),
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="The grade's folder: journal, gradebook, reports (default:"
            " ./store/grade-<class>). Run again with the same folder to resume.",
            callback=output_dir,
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the class's campaign.", callback=count(0))] = 0,
    scenarios: Annotated[
        int, typer.Option(help="Generated scenarios, the same for everyone.", callback=count(1))
    ] = 20,
    seeds: Annotated[
        int, typer.Option(help="Simulator seeds per scenario.", callback=count(1, 10_000))
    ] = 2,
    race: Annotated[
        bool, typer.Option("--race", help="Build and run under Go's race detector.")
    ] = False,
    shrink_failure: Annotated[
        bool,
        typer.Option("--shrink/--no-shrink", help="Shrink each submission's first failure."),
    ] = True,
    shrink_seconds: Annotated[
        float,
        typer.Option(help="Seconds each shrinking may take.", callback=seconds_option()),
    ] = 60.0,
    max_hangs: Annotated[
        int,
        typer.Option(
            help="Hung runs after which a submission's campaign stops (its slot is bounded).",
            callback=count(1, 1_000_000),
        ),
    ] = 3,
    submission_timeout: Annotated[
        float,
        typer.Option(
            help="Seconds all of one submission's work may take (build, runs, shrinking, its"
            " own tests); then it stops and its row says where (0: no limit).",
            callback=seconds_option(zero=True),
        ),
    ] = 300.0,
    course_test: CourseTestOption = True,
    course_timeout: CourseTimeoutOption = 60.0,
    local: Annotated[
        bool,
        typer.Option("--local", help="Grade in this process, one submission after another."),
    ] = False,
    master: MasterOption = None,
    driver_memory: MemoryOption = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the gradebook as one JSON document.")
    ] = False,
) -> None:
    """Grade a class: every submission judged on the same campaign (the same scenarios
    and simulator seeds), on Spark; write the gradebook (Parquet, CSV, HTML) and each
    submission's report. Durable: killed and run again with the same --out, it runs
    only what has no result yet. Identical submissions are graded once, each with
    its own row; each package's own tests run too (the course's verdict).

    Exit status 0 once the gradebook is written, whatever the submissions' verdicts;
    3 without Go or Spark's Java; 5 for a bad class list."""
    from redletter.pipeline.grade import GradeConfig, discover_submissions, grade_class

    subs = discover_submissions(submissions)
    root = out if out is not None else Path.cwd() / "store" / f"grade-{submissions.stem}"
    config = GradeConfig(
        seed=seed,
        scenarios=scenarios,
        seeds=seeds,
        race=race,
        shrink=shrink_failure,
        shrink_seconds=shrink_seconds,
        max_hangs=max_hangs,
        submission_timeout=submission_timeout or None,
        course_test=course_test,
        course_timeout=course_timeout,
    )

    def seen(names: tuple[str, ...], n: int) -> None:
        if not as_json:
            same = f" (identical: {', '.join(names[1:])})" if len(names) > 1 else ""
            ui.err_console.print(
                f"graded {names[0]}{same} ({n} result(s) committed)", markup=False, soft_wrap=True
            )

    spark = None
    if not local:
        from redletter.pipeline.session import SparkConfig, get_session

        spark = get_session(SparkConfig.from_env(master=master, driver_memory=driver_memory))
    summary = grade_class(subs, root, config, spark=spark, on_submission=seen)
    if as_json:
        ui.info(
            json.dumps(
                {
                    "submissions": summary.submissions,
                    "committed_now": summary.committed_now,
                    "seconds": round(summary.seconds, 2),
                    "counts": summary.counts(),
                    "gradebook": str(root / "gradebook.parquet"),
                    "rows": list(summary.rows),
                }
            )
        )
    else:
        ui.grade_summary(summary)
    done(Exit.OK)
