"""``redletter conform validate``: an implementation's own event log, judged by the model."""

from __future__ import annotations

from pathlib import Path

import pytest

from redletter.cli import main

ROOT = Path(__file__).resolve().parents[1]
LOGS = "tests/data/conformance/logs"


def _run(capsys: pytest.CaptureFixture[str], *logs: str) -> tuple[int, list[str]]:
    argv = [
        "conform",
        "validate",
        "MCToken2",
        *[n if n.startswith("-") else f"{LOGS}/{n}" for n in logs],
    ]
    code = main([*argv, "--root", str(ROOT)])
    return code, capsys.readouterr().out.splitlines()


def test_reference_log_passes(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _run(capsys, "MCToken2.reference.ndjson")
    assert code == 0
    # the fixture's logs have no end events: the run is cut after its snapshot completed
    assert out[:2] == [
        "pass: 14 events replayed in the model: cut after every snapshot completed",
        "snapshot 1: the one the algorithm must record",
    ]
    assert out[2].startswith("the logs may not hold the whole run: p2's log ends without")
    code, out = _run(capsys, "MCToken2.reference.ndjson", "--whole-run")
    assert (code, out) == (
        0,
        [
            "pass: 14 events replayed in the model: a complete run",
            "snapshot 1: the one the algorithm must record",
        ],
    )


def test_per_node_logs_are_merged_and_pass(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _run(capsys, "MCToken2.reference.p1.ndjson", "MCToken2.reference.p2.ndjson")
    assert code == 0
    assert "snapshot 1: the one the algorithm must record" in out


def test_mutant_log_names_the_first_event_the_model_cannot_take(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out = _run(capsys, "MCToken2.no-channel-recording.ndjson")
    assert code == 1
    assert out[:2] == [
        "fail: 13 events replayed in the model: cut after every snapshot completed",
        f"missing-effect: {LOGS}/MCToken2.no-channel-recording.ndjson:10: "
        "p2 receive app 1 on p1 -> p2: the model records app 1 on p1 -> p2 for snapshot 1 in "
        "this step; the log does not (next event of p2: line 11)",
    ]
