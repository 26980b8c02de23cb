"""The sandbox every program the kit starts on a user's behalf runs in.

Protocol nodes (:mod:`~redletter.conformance.process`), COS 418 packages and
their builds (:mod:`~redletter.conformance.adapters.cos418`) and instrumented
programs (the TCP example's launcher) all start their programs through a
:class:`Sandbox`: one implementation, in layers, each reported as active or
not, with the reason (``docs/security.md`` is the threat model):

``user``
    a fresh unprivileged uid and gid per sandbox where the kit runs as root (no
    supplementary groups, ``PR_SET_NO_NEW_PRIVS``, no setuid binaries);
``filesystem``
    a private view: a read-only tmpfs root holding read-only binds of the
    system directories, the program's own files (its directory, its Python
    environment, the files its arguments name), the kit's package and the paths
    the user adds (``--sandbox-path``); a private, size-limited tmpfs ``/tmp``
    as working directory, a fresh ``/proc``, a few devices, a ``passwd`` naming
    no host user.  The store, the run's folder and logs are hidden even inside
    an exposed directory;
``network``
    its own network namespace: no interface up (or only loopback, shared by
    the processes of one run, for programs whose processes talk TCP);
``processes``
    its own PID namespace whose init forwards signals to the program and, when
    the program ends, takes every process it started with it (``setsid`` and
    double forks included); without one, a child subreaper;
``memory``
    a cgroup per run: memory and number of processes for the whole run, not per
    process; killing the sandbox kills the cgroup;
``limits``
    resource limits per process (CPU seconds, address space, open files, file
    size, no core dumps), always;
``lifetime``
    the sandbox dies with the kit (``PR_SET_PDEATHSIG`` at every level), even
    when the kit is killed with SIGKILL.

Where a layer is not available (no root and no user namespaces, a container
that forbids namespaces, no writable cgroup hierarchy) the run goes on without
it (``mode="auto"``), says so in its report, or stops (``mode="strict"``,
exit 3).  ``mode="off"`` keeps only the limits, the subreaper and the lifetime.

The program is started by a small init written in Python with the standard
library only (``sandbox_init.py``, run with ``python -I -S``): no
``preexec_fn`` in the kit (it is unsafe with threads and swallowed Ctrl-C).
Its configuration (host paths among it) reaches it on an inherited descriptor,
never on its command line, which every process of the sandbox can read in
``/proc/1/cmdline``.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import re
import secrets
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import IO, Any, Final, Literal

import redletter.stopping as stopping
from redletter.errors import EnvironmentMissing, InputError

__all__ = [
    "INIT_SCRIPT",
    "MODES",
    "Launch",
    "Layer",
    "Sandbox",
    "SandboxPolicy",
    "SandboxReport",
    "cleanup_stale",
    "describe_bytes",
    "own_tempdir",
    "parse_bytes",
    "release_tempdir",
    "reopen",
    "shutdown",
]

INIT_SCRIPT: Final = Path(__file__).resolve().parent / "sandbox_init.py"
#: The variable naming the descriptor the init reads its configuration from (the
#: same name in sandbox_init.py, which imports nothing of the kit).
CONFIG_FD_ENV: Final = "REDLETTER_SANDBOX_CONFIG_FD"
MODES: Final = ("auto", "strict", "off")
Mode = Literal["auto", "strict", "off"]
Network = Literal["none", "loopback"]

#: System directories exposed read-only (those that exist; symlinks are copied).
SYSTEM_DIRS: Final = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
#: Files of /etc a program may need (the dynamic linker, time zone, name service).
ETC_FILES: Final = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/nsswitch.conf",
    "/etc/alternatives",
    "/etc/mime.types",
)
_PREFIX: Final = "redletter-sbx-"
_READY_TIMEOUT: Final = 30.0  #: seconds for the init to start the program


# --------------------------------------------------------------------------- sizes


def describe_bytes(n: int) -> str:
    """``4 GiB``, ``256 MiB``, ``1000 bytes``."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    if n >= 1 << 20:
        return f"{n / (1 << 20):.1f} MiB"
    return f"{n} bytes"


_SIZE_RE: Final = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*", re.IGNORECASE)


def parse_bytes(text: str) -> int:
    """``4G``, ``512M``, ``4GiB``, ``1000`` (bytes) -> bytes; ValueError otherwise."""
    m = _SIZE_RE.fullmatch(text)
    if m is None:
        raise ValueError(f"expected a size such as 512M or 4G, got {text!r}")
    shift = {"": 0, "k": 10, "m": 20, "g": 30, "t": 40}[m.group(2).lower()]
    return int(float(m.group(1)) * (1 << shift))


# --------------------------------------------------------------------------- policy and report


