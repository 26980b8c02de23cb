"""``redletter diagram``: draw a run of a model as a space-time diagram (SVG).

Register in :mod:`redletter.cli` with ``app.command("diagram")(diagram_cmd)``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from redletter import ui
from redletter.errors import InputError
from redletter.project import find_project
from redletter.python_model.actions import init_states
from redletter.python_model.config import load_model
from redletter.python_model.itf import thaw_json, trace_from_json
from redletter.python_model.state import from_tla
from redletter.render.diagram import render_svg
from redletter.render.teach import Step, diagram_of_trace, seed_schedule

__all__ = ["diagram_cmd", "load_itf_schedule"]


def load_itf_schedule(path: Path) -> tuple[dict[str, object], list[Step]]:
    """Read an ITF trace whose states carry ``action`` and ``params`` in ``#meta``.

    Returns the first state (as TLA+ values by variable) and the steps after it.
    """
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


def diagram_cmd(
    model: Annotated[str, typer.Argument(help="The model, e.g. MCSeed.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Where to write the SVG.")] = Path(
        "diagram.svg"
    ),
    itf: Annotated[
        Path | None, typer.Option("--itf", help="Draw this ITF trace (steps in #meta).")
    ] = None,
    seed_example: Annotated[
        bool, typer.Option("--seed-example", help="Draw the worked example of seeds/001.")
    ] = False,
) -> None:
    """Draw a run of MODEL as a space-time diagram with each snapshot's cut."""
    project = find_project(None)
    cfg = load_model(model, project.spec_dir)
    if seed_example == (itf is not None):
        raise InputError("say what to draw: either --itf FILE or --seed-example")
    if itf is not None:
        first, steps = load_itf_schedule(itf)
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
