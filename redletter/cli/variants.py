"""``redletter variants measure|measure-python|diagrams|page``: the comparison page of
the seeds' snapshot algorithms (``docs/variants.md``), the measurements it is made from
and the diagrams of its counterexamples."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

import redletter.cli.ui as ui
from redletter.cli.options import RootOption, SuiteOption, checkout, done, model_name, project
from redletter.errors import Exit

__all__ = ["app"]

#: Where the figures are measured, as the page says it.
MACHINE = "a 2-core machine shared with other jobs"

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
    from redletter.variants import measurements_path, render_page
    from redletter.variants.catalogue import VARIANTS
    from redletter.variants.measure import (
        dump_measurements,
        load_measurements,
        measure,
        plan,
    )

    proj = checkout(root, "redletter variants measure")
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
    _write_diagrams(proj, result)
    page = proj.root / "docs" / "variants.md"
    page.write_text(render_page(proj), encoding="utf-8")
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


def _write_diagrams(proj: Any, measured: Any) -> list[Path]:
    """Write docs/variants/<model>.svg for every measured counterexample with a drawing."""
    from redletter.variants.diagrams import diagram_path, render_diagrams

    written: list[Path] = []
    for model, svg in render_diagrams(proj, measured).items():
        out = proj.root / diagram_path(model)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(svg, encoding="utf-8")
        written.append(out)
    return written


@app.command("diagrams")
def diagrams_cmd(root: RootOption = None) -> None:
    """Draw the counterexamples of docs/variants.json as space-time diagrams
    (docs/variants/<model>.svg, shown by docs/variants.md)."""
    from redletter.variants import measurements_path
    from redletter.variants.measure import load_measurements

    proj = checkout(root, "redletter variants diagrams")
    for out in _write_diagrams(proj, load_measurements(measurements_path(proj))):
        ui.info(f"wrote {out}")
    done(Exit.OK)


@app.command("measure-python")
def measure_python_cmd(
    model: Annotated[
        list[str] | None,
        typer.Option(
            "--model", help="Measure only this model again (repeatable).", callback=model_name
        ),
    ] = None,
    suite: SuiteOption = "default",
    crosscheck: Annotated[
        bool,
        typer.Option(
            "--crosscheck/--no-crosscheck",
            help="Also run TLC with the state graph dumped and compare it exactly.",
        ),
    ] = True,
    root: RootOption = None,
) -> None:
    """Explore every variant model with its Python mirror (safety, liveness, times),
    cross-check it with TLC's graph, keep the figures in docs/variants.json and write
    docs/variants.md."""
    import dataclasses

    from redletter.cli.live import status
    from redletter.manifest import load_manifest
    from redletter.variants import measurements_path, render_page
    from redletter.variants.measure import dump_measurements, load_measurements
    from redletter.variants.python_figures import (
        figures_from_json,
        figures_to_json,
        measure_python,
        variant_models,
    )

    proj = checkout(root, "redletter variants measure-python")
    manifest = load_manifest(proj.manifest_path)
    path = measurements_path(proj)
    measured = load_measurements(path)
    previous, _ = figures_from_json(measured.python)
    entries = [
        e for e in variant_models(manifest) if (e.model in model if model else e.suite == suite)
    ]
    unknown = sorted(set(model or ()) - {e.model for e in entries})
    if unknown:
        raise typer.BadParameter(
            f"not a model of a variant: {', '.join(unknown)}", param_hint="--model"
        )
    with status("measuring") as show:
        figures = measure_python(
            proj,
            entries,
            crosscheck=crosscheck,
            previous=previous,
            on_model=lambda e, i, n: show(f"[{i + 1}/{n}] Python: {e.model}"),
        )
    dump_measurements(dataclasses.replace(measured, python=figures_to_json(figures, MACHINE)), path)
    page = proj.root / "docs" / "variants.md"
    page.write_text(render_page(proj), encoding="utf-8")
    for e in entries:
        f = figures[e.model]
        ui.info(
            f"{e.model}: {f.result}{f' ({f.violated})' if f.violated else ''}, {f.distinct}"
            f" states, {f.explore_seconds:g} s; cross-check: {f.crosscheck or 'not run'}"
        )
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