@dataclass(frozen=True)
class SandboxPolicy:
    """What the sandbox enforces (the defaults suit a protocol node).

    ``memory`` and ``processes`` bound the whole run (every process of every
    node together: a cgroup); ``address_space``, ``cpu_seconds``,
    ``open_files`` and ``file_size`` bound each process (resource limits).
    ``paths`` are exposed read-only besides what the program needs;
    ``hide`` are never visible (the store).
    """

    mode: Mode = "auto"
    network: Network = "none"
    paths: tuple[Path, ...] = ()
    hide: tuple[Path, ...] = ()
    memory: int | None = 4 << 30
    processes: int | None = 512
    cpu_seconds: int | None = 300
    address_space: int | None = 8 << 30
    open_files: int = 1024
    file_size: int = 256 << 20
    tmp_size: int = 256 << 20

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise InputError(
                f"--sandbox must be one of {', '.join(MODES)}, got {self.mode!r}",
                code="RL-INPUT-USAGE",
            )

    @staticmethod
    def off() -> SandboxPolicy:
        """Limits, subreaper and lifetime only (no namespaces, uid or cgroup)."""
        return SandboxPolicy(mode="off")

    def with_hidden(self, *paths: Path) -> SandboxPolicy:
        """The same policy hiding ``paths`` too."""
        return replace(self, hide=(*self.hide, *paths))

    def rlimits(self) -> dict[str, tuple[int, int]]:
        """The per-process resource limits, by ``resource`` name."""
        out: dict[str, tuple[int, int]] = {
            "RLIMIT_CORE": (0, 0),
            "RLIMIT_NOFILE": (self.open_files, self.open_files),
            "RLIMIT_FSIZE": (self.file_size, self.file_size),
        }
        if self.cpu_seconds is not None:
            out["RLIMIT_CPU"] = (self.cpu_seconds, self.cpu_seconds + 1)
        if self.address_space is not None:
            out["RLIMIT_AS"] = (self.address_space, self.address_space)
        return out


@dataclass(frozen=True)
class Layer:
    """One layer of the sandbox: active or not, and what it does or why not."""

    name: str
    active: bool
    detail: str

    def describe(self) -> str:
        return f"{self.name}: {'active' if self.active else 'NOT active'} ({self.detail})"

    def to_json(self) -> dict[str, object]:
        return {"layer": self.name, "active": self.active, "detail": self.detail}


LAYERS: Final = ("user", "filesystem", "network", "processes", "memory", "limits", "lifetime")


@dataclass(frozen=True)
class SandboxReport:
    """Every layer of a sandbox, in :data:`LAYERS` order."""

    mode: str
    layers: tuple[Layer, ...]

    def layer(self, name: str) -> Layer:
        return next(x for x in self.layers if x.name == name)

    @property
    def inactive(self) -> tuple[Layer, ...]:
        return tuple(x for x in self.layers if not x.active)

    def lines(self) -> list[str]:
        """One line per layer."""
        return [x.describe() for x in self.layers]

    def summary(self) -> str:
        """``sandbox (auto): user, filesystem, ... active; network NOT active (why)``."""
        on = [x.name for x in self.layers if x.active]
        text = f"sandbox ({self.mode}): {', '.join(on) if on else 'no layer'} active"
        off = "; ".join(f"{x.name} NOT active ({x.detail})" for x in self.inactive)
        return text + (f"; {off}" if off else "")

    def to_json(self) -> dict[str, object]:
        return {"mode": self.mode, "layers": [x.to_json() for x in self.layers]}


# --------------------------------------------------------------------------- cgroups


def _own_cgroups() -> dict[str, str]:
    """Controller (``""`` for the unified hierarchy) -> this process's cgroup path."""
    out: dict[str, str] = {}
    try:
        text = Path("/proc/self/cgroup").read_text()
    except OSError:
        return out
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        for ctrl in parts[1].split(",") if parts[1] else [""]:
            out[ctrl] = parts[2]
    return out


def _cgroup_mounts() -> dict[str, Path]:
    """Controller (``""`` for cgroup2) -> where its hierarchy is mounted."""
    out: dict[str, Path] = {}
    try:
        text = Path("/proc/self/mountinfo").read_text()
    except OSError:
        return out
    for line in text.splitlines():
        left, _, right = line.partition(" - ")
        fields, rest = left.split(), right.split()
        if len(fields) < 5 or len(rest) < 3:
            continue
        mountpoint, fstype, options = fields[4], rest[0], rest[2]
        if fstype == "cgroup2":
            out.setdefault("", Path(mountpoint))
        elif fstype == "cgroup":
            for opt in options.split(","):
                if opt in ("memory", "pids"):
                    out.setdefault(opt, Path(mountpoint))
    return out


@dataclass
class _Cgroup:
    """The run's cgroups: v1 ``memory`` and ``pids`` hierarchies, or one v2 group
    with both controllers; a v2 group without controllers still kills them all."""

    dirs: dict[str, Path] = field(default_factory=dict)  #: "memory"/"pids"/"" -> dir
    detail: str = ""
    limited: bool = False

    @property
    def procs(self) -> list[str]:
        return [str(d / "cgroup.procs") for d in self.dirs.values()]

    def pids(self) -> set[int]:
        out: set[int] = set()
        for d in self.dirs.values():
            with contextlib.suppress(OSError, ValueError):
                out.update(int(x) for x in (d / "cgroup.procs").read_text().split())
        return out

    def kill(self) -> None:
        """SIGKILL every process in the cgroups, until none is left."""
        v2 = self.dirs.get("")
        if v2 is not None and (v2 / "cgroup.kill").exists():
            with contextlib.suppress(OSError):
                (v2 / "cgroup.kill").write_text("1")
        for _ in range(200):
            left = self.pids()
            if not left:
                return
            for pid in left:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.005)

    def oom_kills(self) -> int:
        """How many processes the kernel's OOM killer stopped in this cgroup."""
        for name, path in (("memory", "memory.oom_control"), ("", "memory.events")):
            d = self.dirs.get(name)
            if d is None:
                continue
            with contextlib.suppress(OSError, ValueError):
                for line in (d / path).read_text().splitlines():
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        return int(value)
        return 0

    def peak_memory(self) -> int | None:
        for name, path in (("memory", "memory.max_usage_in_bytes"), ("", "memory.peak")):
            d = self.dirs.get(name)
            if d is not None:
                with contextlib.suppress(OSError, ValueError):
                    return int((d / path).read_text())
        return None

    def remove(self) -> None:
        self.kill()
        for d in self.dirs.values():
            for _ in range(50):
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)


