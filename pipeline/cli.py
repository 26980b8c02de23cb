"""``redletter pipeline ...``: the Spark jobs as commands (typer app ``pipeline_app``).

Every command of one invocation shares one Spark session (:mod:`pipeline.session`).
The same jobs run under ``spark-submit pipeline/jobs.py <job> ...``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from redletter.errors import Exit

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pipeline_app = typer.Typer(
    name="pipeline",
    help="Spark jobs: ingest state graphs, cross-check them, run conformance campaigns.",
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
    from pipeline.session import SparkConfig, get_session

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
    from pipeline.ingest import parse_raw_states, stream_dot_to_raw
    from pipeline.report import ingest_progress, show_graph

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
    directory: Annotated[Path, typer.Argument(help="Directory with states.jsonl, edges.jsonl.")],
    model: Annotated[str, typer.Option("--model", help="Model name.")],
    out: Annotated[Path, typer.Option("--out", help="Graph directory to write.")],
    master: MasterOption = None,
    driver_memory: MemoryOption = None,
) -> int:
    """Ingest the Python explorer's JSONL graph (format: see pipeline/ingest.py)."""
    from pipeline.ingest import ingest_python_jsonl
    from pipeline.report import show_graph

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
    from pipeline.crosscheck import crosscheck, crosscheck_local
    from pipeline.report import show_crosscheck

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
    runner: Annotated[str, typer.Option("--runner", help="module:function taking a trace path.")],
    name: Annotated[str, typer.Option("--name", help="Campaign name.")] = "default",
    chunk: Annotated[int, typer.Option(help="Traces per partition (per results file).")] = 16,
    master: MasterOption = None,
    driver_memory: MemoryOption = None,
) -> int:
    """Run every trace without a result through the runner; print the summary."""
    from pipeline.campaign import discover_traces, load_runner, run_campaign
    from pipeline.report import show_campaign

    refs = discover_traces(traces)
    fn = load_runner(runner)
    summary = run_campaign(
        _spark(master, driver_memory), refs, fn, results, campaign=name, chunk=chunk
    )
    show_campaign(summary)
    bad = any(v in ("fail", "error") for v, _ in summary.verdicts)
    if bad:
        return int(Exit.FAIL)
    only_pass = dict(summary.verdicts).keys() <= {"pass"}
    return int(Exit.OK if summary.complete and only_pass else Exit.UNKNOWN)
