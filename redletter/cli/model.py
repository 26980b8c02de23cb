"""``redletter explore``, ``crosscheck`` and ``lemmas``: the Python model's engines.

The same verbs run on Spark as ``redletter pipeline explore|crosscheck|lemmas MODEL``.

- ``explore MODEL [--graph FILE] [--states]``: breadth-first, TLC's words for the
  outcome; exit 0 when no invariant or action property is violated, 1 on a violation.
- ``crosscheck MODEL``: TLC's state graph and the Python model's, exactly; exit 0
  when they agree, 1 on any difference.
- ``lemmas MODEL``: EWD 864's Lemma 0 and Lemma 1 three ways on every reachable
  state; exit 0 when all hold, 1 on a violation (and where the ways disagree, it says
  so), 2 when no snapshot completes (vacuous), 4 when the ways contradict each other.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

import redletter.cli.ui as ui
from redletter.cli.options import (
    ExploreWorkersOption,
    ModelArg,
    RootOption,
    WorkersOption,
    done,
    output_file,
    project,
)
from redletter.errors import Exit, InputError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from redletter.python_model.config import ModelConfig
    from redletter.python_model.engine import Engine
    from redletter.python_model.explore import Graph, Step

__all__ = ["app"]

app = typer.Typer()


def _write_graph(path: Path, engine: Engine[Any], model: str, graph: Graph) -> None:
    """Write the graph as JSON lines: a header, one line per state, one per edge.

    ``{"model": M, "states": N, "edges": E, "initial": [...]}``, then
    ``{"state": i, "tla": "<state as TLC prints it>"}`` and
    ``{"src": i, "action": "SendApp", "dst": j}``.
    """
    from redletter.python_model.values import print_state

    try:
        with path.open("w", encoding="utf-8") as f:
            header = {
                "model": model,
                "states": len(graph.states),
                "edges": len(graph.edge_src),
                "initial": list(graph.initial),
            }
            f.write(json.dumps(header) + "\n")
            for i, state in enumerate(graph.states):
                f.write(json.dumps({"state": i, "tla": print_state(engine.to_tla(state))}) + "\n")
            for s, a, d in graph.edges():
                f.write(json.dumps({"src": s, "action": a, "dst": d}) + "\n")
    except OSError as e:
        raise InputError(
            f"--graph: cannot write the graph: {e.strerror}", path=str(path), code="RL-INPUT-USAGE"
        ) from None


@app.command("explore")
def explore_cmd(
    model: ModelArg,
    graph: Annotated[
        Path | None,
        typer.Option(
            "--graph", help="Write the state graph here as JSON lines.", callback=output_file
        ),
    ] = None,
    states: Annotated[
        bool, typer.Option("--states", help="With a violation, also print each trace state.")
    ] = False,
    liveness: Annotated[
        bool,
        typer.Option(
            "--liveness/--no-liveness",
            help="Check the cfg's temporal properties under its SPECIFICATION's fairness"
            " (the default when the cfg lists any).",
        ),
    ] = True,
    diagram: Annotated[
        Path | None,
        typer.Option(
            "--diagram",
            help="Draw the counterexample here as a space-time diagram (SVG).",
            callback=output_file,
        ),
    ] = None,
    workers: ExploreWorkersOption = None,
    root: RootOption = None,
) -> None:
    """Explore MODEL breadth-first with the Python model (same counts as TLC): its
    invariants and action properties and, under the spec's fairness, its temporal
    properties; on several processes (--workers, by default one a core)."""
    from redletter.cli.live import explore_progress, status
    from redletter.python_model.cl_engine import ChandyLamportEngine
    from redletter.python_model.engines import load_engine
    from redletter.python_model.explore import explore
    from redletter.python_model.liveness import (
        check_liveness,
        fair_bit_table,
        format_lasso,
        temporal_of,
    )
    from redletter.python_model.parallel import default_workers, explore_parallel
    from redletter.python_model.values import print_state

    spec_dir = project(root).spec_dir
    engine = load_engine(model, spec_dir)
    temporal = temporal_of(engine) if liveness and engine.liveness else None
    bits = fair_bit_table(engine, temporal.fairness) if temporal is not None else None
    n = workers if workers is not None else default_workers()
    with explore_progress(model) as report:
        if n == 1:
            result = explore(engine, graph=graph is not None, fair_bits=bits, on_progress=report)
        else:
            result = explore_parallel(
                model,
                spec_dir,
                workers=n,
                graph=graph is not None,
                liveness=temporal is not None,
                on_progress=report,
            )
    ui.lines(ui.explore_lines(result, liveness=temporal is not None))
    steps = result.violation.trace if result.violation is not None else None
    failed = result.violation is not None
    if states and result.violation is not None:
        for n, st in enumerate(result.violation.trace, start=1):
            ui.info(f"State {n}:\n{print_state(engine.to_tla(st.state))}")
    if temporal is not None and result.violation is None:
        with status(f"checking the temporal properties of {model}"):
            live, _ = check_liveness(engine, explored=result, temporal=temporal)
        ui.lines(ui.liveness_lines(live))
        v = live.violated
        if v is not None:
            failed = True
            ui.lines(format_lasso(engine, v))
            steps = v.lasso.steps if v.lasso is not None else None
    if graph is not None and result.graph is not None:
        _write_graph(graph, engine, model, result.graph)
        ui.info(f"Graph written to {graph}")
    if diagram is not None:
        if steps is None:
            ui.info("No counterexample, so no diagram.")
        elif not isinstance(engine, ChandyLamportEngine):
            _draw_variant(engine, steps, diagram, f"{model}: counterexample")
        else:
            _draw(engine.cfg, steps, diagram, f"{model}: counterexample")
    done(Exit.FAIL if failed else Exit.OK)


def _draw(cfg: ModelConfig, steps: Sequence[Step], out: Path, title: str) -> None:
    """A counterexample (its first step "Init") as a space-time diagram."""
    from redletter.render.diagram import render_svg
    from redletter.render.teach import diagram_of_trace

    schedule = [(st.action, st.params) for st in steps[1:]]
    svg = render_svg(diagram_of_trace(cfg, steps[0].state, schedule, title=title), step_width=60)
    try:
        out.write_text(svg, encoding="utf-8")
    except OSError as e:
        raise InputError(f"cannot write the diagram: {e.strerror}", path=str(out)) from e
    ui.info(f"Diagram of the counterexample written to {out} ({len(schedule)} steps)")


def _draw_variant(engine: Engine[Any], steps: Sequence[Step], out: Path, title: str) -> None:
    """A variant's counterexample as a space-time diagram (redletter.variants.diagrams)."""
    from redletter.render.diagram import render_svg
    from redletter.variants.diagrams import run_diagram

    d = run_diagram(
        engine, [st.state for st in steps], [st.action for st in steps[1:]], title=title
    )
    if d is None:
        ui.info(f"No diagram: no drawing of {type(engine).__name__}'s runs.")
        return
    try:
        out.write_text(render_svg(d), encoding="utf-8")
    except OSError as e:
        raise InputError(f"cannot write the diagram: {e.strerror}", path=str(out)) from e
    ui.info(f"Diagram of the counterexample written to {out} ({len(steps) - 1} steps)")


