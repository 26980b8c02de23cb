"""The barrier-snapshot harness (Flink's ABS): the reference node passes every generated
trace of every passing BarrierSnapshot model, every mutant is caught, the mutants of
the must-fail models for the reason TLC's counterexample shows, the new protocol
messages round-trip and are strict."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from redletter.conformance import protocol as p
from redletter.conformance.judges.barrier import generate, judge_trace
from redletter.conformance.judges.drive import CommandNode, InProcessNode
from redletter.conformance.nodes.barrier import MUTANTS, BarrierReferenceNode
from redletter.conformance.verdict import Verdict
from redletter.errors import InputError

SPEC = Path(__file__).resolve().parent.parent / "spec"
PASSING = ("MCBarrierAligned", "MCBarrierTwoCheckpoints", "MCBarrierCyclic", "MCBarrierUnaligned")
SEED = 0


@pytest.mark.parametrize("model", PASSING)
def test_reference_passes_every_generated_trace(model: str, tmp_path: Path) -> None:
    for trace in generate(model, SPEC, walks=8, seed=SEED):
        r = judge_trace(trace, InProcessNode(BarrierReferenceNode), log_dir=tmp_path)
        assert r.verdict == Verdict.PASS, f"seed {SEED}, {trace.name}: {r.explanation()}"
        assert r.drained >= 0 and r.observations


@pytest.mark.parametrize(
    "model",
    [
        "MCBarrierAtLeastOnceFailure",
        "MCBarrierAtLeastOnceCutFailure",
        "MCBarrierUnalignedLostFailure",
        "MCBarrierCyclicNoLogFailure",
    ],
)
def test_reference_passes_the_must_fail_schedules(model: str, tmp_path: Path) -> None:
    """A schedule of a must-fail model holds steps a correct node does not enable (a
    delivery from an input it blocks): they are skipped, and the node passes."""
    for trace in generate(model, SPEC, walks=4, seed=SEED):
        r = judge_trace(trace, InProcessNode(BarrierReferenceNode), log_dir=tmp_path)
        assert r.verdict == Verdict.PASS, f"seed {SEED}, {trace.name}: {r.explanation()}"


# (mutant, the passing model whose traces catch it, the kinds it is caught with)
CAUGHT = [
    ("NeverBlocked", "MCBarrierAligned", {"not-blocked", "exactly-once-after-restore"}),
    (
        "Forgotten",
        "MCBarrierUnaligned",
        {"consistent-cut", "exactly-once-after-restore", "overtaken-not-stored"},
    ),
    (
        "NoLogging",
        "MCBarrierCyclic",
        {"consistent-cut", "exactly-once-after-restore", "not-logged"},
    ),
    ("NoRewind", "MCBarrierAligned", {"exactly-once-after-restore", "restore-state"}),
    ("KeepsState", "MCBarrierAligned", {"exactly-once-after-restore", "restore-state"}),
]


@pytest.mark.parametrize(("mutant", "model", "kinds"), CAUGHT)
def test_every_mutant_is_caught(mutant: str, model: str, kinds: set[str], tmp_path: Path) -> None:
    assert set(MUTANTS) == {m for m, _, _ in CAUGHT}
    results = [
        judge_trace(t, InProcessNode(MUTANTS[mutant][0]), log_dir=tmp_path)
        for t in generate(model, SPEC, walks=8, seed=SEED)
    ]
    failed = [r for r in results if r.verdict == Verdict.FAIL]
    assert failed, f"seed {SEED}: {mutant} passed every trace of {model}"
    for r in failed:
        assert r.divergence is not None and r.divergence.kind in kinds, r.explanation()


@pytest.mark.parametrize(
    ("mutant", "model", "kind"),
    [
        ("NeverBlocked", "MCBarrierAtLeastOnceFailure", "exactly-once-after-restore"),
        ("NeverBlocked", "MCBarrierAtLeastOnceCutFailure", "consistent-cut"),
        ("Forgotten", "MCBarrierUnalignedLostFailure", "exactly-once-after-restore"),
        ("NoLogging", "MCBarrierCyclicNoLogFailure", "exactly-once-after-restore"),
    ],
)
def test_mutant_fails_as_tlc_counterexample(
    mutant: str, model: str, kind: str, tmp_path: Path
) -> None:
    """The mutant that matches a must-fail model (its override of Blocked, Overtaken or
    Logging) is caught on that model's shortest counterexample -- the schedule TLC
    prints -- violating the very invariant TLC reports (spec/manifest.json's
    violatedProperty), on the state the node's own choices led to."""
    trace = generate(model, SPEC, walks=0)[0]
    assert trace.source == "shortest counterexample"
    r = judge_trace(trace, InProcessNode(MUTANTS[mutant][0]), log_dir=tmp_path)
    assert r.verdict == Verdict.FAIL
    assert r.divergence is not None and r.divergence.kind == kind, r.explanation()


