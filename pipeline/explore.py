"""Breadth-first exploration of the Python model on Spark: one Spark job per level.

The frontier is an RDD of ``(fp, (enc, parent))`` pairs, hash-partitioned by ``fp``.
Each level is **one job** of two stages:

1. *expand* (``mapPartitionsWithIndex``): each frontier state is decoded, its
   invariants checked, and every successor generated with
   :func:`redletter.python_model.actions.fast_successors`, applying the cfg's
   CONSTRAINT exactly as :mod:`redletter.python_model.explore` does (TLC 2.15's
   semantics: every generated successor counts in ``total``; one outside the
   constraint is not a distinct state, is never expanded and has no edge, but its
   invariants are checked; action properties are checked on every step).  A
   successor inside the constraint is encoded and fingerprinted, and dropped at once
   when its fingerprint is in the **visited set**: a broadcast of 64-bit
   fingerprints while it has at most ``broadcast_limit`` of them (8 bytes each, sent
   once per level to each executor), else an anti-join (``subtractByKey``) against
   the visited fingerprints kept as an RDD partitioned like the frontier.  With the
   graph requested, the task also writes its states and edges with pyarrow
   (``states/``, ``edges/``, ``bfs/``, ``enc/``, one file per level and partition,
   named deterministically so a retried task overwrites its own files);
2. *dedupe* (``reduceByKey`` on ``fp``, same partitioner): one row per new state,
   the smallest parent kept; two different encodings under one fingerprint stop the
   run (``RL-INTERNAL-FP``).  The result is persisted as the next frontier and one
   ``collect`` brings back only the new fingerprints with their parents (16 bytes a
   state) and each partition's counts and violations.

No TLA+ text is built unless the graph is written (``canon``, the text every engine
is compared by, costs more than the successor generation).  Depth is the number of
levels of distinct states, as TLC counts it.

**Encoding.**  Between the stages of a job a state travels as the tuple of its
fields (:meth:`State.key`: nested tuples of ints, booleans, strings and ``None``),
serialised by PySpark between its own JVM and Python workers -- about four times
cheaper to decode than JSON (measured under load: 55 against 219 us a state), and
never written anywhere.  A state's ``fp`` is
:func:`redletter.python_model.engine.state_fingerprint` (BLAKE2b of the fields'
``repr``: the same in every process, no ``hash()``).  The tables of the graph
directory hold the compact JSON of the fields instead (``enc/``,
:func:`encode_state`): data, never code (pickle could execute code and is never used
on tables).  Two states with one fingerprint
are caught when both are new in the same level (the dedupe compares encodings); a
new state whose fingerprint equals an *earlier* level's would be taken for it, as
in TLC, whose visited set is fingerprints too (probability about ``n^2 / 2^65``,
2e-8 for a million states).

**Violations.**  The run stops after the first level whose expansion found one (as
TLC stops at the first): among several, the one with the smallest ``(late, kind,
fp, name)`` is reported.  Its shortest trace is rebuilt on the driver from the
fingerprints of the BFS parents (kept there, 16 bytes a state) by replaying the
model: from the initial state, each next state is the successor with the next
fingerprint.
"""

from __future__ import annotations

import json
import shutil
import time
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from redletter.errors import InputError, InternalError
from redletter.pipeline.canon import canon_state
from redletter.pipeline.ingest import GraphInfo, _write_info
from redletter.python_model.actions import (
    ACTION_NAMES,
    app_action_bound,
    fast_successors,
    init_states,
)
from redletter.python_model.config import ModelConfig
from redletter.python_model.engine import state_fingerprint
from redletter.python_model.explore import Step, Violation
from redletter.python_model.invariants import Checker
from redletter.python_model.state import State, to_tla

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "LevelReport",
    "SparkExploreResult",
    "decode_state",
    "encode_state",
    "explore_spark",
    "model_ref",
    "worker_model",
]

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


#: Keys of the per-partition records that carry counts, not states.
_STATS: Final = "~stats"
_FPS: Final = "~fps"


@dataclass(frozen=True)
class _LevelArgs:
    ref: ModelRef
    check: bool
    level: int
    graph_dir: str | None


def _checker(ref: ModelRef) -> Checker:
    got = _CHECKERS.get(ref)
    if got is None:
        got = _CHECKERS[ref] = Checker(worker_model(ref))
    return got


_CHECKERS: dict[ModelRef, Checker] = {}


