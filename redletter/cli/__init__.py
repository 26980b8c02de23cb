"""The ``redletter`` command line: the root Typer app and :func:`main`.

The command room is the top floor of the kit and the only place that prints:
one module per verb group (``check``, ``model``, ``teach``, ``symbolic``,
``conform``, ``cos418``, ``pipeline``, ``teeth``), the options they share
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
else is a bug and exits 4; Ctrl-C exits 130.
"""

from __future__ import annotations

import sys

import typer
from typer.exceptions import TyperException

from redletter.cli import check, conform, cos418, model, pipeline, symbolic, teach, teeth, ui
from redletter.errors import Exit, RedletterError

__all__ = ["app", "main"]

app = typer.Typer(
    name="redletter",
    help="Model-check the Chandy-Lamport snapshot spec and judge implementations.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

app.add_typer(check.app)  # check, fetch-tlc, check-java: merged into the root
app.add_typer(model.app)  # explore, crosscheck, lemmas
app.add_typer(teach.app)  # diagram
app.add_typer(check.apalache_app, name="apalache")
app.add_typer(symbolic.app, name="symbolic")
app.add_typer(conform.app, name="conform")
app.add_typer(cos418.app, name="cos418")
app.add_typer(pipeline.app, name="pipeline")
app.add_typer(teeth.app, name="teeth")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``redletter`` console script."""
    command = typer.main.get_command(app)
    try:
        result = command.main(
            args=sys.argv[1:] if argv is None else argv,
            prog_name="redletter",
            standalone_mode=False,
        )
    except typer.Exit as exc:
        return int(exc.exit_code)
    except typer.Abort:
        ui.error_line("RL-ABORT", "interrupted.")
        return int(Exit.INTERRUPTED)
    except TyperException as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # help was printed: not an error
            return int(Exit.OK)
        show = getattr(exc, "show", None)
        if callable(show):
            show()
        else:
            ui.error_line("RL-INPUT-USAGE", exc.format_message())
        return int(Exit.BAD_INPUT)
    except RedletterError as exc:
        ui.error_line(exc.code, exc.message)
        return int(exc.exit_code)
    except KeyboardInterrupt:
        ui.error_line("RL-ABORT", "interrupted.")
        return int(Exit.INTERRUPTED)
    except Exception as exc:
        ui.error_line(
            "RL-INTERNAL",
            f"internal error (a bug in redletter, please report): {type(exc).__name__}: {exc}",
        )
        return int(Exit.INTERNAL)
    return result if isinstance(result, int) else int(Exit.OK)


if __name__ == "__main__":
    raise SystemExit(main())
