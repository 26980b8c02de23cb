"""The options every verb group shares, defined once, and the room's validators.

``--root`` and the project it resolves to (:func:`project`), the model as the
positional argument, the node options of ``conform`` and ``pipeline campaign``,
and :func:`done`, the one way a command ends (its exit code as ``typer.Exit``,
so the code survives both :func:`redletter.cli.main` and a bare Typer runner).

Light on purpose: importing this module loads typer and the ground floor only.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Final, NoReturn, TypeVar

import typer

from redletter.errors import Exit, InputError
from redletter.project import Project, find_project, project_at

T = TypeVar("T")

__all__ = [
    "MIN_PROGRAM_SECONDS",
    "VALIDATORS",
    "ExploreWorkersOption",
    "HostedOption",
    "ModelArg",
    "NodeOption",
    "RootOption",
    "StoreOption",
    "SuiteOption",
    "TimeoutOption",
    "WorkersOption",
    "at_least",
    "campaign_name",
    "checkout",
    "count",
    "done",
    "existing_dir",
    "existing_file",
    "existing_path",
    "jvm_memory",
    "model_name",
    "output_dir",
    "output_file",
    "project",
    "seconds",
    "seconds_option",
    "size_option",
    "suite_name",
]

# --------------------------------------------------------------------------- validators
#
# Every option is checked where it is parsed (a Typer callback): a bad value is
# refused with the option's name and exit 5 before any work starts (never an
# internal error later, never a silent change of meaning).  tests/test_cli_options.py
# walks every command and checks that each numeric option refuses values out of
# its range.


def _bad(message: str) -> typer.BadParameter:
    return typer.BadParameter(message)


#: Every validator, by function: its kind and its bounds (read by the test that
#: checks every option of every command).
VALIDATORS: dict[Callable[..., object], tuple[str, tuple[object, ...]]] = {}


def _register(fn: Callable[..., object], kind: str, *args: object) -> None:
    VALIDATORS[fn] = (kind, args)


def count(minimum: int, maximum: int | None = None) -> Callable[[int | None], int | None]:
    """An integer option of at least ``minimum`` (and at most ``maximum``)."""

    def check(value: int | None) -> int | None:
        if value is None:
            return value
        if value < minimum:
            raise _bad(f"must be at least {minimum}, got {value}")
        if maximum is not None and value > maximum:
            raise _bad(f"must be at most {maximum}, got {value}")
        return value

    _register(check, "count", minimum, maximum)
    return check


#: The least time a limit on a program under test may be (a node's reply, a run): a
#: shorter one could only blame the program for the kit's own start-up, pipes and
#: scheduling (a process does not answer in nanoseconds), so it is bad input.
MIN_PROGRAM_SECONDS: Final = 0.1


def seconds_option(
    *, zero: bool = False, unit: str = "seconds", minimum: float | None = None
) -> Callable[[float | None], float | None]:
    """A time (in ``unit``): finite and above 0 (or 0 itself, with ``zero``), and at
    least ``minimum`` when given: ``inf`` or ``nan`` would wait for ever, a negative
    time means nothing, and a time below ``minimum`` cannot be met."""

    def check(value: float | None) -> float | None:
        if value is None:
            return value
        if minimum is not None:
            if not math.isfinite(value) or value < minimum:
                raise _bad(f"must be a finite number of {unit}, at least {minimum:g}, got {value}")
            return value
        if not math.isfinite(value) or value < 0 or (value == 0 and not zero):
            bound = "0 or more" if zero else "more than 0"
            raise _bad(f"must be a finite number of {unit}, {bound}, got {value}")
        return value

    _register(check, "seconds", zero, minimum)
    return check


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def model_name(value: T) -> T:
    """A model name: a TLA+ module name (an identifier), never a path."""
    names = value if isinstance(value, list) else [value]
    for v in names:
        if v is not None and (not isinstance(v, str) or not _IDENT.fullmatch(v)):
            raise _bad(
                f"a model name is the name of a module in spec/ (letters, digits and _),"
                f" not a path; got {v!r}"
            )
    return value


def _nearest_existing(path: Path) -> Path:
    p = path.absolute()
    while not p.exists() and p != p.parent:
        p = p.parent
    return p


def output_dir(value: Path | None) -> Path | None:
    """A directory the command writes into: a directory (or nothing yet) that can be written."""
    if value is None:
        return value
    if value.exists() and not value.is_dir():
        raise _bad(f"{value} is not a directory")
    base = _nearest_existing(value)
    if not base.is_dir():
        raise _bad(f"{value} cannot be created: {base} is not a directory")
    if not os.access(base, os.W_OK | os.X_OK):
        raise _bad(f"{value} cannot be written: no write permission on {base}")
    return value


def output_file(value: Path | None) -> Path | None:
    """A file the command writes: not a directory, in a directory that can be written
    (created, with its parents, when it does not exist yet: ``-o store/proofs/x.svg``
    in a fresh checkout)."""
    if value is None:
        return value
    if value.is_dir():
        raise _bad(f"{value} is a directory, not a file")
    parent = value.absolute().parent
    if not parent.exists():
        output_dir(parent)
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise _bad(f"{value} cannot be written: {parent}: {exc.strerror}") from None
    if not parent.is_dir():
        raise _bad(f"{value} cannot be written: {parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK) or (
        value.exists() and not os.access(value, os.W_OK)
    ):
        raise _bad(f"{value} cannot be written: no write permission")
    return value


def existing_dir(value: Path | None) -> Path | None:
    """A directory the command reads."""
    if value is not None and not value.is_dir():
        raise _bad(f"{value} is not a directory" if value.exists() else f"{value} does not exist")
    return value


def existing_file(value: T) -> T:
    """A file (or files) the command reads."""
    for v in value if isinstance(value, list) else [value]:
        if v is None:
            continue
        assert isinstance(v, Path)
        if not v.exists():
            raise _bad(f"{v} does not exist")
        if v.is_dir():
            raise _bad(f"{v} is a directory, not a file")
    return value


def existing_path(value: T) -> T:
    """A file or a directory the command reads."""
    for v in value if isinstance(value, list) else [value]:
        if v is not None and not Path(str(v)).exists():
            raise _bad(f"{v} does not exist")
    return value


def size_option(value: str | None) -> str | None:
    """A size such as 512M or 4G."""
    if value is None:
        return value
    from redletter.conformance.sandbox import parse_bytes

    try:
        n = parse_bytes(value)
    except ValueError as exc:
        raise _bad(str(exc)) from None
    if n < 1 << 20:
        raise _bad(f"must be at least 1M, got {value}")
    return value


_JVM_MEMORY = re.compile(r"[1-9][0-9]{0,6}[kKmMgGtT]?")


def jvm_memory(value: str | None) -> str | None:
    """A JVM memory size (``spark.driver.memory``): ``512m``, ``4g``."""
    if value is not None and not _JVM_MEMORY.fullmatch(value):
        raise _bad(f"expected a size such as 512m or 4g, got {value!r}")
    return value


def campaign_name(value: T) -> T:
    """A name that also names files: letters, digits, ``.``, ``_`` and ``-``."""
    if value is not None and not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}", str(value)):
        raise _bad(
            f"a name is 1 to 100 letters, digits, '.', '_' or '-' (not a path), got {value!r}"
        )
    return value


for _fn, _kind in (
    (jvm_memory, "jvm_memory"),
    (campaign_name, "name"),
    (model_name, "model"),
    (output_dir, "output_dir"),
    (output_file, "output_file"),
    (existing_dir, "existing_dir"),
    (existing_file, "existing_file"),
    (existing_path, "existing_path"),
    (size_option, "size"),
):
    _register(_fn, _kind)


RootOption = Annotated[
    Path | None,
    typer.Option(
        "--root",
        help="Project root (default: found from the current directory).",
        callback=existing_dir,
    ),
]
ModelArg = Annotated[
    str,
    typer.Argument(
        help="Model name, e.g. MCToken2 (spec/<model>.tla).",
        show_default=False,
        callback=model_name,
    ),
]
WorkersOption = Annotated[
    int, typer.Option(help="TLC worker threads (1 to 256).", callback=count(1, 256))
]
ExploreWorkersOption = Annotated[
    int | None,
    typer.Option(
        "--workers",
        help="Processes the Python model explores on (1 to 256; 1: the single-process"
        " explorer).  Default: the cores this process may run on.",
        callback=count(1, 256),
        show_default=False,
    ),
]
NodeOption = Annotated[
    str, typer.Option("--node", help='The node command, e.g. "python -m mynode" (no shell).')
]
HostedOption = Annotated[
    bool, typer.Option("--hosted", help="One process hosts every node (routed by dest).")
]
TimeoutOption = Annotated[
    float,
    typer.Option(
        "--timeout",
        help="Seconds a node may take to answer one request.",
        callback=seconds_option(minimum=MIN_PROGRAM_SECONDS),
    ),
]
StoreOption = Annotated[
    Path | None,
    typer.Option(
        "--store",
        help="Where run folders go (default: store/ of the current directory).",
        callback=output_dir,
    ),
]

SUITES = ("default", "large")


def suite_name(value: str) -> str:
    """``--suite``: one of the manifest's suites."""
    if value not in SUITES:
        raise typer.BadParameter(f"expected default or large, got {value!r}")
    return value