def test_never_blocked_explained_word_for_word(tmp_path: Path) -> None:
    """MCBarrierAtLeastOnceFailure's counterexample, driven: the record s1#1 read after
    s1's barrier is processed before k aligns, restored with checkpoint 1, replayed."""
    trace = generate("MCBarrierAtLeastOnceFailure", SPEC, walks=0)[0]
    r = judge_trace(trace, InProcessNode(MUTANTS["NeverBlocked"][0]), log_dir=tmp_path)
    assert r.explanation() == (
        "at step 9, the run violates ExactlyOnceAfterRestore: after the restore of checkpoint"
        " 1, operator k has applied record s1#1 2 times (NoEffectTwice); it follows from step"
        " 4, where ReceiveBarrier s1 -> k (barrier 1): barrier 1 has arrived on s1 -> k but k"
        " does not block that input. The model: ExactlyOnceAfterRestore holds in every"
        " reachable state of the spec. Node k: blocks nothing. Why it matters: a record"
        " processed from s1 -> k after its barrier and before k snapshots 1 was sent after the"
        " cut of checkpoint 1 but enters 1's state; restoring 1 replays it from its source, so"
        " it is applied twice (ExactlyOnceAfterRestore; TLC's counterexample of"
        " MCBarrierAtLeastOnceFailure)"
    )
    assert r.schedule == r.executed[:9]


def test_generate_is_seeded() -> None:
    a = generate("MCBarrierAligned", SPEC, walks=3, seed=7)
    b = generate("MCBarrierAligned", SPEC, walks=3, seed=7)
    assert [t.steps for t in a] == [t.steps for t in b]
    assert [t.source for t in a] == [
        "random-walk seed 7",
        "random-walk seed 8",
        "random-walk seed 9",
    ]


def test_any_subsequence_is_a_schedule(tmp_path: Path) -> None:
    """The shrinker drops steps: whatever is left, steps not enabled are skipped."""
    rng = random.Random(SEED)
    for trace in generate("MCBarrierUnaligned", SPEC, walks=4, seed=SEED):
        kept = [st for st in trace.steps if rng.random() < 0.6]
        r = judge_trace(
            trace.with_steps(kept), InProcessNode(BarrierReferenceNode), log_dir=tmp_path
        )
        assert r.verdict == Verdict.PASS, f"seed {SEED}, {trace.name}: {r.explanation()}"


@pytest.mark.slow
def test_reference_as_a_subprocess(tmp_path: Path) -> None:
    trace = generate("MCBarrierAtLeastOnceFailure", SPEC, walks=0)[0]
    argv = (sys.executable, "-m", "redletter.conformance.nodes.barrier")
    ok = judge_trace(trace, CommandNode(argv, isolate=False), log_dir=tmp_path)
    assert ok.verdict == Verdict.PASS, ok.explanation()
    bad = judge_trace(trace, CommandNode((*argv, "NeverBlocked"), isolate=False), log_dir=tmp_path)
    assert bad.divergence is not None and bad.divergence.kind == "exactly-once-after-restore"


# --------------------------------------------------------------------------- protocol

REC = p.StreamRecord("s1", 2, 0)
ROUND_TRIPS: list[p.Body] = [
    p.Init(
        1,
        "k",
        ("s1", "k"),
        (("s1", "k"),),
        (),
        "keyed-count",
        [],
        "barrier",
        role="operator",
        back_edges=(),
        mode="unaligned",
    ),
    p.Emit(2, REC, "k", 2),
    p.InjectBarrier(3, 1),
    p.Deliver(4, "s1", REC, [["s1", 2, 0]], outputs=(p.Sent(("k", "t"), REC),)),
    p.Deliver(5, "s1", p.Barrier(1), overtaken=(REC,)),
    p.Restore(6, 1),
    p.EmitOk(2, None, (p.Sent(("s1", "k"), REC),), blocked=()),
    p.InjectBarrierOk(
        3, None, (p.Sent(("s1", "k"), p.Barrier(1)),), (p.RecordState(1, 2),), (1,), blocked=()
    ),
    p.DeliverOk(
        5,
        None,
        (),
        (p.CloseChannel(1, ("s1", "k")), p.StoreRecord(1, ("s1", "k"), REC)),
        blocked=(("s1", "k"),),
    ),
    p.RestoreOk(6, None, blocked=(), state=[["s1", 1, 0]], requeued={"s1": (REC,)}),
    p.CheckpointReportOk(7, None, [["s1", 1, 0]], {"s1": (REC,)}, True),
]


@pytest.mark.parametrize("body", ROUND_TRIPS, ids=lambda b: b.type)
def test_protocol_round_trip(body: p.Body) -> None:
    env = p.Envelope("harness", "k", body)
    assert p.decode(p.encode(env)) == env


def test_protocol_is_strict() -> None:
    line = (
        '{"src":"harness","dest":"k","body":{"type":"deliver","msg_id":3,"from":"s1",'
        '"msg":{"type":"record","source":"s1","index":0,"round":0}}}'
    )
    with pytest.raises(InputError) as exc:
        p.decode(line)
    assert exc.value.message == "bad protocol line: body.msg.index must be >= 1, got 0: " + line


def test_chandy_lamport_lines_unchanged() -> None:
    """The optional barrier fields are omitted on the wire when absent."""
    line = p.encode(p.Envelope("p1", "harness", p.DeliverOk(4)))
    assert line == (
        '{"src":"p1","dest":"harness","body":{"type":"deliver_ok","in_reply_to":4,'
        '"sent":[],"recorded":[],"completed":[]}}'
    )
