"""Breadth-first exploration of the Python model on Spark, level by level.

The frontier is a DataFrame ``(fp, enc)`` of encoded states.  Each level:

1. the frontier's partitions compute every successor (``mapPartitions`` over
   :func:`redletter.python_model.actions.fast_successors`), applying the cfg's CONSTRAINT
   exactly as :mod:`redletter.python_model.explore` does (TLC 2.15's semantics): every
   generated successor counts in ``total``; one outside the constraint is not a
   distinct state, is never expanded and has no edge, but its invariants are checked
   (it is never "seen"); action properties are checked on every step;
2. the in-constraint successors are anti-joined with the visited set: the rest,
   one row per fingerprint (the smallest parent kept), is the next frontier;
3. the new states are decoded in partitions, their invariants checked and their
   canonical text (:func:`redletter.pipeline.canon.canon_state`) computed; they are appended
   to ``states/`` and the level's distinct labelled edges to ``edges/``.

Every level is materialised with ``localCheckpoint()`` so the plan stays one level
deep.  Depth is the number of levels of distinct states, as TLC counts it.

**Encoding.**  A state travels as the compact JSON of :meth:`State.key` (nested
arrays of ints, booleans, strings and nulls; every field of the Python state is made
of exactly these), decoded by turning arrays back into tuples.  It is deterministic
(the same state always gives the same text, in any process: no ``hash()``, whose
value for ``None`` and strings differs between processes), about ten times shorter
than the TLA+ text and an order of magnitude faster to produce than
``canon_state(to_tla(...))``, and it is data, never code: a decoder that only builds
tuples cannot execute anything (pickle could, and is never used on tables).  A
state's ``fp`` is :func:`redletter.pipeline.canon.fp64` of that text; the run checks at the
end that no two encodings share a fingerprint.  ``canon`` (the TLA+ text every
engine is compared by) is computed once per distinct state, for ``states/``.

The graph directory (see :mod:`redletter.pipeline.schemas`): ``states/`` (STATES), ``edges/``
(EDGES), ``bfs/`` (``fp``, ``depth``, ``parent``: the BFS tree, for counterexamples),
``enc/`` (``fp``, ``enc``), ``graph.json`` (kind ``python-spark``) and
``explore.json`` (distinct, total, depth).

**Violations.**  The run stops after the first level whose expansion found one
(as TLC stops at the first): among several, the one with the smallest
``(kind, fp, name)`` is reported, with a shortest trace rebuilt from ``bfs/``.
The sequential explorer reports the first in its queue order; the name can differ
when one level violates two invariants, the level cannot.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from redletter.errors import InputError, InternalError
from redletter.pipeline.canon import canon_state, fp64
from redletter.pipeline.ingest import GraphInfo, _write_info
from redletter.pipeline.schemas import EDGES_DDL, STATES_DDL
from redletter.python_model.actions import (
    ACTION_NAMES,
    app_action_bound,
    fast_successors,
    init_states,
)
from redletter.python_model.config import ModelConfig
from redletter.python_model.explore import Step, Violation
from redletter.python_model.invariants import Checker
from redletter.python_model.state import State, to_tla

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "LevelReport",
    "SparkExploreResult",
    "decode_state",
    "encode_state",
    "explore_spark",
    "model_ref",
    "worker_model",
]

LEVEL_DDL = (
    "kind string, src bigint, action string, dst bigint, enc string, inmodel boolean,"
    " viol string, vkind string, canon string"
)
"""One level's rows: ``kind = "state"`` for each state of the frontier (``src`` its
fp, ``dst`` its BFS parent, ``canon`` its text, ``viol`` the invariant it violates),
``kind = "succ"`` for each generated transition (``enc`` the successor's encoding,
``inmodel`` whether it satisfies the constraint, ``viol``/``vkind`` a violated
invariant of a constraint-violating successor or a violated action property)."""


# --------------------------------------------------------------------------- encoding


def encode_state(s: State) -> str:
    """The compact deterministic JSON text of a state (see the module docstring)."""
    return json.dumps(s.key(), separators=(",", ":"))


def _tuples(v: Any) -> Any:
    if isinstance(v, list):
        return tuple(_tuples(x) for x in v)
    return v


def decode_state(text: str) -> State:
    """Inverse of :func:`encode_state`; :class:`InputError` on anything else."""
    try:
        fields = _tuples(json.loads(text))
        if not isinstance(fields, tuple) or len(fields) != 10:
            raise ValueError("expected the 10 fields of a state")
        return State(*fields)
    except (ValueError, TypeError) as e:
        raise InputError(f"not an encoded state: {e}", code="RL-INPUT-STATE") from None


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class LevelReport:
    """One BFS level: its depth (1 = initial states), states new at it, totals so far."""

    depth: int
    new: int
    distinct: int
    total: int
    seconds: float


@dataclass(frozen=True)
class SparkExploreResult:
    """What :func:`explore_spark` found; counts as TLC reports them."""

    model: str
    distinct: int
    total: int
    depth: int
    edges: int
    seconds: float
    violation: Violation | None
    levels: tuple[LevelReport, ...]

    @property
    def result(self) -> str:
        """``success`` or ``safety failure`` (the manifest's words)."""
        return "success" if self.violation is None else "safety failure"


# --------------------------------------------------------------------------- partitions

ModelRef = tuple[str, str]
"""How a model travels to the workers: ``(name, absolute spec directory)``.  The
model's values do not survive cloudpickle, so each Python worker loads the model
from the spec directory once (:func:`worker_model`); the directory must be
readable by every executor (local disk for ``local[*]``)."""

_MODELS: dict[ModelRef, ModelConfig] = {}


def model_ref(cfg: ModelConfig) -> ModelRef:
    """The :data:`ModelRef` of a loaded model."""
    return (cfg.name, str(Path(cfg.tla_path).resolve().parent))


def worker_model(ref: ModelRef) -> ModelConfig:
    """The model of ``ref``, loaded once per process."""
    cfg = _MODELS.get(ref)
    if cfg is None:
        from redletter.python_model.config import load_model

        cfg = _MODELS[ref] = load_model(ref[0], Path(ref[1]))
    return cfg


def _level_job(ref: ModelRef, check: bool) -> Callable[[Iterable[Any]], Iterator[tuple[Any, ...]]]:
    """The partition job of one level: check and print each frontier state, expand it."""

    def run(rows: Iterable[Any]) -> Iterator[tuple[Any, ...]]:
        cfg = worker_model(ref)
        constrained = bool(cfg.constraints)
        checker = Checker(cfg)
        check_props = check and bool(cfg.properties)
        for fp, enc, parent in rows:
            s = decode_state(enc)
            own = checker.violated_invariant(s) if check else None
            yield (
                "state",
                fp,
                None,
                parent,
                enc,
                True,
                own,
                "invariant" if own else None,
                canon_state(to_tla(cfg, s)),
            )
            for action, _raw, t in fast_successors(cfg, s):
                tenc = encode_state(t)
                inmodel = not constrained or app_action_bound(cfg, t)
                viol, vkind = None, None
                if check and not inmodel:
                    viol = checker.violated_invariant(t)
                    vkind = "invariant" if viol else None
                if check_props and viol is None:
                    viol = checker.violated_property(s, t)
                    vkind = "action property" if viol else None
                yield (
                    "succ",
                    fp,
                    ACTION_NAMES[action],
                    fp64(tenc),
                    tenc,
                    inmodel,
                    viol,
                    vkind,
                    None,
                )

    return run


# --------------------------------------------------------------------------- driver


def _fresh(out: Path) -> None:
    if out.exists():
        if not (out / "graph.json").is_file() and any(out.iterdir()):
            raise InputError(
                f"{out}: exists and is not a graph directory; refusing to overwrite it",
                code="RL-INPUT-OUT",
            )
        shutil.rmtree(out)
    out.mkdir(parents=True)


def _trace(cfg: ModelConfig, bfs: DataFrame, last: int, extra: State | None) -> tuple[Step, ...]:
    """A shortest trace to state ``last`` (then ``extra``), from the BFS tree
    ``bfs`` (``fp``, ``parent``, ``enc``)."""
    from array import array

    from pyspark.sql import functions as F

    from redletter.python_model.explore import _trace as model_trace
    from redletter.python_model.explore import as_engine

    chain: list[str] = []
    node: int | None = last
    while node is not None:
        row = bfs.filter(F.col("fp") == node).select("parent", "enc").collect()
        if not row:
            raise InternalError(f"state {node} is not in the BFS tree", code="RL-INTERNAL-BFS")
        chain.append(row[0].enc)
        node = row[0].parent
    chain.reverse()
    states = [decode_state(e) for e in chain]
    parent = array("q", [-1, *range(len(states) - 1)])
    return model_trace(as_engine(cfg), states, parent, len(states) - 1, extra)


def explore_spark(
    spark: SparkSession,
    cfg: ModelConfig,
    out: str | Path,
    *,
    check: bool = True,
    max_depth: int | None = None,
    on_level: Callable[[LevelReport], None] | None = None,
) -> SparkExploreResult:
    """Explore ``cfg`` breadth-first on Spark, writing the graph directory ``out``.

    ``check``: evaluate the cfg's invariants and action properties and stop after the
    level where the first violation is found (``False``: explore everything, e.g. the
    graph of a must-fail model for the lemma checks).  ``max_depth`` bounds the levels.
    """
    from functools import reduce

    from pyspark.sql import functions as F

    start = time.perf_counter()
    out = Path(out)
    _fresh(out)
    model = cfg.name
    spark.sparkContext.setJobDescription(f"explore {model}")
    checker = Checker(cfg)
    constrained = bool(cfg.constraints)
    coalesce_key = "spark.sql.adaptive.coalescePartitions.enabled"
    coalesce_was = str(spark.conf.get(coalesce_key, "true"))
    spark.conf.set(coalesce_key, "false")  # keep every level spread over the partitions

    total = 0
    init_rows: dict[int, str] = {}
    violation: Violation | None = None
    for s in init_states(cfg):
        total += 1
        in_model = not constrained or app_action_bound(cfg, s)
        enc = encode_state(s)
        fp = fp64(enc)
        if in_model and fp in init_rows:
            continue
        if in_model:
            init_rows[fp] = enc
        elif check and violation is None:  # an in-model one is checked in its level
            name = checker.violated_invariant(s)
            if name is not None:
                violation = Violation(name, "invariant", (Step("Init", {}, s),))
    frontier = spark.createDataFrame(
        [(fp, enc, None) for fp, enc in sorted(init_rows.items())],
        "fp bigint, enc string, parent bigint",
    ).localCheckpoint()
    job = _level_job(model_ref(cfg), check)
    level_dfs: list[DataFrame] = []
    visited: list[DataFrame] = []
    levels: list[LevelReport] = []
    distinct, depth, new_n = 0, 0, len(init_rows)
    try:
        while new_n and violation is None and (max_depth is None or depth < max_depth):
            t_level = time.perf_counter()
            depth += 1
            distinct += new_n
            visited.append(frontier.select("fp"))
            rows = spark.createDataFrame(
                frontier.rdd.mapPartitions(job), LEVEL_DDL
            ).localCheckpoint()
            level_dfs.append(rows.withColumn("depth", F.lit(depth)))
            stats = rows.agg(
                F.sum((F.col("kind") == "succ").cast("int")).alias("succ"),
                F.min(
                    F.when(
                        F.col("viol").isNotNull(),
                        F.struct(
                            (F.col("kind") == "succ").cast("int").alias("late"),
                            F.col("vkind"),
                            F.col("src"),
                            F.col("dst"),
                            F.col("viol"),
                            F.col("enc"),
                        ),
                    )
                ).alias("v"),
            ).collect()[0]
            total += int(stats.succ or 0)
            if stats.v is not None:
                v = stats.v
                tree = _tree(level_dfs)
                if v.late:  # a successor outside the constraint, or a step
                    trace = _trace(cfg, tree, v.src, decode_state(v.enc))
                else:  # a state of this level
                    trace = _trace(cfg, tree, v.src, None)
                violation = Violation(v.viol, v.vkind, trace)
            else:
                seen = reduce(lambda a, b: a.unionByName(b), visited)
                frontier = (
                    rows.filter((F.col("kind") == "succ") & F.col("inmodel"))
                    .select(F.col("dst").alias("fp"), "enc", F.col("src").alias("parent"))
                    .join(seen, "fp", "left_anti")
                    .groupBy("fp")
                    .agg(F.first("enc").alias("enc"), F.min("parent").alias("parent"))
                    .localCheckpoint()
                )
                new_n = frontier.count()
            levels.append(
                LevelReport(
                    depth,
                    distinct - sum(x.new for x in levels),
                    distinct,
                    total,
                    time.perf_counter() - t_level,
                )
            )
            if on_level is not None:
                on_level(levels[-1])
        n_edges = _write_graph(spark, model, out, level_dfs)
    finally:
        spark.conf.set(coalesce_key, coalesce_was)
    info = GraphInfo(
        model=model,
        source=f"pipeline explore {model}",
        kind="python-spark",
        state_lines=distinct,
        edge_lines=n_edges,
        stuttering_lines=0,
        states=distinct,
        edges=n_edges,
        initial=len(init_rows),
    )
    (out / "explore.json").write_text(
        json.dumps({"model": model, "distinct": distinct, "total": total, "depth": depth}) + "\n",
        encoding="utf-8",
    )
    _write_info(out, info)
    return SparkExploreResult(
        model,
        distinct,
        total,
        depth,
        n_edges,
        time.perf_counter() - start,
        violation,
        tuple(levels),
    )


def _tree(level_dfs: list[DataFrame]) -> DataFrame:
    """The BFS tree so far: ``fp``, ``parent``, ``enc`` of every distinct state."""
    from functools import reduce

    from pyspark.sql import functions as F

    states = reduce(lambda a, b: a.unionByName(b), level_dfs).filter(F.col("kind") == "state")
    return states.select(F.col("src").alias("fp"), F.col("dst").alias("parent"), "enc")


def _write_graph(spark: SparkSession, model: str, out: Path, level_dfs: list[DataFrame]) -> int:
    """Write ``states/``, ``edges/``, ``bfs/``, ``enc/`` from the levels; the edge count."""
    from functools import reduce

    from pyspark.sql import functions as F

    if not level_dfs:
        spark.createDataFrame([], STATES_DDL).write.parquet(str(out / "states"))
        spark.createDataFrame([], EDGES_DDL).write.parquet(str(out / "edges"))
        spark.createDataFrame([], "fp bigint, depth int, parent bigint").write.parquet(
            str(out / "bfs")
        )
        spark.createDataFrame([], "fp bigint, enc string").write.parquet(str(out / "enc"))
        return 0
    rows = reduce(lambda a, b: a.unionByName(b), level_dfs)
    states = rows.filter(F.col("kind") == "state")
    states.select(
        F.lit(model).alias("model"),
        F.col("src").alias("fp"),
        "canon",
        (F.col("depth") == 1).alias("initial"),
    ).write.parquet(str(out / "states"))
    states.select(F.col("src").alias("fp"), "depth", F.col("dst").alias("parent")).write.parquet(
        str(out / "bfs")
    )
    succ = rows.filter((F.col("kind") == "succ") & F.col("inmodel"))
    edges = succ.select(F.lit(model).alias("model"), "src", "action", "dst").distinct()
    edges.write.parquet(str(out / "edges"))
    states.select(F.col("src").alias("fp"), "enc").write.parquet(str(out / "enc"))
    # No fingerprint may stand for two different encodings.
    clash = (
        rows.filter(F.col("kind") == "succ")
        .groupBy("dst")
        .agg(F.countDistinct("enc").alias("n"))
        .filter("n > 1")
        .limit(1)
        .collect()
    )
    if clash:
        raise InternalError(
            f"{model}: two states share the 64-bit fingerprint {clash[0].dst}; the"
            " exploration is not exact",
            code="RL-INTERNAL-FP",
        )
    return int(spark.read.parquet(str(out / "edges")).count())
