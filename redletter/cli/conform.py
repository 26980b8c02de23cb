"""``redletter conform``: generate traces, judge a node on them, shrink, report.

- ``redletter conform traces MODEL --out DIR [--walks N --seed S]``
- ``redletter conform run --node "CMD" [--model M ...] [--walks N --seed S] [--hosted] [--all]
  [--quick]``
- ``redletter conform replay TRACE.itf.json --node "CMD" [--hosted]``
- ``redletter conform validate MODEL LOG.ndjson [LOG2.ndjson ...]``

``CMD`` is split with :func:`shlex.split` and run without a shell.  Exit codes:
0 pass, 1 fail, 2 unknown, 3 environment missing, 4 internal error, 5 bad input.
The harness (and z3, which trace generation uses) is imported inside the commands.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperCommand

import redletter.cli.ui as ui
from redletter.cli.options import (
    MIN_PROGRAM_SECONDS,
    VALIDATORS,
    HostedOption,
    ModelArg,
    NodeOption,
    RootOption,
    StoreOption,
    TimeoutOption,
    count,
    done,
    existing_dir,
    existing_file,
    existing_path,
    model_name,
    models_dir,
    output_dir,
    project,
    seconds_option,
    size_option,
)
from redletter.errors import Exit, InputError
from redletter.project import default_store

if TYPE_CHECKING:
    from collections.abc import Callable

    from redletter.conformance.judges.drive import CommandNode, JudgeResult, JudgeRun
    from redletter.conformance.report import RunFolder
    from redletter.conformance.sandbox import SandboxPolicy
    from redletter.conformance.traces import Trace

__all__ = ["app"]

app = typer.Typer(
    help="Judge an implementation against the model: traces, verdict, shrunk counterexample.",
    no_args_is_help=True,
)

QUICK_TRACES = 24  #: conformance.traces.QUICK_TRACES (not imported: --help loads no harness)
QUICK_SHRINK_SECONDS = 15.0  #: the shrink budget of ``conform run --quick``
#: Random walks ``--quick`` adds when --walks is not given: 5 machines, 2 concurrent
#: snapshots, what MCToken2's tours (2 machines, 1 snapshot) cannot show.
QUICK_WALKS = 2

WalksOption = Annotated[
    int, typer.Option(help="Random walks on random topologies.", callback=count(0, 100_000))
]
SeedOption = Annotated[int, typer.Option(help="Seed of the first random walk.", callback=count(0))]


def _sandbox_mode(value: str) -> str:
    modes = ("auto", "strict", "off")  # redletter.conformance.sandbox.MODES
    if value not in modes:
        raise typer.BadParameter(f"must be one of {', '.join(modes)}, got {value!r}")
    return value


VALIDATORS[_sandbox_mode] = ("choice", ())


_FIELD = r"[A-Za-z_][A-Za-z0-9_]{0,99}"  #: a key of the user's JSON objects
#: ``--conserved-sum`` given without a FIELD (no argument can hold a NUL byte)
_NUMBERS = "\x00numbers"


def _field_name(value: str | None) -> str | None:
    """A field name, or :data:`_NUMBERS` (``--conserved-sum`` without one)."""
    import re

    if value is not None and value != _NUMBERS and not re.fullmatch(_FIELD, value):
        raise typer.BadParameter(
            f"a field name is 1 to 100 letters, digits or '_' (a key of your JSON objects), "
            f"got {value!r}"
        )
    return value


VALIDATORS[_field_name] = ("name", ())

SandboxOption = Annotated[
    str,
    typer.Option(
        "--sandbox",
        help="auto: every sandbox layer this machine allows (the report says which);"
        " strict: refuse to run (exit 3) unless all are active; off: resource limits only.",
        callback=_sandbox_mode,
    ),
]
SandboxPathOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--sandbox-path",
        help="Also show the node this file or directory, read-only (repeatable).",
        callback=existing_path,
    ),
]
MemoryOption = Annotated[
    str,
    typer.Option(
        "--memory",
        help="Memory for the whole run, every node together (e.g. 4G, 512M).",
        callback=size_option,
    ),
]


def _policy(sandbox: str, paths: list[Path] | None, memory: str, store: Path) -> SandboxPolicy:
    from redletter.conformance.sandbox import SandboxPolicy, parse_bytes

    return SandboxPolicy(
        mode=sandbox,  # type: ignore[arg-type]
        paths=tuple(p.resolve() for p in paths or ()),
        hide=(store.resolve(),),
        memory=parse_bytes(memory),
    )


@app.command("traces")
def traces_cmd(
    model: ModelArg,
    out: Annotated[
        Path,
        typer.Option("--out", help="Directory for the *.itf.json files.", callback=output_dir),
    ],
    walks: WalksOption = 0,
    seed: SeedOption = 0,
    max_len: Annotated[
        int, typer.Option(help="Longest edge tour (steps).", callback=count(1, 100_000))
    ] = 60,
    root: RootOption = None,
) -> None:
    """Generate a model's traces (edge tours, z3 goals, random walks) as ITF files; a
    variant's (lazy, observer, barrier) as schedule files."""
    from redletter.conformance.judges.families import generate_traces
    from redletter.conformance.traces import coverage, generate, write_schedule, write_traces
    from redletter.python_model.config import load_model
    from redletter.python_model.engines import family_of

    spec_dir = project(root).spec_dir
    if family_of(model, spec_dir) not in (None, "ChandyLamport"):
        made = generate_traces(model, spec_dir, walks=walks, seed=seed)
        try:
            for t in made:
                write_schedule(out / f"{t.name}.schedule.json", t)
        except OSError as exc:
            raise InputError(
                f"--out: cannot write the traces: {exc.strerror}",
                path=str(out),
                code="RL-INPUT-USAGE",
            ) from None
        ui.info(
            f"wrote {len(made)} schedules of {model} to {out} (random walks: seed {seed});"
            " a variant's states depend on its node's choices, so its traces are schedules"
        )
        done(Exit.OK)
    traces = generate(model, spec_dir, walks=walks, seed=seed, max_len=max_len)
    try:
        paths = write_traces(out, traces)
    except OSError as exc:
        raise InputError(
            f"--out: cannot write the traces: {exc.strerror}", path=str(out), code="RL-INPUT-USAGE"
        ) from None
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
    budget: float | None = None,
    max_unknown: int | None = None,
    shrink_budget: float | None = None,
) -> int:
    """Judge each trace within the run's bounds (stop at the first fail unless asked
    not to), shrink the first failure within its own budget, write the run folder,
    print the summary; the exit code."""
    from redletter.cli.live import judging
    from redletter.conformance.judges.drive import judge_all
    from redletter.conformance.judges.families import judge_of, schedule_of
    from redletter.conformance.report import write_report
    from redletter.conformance.shrink import ShrinkResult, shrink

    judges: dict[str, Callable[[Trace], JudgeResult]] = {}

    def judge(t: Trace) -> JudgeResult:
        # one judge per model (a run may mix models of different spec families)
        if t.model not in judges:
            judges[t.model] = judge_of(t, node, folder.logs)
        return judges[t.model](t)

    with judging(len(traces)) as progress:
        run: JudgeRun = judge_all(
            traces,
            node,
            log_dir=folder.logs,
            stop_at_first=stop_at_first,
            budget=budget,
            max_unknown=max_unknown,
            on_result=progress,
            judge=judge,
        )
    results = list(run.results)
    failing = next((r for r in results if r.verdict == "fail"), None)
    shrunk: ShrinkResult | None = None
    if failing is not None:
        with judging(None, what="shrinking the failure") as progress:
            shrunk = shrink(
                failing,
                node,
                judge=judge,
                budget=shrink_budget,
                on_run=progress,
                schedule_of=schedule_of(failing.trace),
            )
    write_report(
        folder,
        results,
        node_cmd=node_cmd,
        hosted=hosted,
        shrunk=shrunk,
        stopped=run.stopped,
        node=node,
    )
    ui.conform_summary(
        results, folder, node_cmd=node_cmd, hosted=hosted, shrunk=shrunk, stopped=run.stopped
    )
    return int(run.verdict.exit_code)


