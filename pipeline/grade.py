"""Grade a class: every submission of a COS 418 class judged on the same campaign.

``redletter cos418 grade SUBMISSIONS`` is the job that outgrows one machine: a
course's staff judging every submission of a class (hundreds of packages x
hundreds of scenarios x several simulator seeds).  It is embarrassingly
parallel, so it runs on Spark: one task per submission, which builds the
package once (its own sandboxed copy, on the executor that judges it) and runs
the class's campaign on it — the same generated scenarios under the same
simulator seeds for every submission, so that grades are comparable (a
submission's own ``test_data/`` is not part of a grade).  ``--local`` runs the
same tasks one after the other in this process.

**Durable, like the conformance campaigns** (:mod:`redletter.pipeline.campaign`):
every finished run is one committed line of a journal (``OUT/journal/``),
flushed to disk before the next run starts, keyed by the grade's
configuration, the submission's content and the run.  A grade killed at any
moment and started again with the same ``OUT`` runs exactly the runs without a
committed result (none lost, none repeated) and rebuilds only the submissions
that still have runs to do.  A submission that does not build costs one build; a
submission that hangs costs a bounded slot: each run is bounded by the run
limits, and after ``max_hangs`` hung runs the rest of its campaign is not run
(said in its row), never the job.

The gradebook (``OUT/gradebook.parquet``, ``.csv`` and ``.html``) has one row
per submission: its verdict, runs passed, failed and unknown (and failed by
scenario class), the first failure's rule, scenario and seed, the shrunk
scenario, build, hang, panic and race counts, and its time; the HTML page links
each row to the submission's own report (``OUT/reports/<name>/report.html``).
"""

from __future__ import annotations

import csv
import hashlib
import json
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]
import pyarrow.parquet as pq  # type: ignore[import-untyped, unused-ignore]

from redletter.errors import InputError, RedletterError
from redletter.pipeline.campaign import Journal, read_journal

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "GRADEBOOK",
    "GradeConfig",
    "GradeSummary",
    "Submission",
    "discover_submissions",
    "grade_class",
    "read_gradebook",
]

FORMAT: Final = 1  #: the version of a journal line (``"v"``), as the campaigns'
CLASSES: Final = ("one", "sequential", "concurrent", "same-tick")
#: Kinds of failure counted in their own columns.
_HANG_KINDS: Final = frozenset({"hang", "killed"})
_MAX_CSV_ROWS: Final = 1_000_000


@dataclass(frozen=True)
class Submission:
    """One submission: its name in the gradebook, its folder, and the SHA-256 of its
    files (``bad:<reason>`` when its folder cannot be read: a link, a FIFO, ...)."""

    name: str
    path: str
    digest: str = ""


@dataclass(frozen=True)
class GradeConfig:
    """The campaign every submission is judged on, and its bounds."""

    seed: int = 0
    scenarios: int = 20
    seeds: int = 2
    race: bool = False
    shrink: bool = True
    shrink_seconds: float = 60.0
    step_timeout: float = 30.0
    deadlock_after: float = 2.0
    collect_timeout: float = 60.0
    kill_after: float = 180.0
    max_hangs: int = 3  #: hung runs after which a submission's campaign stops
    outcome_timeout: float = 60.0

    def key(self) -> str:
        """What a result depends on, besides the submission and the run."""
        body = json.dumps(asdict(self), sort_keys=True)
        return hashlib.sha256(body.encode()).hexdigest()[:16]


# --------------------------------------------------------------------------- submissions


def _digest(path: Path) -> str:
    """The SHA-256 of a package folder's files (relative names and contents), read
    as the kit reads a package (no link followed, sizes bounded)."""
    from redletter.conformance.adapters.cos418.package import read_bounded, scan_tree

    try:
        entries = scan_tree(path)
    except InputError as exc:
        return "bad:" + exc.message
    h = hashlib.sha256()
    for p, is_dir in sorted(entries):
        rel = str(p.relative_to(path))
        h.update(rel.encode("utf-8", "surrogateescape") + b"\0")
        if not is_dir:
            try:
                h.update(read_bounded(p))
            except OSError as exc:
                return f"bad:cannot read {rel}: {exc}"
        h.update(b"\0")
    return h.hexdigest()


