"""Grade a class: every submission of a COS 418 class judged on the same campaign.

``redletter cos418 grade SUBMISSIONS`` is the job that outgrows one machine: a
course's staff judging every submission of a class (hundreds of packages x
hundreds of scenarios x several simulator seeds).  It is embarrassingly
parallel, so it runs on Spark: one task per distinct submission content, which
builds the package once (its own sandboxed copy, on the executor that judges it)
and runs the class's campaign on it — the same generated scenarios under the
same simulator seeds for every submission, so that grades are comparable (a
submission's own ``test_data/`` is not part of a grade).  ``--local`` runs the
same tasks one after the other in this process.  Besides the kit's campaign, a
task runs the package's own tests as they are (``go test``, the course's verdict)
and says why the two verdicts differ where they do, as ``cos418 test`` does.

**Keyed by content, a row per submission.**  Every result is a committed line of a
journal (``OUT/journal/``), flushed to disk before the next run starts, keyed by
the grade's configuration, the submission's content (SHA-256 of its files) and
the run.  Submissions with the same content are graded once, and each gets its
own row from those results (a student who copies another's folder under a name
that sorts first gets the same verdict, not the other's row); the gradebook also
names, for each submission, the others whose Go sources are the same once
comments and layout are removed (:mod:`redletter.conformance.formats.gosource`).
A grade killed at any moment and started again with the same ``OUT`` runs exactly
the runs without a committed result (none lost, none repeated) and rebuilds only
the contents that still have work to do.

**Bounded.**  A submission that does not build costs one build; each run is
bounded by the run limits; after ``max_hangs`` hung runs the rest of its campaign
is not run; and all of a submission's work (build, runs, shrinking, its own
tests) stops at ``submission_timeout`` seconds, its row saying where.  A folder
that cannot be graded (a link, a hidden folder, not a package of either dialect)
is a row of its own, ``bad-input``, never silently left out.

The gradebook (``OUT/gradebook.parquet``, ``.csv`` and ``.html``) has one row
per submission; the HTML page links each row to the submission's own page
(``OUT/reports/<name>/report.html``), and a failing submission's page to the
report of its failing run, written as ``cos418 test`` writes it (its diagram and
the expected-vs-recorded table: ``OUT/failures/<content>/report.html``).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
import stat
import threading
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

from redletter.errors import InputError, InternalError, RedletterError
from redletter.pipeline.campaign import Journal, read_journal
from redletter.safewrite import SafeFolder

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from redletter.conformance.adapters.cos418.campaign import Case, CaseRun, Shrunk
    from redletter.conformance.adapters.cos418.course import CourseTest
    from redletter.conformance.adapters.cos418.judge import RunResult
    from redletter.conformance.adapters.cos418.package import GoPackage
    from redletter.conformance.adapters.cos418.workspace import Build, RunLimits, Workspace
    from redletter.conformance.verdict import Verdict

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
_CODE: Final = "RL-INPUT-GRADE"
#: How much of the course test's output a journal line keeps (its end).
_COURSE_OUTPUT: Final = 8000


@dataclass(frozen=True)
class Submission:
    """One submission: its name in the gradebook (any text), its folder, the SHA-256
    of its files (``bad:<reason>`` when it cannot be graded: a link, a hidden
    folder, a FIFO, an unreadable file...), and the fingerprint of its Go sources
    without comments and layout (``""``: none)."""

    name: str
    path: str
    digest: str = ""
    sources: str = ""

    @property
    def bad(self) -> str:
        """Why it cannot be graded (``""``: it can)."""
        return self.digest[4:] if self.digest.startswith("bad:") else ""

    @property
    def folder(self) -> str:
        """The name of its folder under ``reports/``: its own name when that is a safe
        file name, else a safe form of it and a hash (names may hold spaces, any
        letters, slashes or a leading dot)."""
        if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}", self.name):
            return self.name
        slug = re.sub(r"[^A-Za-z0-9._-]+", "-", self.name).strip(".-")[:60] or "submission"
        return f"{slug}-{hashlib.sha256(self.name.encode()).hexdigest()[:8]}"


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
    #: seconds all of one submission's work may take (None: no bound)
    submission_timeout: float | None = 300.0
    course_test: bool = True  #: also run the package's own tests (go test)
    course_timeout: float = 60.0

    def key(self) -> str:
        """What a result depends on, besides the submission and the run."""
        body = json.dumps(asdict(self), sort_keys=True)
        return hashlib.sha256(body.encode()).hexdigest()[:16]


# --------------------------------------------------------------------------- submissions


def _content(path: Path) -> tuple[str, str]:
    """``(digest, sources)`` of a package folder: the SHA-256 of its files (relative
    names and contents), read as the kit reads a package (nothing followed, sizes
    bounded, no hard link to another's file), and the fingerprint of its Go sources
    (:func:`~redletter.conformance.formats.gosource.package_fingerprint`)."""
    from redletter.conformance.adapters.cos418.workspace import read_package
    from redletter.conformance.formats.gosource import package_fingerprint

    try:
        st = os.lstat(path)
    except OSError as exc:
        return f"bad:cannot read its folder: {exc.strerror}", ""
    if stat.S_ISLNK(st.st_mode):
        return "bad:" + _link_reason(path), ""
    if not stat.S_ISDIR(st.st_mode):
        return "bad:not a folder", ""
    try:
        entries = read_package(path)
    except InputError as exc:
        return "bad:" + exc.message, ""
    h = hashlib.sha256()
    for e in entries:
        h.update(e.rel.encode("utf-8", "surrogateescape") + b"\0" + e.data + b"\0")
    go = [
        (e.rel, e.data)
        for e in entries
        if not e.is_dir and "/" not in e.rel and e.rel.endswith(".go")
        and not e.rel.endswith("_test.go")
    ]  # fmt: skip
    return h.hexdigest(), package_fingerprint(go)


def _link_reason(path: Path) -> str:
    try:
        target = os.readlink(path)
    except OSError:
        target = "?"
    return (
        f"a symbolic link (to {target}): the kit never follows a link to a submission (it"
        " could name a folder that is not the student's); put the folder itself in the class"
    )


def _entry_reason(entry: os.DirEntry[str]) -> str | None:
    """Why an entry of a class folder is a bad-input row (None: a submission to grade;
    ``""``: a plain file, not a submission)."""
    st = entry.stat(follow_symlinks=False)
    if stat.S_ISLNK(st.st_mode):
        return _link_reason(Path(entry.path))
    if stat.S_ISDIR(st.st_mode):
        if entry.name.startswith("."):
            return (
                "a hidden folder (its name starts with a dot): listed as bad input so that it"
                " is seen, not left out; rename it to grade it"
            )
        return None
    if stat.S_ISREG(st.st_mode):
        return ""
    kind = "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a socket or a device"
    return f"{kind}, not a folder: a submission is a folder"


def discover_submissions(source: str | Path) -> tuple[Submission, ...]:
    """The class: a folder whose sub-folders are the submissions (named after them), or
    a CSV file with columns ``name`` and ``path`` (a path relative to the CSV's
    folder, or absolute).  Every folder of a class folder is a row (plain files are
    not submissions): a link, a hidden folder or a FIFO is a ``bad-input`` row.
    Each submission's digest and sources are computed here."""
    src = Path(source)
    rows: list[tuple[str, Path, str]] = []  # name, path, why it is bad ("" : fine)
    if src.is_dir():
        try:
            entries = sorted(os.scandir(src), key=lambda e: e.name)
        except OSError as exc:
            raise InputError(
                f"cannot list the class: {exc.strerror}", code=_CODE, path=str(src)
            ) from None
        for entry in entries:
            why = _entry_reason(entry)
            if why != "":
                rows.append((entry.name, Path(entry.path), why or ""))
    elif src.is_file() and src.suffix == ".csv":
        rows = [(n, p, "") for n, p in _class_list(src)]
    else:
        raise InputError(
            "expected a folder of submissions (one folder each) or a .csv class list (name,path)",
            code=_CODE,
            path=str(src),
        )
    if not rows:
        raise InputError(
            "the class has no submission: a grade of nothing would prove nothing",
            code=_CODE,
            path=str(src),
        )
    names = Counter(n for n, *_ in rows)
    dup = next((n for n, c in names.items() if c > 1), None)
    if dup is not None:
        raise InputError(
            f"the submission name {dup!r} appears more than once", code=_CODE, path=str(src)
        )
    folders = Counter(Submission(n, "").folder for n, *_ in rows)
    clash = next((n for n, *_ in rows if folders[Submission(n, "").folder] > 1), None)
    if clash is not None:
        raise InputError(
            f"the submission names {clash!r} and another one give the same folder name"
            f" ({Submission(clash, '').folder}); rename one",
            code=_CODE,
            path=str(src),
        )
    out = []
    for name, path, why in rows:
        where = str(path.absolute()) if why else str(path.resolve())
        if why:
            out.append(Submission(name, where, "bad:" + why))
        else:
            digest, sources = _content(path)
            out.append(Submission(name, where, digest, sources))
    return tuple(out)


def _class_list(src: Path) -> list[tuple[str, Path]]:
    from redletter.untrusted import read_input

    data = read_input(src, code=_CODE, limit=16 << 20, what="the class list")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError("the class list is not UTF-8 text", code=_CODE, path=str(src)) from None
    reader = csv.DictReader(io.StringIO(text))
    if not reader.fieldnames or not {"name", "path"} <= set(reader.fieldnames):
        raise InputError(
            "a class list needs the columns name and path (a header line `name,path`)",
            code=_CODE,
            path=str(src),
        )
    rows = []
    for row in reader:
        name, path = (row.get("name") or "").strip(), (row.get("path") or "").strip()
        if not name or not path:
            raise InputError(
                "a submission needs a name and a path", code=_CODE, path=str(src),
                line=reader.line_num,
            )  # fmt: skip
        p = Path(path)
        rows.append((name, p if p.is_absolute() else (src.parent / p)))
    return rows


# --------------------------------------------------------------------------- one content


def _key(config: GradeConfig, digest: str, what: str) -> str:
    text = "\0".join(("grade", config.key(), digest, what))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _run_what(case_name: str, seed: int) -> str:
    return f"run:{case_name}:{seed}"


@dataclass(frozen=True)
class _Work:
    """One task's item: the submissions of one content (class order) and what the
    journal already holds for it."""

    subs: tuple[Submission, ...]
    prior: tuple[dict[str, Any], ...]

    @property
    def digest(self) -> str:
        return self.subs[0].digest


#: What stops a campaign (a run that never reached the driver, or tampered with it:
#: every other run would do the same); kept here as words so that the driver of a
#: grade needs no import of the adapter (checked against it by the tests).
_STOPS: Final = frozenset({"never-started", "tampered"})


def _course_record(course: CourseTest | None) -> dict[str, Any]:
    """The journal's form of the package's own ``go test`` (``ran`` false: it ships
    no tests of its own); :func:`_course_of` reads it back."""
    if course is None:
        return {"ran": False}
    return {
        "ran": True,
        "verdict": str(course.verdict),
        "command": course.command,
        "race": course.race,
        "tests": [[t.name, t.status, t.seconds, list(t.messages)] for t in course.tests],
        "output": course.output[-_COURSE_OUTPUT:],
        "seconds": course.seconds,
        "reason": course.reason,
        "races": course.races,
        "race_reports": [r[:4000] for r in course.race_reports[:5]],
        "summary": course.summary(),
    }


def _course_of(record: Mapping[str, Any]) -> CourseTest | None:
    from redletter.conformance.adapters.cos418.course import CourseTest, CourseTestCase
    from redletter.conformance.verdict import Verdict

    if not record.get("ran"):
        return None
    return CourseTest(
        Verdict(str(record["verdict"])),
        str(record["command"]),
        bool(record["race"]),
        tuple(
            CourseTestCase(str(n), str(s), float(sec), tuple(map(str, msgs)))
            for n, s, sec, msgs in record["tests"]
        ),
        str(record["output"]),
        float(record["seconds"]),
        reason=str(record["reason"]),
        races=int(record["races"]),
        race_reports=tuple(map(str, record["race_reports"])),
    )


def _build_message(build: Build) -> str:
    """A build failure in one line, naming the compiler's first located error."""
    lines = build.error_lines(60)
    located = [ln.strip() for ln in lines if re.match(r"^\S+\.go:\d+", ln.strip())]
    first = (located or [ln.strip() for ln in lines if ln.strip()] or ["?"])[0]
    return f"the package does not build ({build.command}): {first}"


class _Beside:
    """A call run in a thread of its own beside the caller's work; :meth:`result`
    waits for it a fifth of a second at a time (a Ctrl-C reaches the caller at
    once) and returns its value or raises its exception."""

    def __init__(self, call: Callable[[], CourseTest], name: str) -> None:
        self._box: list[CourseTest | BaseException] = []

        def work() -> None:
            try:
                self._box.append(call())
            except BaseException as exc:  # handed to the caller
                self._box.append(exc)

        self._thread = threading.Thread(target=work, name=name, daemon=True)
        self._thread.start()

    def result(self) -> CourseTest:
        while self._thread.is_alive():
            self._thread.join(0.2)
        got = self._box[0]
        if isinstance(got, BaseException):
            raise got
        return got


class _Grader:
    """All the work of one content: build, campaign, shrinking, the package's own
    tests, the comparison of the two verdicts, the failing run's report; each step
    committed to the journal, each skipped when an earlier attempt committed it."""

    def __init__(self, config: GradeConfig, work: _Work, journal: Journal, out: Path) -> None:
        from redletter.conformance.adapters.cos418.campaign import generate_cases, jobs_of

        self.config = config
        self.work = work
        self.journal = journal
        self.out = out
        self.sub = work.subs[0]
        self.written = 0
        self.prior: dict[str, dict[str, Any]] = {}
        for r in sorted(work.prior, key=lambda r: r.get("finished_at", 0.0)):
            self.prior.setdefault(str(r["what"]), r)
        self.cases = generate_cases(config.seed, config.scenarios)
        self.seeds = tuple(range(config.seed, config.seed + config.seeds))
        self.jobs = jobs_of(self.cases, self.seeds)
        self.runs: list[CaseRun] = []  #: the runs of this attempt
        self.first: CaseRun | None = None  #: this attempt's first failure
        self._again_done = False
        self.ws: Workspace | None = None
        self.shrunk: Shrunk | None = None
        self.course: CourseTest | None = None
        self.stage = "building"
        #: where its code touches the kit (``file:line: what``), from the kit's scan
        self.touches: tuple[str, ...] = ()

    def commit(self, kind: str, what: str, **fields: object) -> None:
        key = _key(self.config, self.sub.digest, what)
        if what in self.prior or key in self.journal.keys:
            return
        record = {
            "v": FORMAT,
            "key": key,
            "grade": self.config.key(),
            "submission": self.sub.name,
            "path": self.sub.path,
            "digest": self.sub.digest,
            "kind": kind,
            "what": what,
            "finished_at": time.time(),
            **fields,
        }
        self.journal.append(record)
        self.prior[what] = record
        self.written += 1

    # -- what is left ------------------------------------------------------

    def _prior_runs(self) -> list[dict[str, Any]]:
        return [r for w, r in self.prior.items() if w.startswith("run:")]

    def _todo(self) -> list[tuple[Case, int]]:
        hangs = sum(r.get("rule") in _HANG_KINDS for r in self._prior_runs())
        if hangs >= self.config.max_hangs:
            return []  # its slot is spent: the rest of its campaign is not run
        if any(r.get("rule") in _STOPS for r in self._prior_runs()):
            return []  # a run never reached the driver or tampered: no other would say more
        return [(c, s) for c, s in self.jobs if _run_what(c.name, s) not in self.prior]

    def _failed_before(self) -> tuple[str, int] | None:
        """The first failure an earlier attempt committed, in the campaign's order."""
        order = {_run_what(c.name, s): i for i, (c, s) in enumerate(self.jobs)}
        fails = [r for r in self._prior_runs() if r.get("verdict") == "fail"]
        if not fails:
            return None
        first = min(fails, key=lambda r: order.get(str(r["what"]), len(order)))
        return str(first["scenario"]), int(first["seed"])

    def _finished(self) -> bool:
        p = self.prior
        if "input" in p or "build" in p or "timeout" in p or "kit-error" in p:
            return True
        if self._todo() or (self.config.shrink and "shrunk" not in p):
            return False
        if self.config.course_test and "course" not in p:
            return False
        return "compared" in p and "report" in p

    # -- the work ----------------------------------------------------------

    def grade(self) -> int:
        """Do what is left; the number of records committed."""
        from redletter.conformance.adapters.cos418.package import inspect_package
        from redletter.conformance.adapters.cos418.workspace import (
            SubmissionTimeUp,
            Workspace,
        )

        if self._finished():
            return 0
        started = time.monotonic()
        try:
            # Names are checked after the package's own build (a package that does not
            # compile is a build failure quoting the compiler, not bad input).
            pkg = inspect_package(Path(self.sub.path), strict=False)
        except RedletterError as exc:
            self.commit("bad-input", "input", message=exc.message)
            return self.written
        with Workspace(pkg, race=self.config.race) as ws:
            if self.config.submission_timeout is not None:
                ws.deadline = started + self.config.submission_timeout
            try:
                self._work(ws, pkg)
            except InternalError as exc:
                # A fault of the kit (its driver failed in a package that cannot have
                # caused it): never the submission's verdict.  The row is unknown and
                # says so; the slot is spent (a resumed grade does not run it again).
                self._stopped(
                    "kit-error",
                    started,
                    f"the kit failed while {self.stage} ({exc.code}: {exc.message}): a fault"
                    " of the kit, not of the package; ",
                    "; please report it",
                )
            except SubmissionTimeUp:
                self._stopped(
                    "timeout",
                    started,
                    f"stopped by --submission-timeout ({self.config.submission_timeout:g} s)"
                    f" while {self.stage}: ",
                )
        return self.written

    def _stopped(self, kind: str, started: float, before: str, after: str = "") -> None:
        """Commit why the submission's work stopped before its end (``kind`` is also the
        record's name): its message is ``before``, how many runs were done, ``after``."""
        done = f"{len(self._prior_runs())} of {len(self.jobs)} runs done"
        self.commit(
            kind,
            kind,
            stage=self.stage,
            seconds=time.monotonic() - started,
            message=f"{before}{done}{after}",
        )

    def _limits(self) -> RunLimits:
        from redletter.conformance.adapters.cos418.workspace import RunLimits

        c = self.config
        return RunLimits(
            step_timeout=c.step_timeout,
            deadlock_after=c.deadlock_after,
            collect_timeout=c.collect_timeout,
            kill_after=c.kill_after,
        )

    def _work(self, ws: Workspace, pkg: GoPackage) -> None:
        from redletter.conformance.adapters.cos418.campaign import CaseRun, run_one, shrink
        from redletter.conformance.adapters.cos418.judge import TimedOutcome
        from redletter.conformance.formats.cos418 import format_scenario, format_topology
        from redletter.conformance.verdict import Verdict

        cfg = self.config
        self.ws = ws
        limits = self._limits()
        pool = TimedOutcome(cfg.outcome_timeout)
        try:
            build = ws.build()
        except InputError as exc:  # its folder changed since it was read (a link, ...)
            self.commit("bad-input", "build", message=exc.message)
            return
        touches, unscanned = ws.scan()
        self.touches = tuple(t.show() for t in touches) + (
            (f"not scanned: {unscanned}",) if unscanned else ()
        )
        if not build.ok:
            driver = build.driver_only
            self.commit(
                "bad-input" if driver else "build",
                "build",
                dialect=pkg.dialect.key,
                command=build.command,
                output="\n".join(build.error_lines(30)),
                seconds=build.seconds,
                message=(
                    "the package lacks a name of the interface the kit's driver uses"
                    if driver
                    else _build_message(build)
                ),
                touches_kit=list(self.touches),
            )
            return
        course = self._start_course(ws)
        self.stage = "running its campaign"
        hangs = sum(r.get("rule") in _HANG_KINDS for r in self._prior_runs())
        for case, seed in self._todo():
            if hangs >= cfg.max_hangs:
                break
            r = run_one(ws, case, seed, limits, outcome=pool)
            hangs += r.kind in _HANG_KINDS
            failed = r.verdict == Verdict.FAIL
            self.commit(
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
                top=format_topology(case.topology) if failed else "",
                events=format_scenario(case.scenario) if failed else "",
                touches_kit=list(self.touches),
            )
            cr = CaseRun(case, seed, r)
            self.runs.append(cr)
            if self.first is None and failed:
                self.first = cr
            if failed and r.kind in _STOPS:
                break  # as cos418 test: no other run would say more
        if cfg.shrink and "shrunk" not in self.prior:
            self.stage = "shrinking its first failure"
            first = self._first()
            if first is not None and first.result.kind in _STOPS:
                self.commit(
                    "shrunk",
                    "shrunk",
                    rule="",
                    message=f"not shrunk: its first failure ({first.result.kind}) happens"
                    " before any step of a scenario",
                )
            elif first is not None:
                left = ws.deadline - time.monotonic() if ws.deadline is not None else None
                budget = cfg.shrink_seconds if left is None else min(cfg.shrink_seconds, left)
                sh = shrink(ws, first, limits, seeds=self.seeds, outcome=pool,
                            max_seconds=max(budget, 0.0))  # fmt: skip
                self.shrunk = sh
                self.commit(
                    "shrunk",
                    "shrunk",
                    scenario=sh.case.name,
                    original=sh.original.name,
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
            elif self._failed_before() is not None:
                self.commit(
                    "shrunk",
                    "shrunk",
                    rule="",
                    message="not shrunk: its first failure did not show again when run to be"
                    " shrunk (it depends on timing)",
                )
            elif hangs < cfg.max_hangs:
                # Every run done and none failed: nothing to shrink, said once.
                self.commit("shrunk", "shrunk", rule="", message="no failure")
        self._course(course)
        self._compare()
        self._report(ws, pkg, build, limits)

    def _first(self) -> CaseRun | None:
        """The campaign's first failure: this attempt's, else the one an earlier attempt
        committed, run once more (for shrinking, the comparison and the report; None
        when it does not fail again)."""
        from redletter.conformance.adapters.cos418.campaign import CaseRun
        from redletter.conformance.verdict import Verdict

        if self.first is not None or self._again_done:
            return self.first
        self._again_done = True
        failure = self._failed_before()
        if failure is None:
            return None
        name, seed = failure
        case = next((c for c in self.cases if c.name == name), None)
        if case is None:
            return None
        r = self._run(case, seed)
        self.first = CaseRun(case, seed, r) if r.verdict == Verdict.FAIL else None
        return self.first

    def _run(self, case: Case, seed: int) -> RunResult:
        from redletter.conformance.adapters.cos418.campaign import run_one
        from redletter.conformance.adapters.cos418.judge import TimedOutcome

        assert self.ws is not None
        return run_one(
            self.ws, case, seed, self._limits(), outcome=TimedOutcome(self.config.outcome_timeout)
        )

    def _start_course(self, ws: Workspace) -> _Beside | None:
        """The package's own tests, started beside the campaign as ``cos418 test``
        starts them (a test that hangs waits out its time limit while the kit's
        runs go on); None when they need not run."""
        from redletter.conformance.adapters.cos418.course import run_course_test

        if "course" in self.prior or not self.config.course_test:
            return None
        if not ws.package.has_course_test:
            self.commit("course", "course", **_course_record(None))
            return None
        timeout = self.config.course_timeout
        return _Beside(lambda: run_course_test(ws, timeout=timeout), "redletter-course")

    def _course(self, beside: _Beside | None) -> None:
        """The package's own tests' verdict, committed (waited for if still running)."""
        if beside is not None:
            self.stage = "running its own tests (go test)"
            self.course = beside.result()
            self.commit("course", "course", **_course_record(self.course))
        elif "course" in self.prior:
            self.course = _course_of(self.prior["course"])

    def _kit_verdict(self) -> Verdict:
        from redletter.conformance.verdict import Verdict

        runs = self._prior_runs()
        if any(r.get("verdict") == "fail" for r in runs):
            return Verdict.FAIL
        if any(r.get("verdict") == "unknown" for r in runs) or len(runs) < len(self.jobs):
            return Verdict.UNKNOWN
        return Verdict.PASS

    def _compare(self) -> None:
        """Why the course's verdict differs from the kit's, in ``cos418 test``'s words
        (:func:`~redletter.conformance.adapters.cos418.course.compare`)."""
        from redletter.conformance.adapters.cos418.course import compare
        from redletter.conformance.verdict import Verdict

        if "compared" in self.prior or (self.config.course_test and "course" not in self.prior):
            return
        verdict = self._kit_verdict()
        text = ""
        if self.course is not None:
            first = self._first() if verdict == Verdict.FAIL else None
            text = compare(self.course, verdict, self.runs, first)
        self.commit("compared", "compared", kit_verdict=str(verdict), disagreement=text)

    def _shown(self) -> CaseRun | None:
        """The failing run to show: the shrunk one, else the first failure (run again
        when an earlier attempt found it)."""
        from redletter.conformance.adapters.cos418.campaign import Case, CaseRun
        from redletter.conformance.formats.cos418 import parse_scenario, parse_topology
        from redletter.conformance.verdict import Verdict

        if self.shrunk is not None:
            return CaseRun(self.shrunk.case, self.shrunk.seed, self.shrunk.result)
        sh = self.prior.get("shrunk")
        if sh is not None and sh.get("rule"):
            case = Case(
                str(sh["scenario"]),
                next((c.klass for c in self.cases if c.name == sh.get("original")), "given"),
                parse_topology(str(sh["top"]), "shrunk.top"),
                parse_scenario(str(sh["events"]), "shrunk.events"),
                "the shrunk failure",
            )
            r = self._run(case, int(sh["seed"]))
            if r.verdict == Verdict.FAIL:
                return CaseRun(case, int(sh["seed"]), r)
        return self._first()

    def _report(self, ws: Workspace, pkg: GoPackage, build: Build, limits: RunLimits) -> None:
        """The failing run's report, written by ``cos418 test``'s own
        :func:`~redletter.conformance.adapters.cos418.report.write_report` into
        ``failures/<content>/`` (one for the identical submissions of this content)."""
        from redletter.conformance.adapters.cos418.check import kit_command, replay_command
        from redletter.conformance.adapters.cos418.report import write_report
        from redletter.conformance.adapters.cos418.summary import CheckOptions, PackageCheck
        from redletter.conformance.report import RunFolder
        from redletter.conformance.verdict import Verdict

        if "report" in self.prior:
            return
        if self._kit_verdict() != Verdict.FAIL:
            self.commit("report", "report", folder="", note="")  # nothing failed: none
            return
        self.stage = "writing the report of its failing run"
        shown = self._shown()
        if shown is None:
            self.commit(
                "report",
                "report",
                folder="",
                note="its failure did not show again when run for its report (it depends on"
                " timing): the gradebook keeps its words",
            )
            return
        cfg = self.config
        rel = f"failures/{self.sub.digest[:16]}"
        with SafeFolder(self.out, code=_CODE) as top, top.folder("failures") as failures:
            failures.folder(self.sub.digest[:16]).close()
        folder = self.out / rel
        notes = list(pkg.notes)
        earlier = len(self._prior_runs()) - len(self.runs)
        if earlier > 0:
            notes.append(
                f"{earlier} of its runs were judged by an earlier attempt of this grade: this"
                " page lists the runs of the attempt that wrote it; the gradebook counts all"
            )
        check = PackageCheck(
            package=pkg,
            build=build,
            verdict=Verdict.FAIL,
            options=CheckOptions(
                seed=cfg.seed,
                scenarios=cfg.scenarios,
                seeds=cfg.seeds,
                race=cfg.race,
                test_data=False,
                course_test=cfg.course_test,
                course_timeout=cfg.course_timeout,
                shrink=cfg.shrink,
                limits=limits,
                outcome_timeout=cfg.outcome_timeout,
            ),
            seeds=self.seeds,
            runs=tuple(self.runs),
            planned=len(self.jobs),
            seconds=sum(r.result.raw.seconds for r in self.runs),
            first_failure=self._first() or shown,
            shrunk=self.shrunk,
            course=self.course,
            disagreement=str(self.prior.get("compared", {}).get("disagreement", "")),
            message=shown.result.message,
            replay=replay_command(
                pkg.source,
                folder / "shrunk.top",
                folder / "shrunk.events",
                shown.seed,
                race=cfg.race,
                kit=kit_command(),
            ),
            notes=tuple(notes),
            folder=folder,
            extra=(
                {"sandbox": ws.sandbox_report.to_json()} if ws.sandbox_report is not None else {}
            ),
        )
        write_report(RunFolder(folder), check)
        self.commit("report", "report", folder=rel, note="")


# --------------------------------------------------------------------------- the job


def _task(
    config: GradeConfig, journal_dir: str, run_id: str
) -> Callable[[int, Iterable[_Work]], Iterator[tuple[tuple[str, ...], int]]]:
    def run(index: int, works: Iterable[_Work]) -> Iterator[tuple[tuple[str, ...], int]]:
        path = Path(journal_dir) / f"results-{run_id}-{index:05d}.ndjson"
        with Journal(path) as journal:
            for work in works:
                n = _Grader(config, work, journal, Path(journal_dir).parent).grade()
                yield tuple(s.name for s in work.subs), n

    return run


def _records(out: Path, config: GradeConfig, digests: set[str]) -> list[dict[str, Any]]:
    """The committed records of this grade's configuration for these contents."""
    records, _ = read_journal(out / "journal")
    grade = config.key()
    return [r for r in records if r.get("grade") == grade and r.get("digest") in digests]


def _contents(subs: Sequence[Submission]) -> dict[str, list[Submission]]:
    """The submissions to grade, by content (class order kept)."""
    by: dict[str, list[Submission]] = {}
    for s in subs:
        if not s.bad:
            by.setdefault(s.digest, []).append(s)
    return by


def _check_out(root: Path) -> None:
    """The grade's folder and its journal folder exist, and nothing planted there can
    be followed or block the grade (a link or a FIFO among the journals)."""
    with SafeFolder(root, code=_CODE) as top:
        top.probe()
        top.check("gradebook.parquet", "gradebook.csv", "gradebook.html", "reports/", "failures/")
        with top.folder("journal") as journal:
            journal.probe()
    for entry in os.scandir(root / "journal"):
        if entry.name.endswith(".ndjson") and not entry.is_file(follow_symlinks=False):
            raise InputError(
                f"journal/{entry.name} is not a plain file (a link or a FIFO?): the grade"
                " reads only the journals it wrote; remove it",
                code=_CODE,
                path=str(root),
            )


def grade_class(
    subs: Sequence[Submission],
    out: str | Path,
    config: GradeConfig | None = None,
    *,
    spark: SparkSession | None = None,
    on_submission: Callable[[tuple[str, ...], int], None] | None = None,
) -> GradeSummary:
    """Grade every submission (module docstring) on ``spark`` (one task per content),
    or in this process when ``spark`` is None; then write the gradebook and every
    submission's page into ``out``.  ``on_submission`` hears of each content graded:
    its submissions' names and the records committed."""
    cfg = config if config is not None else GradeConfig()
    root = Path(out)
    _check_out(root)
    started = time.monotonic()
    from redletter.conformance.sandbox import cleanup_stale

    cleanup_stale()  # what grades killed earlier left behind
    contents = _contents(subs)
    prior: dict[str, list[dict[str, Any]]] = {d: [] for d in contents}
    for r in _records(root, cfg, set(contents)):
        prior[str(r["digest"])].append(r)
    todo = [_Work(tuple(ss), tuple(prior[d])) for d, ss in contents.items()]
    job = _task(cfg, str((root / "journal").resolve()), uuid.uuid4().hex[:12])
    ran = 0
    if spark is not None and todo:
        spark.sparkContext.setJobDescription(f"grade: {len(todo)} submissions")
        rdd = spark.sparkContext.parallelize(todo, len(todo))
        for names, n in rdd.mapPartitionsWithIndex(job).collect():
            ran += n
            if on_submission is not None:
                on_submission(names, n)
    else:
        for i, work in enumerate(todo):
            for names, n in job(i, [work]):
                ran += n
                if on_submission is not None:
                    on_submission(names, n)
    rows = gradebook_rows(subs, root, cfg)
    write_gradebook(rows, root)
    write_reports(subs, root, cfg, rows)
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
        pa.field("course_verdict", pa.string(), nullable=False),  # pass fail, "" not run
        pa.field("course_summary", pa.string(), nullable=False),
        pa.field("disagreement", pa.string(), nullable=False),
        pa.field("identical_to", pa.string(), nullable=False),
        pa.field("touches_kit", pa.string(), nullable=False),
        pa.field("stopped", pa.string(), nullable=False),
        pa.field("failure_report", pa.string(), nullable=False),
    ]
)


