"""The public API: the README's example runs as printed, and ``redletter`` exports
exactly the API's names (imported on first use)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import redletter
from redletter import api

ROOT = Path(__file__).resolve().parent.parent
MARK = "<!-- api-example: tests/test_api.py runs this block -->"


def readme_example() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    after = text.split(MARK, 1)[1]
    found = re.search(r"```python\n(.*?)```", after, re.DOTALL)
    assert found is not None, "the README's API example block is missing"
    return found.group(1)


def test_readme_example_runs_as_printed(tmp_path: Path) -> None:
    code = readme_example()
    assert len(code.strip().splitlines()) <= 16
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "reference: pass (exit 0)"
    assert lines[1] == "never-forward: fail (exit 1)"
    assert lines[2].startswith("at step ") and "RedLetterInvariant" in lines[2]


def test_the_package_exports_the_api() -> None:
    assert set(redletter.__all__) == {*api.__all__, "__version__"}
    for name in api.__all__:
        assert getattr(redletter, name) is getattr(api, name)


def test_importing_a_submodule_does_not_load_the_api() -> None:
    code = "import sys, redletter.errors; print('redletter.api' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "False"


def test_model_names_are_identifiers_not_paths() -> None:
    import pytest

    with pytest.raises(redletter.RedletterError) as info:
        redletter.load_model("../spec/MCToken2")
    assert info.value.message == (
        "model name '../spec/MCToken2' is not a TLA+ module name (letters, digits, _); "
        "name a model of spec/manifest.json, e.g. MCToken2, not a path."
    )
    assert info.value.code == "RL-INPUT-MODEL"
