"""The package's own tests, run as they are, for the course's verdict beside the kit's.

A package that ships the course's ``snapshot_test.go`` (any ``*_test.go``) and its
``test_data/`` is copied once more, untouched, and tested with ``go test``
(``-race`` with ``--race``) in the kit's sandbox: the verdict the student would
see.  :func:`run_course_test` reads ``go test -v``'s lines into tests and their
messages.  The course compares every snapshot with golden ``.snap`` files that
hold for one seeded schedule only, so the two verdicts can disagree;
:func:`compare` says why, with the evidence of the kit's own runs.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from redletter.conformance.adapters.cos418.campaign import PACKAGE_CLASS, CaseRun
from redletter.conformance.adapters.cos418.judge import races
from redletter.conformance.adapters.cos418.workspace import (
    Build,
    Workspace,
    copy_package,
    fit_go_mod,
    go_env,
    go_version_tuple,
    kit_go_version,
)
from redletter.conformance.verdict import Verdict

__all__ = ["CourseTest", "CourseTestCase", "compare", "parse_go_test", "run_course_test"]

_RUN_RE: Final = re.compile(r"^=== (?:RUN|CONT|PAUSE)\s+(\S+)")
_END_RE: Final = re.compile(r"^\s*--- (PASS|FAIL|SKIP): (\S+) \(([\d.]+)s\)")
_MSG_RE: Final = re.compile(r"^\s+(\S+\.go:\d+: .*)$")


@dataclass(frozen=True)
class CourseTestCase:
    """One test function of the package's own tests and what it said."""

    name: str
    status: str  #: pass, fail, skip, or unfinished (the run ended inside it)
    seconds: float
    messages: tuple[str, ...] = ()


@dataclass(frozen=True)
class CourseTest:
    """The package's own ``go test``: its verdict, tests and output."""

    verdict: Verdict  #: pass or fail (a build error, a timeout or a crash is a fail)
    command: str
    race: bool
    tests: tuple[CourseTestCase, ...]
    output: str  #: the end of its output
    seconds: float
    reason: str = ""  #: why it failed when no test says (build error, timeout, crash)
    races: int = 0  #: race reports (with -race)
    race_reports: tuple[str, ...] = ()
    #: what the kit's run had that the student's plain ``go test`` would not (a
    #: GODEBUG setting, a go line lowered), in words; "" when nothing
    env_note: str = ""

    @property
    def failed(self) -> tuple[CourseTestCase, ...]:
        """The tests that failed or never finished."""
        return tuple(t for t in self.tests if t.status in ("fail", "unfinished"))

    def summary(self) -> str:
        """``pass (5 tests)`` / ``fail: TestX, TestY (2 of 5 tests)`` / ``fail: ...``,
        followed by what the kit's run had that plain ``go test`` would not."""
        text = self._summary()
        return f"{text}; note: {self.env_note}" if self.env_note else text

    def _summary(self) -> str:
        if self.verdict == Verdict.PASS:
            return f"pass ({len(self.tests)} test(s))"
        unfinished = [t.name for t in self.tests if t.status == "unfinished"]
        if self.reason:
            done = [t for t in self.failed if t.status == "fail"]
            return (
                f"fail: {self.reason}"
                + (f" (in {', '.join(unfinished)})" if unfinished else "")
                + (f"; before that, {', '.join(t.name for t in done)} failed" if done else "")
            )
        if self.failed:
            names = ", ".join(t.name for t in self.failed)
            return f"fail: {names} ({len(self.failed)} of {len(self.tests)} test(s))" + (
                f"; {self.races} data race(s)" if self.races else ""
            )
        return f"fail: {self.reason or 'see its output'}"


def parse_go_test(output: str) -> tuple[CourseTestCase, ...]:
    """Tests of ``go test -v`` output, with the messages each logged (``file.go:N: ...``)."""
    order: list[str] = []
    msgs: dict[str, list[str]] = {}
    ends: dict[str, tuple[str, float]] = {}
    current = ""
    for line in output.splitlines():
        m = _RUN_RE.match(line)
        if m:
            current = m.group(1)
            if current not in msgs:
                order.append(current)
                msgs[current] = []
            continue
        m = _END_RE.match(line)
        if m:
            status, name, secs = m.groups()
            ends[name] = (status.lower(), float(secs))
            if name not in msgs:
                order.append(name)
                msgs[name] = []
            current = name
            continue
        m = _MSG_RE.match(line)
        if m and current:
            msgs[current].append(m.group(1).strip())
    return tuple(
        CourseTestCase(
            n,
            ends.get(n, ("unfinished", 0.0))[0],
            ends.get(n, ("unfinished", 0.0))[1],
            tuple(msgs[n]),
        )
        for n in order
    )


