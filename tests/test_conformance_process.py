"""The node process: every failure gives a typed error with its exit status, the
last lines of its stdout and stderr and the path of its log, within the timeouts.

Messages are asserted word for word, with the node in the sandbox (its init
forwards signals and reproduces the program's exit status, so the messages are
the same as without one).  tests/test_hostile.py judges the hostile nodes
through the whole harness.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from redletter.conformance import protocol as p
from redletter.conformance.process import (
    Limits,
    NodeCrashed,
    NodeError,
    NodeOutputLimit,
    NodeProcess,
    NodeProtocolError,
    NodeTimeout,
    describe_status,
)
from redletter.conformance.sandbox import INIT_SCRIPT, Sandbox, SandboxPolicy
from redletter.errors import Exit, InputError

HOSTILE = Path(__file__).resolve().parent / "data" / "conformance" / "hostile"
PY = os.path.abspath(sys.executable)
#: A node that is to reply, crash or write garbage gets all the time the machine needs
#: (a timeout here would be the scheduler's verdict, not the node's: Python starting
#: under load), and time to die of SIGTERM before SIGKILL.
PATIENT = Limits(request_timeout=60, grace=10)
#: The timeouts themselves, tested once the node has shown it runs (:func:`_running`).
FAST = Limits(request_timeout=0.5, grace=10)
POLICY = SandboxPolicy(memory=256 << 20, processes=64)

INIT = p.Envelope(
    p.HARNESS,
    "p1",
    p.Init(1, "p1", ("p1", "p2"), (("p2", "p1"),), (("p1", "p2"),), "token", 1),
)
SEND = p.Envelope(p.HARNESS, "p1", p.AppSend(2, "p2", 1, 0))


def _node(tmp_path: Path, script: str, *args: str, limits: Limits = PATIENT) -> NodeProcess:
    return NodeProcess(
        [PY, str(HOSTILE / script), *args],
        name="p1",
        log_dir=tmp_path / "logs",
        limits=limits,
        policy=POLICY,
    )


def _running(tmp_path: Path, line: str) -> None:
    """Wait until the node's log shows ``line`` (its stderr tail has it by then): the
    timed request starts once the node runs, so what the timeout catches is the node's
    doing, not the machine's load."""
    log = tmp_path / "logs" / "p1.log"
    deadline = time.monotonic() + 60
    while not (log.is_file() and line in log.read_text(errors="replace")):
        assert time.monotonic() < deadline, f"the node never wrote {line!r} to its log"
        time.sleep(0.02)


def _expect(tmp_path: Path, script: str, first: str, exit_line: str, *tails: str) -> str:
    log = (tmp_path / "logs" / "p1.log").resolve()
    return "\n".join(
        [
            first,
            f"  command: {PY} {HOSTILE / script}",
            exit_line,
            *tails,
            f"  full log (stderr): {log}",
        ]
    )


def test_crash_mid_run(tmp_path: Path) -> None:
    with _node(tmp_path, "crash.py") as node:
        reply = node.request(INIT)
        assert reply.body == p.InitOk(1)
        with pytest.raises(NodeCrashed) as err:
            node.request(SEND)
    e = err.value
    assert e.message == _expect(
        tmp_path,
        "crash.py",
        "node p1 exited with status 7 before replying to app_send (msg_id 2).",
        "  exit: exited with status 7",
        "  last lines of stdout:",
        '    | {"src": "p1", "dest": "harness", "body": {"type": "init_ok", "in_reply_to": 1}}',
        "  last lines of stderr:",
        "    | crash: simulated crash on the second request",
    )
    assert (e.code, e.exit_code, e.exit_status) == ("RL-NODE-CRASH", Exit.FAIL, 7)
    assert e.log_path is not None and e.log_path.read_text().startswith("crash: simulated")


def test_hang_times_out(tmp_path: Path) -> None:
    with _node(tmp_path, "hang.py", limits=FAST) as node, pytest.raises(NodeTimeout) as err:
        _running(tmp_path, "hang: reading and never answering")
        node.request(INIT)
    assert err.value.message == _expect(
        tmp_path,
        "hang.py",
        "node p1 did not reply to init (msg_id 1) within 0.5 s.",
        "  exit: killed by SIGTERM",
        "  last lines of stdout: (none)",
        "  last lines of stderr:",
        "    | hang: reading and never answering",
    )
    assert (err.value.code, err.value.exit_code) == ("RL-NODE-TIMEOUT", Exit.UNKNOWN)


def test_garbage(tmp_path: Path) -> None:
    with _node(tmp_path, "garbage.py") as node, pytest.raises(NodeProtocolError) as err:
        node.request(INIT)
    assert err.value.message == _expect(
        tmp_path,
        "garbage.py",
        "node p1 answered init (msg_id 1) with a bad protocol line: not JSON "
        "(Expecting value): hello, world.",
        "  exit: killed by SIGTERM",
        "  last lines of stdout:",
        "    | hello, world",
        "  last lines of stderr:",
        "    | garbage: about to answer",
    )


