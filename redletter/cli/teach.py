"""``redletter diagram`` and ``redletter explain``: pictures of a run and of its proofs.

- ``diagram [MODEL] (--itf TRACE | --seed-example | --counterexample) -o FILE.svg``:
  the space-time diagram (SVG) of a run;
- ``explain [MODEL] (--itf TRACE | --seed-example | --counterexample) -o FILE.html``:
  the proof explorer, one self-contained HTML page stepping through the run with
  both shadow networks of EWD 864.

The run is one of: an ITF trace whose states carry ``action`` and ``params`` in
``#meta`` (a conformance trace carries its own model, so MODEL may be left out);
the worked example of seeds/001 (MCSeed); or the shortest counterexample the Python
explorer finds for a model that must fail.  Without a choice: the worked example for
MCSeed (the default model), the counterexample for a model that overrides a step of
the algorithm.  Both commands exit 0 when the file is written, whatever the run
shows (its violations are what the picture is for); 5 on bad input.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

import redletter.cli.ui as ui
from redletter.cli.options import (
    RootOption,
    done,
    existing_file,
    model_name,
    output_file,
    project,
)
from redletter.errors import Exit, InputError
from redletter.project import kit_command

if TYPE_CHECKING:
    from redletter.python_model.config import ModelConfig
    from redletter.python_model.state import State
    from redletter.render.proof import ProofRun
    from redletter.render.teach import Step

__all__ = ["app"]

app = typer.Typer()

SEED_MODEL = "MCSeed"

OptionalModel = Annotated[
    str | None,
    typer.Argument(
        help="Model name (spec/<model>.tla); default MCSeed, or the model a conformance "
        "trace carries.",
        show_default=False,
        callback=model_name,
    ),
]
ItfOption = Annotated[
    Path | None,
    typer.Option(
        "--itf",
        help="A run as an ITF trace (action and params in #meta).",
        callback=existing_file,
    ),
]
SeedOption = Annotated[
    bool, typer.Option("--seed-example", help="The worked example of seeds/001 (MCSeed).")
]
CounterOption = Annotated[
    bool,
    typer.Option(
        "--counterexample",
        help="The shortest counterexample the Python explorer finds (a model that must fail).",
    ),
]


@dataclass(frozen=True)
class _RunSpec:
    cfg: ModelConfig
    start: State
    steps: list[Step]
    title: str
    subtitle: str
    source: str  #: the option that chose the run, for the command line shown on the page


def _itf_schedule(path: Path) -> tuple[dict[str, object], list[Step], dict[str, object]]:
    """Read an ITF trace whose states carry ``action`` and ``params`` in ``#meta``.

    Returns the first state (as TLA+ values by variable), the steps after it, and the
    trace's own ``#meta``.
    """
    from redletter.python_model.itf import read_itf, thaw_json

    trace = read_itf(path)  # the one reader of ITF files: every problem is bad input
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
    meta = {k: thaw_json(v) for k, v in trace.meta.items()}
    return dict(trace.states[0].values.items()), steps, meta


def _counterexample(cfg: ModelConfig, model: str) -> list[Step]:
    from redletter.cli.live import explore_progress
    from redletter.render.teach import counterexample

    with explore_progress(model) as report:
        steps, result = counterexample(cfg, on_progress=report)
    if steps is None:
        raise InputError(
            f"{model} has no counterexample: the Python explorer checked {result.distinct:,} "
            "states and found no violation of the invariants and properties its cfg lists; "
            "give a run with --itf TRACE (or, for MCSeed, --seed-example)",
            code="RL-INPUT-EXPLAIN",
        )
    return steps


def _resolve_run(
    model: str | None, itf: Path | None, seed_example: bool, counterexample: bool, root: Path | None
) -> _RunSpec:
    """The run a picture is drawn of (see the module docstring)."""
    from redletter.python_model.actions import init_states
    from redletter.python_model.config import load_model
    from redletter.python_model.lemmas import is_mutant
    from redletter.python_model.state import from_tla
    from redletter.render.teach import seed_schedule

    chosen = [name for name, on in (
        ("--itf", itf is not None), ("--seed-example", seed_example),
        ("--counterexample", counterexample),
    ) if on]  # fmt: skip
    if len(chosen) > 1:
        raise InputError(
            f"choose one run: {' and '.join(chosen)} were both given",
            code="RL-INPUT-EXPLAIN",
        )
    spec_dir = project(root).spec_dir
    if itf is not None:
        first, steps, meta = _itf_schedule(itf)
        if meta.get("kind") == "redletter-conformance-trace/1":
            from redletter.conformance.traces import model_of, read_trace

            trace = read_trace(itf)
            if model is not None and model != trace.model:
                raise InputError(
                    f"the trace is a run of {trace.model}, not of {model}; leave the model out "
                    "or name the trace's own",
                    path=str(itf),
                    code="RL-INPUT-EXPLAIN",
                )
            cfg = model_of(trace)
        elif model is None:
            raise InputError(
                "say which model the trace is a run of:"
                " .venv/bin/redletter explain MODEL --itf TRACE",
                path=str(itf),
                code="RL-INPUT-EXPLAIN",
            )
        else:
            cfg = load_model(model, spec_dir)
        start = from_tla(cfg, first)  # type: ignore[arg-type]
        return _RunSpec(cfg, start, steps, f"{cfg.name}: {itf.name}", str(itf), f"--itf {itf}")
    name = model if model is not None else SEED_MODEL
    cfg = load_model(name, spec_dir)
    if not seed_example and not counterexample:
        if name == SEED_MODEL:
            seed_example = True
        elif is_mutant(cfg):
            counterexample = True
        else:
            raise InputError(
                f"say which run of {name} to show: --itf TRACE, or --counterexample for a "
                "model that must fail (--seed-example is a run of MCSeed)",
                code="RL-INPUT-EXPLAIN",
            )
    if seed_example:
        if name != SEED_MODEL:
            raise InputError(
                f"the worked example of seeds/001 is a run of {SEED_MODEL}, not of {name}",
                code="RL-INPUT-EXPLAIN",
            )
        return _RunSpec(
            cfg,
            init_states(cfg)[0],
            list(seed_schedule()),
            f"{name}: the worked example of seeds/001",
            "Three machines P1, P2, P3; P1 starts the snapshot right after its event B "
            "(Gupta's CS425 example, as retold in seeds/001).",
            "--seed-example",
        )
    steps = _counterexample(cfg, name)
    return _RunSpec(
        cfg,
        init_states(cfg)[0],
        steps,
        f"{name}: the shortest counterexample",
        f"The shortest run of {name} that violates a property its cfg checks, found by the "
        "Python model's breadth-first explorer.",
        "--counterexample",
    )


def _write(out: Path, text: str, what: str) -> None:
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
    except OSError as e:
        raise InputError(f"cannot write the {what}: {e.strerror}", path=str(out)) from e


def _command(verb: str, model: str | None, spec: _RunSpec, out: Path) -> str:
    parts = [kit_command(), verb]
    if model is not None:
        parts.append(model)
    return " ".join([*parts, spec.source, "-o", str(out)])


@app.command("diagram")
def diagram_cmd(
    model: OptionalModel = None,
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Where to write the SVG.", callback=output_file)
    ] = Path("diagram.svg"),
    itf: ItfOption = None,
    seed_example: SeedOption = False,
    counterexample: CounterOption = False,
    root: RootOption = None,
) -> None:
    """Draw a run as a space-time diagram (SVG) with each snapshot's cut."""
    from redletter.render.diagram import draw
    from redletter.render.teach import diagram_of_trace

    spec = _resolve_run(model, itf, seed_example, counterexample, root)
    drawing = draw(diagram_of_trace(spec.cfg, spec.start, spec.steps, title=spec.title))
    _write(out, drawing.svg, "diagram")
    # The full path: the default (diagram.svg) lands in whatever directory the
    # command ran in, which the user may not have in mind.
    ui.info(
        f"wrote {out.absolute()} ({len(spec.steps)} steps, {drawing.width} x {drawing.height} px)"
    )
    for w in drawing.warnings:
        ui.info(f"note: {w}")
    done(Exit.OK)


