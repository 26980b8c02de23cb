"""Conformance campaigns: a table of traces run in partitions, durable and resumable.

A campaign runs every trace of a table (``id``, ``path`` of an ITF file) through a
runner ``run_trace(path) -> {"verdict", "steps", "seconds", "detail"}`` (optionally
``"actions"``: the action names the trace exercised, for the coverage table).

**Results are keyed by what they are results of**: the campaign's name, the
implementation judged (the node command, or the runner) and the trace's
*content* (its SHA-256), never by the trace's id alone.  Re-running with
another ``--name``, another node or runner, or an edited trace file runs it
again; only a result of the same campaign, implementation and trace is reused.

**Results are written append-only, one committed line per trace**: each
partition task appends to its own journal (``results-<run>-<partition>.ndjson``)
one JSON line per finished trace, ending with its commit marker (a CRC-32 of
the record), flushed and fsynced before the next trace starts.  A line is a
result only if it is whole and its marker matches: a line torn by ``kill -9``
(or a power cut) is not, and its trace runs again.  So a campaign killed at any
moment loses at most the traces that were running, and the next run with the
same results directory runs exactly the traces without a committed result
(none lost, none repeated).  A task that Spark retries first reads its own
journal and skips what it committed.  Reading keeps one result per key (the
earliest), in case a worker that outlived a killed driver committed one twice.

:func:`run_campaign` runs the partitions on Spark; :func:`run_campaign_local`
runs the same partition job in this process (no JVM).  The results directory
must be visible to every executor (local disk for ``local[*]``; a shared file
system on a cluster).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import math
import os
import stat
import time
import uuid
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]
import pyarrow.parquet as pq  # type: ignore[import-untyped, unused-ignore]

from redletter.errors import InputError
from redletter.pipeline import schemas
from redletter.untrusted import check_regular

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "VERDICTS",
    "CampaignSummary",
    "Journal",
    "Runner",
    "TraceRef",
    "discover_traces",
    "load_runner",
    "read_journal",
    "read_results",
    "result_key",
    "run_campaign",
    "run_campaign_local",
    "summarize",
    "trace_digest",
]

Runner = Callable[[str], Mapping[str, Any]]
VERDICTS = ("pass", "fail", "unknown")  # plus "error": the runner raised or lied
_ITF_SUFFIX: Final = ".itf.json"
_JOURNAL: Final = "results-*.ndjson"
FORMAT: Final = 1  #: the version of a journal line (``"v"``)


@dataclass(frozen=True)
class TraceRef:
    """One row of the trace table; ``digest`` is the SHA-256 of the trace file."""

    id: str
    path: str
    digest: str = ""


def trace_digest(path: str | Path) -> str:
    """The SHA-256 of a trace file's bytes (``unreadable:<error>`` if it cannot be read:
    the runner will say why as a result)."""
    h = hashlib.sha256()
    try:
        # Non-blocking, and only a regular file: a FIFO named by a trace table
        # must not hang the campaign (the runner then says why it cannot be read).
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
        with open(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return "unreadable:not a regular file"
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    except OSError as exc:
        return f"unreadable:{exc.strerror}"
    return h.hexdigest()


def result_key(campaign: str, implementation: str, digest: str) -> str:
    """What a result is the result of: campaign, implementation and trace content."""
    text = "\0".join((campaign, implementation, digest))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def discover_traces(source: str | Path) -> tuple[TraceRef, ...]:
    """The trace table: a directory searched for ``*.itf.json`` (id = path relative to
    it without the suffix), or a Parquet file with columns ``id``, ``path``."""
    src = Path(source)
    if src.is_dir():
        found = sorted(src.rglob("*" + _ITF_SUFFIX))
        for p in found:  # a FIFO or a device among them is refused before any is read
            check_regular(p, code="RL-INPUT-CAMPAIGN", what="the trace")
        refs = tuple(
            TraceRef(str(p.relative_to(src))[: -len(_ITF_SUFFIX)], str(p.resolve())) for p in found
        )
    elif src.is_file() and src.suffix == ".parquet":
        try:
            table = pq.read_table(src)
        except (OSError, pa.ArrowException) as exc:
            raise InputError(
                f"not a Parquet trace table: {exc}", path=str(src), code="RL-INPUT-CAMPAIGN"
            ) from None
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
    if not refs:
        raise InputError(
            "the trace table is empty: a campaign over no trace would prove nothing",
            path=str(src),
            code="RL-INPUT-CAMPAIGN",
        )
    ids = [r.id for r in refs]
    if len(set(ids)) != len(ids):
        counts = Counter(ids)
        dup = next(i for i in ids if counts[i] > 1)
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


# --------------------------------------------------------------------------- one result


def _result_row(
    campaign: str, implementation: str, ref: TraceRef, runner: Runner, partition: int
) -> dict[str, Any]:
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
        "v": FORMAT,
        "key": result_key(campaign, implementation, ref.digest),
        "campaign": campaign,
        "implementation": implementation,
        "id": ref.id,
        "path": ref.path,
        "digest": ref.digest,
        "verdict": verdict,
        "steps": steps,
        "seconds": seconds,
        "detail": detail,
        "actions": actions,
        "partition": partition,
        "finished_at": time.time(),
    }


# --------------------------------------------------------------------------- the journal


def _commit(record: Mapping[str, Any]) -> str:
    """The commit marker of a record: CRC-32 of its canonical JSON."""
    body = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return f"{zlib.crc32(body.encode('ascii')):08x}"


class Journal:
    """One partition task's append-only results file: one committed line per trace."""

    def __init__(self, path: Path, *, durable: bool = True) -> None:
        self.path = path
        self.durable = durable
        committed, _ = _read_file(path) if path.exists() else ([], 0)
        #: the keys this journal committed already (a retried task skips them)
        self.keys = {r["key"] for r in committed}
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        if path.stat().st_size and not _ends_with_newline(path):
            # A line torn by a kill: end it, so the next record starts on its own line.
            os.write(self._fd, b"\n")

    def append(self, record: Mapping[str, Any]) -> None:
        """Write ``record`` with its commit marker in one write, then flush it to disk."""
        line = json.dumps({**record, "commit": _commit(record)}, ensure_ascii=True) + "\n"
        data = line.encode("ascii")
        written = 0
        while written < len(data):
            written += os.write(self._fd, data[written:])
        if self.durable:
            os.fsync(self._fd)
        self.keys.add(record["key"])

    def close(self) -> None:
        os.close(self._fd)

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as f:
        f.seek(-1, os.SEEK_END)
        return f.read(1) == b"\n"


