"""``redletter cos418 test|judge|generate``: Princeton COS 418 snapshot packages and files.

- ``redletter cos418 test DIR``: judge a Go package written against the COS 418
  interface as it is: copy it, add the kit's driver, build it once, run a campaign
  of generated scenarios (and the package's own ``test_data/``) under several
  simulator seeds, judge every run against its own logged schedule and by outcome,
  shrink the first failure, write ``store/<run>/report.html``.
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
    RootOption,
    StoreOption,
    count,
    done,
    existing_file,
    existing_path,
    output_dir,
    project,
    seconds_option,
)
from redletter.errors import Exit, InputError

if TYPE_CHECKING:
    from redletter.conformance.adapters.cos418 import RunLimits, TimedOutcome, Workspace
    from redletter.conformance.adapters.cos418_campaign import Case, CaseRun, Shrunk
    from redletter.conformance.adapters.cos418_report import Cos418Summary
    from redletter.conformance.formats.cos418 import Snap
    from redletter.conformance.judges.outcome import Judgement

__all__ = ["app"]

EXIT_CODES = (
    "Exit codes: 0 pass, 1 fail, 2 unknown (undecided), 3 environment missing"
    " (e.g. no Go toolchain), 4 internal error, 5 bad input."
)

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
        return judge_outcome(
            read_topology(top),
            read_scenario(events),
            [read_snap(s) for s in snaps],
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
    " snapshots with `redletter cos418 judge` (any FIFO schedule) or the package itself"
    " with `redletter cos418 test`."
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
    `redletter cos418 judge` (any FIFO schedule) or `redletter cos418 test`.
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


def _show_snap(s: Snap | None) -> str:
    if s is None:
        return "(none)"
    toks = ", ".join(f"{p} {n}" for p, n in s.tokens)
    msgs = ", ".join(f"{m.src}→{m.dst} token({m.n})" for m in s.messages)
    return f"tokens {toks}; in flight: {msgs or 'nothing'}"


def _print_summary(s: Cos418Summary, report: Path | None) -> None:
    from rich.table import Table

    from redletter.conformance.adapters.cos418_report import class_rows
    from redletter.conformance.formats.cos418 import format_scenario, format_topology

    console = ui.console
    colour = {"pass": "green", "fail": "red", "unknown": "yellow"}[str(s.verdict)]
    if not s.build.ok:
        console.print(
            f"[bold red]FAIL[/]: the package {s.package.name} does not build ({s.build.command}):"
        )
        ui.lines(f"  {line}" for line in s.build.error_lines())
        if "redletter_driver_test.go" in s.build.output:
            ui.info(
                "  (errors in redletter_driver_test.go mean the package lacks a name of the COS 418"
                " interface the driver uses; see docs/cos418.md)"
            )
    else:
        table = Table(title=f"cos418 test {s.package.name}", title_justify="left")
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
        console.print(
            f"[bold {colour}]{str(s.verdict).upper()}[/]: {len(s.runs)} of {s.planned} runs"
            f" in {s.seconds:.1f} s ({rate:.1f} runs/s)"
            + (
                ", stopped at the first failure (--all runs every scenario)"
                if s.stopped_early
                else ""
            )
        )
    ui.lines(f"note: {n}" for n in s.notes)
    shown: CaseRun | None = s.first_failure
    sh: Shrunk | None = s.shrunk
    if shown is not None:
        r = sh.result if sh is not None else shown.result
        case = sh.case if sh is not None else shown.case
        seed = sh.seed if sh is not None else shown.seed
        ui.info(
            f"first failure: {shown.case.name} ({shown.case.klass}, {shown.case.size()}),"
            f" simulator seed {shown.seed}"
        )
        if sh is not None and sh.case is sh.original:
            ui.info(
                "no smaller scenario fails the same way"
                + ("" if sh.confirmed else " (the shrunk one did not fail again when rerun)")
            )
        elif sh is not None:
            ui.info(f"shrunk to {case.size()} in {sh.runs} runs ({sh.seconds:.1f} s), seed {seed}")
        ui.info(f"why: {r.message}")
        ui.lines(f"  | {line}" for line in r.details)
        ui.info("scenario:")
        ui.lines("  " + line for line in format_topology(case.topology).splitlines())
        ui.lines("  " + line for line in format_scenario(case.scenario).splitlines())
        exp = {x.id: x for x in r.expected}
        rec = {x.id: x for x in r.recorded}
        for k in sorted(set(exp) | set(rec)):
            same = " (the same)" if exp.get(k) == rec.get(k) else ""
            ui.info(f"snapshot {k} expected: {_show_snap(exp.get(k))}")
            ui.info(f"snapshot {k} recorded: {_show_snap(rec.get(k))}{same}")
    sandbox = s.extra.get("sandbox")
    if isinstance(sandbox, dict):
        layers = [x for x in sandbox.get("layers", []) if isinstance(x, dict)]
        on = [str(x["layer"]) for x in layers if x.get("active")]
        off = [f"{x['layer']} NOT active ({x['detail']})" for x in layers if not x.get("active")]
        ui.info(
            f"sandbox ({sandbox.get('mode')}): {', '.join(on) or 'no layer'} active"
            + (f"; {'; '.join(off)}" if off else "")
        )
    if report is not None:
        ui.info(f"report: {report}")
    if s.replay:
        ui.info(f"replay: {s.replay}")


@app.command("test", epilog=EXIT_CODES)
def test_cmd(
    package_dir: Annotated[
        Path,
        typer.Argument(
            help="The Go package (a folder written against the COS 418 interface).",
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
        bool, typer.Option("--json", help="Print one JSON document (no progress, no table).")
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
    shrink_failure: Annotated[
        bool, typer.Option("--shrink/--no-shrink", help="Shrink the first failure.")
    ] = True,
    step_timeout: Annotated[
        float,
        typer.Option(
            help="Seconds one InjectEvent or Tick may take before the run hangs.",
            callback=seconds_option(),
        ),
    ] = 1.0,
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout",
            help="Seconds one run may take in all before it is killed.",
            callback=seconds_option(),
        ),
    ] = 30.0,
    outcome_timeout: Annotated[
        float,
        typer.Option(
            help="Seconds the outcome judge may take to decide one run (then: unknown).",
            callback=seconds_option(),
        ),
    ] = 60.0,
    jobs: Annotated[int, typer.Option(help="Runs at a time.", callback=count(1, 64))] = 2,
    store: StoreOption = None,
    root: RootOption = None,
) -> None:
    """Judge a COS 418 Go package: build it once, run a campaign of scenarios,
    judge every run against its own schedule and by outcome, shrink the first failure.

    The folder is copied to a temporary directory (never written); the kit's driver
    is added as a _test.go file and the package built with the project's Go
    (packages without go.mod build in GOPATH mode). Hangs, panics, Go runtime
    fatal errors, data races (--race) and build errors are verdicts of their own.
    """
    from redletter.conformance.adapters.cos418 import (
        RunLimits,
        TimedOutcome,
        Workspace,
        inspect_package,
    )
    from redletter.conformance.adapters.cos418_campaign import (
        Case,
        generate_cases,
        jobs_of,
        package_cases,
        shrink,
    )
    from redletter.conformance.adapters.cos418_report import (
        Cos418Summary,
        overall,
        replay_command,
        summary_json,
        write_cos418_report,
    )
    from redletter.conformance.formats.cos418 import check_scenario, read_scenario, read_topology
    from redletter.conformance.report import new_run_folder
    from redletter.conformance.verdict import Verdict

    if (top is None) != (events is None):
        raise InputError("--top and --events go together", code="RL-INPUT-USAGE")
    pkg = inspect_package(package_dir)
    notes: list[str] = []
    cases: list[Case]
    if top is not None and events is not None:
        topology, scenario = read_topology(top), read_scenario(events)
        check_scenario(topology, scenario, str(events))
        if not topology.strongly_connected():
            raise InputError(
                "the topology is not strongly connected, so a snapshot may never complete",
                code="RL-INPUT-COS418",
                path=str(top),
            )
        cases = [Case(events.stem, "given", topology, scenario, f"{top} with {events}")]
    else:
        cases = generate_cases(seed, scenarios)
        if test_data and pkg.test_data is not None:
            own, skipped = package_cases(pkg.test_data)
            cases += own
            notes += skipped
    seed_list = tuple(range(seed, seed + seeds))
    job_list = jobs_of(cases, seed_list)
    if not job_list:
        raise InputError("nothing to run: --scenarios 0 and no test_data/", code="RL-INPUT-USAGE")
    limits = RunLimits(step_timeout=step_timeout, kill_after=timeout)
    proj_root = project(root).root if store is None else None
    pool = TimedOutcome(outcome_timeout)
    with Workspace(pkg, race=race) as ws:
        from redletter.cli.live import status

        if as_json:
            build = ws.build()
        else:
            with status(
                f"building {pkg.name} with the driver"
                f" ({'race detector, ' if race else ''}go test -c)"
            ):
                build = ws.build()
        runs: list[CaseRun] = []
        seconds = 0.0
        first = None
        shrunk = None
        campaign_started = time.monotonic()
        if build.ok:
            runs = _run_with_progress(
                ws, job_list, limits, pool, stop_at_first=not all_runs, jobs=jobs, quiet=as_json
            )
            seconds = time.monotonic() - campaign_started
            first = next((r for r in runs if r.result.verdict == Verdict.FAIL), None)
            if first is not None and shrink_failure:
                if as_json:
                    shrunk = shrink(ws, first, limits, seeds=seed_list, outcome=pool)
                else:
                    with status(f"shrinking {first.case.name} (seed {first.seed})"):
                        shrunk = shrink(ws, first, limits, seeds=seed_list, outcome=pool)
        verdict = overall(runs) if build.ok else Verdict.FAIL
        timeouts = pool.timeouts
    undecided = sum(
        r.result.outcome_verdict == Verdict.UNKNOWN for r in runs if r.result.verdict == "pass"
    )
    if undecided:
        notes.append(
            f"the outcome judge left {undecided} passing run(s) undecided ({timeouts} over its"
            f" {outcome_timeout:g} s limit): those were judged against their own schedule only"
        )
    folder = new_run_folder(
        store if store is not None else (proj_root or Path(".")) / "store",
        f"cos418-{pkg.source.name}",
    )
    replay = ""
    if first is not None:
        replay = replay_command(
            pkg.source,
            folder.path / "shrunk.top",
            folder.path / "shrunk.events",
            shrunk.seed if shrunk is not None else first.seed,
            race=race,
        )
    summary = Cos418Summary(
        package=pkg,
        build=build,
        verdict=verdict,
        seed=seed,
        seeds=seed_list,
        runs=tuple(runs),
        planned=len(job_list),
        seconds=seconds,
        first_failure=first,
        shrunk=shrunk,
        replay=replay,
        notes=tuple(notes),
        outcome_timeouts=timeouts,
        stopped_early=first is not None and not all_runs and len(runs) < len(job_list),
        extra=({"sandbox": ws.sandbox_report.to_json()} if ws.sandbox_report is not None else {}),
    )
    paths = write_cos418_report(folder, summary)
    if as_json:
        ui.info(json.dumps(summary_json(summary, folder.path)))
    else:
        _print_summary(summary, paths["html"])
    done(verdict.exit_code)


def _run_with_progress(
    ws: Workspace,
    job_list: Sequence[tuple[Case, int]],
    limits: RunLimits,
    pool: TimedOutcome,
    *,
    stop_at_first: bool,
    jobs: int,
    quiet: bool,
) -> list[CaseRun]:
    """The campaign behind a progress bar on stderr (none with --json or off a terminal)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from redletter.conformance.adapters.cos418_campaign import run_campaign

    failed = 0
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[failed]}"),
        TimeElapsedColumn(),
        console=ui.err_console,
        transient=True,
        disable=quiet or not ui.err_console.is_terminal,
    )
    task = progress.add_task("runs", total=len(job_list), failed="")

    def seen(cr: CaseRun) -> None:
        nonlocal failed
        failed += cr.result.verdict == "fail"
        progress.update(
            task,
            advance=1,
            failed=f"[red]{failed} failed[/]" if failed else "",
            description=cr.case.klass,
        )

    with progress:
        return run_campaign(
            ws,
            job_list,
            limits,
            stop_at_first=stop_at_first,
            workers=jobs,
            outcome=pool,
            on_result=seen,
        )
