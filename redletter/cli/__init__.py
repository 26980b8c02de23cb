"""The ``redletter`` command line: the root Typer app and :func:`main`.

The command room is the top floor of the kit and the only place that prints:
one module per verb group (``check``, ``model``, ``teach``, ``symbolic``,
``conform``, ``cos418``, ``pipeline``, ``flink``, ``variants``, ``teeth``), the options they share
(:mod:`redletter.cli.options`) and the reporter (:mod:`redletter.cli.ui`).
Every command parses its options, calls library functions, shows the result
through the reporter and ends with its exit code.  Library modules that load z3
or pyspark are imported inside the command bodies, so ``redletter --help`` loads
neither.

The verb tree reads the same on every engine: ``explore MODEL``,
``crosscheck MODEL`` and ``lemmas MODEL`` run on the Python model, and
``pipeline explore MODEL``, ``pipeline crosscheck MODEL`` and
``pipeline lemmas MODEL`` on Spark; ``check`` runs TLC on a suite and
``apalache check`` runs Apalache on one.

Errors: a :class:`~redletter.errors.RedletterError` is printed as
``error[CODE]: message`` on stderr and exits with its ``exit_code``; anything
else is a bug and exits 4; Ctrl-C exits 130 (SIGTERM 143), whatever the
interruption broke on its way out (:mod:`redletter.stopping`).
"""

from __future__ import annotations

import inspect
import os
import shlex
import signal
import sys
import threading
from functools import cache, lru_cache
from typing import Any

import typer
from typer.exceptions import TyperException

import redletter.stopping as stopping
from redletter.cli import (
    check,
    conform,
    cos418,
    flink,
    model,
    pipeline,
    symbolic,
    teach,
    teeth,
    ui,
    variants,
)
from redletter.errors import Exit, RedletterError
from redletter.project import extra_hint, printed
from redletter.stopping import Terminated

__all__ = ["Terminated", "app", "main"]

#: The root's settings (also those of :func:`_lean_command`'s roots).
_ROOT_SETTINGS: dict[str, Any] = {
    "name": "redletter",
    "help": "Model-check the Chandy-Lamport snapshot spec and judge implementations.",
    "no_args_is_help": True,
    "add_completion": False,
    "pretty_exceptions_enable": False,
}
app = typer.Typer(**_ROOT_SETTINGS)

app.add_typer(check.app)  # check, fetch-tlc, build-native, check-java: merged into the root
app.add_typer(model.app)  # explore, crosscheck, lemmas
app.add_typer(teach.app)  # diagram
app.add_typer(check.apalache_app, name="apalache")
app.add_typer(symbolic.app, name="symbolic")
app.add_typer(conform.app, name="conform")
app.add_typer(cos418.app, name="cos418")
app.add_typer(pipeline.app, name="pipeline")
app.add_typer(flink.app, name="flink")
app.add_typer(variants.app, name="variants")
app.add_typer(teeth.app, name="teeth")


@lru_cache(maxsize=1)
def _command() -> Any:
    """The click command tree of :data:`app` (built once: it takes a tenth of a second),
    its help texts polished (:func:`_polish`)."""
    command = typer.main.get_command(app)
    _polish(command)
    return command


@cache
def _lean_command(name: str) -> Any | None:
    """The command tree for a command line whose first word is ``name``: the root
    with only the group that holds ``name`` (a verb group, or the unnamed group that
    gives the root its verb); None when no group holds it (the whole tree then says
    what is wrong).  Typer builds every command of a tree it is given, reading each
    function's signature and types: the whole tree costs about 0.15 s of CPU at every
    start, one group about 0.02 s.  The commands, their options, help texts and
    errors are the whole tree's: only the root's listing (``redletter --help``, which
    builds the whole tree) would differ."""
    for info in app.registered_groups:
        sub = info.typer_instance
        named = info.name if isinstance(info.name, str) else None
        holds = (
            name == named
            if named is not None
            else any(c.name == name for c in (sub.registered_commands if sub is not None else []))
        )
        if holds:
            lean = typer.Typer(**_ROOT_SETTINGS)
            lean.registered_groups.append(info)
            command = typer.main.get_command(lean)
            _polish(command)
            return command
    return None


def _tree_for(args: list[str]) -> Any:
    """The command tree :func:`main` runs ``args`` with (:func:`_lean_command`, or the
    whole tree for no command, an option first or a word no group holds)."""
    if args and not args[0].startswith("-"):
        lean = _lean_command(args[0])
        if lean is not None:
            return lean
    return _command()


def _polish(command: Any) -> None:
    """Each command's line in its group's listing is the first paragraph of its help on
    one line (Typer keeps the docstring's line breaks there, so a description broke
    mid-sentence), and every command a help text names is in this user's form
    (:func:`~redletter.project.printed`: ``redletter`` for a wheel user)."""
    if command.help:
        command.help = printed(command.help)
        if command.short_help is None:
            first = inspect.cleandoc(command.help).split("\n\n")[0]
            command.short_help = " ".join(first.split())
    if command.epilog:
        command.epilog = printed(command.epilog)
    for param in command.params:
        if getattr(param, "help", None):
            param.help = printed(param.help)
    for sub in getattr(command, "commands", {}).values():
        _polish(sub)


def _on_stop(signum: int, frame: object) -> None:
    """First Ctrl-C or SIGTERM: stop where the command is (its cleanup runs, without
    grace periods).  The stop is recorded before the interruption is raised: where
    Python drops it (it landed in a finalizer), the command's long loops raise it
    again (:func:`redletter.stopping.check`).  A second one while it cleans up:
    leave at once (the sandboxes die with the kit anyway)."""
    first = stopping.signal_number()
    if first is not None:
        os._exit(128 + first)
    stopping.request(signum)
    raise stopping.interruption()


