"""Running the keyed-count job on Apache Flink: find the Flink environment
(:func:`find_flink`), run one job in it (:func:`run_job`), and a campaign of
seeded runs of one mode (:func:`run_campaign`).

PyFlink is never imported in the kit's process.  Its pins clash with the kit's
(py4j, pyarrow), so ``make flink`` installs it into its own virtual environment,
``.venv-flink/``, from ``requirements-flink.lock``; the job runs there as a
child process (``job.py``), in its own session so that a timeout kills the
whole tree (the Python driver, Flink's JVM and its Python workers), and it
talks to the kit through files in the run's folder only (see ``evidence.py``).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from redletter.conformance.adapters.flink.evidence import read_run
from redletter.conformance.adapters.flink.judge import (
    ModeJudgement,
    RunJudgement,
    decisive,
    judge_mode,
    judge_run,
)
from redletter.conformance.adapters.flink.workload import JobConfig, failure_point
from redletter.errors import EnvironmentMissing, InputError
from redletter.toolchain import require_java

__all__ = [
    "FLINK_HINT",
    "JOB_SCRIPT",
    "FlinkEnv",
    "Settings",
    "find_flink",
    "plan_run",
    "run_campaign",
    "run_job",
]

#: The job script, run by the Flink environment's Python.
JOB_SCRIPT: Final = Path(__file__).resolve().parent / "job.py"
#: Flink's log configuration for a run: appends, never truncates (see the file).
LOG4J: Final = Path(__file__).resolve().parent / "log4j.properties"
#: The PyFlink release ``make flink`` installs (requirements-flink.lock).
FLINK_VERSION: Final = "2.3.0"
#: Where ``make flink`` puts the environment, relative to the project root.
FLINK_VENV: Final = ".venv-flink"
#: How to get Flink, in one phrase.
FLINK_HINT: Final = (
    "run `make flink` (it installs apache-flink 2.3.0 into .venv-flink/ from"
    " requirements-flink.lock), or point --flink-python at a Python that has PyFlink"
)
#: The environment variable that names the Flink environment's Python.
PYTHON_ENV: Final = "REDLETTER_FLINK_PYTHON"


@dataclass(frozen=True, slots=True)
class FlinkEnv:
    """A Python with PyFlink, and the Java it will run Flink on."""

    python: Path
    version: str  #: PyFlink's version
    java: str  #: the Java version


@dataclass(frozen=True, slots=True)
class Settings:
    """The job's size and timing, the same for every run of a campaign."""

    records: int = 8000
    keys: int = 8
    parallelism: int = 2
    checkpoint_ms: int = 250
    delay_ms: float = 0.5
    skew_ms: float = 1.0
    restart_delay_ms: int = 200
    timeout: float = 300.0  #: seconds one run may take before the kit kills it

    def check(self) -> Settings:
        """``self``, or bad input naming the first value out of range."""
        for name, value, low in (
            ("--records", self.records, 10),
            ("--keys", self.keys, 1),
            ("--parallelism", self.parallelism, 2),
            ("--checkpoint-ms", self.checkpoint_ms, 10),
        ):
            if value < low:
                raise InputError(
                    f"{name} must be at least {low}, got {value}", code="RL-INPUT-USAGE"
                )
        if self.keys > self.records:
            raise InputError(
                f"--keys ({self.keys}) must not exceed --records ({self.records})",
                code="RL-INPUT-USAGE",
            )
        if not (0 <= self.delay_ms <= 1000 and 0 <= self.skew_ms <= 1000):
            raise InputError(
                f"--delay-ms and --skew-ms must be within 0..1000 ms, got {self.delay_ms:g}"
                f" and {self.skew_ms:g}",
                code="RL-INPUT-USAGE",
            )
        if not 0 < self.timeout < float("inf"):
            raise InputError(
                f"--timeout must be a finite number of seconds above 0, got {self.timeout:g}",
                code="RL-INPUT-USAGE",
            )
        return self


