"""Running a node under test as a child process, safely.

A :class:`NodeProcess` runs one program (one node, or one process hosting every
node) the way an untrusted implementation must be run:

- without a shell (``argv`` is executed directly), with a minimal environment,
  in the run's :class:`~redletter.conformance.sandbox.Sandbox` (a fresh uid, a
  private read-only view of the files it needs and its own ``/tmp``, no
  network, its own PID namespace whose init forwards signals and takes every
  child along, the run's cgroup for memory and processes, resource limits, and
  a life tied to the harness's): see :mod:`redletter.conformance.sandbox` and
  ``docs/security.md``; :attr:`NodeProcess.sandbox_report` says which layers
  are active here and why not;
- in a new session, killed as a whole at the end: SIGTERM (forwarded by the
  sandbox's init to the program), then SIGKILL after a grace period for a node
  that ignores SIGTERM; :meth:`NodeProcess.close` with ``urgent`` (Ctrl-C) kills
  at once;
- its stdout is read line by line by a reader thread into a queue, with a
  maximum line length and a maximum total volume (a flood is cut off); its
  stderr is read by another thread into its log file, up to a size (the rest is
  counted and dropped), so the node never holds a descriptor of the kit's files;
- every request has a timeout; every failure raises a typed
  :class:`NodeError` whose message names the node, what it was asked, what
  went wrong, its exit status, the last lines of its stdout and stderr (control
  characters escaped), and the path of its full log.
"""

from __future__ import annotations

import contextlib
import os
import queue
import select
import shutil
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import redletter.stopping as stopping
from redletter.conformance.protocol import Envelope, Request, decode, encode
from redletter.conformance.sandbox import Sandbox, SandboxPolicy, SandboxReport, describe_bytes

__all__ = [
    "Limits",
    "NodeCrashed",
    "NodeError",
    "NodeErrorReply",
    "NodeOutOfMemory",
    "NodeOutputLimit",
    "NodeProcess",
    "NodeProtocolError",
    "NodeTimeout",
    "describe_status",
    "escape_terminal",
    "is_urgent",
    "quote_node_text",
]
from redletter.errors import Exit, InputError, RedletterError, escape_terminal

TAIL_WIDTH: Final = 200  #: characters of one quoted stdout/stderr line


@dataclass(frozen=True)
class Limits:
    """Timeouts and output limits of a node process (its resource limits are the
    sandbox's: :class:`~redletter.conformance.sandbox.SandboxPolicy`)."""

    request_timeout: float = 10.0  #: seconds to wait for one reply
    grace: float = 1.0  #: seconds between SIGTERM and SIGKILL (and for a polite exit)
    max_line: int = 1 << 20  #: the longest stdout line accepted, in bytes
    max_output: int = 256 << 20  #: the most stdout accepted in all, in bytes
    max_log: int = 64 << 20  #: the most stderr kept in the log file, in bytes
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


