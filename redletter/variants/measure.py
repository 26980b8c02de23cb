"""Measure the snapshot variants with TLC, for the comparison page.

Two kinds of measurement, both by TLC on the models of ``spec/``:

* **Counterexamples.**  Each model that must fail is run with one worker, so the
  search is TLC's breadth-first one in a fixed order and the counterexample is the
  shortest one, the same on every run.  Its states are kept as TLC printed them.
* **Costs.**  Each cost model is run once more with a probe: a module that extends
  the model and whose only invariant records, in TLC's statistics registers
  (``TLCSet``/``TLCGet``, one worker), the least and the greatest value of each cost
  state function over every reachable state -- per completed snapshot for the
  messages a snapshot costs, per state for the work it holds back -- and prints
  each new extreme.  The probe changes nothing else: its run must find the model's
  distinct-state count of ``spec/manifest.json``.

The results are plain data (:class:`Measurements`), kept in ``docs/variants.json``
(:func:`dump_measurements`, :func:`load_measurements`), from which
:mod:`redletter.variants.page` writes ``docs/variants.md``.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from redletter.errors import InputError, SpecError
from redletter.manifest import Manifest, ModelEntry
from redletter.project import Project
from redletter.tlc import (
    MSG_BACK_TO_STATE,
    MSG_STATE,
    MSG_STUTTERING,
    ResultKind,
    TlcResult,
    run_tlc,
)
from redletter.toolchain import require_java, require_tlc_jar
from redletter.variants.catalogue import FAMILIES, Family, Variant, cost_models, failure_models

__all__ = [
    "Counterexample",
    "Extremes",
    "Measurements",
    "ModelCosts",
    "TraceState",
    "dump_measurements",
    "load_measurements",
    "measure",
    "measure_costs",
    "measure_counterexample",
    "probe_module",
]

#: The file the measurements are kept in, relative to the project root.
MEASUREMENTS: Final = "docs/variants.json"
#: The tag the probe prints its extremes with.
_TAG: Final = "redletter-cost"
_EXTREME = re.compile(r'^<<"' + _TAG + r'", "(\w+)", "(max|min)", (-?\d+)>>$', re.MULTILINE)
_ACTION = re.compile(r"^(\d+): <(\w+)(?: line \d+.*)?>$")
_INITIAL = re.compile(r"^(\d+): <Initial predicate>$")
_BACK = re.compile(r"^(\d+): Back to state:? ?(\d+)")


@dataclass(frozen=True)
class TraceState:
    """One state of a counterexample: the action that led to it (``Initial
    predicate`` for the first), and the state as TLC printed it (``/\\ var = value``
    lines).  A liveness counterexample ends in ``Stuttering`` (the last state
    repeats for ever) or ``Back to state N`` (a loop); those have no text."""

    action: str
    text: str = ""
    back_to: int | None = None


@dataclass(frozen=True)
class Counterexample:
    """What TLC reported on a model that must fail: the result, the property it
    names, and the trace."""

    model: str
    result: str
    violated: str | None
    states: tuple[TraceState, ...]


@dataclass(frozen=True)
class Extremes:
    """The least and greatest value of a cost over the states it was measured on;
    ``None`` when there was no such state."""

    min: int | None
    max: int | None


@dataclass(frozen=True)
class ModelCosts:
    """The costs measured on one model: every metric's extremes, and the size of
    the state space they were measured over."""

    model: str
    distinct: int
    metrics: Mapping[str, Extremes]


@dataclass(frozen=True)
class Measurements:
    """Everything the comparison page is made of that was measured.  ``python`` and
    ``flink`` are left for the parts of issue 13 that measure them (the Python
    mirror of the variants, the experiment on Apache Flink): ``None`` until then."""

    tlc: str
    counterexamples: Mapping[str, Counterexample]
    costs: Mapping[str, ModelCosts]
    python: Any = None
    flink: Any = None
    command: str = field(default=".venv/bin/redletter variants measure")


# --------------------------------------------------------------------------- TLC runs


def _fail(model: str, what: str, result: TlcResult | None = None) -> SpecError:
    where = f" (TLC's output: {result.log_path})" if result and result.log_path else ""
    return SpecError(
        f"measuring {model}: {what}{where}; run `.venv/bin/redletter check --model {model}` and fix"
        " the spec or its row in spec/manifest.json before measuring again.",
        code="RL-VARIANTS-MEASURE",
    )


def _trace_states(result: TlcResult) -> tuple[TraceState, ...]:
    states: list[TraceState] = []
    for msg in result.messages:
        if msg.code not in (MSG_STATE, MSG_STUTTERING, MSG_BACK_TO_STATE):
            continue
        head, _, rest = msg.text.partition("\n")
        head = head.strip()
        if msg.code == MSG_STUTTERING:
            states.append(TraceState("Stuttering"))
        elif (back := _BACK.match(head)) is not None:
            states.append(TraceState("Back to state", back_to=int(back.group(2))))
        elif _INITIAL.match(head):
            states.append(TraceState("Initial predicate", rest.strip("\n")))
        elif (action := _ACTION.match(head)) is not None:
            states.append(TraceState(action.group(2), rest.strip("\n")))
        else:
            states.append(TraceState(head, rest.strip("\n")))
    return tuple(states)


def measure_counterexample(project: Project, entry: ModelEntry, *, jar: Path) -> Counterexample:
    """Run a model that must fail with one worker and keep its counterexample."""
    result = run_tlc(
        entry.model,
        spec_dir=project.spec_dir,
        jar=jar,
        cache_dir=project.work_dir,
        check_deadlock=entry.check_deadlock,
        workers=1,
    )
    if result.kind.value != entry.expect:
        raise _fail(entry.model, f"TLC reported {result.describe()}, not {entry.expect}", result)
    if entry.expect == "safety failure" and result.violated != entry.violated:
        raise _fail(entry.model, f"TLC reported {result.violated} violated, not {entry.violated}")
    states = _trace_states(result)
    if not states:
        raise _fail(entry.model, "TLC printed no counterexample", result)
    return Counterexample(
        model=entry.model, result=result.kind.value, violated=result.violated, states=states
    )


def probe_module(model: str, family: Family) -> tuple[str, str]:
    """The probe module's name and text: ``model`` plus the invariant ``CostProbe``
    that records the extremes of ``family``'s cost functions (see the module doc)."""
    name = f"Probe{model}"
    regs: list[str] = []
    tracks: list[str] = []
    for i, metric in enumerate(family.metrics):
        hi, lo = 2 * i + 1, 2 * i + 2
        regs.append(f"ASSUME TLCSet({hi}, -1) /\\ TLCSet({lo}, 1000000000)")
        value = f"{metric.name}(k)" if metric.per_snapshot else metric.name
        track = f'Track({hi}, {lo}, "{metric.name}", {value})'
        tracks.append(f"\\A k \\in DOMAIN Sf : {track}" if metric.per_snapshot else track)
    lines = [
        f"---- MODULE {name} ----",
        "\\* Generated by redletter.variants.measure: the extremes of the costs of " + model + ".",
        f"EXTENDS {model}, TLC",
        *regs,
        "Track(hi, lo, name, x) ==",
        f'    /\\ IF x > TLCGet(hi) THEN TLCSet(hi, x) /\\ PrintT(<<"{_TAG}", name, "max", x>>)'
        " ELSE TRUE",
        f'    /\\ IF x < TLCGet(lo) THEN TLCSet(lo, x) /\\ PrintT(<<"{_TAG}", name, "min", x>>)'
        " ELSE TRUE",
        *family.probe_definitions,
        "CostProbe ==",
        *(f"    /\\ {t}" for t in tracks),
        "====",
    ]
    return name, "\n".join(lines) + "\n"


