"""What a failing node's report shows as expected: the model's snapshot on the node's
shrunk schedule (continued with the model's own completion), beside what the node
reported at the end of its own run (:func:`redletter.conformance.judges.noderun.follow_node`).

The model's snapshot always conserves what the system conserves (tokens), and the
report says exactly where the node's differs.  ``tests/test_conformance_mutants_drive.py``
checks this for every mutant of the zoo (:func:`check_node_expectation`); the test here
pins one in words.
"""

from __future__ import annotations

import re
from pathlib import Path

from redletter.conformance.judges.drive import InProcessNode, JudgeResult, NodeSpec
from redletter.conformance.judges.noderun import follow_node
from redletter.conformance.nodes.mutants import MUTANTS
from redletter.conformance.report import completion_steps, snapshot_rows
from redletter.conformance.traces import Trace, make_step, model_source, replay_states
from redletter.python_model.apps import TokenApp
from redletter.python_model.config import ModelConfig, load_model
from redletter.render.report import SnapshotView

SPEC = Path(__file__).resolve().parent.parent / "spec"

#: Divergences about when something happens (a red letter, a close, a completion, the
#: moment of a recording), not what a snapshot holds: the node's snapshot may then be
#: the model's in every place, or differ only in completion.
TIMING = frozenset(
    {
        "missing-red-letter",
        "extra-red-letter",
        "red-letter-order",
        "missing-close",
        "extra-close",
        "duplicate-close",
        "missing-complete",
        "early-complete",
        "duplicate-complete",
        "missing-record-state",
        "report-complete",
    }
)


def _places(r: JudgeResult) -> set[str]:
    """The machines and channels a divergence is about (a channel's two ends too)."""
    d = r.divergence
    assert d is not None
    places = {d.node}
    for a, b in re.findall(r"\b(\w+) -> (\w+)\b", f"{d.summary} {d.model_did}"):
        places |= {f"{a}→{b}", a, b}
    return places


def check_node_expectation(
    cfg: ModelConfig, trace: Trace, result: JudgeResult, node: NodeSpec, log_dir: Path
) -> tuple[SnapshotView, ...]:
    """The report's snapshots of a failing node (see the module docstring)."""
    run = follow_node(trace, node, cfg=cfg, log_dir=log_dir)
    views = snapshot_rows(cfg, trace, run)
    assert views, "a failing run shows the model's snapshot beside the node's"
    # the model's snapshots, from its own states: each conserves the tokens
    end = replay_states(cfg, tuple(trace.steps) + completion_steps(cfg, trace.steps))[-1]
    if isinstance(cfg.app, TokenApp):
        for k in range(len(cfg.snaps)):
            if end.sf[k] is None:
                continue
            held = sum(int(str(x)) for x in end.rec_machine[k])
            assert held + sum(sum(b) for b in end.rec_buf[k]) == cfg.app.total, k
    for v in views:
        if isinstance(cfg.app, TokenApp):
            assert v.note.startswith(
                f"the model's snapshot {v.snapshot} holds {cfg.app.total} token"
            ), v.note
    differs = {place for v in views for place in v.differs}
    if result.divergence is None:  # a crash: its report is nothing at all
        assert run.stopped, result.reason
        return views
    if result.divergence.kind not in TIMING:
        assert differs, (result.divergence.describe(), views)
    content = {p.split("'")[0] for p in differs}
    if content:
        assert content & _places(result), (result.divergence.describe(), differs)
    return views


def test_the_model_and_the_node_side_by_side_say_where_they_differ(tmp_path: Path) -> None:
    tla, cfg_text = model_source("MCToken2", SPEC)
    steps = (
        make_step("StartSnapshot", {"p": "p2", "k": 1}),
        make_step("SendApp", {"c": ["p1", "p2"], "m": 1}),
        make_step("ReceiveApp", {"c": ["p1", "p2"], "i": 1}),
    )
    trace = Trace("t", "MCToken2", "test", steps, tla, cfg_text)
    cfg = load_model("MCToken2", SPEC)
    node = InProcessNode(MUTANTS["no-channel-recording"].factory)
    from redletter.conformance.judges.drive import judge_trace

    r = judge_trace(trace, node, cfg=cfg, log_dir=tmp_path)
    (view,) = check_node_expectation(cfg, trace, r, node, tmp_path)
    assert view.rows == (
        ("p1", "1 token", "1 token", False),
        ("p2", "0 tokens", "0 tokens", False),
        ("p1→p2", "[1]", "[]", True),
        ("p2→p1", "[]", "[]", False),
        ("p1's part complete", "yes", "yes", False),
        ("p2's part complete", "yes", "yes", False),
    )
    assert view.differs == ("p1→p2",)
    assert view.note == (
        "the model's snapshot 1 holds 2 tokens in all, the node's 1; the system holds 2"
    )
