"""``redletter symbolic bmc|induct|synth``: bounded model checking, induction and
trace synthesis on z3 (imported inside the commands, so ``--help`` does not load it).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

import redletter.cli.ui as ui
from redletter.cli.options import count, done, output_file
from redletter.errors import Exit, InputError

if TYPE_CHECKING:
    from redletter.python_model.symbolic import SymParams, Trace

__all__ = ["app"]

app = typer.Typer(
    help="Symbolic checks on z3: bounded model checking, induction, trace synthesis.",
    no_args_is_help=True,
)


def _params(procs: int, snapshots: int, mutant: str, record_capacity: int) -> SymParams:
    from redletter.python_model.symbolic import Mutant, complete_graph

    try:
        m = Mutant(mutant)
    except ValueError as exc:
        raise InputError(
            f"--mutant: unknown variant {mutant!r}; expected one of "
            + ", ".join(x.value for x in Mutant)
        ) from exc
    return complete_graph(procs, snapshots=snapshots, mutant=m, record_capacity=record_capacity)


def _write_itf(trace: Trace, path: Path | None, meta: dict[str, object]) -> None:
    from redletter.python_model.symbolic import trace_to_itf

    if path is not None:
        text = json.dumps(trace_to_itf(trace, meta), indent=1) + "\n"
        try:
            path.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise InputError(
                f"--itf: cannot write the trace: {exc.strerror}",
                path=str(path),
                code="RL-INPUT-USAGE",
            ) from None
        ui.rich_line(f"ITF trace written to {path}")


@app.command("bmc")
def bmc_cmd(
    procs: Annotated[
        int, typer.Option(help="Machines p1..pN on a complete graph.", callback=count(2, 16))
    ] = 4,
    snapshots: Annotated[
        int, typer.Option(help="Snapshots 1..S, any machine a starter.", callback=count(1, 8))
    ] = 2,
    depth: Annotated[
        int, typer.Option(help="Check every state within this many steps.", callback=count(1, 200))
    ] = 8,
    mutant: Annotated[str, typer.Option(help="Variant: correct, no-recording, non-fifo, ...")] = (
        "correct"
    ),
    lemmas: Annotated[bool, typer.Option(help="Prove and reuse the inductive lemmas.")] = True,
    itf: Annotated[
        Path | None, typer.Option(help="Write a counterexample as ITF.", callback=output_file)
    ] = None,
) -> None:
    """Bounded model checking of TypeOK, the red-letter invariant and token conservation."""
    from redletter.python_model.symbolic import bmc

    params = _params(procs, snapshots, mutant, record_capacity=depth)
    ui.rich_line(f"[bold]BMC[/bold] to depth {depth}: {params.describe()}")
    t0 = time.perf_counter()
    result = bmc(
        params,
        depth,
        lemmas=lemmas,
        on_depth=lambda d, s: ui.rich_line(f"  depth {d}: {s:.2f} s"),
    )
    elapsed = time.perf_counter() - t0
    if result.trace is None:
        extra = " (the facts proved are inductive: no violation at any depth)" * result.inductive
        ui.rich_line(f"[green]no violation up to depth {depth}[/green]{extra} in {elapsed:.1f} s")
        done(Exit.OK)
    ui.symbolic_trace(result.trace, f"counterexample at depth {result.depth}")
    ui.rich_line(
        f"[red]violated: {', '.join(result.violated)}[/red] at depth {result.depth} "
        f"(minimal) in {elapsed:.1f} s"
    )
    _write_itf(result.trace, itf, {"violated": list(result.violated)})
    done(Exit.FAIL)


@app.command("induct")
def induct_cmd(
    procs: Annotated[
        int, typer.Option(help="Machines on a complete graph.", callback=count(2, 16))
    ] = 3,
    snapshots: Annotated[int, typer.Option(help="Snapshots.", callback=count(1, 8))] = 2,
    capacity: Annotated[
        int | None,
        typer.Option(help="Buffer capacity (default exact).", callback=count(1, 64)),
    ] = None,
) -> None:
    """Inv /\\ Next => Inv' for the red-letter invariant, plain and strengthened."""
    from redletter.python_model.symbolic import complete_graph, induct

    params = complete_graph(procs, snapshots=snapshots, capacity=capacity, record_capacity=2)
    ui.rich_line(f"[bold]Induction[/bold]: {params.describe()}")
    plain = induct(params, ("RedLetterInvariant",))
    if plain.cti is not None:
        ui.symbolic_cti(params, plain.cti)
    strong = induct(params)
    status = "[green]proved[/green]" if strong.proved else "[red]not proved[/red]"
    joined = " /\\ ".join(strong.conjuncts)
    ui.rich_line(f"{joined}: {status}")
    ui.rich_line(
        f"  initiation {strong.initiation}, consecution {strong.consecution}, "
        f"implies RedLetterInvariant {strong.implies_target} ({strong.seconds:.1f} s)"
    )
    done(Exit.OK if strong.proved and plain.cti is not None else Exit.FAIL)


@app.command("synth")
def synth_cmd(
    goal: Annotated[str, typer.Option(help="two-recorded, concurrent, two-starters, complete")] = (
        "two-recorded"
    ),
    max_steps: Annotated[
        int, typer.Option(help="Longest schedule to look for.", callback=count(1, 200))
    ] = 12,
    procs: Annotated[
        int, typer.Option(help="Machines on a complete graph.", callback=count(2, 16))
    ] = 3,
    snapshots: Annotated[int, typer.Option(help="Snapshots.", callback=count(1, 8))] = 2,
    itf: Annotated[
        Path | None, typer.Option(help="Write the trace as ITF.", callback=output_file)
    ] = None,
) -> None:
    """Find a shortest schedule reaching a goal."""
    from redletter.python_model.symbolic import named_goal, synthesize

    params = _params(procs, snapshots, "correct", record_capacity=3)
    result = synthesize(params, named_goal(goal, params), max_steps)
    if result is None:
        ui.rich_line(f"no schedule of at most {max_steps} steps reaches {goal}")
        done(Exit.FAIL)
    ui.symbolic_trace(result, f"{goal} in {len(result)} steps")
    _write_itf(result, itf, {"goal": goal})
    done(Exit.OK)
