r"""The engine interface: what the explorer, the liveness check and the cross-check
need of a spec mirrored in Python.

One spec family (ChandyLamport and its wrappers today; the observer/piggyback,
barrier and lazy-red-letter variants later) implements :class:`Engine` once, and
every generic tool works on it unchanged:

* :func:`redletter.python_model.explore.explore` -- breadth-first search with TLC
  2.15's constraint semantics, invariants and action properties;
* :func:`redletter.python_model.liveness.check_liveness` -- the temporal properties
  of the cfg under the fairness of its SPECIFICATION, both read from the spec;
* :mod:`redletter.python_model.crosscheck` -- the exact comparison with TLC's graph
  (via :meth:`Engine.to_tla` / :meth:`Engine.from_tla`) and the 64-bit
  :meth:`Engine.fingerprint`.

``docs/engine.md`` walks through implementing one.  The contract in brief:

**States** are immutable and hashable (``S``); equal states compare equal and hash
equal within one process.  :meth:`Engine.fingerprint` is a canonical 64-bit value
that is the same in every process (no ``hash()`` of strings), for tools that move
states between processes (Spark, parallel parsing).

**Successors** (the hot loop) are ``(action, raw, t)``: ``action`` an index into
:attr:`Engine.action_names` (the TLA+ operator names, as TLC labels edges), ``raw``
an opaque tuple of small ints that identifies the binding (the operator's own
arguments and any ``\E`` inside it), ``t`` the successor.  One successor per
satisfying binding, in the order TLC counts them, so "states generated" matches.
Everything else is derived lazily from ``(action, raw)``: :meth:`Engine.params` (the
shared-vocabulary parameters of traces) and :meth:`Engine.instance` (the action
instance ``(name, args)`` that fairness is about, e.g. ``("ReceiveApp",
(("p1", "p2"),))``; ``args`` are the TLA+ operator's own arguments, not the
witnesses of an ``\E`` inside it).  :meth:`Engine.instance_id` is the same instance
as a dense integer in ``range(instance_count)``: the liveness check calls it once per
generated successor, so it is plain arithmetic.

**The constraint, invariants and action properties** are those the cfg lists:
:meth:`Engine.in_model` (``True`` when the cfg has no CONSTRAINT),
:meth:`Engine.violated_invariant` and :meth:`Engine.violated_property` return the
first violated name in cfg order, or ``None``.

**Temporal properties**: :attr:`Engine.temporal` gives the cfg's temporal properties
and the fairness of its SPECIFICATION, parsed from the spec's own text
(:mod:`redletter.python_model.temporal`); :meth:`Engine.predicate` evaluates the
state predicates they are built from (``Started(k)``, ``Complete(k)``) by operator
name, and :meth:`Engine.constant` gives the constants their quantifiers range over.

Nothing here costs the hot loop: the explorer binds ``engine.successors``,
``engine.in_model`` and ``engine.violated_invariant`` to locals once, exactly as it
called module functions before.
"""

from __future__ import annotations

import hashlib
import marshal
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from typing import Any, Protocol, TypeAlias, TypeVar

from redletter.python_model.values import State as TlaState
from redletter.python_model.values import Value

__all__ = [
    "ActionInstance",
    "Engine",
    "Params",
    "RawParams",
    "S",
    "Successor",
    "state_fingerprint",
]

S = TypeVar("S", bound=Hashable)


class Keyed(Protocol):
    """A state that gives its fields as a tuple (every engine's states do)."""

    def key(self) -> tuple[object, ...]: ...


