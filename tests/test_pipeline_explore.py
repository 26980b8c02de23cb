"""Distributed BFS: exact counts against the manifest, the graph against the Python
explorer's, violations with their names, the state encoding."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from redletter.errors import InputError
from redletter.manifest import load_manifest
from redletter.pipeline.crosscheck import crosscheck_local
from redletter.pipeline.explore import decode_state, encode_state, explore_spark
from redletter.pipeline.ingest import read_graph_info, write_python_graph
from redletter.python_model.actions import init_states
from redletter.python_model.config import load_model
from redletter.python_model.explore import explore
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
def test_must_fail_model_names_its_invariant(spark: SparkSession, tmp_path: Path) -> None:
    cfg = load_model("MCNoChannelRecordingFailure", SPEC)
    result = explore_spark(spark, cfg, tmp_path / "g")
    single = explore(cfg)
    assert result.violation is not None and single.violation is not None
    assert result.violation.describe() == "Invariant Lemma0 is violated."
    assert result.violation.name == MANIFEST["MCNoChannelRecordingFailure"].violated
    # found at the same level as the single-process explorer: a shortest trace
    assert len(result.violation.trace) == len(single.violation.trace)
    assert result.violation.trace[0].action == "Init"


def test_out_must_not_be_a_foreign_directory(spark: SparkSession, tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    with pytest.raises(InputError) as e:
        explore_spark(spark, load_model("MCToken2", SPEC), tmp_path)
    assert e.value.message == (
        f"{tmp_path}: exists and is not a graph directory; refusing to overwrite it"
    )


@pytest.mark.slow
# CI time: `make test-long` runs it; test_counts_equal_the_manifest checks the default search's
# counts in CI
@pytest.mark.long
def test_the_visited_anti_join_gives_the_broadcasts_counts(
    spark: SparkSession, tmp_path: Path
) -> None:
    # a visited set of more than 100 fingerprints is no longer broadcast: levels 6 on
    # anti-join the candidates with the visited fingerprints kept as an RDD
    cfg = load_model("MCToken2", SPEC)
    result = explore_spark(spark, cfg, tmp_path / "g", graph=False, broadcast_limit=100)
    row = MANIFEST["MCToken2"]
    assert (result.distinct, result.total, result.depth) == (row.distinct, row.total, row.depth)
    assert result.violation is None and not (tmp_path / "g" / "states").exists()
