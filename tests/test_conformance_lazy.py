"""Lazy red letters in the conformance harness: the reference node (and EWD 864's eager
schedule) pass the lazy judge on every generated trace of every passing lazy model;
every mutant is caught, the two that match the must-fail models for the reason TLC's
counterexample shows."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from redletter.conformance import protocol as p
from redletter.conformance.judges.drive import CommandNode, InProcessNode, JudgeResult
from redletter.conformance.judges.lazy import IDLE_PATIENCE, generate, judge_trace
from redletter.conformance.node import NodeFactory, NodeHost
from redletter.conformance.nodes.lazy import MUTANTS, EagerNode, LazyReferenceNode
from redletter.conformance.protocol.docs import render_markdown
from redletter.conformance.traces import Trace, make_step
from redletter.errors import InputError
from redletter.manifest import load_manifest
from redletter.python_model.engines import family_of

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "spec"
SEED = 20260513  # every trace's source names it; failures print the trace's source
MANIFEST = {m.model: m for m in load_manifest(SPEC / "manifest.json").models}
LAZY = [m for m in MANIFEST if family_of(m, SPEC) == "LazyChandyLamport"]
PASSING = [m for m in LAZY if MANIFEST[m].expect == "success"]


def _traces(model: str) -> list[Trace]:
    return generate(model, SPEC, walks=8, seed=SEED)


def _judge(traces: list[Trace], factory: NodeFactory, tmp: Path) -> list[JudgeResult]:
    return [judge_trace(t, InProcessNode(factory), log_dir=tmp) for t in traces]


def _failures(results: list[JudgeResult]) -> list[str]:
    return [
        f"{r.trace.name} ({r.trace.source}): {r.verdict}: {r.explanation()}"
        for r in results
        if r.verdict != "pass"
    ]


def test_the_lazy_models_of_the_manifest() -> None:
    assert PASSING == ["MCLazyToken2", "MCLazyComplete3"]
    assert sorted(set(LAZY) - set(PASSING)) == [
        "MCLazyLateRedLetterFailure",
        "MCLazyUnpaidFailure",
    ]


@pytest.mark.parametrize("model", PASSING)
@pytest.mark.parametrize("factory", [LazyReferenceNode, EagerNode], ids=["reference", "eager"])
def test_correct_nodes_pass_every_generated_trace(
    model: str, factory: NodeFactory, tmp_path: Path
) -> None:
    """The reference node pays lazily, EagerNode as EWD 864 does (every red letter in
    the step that turns it red): both are schedules the spec allows."""
    traces = _traces(model)
    results = _judge(traces, factory, tmp_path)
    assert _failures(results) == []
    assert len(results) == len(traces) >= 10
    # the traces exercise every kind of step, and some payments at a send
    performed = [o for r in results for o in r.observations if not o.skipped]
    assert {o.action for o in performed} >= {
        "SendApp",
        "ReceiveApp",
        "ReceiveRedLetter",
        "StartSnapshot",
        "Idle",
    }
    if factory is LazyReferenceNode:
        assert any(
            o.action == "SendApp" and any(isinstance(s.msg, p.Marker) for s in o.sent)
            for o in performed
        )


@pytest.mark.parametrize("model", PASSING)
@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_every_mutant_is_caught(model: str, mutant: str, tmp_path: Path) -> None:
    kinds = {
        "SendAnyway": "app-before-red-letter",
        "NeverPays": "unpaid-red-letter",
        "RecordsWhenPaying": "missing-record-state",
        "PaysTwice": "unowed-red-letter",
    }
    results = _judge(_traces(model), MUTANTS[mutant].factory, tmp_path)
    failed = [r for r in results if r.verdict == "fail"]
    assert failed, f"{mutant} passed every trace of {model} (seed {SEED})"
    assert {r.divergence.kind for r in failed if r.divergence} == {kinds[mutant]}
    if mutant == "SendAnyway":  # the random walks catch it too, not only the send trace
        assert any("-walk-" in r.trace.name for r in failed), [r.trace.name for r in failed]


def _one(model: str, name: str, factory: NodeFactory, tmp: Path) -> JudgeResult:
    (trace,) = [t for t in _traces(model) if t.name == name]
    return judge_trace(trace, InProcessNode(factory), log_dir=tmp)


def test_send_anyway_breaks_lemma0_as_mclazylateredletterfailure(tmp_path: Path) -> None:
    """SendAnyway is MCLazyLateRedLetterFailure's override (MaySend <- SendAnyway), whose
    TLC counterexample violates Lemma0: an application message from a red machine
    overtakes the red letter it owes and reaches a white one.  The judge stops at that
    very send and names Lemma 0."""
    assert MANIFEST["MCLazyLateRedLetterFailure"].violated == "Lemma0"
    r = _one("MCLazyToken2", "MCLazyToken2-send-p1-1", MUTANTS["SendAnyway"].factory, tmp_path)
    assert r.verdict == "fail"
    assert r.explanation() == (
        "at step 2, SendApp p1 -> p2: p1 put app 1 on p1 -> p2 while it still owes the red "
        "letter of snapshot 1 there. The model: p1 pays the red letter of snapshot 1 on "
        "p1 -> p2 (marker 1) before app 1. Node p1: put app 1 on p1 -> p2 first. Why it "
        "matters: SendApp(c) requires MaySend(c): no application message enters a buffer "
        'that is still owed a red letter ("before p sends further messages along c"). p2, '
        "white in snapshot 1, receives app 1 before the red letter: it counts a message p1 "
        "sent after recording its state; the receipt is in p2's recorded state, the send is "
        "not in p1's, so the snapshot is not reachable from S0 (Lemma 0; TLC's "
        "counterexample of MCLazyLateRedLetterFailure)"
    )
    assert [t[0] for t in r.schedule] == ["StartSnapshot", "SendApp"]


def test_never_pays_breaks_liveness_as_mclazyunpaidfailure(tmp_path: Path) -> None:
    """NeverPays is MCLazyUnpaidFailure's override (RedLetterFairness <-
    NoRedLetterFairness), whose TLC counterexample is a liveness failure of
    SnapshotsComplete: a machine owes a red letter on a buffer it never sends on again,
    never pays it, and the snapshot never completes.  The judge finds it after the
    drain's idle turns, and says so in words."""
    assert MANIFEST["MCLazyUnpaidFailure"].expect == "liveness failure"
    r = _one("MCLazyToken2", "MCLazyToken2-quiet-p1-1", MUTANTS["NeverPays"].factory, tmp_path)
    assert r.verdict == "fail"
    assert r.explanation() == (
        f"at step 7, snapshot 1 never completes: p1 still owes its red letter on p1 -> p2 "
        f"after {IDLE_PATIENCE} idle turns in a row with nothing else to do. The model: "
        "RedLetterFairness (WF_vars(PayRedLetter(c, k))): a red letter owed is eventually "
        "paid, even on a buffer its machine never sends on again. Node p1: kept owing "
        "marker 1 on p1 -> p2. Why it matters: p2 never receives a red letter of snapshot 1 "
        "on p1 -> p2, so that buffer never turns red and the snapshot never completes "
        "(SnapshotsComplete; TLC's counterexample of MCLazyUnpaidFailure)"
    )
    assert r.drained == 6  # two rounds of idle turns... and the third ends it
    assert [o.describe() for o in r.observations] == [
        "#1 StartSnapshot p1: recorded state for snapshot 1",
        "#2 Idle p1",
        "#3 Idle p2",
        "#4 Idle p1",
        "#5 Idle p2",
        "#6 Idle p1",
        "#7 Idle p2",
    ]