def test_flood_one_endless_line(tmp_path: Path) -> None:
    limits = Limits(request_timeout=60, grace=10, max_line=65536)
    node = _node(tmp_path, "flood.py", "line", limits=limits)
    with node, pytest.raises(NodeOutputLimit) as err:
        node.request(INIT)
    assert err.value.message == _expect(
        tmp_path,
        "flood.py",
        "node p1 wrote a line longer than 65536 bytes on stdout while the harness waited "
        "for the reply to init (msg_id 1).",
        "  exit: killed by SIGTERM",
        "  last lines of stdout:",
        "    | " + "x" * 200 + "... (more than 65536 bytes)",
        "  last lines of stderr:",
        "    | flood: line",
    ).replace(f"{HOSTILE / 'flood.py'}", f"{HOSTILE / 'flood.py'} line")


def test_flood_volume(tmp_path: Path) -> None:
    limits = Limits(request_timeout=60, grace=10, max_output=1 << 20)
    node = _node(tmp_path, "flood.py", "lines", limits=limits)
    with node, pytest.raises(NodeOutputLimit) as err:
        node.request(INIT)
    assert err.value.message.splitlines()[0] == (
        "node p1 wrote more than 1048576 bytes on stdout in all (flood) while the harness "
        "waited for the reply to init (msg_id 1)."
    )
    assert err.value.code == "RL-NODE-FLOOD"


def _stopped(path: Path) -> bool:
    """The heartbeat file stops growing (the forked child is dead)."""
    for _ in range(50):
        before = path.stat().st_size
        time.sleep(0.1)
        if path.stat().st_size == before:
            return True
    return False


def test_fork_child_is_killed(tmp_path: Path) -> None:
    beats = tmp_path / "beats"
    beats.mkdir()
    beat = beats / "heartbeat"
    node = NodeProcess(
        [PY, str(HOSTILE / "fork.py"), str(beat)],
        name="p1",
        log_dir=tmp_path / "logs",
        limits=PATIENT,
        policy=POLICY,
        writable=[beats],
    )
    with node, pytest.raises(NodeCrashed) as err:
        node.request(INIT)
    first, _, exit_line, *rest = err.value.message.splitlines()
    assert first == "node p1 exited with status 3 before replying to init (msg_id 1)."
    assert exit_line == "  exit: exited with status 3"
    assert rest[:3] == [
        "  last lines of stdout: (none)",
        "  last lines of stderr:",
        "    | fork: left a child behind",
    ]
    assert _stopped(beat)


def test_memory_hog_without_a_cgroup_meets_its_address_space(tmp_path: Path) -> None:
    """Without the run's cgroup (--sandbox off) the address-space limit stops a hog:
    Python raises MemoryError and the node exits."""
    node = NodeProcess(
        [PY, str(HOSTILE / "memory.py")],
        name="p1",
        log_dir=tmp_path / "logs",
        limits=PATIENT,
        policy=SandboxPolicy(mode="off", address_space=512 << 20),
    )
    with node, pytest.raises(NodeCrashed) as err:
        node.request(INIT)
    lines = err.value.message.splitlines()
    assert lines[0] == "node p1 exited with status 1 before replying to init (msg_id 1)."
    assert lines[2] == "  exit: exited with status 1"
    assert err.value.stderr_tail[0] == "memory: allocating without bound"
    assert err.value.stderr_tail[-1] == "MemoryError"


def test_ignore_sigterm(tmp_path: Path) -> None:
    limits = Limits(request_timeout=0.5, grace=0.2)  # the 0.2 s of grace is what is tested
    with (
        _node(tmp_path, "ignore_term.py", limits=limits) as node,
        pytest.raises(NodeTimeout) as err,
    ):
        _running(tmp_path, "ignore_term: SIGTERM ignored")
        node.request(INIT)
    assert err.value.message == _expect(
        tmp_path,
        "ignore_term.py",
        "node p1 did not reply to init (msg_id 1) within 0.5 s.",
        "  exit: killed by SIGKILL after ignoring SIGTERM for 0.2 s",
        "  last lines of stdout: (none)",
        "  last lines of stderr:",
        "    | ignore_term: SIGTERM ignored",
    )
    assert err.value.exit_status == -9


def test_a_failed_node_stays_failed(tmp_path: Path) -> None:
    with _node(tmp_path, "garbage.py") as node:
        with pytest.raises(NodeProtocolError) as first:
            node.request(INIT)
        with pytest.raises(NodeProtocolError) as second:
            node.request(SEND)
    assert second.value is first.value


@pytest.mark.parametrize("isolate", [True, False])
def test_missing_program(tmp_path: Path, isolate: bool) -> None:
    with pytest.raises(InputError) as err:
        NodeProcess(["/nonexistent/node"], name="p1", log_dir=tmp_path, isolate=isolate)
    assert err.value.message == ("cannot run node p1: /nonexistent/node: No such file or directory")
    assert err.value.code == "RL-INPUT-NODE-CMD"


