"""``redletter pipeline ...``: the Spark jobs as commands (typer app ``pipeline_app``).

Every command of one invocation shares one Spark session (:mod:`redletter.pipeline.session`).
The same jobs run under ``spark-submit pipeline/jobs.py <job> ...``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from redletter.errors import Exit, InputError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pipeline_app = typer.Typer(
    name="pipeline",
    help="Spark jobs: explore models, ingest state graphs, cross-check them, check the"
    " lemmas, run conformance campaigns.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

MasterOption = Annotated[
    str | None,
    typer.Option(
        "--master",
        help="Spark master (default: $REDLETTER_SPARK_MASTER or local[*]).",
    ),
]
MemoryOption = Annotated[
    str | None,
    typer.Option(
        "--driver-memory",
        help="spark.driver.memory (default: $REDLETTER_SPARK_DRIVER_MEMORY or 2g).",
    ),
]


def _spark(master: str | None, memory: str | None) -> SparkSession:
    from redletter.pipeline.session import SparkConfig, get_session

    return get_session(SparkConfig.from_env(master=master, driver_memory=memory))


@pipeline_app.command("ingest-dot")
def ingest_dot_cmd(
    file: Annotated[Path, typer.Argument(help="TLC's -dump dot,actionlabels file.")],
    model: Annotated[str, typer.Option("--model", help="Model name (e.g. MCToken2).")],
    out: Annotated[Path, typer.Option("--out", help="Graph directory to write.")],
    var_columns: Annotated[
        bool, typer.Option("--var-columns", help="Also store each variable's value.")
    ] = False,
    batch_rows: Annotated[int, typer.Option(help="Rows per Parquet row group.")] = 4096,
    master: MasterOption = None,
    driver_memory: MemoryOption = None,
) -> int:
    """Stream a TLC DOT dump into Parquet, then parse its labels in Spark."""
    from redletter.pipeline.ingest import parse_raw_states, stream_dot_to_raw
    from redletter.pipeline.report import ingest_progress, show_graph

    size = file.stat().st_size if file.is_file() else None
    with ingest_progress(file) as bar:
        task = bar.add_task(file.name, total=size)
        stream_dot_to_raw(
            file,
            model,
            out,
            batch_rows=batch_rows,
            progress=lambda n: bar.update(task, completed=min(n, size or n)),
        )
        bar.update(task, completed=size)
    info = parse_raw_states(_spark(master, driver_memory), out, with_vars=var_columns)
    show_graph(info, out)
    return int(Exit.OK)


@pipeline_app.command("ingest-python")
def ingest_python_cmd(
    directory: Annotated[
        Path | None,
        typer.Argument(
            help="Directory with states.jsonl, edges.jsonl; omit it to run the Python"
            " explorer on --model now."
        ),
    ] = None,
    model: Annotated[str, typer.Option("--model", help="Model name.")] = "",
    out: Annotated[Path, typer.Option("--out", help="Graph directory to write.")] = Path(
        "store/pipeline/python"
    ),
    spec_dir: Annotated[Path, typer.Option("--spec-dir", help="Where the models are.")] = Path(
        "spec"
    ),
    master: MasterOption = None,
    driver_memory: MemoryOption = None,
) -> int:
    """Ingest the Python explorer's graph: its JSONL files, or (no DIRECTORY) explore
    --model with python_model's explorer and write the graph directly (no Spark)."""
    from redletter.pipeline.report import show_graph

    if not model:
        raise InputError("--model is required", code="RL-INPUT-MODEL")
    if directory is None:
        from redletter.pipeline.ingest import write_python_graph
        from redletter.python_model.config import load_model
        from redletter.python_model.explore import explore
        from redletter.python_model.state import to_tla

        cfg = load_model(model, spec_dir)
        result = explore(dataclasses.replace(cfg, invariants=(), properties=()), graph=True)
        g = result.graph
        assert g is not None
        init = set(g.initial)
        info = write_python_graph(
            out,
            model,
            ((i, to_tla(cfg, s), i in init) for i, s in enumerate(g.states)),
            g.edges(),
        )
    else:
        from redletter.pipeline.ingest import ingest_python_jsonl

        info = ingest_python_jsonl(_spark(master, driver_memory), directory, model, out)
    show_graph(info, out)
    return int(Exit.OK)


