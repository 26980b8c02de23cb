"""The cluster path: ``spark-submit`` to a standalone master and worker started on
127.0.0.1 from pyspark's own ``bin/spark-class``, with the same results as local mode:
the BFS's counts (the manifest's) and a class's gradebook (``--local``'s)."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from redletter.conformance.gonode import find_go
from redletter.manifest import load_manifest
from redletter.pipeline.cluster import start_standalone, stop_standalone
from tests.cos418_gallery import materialize

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.timeout(900)]


def test_spark_submit_to_a_standalone_cluster_gives_local_modes_results(tmp_path: Path) -> None:
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
        if find_go() is not None:  # a class graded on the cluster: the gradebook of --local
            cls = tmp_path / "class"
            cls.mkdir()
            for name, entry in (("ada", "servers/base"), ("ed", "servers/build-error")):
                materialize(entry, tmp_path / "gallery").rename(cls / name)
            args = ["--scenarios", "2", "--seeds", "1", "--no-shrink"]
            graded = subprocess.run(
                [str(submit), "--master", cluster.master_url, "--driver-memory", "1g",
                 str(ROOT / "pipeline" / "jobs.py"), "grade", str(cls),
                 "--out", str(tmp_path / "on-cluster"), *args],
                capture_output=True, text=True, env=env, timeout=900, check=False,
            )  # fmt: skip
            assert graded.returncode == 0, graded.stdout[-2000:] + graded.stderr[-2000:]
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
    if find_go() is None:
        pytest.skip("the cluster's counts are checked; no Go toolchain to grade a class")
    here = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "redletter"), "cos418", "grade", str(tmp_path / "class"),
         "--out", str(tmp_path / "here"), "--local", *args],
        capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert here.returncode == 0, here.stdout[-2000:] + here.stderr[-2000:]
    keys = ("submission", "verdict", "runs", "passed", "failed", "first_rule", "first_scenario")
    books = []
    for out in ("on-cluster", "here"):
        with (tmp_path / out / "gradebook.csv").open() as f:
            books.append([{k: r[k] for k in keys} for r in csv.DictReader(f)])
    assert books[0] == books[1]
    # a pass whose run counts must agree, and a build failure (two scenarios are too few
    # for a buggy package's bug to show for sure: shared-recording passed them in CI)
    assert [r["verdict"] for r in books[0]] == ["pass", "build"]
