"""A pytest plugin: the CPU each test costs, for the one who makes CI faster.

With ``REDLETTER_TEST_CPU_LOG=FILE`` set, every test (its setup, call and teardown)
appends a tab-separated line to FILE: the test's id, its wall time, the CPU time of
the test process and the CPU time of the child processes it waited for (TLC, Go,
Spark's driver, the kit's own commands), in seconds.  Each xdist worker appends its
own lines; ``sort -t$'\\t' -k4 -g -r FILE`` lists the costliest first.  On two
cores where every phase of CI keeps both busy, CPU, not wall time, is what a change
must save (docs/development.md).

What is not counted: processes a test starts and does not wait for (a Spark
standalone cluster's daemons, a gateway JVM that outlives its test), which the
kernel hands to no parent that asks.  Nothing is written without the variable.
"""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

VARIABLE = "REDLETTER_TEST_CPU_LOG"


def _children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    out = os.environ.get(VARIABLE)
    if not out:
        yield
        return
    wall, own, kids = time.monotonic(), time.process_time(), _children()
    yield
    line = (
        f"{item.nodeid}\t{time.monotonic() - wall:.1f}\t{time.process_time() - own:.1f}"
        f"\t{_children() - kids:.1f}\n"
    )
    with Path(out).open("a", encoding="utf-8") as f:
        f.write(line)
