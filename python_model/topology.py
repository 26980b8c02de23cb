"""Topologies from a seed, and models built from them without an MC file.

The generators return a :class:`Topology` (machines ``p1..pn`` and directed
buffers) that :func:`build_config` turns into a
:class:`~redletter.python_model.config.ModelConfig` exactly as
:func:`~redletter.python_model.config.load_model` would for an MC module binding the same constants:

* :func:`ring` -- buffers both ways between neighbours on a cycle;
* :func:`directed_ring` -- one buffer from each machine to the next;
* :func:`complete` -- a buffer between every ordered pair;
* :func:`random_strongly_connected` -- a Hamiltonian cycle through a seeded random
  permutation (so strongly connected, as the spec ASSUMEs) plus ``extra`` seeded
  random buffers.

Every random choice takes a seed; a topology remembers how it was made
(:attr:`Topology.origin`) so a failure can print it.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from redletter.errors import InputError
from redletter.python_model.config import (
    INVARIANT_NAMES,
    OVERRIDES,
    PROPERTY_NAMES,
    ModelConfig,
)
from redletter.python_model.values import FALSE, TRUE, Value, fcn

__all__ = [
    "Topology",
    "build_config",
    "complete",
    "directed_ring",
    "random_strongly_connected",
    "ring",
    "strongly_connected",
]

GENERATED = Path("<generated>")
"""The ``tla_path``/``cfg_path`` of a model built by :func:`build_config`."""


@dataclass(frozen=True)
class Topology:
    """Machines (names) and directed buffers ``(src, dst)``, both sorted."""

    procs: tuple[str, ...]
    chans: tuple[tuple[str, str], ...]
    origin: str  #: how it was made, e.g. ``random_strongly_connected(5, extra=3, seed=7)``

    def proc_value(self) -> Value:
        """The constant ``Proc`` as a TLA+ value."""
        return frozenset(self.procs)

    def chan_value(self) -> Value:
        """The constant ``Chan`` as a TLA+ value."""
        return frozenset(self.chans)


def _names(n: int) -> list[str]:
    if n < 1:
        raise InputError(f"a topology needs at least one machine, not {n}", code="RL-INPUT-MODEL")
    return [f"p{i}" for i in range(1, n + 1)]


def _topology(names: Sequence[str], edges: set[tuple[str, str]], origin: str) -> Topology:
    return Topology(tuple(sorted(names)), tuple(sorted(edges)), origin)


def ring(n: int) -> Topology:
    """``p1 <-> p2 <-> ... <-> pn <-> p1`` (for n = 2, the two buffers between them)."""
    ps = _names(n)
    edges = {(ps[i], ps[(i + 1) % n]) for i in range(n) if n > 1}
    edges |= {(b, a) for a, b in edges}
    return _topology(ps, edges, f"ring({n})")


def directed_ring(n: int) -> Topology:
    """``p1 -> p2 -> ... -> pn -> p1``."""
    ps = _names(n)
    return _topology(
        ps, {(ps[i], ps[(i + 1) % n]) for i in range(n) if n > 1}, f"directed_ring({n})"
    )


def complete(n: int) -> Topology:
    """A buffer between every ordered pair of distinct machines."""
    ps = _names(n)
    return _topology(ps, {(a, b) for a in ps for b in ps if a != b}, f"complete({n})")


def random_strongly_connected(n: int, *, extra: int, seed: int) -> Topology:
    """A Hamiltonian cycle through a random order of ``p1..pn`` plus ``extra`` random
    further buffers (fewer when the graph is complete), all drawn from ``seed``."""
    rng = random.Random(seed)
    ps = _names(n)
    order = ps[:]
    rng.shuffle(order)
    edges = {(order[i], order[(i + 1) % n]) for i in range(n) if n > 1}
    others = sorted((a, b) for a in ps for b in ps if a != b and (a, b) not in edges)
    rng.shuffle(others)
    edges |= set(others[: max(0, extra)])
    return _topology(ps, edges, f"random_strongly_connected({n}, extra={extra}, seed={seed})")


def strongly_connected(procs: Sequence[str], chans: Sequence[tuple[str, str]]) -> bool:
    """Is every machine reachable from every other over the buffers?"""
    if not procs:
        return False
    out: dict[str, list[str]] = {p: [] for p in procs}
    back: dict[str, list[str]] = {p: [] for p in procs}
    for a, b in chans:
        out[a].append(b)
        back[b].append(a)

    def all_reached(adj: Mapping[str, list[str]]) -> bool:
        seen = {procs[0]}
        todo = [procs[0]]
        while todo:
            for q in adj[todo.pop()]:
                if q not in seen:
                    seen.add(q)
                    todo.append(q)
        return len(seen) == len(procs)

    return all_reached(out) and all_reached(back)


def build_config(
    topology: Topology,
    *,
    app: str = "token",
    tokens: Mapping[str, int] | None = None,
    root: str | None = None,
    budget: int = 1,
    snaps: Sequence[int] = (1,),
    starters: Mapping[int, Sequence[str]] | None = None,
    sequential: bool = False,
    max_app_actions: int = 2,
    overrides: Mapping[str, str] | None = None,
    name: str | None = None,
    constraint: bool = True,
) -> ModelConfig:
    """A model over ``topology`` as :func:`~redletter.python_model.config.load_model` builds one.

    ``app`` is ``"token"`` (``tokens``: machine -> tokens, default one token at the
    first machine) or ``"diffusing"`` (``root``, default the first machine, and
    ``budget``).  ``starters`` maps each snapshot id to its starters (default: the
    first machine for every snapshot).  ``overrides`` selects mutant steps by their
    TLA+ names (e.g. ``{"Recording": "NoRecording"}``).  Every invariant the Python
    model knows is listed, with the action properties, and the CONSTRAINT
    AppActionBound unless ``constraint`` is false (then the application is bounded
    by the guards alone, as in the MC models that check liveness).
    """
    from redletter.python_model.apps import make_app
    from redletter.python_model.mutants import make_steps

    procs, chans = topology.procs, topology.chans

    def bad(what: str) -> InputError:
        return InputError(what, code="RL-INPUT-MODEL")

    if not strongly_connected(procs, chans):
        raise bad(f"the topology {topology.origin} is not strongly connected")
    if not snaps or any(k < 1 for k in snaps):
        raise bad("snapshot ids must be positive integers")
    snap_ids = tuple(sorted(set(snaps)))
    st = starters if starters is not None else {k: (procs[0],) for k in snap_ids}
    if set(st) != set(snap_ids) or any(not v or set(v) - set(procs) for v in st.values()):
        raise bad("starters must give a non-empty set of machines for every snapshot")
    over = {op: names[0] for op, names in OVERRIDES.items()}
    for op, rhs in (overrides or {}).items():
        if op not in OVERRIDES or rhs not in OVERRIDES[op]:
            raise bad(f"unknown override {op} <- {rhs}")
        over[op] = rhs
    constants: dict[str, Value] = {
        "Proc": topology.proc_value(),
        "Chan": topology.chan_value(),
        "Snap": frozenset(snap_ids),
        "Starters": fcn((k, frozenset(st[k])) for k in snap_ids),
        "Sequential": TRUE if sequential else FALSE,
        "MaxAppActions": max_app_actions,
    }
    if app == "token":
        module = "TokenApp"
        tk = dict(tokens) if tokens is not None else {procs[0]: 1}
        if set(tk) - set(procs):
            raise bad("tokens names a machine outside the topology")
        constants["Tokens"] = fcn((p, tk.get(p, 0)) for p in procs)
    elif app == "diffusing":
        module = "DiffusingApp"
        constants["Root"] = root if root is not None else procs[0]
        constants["Budget"] = budget
    else:
        raise bad(f"unknown app {app!r} (expected token or diffusing)")
    the_app = make_app(module, constants, procs, chans, snap_ids, path=str(GENERATED))
    proc_index = {p: i for i, p in enumerate(procs)}
    chan_index = {c: i for i, c in enumerate(chans)}
    chan_src = tuple(proc_index[c[0]] for c in chans)
    chan_dst = tuple(proc_index[c[1]] for c in chans)
    return ModelConfig(
        name=name or f"{module}/{topology.origin}",
        tla_path=GENERATED,
        cfg_path=GENERATED,
        app_module=module,
        definitions={},
        constants=constants,
        overrides=over,
        specification="Spec",
        constraints=("AppActionBound",) if constraint else (),
        invariants=INVARIANT_NAMES,
        properties=PROPERTY_NAMES,
        liveness=(),
        procs=procs,
        chans=chans,
        snaps=snap_ids,
        starters=tuple(sum(1 << proc_index[p] for p in set(st[k])) for k in snap_ids),
        sequential=sequential,
        max_app_actions=max_app_actions,
        proc_index=proc_index,
        chan_index=chan_index,
        snap_index={k: i for i, k in enumerate(snap_ids)},
        chan_src=chan_src,
        chan_dst=chan_dst,
        in_mask=tuple(
            sum(1 << i for i, d in enumerate(chan_dst) if d == p) for p in range(len(procs))
        ),
        out_mask=tuple(
            sum(1 << i for i, s in enumerate(chan_src) if s == p) for p in range(len(procs))
        ),
        all_chans=(1 << len(chans)) - 1,
        app=the_app,
        steps=make_steps(over, snap_ids),
    )
