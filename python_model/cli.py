"""``redletter explore MODEL``: the Python model's breadth-first explorer on the CLI.

Register in :mod:`redletter.cli` with ``app.command("explore")(explore_cmd)``.
Exit code 0 when no invariant or action property is violated, 1 on a violation.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from redletter import ui
from redletter.errors import Exit, InputError
from redletter.project import Project, find_project
from redletter.python_model.actions import ACTION_NAMES
from redletter.python_model.config import load_model
from redletter.python_model.crosscheck import crosscheck
from redletter.python_model.crosscheck import format_result as format_crosscheck
from redletter.python_model.explore import ExploreProgress, ExploreResult, Graph, explore
from redletter.python_model.state import to_tla
from redletter.python_model.values import print_state

__all__ = [
    "crosscheck_cmd",
    "explore_app",
    "explore_cmd",
    "format_result",
    "lemmas_cmd",
    "write_graph",
]

explore_app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


def write_graph(path: Path, model: str, graph: Graph, cfg_to_text: list[str]) -> None:
    """Write the graph as JSON lines: a header, one line per state, one per edge.

    ``{"model": M, "states": N, "edges": E, "initial": [...]}``, then
    ``{"state": i, "tla": "<state as TLC prints it>"}`` and
    ``{"src": i, "action": "SendApp", "dst": j}``.
    """
    try:
        with path.open("w", encoding="utf-8") as f:
            header = {
                "model": model,
                "states": len(graph.states),
                "edges": len(graph.edge_src),
                "initial": list(graph.initial),
            }
            f.write(json.dumps(header) + "\n")
            for i, text in enumerate(cfg_to_text):
                f.write(json.dumps({"state": i, "tla": text}) + "\n")
            for s, a, d in zip(graph.edge_src, graph.edge_action, graph.edge_dst, strict=True):
                f.write(json.dumps({"src": s, "action": ACTION_NAMES[a], "dst": d}) + "\n")
    except OSError as e:
        raise InputError(f"cannot write the graph: {e.strerror}", path=str(path)) from None


def format_result(r: ExploreResult) -> list[str]:
    """The lines ``redletter explore`` prints for a result (TLC's words for the outcome)."""
    lines = [
        f"{r.total:,} states generated, {r.distinct:,} distinct states found.",
        f"The depth of the complete state graph search is {r.depth}.",
        f"Explored in {r.seconds:.2f}s ({r.states_per_second:,.0f} distinct states/s).",
    ]
    if r.violation is None:
        lines.append("Model checking completed. No error has been found.")
        return lines
    lines.append(f"Error: {r.violation.describe()}")
    lines.append("Error: The behavior up to this point is:")
    for n, st in enumerate(r.violation.trace, start=1):
        params = ", ".join(f"{k}={json.dumps(v)}" for k, v in st.params.items())
        lines.append(f"{n}: {st.action}" + (f" {params}" if params else ""))
    return lines


@explore_app.command("explore")
def explore_cmd(
    model: Annotated[str, typer.Argument(help="Model name, e.g. MCToken2 (spec/<model>.tla).")],
    graph: Annotated[
        Path | None, typer.Option("--graph", help="Write the state graph here as JSON lines.")
    ] = None,
    states: Annotated[
        bool, typer.Option("--states", help="With a violation, also print each trace state.")
    ] = False,
    root: Annotated[
        Path | None,
        typer.Option("--root", help="Project root (default: found from the current directory)."),
    ] = None,
) -> int:
    """Explore MODEL breadth-first with the Python model (same counts as TLC)."""
    project = Project(root.resolve()) if root is not None else find_project()
    cfg = load_model(model, project.spec_dir)
    progress = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=ui.err_console,
        transient=True,
        disable=not ui.err_console.is_terminal,
    )
    task = progress.add_task(f"exploring {model}")

    def report(p: ExploreProgress) -> None:
        progress.update(
            task,
            description=f"exploring {model}: {p.distinct:,} distinct / {p.total:,} generated, "
            f"{p.queue:,} on queue, depth {p.depth}",
        )

    with progress:
        result = explore(cfg, graph=graph is not None, on_progress=report)
    for line in format_result(result):
        ui.info(line)
    if states and result.violation is not None:
        for n, st in enumerate(result.violation.trace, start=1):
            ui.info(f"State {n}:\n{print_state(to_tla(cfg, st.state))}")
    if graph is not None and result.graph is not None:
        texts = [print_state(to_tla(cfg, s)) for s in result.graph.states]
        write_graph(graph, model, result.graph, texts)
        ui.info(f"Graph written to {graph}")
    return int(Exit.OK if result.violation is None else Exit.FAIL)


@explore_app.command("crosscheck")
def crosscheck_cmd(
    model: Annotated[str, typer.Argument(help="Model name, e.g. MCToken2 (spec/<model>.tla).")],
    workers: Annotated[int, typer.Option(help="TLC worker threads.")] = 2,
    root: Annotated[
        Path | None,
        typer.Option("--root", help="Project root (default: found from the current directory)."),
    ] = None,
) -> int:
    """Cross-check MODEL: TLC's state graph and the Python model's, exactly.

    Exit 0 when they agree (for a model that must fail: the same violated invariant),
    1 on any difference, printed with a shortest path to each."""
    project = Project(root.resolve()) if root is not None else find_project()
    with ui.err_console.status(f"cross-checking {model}: running TLC") as status:

        def phase(name: str) -> None:
            words = {
                "tlc": "running TLC",
                "explore": "exploring with the Python model",
                "parse": "reading TLC's state graph",
                "compare": "comparing",
            }
            status.update(f"cross-checking {model}: {words.get(name, name)}")

        result = crosscheck(model, project, workers=workers, on_phase=phase)
    for line in format_crosscheck(result):
        ui.info(line)
    times = ", ".join(f"{k} {v:.1f}s" for k, v in result.seconds.items())
    ui.info(f"Time: {times}.")
    return int(Exit.OK if result.exact else Exit.FAIL)


@explore_app.command("lemmas")
def lemmas_cmd(
    model: Annotated[str, typer.Argument(help="Model name, e.g. MCToken2 (spec/<model>.tla).")],
    root: Annotated[
        Path | None,
        typer.Option("--root", help="Project root (default: found from the current directory)."),
    ] = None,
) -> int:
    """Check EWD 864's Lemma 0 and Lemma 1 three ways on every reachable state of MODEL.

    Exit 0 when every completed snapshot satisfies both lemmas, 1 when all three ways
    report a violation, 4 (internal error) when the three ways disagree.
    Register in :mod:`redletter.cli` with ``app.command("lemmas")(lemmas_cmd)``.
    """
    from redletter.python_model.lemmas import check_lemmas_everywhere, describe_counts

    project = Project(root.resolve()) if root is not None else find_project()
    cfg = load_model(model, project.spec_dir)
    with ui.err_console.status(f"checking the lemmas of {model}"):
        counts = check_lemmas_everywhere(cfg)
    for line in describe_counts(counts):
        ui.info(line)
    if counts.all_pass:
        ui.info("Lemma 0 and Lemma 1 hold; replay, reachability and the shadow networks agree.")
        return int(Exit.OK)
    ui.info("Lemma 0 or Lemma 1 is violated; replay, reachability and the shadow networks agree.")
    return int(Exit.FAIL)
