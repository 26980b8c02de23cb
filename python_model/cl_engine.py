"""ChandyLamport.tla (with any of its application wrappers) as an
:class:`~redletter.python_model.engine.Engine`.

A thin adapter over the modules that mirror the spec: :mod:`actions` (the
successors), :mod:`invariants` (the checker), :mod:`state` (the TLA+ codec); it adds
the action instances fairness is about and the state predicates the temporal
properties use.  The action instances of a model, numbered densely::

    SendApp(c)            c                       c \\in Chan (index order)
    InternalEvent(p)      |Chan| + p              p \\in Proc
    ReceiveApp(c)         |Chan| + |Proc| + c
    ReceiveRedLetter(c)   2|Chan| + |Proc| + c
    StartSnapshot(p, k)   3|Chan| + |Proc| + p * |Snap| + k
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Final, Protocol, TypeVar

from redletter.python_model.actions import (
    ACTION_NAMES,
    START_SNAPSHOT,
    app_action_bound,
    fast_successors,
    init_states,
    params_of,
)
from redletter.python_model.config import ModelConfig
from redletter.python_model.engine import ActionInstance, Params, RawParams, state_fingerprint
from redletter.python_model.invariants import Checker
from redletter.python_model.state import TLA_NAMES, State, from_tla, to_tla
from redletter.python_model.values import State as TlaState
from redletter.python_model.values import Value

__all__ = ["ChandyLamportEngine", "snapshot_predicate"]


class _Histories(Protocol):
    """A state with ChandyLamport.tla's history variables S0 and Sf."""

    @property
    def s0(self) -> tuple[object, ...]: ...

    @property
    def sf(self) -> tuple[object, ...]: ...


H = TypeVar("H", bound=_Histories)


def snapshot_predicate(
    cfg: ModelConfig, name: str, args: tuple[Value, ...]
) -> Callable[[H], bool] | None:
    """``Started(k)``, ``Complete(k)``, ``InProgress(k)`` of ChandyLamport.tla, on any
    state that carries its ``S0`` and ``Sf`` (ChandyLamport's own, the lazy variant's)."""
    if len(args) != 1 or args[0] not in cfg.snap_index:
        return None
    k = cfg.snap_index[args[0]]  # type: ignore[index]
    if name == "Started":
        return lambda s: s.s0[k] is not None
    if name == "Complete":
        return lambda s: s.sf[k] is not None
    if name == "InProgress":
        return lambda s: s.s0[k] is not None and s.sf[k] is None
    return None


VARIABLES: Final = tuple(TLA_NAMES.values())
"""The spec's variables in its order (:attr:`ChandyLamportEngine.variables`)."""


class ChandyLamportEngine:
    """One model of ChandyLamport.tla (see the module docstring)."""

    action_names = ACTION_NAMES
    variables = VARIABLES

    def __init__(self, cfg: ModelConfig) -> None:
        self.cfg = cfg
        self.checker = Checker(cfg)
        nc, np_, ns = len(cfg.chans), len(cfg.procs), len(cfg.snaps)
        self._base = (0, nc, nc + np_, 2 * nc + np_, 3 * nc + np_)
        self._ns = ns
        self.instance_count = 3 * nc + np_ + np_ * ns
        self.constrained = bool(cfg.constraints)
        self.invariants = cfg.invariants
        self.action_properties = cfg.properties
        self.liveness = cfg.liveness
        self.specification = cfg.specification

    @property
    def name(self) -> str:
        return self.cfg.name

    @property
    def tla_path(self) -> Path:
        return self.cfg.tla_path

    # ------------------------------------------------------------------ the graph

    def init_states(self) -> list[State]:
        return init_states(self.cfg)

    def successors(self, s: State) -> Iterator[tuple[int, RawParams, State]]:
        return fast_successors(self.cfg, s)

    def in_model(self, s: State) -> bool:
        return app_action_bound(self.cfg, s) if self.constrained else True

    def params(self, action: int, raw: RawParams) -> Params:
        return params_of(self.cfg, action, (raw[0], raw[1]))

    def instance_id(self, action: int, raw: RawParams) -> int:
        if action == START_SNAPSHOT:
            return self._base[action] + raw[0] * self._ns + raw[1]
        return self._base[action] + raw[0]

    def instance_of_id(self, iid: int) -> ActionInstance:
        cfg = self.cfg
        action = max(a for a, b in enumerate(self._base) if b <= iid)
        rest = iid - self._base[action]
        if action == START_SNAPSHOT:
            p, k = divmod(rest, self._ns)
            return ACTION_NAMES[action], (cfg.procs[p], cfg.snaps[k])
        if action == 1:  # InternalEvent(p)
            return ACTION_NAMES[action], (cfg.procs[rest],)
        return ACTION_NAMES[action], (cfg.chans[rest],)

    def instance(self, action: int, raw: RawParams) -> ActionInstance:
        return self.instance_of_id(self.instance_id(action, raw))

    # ------------------------------------------------------------------ safety

    def violated_invariant(self, s: State) -> str | None:
        return self.checker.violated_invariant(s)

    def violated_property(self, s: State, t: State) -> str | None:
        return self.checker.violated_property(s, t)

    # ------------------------------------------------------------------ liveness

    def constant(self, name: str) -> Value:
        return self.cfg.constants[name]

    def predicate(self, name: str, args: tuple[Value, ...]) -> Callable[[State], bool] | None:
        """``Started(k)``, ``Complete(k)``, ``InProgress(k)`` of ChandyLamport.tla."""
        return snapshot_predicate(self.cfg, name, args)

    # ------------------------------------------------------------------ identity

    def fingerprint(self, s: State) -> int:
        return state_fingerprint(s)

    def to_tla(self, s: State) -> TlaState:
        return to_tla(self.cfg, s)

    def from_tla(self, t: Mapping[str, Value]) -> State:
        return from_tla(self.cfg, t)
