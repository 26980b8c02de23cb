"""The kit's own pytest plugins: the xdist scheduler's units, a run without xdist,
and the CPU log (tests/scheduling.py, tests/cpu_log.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.scheduling import SHARED, scope_of

ROOT = Path(__file__).resolve().parent.parent


def test_a_shared_modules_tests_are_one_unit() -> None:
    assert scope_of("tests/test_install.py::test_a[wheel]") == "tests/test_install.py"
    assert scope_of("tests/test_install.py::test_b") == scope_of("tests/test_install.py::test_a")
    solo = "tests/test_runlog.py::test_conserved_sum_on_processes_without_channels"
    assert scope_of(solo) == solo
    assert all(name.startswith("test_") and (ROOT / "tests" / name).is_file() for name in SHARED)


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
