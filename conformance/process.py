"""Running a node under test as a child process, safely.

A :class:`NodeProcess` runs one program (one node, or one process hosting every
node) the way an untrusted implementation must be run:

- without a shell (``argv`` is executed directly), in its own fresh temporary
  directory as working directory, with a minimal environment;
- in a new session, hence its own process group, so the whole group (children
  it forked included) is killed at the end: SIGTERM, then SIGKILL after a grace
  period for a node that ignores SIGTERM;
- under resource limits set in the child before ``exec`` (``preexec_fn``):
  CPU seconds, address space, number of processes, size of files written;
- without network where the OS allows: when ``unshare --net --pid --fork
  --kill-child`` works here (root, or unprivileged user namespaces with
  ``--map-root-user``), the node runs in a new network namespace (only a
  loopback device, down) and a new PID namespace, so even a child that escaped
  the process group with ``setsid`` dies with the node.  Where unshare is
  missing or not permitted the node runs with the host's network, and
  :attr:`NodeProcess.isolation` says so;
- its stdout is read line by line by a reader thread into a queue, with a
  maximum line length and a maximum total volume (a flood is cut off); its
  stderr goes to its log file;
- every request has a timeout; every failure raises a typed
  :class:`NodeError` whose message names the node, what it was asked, what
  went wrong, its exit status, the last lines of its stdout and stderr, and the
  path of its full log.
"""

from __future__ import annotations

import contextlib
import os
import queue
import resource
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Final

from redletter.conformance.protocol import Envelope, Request, decode, encode
from redletter.errors import Exit, InputError, RedletterError

TAIL_WIDTH: Final = 200  #: characters of one quoted stdout/stderr line


@dataclass(frozen=True)
class Limits:
    """Resource limits and timeouts for a node process."""

    request_timeout: float = 10.0  #: seconds to wait for one reply
    grace: float = 1.0  #: seconds between SIGTERM and SIGKILL (and for a polite exit)
    cpu_seconds: int = 300  #: RLIMIT_CPU (SIGXCPU, then SIGKILL one second later)
    address_space: int | None = 4 << 30  #: RLIMIT_AS in bytes (None: unlimited)
    #: RLIMIT_NPROC: counts every process of the user and is not enforced for
    #: root, so it is a backstop; the process group and PID namespace do the work.
    processes: int | None = 4096
    file_size: int = 256 << 20  #: RLIMIT_FSIZE: the largest file (the log included)
    max_line: int = 1 << 20  #: the longest stdout line accepted, in bytes
    max_output: int = 256 << 20  #: the most stdout accepted in all, in bytes
    tail_lines: int = 10  #: how many last lines of stdout/stderr an error quotes


class NodeError(RedletterError):
    """A node under test failed: crashed, hung, wrote garbage, flooded, or refused.

    A node failing is a verdict about the implementation (exit 1), except a
    timeout, which the kit cannot tell from slowness (exit 2, unknown).
    """

    code = "RL-NODE"
    exit_code = Exit.FAIL

    def __init__(
        self,
        message: str,
        *,
        node: str,
        exit_status: int | None = None,
        stdout_tail: Sequence[str] = (),
        stderr_tail: Sequence[str] = (),
        log_path: Path | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message, code=code)
        self.node = node
        self.exit_status = exit_status
        self.stdout_tail = tuple(stdout_tail)
        self.stderr_tail = tuple(stderr_tail)
        self.log_path = log_path


class NodeCrashed(NodeError):
    """The node exited (or closed its stdout) before replying."""

    code = "RL-NODE-CRASH"


class NodeTimeout(NodeError):
    """The node did not reply within the request timeout."""

    code = "RL-NODE-TIMEOUT"
    exit_code = Exit.UNKNOWN


class NodeProtocolError(NodeError):
    """The node wrote something that is not the expected reply."""

    code = "RL-NODE-PROTOCOL"


class NodeOutputLimit(NodeError):
    """The node wrote a line that is too long, or too much output in all."""

    code = "RL-NODE-FLOOD"


class NodeErrorReply(NodeError):
    """The node answered a request with an ``error`` body."""

    code = "RL-NODE-ERROR"


# --------------------------------------------------------------------------
# Isolation.
# --------------------------------------------------------------------------

_UNSHARE_ARGS: Final = ("--net", "--pid", "--fork", "--kill-child")


