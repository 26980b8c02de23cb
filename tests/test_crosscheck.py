"""The exact cross-check of the Python model against TLC's DOT dump."""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from redletter.check import check_models
from redletter.manifest import ModelEntry, load_manifest
from redletter.project import Project
from redletter.python_model.actions import ACTION_NAMES, init_states, send_app
from redletter.python_model.config import ModelConfig, load_model
from redletter.python_model.crosscheck import (
    CrosscheckHook,
    LabelReader,
    TlcGraph,
    _explore_beside,
    compare_graphs,
    crosscheck,
    dump_args,
    format_result,
    read_tlc_graph,
    tlc_trace_length,
)
from redletter.python_model.engines import load_engine
from redletter.python_model.explore import ExploreResult, explore
from redletter.python_model.state import State, to_tla
from redletter.python_model.values import print_state
from redletter.tlc import TlcResult, run_tlc

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "spec"
PROJECT = Project(ROOT)
MANIFEST = load_manifest(SPEC / "manifest.json")


@dataclass(frozen=True)
class Token2:
    cfg: ModelConfig
    tlc: TlcGraph
    result: TlcResult
    py: ExploreResult


@pytest.fixture(scope="module")
def token2(tlc_jar: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Token2]:
    """One TLC run of MCToken2 with its graph dumped, read, and explored in Python."""
    cfg = load_model("MCToken2", SPEC)
    base = tmp_path_factory.mktemp("dot") / "MCToken2"
    result = run_tlc(
        "MCToken2",
        spec_dir=SPEC,
        jar=tlc_jar,
        cache_dir=ROOT / ".cache",
        check_deadlock=False,
        workers=1,  # the depth is compared: with several workers TLC does not promise it
        extra_args=dump_args(base),
        small=True,
    )
    py = explore(cfg, graph=True)
    assert py.graph is not None
    reader = LabelReader(cfg, py.graph.states[0])
    yield Token2(cfg, read_tlc_graph(cfg, base.with_suffix(".dot"), reader), result, py)


def _py_state(cfg: ModelConfig, *path: tuple[str, int]) -> State:
    s = init_states(cfg)[0]
    for src_dst, m in path:
        nxt = send_app(cfg, s, src_dst.split(">"), m)
        assert nxt is not None
        s = nxt
    return s


def _index(tlc: TlcGraph, s: State) -> int:
    return tlc.states.index(s)


def _indent(s: State, cfg: ModelConfig) -> list[str]:
    return ["      " + line for line in print_state(to_tla(cfg, s)).split("\n")]


@pytest.mark.tlc
@pytest.mark.slow
def test_mctoken2_is_exact(token2: Token2) -> None:
    r = compare_graphs(token2.cfg, token2.tlc, token2.result, token2.py, manifest_distinct=5462)
    assert r.exact, format_result(r)
    assert r.summary() == "exact (5462/9527)"
    assert token2.tlc.stutter_lines == 5462  # FairSpec + a temporal property: one each
    assert format_result(r) == [
        "MCToken2: cross-check exact: 5462 states, 9527 states generated, 9526 edges,"
        " the same in TLC and the Python model."
    ]


@pytest.mark.tlc
@pytest.mark.slow
def test_mctoken2_is_exact_with_the_parallel_explorer(token2: Token2) -> None:
    # `redletter crosscheck`'s Python side on two partitions (worker processes from the
    # first level: TLC has ended) gives the same graph as TLC's, the same fixture's run
    engine = load_engine("MCToken2", SPEC)
    py = _explore_beside(
        engine, SPEC, must_fail=False, liveness=True, workers=2, tlc_done=lambda: True
    )
    assert py.workers and py.graph is not None and py.graph.enabled
    r = compare_graphs(engine, token2.tlc, token2.result, py, manifest_distinct=5462)
    assert r.exact, format_result(r)
    assert r.summary() == "exact (5462/9527)"


@pytest.mark.tlc
@pytest.mark.slow
def test_a_dropped_tlc_edge_is_shown_with_a_shortest_path(token2: Token2) -> None:
    cfg, tlc = token2.cfg, token2.tlc
    one = _py_state(cfg, ("p1>p2", 1))
    two = _py_state(cfg, ("p1>p2", 1), ("p1>p2", 1))
    src, dst = _index(tlc, one), _index(tlc, two)
    keep = [
        j
        for j in range(len(tlc.edge_src))
        if not (tlc.edge_src[j] == src and tlc.edge_dst[j] == dst)
    ]
    assert len(keep) == len(tlc.edge_src) - 1
    dropped = replace(
        tlc,
        edge_src=array("i", (tlc.edge_src[j] for j in keep)),
        edge_action=array("b", (tlc.edge_action[j] for j in keep)),
        edge_dst=array("i", (tlc.edge_dst[j] for j in keep)),
    )
    r = compare_graphs(cfg, dropped, token2.result, token2.py, manifest_distinct=5462)
    assert r.summary() == "MISMATCH"
    assert format_result(r) == [
        "MCToken2: cross-check MISMATCH",
        "  edge lines in the DOT dump: TLC 9525, Python 9526",
        "  edges only in Python: 1",
        '  edge only in the Python model\'s graph: SendApp(c = <<"p1", "p2">>, m = 1)'
        " from the state",
        *_indent(one, cfg),
        "    to the state",
        *_indent(two, cfg),
        "    shortest path to its source in the Python model's graph:"
        ' Init -> SendApp(c = <<"p1", "p2">>, m = 1)',
    ]


