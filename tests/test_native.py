"""The model compiled with mypyc (python_model/native.py) and as pure Python.

The compiled build is the same sources, so it must give the same results: every
model of the default suite, explored by each build in a process of its own, prints
the same counts, verdicts, counterexamples and lassos, on one process and on two
partitions.  A build runs only when it is of the sources as they are and of this
interpreter; ``REDLETTER_PURE=1`` runs the pure modules.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from redletter.manifest import load_manifest
from redletter.python_model import native

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "spec"

#: Explores every model given, as ``redletter explore`` does (one process, then two
#: partitions in this process: the partitioned code paths), and prints the lines a
#: user reads, the timing lines left out.
_EXPLORE_ALL = r"""
import json, re, sys
from pathlib import Path
import redletter.cli.ui as ui
from redletter.python_model.engines import load_engine
from redletter.python_model.explore import explore
from redletter.python_model.liveness import (
    check_liveness, fair_bit_table, format_lasso, temporal_of,
)
from redletter.python_model.native import status
from redletter.python_model.parallel import explore_parallel
from redletter.python_model.values import print_state

spec = Path(sys.argv[1])
out = {"status": status()}
for model in sys.argv[2:]:
    engine = load_engine(model, spec)
    temporal = temporal_of(engine) if engine.liveness else None
    bits = fair_bit_table(engine, temporal.fairness) if temporal is not None else None
    lines = []
    r = explore(engine, fair_bits=bits)
    lines += ui.explore_lines(r, liveness=temporal is not None)
    if r.violation is not None:
        lines += [print_state(engine.to_tla(st.state)) for st in r.violation.trace]
    elif temporal is not None:
        live, _ = check_liveness(engine, explored=r, temporal=temporal)
        lines += ui.liveness_lines(live)
        if live.violated is not None:
            lines += format_lasso(engine, live.violated)
    p = explore_parallel(model, spec, workers=2, spawn_frontier=None)
    lines.append(f"parallel: {p.distinct} {p.total} {p.depth} {p.violation}")
    out[model] = [re.sub(r"\bin [0-9.]+s\b", "in ...s", line) for line in lines
                  if not line.startswith("Explored in")]
print(json.dumps(out))
"""


def _explore_all(models: list[str], *, pure: bool) -> dict[str, object]:
    env = dict(os.environ)
    env.pop(native.PURE_ENV, None)
    if pure:
        env[native.PURE_ENV] = "1"
    done = subprocess.run(
        [sys.executable, "-c", _EXPLORE_ALL, str(SPEC), *models],
        env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    out: dict[str, object] = json.loads(done.stdout)
    return out


@pytest.mark.slow
def test_the_compiled_model_gives_what_the_pure_one_gives() -> None:
    if not native.is_current():
        pytest.skip("no compiled build of these sources (make native): nothing to compare")
    models = [e.model for e in load_manifest(SPEC / "manifest.json").suite("default") if e.python]
    assert len(models) >= 40
    compiled = _explore_all(models, pure=False)
    pure = _explore_all(models, pure=True)
    assert compiled.pop("status") == "compiled with mypyc"
    assert pure.pop("status") == "pure Python (REDLETTER_PURE is set)"
    assert sorted(compiled) == sorted(models)
    for model in models:
        lines = compiled[model]
        assert isinstance(lines, list) and "distinct states found" in lines[0], (model, lines)
        assert lines == pure[model], model


def _status_in_a_new_process(env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-c", "import redletter.python_model.native as n; print(n.status())"],
        env=env, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    return done.stdout.strip()


def test_redletter_pure_runs_the_pure_modules() -> None:
    env = {**os.environ, native.PURE_ENV: "1"}
    assert _status_in_a_new_process(env) == "pure Python (REDLETTER_PURE is set)"
    env[native.PURE_ENV] = "0"  # 0 is unset
    want = "compiled with mypyc" if native.is_current() else ""
    got = _status_in_a_new_process(env)
    assert got == want or (not want and got.startswith("pure Python (")), got


def _fake_build(prefix: Path, digest: dict[str, str]) -> None:
    where = native.native_dir(str(prefix))
    (where / "redletter" / "python_model").mkdir(parents=True)
    (where / "manifest.json").write_text(json.dumps(digest), encoding="utf-8")


def test_a_build_of_other_sources_is_never_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    digest = native._digest()
    digest["actions"] = "0" * 64  # built before actions.py last changed
    _fake_build(tmp_path, digest)
    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    monkeypatch.delenv(native.PURE_ENV, raising=False)
    monkeypatch.setattr(native, "_status", native.status())
    path: list[str] = ["/the/package"]
    assert native.activate(path) == (
        "pure Python (the compiled build is not of these sources: make native)"
    )
    assert path == ["/the/package"]


def test_a_build_for_another_python_is_never_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    digest = {**native._digest(), "python": "3.12.0 (main)"}
    _fake_build(tmp_path, digest)
    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    monkeypatch.delenv(native.PURE_ENV, raising=False)
    monkeypatch.setattr(native, "_status", native.status())
    path: list[str] = ["/the/package"]
    assert native.activate(path).startswith("pure Python (the compiled build is not of")
    assert path == ["/the/package"]


def test_no_build_at_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    monkeypatch.delenv(native.PURE_ENV, raising=False)
    monkeypatch.setattr(native, "_status", native.status())
    path: list[str] = []
    assert native.activate(path) == "pure Python (no compiled build: make native)"
    assert path == []


def test_a_digest_names_every_compiled_source_and_the_interpreter() -> None:
    digest = native._digest()
    assert set(digest) == {"python", "ext", *native.COMPILED}
    assert digest["python"] == sys.version
    for name in native.COMPILED:
        assert (ROOT / "python_model" / f"{name}.py").is_file(), name
        assert len(digest[name]) == 64


def test_build_native_without_a_c_compiler_says_so() -> None:
    env = {**os.environ, "PATH": "/nonexistent", "CC": "cc"}
    script = (
        "import sys, redletter.python_model.native as n;"
        "n.is_current = lambda prefix=None: False;"
        "from redletter.cli import main; sys.exit(main(['build-native']))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 3, done.stderr
    assert done.stderr.splitlines()[0] == (
        "error[RL-ENV-NATIVE]: cannot compile the model's hot modules: no C compiler on"
        " PATH; the model runs as pure Python; install one (apt-get install gcc) and run"
        " make native"
    )