_register(suite_name, "choice")


def choice(*values: str) -> Callable[[T], T]:
    """An option whose value (or each of its values, when repeatable) is one of
    ``values``."""
    words = ", ".join(values[:-1]) + f" or {values[-1]}" if len(values) > 1 else values[0]

    def check(value: T) -> T:
        for v in value if isinstance(value, list) else [value]:
            if v is not None and v not in values:
                raise _bad(f"expected {words}, got {v!r}")
        return value

    _register(check, "choice")
    return check


SuiteOption = Annotated[
    str,
    typer.Option(
        callback=suite_name, help="Which suite of spec/manifest.json to run: default or large."
    ),
]


def project(root: Path | None) -> Project:
    """The project ``--root`` names, else the one found from the current directory.

    A ``spec/`` of models (``*.tla`` / ``*.cfg``) in the current directory that the
    search would pass over (it holds no ``manifest.json``) is bad input, never
    silently ignored."""
    if root is not None:
        return project_at(root)
    found = find_project()
    here = Path.cwd() / "spec"
    if (
        here.is_dir()
        and here.resolve() != found.spec_dir.resolve()
        and (any(here.glob("*.tla")) or any(here.glob("*.cfg")))
    ):
        raise InputError(
            f"{here} is not used: it holds no manifest.json, so the kit would read the "
            f"models of {found.spec_dir} instead; pass --root . to use it (conform validate "
            "needs no manifest; other commands need spec/manifest.json, see docs/instrument.md"
            ", section “Your own model”)",
            code="RL-INPUT-ROOT",
        )
    return found