def _sandboxes(what: str) -> None:
    """``shutdown`` or ``reopen`` the sandboxes of this process, if any module made
    one (the sandbox is not imported for commands that run nothing)."""
    sandbox = sys.modules.get("redletter.conformance.sandbox")
    if sandbox is not None:
        getattr(sandbox, what)()


def _stopped() -> int:
    """Say in one line why the command stopped; its exit code (130 or 143).  Every
    sandbox and temporary folder of the command is gone first, whichever thread was
    making one when the signal came."""
    _sandboxes("shutdown")
    if stopping.signal_number() == signal.SIGTERM:
        ui.interrupted(f"terminated (SIGTERM); {ui.kept()}")
        return 128 + signal.SIGTERM
    ui.interrupted(ui.kept())
    return int(Exit.INTERRUPTED)


#: The optional packages a command may need, by top-level module: (extra, error code).
_EXTRAS: dict[str, tuple[str, str]] = {
    "pyspark": ("spark", "RL-ENV-SPARK"),
    "pyarrow": ("spark", "RL-ENV-SPARK"),
    "py4j": ("spark", "RL-ENV-SPARK"),
}


def _missing_extra(exc: ModuleNotFoundError) -> tuple[str, str] | None:
    """``(code, message)`` when ``exc`` is an extra that is not installed (the core
    install, ``make venv``, leaves the extras out), else None (a bug in the kit)."""
    top = (exc.name or "").split(".")[0]
    if top not in _EXTRAS:
        return None
    extra, code = _EXTRAS[top]
    return code, (
        f"this command needs the {extra!r} extra, which is not installed (no module {top!r}):"
        f" run `{extra_hint(extra)}`"
    )


def _unquoted_node(exc: Exception, ctx: Any, argv: list[str]) -> str:
    """The hint for an unknown option that is part of an unquoted ``--node`` command
    (``--node .venv/bin/python -m mynode`` gives "No such option: -m"): the command
    quoted, as it must be given; else "".  The command is the words after ``--node``
    up to the next option the command knows."""
    option = getattr(exc, "option_name", None)
    if option is None or ctx is None or "--node" not in argv:
        return ""
    known = {o for p in ctx.command.params for o in (*p.opts, *p.secondary_opts)}
    start = argv.index("--node") + 1
    end = start
    while end < len(argv) and (end == start or argv[end] not in known):
        end += 1
    words = argv[start:end]
    if option not in words:
        return ""
    quoted = shlex.quote(" ".join(words))
    return (
        f"; it belongs to the node command, which --node takes as one argument: quote it,"
        f" --node {quoted}"
    )


def entry() -> None:
    """The ``redletter`` console script: :func:`main`, then exit.  After a Ctrl-C or
    SIGTERM the command has cleaned up (its runs are killed, their folders removed)
    and said so; a worker thread still inside a solver must not hold the exit, so
    the process leaves at once."""
    code = main()
    if code in (int(Exit.INTERRUPTED), 128 + signal.SIGTERM) and threading.active_count() > 1:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    raise SystemExit(code)


def main(argv: list[str] | None = None) -> int:
    """Run the ``redletter`` command with ``argv``; its exit code."""
    stopping.clear()
    _sandboxes("reopen")
    ui.keeps(ui.KEPT)
    before: dict[signal.Signals, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            handler = signal.getsignal(sig)
            if handler is not signal.SIG_IGN:
                before[sig] = handler
                signal.signal(sig, _on_stop)
    try:
        return _run(argv)
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
        # The command has said why it stopped: what this process runs next (a test,
        # a caller of the API) is not stopped by it.
        stopping.clear()


def _run(argv: list[str] | None) -> int:
    args = sys.argv[1:] if argv is None else argv
    try:
        result = _tree_for(args).main(
            args=args,
            prog_name="redletter",
            standalone_mode=False,
        )
    except typer.Exit as exc:
        if stopping.requested():
            return _stopped()
        return int(exc.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        # One line, at once: the context managers on the way out have killed the
        # nodes (no grace period) and kept what was finished.
        return _stopped()
    except TyperException as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # help was printed: not an error
            return int(Exit.OK)
        # A usage error (Typer's vendored click UsageError: a bad option value, an
        # unknown option, a missing argument) carries the command's context.
        ctx = getattr(exc, "ctx", None)
        where = f"{ctx.command_path}: " if ctx is not None else ""
        hint = _unquoted_node(exc, ctx, args)
        ui.error_line("RL-INPUT-USAGE", where + exc.format_message() + hint)
        return int(Exit.BAD_INPUT)
    except Exception as exc:
        if stopping.requested():
            # The interruption broke what it landed in (a lock left released, a
            # ctypes call's argument): the command stopped, it did not fail.
            return _stopped()
        return _failed(exc)
    if stopping.requested() or result == Exit.INTERRUPTED:
        # Typer turns KeyboardInterrupt into a silent exit code 130.
        return _stopped()
    return result if isinstance(result, int) else int(Exit.OK)


def _failed(exc: Exception) -> int:
    """Say why the command failed (``exc``); its exit code."""
    if isinstance(exc, RedletterError):
        ui.error_line(exc.code, exc.message)
        return int(exc.exit_code)
    if isinstance(exc, ModuleNotFoundError) and (missing := _missing_extra(exc)) is not None:
        ui.error_line(*missing)
        return int(Exit.ENVIRONMENT)
    ui.error_line(
        "RL-INTERNAL",
        f"internal error (a bug in redletter, please report): {type(exc).__name__}: {exc}",
    )
    return int(Exit.INTERNAL)


if __name__ == "__main__":
    raise SystemExit(main())