@app.command("crosscheck")
def crosscheck_cmd(
    model: ModelArg,
    workers: WorkersOption = 2,
    graph_only: Annotated[
        bool,
        typer.Option(
            "--graph-only",
            help="TLC builds the graph without checking invariants or properties (faster;"
            " the graphs are compared, the verdicts are left to redletter check).",
        ),
    ] = False,
    root: RootOption = None,
) -> None:
    """Cross-check MODEL: TLC's state graph and the Python model's, exactly, and the
    verdicts (invariants, action properties, liveness).

    Exit 0 when they agree (for a model that must fail: the same verdict), 1 on any
    difference, printed with a shortest path to each."""
    from redletter.cli.live import crosscheck_status
    from redletter.python_model.crosscheck import crosscheck
    from redletter.python_model.parallel import default_workers

    proj = project(root)
    with crosscheck_status(model) as phase:
        result = crosscheck(
            model,
            proj,
            workers=workers,
            graph_only=graph_only,
            on_phase=phase,
            explore_workers=default_workers(),
        )
    ui.report_crosscheck(result)
    done(Exit.OK if result.exact else Exit.FAIL)


@app.command("lemmas")
def lemmas_cmd(model: ModelArg, root: RootOption = None) -> None:
    """Check EWD 864's Lemma 0 and Lemma 1 three ways on every reachable state of MODEL.

    Exit 0 when every completed snapshot satisfies both lemmas and the three ways
    agree, 1 when a lemma is violated, 2 when no snapshot completes in any reachable
    state (the check is vacuous), 4 (internal error) when the ways contradict each
    other (a shadow that keeps step where the replay fails, a replay with no path).
    """
    from redletter.cli.live import status
    from redletter.python_model.config import load_model
    from redletter.python_model.lemmas import check_lemmas_everywhere, describe_counts

    cfg = load_model(model, project(root).spec_dir)
    with status(f"checking the lemmas of {model}"):
        counts = check_lemmas_everywhere(cfg)
    ui.lines(describe_counts(counts))
    if counts.vacuous:
        ui.info(
            f"Vacuous: no snapshot completes in any of the {counts.states:,} reachable "
            f"states of {model}, so Lemma 0 and Lemma 1 were checked on no snapshot."
        )
        done(Exit.UNKNOWN)
    agreement = (
        "replay, reachability and the shadow networks agree"
        if counts.agree
        else "replay, reachability and the shadow networks disagree (see above)"
    )
    if counts.all_pass:
        ui.info(f"Lemma 0 and Lemma 1 hold; {agreement}.")
        done(Exit.OK)
    ui.info(f"Lemma 0 or Lemma 1 is violated; {agreement}.")
    done(Exit.FAIL)
