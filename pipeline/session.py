"""One Spark session per run of the kit.

Spark's start-up (a JVM, about 5-8 s here) is paid once: every job of one CLI
invocation calls :func:`get_session` and gets the same :class:`SparkSession`.

Configuration, in order of precedence: the arguments of :func:`get_session`, then
the environment (``REDLETTER_SPARK_MASTER``, ``REDLETTER_SPARK_DRIVER_MEMORY``,
``REDLETTER_SPARK_SHUFFLE_PARTITIONS``, ``REDLETTER_SPARK_PYTHON_MEMORY``), then the
defaults ``local[*]``, ``2g``, ``4`` and no bound.  ``python_memory`` bounds each
Python worker (``spark.executor.pyspark.memory``: Spark sets the worker's address
space limit, so a worker that needs more fails its task with ``MemoryError`` rather
than swapping the machine).  Workers run this interpreter (``PYSPARK_PYTHON`` unless
set).  The web UI is off and ``SPARK_LOCAL_IP`` defaults to ``127.0.0.1`` so a local
run opens no port
beyond the loopback.  Under ``spark-submit`` the master and
memory given on its command line win (a session already exists then).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from redletter.errors import EnvironmentMissing

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["SparkConfig", "get_session", "stop_session"]

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

    @staticmethod
    def from_env(
        master: str | None = None,
        driver_memory: str | None = None,
        shuffle_partitions: int | None = None,
        python_memory: str | None = None,
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
        )


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
    if "PYSPARK_GATEWAY_PORT" not in os.environ:
        builder = builder.master(cfg.master).config("spark.driver.memory", cfg.driver_memory)
    builder = (
        builder.config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "true")
        .config("spark.sql.shuffle.partitions", str(cfg.shuffle_partitions))
        .config("spark.default.parallelism", str(max(cfg.shuffle_partitions, 2)))
        .config("spark.sql.adaptive.enabled", "true")
        .config("spark.driver.bindAddress", os.environ["SPARK_LOCAL_IP"])
        .config("spark.driver.host", os.environ["SPARK_LOCAL_IP"])
    )
    if cfg.python_memory is not None:
        builder = builder.config("spark.executor.pyspark.memory", cfg.python_memory)
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
