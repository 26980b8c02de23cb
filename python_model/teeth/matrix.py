"""The teeth matrix: every model that must fail against every property, one check each.

``spec/manifest.json`` says, per model that must fail, every property it must
violate (``violates``) and every one it must not (``satisfies``).  A *cell* is one
(model, property) pair; :func:`check_teeth` runs each cell on its own

* in **TLC**: a cell module ``T_<model>_<property>`` that extends the model and a
  cfg with the model's constants, override, specification and constraint and that
  one property, in a copy of ``spec/`` under ``.cache/teeth/`` (TLC's full output in
  ``.cache/tlc-logs/T_<model>_<property>.log``);
* in **the Python model**: the model's cfg with only that property, explored
  breadth first; a temporal property goes to the Python liveness check through
  :func:`python_liveness`, and is reported *pending* where that check is not
  installed -- never as a pass.

A cell's outcome is ``violated`` or ``holds``; it matches when it is what the
manifest expects.  :func:`requirements` checks the manifest itself: every must-fail
row classifies every property, every property but ``TypeOK`` is violated by some
model, and ``Lemma1``, ``StableLemma1`` and ``StableDetection`` are each violated
*alone* (while ``Lemma0`` and ``StableLemma0`` hold) by some model.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from redletter.errors import InputError
from redletter.manifest import Manifest, ModelEntry
from redletter.project import Project
from redletter.python_model import bugs
from redletter.python_model.config import load_model
from redletter.python_model.teeth.properties import (
    ALONE_PREMISES,
    MUST_BE_VIOLATED_ALONE,
    PROPERTY_NAMES,
    kind_of,
)
from redletter.tlc import ResultKind, run_tlc
from redletter.toolchain import require_java, require_tlc_jar

__all__ = [
    "ENGINES",
    "PENDING_LIVENESS",
    "RECORD_NAME",
    "Cell",
    "CellResult",
    "MatrixRun",
    "Outcome",
    "alone",
    "cell_cfg",
    "cells",
    "check_teeth",
    "is_chandy_lamport",
    "load_record",
    "merge_record",
    "must_fail",
    "python_cell",
    "python_liveness",
    "record_problems",
    "requirements",
    "run_record",
    "tlc_cell",
]

ENGINES = ("tlc", "python")

PENDING_LIVENESS = "pending (needs the Python liveness check)"


class Outcome(StrEnum):
    """What one engine said about one cell."""

    VIOLATED = "violated"
    HOLDS = "holds"
    PENDING = "pending"  #: the engine cannot decide this cell yet (said why)
    ERROR = "error"  #: the run broke (see the detail and the log)


@dataclass(frozen=True)
class Cell:
    """One (model, property) pair and what the manifest expects of it."""

    model: str
    prop: str
    expected: Outcome  #: VIOLATED or HOLDS

    @property
    def name(self) -> str:
        """The cell module's name: ``T_<model>_<property>``."""
        return f"T_{self.model}_{self.prop}"


@dataclass(frozen=True)
class CellResult:
    """One engine's outcome on one cell."""

    cell: Cell
    engine: str
    outcome: Outcome
    detail: str = ""
    seconds: float = 0.0
    log: Path | None = None

    @property
    def matches(self) -> bool:
        return self.outcome is self.cell.expected


@dataclass
class MatrixRun:
    """Every result of one :func:`check_teeth` run."""

    engines: tuple[str, ...]
    results: list[CellResult] = dataclasses.field(default_factory=list)
    seconds: float = 0.0

    def of(self, engine: str) -> list[CellResult]:
        return [r for r in self.results if r.engine == engine]

    @property
    def mismatches(self) -> list[CellResult]:
        """Cells an engine decided otherwise than the manifest, or could not run."""
        return [r for r in self.results if r.outcome is not Outcome.PENDING and not r.matches]

    @property
    def pending(self) -> list[CellResult]:
        return [r for r in self.results if r.outcome is Outcome.PENDING]

    @property
    def ok(self) -> bool:
        """Every cell decided, by every engine, as the manifest says."""
        return not self.mismatches and not self.pending


# --------------------------------------------------------------------------- the manifest


