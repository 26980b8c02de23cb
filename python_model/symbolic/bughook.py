"""The symbolic engine's hook into the one registry of bug classes.

The encoding (:mod:`.encoding`) and its concrete interpreter (:mod:`.concrete`) let
four steps of ChandyLamport.tla vary -- ``Deliverable``, ``Recording``,
``RedLettersOut`` and ``TurnsRed`` (:data:`~redletter.python_model.stepview.FOOTPRINTS`).
A bug class of :mod:`redletter.python_model.bugs` that overrides one of them runs
here from its rule, the same Python function the Python model runs:

* the concrete interpreter calls the rule on a :class:`CStateView` of its state;
* the encoding turns the rule into a formula: it runs the rule on every assignment
  of the inputs its step may read, records which inputs each run actually read
  (the rule's path condition), and takes the disjunction of the paths on which
  the rule answered true (:func:`rule_formula`, cached per step and arguments).

So a new bug class in the registry runs in z3 with no code here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

from redletter.python_model import bugs
from redletter.python_model.bugs import BugClass
from redletter.python_model.stepview import (
    FOOTPRINTS,
    AssignmentView,
    InputKey,
    assignments,
)

__all__ = ["CStateView", "SymWiring", "bug_of", "positions", "rule_formula", "rule_paths"]

Expr = Any


def bug_of(mutant: Any) -> BugClass | None:
    """The registry's bug class for a :class:`~.params.Mutant` (``None``: correct)."""
    value = str(mutant.value)
    if value == "correct":
        return None
    return bugs.get(value)


class SymWiring:
    """The wiring of a :class:`~.params.SymParams`, as the step views read it."""

    def __init__(self, procs: tuple[str, ...], chans: tuple[tuple[str, str], ...],
                 snaps: tuple[int, ...]) -> None:  # fmt: skip
        self.procs = procs
        self.snaps = snaps
        self.chan_src = tuple(procs.index(c[0]) for c in chans)
        self.chan_dst = tuple(procs.index(c[1]) for c in chans)
        self.in_mask = tuple(
            sum(1 << i for i, d in enumerate(self.chan_dst) if d == p) for p in range(len(procs))
        )
        self.out_mask = tuple(
            sum(1 << i for i, s in enumerate(self.chan_src) if s == p) for p in range(len(procs))
        )


class _Tracing(AssignmentView):
    """An assignment view that records the inputs a rule reads."""

    __slots__ = ("read",)

    def __init__(self, w: SymWiring, assignment: Mapping[InputKey, object]) -> None:
        super().__init__(w, assignment)
        self.read: dict[InputKey, object] = {}

    def _get(self, key: InputKey) -> object:
        value = super()._get(key)
        self.read[key] = value
        return value


@cache
def rule_paths(
    bug_name: str,
    procs: tuple[str, ...],
    chans: tuple[tuple[str, str], ...],
    snaps: tuple[int, ...],
    capacity: int,
    args: tuple[int, ...],
) -> tuple[tuple[tuple[InputKey, object], ...], ...]:
    """The paths on which the rule of ``bug_name`` answers true for ``args``: each a
    tuple of (input, value) the rule read on its way (an empty path: always true)."""
    bug = bugs.get(bug_name)
    assert bug.rule is not None and bug.step is not None
    w = SymWiring(procs, chans, snaps)
    fp = FOOTPRINTS[bug.step](w, args, capacity)
    paths: set[tuple[tuple[InputKey, object], ...]] = set()
    for a in assignments(fp):
        view = _Tracing(w, a)
        try:
            value = bug.rule(view, *args)
        except KeyError as missing:
            raise ValueError(
                f"bug class {bug.name}: its rule reads {missing.args[0]}, outside what the "
                f"symbolic encoding lets {bug.step} read"
            ) from None
        if value:
            paths.add(tuple(sorted(view.read.items(), key=repr)))
    if () in paths:
        return ((),)
    return tuple(sorted(paths, key=repr))


def rule_formula(
    bug: BugClass,
    params: Any,
    args: tuple[int, ...],
    literal: Callable[[InputKey, object], Expr],
) -> Expr:
    """The rule of ``bug`` for ``args`` as a z3 formula over one symbolic state
    (``literal(input, value)``: the formula "that input has that value" there)."""
    from redletter.python_model.z3env import z3

    paths = rule_paths(bug.name, params.procs, params.chans, params.snaps, params.capacity, args)
    if paths == ((),):
        return z3.BoolVal(True)
    if not paths:
        return z3.BoolVal(False)
    return z3.Or([z3.And([literal(k, v) for k, v in path]) for path in paths])


def positions(bug: BugClass | None, params: Any, ci: int) -> tuple[int, ...]:
    """The 1-based positions of buffer ci a receipt may take from (FIFO: 1)."""
    if bug is None or bug.step != "Deliverable":
        return (1,)
    return tuple(
        i
        for i in range(1, params.capacity + 1)
        if rule_paths(bug.name, params.procs, params.chans, params.snaps, params.capacity, (ci, i))
    )


class CStateView:
    """A :class:`~redletter.python_model.stepview.StepView` of a state of the
    concrete interpreter (:class:`~.concrete.CState`)."""

    def __init__(self, params: Any, s: Any) -> None:
        self._p = params
        self._s = s

    @property
    def n_procs(self) -> int:
        return len(self._p.procs)

    @property
    def n_chans(self) -> int:
        return len(self._p.chans)

    @property
    def n_snaps(self) -> int:
        return len(self._p.snaps)

    def src(self, c: int) -> int:
        return int(self._p.procs.index(self._p.chans[c][0]))

    def dst(self, c: int) -> int:
        return int(self._p.procs.index(self._p.chans[c][1]))

    def ins(self, p: int) -> tuple[int, ...]:
        return tuple(self._p.in_chans(self._p.procs[p]))

    def outs(self, p: int) -> tuple[int, ...]:
        return tuple(self._p.out_chans(self._p.procs[p]))

    def red(self, k: int, p: int) -> bool:
        return self._p.procs[p] in self._s.red[k]

    def red_buf(self, k: int, c: int) -> bool:
        return self._p.chans[c] in self._s.red_buf[k]

    def length(self, c: int) -> int:
        return len(self._s.buf[c])

    def letter_at(self, c: int, i: int) -> int | None:
        m = self._s.buf[c][i - 1]
        return None if m.kind == "app" else int(self._p.snaps.index(m.snap))

    def recorded_len(self, k: int, c: int) -> int:
        return len(self._s.rec_buf[k][c])
