"""Golden space-time diagrams: the SVG of each run below must not change unnoticed.

One parametrized test over the corpus in ``tests/data/golden/diagrams/`` (one
``<name>.svg`` per case).  After a deliberate change to the drawing, look at the new
pictures, then rewrite the corpus with
``REDLETTER_UPDATE_GOLDEN=1 .venv/bin/pytest tests/test_diagram_golden.py``.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from redletter.python_model.actions import init_states
from redletter.python_model.config import load_model
from redletter.render.diagram import draw
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


CASES: dict[str, Callable[[], str]] = {"seed-example": _seed, "concurrent": _concurrent}


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


def test_every_golden_file_has_a_case() -> None:
    assert sorted(p.stem for p in GOLDEN.glob("*.svg")) == sorted(CASES)
