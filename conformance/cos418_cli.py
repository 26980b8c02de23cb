"""``redletter cos418 ...``: judge and generate Princeton COS 418 snapshot scenarios.

Register in :mod:`redletter.cli` with ``app.add_typer(cos418_app, name="cos418")``.

- ``redletter cos418 judge TOP EVENTS SNAP...``: is there a FIFO schedule of the
  scenario whose Chandy–Lamport snapshots are exactly these ``.snap`` files?
  The exit code (raised as ``typer.Exit``) is 0 (pass, with a witness
  schedule), 1 (fail, with the explanation and the closest schedule) or 2
  (unknown: the search budget ran out).
- ``redletter cos418 generate --seed S --servers N --events M --out DIR``: write
  ``seed<S>.top``, ``seed<S>.events`` and the snapshots the original simulator's
  schedule gives, ``seed<S>.snap<k>`` (via :func:`redletter.conformance.cos418.simulate`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from redletter import ui
from redletter.conformance.cos418 import (
    Step,
    format_snap,
    generate_scenario,
    generate_topology,
    read_scenario,
    read_snap,
    read_topology,
    simulate,
    write_scenario,
    write_snap,
    write_topology,
)
from redletter.conformance.outcome import DEFAULT_BUDGET, judge_outcome
from redletter.errors import Exit, InputError

__all__ = ["cos418_app", "format_steps", "generate_cmd", "judge_cmd"]

cos418_app = typer.Typer(
    name="cos418",
    help="Judge and generate Princeton COS 418 snapshot scenarios (.top/.events/.snap).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def format_steps(steps: tuple[Step, ...]) -> list[str]:
    """One line per step: ``  3. ReceiveRedLetter N1 -> N2``."""
    out = []
    for i, (action, params) in enumerate(steps, start=1):
        if "c" in params:
            c = params["c"]
            assert isinstance(c, list)
            where = f"{c[0]} -> {c[1]}"
            if action == "SendApp":
                where += f" token({params['m']})"
        else:
            where = f"{params['p']} starts snapshot {params['k']}"
        out.append(f"  {i}. {action} {where}")
    return out


@cos418_app.command("judge")
def judge_cmd(
    top: Annotated[Path, typer.Argument(help="The .top file (servers, tokens, links).")],
    events: Annotated[Path, typer.Argument(help="The .events file (sends, snapshots, ticks).")],
    snaps: Annotated[list[Path], typer.Argument(help="The .snap files the implementation wrote.")],
    budget: Annotated[
        int, typer.Option(help="States each search may expand before answering unknown.")
    ] = DEFAULT_BUDGET,
    partial: Annotated[
        bool, typer.Option("--partial", help="Do not require one .snap per snapshot started.")
    ] = False,
) -> None:
    """Judge the snapshots by outcome: does some FIFO schedule yield them?"""
    if budget < 1:
        raise InputError(f"--budget must be at least 1, got {budget}", code="RL-INPUT-USAGE")
    topology = read_topology(top)
    scenario = read_scenario(events)
    snap_values = [read_snap(s) for s in snaps]
    j = judge_outcome(topology, scenario, snap_values, budget=budget, require_all=not partial)
    ui.info(f"{j.verdict}: {j.message}")
    if j.witness is not None:
        ui.info("witness schedule:")
        for line in format_steps(j.witness):
            ui.info(line)
    elif j.closest is not None:
        ui.info("closest schedule:")
        for line in format_steps(j.closest):
            ui.info(line)
    raise typer.Exit(int({"pass": Exit.OK, "fail": Exit.FAIL, "unknown": Exit.UNKNOWN}[j.verdict]))


@cos418_app.command("generate")
def generate_cmd(
    seed: Annotated[int, typer.Option(help="Seed of the topology, scenario and delays.")],
    servers: Annotated[int, typer.Option(help="Number of servers (at least 2).")] = 3,
    events: Annotated[int, typer.Option(help="Number of token sends.")] = 6,
    snapshots: Annotated[int, typer.Option(help="Number of snapshots started.")] = 1,
    out: Annotated[Path, typer.Option(help="Directory to write the files into.")] = Path("."),
) -> None:
    """Write a random scenario and the snapshots the simulator's schedule gives."""
    if servers < 2:
        raise InputError(f"--servers must be at least 2, got {servers}", code="RL-INPUT-USAGE")
    if events < 0 or snapshots < 0:
        raise InputError("--events and --snapshots must be >= 0", code="RL-INPUT-USAGE")
    topology = generate_topology(seed, servers)
    scenario = generate_scenario(topology, seed, events, snapshots)
    result = simulate(topology, scenario, seed)
    try:
        out.mkdir(parents=True, exist_ok=True)
        write_topology(out / f"seed{seed}.top", topology)
        write_scenario(out / f"seed{seed}.events", scenario)
        for snap in result:
            write_snap(out / f"seed{seed}.snap{snap.id}", snap)
    except OSError as exc:
        raise InputError(
            f"cannot write into {out}: {exc.strerror}", code="RL-INPUT-USAGE", path=str(out)
        ) from None
    ui.info(
        f"wrote {out / f'seed{seed}.top'}, {out / f'seed{seed}.events'} and "
        f"{len(result)} .snap files (seed {seed})"
    )
    for snap in result:
        ui.info(f"snapshot {snap.id}: " + format_snap(snap).strip().replace("\n", "; "))
