"""The explorer and the pictures, as data (issue 22, item 5): the failing run's schedule
continued to its snapshot's completion, the records of each step with nothing of the
future, the rules' legend, label placement, barrier words and restores, COS 418's
expected vs recorded.  The browser tests (tests/test_browser.py) look at the same
pages in Chromium."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

import pytest

from redletter.conformance.adapters.cos418.report import expected_vs_recorded
from redletter.conformance.formats.cos418 import RecordedMessage, Snap
from redletter.conformance.judges.barrier import generate as barrier_traces
from redletter.conformance.judges.barrier import judge_trace as judge_barrier
from redletter.conformance.judges.drive import InProcessNode
from redletter.conformance.nodes.barrier import MUTANTS as BARRIER_MUTANTS
from redletter.conformance.report import (
    completion_steps,
    diagram_events,
    record_notes,
    restore_notes,
    words_of,
)
from redletter.conformance.traces import Step, make_step, replay_states
from redletter.python_model.actions import init_states
from redletter.python_model.config import ModelConfig, load_model
from redletter.render import teach
from redletter.render.diagram import (
    BARRIER_WORDS,
    EXPECTED_WORDS,
    Event,
    draw,
    label_boxes,
    layout,
    overlapping_labels,
)
from redletter.render.explorer import RULE_CODES, explorer_data, render_explorer
from redletter.render.proof import ALGORITHM_RULES, RULE_WORDS, prove_run
from tests.test_teach import CONCURRENT

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "spec"

#: The shrunk schedule of the no-channel-recording mutant on MCToken2 (tests/test_browser.py):
#: it ends at the divergence, before p1 receives its red letter.
SHRUNK: tuple[Step, ...] = (
    make_step("StartSnapshot", {"p": "p2", "k": 1}),
    make_step("SendApp", {"c": ["p1", "p2"], "m": 1}),
    make_step("ReceiveApp", {"c": ["p1", "p2"], "i": 1}),
)


@pytest.fixture(scope="module")
def token2() -> ModelConfig:
    return load_model("MCToken2", SPEC)


def _plain(steps: tuple[Step, ...]) -> list[tuple[str, dict[str, object]]]:
    return [(a, dict(p)) for a, p in steps]


def test_the_shrunk_schedule_is_continued_to_the_snapshots_completion(
    token2: ModelConfig,
) -> None:
    extra = completion_steps(token2, SHRUNK)
    assert extra == (
        make_step("ReceiveRedLetter", {"c": ["p2", "p1"], "i": 1}),
        make_step("ReceiveRedLetter", {"c": ["p1", "p2"], "i": 1}),
    )
    before = prove_run(token2, init_states(token2)[0], _plain(SHRUNK))
    assert [w.walk is None for w in before.walks] == [True, True]
    assert "does not complete in this run" in before.walks[0].unavailable
    after = prove_run(token2, init_states(token2)[0], _plain(SHRUNK + extra))
    assert [(w.lemma, w.walk is not None and w.walk.verdict.ok) for w in after.walks] == [
        (0, True),
        (1, True),
    ]


def test_nothing_is_added_to_a_complete_or_an_unstarted_snapshot(token2: ModelConfig) -> None:
    full = SHRUNK + completion_steps(token2, SHRUNK)
    assert completion_steps(token2, full) == ()
    assert completion_steps(token2, (make_step("SendApp", {"c": ["p1", "p2"], "m": 1}),)) == ()
    # the completion stops as soon as every started snapshot is complete
    s = replay_states(token2, full)[-1]
    assert all(sf is not None for sf in s.sf)


def test_the_records_of_a_step_hold_nothing_of_the_future() -> None:
    cfg = load_model("MCConcurrent", SPEC)
    run = teach.events_of_trace(cfg, init_states(cfg)[0], CONCURRENT)
    assert [r.text for r in teach.record_notes(cfg, run, 0)] == [
        "snapshot 1: not started yet",
        "snapshot 1: not started yet",
        "snapshot 2: not started yet",
        "snapshot 2: not started yet",
    ]
    assert [r.text for r in teach.record_notes(cfg, run, 1)][:2] == [
        "snapshot 1: 1 token; p2→p1: [] open",
        "snapshot 1: state not recorded yet; p1→p2: [] open",
    ]
    # at the last state, exactly the notes the diagram is drawn with
    assert teach.record_notes(cfg, run, len(run.states) - 1) != ()
    end = teach.record_notes(cfg, run)
    assert [r.text for r in end] == [
        r.text for r in teach.record_notes(cfg, run, len(run.states) - 1)
    ]


def _payload(page: str, run: int = 0) -> dict[str, object]:
    """The page's data as the explorer's script sees it with run ``run`` shown: the
    shared parts and that run's."""
    m = re.search(r'<script type="application/json" id="rl-data">(.*?)</script>', page, re.S)
    assert m is not None
    data = json.loads(m.group(1))
    assert isinstance(data, dict)
    runs = data.pop("runs")
    assert isinstance(runs, list)
    return {**data, **runs[run], "runCount": len(runs)}


