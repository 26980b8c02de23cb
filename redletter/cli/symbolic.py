"""``redletter symbolic bmc|induct|induction|synth``: bounded model checking, the
first stage's induction, EWD 864's lemmas by induction, and trace synthesis on z3
(imported inside the commands, so ``--help`` does not load it).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

import redletter.cli.ui as ui
from redletter.cli.options import choice, count, done, output_file, seconds_option
from redletter.errors import Exit, InputError

if TYPE_CHECKING:
    from redletter.python_model.symbolic import SymParams, Trace

__all__ = ["app"]

app = typer.Typer(
    help=(
        "Symbolic checks on z3: bounded model checking, induction (the lemmas, unbounded), "
        "trace synthesis."
    ),
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
    from redletter.python_model.itf import json_text
    from redletter.python_model.symbolic import trace_to_itf

    if path is not None:
        text = json_text(trace_to_itf(trace, meta))
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
    """Bounded model checking of TypeOK, the red-letter invariant and token sums.

    It checks token sums (a complete snapshot holds the tokens of the network), not
    Lemma 0 and Lemma 1, and its buffers and recorded streams are bounded;
    `.venv/bin/redletter symbolic induction` proves the lemmas without bounds.
    """
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
        ui.rich_line(f"[green]no violation up to depth {depth}[/green] in {elapsed:.1f} s")
        if result.inductive:
            ui.info(
                "The facts proved are inductive, so there is no violation at any depth — of "
                f"the bounded system: buffers of at most {params.capacity} messages (exact for "
                f"TokenApp), recorded streams of at most {params.record_capacity} messages (a "
                "receipt that would record more is disabled)."
            )
        ui.info(
            "Checked: TypeOK, RedLetterInvariant, SnapshotSatisfiesAppInv and TokensConserved "
            "(token sums), not Lemma 0 and Lemma 1; `.venv/bin/redletter symbolic induction`"
            " proves the lemmas for every run, with unbounded buffers."
        )
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
    """Inv /\\ Next => Inv' for the red-letter invariant (the first stage only)."""
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
    ui.info(
        "This covers EWD 864's first stage only (the red-letter traffic), within buffers of "
        f"at most {params.capacity} messages: it is blind to every recording bug.  "
        "`.venv/bin/redletter symbolic induction` proves Lemma 0 and Lemma 1."
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


@app.command("induction")
def induction_cmd(
    topology: Annotated[
        str | None,
        typer.Option(
            help="ring, directed-ring or complete (default ring).",
            callback=choice("ring", "directed-ring", "complete"),
        ),
    ] = None,
    machines: Annotated[
        int | None, typer.Option(help="Machines p1..pN (default 3).", callback=count(2))
    ] = None,
    snapshots: Annotated[
        int | None,
        typer.Option(
            help="Snapshots 1..S, concurrent, any starter (default 1).", callback=count(1)
        ),
    ] = None,
    app_name: Annotated[
        str | None,
        typer.Option(
            "--app",
            help="generic (any application, the default) or token (TokenApp).",
            callback=choice("generic", "token"),
        ),
    ] = None,
    every_n: Annotated[
        bool,
        typer.Option(
            "--every-n",
            help="Prove the lemmas for every number of machines, every directed graph, "
            "any number of concurrent snapshots and any starters at once (no --topology, "
            "--machines, --snapshots or --app).",
        ),
    ] = False,
    variant: Annotated[str, typer.Option(help="correct, or a bug class (see --list).")] = "correct",
    drop: Annotated[
        list[str] | None,
        typer.Option(help="Leave this conjunct out of the invariant (repeatable)."),
    ] = None,
    keep_going: Annotated[
        bool,
        typer.Option(
            help="After a counterexample, check the rest (default: stop, unless "
            "the variant is correct and nothing is dropped)."
        ),
    ] = False,
    call_units: Annotated[
        int,
        typer.Option(
            help="z3 resource units per solver call (about 5M a second).", callback=count(1)
        ),
    ] = 50_000_000,
    case_seconds: Annotated[
        float,
        typer.Option(
            help="Wall-clock safety budget for the case, in seconds.", callback=seconds_option()
        ),
    ] = 3600.0,
    diagram: Annotated[
        Path | None,
        typer.Option(
            help="With --every-n and a bug class: write the space-time diagram of a run "
            "that breaks the lemma on the counterexample's network (SVG).",
            callback=output_file,
        ),
    ] = None,
    list_: Annotated[
        bool, typer.Option("--list", help="List the conjuncts and the bug classes, and exit.")
    ] = False,
) -> None:
    """EWD 864's Lemma 0 and Lemma 1 by induction, unbounded in the run's length.

    Checks an inductive invariant (reality; a prophecy; Lemma 1's shadow) and the
    shadow networks' obligations, one step at a time: for a fixed topology, or with
    --every-n for every number of machines, every graph and any number of snapshots.
    Buffers, values and runs are unbounded.  Exit 0 proved, 1 counterexample to
    induction (printed), 2 open (z3 gave up within the budget).
    """
    if every_n:
        given = [
            name
            for name, value in (
                ("--topology", topology),
                ("--machines", machines),
                ("--snapshots", snapshots),
                ("--app", app_name),
            )
            if value is not None
        ]
        if given:
            raise InputError(
                f"--every-n proves the lemmas for every topology, number of machines and of "
                f"snapshots, and any application at once: leave out {', '.join(given)}",
                code="RL-INPUT-USAGE",
            )
        _every_n(variant, drop, keep_going, call_units, case_seconds, diagram, list_)
    if diagram is not None:
        raise InputError(
            "--diagram draws a counterexample of --every-n: add --every-n", code="RL-INPUT-USAGE"
        )
    from redletter.python_model.symbolic.induction import (
        CONJUNCTS,
        VARIANTS,
        Budget,
        Case,
        prove,
    )
    from redletter.python_model.symbolic.induction.explain import cti_lines, result_lines

    if list_:
        ui.lines(["Conjuncts (--drop NAME):"])
        ui.lines(f"  {n:<36} [{c.layer}] {c.says}" for n, c in CONJUNCTS.items())
        ui.lines(["Variants (--variant NAME):"])
        ui.lines(f"  {v.name:<26} {v.bug}" for v in VARIANTS.values())
        done(Exit.OK)
    if call_units < 1 or case_seconds <= 0:
        raise InputError("--call-units and --case-seconds must be positive", code="RL-INPUT-USAGE")
    case = Case(
        topology or "ring",
        machines if machines is not None else 3,
        snapshots if snapshots is not None else 1,
        app_name or "generic",
        variant,
    )
    dropped = tuple(drop or ())
    budget = Budget(call_units=call_units, case_seconds=case_seconds)
    stop = not keep_going and (bool(dropped) or case.variant != "correct")
    with _induction_progress(questions_of_case(case)) as on_outcome:
        result = prove(case, drop=dropped, budget=budget, stop_at_first=stop, on_outcome=on_outcome)
    for cti in result.ctis:
        ui.lines(cti_lines(case, cti, result.dropped))
    ui.lines(result_lines(result))
    scope = "for every run, however long, with unbounded buffers and values"
    scope += ", for any application" if case.app == "generic" else ", for TokenApp"
    for name, verdict in (("Lemma 0", result.lemma0), ("Lemma 1", result.lemma1)):
        tail = f" ({scope})" if verdict == "proved" else ""
        if verdict == "open":
            tail = " (not proved: z3 did not settle every question within the budget)"
        ui.info(f"{name}: {verdict}{tail}")
    if result.verdict == "proved":
        done(Exit.OK)
    done(Exit.FAIL if result.ctis else Exit.UNKNOWN)


def questions_of_case(case: Any) -> int:
    from redletter.python_model.symbolic.induction.prove import questions

    return questions(case)


EVERY_N_SCOPE = (
    "every directed graph, any number of concurrent snapshots, any starters; every run, "
    "however long, with unbounded buffers; any application"
)


def _every_n(
    variant: str,
    drop: list[str] | None,
    keep_going: bool,
    call_units: int,
    case_seconds: float,
    diagram: Path | None,
    list_: bool,
) -> None:
    """``induction --every-n``: the proof over sorts."""
    from redletter.python_model.symbolic.induction import VARIANTS, Budget, variant_named
    from redletter.python_model.symbolic.induction.everyn import CONJUNCTS, prove_every_n, questions
    from redletter.python_model.symbolic.induction.everyn.explain import cti_lines, result_lines

    if list_:
        ui.lines(["Conjuncts for every N (--drop NAME):"])
        ui.lines(f"  {n:<34} [{c.layer}] {c.says}" for n, c in CONJUNCTS.items())
        ui.lines(["Variants (--variant NAME):"])
        ui.lines(f"  {v.name:<26} {v.bug}" for v in VARIANTS.values())
        done(Exit.OK)
    name = variant_named(variant).name
    dropped = tuple(drop or ())
    budget = Budget(call_units=call_units, case_seconds=case_seconds)
    stop = not keep_going and (bool(dropped) or name != "correct")
    if diagram is not None and (name == "correct" or dropped):
        raise InputError(
            "--diagram draws a run of a bug class: give --variant, and no --drop (a "
            "counterexample to a weakened invariant has no run behind it)",
            code="RL-INPUT-USAGE",
        )
    with _induction_progress(questions()) as on_outcome:
        result = prove_every_n(
            name, drop=dropped, budget=budget, stop_at_first=stop, on_outcome=on_outcome
        )
    for cti in result.ctis:
        ui.lines(cti_lines(cti, result.variant, result.dropped))
    if result.ctis and name != "correct" and not dropped:
        _witness(result.ctis[0], name, diagram)
    ui.lines(result_lines(result))
    for lemma, verdict, layers in (
        ("Lemma 0", result.lemma0, ("reality",)),
        ("Lemma 1", result.lemma1, ("reality", "prophecy", "shadow1")),
    ):
        tail = ""
        if verdict == "proved":
            tail = f" for every number of machines ({EVERY_N_SCOPE}"
            tail += "; for every snapshot that completes)" if lemma == "Lemma 1" else ")"
        elif verdict == "open":
            tail = _why_open(result, layers)
        ui.info(f"{lemma}: {verdict}{tail}")
    live = f"Liveness: {result.liveness}"
    if result.liveness == "proved":
        live = (
            "Liveness: premises proved for every number of machines (of the ranking argument "
            "that every started snapshot completes on a strongly connected network, under weak "
            "fairness of receipt, for an application that can always receive; the argument "
            "from them is on paper, docs/induction.md)"
        )
    elif result.liveness == "open":
        live += _why_open(result, ("liveness",))
    ui.info(live)
    if result.verdict == "proved":
        done(Exit.OK)
    done(Exit.FAIL if result.ctis else Exit.UNKNOWN)


def _why_open(result: Any, layers: tuple[str, ...]) -> str:
    """Why a verdict is open: z3 did not settle a question, the budget ran out, or the
    questions were not asked (the run stopped at a counterexample)."""
    mine = [o for o in result.outcomes if o.layer in layers and o.verdict != "proved"]
    if any(o.verdict == "unknown" for o in mine):
        return " (not proved: z3 did not settle every question within the budget)"
    if any(o.reason for o in mine):
        return f" (not proved: {mine[0].reason})"
    return " (not checked: the run stopped at the first counterexample; --keep-going checks it)"


def every_n_summary() -> bool:
    """``redletter check``'s line on the proof for every N (the default budget): True
    when both lemmas and the liveness premises are proved."""
    from redletter.cli.live import status
    from redletter.python_model.symbolic.induction.everyn import prove_every_n

    with status("EWD 864's lemmas by induction for every N") as update:
        result = prove_every_n(
            on_outcome=lambda o: update(f"every-N induction: {o.layer} {o.check}")
        )
    ok = result.verdict == "proved"
    words = {"proved": "proved", "counterexample": "COUNTEREXAMPLE", "open": "OPEN"}
    ui.info(
        f"Induction for every N (redletter symbolic induction --every-n): Lemma 0 "
        f"{words[result.lemma0]}, Lemma 1 {words[result.lemma1]}, liveness premises "
        f"{words[result.liveness]} ({len(result.outcomes)} questions, {result.seconds:.1f} s)"
        + ("" if ok else "; run the command for the details")
    )
    return ok


def _witness(cti: Any, variant: str, diagram: Path | None) -> None:
    """A run from Init on the counterexample's network that breaks an obligation of
    the same layer, in words (and drawn, with ``--diagram``)."""
    from redletter.python_model.symbolic.induction.everyn.witness import reachable_violation

    layer = "reality" if cti.layer == "reality" else "shadow1"
    w = reachable_violation(cti.net, variant, layer=layer)
    if w is None:
        ui.lines(
            [
                "No run from Init on that network breaks it within 20,000 states (TokenApp, "
                "two tokens a machine, one-token messages): the counterexample to induction "
                "is the evidence."
            ]
        )
        return
    net = w.net
    lines = [
        f"A run from Init on that network breaks it ({len(w.steps)} steps; TokenApp, two "
        "tokens a machine, one-token messages, any machine a starter; found by breadth-first "
        f"search among {w.explored} states of the same interpreter):"
    ]

    def tokens(v: int) -> str:
        return f"{v} token{'s' * (v != 1)}"

    lines += [f"  {t}. {st.text(net, tokens)}" for t, st in enumerate(w.steps, start=1)]
    where = "its last step" if w.kappa is None else f"the run, once k{w.kappa + 1} completes,"
    lines.append(f"  {where} breaks: {', '.join(w.broken)}")
    ui.lines(lines)
    if diagram is not None:
        from redletter.render.diagram import render_svg
        from redletter.render.everyn import everyn_diagram

        title = f"{variant}: a run that breaks {', '.join(w.broken)}"
        svg = render_svg(everyn_diagram(net, w.states, w.steps, title=title), step_width=60)
        try:
            diagram.write_text(svg, encoding="utf-8")
        except OSError as e:
            raise InputError(f"cannot write the diagram: {e.strerror}", path=str(diagram)) from e
        ui.info(f"Diagram of the run written to {diagram} ({len(w.steps)} steps)")


class _Progress:
    """Questions answered so far, on stderr (only on a terminal)."""

    def __init__(self, total: int) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[now]}"),
            TimeElapsedColumn(),
            console=ui.err_console,
            transient=True,
            disable=not ui.err_console.is_terminal,
        )
        self.task = self.progress.add_task("questions", total=total, now="")

    def __call__(self, outcome: Any) -> None:
        self.progress.update(
            self.task, advance=1, now=f"{outcome.layer} {outcome.check}: {outcome.verdict}"
        )


class _induction_progress:
    def __init__(self, total: int) -> None:
        self.bar = _Progress(total)

    def __enter__(self) -> _Progress:
        self.bar.progress.start()
        return self.bar

    def __exit__(self, *exc: object) -> None:
        self.bar.progress.stop()
