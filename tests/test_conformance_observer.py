"""The observer variant in the harness (seeds/003, spec/ObserverSnapshot.tla): the
reference node passes the observer judge on every generated schedule of every passing
observer model; every mutant is caught, with its divergence in words; the protocol's
observer messages round-trip and are strictly validated."""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import pytest

from redletter.conformance import protocol as p
from redletter.conformance.judges.drive import CommandNode, InProcessNode, JudgeResult
from redletter.conformance.judges.observer import generate, judge_trace, load_trace_model
from redletter.conformance.nodes.observer import MUTANTS, ObserverReferenceNode
from redletter.conformance.nodes.reference import ReferenceNode
from redletter.conformance.traces import Trace, make_step
from redletter.errors import InputError
from redletter.manifest import load_manifest
from redletter.python_model.engines import family_of, load_engine

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "spec"
SEED = 20261124  # every walk's seed is in its trace's source, printed on failure
MANIFEST = load_manifest(SPEC / "manifest.json").models
OBSERVER_MODELS = [m for m in MANIFEST if family_of(m.model, SPEC) == "ObserverSnapshot"]
PASSING = [m.model for m in OBSERVER_MODELS if m.expect == "success"]
REFERENCE = InProcessNode(ObserverReferenceNode, "observer reference")


def _traces(model: str) -> list[Trace]:
    return generate(model, SPEC, walks=12, seed=SEED, length=40)


def _problems(results: list[JudgeResult]) -> list[str]:
    return [
        f"{r.trace.name} ({r.trace.source}): {r.verdict} {r.explanation()}"
        for r in results
        if r.verdict != "pass"
    ]


def test_the_manifest_has_passing_and_failing_observer_models() -> None:
    assert {"MCObserverToken2", "MCObserverRing3"} <= set(PASSING)
    assert "MCObserverEarlyFailure" in {m.model for m in OBSERVER_MODELS}


def test_generation_is_seeded_and_deterministic() -> None:
    a = generate("MCObserverToken2", SPEC, walks=3, seed=7)
    b = generate("MCObserverToken2", SPEC, walks=3, seed=7)
    c = generate("MCObserverToken2", SPEC, walks=3, seed=8)
    assert a == b
    assert [t.steps for t in a] != [t.steps for t in c]
    assert [t.source for t in a] == [
        "goal early",
        "goal red-by-message",
        "goal forward",
        "random-walk seed 7",
        "random-walk seed 8",
        "random-walk seed 9",
    ]


@pytest.mark.parametrize("model", PASSING)
def test_reference_passes_every_generated_trace(model: str, tmp_path: Path) -> None:
    traces = _traces(model)
    results = [judge_trace(t, REFERENCE, log_dir=tmp_path) for t in traces]
    assert _problems(results) == []
    # The judge did something: every snapshot started on some trace was declared.
    assert sum(len(o.completed) for r in results for o in r.observations) >= len(traces) // 2
    assert any(r.drained >= 1 for r in results)


def test_reference_passes_any_subsequence_of_a_schedule(tmp_path: Path) -> None:
    """Steps the node's own choices made disabled are skipped, and said so: any
    subsequence of a schedule is one (what the shrinker relies on)."""
    rng = random.Random(SEED)
    for trace in _traces("MCObserverRing3")[:6]:
        for _ in range(4):
            keep = [st for st in trace.steps if rng.random() < 0.6]
            r = judge_trace(trace.with_steps(keep), REFERENCE, log_dir=tmp_path)
            assert r.verdict in ("pass", "unknown"), f"seed {SEED}: {r.explanation()}"


def test_a_step_made_impossible_is_skipped_and_said_so(tmp_path: Path) -> None:
    trace = _traces("MCObserverToken2")[0]
    # Receiving the request twice: the second is not enabled in the model.
    extra = next(st for st in trace.steps if st[0] == "ReceiveRequest")
    r = judge_trace(trace.with_steps((*trace.steps, extra)), REFERENCE, log_dir=tmp_path)
    assert r.verdict == "pass"
    assert r.reason == (
        "1 schedule step not enabled in the model state the node's choices led to, "
        "skipped: ReceiveRequest {'p': 'p2', 'k': 1}"
    )


