"""The worked example of seeds/001 replayed in MCSeed, and its space-time diagram."""

from __future__ import annotations

from pathlib import Path

import pytest

from redletter.errors import InputError
from redletter.python_model.actions import init_states
from redletter.python_model.config import ModelConfig, load_model
from redletter.python_model.invariants import snapshot
from redletter.render.diagram import Event, layout, render_svg
from redletter.render.teach import diagram_of_trace, events_of_trace, seed_schedule

SPEC = Path(__file__).resolve().parents[1] / "spec"


@pytest.fixture(scope="module")
def seed() -> ModelConfig:
    return load_model("MCSeed", SPEC)


def test_seed_example_records_what_the_example_says(seed: ModelConfig) -> None:
    run = events_of_trace(seed, init_states(seed)[0], seed_schedule())
    last = run.states[-1]
    local, bufs = snapshot(last, 0)
    by_proc = dict(zip(seed.procs, local, strict=True))
    assert by_proc == {"P1": ("A", "B"), "P2": ("F", "G", "H"), "P3": ("I",)}
    by_chan = dict(zip(seed.chans, bufs, strict=True))
    # Only P2 -> P1 records a message: the one sent at H (P2's third event).
    assert by_chan == {
        ("P1", "P2"): (),
        ("P1", "P3"): (),
        ("P2", "P1"): (3,),
        ("P2", "P3"): (),
        ("P3", "P1"): (),
        ("P3", "P2"): (),
    }
    assert last.sf[0] is not None  # the snapshot completed
    assert last.local[seed.proc_index["P1"]] == ("A", "B", "C", "D", "E")


def test_seed_example_events(seed: ModelConfig) -> None:
    run = events_of_trace(seed, init_states(seed)[0], seed_schedule())
    kinds = [(e.kind, e.machine, e.label) for e in run.events if e.snapshot is None]
    assert [label for kind, _, label in kinds if kind != "receive" or label] == list(
        "ABIFGHCDJE"
    )
    recorded = [e for e in run.events if e.kind == "record_message"]
    assert [(e.machine, e.channel, e.snapshot) for e in recorded] == [("P1", ("P2", "P1"), 1)]
    states = [e.machine for e in run.events if e.kind == "record_state"]
    assert states == ["P1", "P3", "P2"]
    # the red letter P1 sent to P2 right after B arrives after G received B's message
    sends = {e.msg_id: e for e in run.events if e.kind == "send"}
    receipts = [e for e in run.events if e.kind == "receive" and e.channel == ("P1", "P2")]
    assert [sends[e.msg_id].snapshot for e in receipts] == [None, 1]


def test_seed_diagram_draws_three_recorded_states_and_the_cut(seed: ModelConfig) -> None:
    svg = render_svg(diagram_of_trace(seed, init_states(seed)[0], seed_schedule(), title="t"))
    assert svg.startswith("<svg")
    assert svg.count('r="9"') == 3  # one circle per recorded machine state
    assert "cut of snapshot 1" in svg
    assert svg.count('stroke="#1e8449"') == 1  # the recorded message, drawn green


def test_diagram_rejects_unknown_machine() -> None:
    with pytest.raises(InputError) as e:
        layout(["p1"], [Event("internal", "p9")])
    assert str(e.value) == "event 0 (internal) happens at unknown machine 'p9'; the machines are p1"


def test_diagram_rejects_receive_without_send() -> None:
    with pytest.raises(InputError) as e:
        layout(["p1", "p2"], [Event("receive", "p2", ("p1", "p2"), 7)])
    assert str(e.value) == "event 0 receives message 7, which no earlier event sent"


def test_diagram_rejects_unknown_kind() -> None:
    with pytest.raises(InputError) as e:
        Event("explode", "p1")
    assert str(e.value) == (
        "unknown diagram event kind 'explode'; expected one of send, receive, internal, "
        "record_state, record_message"
    )
