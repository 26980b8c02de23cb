"""``redletter symbolic``: bounded model checking, induction and trace synthesis on z3.

Register in redletter/cli.py with
``app.add_typer(symbolic_app, name="symbolic")``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from redletter.errors import Exit, InputError
from redletter.python_model.symbolic import (
    Mutant,
    SymParams,
    Trace,
    bmc,
    complete_graph,
    induct,
    named_goal,
    synthesize,
    trace_to_itf,
)
from redletter.python_model.symbolic.concrete import CState, step_to_json

symbolic_app = typer.Typer(
    help="Symbolic checks on z3: bounded model checking, induction, trace synthesis.",
    no_args_is_help=True,
    add_completion=False,
)
console = Console(highlight=False)


def _params(procs: int, snapshots: int, mutant: str, record_capacity: int) -> SymParams:
    try:
        m = Mutant(mutant)
    except ValueError as exc:
        raise InputError(
            f"--mutant: unknown variant {mutant!r}; expected one of "
            + ", ".join(x.value for x in Mutant)
        ) from exc
    return complete_graph(procs, snapshots=snapshots, mutant=m, record_capacity=record_capacity)


def _show_state(params: SymParams, s: CState) -> str:
    parts = [f"tokens {dict(zip(params.procs, s.local, strict=True))}"]
    for c, b in zip(params.chans, s.buf, strict=True):
        if b:
            shown = ", ".join(f"R{m.snap}" if m.kind == "red" else str(m.val) for m in b)
            parts.append(f"{c[0]}→{c[1]} [{shown}]")
    for k, red in zip(params.snaps, s.red, strict=True):
        if red:
            parts.append(f"red{k} {sorted(red)}")
    return "; ".join(parts)


def _show_trace(trace: Trace, title: str) -> None:
    table = Table(title=title)
    table.add_column("#", justify="right")
    table.add_column("action")
    table.add_column("params")
    table.add_column("state after")
    table.add_row("0", "Init", "", _show_state(trace.params, trace.states[0]))
    for n, st in enumerate(trace.steps, start=1):
        action, ps = step_to_json(st)
        table.add_row(str(n), action, json.dumps(ps), _show_state(trace.params, trace.states[n]))
    console.print(table)


def _write_itf(trace: Trace, path: Path | None, meta: dict[str, object]) -> None:
    if path is not None:
        path.write_text(json.dumps(trace_to_itf(trace, meta), indent=1) + "\n", encoding="utf-8")
        console.print(f"ITF trace written to {path}")


@symbolic_app.command("bmc")
def bmc_cmd(
    procs: Annotated[int, typer.Option(help="Machines p1..pN on a complete graph.")] = 4,
    snapshots: Annotated[int, typer.Option(help="Snapshots 1..S, any machine a starter.")] = 2,
    depth: Annotated[int, typer.Option(help="Check every state within this many steps.")] = 8,
    mutant: Annotated[str, typer.Option(help="Variant: correct, no-recording, non-fifo, ...")] = (
        "correct"
    ),
    lemmas: Annotated[bool, typer.Option(help="Prove and reuse the inductive lemmas.")] = True,
    itf: Annotated[Path | None, typer.Option(help="Write a counterexample as ITF.")] = None,
) -> int:
    """Bounded model checking of TypeOK, the red-letter invariant and token conservation."""
    params = _params(procs, snapshots, mutant, record_capacity=depth)
    console.print(f"[bold]BMC[/bold] to depth {depth}: {params.describe()}")
    t0 = time.perf_counter()
    result = bmc(
        params,
        depth,
        lemmas=lemmas,
        on_depth=lambda d, s: console.print(f"  depth {d}: {s:.2f} s"),
    )
    elapsed = time.perf_counter() - t0
    if result.trace is None:
        extra = " (the facts proved are inductive: no violation at any depth)" * result.inductive
        console.print(f"[green]no violation up to depth {depth}[/green]{extra} in {elapsed:.1f} s")
        return int(Exit.OK)
    _show_trace(result.trace, f"counterexample at depth {result.depth}")
    console.print(
        f"[red]violated: {', '.join(result.violated)}[/red] at depth {result.depth} "
        f"(minimal) in {elapsed:.1f} s"
    )
    _write_itf(result.trace, itf, {"violated": list(result.violated)})
    return int(Exit.FAIL)


@symbolic_app.command("induct")
def induct_cmd(
    procs: Annotated[int, typer.Option(help="Machines on a complete graph.")] = 3,
    snapshots: Annotated[int, typer.Option(help="Snapshots.")] = 2,
    capacity: Annotated[int | None, typer.Option(help="Buffer capacity (default exact).")] = None,
) -> int:
    """Inv /\\ Next => Inv' for the red-letter invariant, plain and strengthened."""
    params = complete_graph(procs, snapshots=snapshots, capacity=capacity, record_capacity=2)
    console.print(f"[bold]Induction[/bold]: {params.describe()}")
    plain = induct(params, ("RedLetterInvariant",))
    if plain.cti is not None:
        cti = plain.cti
        action, ps = step_to_json(cti.step)
        console.print("[yellow]RedLetterInvariant alone is not inductive[/yellow]; CTI:")
        console.print(f"  before: {_show_state(params, cti.before)}")
        console.print(f"  step:   {action} {json.dumps(ps)}")
        console.print(f"  after:  {_show_state(params, cti.after)}")
    strong = induct(params)
    status = "[green]proved[/green]" if strong.proved else "[red]not proved[/red]"
    joined = " /\\ ".join(strong.conjuncts)
    console.print(f"{joined}: {status}", markup=True)
    console.print(
        f"  initiation {strong.initiation}, consecution {strong.consecution}, "
        f"implies RedLetterInvariant {strong.implies_target} ({strong.seconds:.1f} s)"
    )
    return int(Exit.OK if strong.proved and plain.cti is not None else Exit.FAIL)


@symbolic_app.command("synth")
def synth_cmd(
    goal: Annotated[str, typer.Option(help="two-recorded, concurrent, two-starters, complete")] = (
        "two-recorded"
    ),
    max_steps: Annotated[int, typer.Option(help="Longest schedule to look for.")] = 12,
    procs: Annotated[int, typer.Option(help="Machines on a complete graph.")] = 3,
    snapshots: Annotated[int, typer.Option(help="Snapshots.")] = 2,
    itf: Annotated[Path | None, typer.Option(help="Write the trace as ITF.")] = None,
) -> int:
    """Find a shortest schedule reaching a goal."""
    params = _params(procs, snapshots, "correct", record_capacity=3)
    result = synthesize(params, named_goal(goal, params), max_steps)
    if result is None:
        console.print(f"no schedule of at most {max_steps} steps reaches {goal}")
        return int(Exit.FAIL)
    _show_trace(result, f"{goal} in {len(result)} steps")
    _write_itf(result, itf, {"goal": goal})
    return int(Exit.OK)