@pytest.mark.parametrize("model", PASSING)
@pytest.mark.parametrize("mutant", list(MUTANTS))
def test_every_mutant_is_caught(mutant: str, model: str, tmp_path: Path) -> None:
    node = InProcessNode(MUTANTS[mutant].factory, mutant)
    results = [judge_trace(t, node, log_dir=tmp_path) for t in _traces(model)]
    failed = [r for r in results if r.verdict == "fail"]
    assert failed, f"{mutant} passed every trace of {model} (seed {SEED})"
    assert all(r.divergence is not None for r in failed)
    assert not [r for r in results if r.verdict == "unknown"]


EXPLANATIONS = {
    "AllSavedStatesIn": (
        "goal early",
        "early-complete",
        "at step 3, p2 receives the request of snapshot 1 (the delivery of its saved_state 1 "
        "to p1): p1 declared snapshot 1 complete with every saved state in but a message in "
        "transit still missing (p1 -> p2: 1 sent - 0 received = 1 in transit, 0 forwarded "
        "(still in flight: 1)). The model: snapshot 1 is not complete: AllInTransit fails "
        "(p1 -> p2: 1 sent - 0 received = 1 in transit, 0 forwarded (still in flight: 1)). "
        "Node p1: declared snapshot 1 complete. Why it matters: every saved state is in, but "
        "a white message still in transit will be forwarded later: the snapshot declared "
        "complete misses it, so it is not reachable from S0 (Lemma 0; the AllSavedStatesIn "
        "bug of MCObserverEarlyFailure)",
    ),
    "NoPiggyback": (
        "goal red-by-message",
        "wrong-tokens",
        "at step 2, p1 sends app 1 to p2: p1 sent app 1 bearing the tokens [none], but it "
        "holds [1]. The model: the message bears the tokens p1 holds: [1] (TokensHeld). "
        "Node p1: sent it bearing [none]. Why it matters: rule 2 attaches the token to every "
        "message sent after the saved state; a message without it is taken as white, so its "
        "receiver accepts it before saving its own state or forwards it as in transit, "
        "counting in the snapshot a message sent after it (RedMessagesFromRedMachines, "
        "Lemma 0)",
    ),
    "NoForward": (
        "goal forward",
        "missing-forward",
        "at step 4, p2 receives app 1 from p1: p2 holds the token of snapshot 1 and received "
        "app 1 without it from p1, but did not forward it to the observer. The model: "
        "forwards app 1 to p1 as in transit on p1 -> p2 (Rule3). Node p2: sent nothing. Why "
        "it matters: a token-less message reaching a process that holds the token was sent "
        "before its sender saved its state and received after its receiver did: it was in "
        "transit, and without the forward the snapshot misses it (Lemma 0); with the counts "
        "the observer waits for it for ever (SnapshotsComplete)",
    ),
    "StaleCounts": (
        "goal red-by-message",
        "wrong-counts",
        'at step 3, p2 receives app 1 [tokens 1] from p1: p2 reported the counts sent {"p1": '
        '0}, received {"p1": 1} with its saved state of snapshot 1; the model\'s are sent '
        '{"p1": 0}, received {"p1": 0}. The model: reports the counts of the moment it saved '
        'its state (SendsCounts): sent {"p1": 0}, received {"p1": 0}. Node p2: reported sent '
        '{"p1": 0}, received {"p1": 1}. Why it matters: the observer waits for sent - '
        "received forwards per channel; counts taken at another moment make it wait for too "
        "many (it never completes) or too few (it completes with a message in transit "
        "missing: CountsInvariant, Lemma 0)",
    ),
    "NeverDeclares": (
        "goal early",
        "missing-complete",
        "at step 5, after the schedule and an idle turn, p1 has not declared snapshot 1 "
        "complete although it has every saved state and every message in transit. The "
        "model: p1 declares snapshot 1 complete (CompletionRule(1) holds). Node p1: did not "
        "declare it. Why it matters: an observer that never declares a snapshot it may "
        "declare breaks SnapshotsComplete (WF_vars(DeclareComplete(k)))",
    ),
}


def test_every_mutant_has_a_representative_explanation() -> None:
    assert set(EXPLANATIONS) == set(MUTANTS)


