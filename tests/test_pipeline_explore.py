"""Distributed BFS: exact counts against the manifest, the graph against the Python
explorer's, violations with their names, the state encoding."""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow.parquet as pq  # type: ignore[import-untyped, unused-ignore]
import pytest

from redletter.errors import InputError
from redletter.manifest import load_manifest
from redletter.pipeline.crosscheck import crosscheck_local
from redletter.pipeline.explore import _dedupe_rows, decode_state, encode_state, explore_spark
from redletter.pipeline.ingest import read_graph_info, write_python_graph
from redletter.python_model.actions import init_states
from redletter.python_model.config import load_model
from redletter.python_model.explore import explore
from redletter.python_model.parallel import explore_parallel
from redletter.python_model.state import to_tla

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "spec"
pytestmark = pytest.mark.spark
MANIFEST = {e.model: e for e in load_manifest(SPEC / "manifest.json").models}


@pytest.fixture(scope="module")
def spark() -> Iterator[SparkSession]:
    from redletter.pipeline.session import SparkConfig, get_session

    yield get_session(SparkConfig(master="local[2]", driver_memory="1g"))


def test_encoding_round_trips_every_state_of_a_model() -> None:
    for model in ("MCToken2", "MCDiffusing", "MCSeed"):
        cfg = load_model(model, SPEC)
        s = init_states(cfg)[0]
        text = encode_state(s)
        assert decode_state(text) == s
        assert encode_state(decode_state(text)) == text
    with pytest.raises(InputError) as e:
        decode_state("[1, 2]")
    assert e.value.message == "not an encoded state: expected the 10 fields of a state"


@pytest.mark.slow
@pytest.mark.parametrize(
    "model",
    # CI time: test_graph_equals_the_python_explorers compares the whole graph
    [
        pytest.param("MCToken2", marks=pytest.mark.long),
        pytest.param("MCSequential", marks=pytest.mark.long),
    ],
)
def test_counts_equal_the_manifest(spark: SparkSession, tmp_path: Path, model: str) -> None:
    cfg = load_model(model, SPEC)
    levels: list[int] = []
    result = explore_spark(spark, cfg, tmp_path / "g", on_level=lambda r: levels.append(r.new))
    row = MANIFEST[model]
    assert (result.distinct, result.total, result.depth) == (
        row.distinct,
        row.total,
        row.depth,
    )
    assert result.violation is None
    assert len(levels) == row.depth and sum(levels) == row.distinct
    info = read_graph_info(tmp_path / "g")
    assert (info.states, info.initial) == (row.distinct, 1)


@pytest.mark.slow
def test_graph_equals_the_python_explorers(spark: SparkSession, tmp_path: Path) -> None:
    cfg = load_model("MCToken2", SPEC)
    explore_spark(spark, cfg, tmp_path / "spark")
    g = explore(cfg, graph=True).graph
    assert g is not None
    init = set(g.initial)
    write_python_graph(
        tmp_path / "python",
        "MCToken2",
        ((i, to_tla(cfg, s), i in init) for i, s in enumerate(g.states)),
        g.edges(),
    )
    report = crosscheck_local(tmp_path / "spark", tmp_path / "python", "MCToken2")
    assert report.matches, report.problems
    assert report.counts[0].edges == report.counts[1].edges > 0


@pytest.mark.slow
# on the driver (the default: its first levels are small) and with every level on Spark:
# the trace's chain is read back from bfs/ either way
@pytest.mark.parametrize("driver_frontier", [2_000, 0])
def test_must_fail_model_names_its_invariant(
    spark: SparkSession, tmp_path: Path, driver_frontier: int
) -> None:
    cfg = load_model("MCNoChannelRecordingFailure", SPEC)
    result = explore_spark(spark, cfg, tmp_path / "g", driver_frontier=driver_frontier)
    single = explore(cfg)
    assert result.violation is not None and single.violation is not None
    assert result.violation.describe() == "Invariant Lemma0 is violated."
    assert result.violation.name == MANIFEST["MCNoChannelRecordingFailure"].violated
    # found at the same level as the single-process explorer: a shortest trace
    assert len(result.violation.trace) == len(single.violation.trace)
    assert result.violation.trace[0].action == "Init"
    # the smallest parent kept, the same violation chosen: `explore --workers 2`'s trace
    parallel = explore_parallel("MCNoChannelRecordingFailure", SPEC, workers=2)
    assert parallel.violation is not None
    assert parallel.violation.trace == result.violation.trace


