"""Model definitions, read from the same files TLC reads (one source of truth).

:func:`load_model` reads ``spec/<name>.tla`` (the MC module: its ``MCxxx == <literal>``
definitions and the module it EXTENDS, e.g. ``ChandyLamportToken``, which names the
application) and ``spec/<name>.cfg`` (the ``<-`` bindings, the overridden step as
``Step <- [ChandyLamport] Mutant``, SPECIFICATION, CONSTRAINT, INVARIANTS, PROPERTIES)
and returns a
:class:`ModelConfig`: the constants as TLA+ values, the index structures the Python
model works with (machines and buffers as small integers, colours as bitmasks), the
application (:mod:`redletter.python_model.apps`) and the overridable steps (the mutants,
:mod:`redletter.python_model.mutants`) that the cfg selects.

The MC definitions are literals as TLC prints values, plus two TLA+ operators at the
top level that :func:`redletter.python_model.values.parse_value` only reads inside parentheses:
``k :> v`` and ``f @@ g`` (``f`` wins on a shared key, as in TLC's ``@@``).  Those are
split off here, so a definition may be ``1 :> {"p1"}`` or ``(1 :> {"p1"}) @@ (2 :> {"p2"})``
and span several lines.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from redletter.errors import InputError, did_you_mean, some_of
from redletter.python_model.apps import App, make_app
from redletter.python_model.mutants import OVERRIDES, Steps, make_steps
from redletter.python_model.values import Fcn, Record, Value, apply_fn, fcn, parse_value
from redletter.untrusted import decode_utf8

__all__ = [
    "APP_MODULES",
    "INVARIANT_NAMES",
    "OVERRIDES",
    "PROPERTY_NAMES",
    "VARIANT_OVERRIDES",
    "VARIANT_WRAPPERS",
    "ModelConfig",
    "available_models",
    "load_model",
    "parse_definition",
]

#: The application modules a model may extend, and the constants each declares.
APP_MODULES: Mapping[str, tuple[str, ...]] = {
    "TokenApp": ("Tokens",),
    "DiffusingApp": ("Root", "Budget"),
    "HistoryApp": ("Script", "StartAfter"),
}

#: The module per application that instantiates ChandyLamport with its App* operators
#: bound to the application's: a model EXTENDS one of these.  (The older form, EXTENDS
#: ChandyLamport and the application with the App* bindings in the cfg, is still read:
#: trace files and generated models carry it.)
APP_WRAPPERS: Mapping[str, str] = {
    "ChandyLamportToken": "TokenApp",
    "ChandyLamportDiffusing": "DiffusingApp",
    "ChandyLamportHistory": "HistoryApp",
}

#: The wrappers of the variants that the Python model mirrors on ChandyLamport's model
#: (same constants, same application interface): wrapper -> (application, the spec
#: module whose steps its models override).
VARIANT_WRAPPERS: Mapping[str, tuple[str, str]] = {
    "LazyChandyLamportToken": ("TokenApp", "LazyChandyLamport"),
}

#: The overridable definitions of each variant spec module and every definition the
#: Python model mirrors for each (the first is the spec's own).
VARIANT_OVERRIDES: Mapping[str, Mapping[str, tuple[str, ...]]] = {
    "LazyChandyLamport": {
        "MaySend": ("MaySend", "SendAnyway"),
        "RedLetterFairness": ("RedLetterFairness", "NoRedLetterFairness"),
    },
}

#: The constants every model binds to an MC definition (besides its app's).
CORE_CONSTANTS: tuple[str, ...] = (
    "Proc",
    "Chan",
    "Snap",
    "Starters",
    "Sequential",
    "MaxAppActions",
)

#: App* constant operators and the application operator each must be bound to.
APP_BINDINGS: Mapping[str, str] = {
    "AppLocalStates": "LocalStates",
    "AppLocalInit": "LocalInit",
    "AppSendable": "Sendable",
    "AppAfterSend": "AfterSend",
    "AppEvents": "Events",
    "AppAfterEvent": "AfterEvent",
    "AppCanReceive": "CanReceive",
    "AppAfterReceive": "AfterReceive",
    "AppMayStart": "MayStart",
    "AppStable": "Stable",
    "AppInv": "Inv",
}

# OVERRIDES (from mutants.py): the overridable steps of ChandyLamport.tla and every
# definition the Python model mirrors for each (the first is the spec's own, the others
# come from the registry of bug classes, python_model/bugs.py).

INVARIANT_NAMES: tuple[str, ...] = (
    "TypeOK",
    "RedLetterInvariant",
    "OneRedLetterPerBuffer",
    "Lemma0",
    "Lemma1",
    "Lemma0ImpliesLemma1",
    "StableLemma0",
    "StableLemma1",
    "StableDetection",
    "SnapshotSatisfiesAppInv",
)
#: Properties the explorer checks (safety) and those it knows but leaves to TLC (liveness).
PROPERTY_NAMES: tuple[str, ...] = ("ShadowLemma0", "NoInterference")
LIVENESS_NAMES: tuple[str, ...] = ("SnapshotsComplete",)
SPECIFICATIONS: tuple[str, ...] = ("Spec", "FairSpec", "ProgressSpec")
CONSTRAINTS: tuple[str, ...] = ("AppActionBound",)


@dataclass(frozen=True, eq=False)
class ModelConfig:
    """One model: its constants, its indices, its application and its steps.

    Machines are indices into :attr:`procs` (sorted by name), buffers indices into
    :attr:`chans` (sorted), snapshots indices into :attr:`snaps` (sorted ids).
    """

    name: str
    tla_path: Path
    cfg_path: Path
    app_module: str
    definitions: Mapping[str, Value]  #: the MC module's literal definitions used
    constants: Mapping[str, Value]  #: TLA+ constant name -> value
    overrides: Mapping[str, str]  #: overridable operator -> the definition bound to it
    specification: str
    constraints: tuple[str, ...]
    invariants: tuple[str, ...]
    properties: tuple[str, ...]  #: safety properties the explorer checks, cfg order
    liveness: tuple[str, ...]  #: temporal properties left to TLC
    procs: tuple[str, ...]
    chans: tuple[tuple[str, str], ...]
    snaps: tuple[int, ...]
    starters: tuple[int, ...]  #: per snapshot index: bitmask of starters
    sequential: bool
    max_app_actions: int
    proc_index: Mapping[str, int] = field(repr=False)
    chan_index: Mapping[tuple[str, str], int] = field(repr=False)
    snap_index: Mapping[int, int] = field(repr=False)
    chan_src: tuple[int, ...] = field(repr=False)
    chan_dst: tuple[int, ...] = field(repr=False)
    in_mask: tuple[int, ...] = field(repr=False)  #: per machine: bitmask of its input buffers
    out_mask: tuple[int, ...] = field(repr=False)  #: per machine: bitmask of its output buffers
    all_chans: int = field(repr=False)  #: bitmask of every buffer
    app: App = field(repr=False)
    steps: Steps = field(repr=False)
    #: the spec module the actions come from: ChandyLamport, or a variant of
    #: :data:`VARIANT_WRAPPERS` (whose overridable definitions are in :attr:`overrides`)
    spec_module: str = "ChandyLamport"


def available_models(spec_dir: Path) -> list[str]:
    """The models of ``spec_dir``: every ``MC*.tla`` with an ``.cfg`` beside it."""
    return sorted(p.stem for p in spec_dir.glob("MC*.tla") if p.with_suffix(".cfg").is_file())


# --------------------------------------------------------------------------- values


def _split_top(text: str, sep: str) -> list[str]:
    """Split ``text`` on ``sep`` outside strings and brackets."""
    parts: list[str] = []
    depth = 0
    start = 0
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            continue
        two = text[i : i + 2]
        if two == "<<":
            depth += 1
            i += 2
            continue
        if two == ">>":
            depth -= 1
            i += 2
            continue
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0 and text.startswith(sep, i):
            parts.append(text[start:i])
            i += len(sep)
            start = i
            continue
        i += 1
    parts.append(text[start:])
    return parts


def _pairs(v: Value, *, path: str | None, line: int | None) -> list[tuple[Value, Value]]:
    if isinstance(v, tuple):
        return [(i + 1, x) for i, x in enumerate(v)]
    if isinstance(v, Record):
        return [(k, x) for k, x in v.fields]
    if isinstance(v, Fcn):
        return list(v.pairs)
    raise InputError(
        "an operand of @@ is not a function", path=path, line=line, code="RL-INPUT-MODEL"
    )


def parse_definition(text: str, *, path: str | None = None, line: int | None = None) -> Value:
    """Parse the right-hand side of an MC definition: a TLC value, or ``k :> v`` and
    ``f @@ g`` combinations of them at the top level."""
    pieces = _split_top(text, "@@")
    if len(pieces) == 1 and len(_split_top(text, ":>")) == 1:
        return parse_value(text, path=path, line=line)
    merged: dict[Value, Value] = {}
    for piece in pieces:
        kv = _split_top(piece, ":>")
        if len(kv) == 2:
            pairs = [
                (parse_value(kv[0], path=path, line=line), parse_value(kv[1], path=path, line=line))
            ]
        elif len(kv) == 1:
            pairs = _pairs(parse_value(piece, path=path, line=line), path=path, line=line)
        else:
            raise InputError(
                "expected k :> v, found more than one ':>'",
                path=path,
                line=line,
                code="RL-INPUT-MODEL",
            )
        for k, v in pairs:
            merged.setdefault(k, v)  # f @@ g: f's value wins
    return fcn(merged.items())


# --------------------------------------------------------------------------- files

_BLOCK_COMMENT = re.compile(r"\(\*.*?\*\)", re.DOTALL)
_DEF_START = re.compile(r"^([A-Za-z_]\w*)\s*(\([^)]*\))?\s*==(.*)$")


def _strip_line_comment(line: str) -> str:
    in_str = False
    i = 0
    while i < len(line):
        ch = line[i]
        if in_str:
            if ch == "\\":
                i += 2
                continue
            if ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif line.startswith("\\*", i):
            return line[:i]
        i += 1
    return line


@dataclass(frozen=True)
class _Def:
    text: str
    line: int
    params: bool


def _blank_comments(text: str) -> str:
    # keep line numbers: replace each block comment by as many newlines as it spans
    return _BLOCK_COMMENT.sub(lambda m: "\n" * m.group().count("\n"), text)


def _read_text(path: Path) -> str:
    """A model file's text; not UTF-8 is an InputError at the line of the bad byte."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(
            f"cannot read the file: {exc.strerror}", path=str(path), code="RL-INPUT-MODEL"
        ) from None
    return decode_utf8(data, path=str(path), code="RL-INPUT-MODEL")


