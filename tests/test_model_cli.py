"""``redletter explore``: output in TLC's words and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from redletter.cli import main

ROOT = Path(__file__).resolve().parent.parent


def test_explore_success(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "g.jsonl"
    code = main(["explore", "MCSequential", "--root", str(ROOT), "--graph", str(out)])
    text = capsys.readouterr().out
    assert code == 0
    assert "6,215 states generated, 4,098 distinct states found." in text
    assert "The depth of the complete state graph search is 24." in text
    assert "Model checking completed. No error has been found." in text
    lines = out.read_text().splitlines()
    header = json.loads(lines[0])
    assert header["model"] == "MCSequential" and header["states"] == 4098
    assert len(lines) == 1 + header["states"] + header["edges"]
    assert json.loads(lines[1])["tla"].startswith("/\\ local = ")


def test_explore_violation(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["explore", "MCNeverForwardFailure", "--root", str(ROOT)])
    text = capsys.readouterr().out
    assert code == 1
    assert "Error: Invariant RedLetterInvariant is violated." in text
    assert '1: Init\n2: StartSnapshot p="p1", k=1\n3: ReceiveRedLetter c=["p1", "p2"], i=1' in text


def test_explore_unknown_model(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["explore", "MCNope", "--root", str(ROOT)])
    err = capsys.readouterr().err
    assert code == 5
    assert err.startswith("error[RL-INPUT-MODEL]: unknown model 'MCNope' in ")
