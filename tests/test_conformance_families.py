"""One judge per spec family, and the schedule files a variant's runs are kept in."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from redletter.conformance.judges.families import (
    family_of_trace,
    judge_module,
    schedule_of,
)
from redletter.conformance.traces import (
    Trace,
    make_step,
    model_source,
    read_schedule,
    write_schedule,
)
from redletter.errors import InputError

SPEC = Path(__file__).resolve().parent.parent / "spec"


def _trace(model: str) -> Trace:
    tla = (SPEC / f"{model}.tla").read_text(encoding="utf-8")
    cfg = (SPEC / f"{model}.cfg").read_text(encoding="utf-8")
    steps = (make_step("StartSnapshot", {"p": "p1", "k": 1}),)
    return Trace(f"{model}-x", model, "hand", steps, tla, cfg)


def test_a_trace_knows_its_family_from_the_model_it_carries() -> None:
    assert family_of_trace(_trace("MCToken2")) == "ChandyLamport"
    assert family_of_trace(_trace("MCLazyToken2")) == "LazyChandyLamport"
    assert family_of_trace(_trace("MCObserverToken2")) == "ObserverSnapshot"
    assert family_of_trace(_trace("MCBarrierAligned")) == "BarrierSnapshot"
    # Chandy-Lamport schedules are normalised in the model; a variant's are as they are
    assert schedule_of(_trace("MCToken2")) is None
    assert schedule_of(_trace("MCLazyToken2")) is tuple


def test_a_family_without_a_judge_is_a_clear_error() -> None:
    with pytest.raises(InputError) as info:
        judge_module("Paxos")
    assert info.value.message == (
        "no conformance judge for models of Paxos; the judges: ChandyLamport,"
        " LazyChandyLamport, ObserverSnapshot, BarrierSnapshot"
    )


def test_a_schedule_file_round_trips(tmp_path: Path) -> None:
    t = _trace("MCLazyToken2")
    path = write_schedule(tmp_path / "a.schedule.json", t)
    assert read_schedule(path) == t
    assert model_source("MCLazyToken2", SPEC)[0] == t.model_tla


def test_a_schedule_file_of_another_kind_is_refused_with_its_path(tmp_path: Path) -> None:
    path = tmp_path / "b.schedule.json"
    path.write_text(json.dumps({"kind": "something-else"}), encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_schedule(path)
    assert info.value.message == (
        f"{path}: not a redletter variant schedule: \"kind\" must be 'redletter-variant-schedule/1'"
    )
    assert info.value.path == str(path)
