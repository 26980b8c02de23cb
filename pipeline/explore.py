"""Breadth-first exploration of the Python model on Spark, levels as batches.

**Shape of a level.**  Fingerprints (64-bit, :func:`redletter.python_model.engine.
state_fingerprint`) are split into ``P`` partitions by ``fp mod P``.  Partition ``q``
owns the frontier states and the *visited set* of its fingerprints; both live in one
persisted RDD whose records are a handful of batches a partition, never a record a
state: ``(q, (FRONTIER, pickled [(fp, fields, parent), ...]))`` and ``(q, (VISITED,
the fingerprints as 8-byte integers))``.  A level is **one job** of two stages:

1. *expand* (a task a partition): each frontier state is decoded, its invariants
   checked, and every successor generated with
   :func:`redletter.python_model.actions.fast_successors`, applying the cfg's
   CONSTRAINT exactly as :mod:`redletter.python_model.explore` does (TLC 2.15's
   semantics: every generated successor counts in ``total``; one outside the
   constraint is not a distinct state, is never expanded and has no edge, but its
   invariants are checked; action properties are checked on every step).  The
   successors inside the constraint are deduplicated within the task (the smallest
   parent kept) and sent as **one batch per target partition** (``P`` records a
   task, each a pickled list), with the task's counts and violations;
2. *dedupe* (a task a partition): the batches for ``q`` meet ``q``'s visited set
   without a shuffle of the visited set -- the batches are partitioned by ``q``
   with the same partitioner as the persisted RDD, so Spark's union of the two is
   partition-aware and reads ``q``'s visited set where it is cached.  New
   fingerprints (not visited: :func:`pyarrow.compute.is_in`) become ``q``'s next
   frontier, sorted by fingerprint, the smallest parent kept; they are appended to
   its visited set, and their number is a record of its own (``NEW``), so that
   counting a level never unpickles it.  Two encodings under one fingerprint stop
   the run (``RL-INTERNAL-FP``).

The driver collects only counts: per partition, the new states and the expand
tasks' totals, edges and violations.  It keeps **no per-state map**: the BFS
parents are written by the expand tasks to ``bfs/`` (fingerprint, depth, parent:
one Parquet file per level and partition, named deterministically so a retried task
overwrites its own file), and a counterexample's chain is read back from there, one
level at a time.  With the graph requested, the same tasks also write ``states/``
(the canonical TLA+ text, the cross-check's currency), ``edges/`` and ``enc/``.

**Small levels on the driver.**  The first levels hold a handful of states: a Spark
job each would cost more than the work.  While the frontier has fewer than
``driver_frontier`` states (and at most ``driver_visited`` states have been seen),
the driver runs the very same expand and dedupe functions in-process, as one
partition; then the visited set and the frontier are split into the ``P``
partitions once and the run continues on Spark.  The counts and the files written
are the same either way (the tests compare the two).

**Encoding.**  Between the stages a state travels as the tuple of its fields
(:meth:`State.key`: nested tuples of ints, booleans, strings and ``None``) inside a
pickled batch -- between the kit's own Python workers, never written anywhere.  The
tables of the graph directory hold the compact JSON of the fields instead (``enc/``,
:func:`encode_state`): data, never code (pickle could execute code and is never used
on tables).  A new state whose fingerprint equals an *earlier* level's would be
taken for it, as in TLC, whose visited set is fingerprints too (probability about
``n^2 / 2^65``, 7e-7 for 5 million states); two different states with one
fingerprint that are both new in one level are caught.

**Violations.**  The run stops after the first level whose expansion found one (as
TLC stops at the first): among several, the one with the smallest ``(late, kind,
fp, name)`` is reported.  Its shortest trace is rebuilt on the driver by replaying
the model along the BFS parents read back from ``bfs/``: from the initial state,
each next state is the successor with the next fingerprint.
"""

from __future__ import annotations

import json
import pickle
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


#: Kinds of the records of the level RDD (see the module docstring).
_FRONTIER: Final = 0
_VISITED: Final = 1
_CANDIDATES: Final = 2
_STATS: Final = 3
_NEW: Final = 4  #: a partition's count of new states (so the driver never unpickles them)

Row = tuple[int, tuple[Any, ...], int | None]
"""A frontier state: ``(fingerprint, fields, parent's fingerprint or None)``."""

Found = tuple[int, str, int, str, tuple[Any, ...] | None]
"""A violation found while expanding: ``(late, kind, source fp, name, successor)``;
``late`` is 1 when the successor (``fields``) violates it, 0 for the source."""


