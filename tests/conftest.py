"""Shared fixtures.  ``tlc``-marked tests need Java 17+; they are skipped, with the
reason shown by ``-ra``, only when Java is absent — never for any other reason."""

from __future__ import annotations

import random
import shutil
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from redletter.errors import EnvironmentMissing
from redletter.toolchain import fetch_tlc, require_java
from tests.cpu_log import pytest_runtest_protocol  # noqa: F401 (REDLETTER_TEST_CPU_LOG)
from tests.progress_lines import pytest_configure  # noqa: F401 (progress lines off a terminal)
from tests.scheduling import pytest_xdist_make_scheduler  # noqa: F401 (shared module fixtures)

# A test run started with SIGINT ignored (a background job of a shell without job
# control: `.ci/run &` in a script, a subshell's `&`) passes that on to every process
# it starts, and the kit, as Python itself does, keeps an ignored SIGINT ignored (a
# background job is not stopped by the terminal's Ctrl-C).  The tests that press
# Ctrl-C on the kit then wait for an exit that cannot come (three of them timed out
# in a CI run started that way).  They test the kit as a terminal runs it: SIGINT is
# caught in this process, so the processes it starts get it as the default.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"


def _java_problem() -> str | None:
    try:
        require_java()
    except EnvironmentMissing as exc:
        return exc.message
    return None


#: Modules whose tests take longest (measured in CI: the README's commands about 7
#: minutes in one test, the Spark cluster 3, a hypothesis search near 2), run
#: first, so that workers fed one test at a time (tests/scheduling.py) end together
#: instead of one of them finishing a long test alone.
FIRST = (
    "test_readme_commands.py",
    "test_pipeline_cluster.py",
    "test_grade.py",
    "test_install.py",
    "test_cos418_package.py",
    "test_stateful_model.py",
    "test_pipeline_graph.py",
    "test_teeth.py",
    "test_pipeline_lemmas.py",
    "test_pipeline_runners.py",
    # then modules with tests of 30-55 s each (CI, stop 36): the longest first
    # leaves only short tests for the end
    "test_induction.py",
    "test_lemmas.py",
    "test_conformance_reference_everywhere.py",
)


def _first(item: pytest.Item) -> int:
    name = item.path.name
    return FIRST.index(name) if name in FIRST else len(FIRST)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--shuffle",
        type=int,
        metavar="SEED",
        default=None,
        help="run the tests in an order shuffled with SEED (make test-repeat): a test "
        "that passes only in conftest's order, or beside one neighbour, shows",
    )


def pytest_report_header(config: pytest.Config) -> str | None:
    seed = config.getoption("shuffle")
    if seed is None:
        return None
    return f"tests shuffled with seed {seed} (--shuffle={seed} runs this order again)"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    seed = config.getoption("shuffle")
    if seed is None:
        items.sort(key=_first)  # stable: each module's tests keep their order
    else:  # every xdist worker shuffles alike: the same seed, the same collection
        random.Random(seed).shuffle(items)
    problem = _java_problem()
    if problem is None:
        return
    skip = pytest.mark.skip(reason=f"tlc test skipped: {problem}")
    for item in items:
        if "tlc" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def tlc_jar() -> Path:
    """The pinned, verified TLC jar in the project's .cache/ (fetched if absent)."""
    return fetch_tlc(ROOT / ".cache")


@pytest.fixture
def toy_project(tmp_path: Path, tlc_jar: Path) -> Path:
    """A throwaway project root with tests/data/project/spec and the jar in .cache/."""
    shutil.copytree(DATA / "project", tmp_path / "proj")
    cache = tmp_path / "proj" / ".cache"
    cache.mkdir()
    (cache / "tla2tools.jar").symlink_to(tlc_jar)
    return tmp_path / "proj"


@pytest.fixture(scope="session")
def go_reference_node() -> Iterator[Path]:
    """The Go reference node, built once into a directory of its own that the
    sandbox's fresh uid can reach (pytest's temporary directories are private to
    their user, and a run's own folder is hidden from the programs it runs)."""
    from redletter.conformance.gonode import build_reference_go

    where = Path(tempfile.mkdtemp(prefix="rl-test-go-"))
    try:
        where.chmod(0o755)
        binary = build_reference_go(where / "reference-go")
        binary.chmod(0o755)
        yield binary
    finally:
        shutil.rmtree(where, ignore_errors=True)