_SECTIONS = ("INVARIANT", "INVARIANTS", "PROPERTY", "PROPERTIES")


def probe_cfg(cfg_text: str) -> str:
    """The model's cfg with its invariants and properties replaced by ``CostProbe``
    (and its liveness properties dropped: costs are safety measurements)."""
    out: list[str] = []
    skipping = False
    for line in cfg_text.splitlines():
        word = line.strip().split(" ")[0] if line.strip() else ""
        if word in _SECTIONS:
            skipping = True
            rest = line.strip()[len(word) :].strip()
            if rest:  # "INVARIANT Foo" on one line
                continue
            continue
        if skipping and (line.startswith((" ", "\t")) or not line.strip()):
            continue
        skipping = False
        out.append(line)
    out += ["INVARIANT", "    CostProbe"]
    return "\n".join(out) + "\n"


def measure_costs(project: Project, entry: ModelEntry, family: Family, *, jar: Path) -> ModelCosts:
    """Run ``entry``'s model with the cost probe (one worker) and read the extremes."""
    with tempfile.TemporaryDirectory(prefix="redletter-variants-") as tmp:
        spec = Path(tmp)
        for path in project.spec_dir.glob("*.tla"):
            shutil.copy(path, spec / path.name)
        name, text = probe_module(entry.model, family)
        (spec / f"{name}.tla").write_text(text, encoding="utf-8")
        cfg = (project.spec_dir / f"{entry.model}.cfg").read_text(encoding="utf-8")
        (spec / f"{name}.cfg").write_text(probe_cfg(cfg), encoding="utf-8")
        result = run_tlc(
            name,
            spec_dir=spec,
            jar=jar,
            cache_dir=project.work_dir,
            check_deadlock=entry.check_deadlock,
            workers=1,
        )
    if result.kind is not ResultKind.SUCCESS:
        raise _fail(entry.model, f"the cost probe ended in {result.describe()}", result)
    if entry.expect == "success" and result.distinct != entry.distinct:
        raise _fail(
            entry.model,
            f"the cost probe found {result.distinct} distinct states, the manifest says"
            f" {entry.distinct}",
            result,
        )
    log = result.log_path.read_text(encoding="utf-8") if result.log_path else ""
    seen: dict[str, dict[str, int]] = {}
    for metric, which, value in _EXTREME.findall(log):
        seen.setdefault(metric, {})[which] = int(value)
    metrics = {
        m.name: Extremes(seen.get(m.name, {}).get("min"), seen.get(m.name, {}).get("max"))
        for m in family.metrics
    }
    return ModelCosts(model=entry.model, distinct=result.distinct or 0, metrics=metrics)