def must_fail(manifest: Manifest) -> tuple[ModelEntry, ...]:
    """The rows of the teeth matrix: models that must fail and say what they violate
    and satisfy, in manifest order."""
    return tuple(m for m in manifest.models if m.expect != "success" and m.violates)


_WRAPPERS = ("ChandyLamportToken", "ChandyLamportDiffusing", "ChandyLamportHistory")


def is_chandy_lamport(spec_dir: Path, model: str) -> bool:
    """Does the model extend a module that instantiates ChandyLamport (so that the
    matrix's properties are its properties)?"""
    try:
        text = (spec_dir / f"{model}.tla").read_text(encoding="utf-8")
    except OSError:
        return False
    found = re.search(r"^EXTENDS\s+(.*)$", text, re.M)
    names = {x.strip() for x in found.group(1).split(",")} if found else set()
    return bool(names & {*_WRAPPERS, "ChandyLamport"})


def cells(
    manifest: Manifest,
    models: Sequence[str] = (),
    props: Sequence[str] = (),
) -> list[Cell]:
    """The cells of the named models and properties (all of them by default)."""
    rows = must_fail(manifest)
    known = {m.model for m in rows}
    unknown = [m for m in models if m not in known]
    if unknown:
        raise InputError(
            f"{', '.join(unknown)}: not a model that must fail; the teeth matrix has "
            + ", ".join(sorted(known)),
            code="RL-INPUT-USAGE",
        )
    bad = [p for p in props if p not in PROPERTY_NAMES]
    if bad:
        raise InputError(
            f"unknown property {', '.join(bad)}; the spec's are {', '.join(PROPERTY_NAMES)}",
            code="RL-INPUT-USAGE",
        )
    out: list[Cell] = []
    for row in rows:
        if models and row.model not in models:
            continue
        for p in PROPERTY_NAMES:
            if props and p not in props:
                continue
            if p in row.violates:
                out.append(Cell(row.model, p, Outcome.VIOLATED))
            elif p in row.satisfies:
                out.append(Cell(row.model, p, Outcome.HOLDS))
    return out


def alone(row: ModelEntry, prop: str) -> bool:
    """Does the row violate ``prop`` *alone*: while every premise
    (:data:`~redletter.python_model.teeth.properties.ALONE_PREMISES`) holds?"""
    return (
        prop in row.violates
        and prop not in ALONE_PREMISES
        and all(p in row.satisfies for p in ALONE_PREMISES)
    )


def _cfg_override(spec_dir: Path, model: str) -> tuple[str, str] | None:
    text = (spec_dir / f"{model}.cfg").read_text(encoding="utf-8")
    found = re.search(r"^\s*(\w+)\s*<-\s*\[\s*ChandyLamport\s*\]\s*(\w+)", text, re.M)
    return (found.group(1), found.group(2)) if found else None


def requirements(manifest: Manifest, spec_dir: Path) -> list[str]:
    """What the manifest's teeth fields leave undone, one line each (empty: all done)."""
    problems: list[str] = []
    rows = must_fail(manifest)
    for row in manifest.models:
        if row.expect != "success" and not row.violates and is_chandy_lamport(spec_dir, row.model):
            problems.append(
                f"{row.model}: a Chandy-Lamport model that must fail without bugClass, "
                "violates and satisfies in the manifest"
            )
    for row in rows:
        listed = set(row.violates) | set(row.satisfies)
        missing = [p for p in PROPERTY_NAMES if p not in listed]
        unknown = sorted(listed - set(PROPERTY_NAMES))
        if missing:
            problems.append(f"{row.model}: neither violates nor satisfies {', '.join(missing)}")
        if unknown:
            problems.append(f"{row.model}: lists {', '.join(unknown)}, which the spec lacks")
        if row.bug_class is None or row.bug_class not in bugs.BUGS:
            problems.append(f"{row.model}: bugClass {row.bug_class!r} is not in the registry")
            continue
        bug = bugs.BUGS[row.bug_class]
        if row.model not in bug.models:
            problems.append(f"{row.model}: the registry's {bug.name} does not list it")
        override = _cfg_override(spec_dir, row.model)
        if override != (bug.step, bug.definition):
            problems.append(
                f"{row.model}: its cfg overrides {override}, the registry's {bug.name} "
                f"is {bug.step} <- {bug.definition}"
            )
    for p in PROPERTY_NAMES:
        if p == "TypeOK":
            continue
        if not any(p in row.violates for row in rows):
            problems.append(f"{p}: no model that must fail violates it (it has no teeth)")
    for p in MUST_BE_VIOLATED_ALONE:
        if not any(alone(row, p) for row in rows):
            problems.append(
                f"{p}: no model violates it alone (with {' and '.join(ALONE_PREMISES)} holding)"
            )
    return problems


