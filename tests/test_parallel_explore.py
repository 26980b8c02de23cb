"""``explore --workers N``: the breadth-first search on N partitions gives the manifest's
counts on every model, the same shortest counterexample whatever N and wherever the
partitions run, the same graph and liveness verdicts as the single-process explorer,
and a clear error when a worker dies."""

from __future__ import annotations

import os
import random
import signal
from collections import Counter
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from redletter.errors import EnvironmentMissing
from redletter.manifest import ModelEntry, load_manifest
from redletter.python_model.engines import load_engine
from redletter.python_model.explore import ExploreProgress, Graph, explore
from redletter.python_model.liveness import check_liveness, fair_bit_table, temporal_of
from redletter.python_model.parallel import (
    FingerprintTable,
    _InProcess,
    _Options,
    _Processes,
    default_workers,
    explore_parallel,
)

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "spec"
MANIFEST = load_manifest(SPEC / "manifest.json")
MIRRORED = [e for e in MANIFEST.models if e.python]
#: Above this many states a model's run is slow (and its counts are also `make check`'s,
#: whose cross-check explores every default model on two workers).
SLOW_ABOVE = 10_000


def _param(entry: ModelEntry) -> object:
    marks: list[Any] = []
    if entry.suite != "default" or entry.distinct > SLOW_ABOVE:
        marks = [pytest.mark.slow, pytest.mark.long]
    return pytest.param(entry, id=entry.model, marks=marks)


@pytest.mark.parametrize("entry", [_param(e) for e in MIRRORED])
def test_two_workers_give_the_manifests_verdict_and_counts(entry: ModelEntry) -> None:
    # worker processes from the level whose frontier reaches 200 states (the smallest
    # models stay in this process: the same functions, as the next test shows)
    r = explore_parallel(entry.model, SPEC, workers=2, spawn_frontier=200)
    if entry.expect == "safety failure":
        single = explore(load_engine(entry.model, SPEC))
        assert r.violation is not None and single.violation is not None
        assert r.violation.name == entry.violated
        # a shortest counterexample: as long as the single-process explorer's
        assert len(r.violation.trace) == len(single.violation.trace)
        _replays(entry.model, r.violation.trace, entry.violated)
        return
    assert r.violation is None
    if entry.distinct:
        assert (r.distinct, r.total, r.depth) == (entry.distinct, entry.total, entry.depth)
    assert sum(w.states for w in r.workers) == r.distinct


def _replays(model: str, trace: Any, violated: str | None) -> None:
    """The trace is a behaviour of the model, ending at its first violation."""
    engine = load_engine(model, SPEC)
    assert trace[0].action == "Init" and trace[0].state in engine.init_states()
    for s, t in pairwise(trace):
        assert engine.violated_invariant(s.state) is None
        steps = [
            (engine.action_names[a], engine.params(a, raw), u)
            for a, raw, u in engine.successors(s.state)
        ]
        assert (t.action, t.params, t.state) in steps
    last = trace[-1].state
    assert engine.violated_invariant(last) == violated


@pytest.mark.parametrize("model", ["MCToken2", "MCBarrierAligned", "MCLazyToken2"])
def test_in_process_and_worker_processes_explore_alike(model: str) -> None:
    progress: list[ExploreProgress] = []
    here = explore_parallel(model, SPEC, workers=2, spawn_frontier=None)
    there = explore_parallel(model, SPEC, workers=2, spawn_frontier=0, on_progress=progress.append)
    assert (here.distinct, here.total, here.depth) == (there.distinct, there.total, there.depth)
    assert [w.states for w in here.workers] == [w.states for w in there.workers]
    assert all(w.peak_rss == 0 for w in here.workers)  # no worker process was started
    assert all(w.peak_rss > 0 and w.cpu > 0 for w in there.workers)
    assert there.peak_rss > 0
    # one report a level, the last with the counts of the whole search
    assert len(progress) == there.depth
    last = progress[-1]
    assert (last.distinct, last.total, last.queue) == (there.distinct, there.total, 0)


@pytest.mark.parametrize("model", ["MCNonFifoFailure", "MCMixedSnapshotsFailure"])
def test_the_counterexample_is_the_same_whatever_the_workers(model: str) -> None:
    # The parents kept by the smallest fingerprint: the BFS tree, hence the trace, does
    # not depend on the number of partitions nor on where they run.
    runs = [
        explore_parallel(model, SPEC, workers=n, spawn_frontier=spawn)
        for n, spawn in ((2, None), (3, None), (2, 0), (3, 0), (1, None))
    ]
    traces = [r.violation.trace for r in runs if r.violation is not None]
    assert len(traces) == len(runs)
    assert all(t == traces[0] for t in traces)


def _edges(g: Graph) -> Counter[tuple[Any, str, Any]]:
    return Counter((g.states[s], a, g.states[d]) for s, a, d in g.edges())


