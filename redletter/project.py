"""Where the kit's files live: the project root, ``spec/`` and ``.cache/``.

Inside a checkout the project is the nearest directory at or above the current
one that holds ``spec/manifest.json`` (or this project's ``pyproject.toml``).
Outside one (the kit installed from a wheel, say, and run by the pytest plugin
in an implementer's repository) the models come from the spec shipped inside the
package, and downloads such as the TLC jar go to the user's cache directory
(``$XDG_CACHE_HOME/redletter``, default ``~/.cache/redletter``).

This module is on the ground floor: every layer may import it, and it imports
nothing of the kit but :mod:`redletter.errors`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from redletter.errors import InputError

__all__ = ["PACKAGED_SPEC", "Project", "find_project", "project_at"]

PACKAGED_SPEC = Path(__file__).resolve().parent / "spec"
"""The spec shipped inside the package (in a checkout, the checkout's own ``spec/``)."""


@dataclass(frozen=True)
class Project:
    """Where things live: the project root and the paths derived from it.

    ``spec`` and ``cache`` default to ``root/spec`` and ``root/.cache``; the
    packaged project sets them explicitly.
    """

    root: Path
    spec: Path | None = None
    cache: Path | None = None

    @property
    def spec_dir(self) -> Path:
        """``spec/``: modules, models and the manifest."""
        return self.spec if self.spec is not None else self.root / "spec"

    @property
    def cache_dir(self) -> Path:
        """``.cache/``: the TLC jar, TLC state queues and logs."""
        return self.cache if self.cache is not None else self.root / ".cache"

    @property
    def manifest_path(self) -> Path:
        """``spec/manifest.json``."""
        return self.spec_dir / "manifest.json"


def _user_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "redletter"


def project_at(root: Path) -> Project:
    """The project rooted at ``root`` (``--root``): it must hold ``spec/manifest.json``."""
    root = root.resolve()
    if not (root / "spec" / "manifest.json").is_file():
        raise InputError(
            f"{root} holds no spec/manifest.json, so it is not a redletter project; "
            f"pass the checkout's root to --root, or leave --root out.",
            code="RL-INPUT-ROOT",
        )
    return Project(root)


def find_project(start: Path | None = None) -> Project:
    """The nearest checkout at or above ``start`` (default: the current directory),
    else the spec shipped with the package (cache in the user's cache directory)."""
    here = (start or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / "spec" / "manifest.json").is_file():
            return Project(candidate)
        pyproject = candidate / "pyproject.toml"
        if pyproject.is_file() and 'name = "redletter"' in pyproject.read_text(
            encoding="utf-8", errors="replace"
        ):
            return Project(candidate)
    if (PACKAGED_SPEC / "manifest.json").is_file():
        return Project(PACKAGED_SPEC.parent, spec=PACKAGED_SPEC, cache=_user_cache())
    raise InputError(
        f"{here} is not inside a redletter checkout (no spec/manifest.json above it) and "
        f"the installed package ships no spec; run the command from the project root or "
        f"pass --root.",
        code="RL-INPUT-ROOT",
    )