@dataclass(frozen=True)
class _LevelArgs:
    ref: ModelRef
    check: bool
    level: int
    graph_dir: str
    graph: bool
    nparts: int


@dataclass(frozen=True)
class _Expanded:
    """What expanding one partition of a level gives: per target partition the new
    candidates ``{fp: (fields, parent)}``, and the counts."""

    targets: tuple[dict[int, tuple[tuple[Any, ...], int]], ...]
    total: int
    edges: int
    found: tuple[Found, ...]


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


def _clash(fp: int, a: tuple[Any, ...], b: tuple[Any, ...]) -> RuntimeError:
    # A plain RuntimeError: raised in a task it reaches the driver as py4j's text.
    return RuntimeError(
        f"RL-INTERNAL-FP: two states share the 64-bit fingerprint {fp}: {a!r} {b!r}"
    )


def _keep(
    best: dict[int, tuple[tuple[Any, ...], int]], fp: int, key: tuple[Any, ...], parent: int
) -> None:
    """Add a candidate to ``best``, in both stages alike: one fingerprint must carry
    one state (else :func:`_clash`), and the smallest parent is kept, so the BFS
    parents are the same whatever the order of the tasks."""
    old = best.get(fp)
    if old is None:
        best[fp] = (key, parent)
    else:
        if old[0] != key:
            raise _clash(fp, old[0], key)
        if parent < old[1]:
            best[fp] = (old[0], parent)


def _expand_rows(args: _LevelArgs, pidx: int, rows: list[Row]) -> _Expanded:
    """Stage 1 for one partition of a level (see the module docstring)."""
    cfg = worker_model(args.ref)
    checker = _checker(args.ref)
    constrained = bool(cfg.constraints)
    check = args.check
    check_props = check and bool(cfg.properties)
    graph = args.graph
    nparts = args.nparts
    total = 0
    edges = 0
    found: list[Found] = []
    best: dict[int, tuple[tuple[Any, ...], int]] = {}
    st_canon: list[str] = []
    st_enc: list[str] = []
    e_src: list[int] = []
    e_act: list[str] = []
    e_dst: list[int] = []
    for fp, key, _parent in rows:
        s = State(*key)
        if check:
            own = checker.violated_invariant(s)
            if own is not None:
                found.append((0, "invariant", fp, own, None))
        if graph:
            st_canon.append(canon_state(to_tla(cfg, s)))
            st_enc.append(encode_state(s))
        mine: set[tuple[str, int]] = set()
        for action, _raw, t in fast_successors(cfg, s):
            total += 1
            inmodel = not constrained or app_action_bound(cfg, t)
            if check and not inmodel:
                name = checker.violated_invariant(t)
                if name is not None:
                    found.append((1, "invariant", fp, name, t.key()))
            if check_props:
                name = checker.violated_property(s, t)
                if name is not None:
                    found.append((1, "action property", fp, name, t.key()))
            if not inmodel:
                continue
            tfp = state_fingerprint(t)
            mine.add((ACTION_NAMES[action], tfp))
            _keep(best, tfp, t.key(), fp)
        edges += len(mine)
        if graph:
            for act, tfp in sorted(mine):
                e_src.append(fp)
                e_act.append(act)
                e_dst.append(tfp)
    targets: list[dict[int, tuple[tuple[Any, ...], int]]] = [{} for _ in range(nparts)]
    for tfp, entry in best.items():
        targets[tfp % nparts][tfp] = entry
    _write_level(args, pidx, rows, st_canon, st_enc, (e_src, e_act, e_dst))
    return _Expanded(tuple(targets), total, edges, tuple(found))


def _write_level(
    args: _LevelArgs,
    pidx: int,
    rows: list[Row],
    canon: list[str],
    enc: list[str],
    edges: tuple[list[int], list[str], list[int]],
) -> None:
    """The BFS parents of a partition's frontier (always), and with the graph its
    states, encodings and edges, one file a table."""
    if not rows:
        return
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]

    from redletter.pipeline.schemas import EDGES, STATES

    d = Path(args.graph_dir)
    name = f"part-{args.level:05d}-{pidx:05d}.parquet"
    fps = [r[0] for r in rows]
    _write_parquet(
        d / "bfs" / name,
        _bfs_schema(),
        {"fp": fps, "depth": [args.level] * len(fps), "parent": [r[2] for r in rows]},
    )
    if not args.graph:
        return
    model = args.ref[0]
    _write_parquet(
        d / "states" / name,
        STATES,
        {
            "model": [model] * len(fps),
            "fp": fps,
            "canon": canon,
            "initial": [args.level == 1] * len(fps),
        },
    )
    src, act, dst = edges
    _write_parquet(
        d / "edges" / name,
        EDGES,
        {"model": [model] * len(src), "src": src, "action": act, "dst": dst},
    )
    _write_parquet(d / "enc" / name, pa.schema([("fp", pa.int64()), ("enc", pa.string())]),
                   {"fp": fps, "enc": enc})  # fmt: skip


