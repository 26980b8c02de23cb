"""The TLC runner's watchdog: a TLC that prints nothing and uses no CPU is killed and
run once more; stuck twice, the kit says so (exit 2), never waits forever.

TLC 2.15 was seen deadlocked inside itself for 19 minutes on a model it checks in
10 s (``redletter/tlc.py``, ``STALL_SECONDS``); these tests stand a small program in
for ``java`` that hangs, hangs once, or works silently, so they need no Java."""

from __future__ import annotations

import os
import shutil
import stat
import sys
import threading
import time
from pathlib import Path

import pytest

from redletter import tlc
from redletter.check import CheckRow
from redletter.cli.live import LiveCheck
from redletter.errors import Exit
from redletter.manifest import Comparison, ModelEntry
from redletter.project import Project
from redletter.python_model.crosscheck import crosscheck, format_result
from redletter.tlc import ResultKind, TlcResult, ToolStalled, run_sany, run_tlc

DATA = Path(__file__).resolve().parent / "data" / "tlc"
PROJECT = Project(Path(__file__).resolve().parent.parent)

#: What the stand-in prints before it hangs: TLC's first lines in -tool mode.
BANNER = """\
@!@!@STARTMSG 2262:0 @!@!@
TLC2 Version 2.15 of Day Month 20?? (rev: d5b5a7f)
@!@!@ENDMSG 2262 @!@!@
Checking temporal properties for the current state space with 1474 total distinct states
"""


#: The stand-in's program when its first run hangs and its second works.
STUCK_ONCE = (
    "if RUNS.read_text() == '1':\n"
    "    sys.stdout.write(BANNER); sys.stdout.flush(); time.sleep(600)\n"
    "sys.stdout.write(SUCCESS)\n"
)


