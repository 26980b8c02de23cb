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

It runs on any :class:`~redletter.python_model.engine.Engine` (a
:class:`~redletter.python_model.config.ModelConfig` is wrapped in the Chandy-Lamport
engine).  With ``fair_bits`` (one bit index per action instance of the engine, -1
for instances no fairness condition names: see
:mod:`redletter.python_model.liveness`) it also records what the liveness check
needs: the fairness bit of every edge and, per state, the bitmask of the fair
instances that are *enabled* there.  TLC 2.15 evaluates ``ENABLED`` on the action
itself, constraint or not (measured on the jar: with ``CONSTRAINT x <= 2``, ``WF(A)``
for ``A == x' = x + 1`` makes stuttering at ``x = 2`` unfair although A's successor
is outside the constraint), so a successor outside the constraint counts as enabling
its instance too; a step that leaves the state unchanged does not (``<<A>>_vars``).
"""

from __future__ import annotations

import gc
import time
from array import array
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from redletter.errors import InternalError
from redletter.python_model.cl_engine import ChandyLamportEngine
from redletter.python_model.config import ModelConfig
from redletter.python_model.engine import Engine, Params

__all__ = [
    "ExploreProgress",
    "ExploreResult",
    "FairGraph",
    "Graph",
    "Step",
    "Violation",
    "WorkerReport",
    "as_engine",
    "explore",
    "parent_chain",
    "path_steps",
    "replay_fingerprints",
]


def as_engine(model: ModelConfig | Engine[Any]) -> Engine[Any]:
    """The engine of a model: a :class:`ModelConfig` is Chandy-Lamport's, or the
    variant's its wrapper names (lazy red letters)."""
    if isinstance(model, ModelConfig):
        if model.spec_module == "LazyChandyLamport":
            from redletter.python_model.lazy import LazyEngine

            return LazyEngine(model)
        return ChandyLamportEngine(model)
    return model