def discover_submissions(source: str | Path) -> tuple[Submission, ...]:
    """The class: a folder whose sub-folders are the submissions (named after them), or
    a CSV file with columns ``name`` and ``path`` (a path relative to the CSV's
    folder, or absolute).  Each submission's digest is computed here."""
    src = Path(source)
    rows: list[tuple[str, Path]] = []
    if src.is_dir():
        for p in sorted(src.iterdir()):
            if p.is_dir() and not p.is_symlink() and not p.name.startswith("."):
                rows.append((p.name, p))
    elif src.is_file() and src.suffix == ".csv":
        from redletter.untrusted import read_input

        data = read_input(src, code="RL-INPUT-GRADE", limit=16 << 20, what="the class list")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(
                "the class list is not UTF-8 text", code="RL-INPUT-GRADE", path=str(src)
            ) from None
        reader = csv.DictReader(text.splitlines())
        if not reader.fieldnames or not {"name", "path"} <= set(reader.fieldnames):
            raise InputError(
                "a class list needs the columns name and path (a header line `name,path`)",
                code="RL-INPUT-GRADE",
                path=str(src),
            )
        for line, row in enumerate(reader, start=2):
            name, path = (row.get("name") or "").strip(), (row.get("path") or "").strip()
            if not name or not path:
                raise InputError(
                    f"line {line}: a submission needs a name and a path",
                    code="RL-INPUT-GRADE",
                    path=str(src),
                )
            p = Path(path)
            rows.append((name, p if p.is_absolute() else (src.parent / p)))
    else:
        raise InputError(
            "expected a folder of submissions (one folder each) or a .csv class list (name,path)",
            code="RL-INPUT-GRADE",
            path=str(src),
        )
    if not rows:
        raise InputError(
            "the class has no submission: a grade of nothing would prove nothing",
            code="RL-INPUT-GRADE",
            path=str(src),
        )
    names = Counter(n for n, _ in rows)
    dup = next((n for n, c in names.items() if c > 1), None)
    if dup is not None:
        raise InputError(
            f"the submission name {dup!r} appears more than once",
            code="RL-INPUT-GRADE",
            path=str(src),
        )
    for n, _ in rows:
        if not n.replace("-", "").replace("_", "").replace(".", "").isalnum():
            raise InputError(
                f"the submission name {n!r} has characters other than letters, digits, -, _"
                " and . (it names a folder of the gradebook)",
                code="RL-INPUT-GRADE",
                path=str(src),
            )
    return tuple(Submission(n, str(p.resolve()), _digest(p)) for n, p in rows)


# --------------------------------------------------------------------------- one submission


def _key(config: GradeConfig, digest: str, what: str) -> str:
    text = "\0".join(("grade", config.key(), digest, what))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _record(
    config: GradeConfig, sub: Submission, kind: str, what: str, **fields: object
) -> dict[str, Any]:
    return {
        "v": FORMAT,
        "key": _key(config, sub.digest, what),
        "grade": config.key(),
        "submission": sub.name,
        "path": sub.path,
        "digest": sub.digest,
        "kind": kind,
        "what": what,
        "finished_at": time.time(),
        **fields,
    }


def _run_what(case_name: str, seed: int) -> str:
    return f"run:{case_name}:{seed}"