def find_flink(root: Path, python: Path | None = None) -> FlinkEnv:
    """The Flink environment: ``python`` if given, else ``$REDLETTER_FLINK_PYTHON``,
    else ``<root>/.venv-flink/bin/python``; :class:`EnvironmentMissing`
    (``RL-ENV-FLINK``, exit 3) with the ``make flink`` hint when it is absent or
    PyFlink does not import, ``RL-ENV-JAVA`` when Java 17 is missing."""
    chosen = python or (Path(os.environ[PYTHON_ENV]) if os.environ.get(PYTHON_ENV) else None)
    # Absolute (the job runs in its own folder), not resolved: a venv's python
    # is a symlink, and resolving it would leave the venv.
    exe = (chosen if chosen is not None else root / FLINK_VENV / "bin" / "python").absolute()
    if not exe.exists():
        raise EnvironmentMissing(
            f"Apache Flink is not installed: {exe} does not exist; {FLINK_HINT}.",
            code="RL-ENV-FLINK",
        )
    probe = "import pyflink.version as v; print(v.__version__)"
    try:
        proc = subprocess.run(
            [str(exe), "-c", probe], capture_output=True, text=True, timeout=120, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EnvironmentMissing(
            f"Apache Flink is not usable: running {exe} failed ({exc}); {FLINK_HINT}.",
            code="RL-ENV-FLINK",
        ) from None
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise EnvironmentMissing(
            f"Apache Flink is not installed in {exe}: `import pyflink` failed ({last});"
            f" {FLINK_HINT}.",
            code="RL-ENV-FLINK",
        )
    try:
        java = require_java()
    except EnvironmentMissing as exc:
        raise EnvironmentMissing(
            "Apache Flink runs on Java 17 or newer. " + exc.message.replace("to run TLC", ""),
            code="RL-ENV-JAVA",
        ) from None
    return FlinkEnv(python=exe, version=proc.stdout.strip(), java=java.version)


def plan_run(mode: str, seed: int, run: int, settings: Settings, folder: Path) -> JobConfig:
    """The config of run ``run`` (1-based) of a campaign: its failure point comes
    from the seed and the run's index."""
    return JobConfig(
        mode=mode,
        run=run,
        seed=seed,
        records=settings.records,
        keys=settings.keys,
        parallelism=settings.parallelism,
        checkpoint_ms=settings.checkpoint_ms,
        fail_at=failure_point(seed, run, settings.records, settings.parallelism),
        delay_ms=settings.delay_ms,
        skew_ms=settings.skew_ms,
        restart_delay_ms=settings.restart_delay_ms,
        out=str(folder.resolve()),
    )


def _tail(path: Path, lines: int = 5) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no output)"
    kept = [ln for ln in text.strip().splitlines() if ln.strip()][-lines:]
    return " | ".join(kept) or "(no output)"


def _kill_tree(proc: subprocess.Popen[bytes]) -> None:
    """Stop the job's session (driver, JVM, Python workers): TERM, then KILL."""
    for sig, wait in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


#: Flink's log line when the MiniCluster's only TaskManager dies: the job then
#: waits for slots that never come (seen with PyFlink 2.3: "FATAL - exception in
#: exception handler" while a failed task's Python resources are released).
_TM_DIED: Final = re.compile(r"TaskManager #\d+ failed")
_FATAL: Final = re.compile(r"FATAL - (.*)")
#: How long the job may go on after its TaskManager died (it never recovers).
_DEAD_GRACE: Final = 5.0


def _dead_taskmanager(log_dir: Path) -> str | None:
    """The cause, when Flink's log says the TaskManager died; else None."""
    for log in sorted(log_dir.glob("*.log")):
        try:
            lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        if not any(_TM_DIED.search(ln) for ln in lines):
            continue
        for n, line in enumerate(lines):
            if m := _FATAL.search(line):
                cause = lines[n + 1].strip() if n + 1 < len(lines) else ""
                what = m[1].split(" of task ")[0]
                return f"{what}: {cause}" if cause else what
        return "TaskManager failed"
    return None


