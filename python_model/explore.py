"""Breadth-first exploration of a model's state graph, with TLC 2.15's exact semantics.

What TLC 2.15 does with a CONSTRAINT, determined empirically with the pinned jar on a
toy spec (``x, y`` from 0, Next increments one of them, ``CONSTRAINT x + y <= 2``):

* "states generated" counts the initial states plus *every* successor generated from
  every explored state -- duplicates and successors violating the constraint alike
  (toy: 13 = 1 + 6 states x 2 successors);
* a successor that violates the constraint is *not* a distinct state (toy: 6 distinct,
  the states with x + y <= 2), is never expanded, and is not in the ``-dump dot``
  output (no node, no edge to it);
* but its invariants *are* checked (an invariant ``x + y <= 2`` is reported violated
  by the state x = 3 with a 4-state trace), and so are action properties on the step
  into it (``[][x' + y' <= 2]_<<x, y>>`` is violated by the step to x = 3): TLC's
  worker checks invariants of every successor it has not seen (a constraint-violating
  one is never "seen") and implied actions of every step;
* depth is the number of BFS levels of distinct states, i.e. the length of the
  longest shortest path + 1 (toy: 3, levels x + y = 0, 1, 2; the constraint-violating
  level is not counted).

The explorer mirrors all of that; invariants are checked when a state is generated
(as TLC does), so the first violation is found at the shallowest level and the
counterexample (rebuilt from BFS parents) is a shortest one.
"""

from __future__ import annotations

import time
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise

from redletter.errors import InternalError
from redletter.python_model.actions import (
    ACTION_NAMES,
    Params,
    app_action_bound,
    fast_successors,
    init_states,
    successors,
)
from redletter.python_model.config import ModelConfig
from redletter.python_model.invariants import Checker
from redletter.python_model.state import State

__all__ = ["ExploreProgress", "ExploreResult", "Graph", "Step", "Violation", "explore"]


@dataclass(frozen=True)
class Step:
    """One step of a counterexample: action ("Init" for the first), params, state."""

    action: str
    params: Params
    state: State


@dataclass(frozen=True)
class Violation:
    """A violated invariant or action property and a shortest behaviour violating it."""

    name: str
    kind: str  #: "invariant" or "action property"
    trace: tuple[Step, ...]

    def describe(self) -> str:
        """TLC's words: ``Invariant Lemma0 is violated.``"""
        what = "Invariant" if self.kind == "invariant" else "Action property"
        return f"{what} {self.name} is violated."


@dataclass(frozen=True)
class Graph:
    """The labelled state graph of distinct (constraint-satisfying) states.

    ``states[i]`` is state id ``i`` (BFS order); edge ``j`` is ``edge_src[j] --
    ACTION_NAMES[edge_action[j]] --> edge_dst[j]``, one per generated transition
    between distinct states, like TLC's DOT dump.
    """

    states: tuple[State, ...]
    initial: tuple[int, ...]
    edge_src: array[int]
    edge_action: array[int]
    edge_dst: array[int]

    def edges(self) -> list[tuple[int, str, int]]:
        """The edges as (src, action name, dst)."""
        return [
            (s, ACTION_NAMES[a], d)
            for s, a, d in zip(self.edge_src, self.edge_action, self.edge_dst, strict=True)
        ]


@dataclass(frozen=True)
class ExploreProgress:
    """A progress report: states so far, generated so far, queue, current depth."""

    distinct: int
    total: int
    queue: int
    depth: int


@dataclass(frozen=True)
class ExploreResult:
    """What :func:`explore` found; counts as TLC reports them."""

    model: str
    distinct: int
    total: int
    depth: int
    seconds: float
    violation: Violation | None
    graph: Graph | None

    @property
    def result(self) -> str:
        """The outcome in the manifest's words: ``success`` or ``safety failure``."""
        return "success" if self.violation is None else "safety failure"

    @property
    def states_per_second(self) -> float:
        return self.distinct / self.seconds if self.seconds > 0 else 0.0


