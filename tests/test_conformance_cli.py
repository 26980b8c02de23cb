"""``redletter conform``: exit codes, the run folder, the replay command."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

import pytest

from redletter.cli import main

ROOT = Path(__file__).resolve().parent.parent
PY = os.path.abspath(sys.executable)
GOOD = f"{shlex.quote(PY)} -m redletter.conformance.nodes.reference"
BROKEN = f"{shlex.quote(PY)} {ROOT / 'tests/data/conformance_judge/broken_node.py'}"


@pytest.fixture(scope="module")
def few_traces(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("traces")
    assert main(["conform", "traces", "MCToken2", "--out", str(out), "--root", str(ROOT)]) == 0
    keep = sorted(out.glob("*.itf.json"))[:12]
    for f in sorted(out.glob("*.itf.json")):
        if f not in keep:
            f.unlink()
    return out


def _run(node: str, traces: Path, store: Path, *extra: str) -> int:
    return main(
        [
            "conform",
            "run",
            "--node",
            node,
            "--traces",
            str(traces),
            "--store",
            str(store),
            "--root",
            str(ROOT),
            *extra,
        ]
    )


def test_pass_exits_0(few_traces: Path, tmp_path: Path) -> None:
    assert _run(GOOD, few_traces, tmp_path, "--hosted") == 0
    (folder,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    results = json.loads((folder / "results.json").read_text())
    assert results["verdict"] == "pass" and results["counts"]["pass"] == 12


def test_fail_exits_1_with_a_replayable_shrunk_trace(few_traces: Path, tmp_path: Path) -> None:
    assert _run(BROKEN, few_traces, tmp_path, "--hosted") == 1
    (folder,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    files = ("results.json", "journal.ndjson", "shrunk.itf.json", "diagram.svg", "report.html")
    for name in (*files, "explain.html"):
        assert (folder / name).is_file(), name
    results = json.loads((folder / "results.json").read_text())
    assert results["shrunk"]["steps"] == 3
    assert results["shrunk"]["replay"] == (
        f".venv/bin/redletter conform replay {folder / 'shrunk.itf.json'}"
        f" --node {shlex.quote(BROKEN)} --hosted"
    )
    replay = [
        "conform",
        "replay",
        str(folder / "shrunk.itf.json"),
        "--hosted",
        "--store",
        str(tmp_path / "again"),
        "--root",
        str(ROOT),
    ]
    assert main([*replay, "--node", BROKEN]) == 1
    assert main([*replay, "--node", GOOD]) == 0


def test_bad_input_exits_5(
    few_traces: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run("", few_traces, tmp_path) == 5
    assert _run("/no/such/node", few_traces, tmp_path) == 5
    assert capsys.readouterr().err.splitlines()[-2:] == [
        "error[RL-INPUT-NODE-CMD]: --node: cannot run '/no/such/node': no such file",
        "help: pass the command that starts the node, e.g. --node 'python3 mynode.py' (it is "
        "split like a shell line but never run by a shell); see docs/errors.md#rl-input-node-cmd",
    ]
    assert main(["conform", "traces", "MCNope", "--out", str(tmp_path), "--root", str(ROOT)]) == 5
