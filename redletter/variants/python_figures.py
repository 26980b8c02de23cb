"""The comparison page's "The Python model's figures": what the Python mirror of each
variant measures on the variants' models, and how it compares with TLC.

``redletter variants measure-python`` explores every variant model of
``spec/manifest.json`` with the Python engine the model's spec is mirrored by
(:func:`redletter.python_model.engines.load_engine`): safety and, under the spec's
fairness, the temporal properties (:func:`~redletter.python_model.liveness.full_check`),
with the time each took; with ``--crosscheck`` (the default) it also runs TLC with the
state graph dumped and compares the two graphs exactly
(:func:`~redletter.python_model.crosscheck.crosscheck`).  The figures are kept in
``docs/variants.json`` (``"python"``) and the page is written from them, so the page
never shows a figure nobody measured.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from redletter.errors import InputError
from redletter.manifest import Manifest, ModelEntry
from redletter.project import Project

__all__ = [
    "PythonFigure",
    "figures_from_json",
    "figures_to_json",
    "measure_python",
    "python_section",
    "variant_models",
]

COMMAND: Final = ".venv/bin/redletter variants measure-python"


@dataclass(frozen=True)
class PythonFigure:
    """What the Python mirror measured on one model."""

    model: str
    result: str  #: "success", "safety failure" or "liveness failure"
    violated: str | None  #: the violated property (a safety failure's invariant)
    distinct: int
    total: int
    depth: int
    trace: int | None  #: a safety failure's counterexample length (states)
    explore_seconds: float
    liveness_seconds: float | None  #: None when the cfg lists no temporal property
    crosscheck: str | None  #: the cross-check's verdict with TLC, when run
    edges: int | None  #: edges compared by the cross-check (a passing model)


def variant_models(manifest: Manifest) -> list[ModelEntry]:
    """The manifest's models of the variants (every model on the comparison page)."""
    from redletter.variants.catalogue import VARIANTS, failure_models

    on_page = {m for v in VARIANTS[1:] for m in (*v.models, *failure_models(v), *v.costs_on)}
    return [e for e in manifest.models if e.model in on_page]


def _measure_one(project: Project, entry: ModelEntry, *, crosscheck: bool) -> PythonFigure:
    from redletter.python_model.engines import load_engine
    from redletter.python_model.explore import explore
    from redletter.python_model.liveness import check_liveness, fair_bit_table, temporal_of

    engine = load_engine(entry.model, project.spec_dir)
    t0 = time.perf_counter()
    temporal = temporal_of(engine) if engine.liveness else None
    bits = fair_bit_table(engine, temporal.fairness) if temporal is not None else None
    explored = explore(engine, fair_bits=bits)
    explore_seconds = time.perf_counter() - t0
    result, violated, trace = "success", None, None
    live_seconds: float | None = None
    if explored.violation is not None:
        result, violated = "safety failure", explored.violation.name
        trace = len(explored.violation.trace)
    elif temporal is not None:
        live, _ = check_liveness(engine, explored=explored, temporal=temporal)
        live_seconds = live.seconds
        if live.violated is not None:
            result, violated = "liveness failure", live.violated.prop.name
    verdict: str | None = None
    edges: int | None = None
    if crosscheck:
        from redletter.python_model.crosscheck import crosscheck as run_crosscheck

        r = run_crosscheck(entry.model, project)
        verdict = r.summary() if r.exact else "MISMATCH: " + "; ".join(r.problems)
        edges = r.counts.get("edges") if r.mode == "graph" else None
    return PythonFigure(
        model=entry.model,
        result=result,
        violated=violated,
        distinct=explored.distinct,
        total=explored.total,
        depth=explored.depth,
        trace=trace,
        explore_seconds=round(explore_seconds, 1),
        liveness_seconds=None if live_seconds is None else round(live_seconds, 2),
        crosscheck=verdict,
        edges=edges,
    )


def measure_python(
    project: Project,
    entries: Sequence[ModelEntry],
    *,
    crosscheck: bool,
    previous: Mapping[str, PythonFigure] | None = None,
    on_model: Callable[[ModelEntry, int, int], None] | None = None,
) -> dict[str, PythonFigure]:
    """Measure ``entries``; the figures of other models are kept from ``previous``."""
    out = dict(previous or {})
    for i, entry in enumerate(entries):
        if on_model is not None:
            on_model(entry, i, len(entries))
        out[entry.model] = _measure_one(project, entry, crosscheck=crosscheck)
    return out


