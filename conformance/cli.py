"""``redletter conform``: generate traces, judge a node on them, shrink, report.

- ``redletter conform traces MODEL --out DIR [--walks N --seed S]``
- ``redletter conform run --node "CMD" [--model M ...] [--walks N --seed S] [--hosted] [--all]``
- ``redletter conform replay TRACE.itf.json --node "CMD" [--hosted]``
- ``redletter conform validate MODEL LOG.ndjson [LOG2.ndjson ...]``

``CMD`` is split with :func:`shlex.split` and run without a shell.  Exit codes:
0 pass, 1 fail, 2 unknown, 3 environment missing, 4 internal error, 5 bad input.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer

from redletter import ui
from redletter.conformance.judge import CommandNode, JudgeResult, judge_trace
from redletter.conformance.report import (
    RunFolder,
    new_run_folder,
    replay_command,
    show_step,
    write_report,
)
from redletter.conformance.shrink import ShrinkResult, shrink
from redletter.conformance.traces import (
    Trace,
    coverage,
    generate,
    read_trace,
    write_traces,
)
from redletter.conformance.validate import validate_files
from redletter.errors import Exit, InputError
from redletter.project import Project, find_project
from redletter.python_model.config import load_model

conform_app = typer.Typer(
    name="conform",
    help="Judge an implementation against the model: traces, verdict, shrunk counterexample.",
    no_args_is_help=True,
    add_completion=False,
)

RootOption = Annotated[
    Path | None,
    typer.Option("--root", help="Project root (default: found from the current directory)."),
]
NodeOption = Annotated[
    str, typer.Option("--node", help='The node command, e.g. "python -m mynode" (no shell).')
]
HostedOption = Annotated[
    bool, typer.Option("--hosted", help="One process hosts every node (routed by dest).")
]
StoreOption = Annotated[
    Path | None, typer.Option("--store", help="Where run folders go (default: <root>/store).")
]
TimeoutOption = Annotated[
    float, typer.Option("--timeout", help="Seconds a node may take to answer one request.")
]


def _project(root: Path | None) -> Project:
    return Project(root.resolve()) if root is not None else find_project()


def _node(cmd: str, hosted: bool, timeout: float) -> CommandNode:
    return CommandNode.parse(cmd, hosted=hosted, timeout=timeout)


@conform_app.command("traces")
def traces_cmd(
    model: Annotated[str, typer.Argument(help="A model of spec/, e.g. MCToken2.")],
    out: Annotated[Path, typer.Option("--out", help="Directory for the *.itf.json files.")],
    walks: Annotated[int, typer.Option(help="Random walks on random topologies.")] = 0,
    seed: Annotated[int, typer.Option(help="Seed of the first random walk.")] = 0,
    max_len: Annotated[int, typer.Option(help="Longest edge tour (steps).")] = 60,
    root: RootOption = None,
) -> int:
    """Generate a model's traces (edge tours, z3 goals, random walks) as ITF files."""
    project = _project(root)
    traces = generate(model, project.spec_dir, walks=walks, seed=seed, max_len=max_len)
    paths = write_traces(out, traces)
    cfg = load_model(model, project.spec_dir)
    own = [t for t in traces if t.model == model]
    ui.info(f"wrote {len(paths)} traces to {out} (random walks: seed {seed}, {walks} walks)")
    ui.info(coverage(cfg, own).describe())
    return int(Exit.OK)


def _judge_all(
    traces: list[Trace], node: CommandNode, logs: Path, *, stop_at_first: bool
) -> list[JudgeResult]:
    results: list[JudgeResult] = []
    for t in traces:
        r = judge_trace(t, node, log_dir=logs)
        results.append(r)
        if r.verdict == "fail" and stop_at_first:
            break
    return results


def _finish(
    results: list[JudgeResult],
    node: CommandNode,
    node_cmd: str,
    hosted: bool,
    folder: RunFolder,
) -> int:
    failing = next((r for r in results if r.verdict == "fail"), None)
    shrunk: ShrinkResult | None = None
    if failing is not None:
        shrunk = shrink(failing, node, judge=lambda t: judge_trace(t, node, log_dir=folder.logs))
    write_report(folder, results, node_cmd=node_cmd, hosted=hosted, shrunk=shrunk)
    print_summary(results, folder, node_cmd=node_cmd, hosted=hosted, shrunk=shrunk)
    if failing is not None:
        return int(Exit.FAIL)
    if any(r.verdict == "unknown" for r in results):
        return int(Exit.UNKNOWN)
    return int(Exit.OK)


