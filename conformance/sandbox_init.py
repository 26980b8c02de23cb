"""The sandbox's init: confines one program, then runs it and stands guard.

This file is run as a script (``python -I -S -B sandbox_init.py``) by
:mod:`redletter.conformance.sandbox`, never imported by the kit: it uses the
standard library only, so it starts in a few tens of milliseconds and does not
depend on the kit's environment.  Its configuration is one JSON object (see
``Config`` in sandbox.py), read first thing from the inherited descriptor that
``$REDLETTER_SANDBOX_CONFIG_FD`` names, then closed: never on the command line,
which the programs in the sandbox could read in ``/proc/1/cmdline`` (the init is
their PID 1).  Written by hand because no library does this from
Python without a compiled helper: bubblewrap and nsjail are not on the
registries the kit may use, and ``unshare(1)`` cannot forward signals, report
which layer failed, or tie the sandbox to the harness's life.

Three processes, each guarding the next::

    harness ── outer ── init (PID 1 of a new PID namespace) ── the program

- **outer** (the harness's child): dies with the harness (``PR_SET_PDEATHSIG``),
  joins the run's cgroups, creates the namespaces (mount, PID, network, IPC,
  UTS; a user namespace first when not root), forks the init, then forwards
  signals to it and exits with the *program's* status (re-raising the signal
  that killed it), so the harness sees what the program did.
- **init**: PID 1 of the new PID namespace; dies with the outer.  Builds the
  private filesystem view (a tmpfs root with read-only binds of the system
  directories and the program's files, a size-limited tmpfs ``/tmp`` as the
  working directory, a fresh ``/proc``), forks the program, forwards SIGTERM,
  SIGINT, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 to it (PID 1 would otherwise
  ignore them), reaps orphans, and exits when the program does: the kernel then
  kills every process left in the namespace, children that called ``setsid``
  or forked twice included.  Without a PID namespace it is a child subreaper
  that kills every descendant it inherits.
- **program**: resource limits, the fresh unprivileged uid and gid (no
  supplementary groups), ``PR_SET_NO_NEW_PRIVS``, then ``execve``.

Nobody but the program keeps its stdin, stdout or stderr open: a program that
closes its stdout is seen to do so.  One JSON line on the status descriptor
tells the harness which layer is active (``"ok"``) or why not; a second one
(``exec_error``) when the program cannot be started.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import json
import os
import resource
import signal
import socket
import stat
import struct
import sys
from typing import Any

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_REMOUNT = 0x20
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 0x40000
MNT_DETACH = 0x2

PR_SET_PDEATHSIG = 1
PR_CAPBSET_DROP = 24
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38

SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
IFF_UP = 0x1

#: pivot_root has no glibc wrapper: its syscall number per machine.
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "i686": 217, "i386": 217, "armv7l": 218}

FORWARDED = (
    signal.SIGTERM,
    signal.SIGINT,
    signal.SIGHUP,
    signal.SIGQUIT,
    signal.SIGUSR1,
    signal.SIGUSR2,
)

#: The device nodes a program may use (bound from the host's /dev).
DEVICES = ("null", "zero", "full", "random", "urandom")

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                        ctypes.c_char_p]  # fmt: skip
_libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
_libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong,
                        ctypes.c_ulong]  # fmt: skip
_libc.unshare.argtypes = [ctypes.c_int]
_libc.setns.argtypes = [ctypes.c_int, ctypes.c_int]


Config = dict[str, Any]  #: the JSON configuration (see Config in sandbox.py)


class Refused(Exception):
    """A layer could not be set up; the message says why."""


def _check(ret: int, what: str) -> None:
    if ret != 0:
        e = ctypes.get_errno()
        raise Refused(f"{what}: {os.strerror(e)} ({errno.errorcode.get(e, e)})")


def prctl(option: int, arg: int = 0) -> None:
    _check(_libc.prctl(option, arg, 0, 0, 0), f"prctl({option})")


def unshare(flags: int) -> None:
    _check(_libc.unshare(flags), "unshare")


def mount(src: str | None, target: str, fstype: str | None, flags: int, data: str = "") -> None:
    _check(
        _libc.mount(
            src.encode() if src is not None else None,
            target.encode(),
            fstype.encode() if fstype is not None else None,
            flags,
            data.encode() if data else None,
        ),
        f"mount {src or fstype} on {target}",
    )


def write_file(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def write_status(fd: int, obj: object) -> None:
    if fd < 0:
        return
    with contextlib.suppress(OSError):
        os.write(fd, (json.dumps(obj) + "\n").encode())


def to_devnull(fds: tuple[int, ...] = (0, 1, 2)) -> None:
    """Let go of the program's stdin, stdout and stderr."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in fds:
        os.dup2(null, fd)
    if null not in fds:
        os.close(null)