def _write_parquet(path: Path, schema: Any, columns: dict[str, list[Any]]) -> None:
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]
    import pyarrow.parquet as pq  # type: ignore[import-untyped, unused-ignore]

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    pq.write_table(pa.table(columns, schema=schema), tmp)
    tmp.replace(path)  # a retried task overwrites its own file, never another's


def _expand(
    args: _LevelArgs, visited: Any
) -> Callable[[int, Iterable[Any]], Iterator[tuple[Any, Any]]]:
    """Stage 1 of a level (see the module docstring)."""

    def run(pidx: int, rows: Iterable[Any]) -> Iterator[tuple[Any, Any]]:
        cfg = worker_model(args.ref)
        checker = _checker(args.ref)
        constrained = bool(cfg.constraints)
        check = args.check
        check_props = check and bool(cfg.properties)
        seen = visited.value if visited is not None else frozenset()
        graph = args.graph_dir is not None
        total = 0
        edges = 0
        viols: list[tuple[int, str, int, str, tuple[Any, ...] | None]] = []
        st_fp: list[int] = []
        st_canon: list[str] = []
        st_parent: list[int | None] = []
        st_enc: list[str] = []
        e_src: list[int] = []
        e_act: list[str] = []
        e_dst: list[int] = []
        for fp, (key, parent) in rows:
            s = State(*key)
            if check:
                own = checker.violated_invariant(s)
                if own is not None:
                    viols.append((0, "invariant", fp, own, None))
            if graph:
                st_fp.append(fp)
                st_canon.append(canon_state(to_tla(cfg, s)))
                st_parent.append(parent)
                st_enc.append(encode_state(s))
            mine: set[tuple[str, int]] = set()
            for action, _raw, t in fast_successors(cfg, s):
                total += 1
                inmodel = not constrained or app_action_bound(cfg, t)
                if check and not inmodel:
                    name = checker.violated_invariant(t)
                    if name is not None:
                        viols.append((1, "invariant", fp, name, t.key()))
                if check_props:
                    name = checker.violated_property(s, t)
                    if name is not None:
                        viols.append((1, "action property", fp, name, t.key()))
                if not inmodel:
                    continue
                tfp = state_fingerprint(t)
                if graph and (ACTION_NAMES[action], tfp) not in mine:
                    mine.add((ACTION_NAMES[action], tfp))
                    e_src.append(fp)
                    e_act.append(ACTION_NAMES[action])
                    e_dst.append(tfp)
                if tfp not in seen:
                    yield tfp, (t.key(), fp)
            edges += len(mine)
        if graph and st_fp:
            import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]

            from redletter.pipeline.schemas import EDGES, STATES

            d = Path(str(args.graph_dir))
            name = f"part-{args.level:05d}-{pidx:05d}.parquet"
            model = cfg.name
            _write_parquet(
                d / "states" / name,
                STATES,
                {
                    "model": [model] * len(st_fp),
                    "fp": st_fp,
                    "canon": st_canon,
                    "initial": [args.level == 1] * len(st_fp),
                },
            )
            _write_parquet(
                d / "edges" / name,
                EDGES,
                {"model": [model] * len(e_src), "src": e_src, "action": e_act, "dst": e_dst},
            )
            _write_parquet(
                d / "bfs" / name,
                pa.schema([("fp", pa.int64()), ("depth", pa.int32()), ("parent", pa.int64())]),
                {"fp": st_fp, "depth": [args.level] * len(st_fp), "parent": st_parent},
            )
            _write_parquet(
                d / "enc" / name,
                pa.schema([("fp", pa.int64()), ("enc", pa.string())]),
                {"fp": st_fp, "enc": st_enc},
            )
        yield (_STATS, args.level, pidx), (total, edges, viols)

    return run


def _pick(a: Any, b: Any) -> Any:
    """Stage 2's reduce: one row per fingerprint, the smallest parent; a clash stops."""
    if isinstance(a[0], tuple):  # (state fields, parent)
        if a[0] != b[0]:
            raise RuntimeError(
                f"RL-INTERNAL-FP: two states share a 64-bit fingerprint: {a[0]!r} {b[0]!r}"
            )
        return a if (a[1] is None or (b[1] is not None and a[1] <= b[1])) else b
    return a  # the counts of one partition, twice only after a retry


def _summary(rows: Iterable[Any]) -> Iterator[Any]:
    """What the driver needs of the next frontier: fingerprints, parents, counts."""
    fps: array[int] = array("q")
    parents: array[int] = array("q")
    for key, value in rows:
        if isinstance(key, tuple):
            yield key, value
        else:
            fps.append(key)
            parents.append(value[1])
    yield _FPS, (fps.tobytes(), parents.tobytes())