@lru_cache(maxsize=1)
def isolation_prefix() -> tuple[str, ...]:
    """The argv prefix that runs a program without network, or ``()``.

    Probes ``unshare`` once: as is (root), then with ``--map-root-user``
    (unprivileged user namespaces).  Containers that forbid namespaces, and
    systems without util-linux's unshare, get ``()``: no network isolation.
    """
    exe = shutil.which("unshare")
    if exe is None:
        return ()
    for extra in ((), ("--map-root-user",)):
        prefix = (exe, *extra, *_UNSHARE_ARGS)
        try:
            done = subprocess.run(
                [*prefix, "true"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=10,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            continue
        if done.returncode == 0:
            return prefix
    return ()


def _set_limits(limits: Limits) -> None:
    """Runs in the child between fork and exec: apply the resource limits."""
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1))
    if limits.address_space is not None:
        resource.setrlimit(resource.RLIMIT_AS, (limits.address_space, limits.address_space))
    if limits.processes is not None:
        resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes, limits.processes))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_size, limits.file_size))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)


def describe_status(returncode: int | None) -> str:
    """``exited with status 3`` / ``killed by SIGKILL`` / ``still running``."""
    if returncode is None:
        return "still running"
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exited with status {returncode}"


# --------------------------------------------------------------------------
# The process.
# --------------------------------------------------------------------------

_LINE, _EOF, _TOO_LONG, _FLOOD = "line", "eof", "too-long", "flood"