# --------------------------------------------------------------------------- outer


def outer(cfg: Config) -> None:
    status_fd = int(cfg.get("status_fd", -1))
    layers: dict[str, str] = {}
    # Die with the harness; if it died before this line, stop here.
    try:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        layers["tied"] = "ok"
    except Refused as exc:
        layers["tied"] = str(exc)
    if os.getppid() != int(cfg.get("ppid", os.getppid())):
        os._exit(125)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    # The run's cgroups (memory and processes counted for the whole run).
    joined = []
    for procs in cfg.get("cgroups", []):
        try:
            write_file(procs, str(os.getpid()))
            joined.append(procs)
        except OSError as exc:
            layers["cgroup"] = f"cannot join {procs}: {exc.strerror}"
            break
    else:
        if cfg.get("cgroups"):
            layers["cgroup"] = "ok"
    # Namespaces.
    pidns = False
    if cfg.get("namespaces"):
        try:
            pidns = namespaces(cfg, layers)
        except Refused as exc:
            layers["namespaces"] = str(exc)
    report = os.pipe()  # init -> outer: the program's wait status
    try:
        pid = os.fork()
    except OSError as exc:
        write_status(status_fd, {"layers": layers, "error": f"fork: {exc.strerror}"})
        os._exit(126)
    if pid == 0:
        os.close(report[0])
        try:
            init(cfg, layers, pidns, report[1], status_fd)
        except BaseException as exc:  # the init must never fall back into outer
            write_status(status_fd, {"layers": layers, "error": f"init: {exc}"})
        os._exit(126)
    os.close(report[1])
    if status_fd >= 0:
        os.close(status_fd)
    to_devnull()

    def forward(sig: int, _frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)

    for sig in FORWARDED:
        signal.signal(sig, forward)
    while True:
        try:
            _, wstatus = os.waitpid(pid, 0)
            break
        except ChildProcessError:
            wstatus = 0
            break
    data = b""
    while True:
        chunk = os.read(report[0], 64)
        if not chunk:
            break
        data += chunk
    if data.strip():
        wstatus = int(data.split()[0])
    exit_like(wstatus)


def exit_like(wstatus: int) -> None:
    """End this process the way the program ended: its exit code, or its signal."""
    if os.WIFSIGNALED(wstatus):
        sig = os.WTERMSIG(wstatus)
        for s in FORWARDED:
            signal.signal(s, signal.SIG_DFL)
        with contextlib.suppress(OSError, ValueError):
            signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
        os.kill(os.getpid(), sig)
        os._exit(128 + sig)
    os._exit(os.WEXITSTATUS(wstatus) if os.WIFEXITED(wstatus) else 126)


def namespaces(cfg: Config, layers: dict[str, str]) -> bool:
    """Create the namespaces; returns whether a PID namespace was created."""
    flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS
    net = cfg.get("network", "none")
    join = cfg.get("join_net")
    if net != "host" and not join:
        flags |= CLONE_NEWNET
    uid, gid = os.getuid(), os.getgid()
    if uid == 0:
        unshare(flags)
        layers["namespaces"] = "ok"
    else:
        # An unprivileged user namespace: root inside, the kit's user outside.
        unshare(flags | CLONE_NEWUSER)
        write_file("/proc/self/setgroups", "deny")
        write_file("/proc/self/uid_map", f"0 {uid} 1")
        write_file("/proc/self/gid_map", f"0 {gid} 1")
        layers["namespaces"] = "ok"
        layers["userns"] = "ok"
    if join:
        fd = os.open(join, os.O_RDONLY)
        try:
            _check(_libc.setns(fd, CLONE_NEWNET), f"setns {join}")
        finally:
            os.close(fd)
    if net == "loopback" and not join:
        loopback_up()
    layers["network"] = "ok" if net != "host" else "host"
    return True


