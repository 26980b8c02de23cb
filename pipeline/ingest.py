"""Ingest state graphs into graph directories (see :mod:`redletter.pipeline.schemas`).

Two stages, so that neither the driver nor one task holds a whole graph:

1. the driver streams the source (TLC's DOT dump through
   :func:`redletter.python_model.dot.iter_dot`, or the Python explorer's JSONL files) into
   ``DIR/raw/*.parquet`` in bounded batches (``batch_rows`` rows a row group) with
   pyarrow's ``ParquetWriter``: labels are kept raw, nothing is parsed;
2. a Spark job reads ``raw/`` back, parses the labels in partitions (memoised by
   :class:`redletter.pipeline.canon.LabelCanon`), and writes ``states/`` and the distinct
   ``edges/``; it then checks that every edge's ends have a state and that no
   fingerprint has two different states.

The Python explorer's file format (what ``ingest-python`` reads): a directory with

``states.jsonl``
    one JSON object a line: ``{"id": <int64>, "state": "<TLA+ text>", "initial":
    <bool>}`` where the text is what ``print_state``/``to_tla`` prints (any order of
    variables, any line wrapping);
``edges.jsonl``
    ``{"src": <id>, "action": "<ActionName>", "dst": <id>}`` one a line.

or, without JSON, call :func:`write_python_graph` with the states and edges in memory
(or as iterators), which writes a finished graph directory directly.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]
import pyarrow.parquet as pq  # type: ignore[import-untyped, unused-ignore]

from redletter.errors import InputError
from redletter.pipeline import schemas
from redletter.pipeline.canon import LabelCanon, canon_of_printed, canon_state
from redletter.python_model.dot import DotNode, iter_dot
from redletter.python_model.values import Value

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "GraphInfo",
    "escape_label",
    "ingest_dot",
    "ingest_python_jsonl",
    "parse_raw_states",
    "read_graph_info",
    "stream_dot_to_raw",
    "stream_jsonl_to_raw",
    "write_python_graph",
]

Progress = Callable[[int], None]  # called with the number of bytes read so far


@dataclass(frozen=True)
class GraphInfo:
    """``DIR/graph.json``: what a graph directory holds."""

    model: str
    source: str
    kind: str  # "tlc-dot" | "python-jsonl" | "python"
    state_lines: int
    edge_lines: int
    stuttering_lines: int
    states: int = -1  # distinct states (after stage 2)
    edges: int = -1  # distinct labelled edges (after stage 2)
    initial: int = -1


def read_graph_info(directory: str | Path) -> GraphInfo:
    """Read ``DIR/graph.json``; :class:`InputError` if it is not a graph directory."""
    path = Path(directory) / "graph.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return GraphInfo(**data)
    except FileNotFoundError:
        raise InputError(
            "not a graph directory (no graph.json): ingest it first with"
            " '.venv/bin/redletter pipeline ingest-dot' or 'ingest-python'",
            path=str(directory),
            code="RL-INPUT-GRAPH",
        ) from None
    except (ValueError, TypeError) as e:
        raise InputError(
            f"graph.json is malformed: {e}", path=str(path), code="RL-INPUT-GRAPH"
        ) from None


def _write_info(directory: Path, info: GraphInfo) -> None:
    tmp = directory / "graph.json.tmp"
    tmp.write_text(json.dumps(asdict(info), indent=2) + "\n", encoding="utf-8")
    tmp.replace(directory / "graph.json")


def escape_label(text: str) -> str:
    """TLC's DOT escaping of a state text (inverse of ``unescape_label``)."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


class _BatchWriter:
    """Rows buffered column-wise, flushed as one row group every ``batch_rows``."""

    def __init__(self, path: Path, schema: pa.Schema, batch_rows: int) -> None:
        self._writer = pq.ParquetWriter(str(path), schema, compression="zstd")
        self._schema = schema
        self._cols: dict[str, list[Any]] = {f.name: [] for f in schema}
        self._batch = batch_rows
        self.rows = 0

    def add(self, *values: Any) -> None:
        for col, v in zip(self._cols.values(), values, strict=True):
            col.append(v)
        self.rows += 1
        if len(next(iter(self._cols.values()))) >= self._batch:
            self.flush()

    def flush(self) -> None:
        if next(iter(self._cols.values())):
            self._writer.write_table(pa.Table.from_pydict(self._cols, schema=self._schema))
            for col in self._cols.values():
                col.clear()

    def close(self) -> None:
        self.flush()
        self._writer.close()


def _fresh_dir(out: Path) -> None:
    if out.exists():
        if not (out / "graph.json").exists() and any(out.iterdir()):
            raise InputError(
                "the output directory exists and is not a graph directory; refusing to"
                " overwrite it (give a new or empty directory)",
                path=str(out),
                code="RL-INPUT-GRAPH",
            )
        shutil.rmtree(out)
    (out / "raw").mkdir(parents=True)


