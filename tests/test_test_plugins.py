"""The kit's own pytest plugins: the xdist scheduler's units, a run without xdist,
and the CPU log (tests/scheduling.py, tests/cpu_log.py)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

from tests.scheduling import SHARED, SPARK, SPARK_UNIT, scope_of

ROOT = Path(__file__).resolve().parent.parent


def test_a_shared_modules_tests_are_one_unit() -> None:
    assert scope_of("tests/test_install.py::test_a[wheel]") == "tests/test_install.py"
    assert scope_of("tests/test_install.py::test_b") == scope_of("tests/test_install.py::test_a")
    solo = "tests/test_runlog.py::test_conserved_sum_on_processes_without_channels"
    assert scope_of(solo) == solo
    assert all(name.startswith("test_") and (ROOT / "tests" / name).is_file() for name in SHARED)


def test_the_tests_that_use_the_spark_session_are_one_unit() -> None:
    """Every test module whose fixture calls ``get_session``, and every test that
    calls it itself, is in :data:`SPARK` (else a second worker starts a JVM)."""
    assert scope_of("tests/test_pipeline_lemmas.py::test_x[MCToken2-True]") == SPARK_UNIT
    assert scope_of("tests/test_pipeline_graph.py::test_y") == SPARK_UNIT  # also SHARED
    graded = "tests/test_grade.py::test_a_class_is_graded_on_spark_as_without_it"
    assert scope_of(graded) == SPARK_UNIT
    other = "tests/test_grade.py::test_a_grade_killed_and_started_again_loses_and_repeats_no_run"
    assert scope_of(other) == other
    found: set[str] = set()
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for top in tree.body:
            if not isinstance(top, ast.FunctionDef):
                continue
            calls = any(
                isinstance(n, ast.Call) and getattr(n.func, "id", None) == "get_session"
                for n in ast.walk(top)
            )
            if calls:
                fixture = top.name == "spark" or not top.name.startswith("test_")
                found.add(path.name if fixture else f"{path.name}::{top.name}")
    assert found, "no test calls get_session: the guard reads the wrong thing"
    assert found == set(SPARK), (found - SPARK, SPARK - found)


def test_without_xdist_the_tests_run_and_each_logs_its_cpu(tmp_path: Path) -> None:
    """``-p no:xdist`` runs (the plugins' xdist hooks are optional), and
    REDLETTER_TEST_CPU_LOG gets a line a test: id, wall, own CPU, children's CPU."""
    log = tmp_path / "cpu.tsv"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["REDLETTER_TEST_CPU_LOG"] = str(log)
    test = "tests/test_test_plugins.py::test_a_shared_modules_tests_are_one_unit"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider", test],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    (line,) = log.read_text(encoding="utf-8").splitlines()
    nodeid, *seconds = line.split("\t")
    assert nodeid == test
    assert len(seconds) == 3 and all(float(x) >= 0 for x in seconds), line


def _collected(*args: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:xdist",
         "-p", "no:cacheprovider", *args, "tests/test_runlog.py"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    return [ln for ln in done.stdout.splitlines() if ln.startswith("tests/")]


def test_a_shuffled_order_is_the_seeds_own() -> None:
    """make test-repeat's orders: the same seed, the same order; another seed, another."""
    plain = _collected()
    three = _collected("--shuffle=3")
    assert len(plain) >= 20 and sorted(three) == sorted(plain)
    assert three != plain
    assert _collected("--shuffle=3") == three
    assert _collected("--shuffle=4") != three
