"""The model's hot modules compiled with mypyc, used only when built from these sources.

The explorer spends its time in a few modules (:data:`COMPILED`: the state, the
actions, the invariants, the search and what they call).  `mypyc
<https://mypyc.readthedocs.io>`_ (part of mypy, which the kit already type-checks with)
compiles exactly these typed sources to C extensions: the same code, several times as
fast (docs/model.md, "Compiled with mypyc", has the figures).  Nothing is written by
hand in C, so the Python sources stay the one definition of the model.

* :func:`build` (``.venv/bin/redletter build-native``, run by ``make native``) compiles
  :data:`COMPILED` into ``<venv>/redletter-native/`` and writes a manifest with the
  SHA-256 of every source it compiled.
* :func:`activate` (run by the package's ``__init__``, before any of them is imported)
  puts that directory first on the package's path only when the manifest matches the
  sources as they are now and this interpreter: a source edited since the build, or
  another Python, and the pure modules run (never stale compiled code).  Setting
  ``REDLETTER_PURE=1`` runs the pure modules too.

Both run the same code, so both give the same counts, the same counterexamples, the
same verdicts; ``tests/test_native.py`` compares them on models of every application,
variant and bug class.  :func:`status` says which one this process runs.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Final

__all__ = [
    "COMPILED",
    "GROUP",
    "PURE_ENV",
    "activate",
    "build",
    "c_compiler",
    "is_current",
    "native_dir",
    "status",
]

COMPILED: Final = (
    "state",
    "actions",
    "invariants",
    "apps",
    "mutants",
    "cl_engine",
    "engine",
    "explore",
    "config",
)
"""The modules of ``redletter.python_model`` compiled: where the explorer spends its time."""

GROUP: Final = "redletter_native"
"""The name of mypyc's shared library of the compiled modules (``GROUP__mypyc``)."""

PURE_ENV: Final = "REDLETTER_PURE"
"""Set (to anything but ``""`` or ``0``) to run the pure modules."""

_HERE = Path(__file__).resolve().parent
_status = "pure Python (not activated)"


def native_dir(prefix: str | None = None) -> Path:
    """Where :func:`build` writes the compiled modules: inside the virtual environment,
    so that a new venv starts without them and an old build never meets new Python."""
    return Path(prefix if prefix is not None else sys.prefix) / "redletter-native"


def _digest() -> dict[str, str]:
    """What a build must match: this interpreter and every compiled source's SHA-256."""
    out = {"python": sys.version, "ext": sysconfig.get_config_var("EXT_SUFFIX") or ""}
    for name in COMPILED:
        out[name] = hashlib.sha256((_HERE / f"{name}.py").read_bytes()).hexdigest()
    return out


def is_current(prefix: str | None = None) -> bool:
    """Is there a build of exactly these sources for this interpreter?"""
    try:
        text = (native_dir(prefix) / "manifest.json").read_text(encoding="utf-8")
        return bool(json.loads(text) == _digest())
    except (OSError, ValueError):
        return False


def c_compiler() -> str | None:
    """The C compiler this interpreter's extensions are built with, if on PATH."""
    cc = (sysconfig.get_config_var("CC") or "cc").split()
    return shutil.which(cc[0]) if cc else None


def status() -> str:
    """Which modules this process runs: ``compiled with mypyc`` or ``pure Python (why)``."""
    return _status


def activate(package_path: list[str]) -> str:
    """Put the compiled modules first on ``package_path`` (the package's ``__path__``)
    when a build of exactly these sources for this interpreter exists; return
    :func:`status`.  Called once, before any compiled module is imported."""
    global _status
    if os.environ.get(PURE_ENV, "") not in ("", "0"):
        _status = f"pure Python ({PURE_ENV} is set)"
        return _status
    where = native_dir()
    if not (where / "manifest.json").is_file():
        _status = "pure Python (no compiled build: make native)"
        return _status
    if not is_current():
        _status = "pure Python (the compiled build is not of these sources: make native)"
        return _status
    lib = next(where.glob(f"{GROUP}__mypyc*"), None)
    spec = importlib.util.spec_from_file_location(f"{GROUP}__mypyc", lib) if lib else None
    if spec is None or spec.loader is None:
        _status = "pure Python (the compiled build is incomplete: make native)"
        return _status
    # The compiled modules import their shared library by this top-level name.
    shared = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(shared)
    sys.modules[spec.name] = shared
    package_path.insert(0, str(where / "redletter" / "python_model"))
    _status = "compiled with mypyc"
    return _status


def build(prefix: str | None = None) -> Path:
    """Compile :data:`COMPILED` with mypyc into :func:`native_dir` (replaced whole,
    only once the new build is complete); return it.  Raises ``ImportError`` without
    mypyc and setuptools, and whatever the compiler's failure raises
    (``SystemExit``, ``CompileError``) without a working C compiler."""
    from mypyc.build import mypycify
    from setuptools import setup  # type: ignore[import-untyped]

    where = native_dir(prefix)
    # The directory holding redletter/ (this file's path as imported, not resolved:
    # python_model/ is redletter/python_model through a link in a checkout).
    package_root = Path(__file__).absolute().parent.parent.parent
    sources = [f"redletter/python_model/{name}.py" for name in COMPILED]
    digest = _digest()
    with tempfile.TemporaryDirectory(prefix="redletter-native-") as tmp:
        out = Path(tmp) / "out"
        cwd = Path.cwd()
        # mypyc names each module after its path: it runs from the package's root, with
        # the project's mypy settings (pyproject.toml) when they are there.
        os.chdir(package_root)
        try:
            extensions = mypycify(
                # mypy's cache in the build's own folder: never beside the package
                # (a wheel's is read-only) nor shared with a `make lint` running at once
                [f"--cache-dir={Path(tmp) / 'mypy-cache'}", *sources],
                opt_level="3",
                group_name=GROUP,
                target_dir=str(Path(tmp) / "c"),
            )
            setup(
                name="redletter-native",
                ext_modules=extensions,
                script_args=[
                    "--quiet",
                    "build_ext",
                    "--build-lib",
                    str(out),
                    "--build-temp",
                    str(Path(tmp) / "o"),
                ],
            )
        finally:
            os.chdir(cwd)
        (out / "manifest.json").write_text(json.dumps(digest, indent=1) + "\n", encoding="utf-8")
        staged = where.with_name(where.name + ".new")
        shutil.rmtree(staged, ignore_errors=True)
        shutil.copytree(out, staged)
        shutil.rmtree(where, ignore_errors=True)
        staged.rename(where)
    return where