def _grade_one(
    config: GradeConfig,
    sub: Submission,
    journal: Journal,
    done: set[str],
    failure: tuple[str, int] | None,
) -> int:
    """Judge one submission: every run of the campaign without a committed result,
    then the shrunk first failure (``failure``: the first one an earlier attempt
    committed).  Returns the number of records committed."""
    from redletter.conformance.adapters.cos418.campaign import (
        CaseRun,
        generate_cases,
        jobs_of,
        run_one,
        shrink,
    )
    from redletter.conformance.adapters.cos418.judge import TimedOutcome
    from redletter.conformance.adapters.cos418.package import inspect_package
    from redletter.conformance.adapters.cos418.workspace import RunLimits, Workspace
    from redletter.conformance.formats.cos418 import format_scenario, format_topology
    from redletter.conformance.verdict import Verdict

    written = 0

    def commit(record: dict[str, Any]) -> None:
        nonlocal written
        if record["key"] in done or record["key"] in journal.keys:
            return
        journal.append(record)
        done.add(record["key"])
        written += 1

    if sub.digest.startswith("bad:"):
        commit(_record(config, sub, "bad-input", "input", message=sub.digest[4:]))
        return written
    try:
        pkg = inspect_package(Path(sub.path))
    except RedletterError as exc:
        commit(_record(config, sub, "bad-input", "input", message=exc.message))
        return written
    cases = generate_cases(config.seed, config.scenarios)
    seeds = tuple(range(config.seed, config.seed + config.seeds))
    jobs = jobs_of(cases, seeds)
    todo = [(c, s) for c, s in jobs if _key(config, sub.digest, _run_what(c.name, s)) not in done]
    shrink_key = _key(config, sub.digest, "shrunk")
    hangs = sum(1 for k in done if k.startswith("hang:"))
    if hangs >= config.max_hangs:
        todo = []  # its slot is spent: the rest of its campaign is not run
    if not todo and (not config.shrink or shrink_key in done):
        return written
    limits = RunLimits(
        step_timeout=config.step_timeout,
        deadlock_after=config.deadlock_after,
        collect_timeout=config.collect_timeout,
        kill_after=config.kill_after,
    )
    pool = TimedOutcome(config.outcome_timeout)
    with Workspace(pkg, race=config.race) as ws:
        build = ws.build()
        if not build.ok:
            driver = build.driver_only
            commit(
                _record(
                    config,
                    sub,
                    "bad-input" if driver else "build",
                    "build",
                    dialect=pkg.dialect.key,
                    command=build.command,
                    output="\n".join(build.error_lines(30)),
                    seconds=build.seconds,
                    message=(
                        "the package lacks a name of the interface the kit's driver uses"
                        if driver
                        else "the package does not build"
                    ),
                )
            )
            return written
        first: CaseRun | None = None
        for case, seed in todo:
            if hangs >= config.max_hangs:
                break
            r = run_one(ws, case, seed, limits, outcome=pool)
            if r.kind in _HANG_KINDS:
                hangs += 1
            commit(
                _record(
                    config,
                    sub,
                    "run",
                    _run_what(case.name, seed),
                    dialect=pkg.dialect.key,
                    scenario=case.name,
                    klass=case.klass,
                    seed=seed,
                    verdict=str(r.verdict),
                    rule=r.kind,
                    message=r.message[:2000],
                    evidence=list(r.evidence),
                    details=list(r.details[:24]),
                    seconds=r.raw.seconds,
                    top=format_topology(case.topology) if r.verdict == Verdict.FAIL else "",
                    events=format_scenario(case.scenario) if r.verdict == Verdict.FAIL else "",
                )
            )
            if first is None and r.verdict == Verdict.FAIL:
                first = CaseRun(case, seed, r)
        if config.shrink and shrink_key not in done:
            if first is None and failure is not None:
                # The first failure was committed by an earlier attempt: run it again.
                name, again_seed = failure
                again = next((c for c in cases if c.name == name), None)
                if again is not None:
                    r = run_one(ws, again, again_seed, limits, outcome=pool)
                    first = CaseRun(again, again_seed, r) if r.verdict == Verdict.FAIL else None
            if first is not None:
                sh = shrink(
                    ws, first, limits, seeds=seeds, outcome=pool, max_seconds=config.shrink_seconds
                )
                commit(
                    _record(
                        config,
                        sub,
                        "shrunk",
                        "shrunk",
                        scenario=sh.case.name,
                        size=sh.case.size(),
                        seed=sh.seed,
                        rule=sh.result.kind,
                        message=sh.result.message[:2000],
                        evidence=list(sh.result.evidence),
                        details=list(sh.result.details[:24]),
                        top=format_topology(sh.case.topology),
                        events=format_scenario(sh.case.scenario),
                        runs=sh.runs,
                        seconds=sh.seconds,
                        confirmed=sh.confirmed,
                    )
                )
            elif failure is None and hangs < config.max_hangs:
                # Every run done and none failed: nothing to shrink, said once.
                commit(_record(config, sub, "shrunk", "shrunk", rule="", message="no failure"))
    return written


