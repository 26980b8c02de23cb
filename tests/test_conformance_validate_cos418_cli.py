"""``redletter cos418 generate`` and ``judge``: exit codes 0 / 1 / 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from redletter.cli.cos418 import app as cos418_app
from redletter.conformance.formats.cos418 import read_snap, write_snap

runner = CliRunner()


def _generate(out: Path, seed: int = 3) -> list[Path]:
    r = runner.invoke(
        cos418_app,
        [
            "generate",
            "--seed",
            str(seed),
            "--servers",
            "3",
            "--events",
            "5",
            "--snapshots",
            "2",
            "--out",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    return [out / f"seed{seed}.top", out / f"seed{seed}.events", *sorted(out.glob("*.snap*"))]


def test_generated_snapshots_pass_with_a_witness(tmp_path: Path) -> None:
    files = _generate(tmp_path)
    assert len(files) == 4
    r = runner.invoke(cos418_app, ["judge", *map(str, files)])
    assert r.exit_code == 0, r.output
    assert "pass: a FIFO schedule of" in r.output
    assert "witness schedule:" in r.output


def test_tampered_snapshot_fails_with_an_explanation(tmp_path: Path) -> None:
    files = _generate(tmp_path)
    snap = read_snap(files[2])
    (server, n), *rest = snap.tokens
    bad = type(snap)(snap.id, ((server, n + 1), *rest), snap.messages)
    write_snap(files[2], bad)
    r = runner.invoke(cos418_app, ["judge", *map(str, files)])
    assert r.exit_code == 1, r.output
    assert r.output.startswith(f"fail: snapshot {snap.id} does not conserve tokens: it records"), (
        r.output
    )


def test_tiny_budget_is_unknown(tmp_path: Path) -> None:
    files = _generate(tmp_path)
    r = runner.invoke(cos418_app, ["judge", "--budget", "1", *map(str, files)])
    assert r.exit_code == 2, r.output
    assert r.output.startswith("unknown: the solver's budget of 1 units ran out")


@pytest.mark.parametrize(
    ("servers", "events", "snapshots"), [(8, 40, 4), (10, 100, 10), (12, 60, 6)]
)
@pytest.mark.parametrize("seed", range(3))
def test_judge_decides_what_generate_produced(
    tmp_path: Path, servers: int, events: int, snapshots: int, seed: int
) -> None:
    """The assignment's sizes (8 servers with concurrent snapshots; 10 servers, 10
    snapshots) and beyond: the judge passes the kit's own simulated outcome."""
    r = runner.invoke(
        cos418_app,
        [
            "generate",
            "--seed",
            str(seed),
            "--servers",
            str(servers),
            "--events",
            str(events),
            "--snapshots",
            str(snapshots),
            "--out",
            str(tmp_path),
        ],
    )
    assert r.exit_code == 0, r.output
    files = [tmp_path / f"seed{seed}.top", tmp_path / f"seed{seed}.events"]
    files += sorted(tmp_path.glob("*.snap*"))
    assert len(files) == 2 + snapshots
    r = runner.invoke(cos418_app, ["judge", "--verdict-only", *map(str, files)])
    assert (r.exit_code, r.output) == (0, "pass\n"), f"seed {seed}"
