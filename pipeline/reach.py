"""Reachability and shortest paths by iterative joins (graphframes' jar cannot be had).

Breadth-first, level by level: the frontier is joined with the edges, the states
already visited are removed with a left anti-join, and the new level is added to
the visited set.  Each level is materialised with ``localCheckpoint()`` so the plan
(lineage) stays one level deep however long the search runs.

Edge tables have columns ``src``, ``dst`` (and ``action`` for paths); node tables a
column ``node``.  Node ids are whatever the graph uses (fingerprints here).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["PathStep", "bfs_tree", "path_to", "reachable", "shortest_paths"]

LevelCallback = Callable[[int, int], None]  # (level, states new at that level)


def reachable(
    edges_df: DataFrame,
    sources_df: DataFrame,
    *,
    max_depth: int | None = None,
    on_level: LevelCallback | None = None,
) -> DataFrame:
    """Every node reachable from ``sources_df.node`` (sources included), with ``dist``.

    Returns a DataFrame ``(node, dist)``: ``dist`` is the length of a shortest path
    from some source.  ``max_depth`` bounds the number of levels (``None``: to the
    fixpoint).
    """
    tree = bfs_tree(edges_df, sources_df, max_depth=max_depth, on_level=on_level)
    return tree.select("node", "dist")


def bfs_tree(
    edges_df: DataFrame,
    sources_df: DataFrame,
    *,
    max_depth: int | None = None,
    on_level: LevelCallback | None = None,
    targets_df: DataFrame | None = None,
) -> DataFrame:
    """The BFS tree: ``(node, dist, parent, action)``, one row per reached node.

    ``parent``/``action`` name the step that first reached the node (``null`` for
    sources); among several parents at the same level the smallest
    ``(parent, action)`` is kept, so the tree is deterministic.  With ``targets_df``
    (column ``node``) the search stops at the first level by which every target has
    been reached.
    """
    from pyspark.sql import functions as F

    edges = edges_df.select(
        F.col("src"),
        F.col("dst"),
        (F.col("action") if "action" in edges_df.columns else F.lit(None))
        .cast("string")
        .alias("action"),
    )
    visited = (
        sources_df.select(F.col("node"))
        .distinct()
        .select(
            "node",
            F.lit(0).alias("dist"),
            F.lit(None).cast(edges.schema["src"].dataType).alias("parent"),
            F.lit(None).cast("string").alias("action"),
        )
        .localCheckpoint()
    )
    frontier = visited.select("node")
    wanted = targets_df.select("node").distinct().localCheckpoint() if targets_df else None
    level = 0
    if on_level is not None:
        on_level(0, visited.count())
    while max_depth is None or level < max_depth:
        if wanted is not None and wanted.join(visited, "node", "left_anti").isEmpty():
            break
        level += 1
        step = (
            frontier.join(edges, frontier.node == edges.src)
            .select(F.col("dst").alias("node"), F.col("src").alias("parent"), "action")
            .join(visited.select("node"), "node", "left_anti")
            .groupBy("node")
            .agg(F.min(F.struct("parent", "action")).alias("p"))
            .select(
                "node",
                F.lit(level).alias("dist"),
                F.col("p.parent").alias("parent"),
                F.col("p.action").alias("action"),
            )
            .localCheckpoint()
        )
        new = step.count()
        if on_level is not None:
            on_level(level, new)
        if new == 0:
            break
        visited = visited.unionByName(step).localCheckpoint()
        frontier = step.select("node")
    return visited


@dataclass(frozen=True)
class PathStep:
    """One step of a path: ``action`` led from the previous node to ``node``
    (``action`` is ``None`` for the first node, a source)."""

    node: Any
    action: str | None


def path_to(tree: DataFrame, targets: Sequence[Any]) -> dict[Any, tuple[PathStep, ...]]:
    """Walk the BFS tree back from each target: its shortest path from a source.

    One small job per level for all targets together.  Unreached targets are absent.
    """
    from pyspark.sql import functions as F

    paths: dict[Any, list[PathStep]] = {}
    cursor: dict[Any, Any] = {}  # target -> node still to resolve
    for t in dict.fromkeys(targets):
        cursor[t] = t
        paths[t] = []
    reached: set[Any] = set()
    while cursor:
        rows = {
            r.node: r for r in tree.filter(F.col("node").isin(list(set(cursor.values())))).collect()
        }
        nxt: dict[Any, Any] = {}
        for t, node in cursor.items():
            row = rows.get(node)
            if row is None:
                continue  # not reached from any source
            paths[t].append(PathStep(node, row.action))
            if row.parent is None:
                reached.add(t)
            else:
                nxt[t] = row.parent
        cursor = nxt
    return {t: tuple(reversed(paths[t])) for t in paths if t in reached}


def shortest_paths(
    edges_df: DataFrame,
    sources_df: DataFrame,
    targets: Sequence[Any],
    *,
    max_depth: int | None = None,
) -> dict[Any, tuple[PathStep, ...]]:
    """A shortest path from some source to each target (targets not reached: absent).

    The search stops as soon as every target is reached.
    """
    spark = edges_df.sparkSession
    targets_df = spark.createDataFrame(
        [(t,) for t in dict.fromkeys(targets)], schema=edges_df.select("src").schema
    ).withColumnRenamed("src", "node")
    tree = bfs_tree(edges_df, sources_df, max_depth=max_depth, targets_df=targets_df)
    return path_to(tree, targets)