# --------------------------------------------------------------------------- the job


def _task(
    config: GradeConfig,
    journal_dir: str,
    run_id: str,
    done: Mapping[str, frozenset[str]],
    failures: Mapping[tuple[str, str], tuple[str, int]],
) -> Callable[[int, Iterable[Submission]], Iterator[tuple[str, int]]]:
    def run(index: int, subs: Iterable[Submission]) -> Iterator[tuple[str, int]]:
        path = Path(journal_dir) / f"results-{run_id}-{index:05d}.ndjson"
        with Journal(path) as journal:
            for sub in subs:
                mine = set(done.get(sub.name, frozenset()))
                failure = failures.get((sub.digest, config.key()))
                yield (sub.name, _grade_one(config, sub, journal, mine, failure))

    return run


def _plan(
    subs: Sequence[Submission], out: Path, config: GradeConfig
) -> tuple[list[Submission], dict[str, frozenset[str]], dict[tuple[str, str], tuple[str, int]]]:
    """What is left to do, from the journals: per submission the keys committed, and
    its first committed failure (for shrinking after a resume)."""
    records, _ = read_journal(out / "journal")
    by_sub: dict[str, set[str]] = {}
    failures: dict[tuple[str, str], tuple[str, int]] = {}
    grade = config.key()
    digests = {s.name: s.digest for s in subs}
    for r in sorted(records, key=lambda r: r.get("finished_at", 0.0)):
        if r.get("grade") != grade or digests.get(str(r.get("submission"))) != r.get("digest"):
            continue
        keys = by_sub.setdefault(str(r["submission"]), set())
        keys.add(str(r["key"]))
        if r.get("kind") == "run" and r.get("rule") in _HANG_KINDS:
            keys.add(f"hang:{r['key']}")
        if r.get("kind") == "run" and r.get("verdict") == "fail":
            failures.setdefault((str(r["digest"]), grade), (str(r["scenario"]), int(r["seed"])))
    return list(subs), {n: frozenset(k) for n, k in by_sub.items()}, failures


def grade_class(
    subs: Sequence[Submission],
    out: str | Path,
    config: GradeConfig | None = None,
    *,
    spark: SparkSession | None = None,
    on_submission: Callable[[str, int], None] | None = None,
) -> GradeSummary:
    """Grade every submission (module docstring) on ``spark`` (one task per
    submission), or in this process when ``spark`` is None; then write the
    gradebook and every submission's report into ``out``."""
    cfg = config if config is not None else GradeConfig()
    root = Path(out)
    try:
        (root / "journal").mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(
            f"cannot create the grade's folder: {exc.strerror}",
            code="RL-INPUT-GRADE",
            path=str(root),
        ) from None
    started = time.monotonic()
    from redletter.conformance.sandbox import cleanup_stale

    cleanup_stale()  # what grades killed earlier left behind
    todo, done, failures = _plan(subs, root, cfg)
    run_id = uuid.uuid4().hex[:12]
    job = _task(cfg, str((root / "journal").resolve()), run_id, done, failures)
    ran = 0
    if spark is not None:
        spark.sparkContext.setJobDescription(f"grade: {len(todo)} submissions")
        rdd = spark.sparkContext.parallelize(todo, max(1, len(todo)))
        for name, n in rdd.mapPartitionsWithIndex(job).collect():
            ran += n
            if on_submission is not None:
                on_submission(name, n)
    else:
        for i, sub in enumerate(todo):
            for name, n in job(i, [sub]):
                ran += n
                if on_submission is not None:
                    on_submission(name, n)
    rows = gradebook_rows(subs, root, cfg)
    write_gradebook(rows, root)
    write_reports(subs, root, cfg)
    return GradeSummary(
        submissions=len(subs),
        committed_now=ran,
        seconds=time.monotonic() - started,
        rows=tuple(rows),
        out=root,
    )


