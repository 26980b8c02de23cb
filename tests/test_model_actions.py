"""Action functions: guards word for word, None when disabled, step() errors."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from redletter.errors import InputError
from redletter.python_model.actions import (
    ActionDisabled,
    init_states,
    internal_event,
    receive_app,
    receive_red_letter,
    send_app,
    start_snapshot,
    step,
    successors,
)
from redletter.python_model.config import ModelConfig, load_model
from redletter.python_model.state import State

SPEC = Path(__file__).resolve().parent.parent / "spec"


@pytest.fixture(scope="module")
def token2() -> ModelConfig:
    return load_model("MCToken2", SPEC)


@pytest.fixture(scope="module")
def init(token2: ModelConfig) -> State:
    (s,) = init_states(token2)
    return s


def _doc(fn: object) -> str:
    """A function's docstring read from the source (compiled with mypyc, the
    function itself has none: python_model/native.py)."""
    name = getattr(fn, "__name__", "")
    tree = ast.parse(
        (Path(__file__).resolve().parent.parent / "python_model" / "actions.py").read_text()
    )
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return ast.get_docstring(node) or ""
    raise AssertionError(f"no function {name} in python_model/actions.py")


def test_docstrings_quote_the_guards() -> None:
    assert "m \\in AppSendable(Src(c), Dst(c), local[Src(c)])" in _doc(send_app)
    assert 'buf[c][i].kind = "red"' in _doc(receive_red_letter)
    assert "p \\notin red[k]" in _doc(start_snapshot)
    assert "e \\in AppEvents(p, local[p])" in _doc(internal_event)


def test_send_app_is_disabled_beyond_the_tokens_held(token2: ModelConfig, init: State) -> None:
    # p1 holds 2 tokens, p2 none: Sendable(p, q, s) == 1..s
    assert send_app(token2, init, ("p1", "p2"), 3) is None
    assert send_app(token2, init, ("p2", "p1"), 1) is None
    t = send_app(token2, init, ("p1", "p2"), 2)
    assert t is not None
    assert t.local == (0, 0) and t.buf[token2.chan_index[("p1", "p2")]] == (2,)


def test_receives_are_disabled_on_an_empty_buffer(token2: ModelConfig, init: State) -> None:
    assert receive_app(token2, init, ("p1", "p2"), 1) is None
    assert receive_red_letter(token2, init, ("p1", "p2"), 1) is None


def test_token_app_has_no_internal_events(token2: ModelConfig, init: State) -> None:
    assert internal_event(token2, init, "p1", 0) is None


def test_receive_red_letter_needs_a_red_letter_at_the_head(
    token2: ModelConfig, init: State
) -> None:
    s = send_app(token2, init, ("p1", "p2"), 1)
    assert s is not None
    s = start_snapshot(token2, s, "p1", 1)
    assert s is not None  # buffer p1 -> p2 is now <<app 1, red 1>>
    assert receive_red_letter(token2, s, ("p1", "p2"), 1) is None
    assert receive_app(token2, s, ("p1", "p2"), 2) is None  # FIFO: only position 1
    t = receive_app(token2, s, ("p1", "p2"), 1)
    assert t is not None
    assert receive_red_letter(token2, t, ("p1", "p2"), 1) is not None


def test_start_snapshot_guards(token2: ModelConfig, init: State) -> None:
    s = start_snapshot(token2, init, "p1", 1)
    assert s is not None
    assert start_snapshot(token2, s, "p1", 1) is None  # p \in red[k]
    seed = load_model("MCSeed", SPEC)
    (s0,) = init_states(seed)
    assert start_snapshot(seed, s0, "P1", 1) is None  # MayStart: only after 2 events
    assert start_snapshot(seed, s0, "P2", 1) is None  # not a starter


def test_sequential_waits_for_the_previous_snapshot() -> None:
    cfg = load_model("MCSequential", SPEC)
    (s,) = init_states(cfg)
    assert start_snapshot(cfg, s, "p1", 2) is None
    with pytest.raises(ActionDisabled) as e:
        step(cfg, s, "StartSnapshot", {"p": "p1", "k": 2})
    assert str(e.value) == (
        "StartSnapshot(p='p1', k=2) is disabled: Sequential and snapshot 1 < 2 has not completed"
    )


def test_step_says_why_an_action_is_disabled(token2: ModelConfig, init: State) -> None:
    with pytest.raises(ActionDisabled) as e:
        step(token2, init, "SendApp", {"c": ["p2", "p1"], "m": 1})
    assert str(e.value) == (
        "SendApp(c=['p2', 'p1'], m=1) is disabled: "
        "m \\notin AppSendable(p, q, local[p]) (m = 1, local[p] = 0)"
    )
    assert e.value.code == "RL-MODEL-DISABLED"
    with pytest.raises(ActionDisabled) as e:
        step(token2, init, "ReceiveApp", {"c": ["p1", "p2"], "i": 1})
    assert str(e.value) == (
        "ReceiveApp(c=['p1', 'p2'], i=1) is disabled: "
        "i \\notin Deliverable(c) (i = 1, Len(buf[c]) = 0)"
    )


def test_step_rejects_malformed_steps(token2: ModelConfig, init: State) -> None:
    with pytest.raises(InputError) as e:
        step(token2, init, "Teleport", {})
    assert str(e.value) == (
        "unknown action 'Teleport' (expected one of SendApp, InternalEvent, ReceiveApp, "
        "ReceiveRedLetter, StartSnapshot)"
    )
    with pytest.raises(InputError) as e:
        step(token2, init, "SendApp", {"c": ["p1", "p9"], "m": 1})
    assert str(e.value) == "unknown buffer ['p1', 'p9'] (Chan of MCToken2)"
    with pytest.raises(InputError) as e:
        step(token2, init, "SendApp", {"c": ["p1", "p2"]})
    assert str(e.value) == "SendApp needs parameter 'm'"


def test_successors_agree_with_step(token2: ModelConfig, init: State) -> None:
    frontier = [init]
    for _ in range(4):
        nxt = []
        for s in frontier:
            for name, params, t in successors(token2, s):
                assert step(token2, s, name, params) == t
                nxt.append(t)
        frontier = nxt
    assert frontier


def test_non_fifo_mutant_delivers_any_position() -> None:
    cfg = load_model("MCNonFifoFailure", SPEC)
    (s,) = init_states(cfg)
    s = step(cfg, s, "SendApp", {"c": ["p1", "p2"], "m": 1})
    s = step(cfg, s, "StartSnapshot", {"p": "p1", "k": 1})
    s = step(cfg, s, "SendApp", {"c": ["p1", "p2"], "m": 1})
    # <<app 1, red 1, app 1>>: the second app message may overtake the red letter
    assert receive_app(cfg, s, ("p1", "p2"), 3) is not None
    assert receive_red_letter(cfg, s, ("p1", "p2"), 2) is not None


def test_late_enqueue_mutant_puts_the_message_before_the_red_letter() -> None:
    cfg = load_model("MCLateRedLetterFailure", SPEC)
    (s,) = init_states(cfg)
    s = step(cfg, s, "StartSnapshot", {"p": "p1", "k": 1})
    s = step(cfg, s, "SendApp", {"c": ["p1", "p2"], "m": 1})
    assert s.buf[cfg.chan_index[("p1", "p2")]] == (1, -1)  # app 1 before red letter 1
