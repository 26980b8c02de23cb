"""``redletter flink run|judge``: Flink's barrier snapshots on the real engine.

- ``redletter flink run --mode aligned|unaligned|at-least-once --runs N [--seed S]``:
  run the keyed-count job on Apache Flink (PyFlink's local MiniCluster, in the
  ``.venv-flink/`` that ``make flink`` installs) up to N times, each failing once
  at a seeded record so Flink restores its latest completed checkpoint; judge
  every key's final state against the records the source emitted; print the
  table; write ``store/<run>/results.json`` and ``report.html``; with
  ``--publish`` also the mode's entry of ``docs/data/flink-results.json``.
- ``redletter flink judge DIR``: judge again the run folders a campaign left
  (``DIR/runs/run-*``, or one run folder), without Flink.

Exit codes: 0 the mode behaved as its guarantee says, 1 it did not (duplicates
or losses under exactly once, losses under at least once), 2 undecided (no
restore from a checkpoint, or at-least-once's budget ended without
duplicates), 3 Flink or Java is not installed, 4 internal error, 5 bad input.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

import redletter.cli.ui as ui
from redletter.cli.options import (
    MIN_PROGRAM_SECONDS,
    RootOption,
    StoreOption,
    campaign_name,
    choice,
    count,
    done,
    existing_dir,
    output_file,
    project,
    seconds_option,
)
from redletter.errors import InputError
from redletter.project import default_store

if TYPE_CHECKING:
    from redletter.conformance.adapters.flink.judge import ModeJudgement, RunJudgement
    from redletter.conformance.adapters.flink.workload import JobConfig

__all__ = ["app"]

EXIT_CODES = (
    "Exit codes: 0 the mode behaved as its guarantee says, 1 it did not, 2 undecided"
    " (no restore, or the run budget ended without duplicates), 3 Flink or Java not"
    " installed (run `make flink`), 4 internal error, 5 bad input."
)

MODES = ("aligned", "unaligned", "at-least-once")
DATA_FILE = Path("docs/data/flink-results.json")

app = typer.Typer(
    help="Flink's barrier snapshots on the real engine (optional: `make flink` installs it).",
    no_args_is_help=True,
)


def _run_line(r: RunJudgement) -> str:
    return f"run {r.run}: {r.outcome}: {r.explanation}"


def _show(mj: ModeJudgement) -> None:
    from rich.table import Table

    console = ui.wide(200)
    table = Table(title=f"Flink, {mj.mode} checkpoints ({mj.guarantee})", title_justify="left")
    for col in (
        "run", "fails at", "restored from", "checkpoints", "keys exactly once",
        "duplicated", "lost", "records counted twice", "records missed", "outcome",
    ):  # fmt: skip
        table.add_column(col, justify="left" if col == "outcome" else "right")
    for r in mj.runs:
        # Duplicates are what at-least-once allows: not red there.
        allowed = mj.mode == "at-least-once" and not r.outcome.losses
        bad = (r.outcome.duplicates or r.outcome.losses) and not allowed
        table.add_row(
            str(r.run),
            str(r.fail_at),
            "—" if r.restored_from is None else f"checkpoint {r.restored_from}",
            str(r.checkpoints),
            str(r.count("exactly once")),
            str(r.count("duplicated") + r.count("duplicated and lost")),
            str(r.count("lost") + r.count("duplicated and lost")),
            str(r.duplicated_records),
            str(r.lost_records),
            f"[red]{r.outcome}[/]" if bad else str(r.outcome),
        )
    console.print(table)
    summary = Table(title="Summary", title_justify="left")
    for col in (
        "mode", "runs", "restores seen", "keys exactly once", "keys duplicated", "keys lost",
        "first run with duplicates", "checkpoint median", "verdict",
    ):  # fmt: skip
        summary.add_column(col, justify="left" if col in ("mode", "verdict") else "right")
    med = mj.median_ms()
    colour = {"pass": "green", "fail": "red", "unknown": "yellow"}[str(mj.verdict)]
    summary.add_row(
        mj.mode,
        f"{len(mj.runs)} of {mj.planned}",
        str(mj.restores),
        str(mj.keys("exactly once")),
        str(mj.keys("duplicated") + mj.keys("duplicated and lost")),
        str(mj.keys("lost") + mj.keys("duplicated and lost")),
        "—" if mj.first_duplicates is None else str(mj.first_duplicates),
        "—" if med is None else f"{med:.0f} ms",
        f"[{colour}]{mj.verdict}[/]",
    )
    console.print(summary)
    console.print(f"[bold {colour}]{str(mj.verdict).upper()}[/]: ", end="")
    ui.info(mj.explanation)


def _command(mode: str, runs: int, seed: int, extra: list[str]) -> str:
    return " ".join(
        [
            ".venv/bin/redletter",
            "flink",
            "run",
            "--mode",
            mode,
            "--runs",
            str(runs),
            "--seed",
            str(seed),
        ]
        + [shlex.quote(x) for x in extra]
    )


@app.command("run", epilog=EXIT_CODES)
def run_cmd(
    mode: Annotated[
        str,
        typer.Option(
            "--mode",
            callback=choice(*MODES),
            help="aligned (exactly once, barriers aligned), unaligned (exactly once, barriers"
            " overtake buffered records, which are stored) or at-least-once (alignment skipped).",
            show_default=False,
        ),
    ],
    runs: Annotated[
        int, typer.Option(help="The run budget: at most this many runs.", callback=count(1))
    ] = 5,
    seed: Annotated[
        int,
        typer.Option(
            help="Seed of the failure points (run i fails at a point drawn from it).",
            callback=count(0),
        ),
    ] = 0,
    records: Annotated[
        int, typer.Option(help="The source emits records 1..N.", callback=count(1))
    ] = 8000,
    keys: Annotated[int, typer.Option(help="Distinct keys.", callback=count(1))] = 8,
    parallelism: Annotated[
        int, typer.Option(help="Parallelism of every operator (>= 2).", callback=count(2))
    ] = 2,
    checkpoint_ms: Annotated[
        int, typer.Option(help="Checkpoint interval, milliseconds.", callback=count(10))
    ] = 250,
    delay_ms: Annotated[
        float,
        typer.Option(
            help="Work per record in the counter, milliseconds.",
            callback=seconds_option(zero=True, unit="milliseconds"),
        ),
    ] = 0.5,
    skew_ms: Annotated[
        float,
        typer.Option(
            help="Extra work per record on the last source subtask, milliseconds: a slow"
            " input, whose barriers reach the counter late (0: inputs at one speed).",
            callback=seconds_option(zero=True, unit="milliseconds"),
        ),
    ] = 1.0,
    timeout: Annotated[
        float,
        typer.Option(
            help="Seconds one run may take before the kit stops it.",
            callback=seconds_option(minimum=MIN_PROGRAM_SECONDS),
        ),
    ] = 300.0,
    all_runs: Annotated[
        bool,
        typer.Option(
            "--all",
            help="Use the whole budget (default: stop at the first run that settles the"
            " verdict: duplicates or losses).",
        ),
    ] = False,
    publish: Annotated[
        Path | None,
        typer.Option(
            "--publish",
            help="Also write this mode's results into this JSON file (the comparison page's"
            f" data: {DATA_FILE}), keeping the other modes.",
            callback=output_file,
        ),
    ] = None,
    label: Annotated[
        str | None,
        typer.Option(
            "--label",
            help="With --publish: the entry's name in the file (default: the mode), to keep"
            " a second measurement of a mode under other settings.",
            callback=campaign_name,
        ),
    ] = None,
    flink_python: Annotated[
        Path | None,
        typer.Option(
            "--flink-python",
            help="A Python with PyFlink (default: $REDLETTER_FLINK_PYTHON, else"
            " .venv-flink/bin/python).",
        ),
    ] = None,
    store: StoreOption = None,
    root: RootOption = None,
) -> None:
    """Run the keyed-count job on Flink, fail it once per run, judge every key."""
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from redletter.conformance.adapters.flink.results import Meta, write_results
    from redletter.conformance.adapters.flink.results import publish as publish_to
    from redletter.conformance.adapters.flink.runner import Settings, find_flink, run_campaign
    from redletter.conformance.report import new_run_folder

    settings = Settings(
        records=records,
        keys=keys,
        parallelism=parallelism,
        checkpoint_ms=checkpoint_ms,
        delay_ms=delay_ms,
        skew_ms=skew_ms,
        timeout=timeout,
    ).check()
    proj = project(root)
    env = find_flink(proj.root, flink_python)
    defaults = Settings()
    extra = [
        f"--{name.replace('_', '-')}={getattr(settings, name)}"
        for name in ("records", "keys", "parallelism", "checkpoint_ms", "delay_ms", "skew_ms")
        if getattr(settings, name) != getattr(defaults, name)
    ] + (["--all"] if all_runs else [])
    command = _command(mode, runs, seed, extra)
    folder = new_run_folder(store if store is not None else default_store(), f"flink-{mode}")
    ui.info(
        f"flink {mode}: up to {runs} run(s), seed {seed}; PyFlink {env.version} on Java"
        f" {env.java}; {records} records, {keys} keys, parallelism {parallelism},"
        f" a checkpoint every {checkpoint_ms} ms, last source {skew_ms:g} ms/record slower;"
        f" folder {folder.path}"
    )
    progress = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=ui.err_console,
        transient=True,
        disable=not ui.err_console.is_terminal,
    )
    task = progress.add_task("starting", total=runs)

    def started(cfg: JobConfig) -> None:
        progress.update(
            task,
            description=f"run {cfg.run} of {runs}: Flink job failing once at record {cfg.fail_at}",
        )

    def finished(r: RunJudgement) -> None:
        progress.advance(task)
        if progress.disable:
            ui.info(_run_line(r))
        else:  # above the live display
            progress.console.print(_run_line(r), markup=False, soft_wrap=True, highlight=False)

    with progress:
        mj = run_campaign(
            env,
            mode,
            runs,
            seed,
            settings,
            folder.path,
            stop_when_decided=not all_runs,
            on_start=started,
            on_result=finished,
        )
    meta = Meta(command=command, seed=seed, settings=settings, pyflink=env.version, java=env.java)
    data = write_results(folder.path, mj, meta)
    _show(mj)
    if len(mj.runs) < runs:
        ui.info(
            f"stopped after run {len(mj.runs)} of {runs}: it settles the verdict"
            " (--all uses the whole budget)"
        )
    ui.info(f"results: {folder.path / 'results.json'}; report: {folder.path / 'report.html'}")
    if publish is not None:
        target = publish.absolute()  # a relative path is the caller's, as everywhere
        publish_to(target, data, label)
        ui.info(f"published the {mode} results to {target} as {label or mode!r}")
    done(mj.verdict.exit_code)


@app.command("judge", epilog=EXIT_CODES)
def judge_cmd(
    folder: Annotated[
        Path,
        typer.Argument(
            help="A campaign folder (with runs/run-*) or one run folder (with config.json).",
            show_default=False,
            callback=existing_dir,
        ),
    ],
    runs: Annotated[
        int | None,
        typer.Option(
            help="The run budget to judge against (default: the runs found).", callback=count(1)
        ),
    ] = None,
    publish: Annotated[
        Path | None,
        typer.Option(
            "--publish",
            help="Also write the verdict into this JSON file (as `flink run --publish` does),"
            " with the command and engine the campaign's results.json records.",
            callback=output_file,
        ),
    ] = None,
    label: Annotated[
        str | None,
        typer.Option(
            "--label",
            help="With --publish: the entry's name (default: the mode).",
            callback=campaign_name,
        ),
    ] = None,
) -> None:
    """Judge the run folders a campaign left again, without Flink."""
    from redletter.conformance.adapters.flink.evidence import read_run
    from redletter.conformance.adapters.flink.judge import judge_mode, judge_run
    from redletter.conformance.adapters.flink.results import mode_json, read_meta
    from redletter.conformance.adapters.flink.results import publish as publish_to

    if (folder / "config.json").is_file():
        run_dirs = [folder]
    elif (folder / "runs").is_dir():
        run_dirs = sorted(p for p in (folder / "runs").iterdir() if (p / "config.json").is_file())
    else:
        raise InputError(
            "neither a run folder (no config.json) nor a campaign folder (no runs/)",
            code="RL-INPUT-FLINK",
            path=str(folder),
        )
    if not run_dirs:
        raise InputError(
            "no run folder (runs/*/config.json) in it", code="RL-INPUT-FLINK", path=str(folder)
        )
    judged = [judge_run(read_run(d)) for d in run_dirs]
    modes = sorted({r.mode for r in judged})
    if len(modes) != 1:
        raise InputError(
            f"the runs mix modes ({', '.join(modes)}); judge one mode's folder at a time",
            code="RL-INPUT-FLINK",
            path=str(folder),
        )
    mj = judge_mode(modes[0], judged, planned=runs if runs is not None else len(judged))
    ui.lines(_run_line(r) for r in mj.runs)
    _show(mj)
    if publish is not None:
        meta = read_meta(folder / "results.json")
        publish_to(publish, mode_json(mj, meta), label)
        ui.info(f"published the {mj.mode} results to {publish} as {label or mj.mode!r}")
    done(mj.verdict.exit_code)
