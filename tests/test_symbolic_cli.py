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


def test_bmc_says_its_proof_is_of_token_sums_in_a_bounded_system() -> None:
    res = runner.invoke(
        symbolic_app,
        ["bmc", "--procs", "2", "--snapshots", "1", "--depth", "3"],
        standalone_mode=False,
    )
    assert res.return_value == 0, res.output
    lines = res.output.splitlines()
    assert lines[-2] == (
        "The facts proved are inductive, so there is no violation at any depth — of the "
        "bounded system: buffers of at most 3 messages (exact for TokenApp), recorded "
        "streams of at most 3 messages (a receipt that would record more is disabled)."
    )
    assert lines[-1] == (
        "Checked: TypeOK, RedLetterInvariant, SnapshotSatisfiesAppInv and TokensConserved "
        "(token sums), not Lemma 0 and Lemma 1; `.venv/bin/redletter symbolic induction`"
        " proves the lemmas for every run, with unbounded buffers."
    )


def test_induct_says_it_covers_the_first_stage_only() -> None:
    res = runner.invoke(
        symbolic_app, ["induct", "--procs", "2", "--snapshots", "1"], standalone_mode=False
    )
    assert res.return_value == 0, res.output
    assert res.output.splitlines()[-1] == (
        "This covers EWD 864's first stage only (the red-letter traffic), within buffers of "
        "at most 3 messages: it is blind to every recording bug.  `.venv/bin/redletter symbolic "
        "induction` proves Lemma 0 and Lemma 1."
    )
