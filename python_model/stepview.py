"""What a step of ChandyLamport.tla may read: the view a bug class's step is written
against, so that one definition runs in every engine.

A step (``Recording(k, p, c)``, ``TurnsRed(c, k)``, ...: see
:mod:`redletter.python_model.mutants`) is a pure function of the state.  A bug class
(:mod:`redletter.python_model.bugs`) overrides one of them with a *rule*: a plain
Python function of a :class:`StepView` and the step's arguments, returning plain
values (``bool``, ``int``, tuples).  The same rule is evaluated

* by the Python model, on a :class:`ModelView` of a
  :class:`~redletter.python_model.state.State`;
* by the symbolic engine's concrete interpreter, on a view of its own states;
* by the z3 encoding, which enumerates the rule over every assignment of the
  inputs its step may read (:data:`FOOTPRINTS`, :class:`AssignmentView`) and turns the
  table into a formula, so no bug class is written twice;
* by a conformance node, on what one machine knows of itself
  (``conformance/nodes/steps.py``), when the rule reads nothing else.

Indices, as everywhere in the Python model: machines and buffers are indices into
``ModelConfig.procs`` / ``chans``, ``k`` and ``j`` snapshot *indices* into
``ModelConfig.snaps``, buffer positions ``i`` 1-based as in TLA+.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from itertools import product
from typing import Protocol, TypeAlias

from redletter.errors import InternalError
from redletter.python_model.state import State

__all__ = [
    "FOOTPRINTS",
    "AssignmentView",
    "Footprint",
    "InputKey",
    "ModelView",
    "NotLocal",
    "StepView",
    "Topology",
    "assignments",
]


class Topology(Protocol):
    """The model's wiring (:class:`~redletter.python_model.config.ModelConfig` is one)."""

    @property
    def chan_src(self) -> tuple[int, ...]: ...
    @property
    def chan_dst(self) -> tuple[int, ...]: ...
    @property
    def in_mask(self) -> tuple[int, ...]: ...
    @property
    def out_mask(self) -> tuple[int, ...]: ...
    @property
    def snaps(self) -> tuple[int, ...]: ...
    @property
    def procs(self) -> tuple[str, ...]: ...


class StepView(Protocol):
    """The state, as a step of the algorithm reads it."""

    # -- the network (constant) ----------------------------------------------------
    @property
    def n_procs(self) -> int: ...
    @property
    def n_chans(self) -> int: ...
    @property
    def n_snaps(self) -> int: ...
    def src(self, c: int) -> int:
        """``Src(c)``."""

    def dst(self, c: int) -> int:
        """``Dst(c)``."""

    def ins(self, p: int) -> tuple[int, ...]:
        """``In(p)``, as buffer indices."""

    def outs(self, p: int) -> tuple[int, ...]:
        """``Out(p)``, as buffer indices."""

    # -- the state -------------------------------------------------------------------
    def red(self, k: int, p: int) -> bool:
        """``p \\in red[k]``."""

    def red_buf(self, k: int, c: int) -> bool:
        """``c \\in redBuf[k]``."""

    def length(self, c: int) -> int:
        """``Len(buf[c])``, red letters included."""

    def letter_at(self, c: int, i: int) -> int | None:
        """The snapshot index of the red letter at position i of buffer c, or ``None``
        when an application message is there."""

    def recorded_len(self, k: int, c: int) -> int:
        """``Len(recBuf[k][c])``."""


class NotLocal(Exception):
    """A rule read something a single machine cannot know (raised by node views)."""


# --------------------------------------------------------------------------- the model's view


class ModelView:
    """A :class:`StepView` of one state of the Python model (bitmasks read bit by bit)."""

    __slots__ = ("_cfg", "_s")

    def __init__(self, cfg: Topology, s: State) -> None:
        self._cfg = cfg
        self._s = s

    @property
    def n_procs(self) -> int:
        return len(self._cfg.procs)

    @property
    def n_chans(self) -> int:
        return len(self._cfg.chan_src)

    @property
    def n_snaps(self) -> int:
        return len(self._cfg.snaps)

    def src(self, c: int) -> int:
        return self._cfg.chan_src[c]

    def dst(self, c: int) -> int:
        return self._cfg.chan_dst[c]

    def ins(self, p: int) -> tuple[int, ...]:
        m = self._cfg.in_mask[p]
        return tuple(c for c in range(len(self._cfg.chan_src)) if m >> c & 1)

    def outs(self, p: int) -> tuple[int, ...]:
        m = self._cfg.out_mask[p]
        return tuple(c for c in range(len(self._cfg.chan_src)) if m >> c & 1)

    def red(self, k: int, p: int) -> bool:
        return bool(self._s.red[k] >> p & 1)

    def red_buf(self, k: int, c: int) -> bool:
        return bool(self._s.red_buf[k] >> c & 1)

    def length(self, c: int) -> int:
        return len(self._s.buf[c])

    def letter_at(self, c: int, i: int) -> int | None:
        v = self._s.buf[c][i - 1]
        if v >= 0:
            return None
        return self._cfg.snaps.index(-v)

    def recorded_len(self, k: int, c: int) -> int:
        return len(self._s.rec_buf[k][c])


# --------------------------------------------------------------------------- footprints

InputKey: TypeAlias = tuple[object, ...]
"""One input a step reads: ``("red", k, p)``, ``("red_buf", k, c)``, ``("length", c)``,
``("letter_at", c, i)``, ``("recorded_len", k, c)``."""