def _make_cgroup(name: str, policy: SandboxPolicy) -> _Cgroup:
    """Create the run's cgroups under the kit's own (delegation), with the limits."""
    own, mounts = _own_cgroups(), _cgroup_mounts()
    cg = _Cgroup()
    reasons: list[str] = []
    v1 = [c for c in ("memory", "pids") if c in mounts and c in own]
    if v1:
        for ctrl in v1:
            d = mounts[ctrl] / own[ctrl].lstrip("/") / name
            try:
                d.mkdir()
            except OSError as exc:
                reasons.append(f"cannot create a {ctrl} cgroup under {d.parent}: {exc.strerror}")
                continue
            cg.dirs[ctrl] = d
        try:
            if "memory" in cg.dirs and policy.memory is not None:
                (cg.dirs["memory"] / "memory.limit_in_bytes").write_text(str(policy.memory))
                memsw = cg.dirs["memory"] / "memory.memsw.limit_in_bytes"
                if memsw.exists():
                    memsw.write_text(str(policy.memory))
            if "pids" in cg.dirs and policy.processes is not None:
                (cg.dirs["pids"] / "pids.max").write_text(str(policy.processes))
        except OSError as exc:
            reasons.append(f"cannot set the cgroup limits: {exc.strerror}")
        if "memory" in cg.dirs and "pids" in cg.dirs and not reasons:
            cg.limited = True
            cg.detail = "cgroup v1 (memory and pids controllers)"
    if "" in mounts and "" in own:
        base = mounts[""] / own[""].lstrip("/")
        d = base / name
        try:
            d.mkdir()
            cg.dirs[""] = d
        except OSError as exc:
            reasons.append(f"cannot create a cgroup v2 group under {base}: {exc.strerror}")
        else:
            if not cg.limited:
                ctrls = set((base / "cgroup.subtree_control").read_text().split())
                missing = {"memory", "pids"} - ctrls
                if missing:
                    try:
                        (base / "cgroup.subtree_control").write_text(
                            " ".join(f"+{c}" for c in sorted(missing))
                        )
                    except OSError as exc:
                        reasons.append(
                            f"cgroup v2: {base} does not delegate the {', '.join(sorted(missing))}"
                            f" controller(s) and cannot ({exc.strerror}: it holds processes);"
                            " run the kit in a cgroup with delegated controllers"
                            " (e.g. systemd-run --user --scope -p Delegate=yes)"
                        )
                try:
                    if policy.memory is not None:
                        (d / "memory.max").write_text(str(policy.memory))
                        with contextlib.suppress(OSError):
                            (d / "memory.swap.max").write_text("0")
                    if policy.processes is not None:
                        (d / "pids.max").write_text(str(policy.processes))
                    if {"memory", "pids"} <= set((d / "cgroup.controllers").read_text().split()):
                        cg.limited = True
                        cg.detail = "cgroup v2 (memory and pids controllers)"
                except OSError as exc:
                    if not reasons:
                        reasons.append(f"cgroup v2: cannot set the limits: {exc.strerror}")
    if not mounts:
        reasons.append("no cgroup hierarchy is mounted")
    elif not cg.dirs and not reasons:
        reasons.append("the kit's own cgroup was not found in /proc/self/cgroup")
    if not cg.limited:
        cg.detail = "; ".join(reasons) or "no memory and pids controllers are available"
    return cg


# --------------------------------------------------------------------------- stale leftovers


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


#: Temporary directories the kit names ``<prefix><pid>-...``: a sandbox's and a COS 418
#: workspace's; those of kits that died are removed by :func:`cleanup_stale`.
STALE_PREFIXES: Final = (_PREFIX, "redletter-cos418-")


def _owner_pid(name: str) -> int | None:
    for prefix in STALE_PREFIXES:
        m = re.match(re.escape(prefix) + r"(\d+)-", name)
        if m:
            return int(m.group(1))
    return None


def _kit_cgroups() -> list[tuple[str, Path]]:
    """Every cgroup folder under the kit's own cgroups, as ``(controller, folder)``."""
    out: list[tuple[str, Path]] = []
    own, mounts = _own_cgroups(), _cgroup_mounts()
    for ctrl, mount in mounts.items():
        if ctrl not in own:
            continue
        base = mount / own[ctrl].lstrip("/")
        with contextlib.suppress(OSError):
            out += [(ctrl, d) for d in base.iterdir() if d.is_dir()]
    return out


def cleanup_stale() -> list[str]:
    """Remove what sandboxes of kits that died (SIGKILL) left behind: their empty
    cgroups (killing anything still in them) and their temporary directories.
    Returns what was removed."""
    removed: list[str] = []
    for ctrl, d in _kit_cgroups():
        pid = _owner_pid(d.name)
        if pid is None or _alive(pid):
            continue
        _Cgroup({ctrl: d}).remove()
        if not d.exists():
            removed.append(str(d))
    tmp = Path(tempfile.gettempdir())
    with contextlib.suppress(OSError):
        for d in tmp.iterdir():
            pid = _owner_pid(d.name)
            if pid is None or _alive(pid):
                continue
            shutil.rmtree(d, ignore_errors=True)
            removed.append(str(d))
    return removed