# --------------------------------------------------------------------------- TLC


_SECTIONS = re.compile(
    r"^(CONSTANTS?|SPECIFICATION|CONSTRAINTS?|INVARIANTS?|PROPERT(?:Y|IES)|INIT|NEXT)\b"
)


def cell_cfg(model_cfg: str, cell: Cell) -> str:
    """The cfg of a cell: the model's cfg without its INVARIANTS and PROPERTIES
    sections, and the cell's one property instead."""
    kept: list[str] = []
    dropping = False
    for line in model_cfg.splitlines():
        head = _SECTIONS.match(line)
        if head is not None:
            dropping = head.group(1).startswith(("INVARIANT", "PROPERT"))
        elif line.startswith("\\*"):
            continue  # the model's own comments speak of its own checks
        if not dropping:
            kept.append(line)
    section = "INVARIANT" if kind_of(cell.prop) == "invariant" else "PROPERTY"
    return (
        f"\\* Teeth cell {cell.name}: model {cell.model} with the one property {cell.prop}\n"
        f"\\* (generated by redletter teeth; the model's constants, override and spec).\n"
        + "\n".join(kept).strip()
        + f"\n{section}\n    {cell.prop}\n"
    )


def prepare_workdir(project: Project) -> Path:
    """A fresh copy of ``spec/``'s modules under ``.cache/teeth/spec``."""
    work = project.work_dir / "teeth" / "spec"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    for f in project.spec_dir.glob("*.tla"):
        shutil.copy2(f, work / f.name)
    return work


def tlc_cell(
    project: Project,
    entry: ModelEntry,
    cell: Cell,
    work: Path,
    *,
    jar: Path,
    workers: int = 1,
) -> CellResult:
    """Run one cell in TLC (``work``: from :func:`prepare_workdir`)."""
    (work / f"{cell.name}.tla").write_text(
        f"---- MODULE {cell.name} ----\n"
        f"(* Teeth cell: {cell.model} checked for {cell.prop} alone. *)\n"
        f"EXTENDS {cell.model}\n====\n",
        encoding="utf-8",
    )
    model_cfg = (project.spec_dir / f"{cell.model}.cfg").read_text(encoding="utf-8")
    (work / f"{cell.name}.cfg").write_text(cell_cfg(model_cfg, cell), encoding="utf-8")
    r = run_tlc(
        cell.name,
        spec_dir=work,
        jar=jar,
        cache_dir=project.work_dir,
        check_deadlock=entry.check_deadlock,
        workers=workers,
        sany=False,
        small=True,  # the must-fail models are small: the JVM's quick compiler only
    )
    if r.kind is ResultKind.SUCCESS:
        outcome, detail = Outcome.HOLDS, f"{r.distinct:,} states" if r.distinct else ""
    elif r.kind is ResultKind.SAFETY_FAILURE and r.violated == cell.prop:
        outcome, detail = Outcome.VIOLATED, f"{cell.prop} is violated"
    elif r.kind is ResultKind.LIVENESS_FAILURE and kind_of(cell.prop) == "temporal":
        outcome, detail = Outcome.VIOLATED, "Temporal properties were violated"
    else:
        first = (r.error or "").splitlines()[:1]
        outcome, detail = (
            Outcome.ERROR,
            f"TLC said {r.describe()}" + (f": {first[0]}" if first else ""),
        )
    return CellResult(cell, "tlc", outcome, detail, r.seconds, r.log_path)


# --------------------------------------------------------------------------- Python