def test_a_program_the_sandbox_does_not_show(tmp_path: Path) -> None:
    """A program inside the folder the sandbox hides (the run's logs) is refused
    with the reason, not started to fail obscurely."""
    logs = tmp_path / "logs"
    logs.mkdir()
    script = logs / "node.py"
    script.write_text("print('hi')\n")
    with pytest.raises(InputError) as err:
        NodeProcess([PY, str(script)], name="p1", log_dir=logs, policy=POLICY)
    assert err.value.message == (
        f"cannot run node p1: {script} is inside {logs}, which the sandbox hides from the"
        " programs it runs (the store, the run's folder and logs): move the program's files"
        " elsewhere"
    )


def test_describe_status() -> None:
    assert describe_status(None) == "still running"
    assert describe_status(0) == "exited with status 0"
    assert describe_status(-15) == "killed by SIGTERM"


def test_node_runs_in_its_own_directory(tmp_path: Path) -> None:
    with _node(tmp_path, "netcheck.py") as node:
        workdir = node.workdir
        assert workdir.is_dir() and workdir != Path.cwd()
    assert not workdir.exists()


def _layer(name: str) -> tuple[bool, str]:
    with Sandbox(POLICY) as sb:
        sb.popen(["/bin/true"]).wait()
        layer = sb.report().layer(name)
    return layer.active, layer.detail


def test_isolated_node_has_no_network(tmp_path: Path) -> None:
    active, why = _layer("network")
    if not active:
        pytest.skip(f"the sandbox's network layer is not active here: {why}")
    node = NodeProcess(
        [PY, str(HOSTILE / "netcheck.py")],
        name="p1",
        log_dir=tmp_path,
        limits=PATIENT,
        policy=POLICY,
    )
    assert "network" in node.isolation and "network NOT active" not in node.isolation
    assert node.sandbox_report.layer("network").detail == (
        "no network: its own network namespace, no interface up"
    )
    with node, pytest.raises(NodeError) as err:
        node.request(INIT)
    assert err.value.stderr_tail == ("interfaces: lo",)
    assert err.value.exit_status == 0


def test_isolated_escaped_child_is_killed(tmp_path: Path) -> None:
    active, why = _layer("processes")
    if not active:
        pytest.skip(f"the sandbox's processes layer is not active here: {why}")
    beats = tmp_path / "beats"
    beats.mkdir()
    beat = beats / "heartbeat"
    node = NodeProcess(
        [PY, str(HOSTILE / "fork.py"), str(beat), "setsid"],
        name="p1",
        log_dir=tmp_path / "logs",
        limits=PATIENT,
        policy=POLICY,
        writable=[beats],
    )
    with node, pytest.raises(NodeCrashed):
        node.request(INIT)
    assert _stopped(beat)


def test_the_sandbox_report_names_every_layer(tmp_path: Path) -> None:
    with _node(tmp_path, "netcheck.py") as node:
        report = node.sandbox_report
    assert [x.name for x in report.layers] == [
        "user", "filesystem", "network", "processes", "memory", "limits", "lifetime"
    ]  # fmt: skip
    assert report.layer("limits").detail == (
        "per process: CPU 300 s, address space 8 GiB, 1024 open files, files up to 256 MiB,"
        " no core dumps"
    )
    for layer in report.layers:
        assert layer.detail, layer.name


def test_the_sandbox_init_shows_no_configuration(tmp_path: Path) -> None:
    """The init is PID 1 of the sandbox and every program in it can read its command
    line: the configuration (host paths of the run, the program's environment)
    reaches it on a descriptor instead.  Descriptors handed to the program still
    become 3, 4, ..."""
    active, why = _layer("processes")
    if not active:
        pytest.skip(f"the sandbox's processes layer is not active here: {why}")
    show = (
        "import os; fds = sorted(int(x) for x in os.listdir('/proc/self/fd'));"
        " out = os.fdopen(3, 'wb'); out.write(open('/proc/1/cmdline', 'rb').read());"
        " out.close(); print(fds)"
    )
    r, w = os.pipe()
    secret = tmp_path / "a-host-path-of-the-run"
    secret.mkdir()
    with Sandbox(POLICY) as sb:
        try:
            proc = sb.popen(
                [PY, "-c", show],
                stdout=subprocess.PIPE,
                env={"SOME_SETTING": "a-value-of-the-config"},
                writable=[secret],
                extra_fds=(w,),
            )
        finally:
            os.close(w)
        out, _ = proc.communicate(timeout=30)
        with os.fdopen(r, "rb") as f:
            cmdline = f.read()
        root = str(sb.root)
    assert proc.returncode == 0
    assert cmdline.split(b"\0")[:-1] == [
        os.fsencode(x) for x in (sys.executable, "-I", "-S", "-B", str(INIT_SCRIPT))
    ]
    # Nothing of the configuration: the run's folders, the program's environment, nor
    # the program's own command line (the exact list above has no other word).
    for text in (root, str(secret), "a-value-of-the-config", show):
        assert text.encode() not in cmdline
    # stdin, stdout, stderr, the descriptor handed over, and the one listdir opens
    assert out.decode().strip() == "[0, 1, 2, 3, 4]"
