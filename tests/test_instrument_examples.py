"""The three instrumented example programs (conformance/adapters/instrument/examples/):
each correct run passes without a model, each injected bug fails naming its rule,
and a crashed run is never a pass."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from redletter.conformance.adapters.instrument.examples.bank.bank import run_bank
from redletter.conformance.adapters.instrument.examples.chat.chat import run_chat
from redletter.conformance.gonode import find_go
from redletter.conformance.judges.log import Validation
from redletter.conformance.judges.runlog import conserved_sum, validate_run_files

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "conformance" / "adapters" / "instrument" / "examples"


def _kinds(v: Validation) -> list[str]:
    return [d.kind for d in v.divergences]


def _first(v: Validation) -> str:
    assert v.divergence is not None, v.explanation()
    return v.divergence.kind


# --------------------------------------------------------------------------- the chat


@pytest.mark.parametrize("seed", [0, 1])
def test_chat_passes(tmp_path: Path, seed: int) -> None:
    v = validate_run_files(run_chat(tmp_path, seed=seed))
    assert v.verdict == "pass", v.explanation()
    assert sorted(s.message for s in v.snapshots) == [
        f'snapshot "{k}": complete, consistent (Lemma 0 and Lemma 1 hold on this run), '
        "recorded as EWD 864 says"
        for k in ("alice-1", "carol-1")
    ]


def test_chat_marker_recorded_as_a_message_fails(tmp_path: Path) -> None:
    v = validate_run_files(run_chat(tmp_path, bug="marker-as-message"))
    assert v.verdict == "fail"
    assert _first(v) == "marker-recorded"
    assert v.divergence is not None
    assert "a red letter is not a message of the computation" in v.divergence.model_did


def test_chat_late_marker_fails_on_the_message_that_overtakes_it(tmp_path: Path) -> None:
    v = validate_run_files(run_chat(tmp_path, bug="late-marker"))
    assert v.verdict == "fail"
    assert _first(v) == "red-letter-order"
    assert v.divergence is not None
    assert "before red letter" in v.divergence.model_did


def test_a_crashed_chat_is_unknown(tmp_path: Path) -> None:
    """The chat process dies (os._exit) at bob's 30th event: no log ends."""
    done = subprocess.run(
        [sys.executable, "-m", "redletter.conformance.adapters.instrument.examples.chat",
         "--out", str(tmp_path), "--crash", "bob:30"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 70, (done.returncode, done.stdout[-2000:], done.stderr[-2000:])
    v = validate_run_files([tmp_path / f"{n}.ndjson" for n in ("alice", "bob", "carol")])
    assert v.verdict == "unknown", v.explanation()
    assert any("bob's log ends without its end event" in n for n in v.notes)


# --------------------------------------------------------------------------- the bank


@pytest.mark.parametrize("seed", [0, 1])
def test_bank_passes_and_conserves_money(tmp_path: Path, seed: int) -> None:
    v = validate_run_files(run_bank(tmp_path, seed=seed), invariant=conserved_sum("amount"))
    assert v.verdict == "pass", v.explanation()
    assert len(v.snapshots) == 2


def test_bank_marker_recorded_as_a_transfer_fails(tmp_path: Path) -> None:
    v = validate_run_files(run_bank(tmp_path, bug="marker-as-message"))
    assert v.verdict == "fail"
    assert _first(v) == "marker-recorded"


def test_bank_recording_after_the_marker_fails(tmp_path: Path) -> None:
    v = validate_run_files(run_bank(tmp_path, bug="record-after-close"))
    assert v.verdict == "fail"
    assert _first(v) == "record-after-close"
    assert v.divergence is not None and "after the channel turned red" in v.divergence.model_did


# --------------------------------------------------------------------------- Go


@pytest.fixture(scope="module")
def goring(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    go = find_go()
    if go is None:
        pytest.skip("no Go toolchain (.venv/bin/go or go on PATH): the Go example did not run")
    out = tmp_path_factory.mktemp("goring") / "goring"
    env = {**os.environ, "GOTOOLCHAIN": "local", "GOFLAGS": "-mod=mod", "CGO_ENABLED": "0"}
    done = subprocess.run(
        [go, "build", "-o", str(out), "."],
        cwd=EXAMPLES / "goring", env=env, capture_output=True, text=True, timeout=120,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    yield out


def _run_go(binary: Path, out: Path, *args: str) -> list[Path]:
    done = subprocess.run(
        [str(binary), "-out", str(out), *args],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return [out / f"{n}.ndjson" for n in ("paris", "tokyo", "lima")]


@pytest.mark.slow
@pytest.mark.go
def test_go_program_passes(goring: Path, tmp_path: Path) -> None:
    v = validate_run_files(_run_go(goring, tmp_path, "-seed", "3"))
    assert v.verdict == "pass", v.explanation()
    assert len(v.snapshots) == 2


@pytest.mark.slow
@pytest.mark.go
def test_go_marker_recorded_as_a_reading_fails(goring: Path, tmp_path: Path) -> None:
    v = validate_run_files(_run_go(goring, tmp_path, "-bug", "marker-as-message"))
    assert v.verdict == "fail"
    assert _first(v) == "marker-recorded"


@pytest.mark.slow
@pytest.mark.go
def test_go_missing_marker_fails_liveness(goring: Path, tmp_path: Path) -> None:
    v = validate_run_files(_run_go(goring, tmp_path, "-bug", "skip-one-output"))
    assert v.verdict == "fail"
    assert "liveness-missing-red-letter" in _kinds(v)
    assert any(
        "never sends red letter" in d.model_did
        for d in v.divergences
        if d.kind == "liveness-missing-red-letter"
    )