# --------------------------------------------------------------------------- this process's own


#: Guards the registry below (re-entrant: a sandbox is made under it).
_OWN_LOCK: Final = threading.RLock()
#: The sandboxes of this process that are not closed yet.
_LIVE: Final[set[Sandbox]] = set()
#: The temporary directories this process made and has not removed yet.
_OWN_DIRS: Final[set[Path]] = set()
_SHUT: list[bool] = []  #: non-empty once :func:`shutdown` ran: no new sandbox


def own_tempdir(prefix: str) -> Path:
    """A fresh temporary directory ``<prefix><pid>-...`` of this process, registered
    so that :func:`shutdown` removes it, whatever thread made it.  Raises
    KeyboardInterrupt once the process is shutting down, or a stop was asked for
    (a Ctrl-C: :mod:`redletter.stopping`): no sandbox is made after one."""
    with _OWN_LOCK:
        if _SHUT or stopping.requested():
            raise stopping.interruption()
        d = Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-"))
        _OWN_DIRS.add(d)
        return d


def release_tempdir(path: Path) -> None:
    """Remove a directory :func:`own_tempdir` made."""
    shutil.rmtree(path, ignore_errors=True)
    with _OWN_LOCK:
        _OWN_DIRS.discard(path)


def reopen() -> None:
    """Allow sandboxes again after :func:`shutdown` (a new command in this process)."""
    with _OWN_LOCK:
        _SHUT.clear()


def shutdown() -> list[str]:
    """The command is stopping (Ctrl-C, SIGTERM): refuse new sandboxes, close every
    sandbox still open (its processes killed, its cgroups and folders removed) and
    remove every temporary directory of this process, whichever thread made them
    and wherever it was interrupted.  Returns what was removed."""
    with _OWN_LOCK:
        _SHUT.append(True)
        live = list(_LIVE)
    for sb in live:
        with contextlib.suppress(Exception):
            sb.close()
    with _OWN_LOCK:
        dirs = sorted(_OWN_DIRS)
    for d in dirs:
        release_tempdir(d)
    # Cgroups named after this process (a sandbox closed in another thread while
    # this ran may have been half-made).
    removed = [str(d) for d in dirs]
    for ctrl, d in _kit_cgroups():
        if _owner_pid(d.name) == os.getpid():
            _Cgroup({ctrl: d}).remove()
            removed.append(str(d))
    return removed


# --------------------------------------------------------------------------- what a program needs


def _is_system(path: Path) -> bool:
    return any(path == Path(d) or Path(d) in path.parents for d in SYSTEM_DIRS)


def _shebang(path: Path) -> Path | None:
    """The interpreter of a script (``#!/path/to/python``), if ``path`` is one."""
    try:
        with path.open("rb") as f:
            head = f.read(256)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    words = head[2:].split(b"\n", 1)[0].split()
    return Path(os.fsdecode(words[0])) if words else None


def _python_home(prog: Path) -> set[Path]:
    """A virtual environment holding ``prog`` and its base Python, if any."""
    out: set[Path] = set()
    for parent in prog.parents:
        cfg = parent / "pyvenv.cfg"
        if cfg.is_file():
            out.add(parent)
            with contextlib.suppress(OSError):
                for line in cfg.read_text(encoding="utf-8", errors="replace").splitlines():
                    key, _, value = line.partition("=")
                    if key.strip() == "home" and value.strip():
                        home = Path(value.strip())
                        out.add(home.parent if home.name == "bin" else home)
            break
    return out


def kit_paths() -> set[Path]:
    """The kit's own package (its nodes and node library run in the sandbox):
    the package directory and the real directories of its symlinked layers."""
    import redletter.errors as ground

    pkg = Path(ground.__file__).parent
    out = {pkg}
    with contextlib.suppress(OSError):
        for child in pkg.iterdir():
            if child.is_symlink():
                out.add(child.resolve())
    return out


def program_paths(argv: Sequence[str]) -> set[Path]:
    """What a program needs to run besides the system: its own directory (or,
    for an interpreter, its installation), the virtual environment it runs in,
    the interpreter of a script, and every existing file or directory its
    arguments name (a file's directory, so a script finds its modules)."""
    out: set[Path] = set()
    todo = [Path(argv[0])] if argv else []
    seen: set[Path] = set()
    while todo:
        prog = todo.pop()
        if prog in seen or not prog.is_absolute():
            continue
        seen.add(prog)
        out |= _python_home(prog)
        real = prog.resolve()
        if re.fullmatch(r"python[0-9.]*", real.name) and real.parent.name == "bin":
            out.add(real.parent.parent)
        elif not _is_system(real):
            out.add(real.parent)
        interp = _shebang(real)
        if interp is not None:
            todo.append(interp)
        if real != prog:
            out |= _python_home(real)
    for arg in argv[1:]:
        if not os.path.isabs(arg):
            continue
        p = Path(arg)
        with contextlib.suppress(OSError):
            if p.is_dir():
                out.add(p.resolve())
            elif p.exists():
                out.add(p.resolve().parent)
    return {p for p in out if not _is_system(p)}


def _minimal(paths: Iterable[Path]) -> list[str]:
    """The paths without those inside another one, shortest first."""
    out: list[Path] = []
    for p in sorted({Path(os.path.abspath(x)) for x in paths}, key=lambda x: len(x.parts)):
        if not any(q == p or q in p.parents for q in out):
            out.append(p)
    return [str(p) for p in out]


# --------------------------------------------------------------------------- the host


