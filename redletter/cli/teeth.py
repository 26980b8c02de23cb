"""``redletter teeth``: every property with teeth.

- ``teeth check [--model M] [--property P] [--engine tlc|python] [--jobs N]``: the
  teeth matrix, one run per (model that must fail, property), in TLC and in the
  Python model, against ``violates``/``satisfies`` in spec/manifest.json; exit 0
  when every cell is decided as the manifest says, 1 on a mismatch (or a manifest
  that leaves a property without teeth), 2 when cells are pending (the Python
  liveness check is not installed), never a pass for a cell nobody decided;
  ``--write-docs`` (``make check-teeth``) keeps the run's record in
  docs/teeth-run.json and regenerates docs/teeth.md from it.
- ``teeth theorem [--topology T] [--machines N] [--length L]``: z3 on "Lemma 0
  implies Lemma 1 when the application is undisturbed", for every application and
  every colouring on runs up to L actions, and without each hypothesis in turn.
- ``teeth bugs``: the registry of bug classes and where each runs.
"""

from __future__ import annotations

from typing import Annotated

import typer

import redletter.cli.ui as ui
from redletter.cli.options import (
    RootOption,
    at_least,
    checkout,
    choice,
    count,
    done,
    model_name,
    project,
    seconds,
    seconds_option,
)
from redletter.errors import Exit

__all__ = ["app"]

app = typer.Typer(
    help="Every property with teeth: the matrix of must-fail models, the theorem, the bugs.",
    no_args_is_help=True,
)


@app.command("check")
def check_cmd(
    model: Annotated[
        list[str] | None,
        typer.Option(
            "--model", help="Only this model that must fail (repeatable).", callback=model_name
        ),
    ] = None,
    prop: Annotated[
        list[str] | None,
        typer.Option("--property", help="Only this property (repeatable)."),
    ] = None,
    engine: Annotated[
        list[str] | None,
        typer.Option(
            "--engine",
            help="tlc or python (repeatable; default both).",
            callback=choice("tlc", "python"),
        ),
    ] = None,
    jobs: Annotated[int, typer.Option(help="TLC cells run at a time.", callback=count(1))] = 1,
    workers: Annotated[
        int, typer.Option(help="TLC worker threads per cell.", callback=count(1))
    ] = 1,
    write_docs: Annotated[
        bool,
        typer.Option(
            "--write-docs",
            help="Write the run's record (docs/teeth-run.json) and docs/teeth.md; with "
            "--model/--property/--engine, update the cells of the recorded full run.",
        ),
    ] = False,
    root: RootOption = None,
) -> None:
    """Check every must-fail model against every property, one run per cell.

    Each (model, property) cell runs in TLC and in the Python model and must be what
    spec/manifest.json says (violates / satisfies)."""
    import json

    from redletter.check import load_project_manifest
    from redletter.cli.live import teeth_progress
    from redletter.errors import InputError
    from redletter.python_model.teeth.docs import teeth_page
    from redletter.python_model.teeth.matrix import (
        ENGINES,
        RECORD_NAME,
        cells,
        check_teeth,
        load_record,
        merge_record,
        requirements,
        run_record,
    )

    at_least("--jobs", jobs, 1)
    at_least("--workers", workers, 1)
    proj = checkout(root, "redletter teeth check --write-docs") if write_docs else project(root)
    manifest = load_project_manifest(proj)
    problems = requirements(manifest, proj.spec_dir)
    engines = tuple(engine) if engine else ENGINES
    record_path = proj.root / "docs" / RECORD_NAME
    previous = load_record(record_path)
    partial = bool(model or prop or set(engines) != set(ENGINES))
    if write_docs and partial and previous is None:
        raise InputError(
            "--write-docs with --model, --property or --engine updates the record of a "
            f"run of the whole matrix, and there is none ({record_path}); drop them "
            "(make check-teeth runs it all)",
            code="RL-INPUT-USAGE",
        )
    todo = cells(manifest, model or (), prop or ())
    with teeth_progress(len(todo) * len(set(engines))) as advance:
        run = check_teeth(
            proj,
            manifest,
            models=model or (),
            props=prop or (),
            engines=engines,
            jobs=jobs,
            workers=workers,
            on_result=advance,
        )
    ui.report_teeth(run, manifest, problems)
    if write_docs:
        docs = proj.root / "docs"
        docs.mkdir(exist_ok=True)
        if partial and previous is not None:
            record = merge_record(previous, run)
        else:
            record = run_record(run, manifest, jobs=jobs)
        (docs / RECORD_NAME).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        (docs / "teeth.md").write_text(
            teeth_page(manifest, proj.spec_dir, record), encoding="utf-8"
        )
        ui.info(f"Wrote {docs / RECORD_NAME} and {docs / 'teeth.md'}.")
    if problems or run.mismatches:
        done(Exit.FAIL)
    done(Exit.UNKNOWN if run.pending else Exit.OK)


@app.command("theorem")
def theorem_cmd(
    topology: Annotated[
        str,
        typer.Option(
            help="ring, directed-ring or complete.",
            callback=choice("ring", "directed-ring", "complete"),
        ),
    ] = "complete",
    machines: Annotated[int, typer.Option(help="How many machines.", callback=count(2))] = 2,
    length: Annotated[
        int, typer.Option(help="The longest run z3 considers.", callback=count(1))
    ] = 4,
    initial: Annotated[
        int,
        typer.Option(
            help="The most messages a buffer holds in the initial state.", callback=count(0)
        ),
    ] = 1,
    variant: Annotated[
        list[str] | None,
        typer.Option(
            "--variant",
            help="theorem, non-fifo, swallowed or white-again (repeatable; default all).",
            callback=choice("theorem", "non-fifo", "swallowed", "white-again"),
        ),
    ] = None,
    timeout: Annotated[
        float, typer.Option(help="Seconds z3 may take per variant.", callback=seconds_option())
    ] = 120.0,
) -> None:
    """Prove Lemma0 => Lemma1 with z3, and show each hypothesis is needed.

    Exit 0 when the theorem is proved for the bound and every dropped hypothesis
    gives a counterexample, 1 otherwise, 2 when z3 ran out of time (open)."""
    from redletter.cli.live import status
    from redletter.python_model.teeth.theorem import VARIANTS, check_theorem

    at_least("--machines", machines, 2)
    at_least("--length", length, 1)
    at_least("--initial", initial, 0)
    seconds("--timeout", timeout)
    results = []
    for v in variant or tuple(VARIANTS):
        with status(f"z3: {v}, runs of up to {length} actions"):
            results.append(
                check_theorem(
                    topology, machines, length, max_initial=initial, variant=v, timeout=timeout
                )
            )
    ui.report_theorem(results)
    if any(r.verdict == "open" for r in results):
        done(Exit.UNKNOWN)
    good = all((r.verdict == "proved") == (r.variant == "theorem") for r in results)
    done(Exit.OK if good else Exit.FAIL)


@app.command("bugs")
def bugs_cmd() -> None:
    """List the bug classes and where each runs (TLC, Python, z3, a node)."""
    ui.report_bugs()
    done(Exit.OK)