def test_pays_twice_and_records_when_paying_in_words(tmp_path: Path) -> None:
    r = _one("MCLazyToken2", "MCLazyToken2-send-p1-1", MUTANTS["PaysTwice"].factory, tmp_path)
    assert r.explanation() == (
        "at step 5, Idle p1: p1 put marker 1 on p1 -> p2, a red letter it does not owe. The "
        "model: p1 owes no red letter of snapshot 1 on p1 -> p2: it has paid that red letter "
        "already. Node p1: put marker 1 on p1 -> p2. Why it matters: PayRedLetter(c, k) is "
        "enabled only while c \\in owed[k]: a machine owes each output buffer one red letter "
        "of each snapshot, from the moment it turns red (TurnRedLazily) until it pays it. A "
        "second red letter of snapshot 1 on p1 -> p2 makes p2 close a recording that is "
        "already closed, or close a later one too early (RedLetterInvariant: one red letter, "
        "or none and one owed)"
    )
    r = _one(
        "MCLazyToken2", "MCLazyToken2-quiet-p1-1", MUTANTS["RecordsWhenPaying"].factory, tmp_path
    )
    assert r.divergence is not None and r.divergence.why.endswith("(Lemma 0)")
    assert r.divergence.summary == (
        "StartSnapshot p1 turns p1 red in snapshot 1 but p1 recorded no local state"
    )