def stream_dot_to_raw(
    dot: str | Path,
    model: str,
    out: str | Path,
    *,
    batch_rows: int = 4096,
    progress: Progress | None = None,
) -> GraphInfo:
    """Stage 1 for a DOT dump: ``raw/states.parquet`` and ``raw/edges.parquet``.

    Memory is bounded by ``batch_rows`` rows per table, whatever the file's size.
    """
    out = Path(out)
    _fresh_dir(out)
    states = _BatchWriter(out / "raw" / "states.parquet", schemas.RAW_STATES, batch_rows)
    edges = _BatchWriter(out / "raw" / "edges.parquet", schemas.EDGES, batch_rows * 4)
    stutter = 0
    read = 0
    try:
        for item in iter_dot(dot):
            if isinstance(item, DotNode):
                states.add(model, item.fp, item.initial, item.raw_label, item.line)
                read += len(item.raw_label) + 32
            else:
                read += 96
                if item.stuttering:
                    stutter += 1
                else:
                    edges.add(model, item.src, item.action, item.dst)
            if progress is not None and (states.rows + edges.rows) % 2048 == 0:
                progress(read)
    finally:
        states.close()
        edges.close()
    info = GraphInfo(
        model=model,
        source=str(dot),
        kind="tlc-dot",
        state_lines=states.rows,
        edge_lines=edges.rows,
        stuttering_lines=stutter,
    )
    _write_info(out, info)
    return info


def _jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        fh = path.open(encoding="utf-8")
    except OSError as e:
        raise InputError(
            f"cannot read: {e.strerror}", path=str(path), code="RL-INPUT-GRAPH"
        ) from None
    with fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except ValueError as e:
                raise InputError(
                    f"expected one JSON object a line: {e}",
                    path=str(path),
                    line=n,
                    code="RL-INPUT-GRAPH",
                ) from None
            if not isinstance(obj, dict):
                raise InputError(
                    "expected one JSON object a line", path=str(path), line=n, code="RL-INPUT-GRAPH"
                )
            yield n, obj


def _typed(obj: Mapping[str, Any], key: str, kind: type, path: Path, line: int) -> Any:
    value = obj.get(key)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise InputError(
            f'expected "{key}" to be {kind.__name__}, found {json.dumps(value)}',
            path=str(path),
            line=line,
            code="RL-INPUT-GRAPH",
        )
    return value


def stream_jsonl_to_raw(
    src: str | Path, model: str, out: str | Path, *, batch_rows: int = 4096
) -> GraphInfo:
    """Stage 1 for the Python explorer's ``states.jsonl`` + ``edges.jsonl``."""
    src, out = Path(src), Path(out)
    _fresh_dir(out)
    states = _BatchWriter(out / "raw" / "states.parquet", schemas.RAW_STATES, batch_rows)
    edges = _BatchWriter(out / "raw" / "edges.parquet", schemas.EDGES, batch_rows * 4)
    try:
        spath = src / "states.jsonl"
        for n, obj in _jsonl(spath):
            states.add(
                model,
                _typed(obj, "id", int, spath, n),
                _typed(obj, "initial", bool, spath, n),
                escape_label(_typed(obj, "state", str, spath, n)),
                n,
            )
        epath = src / "edges.jsonl"
        for n, obj in _jsonl(epath):
            edges.add(
                model,
                _typed(obj, "src", int, epath, n),
                _typed(obj, "action", str, epath, n),
                _typed(obj, "dst", int, epath, n),
            )
    finally:
        states.close()
        edges.close()
    info = GraphInfo(
        model=model,
        source=str(src),
        kind="python-jsonl",
        state_lines=states.rows,
        edge_lines=edges.rows,
        stuttering_lines=0,
    )
    _write_info(out, info)
    return info


_PARSED_DDL = schemas.STATES_DDL + ", vars map<string,string>, error string"


def _parse_partition(
    source: str, with_vars: bool
) -> Callable[[Iterable[Any]], Iterator[tuple[Any, ...]]]:
    def run(rows: Iterable[Any]) -> Iterator[tuple[Any, ...]]:
        memo = LabelCanon()
        for r in rows:
            try:
                printed = memo.variables(r.label, path=source, line=r.line)
            except InputError as e:
                yield (r.model, r.fp, "", r.initial, None, f"in the label of state {r.fp}: {e}")
                continue
            yield (
                r.model,
                r.fp,
                canon_of_printed(printed),
                r.initial,
                printed if with_vars else None,
                None,
            )

    return run


