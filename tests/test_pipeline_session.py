"""What a Spark session is built with (redletter/pipeline/session.py), without a JVM."""

from __future__ import annotations

import pytest

from redletter.pipeline.session import SparkConfig, spark_conf

QUICK = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def test_the_defaults_and_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("MASTER", "DRIVER_MEMORY", "SHUFFLE_PARTITIONS", "PYTHON_MEMORY", "JAVA_OPTIONS"):
        monkeypatch.delenv(f"REDLETTER_SPARK_{var}", raising=False)
    assert SparkConfig.from_env() == SparkConfig()
    monkeypatch.setenv("REDLETTER_SPARK_MASTER", "spark://head:7077")
    monkeypatch.setenv("REDLETTER_SPARK_JAVA_OPTIONS", QUICK)
    cfg = SparkConfig.from_env(driver_memory="3g")
    assert (cfg.master, cfg.driver_memory, cfg.java_options) == ("spark://head:7077", "3g", QUICK)
    assert SparkConfig.from_env(java_options="-Xss8m").java_options == "-Xss8m"


def test_a_local_session_gets_the_master_the_memory_and_no_jvm_options(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("REDLETTER_SPARK_JAVA_OPTIONS", raising=False)
    monkeypatch.setenv("SPARK_LOCAL_IP", "127.0.0.1")
    conf = spark_conf(SparkConfig(master="local[2]", driver_memory="1g"), submitted=False)
    assert conf == {
        "spark.master": "local[2]",
        "spark.driver.memory": "1g",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "true",
        "spark.sql.shuffle.partitions": "4",
        "spark.default.parallelism": "4",
        "spark.sql.adaptive.enabled": "true",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.driver.host": "127.0.0.1",
    }


def test_jvm_options_reach_the_driver_and_the_executors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDLETTER_SPARK_JAVA_OPTIONS", QUICK)
    # a SparkConfig given without them (as the tests' fixtures give one) takes the variable's
    conf = spark_conf(SparkConfig(master="local[2]"), submitted=False)
    assert conf["spark.driver.extraJavaOptions"] == conf["spark.executor.extraJavaOptions"] == QUICK
    # options of its own win
    conf = spark_conf(SparkConfig(java_options="-Xss8m"), submitted=False)
    assert conf["spark.driver.extraJavaOptions"] == "-Xss8m"


def test_under_spark_submit_the_users_master_memory_and_driver_jvm_stand(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("REDLETTER_SPARK_JAVA_OPTIONS", QUICK)
    conf = spark_conf(SparkConfig(master="local[2]", driver_memory="1g"), submitted=True)
    assert not {"spark.master", "spark.driver.memory", "spark.driver.extraJavaOptions"} & set(conf)
    assert conf["spark.executor.extraJavaOptions"] == QUICK
