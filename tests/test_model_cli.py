"""``redletter explore``: output in TLC's words and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from redletter.cli import main

ROOT = Path(__file__).resolve().parent.parent


def test_explore_success(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "g.jsonl"
    args = ["explore", "MCSequential", "--root", str(ROOT), "--graph", str(out), "--workers", "1"]
    code = main(args)
    text = capsys.readouterr().out
    assert code == 0
    assert "6,215 states generated, 4,098 distinct states found." in text
    assert "The depth of the complete state graph search is 24." in text
    assert "Model checking completed. No error has been found." in text
    assert "Explored on" not in text  # one process: the single-process explorer's lines
    lines = out.read_text().splitlines()
    header = json.loads(lines[0])
    assert header["model"] == "MCSequential" and header["states"] == 4098
    assert len(lines) == 1 + header["states"] + header["edges"]
    assert json.loads(lines[1])["tla"].startswith("/\\ local = ")


@pytest.mark.parametrize("workers", ["1", "2"])
def test_explore_violation(capsys: pytest.CaptureFixture[str], workers: str) -> None:
    code = main(["explore", "MCNeverForwardFailure", "--root", str(ROOT), "--workers", workers])
    text = capsys.readouterr().out
    assert code == 1
    assert "Error: Invariant RedLetterInvariant is violated." in text
    assert '1: Init\n2: StartSnapshot p="p1", k=1\n3: ReceiveRedLetter c=["p1", "p2"], i=1' in text


def test_explore_on_two_workers_says_where_it_ran(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "g.jsonl"
    args = ["explore", "MCSequential", "--root", str(ROOT), "--graph", str(out), "--workers", "2"]
    assert main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == [
        "6,215 states generated, 4,098 distinct states found.",
        "The depth of the complete state graph search is 24.",
    ]
    assert lines[2].startswith("Explored in ")
    # MCSequential's frontiers stay under 2,000 states: no worker process is started
    assert lines[3] == (
        "Explored on 2 partitions (1,989 + 2,109 states) in this process: no level was"
        " large enough to start worker processes."
    )
    assert lines[4].startswith(
        "Checking temporal properties SnapshotsComplete under FairSpec (4 fairness conditions:"
        " WF(ReceiveApp) on each of 2 parameter values, WF(ReceiveRedLetter) on each of 2"
        " parameter values) on 4,098 states and 6,214 edges: 2 instance(s)"
    )
    assert lines[5:] == [
        "Model checking completed. No error has been found.",
        f"Graph written to {out}",
    ]
    header = json.loads(out.read_text().splitlines()[0])
    assert (header["states"], header["edges"]) == (4098, 6214)


def test_explore_unknown_model(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["explore", "MCNope", "--root", str(ROOT)])
    err = capsys.readouterr().err
    assert code == 5
    assert err.startswith("error[RL-INPUT-MODEL]: unknown model 'MCNope' in ")


@pytest.mark.parametrize("workers", ["1", "2"])
def test_explore_liveness_failure_prints_the_lasso_and_draws_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, workers: str
) -> None:
    svg = tmp_path / "lasso.svg"
    args = ["explore", "MCNeverForwardLivenessFailure", "--root", str(ROOT), "--workers", workers]
    code = main([*args, "--diagram", str(svg)])
    text = capsys.readouterr().out
    assert code == 1
    assert (
        "Checking temporal properties SnapshotsComplete under FairSpec (4 fairness conditions:"
        " WF(ReceiveApp) on each of 2 parameter values, WF(ReceiveRedLetter) on each of 2"
        " parameter values) on 33 states and 38 edges: 1 instance(s) in"
    ) in text
    assert "Error: Temporal properties were violated." in text
    violated = "Temporal property SnapshotsComplete[k = 1] is violated: Started(1) ~> Complete(1)"
    assert violated in text
    assert 'State 2: <StartSnapshot(p = "p1", k = 1)>\n' in text
    assert 'State 3: <ReceiveRedLetter(c = <<"p1", "p2">>, i = 1)>\n' in text
    assert "State 4: Stuttering" in text
    assert "<svg" in svg.read_text()
    assert main([*args, "--no-liveness"]) == 0
    assert "Model checking completed. No error has been found." in capsys.readouterr().out
