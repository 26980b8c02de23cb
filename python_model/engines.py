"""Which engine mirrors a model: :func:`load_engine` reads the model's ``MC*.tla``
and returns the :class:`~redletter.python_model.engine.Engine` for its spec family.

The families: Chandy-Lamport's (a model EXTENDS one of the application wrappers of
``ChandyLamport.tla``) and lazy red letters (``LazyChandyLamportToken``,
:mod:`redletter.python_model.lazy`) and the observer (``ObserverSnapshotToken``,
:mod:`redletter.python_model.observer`) and Flink's barrier snapshots
(``BarrierSnapshot``, :mod:`redletter.python_model.barrier`).  A new spec family adds one entry to
:data:`FAMILIES`: a predicate on the model's ``EXTENDS`` list and a loader; the
explorer, the liveness check and the cross-check need nothing else.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from redletter.errors import InputError
from redletter.python_model.cl_engine import ChandyLamportEngine
from redletter.python_model.config import (
    APP_WRAPPERS,
    VARIANT_WRAPPERS,
    load_model,
    unknown_model,
)
from redletter.python_model.engine import Engine
from redletter.python_model.temporal import read_module_uses

__all__ = ["FAMILIES", "family_of", "load_engine"]


def _chandy_lamport(name: str, spec_dir: Path) -> Engine[Any]:
    return ChandyLamportEngine(load_model(name, spec_dir))


def _observer(name: str, spec_dir: Path) -> Engine[Any]:
    from redletter.python_model.observer import ObserverEngine, load_observer

    return ObserverEngine(load_observer(name, spec_dir))


def _barrier(name: str, spec_dir: Path) -> Engine[Any]:
    from redletter.python_model.barrier import BarrierEngine, load_barrier

    return BarrierEngine(load_barrier(name, spec_dir))


def _lazy(name: str, spec_dir: Path) -> Engine[Any]:
    from redletter.python_model.lazy import LazyEngine

    return LazyEngine(load_model(name, spec_dir))


#: (family, does a model whose MC module uses these modules belong to it?, loader)
FAMILIES: Final[
    list[tuple[str, Callable[[list[str]], bool], Callable[[str, Path], Engine[Any]]]]
] = [
    (
        "ChandyLamport",
        lambda uses: "ChandyLamport" in uses or any(m in APP_WRAPPERS for m in uses),
        _chandy_lamport,
    ),
    (
        "LazyChandyLamport",
        lambda uses: any(VARIANT_WRAPPERS.get(m, ("", ""))[1] == "LazyChandyLamport" for m in uses),
        _lazy,
    ),
    ("ObserverSnapshot", lambda uses: "ObserverSnapshotToken" in uses, _observer),
    ("BarrierSnapshot", lambda uses: "BarrierSnapshot" in uses, _barrier),
]


def family_of(name: str, spec_dir: Path, *, source: str | None = None) -> str | None:
    """The engine family of model ``name`` (``"ChandyLamport"``, ...), or ``None``
    when no engine mirrors the modules it uses (``source``: the MC module's text, when
    it is not read from ``spec_dir``, e.g. the copy a trace carries)."""
    if source is None:
        _check_exists(name, spec_dir)
    uses = read_module_uses(spec_dir / f"{name}.tla", source)
    return next((f for f, belongs, _ in FAMILIES if belongs(uses)), None)


def _check_exists(name: str, spec_dir: Path) -> None:
    path = spec_dir / f"{name}.tla"
    if not path.is_file() or not path.with_suffix(".cfg").is_file():
        raise InputError(unknown_model(name, spec_dir), code="RL-INPUT-MODEL")


def load_engine(name: str, spec_dir: Path) -> Engine[Any]:
    """The engine of model ``name`` of ``spec_dir``."""
    _check_exists(name, spec_dir)
    path = spec_dir / f"{name}.tla"
    uses = read_module_uses(path)
    for _family, belongs, loader in FAMILIES:
        if belongs(uses):
            return loader(name, spec_dir)
    raise InputError(
        f"no Python engine mirrors the modules {name} uses ({', '.join(uses) or 'none'});"
        " the engines: " + ", ".join(f for f, _, _ in FAMILIES),
        path=str(path),
        code="RL-INPUT-MODEL",
    )