# --------------------------------------------------------------------------- the gradebook


GRADEBOOK: Final = pa.schema(
    [
        pa.field("submission", pa.string(), nullable=False),
        pa.field("path", pa.string(), nullable=False),
        pa.field("dialect", pa.string(), nullable=False),
        pa.field("verdict", pa.string(), nullable=False),  # pass fail unknown build bad-input
        pa.field("runs", pa.int64(), nullable=False),
        pa.field("passed", pa.int64(), nullable=False),
        pa.field("failed", pa.int64(), nullable=False),
        pa.field("unknown", pa.int64(), nullable=False),
        pa.field("not_run", pa.int64(), nullable=False),
        *(pa.field(f"failed_{c.replace('-', '_')}", pa.int64(), nullable=False) for c in CLASSES),
        pa.field("first_rule", pa.string(), nullable=False),
        pa.field("first_scenario", pa.string(), nullable=False),
        pa.field("first_seed", pa.int64()),
        pa.field("first_explanation", pa.string(), nullable=False),
        pa.field("shrunk_size", pa.string(), nullable=False),
        pa.field("shrunk_scenario", pa.string(), nullable=False),
        pa.field("build_failures", pa.int64(), nullable=False),
        pa.field("hangs", pa.int64(), nullable=False),
        pa.field("panics", pa.int64(), nullable=False),
        pa.field("races", pa.int64(), nullable=False),
        pa.field("seconds", pa.float64(), nullable=False),
        pa.field("report", pa.string(), nullable=False),
    ]
)


