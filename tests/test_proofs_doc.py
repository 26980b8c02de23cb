"""docs/proofs.md and its pictures are generated (``make docs``): they must be current,
and each picture must be what the command printed beside it produces."""

from __future__ import annotations

from pathlib import Path

import pytest

from redletter.cli import main
from redletter.manifest import load_manifest
from redletter.python_model.teeth.docs import teeth_matrix_section
from redletter.python_model.teeth.matrix import must_fail
from redletter.render.proofs_doc import DOC, PICTURES, TEETH_BEGIN, TEETH_END, build

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def built() -> dict[str, str]:
    return build(ROOT)


def test_proofs_doc_is_current(built: dict[str, str]) -> None:
    stale = [rel for rel, text in built.items() if (ROOT / rel).read_text(encoding="utf-8") != text]
    extra = sorted(
        f"{PICTURES}/{p.name}"
        for p in (ROOT / PICTURES).glob("*.svg")
        if f"{PICTURES}/{p.name}" not in built
    )
    assert (stale, extra) == ([], []), "regenerate with: make docs"


@pytest.mark.parametrize(
    ("model", "how"),
    [("MCSeed", "--seed-example"), ("MCNeverForwardFailure", "--counterexample")],
)
def test_each_picture_is_what_its_command_draws(
    model: str, how: str, built: dict[str, str], tmp_path: Path
) -> None:
    name = "seed-example" if how == "--seed-example" else model
    command = f".venv/bin/redletter diagram {model} {how} -o store/proofs/{name}.svg"
    assert command in built[DOC]
    out = tmp_path / f"{name}.svg"
    assert main(["diagram", model, how, "-o", str(out), "--root", str(ROOT)]) == 0
    assert out.read_text(encoding="utf-8") == built[f"{PICTURES}/{name}.svg"]


def test_the_teeth_matrix_section_is_the_manifests(built: dict[str, str]) -> None:
    page = built[DOC]
    assert page.count(TEETH_BEGIN) == 1 and page.count(TEETH_END) == 1
    section = page.split(TEETH_BEGIN, 1)[1].split(TEETH_END, 1)[0]
    body = teeth_matrix_section(load_manifest(ROOT / "spec" / "manifest.json"))
    table = [ln for ln in body.splitlines() if ln.startswith("|")]
    assert "\n".join(table) in section
    rows = [ln for ln in section.splitlines() if ln.startswith("| `MC")]
    assert len(rows) == len(must_fail(load_manifest(ROOT / "spec" / "manifest.json")))
