r"""Liveness of a model in Python: the cfg's temporal properties under the fairness of
its SPECIFICATION, by fair-SCC analysis of the explored state graph.

What is checked, and how it matches TLC 2.15 (each point measured on the jar):

* **The graph** is the explorer's (:func:`~redletter.python_model.explore.explore`):
  the distinct states within the CONSTRAINT and the transitions between them.  Every
  state also has a stuttering step (``[][Next]_vars`` allows one; TLC adds a dashed
  self-loop per state), so a behaviour may stop anywhere unless fairness forbids it.
* **Fairness** is read from the spec (:mod:`redletter.python_model.temporal`): the
  ``WF_vars(A(args))`` and ``SF_vars(A(args))`` conjuncts of the SPECIFICATION, one
  condition per instance.  An instance is *taken* on an edge labelled with it that
  changes the state, and *enabled* in a state where the engine generates a
  successor for it that changes the state -- a successor outside the CONSTRAINT
  included, as TLC evaluates ENABLED on the action alone.
* **A fair cycle** is an SCC of the (sub)graph in which, for each ``WF`` condition,
  the instance is taken on an edge inside the SCC or disabled in one of its states,
  and for each ``SF`` condition it is taken inside or enabled in none of its states.
  A ``WF`` failure rules the whole SCC out (every sub-cycle fails too); an ``SF``
  failure removes the states where the instance is enabled and searches the rest
  again (Emerson and Lei's refinement).  A single state with no edge inside is a
  cycle of stuttering steps.
* **Properties** (one check per instance of the quantifiers):

  ======================  ===================================================
  ``P ~> Q``              a state with ``P /\ ~Q`` from which a fair path stays
                          in ``~Q`` forever
  ``[]<>P``               a reachable fair cycle of ``~P`` states
  ``<>P``                 a fair path from an initial state that never meets ``P``
  ``<>[]P``               a fair cycle through a ``~P`` state
  ``[]P``                 a reachable ``~P`` state with a fair continuation
  ======================  ===================================================

A violation comes with a lasso: a shortest prefix from an initial state (BFS
parents), a path inside the bad subgraph to a fair SCC, and a cycle in that SCC
that takes every instance the SCC takes and visits a state where each other
``WF`` instance is disabled -- or "stuttering" where a single state is a fair cycle.
:func:`format_lasso` prints it in TLC's shape (``State n: <Action(params)>``,
``/\ var = value``, ``Back to state k`` / ``Stuttering``).

Cost: SCCs by an iterative Tarjan over an adjacency in arrays (the edges come
sorted by source from the BFS), one pass per property instance; the fairness data
is recorded during exploration, so no successor is generated twice.
"""

from __future__ import annotations

import time
from array import array
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from redletter.errors import InternalError
from redletter.python_model.config import ModelConfig
from redletter.python_model.engine import Engine
from redletter.python_model.explore import (
    ExploreResult,
    FairGraph,
    Graph,
    Step,
    as_engine,
    explore,
    gc_paused,
    parent_chain,
    path_steps,
    replay_fingerprints,
)
from redletter.python_model.temporal import Fairness, Property, TemporalSpec, read_temporal
from redletter.python_model.values import Value, print_state, print_value

__all__ = [
    "Lasso",
    "LivenessResult",
    "PropertyVerdict",
    "check_liveness",
    "fair_bit_table",
    "format_lasso",
    "full_check",
    "temporal_of",
]


@dataclass(frozen=True)
class Lasso:
    """A behaviour violating a temporal property: ``prefix`` (from "Init"), then
    ``cycle`` repeated forever; ``back_to`` is the 1-based state number of the
    prefix the cycle returns to, ``None`` when the behaviour stutters at its last
    state."""

    prefix: tuple[Step, ...]
    cycle: tuple[Step, ...]
    back_to: int | None

    @property
    def steps(self) -> tuple[Step, ...]:
        """Prefix and one turn of the cycle, for replay and diagrams."""
        return self.prefix + self.cycle


@dataclass(frozen=True)
class PropertyVerdict:
    """The verdict on one instance of a temporal property."""

    prop: Property
    holds: bool
    lasso: Lasso | None


