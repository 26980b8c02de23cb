"""EWD 864's lemmas checked three ways (replay, reachability, shadow networks)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from typer.testing import CliRunner

from redletter.cli import app as cli_app
from redletter.errors import InternalError
from redletter.python_model.actions import init_states, step
from redletter.python_model.config import load_model
from redletter.python_model.explore import explore
from redletter.python_model.lemmas import (
    AppGraph,
    check_lemmas_everywhere,
    check_trace,
    replay_verdicts,
    shadow_lemma0,
    shadow_lemma1,
)
from redletter.python_model.state import State
from redletter.python_model.topology import (
    build_config,
    complete,
    directed_ring,
    random_strongly_connected,
    ring,
    strongly_connected,
)
from redletter.python_model.values import apply_fn

SPEC = Path(__file__).resolve().parent.parent / "spec"

# p2 -> p1 carries a token while p1 turns red: it is recorded for that buffer, so the
# Lemma 1 shadow's rule (iii c) holds a non-empty snapshot string.
RUN = [
    ("SendApp", {"c": ["p1", "p2"], "m": 1}),
    ("ReceiveApp", {"c": ["p1", "p2"], "i": 1}),
    ("SendApp", {"c": ["p2", "p1"], "m": 1}),
    ("StartSnapshot", {"p": "p1", "k": 1}),
    ("ReceiveRedLetter", {"c": ["p1", "p2"], "i": 1}),
    ("ReceiveApp", {"c": ["p2", "p1"], "i": 1}),
    ("ReceiveRedLetter", {"c": ["p2", "p1"], "i": 1}),
]


def _run(model: str) -> tuple[list[State], list[tuple[str, dict[str, object]]]]:
    cfg = load_model(model, SPEC)
    (s,) = init_states(cfg)
    states = [s]
    for action, params in RUN:
        states.append(step(cfg, states[-1], action, params))
    return states, [(a, dict(p)) for a, p in RUN]


def test_all_three_ways_hold_on_a_correct_trace() -> None:
    cfg = load_model("MCToken2", SPEC)
    states, steps = _run("MCToken2")
    (v,) = check_trace(cfg, states, steps)
    assert v.snap == 1
    assert all(v.way(w, n).ok for w in ("replay", "reachability", "shadow") for n in (0, 1))
    # the shadows took exactly the white / red machines' application actions
    assert shadow_lemma0(cfg, states, steps, 0).acts == states[-1].white_acts[0]
    assert shadow_lemma1(cfg, states, steps, 0).acts == states[-1].red_acts[0]
    assert states[-1].red_acts[0]  # the red machine p1 received the token: not vacuous


def test_all_three_ways_report_no_channel_recording() -> None:
    cfg = load_model("MCNoChannelRecordingFailure", SPEC)
    states, steps = _run("MCNoChannelRecordingFailure")
    (v,) = check_trace(cfg, states, steps)
    assert str(v.replay0) == "fails (replaying whiteActs does not end in the snapshot state)"
    assert str(v.reach0) == ("fails (the snapshot state is not reachable from the initial state)")
    assert str(v.shadow0) == (
        "fails (after step 5 ReceiveRedLetter(c=['p1', 'p2'], i=1): buffer <<p2, p1>> "
        "holds [1, -1], rule (iii b) says [-1])"
    )
    assert str(v.replay1) == "fails (action 1 of redActs is not enabled)"
    assert str(v.reach1) == "fails (the final state is not reachable from the snapshot state)"
    # Lemma 1's rule (iii d) looks ahead: p2 will send its red letter after the token
    assert str(v.shadow1) == (
        "fails (after step 4 StartSnapshot(p='p1', k=1): buffer <<p2, p1>> holds [-1], "
        "rule (iii d) says [1, -1])"
    )


def test_a_disagreement_is_an_internal_error(monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = load_model("MCToken2", SPEC)
    states, steps = _run("MCToken2")
    monkeypatch.setattr(AppGraph, "reachable", lambda self, src, dst: False)
    with pytest.raises(InternalError) as info:
        check_trace(cfg, states, steps)
    assert info.value.code == "RL-INTERNAL-LEMMAS"
    assert str(info.value.message).startswith(
        "the lemma checks disagree on model MCToken2, snapshot 1: Lemma 0: the replay "
        "succeeds but the search finds no path. Lemma 0 by replay: holds; Lemma 0 by "
        "reachability: fails (the snapshot state is not reachable from the initial state)"
    )


def test_replay_verdicts_need_a_completed_snapshot() -> None:
    cfg = load_model("MCToken2", SPEC)
    (s,) = init_states(cfg)
    with pytest.raises(Exception, match="snapshot 1 has not completed in this state"):
        replay_verdicts(cfg, s, 0)


def _completed_pairs(model: str) -> tuple[int, int]:
    cfg = load_model(model, SPEC)
    g = explore(dataclasses.replace(cfg, invariants=(), properties=()), graph=True).graph
    assert g is not None
    done = [sum(x is not None for x in s.sf) for s in g.states]
    return sum(1 for d in done if d), sum(done)


@pytest.mark.parametrize("model", ["MCToken2", "MCTokenDirectedRing3", "MCSequential"])
def test_every_completed_snapshot_of_a_correct_model_satisfies_both_lemmas(model: str) -> None:
    counts = check_lemmas_everywhere(load_model(model, SPEC))
    assert counts.all_pass and not counts.mutant
    assert (counts.completed_states, counts.pairs) == _completed_pairs(model)
    assert counts.pairs > 0 and all(counts.evaluations[w] > 0 for w in counts.evaluations)


@pytest.mark.slow
@pytest.mark.long
@pytest.mark.parametrize("model", ["MCTokenComplete3", "MCConcurrent", "MCDiffusing", "MCSeed"])
def test_every_completed_snapshot_of_the_larger_models(model: str) -> None:
    counts = check_lemmas_everywhere(load_model(model, SPEC))
    assert counts.all_pass
    assert (counts.completed_states, counts.pairs) == _completed_pairs(model)


FAST_MUTANTS = ["MCNoChannelRecordingFailure", "MCLateRedLetterFailure", "MCNonFifoFailure"]
SLOW_MUTANTS = [
    "MCStopAtFirstRedLetterFailure",
    pytest.param("MCMixedSnapshotsFailure", marks=pytest.mark.long),  # CI time
]


def _all_ways_report(model: str) -> None:
    counts = check_lemmas_everywhere(load_model(model, SPEC))
    assert counts.mutant and counts.all_report_violation
    # shadow => replay => reachable, on every (state, snapshot): failures nest
    for n in (0, 1):
        assert (
            counts.failed["shadow"][n]
            >= counts.failed["replay"][n]
            >= counts.failed["reachability"][n]
            > 0
        )


@pytest.mark.parametrize("model", FAST_MUTANTS)
def test_all_three_ways_report_each_lemma_mutant(model: str) -> None:
    _all_ways_report(model)


@pytest.mark.slow
@pytest.mark.parametrize("model", SLOW_MUTANTS)
def test_all_three_ways_report_the_larger_lemma_mutants(model: str) -> None:
    _all_ways_report(model)


def test_never_forwarding_completes_no_snapshot() -> None:
    """Its violation is RedLetterInvariant: no snapshot completes, nothing to check."""
    counts = check_lemmas_everywhere(load_model("MCNeverForwardFailure", SPEC))
    assert counts.states > 0 and counts.pairs == 0 and counts.all_pass


def test_cli_lemmas_prints_the_counts_per_way() -> None:
    result = CliRunner().invoke(cli_app, ["lemmas", "MCToken2", "--root", str(SPEC.parent)])
    assert result.exit_code == 0, result.output
    pairs = _completed_pairs("MCToken2")[1]
    lines = result.output.splitlines()
    for way in ("replay", "reachability", "shadow"):
        assert any(
            line.split()[:1] == [way] and f"Lemma 0: {pairs:,} hold, 0 fail" in line
            for line in lines
        )
    assert lines[-1] == (
        "Lemma 0 and Lemma 1 hold; replay, reachability and the shadow networks agree."
    )


def test_cli_lemmas_on_a_model_where_no_snapshot_completes_is_vacuous() -> None:
    result = CliRunner().invoke(
        cli_app, ["lemmas", "MCNeverForwardFailure", "--root", str(SPEC.parent)]
    )
    assert result.exit_code == 2, result.output
    assert result.output.splitlines()[-1] == (
        "Vacuous: no snapshot completes in any of the 49 reachable states of "
        "MCNeverForwardFailure, so Lemma 0 and Lemma 1 were checked on no snapshot."
    )


def test_cli_lemmas_prints_where_replay_and_reachability_disagree() -> None:
    """MCNonFifoFailure: the replay of the white actions (one witness) fails where the
    snapshot state is still reachable along another path."""
    result = CliRunner().invoke(cli_app, ["lemmas", "MCNonFifoFailure", "--root", str(SPEC.parent)])
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert (
        "  disagreement on Lemma 0: on 1,656 of the 11,676 pairs where the replay fails, the "
        "search finds a path: the snapshot state is reachable from the initial state, but not "
        "by the white machines' own actions in their order (the replay checks one witness; "
        "first: state 693, snapshot 1)"
    ) in lines
    assert lines[-1] == (
        "Lemma 0 or Lemma 1 is violated; replay, reachability and the shadow networks "
        "disagree (see above)."
    )


def test_the_three_ways_agree_everywhere_on_a_model_without_mutant_steps() -> None:
    """On a model without mutant steps the three ways must agree everywhere."""
    counts = check_lemmas_everywhere(load_model("MCTokenValues", SPEC))
    assert counts.all_pass and counts.agree and not counts.vacuous


# --------------------------------------------------------------------------- topology


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
def test_generated_topologies_are_strongly_connected(n: int) -> None:
    for topo in (
        ring(n),
        directed_ring(n),
        complete(n),
        *(random_strongly_connected(n, extra=e, seed=s) for e in (0, 3) for s in range(5)),
    ):
        if n > 1:
            assert strongly_connected(topo.procs, topo.chans), topo.origin
        assert all(a != b for a, b in topo.chans)


def test_random_topologies_are_seeded() -> None:
    a = random_strongly_connected(6, extra=4, seed=11)
    assert a == random_strongly_connected(6, extra=4, seed=11)
    assert len(a.chans) == 6 + 4
    assert a.origin == "random_strongly_connected(6, extra=4, seed=11)"
    others = {random_strongly_connected(6, extra=4, seed=s).chans for s in range(10)}
    assert len(others) > 1


def test_a_built_model_explores_like_the_mc_file() -> None:
    """MCToken2's constants built programmatically give the same state graph."""
    loaded = load_model("MCToken2", SPEC)
    built = build_config(
        ring(2),
        app="token",
        tokens={p: int(str(apply_fn(loaded.constants["Tokens"], p))) for p in loaded.procs},
        snaps=loaded.snaps,
        starters={
            k: sorted(p for i, p in enumerate(loaded.procs) if m >> i & 1)
            for k, m in zip(loaded.snaps, loaded.starters, strict=True)
        },
        max_app_actions=loaded.max_app_actions,
        constraint=False,  # MCToken2 bounds its application in the guards alone
    )
    assert loaded.constants["Tokens"] == built.constants["Tokens"]
    assert loaded.starters == built.starters and loaded.chans == built.chans
    a, b = explore(loaded), explore(built)
    assert (a.distinct, a.total, a.depth) == (b.distinct, b.total, b.depth)


def test_build_config_rejects_a_topology_that_is_not_strongly_connected() -> None:
    from redletter.python_model.topology import Topology

    topo = Topology(("p1", "p2"), (("p1", "p2"),), "by hand")
    with pytest.raises(Exception, match="the topology by hand is not strongly connected"):
        build_config(topo)