def python_liveness(model: Any) -> tuple[Outcome, str]:
    """The Python model's verdict on the temporal properties of ``model`` (a
    :class:`~redletter.python_model.config.ModelConfig` whose ``liveness`` lists
    them), through the one function of the liveness check
    (:func:`redletter.python_model.liveness.full_check`, fair-SCC analysis under the
    SPECIFICATION's fairness, cross-checked against TLC by ``make check``)."""
    from redletter.python_model.liveness import full_check

    explored, live = full_check(model)
    if explored.violation is not None:
        return Outcome.ERROR, f"a safety check fired first: {explored.violation.describe()}"
    if live is None:
        return Outcome.ERROR, "the liveness check returned no verdict"
    if live.violated:
        return Outcome.VIOLATED, "Temporal properties were violated"
    return Outcome.HOLDS, ""


def python_cell(spec_dir: Path, cell: Cell) -> CellResult:
    """Run one cell in the Python model."""
    from redletter.python_model.explore import explore

    start = time.perf_counter()
    cfg = load_model(cell.model, spec_dir)
    kind = kind_of(cell.prop)
    one = dataclasses.replace(
        cfg,
        invariants=(cell.prop,) if kind == "invariant" else (),
        properties=(cell.prop,) if kind == "action" else (),
        liveness=(cell.prop,) if kind == "temporal" else (),
    )
    if kind == "temporal":
        outcome, detail = python_liveness(one)
    else:
        r = explore(one)
        if r.violation is None:
            outcome, detail = Outcome.HOLDS, f"{r.distinct:,} states"
        elif r.violation.name == cell.prop:
            outcome, detail = Outcome.VIOLATED, r.violation.describe()
        else:
            outcome, detail = Outcome.ERROR, f"unexpected: {r.violation.describe()}"
    return CellResult(cell, "python", outcome, detail, time.perf_counter() - start)


# --------------------------------------------------------------------------- the run


def check_teeth(
    project: Project,
    manifest: Manifest,
    *,
    models: Sequence[str] = (),
    props: Sequence[str] = (),
    engines: Iterable[str] = ENGINES,
    jobs: int = 1,
    workers: int = 1,
    on_result: Callable[[CellResult], None] | None = None,
) -> MatrixRun:
    """Run every cell of the selection in every engine; ``jobs`` cells at a time in
    TLC (each with ``workers`` TLC workers); Python cells run one after another."""
    chosen = tuple(e for e in ENGINES if e in set(engines))
    unknown = set(engines) - set(ENGINES)
    if unknown:
        raise InputError(
            f"unknown engine {', '.join(sorted(unknown))}; expected tlc or python",
            code="RL-INPUT-USAGE",
        )
    todo = cells(manifest, models, props)
    rows = {m.model: m for m in manifest.models}
    run = MatrixRun(chosen)
    start = time.perf_counter()

    def done(r: CellResult) -> None:
        run.results.append(r)
        if on_result is not None:
            on_result(r)

    if "python" in chosen:
        for cell in todo:
            done(python_cell(project.spec_dir, cell))
    if "tlc" in chosen and todo:
        require_java()
        jar = require_tlc_jar(project.cache_dir)
        work = prepare_workdir(project)

        def one(cell: Cell) -> CellResult:
            return tlc_cell(project, rows[cell.model], cell, work, jar=jar, workers=workers)

        if jobs <= 1:
            for cell in todo:
                done(one(cell))
        else:
            with ThreadPoolExecutor(max_workers=jobs) as pool:
                for r in pool.map(one, todo):
                    done(r)
    run.seconds = time.perf_counter() - start
    return run


# --------------------------------------------------------------------------- the record

#: Where ``make check-teeth`` keeps the outcome of its last full run (docs/teeth.md
#: is generated from it and from the manifest).
RECORD_NAME = "teeth-run.json"


