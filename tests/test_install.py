"""The kit wherever it is installed: from its wheel in a fresh virtual environment,
and from a checkout run in another folder (docs/install.md).

Either way, run from an empty folder outside the checkout, ``conform run``,
``cos418 test``, ``cos418 grade``, ``conform validate`` and ``check`` keep every
file under that folder's ``store/``, write nothing into the installed package, and
print commands that run as printed there (a wheel user is told ``redletter ...``,
the checkout's kit its own path).  docs/install.md's shell session and its Python
example run as printed in the fresh venv.

Cheap by design (slow suite, CI): the wheel is built without a download
(``--no-build-isolation``), installed without its dependencies, and the fresh
venv reads them from the checkout's ``.venv`` through a ``.pth`` file (the very
versions the locks pin, not downloaded again: ``pip check`` confirms they satisfy
the wheel's requirements); the TLC jar is the one ``make tlc`` fetched, and the
Go build cache is the kit's usual one; every campaign is the smallest that still
fails.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from redletter.project import _user_cache
from redletter.toolchain import TLC_JAR_SHA256, sha256_of
from tests.cos418_gallery import materialize
from tests.readme_commands import ROOT, blocks, run_script

pytestmark = [pytest.mark.slow, pytest.mark.tlc]

VENV_SITE = Path("lib") / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
DOC = "docs/install.md"
#: What the wheel is built from: the files pyproject.toml packages.
SOURCES = ("pyproject.toml", "README.md", "redletter", "spec", "python_model", "conformance",
           "pipeline")  # fmt: skip


@dataclass(frozen=True)
class Kit:
    """A way the kit is installed: how a user calls it and its interpreter, the
    environment its commands run in, and the folder of the installed package."""

    name: str
    redletter: str  #: the program as the user types it
    python: str
    env: dict[str, str]
    package: Path


def _base_env() -> dict[str, str]:
    return {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTEST_", "REDLETTER_")) and k != "VIRTUAL_ENV"
    }


def _tlc_in_user_cache() -> None:
    """The jar the user's cache holds after ``redletter fetch-tlc``: copied from the
    checkout's (fetched by ``make tlc``) instead of downloaded again."""
    jar = _user_cache() / "tla2tools.jar"
    if jar.is_file() and sha256_of(jar) == TLC_JAR_SHA256:
        return
    jar.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(ROOT / ".cache" / "tla2tools.jar", jar.with_suffix(".jar.tmp"))
    jar.with_suffix(".jar.tmp").replace(jar)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kit]:
    """The wheel, built from the checkout's files and installed into a fresh venv."""
    for need in (".venv", ".cache/tla2tools.jar"):
        if not (ROOT / need).exists():
            pytest.skip(f"{need} is missing: run make check and make test first")
    top = tmp_path_factory.mktemp("wheel")
    src = top / "src"
    src.mkdir()
    for name in SOURCES:  # a copy: the build writes build/ and *.egg-info beside it
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, symlinks=True,
                            ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
        else:
            shutil.copy2(ROOT / name, src / name)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    subprocess.run([*pip, "wheel", "--quiet", "--no-deps", "--no-build-isolation", str(src),
                    "-w", str(top / "dist")], check=True, capture_output=True)  # fmt: skip
    (built,) = (top / "dist").glob("redletter-*.whl")
    venv = top / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    install = ["install", "--quiet", "--no-deps", "--no-index", str(built)]
    subprocess.run([*pip, "--python", str(venv / "bin" / "python"), *install], check=True,
                   capture_output=True)  # fmt: skip
    site = venv / VENV_SITE
    # The dependencies: the checkout venv's site-packages, read after the venv's own
    # (a plain path in a .pth: the checkout's editable install of the kit is not
    # loaded from there, its .pth files are not read).
    (site / "zz-redletter-dependencies.pth").write_text(
        str(ROOT / ".venv" / VENV_SITE) + "\n", encoding="utf-8"
    )
    go = ROOT / ".venv" / "bin" / "go"  # what `pip install 'redletter[go]'` puts in bin/
    if go.exists():
        (venv / "bin" / "go").symlink_to(go)
    _tlc_in_user_cache()
    env = _base_env()
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"  # activated
    env["VIRTUAL_ENV"] = str(venv)
    yield Kit("wheel", "redletter", "python", env, site / "redletter")


@pytest.fixture(scope="module")
def checkout() -> Kit:
    """The checkout's own kit (its editable install), called by its path."""
    if not (ROOT / ".venv" / "bin" / "redletter").exists():
        pytest.skip(".venv is missing: run make check first")
    _tlc_in_user_cache()
    return Kit(
        "checkout",
        str(ROOT / ".venv" / "bin" / "redletter"),
        str(ROOT / ".venv" / "bin" / "python"),
        _base_env(),
        ROOT / "redletter",
    )


def _tree(folder: Path) -> dict[str, float]:
    """Every file below ``folder`` (links not followed), with its mtime."""
    return {
        str(p.relative_to(folder)): p.lstat().st_mtime
        for p in folder.rglob("*")
        if "__pycache__" not in p.parts
    }


def _run(kit: Kit, commands: list[str], cwd: Path) -> tuple[str, dict[int, int], list[str]]:
    scratch = cwd.parent / f"{cwd.name}-scripts"
    scratch.mkdir(exist_ok=True)
    return run_script(commands, cwd=cwd, env=kit.env, scratch=scratch)


def _replays(output: str) -> list[str]:
    return re.findall(r"^replay: (.+)$", output, re.M)