def test_the_page_carries_the_rules_the_records_per_step_and_the_added_steps(
    token2: ModelConfig,
) -> None:
    steps = _plain(SHRUNK + completion_steps(token2, SHRUNK))
    pr = prove_run(token2, init_states(token2)[0], steps)
    page = render_explorer(explorer_data(pr, title="t", added_from=4))
    data = _payload(page)
    assert data["addedFrom"] == 4
    notes = data["recNotes"]
    assert isinstance(notes, list) and len(notes) == len(steps) + 1
    assert notes[0] == {
        "1:p1": "snapshot 1: not started yet",
        "1:p2": "snapshot 1: not started yet",
    }
    assert notes[3]["1:p2"] == "snapshot 1: 0 tokens; p1→p2: [1] open"
    rules = data["rules"]
    assert isinstance(rules, dict)
    for lemma in (0, 1):
        assert rules[str(lemma)] == [[c, RULE_WORDS[lemma][c]] for c in RULE_CODES]
    assert data["algorithm"] == [list(r) for r in ALGORITHM_RULES]
    # the legend's place on the page, and its words verbatim from EWD 864
    assert '<section class="rl-rules" id="rl-rules"' in page
    assert ALGORITHM_RULES[2][2] == "upon turning red, each machine records its own state"


def test_labels_that_would_collide_rise_a_row_or_are_shortened() -> None:
    events = [
        Event("internal", "p1", label="deposit 25", step=1),
        Event("internal", "p1", label="withdraw 10", step=2),
        Event("internal", "p1", label="transfer everything", step=3),
        Event("internal", "p1", label="a very long label indeed", step=4),
        Event("internal", "p2", label="x", step=1),
    ]
    drawing = draw(layout(["p1", "p2"], events, title="crowded"))
    ys = {t: y for t, _, y, _, _ in label_boxes(drawing.svg)}
    assert ys["withdraw 10"] < ys["deposit 25"]  # risen a row above its neighbour
    # the third and fourth find no row free: shortened to the room left, the full
    # text a tooltip
    assert "transfer eve…" in ys and "transfer everything" not in ys
    assert ys["a very long…"] == ys["withdraw 10"]
    assert "<title>transfer everything</title>transfer eve…</text>" in drawing.svg
    assert overlapping_labels(drawing.svg) == []
    assert drawing.warnings == (
        "2 event labels shortened or left out where they would overlap another (each is in "
        "the step list)",
    )