def figures_to_json(figures: Mapping[str, PythonFigure], machine: str) -> dict[str, Any]:
    """The ``"python"`` entry of ``docs/variants.json``."""
    return {
        "command": COMMAND,
        "machine": machine,
        "models": {
            name: {
                "result": f.result,
                "violated": f.violated,
                "distinctStates": f.distinct,
                "totalStates": f.total,
                "stateDepth": f.depth,
                "traceStates": f.trace,
                "exploreSeconds": f.explore_seconds,
                "livenessSeconds": f.liveness_seconds,
                "crosscheck": f.crosscheck,
                "edges": f.edges,
            }
            for name, f in sorted(figures.items())
        },
    }


def figures_from_json(data: Any) -> tuple[dict[str, PythonFigure], str]:
    """The figures and the machine note of ``docs/variants.json``'s ``"python"``."""
    if data is None:
        return {}, ""
    try:
        return {
            name: PythonFigure(
                model=name,
                result=str(f["result"]),
                violated=f["violated"],
                distinct=int(f["distinctStates"]),
                total=int(f["totalStates"]),
                depth=int(f["stateDepth"]),
                trace=f["traceStates"],
                explore_seconds=float(f["exploreSeconds"]),
                liveness_seconds=f["livenessSeconds"],
                crosscheck=f["crosscheck"],
                edges=f["edges"],
            )
            for name, f in data["models"].items()
        }, str(data["machine"])
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise InputError(
            f"malformed Python figures in docs/variants.json ({type(exc).__name__}: {exc});"
            f" measure them again with `{COMMAND}`",
            code="RL-INPUT-VARIANTS",
        ) from None


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _table(head: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return out


def _agrees(f: PythonFigure, e: ModelEntry) -> str:
    """Does the Python verdict (and count) match the manifest's, which is TLC's?"""
    if e.expect != f.result:
        return f"**no**: TLC {e.expect}"
    if e.expect == "success":
        same = (f.distinct, f.total, f.depth) == (e.distinct, e.total, e.depth)
        return "yes" if same else f"**no**: TLC {e.distinct}/{e.total}/{e.depth}"
    if e.expect == "safety failure" and e.violated != f.violated:
        return f"**no**: TLC {e.violated}"
    return "yes"


def python_section(manifest: Manifest, data: Any) -> list[str]:
    """The section's body (between its markers)."""
    figures, machine = figures_from_json(data)
    if not figures:
        return [f"Not measured yet: `{COMMAND}` measures it.", ""]
    rows = []
    for e in variant_models(manifest):
        f = figures.get(e.model)
        if f is None:
            rows.append((e.model, e.suite, "not measured", "", "", "", "", ""))
            continue
        verdict = f.result + (f" ({f.violated})" if f.violated else "")
        if f.trace is not None:
            verdict += f", {f.trace}-state counterexample"
        rows.append(
            (
                f"`{e.model}`",
                e.suite,
                f"{f.distinct:,} / {f.total:,} / {f.depth}",
                verdict,
                _agrees(f, e),
                f"{f.explore_seconds:g} s",
                "\u2014" if f.liveness_seconds is None else f"{f.liveness_seconds:g} s",
                f.crosscheck or "not run in this measurement",
            )
        )
    head = (
        "model",
        "suite",
        "Python: distinct / generated / depth (failing: up to the violation)",
        "Python's verdict",
        "same as TLC's (the manifest)",
        "explore",
        "liveness",
        "cross-check with TLC's graph",
    )
    return [
        "Every variant is mirrored 1:1 in Python behind the engine interface"
        " (`python_model/lazy.py`, `observer.py`, `barrier.py`; see"
        " [`docs/engine.md`](engine.md)): the explorer, the liveness check under the"
        " spec's own fairness and the exact cross-check against TLC's state graph run"
        " on each.  A safety failure's counterexample is a shortest one (breadth"
        " first); a cross-check of a passing model compares every state and every"
        " labelled edge with TLC's dump, of a failing one the verdicts.  `make check`"
        " cross-checks the default suite on every run.",
        "",
        f"Measured with `{COMMAND}` ({machine}); times are the Python side's only.",
        "",
        *_table(head, rows),
        "",
    ]
