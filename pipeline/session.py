"""One Spark session per run of the kit.

Spark's start-up (a JVM, about 5-8 s here) is paid once: every job of one CLI
invocation calls :func:`get_session` and gets the same :class:`SparkSession`.

Configuration, in order of precedence: the arguments of :func:`get_session`, then
the environment (``REDLETTER_SPARK_MASTER``, ``REDLETTER_SPARK_DRIVER_MEMORY``,
``REDLETTER_SPARK_SHUFFLE_PARTITIONS``, ``REDLETTER_SPARK_PYTHON_MEMORY``,
``REDLETTER_SPARK_JAVA_OPTIONS``), then the defaults ``local[*]``, ``2g``, ``4``, no
bound and the JVM's own options.  ``java_options`` go to the driver's JVM (when this
process starts it) and to the executors' (``spark.driver.extraJavaOptions``,
``spark.executor.extraJavaOptions``); ``REDLETTER_SPARK_JAVA_OPTIONS`` applies also
to a :class:`SparkConfig` given without them.  The kit's tests set it to
``-XX:TieredStopAtLevel=1 -XX:+UseSerialGC`` (Makefile): their jobs are short, and
the JVM's quick compiler alone and one garbage collector thread spend less of the
two cores than the optimising compiler, which pays off only on long jobs.
``python_memory`` bounds each Python worker (``spark.executor.pyspark.memory``:
Spark sets the worker's address space limit, so a worker that needs more fails its
task with ``MemoryError`` rather than swapping the machine). Workers run this
interpreter (``PYSPARK_PYTHON`` unless set). The web UI is off and
``SPARK_LOCAL_IP`` defaults to ``127.0.0.1`` so a local run opens no port beyond the
loopback. Under ``spark-submit`` the master and memory given on its command line win
(a session already exists then).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from redletter.errors import EnvironmentMissing

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["SparkConfig", "get_session", "spark_conf", "stop_session"]

_DEFAULT_MASTER = "local[*]"
_DEFAULT_MEMORY = "2g"
_DEFAULT_SHUFFLE = 4

_session: Any = None


@dataclass(frozen=True)
class SparkConfig:
    """What the session is built with."""

    master: str = _DEFAULT_MASTER
    driver_memory: str = _DEFAULT_MEMORY
    shuffle_partitions: int = _DEFAULT_SHUFFLE
    app_name: str = "redletter"
    python_memory: str | None = None
    java_options: str | None = None

    @staticmethod
    def from_env(
        master: str | None = None,
        driver_memory: str | None = None,
        shuffle_partitions: int | None = None,
        python_memory: str | None = None,
        java_options: str | None = None,
    ) -> SparkConfig:
        """Arguments first, then ``REDLETTER_SPARK_*`` variables, then defaults."""
        env = os.environ
        return SparkConfig(
            master=master or env.get("REDLETTER_SPARK_MASTER") or _DEFAULT_MASTER,
            driver_memory=driver_memory
            or env.get("REDLETTER_SPARK_DRIVER_MEMORY")
            or _DEFAULT_MEMORY,
            shuffle_partitions=shuffle_partitions
            or int(env.get("REDLETTER_SPARK_SHUFFLE_PARTITIONS") or _DEFAULT_SHUFFLE),
            python_memory=python_memory or env.get("REDLETTER_SPARK_PYTHON_MEMORY") or None,
            java_options=java_options or env.get("REDLETTER_SPARK_JAVA_OPTIONS") or None,
        )


def spark_conf(cfg: SparkConfig, *, submitted: bool) -> dict[str, str]:
    """The settings a session is built with (besides the application's name).

    ``submitted``: under ``spark-submit``, whose master, driver memory and driver JVM
    are the user's (it started the JVM before Python ran).
    """
    local_ip = os.environ.get("SPARK_LOCAL_IP", "127.0.0.1")
    conf: dict[str, str] = {}
    if not submitted:
        conf["spark.master"] = cfg.master
        conf["spark.driver.memory"] = cfg.driver_memory
    conf |= {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "true",
        "spark.sql.shuffle.partitions": str(cfg.shuffle_partitions),
        "spark.default.parallelism": str(max(cfg.shuffle_partitions, 2)),
        "spark.sql.adaptive.enabled": "true",
        "spark.driver.bindAddress": local_ip,
        "spark.driver.host": local_ip,
    }
    if cfg.python_memory is not None:
        conf["spark.executor.pyspark.memory"] = cfg.python_memory
    java = cfg.java_options or os.environ.get("REDLETTER_SPARK_JAVA_OPTIONS") or None
    if java is not None:
        if not submitted:
            conf["spark.driver.extraJavaOptions"] = java
        conf["spark.executor.extraJavaOptions"] = java
    return conf


def get_session(config: SparkConfig | None = None, *, quiet: bool = True) -> SparkSession:
    """The run's one session, created on first call with ``config``.

    Later calls return the same session whatever their ``config`` (Spark cannot
    change the master or the driver memory of a running JVM); call
    :func:`stop_session` first to start over with another configuration.
    """
    global _session
    if _session is not None:
        return _session  # type: ignore[no-any-return, unused-ignore]
    cfg = config or SparkConfig.from_env()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # Python workers must run this interpreter (the venv with pyarrow and the kit).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    try:
        from pyspark.sql import SparkSession
    except ImportError as e:  # the core install leaves the spark extra out
        raise EnvironmentMissing(
            f"PySpark is not installed ({e}): run `make extra-spark` in the checkout"
            " (or `pip install 'redletter[spark]'`)",
            code="RL-ENV-SPARK",
        ) from None
    builder = SparkSession.builder.appName(cfg.app_name)
    # Under spark-submit (it starts the JVM first and hands Python its gateway), its
    # --master and --driver-memory are the user's choice: setting them here would
    # silently run a job submitted to a cluster in local mode.
    for key, value in spark_conf(cfg, submitted="PYSPARK_GATEWAY_PORT" in os.environ).items():
        builder = builder.config(key, value)
    try:
        session = builder.getOrCreate()
    except Exception as e:  # the JVM did not start: no Java, or a bad master URL
        raise EnvironmentMissing(
            f"cannot start Spark (master {cfg.master}): {type(e).__name__}: "
            f"{str(e).splitlines()[0] if str(e) else ''} — Spark needs Java 17 on PATH"
            " (run `.venv/bin/redletter check-java`)",
            code="RL-ENV-SPARK",
        ) from None
    if quiet:
        session.sparkContext.setLogLevel("ERROR")
    _session = session
    return session


def stop_session() -> None:
    """Stop the run's session (if any); the next :func:`get_session` starts a new one."""
    global _session
    if _session is not None:
        _session.stop()
        _session = None