@pipeline_app.command("crosscheck")
def crosscheck_cmd(
    tlc: Annotated[Path, typer.Option("--tlc", help="TLC's graph directory.")],
    python: Annotated[Path, typer.Option("--python", help="The Python model's graph directory.")],
    model: Annotated[str, typer.Option("--model", help="Model name.")],
    manifest: Annotated[Path | None, typer.Option(help="Manifest to compare counts with.")] = Path(
        "spec/manifest.json"
    ),
    show: Annotated[int, typer.Option(help="Differences of each kind to show.")] = 3,
    full_paths: Annotated[bool, typer.Option(help="Print every state of each path.")] = False,
    local: Annotated[
        bool, typer.Option("--local", help="Single-process engine (pyarrow, no Spark).")
    ] = False,
    master: MasterOption = None,
    driver_memory: MemoryOption = None,
) -> int:
    """Compare two graphs exactly: states, initial states, labelled edges, counts."""
    from redletter.pipeline.crosscheck import crosscheck, crosscheck_local
    from redletter.pipeline.report import show_crosscheck

    man = manifest if manifest is not None and manifest.is_file() else None
    if local:
        report = crosscheck_local(tlc, python, model, manifest=man, show=show)
    else:
        report = crosscheck(
            _spark(master, driver_memory), tlc, python, model, manifest=man, show=show
        )
    show_crosscheck(report, full_paths=full_paths)
    return int(Exit.OK if report.matches else Exit.FAIL)


@pipeline_app.command("campaign")
def campaign_cmd(
    traces: Annotated[
        Path, typer.Option("--traces", help="Directory of *.itf.json, or a .parquet (id, path).")
    ],
    results: Annotated[Path, typer.Option("--results", help="Results directory (resumable).")],
    runner: Annotated[
        str | None,
        typer.Option(
            "--runner",
            help=(
                "module:function taking a trace path"
                " (e.g. redletter.pipeline.runners:reference_runner)."
            ),
        ),
    ] = None,
    node: Annotated[
        str | None,
        typer.Option("--node", help='A node command, e.g. "python -m mynode" (no shell).'),
    ] = None,
    hosted: Annotated[
        bool, typer.Option("--hosted", help="With --node: one process hosts every node.")
    ] = False,
    name: Annotated[str, typer.Option("--name", help="Campaign name.")] = "default",
    chunk: Annotated[int, typer.Option(help="Traces per partition (per results file).")] = 16,
    master: MasterOption = None,
    driver_memory: MemoryOption = None,
) -> int:
    """Run every trace without a result through the runner (or judge it against
    --node); print the summary."""
    from redletter.pipeline.campaign import discover_traces, load_runner, run_campaign
    from redletter.pipeline.report import show_campaign
    from redletter.pipeline.runners import command_runner

    if (runner is None) == (node is None):
        raise InputError("give exactly one of --runner and --node", code="RL-INPUT-CAMPAIGN")
    refs = discover_traces(traces)
    fn = load_runner(runner) if runner is not None else command_runner(str(node), hosted=hosted)
    summary = run_campaign(
        _spark(master, driver_memory), refs, fn, results, campaign=name, chunk=chunk
    )
    show_campaign(summary)
    bad = any(v in ("fail", "error") for v, _ in summary.verdicts)
    if bad:
        return int(Exit.FAIL)
    only_pass = dict(summary.verdicts).keys() <= {"pass"}
    return int(Exit.OK if summary.complete and only_pass else Exit.UNKNOWN)