@pytest.mark.parametrize("mutant", list(EXPLANATIONS))
def test_mutant_explanation_word_for_word(mutant: str, tmp_path: Path) -> None:
    source, kind, text = EXPLANATIONS[mutant]
    trace = next(t for t in _traces("MCObserverToken2") if t.source == source)
    r = judge_trace(trace, InProcessNode(MUTANTS[mutant].factory), log_dir=tmp_path)
    assert r.verdict == "fail"
    assert r.divergence is not None and r.divergence.kind == kind
    assert r.explanation() == text


def test_all_saved_states_in_fails_for_the_reason_of_tlcs_counterexample(
    tmp_path: Path,
) -> None:
    """The AllSavedStatesIn mutant is the must-fail model MCObserverEarlyFailure
    (CompletionRule <- AllSavedStatesIn), whose TLC counterexample violates Lemma0 (the
    manifest's violatedProperty): completion with every saved state in while a white
    message is still in transit.  The judge refuses the mutant's declaration on
    MCObserverToken2 (AllInTransit fails); on the same schedule, the must-fail model,
    whose rule allows that declaration, reaches a state that violates Lemma0: the
    snapshot declared misses the message in transit, exactly TLC's counterexample."""
    early = next(m for m in OBSERVER_MODELS if m.model == "MCObserverEarlyFailure")
    assert early.expect == "safety failure" and early.violated == "Lemma0"
    trace = next(t for t in _traces("MCObserverToken2") if t.source == "goal early")
    r = judge_trace(trace, InProcessNode(MUTANTS["AllSavedStatesIn"].factory), log_dir=tmp_path)
    assert r.divergence is not None and r.divergence.kind == "early-complete"
    assert "AllInTransit fails" in r.divergence.model_did
    # The same steps in the must-fail model, then the declaration it allows.
    eng = load_engine("MCObserverEarlyFailure", SPEC)
    ok = load_trace_model(trace)  # MCObserverToken2, which the judge used
    s = next(iter(eng.init_states()))
    for action, params in r.schedule:
        s = next(
            t
            for a, raw, t in eng.successors(s)
            if eng.action_names[a] == action
            and ok.params(a, raw)
            == {k: list(v) if isinstance(v, tuple) else v for k, v in params.items()}
        )
    assert eng.violated_invariant(s) is None
    declared = [t for a, _, t in eng.successors(s) if eng.action_names[a] == "DeclareComplete"]
    assert len(declared) == 1
    assert eng.violated_invariant(declared[0]) == "Lemma0"


def test_a_chandy_lamport_node_asked_to_run_the_observer_fails(tmp_path: Path) -> None:
    trace = _traces("MCObserverToken2")[0]
    r = judge_trace(trace, InProcessNode(ReferenceNode), log_dir=tmp_path)
    assert r.verdict == "fail"
    assert r.explanation() == (
        "node p1 answered init (msg_id 2) with error unsupported: this node runs the "
        "chandy-lamport algorithm, not observer."
    )


def test_a_trace_of_another_variant_is_an_input_error() -> None:
    tla = (SPEC / "MCToken2.tla").read_text()
    cfg = (SPEC / "MCToken2.cfg").read_text()
    with pytest.raises(InputError) as exc:
        judge_trace(Trace("x", "MCToken2", "hand", (), tla, cfg), REFERENCE)
    assert exc.value.message.startswith(
        "the model the trace carries is not an observer model: #meta.model_tla:9: a model of "
        "ObserverSnapshot "
        "must EXTEND ObserverSnapshotToken only"
    )


TWO_OBSERVERS = """---- MODULE MCObserverTwo ----
EXTENDS ObserverSnapshotToken
MCProc     == {"p1", "p2", "p3"}
MCChan     == {<<"p1", "p2">>, <<"p2", "p3">>, <<"p3", "p1">>, <<"p2", "p1">>}
MCTokens   == [p1 |-> 2, p2 |-> 1, p3 |-> 0]
MCSnap     == {1, 2}
MCObserver == (1 :> "p1") @@ (2 :> "p3")
MCMaxSends == 3
====
"""