def _dedupe_rows(
    visited: bytes, batches: Iterable[dict[int, tuple[tuple[Any, ...], int]]]
) -> tuple[bytes, list[Row]]:
    """Stage 2 for one partition: the candidates that are new (not in ``visited``,
    the partition's fingerprints as 8-byte integers), sorted, the smallest parent
    kept; and the visited set with them."""
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]
    import pyarrow.compute as pc  # type: ignore[import-untyped, unused-ignore]

    best: dict[int, tuple[tuple[Any, ...], int]] = {}
    for batch in batches:
        for fp, (key, parent) in batch.items():
            _keep(best, fp, key, parent)
    if not best:
        return visited, []
    cands = pa.array(list(best), pa.int64())
    if visited:
        seen = pa.Array.from_buffers(pa.int64(), len(visited) // 8, [None, pa.py_buffer(visited)])
        cands = pc.filter(cands, pc.invert(pc.is_in(cands, value_set=seen)))
    new = sorted(cands.to_pylist())
    rows: list[Row] = [(fp, best[fp][0], best[fp][1]) for fp in new]
    return visited + array("q", new).tobytes(), rows


_BFS_COLUMNS = (("fp", "int64"), ("depth", "int32"), ("parent", "int64"))


def _bfs_schema() -> Any:
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]

    return pa.schema([(n, getattr(pa, t)()) for n, t in _BFS_COLUMNS])


def _same(rows: Iterable[Any]) -> Iterable[Any]:
    return rows


def _ident(q: int) -> int:
    """The partition function: records are keyed by their partition already."""
    return q


def _expand_task(args: _LevelArgs) -> Callable[[int, Iterable[Any]], Iterator[tuple[int, Any]]]:
    def run(pidx: int, records: Iterable[Any]) -> Iterator[tuple[int, Any]]:
        rows: list[Row] = []
        for _q, (kind, value) in records:
            if kind == _FRONTIER:
                rows.extend(pickle.loads(value))
        got = _expand_rows(args, pidx, rows)
        for r, batch in enumerate(got.targets):
            if batch:
                yield r, (_CANDIDATES, pickle.dumps(batch, pickle.HIGHEST_PROTOCOL))
        yield pidx, (_STATS, (args.level, pidx, len(rows), got.total, got.edges, got.found))

    return run


def _dedupe_task(level: int) -> Callable[[int, Iterable[Any]], Iterator[tuple[int, Any]]]:
    def run(pidx: int, records: Iterable[Any]) -> Iterator[tuple[int, Any]]:
        visited = b""
        batches: list[dict[int, tuple[tuple[Any, ...], int]]] = []
        stats: list[Any] = []
        for _q, (kind, value) in records:
            if kind == _VISITED:
                visited = value
            elif kind == _CANDIDATES:
                batches.append(pickle.loads(value))
            elif kind == _STATS and value[0] == level:
                stats.append(value)
        visited, rows = _dedupe_rows(visited, batches)
        yield pidx, (_VISITED, visited)
        yield pidx, (_FRONTIER, pickle.dumps(rows, pickle.HIGHEST_PROTOCOL))
        yield pidx, (_NEW, len(rows))
        for st in stats:
            yield pidx, (_STATS, st)

    return run


def _summary(pidx: int, records: Iterable[Any]) -> Iterator[Any]:
    """What the driver needs of a level: per partition the new states, and the
    expand tasks' counts (the frontier itself stays in the executors)."""
    new = 0
    stats: list[Any] = []
    for _q, (kind, value) in records:
        if kind == _NEW:
            new += value
        elif kind == _STATS:
            stats.append(value)
    yield pidx, new, stats


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


def _chain(out: Path, depth: int, last: int) -> list[int]:
    """The fingerprints from an initial state to ``last`` (a state of level
    ``depth``), read back from ``bfs/`` one level at a time."""
    import pyarrow.compute as pc  # type: ignore[import-untyped, unused-ignore]
    import pyarrow.parquet as pq  # type: ignore[import-untyped, unused-ignore]

    chain = [last]
    for level in range(depth, 1, -1):
        files = sorted((out / "bfs").glob(f"part-{level:05d}-*.parquet"))
        parent = None
        for f in files:
            t = pq.read_table(f, columns=["fp", "parent"])
            hit = t.filter(pc.equal(t["fp"], chain[-1]))
            if hit.num_rows:
                parent = hit["parent"][0].as_py()
                break
        if parent is None:
            raise InternalError(
                f"state {chain[-1]} of level {level} is not in {out / 'bfs'}",
                code="RL-INTERNAL-BFS",
            )
        chain.append(parent)
    chain.reverse()
    return chain


