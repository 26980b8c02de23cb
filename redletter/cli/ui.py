"""The reporter: everything the command line shows goes through here.

The only module of the kit with rich consoles (``console`` on stdout,
``err_console`` on stderr; the live displays of :mod:`redletter.cli.live` draw
on the latter).  One section per verb group; each turns a library result into
lines or tables and prints them.  Results are typed by the library's classes,
imported for type checking only (and, where a renderer needs a library helper,
inside it), so that importing the reporter loads neither z3 nor pyspark.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape as markup_escape
from rich.table import Table

from redletter.errors import escape_terminal
from redletter.project import printed

if TYPE_CHECKING:
    from redletter.check import CheckRow
    from redletter.conformance.formats.cos418 import Step as Cos418Step
    from redletter.conformance.judges.drive import JudgeResult
    from redletter.conformance.judges.outcome import Judgement
    from redletter.conformance.report import RunFolder
    from redletter.conformance.shrink import ShrinkResult
    from redletter.manifest import Manifest
    from redletter.pipeline.campaign import CampaignSummary
    from redletter.pipeline.crosscheck import CrosscheckReport
    from redletter.pipeline.explore import LevelReport, SparkExploreResult
    from redletter.pipeline.grade import GradeSummary
    from redletter.pipeline.ingest import GraphInfo
    from redletter.python_model.apalache import ApalacheRow
    from redletter.python_model.crosscheck import CrosscheckResult
    from redletter.python_model.explore import ExploreResult
    from redletter.python_model.liveness import LivenessResult
    from redletter.python_model.symbolic import Cti, SymParams, Trace
    from redletter.python_model.symbolic.concrete import CState
    from redletter.python_model.teeth.matrix import MatrixRun
    from redletter.python_model.teeth.theorem import TheoremResult
    from redletter.python_model.temporal import Fairness

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)


def wide(width: int) -> Console:
    """The console to print a wide table on: ``console`` on a terminal; off one (make's
    log, CI, a pipe), where rich would squeeze the table into 80 columns and fold or
    drop its cells, a console of at least ``width`` columns on the same output.  The
    shared console's own width is never changed: a command run earlier in the same
    process must not decide how the next one prints."""
    if console.is_terminal:
        return console
    return Console(file=console.file, width=max(console.width, width), highlight=False)


# --------------------------------------------------------------------------- every command


def plural(n: int, noun: str, nouns: str | None = None) -> str:
    """``1 trace``, ``2 traces`` (``nouns``: the plural when it is not ``noun + "s"``)."""
    return f"{n} {noun if n == 1 else (nouns or noun + 's')}"


def error_line(code: str, message: str) -> None:
    """Print ``error[CODE]: message`` on stderr, as one line (no wrapping), then the
    catalogue's advice for the code: what to do, and where to read more
    (docs/errors.md).  Control characters in the message (which may quote a node's
    output or a file) are escaped; the commands both name are this user's
    (:func:`~redletter.project.printed`)."""
    from redletter.errors import advice

    text = printed(escape_terminal(message))
    err_console.print(f"error[{code}]: {text}", markup=False, soft_wrap=True)
    err_console.print(f"help: {printed(advice(code))}", markup=False, soft_wrap=True)


#: What the running command keeps when it is interrupted, as the interrupt line says
#: it (``[0]``); a command that keeps nothing until it ends says so with :func:`keeps`.
_KEPT: list[str] = []
KEPT: str = "what was finished is kept"  #: what most commands keep (the default)


def keeps(what: str) -> None:
    """Say what the running command keeps if it is interrupted from now on (the
    interrupt line's words after ``interrupted (Ctrl-C); ``)."""
    _KEPT[:] = [what]


def kept() -> str:
    """What the running command keeps if interrupted (see :func:`keeps`)."""
    return _KEPT[0] if _KEPT else KEPT


def interrupted(what: str = "") -> None:
    """The one line Ctrl-C prints (``what``: what is kept); no help line, the user
    asked for it."""
    code = "RL-ABORT"
    text = (
        what
        if what.startswith("terminated")
        else "interrupted (Ctrl-C)" + (f"; {what}" if what else "")
    )
    err_console.print(f"error[{code}]: {text}", markup=False, soft_wrap=True)


def info(message: str) -> None:
    """A plain line on stdout (control characters escaped: the text may quote a
    node's output, which must not drive the terminal; the commands it names are
    this user's: :func:`~redletter.project.printed`)."""
    console.print(printed(escape_terminal(message)), markup=False, soft_wrap=True)


def lines(texts: Iterable[str]) -> None:
    """Plain lines on stdout."""
    for text in texts:
        info(text)


def _num(value: int | None) -> str:
    return "?" if value is None else f"{value:,}"


# --------------------------------------------------------------------------- check


def results_table(rows: Sequence[CheckRow]) -> Table:
    """The one results table of ``redletter check``."""
    table = Table(title="TLC results against spec/manifest.json", title_justify="left")
    for name, justify in (
        ("model", "left"),
        ("app", "left"),
        ("processes", "right"),
        ("snapshots", "right"),
        ("expected", "left"),
        ("actual", "left"),
        ("distinct", "right"),
        ("total", "right"),
        ("depth", "right"),
        ("seconds", "right"),
        ("cross-check", "left"),
    ):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for row in rows:
        entry, result = row.comparison.entry, row.comparison.result
        expected = entry.expect + (f" ({entry.violated})" if entry.violated else "")
        style = "green" if row.matches else "bold red"
        table.add_row(
            entry.model,
            entry.app,
            str(entry.processes),
            str(entry.snapshots),
            expected,
            f"[{style}]{result.describe()}[/]",
            _num(result.distinct),
            _num(result.total),
            _num(result.depth),
            f"{result.seconds:.1f}",
            row.crosscheck,
        )
    return table


def report_check(rows: Sequence[CheckRow]) -> None:
    """Print the table, then every mismatch with expected vs actual and the log."""
    wide(200).print(results_table(rows))
    bad = [r for r in rows if not r.matches]
    for row in bad:
        result = row.comparison.result
        console.print(f"[bold red]MISMATCH[/] {row.comparison.entry.model}:", soft_wrap=True)
        for problem in row.comparison.problems:
            console.print(f"  {problem}", markup=False, soft_wrap=True)
        if result.log_path is not None:
            console.print(f"  full TLC output: {result.log_path}", markup=False, soft_wrap=True)
    matched = len(rows) - len(bad)
    console.print(f"{matched} of {len(rows)} models match the manifest.", markup=False)


def report_check_crosscheck(results: Sequence[CrosscheckResult]) -> None:
    """After the table of ``redletter check``: each cross-check mismatch, then the totals."""
    from redletter.python_model.crosscheck import iter_mismatch_lines

    lines(iter_mismatch_lines(results))
    if results:
        spent = {
            k: sum(r.seconds.get(k, 0.0) for r in results) for k in ("explore", "parse", "compare")
        }
        pending = [r.model for r in results if r.exact and r.mode == "pending"]
        exact_n = sum(r.exact for r in results) - len(pending)
        info(
            f"Cross-check: {exact_n} of {len(results)} models agree with the Python model"
            + (
                f", {len(pending)} pending (liveness failures, which need the Python "
                f"liveness check: {', '.join(pending)})"
                if pending
                else ""
            )
            + f" (Python side: explore {spent['explore']:.1f}s, DOT read {spent['parse']:.1f}s,"
            f" compare {spent['compare']:.1f}s)."
        )


def report_unmirrored(models: Sequence[str]) -> None:
    """After the cross-check totals: the models no Python engine mirrors yet."""
    if models:
        info(
            f"Not cross-checked: {len(models)} model(s) whose spec has no Python mirror yet"
            f' ("python": false in spec/manifest.json): {", ".join(models)}.'
        )


def report_apalache(row: ApalacheRow) -> None:
    """One model of ``redletter apalache check``: the verdict, and the output's tail
    when Apalache failed for another reason than the property."""
    result, entry = row.result, row.entry
    ran = (
        f"apalache-mc timed out after {row.timeout:g}s"
        if result.returncode is None
        else f"apalache-mc exit {result.returncode} ({result.verdict})"
    )
    info(f"{entry.model}: {ran}, expected {entry.expect}: {row.outcome}")
    if result.verdict not in ("ok", "violation", "timeout"):
        lines(f"  {line}" for line in result.tail(10).splitlines())


# --------------------------------------------------------------------------- explore, crosscheck


def explore_lines(r: ExploreResult, *, liveness: bool = False) -> list[str]:
    """The lines ``redletter explore`` prints for a result (TLC's words for the outcome;
    with ``liveness`` the verdict waits for the temporal properties)."""
    out = [
        f"{r.total:,} states generated, {r.distinct:,} distinct states found.",
        f"The depth of the complete state graph search is {r.depth}.",
        f"Explored in {r.seconds:.2f}s ({r.states_per_second:,.0f} distinct states/s).",
    ]
    if r.workers:
        out.append(workers_line(r))
    if r.violation is None:
        if not liveness:
            out.append("Model checking completed. No error has been found.")
        return out
    out.append(f"Error: {r.violation.describe()}")
    out.append("Error: The behavior up to this point is:")
    for n, st in enumerate(r.violation.trace, start=1):
        params = ", ".join(f"{k}={json.dumps(v)}" for k, v in st.params.items())
        out.append(f"{n}: {st.action}" + (f" {params}" if params else ""))
    return out


def fairness_words(conditions: Sequence[Fairness]) -> str:
    """``12 fairness conditions: WF(ReceiveApp) on each of 6 parameter values, ...``:
    every condition counted, each action's instances together (a spec writes one
    ``\\A c \\in Channels: WF_vars(ReceiveApp(c))`` for many)."""
    counts: dict[str, int] = {}
    for f in conditions:
        key = f"{f.kind}({f.name})"
        counts[key] = counts.get(key, 0) + 1
    parts = [
        key if n == 1 else f"{key} on each of {n} parameter values"
        for key, n in sorted(counts.items())
    ]
    return f"{plural(len(conditions), 'fairness condition')}: " + ", ".join(parts)


def workers_line(r: ExploreResult) -> str:
    """Where a parallel exploration ran: the states and peak memory of each worker."""
    states = " + ".join(f"{w.states:,}" for w in r.workers)
    if not any(w.peak_rss for w in r.workers):
        return (
            f"Explored on {len(r.workers)} partitions ({states} states) in this process: no"
            " level was large enough to start worker processes."
        )
    memory = ", ".join(f"{w.peak_rss / 2**20:,.1f}" for w in r.workers)
    return (
        f"Explored on {len(r.workers)} worker processes ({states} states); peak resident"
        f" memory per worker {memory} MiB, of this process {r.peak_rss / 2**20:,.1f} MiB."
    )


def liveness_lines(r: LivenessResult) -> list[str]:
    """The lines of the liveness check: what was checked under which fairness, and
    the verdict in TLC's words."""
    fairness = fairness_words(r.fairness) if r.fairness else "no fairness"
    out = [
        f"Checking temporal properties {', '.join(r.names)} under {r.specification}"
        f" ({fairness}) on {r.distinct:,} states and {r.edges:,} edges:"
        f" {len(r.verdicts)} instance(s) in {r.seconds:.2f}s.",
    ]
    if r.violated is None:
        out.append("Model checking completed. No error has been found.")
    else:
        out.append("Error: Temporal properties were violated.")
    return out


def report_crosscheck(result: CrosscheckResult) -> None:
    """``redletter crosscheck``: the verdict with a shortest path to each difference."""
    from redletter.python_model.crosscheck import format_result

    lines(format_result(result))
    times = ", ".join(f"{k} {v:.1f}s" for k, v in result.seconds.items())
    info(f"Time: {times}.")


# --------------------------------------------------------------------------- symbolic


def _symbolic_state(params: SymParams, s: CState) -> str:
    parts = [f"tokens {dict(zip(params.procs, s.local, strict=True))}"]
    for c, b in zip(params.chans, s.buf, strict=True):
        if b:
            shown = ", ".join(f"R{m.snap}" if m.kind == "red" else str(m.val) for m in b)
            parts.append(f"{c[0]}→{c[1]} [{shown}]")
    for k, red in zip(params.snaps, s.red, strict=True):
        if red:
            parts.append(f"red{k} {sorted(red)}")
    return "; ".join(parts)


def symbolic_trace(trace: Trace, title: str) -> None:
    """A symbolic trace as a table: step, action, parameters, the state after."""
    from redletter.python_model.symbolic.concrete import step_to_json

    table = Table(title=title)
    table.add_column("#", justify="right")
    table.add_column("action")
    table.add_column("params")
    table.add_column("state after")
    table.add_row("0", "Init", "", _symbolic_state(trace.params, trace.states[0]))
    for n, st in enumerate(trace.steps, start=1):
        action, ps = step_to_json(st)
        table.add_row(
            str(n), action, json.dumps(ps), _symbolic_state(trace.params, trace.states[n])
        )
    console.print(table)


def symbolic_cti(params: SymParams, cti: Cti) -> None:
    """A counterexample to induction: the state before, the step, the state after."""
    from redletter.python_model.symbolic.concrete import step_to_json

    action, ps = step_to_json(cti.step)
    console.print("[yellow]RedLetterInvariant alone is not inductive[/yellow]; CTI:")
    console.print(f"  before: {_symbolic_state(params, cti.before)}")
    console.print(f"  step:   {action} {json.dumps(ps)}")
    console.print(f"  after:  {_symbolic_state(params, cti.after)}")


def rich_line(text: str) -> None:
    """A line with rich markup (``[green]...[/green]``) on stdout."""
    console.print(text)


# --------------------------------------------------------------------------- conform


def conform_summary(
    results: Sequence[JudgeResult],
    folder: RunFolder | None,
    *,
    node_cmd: str,
    hosted: bool = False,
    shrunk: ShrinkResult | None = None,
    stopped: str = "",
) -> None:
    """Print the verdict, the explanation, the shrunk schedule, the sandbox's layers
    and the replay command."""
    from redletter.conformance.report import replay_command, sandbox_of, show_step

    fails = [r for r in results if r.verdict == "fail"]
    unknown = [r for r in results if r.verdict == "unknown"]
    verdict = "fail" if fails else "unknown" if unknown or stopped or not results else "pass"
    colour = {"pass": "green", "fail": "red", "unknown": "yellow"}[verdict]
    console.print(
        f"[bold {colour}]{verdict.upper()}[/]: {plural(len(results), 'trace')} judged, "
        f"{len(results) - len(fails) - len(unknown)} passed, {len(fails)} failed, "
        f"{len(unknown)} unknown"
    )
    if stopped:
        info(f"stopped early: {stopped}")
    firsts = fails or unknown
    shown = shrunk.result if shrunk is not None else (firsts[0] if firsts else None)
    if shown is not None and shown.verdict != "pass":
        # The explanation is the kit's own lines, with what nodes said quoted on one
        # line each (so no node text starts a line); the name comes from a file.
        name = escape_terminal(shown.trace.name, newlines=True)
        info(f"trace {name}: {shown.explanation()}")
    if shrunk is not None:
        how = "" if shrunk.complete else ", the shrink budget ran out before a minimal one"
        table = Table(title=f"shrunk schedule ({len(shrunk.trace.steps)} steps{how})")
        table.add_column("#", justify="right")
        table.add_column("step")
        for i, (a, ps) in enumerate(shrunk.trace.steps, start=1):
            table.add_row(str(i), markup_escape(escape_terminal(show_step(a, ps))))
        console.print(table)
    sandbox = sandbox_of(results)
    if sandbox is not None:
        info(sandbox.summary())
    if folder is not None:
        info(f"report: {folder.path / 'report.html'}")
    if shrunk is not None and folder is not None:
        where = folder.shrunk_for(shrunk.trace)
        info("replay: " + replay_command(where, node_cmd, hosted=hosted))


# --------------------------------------------------------------------------- cos418


def _cos418_steps(steps: Sequence[Cos418Step]) -> list[str]:
    """One line per step: ``  3. ReceiveRedLetter N1 -> N2``."""
    out = []
    for i, (action, params) in enumerate(steps, start=1):
        if "c" in params:
            c = params["c"]
            assert isinstance(c, list)
            where = f"{c[0]} -> {c[1]}"
            if action == "SendApp":
                where += f" token({params['m']})"
        else:
            where = f"{params['p']} starts snapshot {params['k']}"
        out.append(f"  {i}. {action} {where}")
    return out


def cos418_judgement(j: Judgement) -> None:
    """The verdict and its message, then the witness (pass) or the closest schedule."""
    info(f"{j.verdict}: {j.message}")
    if j.witness is not None:
        info("witness schedule:")
        lines(_cos418_steps(j.witness))
    elif j.closest is not None:
        info("closest schedule:")
        lines(_cos418_steps(j.closest))


# --------------------------------------------------------------------------- pipeline


def pipeline_graph(info_: GraphInfo, out: Path) -> None:
    """The counts of an ingested graph."""
    table = Table(title=f"graph {info_.model} -> {out}", title_justify="left")
    for col in ("source", "state lines", "edge lines", "stuttering", "states", "edges", "initial"):
        table.add_column(col, justify="left" if col == "source" else "right")
    table.add_row(
        info_.source,
        f"{info_.state_lines:,}",
        f"{info_.edge_lines:,}",
        f"{info_.stuttering_lines:,}",
        f"{info_.states:,}",
        f"{info_.edges:,}",
        f"{info_.initial:,}",
    )
    console.print(table)


def pipeline_crosscheck(report: CrosscheckReport, *, full_paths: bool = False) -> None:
    """The cross-check report, plain text (states in TLA+)."""
    from redletter.pipeline.crosscheck import format_report

    console.print(format_report(report, full_paths=full_paths), markup=False, soft_wrap=True)


def pipeline_campaign(summary: CampaignSummary) -> None:
    """Verdict counts, coverage table and the first failures."""
    out = wide(160)
    out.print(
        escape_terminal(
            f"campaign {summary.campaign} ({summary.implementation or 'no implementation named'}):"
            f" {summary.traces} traces, {summary.done_before} done before this run,"
            f" {summary.ran} run now in {summary.partitions} partitions"
            + (
                f"; {summary.torn} result line(s) cut by a kill were not committed (run again)"
                if summary.torn
                else ""
            )
        ),
        markup=False,
    )
    verdicts = Table(title="verdicts", title_justify="left")
    verdicts.add_column("verdict")
    verdicts.add_column("traces", justify="right")
    for verdict, n in summary.verdicts:
        style = {"pass": "green", "fail": "bold red", "error": "bold red"}.get(verdict, "yellow")
        verdicts.add_row(f"[{style}]{verdict}[/]", str(n))
    missing = summary.traces - sum(n for _, n in summary.verdicts)
    if missing:
        verdicts.add_row("[yellow]no result yet[/]", str(missing))
    out.print(verdicts)
    if summary.coverage:
        cov = Table(title="coverage by action", title_justify="left")
        for col in ("action", "traces", "passed"):
            cov.add_column(col, justify="left" if col == "action" else "right")
        for action, n, passed in summary.coverage:
            cov.add_row(action, str(n), str(passed))
        out.print(cov)
    out.print(
        f"{summary.steps:,} steps, {summary.seconds:.1f} s of runner time"
        + (f", {summary.duplicates} duplicate result(s) dropped" if summary.duplicates else ""),
        markup=False,
    )
    for trace_id, detail in summary.failures:
        out.print(escape_terminal(f"  {trace_id}: {detail}"), markup=False, soft_wrap=True)


def grade_summary(summary: GradeSummary) -> None:
    """The gradebook, one line per submission, and where its files are."""
    table = Table(title=f"gradebook: {summary.submissions} submissions", title_justify="left")
    cols = ("submission", "verdict", "go test", "passed", "failed", "unknown", "not run")
    for col in (*cols, "first failure", "identical to"):
        table.add_column(
            col, justify="right" if col in ("passed", "failed", "unknown", "not run") else "left"
        )
    colours = {"pass": "green", "fail": "red", "build": "red", "bad-input": "red"}
    for r in summary.rows:
        v = str(r["verdict"])
        course = str(r["course_verdict"])
        first = str(r["first_rule"])
        if first:
            first += f" ({r['first_scenario']}, seed {r['first_seed']})"
        elif v in ("build", "bad-input"):
            first = str(r["first_explanation"])
        else:
            first = str(r["stopped"])
        if len(first) > 72:  # the whole of it is in the gradebook and the report
            first = first[:71] + "…"
        table.add_row(
            escape_terminal(str(r["submission"])),
            f"[{colours.get(v, 'yellow')}]{v}[/]",
            f"[{colours.get(course, 'yellow')}]{course}[/]" if course else "—",
            str(r["passed"]),
            str(r["failed"]),
            str(r["unknown"]),
            str(r["not_run"]),
            escape_terminal(first),
            escape_terminal(str(r["identical_to"])),
        )
    wide(160).print(table)
    counts = ", ".join(f"{n} {k}" for k, n in sorted(summary.counts().items()))
    console.print(
        f"{counts}; {summary.committed_now} result(s) committed now in {summary.seconds:.1f} s",
        markup=False,
        soft_wrap=True,
    )
    console.print(f"gradebook: {summary.out / 'gradebook.html'}", markup=False, soft_wrap=True)
    console.print(
        f"tables: {summary.out / 'gradebook.parquet'}, {summary.out / 'gradebook.csv'}",
        markup=False,
        soft_wrap=True,
    )


def pipeline_level(r: LevelReport) -> None:
    """One level of ``pipeline explore``'s breadth-first search."""
    console.print(
        f"depth {r.depth:>3}  new {r.new:>9,}  distinct {r.distinct:>10,}"
        f"  total {r.total:>11,}  {r.seconds:6.2f} s"
    )


def pipeline_explored(model: str, result: SparkExploreResult, out: Path) -> None:
    """The counts of ``pipeline explore``, then the violation with its trace, if any."""
    console.print(
        f"{model}: {result.distinct:,} distinct states, {result.total:,} states generated,"
        f" depth {result.depth}, {result.edges:,} edges, {result.seconds:.1f} s -> {out}"
    )
    if result.violation is not None:
        console.print(
            f"[bold red]{result.violation.describe()}[/]"
            f" (a trace of {len(result.violation.trace)} states)"
        )
        for i, st in enumerate(result.violation.trace):
            console.print(f"  {i + 1:>3}. {st.action} {st.params}", markup=False)


def pipeline_counts(manifest: Path, got: tuple[int, int, int], want: tuple[int, int, int]) -> None:
    """``pipeline explore``'s counts against the manifest's."""
    if got != want:
        console.print(
            f"[bold red]counts differ from {manifest}:[/] distinct/total/depth {got},"
            f" expected {want}"
        )
    else:
        console.print(f"counts equal {manifest}'s (distinct, total, depth) {want}")


def pipeline_must_fail(violated: str | None, found: bool) -> None:
    """``pipeline explore`` on a must-fail model: was the expected property violated?"""
    console.print(
        f"must-fail model: expected {violated} violated, {'as found' if found else 'not found'}"
    )


def pipeline_lemmas(texts: Sequence[str]) -> None:
    """``pipeline lemmas``' report lines."""
    for line in texts:
        console.print(line, highlight=False)


# --------------------------------------------------------------------------- teeth

_MARK = {"violated": "\u2717", "holds": "\u00b7", "pending": "?", "error": "E"}

#: Short column headings of the teeth matrix (the legend prints them in full).
_SHORT = {
    "TypeOK": "Type",
    "RedLetterInvariant": "RLI",
    "OneRedLetterPerBuffer": "1RL",
    "Lemma0": "L0",
    "Lemma1": "L1",
    "Lemma0ImpliesLemma1": "L0>L1",
    "StableLemma0": "SL0",
    "StableLemma1": "SL1",
    "StableDetection": "SD",
    "SnapshotSatisfiesAppInv": "Inv",
    "ShadowLemma0": "Sh0",
    "NoInterference": "NoI",
    "SnapshotsComplete": "SC",
}


def report_teeth(run: MatrixRun, manifest: Manifest, problems: Sequence[str]) -> None:
    """``teeth check``: the matrix (one line per model, one column per property, per
    engine), then every mismatch, the pending cells and the manifest's gaps."""
    from redletter.python_model.teeth.matrix import alone
    from redletter.python_model.teeth.properties import PROPERTY_NAMES

    rows = {m.model: m for m in manifest.models}
    models = list(dict.fromkeys(r.cell.model for r in run.results))
    props = [p for p in PROPERTY_NAMES if any(r.cell.prop == p for r in run.results)]
    for engine in run.engines:
        table = Table(
            title=f"The teeth matrix in {'TLC' if engine == 'tlc' else 'the Python model'}",
            title_justify="left",
            caption="\u2717 violated, \u00b7 holds, ? pending, E error; red: not what the "
            "manifest says; bold: violated alone (Lemma0 and StableLemma0 hold).  "
            + ", ".join(f"{_SHORT.get(p, p)} {p}" for p in props),
            caption_justify="left",
        )
        table.add_column("model", no_wrap=True)
        for p in props:
            table.add_column(_SHORT.get(p, p), justify="center", no_wrap=True)
        got = {(r.cell.model, r.cell.prop): r for r in run.of(engine)}
        for m in models:
            cells = []
            for p in props:
                r = got.get((m, p))
                if r is None:
                    cells.append("")
                    continue
                mark = _MARK[r.outcome.value]
                if r.outcome.value != "pending" and not r.matches:
                    mark = f"[bold red]{mark}[/]"
                elif r.matches and alone(rows[m], p):
                    mark = f"[bold]{mark}[/]"
                cells.append(mark)
            table.add_row(m, *cells)
        wide(140).print(table)  # off a terminal, 13 columns squeezed into 80 drop the marks
    for r in run.mismatches:
        where = f" (full TLC output: {r.log})" if r.log else ""
        console.print(
            f"MISMATCH {r.engine} {r.cell.model} {r.cell.prop}: the manifest says "
            f"{r.cell.expected.value}, {r.engine} says {r.outcome.value}"
            + (f": {r.detail}" if r.detail else "")
            + where,
            markup=False,
            soft_wrap=True,
        )
    by_reason: dict[tuple[str, str], list[str]] = {}
    for r in run.pending:
        by_reason.setdefault((r.engine, r.detail), []).append(f"{r.cell.model} {r.cell.prop}")
    for (engine, why), which in by_reason.items():
        console.print(
            f"{len(which)} {engine} cell(s) {why}: {', '.join(which)}",
            markup=False,
            soft_wrap=True,
        )
    for line in problems:
        console.print(f"teeth: {line}", markup=False, soft_wrap=True)
    decided = len(run.results) - len(run.pending)
    console.print(
        f"{decided - len(run.mismatches)} of {len(run.results)} cells as the manifest says, "
        f"{len(run.mismatches)} not, {len(run.pending)} pending "
        f"({run.seconds:.0f} s)",
        markup=False,
    )


def report_theorem(results: Sequence[TheoremResult]) -> None:
    """``teeth theorem``: one paragraph per variant, with its counterexample."""
    for r in results:
        console.print(r.describe(), markup=False, soft_wrap=True)
        if r.counterexample is not None:
            for line in r.counterexample.steps:
                console.print(f"    {line}", markup=False)


def report_bugs() -> None:
    """``teeth bugs``: the registry of bug classes and where each runs."""
    from redletter.python_model import bugs

    table = Table(title="The registry of bug classes (python_model/bugs.py)", title_justify="left")
    for name in ("bug class", "step override", "models", "z3", "node"):
        table.add_column(name, overflow="fold")
    for b in bugs.BUGS.values():
        step = f"{b.step} <- {b.definition}" if b.is_step else "(node only)"
        z3_ok, _ = bugs.runs_in(b, "z3")
        node = "derived" if b.node == "derived" else ("hand-written" if b.node else "no")
        table.add_row(b.name, step, ", ".join(b.models) or "-", "yes" if z3_ok else "no", node)
    wide(160).print(table)
