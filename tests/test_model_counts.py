"""The Python explorer reproduces spec/manifest.json for every default model whose
spec it mirrors (Chandy-Lamport's and the variants' engines), and its counterexamples
replay step by step through the engine's ``Next``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from redletter.manifest import ModelEntry, load_manifest
from redletter.python_model.config import load_model
from redletter.python_model.engine import Engine
from redletter.python_model.engines import load_engine
from redletter.python_model.explore import ExploreProgress, explore

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "spec"
MANIFEST = load_manifest(SPEC / "manifest.json")
#: The default models whose spec the Python model mirrors (the others say "python": false).
MIRRORED = [e for e in MANIFEST.suite("default") if e.python]
SLOW_ABOVE = 10_000  # distinct states


def _param(entry: ModelEntry) -> object:
    # The larger models' counts are also checked by `make check`'s cross-check.
    marks = [pytest.mark.slow, pytest.mark.long] if entry.distinct > SLOW_ABOVE else []
    return pytest.param(entry, id=entry.model, marks=marks)


@pytest.mark.parametrize("entry", [_param(e) for e in MIRRORED])
def test_counts_and_verdict_match_the_manifest(entry: ModelEntry) -> None:
    result = explore(load_engine(entry.model, SPEC))
    if entry.expect == "success":
        assert result.violation is None
        assert (result.distinct, result.total, result.depth) == (
            entry.distinct,
            entry.total,
            entry.depth,
        )
    elif entry.expect == "liveness failure":
        from redletter.python_model.liveness import full_check

        explored, live = full_check(load_engine(entry.model, SPEC))
        assert explored.violation is None and live is not None
        assert live.result == "liveness failure"
    else:
        assert entry.expect == "safety failure"
        assert result.violation is not None
        assert result.violation.name == entry.violated
        assert result.violation.kind == "invariant"


@pytest.mark.parametrize(
    "entry", [e for e in MIRRORED if e.expect != "success"], ids=lambda e: e.model
)
def test_counterexample_replays_to_the_violation(entry: ModelEntry) -> None:
    engine = load_engine(entry.model, SPEC)
    if entry.expect == "liveness failure":
        _lasso_replays(entry)
        return
    result = explore(engine)
    assert result.violation is not None
    trace = result.violation.trace
    assert trace[0].action == "Init" and trace[0].state in engine.init_states()
    s = trace[0].state
    for st in trace[1:]:
        s = _step(engine, s, st.action, st.params)
        assert s == st.state
    assert engine.violated_invariant(s) == result.violation.name
    for before in trace[:-1]:
        assert engine.violated_invariant(before.state) is None


def _step(engine: Engine[Any], s: object, action: str, params: Mapping[str, object]) -> object:
    """The successor of ``s`` by ``action`` with ``params``, through the engine's
    ``Next`` (a step the engine does not generate fails the test)."""
    names = engine.action_names
    found = [
        t
        for a, raw, t in engine.successors(s)
        if names[a] == action and engine.params(a, raw) == params
    ]
    assert found, f"{action}{dict(params)} is not a step of {engine.name} from this state"
    return found[0]


def _lasso_replays(entry: ModelEntry) -> None:
    """The lasso of a liveness failure is a behaviour: each step replays, the goal
    never holds on it, and the cycle closes (or the last state may stutter)."""
    from redletter.python_model.liveness import full_check

    engine = load_engine(entry.model, SPEC)
    _, live = full_check(engine)
    assert live is not None and live.violated is not None
    v = live.violated
    assert v.lasso is not None and v.prop.q is not None
    steps = v.lasso.steps
    assert steps[0].action == "Init" and steps[0].state in engine.init_states()
    s = steps[0].state
    for st in steps[1:]:
        s = _step(engine, s, st.action, st.params)
        assert s == st.state
    assert any(v.prop.p(st.state) for st in steps)
    start = next(i for i, st in enumerate(steps) if v.prop.p(st.state))
    assert not any(v.prop.q(st.state) for st in steps[start:])
    if v.lasso.back_to is not None:  # the cycle's last state steps back to its first
        back = steps[v.lasso.back_to - 1].state
        assert any(t == back for _, _, t in engine.successors(s))


def test_graph_has_one_edge_per_generated_transition_inside_the_constraint(
    tmp_path: Path,
) -> None:
    # MCToken2 bounds its application in the guards: every generated transition is
    # an edge between distinct states
    cfg = load_model("MCToken2", SPEC)
    result = explore(cfg, graph=True)
    assert result.graph is not None
    g = result.graph
    assert len(g.states) == result.distinct
    assert g.initial == (0,)
    assert len(g.edge_src) == result.total - 1
    assert {a for _, a, _ in g.edges()} == {
        "SendApp",
        "ReceiveApp",
        "ReceiveRedLetter",
        "StartSnapshot",
    }
    # with the state constraint AppActionBound too, transitions out of it are no edges:
    # TLC's edge lines for MCToken2 so bounded, without its stuttering self-loops
    for f in SPEC.glob("*.tla"):
        (tmp_path / f.name).write_text(f.read_text())
    text = (
        (SPEC / "MCToken2.cfg")
        .read_text()
        .replace("SPECIFICATION FairSpec", "SPECIFICATION FairSpec\nCONSTRAINT AppActionBound")
    )
    (tmp_path / "MCToken2.cfg").write_text(text)
    bounded = explore(load_model("MCToken2", tmp_path), graph=True)
    assert bounded.graph is not None
    assert (bounded.distinct, len(bounded.graph.edge_src)) == (3370, 5934)


def test_progress_is_reported() -> None:
    cfg = load_model("MCToken2", SPEC)
    seen: list[ExploreProgress] = []
    explore(cfg, on_progress=seen.append, progress_every=500)
    assert seen and all(p.distinct >= 500 for p in seen)
    assert [p.distinct for p in seen] == sorted(p.distinct for p in seen)


@pytest.mark.slow
@pytest.mark.long
def test_large_model_matches_the_manifest() -> None:
    (entry,) = MANIFEST.select(["MCDiffusingComplete3"])
    result = explore(load_model(entry.model, SPEC))
    assert (result.distinct, result.total, result.depth) == (
        entry.distinct,
        entry.total,
        entry.depth,
    )
