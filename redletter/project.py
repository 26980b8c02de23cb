"""Where the kit's files live, and how the kit is called in a printed command.

Inside a checkout the project is the nearest directory at or above the current
one that holds ``spec/manifest.json`` (or this project's ``pyproject.toml``).
Outside one (the kit installed from a wheel, say, and run by the pytest plugin
in an implementer's repository) the models come from the spec shipped inside the
package, downloads such as the TLC jar go to the user's cache directory
(``$XDG_CACHE_HOME/redletter``, default ``~/.cache/redletter``), and TLC's state
queues and logs to ``store/tlc/`` of the current directory.  Run folders always go
to ``store/`` of the current directory (:func:`default_store`), wherever the kit
is installed: never into the package, never into a checkout the caller is not in.

Every command the kit prints names the program that runs it for this user
(:func:`kit_command`: ``redletter`` for a wheel user with the venv on PATH,
``.venv/bin/redletter`` in a checkout), and every hint names what exists for
this user (:func:`tlc_hint`, :func:`extra_hint`: ``make tlc`` in a checkout,
``redletter fetch-tlc`` elsewhere).  The kit's own texts (the error catalogue, the
help texts) are written in the checkout's forms, the forms the docs print and the
README test runs; :func:`printed` rewrites them into this user's forms.

This module is on the ground floor: every layer may import it, and it imports
nothing of the kit but :mod:`redletter.errors`.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from redletter.errors import InputError

__all__ = [
    "PACKAGED_SPEC",
    "Project",
    "checkout_root",
    "default_store",
    "extra_hint",
    "find_project",
    "kit_command",
    "make_hint",
    "printed",
    "project_at",
    "python_command",
    "tlc_hint",
    "venv_program",
]

PACKAGED_SPEC = Path(__file__).resolve().parent / "spec"
"""The spec shipped inside the package (in a checkout, the checkout's own ``spec/``)."""


@dataclass(frozen=True)
class Project:
    """Where things live: the project root and the paths derived from it.

    ``spec``, ``cache`` and ``work`` default to ``root/spec``, ``root/.cache`` and
    ``root/.cache``; the packaged project sets them explicitly.
    """

    root: Path
    spec: Path | None = None
    cache: Path | None = None
    work: Path | None = None

    @property
    def spec_dir(self) -> Path:
        """``spec/``: modules, models and the manifest."""
        return self.spec if self.spec is not None else self.root / "spec"

    @property
    def cache_dir(self) -> Path:
        """``.cache/``: the TLC jar, TLC state queues and logs."""
        return self.cache if self.cache is not None else self.root / ".cache"

    @property
    def work_dir(self) -> Path:
        """Where TLC's state queues and logs go (``tlc-states/``, ``tlc-logs/``): the
        checkout's ``.cache/``; outside a checkout ``store/tlc/`` of the directory the
        kit was run from (never the package's own folder)."""
        return self.work if self.work is not None else self.cache_dir

    @property
    def packaged(self) -> bool:
        """True when the models are the spec shipped inside the package (no checkout)."""
        return self.spec is not None and self.spec == PACKAGED_SPEC

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
        return Project(
            PACKAGED_SPEC.parent,
            spec=PACKAGED_SPEC,
            cache=_user_cache(),
            work=default_store() / "tlc",
        )
    raise InputError(
        f"{here} is not inside a redletter checkout (no spec/manifest.json above it) and "
        f"the installed package ships no spec; run the command from the project root or "
        f"pass --root.",
        code="RL-INPUT-ROOT",
    )


def default_store(cwd: Path | None = None) -> Path:
    """Where run folders go when no ``--store`` is given: ``store/`` of the current
    directory (``cwd``), for every command and however the kit is installed."""
    return (cwd or Path.cwd()) / "store"


# --------------------------------------------------------------------------- printed commands


def _same_file(a: str, b: str) -> bool:
    """Do ``a`` and ``b`` name the same program?  Their directories are compared
    through symlinks, their names as they are: a venv's ``python`` is a link to its
    base interpreter, but calling the base interpreter does not start the venv."""

    def key(path: str) -> tuple[str, str]:
        full = os.path.abspath(path)
        return os.path.realpath(os.path.dirname(full)), os.path.basename(full)

    return key(a) == key(b)


def _where(path: str) -> str:
    """``path`` as a printed command names it: relative to the current directory when
    below it, else absolute (quoted for a shell)."""
    here = os.getcwd()
    for base, full in ((here, os.path.abspath(path)), (here, os.path.realpath(path))):
        if full.startswith(base.rstrip(os.sep) + os.sep):
            return shlex.quote(os.path.relpath(full, base))
    return shlex.quote(os.path.abspath(path))


def _shown(path: str) -> str:
    """How to call the program at ``path`` from the current directory: its bare name
    when that is what PATH finds, else the path as typed when relative, else
    :func:`_where`'s form."""
    name = os.path.basename(path)
    found = shutil.which(name)
    if found is not None and _same_file(found, path):
        return name
    if not os.path.isabs(path):
        return shlex.quote(path if os.sep in path else f".{os.sep}{path}")
    return _where(path)


def python_command() -> str:
    """How to call the Python that runs the kit (``.venv/bin/python`` in a checkout,
    ``python`` with a venv on PATH, else its path)."""
    return _shown(sys.executable)


def kit_command() -> str:
    """How to call the kit in a printed command, so that it runs as printed here.

    The ``redletter`` program that started this process, as it was called (a
    relative path as typed, ``redletter`` when PATH finds it, else its path); run
    as ``python -m redletter``, that; used as a library (the pytest plugin, the
    API, the tests), the ``redletter`` installed beside the running Python, else
    ``python -m redletter``."""
    argv0 = sys.argv[0] if sys.argv and sys.argv[0] else ""
    if argv0 and os.path.basename(argv0) == "redletter" and os.path.isfile(argv0):
        return _shown(argv0)
    if argv0.endswith(os.path.join("redletter", "__main__.py")):
        return f"{python_command()} -m redletter"
    beside = os.path.join(os.path.dirname(sys.executable), "redletter")
    if os.path.isfile(beside):
        return _shown(beside)
    return f"{python_command()} -m redletter"


@lru_cache(maxsize=1)
def checkout_root() -> Path | None:
    """The checkout the running kit is installed from (an editable install), else None
    (installed from a wheel).  Its ``make`` targets exist for this user."""
    root = Path(__file__).resolve().parent.parent
    pyproject = root / "pyproject.toml"
    if not ((root / "Makefile").is_file() and (root / "spec" / "manifest.json").is_file()):
        return None
    if not pyproject.is_file():
        return None
    text = pyproject.read_text(encoding="utf-8", errors="replace")
    return root if 'name = "redletter"' in text else None


def make_hint(target: str) -> str | None:
    """``make TARGET`` (``make -C ROOT TARGET`` from another directory) when the kit
    runs from a checkout, else None."""
    root = checkout_root()
    if root is None:
        return None
    if Path.cwd().resolve() == root:
        return f"make {target}"
    return f"make -C {_where(str(root))} {target}"


def tlc_hint() -> str:
    """The command that downloads the pinned TLC jar for this user."""
    return make_hint("tlc") or f"{kit_command()} fetch-tlc"


def extra_hint(extra: str) -> str:
    """The command that installs one of the kit's extras (``spark``, ``go``, ...) for
    this user: its pinned lock in a checkout, pip's ``redletter[EXTRA]`` elsewhere."""
    return make_hint(f"extra-{extra}") or f"{python_command()} -m pip install 'redletter[{extra}]'"


#: The checkout's forms in the kit's texts: a program of the venv at the start of a
#: command (``.venv/bin/redletter``, ``.venv/bin/python``, ``.venv/bin/spark-submit``).
_VENV_FORM = re.compile(r"(?<![\w/.-])\.venv/bin/(?P<prog>[A-Za-z][\w.-]*)")
#: ``make tlc``, ``make extra-NAME`` in back quotes.
_MAKE_FORM = re.compile(r"`make (?P<target>tlc|extra-(?P<extra>[a-z]+))`")


def venv_program(name: str) -> str:
    """How to call the program ``name`` of the environment the kit runs in (the
    checkout writes it ``.venv/bin/NAME``): ``redletter`` is :func:`kit_command`;
    any other, the program beside the running Python."""
    if name == "redletter":
        return kit_command()
    return _shown(os.path.join(os.path.dirname(sys.executable), name))


def printed(text: str) -> str:
    """``text`` (a message, a help text, a hint written in the checkout's forms) with
    every command in the form that runs for this user: ``.venv/bin/NAME`` becomes
    :func:`venv_program` (``redletter`` for a wheel user with its venv on PATH), and
    ```make tlc``` and ```make extra-NAME``` the hints of :func:`tlc_hint` and
    :func:`extra_hint`.  In a checkout, run from its root by ``.venv/bin/redletter``,
    nothing changes."""
    if ".venv/bin/" not in text and "`make " not in text:
        return text

    def make(m: re.Match[str]) -> str:
        extra = m.group("extra")
        return f"`{extra_hint(extra) if extra else tlc_hint()}`"

    text = _VENV_FORM.sub(lambda m: venv_program(m.group("prog")), text)
    return _MAKE_FORM.sub(make, text)
