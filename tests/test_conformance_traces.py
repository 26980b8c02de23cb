"""Conformance traces: edge tours cover the state graph; ITF files round-trip."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from redletter.conformance.traces import (
    coverage,
    edge_tours,
    generate,
    model_source,
    random_walks,
    read_trace,
    write_trace,
)
from redletter.errors import InputError
from redletter.python_model.config import load_model
from redletter.python_model.explore import explore

SPEC = Path(__file__).resolve().parent.parent / "spec"


def test_edge_tours_cover_every_edge_of_mctoken2() -> None:
    cfg = load_model("MCToken2", SPEC)
    tours = edge_tours(cfg, model_source("MCToken2", SPEC))
    cov = coverage(cfg, tours)
    graph = explore(cfg, graph=True).graph
    assert graph is not None
    assert cov.edges_total == len(set(graph.edges())) == cov.edges_covered
    assert cov.channel_recordings > 0 and cov.two_message_recordings > 0


def test_trace_files_round_trip_with_action_and_params(tmp_path: Path) -> None:
    traces = generate("MCToken2", SPEC, walks=1, seed=5)
    for t in (traces[0], traces[-1]):
        path = write_trace(tmp_path / f"{t.name}.itf.json", t)
        assert read_trace(path) == t
        doc = json.loads(path.read_text())
        assert doc["states"][0]["#meta"] == {"index": 0, "action": "Init", "params": {}}
        assert doc["states"][1]["#meta"]["action"] == t.steps[0][0]


def test_tampered_trace_is_rejected(tmp_path: Path) -> None:
    t = generate("MCToken2", SPEC, goals=False)[1]
    path = write_trace(tmp_path / "t.itf.json", t)
    doc = json.loads(path.read_text())
    doc["states"][1]["local"]["p1"] = {"#bigint": "7"}
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError) as err:
        read_trace(path)
    assert err.value.message == (
        f"{path}: states[1] is not the state the model reaches by the steps before it"
    )


def test_random_walks_are_deterministic_and_concurrent() -> None:
    a = random_walks(4, seed=3)
    assert a == random_walks(4, seed=3)
    assert a != random_walks(4, seed=4)
    assert all(len(t.steps) == 80 for t in a)


@pytest.mark.slow
# CI time: `make test-long` runs it; test_random_walks_are_deterministic_and_concurrent is its
# fast cousin
@pytest.mark.long
def test_mcconcurrent_traces_reach_concurrent_snapshots() -> None:
    cfg = load_model("MCConcurrent", SPEC)
    traces = generate("MCConcurrent", SPEC)
    cov = coverage(cfg, traces)
    assert cov.edges_covered == cov.edges_total
    assert cov.concurrent_snapshots > 0
    assert any(t.source == "z3 goal concurrent" for t in traces)
