"""Reading a variant's model (``MC*.tla`` and ``.cfg``) for its Python mirror.

The variants whose constants are not Chandy-Lamport's (the observer's ``Observer``
and ``MaxSends``, the barrier snapshots' dataflow) are read here with the same
readers as :func:`redletter.python_model.config.load_model` (the same files TLC reads,
one source of truth): :func:`load_variant` checks that the model extends the
variant's wrapper, binds exactly the constants the variant declares to literal MC
definitions, overrides only the variant's overridable steps (``Step <- [Module]
Definition``), and names only the specifications, constraints, invariants and
properties the mirror evaluates -- each refusal names the file and the line.  The
variant's engine builds its index structures from the :class:`VariantModel`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from redletter.errors import InputError
from redletter.python_model.config import (
    _MODEL_NAME,
    _read_cfg,
    _read_tla,
    parse_definition,
    unknown_model,
)
from redletter.python_model.values import Value

__all__ = ["VariantModel", "VariantSpec", "load_variant"]


@dataclass(frozen=True)
class VariantSpec:
    """What a variant's mirror reads of its models."""

    wrapper: str  #: the module a model EXTENDS (``ObserverSnapshotToken``)
    module: str  #: the spec module whose steps a cfg overrides (``ObserverSnapshot``)
    constants: tuple[str, ...]  #: the constants a model binds to MC definitions
    overrides: Mapping[str, tuple[str, ...]]  #: step -> the definitions mirrored for it
    specifications: tuple[str, ...]
    constraints: tuple[str, ...]
    invariants: tuple[str, ...]
    properties: tuple[str, ...]  #: action properties (safety) the mirror evaluates
    liveness: tuple[str, ...]  #: temporal properties (the liveness check reads them)


@dataclass(frozen=True)
class VariantModel:
    """One model of a variant, as its cfg and MC module give it."""

    name: str
    tla_path: Path
    cfg_path: Path
    constants: Mapping[str, Value]
    const_line: Mapping[str, int]  #: where each constant's value is written in the .tla
    overrides: Mapping[str, str]  #: step -> the definition bound to it
    specification: str
    constraints: tuple[str, ...]
    invariants: tuple[str, ...]
    properties: tuple[str, ...]
    liveness: tuple[str, ...]

    def bad(self, constant: str, what: str) -> InputError:
        """An error about a constant's value, at the line that defines it."""
        return InputError(
            what,
            path=str(self.tla_path),
            line=self.const_line.get(constant, 1),
            code="RL-INPUT-MODEL",
        )


def load_variant(name: str, spec_dir: Path, spec: VariantSpec) -> VariantModel:
    """Read model ``name`` of ``spec_dir`` as a model of the variant ``spec``."""
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
    if extends != [spec.wrapper]:
        raise InputError(
            f"a model of {spec.module} must EXTEND {spec.wrapper} only",
            path=str(tla_path),
            line=extends_line,
            code="RL-INPUT-MODEL",
        )
    cfg = _read_cfg(cfg_path)
    constants: dict[str, Value] = {}
    const_line: dict[str, int] = {}
    overrides = {op: names[0] for op, names in spec.overrides.items()}
    for lhs, module, rhs, lineno in cfg.bindings:

        def refuse(what: str, lineno: int = lineno) -> InputError:
            return InputError(what, path=str(cfg_path), line=lineno, code="RL-INPUT-MODEL")

        if lhs in spec.overrides:
            if module != spec.module:
                raise refuse(
                    f"{lhs} <- {rhs} must name the module its actions use: write"
                    f" {lhs} <- [{spec.module}] {rhs}"
                )
            if rhs not in spec.overrides[lhs]:
                raise refuse(
                    f"unknown override {lhs} <- {rhs}: the Python model mirrors "
                    + ", ".join(spec.overrides[lhs])
                )
            if rhs != lhs and rhs not in defs:
                raise refuse(f"{lhs} is bound to {rhs}, which {tla_path.name} does not define")
            overrides[lhs] = rhs
        elif module is not None:
            raise refuse(
                f"unknown binding {lhs} <- [{module}] {rhs}: only the steps of {spec.module}"
                " (" + ", ".join(spec.overrides) + ") are overridden in a module"
            )
        elif lhs in spec.constants:
            d = defs.get(rhs)
            if d is None or d.params:
                raise refuse(
                    f"{lhs} is bound to {rhs}, which {tla_path.name} does not define as a value"
                )
            constants[lhs] = parse_definition(d.text, path=str(tla_path), line=d.line)
            const_line[lhs] = d.line
        else:
            raise refuse(f"unknown binding {lhs} <- {rhs}")
    missing = sorted(set(spec.constants) - constants.keys())
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
                    f"unknown {what} {word} (the Python model of {spec.module} knows "
                    + ", ".join(known)
                    + ")",
                    path=str(cfg_path),
                    line=lineno,
                    code="RL-INPUT-MODEL",
                )
            out.append(word)
        return tuple(out)

    specification = names("SPECIFICATION", spec.specifications, "specification")
    if len(specification) != 1:
        at = cfg.sections.get("SPECIFICATION", [("", 1)])
        raise InputError(
            f"expected exactly one SPECIFICATION, found {len(specification)}",
            path=str(cfg_path),
            line=at[0][1] if at else 1,
            code="RL-INPUT-MODEL",
        )
    props = names("PROPERTIES", spec.properties + spec.liveness, "property")
    return VariantModel(
        name=name,
        tla_path=tla_path,
        cfg_path=cfg_path,
        constants=constants,
        const_line=const_line,
        overrides=overrides,
        specification=specification[0],
        constraints=names("CONSTRAINT", spec.constraints, "constraint"),
        invariants=names("INVARIANTS", spec.invariants, "invariant"),
        properties=tuple(p for p in props if p in spec.properties),
        liveness=tuple(p for p in props if p in spec.liveness),
    )