@pipeline_app.command("explore")
def explore_cmd(
    model: Annotated[str, typer.Argument(help="Model name (e.g. MCToken2).")],
    out: Annotated[Path, typer.Option("--out", help="Graph directory to write.")],
    spec_dir: Annotated[Path, typer.Option("--spec-dir", help="Where the models are.")] = Path(
        "spec"
    ),
    check: Annotated[
        bool,
        typer.Option(
            "--check/--no-check",
            help="Check the cfg's invariants and stop at the first violation (default), or"
            " explore everything unchecked.",
        ),
    ] = True,
    max_depth: Annotated[int | None, typer.Option(help="Stop after this many levels.")] = None,
    manifest: Annotated[Path | None, typer.Option(help="Manifest to compare counts with.")] = Path(
        "spec/manifest.json"
    ),
    master: MasterOption = None,
    driver_memory: MemoryOption = None,
) -> int:
    """Breadth-first search of the Python model on Spark; write the graph as Parquet."""
    from redletter.pipeline.explore import LevelReport, explore_spark
    from redletter.python_model.config import load_model
    from redletter.ui import console

    cfg = load_model(model, spec_dir)
    con = console

    def level(r: LevelReport) -> None:
        con.print(
            f"depth {r.depth:>3}  new {r.new:>9,}  distinct {r.distinct:>10,}"
            f"  total {r.total:>11,}  {r.seconds:6.2f} s"
        )

    result = explore_spark(
        _spark(master, driver_memory), cfg, out, check=check, max_depth=max_depth, on_level=level
    )
    con.print(
        f"{model}: {result.distinct:,} distinct states, {result.total:,} states generated,"
        f" depth {result.depth}, {result.edges:,} edges, {result.seconds:.1f} s -> {out}"
    )
    if result.violation is not None:
        con.print(
            f"[bold red]{result.violation.describe()}[/]"
            f" (a trace of {len(result.violation.trace)} states)"
        )
        for i, st in enumerate(result.violation.trace):
            con.print(f"  {i + 1:>3}. {st.action} {st.params}", markup=False)
    code = Exit.OK if result.violation is None else Exit.FAIL
    if manifest is not None and manifest.is_file() and check and max_depth is None:
        import json

        rows = {r["model"]: r for r in json.loads(manifest.read_text(encoding="utf-8"))["models"]}
        row = rows.get(model)
        if row is not None and row["expect"] == "success":
            got = (result.distinct, result.total, result.depth)
            want = (row["distinct"], row["total"], row["depth"])
            if got != want:
                con.print(
                    f"[bold red]counts differ from {manifest}:[/] distinct/total/depth {got},"
                    f" expected {want}"
                )
                code = Exit.FAIL
            else:
                con.print(f"counts equal {manifest}'s (distinct, total, depth) {want}")
        elif row is not None and row["expect"] != "success":
            named = result.violation is not None and result.violation.name == row["violated"]
            code = Exit.OK if named else Exit.FAIL
            con.print(
                f"must-fail model: expected {row['violated']} violated,"
                f" {'as found' if named else 'not found'}"
            )
    return int(code)


@pipeline_app.command("lemmas")
def lemmas_cmd(
    model: Annotated[str, typer.Argument(help="Model name (e.g. MCToken2).")],
    graph: Annotated[Path, typer.Option("--graph", help="Graph directory (pipeline explore).")],
    spec_dir: Annotated[Path, typer.Option("--spec-dir", help="Where the models are.")] = Path(
        "spec"
    ),
    app_dir: Annotated[
        Path | None, typer.Option("--app-dir", help="Where to write the application graph.")
    ] = None,
    master: MasterOption = None,
    driver_memory: MemoryOption = None,
) -> int:
    """Lemma 0 and Lemma 1 on every completed snapshot: replay and reachability."""
    from redletter.pipeline.lemmas import check_lemmas_spark
    from redletter.python_model.config import load_model
    from redletter.ui import console

    cfg = load_model(model, spec_dir)
    report = check_lemmas_spark(_spark(master, driver_memory), cfg, graph, app_dir=app_dir)
    con = console
    for line in report.describe():
        con.print(line, highlight=False)
    return int(Exit.OK if report.all_pass else Exit.FAIL)