def read_any_trace(path: Path) -> Trace:
    """A Chandy-Lamport trace (ITF, its states checked) or a variant's schedule file."""
    from redletter.conformance.traces import read_schedule, read_trace

    return read_schedule(path) if path.name.endswith(".schedule.json") else read_trace(path)


def _new_folder(store: Path, name: str) -> RunFolder:
    from redletter.conformance.report import new_run_folder

    try:
        return new_run_folder(store, name)
    except OSError as exc:
        raise InputError(
            f"--store: cannot create a run folder in {store}: {exc.strerror}",
            code="RL-INPUT-USAGE",
        ) from None


@app.command("run")
def run_cmd(
    node: NodeOption,
    model: Annotated[
        list[str] | None,
        typer.Option("--model", help="Model(s) to generate traces of.", callback=model_name),
    ] = None,
    walks: WalksOption = 0,
    seed: SeedOption = 0,
    traces_dir: Annotated[
        Path | None,
        typer.Option(
            "--traces", help="Judge the *.itf.json of this directory.", callback=existing_dir
        ),
    ] = None,
    all_traces: Annotated[
        bool, typer.Option("--all", help="Judge every trace (default: stop at the first fail).")
    ] = False,
    quick: Annotated[
        bool,
        typer.Option(
            "--quick",
            help=f"Judge a representative subset (at most {QUICK_TRACES} traces: the z3 goals"
            f" and {QUICK_WALKS} random walks (or --walks N), then the tours that add the"
            " most steps and step pairs not yet seen, ties broken by --seed) and shrink for"
            f" at most {QUICK_SHRINK_SECONDS:.0f} s.",
        ),
    ] = False,
    hosted: HostedOption = False,
    timeout: TimeoutOption = 10.0,
    budget: Annotated[
        float,
        typer.Option(
            "--budget",
            help="Seconds the whole run may take; the traces left are not judged (unknown).",
            callback=seconds_option(minimum=MIN_PROGRAM_SECONDS),
        ),
    ] = 3600.0,
    max_unknown: Annotated[
        int,
        typer.Option(
            "--max-unknown",
            help="Stop after this many unknown verdicts (a node that never answers costs"
            " --timeout on every trace).",
            callback=count(1),
        ),
    ] = 3,
    shrink_budget: Annotated[
        float,
        typer.Option(
            "--shrink-budget",
            help="Seconds shrinking a failure may take (then the smallest failing schedule"
            " found so far is reported).",
            callback=seconds_option(),
        ),
    ] = 120.0,
    sandbox: SandboxOption = "auto",
    sandbox_path: SandboxPathOption = None,
    memory: MemoryOption = "4G",
    store: StoreOption = None,
    root: RootOption = None,
) -> None:
    """Judge a node on generated (or stored) traces; shrink and report the first failure."""
    from redletter.conformance.judges.drive import CommandNode
    from redletter.conformance.judges.families import generate_traces
    from redletter.conformance.sandbox import cleanup_stale
    from redletter.python_model.engines import family_of
    from redletter.untrusted import check_regular

    proj = project(root)
    where = store if store is not None else default_store()
    policy = _policy(sandbox, sandbox_path, memory, where)
    spec = CommandNode.parse(node, hosted=hosted, timeout=timeout, sandbox=policy)
    cleanup_stale()
    if traces_dir is not None:
        files = sorted([*traces_dir.glob("*.itf.json"), *traces_dir.glob("*.schedule.json")])
        if not files:
            raise InputError(
                f"no *.itf.json or *.schedule.json in {traces_dir}", code="RL-INPUT-TRACES"
            )
        for f in files:  # a FIFO or a device among them is refused before any is read
            check_regular(f, code="RL-INPUT-ITF", what="the trace")
        traces = [read_any_trace(f) for f in files]
    else:
        traces = []
        first = (model or ["MCToken2"])[0]
        if quick and walks == 0 and family_of(first, proj.spec_dir) in (None, "ChandyLamport"):
            walks = QUICK_WALKS  # a variant's traces are walks already
        for i, m in enumerate(model or ["MCToken2"]):
            traces.extend(
                generate_traces(m, proj.spec_dir, walks=walks if i == 0 else 0, seed=seed)
            )
    if quick:
        from redletter.conformance.traces import quick_subset

        picked = quick_subset(traces, seed=seed)
        ui.info(
            f"judging {ui.plural(len(picked), 'trace')} of {len(traces)} (--quick: a"
            f" representative subset, seed {seed}) against {spec.describe()}"
        )
        traces = picked
        shrink_budget = min(shrink_budget, QUICK_SHRINK_SECONDS)
    else:
        judged = ui.plural(len(traces), "trace")
        ui.info(f"judging {judged} against {spec.describe()} (seed {seed})")
    name = "-".join(model or ["MCToken2"]) if traces_dir is None else traces_dir.name
    folder = _new_folder(where, name)
    done(
        _judge_and_report(
            traces,
            spec,
            node,
            hosted,
            folder,
            stop_at_first=not all_traces,
            budget=budget,
            max_unknown=max_unknown,
            shrink_budget=shrink_budget,
        )
    )