def _read_file(path: Path) -> tuple[list[dict[str, Any]], int]:
    """The committed records of one journal, and how many lines were not (torn)."""
    out: list[dict[str, Any]] = []
    torn = 0
    try:
        data = path.read_bytes()
    except OSError:
        return out, 0
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except (ValueError, UnicodeDecodeError):
            torn += 1
            continue
        if not isinstance(obj, dict) or obj.get("v") != FORMAT:
            torn += 1
            continue
        mark = obj.pop("commit", None)
        if mark != _commit(obj) or not isinstance(obj.get("key"), str):
            torn += 1
            continue
        out.append(obj)
    return out, torn


def read_journal(results_dir: str | Path) -> tuple[list[dict[str, Any]], int]:
    """Every committed record of the results directory (journals in name order, each
    in the order it was written), and the number of uncommitted (torn) lines."""
    d = Path(results_dir)
    records: list[dict[str, Any]] = []
    torn = 0
    for f in sorted(d.glob(_JOURNAL)) if d.is_dir() else []:
        got, bad = _read_file(f)
        records.extend(got)
        torn += bad
    return records, torn


def _dedupe(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One record per key: the earliest committed."""
    best: dict[str, dict[str, Any]] = {}
    for r in records:
        kept = best.get(r["key"])
        if kept is None or r["finished_at"] < kept["finished_at"]:
            best[r["key"]] = r
    return sorted(best.values(), key=lambda r: (r["id"], r["key"]))


def read_results(results_dir: str | Path, *, dedupe: bool = True) -> pa.Table:
    """Every committed result in the directory as a table (:data:`schemas.RESULTS`),
    one row per key with ``dedupe`` (the earliest committed)."""
    records, _ = read_journal(results_dir)
    rows = _dedupe(records) if dedupe else records
    names = schemas.RESULTS.names
    return pa.Table.from_pylist(
        [{k: r.get(k) for k in names} for r in rows], schema=schemas.RESULTS
    )


# --------------------------------------------------------------------------- running


def _partition_job(
    campaign: str,
    implementation: str,
    runner: Runner,
    results_dir: str,
    run_id: str,
    durable: bool,
) -> Callable[[int, Iterable[tuple[str, str, str]]], Iterator[tuple[int, int]]]:
    def run(index: int, rows: Iterable[tuple[str, str, str]]) -> Iterator[tuple[int, int]]:
        path = Path(results_dir) / f"results-{run_id}-{index:05d}.ndjson"
        done = 0
        with Journal(path, durable=durable) as journal:
            for tid, tpath, digest in rows:
                ref = TraceRef(tid, tpath, digest)
                if result_key(campaign, implementation, digest) in journal.keys:
                    continue  # a retried task: committed by its first attempt
                journal.append(_result_row(campaign, implementation, ref, runner, index))
                done += 1
        yield (index, done)

    return run


def _plan(
    traces: Iterable[TraceRef],
    results_dir: str | Path,
    campaign: str,
    implementation: str,
    chunk: int,
) -> tuple[tuple[TraceRef, ...], Path, set[str], list[tuple[str, str, str]], int]:
    if chunk < 1:
        raise InputError(f"--chunk must be at least 1, got {chunk}", code="RL-INPUT-CAMPAIGN")
    refs = tuple(r if r.digest else replace(r, digest=trace_digest(r.path)) for r in traces)
    out = Path(results_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(
            f"--results: cannot create the results directory: {exc.strerror}",
            path=str(out),
            code="RL-INPUT-CAMPAIGN",
        ) from None
    done = {r["key"] for r in read_journal(out)[0]}
    # One run per key: two trace files with the same content share one result.
    todo: list[tuple[str, str, str]] = []
    planned: set[str] = set()
    for r in refs:
        key = result_key(campaign, implementation, r.digest)
        if key not in done and key not in planned:
            planned.add(key)
            todo.append((r.id, r.path, r.digest))
    parts = math.ceil(len(todo) / chunk) if todo else 0
    return refs, out, done, todo, parts


def run_campaign(
    spark: SparkSession,
    traces: Iterable[TraceRef],
    runner: Runner,
    results_dir: str | Path,
    *,
    campaign: str = "default",
    implementation: str = "",
    chunk: int = 16,
    durable: bool = True,
) -> CampaignSummary:
    """Run, on Spark, every trace that has no committed result for this campaign and
    implementation yet; return the summary over all its results."""
    refs, out, done, todo, parts = _plan(traces, results_dir, campaign, implementation, chunk)
    if todo:
        run_id = uuid.uuid4().hex[:12]
        job = _partition_job(campaign, implementation, runner, str(out.resolve()), run_id, durable)
        spark.sparkContext.setJobDescription(f"campaign {campaign}: {len(todo)} traces")
        spark.sparkContext.parallelize(todo, parts).mapPartitionsWithIndex(job).collect()
    return summarize(
        out,
        refs,
        campaign=campaign,
        implementation=implementation,
        done_before=len(done & {result_key(campaign, implementation, r.digest) for r in refs}),
        ran=len(todo),
        partitions=parts,
    )


def run_campaign_local(
    traces: Iterable[TraceRef],
    runner: Runner,
    results_dir: str | Path,
    *,
    campaign: str = "default",
    implementation: str = "",
    chunk: int = 16,
    durable: bool = True,
    on_result: Callable[[int], None] | None = None,
) -> CampaignSummary:
    """The same campaign in this process, partition after partition (no Spark)."""
    refs, out, done, todo, parts = _plan(traces, results_dir, campaign, implementation, chunk)
    if todo:
        run_id = uuid.uuid4().hex[:12]
        job = _partition_job(campaign, implementation, runner, str(out.resolve()), run_id, durable)
        for i in range(parts):
            for _, n in job(i, todo[i * chunk : (i + 1) * chunk]):
                if on_result is not None:
                    on_result(n)
    return summarize(
        out,
        refs,
        campaign=campaign,
        implementation=implementation,
        done_before=len(done & {result_key(campaign, implementation, r.digest) for r in refs}),
        ran=len(todo),
        partitions=parts,
    )


# --------------------------------------------------------------------------- the summary


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
    duplicates: int  # committed results dropped by dedupe
    failures: tuple[tuple[str, str], ...]  # (id, detail) of fail/error, first 10 by id
    implementation: str = ""
    torn: int = 0  # journal lines not committed (cut by a kill): their traces ran again

    @property
    def complete(self) -> bool:
        """Every trace of the table has a result."""
        return sum(n for _, n in self.verdicts) == self.traces


def summarize(
    results_dir: str | Path,
    traces: Sequence[TraceRef],
    *,
    campaign: str = "default",
    implementation: str = "",
    done_before: int = 0,
    ran: int = 0,
    partitions: int = 0,
) -> CampaignSummary:
    """Aggregate the committed results of the traces of the table for this campaign
    and implementation (one per key)."""
    records, torn = read_journal(results_dir)
    keyed = [
        (t.id, result_key(campaign, implementation, t.digest or trace_digest(t.path)))
        for t in traces
    ]
    keys = {k for _, k in keyed}
    mine = [r for r in records if r["key"] in keys]
    best = {r["key"]: r for r in _dedupe(mine)}
    # One row per trace of the table (traces of the same content share a result).
    rows = [{**best[k], "id": tid} for tid, k in sorted(keyed) if k in best]
    verdicts = tuple(sorted(Counter(r["verdict"] for r in rows).items()))
    per_action: dict[str, list[int]] = {}
    for r in rows:
        for a in set(r["actions"]):
            counts = per_action.setdefault(a, [0, 0])
            counts[0] += 1
            counts[1] += r["verdict"] == "pass"
    coverage = tuple((a, n, p) for a, (n, p) in sorted(per_action.items()))
    failures = tuple((r["id"], r["detail"]) for r in rows if r["verdict"] in ("fail", "error"))[:10]
    return CampaignSummary(
        campaign=campaign,
        traces=len(traces),
        done_before=done_before,
        ran=ran,
        partitions=partitions,
        verdicts=verdicts,
        coverage=coverage,
        steps=sum(int(r["steps"]) for r in rows),
        seconds=sum(float(r["seconds"]) for r in rows),
        duplicates=len(mine) - len(best),
        failures=failures,
        implementation=implementation,
        torn=torn,
    )