@pytest.mark.tlc
@pytest.mark.slow
def test_an_added_tlc_state_is_shown_with_a_shortest_path(token2: Token2) -> None:
    cfg, tlc = token2.cfg, token2.tlc
    one = _py_state(cfg, ("p1>p2", 1))
    # a state no behaviour reaches: p1 sent a token that p2 already has
    extra = replace(one, local=(1, 1))
    assert extra not in set(tlc.states)
    src = _index(tlc, one)
    added = replace(
        tlc,
        states=[*tlc.states, extra],
        edge_src=array("i", [*tlc.edge_src, src]),
        edge_action=array("b", [*tlc.edge_action, ACTION_NAMES.index("InternalEvent")]),
        edge_dst=array("i", [*tlc.edge_dst, len(tlc.states)]),
        stutter_lines=tlc.stutter_lines + 1,
    )
    r = compare_graphs(cfg, added, token2.result, token2.py, manifest_distinct=5462)
    assert format_result(r) == [
        "MCToken2: cross-check MISMATCH",
        "  state lines in the DOT dump: TLC 5463, Python 5462",
        "  edge lines in the DOT dump: TLC 9527, Python 9526",
        "  states only in TLC: 1",
        "  edges only in TLC: 1",
        "  state only in TLC's graph:",
        *_indent(extra, cfg),
        "    shortest path in TLC's graph:"
        ' Init -> SendApp(c = <<"p1", "p2">>, m = 1) -> InternalEvent(?)',
        "  edge only in TLC's graph: InternalEvent(?) from the state",
        *_indent(one, cfg),
        "    to the state",
        *_indent(extra, cfg),
        "    shortest path to its source in TLC's graph:"
        ' Init -> SendApp(c = <<"p1", "p2">>, m = 1)',
    ]


@pytest.mark.tlc
@pytest.mark.slow
@pytest.mark.long  # `make check` cross-checks every default model end to end
def test_mcsequential_end_to_end_is_exact(tlc_jar: Path) -> None:
    phases: list[str] = []
    r = crosscheck("MCSequential", PROJECT, workers=1, on_phase=phases.append)
    assert r.exact, format_result(r)
    assert r.summary() == "exact (4098/6215)"
    assert phases == ["tlc", "explore", "parse", "compare"]
    assert set(r.seconds) == {"tlc", "explore", "parse", "compare"}


@pytest.mark.tlc
def test_a_must_fail_model_fails_with_the_same_invariant(tlc_jar: Path) -> None:
    r = crosscheck("MCLateRedLetterFailure", PROJECT)
    assert r.exact, format_result(r)
    assert r.summary() == "same violation (Lemma0)"
    assert r.mode == "violation"
    assert r.total <= r.counts["tlc trace"]


@pytest.mark.tlc
def test_check_runs_tlc_once_and_deletes_the_dump(tlc_jar: Path) -> None:
    entries = MANIFEST.select(["MCLateRedLetterFailure"])
    given: list[list[str]] = []

    def tlc_args(entry: ModelEntry) -> list[str]:
        given.append(hook.tlc_args(entry))
        return given[-1]

    with CrosscheckHook(SPEC) as hook:
        rows = check_models(PROJECT, entries, crosscheck_hook=hook, tlc_args=tlc_args)
        assert len(given) == 1 and given[0][:2] == ["-dump", "dot,actionlabels"]
        tmp = Path(given[0][2]).parent
        assert list(tmp.iterdir()) == []
    assert not tmp.exists()
    assert rows[0].crosscheck == "same violation (Lemma0)"
    assert [r.summary() for r in hook.results] == ["same violation (Lemma0)"]


def test_the_memoised_label_reader_agrees_with_parse_state() -> None:
    cfg = load_model("MCToken2", SPEC)
    s = _py_state(cfg, ("p1>p2", 1), ("p1>p2", 1))
    raw = print_state(to_tla(cfg, s)).replace("\\", "\\\\").replace('"', '\\"')
    raw = raw.replace("\n", "\\n")
    reader = LabelReader(cfg, init_states(cfg)[0])
    assert reader.state(raw) == s == reader.slow(raw)
    assert reader.state(raw) == s
    assert reader.misses == 10  # each variable parsed once, then memoised
    # another order of the variables, and a one-line label, take the same path
    assert reader.state("/\\\\ " + "\\n/\\\\ ".join(reversed(raw[4:].split("\\n/\\\\ ")))) == s


def test_tlc_trace_length_counts_the_states() -> None:
    trace = "The behavior up to this point is:\n\n1: <Initial predicate>\n/\\ x = 1\n\n"
    trace += "2: <Next line 3, col 1 to line 3, col 9 of module M>\n/\\ x = 2\n"
    assert tlc_trace_length(trace) == 2


@pytest.mark.tlc
def test_the_crosscheck_command_prints_the_verdict(
    tlc_jar: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from redletter.cli import main

    code = main(["crosscheck", "MCNonFifoFailure", "--root", str(ROOT)])
    out = capsys.readouterr().out
    assert code == 0, out
    # What is promised: the Python counterexample is a shortest one (5 states: the
    # breadth-first explorer's, the same on every run); TLC with several workers
    # promises a counterexample, not a shortest one, so its length is any from 5 up.
    first = out.splitlines()[0]
    got = re.fullmatch(
        r"MCNonFifoFailure: cross-check exact: TLC and the Python model both report Lemma0"
        r" violated \(Python counterexample: 5 states, TLC's: (\d+)\)\.",
        first,
    )
    assert got is not None, first
    assert int(got.group(1)) >= 5, first
