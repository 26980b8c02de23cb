"""docs/variants.json holds what TLC measures: measured again here, the
counterexamples and costs are the same (TLC runs with one worker, so its
breadth-first counterexample is the same on every run)."""

from __future__ import annotations

from pathlib import Path

import pytest

from redletter.manifest import load_manifest
from redletter.project import Project
from redletter.variants import measurements_path
from redletter.variants.catalogue import VARIANTS
from redletter.variants.measure import (
    Measurements,
    load_measurements,
    measure,
    measurements_to_json,
    plan,
)

pytestmark = pytest.mark.tlc

ROOT = Path(__file__).resolve().parent.parent
PROJECT = Project(ROOT)


def _measure(names: tuple[str, ...]) -> tuple[Measurements, Measurements]:
    manifest = load_manifest(PROJECT.manifest_path)
    stored = load_measurements(measurements_path(PROJECT))
    fresh = measure(PROJECT, plan(manifest, VARIANTS, names), tlc_version=manifest.tlc.version)
    return stored, fresh


def _same(stored: Measurements, fresh: Measurements) -> None:
    old, new = measurements_to_json(stored), measurements_to_json(fresh)
    for kind in ("counterexamples", "costs"):
        for model, value in new[kind].items():
            assert value == old[kind][model], f"{kind} of {model} differ from docs/variants.json"


@pytest.mark.slow
def test_a_counterexample_and_a_cost_measured_again_are_the_stored_ones(tlc_jar: Path) -> None:
    stored, fresh = _measure(("MCBarrierAtLeastOnceFailure", "MCObserverEarlyFailure"))
    assert set(fresh.counterexamples) == {"MCBarrierAtLeastOnceFailure", "MCObserverEarlyFailure"}
    assert set(fresh.costs) == {"MCBarrierAtLeastOnceFailure"}
    _same(stored, fresh)


@pytest.mark.long
def test_every_measurement_measured_again_is_the_stored_one(tlc_jar: Path) -> None:
    stored, fresh = _measure(())
    assert set(fresh.counterexamples) == set(stored.counterexamples)
    assert set(fresh.costs) == set(stored.costs)
    _same(stored, fresh)
