"""The worked example of seeds/001 replayed in MCSeed, and its space-time diagram."""

from __future__ import annotations

import random
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from redletter.errors import InputError
from redletter.python_model.actions import init_states
from redletter.python_model.config import ModelConfig, load_model
from redletter.python_model.invariants import snapshot
from redletter.render.diagram import (
    CHAR_PX,
    MIN_LANE_H,
    MIN_STEP_W,
    Event,
    draw,
    layout,
    render_svg,
)
from redletter.render.teach import diagram_of_trace, events_of_trace, seed_schedule

SPEC = Path(__file__).resolve().parents[1] / "spec"
SVG = "{http://www.w3.org/2000/svg}"

#: Two concurrent snapshots on MCConcurrent: p1 starts 1, p2 sends and starts 2, p1
#: records the message (for 1), the red letters cross, both complete, and a last
#: message is still in flight at the end.
CONCURRENT: tuple[tuple[str, dict[str, object]], ...] = (
    ("StartSnapshot", {"p": "p1", "k": 1}),
    ("SendApp", {"c": ["p2", "p1"], "m": 1}),
    ("StartSnapshot", {"p": "p2", "k": 2}),
    ("ReceiveApp", {"c": ["p2", "p1"], "i": 1}),
    ("ReceiveRedLetter", {"c": ["p2", "p1"], "i": 1}),
    ("ReceiveRedLetter", {"c": ["p1", "p2"], "i": 1}),
    ("ReceiveRedLetter", {"c": ["p1", "p2"], "i": 1}),
    ("ReceiveRedLetter", {"c": ["p2", "p1"], "i": 1}),
    ("SendApp", {"c": ["p1", "p2"], "m": 1}),
)


def _with_class(root: ET.Element, cls: str) -> list[ET.Element]:
    return [e for e in root.iter() if cls in (e.get("class") or "").split()]


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
    assert [label for kind, _, label in kinds if kind != "receive" or label] == list("ABIFGHCDJE")
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
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    marks = _with_class(root, "rl-rec")
    assert [m.get("data-step") for m in marks] == ["3", "5", "10"]  # P1, P3, P2 turn red
    assert len(_with_class(root, "rl-cut")) == 1  # one cut line through the three
    recorded = _with_class(root, "rl-recorded")  # the message sent at H, recorded for P2 -> P1
    assert [(m.get("data-send"), m.get("data-step")) for m in recorded] == [("9", "13")]
    assert len(_with_class(root, "rl-red")) == 6  # every machine sends 2 red letters
    assert _with_class(root, "rl-inflight") == []  # everything sent is received
    texts = [t.text for t in _with_class(root, "rl-record")]
    assert texts == [
        "snapshot 1: {A, B}; P2→P1: [H]; P3→P1: []",
        "snapshot 1: {F, G, H}; P1→P2: []; P3→P2: []",
        "snapshot 1: {I}; P1→P3: []; P2→P3: []",
    ]


def test_diagram_legend_fits_in_the_drawing(seed: ModelConfig) -> None:
    """The legend used to be cut off at "red le": every legend text now ends inside."""
    drawing = draw(diagram_of_trace(seed, init_states(seed)[0], seed_schedule(), title="t"))
    root = ET.fromstring(drawing.svg)
    legend = next(g for g in root.iter(f"{SVG}g") if g.get("class") == "rl-legend")
    texts = list(legend.iter(f"{SVG}text"))
    assert len(texts) == 6
    for t in texts:
        assert float(t.get("x", "0")) + len(t.text or "") * CHAR_PX <= drawing.width


def test_concurrent_snapshots_have_distinct_styles() -> None:
    cfg = load_model("MCConcurrent", SPEC)
    drawing = draw(diagram_of_trace(cfg, init_states(cfg)[0], CONCURRENT))
    root = ET.fromstring(drawing.svg)
    cuts = _with_class(root, "rl-cut")
    assert [c.get("data-snapshot") for c in cuts] == ["1", "2"]
    styles = {(c.get("stroke"), c.get("stroke-dasharray")) for c in cuts}
    assert len(styles) == 2
    shapes = {m.get("data-snapshot"): m.tag for m in _with_class(root, "rl-rec")}
    assert shapes == {"1": f"{SVG}circle", "2": f"{SVG}polygon"}  # a circle, a diamond
    letters = {
        (m.get("data-snapshot"), m.get("stroke-dasharray")) for m in _with_class(root, "rl-red")
    }
    assert letters == {("1", "6,4"), ("2", "10,3,2,3")}
    flying = _with_class(root, "rl-inflight")
    assert [(f.get("data-send"), f.get("stroke")) for f in flying] == [("9", "#1a1a1a")]
    assert [t.text for t in _with_class(root, "rl-inflight-label")] == ["1 in flight → p2"]
    assert drawing.warnings == ()


def _random_run(machines: int, steps: int, seed: int) -> list[Event]:
    """A run of ``steps`` steps on ``machines`` machines: each step a send, a receive of
    the oldest message in flight, or an internal event (seeded)."""
    rng = random.Random(seed)
    names = [f"m{i}" for i in range(machines)]
    flying: list[tuple[int, str, str]] = []
    events: list[Event] = []
    for n in range(steps):
        r = rng.random()
        if r < 0.4 or (r < 0.8 and not flying):
            a, b = rng.sample(names, 2)
            events.append(Event("send", a, (a, b), n, label=f"e{n}", step=n))
            flying.append((n, a, b))
        elif r < 0.8:
            mid, a, b = flying.pop(0)
            events.append(Event("receive", b, (a, b), mid, label=f"e{n}", step=n))
        else:
            events.append(Event("internal", rng.choice(names), label=f"e{n}", step=n))
    return events


def test_fifty_machines_five_hundred_events_stay_legible() -> None:
    events = _random_run(50, 500, seed=14)
    drawing = draw(layout([f"m{i}" for i in range(50)], events))
    assert drawing.legible, f"seed 14: {drawing.width} x {drawing.height}"
    assert drawing.step_width >= MIN_STEP_W and drawing.lane_height >= MIN_LANE_H
    assert drawing.warnings == (
        "event labels omitted: 500 steps leave 8 px per step (each event's label is in the "
        "step list)",
    )
    root = ET.fromstring(drawing.svg)
    names = {t.text for t in root.iter(f"{SVG}text") if t.get("font-weight") == "bold"}
    assert {f"m{i}" for i in range(50)} <= names
    assert drawing.width <= 5000 and drawing.height <= 1400


def test_a_run_too_long_to_read_says_so() -> None:
    events = _random_run(200, 3000, seed=14)
    drawing = draw(layout([f"m{i}" for i in range(200)], events))
    assert not drawing.legible
    warning = drawing.warnings[-1]
    # under the picture, wrapped at its width (never cut)
    notes = [t.text or "" for t in _with_class(ET.fromstring(drawing.svg), "rl-note")]
    lines = [line for line in notes if line in warning]
    assert " ".join(lines) == warning
    assert warning == (
        f"not legible at 100 % zoom or in print: 3000 events in 3000 steps on 200 machines "
        # the size measured before the warning's own lines were added below the drawing
        f"need {drawing.width} x {drawing.height - 18 * len(lines)} px "
        "(more than 16000 x 4000); draw a shorter run or fewer machines"
    )


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