def test_a_marker_from_a_white_machine_is_a_divergence(tmp_path: Path) -> None:
    class Premature(LazyReferenceNode):
        def on_idle(self) -> None:
            if 1 not in self.snapshots:
                self.send(self.out_to[0], p.Marker(1))
            super().on_idle()

    trace = _traces("MCLazyToken2")[0]
    steps = (make_step("SendRedLetter", {"c": ["p1", "p2"], "k": 1}),)
    r = judge_trace(trace.with_steps(steps), InProcessNode(Premature), log_dir=tmp_path)
    assert r.divergence is not None
    assert (r.divergence.kind, r.divergence.model_did) == (
        "unowed-red-letter",
        "p1 owes no red letter of snapshot 1 on p1 -> p2: it is still white in that "
        "snapshot, so it owes nothing",
    )
    assert r.divergence.why.endswith("so the snapshot loses it (Lemma 0)")


def test_skipped_steps_are_said_so_and_any_subsequence_is_a_schedule(tmp_path: Path) -> None:
    trace = next(t for t in _traces("MCLazyToken2") if t.name == "MCLazyToken2-quiet-p1-1")
    steps = (
        make_step("ReceiveRedLetter", {"c": ["p1", "p2"], "i": 1}),
        make_step("StartSnapshot", {"p": "p1", "k": 1}),
        make_step("StartSnapshot", {"p": "p1", "k": 1}),
        make_step("SendApp", {"c": ["p2", "p1"], "m": 1}),
    )
    r = judge_trace(trace.with_steps(steps), InProcessNode(LazyReferenceNode), log_dir=tmp_path)
    assert r.verdict == "pass"
    assert [o.describe() for o in r.observations[:4]] == [
        "#1 ReceiveRedLetter p1 -> p2: skipped (not enabled in the model state the node's "
        "choices led to: p1 -> p2 is empty)",
        "#2 StartSnapshot p1: recorded state for snapshot 1",
        "#3 StartSnapshot p1: skipped (not enabled in the model state the node's choices led "
        "to: p1 may not start snapshot 1 now (already red, or not a starter))",
        "#4 SendApp p2 -> p1: skipped (not enabled in the model state the node's choices led "
        "to: the application of p2 cannot send 1 on p2 -> p1 now (or its bound of application "
        "actions is spent))",
    ]
    # every subsequence of a failing trace is still a schedule (the shrinker's need)
    failing = _traces("MCLazyToken2")
    for t in failing:
        for cut in range(0, len(t.steps), 7):
            sub = t.with_steps(t.steps[:cut] + t.steps[cut + 1 :])
            assert judge_trace(sub, InProcessNode(LazyReferenceNode), log_dir=tmp_path).verdict == (
                "pass"
            ), sub.name


def test_generation_is_seeded_and_named() -> None:
    a, b = _traces("MCLazyToken2"), _traces("MCLazyToken2")
    assert a == b
    assert a != generate("MCLazyToken2", SPEC, walks=8, seed=SEED + 1)
    walks = [t for t in a if "-walk-" in t.name]
    assert len([t for t in walks if not t.name.endswith("-deferred")]) == 8
    assert all(f"seed {SEED}" in t.source for t in walks)
    assert [t.name for t in a[:3]] == [
        "MCLazyToken2-quiet-p1-1",
        "MCLazyToken2-send-p1-1",
        "MCLazyToken2-quiet-p2-1",
    ]
    with pytest.raises(InputError, match="not a model of LazyChandyLamport"):
        generate("MCToken2", SPEC)


