"""The comparison page of the seeds' snapshot algorithms (docs/variants.md): the page
is what its generator makes of the measurements, the measurements cover what the
catalogue promises, and the pieces (the probe, the trace reader, the JSON) do what
they say.  Re-measuring with TLC is in tests/test_variants_tlc.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from redletter.cli import main
from redletter.errors import Exit, InputError
from redletter.manifest import load_manifest
from redletter.project import Project
from redletter.python_model.engines import FAMILIES as FAMILIES_OF_ENGINES
from redletter.python_model.temporal import read_module_uses
from redletter.tlc import MSG_STATE, MSG_STUTTERING, TlcMessage, TlcResult, classify
from redletter.variants import measurements_path, render_page
from redletter.variants.catalogue import FAMILIES, GROUPS, VARIANTS, cost_models, failure_models
from redletter.variants.measure import (
    _trace_states,
    load_measurements,
    measurements_from_json,
    measurements_to_json,
    probe_cfg,
    probe_module,
)
from redletter.variants.page import FLINK_MARK, PYTHON_MARK
from redletter.variants.traces import NOTE, lanes

ROOT = Path(__file__).resolve().parent.parent
PROJECT = Project(ROOT)
PAGE = ROOT / "docs" / "variants.md"
MEASURED = load_measurements(measurements_path(PROJECT))
MANIFEST = load_manifest(PROJECT.manifest_path)


def test_the_page_is_not_stale() -> None:
    assert render_page(PROJECT) == PAGE.read_text(encoding="utf-8"), (
        "docs/variants.md is stale: run `.venv/bin/python -m redletter.variants >"
        " docs/variants.md` (or `.venv/bin/redletter variants measure` to measure again)"
    )


def test_the_measurements_cover_the_catalogue() -> None:
    """No "not measured yet" on the page: every model that must fail has its
    counterexample, every cost model its costs, and nothing else is kept."""
    failing = {m for v in VARIANTS for m in failure_models(v)}
    costed = {m for v in VARIANTS for m in cost_models(v)}
    assert set(MEASURED.counterexamples) == failing
    assert set(MEASURED.costs) == costed
    assert {m for g in GROUPS for m in g.models} == costed
    assert "not measured yet" not in PAGE.read_text(encoding="utf-8")


def test_the_measurements_agree_with_the_manifest() -> None:
    rows = {e.model: e for e in MANIFEST.models}
    for name, c in MEASURED.counterexamples.items():
        assert (c.result, c.violated) == (rows[name].expect, rows[name].violated), name
    for name, costs in MEASURED.costs.items():
        if rows[name].expect == "success":
            assert costs.distinct == rows[name].distinct, name
        assert set(costs.metrics) == {m.name for m in FAMILIES[_family(name)].metrics}


def _family(model: str) -> str:
    return next(v.family for v in VARIANTS if model in v.costs_on)


def test_every_variant_model_is_on_the_page() -> None:
    """A model of a variant spec (one that is not Chandy-Lamport's) is one the page
    talks about, and the other way round; every model without a Python mirror is one."""
    on_page = {m for v in VARIANTS[1:] for m in (*v.models, *failure_models(v), *v.costs_on)}
    chandy_lamport = FAMILIES_OF_ENGINES[0][1]
    variant = {
        e.model
        for e in MANIFEST.models
        if not chandy_lamport(read_module_uses(PROJECT.spec_dir / f"{e.model}.tla"))
    }
    assert variant == on_page
    assert {e.model for e in MANIFEST.models if not e.python} <= on_page


def test_the_measurements_round_trip_through_json() -> None:
    text = measurements_path(PROJECT).read_text(encoding="utf-8")
    again = measurements_from_json(json.loads(text), measurements_path(PROJECT))
    assert json.dumps(measurements_to_json(again), indent=1) + "\n" == text


def test_malformed_measurements_say_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "variants.json"
    path.write_text('{"tlc": "2.15"}', encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_measurements(path)
    assert info.value.code == "RL-INPUT-VARIANTS"
    assert str(info.value) == (
        f"{path}: malformed measurements (KeyError: 'command'); it holds the measurements"
        " docs/variants.md is made from: measure them again with `.venv/bin/redletter variants"
        " measure`."
    )
    path.write_text("{", encoding="utf-8")
    with pytest.raises(InputError, match=r"not valid JSON \(line 1: Expecting"):
        load_measurements(path)


def test_the_page_marks_the_sections_later_parts_fill_in() -> None:
    text = PAGE.read_text(encoding="utf-8")
    for mark in (PYTHON_MARK, FLINK_MARK):
        assert text.count(mark) == 1
        assert text.count(mark.replace("section:", "end of section:")) == 1


def test_the_probe_module_word_for_word() -> None:
    name, text = probe_module("MCBarrierAligned", FAMILIES["barrier"])
    assert name == "ProbeMCBarrierAligned"
    assert text == (
        "---- MODULE ProbeMCBarrierAligned ----\n"
        "\\* Generated by redletter.variants.measure: the extremes of the costs of"
        " MCBarrierAligned.\n"
        "EXTENDS MCBarrierAligned, TLC\n"
        "ASSUME TLCSet(1, -1) /\\ TLCSet(2, 1000000000)\n"
        "ASSUME TLCSet(3, -1) /\\ TLCSet(4, 1000000000)\n"
        "ASSUME TLCSet(5, -1) /\\ TLCSet(6, 1000000000)\n"
        "Track(hi, lo, name, x) ==\n"
        '    /\\ IF x > TLCGet(hi) THEN TLCSet(hi, x) /\\ PrintT(<<"redletter-cost", name,'
        ' "max", x>>) ELSE TRUE\n'
        '    /\\ IF x < TLCGet(lo) THEN TLCSet(lo, x) /\\ PrintT(<<"redletter-cost", name,'
        ' "min", x>>) ELSE TRUE\n'
        "CostProbe ==\n"
        '    /\\ \\A k \\in DOMAIN Sf : Track(1, 2, "ControlMessages", ControlMessages(k))\n'
        '    /\\ \\A k \\in DOMAIN Sf : Track(3, 4, "StoredMessages", StoredMessages(k))\n'
        '    /\\ Track(5, 6, "Waiting", Waiting)\n'
        "====\n"
    )


def test_the_probe_cfg_keeps_the_model_and_checks_only_the_probe() -> None:
    cfg = (ROOT / "spec" / "MCBarrierAtLeastOnceFailure.cfg").read_text(encoding="utf-8")
    assert probe_cfg(cfg) == (
        "\\* Model MCBarrierAtLeastOnceFailure: see MCBarrierAtLeastOnceFailure.tla.\n"
        "CONSTANTS\n"
        "    Proc <- MCProc\n"
        "    Chan <- MCChan\n"
        "    Sources <- MCSources\n"
        "    BackEdges <- MCBackEdges\n"
        "    Input <- MCInput\n"
        "    RouteTo <- MCRouteTo\n"
        "    MaxRounds <- MCMaxRounds\n"
        "    Ckpt <- MCCkpt\n"
        "    Mode <- MCMode\n"
        "    Blocked <- [BarrierSnapshot] NeverBlocked\n"
        "SPECIFICATION FairSpec\n"
        "INVARIANT\n"
        "    CostProbe\n"
    )
    cfg = (ROOT / "spec" / "MCLazyUnpaidFailure.cfg").read_text(encoding="utf-8")
    assert "CONSTRAINT AppActionBound\nINVARIANT\n    CostProbe\n" in probe_cfg(cfg)
    assert "SnapshotsComplete" not in probe_cfg(cfg)


def test_trace_states_read_tlc_messages() -> None:
    msgs = (
        TlcMessage(2110, 1, "Invariant Inv is violated."),
        TlcMessage(MSG_STATE, 4, "1: <Initial predicate>\n/\\ x = 0"),
        TlcMessage(MSG_STATE, 4, "2: <Next line 3, col 1 to line 3, col 9 of module M>\n/\\ x = 1"),
        TlcMessage(MSG_STUTTERING, 4, "3: Stuttering"),
    )
    result: TlcResult = classify(msgs, model="M", exit_code=12, seconds=0.0)
    states = _trace_states(result)
    assert [(s.action, s.text) for s in states] == [
        ("Initial predicate", "/\\ x = 0"),
        ("Next", "/\\ x = 1"),
        ("Stuttering", ""),
    ]


def test_the_at_least_once_counterexample_reads_as_the_seed_tells_it() -> None:
    """Seed 002: records after the barrier in the state of checkpoint n, replayed again
    after the restore."""
    c = MEASURED.counterexamples["MCBarrierAtLeastOnceFailure"]
    table = lanes(c, "barrier", {"blocks": False})
    assert table.machines == ("s1", "s2", "k")
    assert [(r.action, dict(r.cells)) for r in table.rows] == [
        ("InjectBarrier", {"s1": "checkpoint 1: records position 0, barrier 1 \u2192 k"}),
        ("Emit", {"s1": "reads s1.1 \u2192 k"}),
        ("InjectBarrier", {"s2": "checkpoint 1: records position 0, barrier 1 \u2192 k"}),
        (
            "ReceiveBarrier",
            {"k": "barrier 1 from s1; keeps processing that input (alignment skipped)"},
        ),
        ("Process", {"k": "applies s1.1"}),
        (
            "ReceiveBarrier",
            {"k": "barrier 1 from s2; snapshots its state {s1.1}", NOTE: "checkpoint 1 complete"},
        ),
        (
            "Restore",
            {
                NOTE: "the job fails and restores checkpoint 1: positions [s1 |-> 0, s2 |-> 0],"
                " states k {s1.1}, no stored records"
            },
        ),
        ("Emit", {"s1": "reads s1.1 \u2192 k"}),
        ("Process", {"k": "applies s1.1"}),
    ]


def test_every_counterexample_reads_step_by_step() -> None:
    """Every step of every stored counterexample says what some machine (or the run)
    did: a step the reader cannot explain would be an empty row on the page."""
    for name, c in MEASURED.counterexamples.items():
        v = next(v for v in VARIANTS if name in failure_models(v))
        table = lanes(c, v.family, {})
        assert len(table.rows) == len(c.states) - 1, name
        for row in table.rows:
            assert any(row.cells.values()), f"{name}: step {row.step} ({row.action}) unexplained"


def test_the_page_command_prints_the_page(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["variants", "page", "--root", str(ROOT)]) == Exit.OK
    assert capsys.readouterr().out == PAGE.read_text(encoding="utf-8")


def test_the_generator_reports_missing_measurements(tmp_path: Path) -> None:
    (tmp_path / "spec").mkdir()
    (tmp_path / "spec" / "manifest.json").write_text(
        (ROOT / "spec" / "manifest.json").read_text(encoding="utf-8"), encoding="utf-8"
    )
    out = subprocess.run(
        [sys.executable, "-m", "redletter.variants"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == Exit.BAD_INPUT
    assert out.stdout == ""
    assert out.stderr == (
        f"error[RL-INPUT-VARIANTS]: {tmp_path.resolve() / 'docs' / 'variants.json'}: cannot"
        " read the measurements (No such file or directory); it holds the measurements"
        " docs/variants.md is made from: measure them again with `.venv/bin/redletter variants"
        " measure`.\n"
        "measure again with `.venv/bin/redletter variants measure` (it rewrites the file and"
        " docs/variants.md); see docs/errors.md#rl-input-variants\n"
    )