def _paths_printed(output: str) -> list[Path]:
    """Every absolute path the output names (a report, a folder, a log)."""
    return [Path(p) for p in re.findall(r"(?<![\w.])(/[\w./-]+)", output)]


def test_the_wheel_installs_into_a_fresh_venv_and_its_requirements_hold(
    wheel: Kit, tmp_path: Path
) -> None:
    python = wheel.env["VIRTUAL_ENV"] + "/bin/python"
    check = subprocess.run([python, "-m", "pip", "check"], capture_output=True, text=True,
                           env=wheel.env, cwd=tmp_path)  # fmt: skip
    assert check.returncode == 0, check.stdout + check.stderr
    where = subprocess.run([python, "-c", "import redletter; print(redletter.__file__)"],
                           capture_output=True, text=True, env=wheel.env, check=True,
                           cwd=tmp_path)  # fmt: skip
    assert Path(where.stdout.strip()).parent == wheel.package


@pytest.mark.parametrize("kit_name", ["wheel", "checkout"])
@pytest.mark.timeout(900)
def test_each_command_keeps_its_files_in_the_callers_folder_and_prints_commands_that_run(
    kit_name: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    kit: Kit = request.getfixturevalue(kit_name)
    work = tmp_path / "work"
    work.mkdir()
    klass = tmp_path / "class"  # the inputs live outside the folder the kit runs in
    pkg = materialize("servers/records-after-marker", klass)
    package_before = _tree(kit.package)
    rl, py = kit.redletter, kit.python
    commands = [
        f'{rl} conform run --quick --node "{py} -m redletter.conformance.nodes.mutants'
        ' no-channel-recording"',
        f"{rl} cos418 test {pkg} --scenarios 4 --seeds 1 --no-course-test --no-test-data",
        f"{rl} cos418 grade {klass / 'servers'} --local --scenarios 1 --seeds 1 --no-shrink",
        f"{py} -m redletter.conformance.adapters.instrument.examples.chat --out store/chat",
        f"{rl} conform validate store/chat/alice.ndjson store/chat/bob.ndjson"
        " store/chat/carol.ndjson",
        f"{rl} check --model MCHistoryTermination --no-crosscheck",
    ]
    output, statuses, said = _run(kit, commands, work)
    assert [statuses.get(i) for i in range(len(commands))] == [1, 1, 0, 0, 0, 0], output
    # Every command printed to run again runs, as printed, from the same folder.
    replays = _replays(said[0]) + _replays(said[1])
    assert len(replays) == 2, output
    form = "redletter " if kit.name == "wheel" else f"{kit.redletter} "
    assert all(r.startswith(form) for r in replays), replays
    again, codes, _ = _run(kit, replays, work)
    assert codes == {0: 1, 1: 1}, again
    # Every file is under the caller's store/, none in the installed package.
    assert sorted(p.name for p in work.iterdir()) == ["store"]
    assert {p.name for p in (work / "store").iterdir()} >= {"chat", "tlc", "grade-servers"}
    outside = [
        p
        for p in _paths_printed(output + again)
        if p.is_relative_to(ROOT) and not p.is_relative_to(ROOT / ".venv")
    ]
    assert outside == [], f"a command names a file of the checkout: {outside}"
    assert _tree(kit.package) == package_before


def _session() -> list[tuple[str, int]]:
    """docs/install.md's shell session: each command with the exit it claims."""
    (block,) = [b for b in blocks(DOC) if any("activate" in c.text for c in b.commands)]
    return [(c.text, c.exit) for c in block.commands]


def test_the_install_page_shell_session_runs_as_printed(wheel: Kit, tmp_path: Path) -> None:
    venv = wheel.env["VIRTUAL_ENV"]
    home = tmp_path / "home"
    home.mkdir()
    session = _session()
    commands = [c.replace("~/redletter-venv", venv).replace("~/", f"{home}/") for c, _ in session]
    package_before = _tree(wheel.package)
    output, statuses, _ = _run(wheel, commands, home)
    expected = [code for _, code in session]
    assert expected.count(1) == 1  # the mutant's run fails, and prints its replay
    assert [statuses.get(i) for i in range(len(commands))] == expected, output
    assert "TLC ready: " in output
    assert "PASS: 17 traces judged, 17 passed, 0 failed, 0 unknown" in output
    (replay,) = _replays(output)
    assert replay.startswith("redletter conform replay "), replay
    again, codes, _ = _run(wheel, [f"cd {home / 'snapshots'}", replay], home)
    assert codes == {0: 0, 1: 1}, again
    assert sorted(p.name for p in (home / "snapshots").iterdir()) == ["store"]
    assert sorted(p.name for p in home.iterdir()) == ["snapshots"]
    assert _tree(wheel.package) == package_before


def test_the_install_page_python_example_runs_as_printed(wheel: Kit, tmp_path: Path) -> None:
    text = (ROOT / DOC).read_text(encoding="utf-8")
    after = text.split("<!-- install-example: tests/test_install.py", 1)[1]
    found = re.search(r"```python\n(.*?)```", after, re.DOTALL)
    assert found is not None, "docs/install.md lost its Python example"
    done = subprocess.run([wheel.env["VIRTUAL_ENV"] + "/bin/python", "-c", found.group(1)],
                          cwd=tmp_path, env=wheel.env, capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == "5 traces: pass, pass, pass, pass, pass\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["store"]
    assert (tmp_path / "store" / "logs").is_dir()
