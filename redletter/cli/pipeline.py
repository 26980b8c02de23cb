"""``redletter pipeline ...``: the Spark jobs as commands.

The verbs read as on the Python model's engine, with the model first:
``pipeline explore MODEL --graph DIR``, ``pipeline lemmas MODEL --graph DIR``,
``pipeline crosscheck MODEL --tlc DIR --python DIR``; then the ingest jobs
(``ingest-dot MODEL FILE``, ``ingest-python MODEL [DIR]``) and ``campaign``.

Every command of one invocation shares one Spark session
(:mod:`redletter.pipeline.session`, imported inside the commands, so ``--help``
loads neither pyspark nor py4j).  The same jobs run under
``spark-submit pipeline/jobs.py <job> ...``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

import redletter.cli.ui as ui
from redletter.cli.options import (
    MIN_PROGRAM_SECONDS,
    HostedOption,
    ModelArg,
    RootOption,
    campaign_name,
    count,
    done,
    existing_dir,
    existing_file,
    existing_path,
    jvm_memory,
    output_dir,
    project,
    seconds_option,
)
from redletter.errors import Exit, InputError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from redletter.pipeline.explore import SparkExploreResult

__all__ = ["app"]

app = typer.Typer(
    help="Spark jobs: explore models, ingest state graphs, cross-check them, check the"
    " lemmas, run conformance campaigns.",
    no_args_is_help=True,
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
        callback=jvm_memory,
    ),
]
ManifestOption = Annotated[
    Path | None,
    typer.Option(
        help="Manifest to compare counts with (default: the project's, if any).",
        callback=existing_file,
    ),
]
GraphOption = Annotated[
    Path,
    typer.Option(
        "--graph", help="Graph directory (written by pipeline explore).", callback=existing_dir
    ),
]
OutOption = Annotated[
    Path, typer.Option("--out", help="Graph directory to write.", callback=output_dir)
]


def _spark(master: str | None, memory: str | None) -> SparkSession:
    from redletter.pipeline.session import SparkConfig, get_session

    return get_session(SparkConfig.from_env(master=master, driver_memory=memory))


def _manifest(path: Path | None, root: Path | None) -> Path | None:
    """The manifest to compare with: ``--manifest``, else the project's; None when absent."""
    chosen = path if path is not None else project(root).manifest_path
    return chosen if chosen.is_file() else None


@app.command("explore")
def explore_cmd(
    model: ModelArg,
    graph: Annotated[
        Path, typer.Option("--graph", help="Graph directory to write.", callback=output_dir)
    ],
    check: Annotated[
        bool,
        typer.Option(
            "--check/--no-check",
            help="Check the cfg's invariants and stop at the first violation (default), or"
            " explore everything unchecked.",
        ),
    ] = True,
    max_depth: Annotated[
        int | None, typer.Option(help="Stop after this many levels.", callback=count(0))
    ] = None,
    tables: Annotated[
        bool,
        typer.Option(
            "--tables/--no-tables",
            help="Write the graph's states (with their TLA+ text), edges and encodings"
            " (default, for a cross-check), or only the BFS parents and the counts (a"
            " search that checks invariants: 10 times less to write).",
        ),
    ] = True,
    partitions: Annotated[
        int | None,
        typer.Option(
            help="Partitions of the frontier and the visited set (default: two a core);"
            " more keep each task's share of a wide level small.",
            callback=count(1),
        ),
    ] = None,
    manifest: ManifestOption = None,
    root: RootOption = None,
    master: MasterOption = None,
    driver_memory: MemoryOption = None,
    python_memory: Annotated[
        str | None,
        typer.Option(
            "--python-memory",
            help="Bound of each Python worker (spark.executor.pyspark.memory, e.g. 1g;"
            " default: $REDLETTER_SPARK_PYTHON_MEMORY or none).",
            callback=jvm_memory,
        ),
    ] = None,
) -> None:
    """Breadth-first search of the Python model on Spark; write the graph as Parquet."""
    from redletter.pipeline.explore import explore_spark
    from redletter.pipeline.session import SparkConfig, get_session
    from redletter.python_model.config import load_model

    cfg = load_model(model, project(root).spec_dir)
    spark = get_session(
        SparkConfig.from_env(
            master=master, driver_memory=driver_memory, python_memory=python_memory
        )
    )
    result = explore_spark(
        spark,
        cfg,
        graph,
        check=check,
        graph=tables,
        max_depth=max_depth,
        partitions=partitions,
        on_level=ui.pipeline_level,
    )
    ui.pipeline_explored(model, result, graph)
    code = Exit.OK if result.violation is None else Exit.FAIL
    man = _manifest(manifest, root)
    if man is not None and check and max_depth is None:
        code = _against_manifest(man, model, result, code)
    done(code)


cluster_app = typer.Typer(
    help="A Spark standalone cluster on 127.0.0.1 (master and workers from pyspark's"
    " bin/spark-class), for spark-submit --master spark://...",
    no_args_is_help=True,
)
app.add_typer(cluster_app, name="cluster")