#: The GODEBUG the kit sets for the course's seeded tests (go_env) and the first
#: Go whose defaults differ without it.
_RANDSEED: Final = "randseednop=0"
_RANDSEED_SINCE: Final = (1, 24)


def _env_note(ws: Workspace, lowered: str) -> str:
    """What the kit's ``go test`` had that the student's would not: ``GODEBUG=
    randseednop=0`` where it changes what ``rand.Seed`` does (Go 1.24 and later,
    under a go line of 1.24 or later: without go.mod, or without a go line, the
    old default holds), and a lowered go line."""
    kit = kit_go_version(ws.go)
    pkg = ws.package
    parts: list[str] = []
    line = go_version_tuple(pkg.go_directive or "") if pkg.gomod else ()
    if go_version_tuple(kit) >= _RANDSEED_SINCE and line >= _RANDSEED_SINCE:
        parts.append(
            f"the kit ran it with GODEBUG={_RANDSEED}, which plain `go test` does not set: this"
            f" go.mod says `go {pkg.go_directive}`, under which Go 1.24 and later ({kit} here)"
            " ignore rand.Seed, so plain `go test` draws other delays than the course's golden"
            " .snap files were made with"
        )
    if lowered:
        parts.append(lowered)
    return "; ".join(parts)


def run_course_test(ws: Workspace, *, timeout: float = 300.0) -> CourseTest:
    """Copy the package as it is (its tests and test_data included), build its tests
    and run them in the sandbox: ``go test -v`` (``-race`` with the workspace's)."""
    pkg = ws.package
    pkg_dir, gopath = ws._layout("course")
    copy_package(pkg.source, pkg_dir, tests=True)
    env_note = _env_note(ws, fit_go_mod(pkg_dir, kit_go_version(ws.go)))
    binary = ws.bin_dir / "course.test"
    godebug = f"GODEBUG={_RANDSEED} " if _RANDSEED in env_note else ""
    command = f"{godebug}go test -v" + (" -race" if ws.race else "") + " ."
    build: Build = ws.go_build(pkg_dir, gopath, binary)
    if not build.ok:
        lines = build.error_lines(12)
        return CourseTest(
            Verdict.FAIL,
            command,
            ws.race,
            (),
            build.output,
            build.seconds,
            reason="its tests do not build: " + ("; ".join(lines[:3]) or "see its output"),
            env_note=env_note,
        )
    env = go_env(ws.go, race=ws.race, gopath=gopath)
    env = {k: env[k] for k in ("PATH", "LANG", "GODEBUG")}
    if ws.race:
        env["GORACE"] = "halt_on_error=0 history_size=2 atexit_sleep_ms=0"
    scratch, io = ws.new_scratch()
    rc, killed, oom, out, err, _, _, seconds = ws.run_program(
        [str(binary), "-test.v", "-test.count=1", f"-test.timeout={max(1, int(timeout))}s"],
        env=env,
        cwd=pkg_dir,
        writable=[pkg_dir, scratch],
        io=io,
        stdin=b"",
        kill_after=timeout + 30,
        with_document=False,
    )
    shutil.rmtree(scratch, ignore_errors=True)
    text = out.decode("utf-8", "replace") + err.decode("utf-8", "replace")
    tests = parse_go_test(text)
    reports = races(text) if ws.race else []
    reason = ""
    if killed:
        reason = f"it did not finish within {timeout + 30:g} s and was killed"
    elif oom:
        reason = "it ran out of memory"
    elif "panic: test timed out" in text:
        reason = f"it timed out after {timeout:g} s (a test never returned)"
    elif re.search(r"^panic: ", text, re.MULTILINE):
        reason = "it panicked"
    elif rc not in (0, None) and not any(t.status == "fail" for t in tests):
        reason = f"it exited with status {rc}"
    return CourseTest(
        Verdict.PASS if rc == 0 else Verdict.FAIL,
        command,
        ws.race,
        tests,
        text[-20000:],
        build.seconds + seconds,
        reason=reason,
        races=len(reports),
        race_reports=tuple(reports),
        env_note=env_note,
    )