def _fake_java(tmp_path: Path, body: str) -> str:
    """An executable standing in for ``java``: ``body`` is Python, run with the
    recorded successful TLC output as ``SUCCESS`` and a run counter in ``RUNS``."""
    script = tmp_path / "java"
    script.write_text(
        f"#!{sys.executable}\n"
        "import sys, time, pathlib\n"
        f"SUCCESS = pathlib.Path({str(DATA / 'success.out')!r}).read_text()\n"
        f"RUNS = pathlib.Path({str(tmp_path / 'runs')!r})\n"
        "RUNS.write_text(str(int(RUNS.read_text()) + 1) if RUNS.exists() else '1')\n"
        f"BANNER = {BANNER!r}\n" + body,
        encoding="utf-8",
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


@pytest.fixture
def model_dir(tmp_path: Path) -> Path:
    spec = tmp_path / "spec"
    spec.mkdir()
    (spec / "MCStuck.tla").write_text("---- MODULE MCStuck ----\n====\n", encoding="utf-8")
    (spec / "MCStuck.cfg").write_text("", encoding="utf-8")
    return spec


def _run(model_dir: Path, java: str, stall_seconds: float = 1.0) -> TlcResult:
    return run_tlc(
        "MCStuck",
        spec_dir=model_dir,
        jar=model_dir / "tla2tools.jar",
        cache_dir=model_dir.parent / ".cache",
        java=java,
        sany=False,
        stall_seconds=stall_seconds,
    )


def test_a_tlc_stuck_twice_is_killed_and_reported(model_dir: Path, tmp_path: Path) -> None:
    java = _fake_java(tmp_path, "sys.stdout.write(BANNER); sys.stdout.flush(); time.sleep(600)\n")
    started = time.monotonic()
    with pytest.raises(ToolStalled) as info:
        _run(model_dir, java)
    assert time.monotonic() - started < 60  # killed, not waited for (600 s each)
    log = model_dir.parent / ".cache" / "tlc-logs" / "MCStuck.log"
    assert info.value.code == "RL-TLC-STALLED"
    assert info.value.exit_code is Exit.UNKNOWN
    assert str(info.value) == (
        "TLC stopped working on model MCStuck: twice it printed nothing and used no CPU for"
        " 1 s, and the kit killed it (TLC 2.15 can deadlock inside itself; this is a fault of"
        " TLC or of this machine, not of the model). The last lines it printed:\n"
        "  TLC2 Version 2.15 of Day Month 20?? (rev: d5b5a7f)\n"
        "  Checking temporal properties for the current state space with 1474 total"
        " distinct states\n"
        f"Its whole output is in {log}. Run the command again; if it stalls again, run the"
        " model alone (`.venv/bin/redletter check --model MCStuck`) and report the log."
    )
    assert (tmp_path / "runs").read_text() == "2"
    text = log.read_text(encoding="utf-8")
    assert text.count("# redletter: TLC printed nothing and used no CPU for 1 s") == 2
    assert "the kit killed it and runs it again\n" in text
    # Its state queue and temporary folder are gone with it.
    assert not any((model_dir.parent / ".cache" / "tlc-states").iterdir())
    assert not any((model_dir.parent / ".cache" / "tlc-tmp").iterdir())


def test_a_tlc_stuck_once_is_run_again_and_its_result_kept(model_dir: Path, tmp_path: Path) -> None:
    java = _fake_java(tmp_path, STUCK_ONCE)
    result = _run(model_dir, java)
    assert (result.kind, result.stalls) == (ResultKind.SUCCESS, 1)
    assert (tmp_path / "runs").read_text() == "2"
    assert result.log_path is not None
    text = result.log_path.read_text(encoding="utf-8")
    assert text.count("# redletter: TLC printed nothing") == 1
    assert text.rstrip().endswith("@!@!@ENDMSG 2186 @!@!@")  # the second run's output follows


def test_a_tlc_busy_but_silent_is_left_to_work(model_dir: Path, tmp_path: Path) -> None:
    """Liveness on the whole graph prints nothing for minutes but uses CPU: not stuck."""
    java = _fake_java(
        tmp_path,
        "end = time.monotonic() + 4\n"
        "while time.monotonic() < end:\n"
        "    pass\n"
        "sys.stdout.write(SUCCESS)\n",
    )
    result = _run(model_dir, java)
    assert (result.kind, result.stalls) == (ResultKind.SUCCESS, 0)
    assert (tmp_path / "runs").read_text() == "1"


def test_a_tlc_printing_slowly_is_left_to_work(model_dir: Path, tmp_path: Path) -> None:
    """Idle between lines (waiting on its disk, say) but printing: not stuck."""
    java = _fake_java(
        tmp_path,
        "for _ in range(8):\n"
        "    sys.stdout.write('Progress\\n'); sys.stdout.flush(); time.sleep(0.5)\n"
        "sys.stdout.write(SUCCESS)\n",
    )
    result = _run(model_dir, java)
    assert (result.kind, result.stalls) == (ResultKind.SUCCESS, 0)


def test_make_check_says_when_a_model_was_run_again(
    model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    java = _fake_java(tmp_path, STUCK_ONCE)
    entry = ModelEntry("MCStuck", "default", "token", 2, 1, True, "success", None, 6, 6, 6, None)
    row = CheckRow(Comparison(entry, _run(model_dir, java), ()), crosscheck="—")
    with LiveCheck(1, enabled=False) as live:
        live.model_finished(row)
    assert capsys.readouterr().err.splitlines()[0] == (
        "note: TLC got stuck on MCStuck (nothing printed and no CPU used for minutes); the"
        " kit killed it and ran it again, and this is the second run's result"
    )


def test_a_tlc_blocked_on_a_slow_reader_is_left_to_work(model_dir: Path, tmp_path: Path) -> None:
    """The cross-check reads TLC's DOT dump from a pipe while TLC writes it: a TLC
    blocked writing to a reader that is behind waits on the reader, not on itself."""
    fifo = tmp_path / "dump.dot"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # there, not reading yet
    got: list[int] = []

    def drain() -> None:
        time.sleep(4)  # four times the stall threshold
        os.set_blocking(reader, True)
        while chunk := os.read(reader, 1 << 16):
            got.append(len(chunk))
        os.close(reader)

    t = threading.Thread(target=drain)
    t.start()
    java = _fake_java(
        tmp_path,
        f"with open({str(fifo)!r}, 'w') as f:\n"
        "    f.write('x' * 4_000_000)\n"
        "sys.stdout.write(SUCCESS)\n",
    )
    result = _run(model_dir, java)
    t.join()
    assert (result.kind, result.stalls, sum(got)) == (ResultKind.SUCCESS, 0, 4_000_000)


def test_a_sany_that_never_ends_is_stopped_and_reported(model_dir: Path, tmp_path: Path) -> None:
    java = _fake_java(tmp_path, "print('Parsing file MCStuck.tla', flush=True); time.sleep(600)\n")
    started = time.monotonic()
    with pytest.raises(ToolStalled) as info:
        run_sany(model_dir / "MCStuck.tla", jar=model_dir / "tla2tools.jar", java=java, timeout=2)
    assert time.monotonic() - started < 60
    assert (info.value.code, info.value.exit_code) == ("RL-SANY-TIMEOUT", Exit.UNKNOWN)
    assert str(info.value) == (
        "SANY, TLC's parser, did not finish parsing MCStuck.tla in 2 s (it parses them in"
        " seconds), so the kit stopped it: a fault of SANY or of this machine, not of the"
        " spec. Its last lines: Parsing file MCStuck.tla. Run the command again; if it"
        " happens again, report it."
    )


@pytest.mark.tlc
def test_a_crosscheck_whose_tlc_got_stuck_runs_again_whole(
    tlc_jar: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cross-check reads TLC's graph from a pipe: a TLC stuck half-way cannot be run
    again under the same reader, so the whole cross-check runs again."""
    real = shutil.which("java")
    assert real is not None
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "java").write_text(
        f"#!{sys.executable}\n"
        "import os, sys, time, pathlib\n"
        f"RUNS = pathlib.Path({str(tmp_path / 'tlc-runs')!r})\n"
        "if 'tlc2.TLC' in sys.argv:\n"
        "    n = int(RUNS.read_text()) + 1 if RUNS.exists() else 1\n"
        "    RUNS.write_text(str(n))\n"
        "    if n == 1:\n"
        f"        sys.stdout.write({BANNER!r}); sys.stdout.flush(); time.sleep(600)\n"
        f"os.execv({real!r}, [{real!r}, *sys.argv[1:]])\n",
        encoding="utf-8",
    )
    (bin_dir / "java").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(tlc, "STALL_SECONDS", 2.0)
    r = crosscheck("MCHistoryTermination", PROJECT)
    assert r.exact, format_result(r)
    assert (tmp_path / "tlc-runs").read_text() == "2"
    log = PROJECT.work_dir / "tlc-logs" / "MCHistoryTermination.log"
    text = log.read_text(encoding="utf-8")
    assert "# redletter: TLC printed nothing and used no CPU for 2 s; the kit killed it\n" in text
    assert "Model checking completed. No error has been found." in text
