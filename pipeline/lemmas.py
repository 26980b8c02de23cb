"""EWD 864's lemmas checked at scale, two of :mod:`redletter.python_model.lemmas`' three ways.

Over a graph directory (``pipeline explore`` writes one; any graph directory with
``states/`` works, TLC's too, its ``canon`` being parsed back), for every state and
every snapshot k that has completed in it (``Sf[k]`` defined):

1. **replay** (in partitions): ``whiteActs[k]`` replays from S0 to the snapshot
   state S*, ``redActs[k]`` from S* to Sf
   (:func:`redletter.python_model.lemmas.replay_verdicts`, the spec's Lemma0/Lemma1);
2. **reachability** (iterative joins): S* is reachable from S0, and Sf from S*, in
   the *application's own* state graph.  That graph (global application states,
   application actions only, :meth:`redletter.python_model.lemmas.AppGraph.successors`) is
   built breadth-first in partitions from every S0 and S* and written as Parquet
   (``APP/states``: ``fp``, ``enc``; ``APP/edges``: ``src``, ``action``, ``dst``);
   then one breadth-first search *per origin* runs for all origins at once, as joins
   of ``(origin, node)`` frontiers with the edges, anti-joined with the
   ``(origin, node)`` pairs visited (:func:`reachable_pairs`; :mod:`redletter.pipeline.reach`
   searches from one set of sources, so it cannot tell origins apart).  A partial
   state (a machine without a recorded state) is no application state: only
   itself reaches it, as in :class:`redletter.python_model.lemmas.AppGraph`.

The counts are those of :func:`redletter.python_model.lemmas.check_lemmas_everywhere` for the
same ways (``pairs``: (state, completed snapshot) pairs; failures per way and lemma).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from redletter.errors import InputError
from redletter.pipeline.canon import fp64
from redletter.pipeline.explore import ModelRef, decode_state, model_ref, worker_model
from redletter.python_model.config import ModelConfig
from redletter.python_model.invariants import snapshot
from redletter.python_model.state import GState, State, from_tla
from redletter.python_model.values import parse_state

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "LemmaReport",
    "build_app_graph",
    "check_lemmas_spark",
    "decode_gstate",
    "encode_gstate",
    "reachable_pairs",
]

PAIRS_DDL = (
    "fp bigint, snap int, s0 bigint, star bigint, sf bigint, s0_enc string, star_enc string,"
    " sf_enc string, replay0 string, replay1 string"
)
"""One row per (state, completed snapshot): the three global states (fp and
encoding) and the replay verdicts (``null`` when it holds, else why not)."""


def encode_gstate(g: GState) -> str:
    """Compact deterministic JSON of a global application state."""
    return json.dumps(g, separators=(",", ":"))


def _tuples(v: Any) -> Any:
    if isinstance(v, list):
        return tuple(_tuples(x) for x in v)
    return v


def decode_gstate(text: str) -> GState:
    """Inverse of :func:`encode_gstate`."""
    g = _tuples(json.loads(text))
    if not (isinstance(g, tuple) and len(g) == 2):
        raise InputError("not an encoded application state", code="RL-INPUT-STATE")
    return g  # type: ignore[no-any-return, unused-ignore]


@dataclass(frozen=True)
class LemmaReport:
    """What :func:`check_lemmas_spark` found."""

    model: str
    states: int  #: states in the graph
    completed_states: int  #: states with at least one completed snapshot
    pairs: int  #: (state, completed snapshot) pairs
    replay_failed: tuple[int, int]  #: pairs failing Lemma 0 / Lemma 1 by replay
    reach_failed: tuple[int, int]  #: pairs failing Lemma 0 / Lemma 1 by reachability
    app_states: int  #: application states in the application graph built
    app_edges: int
    first: tuple[tuple[str, int, int, int, str], ...]  #: (way, state fp, snap, lemma, why)
    seconds: float

    @property
    def all_pass(self) -> bool:
        return not any(self.replay_failed) and not any(self.reach_failed)

    def describe(self) -> list[str]:
        """The lines the CLI prints."""
        lines = [
            f"{self.model}: {self.states:,} states, {self.completed_states:,} with a completed"
            f" snapshot, {self.pairs:,} (state, snapshot) pairs checked",
        ]
        for way, f in (("replay", self.replay_failed), ("reachability", self.reach_failed)):
            lines.append(
                f"  {way:<13} Lemma 0: {self.pairs - f[0]:,} hold, {f[0]:,} fail;"
                f"  Lemma 1: {self.pairs - f[1]:,} hold, {f[1]:,} fail"
            )
        lines.append(f"  application graph: {self.app_states:,} states, {self.app_edges:,} edges")
        for way, fp, snap, lemma, why in self.first:
            lines.append(
                f"  first {way} violation: state {fp}, snapshot {snap}, Lemma {lemma}: {why}"
            )
        return lines


# --------------------------------------------------------------------------- partitions


def _state_of(cfg: ModelConfig, row: Any, from_enc: bool) -> State:
    if from_enc:
        return decode_state(row.enc)
    return from_tla(cfg, parse_state(row.canon))


def _pairs_job(
    ref: ModelRef, from_enc: bool
) -> Callable[[Iterable[Any]], Iterator[tuple[Any, ...]]]:
    def run(rows: Iterable[Any]) -> Iterator[tuple[Any, ...]]:
        from redletter.python_model.lemmas import replay_verdicts

        cfg = worker_model(ref)
        for row in rows:
            s = _state_of(cfg, row, from_enc)
            for k, sf in enumerate(s.sf):
                s0 = s.s0[k]
                if sf is None or s0 is None:
                    continue
                v0, v1 = replay_verdicts(cfg, s, k)
                enc = [encode_gstate(g) for g in (s0, snapshot(s, k), sf)]
                yield (
                    row.fp,
                    cfg.snaps[k],
                    *(fp64(e) for e in enc),
                    *enc,
                    None if v0.ok else v0.why,
                    None if v1.ok else v1.why,
                )

    return run


def _app_job(ref: ModelRef) -> Callable[[Iterable[Any]], Iterator[tuple[Any, ...]]]:
    def run(rows: Iterable[Any]) -> Iterator[tuple[Any, ...]]:
        from redletter.python_model.lemmas import AppGraph
        from redletter.python_model.state import ACT_KINDS

        graph = AppGraph(worker_model(ref))
        for fp, enc in rows:
            g = decode_gstate(enc)
            if any(x is None for x in g[0]):
                continue  # a partial state: no application state, no step
            for act, h in graph.successors(g):
                henc = encode_gstate(h)
                label = f"{ACT_KINDS[act[0]]} {act[1]} {act[2]} {act[3]}"
                yield (fp, label, fp64(henc), henc)

    return run


# --------------------------------------------------------------------------- jobs


def build_app_graph(
    spark: SparkSession,
    cfg: ModelConfig,
    origins: DataFrame,
    out: str | Path,
    *,
    max_levels: int = 10_000,
) -> tuple[int, int]:
    """The application graph reachable from ``origins`` (``fp``, ``enc``), breadth-first
    in partitions; written to ``out/states`` and ``out/edges``.  (states, edges)."""
    from functools import reduce

    from pyspark.sql import functions as F

    out = Path(out)
    job = _app_job(model_ref(cfg))
    frontier = origins.select("fp", "enc").dropDuplicates(["fp"]).localCheckpoint()
    levels: list[DataFrame] = [frontier]
    edge_levels: list[DataFrame] = []
    for _ in range(max_levels):
        step = spark.createDataFrame(
            frontier.rdd.mapPartitions(job), "src bigint, action string, dst bigint, enc string"
        ).localCheckpoint()
        edge_levels.append(step.select("src", "action", "dst"))
        seen = reduce(lambda a, b: a.unionByName(b), [x.select("fp") for x in levels])
        frontier = (
            step.select(F.col("dst").alias("fp"), "enc")
            .join(seen, "fp", "left_anti")
            .dropDuplicates(["fp"])
            .localCheckpoint()
        )
        if frontier.isEmpty():
            break
        levels.append(frontier)
    else:
        raise InputError(
            f"{cfg.name}: the application graph has more than {max_levels} levels",
            code="RL-INPUT-APPGRAPH",
        )
    reduce(lambda a, b: a.unionByName(b), levels).write.mode("overwrite").parquet(
        str(out / "states")
    )
    if edge_levels:
        reduce(lambda a, b: a.unionByName(b), edge_levels).distinct().write.mode(
            "overwrite"
        ).parquet(str(out / "edges"))
    n_states = spark.read.parquet(str(out / "states")).count()
    n_edges = spark.read.parquet(str(out / "edges")).count()
    return n_states, n_edges


def reachable_pairs(
    edges: DataFrame, pairs: DataFrame, *, max_depth: int | None = None
) -> DataFrame:
    """For each row ``(origin, target)`` of ``pairs``: is ``target`` reachable from
    ``origin`` over ``edges`` (``src``, ``dst``)?  Returns ``pairs`` with a boolean
    column ``reached``.

    One breadth-first search per distinct origin, all at once: the frontier is
    ``(origin, node)``, joined with the edges, anti-joined with the visited pairs,
    each level checkpointed; the search stops when every target is reached or
    nothing new is found.
    """
    from pyspark.sql import functions as F

    e = edges.select("src", "dst").distinct().localCheckpoint()
    wanted = pairs.select("origin", "target").distinct().localCheckpoint()
    visited = wanted.select("origin", F.col("origin").alias("node")).distinct().localCheckpoint()
    frontier = visited
    depth = 0
    while max_depth is None or depth < max_depth:
        missing = wanted.join(
            visited,
            (wanted.origin == visited.origin) & (wanted.target == visited.node),
            "left_anti",
        )
        if missing.isEmpty():
            break
        depth += 1
        step = (
            frontier.join(e, frontier.node == e.src)
            .select("origin", F.col("dst").alias("node"))
            .distinct()
            .join(visited, ["origin", "node"], "left_anti")
            .localCheckpoint()
        )
        if step.isEmpty():
            break
        visited = visited.unionByName(step).localCheckpoint()
        frontier = step
    hit = visited.select(
        F.col("origin").alias("h_origin"), F.col("node").alias("h_node"), F.lit(True).alias("hit")
    )
    return pairs.join(
        hit, (pairs.origin == hit.h_origin) & (pairs.target == hit.h_node), "left"
    ).select(*pairs.columns, F.coalesce(F.col("hit"), F.lit(False)).alias("reached"))


def check_lemmas_spark(
    spark: SparkSession,
    cfg: ModelConfig,
    graph: str | Path,
    *,
    app_dir: str | Path | None = None,
) -> LemmaReport:
    """Check both lemmas by replay and by reachability on every state of the graph
    directory ``graph``; the application graph goes to ``app_dir`` (default
    ``GRAPH/app``)."""
    from pyspark.sql import functions as F

    start = time.perf_counter()
    graph = Path(graph)
    if not (graph / "states").exists():
        raise InputError(
            "not a graph directory (no states/): run '.venv/bin/redletter pipeline explore' first",
            path=str(graph),
            code="RL-INPUT-GRAPH",
        )
    app = Path(app_dir) if app_dir is not None else graph / "app"
    from_enc = (graph / "enc").exists()
    states = spark.read.parquet(str(graph / ("enc" if from_enc else "states")))
    n_states = states.count()
    pairs = spark.createDataFrame(
        states.rdd.mapPartitions(_pairs_job(model_ref(cfg), from_enc)), PAIRS_DDL
    ).localCheckpoint()
    agg = pairs.agg(
        F.count(F.lit(1)).alias("pairs"),
        F.countDistinct("fp").alias("states"),
        F.count("replay0").alias("r0"),
        F.count("replay1").alias("r1"),
    ).collect()[0]
    origins = pairs.select(F.col("s0").alias("fp"), F.col("s0_enc").alias("enc")).unionByName(
        pairs.select(F.col("star").alias("fp"), F.col("star_enc").alias("enc"))
    )
    n_app, n_app_edges = build_app_graph(spark, cfg, origins, app)
    app_edges = spark.read.parquet(str(app / "edges"))
    goals = pairs.select(
        "fp",
        "snap",
        F.lit(0).alias("lemma"),
        F.col("s0").alias("origin"),
        F.col("star").alias("target"),
    ).unionByName(
        pairs.select(
            "fp",
            "snap",
            F.lit(1).alias("lemma"),
            F.col("star").alias("origin"),
            F.col("sf").alias("target"),
        )
    )
    # A partial state reaches only itself (it has no out-edges in the app graph, and
    # nothing but itself reaches a partial state, which is never a successor).
    reached = reachable_pairs(app_edges, goals).localCheckpoint()
    fails = {
        int(r.lemma): int(r.n)
        for r in reached.filter(~F.col("reached"))
        .groupBy("lemma")
        .count()
        .withColumnRenamed("count", "n")
        .collect()
    }
    first: list[tuple[str, int, int, int, str]] = []
    for lemma in (0, 1):
        col = f"replay{lemma}"
        row = pairs.filter(F.col(col).isNotNull()).orderBy("fp", "snap").limit(1).collect()
        if row:
            first.append(("replay", row[0].fp, row[0].snap, lemma, row[0][col]))
    why = (
        "the snapshot state is not reachable from the initial state",
        "the final state is not reachable from the snapshot state",
    )
    for lemma in (0, 1):
        row = (
            reached.filter(~F.col("reached") & (F.col("lemma") == lemma))
            .orderBy("fp", "snap")
            .limit(1)
            .collect()
        )
        if row:
            first.append(("reachability", row[0].fp, row[0].snap, lemma, why[lemma]))
    return LemmaReport(
        model=cfg.name,
        states=n_states,
        completed_states=int(agg.states),
        pairs=int(agg.pairs),
        replay_failed=(int(agg.r0), int(agg.r1)),
        reach_failed=(fails.get(0, 0), fails.get(1, 0)),
        app_states=n_app,
        app_edges=n_app_edges,
        first=tuple(first),
        seconds=time.perf_counter() - start,
    )
