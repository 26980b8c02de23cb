"""Flink's barrier snapshots (BarrierSnapshot.tla) mirrored in Python: the records'
paths, alignment (blocking) and what skipping it does, barriers overtaking records
when unaligned, the properties (ExactlyOnceAfterRestore, ConsistentCut) on the
must-fail models' counterexamples and on hand-built states, the TLA+ codec, the
liveness predicates and the model reader's refusals.  Counts and verdicts against the
manifest are tests/test_model_counts.py's; the exact comparison with TLC's graph is
`make check`'s."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from redletter.errors import InputError
from redletter.python_model.barrier import (
    PROCESS,
    RECEIVE_BARRIER,
    BarrierEngine,
    BarrierState,
    barrier_positions,
    blocked,
    consistent_cut,
    exactly_once_after_restore,
)
from redletter.python_model.engines import load_engine
from redletter.python_model.explore import explore

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "spec"


def _engine(model: str, spec: Path = SPEC) -> BarrierEngine:
    engine = load_engine(model, spec)
    assert isinstance(engine, BarrierEngine)
    return engine


@pytest.fixture(scope="module")
def aligned() -> BarrierEngine:
    return _engine("MCBarrierAligned")


@pytest.fixture(scope="module")
def states(aligned: BarrierEngine) -> list[BarrierState]:
    g = explore(aligned, graph=True).graph
    assert g is not None
    return list(g.states)


def test_every_state_reads_back_from_its_tla_print(
    aligned: BarrierEngine, states: list[BarrierState]
) -> None:
    assert len(states) == 2007  # spec/manifest.json's MCBarrierAligned
    for s in states[::3]:
        assert aligned.from_tla(aligned.to_tla(s)) == s


def test_a_record_goes_round_the_loop_max_rounds_times() -> None:
    cfg = _engine("MCBarrierCyclic").cfg
    path = [(cfg.chans[c], m) for c, m in cfg.paths[(0, 1)]]
    assert path == [
        (("s", "h"), (0, 1, 0)),
        (("h", "t"), (0, 1, 0)),
        (("t", "h"), (0, 1, 1)),  # the back edge starts round 1
        (("h", "t"), (0, 1, 1)),  # and MaxRounds = 1 ends it there
    ]


def test_an_input_whose_barrier_arrived_blocks_until_the_operator_snapshots(
    aligned: BarrierEngine, states: list[BarrierState]
) -> None:
    cfg = aligned.cfg
    waiting = [
        s
        for s in states
        if s.restored == 0
        and any(s.barrier_in[0] >> c & 1 and s.buf[c] for c in range(len(cfg.chans)))
        and not s.snapped[0] >> cfg.proc_index["k"] & 1
    ]
    assert waiting
    for s in waiting:
        c = next(c for c in range(len(cfg.chans)) if s.barrier_in[0] >> c & 1 and s.buf[c])
        assert blocked(cfg, s, c)
        assert not any(a == PROCESS and raw == (c,) for a, raw, _ in aligned.successors(s))
    skipped = _engine("MCBarrierAtLeastOnceFailure")  # Blocked <- NeverBlocked
    assert not any(blocked(skipped.cfg, s, c) for s in waiting for c in range(len(cfg.chans)))


def test_skipping_alignment_replays_a_record_after_the_restore() -> None:
    """Seed 002: "On a restore, these records will occur as duplicates"."""
    engine = _engine("MCBarrierAtLeastOnceFailure")
    v = explore(engine).violation
    assert v is not None and v.name == "ExactlyOnceAfterRestore"
    actions = [st.action for st in v.trace[1:]]
    restore = actions.index("Restore")
    # the record was processed into the checkpoint's state after its barrier arrived ...
    before = v.trace[restore].state
    k = engine.cfg.op_of[engine.cfg.proc_index["k"]]
    recorded = before.rec_state[0][k]
    assert recorded is not None
    assert dict(recorded)[(0, 1, 0)] == 1  # s1's first record, read after s1 recorded
    assert before.rec_pos[0][0] == 0  # ... its position before that record
    # ... so after the restore s1 reads it again and the operator counts it twice
    assert actions[restore + 1 :] == ["Emit", "Process"]
    assert dict(v.trace[-1].state.state[k])[(0, 1, 0)] == 2
    assert not exactly_once_after_restore(engine.cfg, v.trace[-1].state)


def test_skipping_alignment_records_an_inconsistent_cut() -> None:
    engine = _engine("MCBarrierAtLeastOnceCutFailure")
    v = explore(engine).violation
    assert v is not None and v.name == "ConsistentCut"
    assert consistent_cut(engine.cfg, v.trace[-2].state)
    assert not consistent_cut(engine.cfg, v.trace[-1].state)


def test_an_unaligned_barrier_overtakes_and_stores_the_records_ahead() -> None:
    engine = _engine("MCBarrierUnaligned")
    g = explore(engine, graph=True).graph
    assert g is not None
    cfg = engine.cfg
    overtaking = [
        (s, c, i)
        for s in g.states
        for c in range(len(cfg.chans))
        for i in barrier_positions(cfg, s, c)
        if i > 1
    ]
    assert overtaking
    s, c, i = overtaking[0]
    t = next(t for a, raw, t in engine.successors(s) if a == RECEIVE_BARRIER and raw == (c, i))
    n = 0
    assert t.rec_chan[n][c] == s.rec_chan[n][c] + s.buf[c][: i - 1]
    lost = _engine("MCBarrierUnalignedLostFailure")  # Overtaken <- Forgotten
    u = next(t for a, raw, t in lost.successors(s) if a == RECEIVE_BARRIER and raw == (c, i))
    assert u.rec_chan[n][c] == s.rec_chan[n][c]


def test_a_state_with_an_effect_counted_twice_after_a_restore(
    aligned: BarrierEngine, states: list[BarrierState]
) -> None:
    restored = next(s for s in states if s.restored and s.state[0])
    (e, _), *rest = restored.state[0]
    twice = dataclasses.replace(restored, state=(((e, 2), *rest),))
    assert exactly_once_after_restore(aligned.cfg, restored)
    assert not exactly_once_after_restore(aligned.cfg, twice)
    assert aligned.violated_invariant(twice) == "ExactlyOnceAfterRestore"


def test_the_liveness_predicates_are_mirrored(
    aligned: BarrierEngine, states: list[BarrierState]
) -> None:
    live, drained = aligned.predicate("Live", ()), aligned.predicate("Drained", ())
    started = aligned.predicate("Started", (1,))
    assert live is not None and drained is not None and started is not None
    (init,) = aligned.init_states()
    assert live(init) and not drained(init) and not started(init)
    assert any(not live(s) for s in states) and any(drained(s) for s in states)
    assert aligned.predicate("Started", (7,)) is None


def test_a_bad_mode_is_refused_where_it_is_written(tmp_path: Path) -> None:
    for f in ("MCBarrierAligned.tla", "MCBarrierAligned.cfg", "BarrierSnapshot.tla"):
        (tmp_path / f).write_text((SPEC / f).read_text(encoding="utf-8"), encoding="utf-8")
    tla = tmp_path / "MCBarrierAligned.tla"
    tla.write_text(tla.read_text(encoding="utf-8").replace('"aligned"', '"sideways"'))
    line = next(
        i
        for i, x in enumerate(tla.read_text(encoding="utf-8").splitlines(), start=1)
        if x.startswith("MCMode")
    )
    with pytest.raises(InputError) as info:
        load_engine("MCBarrierAligned", tmp_path)
    assert str(info.value) == f'{tla}:{line}: Mode must be "aligned" or "unaligned"'
