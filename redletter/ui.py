"""The reporter: everything the CLI shows goes through here (rich on stderr/stdout)."""

from __future__ import annotations

from collections.abc import Sequence
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from redletter.check import CheckObserver, CheckRow
from redletter.manifest import ModelEntry
from redletter.tlc import Progress as TlcProgress

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)


def error_line(code: str, message: str) -> None:
    """Print ``error[CODE]: message`` on stderr, as one line (no wrapping)."""
    err_console.print(f"error[{code}]: {message}", markup=False, soft_wrap=True)


def info(message: str) -> None:
    """A plain line on stdout."""
    console.print(message, markup=False, soft_wrap=True)


def _num(value: int | None) -> str:
    return "?" if value is None else f"{value:,}"


class LiveCheck(CheckObserver):
    """Shows models done and states found so far while TLC runs."""

    def __init__(self, total: int, *, enabled: bool | None = None) -> None:
        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[states]}"),
            TimeElapsedColumn(),
            console=err_console,
            transient=True,
            disable=not (err_console.is_terminal if enabled is None else enabled),
        )
        self._task: TaskID = self._progress.add_task("models", total=total, states="")

    def __enter__(self) -> LiveCheck:
        self._progress.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._progress.stop()

    def model_started(self, entry: ModelEntry, index: int, count: int) -> None:
        self._progress.update(self._task, description=f"TLC {entry.model}", states="")

    def progress(self, entry: ModelEntry, report: TlcProgress) -> None:
        self._progress.update(
            self._task,
            states=f"{report.distinct:,} distinct / {report.generated:,} states, depth "
            f"{report.depth}",
        )

    def model_finished(self, row: CheckRow) -> None:
        self._progress.advance(self._task)


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
    # Off a terminal (CI logs, pipes) rich would squeeze the table into 80 columns.
    if not console.is_terminal:
        console.width = 200
    console.print(results_table(rows))
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