def test_the_must_fail_models_judge_as_they_are_configured(tmp_path: Path) -> None:
    """A schedule of MCLazyUnpaidFailure, whose spec has no fairness of paying: a node
    that never pays on idle breaks nothing there, so liveness is unknown, not failed."""
    (quiet,) = [
        t for t in generate("MCLazyUnpaidFailure", SPEC, walks=0) if t.name.endswith("quiet-p1-1")
    ]
    r = judge_trace(quiet, InProcessNode(MUTANTS["NeverPays"].factory), log_dir=tmp_path)
    assert r.verdict == "unknown"
    assert r.reason == (
        "snapshot 1 never completed: a red letter is still owed and the model has no fairness"
        " of paying (MCLazyUnpaidFailure overrides RedLetterFairness), so liveness cannot be"
        " judged on this trace (every step agreed with the model)"
    )


def test_a_lazy_node_speaks_the_protocol() -> None:
    """No new message: the lazy node's init asks for algorithm lazy, an idle turn's
    reply carries the markers it pays (round trip), and asked for Chandy-Lamport it
    answers unsupported."""
    host = NodeHost(LazyReferenceNode)
    init = p.Init(1, "p1", ("p1", "p2"), (("p2", "p1"),), (("p1", "p2"),), "token", 2, "lazy")
    assert host.handle("p1", init) == p.InitOk(1)
    started = host.handle("p1", p.StartSnapshot(2, 1))
    assert started == p.StartSnapshotOk(2, None, (), (p.RecordState(1, 2),))
    idle = host.handle("p1", p.Idle(3))
    assert idle == p.IdleOk(3, None, (p.Sent(("p1", "p2"), p.Marker(1)),))
    line = p.encode(p.Envelope("p1", p.HARNESS, idle))
    assert line == (
        '{"src":"p1","dest":"harness","body":{"type":"idle_ok","in_reply_to":3,"sent":'
        '[{"channel":["p1","p2"],"msg":{"type":"marker","snapshot":1}}],"recorded":[],'
        '"completed":[]}}'
    )
    assert p.decode(line).body == idle
    assert host.handle("p1", p.Idle(4)) == p.IdleOk(4)  # paid once, owes nothing more
    other = NodeHost(LazyReferenceNode)
    cl = p.Init(1, "p1", ("p1", "p2"), (("p2", "p1"),), (("p1", "p2"),), "token", 2)
    assert other.handle("p1", cl) == p.Error(
        1, None, "unsupported", "this node runs the lazy algorithm, not chandy-lamport"
    )


def test_the_protocol_page_has_the_lazy_section() -> None:
    page = render_markdown()
    assert "## The lazy algorithm (`init.algorithm` = `lazy`): lazy red letters" in page
    assert f"{IDLE_PATIENCE} `idle`\nturns" in page or f"{IDLE_PATIENCE} `idle` turns" in page
    for name in MUTANTS:
        assert f"`{name}`" in page


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "verdict"), [("reference", "pass"), ("SendAnyway", "fail"), ("NeverPays", "fail")]
)
def test_node_programs_as_subprocesses(name: str, verdict: str, tmp_path: Path) -> None:
    """``python -m redletter.conformance.nodes.lazy [NAME]``, one process per node, in
    the sandbox: the reference passes, the mutants matching the must-fail models fail."""
    argv = (os.path.abspath(sys.executable), "-m", "redletter.conformance.nodes.lazy")
    node = CommandNode(argv if name == "reference" else (*argv, name))
    suffix = {"reference": "-deferred", "SendAnyway": "-send-p1-1", "NeverPays": "-quiet-p1-1"}
    t = next(x for x in _traces("MCLazyToken2") if x.name.endswith(suffix[name]))
    r = judge_trace(t, node, log_dir=tmp_path)
    assert r.verdict == verdict, r.explanation()
    assert r.sandbox is not None