@app.command("replay")
def replay_cmd(
    trace: Annotated[
        Path,
        typer.Argument(
            help="A trace file (*.itf.json, or a variant's *.schedule.json).",
            callback=existing_file,
        ),
    ],
    node: NodeOption,
    hosted: HostedOption = False,
    timeout: TimeoutOption = 10.0,
    sandbox: SandboxOption = "auto",
    sandbox_path: SandboxPathOption = None,
    memory: MemoryOption = "4G",
    store: StoreOption = None,
    root: RootOption = None,
) -> None:
    """Judge a node on one trace file (e.g. a shrunk counterexample)."""
    from redletter.conformance.judges.drive import CommandNode, start_error, usage_error
    from redletter.conformance.judges.families import judge_of
    from redletter.conformance.report import write_report
    from redletter.conformance.sandbox import cleanup_stale

    t = read_any_trace(trace)
    folder_store = store if store is not None else default_store()
    policy = _policy(sandbox, sandbox_path, memory, folder_store)
    spec = CommandNode.parse(node, hosted=hosted, timeout=timeout, sandbox=policy)
    cleanup_stale()
    folder = _new_folder(folder_store, f"replay-{t.name}")
    r = judge_of(t, spec, folder.logs)(t)
    if (bad := start_error(r, spec) or usage_error(r)) is not None:
        raise bad  # the node never started: no verdict, no report
    write_report(folder, [r], node_cmd=node, hosted=hosted)
    ui.conform_summary([r], folder, node_cmd=node, hosted=hosted)
    done(r.exit_code)