def _latest(records: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """One record per key: the earliest committed (as the campaigns keep)."""
    best: dict[str, dict[str, Any]] = {}
    for r in records:
        kept = best.get(r["key"])
        if kept is None or r["finished_at"] < kept["finished_at"]:
            best[r["key"]] = r
    return best


def _mine(
    subs: Sequence[Submission], out: Path, cfg: GradeConfig
) -> dict[str, list[dict[str, Any]]]:
    records, _ = read_journal(out / "journal")
    digests = {s.name: s.digest for s in subs}
    grade = cfg.key()
    kept = _latest(
        r
        for r in records
        if r.get("grade") == grade and digests.get(str(r.get("submission"))) == r.get("digest")
    )
    by: dict[str, list[dict[str, Any]]] = {s.name: [] for s in subs}
    for r in sorted(kept.values(), key=lambda r: r["finished_at"]):
        by[str(r["submission"])].append(r)
    return by


def gradebook_rows(subs: Sequence[Submission], out: Path, cfg: GradeConfig) -> list[dict[str, Any]]:
    """One row per submission (:data:`GRADEBOOK`), from the committed records."""
    planned = cfg.scenarios * cfg.seeds
    rows = []
    by = _mine(subs, out, cfg)
    for sub in subs:
        recs = by[sub.name]
        runs = [r for r in recs if r["kind"] == "run"]
        build = next((r for r in recs if r["kind"] in ("build", "bad-input")), None)
        shrunk = next((r for r in recs if r["kind"] == "shrunk" and r.get("rule")), None)
        fails = [r for r in runs if r["verdict"] == "fail"]
        first = fails[0] if fails else None
        if build is not None:
            verdict = "bad-input" if build["kind"] == "bad-input" else "build"
        elif fails:
            verdict = "fail"
        elif any(r["verdict"] == "unknown" for r in runs) or len(runs) < planned:
            verdict = "unknown"
        else:
            verdict = "pass"
        kinds = Counter(str(r.get("rule", "")) for r in runs)
        rows.append(
            {
                "submission": sub.name,
                "path": sub.path,
                "dialect": str((runs[0] if runs else build or {}).get("dialect", "")),
                "verdict": verdict,
                "runs": len(runs),
                "passed": sum(r["verdict"] == "pass" for r in runs),
                "failed": len(fails),
                "unknown": sum(r["verdict"] == "unknown" for r in runs),
                "not_run": 0 if build is not None else max(0, planned - len(runs)),
                **{
                    f"failed_{c.replace('-', '_')}": sum(r["klass"] == c for r in fails)
                    for c in CLASSES
                },
                "first_rule": str(first["rule"]) if first else "",
                "first_scenario": str(first["scenario"]) if first else "",
                "first_seed": int(first["seed"]) if first else None,
                "first_explanation": (
                    str(first["message"]) if first else str(build["message"]) if build else ""
                ),
                "shrunk_size": str(shrunk.get("size", "")) if shrunk else "",
                "shrunk_scenario": (
                    (str(shrunk["top"]) + "\n" + str(shrunk["events"])) if shrunk else ""
                ),
                "build_failures": int(build is not None and build["kind"] == "build"),
                "hangs": sum(n for k, n in kinds.items() if k in _HANG_KINDS),
                "panics": sum(n for k, n in kinds.items() if k.startswith("panic")),
                "races": kinds.get("data-race", 0),
                "seconds": round(
                    sum(float(r.get("seconds", 0.0)) for r in recs if "seconds" in r), 3
                ),
                "report": f"reports/{sub.name}/report.html",
            }
        )
    return rows


def write_gradebook(rows: Sequence[Mapping[str, Any]], out: Path) -> None:
    """``gradebook.parquet``, ``gradebook.csv`` and ``gradebook.html`` (each written
    whole, then renamed over the old one)."""
    table = pa.Table.from_pylist([dict(r) for r in rows], schema=GRADEBOOK)
    tmp = out / "gradebook.parquet.part"
    pq.write_table(table, tmp)
    tmp.replace(out / "gradebook.parquet")
    tmp = out / "gradebook.csv.part"
    with tmp.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=GRADEBOOK.names)
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r[k] is None else r[k]) for k in GRADEBOOK.names})
    tmp.replace(out / "gradebook.csv")
    counts = Counter(str(r["verdict"]) for r in rows)
    head = "".join(
        f"<th>{escape(n)}</th>"
        for n in (
            "submission",
            "verdict",
            "passed",
            "failed",
            "unknown",
            "not run",
            *CLASSES,
            "first failure",
            "hangs",
            "panics",
            "races",
            "seconds",
        )
    )
    body = []
    for r in rows:
        v = str(r["verdict"])
        cells = [
            f"<td><a href='{escape(str(r['report']))}'>{escape(str(r['submission']))}</a></td>",
            f"<td class='{escape(v)}'>{escape(v)}</td>",
            *(f"<td>{r[k]}</td>" for k in ("passed", "failed", "unknown", "not_run")),
            *(f"<td>{r['failed_' + c.replace('-', '_')]}</td>" for c in CLASSES),
            f"<td>{escape(str(r['first_rule']))}"
            + (
                f" ({escape(str(r['first_scenario']))}, seed {r['first_seed']})"
                if r["first_rule"]
                else ""
            )
            + "</td>",
            *(f"<td>{r[k]}</td>" for k in ("hangs", "panics", "races")),
            f"<td>{float(r['seconds']):.1f}</td>",
        ]
        body.append("<tr>" + "".join(cells) + "</tr>")
    html = (
        "<!doctype html><html><head><meta charset='utf-8'><title>redletter gradebook</title>"
        "<style>body{font-family:sans-serif;margin:2em}td,th{border:1px solid #ccc;"
        "padding:2px 8px}table{border-collapse:collapse}.fail,.build,.bad-input{color:#c0392b}"
        ".pass{color:#1e8449}.unknown{color:#b9770e}</style></head><body>"
        f"<h1>Gradebook: {len(rows)} submissions</h1><p>"
        + ", ".join(f"{n} {escape(k)}" for k, n in sorted(counts.items()))
        + f"</p><table><tr>{head}</tr>{''.join(body)}</table></body></html>"
    )
    tmp = out / "gradebook.html.part"
    tmp.write_text(html, encoding="utf-8")
    tmp.replace(out / "gradebook.html")