def _read_tla(path: Path) -> tuple[list[str], dict[str, _Def], int]:
    """The modules it EXTENDS, its definitions, and the line of its EXTENDS (1 if none)."""
    text = _blank_comments(_read_text(path))
    extends: list[str] = []
    extends_line = 1
    defs: dict[str, _Def] = {}
    current: tuple[str, int, bool, list[str]] | None = None

    def close() -> None:
        if current is not None:
            name, line, params, body = current
            defs[name] = _Def(" ".join(body).strip(), line, params)

    for lineno, raw in enumerate(text.split("\n"), start=1):
        line = _strip_line_comment(raw)
        if line.startswith("===="):
            close()
            current = None
            break
        if line.startswith("----") or ("MODULE" in line and line.lstrip().startswith("-")):
            continue
        if line.startswith("EXTENDS"):
            close()
            current = None
            extends = [x.strip() for x in line[len("EXTENDS") :].split(",") if x.strip()]
            extends_line = lineno
            continue
        m = _DEF_START.match(line)
        if m is not None:
            close()
            current = (m.group(1), lineno, m.group(2) is not None, [m.group(3)])
            continue
        if current is not None:
            if line[:1].strip() and not line[:1].isspace():
                close()
                current = None
            else:
                current[3].append(line)
    close()
    return extends, defs, extends_line


