"""What installing the kit puts on a user's machine: one import name, the spec as
package data, and a project found outside a checkout."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from redletter.project import PACKAGED_SPEC, find_project

ROOT = Path(__file__).resolve().parent.parent


def test_outside_a_checkout_the_packaged_spec_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    project = find_project(tmp_path)
    assert project.spec_dir == PACKAGED_SPEC
    assert project.manifest_path.is_file()
    assert project.cache_dir == tmp_path / "cache" / "redletter"


def test_inside_a_checkout_its_own_spec_is_used() -> None:
    assert find_project(ROOT / "tests" / "data").spec_dir == ROOT / "spec"


@pytest.mark.slow
def test_the_wheel_installs_one_import_name_and_ships_the_spec(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
         str(ROOT), "-w", str(tmp_path)],
        check=True, capture_output=True, cwd=tmp_path,
    )  # fmt: skip
    (wheel,) = tmp_path.glob("redletter-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    dist_info = wheel.name.split("-py3")[0] + ".dist-info"
    assert {n.split("/")[0] for n in names} == {"redletter", dist_info}
    for spec_file in ("ChandyLamport.tla", "MCToken2.cfg", "manifest.json"):
        assert f"redletter/spec/{spec_file}" in names
    for package in ("python_model", "conformance", "pipeline", "render", "cli"):
        assert f"redletter/{package}/__init__.py" in names
    assert "redletter/conformance/nodes/go/main.go" in names
    for example in ("go/recorder.go", "examples/goring/main.go", "examples/goring/go.mod"):
        assert f"redletter/conformance/adapters/instrument/{example}" in names
    for driver in ("driver_test.go.tmpl", "repro_test.go.tmpl", "dialect_servers.go.part",
                   "dialect_nodes.go.part", "helpers.go.part"):  # fmt: skip
        assert f"redletter/conformance/adapters/cos418/driver/{driver}" in names
    for tool in ("scan/main.go", "scan/go.mod", "confine.py"):
        assert f"redletter/conformance/adapters/cos418/{tool}" in names
    for asset in ("explorer.html", "explorer.js", "explorer.css", "page.css", "report.html"):
        assert f"redletter/render/assets/{asset}" in names  # the explorer and report pages
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "redletter = redletter.conformance.pytest_plugin" in text