@lru_cache(maxsize=1)
def _host_uid() -> int:
    return os.getuid()


def _fresh_uid() -> int:
    """An unused uid (no passwd entry), high enough to own nothing on the host."""
    while True:
        uid = 200_000 + secrets.randbelow(1_000_000_000)
        try:
            pwd.getpwuid(uid)
        except KeyError:
            return uid


# --------------------------------------------------------------------------- launching


class SandboxRefused(EnvironmentMissing):
    """``--sandbox strict`` and a layer is not available here."""

    code = "RL-ENV-SANDBOX"


@dataclass
class Launch:
    """How to start one program in a sandbox with any process API: run ``argv``
    without a shell, with ``pass_fds`` and ``start_new_session=True``, then call
    :meth:`started` (which reads the init's status).  :meth:`Sandbox.popen` does
    all of it with :class:`subprocess.Popen`."""

    argv: list[str]
    pass_fds: tuple[int, ...]
    env: dict[str, str]
    sandbox: Sandbox
    program: str
    workdir: Path  #: the program's working directory when there is no private view
    _status_r: int
    _status_w: int
    _config: int = -1  #: the descriptor holding the init's configuration
    _result_w: int = -1  #: the write end of the init's last word (which folders filled)
    layers: dict[str, str] = field(default_factory=dict)

    def spawned(self) -> None:
        """Call once the process exists: the harness lets go of the status pipe's
        write end, of the configuration's descriptor and of the result pipe's write end."""
        for name in ("_status_w", "_config", "_result_w"):
            fd = getattr(self, name)
            if fd >= 0:
                os.close(fd)
                setattr(self, name, -1)

    def abandon(self) -> None:
        """The process could not be started: close the status pipe."""
        self.spawned()
        if self._status_r >= 0:
            os.close(self._status_r)
            self._status_r = -1

    def started(self, timeout: float = _READY_TIMEOUT) -> dict[str, str]:
        """Wait until the program was executed (or failed to be); the layers' status.

        Raises :class:`InputError` (``RL-INPUT-NODE-CMD``) when the program cannot
        be executed, :class:`SandboxRefused` in strict mode when a layer is
        missing, :class:`EnvironmentMissing` when the init itself fails.
        """
        self.spawned()
        data = b""
        deadline = time.monotonic() + timeout
        try:
            while True:
                stopping.check()  # a Ctrl-C whose KeyboardInterrupt was lost
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise EnvironmentMissing(
                        f"the sandbox did not start {self.program} within {timeout:g} s",
                        code="RL-ENV-SANDBOX",
                    )
                ready, _, _ = select.select([self._status_r], [], [], min(remaining, 0.1))
                if not ready:
                    continue
                chunk = os.read(self._status_r, 65536)
                if not chunk:
                    break
                data += chunk
        finally:
            os.close(self._status_r)
            self._status_r = -1
        status: dict[str, Any] = {}
        for line in data.decode("utf-8", "replace").splitlines():
            with contextlib.suppress(ValueError):
                obj = json.loads(line)
                if isinstance(obj, dict):
                    status.update(obj)
        self.layers = {str(k): str(v) for k, v in dict(status.get("layers", {})).items()}
        self.sandbox._record(self.layers)
        if "error" in status:
            raise EnvironmentMissing(
                f"the sandbox could not start {self.program}: {status['error']}",
                code="RL-ENV-SANDBOX",
            )
        if "exec_error" in status:
            reason = str(status["exec_error"])
            hint = ""
            if self.sandbox.report().layer("filesystem").active and os.path.exists(self.program):
                hint = (
                    " inside the sandbox (it exists on the host: expose what it needs with"
                    " --sandbox-path, or check its interpreter)"
                )
            raise InputError(f"{self.program}: {reason}{hint}", code="RL-INPUT-NODE-CMD")
        if not data:
            raise EnvironmentMissing(
                f"the sandbox's init ended before starting {self.program}",
                code="RL-ENV-SANDBOX",
            )
        if self.sandbox.policy.mode == "strict":
            missing = self.sandbox.report().inactive
            if missing:
                raise SandboxRefused(
                    "--sandbox strict, but "
                    + "; ".join(f"the {x.name} layer is not active ({x.detail})" for x in missing)
                )
        return self.layers


