"""The z3 symbolic engine: BMC, induction, synthesis, each answer replayed concretely."""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable
from pathlib import Path

import pytest
from frozendict import frozendict

from redletter.errors import InputError
from redletter.python_model.itf import trace_from_json
from redletter.python_model.symbolic import (
    Mutant,
    SymParams,
    apply,
    bmc,
    complete_graph,
    goal_concurrent,
    goal_records,
    goal_two_starters,
    induct,
    init_state,
    params_from_model,
    replay,
    step,
    synthesize,
    trace_to_itf,
)
from redletter.python_model.symbolic.concrete import (
    CState,
    complete,
    enabled_steps,
    in_progress,
    red_letter_invariant,
    snapshot_conserves_tokens,
)

SPEC = Path(__file__).resolve().parent.parent / "spec"


def _two_procs(mutant: Mutant) -> SymParams:
    return params_from_model(
        SPEC / "MCNoChannelRecordingFailure.tla", mutant=mutant, record_capacity=6
    )


def _shortest_violation(params: SymParams, bad: Callable[[CState], bool], limit: int) -> int | None:
    """BFS in the concrete interpreter: the depth of the nearest bad state."""
    start = init_state(params)
    seen = {start.core()}
    todo = deque([(start, 0)])
    while todo:
        s, d = todo.popleft()
        if bad(s):
            return d
        if d == limit:
            continue
        for _st, nxt in enabled_steps(params, s):
            if nxt.core() not in seen:
                seen.add(nxt.core())
                todo.append((nxt, d + 1))
    return None


def test_params_from_model_reads_the_mc_definitions() -> None:
    p = params_from_model(SPEC / "MCConcurrent.tla")
    assert p.procs == ("p1", "p2")
    assert p.chans == (("p1", "p2"), ("p2", "p1"))
    assert p.tokens == (1, 1)
    assert p.snaps == (1, 2)
    assert p.starters == (frozenset({"p1"}), frozenset({"p2"}))
    assert p.capacity == 4  # Total 2 + 2 snapshots


@pytest.mark.parametrize("mutant", [Mutant.NO_RECORDING, Mutant.NON_FIFO])
def test_bmc_finds_the_mutant_at_the_minimal_depth(mutant: Mutant) -> None:
    params = _two_procs(mutant)
    result = bmc(params, 8)
    assert result.trace is not None
    assert result.violated == ("SnapshotSatisfiesAppInv",)
    states = replay(params, result.trace.steps)
    assert not snapshot_conserves_tokens(params, states[-1])
    assert all(snapshot_conserves_tokens(params, s) for s in states[:-1])
    expected = _shortest_violation(params, lambda s: not snapshot_conserves_tokens(params, s), 8)
    assert result.depth == expected == len(result.trace)


def test_bmc_finds_no_bug_in_the_correct_encoding() -> None:
    params = _two_procs(Mutant.CORRECT)
    result = bmc(params, 6)
    assert result.ok and result.trace is None and result.violated == ()
    assert len(result.seconds_per_depth) == 7


def test_bmc_without_lemmas_agrees() -> None:
    params = _two_procs(Mutant.NO_RECORDING)
    assert bmc(params, 6, lemmas=False).depth == bmc(params, 6).depth
    assert bmc(_two_procs(Mutant.CORRECT), 4, lemmas=False).ok


def test_bmc_rejects_unknown_invariant() -> None:
    with pytest.raises(InputError) as err:
        bmc(_two_procs(Mutant.CORRECT), 2, invariants=["Nope"])
    assert err.value.message == (
        "unknown invariant 'Nope'; expected one of TypeOK, RedLetterInvariant, "
        "SnapshotSatisfiesAppInv, TokensConserved"
    )


def test_induction_refutes_plain_and_proves_strengthened() -> None:
    params = complete_graph(3, snapshots=2, record_capacity=2)
    plain = induct(params, ("RedLetterInvariant",))
    assert not plain.proved and plain.cti is not None
    cti = plain.cti
    assert red_letter_invariant(params, cti.before)
    assert not red_letter_invariant(params, cti.after)
    after = apply(params, cti.before, cti.step)
    assert after is not None and after.core() == cti.after.core()
    strong = induct(params)
    assert strong.proved and strong.cti is None
    assert strong.initiation and strong.consecution and strong.implies_target


def test_every_strengthening_conjunct_matters_somewhere() -> None:
    params = complete_graph(3, snapshots=1, record_capacity=1)
    full = (
        "RedLetterInvariant",
        "AtMostOneRedLetter",
        "RedLettersOnlyFromRed",
        "WhiteBufferOfRedSourceHoldsLetter",
        "RedBufferHoldsNoLetter",
        "RedBufferJoinsRedMachines",
    )
    assert induct(params, full).proved
    # Without "a red buffer joins red machines" the CTI is a red buffer into a white machine.
    weaker = induct(params, tuple(c for c in full if c != "RedBufferJoinsRedMachines"))
    assert not weaker.proved and weaker.cti is not None