def loopback_up() -> None:
    """Bring ``lo`` up in a fresh network namespace (local TCP between a run's nodes)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        req = struct.pack("16sH22x", b"lo", 0)
        flags = struct.unpack("16sH22x", fcntl.ioctl(s.fileno(), SIOCGIFFLAGS, req))[1]
        fcntl.ioctl(s.fileno(), SIOCSIFFLAGS, struct.pack("16sH22x", b"lo", flags | IFF_UP))
    except OSError as exc:
        raise Refused(f"bringing up lo: {exc.strerror}") from None
    finally:
        s.close()


# --------------------------------------------------------------------------- init


def init(cfg: Config, layers: dict[str, str], pidns: bool, report_fd: int, status_fd: int) -> None:
    with contextlib.suppress(Refused):
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() == 1 and not pidns:
        os._exit(125)  # the outer is gone already
    if not pidns:
        try:
            prctl(PR_SET_CHILD_SUBREAPER, 1)
            layers["subreaper"] = "ok"
        except Refused as exc:
            layers["subreaper"] = str(exc)
    else:
        with contextlib.suppress(OSError):
            socket.sethostname("redletter")
    fs = cfg.get("fs")
    cwd = cfg.get("cwd") or "/"  # the host working directory, when there is no view
    if fs and layers.get("namespaces") == "ok":
        try:
            build_view(fs, cfg)
            layers["filesystem"] = "ok"
            cwd = "/tmp"
        except (Refused, OSError) as exc:
            layers["filesystem"] = str(exc)
    home = cwd  # the program's own directory: HOME and TMPDIR
    if cfg.get("chdir"):
        cwd = cfg["chdir"]
    uid = cfg.get("uid")
    if uid is not None and os.getuid() == 0 and "userns" not in layers:
        layers["user"] = "ok"
    write_status(status_fd, {"layers": layers, "init_pid": os.getpid()})
    if cfg.get("hold"):
        hold_forever(status_fd)
    try:
        child = os.fork()
    except OSError as exc:
        write_status(status_fd, {"exec_error": f"fork: {exc.strerror}"})
        os._exit(126)
    if child == 0:
        drop = int(uid) if uid is not None and os.getuid() == 0 and "userns" not in layers else None
        program(cfg, cwd, home, status_fd, drop_to=drop, userns="userns" in layers)
    if status_fd >= 0:
        os.close(status_fd)
    to_devnull()
    bounded = watched(fs) if layers.get("filesystem") == "ok" and fs else []
    guard(child, pidns, report_fd, bounded, int(cfg.get("result_fd", -1)))


def hold_forever(status_fd: int) -> None:
    """Keep the namespaces alive (the shared network of a run) until killed."""
    if status_fd >= 0:
        os.close(status_fd)
    to_devnull()
    for sig in FORWARDED:
        signal.signal(sig, lambda *_: os._exit(0))
    while True:
        signal.pause()


def guard(
    child: int, pidns: bool, report_fd: int, bounded: list[list[Any]], result_fd: int
) -> None:
    """Forward signals to the program, reap orphans, and end with the program; then
    tell the harness which of the ``bounded`` file systems the program filled."""

    def forward(sig: int, _frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, sig)

    for sig in FORWARDED:
        signal.signal(sig, forward)
    wstatus = 0
    while True:
        try:
            pid, st = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        if pid == child:
            wstatus = st
            break
    # Every process left behind dies with the program.  In a PID namespace the
    # kernel does it when PID 1 exits; a subreaper must do it itself.
    if not pidns:
        kill_descendants()
    if result_fd >= 0:
        write_status(result_fd, {"full": filled(bounded)})
    with contextlib.suppress(OSError):
        os.write(report_fd, f"{wstatus}\n".encode())
    os._exit(0)


def watched(fs: Config) -> list[list[Any]]:
    """The size-bounded file systems of the view the program may write, as
    ``[path, size]`` (seen from inside the view)."""
    size = int(fs["tmp_size"])
    out: list[list[Any]] = [["/tmp", size], ["/dev/shm", size]]
    out += [[p, size] for p in fs.get("overlay", [])]
    return out


def filled(bounded: list[list[Any]]) -> list[list[Any]]:
    """Those of ``bounded`` that are full: less than 1 MiB (or 1 %) of their
    space left, or no file left to create."""
    out = []
    for path, size in bounded:
        try:
            st = os.statvfs(path)
        except OSError:
            continue
        free = st.f_bavail * st.f_frsize
        if free < max(1 << 20, size // 100) or (st.f_files and st.f_favail == 0):
            out.append([path, size])
    return out


def kill_descendants() -> None:
    """SIGKILL every process whose parent is this one (orphans are reparented here
    as a subreaper), until none is left."""
    me = os.getpid()
    for _ in range(1000):
        kids = []
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    stat = f.read()
            except OSError:
                continue
            fields = stat[stat.rfind(b")") + 2 :].split()
            if len(fields) > 1 and int(fields[1]) == me:
                kids.append(int(name))
        if not kids:
            return
        for pid in kids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for pid in kids:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)


def program(
    cfg: Config, cwd: str, home: str, status_fd: int, *, drop_to: int | None, userns: bool
) -> None:
    """In the program's process: limits, identity, then exec."""
    try:
        for sig in FORWARDED:
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        for name, (soft, hard) in cfg.get("rlimits", {}).items():
            resource.setrlimit(getattr(resource, name), (soft, hard))
        if userns:
            # Root inside a user namespace is the kit's user outside, with every
            # capability over the namespace's mounts: give them all up, for good.
            drop_capabilities()
        if drop_to is not None:
            gid = int(cfg.get("gid", drop_to))
            os.setgroups([])
            os.setresgid(gid, gid, gid)
            os.setresuid(drop_to, drop_to, drop_to)
        with contextlib.suppress(Refused):
            prctl(PR_SET_NO_NEW_PRIVS, 1)
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        os.umask(0o022)
        os.chdir(cwd)
        env = dict(cfg.get("env", {}))
        if cfg.get("home"):
            env["HOME"] = env["TMPDIR"] = home
        # The harness's own descriptors for the program (a result pipe, say)
        # become 3, 4, ... in order; everything else above 2 is closed.
        extra = [int(fd) for fd in cfg.get("extra_fds", [])]
        first = 3 + len(extra)
        if extra:
            high = max([first, *extra, status_fd]) + 1
            if status_fd >= 0:
                moved_status = fcntl.fcntl(status_fd, fcntl.F_DUPFD_CLOEXEC, high)
                os.close(status_fd)
                status_fd = moved_status
            moved = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, high) for fd in extra]
            for i, fd in enumerate(moved):
                os.dup2(fd, 3 + i, inheritable=True)
                os.close(fd)
        if status_fd >= 0:
            fcntl.fcntl(status_fd, fcntl.F_SETFD, fcntl.FD_CLOEXEC)
            os.closerange(first, status_fd)
            os.closerange(status_fd + 1, 65536)
        else:
            os.closerange(first, 65536)
        argv = cfg["argv"]
        os.execve(argv[0], argv, env)
    except (OSError, Refused, ValueError) as exc:
        text = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        write_status(status_fd, {"exec_error": text})
    os._exit(127)


