"""pytest plugin: one test per generated trace, judged against a node command.

    pytest -p redletter.conformance.pytest_plugin --redletter-node "python -m mynode" \
        [--redletter-model MCToken2 ...] [--redletter-walks N --redletter-seed S] \
        [--redletter-hosted] [--redletter-limit N] [--junitxml report.xml]

(installed, the ``pytest11`` entry point ``redletter = redletter.conformance.pytest_plugin``
loads it without ``-p``).  Each test's failure message is the divergence in
words followed by the one command that replays the failing trace, which is
written to ``--redletter-out`` (default ``store/pytest``).  JUnit XML comes from
pytest's own ``--junitxml``.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest

from redletter.conformance.judges.drive import (
    CommandNode,
    judge_trace,
    start_error,
    usage_error,
)
from redletter.conformance.process import Limits
from redletter.conformance.report import replay_command
from redletter.conformance.traces import MODEL_NAME, Trace, generate, write_trace
from redletter.conformance.verdict import Verdict
from redletter.errors import InputError
from redletter.project import find_project


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("redletter", "redletter conformance")
    group.addoption("--redletter-node", default=None, help="node command to judge (no shell)")
    group.addoption(
        "--redletter-model", action="append", default=None, help="model(s) (default MCToken2)"
    )
    group.addoption("--redletter-walks", type=int, default=0, help="random walks")
    group.addoption("--redletter-seed", type=int, default=0, help="seed of the first walk")
    group.addoption("--redletter-hosted", action="store_true", help="one process, every node")
    group.addoption("--redletter-out", default=None, help="where failing traces are written")
    group.addoption("--redletter-spec", default=None, help="spec directory of the models")
    group.addoption("--redletter-timeout", type=float, default=10.0, help="seconds per request")
    group.addoption(
        "--redletter-limit", type=int, default=0, help="judge only the first N traces per model"
    )


def pytest_configure(config: pytest.Config) -> None:
    """Refuse option values out of range before any trace is generated (naming the option)."""
    if not config.getoption("--redletter-node", default=None):
        return
    timeout = float(config.getoption("--redletter-timeout"))
    if not math.isfinite(timeout) or timeout <= 0:
        raise pytest.UsageError(
            f"--redletter-timeout must be a finite number of seconds, more than 0, got {timeout}"
        )
    for name in ("--redletter-walks", "--redletter-seed", "--redletter-limit"):
        value = int(config.getoption(name))
        if value < 0:
            raise pytest.UsageError(f"{name} must be at least 0, got {value}")
    for model in config.getoption("--redletter-model") or []:
        if not MODEL_NAME.fullmatch(str(model)):
            raise pytest.UsageError(
                f"--redletter-model: a model name is the name of a module (letters, digits"
                f" and _), not a path; got {model!r}"
            )


def _default_spec_dir() -> Path:
    """spec/ of the checkout around the current directory, else of this package's."""
    try:
        return find_project().spec_dir
    except InputError:
        return Path(__file__).resolve().parent.parent / "spec"


class TraceFailed(Exception):
    """A trace's verdict was fail or unknown (the message says why and how to replay)."""


class TraceItem(pytest.Item):
    """One trace judged against the node."""

    def __init__(self, *, trace: Trace, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.trace = trace

    def runtest(self) -> None:
        cfg = self.config
        cmd = str(cfg.getoption("--redletter-node"))
        hosted = bool(cfg.getoption("--redletter-hosted"))
        node = CommandNode(
            tuple(shlex.split(cmd)),
            hosted=hosted,
            limits=Limits(request_timeout=float(cfg.getoption("--redletter-timeout"))),
        )
        out = Path(str(cfg.getoption("--redletter-out") or Path.cwd() / "store" / "pytest"))
        r = judge_trace(self.trace, node, log_dir=out / "logs")
        if (bad := start_error(r, node) or usage_error(r)) is not None:
            # The node never started: the command is wrong, no trace can be judged.
            pytest.exit(f"error[{bad.code}]: {bad.message}", returncode=pytest.ExitCode.USAGE_ERROR)
        if r.verdict != Verdict.PASS:
            path = write_trace(out / f"{self.trace.name}.itf.json", self.trace)
            raise TraceFailed(
                f"{r.verdict}: {r.explanation()}\nreplay: "
                + replay_command(path, cmd, hosted=hosted)
            )

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: object = None,
    ) -> str:
        if isinstance(excinfo.value, TraceFailed):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"redletter trace {self.trace.name} ({self.trace.source})"


class TraceCollector(pytest.Collector):
    """The generated traces of the chosen models."""

    def collect(self) -> Iterator[TraceItem]:
        cfg = self.config
        given = cfg.getoption("--redletter-spec")
        spec_dir = Path(str(given)) if given else _default_spec_dir()
        models = cfg.getoption("--redletter-model") or ["MCToken2"]
        walks = int(cfg.getoption("--redletter-walks"))
        seed = int(cfg.getoption("--redletter-seed"))
        limit = int(cfg.getoption("--redletter-limit"))
        for i, m in enumerate(models):
            traces = generate(m, spec_dir, walks=walks if i == 0 else 0, seed=seed)
            for t in traces[:limit] if limit > 0 else traces:
                yield TraceItem.from_parent(self, name=t.name, trace=t)


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    if not config.getoption("--redletter-node"):
        return
    collector = TraceCollector.from_parent(session, name="redletter")
    items.extend(collector.collect())
