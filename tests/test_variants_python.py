"""The comparison page's "The Python model's figures": written from what
`redletter variants measure-python` kept in docs/variants.json, every variant model
on it, and a figure that disagrees with TLC's (the manifest) shown as such."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from redletter.errors import InputError
from redletter.manifest import load_manifest
from redletter.project import Project
from redletter.variants import measurements_path
from redletter.variants.measure import load_measurements
from redletter.variants.python_figures import (
    figures_from_json,
    figures_to_json,
    python_section,
    variant_models,
)

ROOT = Path(__file__).resolve().parent.parent
PROJECT = Project(ROOT)
MANIFEST = load_manifest(PROJECT.manifest_path)
MEASURED = load_measurements(measurements_path(PROJECT))


def test_the_figures_round_trip_through_json() -> None:
    figures, machine = figures_from_json(MEASURED.python)
    assert figures and figures_to_json(figures, machine) == MEASURED.python


def test_every_measured_default_model_agrees_with_tlc() -> None:
    figures, _ = figures_from_json(MEASURED.python)
    text = "\n".join(python_section(MANIFEST, MEASURED.python))
    for e in variant_models(MANIFEST):
        if e.suite == "default":
            f = figures[e.model]  # the default suite is always measured
            assert f.result == e.expect, e.model
            assert f.crosscheck is not None and not f.crosscheck.startswith("MISMATCH")
            if e.expect == "success":
                assert (f.distinct, f.total, f.depth) == (e.distinct, e.total, e.depth)
    assert "**no**" not in text


def test_a_count_that_differs_from_tlcs_is_shown() -> None:
    data = copy.deepcopy(MEASURED.python)
    data["models"]["MCLazyToken2"]["distinctStates"] = 4283
    row = next(x for x in python_section(MANIFEST, data) if x.startswith("| `MCLazyToken2`"))
    assert "| **no**: TLC 4284/8303/19 |" in row


def test_unmeasured_figures_say_how_to_measure() -> None:
    assert python_section(MANIFEST, None) == [
        "Not measured yet: `.venv/bin/redletter variants measure-python` measures it.",
        "",
    ]


def test_malformed_figures_say_what_to_do() -> None:
    with pytest.raises(InputError) as info:
        figures_from_json({"machine": "m", "models": {"MCX": {"result": "success"}}})
    assert str(info.value) == (
        "malformed Python figures in docs/variants.json (KeyError: 'violated'); measure them"
        " again with `.venv/bin/redletter variants measure-python`"
    )
