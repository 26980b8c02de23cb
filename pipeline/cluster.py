"""A Spark standalone cluster on this machine: one master and its workers, started
from the ``bin/spark-class`` the pyspark package ships, all on 127.0.0.1.

    .venv/bin/redletter pipeline cluster up --workers 2 --cores 1 --memory 2g
    PYSPARK_PYTHON=.venv/bin/python .venv/bin/spark-submit --master spark://127.0.0.1:7077 \\
        pipeline/jobs.py explore MCToken2 --graph /tmp/g
    .venv/bin/redletter pipeline cluster down

This is the path a real cluster takes (``spark-submit`` to a master URL, executors in
other JVMs with their own Python workers), so what runs here runs on machines with
``spark://host:7077`` in place of the address.  :func:`start_standalone` returns once
the master listens and every worker has registered; :func:`stop_standalone` ends
exactly the processes it started (by their ids, from ``cluster.json``).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from redletter.errors import EnvironmentMissing, InputError

__all__ = ["Standalone", "spark_home", "start_standalone", "stop_standalone"]

STATE_FILE = "cluster.json"


@dataclass(frozen=True)
class Standalone:
    """A running standalone cluster: its master URL, process ids and logs."""

    master_url: str
    pids: tuple[int, ...]
    workdir: str
    web_ui: str


def spark_home() -> Path:
    """The Spark distribution inside the installed pyspark package."""
    try:
        import pyspark
    except ImportError:  # pragma: no cover - pyspark is a dependency
        raise EnvironmentMissing("PySpark is not installed", code="RL-ENV-SPARK") from None
    home = Path(pyspark.__file__).resolve().parent
    if not (home / "bin" / "spark-class").is_file():
        raise EnvironmentMissing(
            f"{home} has no bin/spark-class: this pyspark cannot start a standalone cluster",
            code="RL-ENV-SPARK",
        )
    return home


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        SPARK_HOME=str(home),
        SPARK_LOCAL_IP="127.0.0.1",
        SPARK_MASTER_HOST="127.0.0.1",
        PYSPARK_PYTHON=sys.executable,
        SPARK_NO_DAEMONIZE="1",
    )
    return env


def _wait_for(
    path: Path, text: str, proc: subprocess.Popen[bytes], what: str, timeout: float
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.is_file() and text in path.read_text(encoding="utf-8", errors="replace"):
            return
        if proc.poll() is not None:
            break
        time.sleep(0.25)
    tail = (
        path.read_text(encoding="utf-8", errors="replace").splitlines()[-5:]
        if path.is_file()
        else []
    )
    raise EnvironmentMissing(
        f"the Spark {what} did not start within {timeout:.0f} s (log {path}): " + " | ".join(tail),
        code="RL-ENV-SPARK",
    )


def start_standalone(
    workdir: Path,
    *,
    workers: int = 1,
    cores: int = 2,
    memory: str = "2g",
    port: int | None = None,
    timeout: float = 120.0,
) -> Standalone:
    """Start a master on 127.0.0.1 and ``workers`` workers of ``cores`` cores and
    ``memory`` each; logs and ``cluster.json`` go to ``workdir``."""
    workdir = workdir.resolve()
    if (workdir / STATE_FILE).is_file():
        raise InputError(
            f"a cluster started from {workdir} is still recorded there; stop it first"
            " (redletter pipeline cluster down)",
            path=str(workdir / STATE_FILE),
            code="RL-INPUT-OUT",
        )
    workdir.mkdir(parents=True, exist_ok=True)
    home = spark_home()
    env = _env(home)
    spark_class = str(home / "bin" / "spark-class")
    port = port or _free_port()
    ui_port = _free_port()
    url = f"spark://127.0.0.1:{port}"
    procs: list[subprocess.Popen[bytes]] = []

    def launch(args: list[str], log: Path) -> subprocess.Popen[bytes]:
        with log.open("wb") as fh:
            p = subprocess.Popen(
                [spark_class, *args], stdout=fh, stderr=subprocess.STDOUT, env=env,
                cwd=workdir, start_new_session=True,
            )  # fmt: skip
        procs.append(p)
        return p

    try:
        mlog = workdir / "master.log"
        master = launch(
            ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port",
             str(port), "--webui-port", str(ui_port)],
            mlog,
        )  # fmt: skip
        _wait_for(mlog, "I have been elected leader", master, "master", timeout)
        for n in range(workers):
            wlog = workdir / f"worker-{n + 1}.log"
            w = launch(
                ["org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1",
                 "--cores", str(cores), "--memory", memory, "--webui-port",
                 str(_free_port()), "--work-dir", str(workdir / f"work-{n + 1}")],
                wlog,
            )  # fmt: skip
            _wait_for(wlog, "Successfully registered with master", w, f"worker {n + 1}", timeout)
    except BaseException:
        for p in procs:
            _stop(p.pid)
        raise
    cluster = Standalone(
        url, tuple(p.pid for p in procs), str(workdir), f"http://127.0.0.1:{ui_port}"
    )
    (workdir / STATE_FILE).write_text(json.dumps(asdict(cluster)) + "\n", encoding="utf-8")
    return cluster


def _stop(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGTERM)  # the session spark-class started (its JVM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        _reap(pid)
        try:
            os.killpg(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
    time.sleep(0.2)
    _reap(pid)


def _reap(pid: int) -> None:
    """Collect ``pid`` if this process started it (``cluster up`` and ``down`` in one
    process, as in the tests): else its zombie would keep its process group alive."""
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def stop_standalone(workdir: Path) -> Standalone | None:
    """Stop the cluster recorded in ``workdir`` (workers first); None when none is."""
    state = workdir.resolve() / STATE_FILE
    if not state.is_file():
        return None
    data = json.loads(state.read_text(encoding="utf-8"))
    cluster = Standalone(data["master_url"], tuple(data["pids"]), data["workdir"], data["web_ui"])
    for pid in reversed(cluster.pids):
        _stop(pid)
    state.unlink()
    return cluster