def write_reports(subs: Sequence[Submission], out: Path, cfg: GradeConfig) -> None:
    """Each submission's report (``reports/<name>/report.html``), with its shrunk (or
    first) failing scenario as ``.top``/``.events`` files beside it."""
    from redletter.conformance.adapters.cos418.check import kit_command, replay_command

    by = _mine(subs, out, cfg)
    for sub in subs:
        recs = by[sub.name]
        d = out / "reports" / sub.name
        d.mkdir(parents=True, exist_ok=True)
        runs = [r for r in recs if r["kind"] == "run"]
        build = next((r for r in recs if r["kind"] in ("build", "bad-input")), None)
        shrunk = next((r for r in recs if r["kind"] == "shrunk" and r.get("rule")), None)
        first = next((r for r in runs if r["verdict"] == "fail"), None)
        shown = shrunk or first
        html = [
            "<!doctype html><html><head><meta charset='utf-8'>",
            f"<title>{escape(sub.name)}</title><style>body{{font-family:sans-serif;"
            "max-width:75em;margin:2em auto}td,th{border:1px solid #ccc;padding:2px 8px}"
            "table{border-collapse:collapse}pre{background:#f6f6f6;padding:.5em;"
            "white-space:pre-wrap}</style></head><body>",
            f"<h1>{escape(sub.name)}</h1><p><code>{escape(sub.path)}</code></p>",
            "<p><a href='../../gradebook.html'>the gradebook</a></p>",
        ]
        if build is not None:
            html.append(
                f"<h2>{escape(str(build['message']))}</h2>"
                f"<pre>{escape(str(build.get('output', '')))}</pre>"
            )
        if shown is not None:
            (d / "failing.top").write_text(str(shown["top"]), encoding="utf-8")
            (d / "failing.events").write_text(str(shown["events"]), encoding="utf-8")
            replay = replay_command(
                Path(sub.path),
                d / "failing.top",
                d / "failing.events",
                int(shown["seed"]),
                race=cfg.race,
                kit=kit_command(),
            )
            title = "First failure, shrunk" if shrunk is not None else "First failure"
            html += [
                f"<h2>{title}: {escape(str(shown['rule']))}</h2>",
                f"<p>{escape(str(shown['message']))}</p>",
                "<p>The verdict rests on: "
                + escape("; ".join(shown.get("evidence", [])))
                + ".</p>",
            ]
            if shown.get("details"):
                html.append(f"<pre>{escape(chr(10).join(shown['details']))}</pre>")
            html.append(
                "<table><tr><th>topology (.top)</th><th>events (.events)</th></tr>"
                f"<tr><td><pre>{escape(str(shown['top']))}</pre></td>"
                f"<td><pre>{escape(str(shown['events']))}</pre></td></tr></table>"
                f"<h3>Replay</h3><pre>{escape(replay)}</pre>"
            )
        rows = "".join(
            f"<tr><td>{escape(str(r['scenario']))}</td><td>{escape(str(r['klass']))}</td>"
            f"<td>{r['seed']}</td><td>{escape(str(r['verdict']))}</td>"
            f"<td>{escape(str(r['rule']))}</td></tr>"
            for r in runs
        )
        if runs:
            html.append(
                "<h2>Runs</h2><table><tr><th>scenario</th><th>class</th><th>seed</th>"
                f"<th>verdict</th><th>rule</th></tr>{rows}</table>"
            )
        html.append("</body></html>")
        (d / "report.html").write_text("\n".join(html), encoding="utf-8")


def read_gradebook(out: str | Path) -> pa.Table:
    """The gradebook of a grade's folder."""
    return pq.read_table(Path(out) / "gradebook.parquet")


@dataclass(frozen=True)
class GradeSummary:
    """What a grade did, and the gradebook's rows."""

    submissions: int
    committed_now: int  #: journal records committed by this run
    seconds: float
    rows: tuple[dict[str, Any], ...] = field(default=())
    out: Path = Path(".")

    def counts(self) -> dict[str, int]:
        return dict(Counter(str(r["verdict"]) for r in self.rows))