def parse_raw_states(spark: SparkSession, out: str | Path, *, with_vars: bool = False) -> GraphInfo:
    """Stage 2: parse ``raw/`` in Spark partitions into ``states/`` and ``edges/``."""
    from pyspark.sql import functions as F

    out = Path(out)
    info = read_graph_info(out)
    raw = spark.read.parquet(str(out / "raw" / "states.parquet"))
    # The raw file is small next to the parse work: spread it over every core (and
    # bound a task's rows) rather than parse it in the one partition Spark reads it as.
    slots = spark.sparkContext.defaultParallelism
    raw = raw.repartition(max(slots, -(-info.state_lines // 50_000)))
    parsed = spark.createDataFrame(
        raw.rdd.mapPartitions(_parse_partition(info.source, with_vars)), _PARSED_DDL
    ).persist()
    try:
        bad = parsed.filter(F.col("error").isNotNull()).select("error").limit(1).collect()
        if bad:
            raise InputError(bad[0].error, code="RL-INPUT-DOT")
        states = parsed.select(
            "model", "fp", "canon", "initial", *(["vars"] if with_vars else [])
        ).dropDuplicates(["fp", "canon"])
        clash = (
            states.groupBy("fp")
            .agg(F.countDistinct("canon").alias("n"), F.min("canon").alias("c"))
            .filter("n > 1")
            .limit(1)
            .collect()
        )
        if clash:
            raise InputError(
                f"state {clash[0].fp} has {clash[0].n} different labels (a fingerprint collision?)",
                path=info.source,
                code="RL-INPUT-DOT",
            )
        # A state line may repeat (initial once, non-initial once): keep one row.
        states = states.groupBy("model", "fp", "canon").agg(
            F.max("initial").alias("initial"),
            *([F.first("vars").alias("vars")] if with_vars else []),
        )
        states.write.mode("overwrite").parquet(str(out / "states"))
    finally:
        parsed.unpersist()
    states = spark.read.parquet(str(out / "states"))
    edges = spark.read.parquet(str(out / "raw" / "edges.parquet")).distinct()
    ends = edges.select(F.col("src").alias("fp")).union(edges.select(F.col("dst").alias("fp")))
    missing = ends.distinct().join(states.select("fp"), "fp", "left_anti")
    lost = missing.limit(1).collect()
    if lost:
        raise InputError(
            f"a transition refers to state {lost[0].fp}, which has no state line"
            f" ({missing.count()} such state(s))",
            path=info.source,
            code="RL-INPUT-DOT",
        )
    edges.write.mode("overwrite").parquet(str(out / "edges"))
    counts = states.agg(
        F.count(F.lit(1)).alias("n"), F.sum(F.col("initial").cast("int")).alias("i")
    ).collect()[0]
    n_edges = spark.read.parquet(str(out / "edges")).count()
    done = GraphInfo(
        **{
            **asdict(info),
            "states": int(counts.n),
            "edges": int(n_edges),
            "initial": int(counts.i or 0),
        }
    )
    _write_info(out, done)
    return done


def ingest_dot(
    spark: SparkSession,
    dot: str | Path,
    model: str,
    out: str | Path,
    *,
    batch_rows: int = 4096,
    with_vars: bool = False,
    progress: Progress | None = None,
) -> GraphInfo:
    """TLC's DOT dump -> graph directory ``out`` (both stages)."""
    stream_dot_to_raw(dot, model, out, batch_rows=batch_rows, progress=progress)
    return parse_raw_states(spark, out, with_vars=with_vars)


def ingest_python_jsonl(
    spark: SparkSession, src: str | Path, model: str, out: str | Path, *, with_vars: bool = False
) -> GraphInfo:
    """The Python explorer's JSONL files -> graph directory ``out`` (both stages)."""
    stream_jsonl_to_raw(src, model, out)
    return parse_raw_states(spark, out, with_vars=with_vars)


def write_python_graph(
    out: str | Path,
    model: str,
    states: Iterable[tuple[int, Mapping[str, Value], bool]],
    edges: Iterable[tuple[int, str, int]],
    *,
    batch_rows: int = 4096,
) -> GraphInfo:
    """The adapter for the Python explorer: ``(id, state, initial)`` and
    ``(src id, action, dst id)`` -> a finished graph directory, without Spark.

    ``state`` is any mapping of variable names to :mod:`redletter.python_model.values` values
    (e.g. ``redletter.python_model.values.parse_state(to_tla(s))`` or the explorer's own state
    converted by ``to_tla``); ids are the explorer's (or :func:`redletter.pipeline.canon.fp64`
    of the canonical text).  Rows are written in batches; nothing is kept, so
    ``edges`` should not repeat (``crosscheck`` takes distinct edges anyway).
    """
    out = Path(out)
    _fresh_dir(out)
    (out / "states").mkdir()
    (out / "edges").mkdir()
    sw = _BatchWriter(out / "states" / "part-0.parquet", schemas.STATES, batch_rows)
    ew = _BatchWriter(out / "edges" / "part-0.parquet", schemas.EDGES, batch_rows * 4)
    n_init = 0
    try:
        for sid, state, initial in states:
            sw.add(model, sid, canon_state(state), initial)
            n_init += initial
        for src, action, dst in edges:
            ew.add(model, src, action, dst)
    finally:
        sw.close()
        ew.close()
    info = GraphInfo(
        model=model,
        source="python",
        kind="python",
        state_lines=sw.rows,
        edge_lines=ew.rows,
        stuttering_lines=0,
        states=sw.rows,
        edges=ew.rows,
        initial=n_init,
    )
    _write_info(out, info)
    return info
