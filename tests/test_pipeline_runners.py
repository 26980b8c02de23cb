"""Campaign runners over the conformance harness: reference passes, mutants fail,
resume after kill -9."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from redletter.conformance.traces import generate, write_traces
from redletter.errors import InputError
from redletter.pipeline.campaign import discover_traces, read_results, run_campaign
from redletter.pipeline.runners import (
    command_runner,
    env_runner,
    mutant_runner,
    node_from_command,
    reference_runner,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "spec"
pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def spark() -> Iterator[SparkSession]:
    from redletter.pipeline.session import SparkConfig, get_session

    yield get_session(SparkConfig(master="local[2]", driver_memory="1g"))


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("traces")
    write_traces(out, generate("MCToken2", SPEC, goals=False)[:60])
    return out


def test_reference_passes_and_a_mutant_fails(
    spark: SparkSession, traces: Path, tmp_path: Path
) -> None:
    refs = discover_traces(traces)
    ok = run_campaign(spark, refs, reference_runner, tmp_path / "ref", chunk=8)
    assert ok.verdicts == (("pass", len(refs)),) and ok.complete
    assert {a for a, _, _ in ok.coverage} >= {"SendApp", "ReceiveApp", "StartSnapshot"}
    runner = mutant_runner("no-channel-recording")
    expected = sum(runner(r.path)["verdict"] == "fail" for r in refs)  # single-process
    bad = run_campaign(spark, refs, runner, tmp_path / "mut", chunk=8)
    assert dict(bad.verdicts).get("fail", 0) == expected > 0
    assert all(detail for _, detail in bad.failures)  # every failure says why


def test_command_runner_judges_a_node_process(traces: Path) -> None:
    path = str(sorted(traces.glob("*.itf.json"))[0])
    got = command_runner(f"{sys.executable} -m redletter.conformance.nodes.reference")(path)
    assert got["verdict"] == "pass" and got["steps"] > 0
    mutant = f"{sys.executable} -m redletter.conformance.nodes.mutants never-forward"
    mut = command_runner(mutant)(path)
    assert mut["verdict"] in ("fail", "unknown")


def test_bad_node_commands(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(InputError) as e:
        node_from_command("")
    assert e.value.message == "--node: the node command is empty"
    with pytest.raises(InputError) as e:
        node_from_command("no-such-program-xyz --flag")
    assert e.value.message == (
        "--node: cannot run 'no-such-program-xyz': no such program on PATH; give its path"
        " (./mynode), or the interpreter first (--node 'python3 mynode.py')"
    )
    monkeypatch.delenv("REDLETTER_NODE_CMD", raising=False)
    with pytest.raises(InputError) as e:
        env_runner("x.itf.json")
    assert e.value.message == "$REDLETTER_NODE_CMD is not set: it must hold the node command"
    with pytest.raises(InputError) as e:
        mutant_runner("nope")
    assert e.value.message.startswith("no mutant named 'nope'; mutants: no-channel-recording")


@pytest.mark.slow
def test_resume_after_kill_with_node_command(
    spark: SparkSession, traces: Path, tmp_path: Path
) -> None:
    n = len(discover_traces(traces))
    results = tmp_path / "r"
    cmd = [sys.executable, "-m", "redletter", "pipeline", "campaign", "--traces", str(traces),
           "--results", str(results),
           "--node", f"{sys.executable} -m redletter.conformance.nodes.reference",
           "--chunk", "2", "--master", "local[2]", "--driver-memory", "1g"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    log = tmp_path / "campaign.log"
    with log.open("wb") as err:
        proc = subprocess.Popen(
            cmd, cwd=ROOT, env=env, start_new_session=True, stdout=err, stderr=err
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 240
        while proc.poll() is None and time.monotonic() < deadline:
            if read_results(results).num_rows >= 3:
                break
            time.sleep(0.05)
        done_at_kill = read_results(results).num_rows
        tail = log.read_text(errors="replace")[-2000:]
        assert proc.poll() is None, f"the campaign ended before it was killed:\n{tail}"
        assert 0 < done_at_kill < n, f"the campaign was not killed mid-way:\n{tail}"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    time.sleep(1.0)
    before = read_results(results)
    # The same campaign and implementation (the node command, as the CLI names it).
    implementation = f"node {sys.executable} -m redletter.conformance.nodes.reference --timeout 10"
    summary = run_campaign(
        spark,
        discover_traces(traces),
        reference_runner,
        results,
        chunk=2,
        implementation=implementation,
    )
    assert summary.done_before == before.num_rows >= done_at_kill
    assert summary.ran == n - before.num_rows
    raw_ids = read_results(results, dedupe=False)["id"].to_pylist()
    assert len(raw_ids) == len(set(raw_ids)) == n
    assert summary.complete and summary.verdicts == (("pass", n),)