class NodeOutOfMemory(NodeError):
    """The kernel's OOM killer stopped the node (or a process of its run): it used
    more memory than the sandbox allows.  A verdict, whatever the harness was
    waiting for when it noticed (a reply, or the node's exit)."""

    code = "RL-NODE-MEMORY"


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
    """One running node program.  Use as a context manager, or call :meth:`close`.

    The node runs in ``sandbox`` (shared by the nodes of one run) or, without
    one, in a sandbox of its own with ``policy`` (``isolate=False``: the
    sandbox's limits and lifetime only).  ``hide`` are paths the node must never
    see (the run's folder and the store).
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        name: str,
        log_dir: Path,
        limits: Limits | None = None,
        isolate: bool = True,
        env: Mapping[str, str] | None = None,
        sandbox: Sandbox | None = None,
        policy: SandboxPolicy | None = None,
        hide: Sequence[Path] = (),
        writable: Sequence[Path] = (),
    ) -> None:
        if not argv:
            raise InputError("the node command is empty", code="RL-INPUT-NODE-CMD")
        self.name = name
        self.limits = limits if limits is not None else Limits()
        self.argv = _resolve_argv(argv)
        log_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = (log_dir / f"{name}.log").resolve()
        self._owns_sandbox = sandbox is None
        if sandbox is None:
            pol = policy if policy is not None else SandboxPolicy()
            sandbox = Sandbox(pol if isolate else SandboxPolicy.off(), name=name)
        self.sandbox = sandbox
        environ = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "PYTHONUNBUFFERED": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        environ.update(env or {})
        self._stdout_tail: deque[str] = deque(maxlen=self.limits.tail_lines)
        self._stderr_tail = bytearray()
        self._stderr_dropped = 0
        self._queue: queue.Queue[tuple[str, str]] = queue.Queue()
        self._sigterm_ignored: float | None = None
        self._closed = False
        self._failed: NodeError | None = None
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - closed by the stderr reader
        hidden = (log_dir.resolve(), *hide)
        try:
            launch = sandbox.launch(
                self.argv, env=environ, hide=hidden, writable=writable, home=True
            )
            self.workdir = launch.workdir
            try:
                self._proc = subprocess.Popen(
                    launch.argv,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    pass_fds=launch.pass_fds,
                    env=launch.env,
                    start_new_session=True,
                    close_fds=True,
                    bufsize=0,
                )
            except OSError as exc:
                launch.abandon()
                raise InputError(
                    f"cannot start the sandbox: {exc.strerror}", code="RL-INPUT-NODE-CMD"
                ) from None
            sandbox.adopt(self._proc)
            try:
                launch.started()
            except BaseException:
                self._kill_now()
                raise
        except InputError as exc:
            self._log.close()
            if self._owns_sandbox:
                sandbox.close()
            raise InputError(f"cannot run node {name}: {exc.message}", code=exc.code) from None
        except BaseException:
            self._log.close()
            if self._owns_sandbox:
                sandbox.close()
            raise
        assert self._proc.stdin is not None and self._proc.stdout is not None
        assert self._proc.stderr is not None
        self._stdin_fd = self._proc.stdin.fileno()
        os.set_blocking(self._stdin_fd, False)
        self._reader = threading.Thread(
            target=self._read_stdout,
            args=(self._proc.stdout.fileno(),),
            name=f"redletter-stdout-{name}",
            daemon=True,
        )
        self._reader.start()
        self._err_reader = threading.Thread(
            target=self._read_stderr,
            args=(self._proc.stderr.fileno(),),
            name=f"redletter-stderr-{name}",
            daemon=True,
        )
        self._err_reader.start()

    @property
    def sandbox_report(self) -> SandboxReport:
        """Which layers of the sandbox are active for this node, and why not."""
        return self.sandbox.report()

    @property
    def isolation(self) -> str:
        """The sandbox in one line (see :attr:`sandbox_report`)."""
        return self.sandbox.report().summary()

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
                    tail.append(quote_node_text(text))
                    put((_LINE, text))
                put((_EOF, ""))
                return
            total += len(chunk)
            if total > limits.max_output:
                put((_FLOOD, ""))
                return
            if not buf.strip() and not chunk.strip():
                # Only blank output so far: nothing to split (a flood of blank
                # lines costs the reader nothing but this check).
                buf = chunk[chunk.rfind(b"\n") + 1 :] if b"\n" in chunk else buf + chunk
                if len(buf) > limits.max_line:
                    tail.append(self._clip_long(buf))
                    put((_TOO_LONG, ""))
                    return
                continue
            buf += chunk
            if b"\n" in chunk:
                *lines, buf = buf.split(b"\n")
                for raw in lines:
                    if len(raw) > limits.max_line:
                        tail.append(self._clip_long(raw))
                        put((_TOO_LONG, ""))
                        return
                    if raw.strip():
                        text = raw.decode("utf-8", "replace")
                        tail.append(quote_node_text(text))
                        put((_LINE, text))
            if len(buf) > limits.max_line:
                tail.append(self._clip_long(buf))
                put((_TOO_LONG, ""))
                return

    def _read_stderr(self, fd: int) -> None:
        """Copy the node's stderr into its log (up to ``max_log`` bytes; the rest
        is counted), keeping the last 64 KiB for the error messages."""
        written = 0
        limit = self.limits.max_log
        try:
            while True:
                try:
                    chunk = os.read(fd, 1 << 16)
                except OSError:
                    chunk = b""
                if not chunk:
                    break
                self._stderr_tail += chunk
                if len(self._stderr_tail) > 1 << 16:
                    del self._stderr_tail[: len(self._stderr_tail) - (1 << 16)]
                room = limit - written
                if room > 0:
                    with contextlib.suppress(OSError):
                        self._log.write(chunk[:room])
                        self._log.flush()
                    written += min(room, len(chunk))
                self._stderr_dropped += max(0, len(chunk) - max(room, 0))
            if self._stderr_dropped:
                with contextlib.suppress(OSError):
                    self._log.write(
                        f"\n[redletter: {self._stderr_dropped} more bytes of stderr dropped:"
                        f" the log keeps {limit} bytes]\n".encode()
                    )
        finally:
            with contextlib.suppress(OSError):
                self._log.close()

    def _clip_long(self, data: bytes) -> str:
        head = data[:TAIL_WIDTH].decode("utf-8", "replace")
        return f"{head}... (more than {self.limits.max_line} bytes)"

    # -- requests ------------------------------------------------------------

    @property
    def pid(self) -> int:
        """The process id of the child (the sandbox's outer process)."""
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
                    NodeProtocolError,
                    f"node {self.name} answered {what} with {_strip_prefix(exc)}",
                ) from None
            rbody = reply.body
            if getattr(rbody, "in_reply_to", None) != body.msg_id:
                raise self._fail(
                    NodeProtocolError,
                    f"node {self.name} answered {what} with {_a(rbody.type)} message that is "
                    f"not its reply (in_reply_to must be {body.msg_id}): {quote_node_text(line)}",
                )
            return reply

    def _write(self, data: bytes, what: str, deadline: float, limit: float) -> None:
        view = memoryview(data)
        while view:
            try:
                n = os.write(self._stdin_fd, view)
            except BlockingIOError:
                stopping.check()
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
            stopping.check()  # a Ctrl-C whose KeyboardInterrupt was lost: within 0.1 s
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._timeout(what, limit)
            try:
                kind, text = self._queue.get(timeout=min(remaining, 0.1))
            except queue.Empty:
                # Without a PID namespace a child the node forked may hold stdout
                # open after the node exited, so EOF may never come: watch the
                # process itself.
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

    def finish(self) -> str | NodeError | None:
        """End the node after its last reply: close its stdin and give it the grace
        period to exit.  Returns the first line it wrote after its last reply; else,
        when it ended on its own other than as the protocol says (status 0), the
        error to raise (its status or signal, the OOM killer, its last lines); else
        ``None``.  A node still running after the grace period is stopped and not
        blamed (a loaded machine may be slow).  The node is closed afterwards."""
        if self._failed is not None or self._closed:
            self.close()
            return None
        with contextlib.suppress(OSError):
            os.close(self._stdin_fd)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(timeout=self.limits.grace)
        ended = self._proc.poll()  # before the harness stops it: None if still running
        self._terminate()
        self._reader.join(timeout=self.limits.grace)
        extra: str | None = None
        while True:
            try:
                kind, text = self._queue.get_nowait()
            except queue.Empty:
                break
            if kind == _LINE:
                extra = text
                break
            if kind in (_TOO_LONG, _FLOOD):
                extra = "(" + ("a line too long" if kind == _TOO_LONG else "a flood") + ")"
                break
        error: NodeError | None = None
        if extra is None and ended is not None and ended != 0:
            error = self._fail(
                NodeCrashed,
                f"node {self.name} {describe_status(ended)} at the end of its input; a node"
                " exits with status 0 when its input ends (docs/protocol.md, Lifecycle)",
            )
        self.close()
        return extra if extra is not None else error

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
        self._err_reader.join(timeout=self.limits.grace)
        status = self._proc.returncode
        how = describe_status(status)
        if self._sigterm_ignored is not None:
            how += f" after ignoring SIGTERM for {self._sigterm_ignored:g} s"
        if self.sandbox.oom_killed():
            # Whatever the harness noticed (no reply, a timeout, an exit), the
            # memory limit is why: a verdict about the node, never unknown.
            limit = self.sandbox.policy.memory
            shown = f"{limit >> 20} MiB" if limit is not None else "its"
            allows = f"--memory {describe_bytes(limit)}" if limit is not None else "--memory"
            if status == -signal.SIGKILL:
                who, used = f"node {self.name}", "it used"
                how += f" (the run reached its memory limit of {shown}: the kernel's OOM killer)"
            else:
                who = f"a process of the run of node {self.name}"
                used = "the run's processes used"
            cls = NodeOutOfMemory
            what = (
                f"the kernel's OOM killer stopped {who}: {used} more memory than the sandbox"
                f" allows ({allows}, for every node of the run together); {what}"
            )
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
        """The last lines the node wrote on stderr."""
        data = bytes(self._stderr_tail)
        lines = [ln for ln in data.decode("utf-8", "replace").splitlines() if ln.strip()]
        return tuple(quote_node_text(ln) for ln in lines[-self.limits.tail_lines :])

    # -- ending --------------------------------------------------------------

    def _terminate(self) -> None:
        """SIGTERM (the sandbox's init forwards it to the node), then SIGKILL to the
        whole group after the grace period."""
        proc = self._proc
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=self.limits.grace)
            except subprocess.TimeoutExpired:
                self._sigterm_ignored = self.limits.grace
                self._kill_now()
        # Whatever the node left behind in its group dies too.
        self._signal_group(signal.SIGKILL)

    def _kill_now(self) -> None:
        self._signal_group(signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(self._proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(timeout=5)

    def _signal_group(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._proc.pid, sig)

    def close(self, *, urgent: bool = False) -> int | None:
        """End the node: close its stdin, give it the grace period to exit, then
        kill it (``urgent``, e.g. on Ctrl-C: at once); close the sandbox if it is
        the node's own.  Returns the exit status (negative: the signal that
        killed it).  Idempotent."""
        if self._closed:
            return self._proc.returncode
        self._closed = True
        if urgent:
            self._kill_now()
        elif self._proc.poll() is None:
            with contextlib.suppress(OSError):
                os.close(self._stdin_fd)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=self.limits.grace)
        self._terminate()
        for stream in (self._proc.stdin, self._proc.stdout):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()
        self._reader.join(timeout=0 if urgent else self.limits.grace)
        self._err_reader.join(timeout=0 if urgent else self.limits.grace)
        if self._owns_sandbox:
            self.sandbox.close()
        return self._proc.returncode

    def __enter__(self) -> NodeProcess:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        self.close(urgent=is_urgent(exc_type))


def is_urgent(exc_type: type[BaseException] | None) -> bool:
    """Whether a node left with ``exc_type`` is killed at once: on Ctrl-C and the
    like, and whatever the way out once a stop was asked for (the interruption may
    have been lost, or have broken what it landed in)."""
    return stopping.requested() or (exc_type is not None and not issubclass(exc_type, Exception))


def _resolve_argv(argv: Sequence[str]) -> tuple[str, ...]:
    """Make the program and any argument naming an existing file absolute, since
    the node runs in its own temporary directory, through the real directories: the
    sandbox shows a node real paths, never a symlink on the way (a checkout whose
    ``.venv`` is a link elsewhere).  The last name is kept as given, so a venv's
    ``python`` (a link to its base interpreter) still starts in its venv."""
    first = argv[0]
    if os.sep not in first:
        found = shutil.which(first)
        program = found if found is not None else first
    else:
        program = _real_dir(first)
    rest = [_real_dir(a) if not a.startswith("-") and Path(a).exists() else a for a in argv[1:]]
    return (program, *rest)


def _real_dir(path: str) -> str:
    """``path`` made absolute, its directory's symlinks resolved, its name kept."""
    full = os.path.abspath(path)
    return os.path.join(os.path.realpath(os.path.dirname(full)), os.path.basename(full))


def _a(word: str) -> str:
    """``an init_ok``, ``a deliver_ok``."""
    return ("an " if word[:1] in "aeiou" else "a ") + word


def quote_node_text(text: str) -> str:
    """Text a node gave (a line of its output, an error reply's text), as the kit
    quotes it: on one line (newlines and every control character escaped, so it can
    neither drive the terminal nor start a line of its own, e.g. a fake verdict)
    and at most :data:`TAIL_WIDTH` characters."""
    text = escape_terminal(text.rstrip("\r\n"), newlines=True)
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
