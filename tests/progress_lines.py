"""A pytest plugin: progress as lines when the output is not a terminal.

Off a terminal (make's log, CI, a pipe) pytest prints a row of dots and only ends
the row after 70-odd tests, so a stretch of slow tests shows nothing for minutes.
This plugin prints a line of its own at least every :data:`EVERY` seconds while
tests finish (``progress: 120 of 1,904 tests done, 3 failed, 41 s``), and nothing
on a terminal, where pytest's own display moves.  With pytest-xdist the lines come
from the controller, which hears of every test the workers finish.

``tests/conftest.py`` loads it (its ``pytest_configure``), so every run of the
kit's tests has it: ``make test`` in CI, a pipe, ``make test 2>&1 | tee log``.
"""

from __future__ import annotations

import sys
import time
from typing import Final

import pytest

EVERY: Final = 10.0  #: seconds: a line at least this often while tests finish


class ProgressLines:
    """Counts finished tests and says so every :data:`EVERY` seconds."""

    def __init__(self, terminal: pytest.TerminalReporter) -> None:
        self.terminal = terminal
        self.total: int | None = None
        self.done = 0
        self.failed = 0
        self.start = self.last = time.monotonic()

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if session.items:  # without xdist: the items this process runs
            self.total = len(session.items)

    @pytest.hookimpl(optionalhook=True)  # an xdist hook: unknown under -p no:xdist
    def pytest_xdist_node_collection_finished(self, node: object, ids: list[str]) -> None:
        self.total = len(ids)  # with xdist: every worker collects every test

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.failed and report.when != "teardown":
            self.failed += 1
        if report.when != "teardown":
            return
        self.done += 1
        now = time.monotonic()
        if now - self.last < EVERY:
            return
        self.last = now
        of = f" of {self.total:,}" if self.total else ""
        failed = f", {self.failed} failed" if self.failed else ""
        if self.terminal._tw.width_of_current_line:  # end pytest's row of dots first
            self.terminal.write("\n")
        self.terminal.write_line(
            f"progress: {self.done:,}{of} tests done{failed}, {now - self.start:.0f} s"
        )


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    terminal = config.pluginmanager.get_plugin("terminalreporter")
    if terminal is None or sys.stdout.isatty() or hasattr(config, "workerinput"):
        return  # on a terminal pytest's display moves; an xdist worker prints nothing
    config.pluginmanager.register(ProgressLines(terminal), "redletter-progress-lines")