class NodeProcess:
    """One running node program.  Use as a context manager, or call :meth:`close`."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        name: str,
        log_dir: Path,
        limits: Limits | None = None,
        isolate: bool = True,
        env: Mapping[str, str] | None = None,
    ) -> None:
        if not argv:
            raise InputError("the node command is empty", code="RL-INPUT-NODE-CMD")
        self.name = name
        self.limits = limits if limits is not None else Limits()
        self.argv = _resolve_argv(argv)
        log_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = (log_dir / f"{name}.log").resolve()
        self.workdir = Path(tempfile.mkdtemp(prefix=f"redletter-{name}-"))
        prefix = isolation_prefix() if isolate else ()
        #: how the node is isolated from the network, in words
        self.isolation = (
            "no network (unshare: new network and PID namespaces)"
            if prefix
            else "host network (unshare unavailable or not permitted here)"
            if isolate
            else "host network (isolation turned off)"
        )
        environ = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.workdir),
            "TMPDIR": str(self.workdir),
            "LANG": "C.UTF-8",
            "PYTHONUNBUFFERED": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        environ.update(env or {})
        self._stdout_tail: deque[str] = deque(maxlen=self.limits.tail_lines)
        self._queue: queue.Queue[tuple[str, str]] = queue.Queue()
        self._sigterm_ignored: float | None = None
        self._closed = False
        self._failed: NodeError | None = None
        limits_ = self.limits
        with open(self.log_path, "wb") as log:
            try:
                self._proc = subprocess.Popen(
                    [*prefix, *self.argv],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=log,
                    cwd=self.workdir,
                    env=environ,
                    start_new_session=True,
                    preexec_fn=lambda: _set_limits(limits_),
                    close_fds=True,
                    bufsize=0,
                )
            except OSError as exc:
                shutil.rmtree(self.workdir, ignore_errors=True)
                raise InputError(
                    f"cannot run node {name}: {' '.join(self.argv)}: {exc.strerror}",
                    code="RL-INPUT-NODE-CMD",
                ) from None
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._stdin_fd = self._proc.stdin.fileno()
        os.set_blocking(self._stdin_fd, False)
        self._reader = threading.Thread(
            target=self._read_stdout,
            args=(self._proc.stdout.fileno(),),
            name=f"redletter-stdout-{name}",
            daemon=True,
        )
        self._reader.start()

    # -- reading -------------------------------------------------------------

    def _read_stdout(self, fd: int) -> None:
        limits = self.limits
        put = self._queue.put
        tail = self._stdout_tail
        buf = b""
        total = 0
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                if buf.strip():
                    text = buf.decode("utf-8", "replace")
                    tail.append(_clip(text))
                    put((_LINE, text))
                put((_EOF, ""))
                return
            total += len(chunk)
            if total > limits.max_output:
                put((_FLOOD, ""))
                return
            buf += chunk
            start = 0
            while True:
                end = buf.find(b"\n", start)
                if end < 0:
                    break
                if end - start > limits.max_line:
                    tail.append(self._clip_long(buf[start:end]))
                    put((_TOO_LONG, ""))
                    return
                text = buf[start:end].decode("utf-8", "replace")
                start = end + 1
                if text.strip():
                    tail.append(_clip(text))
                    put((_LINE, text))
            buf = buf[start:]
            if len(buf) > limits.max_line:
                tail.append(self._clip_long(buf))
                put((_TOO_LONG, ""))
                return

    def _clip_long(self, data: bytes) -> str:
        head = data[:TAIL_WIDTH].decode("utf-8", "replace")
        return f"{head}... (more than {self.limits.max_line} bytes)"

    # -- requests ------------------------------------------------------------

    @property
    def pid(self) -> int:
        """The process id of the child (of unshare, when isolated)."""
        return self._proc.pid

    @property
    def returncode(self) -> int | None:
        """The exit status once the process ended (negative: killed by that signal)."""
        return self._proc.poll()

    def request(self, env: Envelope, *, timeout: float | None = None) -> Envelope:
        """Send one request and return the node's validated reply envelope.

        The reply must be a valid protocol line whose ``in_reply_to`` is the
        request's ``msg_id``.  Any failure kills the node and raises a
        :class:`NodeError` subclass; after one, every later request re-raises it.
        """
        if self._failed is not None:
            raise self._failed
        body = env.body
        assert isinstance(body, Request)
        what = f"{body.type} (msg_id {body.msg_id})"
        limit = self.limits.request_timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        self._write((encode(env) + "\n").encode(), what, deadline, limit)
        while True:
            line = self._next_line(what, deadline, limit)
            try:
                reply = decode(line, source=f"node {self.name}")
            except InputError as exc:
                raise self._fail(
                    NodeProtocolError, f"node {self.name} answered {what} with {_strip_prefix(exc)}"
                ) from None
            rbody = reply.body
            if getattr(rbody, "in_reply_to", None) != body.msg_id:
                raise self._fail(
                    NodeProtocolError,
                    f"node {self.name} answered {what} with a {rbody.type} message that is "
                    f"not its reply (in_reply_to must be {body.msg_id}): {_clip(line)}",
                )
            return reply

    def _write(self, data: bytes, what: str, deadline: float, limit: float) -> None:
        view = memoryview(data)
        while view:
            try:
                n = os.write(self._stdin_fd, view)
            except BlockingIOError:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise self._timeout(what, limit) from None
                select.select([], [self._stdin_fd], [], min(remaining, 0.1))
                continue
            except (BrokenPipeError, OSError):
                raise self._crash(what, "while the harness sent it") from None
            view = view[n:]

    def _next_line(self, what: str, deadline: float, limit: float) -> str:
        exited_at: float | None = None
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._timeout(what, limit)
            try:
                kind, text = self._queue.get(timeout=min(remaining, 0.1))
            except queue.Empty:
                # A child the node forked may hold stdout open after the node
                # exited, so EOF may never come: watch the process itself.
                if self._proc.poll() is not None:
                    if exited_at is None:
                        exited_at = time.monotonic()
                    elif time.monotonic() - exited_at > 0.3:
                        raise self._crash(what, "before replying") from None
                continue
            if kind == _LINE:
                return text
            if kind == _EOF:
                raise self._crash(what, "before replying")
            if kind == _TOO_LONG:
                raise self._fail(
                    NodeOutputLimit,
                    f"node {self.name} wrote a line longer than {self.limits.max_line} bytes "
                    f"on stdout while the harness waited for the reply to {what}",
                )
            raise self._fail(
                NodeOutputLimit,
                f"node {self.name} wrote more than {self.limits.max_output} bytes on stdout "
                f"in all (flood) while the harness waited for the reply to {what}",
            )

    # -- failures ------------------------------------------------------------

    def _crash(self, what: str, when: str) -> NodeError:
        try:
            self._proc.wait(timeout=self.limits.grace)
        except subprocess.TimeoutExpired:
            return self._fail(NodeCrashed, f"node {self.name} closed its stdout {when} to {what}")
        return self._fail(
            NodeCrashed,
            f"node {self.name} {describe_status(self._proc.returncode)} {when} to {what}",
        )

    def _timeout(self, what: str, limit: float) -> NodeError:
        return self._fail(
            NodeTimeout,
            f"node {self.name} did not reply to {what} within {limit:g} s",
        )

    def failure(self, cls: type[NodeError], what: str) -> NodeError:
        """Kill the node and return the error to raise: ``what`` followed by the
        command, the exit status, the last lines of stdout and stderr, the log."""
        return self._fail(cls, what)

    def _fail(self, cls: type[NodeError], what: str) -> NodeError:
        self._terminate()
        status = self._proc.returncode
        how = describe_status(status)
        if self._sigterm_ignored is not None:
            how += f" after ignoring SIGTERM for {self._sigterm_ignored:g} s"
        stdout_tail = tuple(self._stdout_tail)
        stderr_tail = self.stderr_tail()
        message = "\n".join(
            [
                f"{what}.",
                f"  command: {' '.join(self.argv)}",
                f"  exit: {how}",
                *_tail_block("stdout", stdout_tail),
                *_tail_block("stderr", stderr_tail),
                f"  full log (stderr): {self.log_path}",
            ]
        )
        self._failed = cls(
            message,
            node=self.name,
            exit_status=status,
            stdout_tail=stdout_tail,
            stderr_tail=stderr_tail,
            log_path=self.log_path,
        )
        return self._failed

    def stderr_tail(self) -> tuple[str, ...]:
        """The last lines of the node's log (its stderr)."""
        try:
            with open(self.log_path, "rb") as f:
                f.seek(0, os.SEEK_END)
                size = f.tell()
                f.seek(max(0, size - (1 << 16)))
                data = f.read()
        except OSError:
            return ()
        lines = [ln for ln in data.decode("utf-8", "replace").splitlines() if ln.strip()]
        return tuple(_clip(ln) for ln in lines[-self.limits.tail_lines :])

    # -- ending --------------------------------------------------------------

    def _terminate(self) -> None:
        """Kill the whole process group: SIGTERM, then SIGKILL after the grace period."""
        proc = self._proc
        if proc.poll() is None:
            self._signal_group(signal.SIGTERM)
            try:
                proc.wait(timeout=self.limits.grace)
            except subprocess.TimeoutExpired:
                self._sigterm_ignored = self.limits.grace
                self._signal_group(signal.SIGKILL)
                proc.wait()
        # Whatever the node left behind in its group (forked children) dies too.
        self._signal_group(signal.SIGKILL)

    def _signal_group(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._proc.pid, sig)

    def close(self) -> int | None:
        """End the node: close its stdin, give it the grace period to exit, then
        kill its process group; remove its working directory.  Returns the exit
        status (negative: the signal that killed it).  Idempotent."""
        if self._closed:
            return self._proc.returncode
        self._closed = True
        if self._proc.poll() is None:
            with contextlib.suppress(OSError):
                os.close(self._stdin_fd)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=self.limits.grace)
        self._terminate()
        with contextlib.suppress(OSError):
            if self._proc.stdin is not None:
                self._proc.stdin.close()
        self._reader.join(timeout=self.limits.grace)
        with contextlib.suppress(OSError):
            if self._proc.stdout is not None:
                self._proc.stdout.close()
        shutil.rmtree(self.workdir, ignore_errors=True)
        return self._proc.returncode

    def __enter__(self) -> NodeProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _resolve_argv(argv: Sequence[str]) -> tuple[str, ...]:
    """Make the program and any argument naming an existing file absolute, since
    the node runs in its own temporary directory."""
    first = argv[0]
    if os.sep not in first:
        found = shutil.which(first)
        program = found if found is not None else first
    else:
        program = os.path.abspath(first)
    rest = [
        os.path.abspath(a) if not a.startswith("-") and Path(a).exists() else a for a in argv[1:]
    ]
    return (program, *rest)


def _clip(text: str) -> str:
    text = text.rstrip("\r\n")
    return text if len(text) <= TAIL_WIDTH else text[:TAIL_WIDTH] + f"... ({len(text)} characters)"


def _strip_prefix(exc: InputError) -> str:
    """``node p1: bad protocol line: ...`` -> ``a bad protocol line: ...``."""
    text = exc.message
    marker = "bad protocol line: "
    i = text.find(marker)
    return "a " + text[i:] if i >= 0 else text


def _tail_block(stream: str, lines: Sequence[str]) -> list[str]:
    if not lines:
        return [f"  last lines of {stream}: (none)"]
    return [f"  last lines of {stream}:", *(f"    | {ln}" for ln in lines)]