def _summary(pr: ProofRun) -> list[str]:
    """What the page shows, in a few lines."""
    lines: list[str] = []
    for b in pr.breaks:
        what = "Action property" if b.name == "ShadowLemma0" else "Invariant"
        conj = f" (conjunct {b.conjunct})" if b.conjunct else ""
        lines.append(f"{what} {b.name} is violated at step {b.step}{conj}: {b.why}")
    for w in pr.walks:
        if w.walk is None:
            if w.lemma == 0:
                lines.append(f"snapshot {w.snap}: {w.unavailable}")
            continue
        v = w.walk.verdict
        if v.ok:
            lines.append(
                f"Lemma {w.lemma}, snapshot {w.snap}: the shadow network keeps step from state "
                f"{w.walk.t0} to state {w.walk.tf}"
            )
        else:
            from redletter.render.proof import move_why

            last = w.walk.moves[-1] if w.walk.moves else None
            rule = f" rule ({last.rule})" if last is not None and last.rule else ""
            why = move_why(pr.cfg, pr.steps, last) if last is not None else v.why
            lines.append(
                f"Lemma {w.lemma}, snapshot {w.snap}: the shadow network breaks at step "
                f"{v.step},{rule}: {why}"
            )
    return lines


@app.command("explain")
def explain_cmd(
    model: OptionalModel = None,
    out: Annotated[
        Path,
        typer.Option(
            "--out", "-o", help="Where to write the explorer (HTML).", callback=output_file
        ),
    ] = Path("explain.html"),
    itf: ItfOption = None,
    seed_example: SeedOption = False,
    counterexample: CounterOption = False,
    root: RootOption = None,
) -> None:
    """Write the proof explorer: one HTML page stepping through a run with EWD 864's proofs.

    The page shows the space-time diagram with the current step highlighted,
    each machine white or red per snapshot, every buffer with its red letters
    in place, what is recorded so far, every invariant, and the shadow
    networks of Lemma 0 and Lemma 1 executed move by move, Dijkstra's rules
    named as they fire.  It needs no server and no network: open it from
    disk.  Default: the worked example of seeds/001 on MCSeed.
    """
    from redletter.render.explorer import explorer_data, render_explorer
    from redletter.render.proof import prove_run

    spec = _resolve_run(model, itf, seed_example, counterexample, root)
    pr = prove_run(spec.cfg, spec.start, spec.steps)
    data = explorer_data(
        pr, title=spec.title, subtitle=spec.subtitle, command=_command("explain", model, spec, out)
    )
    _write(out, render_explorer(data), "explorer")
    ui.info(f"wrote {out.absolute()} ({spec.cfg.name}, {len(spec.steps)} steps)")
    ui.lines(f"  {line}" for line in _summary(pr))
    ui.info(f"open it in a browser: {out.resolve().as_uri()}#step=0")
    done(Exit.OK)
