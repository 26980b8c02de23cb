"""``redletter conform``: generate traces, judge a node on them, shrink, report.

- ``redletter conform traces MODEL --out DIR [--walks N --seed S]``
- ``redletter conform run --node "CMD" [--model M ...] [--walks N --seed S] [--hosted] [--all]``
- ``redletter conform replay TRACE.itf.json --node "CMD" [--hosted]``
- ``redletter conform validate MODEL LOG.ndjson [LOG2.ndjson ...]``

``CMD`` is split with :func:`shlex.split` and run without a shell.  Exit codes:
0 pass, 1 fail, 2 unknown, 3 environment missing, 4 internal error, 5 bad input.
The harness (and z3, which trace generation uses) is imported inside the commands.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

import redletter.cli.ui as ui
from redletter.cli.options import (
    HostedOption,
    ModelArg,
    NodeOption,
    RootOption,
    StoreOption,
    TimeoutOption,
    done,
    project,
)
from redletter.errors import Exit, InputError

if TYPE_CHECKING:
    from redletter.conformance.judges.drive import CommandNode, JudgeResult
    from redletter.conformance.report import RunFolder
    from redletter.conformance.traces import Trace

__all__ = ["app"]

app = typer.Typer(
    help="Judge an implementation against the model: traces, verdict, shrunk counterexample.",
    no_args_is_help=True,
)


@app.command("traces")
def traces_cmd(
    model: ModelArg,
    out: Annotated[Path, typer.Option("--out", help="Directory for the *.itf.json files.")],
    walks: Annotated[int, typer.Option(help="Random walks on random topologies.")] = 0,
    seed: Annotated[int, typer.Option(help="Seed of the first random walk.")] = 0,
    max_len: Annotated[int, typer.Option(help="Longest edge tour (steps).")] = 60,
    root: RootOption = None,
) -> None:
    """Generate a model's traces (edge tours, z3 goals, random walks) as ITF files."""
    from redletter.conformance.traces import coverage, generate, write_traces
    from redletter.python_model.config import load_model

    spec_dir = project(root).spec_dir
    traces = generate(model, spec_dir, walks=walks, seed=seed, max_len=max_len)
    paths = write_traces(out, traces)
    cfg = load_model(model, spec_dir)
    own = [t for t in traces if t.model == model]
    ui.info(f"wrote {len(paths)} traces to {out} (random walks: seed {seed}, {walks} walks)")
    ui.info(coverage(cfg, own).describe())
    done(Exit.OK)


def _judge_and_report(
    traces: list[Trace],
    node: CommandNode,
    node_cmd: str,
    hosted: bool,
    folder: RunFolder,
    *,
    stop_at_first: bool,
) -> int:
    """Judge each trace (stop at the first fail unless asked not to), shrink the
    first failure, write the run folder, print the summary; the exit code."""
    from redletter.conformance.judges.drive import judge_trace
    from redletter.conformance.report import write_report
    from redletter.conformance.shrink import ShrinkResult, shrink

    results: list[JudgeResult] = []
    for t in traces:
        r = judge_trace(t, node, log_dir=folder.logs)
        results.append(r)
        if r.verdict == "fail" and stop_at_first:
            break
    failing = next((r for r in results if r.verdict == "fail"), None)
    shrunk: ShrinkResult | None = None
    if failing is not None:
        shrunk = shrink(failing, node, judge=lambda t: judge_trace(t, node, log_dir=folder.logs))
    write_report(folder, results, node_cmd=node_cmd, hosted=hosted, shrunk=shrunk)
    ui.conform_summary(results, folder, node_cmd=node_cmd, hosted=hosted, shrunk=shrunk)
    if failing is not None:
        return int(Exit.FAIL)
    if any(r.verdict == "unknown" for r in results):
        return int(Exit.UNKNOWN)
    return int(Exit.OK)


@app.command("run")
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
) -> None:
    """Judge a node on generated (or stored) traces; shrink and report the first failure."""
    from redletter.conformance.judges.drive import CommandNode
    from redletter.conformance.report import new_run_folder
    from redletter.conformance.traces import generate, read_trace

    proj = project(root)
    spec = CommandNode.parse(node, hosted=hosted, timeout=timeout)
    if traces_dir is not None:
        files = sorted(traces_dir.glob("*.itf.json"))
        if not files:
            raise InputError(f"no *.itf.json in {traces_dir}", code="RL-INPUT-TRACES")
        traces = [read_trace(f) for f in files]
    else:
        traces = []
        for i, m in enumerate(model or ["MCToken2"]):
            traces.extend(generate(m, proj.spec_dir, walks=walks if i == 0 else 0, seed=seed))
    ui.info(f"judging {len(traces)} traces against {spec.describe()} (seed {seed})")
    name = "-".join(model or ["MCToken2"]) if traces_dir is None else traces_dir.name
    folder = new_run_folder(store if store is not None else proj.root / "store", name)
    done(_judge_and_report(traces, spec, node, hosted, folder, stop_at_first=not all_traces))


@app.command("replay")
def replay_cmd(
    trace: Annotated[Path, typer.Argument(help="A trace file (*.itf.json).")],
    node: NodeOption,
    hosted: HostedOption = False,
    timeout: TimeoutOption = 10.0,
    store: StoreOption = None,
    root: RootOption = None,
) -> None:
    """Judge a node on one trace file (e.g. a shrunk counterexample)."""
    from redletter.conformance.judges.drive import CommandNode, judge_trace
    from redletter.conformance.report import new_run_folder, write_report
    from redletter.conformance.traces import read_trace

    t = read_trace(trace)
    spec = CommandNode.parse(node, hosted=hosted, timeout=timeout)
    folder_store = store if store is not None else project(root).root / "store"
    folder = new_run_folder(folder_store, f"replay-{t.name}")
    r = judge_trace(t, spec, log_dir=folder.logs)
    write_report(folder, [r], node_cmd=node, hosted=hosted)
    ui.conform_summary([r], folder, node_cmd=node, hosted=hosted)
    done(r.exit_code)


@app.command("validate")
def validate_cmd(
    model: ModelArg,
    logs: Annotated[list[Path], typer.Argument(help="The NDJSON event log, or one log per node.")],
    root: RootOption = None,
) -> None:
    """Validate an implementation's own event log(s) step by step against the model.

    The logs are merged into one order consistent with their vector clocks and
    FIFO, replayed in the model; the first event the model cannot take is named
    with its file and line, and each recorded snapshot is compared with the one
    the algorithm must record for that execution.
    """
    from redletter.conformance.judges.log import validate_files
    from redletter.python_model.config import load_model

    cfg = load_model(model, project(root).spec_dir)
    result = validate_files(cfg, logs)
    ui.lines(result.explain().splitlines())
    done(Exit.OK if result.verdict == "pass" else Exit.FAIL)
