"""Golden space-time diagrams: the SVG of each run below must not change unnoticed,
and no two of its texts may overlap.

One parametrized test over the corpus in ``tests/data/golden/diagrams/`` (one
``<name>.svg`` per case).  After a deliberate change to the drawing, look at the new
pictures, then rewrite the corpus with
``REDLETTER_UPDATE_GOLDEN=1 .venv/bin/pytest tests/test_diagram_golden.py``.
Overlap is measured on every text's box as the renderer measures it
(:func:`redletter.render.diagram.label_boxes`), on the golden cases, whose runs have
two concurrent snapshots, crowded labels, red letters in flight side by side, a
barrier run's restore, a COS 418 run whose marker went out late (drawn both ways, on a
time axis) and a failing node's own run.  No text may leave its picture's box either
(:func:`redletter.render.diagram.texts_outside`), on the golden cases and on the
pictures of many generated COS 418 runs with late markers.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from redletter.conformance.judges.barrier import generate as barrier_traces
from redletter.conformance.judges.barrier import judge_trace as judge_barrier
from redletter.conformance.judges.drive import InProcessNode
from redletter.conformance.nodes.barrier import MUTANTS as BARRIER_MUTANTS
from redletter.conformance.report import diagram_events, record_notes, restore_notes, words_of
from redletter.python_model.actions import init_states
from redletter.python_model.config import load_model
from redletter.render.diagram import (
    Event,
    RecordNote,
    draw,
    layout,
    overlapping_labels,
    texts_outside,
)
from redletter.render.teach import diagram_of_trace, seed_schedule
from tests.test_teach import CONCURRENT

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "data" / "golden" / "diagrams"
UPDATE = os.environ.get("REDLETTER_UPDATE_GOLDEN") == "1"


def _seed() -> str:
    cfg = load_model("MCSeed", ROOT / "spec")
    title = "MCSeed: the worked example of seeds/001"
    return draw(diagram_of_trace(cfg, init_states(cfg)[0], seed_schedule(), title=title)).svg


def _concurrent() -> str:
    cfg = load_model("MCConcurrent", ROOT / "spec")
    title = "MCConcurrent: two snapshots at once, a message in flight at the end"
    return draw(diagram_of_trace(cfg, init_states(cfg)[0], CONCURRENT, title=title)).svg


def _crowded() -> str:
    """Two concurrent snapshots on three machines: long labels in neighbouring columns
    of one line, two red letters and a message in flight between the same two lines,
    both cuts, and what each snapshot recorded beside each line."""
    e = Event
    events = [
        e("record_state", "p1", snapshot=1, step=1),
        e("send", "p1", ("p1", "p2"), 1, 1, step=1),
        e("send", "p1", ("p1", "p3"), 2, 1, step=1),
        e("send", "p3", ("p3", "p2"), 3, None, "transfer 40", step=2),
        e("internal", "p3", label="deposit 25", step=3),
        e("record_state", "p3", snapshot=2, step=4),
        e("send", "p3", ("p3", "p1"), 4, 2, step=4),
        e("send", "p3", ("p3", "p2"), 5, 2, step=4),
        e("internal", "p3", label="withdraw 10", step=5),
        e("receive", "p2", ("p1", "p2"), 1, 1, step=6),
        e("record_state", "p2", snapshot=1, step=6),
        e("send", "p2", ("p2", "p1"), 6, 1, step=6),
        e("send", "p2", ("p2", "p3"), 7, 1, step=6),
        e("receive", "p2", ("p3", "p2"), 3, None, "transfer 40", step=7),
        e("record_message", "p2", ("p3", "p2"), 3, 1, step=7),
        e("receive", "p1", ("p3", "p1"), 4, 2, step=8),
        e("record_state", "p1", snapshot=2, step=8),
        e("send", "p1", ("p1", "p2"), 8, 2, step=8),
        e("send", "p1", ("p1", "p3"), 9, 2, step=8),
        e("send", "p1", ("p1", "p2"), 10, None, "transfer 7", step=9),
    ]
    notes = [
        RecordNote(1, "p1", "snapshot 1: 100; p2→p1: [] open; p3→p1: [] open"),
        RecordNote(2, "p1", "snapshot 2: 100; p2→p1: [] open; p3→p1: []"),
        RecordNote(1, "p2", "snapshot 1: 60; p1→p2: []; p3→p2: [transfer 40] open"),
        RecordNote(1, "p3", "snapshot 1: not recorded"),
        RecordNote(2, "p3", "snapshot 2: 75"),
    ]
    title = "Two concurrent snapshots, crowded"
    return draw(layout(["p1", "p2", "p3"], events, title=title, records=notes)).svg


def _barrier_restore() -> str:
    trace = barrier_traces("MCBarrierAtLeastOnceFailure", ROOT / "spec", walks=0)[0]
    r = judge_barrier(trace, InProcessNode(BARRIER_MUTANTS["NeverBlocked"][0]))
    obs = r.observations
    machines = sorted({o.node for o in obs} | {x for o in obs for s in o.sent for x in s.channel})
    diagram = layout(
        machines,
        diagram_events(obs),
        title=f"{trace.model}: a barrier run and its restore",
        records=record_notes(obs),
        words=words_of(obs),
        notes=restore_notes(obs),
    )
    return draw(diagram).svg


def _cos418_late_marker() -> str:
    """The gallery's marker-after-app in a hand-written run (tests/test_cos418_expected.py):
    N1's marker leaves a tick late, behind a token."""
    from redletter.conformance.adapters.cos418.report import diagram_of
    from redletter.conformance.judges.run import judge_run
    from redletter.conformance.judges.rundoc import parse_run_document
    from tests.test_cos418_expected import OVERTAKEN, OVERTAKEN_STEPS
    from tests.test_cos418_runjudge import _doc

    doc = parse_run_document(_doc(OVERTAKEN, OVERTAKEN_STEPS, {"N1": 5, "N2": 5}, []))
    j = judge_run(doc)
    title = "COS 418: a marker sent late, behind a token"
    return diagram_of(doc, title, expected=j.expected, recorded=j.recorded)


