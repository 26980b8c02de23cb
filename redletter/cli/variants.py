"""``redletter variants measure|page``: the comparison page of the seeds' snapshot
algorithms (``docs/variants.md``) and the TLC measurements it is made from."""

from __future__ import annotations

from typing import Annotated

import typer

import redletter.cli.ui as ui
from redletter.cli.options import RootOption, done, model_name, project
from redletter.errors import Exit

__all__ = ["app"]

app = typer.Typer(
    help="The comparison page of the seeds' snapshot algorithms (docs/variants.md).",
    no_args_is_help=True,
)


@app.command("measure")
def measure_cmd(
    model: Annotated[
        list[str] | None,
        typer.Option(
            "--model", help="Measure only this model again (repeatable).", callback=model_name
        ),
    ] = None,
    root: RootOption = None,
) -> None:
    """Run TLC on the variants' models that must fail (their counterexamples) and on
    their cost models (the cost probe), write docs/variants.json, then docs/variants.md."""
    from redletter.cli.live import status
    from redletter.manifest import load_manifest
    from redletter.variants import measurements_path
    from redletter.variants.catalogue import VARIANTS
    from redletter.variants.measure import (
        dump_measurements,
        load_measurements,
        measure,
        plan,
    )
    from redletter.variants.page import render

    proj = project(root)
    manifest = load_manifest(proj.manifest_path)
    path = measurements_path(proj)
    previous = load_measurements(path) if model and path.is_file() else None
    steps = plan(manifest, VARIANTS, model or ())
    with status("measuring") as show:
        result = measure(
            proj,
            steps,
            previous=previous,
            tlc_version=manifest.tlc.version,
            on_step=lambda s, i, n: show(f"[{i + 1}/{n}] TLC: {s.kind} of {s.entry.model}"),
        )
    dump_measurements(result, path)
    page = proj.root / "docs" / "variants.md"
    page.write_text(render(manifest, result), encoding="utf-8")
    for step in steps:
        name = step.entry.model
        if step.kind == "counterexample":
            c = result.counterexamples[name]
            ui.info(f"{name}: {c.result} ({c.violated or 'liveness'}), {len(c.states)} states")
        else:
            costs = result.costs[name]
            shown = ", ".join(f"{k} {e.min}..{e.max}" for k, e in sorted(costs.metrics.items()))
            ui.info(f"{name}: {costs.distinct} states; {shown}")
    ui.info(f"wrote {path} and {page}")
    done(Exit.OK)


@app.command("page")
def page_cmd(root: RootOption = None) -> None:
    """Print docs/variants.md as the measurements and the manifest make it."""
    from redletter.variants import render_page

    ui.console.print(
        render_page(project(root)), markup=False, highlight=False, end="", soft_wrap=True
    )
    done(Exit.OK)
