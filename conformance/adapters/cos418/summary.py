"""What judging a COS 418 package produced: :class:`PackageCheck` and its options.

:func:`redletter.conformance.adapters.cos418.check.check_package` returns a
:class:`PackageCheck`, a :class:`~redletter.conformance.verdict.Result` like every
judge's: the verdict, the explanation, the divergence of the first failure and
its schedule; besides, the package, its build, every run, the first failure and
its shrunk form, the course's own verdict and why it differs, and where the run
folder is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from redletter.conformance.adapters.cos418.campaign import PACKAGE_CLASS, CaseRun, Shrunk
from redletter.conformance.adapters.cos418.course import CourseTest
from redletter.conformance.adapters.cos418.package import GoPackage
from redletter.conformance.adapters.cos418.workspace import Build, KitTouch, RunLimits
from redletter.conformance.formats.cos418 import Step
from redletter.conformance.verdict import Divergence, Verdict

__all__ = ["CheckOptions", "ClassRow", "PackageCheck", "class_rows", "overall"]


@dataclass(frozen=True)
class CheckOptions:
    """How to judge a package (the options of ``redletter cos418 test``)."""

    seed: int = 0  #: the campaign's seed; simulator seeds are seed, seed+1, ...
    scenarios: int = 50  #: generated scenarios
    seeds: int = 4  #: simulator seeds per scenario
    all_runs: bool = False  #: run everything (else stop at the first failure)
    race: bool = False
    test_data: bool = True  #: also run the package's own test_data/ scenarios
    course_test: bool = True  #: also run the package's own tests, as they are
    course_timeout: float = 60.0
    shrink: bool = True
    limits: RunLimits = field(default_factory=RunLimits)
    outcome_timeout: float = 60.0
    jobs: int = 2
    given: tuple[Path, Path] | None = None  #: run only this ``(top, events)``
    store: Path | None = None  #: where run folders go (default ./store)
    export: Path | None = None  #: write the shrunk failure for ``go test`` here


@dataclass(frozen=True)
class ClassRow:
    """One row of the summary table: a scenario class and how its runs fared."""

    klass: str
    scenarios: int
    schedules: int
    passed: int
    failed: int
    unknown: int


_ORDER = ("one", "sequential", "concurrent", "same-tick", PACKAGE_CLASS, "given")


def class_rows(runs: Sequence[CaseRun]) -> list[ClassRow]:
    """Counts by scenario class (classes in a fixed order), then the total."""
    classes = sorted(
        {r.case.klass for r in runs}, key=lambda k: (_ORDER.index(k) if k in _ORDER else 99, k)
    )
    rows = []
    for k in [*classes, "all"]:
        rs = [r for r in runs if k == "all" or r.case.klass == k]
        rows.append(
            ClassRow(
                k,
                len({r.case.name for r in rs}),
                len(rs),
                sum(r.result.verdict == Verdict.PASS for r in rs),
                sum(r.result.verdict == Verdict.FAIL for r in rs),
                sum(r.result.verdict == Verdict.UNKNOWN for r in rs),
            )
        )
    return rows


def overall(runs: Sequence[CaseRun]) -> Verdict:
    """fail if any run failed, else unknown if any was undecided, else pass."""
    if any(r.result.verdict == Verdict.FAIL for r in runs):
        return Verdict.FAIL
    if any(r.result.verdict == Verdict.UNKNOWN for r in runs):
        return Verdict.UNKNOWN
    return Verdict.PASS


@dataclass(frozen=True)
class PackageCheck:
    """Everything judging a package produced (a :class:`~redletter.conformance.verdict.Result`)."""

    package: GoPackage
    build: Build
    verdict: Verdict
    options: CheckOptions
    seeds: tuple[int, ...]
    runs: tuple[CaseRun, ...]
    planned: int  #: runs planned (the campaign may stop at the first failure)
    seconds: float  #: the campaign's time
    first_failure: CaseRun | None = None
    shrunk: Shrunk | None = None
    course: CourseTest | None = None
    disagreement: str = ""  #: why the course's verdict differs from the kit's
    message: str = ""  #: the verdict in one sentence
    replay: str = ""
    notes: tuple[str, ...] = ()
    outcome_timeouts: int = 0
    stopped_early: bool = False
    folder: Path | None = None  #: the run folder (results.json, report.html, ...)
    exported: tuple[Path, ...] = ()
    extra: Mapping[str, object] = field(default_factory=dict)
    total_seconds: float = 0.0
    #: places of the package's code that touch the kit (imports unsafe, opens
    #: descriptor 3, ends the process, ...), whatever the verdict: the instructor
    #: decides what they mean
    touches: tuple[KitTouch, ...] = ()

    def touches_line(self) -> str:
        """One line on :attr:`touches` ("" when there are none)."""
        if not self.touches:
            return ""
        shown = "; ".join(t.show() for t in self.touches[:6])
        more = f"; and {len(self.touches) - 6} more" if len(self.touches) > 6 else ""
        return (
            f"touches the kit: {len(self.touches)} place(s) of its code do what the assignment"
            f" never needs and an attack on the kit does: {shown}{more}"
        )

    @property
    def shown(self) -> CaseRun | None:
        """The failure to show: the shrunk one, else the first."""
        if self.shrunk is not None:
            return CaseRun(self.shrunk.case, self.shrunk.seed, self.shrunk.result)
        return self.first_failure

    def explanation(self) -> str:
        return self.message

    @property
    def divergence(self) -> Divergence | None:
        shown = self.shown
        return shown.result.divergence if shown is not None else None

    @property
    def schedule(self) -> tuple[Step, ...] | None:
        shown = self.shown
        return shown.result.schedule if shown is not None else None
