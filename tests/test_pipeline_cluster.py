"""The cluster path: ``spark-submit`` to a standalone master and worker started on
127.0.0.1 from pyspark's own ``bin/spark-class``, with the same results as local mode."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from redletter.manifest import load_manifest
from redletter.pipeline.cluster import start_standalone, stop_standalone

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def test_spark_submit_to_a_standalone_cluster_gives_the_manifest_counts(tmp_path: Path) -> None:
    cluster = start_standalone(tmp_path / "cluster", workers=1, cores=2, memory="1g")
    try:
        assert cluster.master_url.startswith("spark://127.0.0.1:")
        env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable)
        submit = Path(sys.executable).parent / "spark-submit"
        done = subprocess.run(
            [str(submit), "--master", cluster.master_url, "--driver-memory", "1g",
             str(ROOT / "pipeline" / "jobs.py"), "explore", "MCToken2",
             "--graph", str(tmp_path / "g"), "--root", str(ROOT)],
            capture_output=True, text=True, env=env, timeout=900, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        # the executors ran in the worker's JVM, not in the driver
        assert "Asked to launch executor" in (tmp_path / "cluster" / "worker-1.log").read_text()
    finally:
        stopped = stop_standalone(tmp_path / "cluster")
    assert stopped is not None
    for pid in cluster.pids:
        with pytest.raises(ProcessLookupError):
            os.killpg(pid, 0)
    row = next(m for m in load_manifest(ROOT / "spec" / "manifest.json").models
               if m.model == "MCToken2")  # fmt: skip
    got = json.loads((tmp_path / "g" / "explore.json").read_text())
    assert (got["distinct"], got["total"], got["depth"]) == (row.distinct, row.total, row.depth)