ClusterDir = Annotated[
    Path,
    typer.Option(
        "--dir",
        help="Where the logs and cluster.json go (default .cache/spark-cluster).",
        callback=output_dir,
    ),
]


@cluster_app.command("up")
def cluster_up_cmd(
    workers: Annotated[int, typer.Option(help="Number of workers.", callback=count(1))] = 1,
    cores: Annotated[int, typer.Option(help="Cores per worker.", callback=count(1))] = 2,
    memory: Annotated[
        str, typer.Option(help="Memory per worker (JVM size: 512m, 2g).", callback=jvm_memory)
    ] = "2g",
    port: Annotated[
        int, typer.Option(help="The master's port.", callback=count(1024, 65535))
    ] = 7077,
    directory: ClusterDir = Path(".cache/spark-cluster"),
) -> None:
    """Start a master and its workers; print the master URL for spark-submit."""
    from redletter.pipeline.cluster import start_standalone

    c = start_standalone(directory, workers=workers, cores=cores, memory=memory, port=port)
    ui.info(f"Spark standalone master {c.master_url} (web UI {c.web_ui}), {workers} worker(s)")
    ui.info(
        f"  PYSPARK_PYTHON=.venv/bin/python .venv/bin/spark-submit --master {c.master_url}"
        " pipeline/jobs.py explore MODEL --graph DIR"
    )
    ui.info(f"  stop with: .venv/bin/redletter pipeline cluster down --dir {directory}")
    done(Exit.OK)


@cluster_app.command("down")
def cluster_down_cmd(directory: ClusterDir = Path(".cache/spark-cluster")) -> None:
    """Stop the cluster started from --dir (exactly the processes it started)."""
    from redletter.pipeline.cluster import stop_standalone

    c = stop_standalone(directory)
    ui.info("no cluster recorded there" if c is None else f"stopped {c.master_url}")
    done(Exit.OK)


def _against_manifest(manifest: Path, model: str, result: SparkExploreResult, code: Exit) -> Exit:
    """A passing model must reproduce the row's counts; a must-fail one must violate
    the row's property.  Read through the manifest's typed loader."""
    from redletter.manifest import load_manifest

    entry = next((m for m in load_manifest(manifest).models if m.model == model), None)
    if entry is None:
        return code
    if entry.expect == "success":
        got = (result.distinct, result.total, result.depth)
        want = (entry.distinct, entry.total, entry.depth)
        ui.pipeline_counts(manifest, got, want)
        return code if got == want else Exit.FAIL
    named = result.violation is not None and result.violation.name == entry.violated
    ui.pipeline_must_fail(entry.violated, named)
    return Exit.OK if named else Exit.FAIL


@app.command("lemmas")
def lemmas_cmd(
    model: ModelArg,
    graph: GraphOption,
    app_dir: Annotated[
        Path | None,
        typer.Option(
            "--app-dir", help="Where to write the application graph.", callback=output_dir
        ),
    ] = None,
    root: RootOption = None,
    master: MasterOption = None,
    driver_memory: MemoryOption = None,
) -> None:
    """Lemma 0 and Lemma 1 on every completed snapshot: replay and reachability."""
    from redletter.pipeline.lemmas import check_lemmas_spark
    from redletter.python_model.config import load_model

    cfg = load_model(model, project(root).spec_dir)
    report = check_lemmas_spark(_spark(master, driver_memory), cfg, graph, app_dir=app_dir)
    ui.pipeline_lemmas(report.describe())
    done(Exit.OK if report.all_pass else Exit.FAIL)


@app.command("crosscheck")
def crosscheck_cmd(
    model: ModelArg,
    tlc: Annotated[
        Path, typer.Option("--tlc", help="TLC's graph directory.", callback=existing_dir)
    ],
    python: Annotated[
        Path,
        typer.Option("--python", help="The Python model's graph directory.", callback=existing_dir),
    ],
    manifest: ManifestOption = None,
    show: Annotated[
        int, typer.Option(help="Differences of each kind to show.", callback=count(0, 10_000))
    ] = 3,
    full_paths: Annotated[bool, typer.Option(help="Print every state of each path.")] = False,
    local: Annotated[
        bool, typer.Option("--local", help="Single-process engine (pyarrow, no Spark).")
    ] = False,
    root: RootOption = None,
    master: MasterOption = None,
    driver_memory: MemoryOption = None,
) -> None:
    """Compare two graphs exactly: states, initial states, labelled edges, counts."""
    from redletter.pipeline.crosscheck import crosscheck, crosscheck_local

    man = _manifest(manifest, root)
    if local:
        report = crosscheck_local(tlc, python, model, manifest=man, show=show)
    else:
        report = crosscheck(
            _spark(master, driver_memory), tlc, python, model, manifest=man, show=show
        )
    ui.pipeline_crosscheck(report, full_paths=full_paths)
    done(Exit.OK if report.matches else Exit.FAIL)