def checkout(root: Path | None, command: str) -> Project:
    """:func:`project`, for a command that rewrites the checkout's own docs/: outside
    a checkout (the models are the installed package's) that is bad input, never a
    write into the package's folder."""
    found = project(root)
    if found.packaged:
        raise InputError(
            f"`{command}` rewrites the docs/ of a checkout of redletter, and the current"
            " directory is in none (the models here are the installed package's); run it"
            " in a checkout, or pass its root with --root",
            code="RL-INPUT-ROOT",
        )
    return found


def models_dir(root: Path | None) -> Path:
    """Where the models are for commands that only read ``MC*.tla`` / ``.cfg`` (no
    manifest needed): ``--root`` itself or its ``spec/``, else :func:`project`'s."""
    if root is None:
        return project(root).spec_dir
    root = root.resolve()
    for d in (root / "spec", root):
        if (d / "manifest.json").is_file() or any(d.glob("MC*.cfg")):
            return d
    raise InputError(
        f"{root} holds no model: neither it nor {root / 'spec'} has an MC*.cfg (or a "
        "spec/manifest.json); pass the folder that holds your MC*.tla and MC*.cfg",
        code="RL-INPUT-ROOT",
    )


def at_least(option: str, value: int, minimum: int) -> int:
    """``value`` if it is at least ``minimum``, else bad input naming ``option``."""
    if value < minimum:
        raise InputError(f"{option} must be at least {minimum}, got {value}", code="RL-INPUT-USAGE")
    return value


def seconds(option: str, value: float, *, zero: bool = False) -> float:
    """``value`` if it is a finite number of seconds above 0 (or 0 itself, with
    ``zero``), else bad input naming ``option``: ``inf`` or ``nan`` would wait for
    ever, a negative time means nothing."""
    if not math.isfinite(value) or value < 0 or (value == 0 and not zero):
        bound = "0 or more" if zero else "more than 0"
        raise InputError(
            f"{option} must be a finite number of seconds, {bound}, got {value}",
            code="RL-INPUT-USAGE",
        )
    return value


def done(code: Exit | int) -> NoReturn:
    """End the command with this exit code."""
    raise typer.Exit(int(code))