@dataclass(frozen=True)
class LivenessResult:
    """The liveness check of a model: one verdict per property instance."""

    model: str
    specification: str
    fairness: tuple[Fairness, ...]
    verdicts: tuple[PropertyVerdict, ...]
    seconds: float
    distinct: int
    edges: int
    names: tuple[str, ...] = field(default=())

    @property
    def violated(self) -> PropertyVerdict | None:
        """The first violated instance, or ``None``."""
        return next((v for v in self.verdicts if not v.holds), None)

    @property
    def result(self) -> str:
        """``success`` or ``liveness failure``, in the manifest's words."""
        return "success" if self.violated is None else "liveness failure"


def temporal_of(engine: Engine[Any]) -> TemporalSpec:
    """The engine's cfg temporal properties and its SPECIFICATION's fairness."""
    overrides = getattr(engine, "definition_overrides", None)
    return read_temporal(
        engine,
        engine.tla_path,  # type: ignore[arg-type]
        engine.specification,
        engine.liveness,
        overrides,
    )


def fair_bit_table(engine: Engine[Any], fairness: Sequence[Fairness]) -> list[int]:
    """For each action instance id of the engine, the bit of the fairness condition(s)
    on it, or -1.  Conditions on the same instance share one bit."""
    wanted: dict[tuple[str, tuple[Any, ...]], int] = {}
    for f in fairness:
        wanted.setdefault((f.name, f.args), len(wanted))
    table = [-1] * engine.instance_count
    found: set[tuple[str, tuple[Any, ...]]] = set()
    for iid in range(engine.instance_count):
        inst = engine.instance_of_id(iid)
        b = wanted.get(inst)
        if b is not None:
            table[iid] = b
            found.add(inst)
    missing = [f for f in fairness if (f.name, f.args) not in found]
    if missing:
        raise InternalError(
            f"the engine of {engine.name} has no action instance for "
            + ", ".join(f.show() for f in missing)
        )
    return table


# --------------------------------------------------------------------------- SCCs


class _Adjacency:
    """Out-edges by source, in arrays: ``dst[start[v]:start[v + 1]]``."""

    def __init__(self, n: int, src: array[int], dst: array[int], bit: array[int]) -> None:
        start = array("q", bytes(8 * (n + 1)))
        for s in src:
            start[s + 1] += 1
        for v in range(n):
            start[v + 1] += start[v]
        if all(src[j] <= src[j + 1] for j in range(len(src) - 1)):
            self.dst, self.bit = dst, bit
        else:  # pragma: no cover - the BFS writes edges by source
            order = sorted(range(len(src)), key=src.__getitem__)
            self.dst = array("i", (dst[j] for j in order))
            self.bit = array("h", (bit[j] for j in order))
        self.start = start

    @classmethod
    def from_offsets(cls, start: array[int], dst: array[int], bit: array[int]) -> _Adjacency:
        """An adjacency already in arrays by source (the parallel explorer's)."""
        adj = cls.__new__(cls)
        adj.start, adj.dst, adj.bit = start, dst, bit or array("h", [-1]) * len(dst)
        return adj


class _Members:
    """A node set that reads like a flag array (``m[v]`` is 1 or 0): the subgraphs of
    the SF refinement, so that each costs its own size, not the graph's."""

    def __init__(self, nodes: Sequence[int]) -> None:
        self._set = set(nodes)

    def __getitem__(self, v: int) -> int:
        return 1 if v in self._set else 0


class _Default(dict[int, int]):
    def __init__(self, default: int) -> None:
        super().__init__()
        self._default = default

    def __missing__(self, key: int) -> int:
        return self._default


Flags = bytearray | _Members