def _split_validate_args(
    args: list[str], model: str | None, from_log: bool
) -> tuple[str | None, list[Path]]:
    """``[MODEL] LOG...``: the model (None: judge the run itself) and the logs."""
    import re

    if model is not None and from_log:
        raise InputError(
            "--model and --from-log exclude each other: --from-log judges the logs on "
            "their own run, without a model",
            code="RL-INPUT-USAGE",
        )
    rest = list(args)
    if (
        model is None
        and not from_log
        and rest
        and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", rest[0])
        and not Path(rest[0]).exists()
    ):
        model = rest.pop(0)
    if not rest:
        raise InputError(
            "no log given: name one event log per process (or one holding them all), e.g. "
            ".venv/bin/redletter conform validate logs/p1.ndjson logs/p2.ndjson",
            code="RL-INPUT-USAGE",
        )
    logs = [Path(x) for x in rest]
    existing_file(logs)
    _not_event_logs(logs)
    if model is not None:
        model_name(model)
    return model, logs


class _ValidateCommand(TyperCommand):
    """``conform validate``, whose ``--conserved-sum`` takes its FIELD optionally: a
    bare ``--conserved-sum`` (at the end, before another option, or before a file: a
    log) counts numbers only."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        def bare(i: int) -> bool:
            nxt = args[i + 1] if i + 1 < len(args) else None
            return nxt is None or nxt.startswith("-") or (nxt != "" and Path(nxt).exists())

        given = [
            f"--conserved-sum={_NUMBERS}" if a == "--conserved-sum" and bare(i) else a
            for i, a in enumerate(args)
        ]
        return super().parse_args(ctx, given)


def _not_event_logs(logs: list[Path]) -> None:
    """A COS 418 file (``.top``, ``.events``, ``.snap``) or a trace (ITF, one JSON
    document over many lines) is not an event log: say which command reads it,
    instead of failing on its first line."""
    import re
    import shlex

    from redletter.untrusted import check_regular

    for log in logs:
        kind = re.search(r"\.(top|events|snap)\d*$", log.name)
        if kind is not None:
            raise InputError(
                f"{log} is a COS 418 .{kind.group(1)} file, not an NDJSON event log: judge"
                " COS 418 snapshot files with `.venv/bin/redletter cos418 judge TOP EVENTS"
                " SNAP...` (the .top, the .events and the .snap files; docs/cos418.md)",
                code="RL-INPUT-USAGE",
            )
        check_regular(log, code="RL-INPUT-LOG", what="the event log")
        with log.open("rb") as f:
            first = f.readline(64).strip()
        if log.name.endswith((".itf.json", ".schedule.json")) or first in (b"{", b"["):
            what = (
                "a trace (ITF)"
                if log.name.endswith(".itf.json")
                else "a schedule file"
                if log.name.endswith(".schedule.json")
                else "one JSON document over many lines (a trace?)"
            )
            q = shlex.quote(str(log))
            raise InputError(
                f"{log} is {what}, not an NDJSON event log (one event a line,"
                " docs/instrument.md): replay a trace against a node with"
                f" `.venv/bin/redletter conform replay {q} --node CMD`, or step through it"
                f" with `.venv/bin/redletter explain --itf {q} -o trace.html`",
                code="RL-INPUT-USAGE",
            )


@app.command("validate", cls=_ValidateCommand)
def validate_cmd(
    args: Annotated[
        list[str],
        typer.Argument(
            help="[MODEL] LOG...: one NDJSON event log per process (or one holding them"
            " all), after an optional model name (MCToken2, ...).",
            show_default=False,
            metavar="[MODEL] LOG...",
        ),
    ],
    model: Annotated[
        str | None,
        typer.Option(
            "--model", help="Replay the logs in this model (spec/<model>.tla).", callback=model_name
        ),
    ] = None,
    from_log: Annotated[
        bool,
        typer.Option(
            "--from-log",
            help="Judge the run the logs record, without a model (the default when no"
            " model is named).",
        ),
    ] = False,
    whole_run: Annotated[
        bool,
        typer.Option(
            "--whole-run",
            help="The logs hold the whole run even where a log has no end event: a"
            " snapshot left open is then a liveness failure, and (in a model) a step's"
            " record a log never writes is missing, not unknown.",
        ),
    ] = False,
    conserved_sum: Annotated[
        str | None,
        typer.Option(
            "--conserved-sum",
            metavar="[FIELD]",
            callback=_field_name,
            help="The application's invariant: every snapshot's states and channel"
            " messages add up to the initial states' total (numbers count as themselves,"
            " objects by their FIELD; without FIELD, numbers only). A finding points at"
            " the event where the run's own total first changed.",
        ),
    ] = None,
    max_input: Annotated[
        str,
        typer.Option(
            "--max-input",
            metavar="SIZE",
            callback=size_option,
            help="The most bytes read from all the logs together (the logs are read a line"
            " at a time: memory does not grow with them; beyond it, exit 5).",
        ),
    ] = "4G",
    root: Annotated[
        Path | None,
        typer.Option(
            "--root",
            help="With a model: the folder of your MC*.tla/.cfg, or a project holding"
            " spec/ (no manifest needed; default: found from the current directory).",
            callback=existing_dir,
        ),
    ] = None,
) -> None:
    """Judge an implementation's own event logs: by default on the run they record
    (EWD 864's rules, Lemma 0 and Lemma 1, completion; no model needed), or
    replayed in a model named first (or with --model).

    Without a model, the processes, channels, payloads, snapshot ids and starters
    are read from the logs, a line at a time. Both judges apply one cut rule: a
    snapshot that completed before the logs stop is judged whatever came after; one
    still open is a liveness failure when every log ends with its end event (or
    --whole-run), and unknown when a log is empty, cut short or has no end (a
    crashed process); a run with no snapshot is unknown. Every finding is listed,
    each led by its rule's name, the first in full. Exit 0 pass, 1 fail, 2 unknown,
    5 bad input.
    """
    from redletter.conformance.sandbox import parse_bytes
    from redletter.untrusted import show_text

    name, logs = _split_validate_args(args, model, from_log)
    limit = parse_bytes(max_input)
    if name is None:
        from redletter.conformance.judges.runlog import conserved_sum as invariant_of
        from redletter.conformance.judges.runlog import validate_run_files

        result = validate_run_files(
            logs,
            whole_run=whole_run,
            invariant=None
            if conserved_sum is None
            else invariant_of(None if conserved_sum == _NUMBERS else conserved_sum),
            limit=limit,
        )
    else:
        if conserved_sum is not None:
            raise InputError(
                "--conserved-sum applies to the judge without a model; with the model "
                f"{name}, the model's own invariants apply",
                code="RL-INPUT-USAGE",
            )
        from redletter.conformance.judges.log import validate_files
        from redletter.python_model.config import load_model

        cfg = load_model(name, models_dir(root))
        result = validate_files(cfg, logs, whole_run=whole_run, limit=limit)
    ui.lines(show_text(line) for line in result.explain().splitlines())
    done(result.verdict.exit_code)