@dataclass(frozen=True)
class Step:
    """One step of a counterexample: action ("Init" for the first), params, state."""

    action: str
    params: Params
    state: Any


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

    ``states[i]`` is state id ``i`` (BFS order, ``parent[i]`` its BFS parent, -1 for
    an initial state); edge ``j`` is ``edge_src[j] -- action_names[edge_action[j]] -->
    edge_dst[j]``, one per generated transition between distinct states, like TLC's
    DOT dump, in the order of their sources.  ``edge_bit`` and ``enabled`` are filled
    when the exploration tracked fairness (see the module docstring), else empty.
    """

    states: tuple[Any, ...]
    initial: tuple[int, ...]
    edge_src: array[int]
    edge_action: array[int]
    edge_dst: array[int]
    parent: array[int]
    action_names: tuple[str, ...]
    edge_bit: array[int]
    enabled: Sequence[int]

    def edges(self) -> list[tuple[int, str, int]]:
        """The edges as (src, action name, dst)."""
        names = self.action_names
        return [
            (s, names[a], d)
            for s, a, d in zip(self.edge_src, self.edge_action, self.edge_dst, strict=True)
        ]


@dataclass(frozen=True)
class FairGraph:
    """The explored graph as the liveness check reads it, without the states: what
    the parallel explorer (:mod:`redletter.python_model.parallel`) assembles from its
    workers, whose states never meet in one process.

    States are ids ``0 .. count - 1``; the out-edges of ``v`` are ``dst[start[v]:
    start[v + 1]]`` with fairness bits ``bit[...]``; ``parent`` the BFS parents (-1
    for an initial state); ``enabled[v]`` the bitmask of the fair instances enabled in
    ``v``.  ``flags[i]`` are the state predicates of the ``i``-th temporal property
    instance (:attr:`TemporalSpec.properties` order) evaluated on every state by the
    worker that owned it: its label, ``p`` per state (1 or 0) and ``q`` (``leadsto``
    only).  ``fingerprints[v]`` is the engine's fingerprint of ``v``: a lasso's
    states are rebuilt by replaying the model along them
    (:func:`replay_fingerprints`)."""

    count: int
    initial: tuple[int, ...]
    parent: array[int]
    start: array[int]
    dst: array[int]
    bit: array[int]
    enabled: Sequence[int]
    flags: tuple[tuple[str, bytearray, bytearray | None], ...]
    fingerprints: array[int]

    @property
    def edges(self) -> int:
        """The number of edges."""
        return len(self.dst)


@dataclass(frozen=True)
class WorkerReport:
    """One partition of a parallel exploration: the states it owned, the peak resident
    memory of its process (``peak_rss`` in bytes) and the processor time it used
    (``cpu``, seconds); both 0 while the exploration was small enough to run in the
    calling process."""

    worker: int
    states: int
    peak_rss: int
    cpu: float = 0.0


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
    #: With the parallel explorer: the liveness graph assembled from its workers (when
    #: the fairness data was asked for without the whole graph), and its partitions.
    fair: FairGraph | None = None
    workers: tuple[WorkerReport, ...] = ()
    #: The peak resident memory of the calling process (bytes), parallel runs only.
    peak_rss: int = 0

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


def path_steps(engine: Engine[Any], path: Sequence[Any], actions: Sequence[int] = ()) -> list[Step]:
    """The steps of a path of states (the first is "Init"): each step's action and
    parameters are those of the first successor of its source equal to its target
    (and of action ``actions[i - 1]`` when given, for graphs with parallel edges)."""
    names = engine.action_names
    steps = [Step("Init", {}, path[0])]
    for n, (s, t) in enumerate(pairwise(path)):
        want = actions[n] if n < len(actions) else None
        for action, raw, u in engine.successors(s):
            if u == t and (want is None or action == want):
                steps.append(Step(names[action], engine.params(action, raw), t))
                break
        else:  # pragma: no cover - a graph edge is always a successor
            raise InternalError("counterexample reconstruction lost a step")
    return steps


def replay_fingerprints(engine: Engine[Any], fingerprints: Sequence[int]) -> list[Any]:
    """The states of a path given by their fingerprints, rebuilt by replaying the
    model: the first is the initial state with the first fingerprint, each next one the
    successor of the last with the next fingerprint."""
    fp = engine.fingerprint
    by_fp = {fp(s): s for s in engine.init_states()}
    first = by_fp.get(fingerprints[0]) if fingerprints else None
    if first is None:
        raise InternalError(
            f"the path of a counterexample does not start at an initial state of {engine.name}",
            code="RL-INTERNAL-BFS",
        )
    path = [first]
    for want in fingerprints[1:]:
        nxt = next((t for _a, _r, t in engine.successors(path[-1]) if fp(t) == want), None)
        if nxt is None:
            raise InternalError(
                f"a state of a counterexample of {engine.name} is no successor of the one"
                " before it",
                code="RL-INTERNAL-BFS",
            )
        path.append(nxt)
    return path


def _trace(
    engine: Engine[Any], states: list[Any], parent: array[int], last: int, extra: Any
) -> tuple[Step, ...]:
    path = [states[i] for i in parent_chain(parent, last)]
    if extra is not None:
        path.append(extra)
    return tuple(path_steps(engine, path))


def explore(
    model: ModelConfig | Engine[Any],
    *,
    graph: bool = False,
    fair_bits: Sequence[int] | None = None,
    on_progress: Callable[[ExploreProgress], None] | None = None,
    progress_every: int = 20_000,
) -> ExploreResult:
    """Explore every state reachable under the cfg's CONSTRAINT, checking the cfg's
    invariants on every generated state and its action properties on every step;
    stop at the first violation (as TLC does).  ``fair_bits`` (implies ``graph``)
    records the fairness data of the liveness check.

    Python's cyclic garbage collector is paused meanwhile (:func:`gc_paused`)."""
    with gc_paused():
        return _explore(as_engine(model), graph, fair_bits, on_progress, progress_every)