def _sccs(adj: _Adjacency, nodes: Sequence[int], allowed: Flags) -> Iterator[list[int]]:
    """Tarjan's SCCs of the subgraph induced by ``allowed``, from ``nodes`` (iterative;
    arrays over the whole graph, or dictionaries for a small subgraph)."""
    index: Any
    low: Any
    on_stack: Any
    if isinstance(allowed, bytearray):
        n = len(allowed)
        index = array("i", [-1]) * n
        low = array("i", bytes(4 * n))
        on_stack = bytearray(n)
    else:
        index, low, on_stack = _Default(-1), _Default(0), _Default(0)
    stack: list[int] = []
    counter = 0
    start, dst = adj.start, adj.dst
    for root in nodes:
        if index[root] >= 0 or not allowed[root]:
            continue
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = 1
        work = [(root, start[root])]
        while work:
            v, e = work[-1]
            end = start[v + 1]
            pushed = False
            while e < end:
                w = dst[e]
                e += 1
                if not allowed[w]:
                    continue
                if index[w] < 0:
                    work[-1] = (v, e)
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack[w] = 1
                    work.append((w, start[w]))
                    pushed = True
                    break
                if on_stack[w] and index[w] < low[v]:
                    low[v] = index[w]
            if pushed:
                continue
            work.pop()
            if work:
                u = work[-1][0]
                if low[v] < low[u]:
                    low[u] = low[v]
            if low[v] == index[v]:
                comp: list[int] = []
                while True:
                    w = stack.pop()
                    on_stack[w] = 0
                    comp.append(w)
                    if w == v:
                        break
                yield comp


@dataclass
class _FairScc:
    nodes: list[int]
    taken: int  #: bits taken on edges inside


class _Fairness:
    def __init__(self, fairness: Sequence[Fairness], enabled: Sequence[int]) -> None:
        bit: dict[tuple[str, tuple[Any, ...]], int] = {}
        self.wf = 0
        self.sf = 0
        for f in fairness:
            b = bit.setdefault((f.name, f.args), len(bit))
            if f.kind == "WF":
                self.wf |= 1 << b
            else:
                self.sf |= 1 << b
        self.all = self.wf | self.sf
        self.enabled = enabled


def _fair_sccs(
    adj: _Adjacency,
    nodes: Sequence[int],
    allowed: Flags,
    fair: _Fairness,
    must: Callable[[int], bool] | None,
) -> Iterator[_FairScc]:
    """The fair SCCs of the subgraph induced by ``allowed`` reachable from ``nodes``
    (with ``must``: only those containing a state satisfying it)."""
    enabled = fair.enabled
    start, dst, bitarr = adj.start, adj.dst, adj.bit
    for comp in _sccs(adj, nodes, allowed):
        if must is not None and not any(must(v) for v in comp):
            continue
        members = set(comp)
        taken = 0
        if len(comp) > 1:
            for v in comp:
                for e in range(start[v], start[v + 1]):
                    w = dst[e]
                    if w != v and w in members:
                        b = bitarr[e]
                        if b >= 0:
                            taken |= 1 << b
        en_all = -1
        en_any = 0
        for v in comp:
            m = enabled[v] if enabled else 0
            en_all &= m
            en_any |= m
        if fair.wf & en_all & ~taken:
            continue  # a WF instance enabled throughout, never taken
        sf_bad = fair.sf & en_any & ~taken
        if sf_bad:
            keep = [v for v in comp if not (enabled[v] & sf_bad)]
            yield from _fair_sccs(adj, keep, _Members(keep), fair, must)
            continue
        yield _FairScc(comp, taken)


# --------------------------------------------------------------------------- paths


def _bfs_path(
    adj: _Adjacency, src: int, goal: Callable[[int], bool], allowed: Callable[[int], bool]
) -> list[int]:
    """A shortest path ``src .. v`` with ``goal(v)``, through ``allowed`` states."""
    if goal(src):
        return [src]
    prev = {src: -1}
    q = deque([src])
    start, dst = adj.start, adj.dst
    while q:
        v = q.popleft()
        for e in range(start[v], start[v + 1]):
            w = dst[e]
            if w in prev or not allowed(w):
                continue
            prev[w] = v
            if goal(w):
                path = [w]
                while prev[path[-1]] >= 0:
                    path.append(prev[path[-1]])
                return path[::-1]
            q.append(w)
    raise InternalError("the liveness check lost a path inside an SCC")


