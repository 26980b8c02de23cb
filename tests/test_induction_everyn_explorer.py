"""The every-N conjuncts along runs of the model, and the explorer's panel of them:
all hold on a correct run; on a mutant's counterexample the first to break is named;
a model whose state the every-N state cannot hold says why."""

from __future__ import annotations

from pathlib import Path

import pytest

from redletter.python_model.actions import init_states
from redletter.python_model.config import load_model
from redletter.python_model.symbolic.induction.everyn.onrun import track
from redletter.render.explorer import every_n_panel, explorer_data, render_explorer
from redletter.render.proof import prove_run
from redletter.render.teach import counterexample, seed_schedule

SPEC = Path(__file__).resolve().parents[1] / "spec"


def test_every_conjunct_holds_along_the_seed_run() -> None:
    cfg = load_model("MCSeed", SPEC)
    pr = prove_run(cfg, init_states(cfg)[0], seed_schedule())
    t = track(pr.cfg, pr.run.states, pr.run.ids, pr.steps)
    assert t.available and len(t.failures) == len(pr.states)
    assert t.first_broken() is None
    panel = every_n_panel(pr)
    assert panel["first"] is None
    page = render_explorer(explorer_data(pr, title="seed"))
    assert 'id="rl-everyn"' in page and "showEveryN" in page


@pytest.mark.parametrize(
    ("model", "first"),
    [
        ("MCNoChannelRecordingFailure", (3, "RecordedIsProphesied")),
        ("MCNewestFirstRecordingFailure", (5, "RecordedInSendOrder")),
        ("MCMixedSnapshotsFailure", (4, "RedBufferJoinsRedMachines")),
        ("MCSwallowingRecordingFailure", (3, "RedActionCopied")),
    ],
)
def test_the_first_conjunct_a_mutant_breaks(model: str, first: tuple[int, str]) -> None:
    cfg = load_model(model, SPEC)
    steps, _ = counterexample(cfg)
    assert steps is not None
    pr = prove_run(cfg, init_states(cfg)[0], steps)
    t = track(pr.cfg, pr.run.states, pr.run.ids, pr.steps)
    assert t.first_broken() == first
    assert every_n_panel(pr)["first"] == {"step": first[0], "name": first[1]}


def test_a_recorded_red_letter_has_no_every_n_reading() -> None:
    cfg = load_model("MCHistoryRedLetterRecordedFailure", SPEC)
    steps, _ = counterexample(cfg)
    assert steps is not None
    pr = prove_run(cfg, init_states(cfg)[0], steps)
    panel = every_n_panel(pr)
    assert panel == {
        "available": False,
        "why": "step 11: the recorded stream of P1→P2 in snapshot 1 changes without a "
        "message received into it (this model records a red letter as a message, which the "
        "every-N state cannot hold)",
    }