def _earliest(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One record per key: the earliest committed (as the campaigns keep), in the
    order they were committed."""
    best: dict[str, dict[str, Any]] = {}
    for r in records:
        kept = best.get(r["key"])
        if kept is None or r["finished_at"] < kept["finished_at"]:
            best[r["key"]] = r
    return sorted(best.values(), key=lambda r: r["finished_at"])


def _by_content(
    subs: Sequence[Submission], out: Path, cfg: GradeConfig
) -> dict[str, list[dict[str, Any]]]:
    by: dict[str, list[dict[str, Any]]] = {d: [] for d in _contents(subs)}
    for r in _earliest(_records(out, cfg, set(by))):
        by[str(r["digest"])].append(r)
    return by


def _identical(subs: Sequence[Submission]) -> dict[str, list[str]]:
    """For each submission, the others with the same Go sources (comments and layout
    aside)."""
    same: dict[str, list[str]] = {}
    for s in subs:
        if s.sources:
            same.setdefault(s.sources, []).append(s.name)
    return {s.name: [n for n in same.get(s.sources, []) if n != s.name] for s in subs}


def _course_summary(course: Mapping[str, Any] | None) -> str:
    if course is None:
        return ""
    return str(course.get("summary", "")) if course.get("ran") else "no tests of its own"


def _row(
    sub: Submission, recs: Sequence[dict[str, Any]], cfg: GradeConfig, same: Sequence[str]
) -> dict[str, Any]:
    planned = cfg.scenarios * cfg.seeds
    what = {str(r["what"]): r for r in recs}
    runs = [r for r in recs if r["kind"] == "run"]
    build = what.get("input") or what.get("build")
    shrunk = what.get("shrunk") if what.get("shrunk", {}).get("rule") else None
    course = what.get("course")
    timeout = what.get("timeout")
    kit_error = what.get("kit-error")
    report = what.get("report")
    fails = [r for r in runs if r["verdict"] == "fail"]
    first = fails[0] if fails else None
    if sub.bad:
        verdict = "bad-input"
    elif build is not None:
        verdict = "bad-input" if build["kind"] == "bad-input" else "build"
    elif fails:
        verdict = "fail"
    elif any(r["verdict"] == "unknown" for r in runs) or len(runs) < planned:
        verdict = "unknown"
    else:
        verdict = "pass"
    kinds = Counter(str(r.get("rule", "")) for r in runs)
    hangs = sum(n for k, n in kinds.items() if k in _HANG_KINDS)
    stopped = ""
    stops = next((r for r in runs if r.get("rule") in _STOPS), None)
    if kit_error is not None:
        stopped = str(kit_error["message"])
    elif timeout is not None:
        stopped = str(timeout["message"])
    elif stops is not None and len(runs) < planned:
        how = "never reached" if stops["rule"] == "never-started" else "tampered with"
        stopped = (
            f"a run {how} the driver (every other would do the same): the rest of its"
            " campaign was not run"
        )
    elif hangs >= cfg.max_hangs and len(runs) < planned:
        stopped = (
            f"{hangs} hung runs (--max-hangs {cfg.max_hangs}): the rest of its campaign was not run"
        )
    elif sub.digest and not sub.bad and not recs:
        stopped = "not graded yet (the grade was stopped before it)"
    notes = sorted({n for r in recs for n in r.get("touches_kit", [])})
    explanation = (
        sub.bad
        or (str(first["message"]) if first else str(build["message"]) if build else "")
        or stopped
    )
    return {
        "submission": sub.name,
        "path": sub.path,
        "dialect": str((runs[0] if runs else build or {}).get("dialect", "")),
        "verdict": verdict,
        "runs": len(runs),
        "passed": sum(r["verdict"] == "pass" for r in runs),
        "failed": len(fails),
        "unknown": sum(r["verdict"] == "unknown" for r in runs),
        "not_run": 0 if build is not None or sub.bad else max(0, planned - len(runs)),
        **{f"failed_{c.replace('-', '_')}": sum(r["klass"] == c for r in fails) for c in CLASSES},
        "first_rule": str(first["rule"]) if first else "",
        "first_scenario": str(first["scenario"]) if first else "",
        "first_seed": int(first["seed"]) if first else None,
        "first_explanation": explanation,
        "shrunk_size": str(shrunk.get("size", "")) if shrunk else "",
        "shrunk_scenario": (str(shrunk["top"]) + "\n" + str(shrunk["events"])) if shrunk else "",
        "build_failures": int(build is not None and build["kind"] == "build"),
        "hangs": hangs,
        "panics": sum(n for k, n in kinds.items() if k.startswith("panic")),
        "races": kinds.get("data-race", 0),
        "seconds": round(sum(float(r.get("seconds", 0.0)) for r in recs if "seconds" in r), 3),
        "report": f"reports/{sub.folder}/report.html",
        "course_verdict": str(course.get("verdict", "")) if course else "",
        "course_summary": _course_summary(course),
        "disagreement": str(what.get("compared", {}).get("disagreement", "")),
        "identical_to": ", ".join(same),
        "touches_kit": "; ".join(notes),
        "stopped": stopped,
        "failure_report": (
            f"{report['folder']}/report.html" if report is not None and report["folder"] else ""
        ),
    }


def gradebook_rows(subs: Sequence[Submission], out: Path, cfg: GradeConfig) -> list[dict[str, Any]]:
    """One row per submission (:data:`GRADEBOOK`), from the committed records of its
    content (identical submissions: the same records, each its own row)."""
    by = _by_content(subs, out, cfg)
    same = _identical(subs)
    return [_row(s, by.get(s.digest, []), cfg, same[s.name]) for s in subs]


#: The gradebook page's columns: (header, what it holds).  Counts that belong together
#: share a column ("8 / 1 / 0 / 191"), so that a class fits a window's width; the
#: CSV and Parquet files have one column each.
_COLUMNS: Final = (
    ("submission", "the submission; its page has its runs and its first failure"),
    ("verdict", "the kit's verdict on its campaign"),
    ("go test", "the verdict of the package's own tests, run as they are (the course's)"),
    (
        "runs: passed / failed / unknown / not run",
        "runs passed, failed, that the kit could not decide, and of the campaign not run"
        " (a build error, hung runs, the time limit)",
    ),
    (
        "failed runs: " + " / ".join(CLASSES),
        "failed runs of the " + ", ".join(CLASSES) + " scenarios",
    ),
    ("first failure", "the first failing run's rule, scenario and seed, or the build error"),
    ("identical to", "submissions whose Go sources are the same, comments and layout aside"),
    ("touches the kit", "where its code reaches for the kit's descriptors or the process"),
    ("hangs / panics / races", "hung runs, runs that panicked, runs with a data race (--race)"),
    ("seconds", "the time its grading took"),
)


def _first_cell(r: Mapping[str, Any]) -> str:
    if r["first_rule"]:
        text = f"{r['first_rule']} ({r['first_scenario']}, seed {r['first_seed']})"
    elif r["verdict"] in ("build", "bad-input"):
        text = str(r["first_explanation"])
    else:
        text = str(r["stopped"])
    link = r["failure_report"]
    cell = escape(text)
    if link:
        cell += f" <a href='{escape(str(link))}'>report</a>"
    return cell


def write_gradebook(rows: Sequence[Mapping[str, Any]], out: Path) -> None:
    """``gradebook.parquet``, ``gradebook.csv`` and ``gradebook.html``, each written
    whole under a fresh name and renamed over the old one (nothing planted in the
    folder is followed)."""
    table = pa.Table.from_pylist([dict(r) for r in rows], schema=GRADEBOOK)
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    text = io.StringIO(newline="")
    w = csv.DictWriter(text, fieldnames=GRADEBOOK.names)
    w.writeheader()
    for r in rows:
        w.writerow({k: ("" if r[k] is None else r[k]) for k in GRADEBOOK.names})
    counts = Counter(str(r["verdict"]) for r in rows)
    head = "".join(f"<th title='{escape(t)}'>{escape(n)}</th>" for n, t in _COLUMNS)
    body = []
    for r in rows:
        v = str(r["verdict"])
        cv = str(r["course_verdict"])
        cells = [
            f"<td><a href='{escape(str(r['report']))}'>{escape(str(r['submission']))}</a></td>",
            f"<td class='{escape(v)}'>{escape(v)}</td>",
            f"<td class='{escape(cv)}' title='{escape(str(r['course_summary']))}'>"
            f"{escape(cv or '—')}</td>",
            "<td>"
            + " / ".join(str(r[k]) for k in ("passed", "failed", "unknown", "not_run"))
            + "</td>",
            "<td>" + " / ".join(str(r["failed_" + c.replace("-", "_")]) for c in CLASSES) + "</td>",
            f"<td>{_first_cell(r)}</td>",
            f"<td>{escape(str(r['identical_to']))}</td>",
            f"<td>{escape(str(r['touches_kit']))}</td>",
            "<td>" + " / ".join(str(r[k]) for k in ("hangs", "panics", "races")) + "</td>",
            f"<td>{float(r['seconds']):.1f}</td>",
        ]
        body.append("<tr>" + "".join(cells) + "</tr>")
    html = (
        "<!doctype html><html><head><meta charset='utf-8'><title>redletter gradebook</title>"
        "<style>body{font-family:sans-serif;margin:2em}td,th{border:1px solid #ccc;"
        "padding:2px 8px;vertical-align:top}td{max-width:24em;overflow-wrap:break-word}"
        "table{border-collapse:collapse}"
        ".fail,.build,.bad-input{color:#c0392b}"
        ".pass{color:#1e8449}.unknown{color:#b9770e}</style></head><body>"
        f"<h1>Gradebook: {len(rows)} submissions</h1><p>"
        + ", ".join(f"{n} {escape(k)}" for k, n in sorted(counts.items()))
        + "</p><p>The column <i>failed runs</i> counts <b>failed runs</b> in each class of"
        " scenario (one / sequential / concurrent / same-tick); <i>go test</i>"
        " is the package's own tests (the course's verdict), beside the kit's.</p>"
        f"<table><tr>{head}</tr>{''.join(body)}</table></body></html>"
    )
    with SafeFolder(out, code=_CODE) as folder:
        folder.write("gradebook.parquet", sink.getvalue().to_pybytes())
        folder.write("gradebook.csv", text.getvalue())
        folder.write("gradebook.html", html)


def _course_html(r: Mapping[str, Any], course: Mapping[str, Any] | None) -> list[str]:
    if course is None:
        return []
    if not course.get("ran"):
        return ["<h2>Its own tests</h2><p>It ships no tests of its own (no course verdict).</p>"]
    out = [
        f"<h2>Its own tests: <span class='{escape(str(course['verdict']))}'>"
        f"{escape(str(course['summary']))}</span></h2>",
        f"<p>Run as they are: <code>{escape(str(course['command']))}</code> on an untouched"
        f" copy. The kit's verdict: {escape(str(r['verdict']))}.</p>",
    ]
    if r["disagreement"]:
        out.append(f"<p><b>Why they differ.</b> {escape(str(r['disagreement']))}</p>")
    if course["verdict"] == "fail":
        out.append(
            f"<details><summary>its output</summary><pre>{escape(str(course['output']))}</pre>"
            "</details>"
        )
    return out


def write_reports(
    subs: Sequence[Submission],
    out: Path,
    cfg: GradeConfig,
    rows: Sequence[Mapping[str, Any]] | None = None,
) -> None:
    """Each submission's page (``reports/<name>/report.html``), with its shrunk (or
    first) failing scenario as ``.top``/``.events`` files beside it and a link to
    its failing run's report (the diagram, expected vs recorded)."""
    from redletter.conformance.adapters.cos418.check import kit_command, replay_command

    by = _by_content(subs, out, cfg)
    table = {str(r["submission"]): r for r in rows or gradebook_rows(subs, out, cfg)}
    with SafeFolder(out, code=_CODE) as top, top.folder("reports") as reports:
        for sub in subs:
            recs = by.get(sub.digest, [])
            row = table[sub.name]
            what = {str(r["what"]): r for r in recs}
            runs = [r for r in recs if r["kind"] == "run"]
            build = what.get("input") or what.get("build")
            shrunk = what.get("shrunk") if what.get("shrunk", {}).get("rule") else None
            first = next((r for r in runs if r["verdict"] == "fail"), None)
            shown = shrunk or first
            html = [
                "<!doctype html><html><head><meta charset='utf-8'>",
                f"<title>{escape(sub.name)}</title><style>body{{font-family:sans-serif;"
                "max-width:75em;margin:2em auto}td,th{border:1px solid #ccc;padding:2px 8px}"
                "table{border-collapse:collapse}pre{background:#f6f6f6;padding:.5em;"
                "white-space:pre-wrap}.fail{color:#c0392b}.pass{color:#1e8449}</style>"
                "</head><body>",
                f"<h1>{escape(sub.name)}: {escape(str(row['verdict']))}</h1>"
                f"<p><code>{escape(sub.path)}</code></p>",
                "<p><a href='../../gradebook.html'>the gradebook</a></p>",
            ]
            if sub.bad:
                html.append(f"<h2>Not graded</h2><p>{escape(sub.bad)}</p>")
            if row["identical_to"]:
                html.append(
                    "<p><b>Its Go sources are the same as those of:</b> "
                    f"{escape(str(row['identical_to']))} (comments and layout aside).</p>"
                )
            if row["stopped"]:
                html.append(f"<p><b>Stopped:</b> {escape(str(row['stopped']))}</p>")
            if build is not None:
                html.append(
                    f"<h2>{escape(str(build['message']))}</h2>"
                    f"<pre>{escape(str(build.get('output', '')))}</pre>"
                )
            with reports.folder(sub.folder) as d:
                if shown is not None:
                    d.write("failing.top", str(shown["top"]))
                    d.write("failing.events", str(shown["events"]))
                    replay = replay_command(
                        Path(sub.path),
                        d.path / "failing.top",
                        d.path / "failing.events",
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
                    if row["failure_report"]:
                        html.append(
                            f"<p><a href='../../{escape(str(row['failure_report']))}'>The failing"
                            " run's report</a>: its space-time diagram, and what Chandy–Lamport"
                            " records beside what the package returned.</p>"
                        )
                    elif what.get("report", {}).get("note"):
                        html.append(f"<p>{escape(str(what['report']['note']))}</p>")
                    if shown.get("details"):
                        html.append(f"<pre>{escape(chr(10).join(shown['details']))}</pre>")
                    html.append(
                        "<table><tr><th>topology (.top)</th><th>events (.events)</th></tr>"
                        f"<tr><td><pre>{escape(str(shown['top']))}</pre></td>"
                        f"<td><pre>{escape(str(shown['events']))}</pre></td></tr></table>"
                        f"<h3>Replay</h3><pre>{escape(replay)}</pre>"
                    )
                html += _course_html(row, what.get("course"))
                rows_html = "".join(
                    f"<tr><td>{escape(str(r['scenario']))}</td><td>{escape(str(r['klass']))}</td>"
                    f"<td>{r['seed']}</td><td class='{escape(str(r['verdict']))}'>"
                    f"{escape(str(r['verdict']))}</td><td>{escape(str(r['rule']))}</td></tr>"
                    for r in runs
                )
                if runs:
                    html.append(
                        "<h2>Runs</h2><table><tr><th>scenario</th><th>class</th><th>seed</th>"
                        f"<th>verdict</th><th>rule</th></tr>{rows_html}</table>"
                    )
                html.append("</body></html>")
                d.write("report.html", "\n".join(html))


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
