"""Reachability and shortest paths by iterative joins, on a toy graph."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from redletter.pipeline.reach import PathStep, reachable, shortest_paths

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

pytestmark = pytest.mark.spark

# 1 -a-> 2 -b-> 3 -c-> 1 (cycle), 1 -d-> 4, 4 -e-> 3, 5 -f-> 6 (not reachable from 1)
EDGES = [(1, "a", 2), (2, "b", 3), (3, "c", 1), (1, "d", 4), (4, "e", 3), (5, "f", 6)]


@pytest.fixture(scope="module")
def spark() -> Iterator[SparkSession]:
    from redletter.pipeline.session import SparkConfig, get_session

    yield get_session(SparkConfig(master="local[2]", driver_memory="1g"))


@pytest.fixture(scope="module")
def edges(spark: SparkSession) -> DataFrame:
    return spark.createDataFrame(EDGES, "src bigint, action string, dst bigint")


def _nodes(spark: SparkSession, *ids: int) -> DataFrame:
    return spark.createDataFrame([(i,) for i in ids], "node bigint")


def test_reachable_with_distances(spark: SparkSession, edges: DataFrame) -> None:
    levels: list[tuple[int, int]] = []
    got = reachable(edges, _nodes(spark, 1), on_level=lambda lv, n: levels.append((lv, n)))
    assert sorted((r.node, r.dist) for r in got.collect()) == [(1, 0), (2, 1), (3, 2), (4, 1)]
    assert levels == [(0, 1), (1, 2), (2, 1), (3, 0)]


def test_reachable_bounded_and_from_two_sources(spark: SparkSession, edges: DataFrame) -> None:
    got = reachable(edges, _nodes(spark, 1), max_depth=1)
    assert sorted(r.node for r in got.collect()) == [1, 2, 4]
    both = reachable(edges, _nodes(spark, 5, 3))
    assert sorted((r.node, r.dist) for r in both.collect()) == [
        (1, 1), (2, 2), (3, 0), (4, 2), (5, 0), (6, 1)
    ]  # fmt: skip


def test_shortest_paths(spark: SparkSession, edges: DataFrame) -> None:
    paths = shortest_paths(edges, _nodes(spark, 1), [3, 6, 1])
    # 3 is reached at level 2 via 2 (b) and via 4 (e): the smaller parent (2) is kept.
    assert paths[3] == (PathStep(1, None), PathStep(2, "a"), PathStep(3, "b"))
    assert paths[1] == (PathStep(1, None),)
    assert 6 not in paths