def _trace(cfg: ModelConfig, chain: list[int], extra: State | None) -> tuple[Step, ...]:
    """A shortest trace along the fingerprints ``chain`` (then ``extra``), replayed in
    the model."""
    from redletter.python_model.explore import as_engine, path_steps

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


def _fp_clash(model: str, e: Exception) -> InternalError | None:
    """The clash a task (or the driver) raised, as the user's error; else None."""
    line = next((x for x in str(e).splitlines() if "RL-INTERNAL-FP: " in x), None)
    if line is None:
        return None
    return InternalError(
        f"{model}: {line.split('RL-INTERNAL-FP: ', 1)[1]}; the exploration is not exact",
        code="RL-INTERNAL-FP",
    )


@dataclass
class _Tally:
    """The driver's counts (no state is kept: see the module docstring)."""

    total: int = 0
    edges: int = 0
    distinct: int = 0


def explore_spark(
    spark: SparkSession,
    cfg: ModelConfig,
    out: str | Path,
    *,
    check: bool = True,
    graph: bool = True,
    max_depth: int | None = None,
    partitions: int | None = None,
    driver_frontier: int = 2_000,
    driver_visited: int = 20_000,
    on_level: Callable[[LevelReport], None] | None = None,
) -> SparkExploreResult:
    """Explore ``cfg`` breadth-first on Spark, one job per level, writing the graph
    directory ``out`` (with ``graph``; else only ``bfs/`` and ``explore.json``).

    ``check``: evaluate the cfg's invariants and action properties and stop after the
    level where the first violation is found (``False``: explore everything, e.g. the
    graph of a must-fail model for the lemma checks).  ``max_depth`` bounds the levels;
    ``partitions`` defaults to two a core.  Levels whose frontier
    has fewer than ``driver_frontier`` states run on the driver while it has seen at
    most ``driver_visited`` states (``0``: every level on Spark).
    """
    start = time.perf_counter()
    out = Path(out)
    _fresh(out)
    model = cfg.name
    sc = spark.sparkContext
    sc.setJobDescription(f"explore {model}")
    nparts = partitions or 2 * _cores(sc.master or "local", sc.defaultParallelism)
    checker = Checker(cfg)
    constrained = bool(cfg.constraints)
    if graph:
        _empty_tables(out)
    else:
        _write_parquet(out / "bfs" / "part-00000-empty.parquet", _bfs_schema(),
                       {n: [] for n, _ in _BFS_COLUMNS})  # fmt: skip

    tally = _Tally()
    init_rows: dict[int, tuple[Any, ...]] = {}
    violation: Violation | None = None
    for s in init_states(cfg):
        tally.total += 1
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
    levels: list[LevelReport] = []

    def args(level: int, parts: int) -> _LevelArgs:
        return _LevelArgs(ref, check, level, str(out.resolve()), graph, parts)

    def level_done(level: int, new: int, seconds: float) -> None:
        levels.append(LevelReport(level, new, tally.distinct, tally.total, seconds))
        if on_level is not None:
            on_level(levels[-1])

    def stop(found: list[Found], level: int) -> Violation:
        _late, kind, src, name, venc = min(found, key=lambda v: (v[0], v[1], v[2], v[3]))
        extra = State(*venc) if venc is not None else None
        return Violation(name, kind, _trace(cfg, _chain(out, level, src), extra))

    # ---- the first levels, on the driver: one partition, the same functions
    frontier: list[Row] = [(fp, key, None) for fp, key in sorted(init_rows.items())]
    visited = array("q", sorted(init_rows)).tobytes()
    depth = 0
    try:
        while (
            frontier
            and violation is None
            and (max_depth is None or depth < max_depth)
            and len(frontier) < driver_frontier
            and len(visited) // 8 <= driver_visited
        ):
            t_level = time.perf_counter()
            depth += 1
            width = len(frontier)
            tally.distinct += width
            got = _expand_rows(args(depth, 1), 0, frontier)
            tally.total += got.total
            tally.edges += got.edges
            if got.found:
                violation = stop(list(got.found), depth)
                frontier = []
            else:
                visited, frontier = _dedupe_rows(visited, got.targets)
            level_done(depth, width, time.perf_counter() - t_level)
    except RuntimeError as e:
        clash = _fp_clash(model, e)
        if clash is None:
            raise
        raise clash from None

    # ---- the rest on Spark: the frontier and visited set split into partitions once
    if frontier and violation is None and (max_depth is None or depth < max_depth):
        violation = _spark_levels(
            sc, nparts, frontier, visited, depth, max_depth, args, tally, level_done, stop, model
        )
    depth = len(levels)
    (out / "explore.json").write_text(
        json.dumps({"model": model, "distinct": tally.distinct, "total": tally.total,
                    "depth": depth}) + "\n",
        encoding="utf-8",
    )  # fmt: skip
    if graph:
        info = GraphInfo(
            model=model,
            source=f"pipeline explore {model}",
            kind="python-spark",
            state_lines=tally.distinct,
            edge_lines=tally.edges,
            stuttering_lines=0,
            states=tally.distinct,
            edges=tally.edges,
            initial=len(init_rows),
        )
        _write_info(out, info)
    return SparkExploreResult(
        model, tally.distinct, tally.total, depth, tally.edges, time.perf_counter() - start,
        violation, tuple(levels),
    )  # fmt: skip


