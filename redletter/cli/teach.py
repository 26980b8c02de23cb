"""``redletter diagram MODEL``: draw a run of a model as a space-time diagram (SVG)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

import redletter.cli.ui as ui
from redletter.cli.options import (
    ModelArg,
    RootOption,
    done,
    existing_file,
    output_file,
    project,
)
from redletter.errors import Exit, InputError

if TYPE_CHECKING:
    from redletter.render.teach import Step

__all__ = ["app"]

app = typer.Typer()


def _itf_schedule(path: Path) -> tuple[dict[str, object], list[Step]]:
    """Read an ITF trace whose states carry ``action`` and ``params`` in ``#meta``.

    Returns the first state (as TLA+ values by variable) and the steps after it.
    """
    from redletter.python_model.itf import thaw_json, trace_from_json

    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise InputError(f"cannot read the trace: {e.strerror}", path=str(path)) from e
    except json.JSONDecodeError as e:
        raise InputError(f"not JSON: {e.msg}", path=str(path), line=e.lineno) from e
    trace = trace_from_json(doc)
    if not trace.states:
        raise InputError("the trace has no states", path=str(path))
    steps: list[Step] = []
    for n, st in enumerate(trace.states[1:], start=1):
        meta = {k: thaw_json(v) for k, v in st.meta.items()}
        action, params = meta.get("action"), meta.get("params")
        if not isinstance(action, str) or not isinstance(params, dict):
            raise InputError(
                f"state {n} has no 'action' and 'params' in its #meta; the diagram needs the "
                "step that led to every state",
                path=str(path),
            )
        steps.append((action, params))
    return dict(trace.states[0].values.items()), steps


@app.command("diagram")
def diagram_cmd(
    model: ModelArg,
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Where to write the SVG.", callback=output_file)
    ] = Path("diagram.svg"),
    itf: Annotated[
        Path | None,
        typer.Option(
            "--itf", help="Draw this ITF trace (steps in #meta).", callback=existing_file
        ),
    ] = None,
    seed_example: Annotated[
        bool, typer.Option("--seed-example", help="Draw the worked example of seeds/001.")
    ] = False,
    root: RootOption = None,
) -> None:
    """Draw a run of MODEL as a space-time diagram with each snapshot's cut."""
    from redletter.python_model.actions import init_states
    from redletter.python_model.config import load_model
    from redletter.python_model.state import from_tla
    from redletter.render.diagram import render_svg
    from redletter.render.teach import diagram_of_trace, seed_schedule

    cfg = load_model(model, project(root).spec_dir)
    if seed_example == (itf is not None):
        raise InputError("say what to draw: either --itf FILE or --seed-example")
    if itf is not None:
        first, steps = _itf_schedule(itf)
        start = from_tla(cfg, first)  # type: ignore[arg-type]
        title = f"{model}: {itf.name}"
    else:
        start, steps = init_states(cfg)[0], list(seed_schedule())
        title = f"{model}: the worked example of seeds/001 (P1 starts right after B)"
    svg = render_svg(diagram_of_trace(cfg, start, steps, title=title), step_width=60)
    try:
        out.write_text(svg, encoding="utf-8")
    except OSError as e:
        raise InputError(f"cannot write the diagram: {e.strerror}", path=str(out)) from e
    ui.info(f"wrote {out} ({len(steps)} steps)")
    done(Exit.OK)
