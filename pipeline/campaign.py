"""Conformance campaigns: a table of traces run in Spark partitions, resumable.

A campaign runs every trace of a table (``id``, ``path`` of an ITF file) through a
runner ``run_trace(path) -> {"verdict", "steps", "seconds", "detail"}`` (optionally
``"actions"``: the action names the trace exercised, for the coverage table).  The
traces not yet done are split into partitions of ``chunk`` traces; each partition,
when all its traces have run, writes its results as one Parquet file in the results
directory, atomically (``.tmp`` file, fsync, rename).  So a campaign killed at any
moment (``kill -9`` included) loses at most the partitions that were running, and
the next run with the same results directory skips every trace that has a result
and runs the rest.  Reading results keeps one row per trace id (the earliest
finished), in case a partition was ever written twice (a task retried after its
file was renamed, or a worker that outlived a killed driver).

The results directory must be visible to every executor (local disk for
``local[*]``; a shared file system on a cluster).
"""

from __future__ import annotations

import importlib
import math
import os
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]
import pyarrow.compute as pc  # type: ignore[import-untyped, unused-ignore]
import pyarrow.parquet as pq  # type: ignore[import-untyped, unused-ignore]

from redletter.errors import InputError
from redletter.pipeline import schemas

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "VERDICTS",
    "CampaignSummary",
    "Runner",
    "TraceRef",
    "discover_traces",
    "load_runner",
    "read_results",
    "run_campaign",
    "summarize",
]

Runner = Callable[[str], Mapping[str, Any]]
VERDICTS = ("pass", "fail", "unknown")  # plus "error": the runner raised or lied
_ITF_SUFFIX = ".itf.json"


@dataclass(frozen=True)
class TraceRef:
    """One row of the trace table."""

    id: str
    path: str


def discover_traces(source: str | Path) -> tuple[TraceRef, ...]:
    """The trace table: a directory searched for ``*.itf.json`` (id = path relative to
    it without the suffix), or a Parquet file with columns ``id``, ``path``."""
    src = Path(source)
    if src.is_dir():
        found = sorted(src.rglob("*" + _ITF_SUFFIX))
        refs = tuple(
            TraceRef(str(p.relative_to(src))[: -len(_ITF_SUFFIX)], str(p.resolve())) for p in found
        )
    elif src.is_file() and src.suffix == ".parquet":
        table = pq.read_table(src)
        missing = {"id", "path"} - set(table.column_names)
        if missing:
            raise InputError(
                f"a trace table needs columns id and path; missing {', '.join(sorted(missing))}",
                path=str(src),
                code="RL-INPUT-CAMPAIGN",
            )
        refs = tuple(
            TraceRef(str(i), str(p))
            for i, p in zip(table["id"].to_pylist(), table["path"].to_pylist(), strict=True)
        )
    else:
        raise InputError(
            "expected a directory of *.itf.json traces or a .parquet trace table",
            path=str(src),
            code="RL-INPUT-CAMPAIGN",
        )
    ids = [r.id for r in refs]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise InputError(
            f"trace id {dup!r} appears more than once in the trace table",
            path=str(src),
            code="RL-INPUT-CAMPAIGN",
        )
    return refs


def load_runner(spec: str) -> Runner:
    """``package.module:function`` -> the runner function (imported, not evaluated)."""
    module, _, name = spec.partition(":")
    if not module or not name:
        raise InputError(
            f"expected a runner as module:function, found {spec!r}", code="RL-INPUT-CAMPAIGN"
        )
    try:
        fn = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as e:
        raise InputError(f"cannot load the runner {spec}: {e}", code="RL-INPUT-CAMPAIGN") from None
    if not callable(fn):
        raise InputError(f"the runner {spec} is not a function", code="RL-INPUT-CAMPAIGN")
    return fn  # type: ignore[no-any-return]


def _result_row(campaign: str, ref: TraceRef, runner: Runner, partition: int) -> dict[str, Any]:
    start = time.monotonic()
    verdict, steps, seconds, detail, actions = "error", 0, 0.0, "", []
    try:
        out = runner(ref.path)
        v = out.get("verdict")
        if v not in VERDICTS:
            detail = f"the runner returned verdict {v!r}; expected one of {', '.join(VERDICTS)}"
        else:
            verdict = str(v)
            steps = int(out.get("steps", 0))
            seconds = float(out.get("seconds", time.monotonic() - start))
            detail = str(out.get("detail", ""))
            actions = [str(a) for a in out.get("actions", ())]
    except Exception as e:  # a runner's failure is a result, not a crash of the campaign
        detail = f"the runner raised {type(e).__name__}: {e}"
    if verdict == "error":
        seconds = time.monotonic() - start
    return {
        "campaign": campaign,
        "id": ref.id,
        "path": ref.path,
        "verdict": verdict,
        "steps": steps,
        "seconds": seconds,
        "detail": detail,
        "actions": actions,
        "partition": partition,
        "finished_at": time.time(),
    }


def _write_atomically(table: pa.Table, directory: Path, stem: str) -> Path:
    final = directory / f"{stem}.parquet"
    tmp = directory / f".{stem}.parquet.tmp"
    pq.write_table(table, str(tmp))
    with open(tmp, "rb") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, final)
    dfd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)
    return final


