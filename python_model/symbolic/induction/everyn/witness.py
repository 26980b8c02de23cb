"""A real run behind a bug class's counterexample to induction.

A counterexample to induction need not be reachable.  For a bug class, this module
looks for a run from Init on the same network (the counterexample's machines,
buffers and snapshots; any machine a starter; TokenApp with two tokens a machine and
messages of one token) in which a step breaks an obligation of the same layer: the
shortest, by breadth-first search in the identity-level interpreter.  For Lemma 1,
the prophecy of a run is read from the run itself, so a run is checked once one of
its snapshots has completed.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

import redletter.python_model.symbolic.induction.everyn.labels as lb
from redletter.python_model.symbolic.induction.apps import ConcreteApp, TokenApp
from redletter.python_model.symbolic.induction.everyn.concrete import (
    Net,
    Reality,
    Step,
    complete,
    enabled_steps,
    init_reality,
    prophecy_of_run,
)
from redletter.python_model.symbolic.induction.everyn.replay import all_labels

__all__ = ["Witness", "reachable_violation", "token_net"]

TOKEN = TokenApp().concrete(None)


@dataclass(frozen=True)
class Witness:
    """A run from Init whose last step (or, for Lemma 1, whose completion of snapshot
    ``kappa``) breaks ``broken``."""

    net: Net
    states: tuple[Reality, ...]
    steps: tuple[Step, ...]
    broken: tuple[str, ...]
    layer: str
    kappa: int | None = None
    explored: int = 0


def token_net(shape: Net, per_chan: int = 2) -> Net:
    """``shape``'s machines, buffers and snapshots, ``per_chan`` one-token messages a
    buffer, every machine a starter of every snapshot."""
    msgs: list[tuple[int, int, int]] = []
    rank: list[int] = []
    for p, q in shape.links:
        for i in range(per_chan):
            msgs.append((p, q, 1))
            rank.append(i)
    starters = frozenset((k, p) for k in range(shape.snapshots) for p in range(shape.machines))
    return Net(
        shape.machines,
        shape.links,
        shape.snapshots,
        tuple(msgs),
        tuple(rank),
        starters,
        shape.names,
    )


def _path(
    parent: dict[Reality, tuple[Reality, Step] | None], r: Reality
) -> tuple[list[Reality], list[Step]]:
    states, steps = [r], []
    while (link := parent[r]) is not None:
        r, st = link
        states.append(r)
        steps.append(st)
    return states[::-1], steps[::-1]


def _lemma1(
    net: Net, app: ConcreteApp, states: Sequence[Reality], steps: Sequence[Step], kappa: int
) -> tuple[str, ...]:
    pr = prophecy_of_run(net, states, steps, kappa)
    broken: set[str] = set()
    for t, st in enumerate(steps):
        r, u = states[t], states[t + 1]
        fails = lb.prophecy_failures(net, u, pr)
        broken |= {n for n, bad in fails.items() if bad}
        broken |= {n for n, ok in all_labels(net, app, "shadow1", r, st, u, pr).items() if not ok}
    broken |= {n for n, ok in lb.state_labels(net, states[-1], pr).items() if not ok}
    return tuple(sorted(broken))


def reachable_violation(
    shape: Net,
    variant: str,
    *,
    layer: str = "reality",
    tokens: int = 2,
    per_chan: int = 2,
    max_states: int = 20_000,
) -> Witness | None:
    """The shortest run on ``shape``'s network that breaks an obligation of ``layer``
    (``reality``: Lemma 0's, checked at each step; otherwise Lemma 1's, checked on
    each shortest run to a completed snapshot), or ``None`` within ``max_states``."""
    net = token_net(shape, per_chan)
    app = TOKEN
    start = init_reality(net, [tokens] * net.machines)
    parent: dict[Reality, tuple[Reality, Step] | None] = {start: None}
    queue = deque([start])
    while queue and len(parent) < max_states:
        r = queue.popleft()
        for st, u in enabled_steps(net, app, variant, r):
            if layer == "reality":
                bad = tuple(
                    sorted(
                        n
                        for n, ok in all_labels(net, app, "reality", r, st, u, None).items()
                        if not ok
                    )
                )
                if bad:
                    states, steps = _path(parent, r)
                    return Witness(net, (*states, u), (*steps, st), bad, layer, None, len(parent))
            if u in parent:
                continue
            parent[u] = (r, st)
            queue.append(u)
            if layer != "reality":
                for kappa in range(net.snapshots):
                    if complete(net, u, kappa) and not complete(net, r, kappa):
                        states, steps = _path(parent, u)
                        bad = _lemma1(net, app, states, steps, kappa)
                        if bad:
                            return Witness(
                                net, tuple(states), tuple(steps), bad, layer, kappa, len(parent)
                            )
    return None
