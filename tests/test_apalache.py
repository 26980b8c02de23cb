"""The Apalache binding: the not-installed path word for word, the command lines,
and the subprocess + ITF reading path through a stand-in executable."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from redletter.cli import main
from redletter.errors import EnvironmentMissing, Exit
from redletter.python_model import apalache
from redletter.python_model.apalache import (
    APALACHE_MISSING,
    check_command,
    find_apalache,
    simulate_command,
    typecheck_command,
)

SPEC = Path(__file__).resolve().parent.parent / "spec"
HAVE_APALACHE = shutil.which("apalache-mc") is not None


def test_not_installed_message_word_for_word(tmp_path: Path) -> None:
    with pytest.raises(EnvironmentMissing) as err:
        find_apalache(path=str(tmp_path))
    assert str(err.value) == (
        "Apalache is not installed (no `apalache-mc` on PATH), and no package registry "
        "reachable here ships it; to run this check, install a release (see "
        "https://apalache-mc.org, it needs Java 17) and put its bin/ on PATH."
    )
    assert err.value.exit_code == Exit.ENVIRONMENT
    assert int(err.value.exit_code) == 3
    assert err.value.code == "RL-ENV-APALACHE"


def test_check_without_apalache_raises(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(EnvironmentMissing, match=r"^Apalache is not installed"):
        apalache.check(SPEC / "MCToken2.tla")


def test_command_lines(tmp_path: Path) -> None:
    spec = SPEC / "MCToken2.tla"
    cfg = SPEC / "MCToken2.cfg"
    assert check_command(
        "/x/apalache-mc", spec, tmp_path, config=cfg, length=7, inv=["TypeOK", "Lemma0"]
    ) == [
        "/x/apalache-mc",
        f"--out-dir={tmp_path}",
        f"--run-dir={tmp_path / 'run'}",
        "check",
        "--length=7",
        "--inv=TypeOK,Lemma0",
        "--config=MCToken2.cfg",
        "MCToken2.tla",
    ]
    assert simulate_command("a", spec, tmp_path, length=3, max_run=5) == [
        "a",
        f"--out-dir={tmp_path}",
        f"--run-dir={tmp_path / 'run'}",
        "simulate",
        "--length=3",
        "--max-run=5",
        "MCToken2.tla",
    ]
    assert typecheck_command("a", spec, tmp_path) == [
        "a",
        f"--out-dir={tmp_path}",
        f"--run-dir={tmp_path / 'run'}",
        "typecheck",
        "MCToken2.tla",
    ]


def _fake(tmp_path: Path, code: int) -> Path:
    """A stand-in apalache-mc that writes one ITF counterexample into --run-dir."""
    doc = {"vars": ["x"], "states": [{"x": {"#bigint": "1"}}, {"x": {"#bigint": "2"}}]}
    script = tmp_path / "bin" / "apalache-mc"
    script.parent.mkdir()
    script.write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do case "$a" in --run-dir=*) d="${a#--run-dir=}";; esac; done\n'
        'mkdir -p "$d"\n'
        f"cat > \"$d/violation1.itf.json\" <<'EOF'\n{json.dumps(doc)}\nEOF\n"
        "echo 'State 1: x violated'\n"
        f"exit {code}\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


def test_counterexample_read_back_through_itf(tmp_path: Path) -> None:
    exe = _fake(tmp_path, 12)
    result = apalache.check(SPEC / "MCToken2.tla", length=2, executable=str(exe))
    assert result.verdict == "violation" and result.returncode == 12
    assert len(result.counterexamples) == 1
    assert [s.values["x"] for s in result.counterexamples[0].states] == [1, 2]
    assert "violated" in result.tail()


def test_timeout_is_a_verdict(tmp_path: Path) -> None:
    script = tmp_path / "apalache-mc"
    script.write_text("#!/bin/sh\nsleep 5\n")
    script.chmod(0o755)
    result = apalache.typecheck(SPEC / "MCToken2.tla", timeout=0.5, executable=str(script))
    assert result.verdict == "timeout" and result.returncode is None


def _cli(monkeypatch: pytest.MonkeyPatch, bin_dir: Path, *args: str) -> int:
    """``redletter apalache check`` with a stand-in apalache-mc first on PATH."""
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    models = ["--model", "MCToken2", "--model", "MCNoChannelRecordingFailure"]
    return main(["apalache", "check", *models, "--root", str(SPEC.parent), *args])


def test_cli_maps_exit_codes_to_the_manifest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    exe = _fake(tmp_path, 12)
    assert _cli(monkeypatch, exe.parent) == Exit.FAIL
    assert capsys.readouterr().out.splitlines() == [
        "MCToken2: apalache-mc exit 12 (violation), expected success: MISMATCH",
        "MCNoChannelRecordingFailure: apalache-mc exit 12 (violation), expected safety failure: ok",
    ]


def test_cli_timeout_is_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "apalache-mc"
    script.write_text("#!/bin/sh\nsleep 5\n")
    script.chmod(0o755)
    assert _cli(monkeypatch, tmp_path, "--timeout", "0.3") == Exit.UNKNOWN
    assert capsys.readouterr().out.splitlines()[0] == (
        "MCToken2: apalache-mc timed out after 0.3s, expected success: unknown"
    )


@pytest.mark.apalache
@pytest.mark.skipif(not HAVE_APALACHE, reason=APALACHE_MISSING)
def test_typecheck_the_spec() -> None:
    result = apalache.typecheck(SPEC / "MCToken2.tla")
    assert result.verdict == "ok", result.tail()


@pytest.mark.apalache
@pytest.mark.slow
@pytest.mark.skipif(not HAVE_APALACHE, reason=APALACHE_MISSING)
def test_check_finds_the_no_recording_bug() -> None:
    result = apalache.check(
        SPEC / "MCNoChannelRecordingFailure.tla",
        config=SPEC / "MCNoChannelRecordingFailure.cfg",
        length=8,
        inv=["Lemma0"],
    )
    assert result.verdict == "violation", result.tail()
    assert result.counterexamples