def _golden(t: CourseTestCase) -> bool:
    """A failure of the golden comparison (not of the token or count check)."""
    return bool(t.messages) and not any(
        "simulator has" in m or ("tokens" in m.lower() and "snapshot has" in m) for m in t.messages
    )


def compare(
    course: CourseTest, verdict: Verdict, runs: Sequence[CaseRun], first: CaseRun | None
) -> str:
    """Why the course's verdict and the kit's differ, with evidence ("" if they agree)."""
    if course.verdict == verdict or verdict == Verdict.UNKNOWN:
        return ""
    own = [r for r in runs if r.case.klass == PACKAGE_CLASS]
    own_pass = [r for r in own if r.result.verdict == Verdict.PASS]
    seeds = sorted({r.seed for r in own})
    if verdict == Verdict.PASS:
        golden = [t for t in course.failed if _golden(t)]
        if golden and len(golden) == len(course.failed):
            shown = ", ".join(t.name for t in golden)
            msg = golden[0].messages[0]
            return (
                f"The course's test fails in {shown} on its golden .snap files ({msg}). Those"
                " files hold for one schedule only: the one the original simulator drew under"
                " the test's fixed seed. This package draws its random delays in another order"
                " (or delivers in another order), so its schedule, and with it every correct"
                " snapshot, differs."
                + (
                    f" The kit ran the same test_data scenarios under seeds"
                    f" {', '.join(map(str, seeds))}: {len(own_pass)} of {len(own)} runs give"
                    " exactly the snapshots Chandy–Lamport records for the schedule that"
                    " happened."
                    if own
                    else ""
                )
            )
        if course.failed:
            t = course.failed[0]
            said = t.messages[0] if t.messages else "no message"
            return f"The course's test fails in {t.name} ({said}); no run of the kit failed." + (
                f" The kit ran its test_data scenarios under seeds {', '.join(map(str, seeds))}"
                f" ({len(own_pass)} of {len(own)} pass); the course's seed may give a schedule"
                " the kit's seeds did not."
                if own
                else ""
            )
        return (
            f"The course's test fails without a failing test: {course.reason or 'see its output'}."
        )
    # The kit fails and the course passes.
    if first is None:
        return ""
    r = first.result
    if r.kind == "tampered":
        return (
            "The kit's run caught the package writing what only the kit's driver writes (its"
            " result on descriptor 3, or its request on stdin): that verdict rests on no"
            " scenario, and the course's harness, which has no such channel, does not look."
        )
    if r.kind == "never-started":
        return (
            "The package's initialisation never let the kit's driver start; the course's own"
            " tests run after the same initialisation (see their output)."
        )
    where = (
        f"a generated scenario ({first.case.klass}, {first.case.size()})"
        if first.case.klass != PACKAGE_CLASS
        else f"the package's own scenario {first.case.source}, under simulator seed {first.seed}"
    )
    if r.kind == "data-race":
        return (
            f"The race shows in {where}"
            + (
                "; the course's test was run without -race"
                if not course.race
                else "; the course's scenarios never trigger it (races depend on timing)"
            )
            + "."
        )
    if r.verdict == Verdict.FAIL and not r.course and r.run is not None and r.kind == r.run.kind:
        return (
            f"The failing snapshot conserves tokens, so the course's token check cannot see it,"
            f" but it is not the snapshot Chandy–Lamport records for the run that happened (it"
            f" shows in {where}); the course's golden files cover only its own scenarios under"
            " one seed."
        )
    if first.case.klass != PACKAGE_CLASS:
        return (
            f"The course's scenarios never trigger it: the first failure is in {where}"
            + (
                f", while the package's own test_data scenarios pass in the kit too"
                f" ({len(own_pass)} of {len(own)} runs)"
                if own
                else ""
            )
            + "."
        )
    return (
        f"The failure shows in {where}; the course runs that scenario under its one fixed seed,"
        " whose schedule does not show it."
    )
