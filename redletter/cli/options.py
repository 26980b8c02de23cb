"""The options every verb group shares, defined once, and the room's validators.

``--root`` and the project it resolves to (:func:`project`), the model as the
positional argument, the node options of ``conform`` and ``pipeline campaign``,
and :func:`done`, the one way a command ends (its exit code as ``typer.Exit``,
so the code survives both :func:`redletter.cli.main` and a bare Typer runner).

Light on purpose: importing this module loads typer and the ground floor only.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from redletter.errors import Exit, InputError
from redletter.project import Project, find_project, project_at

__all__ = [
    "HostedOption",
    "ModelArg",
    "NodeOption",
    "RootOption",
    "StoreOption",
    "SuiteOption",
    "TimeoutOption",
    "WorkersOption",
    "at_least",
    "done",
    "project",
    "seconds",
    "suite_name",
]

RootOption = Annotated[
    Path | None,
    typer.Option("--root", help="Project root (default: found from the current directory)."),
]
ModelArg = Annotated[
    str, typer.Argument(help="Model name, e.g. MCToken2 (spec/<model>.tla).", show_default=False)
]
WorkersOption = Annotated[int, typer.Option(help="TLC worker threads.")]
NodeOption = Annotated[
    str, typer.Option("--node", help='The node command, e.g. "python -m mynode" (no shell).')
]
HostedOption = Annotated[
    bool, typer.Option("--hosted", help="One process hosts every node (routed by dest).")
]
TimeoutOption = Annotated[
    float, typer.Option("--timeout", help="Seconds a node may take to answer one request.")
]
StoreOption = Annotated[
    Path | None, typer.Option("--store", help="Where run folders go (default: <root>/store).")
]

SUITES = ("default", "large")


def suite_name(value: str) -> str:
    """``--suite``: one of the manifest's suites."""
    if value not in SUITES:
        raise typer.BadParameter(f"expected default or large, got {value!r}")
    return value


SuiteOption = Annotated[
    str,
    typer.Option(
        callback=suite_name, help="Which suite of spec/manifest.json to run: default or large."
    ),
]


def project(root: Path | None) -> Project:
    """The project ``--root`` names, else the one found from the current directory."""
    return project_at(root) if root is not None else find_project()


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
