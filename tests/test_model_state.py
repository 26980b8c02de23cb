"""to_tla / from_tla are exact against states as TLC 2.15 printed them (DOT labels)."""

from __future__ import annotations

import dataclasses
import pickle
from pathlib import Path

import pytest

from redletter.python_model.actions import init_states
from redletter.python_model.config import load_model
from redletter.python_model.explore import explore
from redletter.python_model.state import TLA_NAMES, State, from_tla, to_tla
from redletter.python_model.values import parse_state, print_state

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "spec"
DATA = ROOT / "tests" / "data" / "model"


@pytest.mark.parametrize("model", ["MCConcurrent", "MCSeed", "MCDiffusing"])
def test_tlc_printed_state_round_trips(model: str) -> None:
    cfg = load_model(model, SPEC)
    tlc = parse_state((DATA / f"{model}_state.txt").read_text())
    s = from_tla(cfg, tlc)
    assert to_tla(cfg, s) == tlc
    assert parse_state(print_state(to_tla(cfg, s))) == tlc


def test_initial_state_is_what_tlc_prints() -> None:
    cfg = load_model("MCConcurrent", SPEC)
    (s,) = init_states(cfg)
    expected = parse_state(
        "/\\ local = [p1 |-> 1, p2 |-> 1]\n"
        '/\\ buf = (<<"p1", "p2">> :> <<>> @@ <<"p2", "p1">> :> <<>>)\n'
        "/\\ red = <<{}, {}>>\n/\\ redBuf = <<{}, {}>>\n/\\ recMachine = <<<<>>, <<>>>>\n"
        '/\\ recBuf = <<(<<"p1", "p2">> :> <<>> @@ <<"p2", "p1">> :> <<>>), '
        '(<<"p1", "p2">> :> <<>> @@ <<"p2", "p1">> :> <<>>)>>\n'
        "/\\ S0 = << >>\n/\\ Sf = << >>\n/\\ whiteActs = <<<<>>, <<>>>>\n"
        "/\\ redActs = <<<<>>, <<>>>>"
    )
    assert to_tla(cfg, s) == expected
    assert list(to_tla(cfg, s)) == list(TLA_NAMES.values())


@pytest.mark.slow
def test_tlc_printed_states_are_reachable() -> None:
    cfg = load_model("MCConcurrent", SPEC)
    result = explore(cfg, graph=True)
    assert result.graph is not None
    reachable = set(result.graph.states)
    s = from_tla(cfg, parse_state((DATA / "MCConcurrent_state.txt").read_text()))
    assert s in reachable


def test_state_is_hashable_and_frozen() -> None:
    cfg = load_model("MCToken2", SPEC)
    (s,) = init_states(cfg)
    (t,) = init_states(cfg)
    assert s == t and hash(s) == hash(t) and s is not t
    assert len({s, t}) == 1
    with pytest.raises(AttributeError):
        s.red = (1,)  # type: ignore[misc]
    assert isinstance(s, State)


def test_a_state_keeps_the_hash_of_its_fields_when_pickled_or_replaced() -> None:
    """State's ``__init__`` is written out (for mypyc) and it pickles as its fields:
    either way the state is equal to one built anew and hashes as its fields do."""
    cfg = load_model("MCToken2", SPEC)
    (s,) = init_states(cfg)
    t = pickle.loads(pickle.dumps(s))
    assert t == s and hash(t) == hash(s) == hash(s.key())
    u = dataclasses.replace(s, red=(1,))
    assert u != s and u.red == (1,) and hash(u) == hash(u.key())
    assert u == State(*u.key())  # type: ignore[arg-type]
    with pytest.raises(AttributeError):
        s._hash = 0  # type: ignore[misc]