@contextmanager
def gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused, for a search or a check of a graph.

    A search allocates millions of tuples (the successors and their fields) and frees
    them by reference counting: a state is a tree of tuples, in no cycle, and a
    graph is arrays and lists of ints.  The collector still walks the young ones every
    700 allocations and, as the frontier grows, all of them every so often, and
    frees next to nothing: on MCTokenComplete3Large (874,530 states, compiled) it
    took 13 % of the search (13.0 s against 11.3 s) and half of the liveness check
    (1.73 s against 0.90 s); in a worker of the parallel explorer, 14 of 96 CPU-s
    (an older measurement, pure Python), where it freed 511 objects in 10,000
    collections.  It runs again once the block ends, so whatever cycle the block made
    is still collected."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def _explore(
    engine: Engine[Any],
    graph: bool,
    fair_bits: Sequence[int] | None,
    on_progress: Callable[[ExploreProgress], None] | None,
    progress_every: int,
) -> ExploreResult:
    start = time.perf_counter()
    track = fair_bits is not None
    graph = graph or track
    constrained = engine.constrained
    check_props = bool(engine.action_properties)
    in_model = engine.in_model
    states: list[Any] = []
    seen: dict[Any, int] = {}
    parent: array[int] = array("q")
    e_src: array[int] = array("i")
    e_act: array[int] = array("b")
    e_dst: array[int] = array("i")
    e_bit: array[int] = array("h")
    enabled: list[int] = []
    initial: list[int] = []
    total = 0
    violation: Violation | None = None

    def done(depth: int) -> ExploreResult:
        g = None
        if graph:
            g = Graph(
                tuple(states), tuple(initial), e_src, e_act, e_dst, parent,
                tuple(engine.action_names), e_bit, enabled,
            )  # fmt: skip
        return ExploreResult(
            engine.name, len(states), total, depth, time.perf_counter() - start, violation, g
        )

    violated_invariant = engine.violated_invariant
    for s in engine.init_states():
        total += 1
        new = True
        if not constrained or in_model(s):
            if s in seen:
                new = False
            else:
                seen[s] = len(states)
                initial.append(len(states))
                states.append(s)
                parent.append(-1)
        if new:
            name = violated_invariant(s)
            if name is not None:
                violation = Violation(name, "invariant", (Step("Init", {}, s),))
                return done(1)
    if not states:
        return done(0)

    level_end = len(states)  # states[:level_end] are at depth <= depth - 1
    depth = 1
    i = 0
    next_report = progress_every
    violated_property = engine.violated_property
    successors = engine.successors
    iid = engine.instance_id
    bits: Sequence[int] = fair_bits if fair_bits is not None else ()
    while i < len(states):
        if i == level_end:
            depth += 1
            level_end = len(states)
        s = states[i]
        mask = 0
        for action, raw, t in successors(s):
            total += 1
            if track:
                b = bits[iid(action, raw)]
                if b >= 0 and t != s:
                    mask |= 1 << b
            if not constrained or in_model(t):
                j = seen.get(t)
                if j is None:
                    j = len(states)
                    seen[t] = j
                    states.append(t)
                    parent.append(i)
                    name = violated_invariant(t)
                    if name is not None:
                        violation = Violation(
                            name, "invariant", _trace(engine, states, parent, j, None)
                        )
                        return done(depth + 1)
                if graph:
                    e_src.append(i)
                    e_act.append(action)
                    e_dst.append(j)
                    if track:
                        e_bit.append(b)
            else:
                name = violated_invariant(t)
                if name is not None:
                    violation = Violation(name, "invariant", _trace(engine, states, parent, i, t))
                    return done(depth)
            if check_props:
                name = violated_property(s, t)
                if name is not None:
                    violation = Violation(
                        name, "action property", _trace(engine, states, parent, i, t)
                    )
                    return done(depth)
        if track:
            enabled.append(mask)
        i += 1
        if on_progress is not None and len(states) >= next_report:
            next_report = len(states) + progress_every
            on_progress(ExploreProgress(len(states), total, len(states) - i, depth))
    return done(depth)