def parent_chain(parent: Sequence[int], last: int) -> list[int]:
    """The state ids from an initial state (parent -1) down to ``last``, in order."""
    chain: list[int] = []
    i = last
    while i >= 0:
        chain.append(i)
        i = parent[i]
    chain.reverse()
    return chain


def _trace(
    cfg: ModelConfig, states: list[State], parent: array[int], last: int, extra: State | None
) -> tuple[Step, ...]:
    path = [states[i] for i in parent_chain(parent, last)]
    if extra is not None:
        path.append(extra)
    steps = [Step("Init", {}, path[0])]
    for s, t in pairwise(path):
        for name, params, u in successors(cfg, s):
            if u == t:
                steps.append(Step(name, params, t))
                break
        else:  # pragma: no cover - a BFS parent always has the child as a successor
            raise InternalError("counterexample reconstruction lost a step")
    return tuple(steps)


def explore(
    cfg: ModelConfig,
    *,
    graph: bool = False,
    on_progress: Callable[[ExploreProgress], None] | None = None,
    progress_every: int = 20_000,
) -> ExploreResult:
    """Explore every state reachable under the cfg's CONSTRAINT, checking the cfg's
    invariants on every generated state and its action properties on every step;
    stop at the first violation (as TLC does)."""
    start = time.perf_counter()
    checker = Checker(cfg)
    constrained = bool(cfg.constraints)
    check_props = bool(cfg.properties)
    states: list[State] = []
    seen: dict[State, int] = {}
    parent: array[int] = array("q")
    e_src: array[int] = array("i")
    e_act: array[int] = array("b")
    e_dst: array[int] = array("i")
    initial: list[int] = []
    total = 0
    violation: Violation | None = None

    def done(depth: int) -> ExploreResult:
        g = None
        if graph:
            g = Graph(tuple(states), tuple(initial), e_src, e_act, e_dst)
        return ExploreResult(
            cfg.name, len(states), total, depth, time.perf_counter() - start, violation, g
        )

    for s in init_states(cfg):
        total += 1
        in_model = not constrained or app_action_bound(cfg, s)
        new = True
        if in_model:
            if s in seen:
                new = False
            else:
                seen[s] = len(states)
                initial.append(len(states))
                states.append(s)
                parent.append(-1)
        if new:
            name = checker.violated_invariant(s)
            if name is not None:
                violation = Violation(name, "invariant", (Step("Init", {}, s),))
                return done(1)
    if not states:
        return done(0)

    level_end = len(states)  # states[:level_end] are at depth <= depth - 1
    depth = 1
    i = 0
    next_report = progress_every
    violated_invariant = checker.violated_invariant
    violated_property = checker.violated_property
    while i < len(states):
        if i == level_end:
            depth += 1
            level_end = len(states)
        s = states[i]
        for action, _raw, t in fast_successors(cfg, s):
            total += 1
            if not constrained or app_action_bound(cfg, t):
                j = seen.get(t)
                if j is None:
                    j = len(states)
                    seen[t] = j
                    states.append(t)
                    parent.append(i)
                    name = violated_invariant(t)
                    if name is not None:
                        violation = Violation(
                            name, "invariant", _trace(cfg, states, parent, j, None)
                        )
                        return done(depth + 1)
                if graph:
                    e_src.append(i)
                    e_act.append(action)
                    e_dst.append(j)
            else:
                name = violated_invariant(t)
                if name is not None:
                    violation = Violation(name, "invariant", _trace(cfg, states, parent, i, t))
                    return done(depth)
            if check_props:
                name = violated_property(s, t)
                if name is not None:
                    violation = Violation(
                        name, "action property", _trace(cfg, states, parent, i, t)
                    )
                    return done(depth)
        i += 1
        if on_progress is not None and len(states) >= next_report:
            next_report = len(states) + progress_every
            on_progress(ExploreProgress(len(states), total, len(states) - i, depth))
    return done(depth)