@dataclass(frozen=True)
class Footprint:
    """The inputs a step may read for given arguments, each with its finite domain."""

    inputs: tuple[tuple[InputKey, tuple[object, ...]], ...]

    @property
    def size(self) -> int:
        n = 1
        for _, dom in self.inputs:
            n *= len(dom)
        return n


Shape = Mapping[str, int]
"""The sizes the footprints depend on: ``procs``, ``chans``, ``snaps``, ``capacity``
(the most messages a buffer may hold), plus the wiring passed separately."""

_BOOL: tuple[object, ...] = (False, True)


def _recording(w: Topology, args: tuple[int, ...], capacity: int) -> Footprint:
    k, p, _c = args
    ins = [c for c in range(len(w.chan_src)) if w.in_mask[p] >> c & 1]
    return Footprint(((("red", k, p), _BOOL), *[(("red_buf", k, d), _BOOL) for d in ins]))


def _turns_red(w: Topology, args: tuple[int, ...], capacity: int) -> Footprint:
    c, _k, _j = args
    d = w.chan_dst[c]
    keys: list[tuple[InputKey, tuple[object, ...]]] = []
    for kk in range(len(w.snaps)):
        keys += [(("red", kk, d), _BOOL), (("red_buf", kk, c), _BOOL)]
    return Footprint(tuple(keys))


def _red_letters_out(w: Topology, args: tuple[int, ...], capacity: int) -> Footprint:
    _p, k, _frm, _d = args
    return Footprint(tuple((("red", k, q), _BOOL) for q in range(len(w.procs))))


def _deliverable(w: Topology, args: tuple[int, ...], capacity: int) -> Footprint:
    c, _i = args
    snaps: tuple[object, ...] = (None, *range(len(w.snaps)))
    keys: list[tuple[InputKey, tuple[object, ...]]] = [
        (("length", c), tuple(range(capacity + 1))),
        (("letter_at", c, 1), snaps),
    ]
    keys += [(("red_buf", kk, c), _BOOL) for kk in range(len(w.snaps))]
    keys += [(("red", kk, w.chan_dst[c]), _BOOL) for kk in range(len(w.snaps))]
    return Footprint(tuple(keys))


FOOTPRINTS: Mapping[str, Callable[[Topology, tuple[int, ...], int], Footprint]] = {
    "Recording": _recording,
    "TurnsRed": _turns_red,
    "RedLettersOut": _red_letters_out,
    "Deliverable": _deliverable,
}
"""Per step the symbolic engine lets a bug class override: the inputs its rule may
read, for given arguments (``Recording``: (k, p, c); ``TurnsRed``: (c, k, j);
``RedLettersOut``: (p, k, from, d) with ``from`` -1 for a starter; ``Deliverable``:
(c, i)) and a buffer capacity.  A rule that reads anything else cannot be
encoded by enumeration; :class:`AssignmentView` says so."""


class AssignmentView:
    """A :class:`StepView` whose state is one assignment of a footprint's inputs;
    reading any other input raises :class:`KeyError` naming it."""

    __slots__ = ("_a", "_w")

    def __init__(self, w: Topology, assignment: Mapping[InputKey, object]) -> None:
        self._w = w
        self._a = assignment

    def _get(self, key: InputKey) -> object:
        if key not in self._a:
            raise KeyError(key)
        return self._a[key]

    @property
    def n_procs(self) -> int:
        return len(self._w.procs)

    @property
    def n_chans(self) -> int:
        return len(self._w.chan_src)

    @property
    def n_snaps(self) -> int:
        return len(self._w.snaps)

    def src(self, c: int) -> int:
        return self._w.chan_src[c]

    def dst(self, c: int) -> int:
        return self._w.chan_dst[c]

    def ins(self, p: int) -> tuple[int, ...]:
        return tuple(c for c in range(len(self._w.chan_src)) if self._w.in_mask[p] >> c & 1)

    def outs(self, p: int) -> tuple[int, ...]:
        return tuple(c for c in range(len(self._w.chan_src)) if self._w.out_mask[p] >> c & 1)

    def red(self, k: int, p: int) -> bool:
        return bool(self._get(("red", k, p)))

    def red_buf(self, k: int, c: int) -> bool:
        return bool(self._get(("red_buf", k, c)))

    def length(self, c: int) -> int:
        v = self._get(("length", c))
        assert isinstance(v, int)
        return v

    def letter_at(self, c: int, i: int) -> int | None:
        v = self._get(("letter_at", c, i))
        assert v is None or isinstance(v, int)
        return v

    def recorded_len(self, k: int, c: int) -> int:
        v = self._get(("recorded_len", k, c))
        assert isinstance(v, int)
        return v


def assignments(fp: Footprint, limit: int = 1 << 14) -> Iterator[dict[InputKey, object]]:
    """Every assignment of the footprint's inputs (``InternalError`` above ``limit``)."""
    if fp.size > limit:
        raise InternalError(
            f"a step reads {len(fp.inputs)} inputs with {fp.size} combinations, more than "
            f"the {limit} the symbolic encoding enumerates"
        )
    keys = [k for k, _ in fp.inputs]
    for values in product(*(dom for _, dom in fp.inputs)):
        yield dict(zip(keys, values, strict=True))