def _depths(g: Graph) -> dict[Any, int]:
    out: dict[Any, int] = {}
    for i, s in enumerate(g.states):
        d, j = 0, i
        while g.parent[j] >= 0:
            j, d = g.parent[j], d + 1
        out[s] = d
    return out


@pytest.mark.parametrize(
    ("model", "spawn"), [("MCSequential", 0), ("MCNeverForwardLivenessFailure", None)]
)
def test_the_assembled_graph_is_the_single_process_explorers(model: str, spawn: int | None) -> None:
    engine = load_engine(model, SPEC)
    temporal = temporal_of(engine)
    single = explore(engine, fair_bits=fair_bit_table(engine, temporal.fairness))
    par = explore_parallel(model, SPEC, workers=2, graph=True, liveness=True, spawn_frontier=spawn)
    g, h = single.graph, par.graph
    assert g is not None and h is not None
    assert set(g.states) == set(h.states) and len(h.states) == par.distinct
    assert {g.states[i] for i in g.initial} == {h.states[i] for i in h.initial}
    assert _edges(g) == _edges(h)
    assert _depths(g) == _depths(h)  # BFS parents: one level up
    assert dict(zip(g.states, g.enabled, strict=True)) == dict(
        zip(h.states, h.enabled, strict=True)
    )
    assert sorted(h.edge_src) == list(h.edge_src)  # by source, as the liveness check reads


@pytest.mark.parametrize(
    "model",
    [e.model for e in MIRRORED if e.suite == "default" and e.expect == "liveness failure"]
    + ["MCToken2", "MCLazyToken2"],
)
def test_liveness_on_the_workers_edges_gives_the_same_verdicts(model: str) -> None:
    engine = load_engine(model, SPEC)
    temporal = temporal_of(engine)
    single = explore(engine, fair_bits=fair_bit_table(engine, temporal.fairness))
    par = explore_parallel(model, SPEC, workers=2, liveness=True, spawn_frontier=300)
    assert par.graph is None and par.fair is not None  # no state in this process
    want, _ = check_liveness(engine, explored=single, temporal=temporal)
    got, _ = check_liveness(engine, explored=par, temporal=temporal)
    assert [v.holds for v in got.verdicts] == [v.holds for v in want.verdicts]
    assert (got.distinct, got.edges) == (want.distinct, want.edges)
    for v, w in zip(got.verdicts, want.verdicts, strict=True):
        if v.lasso is None:
            continue
        assert w.lasso is not None
        # ids go level by level, as the single-process explorer's: the lasso's prefix
        # starts as shallow
        assert len(v.lasso.prefix) <= len(w.lasso.prefix)
        steps = v.lasso.steps
        s = steps[0].state
        assert s in engine.init_states()
        for st in steps[1:]:
            assert any(
                engine.action_names[a] == st.action
                and engine.params(a, raw) == st.params
                and u == st.state
                for a, raw, u in engine.successors(s)
            )
            s = st.state


def test_a_killed_worker_is_named_with_its_signal() -> None:
    engine = load_engine("MCToken2", SPEC)
    opts = _Options("MCToken2", str(SPEC), False, False, False)
    local = _InProcess(2, engine, opts)
    rows: list[list[tuple[int, Any]]] = [[], []]
    for s in engine.init_states():
        rows[engine.fingerprint(s) % 2].append((engine.fingerprint(s), s))
    local.seed(rows)
    workers = _Processes(local.parts, opts)
    os.kill(workers.procs[1].pid, signal.SIGKILL)
    workers.procs[1].wait()
    with pytest.raises(EnvironmentMissing) as e:
        workers.round()
    assert e.value.code == "RL-ENV-WORKER"
    assert e.value.message == (
        "worker 1 of the parallel exploration was killed by SIGKILL (the kernel's"
        " out-of-memory killer sends it): run with fewer --workers, or on a machine with"
        " more memory"
    )
    assert all(p.poll() is not None for p in workers.procs)  # none is left behind


def test_the_default_is_the_cores_this_process_may_run_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 3, 5})
    assert default_workers() == 3


def test_the_fingerprint_table_holds_what_a_set_would() -> None:
    rng = random.Random(31)
    fps = [0, -1, 1, 2**63 - 1, -(2**63), 4096, 8192, -4096]  # 0, extremes, same low bits
    fps += [rng.getrandbits(64) - 2**63 for _ in range(20_000)]
    table = FingerprintTable(ids=True)
    plain = FingerprintTable(ids=False)
    for i, fp in enumerate(fps):
        assert table.get(fp) == -1, f"seed 31, item {i}"
        table.add(fp, i)
        plain.add(fp)
    assert len(table) == len(plain) == len(fps)
    assert all(table.get(fp) == i for i, fp in enumerate(fps))
    assert all(plain.get(fp) == 0 for fp in fps)
    assert all(table.get(fp) == -1 for fp in (3, 5, 2**62 + 7) if fp not in fps)
