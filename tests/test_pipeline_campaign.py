"""Campaigns: results committed one line per trace, keyed by campaign, implementation
and trace content; resume after ``kill -9`` (20 random moments), dedupe, summaries."""

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

import pytest

from redletter.errors import InputError
from redletter.pipeline import schemas
from redletter.pipeline.campaign import (
    Journal,
    TraceRef,
    discover_traces,
    load_runner,
    read_journal,
    read_results,
    result_key,
    run_campaign,
    run_campaign_local,
)

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
            "trace": i,
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
    assert len(list((tmp_path / "r").glob("results-*.ndjson"))) == 7
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


def _record(tid: str, at: float, digest: str = "d") -> dict[str, Any]:
    return {"v": 1, "key": result_key("c", "i", digest + tid), "campaign": "c",
            "implementation": "i", "id": tid, "path": f"/{tid}", "digest": digest + tid,
            "verdict": "pass", "steps": 1, "seconds": 0.1, "detail": "", "actions": [],
            "partition": 0, "finished_at": at}  # fmt: skip


def test_read_results_dedupes_and_ignores_torn_lines(tmp_path: Path) -> None:
    for n, (tid, at) in enumerate((("a", 2.0), ("a", 1.0), ("b", 3.0))):
        with Journal(tmp_path / f"results-x-{n:05d}.ndjson") as j:
            j.append(_record(tid, at))
    # A line cut by kill -9, and a line whose commit marker does not match.
    good = (tmp_path / "results-x-00002.ndjson").read_bytes()
    (tmp_path / "results-x-00003.ndjson").write_bytes(good[: len(good) // 2])
    (tmp_path / "results-x-00004.ndjson").write_bytes(good.replace(b'"pass"', b'"fail"'))
    got = read_results(tmp_path)
    assert list(zip(got["id"].to_pylist(), got["finished_at"].to_pylist(), strict=True)) == [
        ("a", 1.0),
        ("b", 3.0),
    ]
    assert read_results(tmp_path, dedupe=False).num_rows == 3
    assert read_journal(tmp_path)[1] == 2
    assert got.schema == schemas.RESULTS


def test_a_torn_line_is_ended_before_the_next_result(tmp_path: Path) -> None:
    path = tmp_path / "results-x-00000.ndjson"
    with Journal(path) as j:
        j.append(_record("a", 1.0))
    with path.open("ab") as f:
        f.write(b'{"v": 1, "key": "half')  # the kill came mid-line
    with Journal(path) as j:
        assert j.keys == {result_key("c", "i", "da")}
        j.append(_record("b", 2.0))
    records, torn = read_journal(tmp_path)
    assert [r["id"] for r in records] == ["a", "b"] and torn == 1


def test_results_are_keyed_by_campaign_implementation_and_content(tmp_path: Path) -> None:
    """Another name, another implementation or an edited trace runs again; the same
    campaign, implementation and trace is never run twice."""
    traces = _traces(tmp_path / "t", 6)
    refs = discover_traces(traces)
    res = tmp_path / "r"
    first = run_campaign_local(refs, fake_runner, res, campaign="a", implementation="node x")
    assert (first.ran, first.done_before) == (6, 0)
    same = run_campaign_local(refs, fake_runner, res, campaign="a", implementation="node x")
    assert (same.ran, same.done_before, same.verdicts) == (0, 6, first.verdicts)
    other_name = run_campaign_local(refs, fake_runner, res, campaign="b", implementation="node x")
    assert (other_name.ran, other_name.done_before) == (6, 0)
    other_node = run_campaign_local(refs, fake_runner, res, campaign="a", implementation="node y")
    assert (other_node.ran, other_node.done_before) == (6, 0)
    doc = json.loads((traces / "t003.itf.json").read_text())
    doc["verdict"] = "pass"
    (traces / "t003.itf.json").write_text(json.dumps(doc))
    edited = run_campaign_local(
        discover_traces(traces), fake_runner, res, campaign="a", implementation="node x"
    )
    assert (edited.ran, edited.done_before) == (1, 5)
    assert ("fail", 1) not in edited.verdicts  # the edited trace's old fail is not reused
    assert edited.verdicts == (("pass", 6),)


def test_an_empty_trace_table_is_bad_input(tmp_path: Path) -> None:
    (tmp_path / "t").mkdir()
    with pytest.raises(InputError) as e:
        discover_traces(tmp_path / "t")
    assert e.value.message == (
        f"{tmp_path / 't'}: the trace table is empty: a campaign over no trace would prove nothing"
    )
    assert e.value.exit_code == 5


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
# CI time: `make test-long` runs it; in CI the same kill and resume of `pipeline
# campaign` runs with a node command (test_pipeline_runners.py's
# test_resume_after_kill_with_node_command), this one with a --runner
@pytest.mark.long
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
            if read_results(results).num_rows >= 3:
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
    summary = run_campaign(
        spark,
        discover_traces(traces),
        fake_runner,
        results,
        chunk=2,
        implementation="runner tests.test_pipeline_campaign:fake_runner",
    )
    assert summary.done_before == before.num_rows >= done_at_kill
    assert summary.ran == n - before.num_rows
    final = read_results(results)
    assert sorted(final["id"].to_pylist()) == [f"t{i:03d}" for i in range(n)]
    raw_ids = read_results(results, dedupe=False)["id"].to_pylist()
    assert len(raw_ids) == len(set(raw_ids)) == n  # nothing was run twice
    assert summary.complete


KILL_SEED = int(os.environ.get("REDLETTER_KILL_SEED", "20240611"))


@pytest.mark.slow
# CI time: `make test-long` runs it; test_resume_after_kill kills and resumes once in CI
@pytest.mark.long
def test_twenty_kills_lose_and_repeat_nothing(tmp_path: Path) -> None:
    """``kill -9`` of a campaign at 20 random moments (seeded), then a run to the end:
    exactly the results of an uninterrupted campaign, none lost, none committed twice."""
    import random

    n = 100
    traces = _traces(tmp_path / "t", n, sleep=0.08)
    refs = discover_traces(traces)
    implementation = "runner tests.test_pipeline_campaign:fake_runner"
    reference = tmp_path / "reference"
    run_campaign_local(
        refs, fake_runner, reference, campaign="k", implementation=implementation, durable=False
    )
    results = tmp_path / "r"
    cmd = [sys.executable, "-m", "redletter", "pipeline", "campaign", "--local",
           "--traces", str(traces), "--results", str(results),
           "--runner", "tests.test_pipeline_campaign:fake_runner", "--chunk", "4",
           "--name", "k"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    rng = random.Random(KILL_SEED)
    committed: list[int] = []
    for _ in range(20):
        journals = set(results.glob("results-*.ndjson"))
        proc = subprocess.Popen(
            cmd, cwd=ROOT, env=env, start_new_session=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        # A random moment once the run is at work (its first journal exists): between
        # two results, during a trace, or in the middle of writing a result line.
        deadline = time.monotonic() + 60
        while set(results.glob("results-*.ndjson")) <= journals and proc.poll() is None:
            assert time.monotonic() < deadline, f"seed {KILL_SEED}: the campaign never started"
            time.sleep(0.01)
        time.sleep(rng.uniform(0.0, 0.3))
        assert proc.poll() is None, f"seed {KILL_SEED}: the campaign ended before its kill"
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        committed.append(read_results(results).num_rows)
    assert committed[-1] < n, f"seed {KILL_SEED}: every trace was done before the last kill"
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, check=False)
    assert done.returncode in (0, 1), done.stderr.decode()[-2000:]

    def rows(d: Path) -> list[tuple[object, ...]]:
        t = read_results(d)
        cols = ("key", "id", "verdict", "steps", "detail", "actions")
        return sorted(zip(*(t[c].to_pylist() for c in cols), strict=True))

    assert rows(results) == rows(reference), f"seed {KILL_SEED}: the results differ"
    records, torn = read_journal(results)
    keys = [r["key"] for r in records]
    assert len(keys) == len(set(keys)) == n, (
        f"seed {KILL_SEED}: {len(keys) - len(set(keys))} results were committed twice"
    )
    assert all(r["key"] == result_key("k", implementation, r["digest"]) for r in records)
    assert committed == sorted(committed), f"seed {KILL_SEED}: a committed result was lost"
    print(f"seed {KILL_SEED}: 20 kills survived; committed after each: {committed}; torn {torn}")


def test_traces_of_the_same_content_share_one_result(tmp_path: Path) -> None:
    traces = _traces(tmp_path / "t", 2)
    (traces / "copy.itf.json").write_bytes((traces / "t001.itf.json").read_bytes())
    refs = discover_traces(traces)
    summary = run_campaign_local(refs, fake_runner, tmp_path / "r", implementation="x")
    assert (summary.traces, summary.ran, summary.verdicts) == (3, 2, (("pass", 3),))
    assert [r.id for r in refs] == ["copy", "t000", "t001"]
    assert TraceRef("a", "b").digest == ""
