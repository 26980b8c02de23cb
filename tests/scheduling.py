"""A pytest-xdist plugin: which worker runs which test.

Tests go to the workers one at a time, as with ``--dist load``, in the order
``tests/conftest.py`` sorts them (the longest modules first), except the tests of a
module in :data:`SHARED`: those run together on one worker, so that the module's
fixtures (a TLC run with its state graph dumped, a Spark ingest of it, a wheel
installed into a fresh venv) are built once per session instead of once per worker
that happens to get one of its tests.  Measured in CI before this plugin: the
MCToken2 graph of ``test_pipeline_graph.py`` was built on two of the three slow
workers (94 s and 75 s of setup) and its toy graph on both fast ones (40 s each).

The same holds one level up for the tests in :data:`SPARK`, which use the
process's one Spark session (``redletter.pipeline.session.get_session``): they are
one unit, so a single worker starts a Spark JVM and warms it up.  Measured on the
fast suite's 25 Spark tests (a cpuacct cgroup around the run): 131.7 CPU-s on two
workers, each of which started its own JVM, against 84.2 in one process.

Why not xdist's own ``--dist loadgroup`` with ``xdist_group`` marks: under pytest 9
it groups nothing (xdist 3.8 renames a grouped test through ``item._nodeid``, which
pytest 9 no longer reads), and ``--dist loadscope`` would put every module on one
worker, the README's 400-second test and its 12 fast neighbours together.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any, Final

import pytest

#: Modules whose tests share a module fixture that costs 10 s or more to build
#: (measured in CI as the setup time of the module's first test).
SHARED: Final = frozenset(
    {
        "test_pipeline_graph.py",  # the toy graph (Spark), MCToken2's TLC dump and its ingest
        "test_crosscheck.py",  # one TLC run of MCToken2 with its graph dumped and explored
        "test_install.py",  # the wheel, built and installed into a fresh venv
        "test_conformance_cli.py",  # MCToken2's traces, generated
        "test_pipeline_runners.py",  # MCToken2's traces, written for the Spark runners
        "test_errors.py",  # the kit's source parsed and scanned for error codes (10 s)
        "test_architecture.py",  # the kit's source parsed, its import graph
    }
)


#: Modules, or single tests (``module::test``), that use the process's Spark
#: session; ``tests/test_test_plugins.py`` checks that every test marked ``spark``
#: that starts one is listed (a test that runs ``spark-submit`` starts its own JVMs).
SPARK: Final = frozenset(
    {
        "test_pipeline_campaign.py",
        "test_pipeline_explore.py",
        "test_pipeline_graph.py",
        "test_pipeline_lemmas.py",
        "test_pipeline_reach.py",
        "test_pipeline_runners.py",
        "test_grade.py::test_a_class_is_graded_on_spark_as_without_it",
    }
)
#: The unit of the tests in :data:`SPARK`.
SPARK_UNIT: Final = "spark-session"


def scope_of(nodeid: str) -> str:
    """The unit of work ``nodeid`` belongs to: :data:`SPARK_UNIT` for a test in
    :data:`SPARK`, its module for a module in :data:`SHARED`, else the test itself."""
    path, _, rest = nodeid.partition("::")
    name = PurePosixPath(path).name
    test = rest.split("[", 1)[0]
    if name in SPARK or f"{name}::{test}" in SPARK:
        return SPARK_UNIT
    return path if name in SHARED else nodeid


# optionalhook: a run without xdist (``-p no:xdist``) does not know the hook.
@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Schedule ``-n N`` runs (``--dist load``, xdist's default) with
    :func:`scope_of`; any other ``--dist`` keeps xdist's own scheduler."""
    if config.getoption("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling  # type: ignore[import-untyped]

    class SharedFixtureScheduling(LoadScopeScheduling):  # type: ignore[misc]
        """xdist's scope scheduling with :func:`scope_of` as the scope, the units in
        collection order, and at most one unit waiting behind the running test."""

        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid)

        def schedule(self) -> None:
            # Units in collection order (conftest's FIRST), not the largest first.
            self.config.option.loadscopereorder = False
            super().schedule()

        def _reschedule(self, node: Any) -> None:
            # As xdist's, but a node gets more work only when it holds fewer than two
            # tests (the running one and the next: a worker needs the next to start
            # one), so no worker sits on a queue while another one idles at the end.
            if node.shutting_down:
                return
            if not self.workqueue:
                node.shutdown()
                return
            if self._pending_of(self.assigned_work[node]) >= 2:
                return
            self._assign_work_unit(node)

    return SharedFixtureScheduling(config, log)