@app.command("ingest-dot")
def ingest_dot_cmd(
    model: ModelArg,
    file: Annotated[
        Path, typer.Argument(help="TLC's -dump dot,actionlabels file.", callback=existing_file)
    ],
    out: OutOption,
    var_columns: Annotated[
        bool, typer.Option("--var-columns", help="Also store each variable's value.")
    ] = False,
    batch_rows: Annotated[
        int, typer.Option(help="Rows per Parquet row group.", callback=count(1, 1 << 24))
    ] = 4096,
    master: MasterOption = None,
    driver_memory: MemoryOption = None,
) -> None:
    """Stream a TLC DOT dump into Parquet, then parse its labels in Spark."""
    from redletter.cli.live import ingest_progress
    from redletter.pipeline.ingest import parse_raw_states, stream_dot_to_raw

    with ingest_progress(file) as progress:
        stream_dot_to_raw(file, model, out, batch_rows=batch_rows, progress=progress)
    info = parse_raw_states(_spark(master, driver_memory), out, with_vars=var_columns)
    ui.pipeline_graph(info, out)
    done(Exit.OK)


@app.command("ingest-python")
def ingest_python_cmd(
    model: ModelArg,
    directory: Annotated[
        Path | None,
        typer.Argument(
            help="Directory with states.jsonl, edges.jsonl; omit it to run the Python"
            " explorer on MODEL now.",
            callback=existing_dir,
        ),
    ] = None,
    out: Annotated[
        Path, typer.Option("--out", help="Graph directory to write.", callback=output_dir)
    ] = Path("store/pipeline/python"),
    root: RootOption = None,
    master: MasterOption = None,
    driver_memory: MemoryOption = None,
) -> None:
    """Ingest the Python explorer's graph: its JSONL files, or (no DIRECTORY) explore
    MODEL with python_model's explorer and write the graph directly (no Spark)."""
    if directory is None:
        import dataclasses

        from redletter.pipeline.ingest import write_python_graph
        from redletter.python_model.config import load_model
        from redletter.python_model.explore import explore
        from redletter.python_model.state import to_tla

        cfg = load_model(model, project(root).spec_dir)
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
    ui.pipeline_graph(info, out)
    done(Exit.OK)


@app.command("campaign")
def campaign_cmd(
    traces: Annotated[
        Path,
        typer.Option(
            "--traces",
            help="Directory of *.itf.json, or a .parquet (id, path).",
            callback=existing_path,
        ),
    ],
    results: Annotated[
        Path,
        typer.Option("--results", help="Results directory (resumable).", callback=output_dir),
    ],
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
    hosted: HostedOption = False,
    name: Annotated[
        str, typer.Option("--name", help="Campaign name.", callback=campaign_name)
    ] = "default",
    chunk: Annotated[
        int, typer.Option(help="Traces per partition.", callback=count(1, 1_000_000))
    ] = 16,
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout",
            help="With --node: seconds a node may take to answer one request.",
            callback=seconds_option(minimum=MIN_PROGRAM_SECONDS),
        ),
    ] = 10.0,
    local: Annotated[
        bool,
        typer.Option("--local", help="Run in this process, partition after partition (no Spark)."),
    ] = False,
    master: MasterOption = None,
    driver_memory: MemoryOption = None,
) -> None:
    """Run every trace without a result through the runner (or judge it against
    --node); print the summary.

    Results are keyed by campaign (--name), implementation (--node and its options,
    or --runner) and trace content, and committed one line per trace: a campaign
    killed at any moment resumes where it was, and another name, node, runner or
    trace file is judged afresh."""
    from redletter.pipeline.campaign import (
        discover_traces,
        load_runner,
        run_campaign,
        run_campaign_local,
    )
    from redletter.pipeline.runners import command_runner

    if (runner is None) == (node is None):
        raise InputError("give exactly one of --runner and --node", code="RL-INPUT-CAMPAIGN")
    refs = discover_traces(traces)
    if runner is not None:
        fn = load_runner(runner)
        implementation = f"runner {runner}"
    else:
        fn = command_runner(str(node), hosted=hosted, timeout=timeout)
        hosting = " --hosted" if hosted else ""
        implementation = f"node {node}{hosting} --timeout {timeout:g}"
    if local:
        summary = run_campaign_local(
            refs, fn, results, campaign=name, implementation=implementation, chunk=chunk
        )
    else:
        summary = run_campaign(
            _spark(master, driver_memory),
            refs,
            fn,
            results,
            campaign=name,
            implementation=implementation,
            chunk=chunk,
        )
    ui.pipeline_campaign(summary)
    if any(v in ("fail", "error") for v, _ in summary.verdicts):
        done(Exit.FAIL)
    only_pass = dict(summary.verdicts).keys() <= {"pass"}
    done(Exit.OK if summary.complete and only_pass else Exit.UNKNOWN)