def _partition_job(
    campaign: str, runner: Runner, results_dir: str, run_id: str
) -> Callable[[int, Iterable[tuple[str, str]]], Iterator[tuple[int, int]]]:
    def run(index: int, rows: Iterable[tuple[str, str]]) -> Iterator[tuple[int, int]]:
        results = [_result_row(campaign, TraceRef(i, p), runner, index) for i, p in rows]
        if results:
            table = pa.Table.from_pylist(results, schema=schemas.RESULTS)
            _write_atomically(table, Path(results_dir), f"part-{run_id}-{index:05d}")
        yield (index, len(results))

    return run


def read_results(results_dir: str | Path, *, dedupe: bool = True) -> pa.Table:
    """Every result in the directory (``.tmp`` files of killed runs ignored), one row
    per trace id with ``dedupe`` (the earliest ``finished_at``)."""
    d = Path(results_dir)
    files = sorted(d.glob("part-*.parquet")) if d.is_dir() else []
    if not files:
        return schemas.RESULTS.empty_table()
    table = pa.concat_tables(pq.read_table(f, schema=schemas.RESULTS) for f in files)
    if not dedupe:
        return table
    table = table.sort_by([("id", "ascending"), ("finished_at", "ascending")])
    ids = table["id"].to_pylist()
    keep = [i for i in range(len(ids)) if i == 0 or ids[i] != ids[i - 1]]
    return table.take(pa.array(keep, pa.int64()))


@dataclass(frozen=True)
class CampaignSummary:
    """Verdict counts, coverage per action, and what this run did."""

    campaign: str
    traces: int  # in the table
    done_before: int  # already had a result when the run started
    ran: int  # run now
    partitions: int  # partitions run now
    verdicts: tuple[tuple[str, int], ...]  # over all results, sorted by verdict
    coverage: tuple[tuple[str, int, int], ...]  # (action, traces, of which passed)
    steps: int
    seconds: float  # sum of the runner's seconds
    duplicates: int  # result rows dropped by dedupe
    failures: tuple[tuple[str, str], ...]  # (id, detail) of fail/error, first 10 by id

    @property
    def complete(self) -> bool:
        """Every trace of the table has a result."""
        return sum(n for _, n in self.verdicts) == self.traces


def summarize(
    spark: SparkSession,
    results_dir: str | Path,
    traces: Iterable[TraceRef],
    *,
    campaign: str = "default",
    done_before: int = 0,
    ran: int = 0,
    partitions: int = 0,
) -> CampaignSummary:
    """Aggregate the results of the traces of the table (Spark, over the deduped rows)."""
    from pyspark.sql import functions as F

    ids = [t.id for t in traces]
    raw = read_results(results_dir, dedupe=False)
    deduped = read_results(results_dir)
    table = deduped.filter(pc.is_in(deduped["id"], value_set=pa.array(ids, pa.string())))
    df = spark.createDataFrame(table.to_pylist(), schemas.RESULTS_DDL)
    verdicts = tuple(
        (r.verdict, int(r.n))
        for r in df.groupBy("verdict")
        .agg(F.count(F.lit(1)).alias("n"))
        .orderBy("verdict")
        .collect()
    )
    coverage = tuple(
        (r.action, int(r.traces), int(r.passed))
        for r in df.select(F.explode(F.array_distinct("actions")).alias("action"), "verdict")
        .groupBy("action")
        .agg(
            F.count(F.lit(1)).alias("traces"),
            F.sum((F.col("verdict") == "pass").cast("int")).alias("passed"),
        )
        .orderBy("action")
        .collect()
    )
    totals = df.agg(F.sum("steps").alias("s"), F.sum("seconds").alias("t")).collect()[0]
    failures = tuple(
        (r.id, r.detail)
        for r in df.filter(F.col("verdict").isin("fail", "error")).orderBy("id").limit(10).collect()
    )
    return CampaignSummary(
        campaign=campaign,
        traces=len(ids),
        done_before=done_before,
        ran=ran,
        partitions=partitions,
        verdicts=verdicts,
        coverage=coverage,
        steps=int(totals.s or 0),
        seconds=float(totals.t or 0.0),
        duplicates=raw.num_rows - deduped.num_rows,
        failures=failures,
    )


def run_campaign(
    spark: SparkSession,
    traces: Iterable[TraceRef],
    runner: Runner,
    results_dir: str | Path,
    *,
    campaign: str = "default",
    chunk: int = 16,
) -> CampaignSummary:
    """Run every trace that has no result yet; return the summary over all results."""
    if chunk < 1:
        raise InputError(f"--chunk must be at least 1, got {chunk}", code="RL-INPUT-CAMPAIGN")
    refs = tuple(traces)
    out = Path(results_dir)
    out.mkdir(parents=True, exist_ok=True)
    done = set(read_results(out)["id"].to_pylist())
    todo = [(r.id, r.path) for r in refs if r.id not in done]
    parts = math.ceil(len(todo) / chunk) if todo else 0
    if todo:
        run_id = uuid.uuid4().hex[:12]
        job = _partition_job(campaign, runner, str(out.resolve()), run_id)
        spark.sparkContext.setJobDescription(f"campaign {campaign}: {len(todo)} traces")
        spark.sparkContext.parallelize(todo, parts).mapPartitionsWithIndex(job).collect()
    return summarize(
        spark,
        out,
        refs,
        campaign=campaign,
        done_before=len(done & {r.id for r in refs}),
        ran=len(todo),
        partitions=parts,
    )