def test_synthesis_two_starters_replays() -> None:
    params = complete_graph(3, snapshots=1, record_capacity=1)
    trace = synthesize(params, goal_two_starters(1), 4)
    assert trace is not None
    starters = {ps["p"] for a, ps in trace.steps if a == "StartSnapshot" and ps["k"] == 1}
    assert len(starters) == 2
    assert replay(params, trace.steps) == list(trace.states)


def test_synthesis_concurrent_snapshots_replays() -> None:
    params = complete_graph(2, snapshots=2, record_capacity=1)
    trace = synthesize(params, goal_concurrent(1, 2), 6)
    assert trace is not None
    last = replay(params, trace.steps)[-1]
    assert in_progress(params, last, 0) and in_progress(params, last, 1)


@pytest.mark.slow
def test_synthesis_two_recorded_on_p3_p1_while_snapshot_1_runs() -> None:
    params = complete_graph(3, snapshots=2, record_capacity=3)
    trace = synthesize(params, goal_records(2, ("p3", "p1"), 2, while_running=1), 12)
    assert trace is not None and len(trace) <= 12
    last = replay(params, trace.steps)[-1]
    assert len(last.rec_buf[1][params.chan_index(("p3", "p1"))]) >= 2
    assert in_progress(params, last, 0) and not complete(params, last, 0)


def test_unreachable_goal_gives_none() -> None:
    params = complete_graph(2, snapshots=1, record_capacity=1)
    assert synthesize(params, goal_records(1, ("p1", "p2"), 1), 2) is None


def test_trace_exports_to_itf_with_action_and_params(tmp_path: Path) -> None:
    params = complete_graph(2, snapshots=1, record_capacity=1)
    trace = synthesize(params, goal_two_starters(1), 3)
    assert trace is not None
    doc = trace_to_itf(trace)
    back = trace_from_json(json.loads(json.dumps(doc)))
    assert len(back.states) == len(trace.states)
    assert back.states[0].meta["action"] == "Init"
    for n, (action, ps) in enumerate(trace.pairs(), start=1):
        assert back.states[n].meta["action"] == action
        meta_params = back.states[n].meta["params"]
        assert isinstance(meta_params, frozendict) and dict(meta_params) == ps
    assert set(back.vars) >= {"local", "buf", "red", "redBuf", "recMachine", "recBuf", "S0"}


def test_replay_names_the_disabled_step() -> None:
    params = complete_graph(2, snapshots=1)
    with pytest.raises(InputError) as err:
        replay(params, [step("ReceiveApp", c=("p1", "p2"), i=1)])
    assert err.value.message == ("step 1 (ReceiveApp {'c': ['p1', 'p2'], 'i': 1}) is not enabled")


def _ring4(snapshots: int, depth: int) -> SymParams:
    procs = ("p1", "p2", "p3", "p4")
    chans = tuple((procs[i], procs[(i + 1) % 4]) for i in range(4))
    return SymParams(
        procs,
        chans,
        (2, 1, 0, 0),
        tuple(range(1, snapshots + 1)),
        tuple(frozenset(procs) for _ in range(snapshots)),
        capacity=2 + 1 + snapshots,
        record_capacity=depth,
    )


@pytest.mark.slow
# CI time: `make test-long` runs it; the fast BMC tests run smaller rings
@pytest.mark.long
def test_bmc_ring_of_four_depth_ten_finds_no_violation() -> None:
    params = _ring4(1, 10)
    result = bmc(params, 10)
    assert result.ok and result.violated == () and result.depth == 10
    assert len(result.seconds_per_depth) == 11


def test_mutant_counterexample_on_three_machines_replays() -> None:
    params = complete_graph(3, snapshots=1, record_capacity=4, mutant=Mutant.NEVER_FORWARD)
    result = bmc(params, 4)
    assert result.trace is not None
    states = replay(params, result.trace.steps)
    assert [s.core() for s in states] == [s.core() for s in result.trace.states]
    last = states[-1]
    broken = {
        "SnapshotSatisfiesAppInv": not snapshot_conserves_tokens(params, last),
        "RedLetterInvariant": not red_letter_invariant(params, last),
    }
    assert result.violated and all(broken[name] for name in result.violated)

    def bad(s: CState) -> bool:
        return not snapshot_conserves_tokens(params, s) or not red_letter_invariant(params, s)

    assert result.depth == _shortest_violation(params, bad, 4) == len(result.trace)


@pytest.mark.parametrize("mutant", [Mutant.NO_RECORDING, Mutant.NON_FIFO, Mutant.CORRECT])
def test_flat_and_legacy_encodings_agree(mutant: Mutant) -> None:
    params = _two_procs(mutant)
    flat = bmc(params, 6, lemmas=False, encoding="flat")
    legacy = bmc(params, 6, lemmas=False, encoding="legacy")
    assert (flat.depth, flat.violated, flat.ok) == (legacy.depth, legacy.violated, legacy.ok)