def _node_run() -> str:
    """A failing node's own run: no-channel-recording on MCToken2, its recording of
    p1→p2 closed empty (conformance/judges/noderun.py)."""
    from redletter.conformance.judges.noderun import follow_node
    from redletter.conformance.nodes.mutants import MUTANTS
    from redletter.conformance.traces import Trace, make_step, model_source

    tla, cfg_text = model_source("MCToken2", ROOT / "spec")
    steps = (
        make_step("StartSnapshot", {"p": "p2", "k": 1}),
        make_step("SendApp", {"c": ["p1", "p2"], "m": 1}),
        make_step("ReceiveApp", {"c": ["p1", "p2"], "i": 1}),
    )
    cfg = load_model("MCToken2", ROOT / "spec")
    node = InProcessNode(MUTANTS["no-channel-recording"].factory)
    run = follow_node(Trace("t", "MCToken2", "test", steps, tla, cfg_text), node, cfg=cfg)
    obs = run.observations
    diagram = layout(
        list(cfg.procs),
        diagram_events(obs),
        title="no-channel-recording: the node's own run",
        records=record_notes(obs, cfg),
    )
    return draw(diagram).svg


CASES: dict[str, Callable[[], str]] = {
    "seed-example": _seed,
    "concurrent": _concurrent,
    "crowded": _crowded,
    "barrier-restore": _barrier_restore,
    "cos418-late-marker": _cos418_late_marker,
    "node-run": _node_run,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_diagram(name: str) -> None:
    path = GOLDEN / f"{name}.svg"
    got = CASES[name]()
    if UPDATE:
        path.write_text(got, encoding="utf-8")
    want = path.read_text(encoding="utf-8")
    if got != want:
        diff = "".join(
            list(
                difflib.unified_diff(
                    want.splitlines(keepends=True),
                    got.splitlines(keepends=True),
                    str(path),
                    "rendered now",
                )
            )[:40]
        )
        pytest.fail(
            f"the diagram {name} changed; if on purpose, look at it and rewrite the corpus "
            f"with REDLETTER_UPDATE_GOLDEN=1:\n{diff}"
        )


@pytest.mark.parametrize("name", sorted(CASES))
def test_no_two_texts_overlap(name: str) -> None:
    assert overlapping_labels(CASES[name]()) == []


@pytest.mark.parametrize("name", sorted(CASES))
def test_no_text_leaves_its_picture(name: str) -> None:
    assert texts_outside(CASES[name]()) == []


def test_the_outside_check_can_fail() -> None:
    svg = (
        '<svg width="100" height="40"><text x="10" y="20">recorded by each snapshot</text>'
        '<text x="50" y="30"><tspan x="50" dy="0">in</tspan><tspan x="50" dy="15">below'
        "</tspan></text></svg>"
    )
    assert texts_outside(svg) == ["recorded by each snapshot", "below"]


def test_pictures_of_late_markers_keep_every_text_inside_and_apart() -> None:
    """The pictures of generated COS 418 runs whose markers go out late (up to 12
    servers, concurrent snapshots): every text inside the picture, no two overlapping."""
    from redletter.conformance.adapters.cos418.campaign import generate_case
    from redletter.conformance.adapters.cos418.report import diagram_of
    from redletter.conformance.judges.run import judge_run
    from redletter.conformance.judges.rundoc import parse_run_document
    from tests.cos418_runs import course_run

    for index in range(0, 40, 3):
        c = generate_case(29, index)
        doc = parse_run_document(course_run(c.topology, c.scenario, index, late_markers=True))
        j = judge_run(doc)
        svg = diagram_of(doc, c.name, expected=j.expected, recorded=j.recorded)
        assert texts_outside(svg) == [], c.name
        assert overlapping_labels(svg) == [], c.name


def test_the_overlap_check_can_fail() -> None:
    svg = (
        '<svg><text x="10" y="20">cut of snapshot 1</text>'
        '<text x="60" y="25" text-anchor="middle">transfer 40</text></svg>'
    )
    assert overlapping_labels(svg) == [("cut of snapshot 1", "transfer 40")]


def test_every_golden_file_has_a_case() -> None:
    assert sorted(p.stem for p in GOLDEN.glob("*.svg")) == sorted(CASES)
