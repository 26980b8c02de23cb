"""The ``symbolic`` typer app."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from redletter.cli.symbolic import app as symbolic_app
from redletter.python_model.itf import trace_from_json

runner = CliRunner()


def test_bmc_mutant_exits_1_and_writes_itf(tmp_path: Path) -> None:
    out = tmp_path / "cex.itf.json"
    res = runner.invoke(
        symbolic_app,
        [
            "bmc",
            "--procs",
            "2",
            "--snapshots",
            "1",
            "--depth",
            "6",
            "--mutant",
            "no-recording",
            "--itf",
            str(out),
        ],
        standalone_mode=False,
    )
    assert res.return_value == 1, res.output
    assert "violated: SnapshotSatisfiesAppInv" in res.output
    trace = trace_from_json(json.loads(out.read_text()))
    assert trace.states[-1].meta["action"] == "ReceiveRedLetter"


def test_bmc_unknown_mutant_is_bad_input() -> None:
    res = runner.invoke(symbolic_app, ["bmc", "--procs", "2", "--mutant", "nope"])
    assert res.exit_code != 0
    assert "unknown variant 'nope'" in str(res.exception)


def test_synth_two_starters() -> None:
    res = runner.invoke(
        symbolic_app,
        ["synth", "--goal", "two-starters", "--procs", "2", "--snapshots", "1"],
        standalone_mode=False,
    )
    assert res.return_value == 0, res.output
    assert res.output.count("StartSnapshot") == 2