def _has_edge(edge_from: Callable[[int, int], int | None], b: int) -> Callable[[int], bool]:
    return lambda v: edge_from(v, b) is not None


def _disabled(enabled: Sequence[int], bit: int) -> Callable[[int], bool]:
    return lambda v: not enabled[v] & bit


def _cycle(adj: _Adjacency, scc: _FairScc, entry: int, fair: _Fairness) -> list[int]:
    """A cycle ``entry .. entry`` inside the SCC that is fair: it takes an edge of every
    fair instance the SCC takes and visits a state where each untaken WF instance
    is disabled.  ``[entry]`` alone means stuttering at ``entry``."""
    members = set(scc.nodes)
    enabled = fair.enabled
    inside = members.__contains__
    start, dst, bitarr = adj.start, adj.dst, adj.bit

    def edge_from(v: int, b: int) -> int | None:
        for e in range(start[v], start[v + 1]):
            if bitarr[e] == b and dst[e] != v and dst[e] in members:
                return dst[e]
        return None

    out = [entry]
    for b in range(fair.all.bit_length()):
        bit = 1 << b
        if not fair.all & bit:
            continue
        if scc.taken & bit:
            seg = _bfs_path(adj, out[-1], _has_edge(edge_from, b), inside)
            out += seg[1:]
            nxt = edge_from(out[-1], b)
            if nxt is None:  # pragma: no cover - the goal guarantees one
                raise InternalError("the liveness check lost an edge of a fair cycle")
            out.append(nxt)
        elif fair.wf & bit and enabled and enabled[entry] & bit:
            out += _bfs_path(adj, out[-1], _disabled(enabled, bit), inside)[1:]
    if out[-1] != entry:
        out += _bfs_path(adj, out[-1], lambda v: v == entry, inside)[1:]
    return out


# --------------------------------------------------------------------------- check


@dataclass(frozen=True)
class _View:
    """What a property's check reads of the explored graph: its size, initial states
    and BFS parents, and the states of a path (for the lasso)."""

    count: int
    initial: Sequence[int]
    parent: Sequence[int]
    states_of: Callable[[Sequence[int]], list[Any]]


def check_liveness(
    model: ModelConfig | Engine[Any],
    *,
    explored: ExploreResult | None = None,
    temporal: TemporalSpec | None = None,
) -> tuple[LivenessResult, ExploreResult]:
    """Check the cfg's temporal properties; explores the model (with the fairness
    data) unless ``explored`` already has it (its graph, or the parallel explorer's
    :class:`~redletter.python_model.explore.FairGraph`).  Returns the verdicts and the
    exploration (whose safety verdict the caller may want too).  Python's cyclic
    garbage collector is paused meanwhile (:func:`gc_paused`)."""
    with gc_paused():
        return _check_liveness(as_engine(model), explored, temporal)


def _check_liveness(
    engine: Engine[Any], explored: ExploreResult | None, temporal: TemporalSpec | None
) -> tuple[LivenessResult, ExploreResult]:
    spec = temporal if temporal is not None else temporal_of(engine)
    bits = fair_bit_table(engine, spec.fairness)
    fg = explored.fair if explored is not None else None
    if explored is None or (
        fg is None and (explored.graph is None or (spec.fairness and not explored.graph.enabled))
    ):
        explored = explore(engine, fair_bits=bits)
    start = time.perf_counter()
    verdicts: list[PropertyVerdict] = []
    g = explored.graph
    if fg is not None:
        labels = tuple(f[0] for f in fg.flags)
        if labels != tuple(p.label for p in spec.properties):
            raise InternalError(
                f"the liveness data of {engine.name} is of the properties {labels}, not of"
                f" {tuple(p.label for p in spec.properties)}"
            )
        count, n_edges = fg.count, fg.edges
    elif g is not None:
        count, n_edges = len(g.states), len(g.edge_src)
    else:  # pragma: no cover - explored above when there was no graph
        raise InternalError("the exploration kept no graph")
    if explored.violation is None:
        adj, fair, view, flags = (
            _from_fair(engine, spec, fg) if fg is not None else _from_graph(spec, g)
        )
        for prop, (pf, qf) in zip(spec.properties, flags, strict=True):
            verdicts.append(_check_one(engine, view, adj, fair, prop, pf, qf))
    return (
        LivenessResult(
            model=engine.name,
            specification=spec.specification,
            fairness=spec.fairness,
            verdicts=tuple(verdicts),
            seconds=time.perf_counter() - start,
            distinct=count,
            edges=n_edges,
            names=spec.names,
        ),
        explored,
    )