def run_record(run: MatrixRun, manifest: Manifest, *, jobs: int) -> dict[str, Any]:
    """The outcome of a full run of the matrix, as ``docs/teeth-run.json`` keeps it:
    every cell with what the manifest expects and what each engine said."""
    by_cell: dict[tuple[str, str], dict[str, str]] = {}
    for r in run.results:
        by_cell.setdefault((r.cell.model, r.cell.prop), {})[r.engine] = r.outcome.value
    seconds = {e: sum(r.seconds for r in run.of(e)) for e in run.engines}
    return {
        "generatedBy": "redletter teeth check --write-docs (make check-teeth)",
        "engines": {
            e: {
                "cells": len(run.of(e)),
                "cpuSeconds": round(seconds[e]),
                **({"jobs": jobs} if e == "tlc" else {}),
            }
            for e in run.engines
        },
        "wallSeconds": round(run.seconds),
        "cells": [
            {
                "model": c.model,
                "property": c.prop,
                "expected": c.expected.value,
                **by_cell.get((c.model, c.prop), {}),
            }
            for c in cells(manifest)
        ],
    }


def merge_record(record: dict[str, Any], run: MatrixRun) -> dict[str, Any]:
    """The record of a full run with some cells run again on their own (a cell whose
    run broke, say): their new outcomes replace the old, and ``reruns`` says which
    cells were rerun, in which engine, and what the full run had said."""
    out = json.loads(json.dumps(record))
    by_cell = {(c["model"], c["property"]): c for c in out["cells"]}
    reruns: list[dict[str, str]] = out.setdefault("reruns", [])
    recorded = {m for m, _ in by_cell}
    ran: dict[str, set[str]] = {}
    for r in run.results:
        ran.setdefault(r.cell.model, set()).add(r.cell.prop)
    added = {m: m not in recorded and props >= set(PROPERTY_NAMES) for m, props in ran.items()}
    for r in run.results:
        c = by_cell.get((r.cell.model, r.cell.prop))
        if c is None and added.get(r.cell.model, False):
            # a model that must fail added to the manifest since the full run: its
            # cells join the record when the run covers every one of them
            c = {"model": r.cell.model, "property": r.cell.prop, "expected": r.cell.expected.value}
            out["cells"].append(c)
            by_cell[(r.cell.model, r.cell.prop)] = c
        if c is None:
            raise InputError(
                f"{r.cell.model} {r.cell.prop}: not a cell of the recorded run; run the "
                "whole matrix (make check-teeth), or every cell of a model added since",
                code="RL-INPUT-USAGE",
            )
        reruns.append(
            {
                "model": r.cell.model,
                "property": r.cell.prop,
                "engine": r.engine,
                "before": c.get(r.engine, "nothing"),
                "after": r.outcome.value,
            }
        )
        c[r.engine] = r.outcome.value
    return dict(out)


def load_record(path: Path) -> dict[str, Any] | None:
    """The record of the last full run, or ``None`` when there is none."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, json.JSONDecodeError) as e:
        raise InputError(
            f"{path}: cannot read the teeth record ({e}); rerun make check-teeth",
            code="RL-INPUT-USAGE",
        ) from e
    if not isinstance(data, dict):
        raise InputError(
            f"{path}: the teeth record is not a JSON object; rerun make check-teeth",
            code="RL-INPUT-USAGE",
        )
    return data


def record_problems(record: dict[str, Any] | None, manifest: Manifest) -> list[str]:
    """Where the record of the last full run no longer describes the manifest's
    matrix (a cell added, removed or expected otherwise since), one line each."""
    if record is None:
        return ["there is no record of a full run: run make check-teeth"]
    want = {(c.model, c.prop): c.expected.value for c in cells(manifest)}
    got = {(c["model"], c["property"]): c["expected"] for c in record.get("cells", [])}
    problems = [
        f"{m} {p}: the manifest expects {want[(m, p)]}, the last run checked "
        + (f"for {got[(m, p)]}" if (m, p) in got else "nothing")
        for (m, p) in want
        if got.get((m, p)) != want[(m, p)]
    ]
    problems += [
        f"{m} {p}: the last run checked a cell the manifest no longer has"
        for m, p in got
        if (m, p) not in want
    ]
    engines = record.get("engines", {})
    problems += [f"the last run did not use {e}" for e in ENGINES if e not in engines]
    for c in record.get("cells", []):
        missing = [e for e in ENGINES if e in engines and e not in c]
        if missing and (c["model"], c["property"]) in want:
            problems.append(
                f"{c['model']} {c['property']}: the last run did not check it in "
                + " or ".join(missing)
            )
    return problems