def test_two_snapshots_with_two_observers(tmp_path: Path) -> None:
    """Tokens of two snapshots on one message, saved states and forwards to two
    observers, a process that is the observer of one and a reporter in the other: the
    reference passes, every mutant fails (on a model the manifest does not have, so
    written here: MCObserverRing3's constants with a second snapshot observed by p3)."""
    (tmp_path / "MCObserverTwo.tla").write_text(TWO_OBSERVERS)
    cfg = (SPEC / "MCObserverRing3.cfg").read_text()
    (tmp_path / "MCObserverTwo.cfg").write_text(cfg)
    traces = generate("MCObserverTwo", tmp_path, walks=16, seed=SEED, length=60)
    results = [judge_trace(t, REFERENCE, log_dir=tmp_path) for t in traces]
    assert _problems(results) == []
    assert any(
        isinstance(o.delivered, p.AppMsg) and o.delivered.tokens == (1, 2)
        for r in results
        for o in r.observations
    ), f"no message bore both tokens (seed {SEED})"
    assert {k for r in results for o in r.observations for k in o.completed} == {1, 2}
    for name, mutant in MUTANTS.items():
        node = InProcessNode(mutant.factory, name)
        verdicts = [judge_trace(t, node, log_dir=tmp_path).verdict for t in traces]
        assert "fail" in verdicts, f"{name} passed every trace of MCObserverTwo (seed {SEED})"


class ReportsNoTransit(ObserverReferenceNode):
    """Builds the snapshot right but leaves the messages in transit out of its report."""

    def handle(self, body: p.Request) -> p.Reply:
        reply = super().handle(body)
        if isinstance(reply, p.SnapshotOk):
            return p.SnapshotOk(reply.in_reply_to, None, reply.complete, reply.states, ())
        return reply


class ReportsCurrentState(ObserverReferenceNode):
    """A process that is not the observer reports its current state, not the saved one."""

    def report(self, k: int) -> tuple[p.JsonValue, dict[str, tuple[int, ...]], bool]:
        return self.state, {}, k in self.held


def test_the_final_reports_are_compared_with_the_snapshot(tmp_path: Path) -> None:
    trace = next(t for t in _traces("MCObserverToken2") if t.source == "goal early")
    r = judge_trace(trace, InProcessNode(ReportsNoTransit), log_dir=tmp_path)
    assert r.explanation() == (
        "in the final report, p1 reports [] in transit on p1 -> p2 in snapshot 1, the "
        "model's Snapshot(1) [1]. The model: Snapshot(1) has [1] in transit on p1 -> p2. "
        "Node p1: reported []. Why it matters: the messages in transit are exactly those "
        "forwarded (recBuf); with others the snapshot is not reachable from S0 (Lemma 0)"
    )
    r = judge_trace(trace, InProcessNode(ReportsCurrentState), log_dir=tmp_path)
    assert r.divergence is not None and r.divergence.kind == "report-state"
    assert r.divergence.summary == (
        "p2 reports the saved state 1, channels {}, complete for snapshot 1; the model: 0, "
        "no channels, complete"
    )


# --------------------------------------------------------------------------- subprocess


@pytest.mark.parametrize("hosted", [False, True])
def test_reference_and_a_mutant_as_subprocesses(hosted: bool, tmp_path: Path) -> None:
    py = os.path.abspath(sys.executable)
    argv = (py, "-m", "redletter.conformance.nodes.observer")
    trace = next(t for t in _traces("MCObserverRing3") if t.source == "goal early")
    r = judge_trace(trace, CommandNode(argv, hosted=hosted), log_dir=tmp_path)
    assert r.verdict == "pass", r.explanation()
    m = judge_trace(
        trace, CommandNode((*argv, "AllSavedStatesIn"), hosted=hosted), log_dir=tmp_path
    )
    assert m.verdict == "fail" and m.divergence is not None
    assert m.divergence.kind == "early-complete"


# --------------------------------------------------------------------------- protocol


def _line(body: p.Body, src: str = p.HARNESS, dest: str = "p1") -> str:
    return p.encode(p.Envelope(src, dest, body))