def test_a_barrier_run_speaks_of_barriers_and_draws_its_restore() -> None:
    trace = barrier_traces("MCBarrierAtLeastOnceFailure", SPEC, walks=0)[0]
    r = judge_barrier(trace, InProcessNode(BARRIER_MUTANTS["NeverBlocked"][0]))
    obs = r.observations
    assert words_of(obs) == BARRIER_WORDS
    restores = [e for e in diagram_events(obs) if e.label == "restore checkpoint 1"]
    assert sorted(e.machine for e in restores) == ["k", "s1", "s2"]
    assert len({e.step for e in restores}) == 1
    assert restore_notes(obs) == (
        "restore of checkpoint 1: every operator and source goes back to what the checkpoint "
        "stored; messages in flight then are dropped (their arrows end at the restore)",
    )
    assert all(n.text.startswith("checkpoint 1: ") for n in record_notes(obs))
    machines = sorted({o.node for o in obs} | {x for o in obs for s in o.sent for x in s.channel})
    svg = draw(layout(machines, diagram_events(obs), words=words_of(obs))).svg
    assert ">barrier</text>" in svg and "red letter" not in svg
    assert "cut of checkpoint 1" in svg


def test_a_cos418_picture_names_the_expectation_and_the_packages_record() -> None:
    links = (("N1", "N2"), ("N2", "N1"))
    expected = [Snap(0, (("N1", 5), ("N2", 2)), (RecordedMessage("N2", "N1", 1),))]
    recorded = [Snap(0, (("N1", 5), ("N2", 2)), ())]
    notes = expected_vs_recorded(("N1", "N2"), links, expected, recorded)
    assert [n.text for n in notes] == [
        "snapshot 0 expected: 5 tokens, N2→N1: [1]",
        "snapshot 0 recorded: 5 tokens, N2→N1: [] (differs)",
        # a link that holds nothing in either is left out
        "snapshot 0 expected: 2 tokens, no messages in flight",
        "snapshot 0 recorded: 2 tokens, no messages in flight (as expected)",
    ]
    missing = expected_vs_recorded(("N1", "N2"), links, expected, [])
    assert missing[1].text == "snapshot 0 recorded: nothing (differs)"
    svg = draw(layout(["N1", "N2"], [], records=notes, words=EXPECTED_WORDS)).svg
    assert "expected vs recorded, by snapshot" in svg
    assert "recorded by each snapshot" not in svg


def test_a_failing_runs_folder_holds_the_explorer_and_the_run_it_shows(tmp_path: Path) -> None:
    from redletter.conformance.judges.drive import judge_trace
    from redletter.conformance.nodes.mutants import MUTANTS
    from redletter.conformance.report import new_run_folder, write_report
    from redletter.conformance.shrink import ShrinkResult
    from redletter.conformance.traces import Trace, read_trace, write_trace

    cfg = load_model("MCToken2", SPEC)
    # a trace of MCToken2 with the shrunk steps (the model's text as spec/ has it)
    model_tla = (SPEC / "MCToken2.tla").read_text(encoding="utf-8")
    model_cfg = (SPEC / "MCToken2.cfg").read_text(encoding="utf-8")
    trace_in = Trace("t", "MCToken2", "test", SHRUNK, model_tla, model_cfg)
    written = write_trace(tmp_path / "t.itf.json", trace_in, cfg)
    trace = read_trace(written)
    node = InProcessNode(MUTANTS["no-channel-recording"].factory)
    r = judge_trace(trace, node, drain=False)
    assert r.divergence is not None and r.divergence.step == 3
    folder = new_run_folder(tmp_path / "store", "t")
    out = write_report(
        folder, [r], node_cmd="mutant", shrunk=ShrinkResult(trace, r, 1, len(SHRUNK))
    )
    page = out["explorer"].read_text(encoding="utf-8")
    data = _payload(page)
    assert data["runCount"] == 1  # without the node to drive again, the model's run only
    assert data["addedFrom"] == 4 and len(data["steps"]) == 6  # type: ignore[arg-type]
    shown = read_trace(folder.path / "explain.itf.json")
    assert shown.steps == SHRUNK + completion_steps(cfg, SHRUNK)
    assert (
        data["command"] == f".venv/bin/redletter explain --itf {folder.path / 'explain.itf.json'}"
    )
    walks = data["walks"]
    assert isinstance(walks, list)
    assert [(w["lemma"], w["available"], w["ok"]) for w in walks] == [
        (0, True, True),
        (1, True, True),
    ]
    assert str(data["subtitle"]).endswith(
        "The shrunk schedule ends at step 3, before every snapshot completes; steps 4–5 are "
        "the model's own completion (the judge's drain: every message in flight delivered in "
        "FIFO order), added so that both shadow networks can be drawn. The node was judged on "
        "the shrunk schedule."
    )


