"""The verdict on one run of a COS 418 package, and the evidence it rests on.

:func:`judge_raw` turns what a run left behind (:class:`RawRun`) into a
:class:`RunResult`.  Each verdict names the evidence it rests on
(:attr:`RunResult.evidence`), and a ``fail`` never rests on the package's log
alone (the log is the package's own writing):

- the run itself: a build error, a hang (a step that never returned: every
  goroutine of the package waiting on a lock or a channel, with the goroutine
  dump; or a step past ``--step-timeout``), a panic (with the stack), a Go
  runtime fatal error, a process that died or had to be killed, a data race
  (under ``--race``; races only with the kit's own reading of the log are not
  the package's);
- completion: every snapshot started must be collected (``CollectSnapshot``
  returned, with the stack of a collector that never did);
- the course's own checks on what ``CollectSnapshot`` returned: one snapshot per
  snapshot started, and each holding the simulator's total tokens, in the
  course's words (``Snapshot N: simulator has X tokens, snapshot has Y``);
- the snapshots' shape: the id asked for, exactly the topology's servers, only
  token messages on the topology's links;
- the run's own log, when its course events read consistently
  (:mod:`redletter.conformance.judges.courselog`): each returned snapshot must be
  the one Chandy–Lamport records for the delivery order that happened
  (:func:`redletter.conformance.judges.run.judge_run`);
- by outcome, when the log cannot be used or something failed: does some FIFO
  schedule of the scenario yield the snapshots
  (:func:`redletter.conformance.judges.outcome.judge_outcome`)?
- the document itself: it must come from the kit's driver (authenticated with the
  build's key, :func:`~.workspace.read_channel`) and describe the run the kit asked
  for (the request's digest and nonce, its topology, its scenario, and one
  snapshot for each of the scenario's snapshot events, started by that event's
  server); anything else is tampering.

A fault of the kit is never the package's verdict: a Go runtime fatal error whose
goroutine lies in the driver's own code, or a driver that could not read what the
package returned, raises :class:`~redletter.errors.InternalError` (exit 4, with
the stack).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final

from redletter.conformance.adapters.cos418.workspace import RawRun
from redletter.conformance.formats.cos418 import (
    Scenario,
    Snap,
    Snapshot,
    Step,
    Topology,
    format_scenario,
)
from redletter.conformance.judges.courselog import read_course_log
from redletter.conformance.judges.outcome import judge_outcome
from redletter.conformance.judges.run import RunJudgement, judge_run, show_link
from redletter.conformance.judges.rundoc import Goroutine, RunDocument, parse_run_document
from redletter.conformance.sandbox import describe_bytes
from redletter.conformance.verdict import Divergence, Verdict
from redletter.errors import InputError, InternalError

__all__ = [
    "OutcomeFn",
    "RunResult",
    "TimedOutcome",
    "course_checks",
    "judge_raw",
    "outcome_in_process",
    "races",
    "show_goroutines",
]

#: Judges snapshots by outcome: ``(topology, scenario, snaps) -> (verdict, explanation)``.
OutcomeFn = Callable[[Topology, Scenario, Sequence[Snap]], tuple[Verdict, str]]

# The evidence a verdict rests on, in the words the report prints.
EV_BUILD: Final = "the compiler's output"
EV_DUMP: Final = "the goroutine dump of the hung step"
EV_TIMEOUT: Final = "the step's time limit"
EV_PANIC: Final = "the panic and its stack"
EV_FATAL: Final = "the Go runtime's fatal error"
EV_EXIT: Final = "the process's exit"
EV_COMPLETION: Final = "completion: every snapshot started is collected"
EV_COURSE: Final = "the course's checks (snapshot count, token total)"
EV_SHAPE: Final = "the returned snapshots' shape (id, servers, links)"
EV_LOG: Final = "the run's own log (the course's events, read consistently)"
EV_OUTCOME: Final = "the outcome judge (a FIFO schedule of the scenario)"
EV_RACE: Final = "the race detector"
EV_TAMPER: Final = "the run document against the kit's request"
EV_DISK: Final = "the sandbox's bound on what a run writes"


def outcome_in_process(
    topology: Topology, scenario: Scenario, snaps: Sequence[Snap]
) -> tuple[Verdict, str]:
    """The outcome judge, with its default limits."""
    return TimedOutcome()(topology, scenario, snaps)


class TimedOutcome:
    """The outcome judge under a time limit per call: past it, the answer is
    ``unknown`` (counted in :attr:`timeouts`).  Calls may come from several
    threads at once (each judgement has a z3 context of its own, and z3 runs
    without Python's lock).  Each judgement runs in a thread of its own that the
    caller waits for a tenth of a second at a time, so a Ctrl-C reaches the caller
    at once even while z3 works (the judgement's thread is then abandoned)."""

    def __init__(self, timeout: float = 60.0, explain: float = 5.0) -> None:
        self.timeout = timeout
        self.explain = explain
        self.timeouts = 0
        self.calls = 0

    def __call__(
        self, topology: Topology, scenario: Scenario, snaps: Sequence[Snap]
    ) -> tuple[Verdict, str]:
        self.calls += 1
        box: list[tuple[Verdict, str]] = []

        def work() -> None:
            try:
                j = judge_outcome(
                    topology, scenario, list(snaps), timeout=self.timeout, explain=self.explain
                )
            except InputError as exc:
                box.append((Verdict.UNKNOWN, f"not judged: {exc.message}"))
            except Exception as exc:  # the outcome judge's own bug must not stop the campaign
                box.append(
                    (Verdict.UNKNOWN, f"the outcome judge failed ({type(exc).__name__}: {exc})")
                )
            else:
                box.append((Verdict(j.verdict), j.explanation()))

        worker = threading.Thread(target=work, name="redletter-outcome", daemon=True)
        worker.start()
        while worker.is_alive():
            worker.join(0.1)
        verdict, text = box[0] if box else (Verdict.UNKNOWN, "the outcome judge gave no answer")
        if verdict == Verdict.UNKNOWN:
            self.timeouts += 1
        return verdict, text


@dataclass(frozen=True)
class RunResult:
    """The verdict on one run (a :class:`~redletter.conformance.verdict.Result`).

    ``kind`` names what went wrong (``""`` for a pass): a rule of the algorithm
    (the run judge's kinds), ``token-conservation`` or ``snapshot-count`` (the
    course's checks), ``outcome``, ``never-completes``, ``hang``, ``panic:...``,
    ``fatal:...``, ``crash``, ``killed``, ``never-started`` (the package's
    initialisation never let the driver start), ``out-of-memory``, ``disk-full``,
    ``data-race``, ``tampered``, ``wrong-id``, ``wrong-servers``, ``recorded-marker``;
    ``unattributable`` (unknown: a fault in the driver's code in a package that
    reaches the process's memory).
    ``evidence`` names what the verdict rests on.
    """

    verdict: Verdict
    kind: str
    message: str
    raw: RawRun
    document: RunDocument | None = None
    run: RunJudgement | None = None
    outcome_verdict: Verdict | None = None
    outcome_message: str = ""
    notes: tuple[str, ...] = ()
    details: tuple[str, ...] = field(default=())  #: stacks or race report lines
    evidence: tuple[str, ...] = ()
    course: tuple[str, ...] = ()  #: the course's checks that failed, in its words

    def __post_init__(self) -> None:
        object.__setattr__(self, "details", _local(self.details))
        object.__setattr__(self, "message", _local([self.message])[0])

    @property
    def divergence(self) -> Divergence | None:
        return self.run.divergence if self.run is not None else None

    @property
    def schedule(self) -> tuple[Step, ...] | None:
        return self.run.steps if self.run is not None and self.run.steps else None

    def explanation(self) -> str:
        return self.message

    @property
    def expected(self) -> tuple[Snap, ...]:
        return self.run.expected if self.run is not None and self.run.log_usable else ()

    @property
    def recorded(self) -> tuple[Snap, ...]:
        return self.document.snaps() if self.document is not None else ()

    @property
    def failure_key(self) -> str:
        """What "fails the same way" compares when shrinking."""
        return self.kind if self.verdict == Verdict.FAIL else ""


# --------------------------------------------------------------------------- stacks


_FATAL_RE: Final = re.compile(r"^fatal error: (.+)$", re.MULTILINE)
_PANIC_RE: Final = re.compile(r"^panic: (.+)$", re.MULTILINE)
_TMP_PATH_RE: Final = re.compile(r"/\S*?/redletter-cos418-[^/\s]+/\w+/(?:pkg|gopath/src/[^/\s]+)/")


def _local(lines: Sequence[str]) -> tuple[str, ...]:
    """Stack lines with the temporary copy's directory removed (``server.go:90``)."""
    return tuple(_TMP_PATH_RE.sub("", line) for line in lines)


def _key(text: str) -> str:
    return re.sub(r"\d+", "#", text.strip().splitlines()[0] if text.strip() else "")[:60]


def _short_file(path: str) -> str:
    return _TMP_PATH_RE.sub("", path)


def show_goroutines(
    gs: Sequence[Goroutine], *, limit: int = 6, frames: int = 8, label: dict[int, str] | None = None
) -> tuple[str, ...]:
    """A goroutine dump to read: the package's goroutines first, each with its own
    frames first (function and ``file:line``), then how many others there were."""
    own = [g for g in gs if g.package]
    lines: list[str] = []
    for g in own[:limit]:
        name = f" ({label[g.id]})" if label and g.id in label else ""
        lines.append(f"goroutine {g.id} [{g.state}]{name}:")
        mine = [f for f in g.frames if not _driver_or_runtime(f.func)]
        rest = len(g.frames) - len(mine)
        for f in mine[:frames]:
            lines.append(f"    {_short_func(f.func)}  {_short_file(f.file)}")
        if rest:
            lines.append(f"    ... ({rest} frame(s) of the runtime and the kit's driver)")
    others = len(gs) - len(own)
    if len(own) > limit:
        lines.append(f"... and {len(own) - limit} more goroutine(s) of the package")
    if others:
        lines.append(f"({others} goroutine(s) of the runtime and the kit's driver not shown)")
    return tuple(lines)


def _driver_or_runtime(fn: str) -> bool:
    base = fn.rsplit("/", 1)[-1]
    after = base.split(".", 1)[1] if "." in base else base
    return (
        after.startswith(("redletter", "TestRedletter", "(*redletter"))
        or base.startswith(("runtime.", "sync.", "testing.", "internal/", "reflect."))
        or fn.startswith(("runtime.", "sync.", "testing.", "internal/"))
    )


def _short_func(fn: str) -> str:
    return fn.rsplit("/", 1)[-1]


def _dump_from_stderr(text: str, package: str) -> tuple[Goroutine, ...]:
    """Goroutines of a Go traceback (SIGQUIT or a crash) printed on stderr; those with
    a frame of ``package`` (its import path) are the package's."""
    from redletter.conformance.judges.rundoc import Frame

    out = []
    for block in re.split(r"\n\s*\n", text):
        lines = block.strip("\n").splitlines()
        if not lines or not lines[0].startswith("goroutine "):
            continue
        m = re.match(r"goroutine (\d+) [^[]*\[([^\],]+)", lines[0])
        if m is None:
            continue
        frames = []
        own = False
        for i, line in enumerate(lines[1:], 1):
            if line.startswith("created by") or line.startswith("\t") or not line.strip():
                continue
            # The argument list is the last parenthesis: a method is pkg.(*T).M(...).
            fn = line[: line.rfind("(")] if line.rstrip().endswith(")") else line
            file = lines[i + 1].strip().split(" +0x")[0] if i + 1 < len(lines) else ""
            frames.append(Frame(fn, file))
            if fn.startswith(package + ".") and not _driver_or_runtime(fn):
                own = True
        out.append(Goroutine(int(m.group(1)), m.group(2), own, tuple(frames)))
    return tuple(out)


# --------------------------------------------------------------------------- races


def races(stderr: str) -> list[str]:
    """The race reports in a race-detector stderr (each from WARNING to its end)."""
    out = []
    for block in stderr.split("==================")[1:]:
        if "WARNING: DATA RACE" in block:
            out.append(block.strip())
    return out


def _accesses(report: str) -> list[tuple[str, list[str]]]:
    """``(head, functions)`` of each access of a race report."""
    out: list[tuple[str, list[str]]] = []
    for line in report.splitlines():
        s = line.strip()
        if re.match(r"^(Write|Read|Previous write|Previous read)\b", s):
            out.append((s.rstrip(":"), []))
        elif out and s and not s.startswith("/") and "(" in s and ".go:" not in s:
            out[-1][1].append(s.split("(")[0] if not s.startswith("(") else s)
        elif s.startswith("Goroutine ") and out:
            break
    return out


def _race_is_packages(report: str, package: str) -> bool:
    """Both accesses run the package's own code (not only the kit's log reader)."""
    acc = _accesses(report)
    if len(acc) < 2:
        return True
    return all(
        any(fn.startswith(package + ".") and not _driver_or_runtime(fn) for fn in fns)
        for _, fns in acc[:2]
    )


def _race_summary(report: str) -> tuple[str, tuple[str, ...]]:
    """``(one line, a few lines)`` of a race report: the two accesses and where."""
    lines = [ln.rstrip() for ln in report.splitlines() if ln.strip()]
    heads = [i for i, ln in enumerate(lines) if re.match(r"^(Write|Read|Previous)", ln)]
    where = []
    for n, i in enumerate(heads[:2]):
        # The first frame outside the runtime (a map write is runtime.mapassign,
        # called from the package's code), with its file:line below it.
        end = heads[n + 1] if n + 1 < len(heads) else len(lines)
        frames = list(range(i + 1, min(end, len(lines)) - 1, 2))
        pick = next(
            (j for j in frames if not lines[j].strip().startswith(("runtime.", "internal/"))),
            frames[0] if frames else None,
        )
        frame = lines[pick].strip() if pick is not None else "?"
        loc = lines[pick + 1].strip() if pick is not None and pick + 1 < len(lines) else ""
        where.append(f"{lines[i].rstrip(':')} in {frame} ({_short_file(loc.split(' ')[0])})")
    one = "; ".join(where) if where else (lines[1] if len(lines) > 1 else "a data race")
    return one, tuple(lines[:16])


# --------------------------------------------------------------------------- the course's checks


def course_checks(doc: RunDocument, asked: int | None = None) -> tuple[str, ...]:
    """The course test's checks on the collected snapshots, in its words: one
    snapshot per snapshot event of the scenario (``asked``: the request's count;
    by default the document's, for a document already checked against it), each
    holding the simulator's total tokens (recorded states plus recorded token
    messages; markers count zero)."""
    out: list[str] = []
    want = len(doc.snapshots) if asked is None else asked
    collected = [s for s in doc.snapshots if s.collected]
    if len(collected) != want:
        missing = ", ".join(str(s.id) for s in doc.snapshots if not s.collected)
        out.append(
            f"expected {want} snapshots, got {len(collected)}"
            + (f" (not collected: {missing})" if missing else "")
        )
    total = doc.topology.total
    for s in sorted(collected, key=lambda s: s.id):
        if s.total() != total:
            out.append(f"Snapshot {s.id}: simulator has {total} tokens, snapshot has {s.total()}")
    return tuple(out)


def _shape(doc: RunDocument) -> list[tuple[str, str]]:
    """What is wrong with the returned snapshots whatever the run was: ``(kind, text)``."""
    out: list[tuple[str, str]] = []
    ids = set(doc.topology.ids)
    links = set(doc.topology.links)
    for k, s in enumerate(doc.snapshots):
        if s.id != k:
            # The course numbers snapshots 0, 1, ... in file order (its .snap files
            # name them so) and collects each by the id the simulator gave it.
            out.append(
                (
                    "wrong-id",
                    f"the scenario's snapshot event {k + 1} (`snapshot {s.initiator}`) started"
                    f" snapshot id {s.id} (the simulator's nextSnapshotId before it), where the"
                    f" course numbers snapshots 0, 1, 2, ... in the order of the scenario, so {k}",
                )
            )
            break
    for s in doc.snapshots:
        if not s.collected:
            continue
        if s.returned_id is not None and s.returned_id != s.id:
            out.append(
                (
                    "wrong-id",
                    f"CollectSnapshot({s.id}) returned a snapshot whose id is {s.returned_id}",
                )
            )
        have = {p for p, _ in s.tokens or ()}
        missing, extra = sorted(ids - have), sorted(have - ids)
        if missing or extra:
            parts = ([f"no state of {', '.join(missing)}"] if missing else []) + (
                [f"a state of unknown server(s) {', '.join(extra)}"] if extra else []
            )
            out.append(("wrong-servers", f"snapshot {s.id} holds {' and '.join(parts)}"))
        for m in s.messages or ():
            if m.message != "token":
                out.append(
                    (
                        "recorded-marker",
                        f"snapshot {s.id} records {m.show_message()} on {show_link(m.link)} as an"
                        " in-flight message (only application messages are recorded)",
                    )
                )
                break
            if m.link not in links:
                out.append(
                    (
                        "recorded-unknown",
                        f"snapshot {s.id} records a message on {show_link(m.link)}, which is not"
                        " a link of the topology",
                    )
                )
                break
    return out


# --------------------------------------------------------------------------- judging a run


def judge_raw(raw: RawRun, *, outcome: OutcomeFn | None = outcome_in_process) -> RunResult:
    """The verdict on a run (module docstring).  ``outcome`` judges the snapshots
    by outcome where that is needed (``None``: never, e.g. while shrinking a
    failure of another kind; :class:`TimedOutcome`: under a time limit)."""
    if raw.channel:
        return RunResult(
            Verdict.FAIL,
            "tampered",
            f"{raw.channel}, so the run cannot be judged",
            raw,
            evidence=(EV_TAMPER,),
        )
    if raw.full:
        return _filled(raw)
    if raw.document is None:
        return _no_document(raw)
    try:
        doc = parse_run_document(raw.document)
    except InputError as exc:
        # The driver writes its document from typed values: one it cannot have
        # written (a package that found the build's key and signed its own) is
        # tampering.
        return RunResult(
            Verdict.FAIL,
            "tampered",
            f"the run's document is not one the driver writes ({exc.message}): something in the"
            " process wrote it, so nothing in it can be trusted",
            raw,
            evidence=(EV_TAMPER,),
        )
    tamper = _tampered(raw, doc)
    if tamper:
        return RunResult(
            Verdict.FAIL,
            "tampered",
            f"the run's document does not describe the run the kit asked for ({tamper}):"
            " the package changed what the driver read or wrote, so the run cannot be judged",
            raw,
            doc,
            evidence=(EV_TAMPER,),
        )
    notes: list[str] = []
    if not doc.seed_effective:
        notes.append(
            "rand.Seed had no effect in this run (Go ≥ 1.24 without GODEBUG=randseednop=0?):"
            " the run may not replay with the same schedule"
        )
    if doc.outcome == "driver_error" and doc.error is not None and doc.error.kind == "internal":
        stack = "\n".join(f"  {ln}" for ln in _local(doc.error.stack.splitlines()[:24]))
        if raw.reaches_memory:
            return _unattributable(
                raw, f"the driver reported a failure of its own ({doc.error.message})"
            )
        raise InternalError(
            f"the kit's driver failed: {doc.error.message} (a fault of the kit, not of the"
            f" package; in a run of {raw.topology.ids and len(raw.topology.ids)} servers under"
            f" seed {raw.seed}); its stack:\n{stack}"
        )
    if doc.outcome == "driver_error":
        # The kit's request is always well formed: a driver that could not read it
        # read what the package left of its stdin.
        msg = doc.error.message if doc.error is not None else "?"
        return RunResult(
            Verdict.FAIL,
            "tampered",
            f"the driver could not read the kit's request ({msg}): the package read or replaced"
            " the test binary's stdin before the driver ran, so the run cannot be judged",
            raw,
            doc,
            evidence=(EV_TAMPER,),
        )
    if doc.deferred_steps:
        notes.append(
            f"the package's goroutines were running between some steps, so the driver read"
            f" what {doc.deferred_steps} step(s) logged at a later moment (it reads the log only"
            " while nothing else can write it) and gave each event to its step by the log's"
            " epochs and the scenario's own events"
        )
    all_races = races(raw.stderr) if raw.race else []
    mine = [r for r in all_races if _race_is_packages(r, raw.import_path or doc.package)]
    if len(mine) < len(all_races):
        notes.append(
            f"{len(all_races) - len(mine)} race report(s) involve only the kit's reading of the"
            " log against the package's writing of it: the package logs from a goroutine that"
            " does not keep in step with Tick(); not counted against it"
        )
    if doc.outcome == "hang":
        return _hang(raw, doc, notes)
    if doc.outcome == "panic":
        err = doc.error
        assert err is not None
        where = _where(doc, err.phase, err.time, err.event_index)
        frames = [ln for ln in err.stack.splitlines() if ln.strip()]
        own = [
            i
            for i, ln in enumerate(frames)
            if "runtime/" not in ln and "redletter" not in ln and not ln.startswith("goroutine")
        ]
        start = max(own[0] - 1, 0) if own else 0
        return RunResult(
            Verdict.FAIL,
            f"panic:{_key(err.message)}",
            f"the package panicked during {where}: {err.message}",
            raw,
            doc,
            notes=tuple(notes),
            details=tuple(frames[start : start + 12]),
            evidence=(EV_PANIC,),
        )
    return _judge_document(raw, doc, notes, mine, outcome)


def _filled(raw: RawRun) -> RunResult:
    """The run filled a size-bounded file system of its sandbox (its working folder,
    which is its /tmp, or /dev/shm): a fail naming the bound, whatever else it did."""
    where = ", ".join(
        f"{'its working folder (/tmp)' if path == '/tmp' else path}, {describe_bytes(size)}"
        for path, size in raw.full
    )
    return RunResult(
        Verdict.FAIL,
        "disk-full",
        f"the run filled what the sandbox lets it write: {where} (a file system in memory"
        " inside the sandbox; the host's disk is never written): a correct package writes no"
        " files",
        raw,
        details=tuple(raw.stderr.strip().splitlines()[-12:]),
        evidence=(EV_DISK,),
    )


def _tampered(raw: RawRun, doc: RunDocument) -> str:
    if doc.request_sha256 != raw.request_sha256:
        return "its request digest differs from the request the kit sent"
    if doc.nonce != raw.nonce:
        return "its nonce differs from the one the kit sent"
    if doc.topology != raw.topology:
        return "its topology differs from the one the kit asked for"
    if doc.scenario != raw.scenario:
        return "its scenario differs from the one the kit asked for"
    # The snapshots are the request's: one per snapshot event, started by its
    # server; a run cut short (a hang, a panic) started only the first ones.
    asked = [(i, e.server) for i, e in enumerate(raw.scenario.events) if isinstance(e, Snapshot)]
    got = [(s.event_index, s.initiator) for s in doc.snapshots]
    whole = doc.outcome in ("complete", "incomplete")
    if (whole and got != asked) or got != asked[: len(got)]:
        if len(got) != len(asked) and got == asked[: len(got)]:
            return (
                f"it lists {len(got)} snapshot(s), and the scenario's {len(asked)} snapshot"
                " events each start one"
            )
        bad = next(k for k, g in enumerate(got) if k >= len(asked) or g != asked[k])
        if bad >= len(asked):
            return (
                f"it lists {len(got)} snapshots, and the scenario's {len(asked)} snapshot events"
                " each start one"
            )
        return (
            f"its snapshot {bad} is started by {got[bad][1]} at event {got[bad][0] + 1}, while"
            f" the scenario's snapshot event {bad + 1} is `snapshot {asked[bad][1]}` (event"
            f" {asked[bad][0] + 1})"
        )
    return ""


def _unattributable(raw: RawRun, what: str, details: Sequence[str] = ()) -> RunResult:
    """A fault in the driver's code in a package that reaches the process's memory
    (unsafe, system calls, cgo, //go:linkname): the kit cannot say whose it is, so
    it is neither the kit's internal error nor the package's fail."""
    return RunResult(
        Verdict.UNKNOWN,
        "unattributable",
        f"{what}, and the package's code reaches the process's memory (see what touches the"
        " kit), so the kit cannot tell its own fault from the package's doing: not judged",
        raw,
        details=tuple(details),
        evidence=(EV_EXIT,),
    )


def _asked(raw: RawRun) -> int:
    """The number of snapshots the scenario starts (the request's, not the document's)."""
    return sum(isinstance(e, Snapshot) for e in raw.scenario.events)


def _decisive(fn: str, package: str) -> str:
    """``driver``, ``package`` or ``""`` (the runtime's or the standard library's) for
    a function of a Go stack."""
    if not fn.startswith(package + "."):
        return ""
    rest = fn[len(package) + 1 :]
    if rest.startswith(("redletter", "TestRedletter", "(*redletter", "(redletter")):
        return "driver"
    return "package"


def _crash_in_driver(stderr: str, package: str) -> tuple[str, tuple[str, ...]] | None:
    """``(the error, the crashed goroutine's frames)`` when a Go runtime fatal error
    (or a panic nobody recovered) stopped a goroutine whose first frame of a Go
    package other than the runtime and the standard library is the driver's."""
    m = _FATAL_RE.search(stderr) or _PANIC_RE.search(stderr)
    if m is None:
        return None
    tail = stderr[m.start() :]
    g = re.search(r"^goroutine \d+ [^\n]*\[[^\n]*\]:\n((?:.*\n?)*?)(?:\n|\Z)", tail, re.MULTILINE)
    if g is None:
        return None
    lines = [ln for ln in g.group(1).splitlines() if ln.strip()]
    frames: list[str] = []
    verdict = ""
    for i, line in enumerate(lines):
        if line.startswith(("\t", "created by")):
            continue
        fn = line[: line.rfind("(")] if line.rstrip().endswith(")") else line
        at = lines[i + 1].strip().split(" +0x")[0] if i + 1 < len(lines) else ""
        frames.append(f"{_short_func(fn)}  {_short_file(at)}" if at.startswith("/") else fn)
        verdict = verdict or _decisive(fn, package)
    if verdict != "driver":
        return None
    return m.group(0).strip(), tuple(frames[:16])


def _no_document(raw: RawRun) -> RunResult:
    if raw.document_error.startswith("the document on descriptor 3 is not"):
        # The driver writes one JSON object there, once: anything else was written
        # by the package.
        return RunResult(
            Verdict.FAIL,
            "tampered",
            f"{raw.document_error}: something in the process wrote to the driver's result"
            " descriptor, so the run cannot be judged",
            raw,
            evidence=(EV_TAMPER,),
        )
    fatal = _FATAL_RE.search(raw.stderr)
    kit = _crash_in_driver(raw.stderr, raw.import_path)
    if kit is not None and not raw.oom:
        what, frames = kit
        stack = "\n".join(f"  {ln}" for ln in frames)
        if raw.reaches_memory:
            return _unattributable(raw, f"the driver's own code crashed ({what})", frames)
        raise InternalError(
            f"the kit's own driver crashed ({what}) in a run of {len(raw.topology.servers)}"
            f" servers under seed {raw.seed}: its stack lies in the driver's code, so this is a"
            f" fault of the kit, not of the package; the crashed goroutine:\n{stack}"
        )
    if not raw.started and raw.killed:
        gs = _dump_from_stderr(raw.stderr, raw.import_path)
        return RunResult(
            Verdict.FAIL,
            "never-started",
            "the kit's driver never started: the package's initialisation (its init functions"
            " and package-level variables, which Go runs before any test) did not finish within"
            f" {raw.start_waited:g} s (--step-timeout), and the process was killed after Go"
            " printed its goroutines; every run would wait as long, so no other run is made",
            raw,
            details=show_goroutines(gs) or tuple(raw.stderr.strip().splitlines()[-12:]),
            evidence=(EV_DUMP,),
        )
    if raw.oom:
        return RunResult(
            Verdict.FAIL,
            "out-of-memory",
            "the kernel's OOM killer stopped the test binary: the run used more memory than the"
            " sandbox allows (--memory)",
            raw,
            details=tuple(raw.stderr.strip().splitlines()[-12:]),
            evidence=(EV_EXIT,),
        )
    if fatal is not None:
        what = fatal.group(1).strip()
        tail = raw.stderr[fatal.start() :]
        gs = _dump_from_stderr(tail, raw.import_path)
        return RunResult(
            Verdict.FAIL,
            f"fatal:{_key(what)}",
            f"the package crashed with a Go runtime fatal error: {what}"
            + (
                " (two goroutines used one map at once: the simulator's goroutines and the"
                " server's maps need a lock)"
                if "concurrent map" in what
                else ""
            ),
            raw,
            details=show_goroutines(gs) or tuple(tail.splitlines()[:12]),
            evidence=(EV_FATAL,),
        )
    if raw.killed:
        gs = _dump_from_stderr(raw.stderr, raw.import_path)
        return RunResult(
            Verdict.FAIL,
            "killed",
            f"the test binary did not finish within {raw.limits.kill_after:g} s (--timeout) and"
            " was killed after Go printed its goroutines: the package hangs where the driver's"
            " watchdog could not see it, or loops forever",
            raw,
            details=show_goroutines(gs) or tuple(raw.stderr.strip().splitlines()[-12:]),
            evidence=(EV_DUMP,),
        )
    panic = _PANIC_RE.search(raw.stderr)
    if panic is not None:
        msg = panic.group(1).strip()
        gs = _dump_from_stderr(raw.stderr[panic.start() :], raw.import_path)
        return RunResult(
            Verdict.FAIL,
            f"panic:{_key(msg)}",
            "the package panicked outside the driver's steps (in an init function or a"
            f" goroutine of its own): {msg}",
            raw,
            details=show_goroutines(gs) or tuple(raw.stderr[panic.start() :].splitlines()[:12]),
            evidence=(EV_PANIC,),
        )
    last = (raw.stderr.strip() or raw.stdout.strip()).splitlines()[-12:]
    how = (
        f"was stopped by signal {-raw.returncode}"
        if raw.returncode is not None and raw.returncode < 0
        else f"exited with status {raw.returncode}"
    )
    before = "wrote its result" if raw.started else "started (in the package's initialisation)"
    return RunResult(
        Verdict.FAIL,
        "crash",
        f"the test binary {how} before the driver {before}"
        f" ({raw.document_error or 'no document'}): the package ended the process"
        " (os.Exit or log.Fatal?) or killed it",
        raw,
        details=tuple(last),
        evidence=(EV_EXIT,),
    )


def _collector_labels(doc: RunDocument) -> dict[int, str]:
    return {
        s.collector.id: f"collector of snapshot {s.id}"
        for s in doc.snapshots
        if s.collector is not None
    }


def _hang(raw: RawRun, doc: RunDocument, notes: list[str]) -> RunResult:
    err = doc.error
    assert err is not None
    where = _where(doc, err.phase, err.time, err.event_index)
    labels = _collector_labels(doc)
    if err.cause == "deadlock":
        states = sorted({g.state for g in err.goroutines if g.package})
        msg = (
            f"the run deadlocks: {where} never returned, and every goroutine running the"
            f" package's code waited on a lock or a channel ({', '.join(states)}) for"
            f" {raw.limits.deadlock_after:g} s with nothing left to wake it (a lock held while"
            " sending or while calling the simulator, or a channel nobody reads)"
        )
        ev: tuple[str, ...] = (EV_DUMP,)
    else:
        msg = (
            f"the run hangs: {where} did not return within {raw.limits.step_timeout:g} s"
            " (--step-timeout) while some goroutine of the package kept running or sleeping"
            " (an endless loop?)"
        )
        ev = (EV_TIMEOUT, EV_DUMP)
    return RunResult(
        Verdict.FAIL,
        "hang",
        msg,
        raw,
        doc,
        notes=tuple(notes),
        details=show_goroutines(err.goroutines, label=labels),
        evidence=ev,
    )


def _where(doc: RunDocument, phase: str, at: int, event_index: int | None) -> str:
    if phase == "tick":
        return f"Tick() at time {at}" + (" (after the last event)" if event_index is None else "")
    if phase == "inject" and event_index is not None and event_index < len(doc.scenario.events):
        e = doc.scenario.events[event_index]
        shown = format_scenario(Scenario((e,))).strip()
        call = "ProcessEvent" if doc.dialect == "nodes" else "InjectEvent"
        return f"{call} for `{shown}` (event {event_index + 1}) at time {at}"
    if phase == "setup":
        return "the setup (NewSimulator, adding servers and links)"
    return f"a {phase} step at time {at}"


def _judge_document(
    raw: RawRun,
    doc: RunDocument,
    notes: list[str],
    race_reports: Sequence[str],
    outcome: OutcomeFn | None,
) -> RunResult:
    log = read_course_log(doc)
    run = judge_run(doc, log)
    notes.extend(run.notes)
    if not log.usable:
        notes.append(
            f"the run's log was not used: {log.reason}; the verdict rests on what does not"
            " depend on it"
        )
    course = course_checks(doc, _asked(raw))
    shape = _shape(doc)
    snaps = doc.snaps()
    missing = [s for s in doc.snapshots if s.status == "not_collected"]
    broken = [s for s in doc.snapshots if s.status in ("panic", "nil")]
    all_in = not missing and not broken
    need_outcome = all_in and (
        not log.usable or run.verdict != Verdict.PASS or bool(course) or bool(shape)
    )
    outcome_verdict: Verdict | None = None
    outcome_message = ""
    if outcome is not None and need_outcome and doc.topology.strongly_connected():
        outcome_verdict, outcome_message = outcome(doc.topology, doc.scenario, snaps)

    def result(
        verdict: Verdict,
        kind: str,
        message: str,
        evidence: tuple[str, ...],
        details: tuple[str, ...] = (),
    ) -> RunResult:
        return RunResult(
            verdict,
            kind,
            message,
            raw,
            doc,
            run,
            outcome_verdict,
            outcome_message,
            tuple(notes),
            details,
            evidence,
            course,
        )

    # Also-true evidence, appended to the explanation of a failure.
    extra: list[str] = []
    ev: list[str] = []
    if course:
        extra.append("The course's checks fail: " + "; ".join(course) + ".")
        ev.append(EV_COURSE)
    if outcome_verdict == Verdict.FAIL:
        ev.append(EV_OUTCOME)
    if race_reports:
        ev.append(EV_RACE)

    def fail(kind: str, message: str, first: str, details: tuple[str, ...] = ()) -> RunResult:
        rest = [e for e in ev if e != first]
        text = message + ("" if not extra else " " + " ".join(extra))
        return result(Verdict.FAIL, kind, text, (first, *rest), details)

    if missing:
        s = missing[0]
        why = (
            "its collector stayed blocked after the package had had more ticks than any delivery"
            f" of this scenario needs ({doc.idle_ticks}), with nothing logged"
            if doc.collect_stopped == "stuck"
            else f"it was not collected within {raw.limits.collect_timeout:g} s (--collect-timeout)"
        )
        text = (
            f"snapshot {s.id} (started at {s.initiator}) never completed: CollectSnapshot({s.id})"
            f" did not return while the driver kept ticking ({doc.extra_ticks} ticks after the"
            f" last event); {why}"
        )
        if (
            log.usable
            and run.verdict == Verdict.FAIL
            and run.kind in ("never-completes", "collect-hang")
        ):
            text += f". By the run's log: {run.message}"
        labels = _collector_labels(doc)
        stacks = tuple(s.collector for s in missing if s.collector is not None)
        details = show_goroutines(stacks, label=labels)
        if doc.error is not None and doc.error.goroutines:
            details = show_goroutines(doc.error.goroutines, label=labels)
        kind = (
            run.kind
            if log.usable and run.kind in ("never-completes", "collect-hang")
            else ("never-completes")
        )
        return fail(kind, text, EV_COMPLETION, details)
    if broken:
        s = broken[0]
        what = (
            f"panicked: {s.error.splitlines()[0] if s.error else '?'}"
            if s.status == "panic"
            else "returned nil"
        )
        details = tuple(s.error.splitlines()[1:13]) if s.status == "panic" else ()
        return fail("collect-panic", f"CollectSnapshot({s.id}) {what}", EV_COMPLETION, details)
    if (
        log.usable
        and run.unconfirmed is not None
        and (course or shape or outcome_verdict == Verdict.FAIL)
    ):
        # The log's departure (a marker sent late, say) explains what the
        # course's checks, the snapshots' shape or the outcome show without it.
        first = EV_COURSE if course else EV_SHAPE if shape else EV_OUTCOME
        ev.append(EV_LOG)
        return fail(run.unconfirmed.kind, run.unconfirmed.message, first)
    # The course's logger is not safe for two goroutines: a package that starts
    # its own may lose or reorder events beside Tick(), so its log alone is no
    # evidence against it. Only the outcome (or the course's checks, or the
    # snapshots' shape, below) can fail it; an outcome the judge did not decide
    # (its time limit ran out) leaves the run unjudged, never failed.
    log_alone = (
        log.usable
        and run.verdict == Verdict.FAIL
        and bool(raw.goroutines)
        and outcome_verdict != Verdict.FAIL
    )
    if log_alone:
        notes.append(
            f"the run's log shows a departure ({run.message}), but the package starts"
            f" goroutines of its own ({', '.join(raw.goroutines[:3])}), which may write the"
            " course's logger beside Tick() and lose or reorder its events; "
            + (
                "these snapshots pass by outcome, and the kit does not fail a package on such a"
                " log alone"
                if outcome_verdict == Verdict.PASS
                else "the kit does not fail a package on such a log alone, and the outcome judge"
                f" did not decide ({outcome_message or 'not asked'})"
            )
        )
    elif log.usable and run.verdict == Verdict.FAIL:
        message = run.message
        if outcome_verdict == Verdict.PASS:
            message += (
                " By outcome alone these snapshots pass (some FIFO schedule of the scenario"
                " yields them): only the check against this run's own log shows the fault."
            )
        return fail(run.kind, message, EV_LOG)
    if shape:
        kind, text = shape[0]
        return fail(kind, text[0].upper() + text[1:] + ".", EV_SHAPE)
    if course:
        extra.clear()
        first_kind = "snapshot-count" if course[0].startswith("expected") else "token-conservation"
        return fail(
            first_kind,
            "The course's checks fail: " + "; ".join(course) + ".",
            EV_COURSE,
        )
    if outcome_verdict == Verdict.FAIL:
        return fail(
            "outcome",
            "no FIFO schedule of the scenario yields the snapshots the package returned:"
            f" {outcome_message}",
            EV_OUTCOME,
        )
    if race_reports:
        one, lines = _race_summary(race_reports[0])
        return fail(
            "data-race",
            f"the race detector found {len(race_reports)} data race(s) in this run; the first:"
            f" {one}",
            EV_RACE,
            lines,
        )
    passed_ev = (EV_COMPLETION, EV_COURSE)
    if log.usable and run.verdict == Verdict.PASS:
        return result(Verdict.PASS, "", run.message, (EV_LOG, *passed_ev))
    if outcome_verdict == Verdict.PASS:
        why = (
            "the run's log is no evidence alone for a package that starts goroutines of its own"
            if log.usable
            else "the run's log could not be used"
        )
        return result(
            Verdict.PASS,
            "",
            f"{outcome_message} ({why}, so the snapshots were judged by outcome)",
            (EV_OUTCOME, *passed_ev),
        )
    if log_alone:
        return result(
            Verdict.UNKNOWN,
            "unknown",
            "not judged: only the run's log shows a departure, which is no evidence alone for a"
            " package that starts goroutines of its own, and by outcome:"
            f" {outcome_message or 'not judged'}",
            passed_ev,
        )
    return result(
        Verdict.UNKNOWN,
        "unknown",
        f"{run.message}; by outcome: {outcome_message or 'not judged'}",
        passed_ev,
    )
