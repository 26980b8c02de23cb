"""Invariants, replay and the shadow network on hand-built steps."""

from __future__ import annotations

from pathlib import Path

from redletter.python_model.actions import app_state, init_states, step
from redletter.python_model.config import load_model
from redletter.python_model.invariants import (
    INVARIANTS,
    Checker,
    lemma0,
    lemma1,
    red_letter_invariant,
    replay,
    shadow0,
    shadow_lemma0,
    snapshot,
    type_ok,
)
from redletter.python_model.state import ACT_SEND

SPEC = Path(__file__).resolve().parent.parent / "spec"

# p2 -> p1 carries a token while p1 turns red: it must be recorded for that buffer.
RUN = [
    ("SendApp", {"c": ["p1", "p2"], "m": 1}),
    ("ReceiveApp", {"c": ["p1", "p2"], "i": 1}),
    ("SendApp", {"c": ["p2", "p1"], "m": 1}),
    ("StartSnapshot", {"p": "p1", "k": 1}),
    ("ReceiveRedLetter", {"c": ["p1", "p2"], "i": 1}),
    ("ReceiveApp", {"c": ["p2", "p1"], "i": 1}),
    ("ReceiveRedLetter", {"c": ["p2", "p1"], "i": 1}),
]


def test_a_complete_snapshot_satisfies_both_lemmas() -> None:
    cfg = load_model("MCToken2", SPEC)
    (s,) = init_states(cfg)
    states = [s]
    for action, params in RUN:
        t = step(cfg, states[-1], action, params)
        assert shadow_lemma0(cfg, states[-1], t)
        states.append(t)
    final = states[-1]
    assert final.sf[0] is not None  # complete
    assert all(f(cfg, x) for x in states for f in INVARIANTS.values())
    # the in-flight token was recorded for buffer p2 -> p1 (buffers sorted: p1p2, p2p1)
    assert snapshot(final, 0) == ((1, 0), ((), (1,)))
    ok, g = replay(cfg, snapshot(final, 0), final.red_acts[0])
    assert ok and g == final.sf[0]
    assert final.sf[0] == app_state(final)


def test_without_channel_recording_lemma0_is_the_first_violated() -> None:
    cfg = load_model("MCNoChannelRecordingFailure", SPEC)
    (s,) = init_states(cfg)
    for action, params in RUN:
        s = step(cfg, s, action, params)
    assert snapshot(s, 0) == ((1, 0), ((), ()))  # the token in flight is lost
    assert type_ok(cfg, s) and red_letter_invariant(cfg, s)
    assert not lemma0(cfg, s)
    assert not lemma1(cfg, s)  # the red receive cannot be replayed from the snapshot
    assert Checker(cfg).violated_invariant(s) == "Lemma0"


def test_replay_stops_at_the_first_disabled_action() -> None:
    cfg = load_model("MCToken2", SPEC)
    (s,) = init_states(cfg)
    g = app_state(s)
    ok, stuck = replay(cfg, g, ((ACT_SEND, 0, 1, 2), (ACT_SEND, 0, 1, 1)))
    assert not ok
    assert stuck == ((0, 0), ((2,), ()))


def test_shadow_of_a_running_snapshot_follows_rules_i_to_iii() -> None:
    cfg = load_model("MCToken2", SPEC)
    (s,) = init_states(cfg)
    s = step(cfg, s, "SendApp", {"c": ["p1", "p2"], "m": 1})
    s = step(cfg, s, "StartSnapshot", {"p": "p1", "k": 1})
    s = step(cfg, s, "SendApp", {"c": ["p1", "p2"], "m": 1})  # behind the red letter
    # p1 red: recorded state 1; p2 white: 0; buffer p1 -> p2: what is before the letter
    assert shadow0(cfg, s, 0) == ((1, 0), ((1,), ()))


def test_red_letter_invariant_catches_a_missing_letter() -> None:
    cfg = load_model("MCNeverForwardFailure", SPEC)
    checker = Checker(cfg)
    (s,) = init_states(cfg)
    s = step(cfg, s, "StartSnapshot", {"p": "p1", "k": 1})
    assert checker.violated_invariant(s) is None
    s = step(cfg, s, "ReceiveRedLetter", {"c": ["p1", "p2"], "i": 1})
    assert not red_letter_invariant(cfg, s)  # p2 red, p3 white, no letter on p2 -> p3
    assert checker.violated_invariant(s) == "RedLetterInvariant"