_SECTION_WORDS = {
    "CONSTANT": "CONSTANTS",
    "CONSTANTS": "CONSTANTS",
    "SPECIFICATION": "SPECIFICATION",
    "CONSTRAINT": "CONSTRAINT",
    "CONSTRAINTS": "CONSTRAINT",
    "INVARIANT": "INVARIANTS",
    "INVARIANTS": "INVARIANTS",
    "PROPERTY": "PROPERTIES",
    "PROPERTIES": "PROPERTIES",
}


_MODULE_SCOPE = re.compile(r"^\[\s*(\w+)\s*\]\s*(\S+)$")


@dataclass
class _Cfg:
    #: ``(lhs, module, rhs, line)``: ``lhs <- rhs``, or ``lhs <- [module] rhs`` (TLC's
    #: override of ``lhs`` as defined in ``module``)
    bindings: list[tuple[str, str | None, str, int]] = field(default_factory=list)
    sections: dict[str, list[tuple[str, int]]] = field(default_factory=dict)


def _read_cfg(path: Path) -> _Cfg:
    cfg = _Cfg()
    section: str | None = None
    for lineno, raw in enumerate(_read_text(path).split("\n"), start=1):
        words = _strip_line_comment(raw).split()
        if not words:
            continue
        if words[0] in _SECTION_WORDS:
            section = _SECTION_WORDS[words[0]]
            cfg.sections.setdefault(section, [])
            words = words[1:]
            if not words:
                continue
        if section is None:
            raise InputError(
                f"expected a section keyword (CONSTANTS, SPECIFICATION, ...), found '{words[0]}'",
                path=str(path),
                line=lineno,
                code="RL-INPUT-MODEL",
            )
        if section == "CONSTANTS":
            text = " ".join(words)
            if "<-" not in text:
                raise InputError(
                    f"expected 'Name <- Definition', found '{text}'",
                    path=str(path),
                    line=lineno,
                    code="RL-INPUT-MODEL",
                )
            lhs, rhs = [x.strip() for x in text.split("<-", 1)]
            scoped = _MODULE_SCOPE.match(rhs)
            module = scoped.group(1) if scoped else None
            cfg.bindings.append((lhs, module, scoped.group(2) if scoped else rhs, lineno))
        else:
            cfg.sections[section].extend((w, lineno) for w in words)
    return cfg