def drop_capabilities() -> None:
    """Empty the bounding set (so exec grants nothing back) and every capability set."""
    try:
        with open("/proc/sys/kernel/cap_last_cap") as f:
            last = int(f.read())
    except (OSError, ValueError):
        last = 40
    for cap in range(last + 1):
        _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                    ("inheritable", ctypes.c_uint32)]  # fmt: skip

    header = Header(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3
    data = (Data * 2)()
    _check(_libc.capset(ctypes.byref(header), data), "capset")


# --------------------------------------------------------------------------- the view


def build_view(fs: Config, cfg: Config) -> None:
    """The private filesystem view, then pivot into it (the old root is detached)."""
    root = fs["root"]
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=16m")
    uid = cfg.get("uid")
    owner = f",uid={uid},gid={cfg.get('gid', uid)}" if uid is not None else ""
    # The working directory: a private, size-limited tmpfs owned by the program
    # (first: the program's own files may live under /tmp and are bound on top).
    os.makedirs(root + "/tmp", exist_ok=True)
    size = int(fs["tmp_size"])
    files = f",nr_inodes={inodes(size)}"
    opts = f"mode=0700,size={size}{files}{owner}"
    mount("tmpfs", root + "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, opts)
    # Read-only binds: system directories and the program's own files.
    for src in fs.get("ro", []):
        bind(root, src, writable=False)
    for src in fs.get("rw", []):
        bind(root, src, writable=True)
    overlays(root, fs.get("overlay", []), size)
    for link, target in fs.get("symlinks", []):
        dst = root + link
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if not os.path.lexists(dst):
            os.symlink(target, dst)
    # /etc: a few files only, and a passwd that names no host user.
    etc = root + "/etc"
    os.makedirs(etc, exist_ok=True)
    for name, text in fs.get("etc_files", {}).items():
        with open(os.path.join(etc, name), "w") as f:
            f.write(text)
    # /dev: the harmless devices, a private /dev/shm, the usual links.
    dev = root + "/dev"
    os.makedirs(dev, exist_ok=True)
    for name in DEVICES:
        target = f"{dev}/{name}"
        open(target, "w").close()
        mount(f"/dev/{name}", target, None, MS_BIND)
    os.makedirs(dev + "/shm", exist_ok=True)
    mount("tmpfs", dev + "/shm", "tmpfs", MS_NOSUID | MS_NODEV, f"mode=1777,size={size}{files}")
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                         ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):  # fmt: skip
        os.symlink(target, f"{dev}/{name}")
    # Hidden paths inside exposed ones (the kit's store, the run's folder).
    for path in fs.get("hide", []):
        target = root + path
        if os.path.isdir(target) and not os.path.islink(target):
            mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV | MS_RDONLY, "mode=0555,size=4k")
        elif os.path.lexists(target) and not os.path.islink(target):
            mount("/dev/null", target, None, MS_BIND)
    os.makedirs(root + "/proc", exist_ok=True)
    mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    # Read-only root from here on.
    mount(None, root, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    os.chdir(root)
    nr = SYS_PIVOT_ROOT.get(os.uname().machine)
    if nr is not None:
        _check(_libc.syscall(nr, b".", b"."), "pivot_root")
        _check(_libc.umount2(b".", MNT_DETACH), "umount old root")
        os.chdir("/")
    else:
        os.chroot(".")
        os.chdir("/")


def inodes(size: int) -> int:
    """The files a bounded tmpfs may hold: one per 4 KiB of its size, at least 16,384
    (the kernel's default, half the machine's pages, lets a program fill memory with
    empty files)."""
    return max(16384, size // 4096)


def overlays(root: str, paths: list[str], size: int) -> None:
    """Show each host folder of ``paths`` writable at its own path, through an
    overlay whose changes go to one tmpfs of ``size`` bytes: the program writes, the
    host folder is never written, and what it wrote is gone with the sandbox."""
    if not paths:
        return
    stage = root + "/.redletter-overlay"
    os.makedirs(stage)
    opts = f"mode=0700,size={size},nr_inodes={inodes(size)}"
    mount("tmpfs", stage, "tmpfs", MS_NOSUID | MS_NODEV, opts)
    for i, src in enumerate(paths):
        upper, work = f"{stage}/u{i}", f"{stage}/w{i}"
        os.mkdir(upper)
        os.mkdir(work, 0o700)
        # The merged folder shows the upper folder's owner and mode: the host's.
        st = os.stat(src)
        os.chown(upper, st.st_uid, st.st_gid)
        os.chmod(upper, stat.S_IMODE(st.st_mode))
        dst = root + src
        os.makedirs(dst, exist_ok=True)
        opts = ",".join(
            f"{key}={escape_option(value)}"
            for key, value in (("lowerdir", src), ("upperdir", upper), ("workdir", work))
        )
        mount("overlay", dst, "overlay", MS_NOSUID | MS_NODEV, opts)
    # The overlays keep their upper layer alive; the program need not see it.
    _check(_libc.umount2(stage.encode(), MNT_DETACH), f"umount {stage}")
    os.rmdir(stage)


def escape_option(path: str) -> str:
    """A path as a value of overlayfs's mount options (``,`` ``:`` and ``\\`` escaped)."""
    return path.replace("\\", "\\\\").replace(",", "\\,").replace(":", "\\:")


def bind(root: str, src: str, *, writable: bool) -> None:
    """Bind ``src`` at the same path under ``root`` (read-only unless ``writable``)."""
    if not os.path.exists(src) or os.path.islink(src):
        return
    dst = root + src
    if os.path.isdir(src):
        os.makedirs(dst, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if not os.path.exists(dst):
            open(dst, "w").close()
    mount(src, dst, None, MS_BIND | MS_REC)
    flags = MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV | (0 if writable else MS_RDONLY)
    mount(None, dst, None, flags)


CONFIG_FD_ENV = "REDLETTER_SANDBOX_CONFIG_FD"  #: CONFIG_FD_ENV of sandbox.py


def read_config() -> Config:
    """The configuration, from the descriptor the kit passed (closed after)."""
    fd = int(os.environ.pop(CONFIG_FD_ENV, "-1"))
    if fd < 0:
        sys.exit(f"sandbox_init: no configuration (${CONFIG_FD_ENV} is not set)")
    data = b""
    try:
        while True:
            chunk = os.pread(fd, 1 << 16, len(data))
            if not chunk:
                break
            data += chunk
    finally:
        os.close(fd)
    cfg: Config = json.loads(data)
    return cfg


def main() -> None:
    outer(read_config())


if __name__ == "__main__":
    main()
