"""A Ctrl-C or SIGTERM stops the command even where its KeyboardInterrupt is lost.

The kit's signal handler raises KeyboardInterrupt (``Terminated`` for SIGTERM)
wherever the main thread is.  Python drops an exception raised in a finalizer
(``Exception ignored in ...``): a signal whose handler ran inside
``subprocess.Popen.__del__`` at the end of a trace, or inside z3's
``AstRef.__del__`` while goal traces were made, left ``conform run`` judging its
822 traces to the end (tests/test_hostile.py's SIGINT case, once, under load).
These tests put the handler in a finalizer at those moments, deterministically,
and check that the stop recorded beside it (:mod:`redletter.stopping`) ends the
command at the next turn of its loop, with the exit code and line of a stop.
"""

from __future__ import annotations

import os
import shlex
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import redletter.cli as cli
import redletter.stopping as stopping
from redletter.conformance import protocol as p
from redletter.conformance import sandbox
from redletter.conformance.judges import drive, families
from redletter.conformance.process import Limits, NodeProcess
from redletter.conformance.sandbox import Sandbox, SandboxPolicy
from redletter.conformance.traces import Trace, generate, write_trace
from redletter.project import find_project
from redletter.python_model import symbolic

ROOT = Path(__file__).resolve().parent.parent
PY = os.path.abspath(sys.executable)
GOOD = f"{shlex.quote(PY)} -m redletter.conformance.nodes.reference"
HOSTILE = ROOT / "tests" / "data" / "conformance" / "hostile"
POLICY = SandboxPolicy(memory=256 << 20, processes=64)
#: What the command says last, and its exit code, for each signal.
SAID = {
    signal.SIGINT: (130, "error[RL-ABORT]: interrupted (Ctrl-C); what was finished is kept"),
    signal.SIGTERM: (143, "error[RL-ABORT]: terminated (SIGTERM); what was finished is kept"),
}


@pytest.fixture(autouse=True)
def _no_stop_left() -> Iterator[None]:
    """No stop, and no sandbox refused, leaks into the next test of this process."""
    yield
    stopping.clear()
    sandbox.reopen()


class _Finalized:
    """An object whose finalizer is where the kit's signal handler runs (as in
    ``Popen.__del__`` or z3's ``AstRef.__del__``); its KeyboardInterrupt is dropped."""

    def __init__(self, signum: int) -> None:
        self.signum = signum

    def __del__(self) -> None:
        cli._on_stop(self.signum, None)


def _signal_in_a_finalizer(signum: int) -> None:
    _Finalized(signum)  # made and let go at once: its finalizer runs here


@pytest.fixture
def dropped() -> Iterator[list[str]]:
    """The exceptions Python drops in finalizers while the test runs, by name."""
    seen: list[str] = []
    before = sys.unraisablehook
    sys.unraisablehook = lambda u: seen.append(getattr(u.exc_type, "__name__", "?"))
    try:
        yield seen
    finally:
        sys.unraisablehook = before


@pytest.fixture(scope="module")
def four_traces(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("traces")
    traces = generate("MCToken2", find_project().spec_dir, goals=False)[:4]
    for t in traces:
        write_trace(out / f"{t.name}.itf.json", t)
    return out


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_lost_in_a_finalizer_after_a_trace_ends_the_run(
    signum: signal.Signals,
    four_traces: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    dropped: list[str],
) -> None:
    """The signal comes as the first trace's node processes are let go: the run
    judges no other trace, and ends as a stop does."""
    judged: list[str] = []
    judge_of = families.judge_of

    def judge_and_signal(
        trace: Trace, node: drive.NodeSpec, log_dir: Path
    ) -> Callable[[Trace], drive.JudgeResult]:
        judge = judge_of(trace, node, log_dir)

        def one(t: Trace) -> drive.JudgeResult:
            result = judge(t)
            judged.append(t.name)
            if len(judged) == 1:
                _signal_in_a_finalizer(signum)
            return result

        return one

    monkeypatch.setattr(families, "judge_of", judge_and_signal)
    code = cli.main(
        ["conform", "run", "--traces", str(four_traces), "--node", GOOD, "--hosted", "--all",
         "--store", str(tmp_path / "store"), "--root", str(ROOT)]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert dropped == ["Terminated" if signum == signal.SIGTERM else "KeyboardInterrupt"]
    assert len(judged) == 1, f"judged {judged} after the stop"
    assert (code, err.splitlines()[-1]) == SAID[signum]
    assert not stopping.requested()  # the command said why it stopped: the stop is over


def test_a_stop_lost_in_z3_s_finalizers_ends_the_run_before_judging(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    dropped: list[str],
) -> None:
    """The signal comes while z3 solves a goal (z3 lets go of thousands of objects
    with finalizers): the run makes no other trace and judges none."""
    solved: list[object] = []
    synthesize = symbolic.synthesize

    def solve_and_signal(*args: object, **kw: object) -> object:
        found = synthesize(*args, **kw)  # type: ignore[arg-type]
        solved.append(found)
        if len(solved) == 1:
            _signal_in_a_finalizer(signal.SIGINT)
        return found

    def judge_all(traces: object, *args: object, **kw: object) -> object:
        raise AssertionError("the run judged traces after the stop")

    monkeypatch.setattr(symbolic, "synthesize", solve_and_signal)
    monkeypatch.setattr(drive, "judge_all", judge_all)
    code = cli.main(
        ["conform", "run", "--node", GOOD, "--hosted", "--store", str(tmp_path / "store"),
         "--root", str(ROOT)]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert dropped == ["KeyboardInterrupt"]
    assert len(solved) == 1
    assert (code, err.splitlines()[-1]) == SAID[signal.SIGINT]


def test_a_stop_ends_the_wait_for_a_reply(tmp_path: Path) -> None:
    """A node that never answers, and a stop asked for while the harness waits for
    its reply (from another thread, as a lost KeyboardInterrupt leaves it): the wait
    ends with the interruption, not with the request's timeout."""
    node = NodeProcess(
        [PY, str(HOSTILE / "silent.py")],
        name="p1",
        log_dir=tmp_path / "logs",
        limits=Limits(request_timeout=60, grace=1),
        policy=POLICY,
    )
    init = p.Envelope(
        p.HARNESS,
        "p1",
        p.Init(1, "p1", ("p1", "p2"), (("p2", "p1"),), (("p1", "p2"),), "token", 1),
    )
    later = threading.Timer(0.2, stopping.request, (signal.SIGTERM,))
    later.start()
    try:
        with pytest.raises(stopping.Terminated):
            node.request(init)
    finally:
        later.join()
        node.close(urgent=True)


def test_no_sandbox_is_made_after_a_stop() -> None:
    stopping.request(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        Sandbox(POLICY)


def test_a_close_cut_short_by_a_stop_is_finished_by_the_next(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A Ctrl-C landing in a sandbox's close (the end of a trace) leaves its processes
    running; the close that :func:`~redletter.conformance.sandbox.shutdown` runs
    then finishes it, instead of finding it closed already."""
    sb = Sandbox(POLICY)
    proc = sb.popen(["/bin/sleep", "600"])
    try:
        with monkeypatch.context() as m:
            m.setattr(Sandbox, "kill", _interrupted)
            with pytest.raises(KeyboardInterrupt):
                sb.close()
        assert proc.poll() is None  # still running: the close was cut short
        sb.close()
        proc.wait(timeout=30)
        assert not sb.root.exists()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        sb.close()


def _interrupted(self: Sandbox) -> None:
    raise KeyboardInterrupt