class Sandbox:
    """The confinement of one run: every process started through it shares its
    uid, its cgroup (memory and processes for the whole run) and, with
    ``network="loopback"``, one loopback network.  Close it (or use it as a
    context manager) to kill every process left and remove what it made."""

    def __init__(
        self,
        policy: SandboxPolicy | None = None,
        *,
        name: str = "run",
        uid: int | None = None,
    ) -> None:
        self.policy = policy if policy is not None else SandboxPolicy()
        self.name = name
        self._closed = False
        self._released = False  #: closed, and everything it made removed
        self._members: list[subprocess.Popen[bytes]] = []
        self._pids: list[int] = []  #: started by other means (asyncio): killed, not waited
        self._holder: subprocess.Popen[bytes] | None = None
        self._chowned: list[tuple[Path, int, int]] = []
        self._seen: dict[str, str] = {}
        self._oom_before = 0
        self._results: list[int] = []  #: read ends of the inits' last words
        self._said: dict[int, bytes] = {}
        off = self.policy.mode == "off"
        self.is_root = _host_uid() == 0
        self.uid: int | None = None
        if not off and self.is_root:
            self.uid = uid if uid is not None else _fresh_uid()
        self.cgroup = _Cgroup()
        # Made and registered at once, under the registry's lock: a Ctrl-C's
        # shutdown() either sees this sandbox whole or refuses to let it be made.
        with _OWN_LOCK:
            self.root = own_tempdir(_PREFIX)
            _LIVE.add(self)
            try:
                if not off:
                    self.cgroup = _make_cgroup(self.root.name, self.policy)
                    self._oom_before = self.cgroup.oom_kills()
            except BaseException:
                _LIVE.discard(self)
                self.cgroup.remove()
                release_tempdir(self.root)
                raise
        if off:
            self.cgroup.detail = "sandbox turned off (--sandbox off)"
        (self.root / "view").mkdir()

    # -- the report --------------------------------------------------------

    def _record(self, layers: Mapping[str, str]) -> None:
        for k, v in layers.items():
            if k not in self._seen or v != "ok":
                self._seen[k] = v

    def report(self) -> SandboxReport:
        """Every layer, active or not and why (from what the init reported so far)."""
        pol, seen = self.policy, self._seen
        off = pol.mode == "off"
        ns = seen.get("namespaces")
        ns_ok = ns == "ok"
        ns_why = (
            "sandbox turned off (--sandbox off)"
            if off
            else f"namespaces refused: {ns}"
            if ns is not None and not ns_ok
            else "no program started yet"
            if ns is None
            else ""
        )
        layers: list[Layer] = []
        # user
        if self.uid is not None and seen.get("user") == "ok":
            layers.append(Layer("user", True, f"fresh unprivileged uid {self.uid}, no groups"))
        elif off:
            layers.append(Layer("user", False, ns_why))
        elif not self.is_root:
            layers.append(
                Layer(
                    "user",
                    False,
                    f"the kit does not run as root, so it cannot switch to a fresh uid: the"
                    f" program runs as the kit's own user (uid {_host_uid()})"
                    + (", with no capabilities" if seen.get("userns") == "ok" else ""),
                )
            )
        else:
            layers.append(Layer("user", False, "no program started yet"))
        # filesystem
        fs = seen.get("filesystem")
        if fs == "ok":
            layers.append(
                Layer(
                    "filesystem",
                    True,
                    "private view: read-only system directories and the program's files,"
                    f" its own /tmp and working folder (a {describe_bytes(pol.tmp_size)} tmpfs:"
                    " the host's disk is not written); the store and the run's folder hidden",
                )
            )
        else:
            layers.append(Layer("filesystem", False, ns_why or f"view refused: {fs}"))
        # network
        if ns_ok and seen.get("network") == "ok":
            what = (
                "loopback only, shared by the run's processes"
                if pol.network == "loopback"
                else "no network: its own network namespace, no interface up"
            )
            layers.append(Layer("network", True, what))
        else:
            layers.append(Layer("network", False, ns_why or "host network"))
        # processes
        if ns_ok:
            layers.append(
                Layer(
                    "processes",
                    True,
                    "its own PID namespace: an init forwards signals and kills every process"
                    " the program started when it ends",
                )
            )
        else:
            sub = seen.get("subreaper")
            layers.append(
                Layer(
                    "processes",
                    False,
                    f"no PID namespace ({ns_why}); "
                    + (
                        "a child subreaper kills the orphans it inherits"
                        if sub == "ok"
                        else f"no subreaper either ({sub})"
                    ),
                )
            )
        # memory
        cg = self.cgroup
        cg_state = seen.get("cgroup")
        if cg.limited and cg_state in (None, "ok"):
            mem = describe_bytes(pol.memory) if pol.memory is not None else "unlimited memory"
            procs = f"{pol.processes} processes" if pol.processes is not None else "any processes"
            what = f"{mem} and {procs} for the whole run: {cg.detail}"
            layers.append(Layer("memory", True, what))
        else:
            why = cg.detail if not cg.limited else f"joining the cgroup failed: {cg_state}"
            layers.append(Layer("memory", False, why))
        # limits (always)
        parts = []
        if pol.cpu_seconds is not None:
            parts.append(f"CPU {pol.cpu_seconds} s")
        if pol.address_space is not None:
            parts.append(f"address space {describe_bytes(pol.address_space)}")
        parts += [
            f"{pol.open_files} open files",
            f"files up to {describe_bytes(pol.file_size)}",
            "no core dumps",
        ]
        layers.append(Layer("limits", True, "per process: " + ", ".join(parts)))
        tied = seen.get("tied")
        layers.append(
            Layer(
                "lifetime",
                tied in (None, "ok"),
                "killed with the kit, even by SIGKILL (PR_SET_PDEATHSIG)"
                if tied in (None, "ok")
                else f"not tied to the kit: {tied}",
            )
        )
        return SandboxReport(pol.mode, tuple(layers))

    # -- starting programs -------------------------------------------------

    def _grant(self, path: Path) -> None:
        """Let the sandbox's uid write ``path`` (restored at close)."""
        if self.uid is None or not path.exists():
            return
        st = path.stat()
        self._chowned.append((path, st.st_uid, st.st_gid))
        os.chown(path, self.uid, self.uid)

    def _holder_net(self) -> str | None:
        """The shared loopback network of the run (a holder process keeps it)."""
        if self.policy.network != "loopback" or self.policy.mode == "off":
            return None
        if self._holder is None:
            launch = self.launch([], hold=True)
            proc = subprocess.Popen(
                launch.argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                pass_fds=launch.pass_fds,
                env=launch.env,
                start_new_session=True,
                close_fds=True,
            )
            self._holder = proc
            launch.started()
        return f"/proc/{self._holder.pid}/ns/net"

    def launch(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        writable: Sequence[Path] = (),
        readable: Sequence[Path] = (),
        hide: Sequence[Path] = (),
        tmp_size: int | None = None,
        hold: bool = False,
        home: bool = False,
        shared: Sequence[Path] = (),
        cwd: Path | None = None,
        extra_fds: Sequence[int] = (),
        overlay: Sequence[Path] = (),
    ) -> Launch:
        """Prepare to start ``argv`` (absolute program path) in this sandbox.

        ``writable`` paths are bound read-write (and handed to the sandbox's
        uid until :meth:`close`), ``readable`` ones read-only besides what
        :func:`program_paths` finds; ``hide`` adds to the policy's hidden paths.
        With ``home``, ``HOME`` and ``TMPDIR`` are the program's working directory.
        ``shared`` paths are bound read-write as they are (the sandbox's uid owns
        them already: a cache shared by the builds of the kit).  ``cwd`` is the
        program's working directory (default: its own ``/tmp``, a tmpfs of
        ``tmp_size`` bytes).  ``overlay`` folders are shown writable at their own
        paths, but what the program writes there goes to a tmpfs of ``tmp_size``
        bytes inside the sandbox, never to the host's folder (without a private
        view they are plain writable folders).  After the program ends,
        :meth:`filled` says which of these bounded file systems it filled.
        """
        if self._closed:
            raise RuntimeError("the sandbox is closed")
        pol = self.policy
        off = pol.mode == "off"
        workdir = Path(tempfile.mkdtemp(prefix="work-", dir=self.root))
        if self.uid is not None:
            os.chown(workdir, self.uid, self.uid)
        for path in (*writable, *overlay):
            self._grant(path)
        if off:  # no private view: the folders are the host's, written in place
            writable, overlay = (*writable, *overlay), ()
        join = None if hold else self._holder_net()
        r, w = os.pipe()
        result_r, result_w = os.pipe() if not hold else (-1, -1)
        if result_r >= 0:
            self._results.append(result_r)
        program_env = dict(env or {})
        tmp = tmp_size if tmp_size is not None else pol.tmp_size
        cfg: dict[str, object] = {
            "argv": list(argv),
            "env": program_env,
            "ppid": os.getpid(),
            "status_fd": w,
            "cgroups": [] if off else self.cgroup.procs,
            "namespaces": not off,
            "network": pol.network,
            "join_net": join,
            "hold": hold,
            "uid": self.uid,
            "gid": self.uid,
            "cwd": str(workdir),
            "chdir": str(cwd) if cwd is not None else None,
            "home": home,
            "rlimits": {k: list(v) for k, v in pol.rlimits().items()},
            "extra_fds": list(extra_fds),
            "result_fd": result_w,
        }
        if not off:
            hidden = [Path(os.path.abspath(h)) for h in (*pol.hide, *hide)]
            for arg in argv:
                if not os.path.isabs(arg) or not os.path.exists(arg):
                    continue
                for h in hidden:
                    a = Path(os.path.abspath(arg))
                    if a == h or h in a.parents:
                        raise InputError(
                            f"{arg} is inside {h}, which the sandbox hides from the programs it"
                            " runs (the store, the run's folder and logs): move the program's"
                            " files elsewhere",
                            code="RL-INPUT-NODE-CMD",
                        )
            ro = {Path(d) for d in SYSTEM_DIRS if Path(d).exists() and not Path(d).is_symlink()}
            ro |= {Path(f) for f in ETC_FILES if Path(f).exists()}
            ro |= program_paths(argv) | kit_paths() | {Path(p) for p in pol.paths}
            ro |= {Path(p) for p in readable}
            rw = [os.path.abspath(p) for p in (*writable, *shared)]
            lower = [os.path.abspath(p) for p in overlay]
            symlinks = [[d, os.readlink(d)] for d in SYSTEM_DIRS if os.path.islink(d)]
            uid = self.uid if self.uid is not None else _host_uid()
            hidden.append(self.root)
            cfg["fs"] = {
                "root": str(self.root / "view"),
                "ro": [p for p in _minimal(ro) if p not in rw and p not in lower],
                "rw": rw,
                "overlay": lower,
                "symlinks": symlinks,
                "hide": [os.path.abspath(h) for h in hidden],
                "tmp_size": tmp,
                "etc_files": {
                    "passwd": f"root:x:0:0:root:/:/bin/sh\nnode:x:{uid}:{uid}:node:/tmp:/bin/sh\n",
                    "group": f"root:x:0:\nnode:x:{uid}:\n",
                    "hosts": "127.0.0.1 localhost\n::1 localhost\n",
                    "hostname": "redletter\n",
                },
            }
        # The configuration goes on a descriptor, not on the command line: the init is
        # PID 1 of the sandbox, and /proc/1/cmdline is readable by every process in it.
        config = _config_fd(json.dumps(cfg).encode())
        argv0 = [sys.executable, "-I", "-S", "-B", str(INIT_SCRIPT)]
        return Launch(
            argv0,
            (w, config, *extra_fds, *((result_w,) if result_w >= 0 else ())),
            {"LANG": "C.UTF-8", CONFIG_FD_ENV: str(config)},
            self,
            argv[0] if argv else "(holder)",
            workdir,
            r,
            w,
            config,
            result_w,
        )

    def adopt(self, proc: subprocess.Popen[bytes] | int) -> None:
        """Count ``proc`` (started from a :class:`Launch`; a Popen, or the pid of a
        process started otherwise, e.g. by asyncio) among the sandbox's processes."""
        if isinstance(proc, int):
            self._pids.append(proc)
        else:
            self._members.append(proc)

    def popen(
        self,
        argv: Sequence[str],
        *,
        stdin: int | IO[Any] | None = subprocess.DEVNULL,
        stdout: int | IO[Any] | None = None,
        stderr: int | IO[Any] | None = None,
        env: Mapping[str, str] | None = None,
        writable: Sequence[Path] = (),
        readable: Sequence[Path] = (),
        hide: Sequence[Path] = (),
        tmp_size: int | None = None,
        shared: Sequence[Path] = (),
        cwd: Path | None = None,
        home: bool = True,
        extra_fds: Sequence[int] = (),
        overlay: Sequence[Path] = (),
    ) -> subprocess.Popen[bytes]:
        """Start ``argv`` in the sandbox (see :meth:`launch`) and wait until it runs."""
        launch = self.launch(
            argv,
            env=env,
            writable=writable,
            readable=readable,
            hide=hide,
            tmp_size=tmp_size,
            shared=shared,
            cwd=cwd,
            home=home,
            extra_fds=extra_fds,
            overlay=overlay,
        )
        try:
            proc = subprocess.Popen(
                launch.argv,
                stdin=stdin,
                stdout=stdout,
                stderr=stderr,
                pass_fds=launch.pass_fds,
                env=launch.env,
                start_new_session=True,
                close_fds=True,
                bufsize=0,
            )
        except OSError as exc:
            launch.abandon()
            raise EnvironmentMissing(
                f"cannot start the sandbox ({sys.executable}): {exc.strerror}",
                code="RL-ENV-SANDBOX",
            ) from None
        self.adopt(proc)
        try:
            launch.started()
        except BaseException:
            _kill_group(proc.pid)
            with contextlib.suppress(OSError):
                proc.wait(timeout=5)
            raise
        return proc

    # -- ending --------------------------------------------------------------

    def oom_killed(self) -> bool:
        """Whether the kernel's OOM killer stopped a process of this run (its memory limit)."""
        return self.cgroup.oom_kills() > self._oom_before

    def peak_memory(self) -> int | None:
        """The most memory the run used at once, where the cgroup tells."""
        return self.cgroup.peak_memory()

    def filled(self) -> tuple[tuple[str, int], ...]:
        """The size-bounded file systems (its ``/tmp``, ``/dev/shm``, its overlays)
        that a program of this sandbox filled, as ``(path inside the sandbox, size)``:
        what each init said once its program had ended (call after the programs
        ended; a program killed with its init says nothing)."""
        out: list[tuple[str, int]] = []
        for fd in self._results:
            data = b""
            with contextlib.suppress(OSError):
                os.set_blocking(fd, False)
                while chunk := os.read(fd, 65536):
                    data += chunk
            self._said[fd] = self._said.get(fd, b"") + data
            for line in self._said[fd].decode("utf-8", "replace").splitlines():
                with contextlib.suppress(ValueError, TypeError):
                    for path, size in json.loads(line).get("full", []):
                        if (str(path), int(size)) not in out:
                            out.append((str(path), int(size)))
        return tuple(out)

    def kill(self) -> None:
        """SIGKILL every process of the sandbox now."""
        for pid in self._pids:
            _kill_group(pid)
        for proc in [*self._members, *([self._holder] if self._holder else [])]:
            if proc.poll() is None:
                _kill_group(proc.pid)
        self.cgroup.kill()
        for proc in [*self._members, *([self._holder] if self._holder else [])]:
            with contextlib.suppress(subprocess.TimeoutExpired, OSError):
                proc.wait(timeout=5)

    def close(self) -> None:
        """Kill every process left, remove the cgroups and directories, give back
        the paths lent to the sandbox's uid.  Idempotent; a close cut short (a
        Ctrl-C landed in it) is finished by the next one (:func:`shutdown`'s)."""
        if self._released:
            return
        self._closed = True  # no launch from here on
        self.kill()
        self.cgroup.remove()
        while self._chowned:
            path, uid, gid = self._chowned[-1]
            _chown_back(path, self.uid, uid, gid)
            self._chowned.pop()
        while self._results:
            with contextlib.suppress(OSError):
                os.close(self._results.pop())
        release_tempdir(self.root)
        with _OWN_LOCK:
            _LIVE.discard(self)
        self._released = True

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _config_fd(data: bytes) -> int:
    """A descriptor whose contents are ``data`` (an anonymous memory file where there
    are such, else an unlinked temporary file), read from its start."""
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("redletter-sandbox-config", os.MFD_CLOEXEC)
    else:  # pragma: no cover - every Linux the sandbox runs on has memfd_create
        with tempfile.TemporaryFile() as f:
            fd = os.dup(f.fileno())
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGKILL)


def _chown_back(path: Path, sandbox_uid: int | None, uid: int, gid: int) -> None:
    """Give ``path`` (and whatever the sandbox's uid created under it) back."""
    with contextlib.suppress(OSError):
        os.chown(path, uid, gid)
    if sandbox_uid is None or not path.is_dir():
        return
    for dirpath, dirnames, filenames in os.walk(path):
        for name in (*dirnames, *filenames):
            p = os.path.join(dirpath, name)
            with contextlib.suppress(OSError):
                if os.lstat(p).st_uid == sandbox_uid:
                    os.lchown(p, uid, gid)