def _wait(
    proc: subprocess.Popen[bytes], log_dir: Path, timeout: float
) -> tuple[int | None, str | None]:
    """Wait for the job: ``(exit code, None)``; ``(None, None)`` on timeout;
    ``(None, cause)`` when the TaskManager died and the job would wait for ever."""
    deadline = time.monotonic() + timeout
    dead_since: float | None = None
    cause: str | None = None
    while True:
        try:
            return proc.wait(timeout=1.0), None
        except subprocess.TimeoutExpired:
            pass
        now = time.monotonic()
        if now >= deadline:
            return None, cause
        if cause is None:
            cause = _dead_taskmanager(log_dir)
            dead_since = now if cause is not None else None
        elif dead_since is not None and now - dead_since >= _DEAD_GRACE:
            return None, cause


def _reap_session(pgid: int, wait: float = 30.0) -> None:
    """Wait for the rest of the job's session (Flink's JVM outlives the Python
    driver by a few seconds while it shuts down), then stop what is left, so a
    run never overlaps the next one."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return
        time.sleep(0.2)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pgid, sig)
        except (ProcessLookupError, PermissionError):
            return
        time.sleep(2.0)


def run_job(env: FlinkEnv, cfg: JobConfig, *, timeout: float) -> Path:
    """Run one job in its folder ``cfg.out`` and return the folder.  A job that
    crashes, or outlives ``timeout``, still leaves a ``job.json`` saying so
    (written here), so every run folder can be judged."""
    folder = Path(cfg.out)
    (folder / "log").mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(cfg.to_json(), encoding="utf-8")
    child_env = dict(os.environ)
    child_env.update(
        {
            "FLINK_LOG_DIR": str(folder / "log"),
            "LOG4J_PROPERTIES": str(LOG4J),
            "PYTHONUNBUFFERED": "1",
        }
    )
    child_env.pop("PYTHONPATH", None)  # the kit's paths mean nothing to the Flink venv
    job_json = folder / "job.json"
    with (folder / "stdout.txt").open("wb") as out, (folder / "stderr.txt").open("wb") as err:
        proc = subprocess.Popen(
            [str(env.python), str(JOB_SCRIPT), str(folder / "config.json")],
            cwd=folder,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            env=child_env,
            start_new_session=True,
        )
        try:
            code, dead = _wait(proc, folder / "log", timeout)
        except BaseException:
            _kill_tree(proc)
            raise
        if code is not None:
            _reap_session(proc.pid)
        else:
            _kill_tree(proc)
            error = (
                f"Flink's TaskManager died ({dead}), so the job could not restart; the kit"
                " stopped it"
                if dead is not None
                else f"timeout: the job ran longer than {timeout:g} s and the kit stopped it"
            )
            job_json.write_text(
                json.dumps({"status": "failed", "error": error, "seconds": None}),
                encoding="utf-8",
            )
            return folder
    if not job_json.is_file():
        job_json.write_text(
            json.dumps(
                {
                    "status": "failed",
                    "error": f"job.py exited with code {code} before writing job.json;"
                    f" its stderr ends: {_tail(folder / 'stderr.txt')}",
                }
            ),
            encoding="utf-8",
        )
    return folder


def run_campaign(
    env: FlinkEnv,
    mode: str,
    runs: int,
    seed: int,
    settings: Settings,
    folder: Path,
    *,
    stop_when_decided: bool = True,
    on_start: Callable[[JobConfig], None] | None = None,
    on_result: Callable[[RunJudgement], None] | None = None,
) -> ModeJudgement:
    """Up to ``runs`` runs of ``mode`` (run ``i`` fails at the seeded point of
    ``i``), each in ``folder/runs/run-<i>``, judged as it ends; stops at the first
    run that settles the verdict (:func:`~.judge.decisive`) unless
    ``stop_when_decided`` is false."""
    judged: list[RunJudgement] = []
    for i in range(1, runs + 1):
        cfg = plan_run(mode, seed, i, settings, folder / "runs" / f"run-{i:03d}")
        if on_start is not None:
            on_start(cfg)
        run_job(env, cfg, timeout=settings.timeout)
        result = judge_run(read_run(Path(cfg.out)))
        judged.append(result)
        if on_result is not None:
            on_result(result)
        if stop_when_decided and decisive(result):
            break
    return judge_mode(mode, judged, planned=runs)