# --------------------------------------------------------------------------- driver


def _fresh(out: Path) -> None:
    if out.exists():
        ours = (out / "graph.json").is_file() or (out / "explore.json").is_file()
        if not ours and any(out.iterdir()):
            raise InputError(
                f"{out}: exists and is not a graph directory; refusing to overwrite it",
                code="RL-INPUT-OUT",
            )
        shutil.rmtree(out)
    out.mkdir(parents=True)


def _trace(
    cfg: ModelConfig, parent: dict[int, int], last: int, extra: State | None
) -> tuple[Step, ...]:
    """A shortest trace to the state with fingerprint ``last`` (then ``extra``),
    replayed in the model along the BFS parents' fingerprints."""
    from redletter.python_model.explore import as_engine, path_steps

    chain: list[int] = []
    node: int | None = last
    while node is not None:
        chain.append(node)
        node = parent.get(node)
        if len(chain) > len(parent) + 1:  # pragma: no cover - parents form a tree
            raise InternalError("the BFS parents form a cycle", code="RL-INTERNAL-BFS")
    chain.reverse()
    by_fp = {state_fingerprint(s): s for s in init_states(cfg)}
    if chain[0] not in by_fp:
        raise InternalError(f"state {chain[0]} is not an initial state", code="RL-INTERNAL-BFS")
    path = [by_fp[chain[0]]]
    for want in chain[1:]:
        nxt = next(
            (t for _a, _r, t in fast_successors(cfg, path[-1]) if state_fingerprint(t) == want),
            None,
        )
        if nxt is None:
            raise InternalError(
                f"state {want} is no successor of its parent", code="RL-INTERNAL-BFS"
            )
        path.append(nxt)
    if extra is not None:
        path.append(extra)
    return tuple(path_steps(as_engine(cfg), path))