PredFlags = list[tuple[bytearray, bytearray | None]]


def _from_fair(
    engine: Engine[Any], spec: TemporalSpec, fg: FairGraph
) -> tuple[_Adjacency, _Fairness, _View, PredFlags]:
    """What the check reads of the parallel explorer's liveness data."""
    fps = fg.fingerprints
    view = _View(
        fg.count,
        fg.initial,
        fg.parent,
        lambda ids: replay_fingerprints(engine, [fps[v] for v in ids]),
    )
    adj = _Adjacency.from_offsets(fg.start, fg.dst, fg.bit)
    return adj, _Fairness(spec.fairness, fg.enabled), view, [(p, q) for _, p, q in fg.flags]


def _from_graph(
    spec: TemporalSpec, g: Graph | None
) -> tuple[_Adjacency, _Fairness, _View, PredFlags]:
    """What the check reads of a graph with its states (the predicates evaluated here)."""
    if g is None:  # pragma: no cover - explored when there was no graph
        raise InternalError("the exploration kept no graph")
    states = g.states
    bits = g.edge_bit or array("h", [-1]) * len(g.edge_src)
    adj = _Adjacency(len(states), g.edge_src, g.edge_dst, bits)
    view = _View(len(states), g.initial, g.parent, lambda ids: [states[v] for v in ids])
    flags: PredFlags = [
        (_evaluate(p.p, states), _evaluate(p.q, states) if p.q is not None else None)
        for p in spec.properties
    ]
    return adj, _Fairness(spec.fairness, g.enabled), view, flags


def _evaluate(pred: Callable[[Any], bool], states: Sequence[Any]) -> bytearray:
    """A state predicate on every state, as flags (1 or 0)."""
    return bytearray(1 if pred(s) else 0 for s in states)


def full_check(model: ModelConfig | Engine[Any]) -> tuple[ExploreResult, LivenessResult | None]:
    """Safety and liveness, as TLC checks a cfg: one exploration recording the
    fairness data, then the temporal properties (skipped after a safety violation,
    as TLC stops there)."""
    engine = as_engine(model)
    if not engine.liveness:
        return explore(engine), None
    live, explored = check_liveness(engine)
    return explored, (live if explored.violation is None else None)


def _reverse(adj: _Adjacency, allowed: Flags) -> tuple[array[int], array[int]]:
    """The edges between ``allowed`` states (self-loops left out) reversed, in arrays
    by target: the sources of ``w`` are ``src[start[w]:start[w + 1]]`` (a list per
    state would cost a hundred bytes a state on the largest models)."""
    start, dst = adj.start, adj.dst
    n = len(start) - 1
    count = array("q", bytes(8 * (n + 1)))
    for v in range(n):
        if allowed[v]:
            for e in range(start[v], start[v + 1]):
                w = dst[e]
                if allowed[w] and w != v:
                    count[w + 1] += 1
    for w in range(n):
        count[w + 1] += count[w]
    src = array("i", bytes(4 * count[n]))
    fill = array("q", count)
    for v in range(n):
        if allowed[v]:
            for e in range(start[v], start[v + 1]):
                w = dst[e]
                if allowed[w] and w != v:
                    src[fill[w]] = v
                    fill[w] += 1
    return count, src


def _flag(flags: bytearray) -> Callable[[int], bool]:
    return lambda v: bool(flags[v])


