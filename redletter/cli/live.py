"""Live displays on stderr while a command runs: spinners and progress bars.

They draw on the reporter's ``err_console`` (:mod:`redletter.cli.ui`), only on
a terminal, and vanish when the step ends.  Imported inside the commands that
use them, so ``--help`` loads neither rich's progress bars nor
:mod:`redletter.check`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TransferSpeedColumn,
)

from redletter.check import CheckObserver, CheckRow
from redletter.cli.ui import err_console

if TYPE_CHECKING:
    from redletter.manifest import ModelEntry
    from redletter.python_model.explore import ExploreProgress
    from redletter.python_model.teeth.matrix import CellResult
    from redletter.tlc import Progress as TlcProgress

__all__ = [
    "LiveCheck",
    "ProgressLines",
    "crosscheck_status",
    "explore_progress",
    "ingest_progress",
    "judging",
    "status",
    "teeth_progress",
]


def _progress(*columns: ProgressColumn, enabled: bool | None = None) -> Progress:
    return Progress(
        *columns,
        console=err_console,
        transient=True,
        disable=not (err_console.is_terminal if enabled is None else enabled),
    )


@contextmanager
def status(text: str) -> Iterator[Callable[[str], None]]:
    """A spinner while a long step runs; yields a function that updates its text."""
    with err_console.status(text) as shown:
        yield lambda new: shown.update(new)


class LiveCheck(CheckObserver):
    """Shows models done and states found so far while TLC runs: a bar on a terminal;
    off one (make's log, CI, a pipe) a line per model done and, while a model runs,
    TLC's progress reports at most every :attr:`seconds` seconds.  ``clock`` is
    injectable for tests."""

    seconds: float = 10.0  #: off a terminal, at most one progress line this often

    def __init__(
        self,
        total: int,
        *,
        enabled: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._progress = _progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[states]}"),
            TimeElapsedColumn(),
            enabled=enabled,
        )
        self._task = self._progress.add_task("models", total=total, states="")
        self._total = total
        self._done = 0
        self._clock = clock
        self._start = self._last = clock()

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

    def _line(self, text: str) -> None:
        """Off a terminal: ``text`` with the time since the start, on stderr."""
        self._last = self._clock()
        err_console.print(f"{text}, {self._last - self._start:.0f} s", markup=False, soft_wrap=True)

    def model_started(self, entry: ModelEntry, index: int, count: int) -> None:
        self._progress.update(self._task, description=f"TLC {entry.model}", states="")

    def progress(self, entry: ModelEntry, report: TlcProgress) -> None:
        self._progress.update(
            self._task,
            states=f"{report.distinct:,} distinct / {report.generated:,} states, depth "
            f"{report.depth}",
        )
        if self._progress.disable and self._clock() - self._last >= self.seconds:
            self._line(
                f"TLC {entry.model}: {report.distinct:,} distinct states so far, depth"
                f" {report.depth}"
            )

    def model_finished(self, row: CheckRow) -> None:
        self._progress.advance(self._task)
        self._done += 1
        if row.comparison.result.stalls:
            err_console.print(
                f"note: TLC got stuck on {row.comparison.entry.model} (nothing printed and no"
                " CPU used for minutes); the kit killed it and ran it again, and this is the"
                " second run's result",
                markup=False,
                soft_wrap=True,
            )
        if self._progress.disable:
            found = row.comparison.result.distinct
            states = "?" if found is None else f"{found:,}"
            verdict = "as the manifest says" if row.matches else "NOT as the manifest says"
            self._line(
                f"TLC {row.comparison.entry.model}: {self._done} of {self._total} models"
                f" done ({states} distinct states, {verdict})"
            )


@contextmanager
def explore_progress(model: str) -> Iterator[Callable[[ExploreProgress], None]]:
    """A live line while the Python model explores; yields the progress callback."""
    progress = _progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn())
    task = progress.add_task(f"exploring {model}")

    def report(p: ExploreProgress) -> None:
        progress.update(
            task,
            description=f"exploring {model}: {p.distinct:,} distinct / {p.total:,} generated, "
            f"{p.queue:,} on queue, depth {p.depth}",
        )

    with progress:
        yield report


CROSSCHECK_PHASES = {
    "tlc": "running TLC",
    "explore": "exploring with the Python model",
    "parse": "reading TLC's state graph",
    "compare": "comparing",
}


@contextmanager
def crosscheck_status(model: str) -> Iterator[Callable[[str], None]]:
    """A spinner naming the phase of a cross-check; yields the phase callback."""
    with status(f"cross-checking {model}: running TLC") as update:
        yield lambda phase: update(f"cross-checking {model}: {CROSSCHECK_PHASES.get(phase, phase)}")


@contextmanager
def ingest_progress(path: Path, *, enabled: bool | None = None) -> Iterator[Callable[[int], None]]:
    """A bar over the bytes of the file being streamed; yields a callback taking the
    bytes read so far."""
    size = path.stat().st_size if path.is_file() else None
    progress = _progress(
        TextColumn("streaming {task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeElapsedColumn(),
        enabled=enabled,
    )
    with progress:
        task = progress.add_task(path.name, total=size)
        yield lambda n: progress.update(task, completed=min(n, size or n))
        progress.update(task, completed=size)


@contextmanager
def judging(
    total: int | None, *, what: str = "judging traces"
) -> Iterator[Callable[[object], None]]:
    """A progress bar while traces are judged (``total``), or a counter of runs while a
    failure is shrunk (``total`` None); yields the function to call after each one
    (with its result: its verdict is counted when it has one)."""
    progress = _progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[counts]}"),
        TimeElapsedColumn(),
    )
    task = progress.add_task(what, total=total, counts="")
    counts: dict[str, int] = {}
    lines = None if err_console.is_terminal else ProgressLines(what, total)

    def advance(result: object) -> None:
        verdict = getattr(result, "verdict", None)
        if verdict is not None:
            counts[str(verdict)] = counts.get(str(verdict), 0) + 1
        shown = ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
        progress.update(task, advance=1, counts=shown)
        if lines is not None and (line := lines.advance(shown)) is not None:
            err_console.print(line, markup=False, soft_wrap=True)

    with progress:
        yield advance


class ProgressLines:
    """Progress as plain lines, for when stderr is not a terminal (a CI log, a pipe):
    one line every :attr:`every` items or every :attr:`seconds` seconds, whichever
    comes first, and one for the last item.  ``clock`` is injectable for tests."""

    every: int = 25  #: a line at least every this many items
    seconds: float = 10.0  #: ... and at least every this many seconds

    def __init__(
        self, what: str, total: int | None, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._what = what
        self._total = total
        self._clock = clock
        self._start = self._last = clock()
        self._done = 0
        self._since = 0

    def advance(self, counts: str = "") -> str | None:
        """Count one item; the line to print now, or None."""
        self._done += 1
        self._since += 1
        now = self._clock()
        last = self._total is not None and self._done == self._total
        if not (last or self._since >= self.every or now - self._last >= self.seconds):
            return None
        self._last, self._since = now, 0
        of = f" of {self._total}" if self._total is not None else ""
        tail = f" ({counts})" if counts else ""
        return f"{self._what}: {self._done}{of} done{tail}, {now - self._start:.0f} s"


@contextmanager
def teeth_progress(total: int) -> Iterator[Callable[[CellResult], None]]:
    """A bar over the cells of the teeth matrix; yields the per-result callback."""
    progress = _progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    task = progress.add_task("teeth matrix", total=total)

    def advance(r: CellResult) -> None:
        progress.update(
            task,
            advance=1,
            description=f"{r.engine} {r.cell.model} {r.cell.prop}: {r.outcome.value}",
        )

    with progress:
        yield advance
