"""The observer with a piggybacked token (ObserverSnapshot.tla) mirrored in Python:
bags (canonical, one receipt per distinct message, any message next), the state's
TLA+ codec, the spec's invariants on hand-built states, the completion rule with and
without message counts, and the model reader's refusals.  Counts and verdicts against
the manifest are tests/test_model_counts.py's; the exact comparison with TLC's graph
is `make check`'s."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from redletter.errors import InputError
from redletter.python_model.engines import load_engine
from redletter.python_model.explore import explore
from redletter.python_model.observer import (
    RECEIVE_APP,
    ObserverEngine,
    ObsState,
    completion_rule,
    counts_invariant,
    red_messages_from_red_machines,
)
from redletter.python_model.values import print_state

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "spec"


@pytest.fixture(scope="module")
def token2() -> ObserverEngine:
    engine = load_engine("MCObserverToken2", SPEC)
    assert isinstance(engine, ObserverEngine)
    return engine


@pytest.fixture(scope="module")
def states(token2: ObserverEngine) -> list[ObsState]:
    g = explore(token2, graph=True).graph
    assert g is not None
    return list(g.states)


def test_every_state_reads_back_from_its_tla_print(
    token2: ObserverEngine, states: list[ObsState]
) -> None:
    assert len(states) == 5392  # spec/manifest.json's MCObserverToken2
    for s in states[::5]:  # every fifth (BFS order: every depth), to stay fast
        assert token2.from_tla(token2.to_tla(s)) == s


def test_a_bag_prints_as_tlc_prints_it(token2: ObserverEngine) -> None:
    (init,) = token2.init_states()
    two = dataclasses.replace(init, buf=((((1, 0), 2),), ()), n_sent=(2, 0))
    assert "/\\ buf = " in print_state(token2.to_tla(two))
    line = next(x for x in print_state(token2.to_tla(two)).splitlines() if x.startswith("/\\ buf"))
    assert line == (
        '/\\ buf = (<<"p1", "p2">> :> ([toks |-> {}, val |-> 1] :> 2) @@ <<"p2", "p1">> :> <<>>)'
    )
    assert token2.from_tla(token2.to_tla(two)) == two


def test_one_receipt_per_distinct_message_and_any_message_next(token2: ObserverEngine) -> None:
    (init,) = token2.init_states()
    c = token2.cfg.chan_index[("p1", "p2")]
    copies = dataclasses.replace(init, buf=((((1, 0), 2),), *init.buf[1:]), local=(0, 0))
    got = [raw for a, raw, _ in token2.successors(copies) if a == RECEIVE_APP]
    assert got == [(c, 1, 0)]  # \E m \in Elems(buf[c]): two copies, one binding
    bag = (((1, 0), 1), ((2, 1), 1))
    mixed = dataclasses.replace(init, buf=(bag, *init.buf[1:]), local=(0, 0))
    got = [raw for a, raw, _ in token2.successors(mixed) if a == RECEIVE_APP]
    assert got == [(c, 1, 0), (c, 2, 1)]  # not FIFO: either message may arrive first


def test_the_counts_say_how_many_white_messages_were_in_transit(
    token2: ObserverEngine, states: list[ObsState]
) -> None:
    cfg = token2.cfg
    assert all(counts_invariant(cfg, s) and red_messages_from_red_machines(cfg, s) for s in states)
    both_red = next(s for s in states if s.red[0] == 0b11 and any(s.n_sent))
    wrong = dataclasses.replace(both_red, rep_sent=((9, 9),))
    assert not counts_invariant(cfg, wrong)
    assert token2.violated_invariant(wrong) == "CountsInvariant"
    # a message bearing the token from a machine that does not hold it
    white = next(s for s in states if s.red[0] == 0 and not any(s.buf))
    forged = dataclasses.replace(white, buf=((((1, 1), 1),), ()))
    assert not red_messages_from_red_machines(cfg, forged)


def test_the_observer_waits_for_the_forwards_only_with_counts() -> None:
    early = load_engine("MCObserverEarlyFailure", SPEC)
    assert isinstance(early, ObserverEngine)
    result = explore(early)
    assert result.violation is not None and result.violation.name == "Lemma0"
    steps = [(st.action, st.params) for st in result.violation.trace[1:]]
    assert steps == [
        ("SendApp", {"c": ["p1", "p2"], "v": 1}),
        ("StartSnapshot", {"k": 1}),
        ("ReceiveRequest", {"p": "p2", "k": 1}),
        ("DeclareComplete", {"k": 1}),
    ]
    declared = result.violation.trace[-2].state  # every saved state in, a message in transit
    assert any(declared.buf) and completion_rule(early.cfg, declared, 0)
    counting = load_engine("MCObserverToken2", SPEC)
    assert isinstance(counting, ObserverEngine)
    assert not completion_rule(counting.cfg, declared, 0)


def test_a_completion_rule_override_must_name_its_module(tmp_path: Path) -> None:
    for f in ("MCObserverEarlyFailure.tla", "ObserverSnapshotToken.tla"):
        (tmp_path / f).write_text((SPEC / f).read_text(encoding="utf-8"), encoding="utf-8")
    cfg = (SPEC / "MCObserverEarlyFailure.cfg").read_text(encoding="utf-8")
    cfg = cfg.replace("[ObserverSnapshot] AllSavedStatesIn", "AllSavedStatesIn")
    (tmp_path / "MCObserverEarlyFailure.cfg").write_text(cfg, encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_engine("MCObserverEarlyFailure", tmp_path)
    assert str(info.value) == (
        f"{tmp_path / 'MCObserverEarlyFailure.cfg'}:9: CompletionRule <- AllSavedStatesIn must"
        " name the module its actions use: write CompletionRule <- [ObserverSnapshot]"
        " AllSavedStatesIn"
    )