_MODEL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,199}")


def unknown_model(name: str, spec_dir: Path) -> str:
    """The message for a model ``name`` that ``spec_dir`` does not hold: the closest
    name when one is close (a misspelling), and every model there."""
    models = available_models(spec_dir)
    listed = some_of(models, name)
    guess = did_you_mean(name, models)
    guess = f"; {guess}" if guess else ""
    return f"unknown model {name!r} in {spec_dir}{guess} (available: {listed})"


def load_model(name: str, spec_dir: Path) -> ModelConfig:
    """Read model ``name`` (``spec_dir/<name>.tla`` and ``.cfg``) into a :class:`ModelConfig`.

    Raises :class:`InputError` for an unknown model (listing the available ones), an
    unknown binding or override (naming the cfg file and line), or a definition that
    is not a literal value.
    """
    if not _MODEL_NAME.fullmatch(name):
        raise InputError(
            f"{name!r} is not a model name: a model is named by its module (letters, digits"
            " and _), never by a path",
            code="RL-INPUT-MODEL",
        )
    tla_path = spec_dir / f"{name}.tla"
    cfg_path = spec_dir / f"{name}.cfg"
    if not (tla_path.is_file() and cfg_path.is_file()):
        raise InputError(unknown_model(name, spec_dir), code="RL-INPUT-MODEL")
    extends, defs, extends_line = _read_tla(tla_path)
    wrappers = [m for m in extends if m in APP_WRAPPERS or m in VARIANT_WRAPPERS]
    apps = [m for m in extends if m in APP_MODULES]
    spec_module = "ChandyLamport"
    table: Mapping[str, tuple[str, ...]] = OVERRIDES
    if len(wrappers) == 1 and not apps and "ChandyLamport" not in extends:
        wrapper: str | None = wrappers[0]
        if wrappers[0] in VARIANT_WRAPPERS:
            app_module, spec_module = VARIANT_WRAPPERS[wrappers[0]]
            table = VARIANT_OVERRIDES[spec_module]
        else:
            app_module = APP_WRAPPERS[wrappers[0]]
    elif not wrappers and "ChandyLamport" in extends and len(apps) == 1:
        wrapper = None
        app_module = apps[0]
    else:
        raise InputError(
            "the model must EXTEND exactly one of "
            + ", ".join(APP_WRAPPERS)
            + " (or ChandyLamport and exactly one of "
            + ", ".join(APP_MODULES)
            + ")",
            path=str(tla_path),
            line=extends_line,
            code="RL-INPUT-MODEL",
        )
    cfg = _read_cfg(cfg_path)
    wanted_constants = set(CORE_CONSTANTS) | set(APP_MODULES[app_module])
    definitions: dict[str, Value] = {}
    constants: dict[str, Value] = {}
    #: where each constant's value is written: the line of its definition in the .tla
    const_line: dict[str, int] = {}
    overrides: dict[str, str] = {op: names[0] for op, names in table.items()}
    for lhs, module, rhs, lineno in cfg.bindings:
        if module is not None and (lhs not in table or module != spec_module):
            raise InputError(
                f"unknown binding {lhs} <- [{module}] {rhs}: only the steps of {spec_module} "
                "(" + ", ".join(table) + ") are overridden in a module",
                path=str(cfg_path),
                line=lineno,
                code="RL-INPUT-MODEL",
            )
        if lhs in wanted_constants:
            d = defs.get(rhs)
            if d is None or d.params:
                raise InputError(
                    f"{lhs} is bound to {rhs}, which {tla_path.name} does not define as a value",
                    path=str(cfg_path),
                    line=lineno,
                    code="RL-INPUT-MODEL",
                )
            value = parse_definition(d.text, path=str(tla_path), line=d.line)
            definitions[rhs] = value
            constants[lhs] = value
            const_line[lhs] = d.line
        elif lhs in APP_BINDINGS:
            if wrapper is not None:
                raise InputError(
                    f"{lhs} is bound by {wrapper}, which {tla_path.name} extends; remove this line",
                    path=str(cfg_path),
                    line=lineno,
                    code="RL-INPUT-MODEL",
                )
            if rhs != APP_BINDINGS[lhs]:
                raise InputError(
                    f"{lhs} must be bound to {app_module}'s {APP_BINDINGS[lhs]}, not {rhs}",
                    path=str(cfg_path),
                    line=lineno,
                    code="RL-INPUT-MODEL",
                )
        elif lhs in table:
            if rhs not in table[lhs]:
                raise InputError(
                    f"unknown override {lhs} <- {rhs}: the Python model mirrors "
                    + ", ".join(table[lhs])
                    + " (a new bug class goes in the registry, python_model/bugs.py)",
                    path=str(cfg_path),
                    line=lineno,
                    code="RL-INPUT-MODEL",
                )
            if rhs != lhs and rhs not in defs:
                raise InputError(
                    f"{lhs} is bound to {rhs}, which {tla_path.name} does not define",
                    path=str(cfg_path),
                    line=lineno,
                    code="RL-INPUT-MODEL",
                )
            if wrapper is not None and module is None:
                raise InputError(
                    f"{lhs} <- {rhs} overrides only {wrapper}'s copy of {lhs}, which the "
                    f"actions do not use: write {lhs} <- [{spec_module}] {rhs}",
                    path=str(cfg_path),
                    line=lineno,
                    code="RL-INPUT-MODEL",
                )
            overrides[lhs] = rhs
        else:
            raise InputError(
                f"unknown binding {lhs} <- {rhs}",
                path=str(cfg_path),
                line=lineno,
                code="RL-INPUT-MODEL",
            )
    missing = sorted(wanted_constants - constants.keys())
    if missing:
        at = cfg.sections.get("CONSTANTS", [("", 1)])
        raise InputError(
            "constants not bound: " + ", ".join(missing),
            path=str(cfg_path),
            line=at[0][1] if at else 1,
            code="RL-INPUT-MODEL",
        )

    def names(section: str, known: tuple[str, ...], what: str) -> tuple[str, ...]:
        out: list[str] = []
        for word, lineno in cfg.sections.get(section, []):
            if word not in known:
                raise InputError(
                    f"unknown {what} {word} (the Python model knows " + ", ".join(known) + ")",
                    path=str(cfg_path),
                    line=lineno,
                    code="RL-INPUT-MODEL",
                )
            out.append(word)
        return tuple(out)

    spec = names("SPECIFICATION", SPECIFICATIONS, "specification")
    if len(spec) != 1:
        at = cfg.sections.get("SPECIFICATION", [])
        raise InputError(
            f"expected exactly one SPECIFICATION, found {len(spec)}",
            path=str(cfg_path),
            line=at[1][1] if len(at) > 1 else at[0][1] if at else 1,
            code="RL-INPUT-MODEL",
        )
    constraints = names("CONSTRAINT", CONSTRAINTS, "constraint")
    invariants = names("INVARIANTS", INVARIANT_NAMES, "invariant")
    all_props = names("PROPERTIES", PROPERTY_NAMES + LIVENESS_NAMES, "property")

    def bad(what: str) -> InputError:
        """An error about a constant's value, at the line that defines it."""
        named = next((c for c in const_line if re.match(rf"{c}\b", what)), None)
        line = const_line[named] if named is not None else 1
        return InputError(what, path=str(tla_path), line=line, code="RL-INPUT-MODEL")

    proc_set = constants["Proc"]
    chan_set = constants["Chan"]
    snap_set = constants["Snap"]
    if not (isinstance(proc_set, frozenset) and all(isinstance(p, str) for p in proc_set)):
        raise bad("Proc must be a set of strings")
    procs = tuple(sorted(str(p) for p in proc_set))
    if not (
        isinstance(chan_set, frozenset)
        and all(
            isinstance(c, tuple) and len(c) == 2 and c[0] in proc_set and c[1] in proc_set
            for c in chan_set
        )
    ):
        raise bad("Chan must be a set of pairs of machines")
    chans: tuple[tuple[str, str], ...] = tuple(
        sorted((str(c[0]), str(c[1])) for c in chan_set if isinstance(c, tuple))
    )
    if not (isinstance(snap_set, frozenset) and all(type(k) is int and k >= 1 for k in snap_set)):
        raise bad("Snap must be a set of positive integers")
    snaps = tuple(sorted(int(k) for k in snap_set if type(k) is int))
    proc_index = {p: i for i, p in enumerate(procs)}
    chan_index = {c: i for i, c in enumerate(chans)}
    snap_index = {k: i for i, k in enumerate(snaps)}
    starters: list[int] = []
    for k in snaps:
        try:
            st = apply_fn(constants["Starters"], k)
        except KeyError:
            raise bad(f"Starters has no entry for snapshot {k}") from None
        if not (isinstance(st, frozenset) and all(p in proc_index for p in st)):
            raise bad(f"Starters[{k}] must be a set of machines")
        starters.append(sum(1 << proc_index[str(p)] for p in st))
    seq = constants["Sequential"]
    maxa = constants["MaxAppActions"]
    if type(maxa) is not int:
        raise bad("MaxAppActions must be an integer")
    chan_src = tuple(proc_index[c[0]] for c in chans)
    chan_dst = tuple(proc_index[c[1]] for c in chans)
    in_mask = tuple(
        sum(1 << i for i, d in enumerate(chan_dst) if d == p) for p in range(len(procs))
    )
    out_mask = tuple(
        sum(1 << i for i, s in enumerate(chan_src) if s == p) for p in range(len(procs))
    )
    try:
        app = make_app(app_module, constants, procs, chans, snaps, path=str(tla_path))
    except InputError as exc:
        if exc.line is not None:
            raise
        what = exc.message.removeprefix(f"{tla_path}: ")
        raise bad(what) from None
    # the steps of ChandyLamport.tla; a variant's own overridable operators (the lazy
    # variant's MaySend, say) are read by its engine from ``overrides``
    steps = make_steps({op: d for op, d in overrides.items() if op in OVERRIDES}, snaps)
    return ModelConfig(
        name=name,
        tla_path=tla_path,
        cfg_path=cfg_path,
        app_module=app_module,
        definitions=definitions,
        constants=constants,
        overrides=overrides,
        specification=spec[0],
        constraints=constraints,
        invariants=invariants,
        properties=tuple(p for p in all_props if p in PROPERTY_NAMES),
        liveness=tuple(p for p in all_props if p in LIVENESS_NAMES),
        procs=procs,
        chans=chans,
        snaps=snaps,
        starters=tuple(starters),
        sequential=bool(getattr(seq, "value", False)),
        max_app_actions=maxa,
        proc_index=proc_index,
        chan_index=chan_index,
        snap_index=snap_index,
        chan_src=chan_src,
        chan_dst=chan_dst,
        in_mask=in_mask,
        out_mask=out_mask,
        all_chans=(1 << len(chans)) - 1,
        app=app,
        steps=steps,
        spec_module=spec_module,
    )