def explore_spark(
    spark: SparkSession,
    cfg: ModelConfig,
    out: str | Path,
    *,
    check: bool = True,
    graph: bool = True,
    max_depth: int | None = None,
    partitions: int | None = None,
    broadcast_limit: int = 2_000_000,
    on_level: Callable[[LevelReport], None] | None = None,
) -> SparkExploreResult:
    """Explore ``cfg`` breadth-first on Spark, one job per level, writing the graph
    directory ``out`` (with ``graph``; else only ``explore.json``).

    ``check``: evaluate the cfg's invariants and action properties and stop after the
    level where the first violation is found (``False``: explore everything, e.g. the
    graph of a must-fail model for the lemma checks).  ``max_depth`` bounds the levels;
    ``partitions`` defaults to twice the default parallelism; ``broadcast_limit``
    is the size of visited set up to which it is broadcast (see the module docstring).
    """
    from pyspark import StorageLevel

    start = time.perf_counter()
    out = Path(out)
    _fresh(out)
    model = cfg.name
    sc = spark.sparkContext
    sc.setJobDescription(f"explore {model}")
    nparts = partitions or 2 * _cores(sc.master or "local", sc.defaultParallelism)
    checker = Checker(cfg)
    constrained = bool(cfg.constraints)
    graph_dir = str(out.resolve()) if graph else None
    if graph:
        _empty_tables(out)

    total = 0
    init_rows: dict[int, tuple[Any, ...]] = {}
    violation: Violation | None = None
    for s in init_states(cfg):
        total += 1
        in_model = not constrained or app_action_bound(cfg, s)
        fp = state_fingerprint(s)
        if in_model and fp in init_rows:
            continue
        if in_model:
            init_rows[fp] = s.key()
        elif check and violation is None:  # an in-model one is checked in its level
            name = checker.violated_invariant(s)
            if name is not None:
                violation = Violation(name, "invariant", (Step("Init", {}, s),))
    ref = model_ref(cfg)
    frontier = sc.parallelize(
        [(fp, (key, None)) for fp, key in sorted(init_rows.items())], nparts
    ).partitionBy(nparts)
    visited: set[int] = set(init_rows)
    visited_rdds: list[Any] = []
    parent: dict[int, int] = {}
    levels: list[LevelReport] = []
    distinct, depth, new_n, n_edges = 0, 0, len(init_rows), 0
    persisted: list[Any] = []
    while new_n and violation is None and (max_depth is None or depth < max_depth):
        t_level = time.perf_counter()
        depth += 1
        distinct += new_n
        use_broadcast = len(visited) <= broadcast_limit
        bc = sc.broadcast(frozenset(visited)) if use_broadcast else None
        job = _expand(_LevelArgs(ref, check, depth, graph_dir), bc)
        candidates = frontier.mapPartitionsWithIndex(job, preservesPartitioning=False)
        reduced = candidates.reduceByKey(_pick, nparts)
        if not use_broadcast:  # the per-partition counts' keys are never fingerprints
            seen_rdd = sc.union(visited_rdds) if len(visited_rdds) > 1 else visited_rdds[0]
            reduced = reduced.subtractByKey(seen_rdd, nparts)
        nxt = reduced.persist(StorageLevel.MEMORY_AND_DISK)
        try:
            collected = nxt.mapPartitions(_summary).collect()
        except Exception as e:  # a clash raised in a task arrives wrapped by py4j
            if "RL-INTERNAL-FP" in str(e):
                line = next(x for x in str(e).splitlines() if "RL-INTERNAL-FP" in x)
                raise InternalError(
                    f"{model}: {line.split('RL-INTERNAL-FP: ', 1)[1]}; the exploration is"
                    " not exact",
                    code="RL-INTERNAL-FP",
                ) from None
            raise
        if bc is not None:
            bc.unpersist()
        new_fps: array[int] = array("q")
        viols: list[tuple[int, str, int, str, tuple[Any, ...] | None]] = []
        for key, value in collected:
            if key == _FPS:
                fps: array[int] = array("q")
                fps.frombytes(value[0])
                pars: array[int] = array("q")
                pars.frombytes(value[1])
                new_fps.extend(fps)
                parent.update(zip(fps, pars, strict=True))
            else:
                total += value[0]
                n_edges += value[1]
                viols.extend(value[2])
        if viols:
            _late, kind, src, name, venc = min(viols, key=lambda v: (v[0], v[1], v[2], v[3]))
            extra = State(*venc) if venc is not None else None
            violation = Violation(name, kind, _trace(cfg, parent, src, extra))
            new_n = 0
        else:
            new_n = len(new_fps)
            if use_broadcast:
                visited.update(new_fps)
            else:
                visited_rdds.append(
                    sc.parallelize([(fp, None) for fp in new_fps], nparts).persist()
                )
            if len(visited) > broadcast_limit and not visited_rdds:
                # switch to the anti-join: every fingerprint so far, partitioned
                visited_rdds.append(
                    sc.parallelize([(fp, None) for fp in visited], nparts).persist()
                )
        frontier = nxt.filter(lambda kv: not isinstance(kv[0], tuple))
        for old in persisted[:-1]:
            old.unpersist()
        persisted = [*persisted[-1:], nxt]
        levels.append(
            LevelReport(depth, distinct - sum(x.new for x in levels), distinct, total,
                        time.perf_counter() - t_level)
        )  # fmt: skip
        if on_level is not None:
            on_level(levels[-1])
    for old in persisted + visited_rdds:
        old.unpersist()
    (out / "explore.json").write_text(
        json.dumps({"model": model, "distinct": distinct, "total": total, "depth": depth}) + "\n",
        encoding="utf-8",
    )
    if graph:
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
        _write_info(out, info)
    return SparkExploreResult(
        model, distinct, total, depth, n_edges, time.perf_counter() - start, violation,
        tuple(levels),
    )  # fmt: skip


def _cores(master: str, default: int) -> int:
    """The cores of a ``local[N]`` master (``local[*]``: the machine's), else Spark's
    default parallelism: two partitions a core keep both busy when tasks differ."""
    import os
    import re

    m = re.fullmatch(r"local\[(\d+|\*)(?:,\d+)?\]", master)
    if m is None:
        return max(1, default) if master != "local" else 1
    return os.cpu_count() or 1 if m.group(1) == "*" else int(m.group(1))


def _empty_tables(out: Path) -> None:
    """Each table with one empty file, so a graph with no level still reads."""
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]

    from redletter.pipeline.schemas import EDGES, STATES

    empty = "part-00000-empty.parquet"
    _write_parquet(out / "states" / empty, STATES, {n: [] for n in STATES.names})
    _write_parquet(out / "edges" / empty, EDGES, {n: [] for n in EDGES.names})
    bfs = pa.schema([("fp", pa.int64()), ("depth", pa.int32()), ("parent", pa.int64())])
    _write_parquet(out / "bfs" / empty, bfs, {n: [] for n in bfs.names})
    enc = pa.schema([("fp", pa.int64()), ("enc", pa.string())])
    _write_parquet(out / "enc" / empty, enc, {n: [] for n in enc.names})
