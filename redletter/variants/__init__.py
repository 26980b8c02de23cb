"""The comparison page of the seeds' snapshot algorithms (``docs/variants.md``).

* :mod:`redletter.variants.catalogue` -- the variants in words: what each records,
  assumes and costs, which properties hold, its models and the stories of its
  counterexamples;
* :mod:`redletter.variants.measure` -- what TLC measures on their models (the
  counterexamples of the models that must fail, the costs), kept in
  ``docs/variants.json``;
* :mod:`redletter.variants.traces` -- a counterexample read step by step, one lane
  per machine;
* :mod:`redletter.variants.flink` -- the section on Apache Flink itself, from
  ``docs/data/flink-results.json`` (part B's measurements);
* :mod:`redletter.variants.python_figures` -- what the Python mirror of each variant
  measures (``redletter variants measure-python``), kept in ``docs/variants.json``;
* :mod:`redletter.variants.diagrams` -- the counterexamples as space-time diagrams
  (``docs/variants/<model>.svg``, ``redletter variants diagrams``);
* :mod:`redletter.variants.page` -- the page, written from those and the manifest.

``python -m redletter.variants > docs/variants.md`` writes the page;
``redletter variants measure`` measures again.  This package sits on the API floor:
it reads the TLC runner and the manifest below it and the Python model's reader of
TLC's values; the Python mirror's figures and Flink's results have their marked
sections in the page.
"""

from __future__ import annotations

from pathlib import Path

from redletter.manifest import load_manifest
from redletter.project import Project
from redletter.variants.flink import FLINK_RESULTS, load_flink_results
from redletter.variants.measure import MEASUREMENTS, load_measurements
from redletter.variants.page import render

__all__ = ["measurements_path", "render_page"]


def measurements_path(project: Project) -> Path:
    """``docs/variants.json`` of the project."""
    return project.root / MEASUREMENTS


def render_page(project: Project) -> str:
    """``docs/variants.md`` as the project's measurements and manifest make it."""
    return render(
        load_manifest(project.manifest_path),
        load_measurements(measurements_path(project)),
        load_flink_results(project.root / FLINK_RESULTS),
    )