def _check_one(
    engine: Engine[Any],
    view: _View,
    adj: _Adjacency,
    fair: _Fairness,
    prop: Property,
    pf: bytearray,
    qf: bytearray | None,
) -> PropertyVerdict:
    """One property instance; ``pf`` and ``qf`` are its predicates ``p`` and ``q``
    on every state."""
    n = view.count
    starts: Sequence[int]
    must: Callable[[int], bool] | None
    if prop.form == "eventually-always":
        allowed = bytearray(b"\x01") * n
        bad = bytearray(x ^ 1 for x in pf)
        starts = range(n)
        must = _flag(bad)
    else:
        if prop.form == "leadsto":
            if qf is None:  # pragma: no cover - leadsto always has q
                raise InternalError("a leads-to property without its goal")
            allowed = bytearray(x ^ 1 for x in qf)
            starts = [v for v in range(n) if allowed[v] and pf[v]]
        elif prop.form == "eventually":
            allowed = bytearray(x ^ 1 for x in pf)
            starts = [v for v in view.initial if allowed[v]]
        elif prop.form == "always-eventually":
            allowed = bytearray(x ^ 1 for x in pf)
            starts = [v for v in range(n) if allowed[v]]
        else:  # always: a ~P state with any fair continuation
            allowed = bytearray(b"\x01") * n
            starts = [v for v in range(n) if not pf[v]]
        must = None
    if not starts:
        return PropertyVerdict(prop, True, None)
    roots = starts if prop.form != "always" else range(n)
    in_fair = bytearray(n)
    sccs: list[_FairScc] = []
    for scc in _fair_sccs(adj, roots, allowed, fair, must):
        sccs.append(scc)
        for v in scc.nodes:
            in_fair[v] = 1
    if not sccs:
        return PropertyVerdict(prop, True, None)
    # states of the subgraph that reach a fair SCC inside it: backwards from them
    can = bytearray(in_fair)
    r_start, r_src = _reverse(adj, allowed)
    todo = deque(v for v in range(n) if can[v])
    while todo:
        w = todo.popleft()
        for e in range(r_start[w], r_start[w + 1]):
            v = r_src[e]
            if not can[v]:
                can[v] = 1
                todo.append(v)
    chosen = next((v for v in sorted(starts) if can[v]), None)
    if chosen is None:
        return PropertyVerdict(prop, True, None)
    to_scc = _bfs_path(adj, chosen, _flag(in_fair), lambda v: bool(allowed[v] and can[v]))
    entry = to_scc[-1]
    found = next(s for s in sccs if entry in set(s.nodes))
    cyc = _cycle(adj, found, entry, fair)
    prefix_ids = parent_chain(view.parent, chosen) + to_scc[1:]
    lasso_states = prefix_ids + cyc[1:-1]
    steps = path_steps(engine, view.states_of(lasso_states))
    k = len(prefix_ids)
    if len(cyc) == 1:
        return PropertyVerdict(prop, False, Lasso(tuple(steps), (), None))
    return PropertyVerdict(prop, False, Lasso(tuple(steps[:k]), tuple(steps[k:]), k))


# --------------------------------------------------------------------------- printing


def _tla(v: object) -> Value:
    if isinstance(v, list | tuple):
        return tuple(_tla(x) for x in v)
    return v  # type: ignore[return-value]


def _show_step(n: int, st: Step) -> str:
    if st.action == "Init":
        return f"State {n}: <Initial predicate>"
    inner = ", ".join(f"{k} = {print_value(_tla(v))}" for k, v in st.params.items())
    return f"State {n}: <{st.action}({inner})>"


def format_lasso(engine: Engine[Any], verdict: PropertyVerdict) -> list[str]:
    """The violation in TLC's shape: what is violated, then the behaviour."""
    lasso = verdict.lasso
    lines = [
        f"Temporal property {verdict.prop.label} is violated: {verdict.prop.text}",
    ]
    if lasso is None:
        return lines
    lines.append("The following behavior constitutes a counter-example:")
    for n, st in enumerate(lasso.steps, start=1):
        lines.append(_show_step(n, st))
        lines.append(print_state(engine.to_tla(st.state)))
    if lasso.back_to is None:
        lines.append(f"State {len(lasso.steps) + 1}: Stuttering")
    else:
        lines.append(f"Back to state {lasso.back_to}.")
    return lines