@dataclass(frozen=True)
class Step:
    """One measurement to make: a counterexample or the costs of a model."""

    kind: str  #: ``counterexample`` or ``costs``
    entry: ModelEntry
    family: Family


def plan(manifest: Manifest, variants: Sequence[Variant], names: Sequence[str] = ()) -> list[Step]:
    """Every measurement the page needs, in page order (only ``names`` if given)."""
    rows = {m.model: m for m in manifest.models}
    steps: list[Step] = []
    for v in variants:
        family = FAMILIES[v.family]
        for model in failure_models(v):
            steps.append(Step("counterexample", _row(manifest, rows, model), family))
        for model in cost_models(v):
            steps.append(Step("costs", _row(manifest, rows, model), family))
    if names:
        unknown = sorted(set(names) - {s.entry.model for s in steps})
        if unknown:
            raise InputError(
                f"{', '.join(unknown)}: not a model the comparison page measures; it measures"
                f" {', '.join(sorted({s.entry.model for s in steps}))}.",
                code="RL-INPUT-MODEL",
            )
        steps = [s for s in steps if s.entry.model in names]
    return steps


def _row(manifest: Manifest, rows: Mapping[str, ModelEntry], model: str) -> ModelEntry:
    if model not in rows:
        raise InputError(
            f"the comparison page measures {model}, which has no row in the manifest; add"
            " one (see 'How to add a model' in docs/checking.md).",
            code="RL-INPUT-MANIFEST",
            path=str(manifest.path),
        )
    return rows[model]