@conform_app.command("run")
def run_cmd(
    node: NodeOption,
    model: Annotated[
        list[str] | None, typer.Option("--model", help="Model(s) to generate traces of.")
    ] = None,
    walks: Annotated[int, typer.Option(help="Random walks on random topologies.")] = 0,
    seed: Annotated[int, typer.Option(help="Seed of the first random walk.")] = 0,
    traces_dir: Annotated[
        Path | None, typer.Option("--traces", help="Judge the *.itf.json of this directory.")
    ] = None,
    all_traces: Annotated[
        bool, typer.Option("--all", help="Judge every trace (default: stop at the first fail).")
    ] = False,
    hosted: HostedOption = False,
    timeout: TimeoutOption = 10.0,
    store: StoreOption = None,
    root: RootOption = None,
) -> int:
    """Judge a node on generated (or stored) traces; shrink and report the first failure."""
    project = _project(root)
    spec = _node(node, hosted, timeout)
    if traces_dir is not None:
        files = sorted(traces_dir.glob("*.itf.json"))
        if not files:
            raise InputError(f"no *.itf.json in {traces_dir}", code="RL-INPUT-TRACES")
        traces = [read_trace(f) for f in files]
    else:
        traces = []
        for i, m in enumerate(model or ["MCToken2"]):
            traces.extend(generate(m, project.spec_dir, walks=walks if i == 0 else 0, seed=seed))
    ui.info(f"judging {len(traces)} traces against {spec.describe()} (seed {seed})")
    folder_store = store if store is not None else project.root / "store"
    name = "-".join(model or ["MCToken2"]) if traces_dir is None else traces_dir.name
    folder = new_run_folder(folder_store, name)
    results = _judge_all(traces, spec, folder.logs, stop_at_first=not all_traces)
    return _finish(results, spec, node, hosted, folder)


@conform_app.command("replay")
def replay_cmd(
    trace: Annotated[Path, typer.Argument(help="A trace file (*.itf.json).")],
    node: NodeOption,
    hosted: HostedOption = False,
    timeout: TimeoutOption = 10.0,
    store: StoreOption = None,
    root: RootOption = None,
) -> int:
    """Judge a node on one trace file (e.g. a shrunk counterexample)."""
    t = read_trace(trace)
    spec = _node(node, hosted, timeout)
    folder_store = store if store is not None else _project(root).root / "store"
    folder = new_run_folder(folder_store, f"replay-{t.name}")
    r = judge_trace(t, spec, log_dir=folder.logs)
    write_report(folder, [r], node_cmd=node, hosted=hosted)
    print_summary([r], folder, node_cmd=node, hosted=hosted)
    return r.exit_code


@conform_app.command("validate")
def validate_cmd(
    model: Annotated[str, typer.Argument(help="The model whose constants the run used.")],
    logs: Annotated[
        list[Path], typer.Argument(help="The NDJSON event log, or one log per node.")
    ],
    root: RootOption = None,
) -> int:
    """Validate an implementation's own event log(s) step by step against the model.

    The logs are merged into one order consistent with their vector clocks and
    FIFO, replayed in the model; the first event the model cannot take is named
    with its file and line, and each recorded snapshot is compared with the one
    the algorithm must record for that execution.
    """
    cfg = load_model(model, _project(root).spec_dir)
    result = validate_files(cfg, logs)
    for line in result.explain().splitlines():
        ui.info(line)
    return int(Exit.OK if result.verdict == "pass" else Exit.FAIL)


def print_summary(
    results: Sequence[JudgeResult],
    folder: RunFolder | None,
    *,
    node_cmd: str,
    hosted: bool = False,
    shrunk: ShrinkResult | None = None,
) -> None:
    """Print the verdict, the explanation, the shrunk schedule and the replay command."""
    from rich.table import Table

    fails = [r for r in results if r.verdict == "fail"]
    unknown = [r for r in results if r.verdict == "unknown"]
    verdict = "fail" if fails else "unknown" if unknown else "pass"
    colour = {"pass": "green", "fail": "red", "unknown": "yellow"}[verdict]
    ui.console.print(
        f"[bold {colour}]{verdict.upper()}[/]: {len(results)} traces judged, "
        f"{len(results) - len(fails) - len(unknown)} passed, {len(fails)} failed, "
        f"{len(unknown)} unknown"
    )
    firsts = fails or unknown
    shown = shrunk.result if shrunk is not None else (firsts[0] if firsts else None)
    if shown is not None and shown.verdict != "pass":
        ui.info(f"trace {shown.trace.name}: {shown.explanation()}")
    if shrunk is not None:
        table = Table(title=f"shrunk schedule ({len(shrunk.trace.steps)} steps)")
        table.add_column("#", justify="right")
        table.add_column("step")
        for i, (a, ps) in enumerate(shrunk.trace.steps, start=1):
            table.add_row(str(i), show_step(a, ps))
        ui.console.print(table)
    if folder is not None:
        ui.info(f"report: {folder.path / 'report.html'}")
    if shrunk is not None and folder is not None:
        ui.info("replay: " + replay_command(folder.shrunk, node_cmd, hosted=hosted))