def test_out_must_not_be_a_foreign_directory(spark: SparkSession, tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    with pytest.raises(InputError) as e:
        explore_spark(spark, load_model("MCToken2", SPEC), tmp_path)
    assert e.value.message == (
        f"{tmp_path}: exists and is not a graph directory; refusing to overwrite it"
    )


@pytest.mark.slow
def test_every_level_on_spark_gives_the_driver_levels_results(
    spark: SparkSession, tmp_path: Path
) -> None:
    # the default runs MCToken2's first levels on the driver (fewer than 2,000 states);
    # driver_frontier=0 runs every level on Spark; 3 partitions, so that the driver's
    # split of its frontier and visited set is not a power of two's
    cfg = load_model("MCToken2", SPEC)
    got = {}
    for name, kw in (("driver", {}), ("spark", {"driver_frontier": 0, "partitions": 3})):
        r = explore_spark(spark, cfg, tmp_path / name, graph=False, **kw)  # type: ignore[arg-type]
        bfs = pq.read_table(tmp_path / name / "bfs").to_pylist()
        got[name] = (r.distinct, r.total, r.depth, r.edges, [x.new for x in r.levels], bfs)
        assert not (tmp_path / name / "states").exists()
    row = MANIFEST["MCToken2"]
    driver, on_spark = got["driver"], got["spark"]
    assert driver[:3] == (row.distinct, row.total, row.depth)
    assert driver[:5] == on_spark[:5]
    key = lambda r: (r["depth"], r["fp"])  # noqa: E731
    assert sorted(driver[5], key=key) == sorted(on_spark[5], key=key)
    assert len(driver[5]) == row.distinct


def test_two_states_under_one_fingerprint_stop_the_dedupe() -> None:
    # the dedupe of a level compares the fields of candidates that share a fingerprint
    a, b = (1, (2,)), (1, (3,))
    with pytest.raises(RuntimeError) as e:
        _dedupe_rows(b"", [{7: (a, 10)}, {7: (b, 11)}])
    assert str(e.value) == (
        "RL-INTERNAL-FP: two states share the 64-bit fingerprint 7: (1, (2,)) (1, (3,))"
    )
    visited, rows = _dedupe_rows(array("q", [5]).tobytes(), [{5: (a, 1), 7: (a, 3)}, {7: (a, 2)}])
    assert rows == [(7, a, 2)]  # 5 was visited; 7 keeps its smallest parent
    assert array("q", visited).tolist() == [5, 7]


@pytest.mark.slow
@pytest.mark.long
@pytest.mark.timeout(7200)
def test_a_model_too_big_for_one_capped_process_runs_on_bounded_spark(tmp_path: Path) -> None:
    """docs/spark.md's run: MCTokenComplete3Huge (about 7 million states) to the end on
    Spark with a 1 GiB driver and Python workers capped at 1 GiB each, with the
    manifest's counts.  Through the bench's own child, so the figures it prints are
    those of this code path."""
    import json
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_pipeline.py"), "--one",
         "explore-spark-capped", "-", "MCTokenComplete3Huge", "local[2]", "1g",
         str(tmp_path / "big"), "1024", "16"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    row = MANIFEST["MCTokenComplete3Huge"]
    assert row.suite == "large" and row.distinct >= 5_000_000
    assert got["counts"] == [row.distinct, row.total, row.depth]
    assert got["violation"] is None