def _spark_levels(
    sc: Any,
    nparts: int,
    frontier: list[Row],
    visited: bytes,
    depth: int,
    max_depth: int | None,
    args: Callable[[int, int], _LevelArgs],
    tally: _Tally,
    level_done: Callable[[int, int, float], None],
    stop: Callable[[list[Found], int], Violation],
    model: str,
) -> Violation | None:
    """The levels after ``depth`` on Spark, from the driver's ``frontier`` and
    ``visited`` (see the module docstring); the violation that stopped them."""
    from pyspark import StorageLevel

    parts_rows: list[list[Row]] = [[] for _ in range(nparts)]
    for row in frontier:
        parts_rows[row[0] % nparts].append(row)
    seen = array("q")
    seen.frombytes(visited)
    parts_seen: list[array[int]] = [array("q") for _ in range(nparts)]
    for fp in seen:
        parts_seen[fp % nparts].append(fp)
    records = [
        (q, (kind, blob))
        for q in range(nparts)
        for kind, blob in (
            (_VISITED, parts_seen[q].tobytes()),
            (_FRONTIER, pickle.dumps(parts_rows[q], pickle.HIGHEST_PROTOCOL)),
        )
    ]
    level_rdd = (
        sc.parallelize(records, nparts)
        .partitionBy(nparts, _ident)
        .mapPartitions(_same, preservesPartitioning=True)
        .persist(StorageLevel.MEMORY_AND_DISK)
    )
    new = len(frontier)
    violation: Violation | None = None
    while new and (max_depth is None or depth < max_depth):
        t_level = time.perf_counter()
        depth += 1
        width = new
        tally.distinct += width
        cands = (
            level_rdd.mapPartitionsWithIndex(_expand_task(args(depth, nparts)))
            .partitionBy(nparts, _ident)
            .mapPartitions(_same, preservesPartitioning=True)
        )
        merged = cands.union(level_rdd)
        if merged.getNumPartitions() != nparts:  # pragma: no cover - Spark's contract
            raise InternalError(
                "Spark did not keep the level's partitioning (a union of"
                f" {merged.getNumPartitions()} partitions, not {nparts})",
                code="RL-INTERNAL-BFS",
            )
        nxt = merged.mapPartitionsWithIndex(
            _dedupe_task(depth), preservesPartitioning=True
        ).persist(StorageLevel.MEMORY_AND_DISK)
        # Cut the lineage once the level is computed: else every job plans the stages
        # of all the levels before it (skipped, but planned), a cost growing a level.
        nxt.localCheckpoint()
        try:
            summary = nxt.mapPartitionsWithIndex(_summary).collect()
        except Exception as e:  # a clash raised in a task arrives wrapped by py4j
            clash = _fp_clash(model, e)
            if clash is None:
                raise
            raise clash from None
        level_rdd.unpersist()
        level_rdd = nxt
        found: list[Found] = []
        new = 0
        for _pidx, count, stats in summary:
            new += count
            for _level, _p, _n, total, edges, got in stats:
                tally.total += total
                tally.edges += edges
                found.extend(got)
        level_done(depth, width, time.perf_counter() - t_level)
        if found:
            violation = stop(found, depth)
            break
    level_rdd.unpersist()
    return violation


def _cores(master: str, default: int) -> int:
    """The cores of a ``local[N]`` master (``local[*]``: the machine's), else Spark's
    default parallelism."""
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