def state_fingerprint(s: Keyed) -> int:
    """BLAKE2b (8 bytes, signed) of the state's fields written by :mod:`marshal` in its
    version 2: canonical (the fields are ints, tuples, strings, booleans and ``None``;
    version 2 writes each by its value, with no back-references, so the bytes are the
    same in every process of one Python), unlike ``hash()`` (salted for strings, and
    ``hash(None)`` is an address before Python 3.12).  ``marshal`` rather than ``repr``:
    3 times cheaper (4.5 against 15 us a state), which the distributed BFS pays on
    every successor."""
    fields: Any = s.key()  # marshal's stub names its types; these fields are among them
    digest = hashlib.blake2b(marshal.dumps(fields, 2), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


RawParams: TypeAlias = tuple[int, ...]
"""An opaque binding of an action, small ints (meaningful to its engine only)."""

Params: TypeAlias = dict[str, object]
"""Action parameters in the shared vocabulary of traces, e.g. ``{"c": ["p1", "p2"]}``."""

ActionInstance: TypeAlias = tuple[str, tuple[Value, ...]]
"""An action instance as the spec writes it: operator name and its arguments."""

Successor: TypeAlias = tuple[int, RawParams, S]


class Engine(Protocol[S]):
    """A model of a spec, mirrored in Python (see the module docstring)."""

    @property
    def name(self) -> str:
        """The model's name (``MCToken2``)."""
        ...

    @property
    def action_names(self) -> tuple[str, ...]:
        """The actions' TLA+ names; successors carry an index into this tuple."""
        ...

    @property
    def variables(self) -> tuple[str, ...]:
        """The spec's variables in declaration order (for printing states)."""
        ...

    # ------------------------------------------------------------------ the graph

    def init_states(self) -> Iterable[S]:
        """``Init``: every initial state, in TLC's order."""
        ...

    def successors(self, s: S) -> Iterator[tuple[int, RawParams, S]]:
        """``Next``: one ``(action, raw, t)`` per satisfying binding (hot loop)."""
        ...

    @property
    def constrained(self) -> bool:
        """Does the cfg name a CONSTRAINT?"""
        ...

    def in_model(self, s: S) -> bool:
        """Does ``s`` satisfy every CONSTRAINT of the cfg?"""
        ...

    def params(self, action: int, raw: RawParams) -> Params:
        """The shared-vocabulary parameters of a successor's binding."""
        ...

    def instance(self, action: int, raw: RawParams) -> ActionInstance:
        """The action instance (operator name and arguments) of a binding."""
        ...

    @property
    def instance_count(self) -> int:
        """The number of action instances of the model (see :meth:`instance_id`)."""
        ...

    def instance_id(self, action: int, raw: RawParams) -> int:
        """:meth:`instance` as a dense integer in ``range(instance_count)``."""
        ...

    def instance_of_id(self, iid: int) -> ActionInstance:
        """The inverse of :meth:`instance_id`."""
        ...

    # ------------------------------------------------------------------ safety

    @property
    def invariants(self) -> tuple[str, ...]:
        """The cfg's INVARIANTS, in order."""
        ...

    @property
    def action_properties(self) -> tuple[str, ...]:
        """The cfg's action properties (``[][A]_v`` PROPERTIES), in order."""
        ...

    def violated_invariant(self, s: S) -> str | None:
        """The first INVARIANT ``s`` violates, or ``None``."""
        ...

    def violated_property(self, s: S, t: S) -> str | None:
        """The first action property the step ``s -> t`` violates, or ``None``."""
        ...

    # ------------------------------------------------------------------ liveness

    @property
    def liveness(self) -> tuple[str, ...]:
        """The cfg's temporal PROPERTIES (checked under :attr:`specification`)."""
        ...

    @property
    def specification(self) -> str:
        """The cfg's SPECIFICATION (its fairness is read from the spec)."""
        ...

    @property
    def tla_path(self) -> object:
        """The model's ``MC*.tla`` (a :class:`~pathlib.Path`): where temporal formulas
        are read from, with every module it extends or instantiates."""
        ...

    def constant(self, name: str) -> Value:
        """A constant's value (quantifier domains: ``Chan``, ``Proc``, ``Snap``)."""
        ...

    def predicate(self, name: str, args: tuple[Value, ...]) -> Callable[[S], bool] | None:
        """The state predicate ``name(args)`` of the spec, or ``None`` when the
        engine does not mirror it."""
        ...

    # ------------------------------------------------------------------ identity

    def fingerprint(self, s: S) -> int:
        """A canonical signed 64-bit fingerprint, the same in every process."""
        ...

    def to_tla(self, s: S) -> TlaState:
        """The state as TLC prints it (parsed form; ``print_state`` gives the text)."""
        ...

    def from_tla(self, t: Mapping[str, Value]) -> S:
        """The inverse of :meth:`to_tla` (raises ``InputError`` on a foreign state)."""
        ...