@pytest.mark.parametrize(
    ("body", "line"),
    [
        (
            p.Deliver(4, "p2", p.AppMsg(3, (1, 2)), 5),
            '{"src":"harness","dest":"p1","body":{"type":"deliver","msg_id":4,"from":"p2",'
            '"msg":{"type":"app","payload":3,"tokens":[1,2]},"new_state":5}}',
        ),
        (
            p.Deliver(5, "p2", p.SnapshotRequest(1)),
            '{"src":"harness","dest":"p1","body":{"type":"deliver","msg_id":5,"from":"p2",'
            '"msg":{"type":"request","snapshot":1}}}',
        ),
        (
            p.Deliver(6, "p2", p.SavedState(1, 0, {"p1": 2}, {"p1": 1})),
            '{"src":"harness","dest":"p1","body":{"type":"deliver","msg_id":6,"from":"p2",'
            '"msg":{"type":"saved_state","snapshot":1,"state":0,"sent":{"p1":2},'
            '"received":{"p1":1}}}}',
        ),
        (
            p.Deliver(7, "p2", p.Forward(1, "p1", 1)),
            '{"src":"harness","dest":"p1","body":{"type":"deliver","msg_id":7,"from":"p2",'
            '"msg":{"type":"forward","snapshot":1,"from":"p1","payload":1}}}',
        ),
        (
            p.Init(
                1,
                "p1",
                ("p1", "p2"),
                (("p2", "p1"),),
                (("p1", "p2"),),
                "token",
                2,
                algorithm="observer",
                observers={1: "p1"},
            ),
            '{"src":"harness","dest":"p1","body":{"type":"init","msg_id":1,"node_id":"p1",'
            '"node_ids":["p1","p2"],"in_channels":[["p2","p1"]],"out_channels":[["p1","p2"]],'
            '"app":"token","app_state":2,"algorithm":"observer","observers":{"1":"p1"}}}',
        ),
    ],
)
def test_observer_requests_round_trip(body: p.Body, line: str) -> None:
    assert _line(body) == line
    assert p.decode(line).body == body


def test_snapshot_ok_round_trips() -> None:
    body = p.SnapshotOk(9, None, True, {"p1": 1, "p2": 0}, (p.InTransit(("p2", "p1"), (0, 1)),))
    line = _line(body, "p1", p.HARNESS)
    assert line == (
        '{"src":"p1","dest":"harness","body":{"type":"snapshot_ok","in_reply_to":9,'
        '"complete":true,"states":{"p1":1,"p2":0},"in_transit":[{"channel":["p2","p1"],'
        '"payloads":[0,1]}]}}'
    )
    assert p.decode(line).body == body


def test_chandy_lamport_app_messages_are_unchanged() -> None:
    assert _line(p.Deliver(4, "p2", p.AppMsg(3), 5)) == (
        '{"src":"harness","dest":"p1","body":{"type":"deliver","msg_id":4,"from":"p2",'
        '"msg":{"type":"app","payload":3},"new_state":5}}'
    )


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (
            '{"type":"deliver","msg_id":4,"from":"p2","msg":{"type":"app","payload":3,'
            '"tokens":[2,1]}}',
            "body.msg.tokens must list snapshot ids in increasing order, got [2, 1]",
        ),
        (
            '{"type":"deliver","msg_id":4,"from":"p2","msg":{"type":"saved_state",'
            '"snapshot":1,"state":0,"sent":{"p1":-1},"received":{}}}',
            "body.msg.sent.p1 must be >= 0, got -1",
        ),
        (
            '{"type":"deliver","msg_id":4,"from":"p2","msg":{"type":"forward",'
            '"snapshot":1,"payload":1}}',
            "body.msg lacks the required field 'from'",
        ),
        (
            '{"type":"init","msg_id":1,"node_id":"p1","node_ids":["p1","p2"],'
            '"in_channels":[],"out_channels":[],"app":"token","app_state":0,'
            '"algorithm":"observer","observers":{"01":"p1"}}',
            'body.observers has the key "01", which is not a snapshot id (>= 1)',
        ),
        (
            '{"type":"snapshot_ok","in_reply_to":1,"complete":true,"states":{},'
            '"in_transit":[{"channel":["p1","p2"]}]}',
            "body.in_transit[0] lacks the required field 'payloads'",
        ),
    ],
)
def test_observer_messages_are_strict(body: str, error: str) -> None:
    line = '{"src":"harness","dest":"p1","body":' + body + "}"
    with pytest.raises(InputError) as exc:
        p.decode(line)
    assert exc.value.message.startswith(f"bad protocol line: {error}: ")


def test_an_unknown_step_of_the_schedule_is_skipped(tmp_path: Path) -> None:
    trace = _traces("MCObserverToken2")[0]
    bogus = make_step("SendApp", {"c": ["p1", "p2"], "v": 99})
    r = judge_trace(trace.with_steps((bogus, *trace.steps)), REFERENCE, log_dir=tmp_path)
    assert r.verdict == "pass"
    assert "skipped: SendApp" in r.reason