def measure(
    project: Project,
    steps: Sequence[Step],
    *,
    previous: Measurements | None = None,
    tlc_version: str,
    on_step: Callable[[Step, int, int], None] | None = None,
) -> Measurements:
    """Make every measurement of ``steps``; the ones not made are kept from
    ``previous`` (so one model can be measured again alone)."""
    require_java()
    jar = require_tlc_jar(project.cache_dir)
    counterexamples = dict(previous.counterexamples) if previous else {}
    costs = dict(previous.costs) if previous else {}
    for i, step in enumerate(steps):
        if on_step is not None:
            on_step(step, i, len(steps))
        if step.kind == "counterexample":
            counterexamples[step.entry.model] = measure_counterexample(project, step.entry, jar=jar)
        else:
            costs[step.entry.model] = measure_costs(project, step.entry, step.family, jar=jar)
    return Measurements(
        tlc=tlc_version,
        counterexamples=counterexamples,
        costs=costs,
        python=previous.python if previous else None,
        flink=previous.flink if previous else None,
    )


# --------------------------------------------------------------------------- JSON


def measurements_to_json(m: Measurements) -> dict[str, Any]:
    """The JSON form of ``docs/variants.json`` (keys sorted by model)."""
    return {
        "tlc": m.tlc,
        "command": m.command,
        "counterexamples": {
            name: {
                "result": c.result,
                "violated": c.violated,
                "states": [
                    {"action": s.action, "text": s.text}
                    if s.back_to is None
                    else {"action": s.action, "backTo": s.back_to}
                    for s in c.states
                ],
            }
            for name, c in sorted(m.counterexamples.items())
        },
        "costs": {
            name: {
                "distinctStates": c.distinct,
                "metrics": {k: {"min": e.min, "max": e.max} for k, e in sorted(c.metrics.items())},
            }
            for name, c in sorted(m.costs.items())
        },
        "python": m.python,
        "flink": m.flink,
    }


def _bad(path: Path, what: str) -> InputError:
    return InputError(
        f"{what}; it holds the measurements docs/variants.md is made from: measure them"
        " again with `.venv/bin/redletter variants measure`.",
        code="RL-INPUT-VARIANTS",
        path=str(path),
    )


def measurements_from_json(data: Any, path: Path) -> Measurements:
    """Read the JSON form back (an :class:`InputError` naming the file if malformed)."""
    try:
        return Measurements(
            tlc=str(data["tlc"]),
            command=str(data["command"]),
            counterexamples={
                name: Counterexample(
                    model=name,
                    result=str(c["result"]),
                    violated=c["violated"],
                    states=tuple(
                        TraceState(str(s["action"]), str(s.get("text", "")), s.get("backTo"))
                        for s in c["states"]
                    ),
                )
                for name, c in data["counterexamples"].items()
            },
            costs={
                name: ModelCosts(
                    model=name,
                    distinct=int(c["distinctStates"]),
                    metrics={k: Extremes(e["min"], e["max"]) for k, e in c["metrics"].items()},
                )
                for name, c in data["costs"].items()
            },
            python=data.get("python"),
            flink=data.get("flink"),
        )
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise _bad(path, f"malformed measurements ({type(exc).__name__}: {exc})") from exc


def load_measurements(path: Path) -> Measurements:
    """Read ``docs/variants.json``."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise _bad(path, f"cannot read the measurements ({exc.strerror or exc})") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _bad(path, f"not valid JSON (line {exc.lineno}: {exc.msg})") from exc
    return measurements_from_json(data, path)


def dump_measurements(m: Measurements, path: Path) -> None:
    """Write ``docs/variants.json`` (indented, keys in a fixed order, one newline at the end)."""
    path.write_text(json.dumps(measurements_to_json(m), indent=1) + "\n", encoding="utf-8")