def test_a_failing_nodes_own_run_is_drawn_beside_the_models_and_breaks_at_its_step(
    tmp_path: Path,
) -> None:
    from redletter.conformance.judges.drive import judge_trace
    from redletter.conformance.nodes.mutants import MUTANTS
    from redletter.conformance.report import new_run_folder, write_report
    from redletter.conformance.shrink import ShrinkResult
    from redletter.conformance.traces import Trace, read_trace, write_trace

    cfg = load_model("MCToken2", SPEC)
    model_tla = (SPEC / "MCToken2.tla").read_text(encoding="utf-8")
    model_cfg = (SPEC / "MCToken2.cfg").read_text(encoding="utf-8")
    trace = read_trace(
        write_trace(tmp_path / "t.itf.json", Trace("t", "MCToken2", "test", SHRUNK, model_tla,
                                                    model_cfg), cfg)
    )  # fmt: skip
    node = InProcessNode(MUTANTS["no-channel-recording"].factory)
    r = judge_trace(trace, node, drain=False)
    folder = new_run_folder(tmp_path / "store", "t")
    out = write_report(
        folder, [r], node_cmd="mutant", shrunk=ShrinkResult(trace, r, 1, len(SHRUNK)), node=node
    )
    page = out["explorer"].read_text(encoding="utf-8")
    mine, model = _payload(page, 0), _payload(page, 1)
    assert (mine["runCount"], mine["runLabel"], model["runLabel"]) == (
        2,
        "the node's run",
        "the model's run",
    )
    assert page.count('<figure class="rl-run"') == 2
    # the model keeps step; the node's own run breaks Lemma 0's shadow network at the
    # step where it diverged, by rule (iii d): it recorded nothing of the message in flight
    model_walks = model["walks"]
    mine_walks = mine["walks"]
    assert isinstance(model_walks, list) and isinstance(mine_walks, list)
    walks = [(w["lemma"], w["ok"], w.get("verdictStep")) for w in model_walks]
    assert walks == [(0, True, None), (1, True, None)]
    lemma0 = next(w for w in mine_walks if w["lemma"] == 0)
    assert (lemma0["ok"], lemma0["verdictStep"]) == (False, 3)
    assert lemma0["moves"][-1]["rule"] == "iii d"
    assert lemma0["moves"][-1]["why"] == (
        "after step 3 (p2 receives a message from p1): buffer p1→p2 holds [1] in the shadow, "
        "but rule (iii d) says []"
    )
    # its own completion: p1 receives p2's red letter, p2 p1's; recorded as the node did
    assert mine["addedFrom"] == 4 and mine["addedNote"] == "the node's own completion"
    assert mine["recNotes"][-1] == {  # type: ignore[index]
        "1:p1": "snapshot 1: 1 token; p2→p1: []",
        "1:p2": "snapshot 1: 0 tokens; p1→p2: []",
    }
    # the report: the model's snapshot beside the node's, the difference marked
    html = unescape(out["html"].read_text(encoding="utf-8"))
    assert '<tr class="rl-differs"><td>p1→p2</td><td>[1]</td><td>[] ✗ differs</td></tr>' in html
    assert (
        "it differs from the model's at p1→p2; the model's snapshot 1 holds 2 tokens in all, "
        "the node's 1; the system holds 2." in html
    )
    # and the node's own diagram notes its empty recording of p1→p2
    svg = out["diagram"].read_text(encoding="utf-8")
    assert ">snapshot 1: 0 tokens; p1→p2: []</text>" in svg
