"""Campaigns: results per partition, resume after ``kill -9``, dedupe, summaries."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]
import pyarrow.parquet as pq  # type: ignore[import-untyped, unused-ignore]
import pytest

from redletter.errors import InputError
from redletter.pipeline import schemas
from redletter.pipeline.campaign import discover_traces, load_runner, read_results, run_campaign

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.spark


def fake_runner(path: str) -> Mapping[str, Any]:
    """A stand-in for the conformance harness: the trace file says what to return."""
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    time.sleep(doc["sleep"])
    if doc["verdict"] == "raise":
        raise RuntimeError("node crashed")
    return {
        "verdict": doc["verdict"],
        "steps": len(doc["states"]),
        "seconds": doc["sleep"],
        "detail": doc.get("detail", ""),
        "actions": doc["actions"],
    }


def _traces(root: Path, n: int, *, sleep: float = 0.0) -> Path:
    root.mkdir(parents=True)
    for i in range(n):
        verdict = "fail" if i % 7 == 3 else "pass"
        doc = {
            "states": [{}] * (i % 5 + 1),
            "verdict": verdict,
            "sleep": sleep,
            "detail": "diverged at step 2" if verdict == "fail" else "",
            "actions": ["SendApp", "ReceiveApp"] if i % 2 else ["StartSnapshot"],
        }
        (root / f"t{i:03d}.itf.json").write_text(json.dumps(doc), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def spark() -> Iterator[SparkSession]:
    from redletter.pipeline.session import SparkConfig, get_session

    yield get_session(SparkConfig(master="local[2]", driver_memory="1g"))


def test_campaign_counts_and_coverage(spark: SparkSession, tmp_path: Path) -> None:
    refs = discover_traces(_traces(tmp_path / "t", 20))
    summary = run_campaign(spark, refs, fake_runner, tmp_path / "r", chunk=3)
    fails = sum(1 for i in range(20) if i % 7 == 3)
    assert summary.verdicts == (("fail", fails), ("pass", 20 - fails))
    assert (summary.ran, summary.partitions, summary.done_before) == (20, 7, 0)
    assert len(list((tmp_path / "r").glob("part-*.parquet"))) == 7
    assert summary.coverage == (
        ("ReceiveApp", 10, sum(1 for i in range(1, 20, 2) if i % 7 != 3)),
        ("SendApp", 10, sum(1 for i in range(1, 20, 2) if i % 7 != 3)),
        ("StartSnapshot", 10, sum(1 for i in range(0, 20, 2) if i % 7 != 3)),
    )
    assert summary.steps == sum(i % 5 + 1 for i in range(20))
    assert summary.failures[0] == ("t003", "diverged at step 2")
    again = run_campaign(spark, refs, fake_runner, tmp_path / "r", chunk=3)
    assert (again.ran, again.done_before, again.verdicts) == (0, 20, summary.verdicts)


def test_runner_errors_are_results(spark: SparkSession, tmp_path: Path) -> None:
    root = tmp_path / "t"
    root.mkdir()
    for name, verdict in (("crash", "raise"), ("liar", "maybe")):
        doc = {"states": [], "verdict": verdict, "sleep": 0, "actions": []}
        (root / f"{name}.itf.json").write_text(json.dumps(doc), encoding="utf-8")
    summary = run_campaign(spark, discover_traces(root), fake_runner, tmp_path / "r")
    assert summary.verdicts == (("error", 2),)
    assert summary.failures == (
        ("crash", "the runner raised RuntimeError: node crashed"),
        ("liar", "the runner returned verdict 'maybe'; expected one of pass, fail, unknown"),
    )


def test_read_results_dedupes(tmp_path: Path) -> None:
    row = {"campaign": "c", "id": "a", "path": "/a", "verdict": "pass", "steps": 1,
           "seconds": 0.1, "detail": "", "actions": [], "partition": 0}  # fmt: skip
    tmp_path.mkdir(exist_ok=True)
    for n, (tid, at) in enumerate((("a", 2.0), ("a", 1.0), ("b", 3.0))):
        table = pa.Table.from_pylist([{**row, "id": tid, "finished_at": at}], schemas.RESULTS)
        pq.write_table(table, tmp_path / f"part-{n}.parquet")
    (tmp_path / ".part-9.parquet.tmp").write_bytes(b"half a file")
    got = read_results(tmp_path)
    assert list(zip(got["id"].to_pylist(), got["finished_at"].to_pylist(), strict=True)) == [
        ("a", 1.0),
        ("b", 3.0),
    ]
    assert read_results(tmp_path, dedupe=False).num_rows == 3


def test_bad_runner_and_table(tmp_path: Path) -> None:
    with pytest.raises(InputError) as e:
        load_runner("no_colon")
    assert e.value.message == "expected a runner as module:function, found 'no_colon'"
    with pytest.raises(InputError) as e:
        discover_traces(tmp_path / "nothing")
    assert e.value.message == (
        f"{tmp_path / 'nothing'}: expected a directory of *.itf.json traces or a .parquet"
        " trace table"
    )


@pytest.mark.slow
def test_resume_after_kill(spark: SparkSession, tmp_path: Path) -> None:
    n = 40
    traces = _traces(tmp_path / "t", n, sleep=0.25)
    results = tmp_path / "r"
    cmd = [sys.executable, "-m", "redletter", "pipeline", "campaign", "--traces", str(traces),
           "--results", str(results), "--runner", "tests.test_pipeline_campaign:fake_runner",
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
            if len(list(results.glob("part-*.parquet"))) >= 3:
                break
            time.sleep(0.05)
        done_at_kill = read_results(results).num_rows
        tail = log.read_text(errors="replace")[-2000:]
        assert proc.poll() is None, f"the campaign ended before it was killed:\n{tail}"
        assert 0 < done_at_kill < n, f"the campaign was not killed mid-way:\n{tail}"
    finally:
        with contextlib.suppress(ProcessLookupError):  # the driver, its JVM and workers
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    time.sleep(1.0)  # let orphaned workers (if any) notice their JVM is gone
    before = read_results(results)
    summary = run_campaign(spark, discover_traces(traces), fake_runner, results, chunk=2)
    assert summary.done_before == before.num_rows >= done_at_kill
    assert summary.ran == n - before.num_rows
    final = read_results(results)
    assert sorted(final["id"].to_pylist()) == [f"t{i:03d}" for i in range(n)]
    raw_ids = read_results(results, dedupe=False)["id"].to_pylist()
    assert len(raw_ids) == len(set(raw_ids)) == n  # nothing was run twice
    assert summary.complete
