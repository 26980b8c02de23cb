"""The comparison page's counterexamples as space-time diagrams
(docs/variants/<model>.svg): drawn from TLC's counterexamples read into each
variant's Python engine, current, on the page, and telling the seeds' stories."""

from __future__ import annotations

from pathlib import Path

import pytest

from redletter.project import Project
from redletter.variants import measurements_path
from redletter.variants.catalogue import VARIANTS, failure_models
from redletter.variants.diagrams import counterexample_diagram, diagram_path, render_diagrams
from redletter.variants.measure import load_measurements

ROOT = Path(__file__).resolve().parent.parent
PROJECT = Project(ROOT)
MEASURED = load_measurements(measurements_path(PROJECT))
PAGE = (ROOT / "docs" / "variants.md").read_text(encoding="utf-8")


def test_the_diagrams_are_not_stale() -> None:
    drawn = render_diagrams(PROJECT, MEASURED)
    assert set(drawn) == {m for v in VARIANTS[1:] for m in failure_models(v)}
    for model, svg in drawn.items():
        path = ROOT / diagram_path(model)
        assert path.read_text(encoding="utf-8") == svg, (
            f"{path} is stale: run `.venv/bin/redletter variants diagrams`"
        )
        assert f"]({diagram_path(model).relative_to('docs').as_posix()})" in PAGE


def _events(model: str) -> list[tuple[str, str, str]]:
    d = counterexample_diagram(PROJECT, MEASURED.counterexamples[model])
    assert d is not None
    return [(e.kind, e.machine, e.label) for e in d.events]


def test_skipping_alignment_counts_a_record_twice_after_the_restore() -> None:
    events = _events("MCBarrierAtLeastOnceFailure")
    # k processes s1's first record before it snapshots (its barrier from s1 is in) ...
    processed = [i for i, e in enumerate(events) if e == ("receive", "k", "s1.1")]
    snapshot = events.index(("record_state", "k", "k snapshots its state"))
    restore = events.index(("internal", "k", "restore checkpoint 1"))
    assert len(processed) == 2 and processed[0] < snapshot < restore < processed[1]
    # ... and s1, restored to its recorded position, reads it again
    assert events.index(("record_state", "s1", "s1 records its position")) < events.index(
        ("send", "s1", "s1.1")
    )


def test_the_early_observer_leaves_a_message_in_flight() -> None:
    d = counterexample_diagram(PROJECT, MEASURED.counterexamples["MCObserverEarlyFailure"])
    assert d is not None
    sent = {e.msg_id for e in d.events if e.kind == "send" and e.snapshot is None}
    received = {e.msg_id for e in d.events if e.kind == "receive"}
    assert sent - received  # the white message the observer never waited for
    assert ("internal", "p1", "declares snapshot 1 complete") in [
        (e.kind, e.machine, e.label) for e in d.events
    ]


def test_the_unpaid_debt_is_a_lasso() -> None:
    d = counterexample_diagram(PROJECT, MEASURED.counterexamples["MCLazyUnpaidFailure"])
    assert d is not None
    assert d.notes == (
        "then the run stutters for ever (TLC's lasso): the property never holds again",
    )


def test_explore_draws_a_variants_counterexample(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from redletter.cli import main

    out = tmp_path / "x.svg"
    code = main(
        ["explore", "MCBarrierAtLeastOnceFailure", "--diagram", str(out), "--root", str(ROOT)]
    )
    assert code == 1  # the model must fail
    assert capsys.readouterr().out.splitlines()[-1] == (
        f"Diagram of the counterexample written to {out} (9 steps)"
    )
    svg = out.read_text(encoding="utf-8")
    assert "MCBarrierAtLeastOnceFailure: counterexample" in svg
    assert svg.count(">restore checkpoint 1<") == 3  # one event per machine
