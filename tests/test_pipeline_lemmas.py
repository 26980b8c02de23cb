"""Lemma checks at scale equal the single-process checks (replay and reachability)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from redletter.pipeline.explore import explore_spark
from redletter.pipeline.lemmas import (
    check_lemmas_spark,
    decode_gstate,
    encode_gstate,
    reachable_pairs,
)
from redletter.python_model.config import load_model
from redletter.python_model.lemmas import check_lemmas_everywhere

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SPEC = Path(__file__).resolve().parent.parent / "spec"
pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def spark() -> Iterator[SparkSession]:
    from redletter.pipeline.session import SparkConfig, get_session

    yield get_session(SparkConfig(master="local[2]", driver_memory="1g"))


def test_gstate_encoding_round_trips() -> None:
    g = (((True, 1, 0), None), ((3, 1), ()))
    assert decode_gstate(encode_gstate(g)) == g


def test_reachable_pairs_tells_origins_apart(spark: SparkSession) -> None:
    edges = spark.createDataFrame([(1, 2), (2, 3), (4, 5)], "src bigint, dst bigint")
    pairs = spark.createDataFrame(
        [(1, 3), (4, 3), (4, 5), (3, 1), (6, 6)], "origin bigint, target bigint"
    )
    got = {(r.origin, r.target): r.reached for r in reachable_pairs(edges, pairs).collect()}
    assert got == {(1, 3): True, (4, 3): False, (4, 5): True, (3, 1): False, (6, 6): True}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("model", "passes"),
    [
        pytest.param("MCToken2", True, marks=pytest.mark.long),  # CI time
        ("MCNoChannelRecordingFailure", False),
    ],
)
def test_equal_to_single_process(
    spark: SparkSession, tmp_path: Path, model: str, passes: bool
) -> None:
    cfg = load_model(model, SPEC)
    explore_spark(spark, cfg, tmp_path / "g", check=False)  # every state, no stop
    report = check_lemmas_spark(spark, cfg, tmp_path / "g")
    single = check_lemmas_everywhere(cfg)
    assert (report.states, report.completed_states, report.pairs) == (
        single.states,
        single.completed_states,
        single.pairs,
    )
    assert list(report.replay_failed) == single.failed["replay"]
    assert list(report.reach_failed) == single.failed["reachability"]
    assert report.all_pass == passes == single.all_pass
    assert report.pairs > 0 and report.app_states > 0
    if not passes:
        assert {w for w, *_ in report.first} == {"replay", "reachability"}
        assert (tmp_path / "g" / "app" / "edges").is_dir()
