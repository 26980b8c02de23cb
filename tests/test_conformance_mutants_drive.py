"""The mutant zoo through the drive judge (redletter.conformance.judges.drive): every mutant fails,
shrunk to a minimal schedule with a divergence naming the snapshot; the reference
passes the same schedules."""

from __future__ import annotations

import re
import sys
from functools import cache
from pathlib import Path

import pytest

from redletter.conformance.judges.drive import (
    CommandNode,
    InProcessNode,
    JudgeResult,
    NodeSpec,
    judge_trace,
)
from redletter.conformance.nodes.mutants import MUTANTS
from redletter.conformance.nodes.reference import ReferenceNode
from redletter.conformance.shrink import shrink
from redletter.conformance.traces import Trace, make_step, model_source
from redletter.conformance.walks import model_walk
from redletter.python_model.config import ModelConfig, load_model
from tests.test_conformance_expected import check_node_expectation

SPEC = Path(__file__).resolve().parent.parent / "spec"
#: the last two see order (messages of distinct values) and asymmetry (|In(p)| and
#: |Out(p)| differ): newest-first recording and stopping after |Out(p)| red letters
#: pass every walk of the first three
MODELS = ("MCToken2", "MCTokenComplete3", "MCConcurrent", "MCTokenValues", "MCTokenAsymmetric3")


@cache
def _cfg(name: str) -> ModelConfig:
    return load_model(name, SPEC)


def _walk(model: str, seed: int) -> Trace:
    tla, cfg_text = model_source(model, SPEC)
    steps = tuple(make_step(a, p) for a, p in model_walk(_cfg(model), seed))
    return Trace(f"{model}-walk-{seed}", model, f"model_walk seed {seed}", steps, tla, cfg_text)


def _node(name: str, tmp_path: Path) -> NodeSpec:
    if name == "crash-on-concurrent":  # a crash is a dead process, not an exception here
        argv = (sys.executable, "-m", "redletter.conformance.nodes.mutants", name)
        return CommandNode(argv, hosted=True, isolate=False)
    return InProcessNode(MUTANTS[name].factory)


def _first_failure(name: str, node: NodeSpec, tmp_path: Path) -> JudgeResult:
    # a mutant that misbehaves only with concurrent snapshots passes every walk of the
    # one-snapshot models (80 node processes started for nothing): its model first
    first = ("MCConcurrent",) if name.endswith("-concurrent") else ()
    for model in (*first, *(m for m in MODELS if m not in first)):
        for seed in range(40):
            r = judge_trace(_walk(model, seed), node, cfg=_cfg(model), log_dir=tmp_path)
            if r.verdict == "fail":
                return r
    raise AssertionError(f"mutant {name} passed every walk of {MODELS}, seeds 0-39")


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_drive_judge_fails_every_mutant_minimally(name: str, tmp_path: Path) -> None:
    node = _node(name, tmp_path)
    failing = _first_failure(name, node, tmp_path)
    cfg = _cfg(failing.trace.model)
    small = shrink(failing, node, judge=lambda t: judge_trace(t, node, cfg=cfg, log_dir=tmp_path))
    r = small.result
    text = r.explanation()
    assert r.verdict == "fail", failing.trace.name
    assert len(small.trace.steps) <= len(failing.trace.steps)
    assert re.search(r"snapshot \d|snapshots? ", text), f"{failing.trace.name}: {text}"
    assert re.search(r"p\d", text), f"{failing.trace.name}: {text}"
    ref = judge_trace(small.trace, InProcessNode(ReferenceNode), cfg=cfg, log_dir=tmp_path)
    assert ref.verdict == "pass", f"{failing.trace.name}: {ref.explanation()}"
    # the report's expected snapshot is the model's, conserves the tokens, and the node's
    # own run differs from it where the divergence is (issue 29)
    check_node_expectation(cfg, small.trace, r, node, tmp_path)
