"""The vocabulary of the every-N induction: sorts, the rigid symbols, one state's
symbols, and the derived notions (in a buffer, the same buffer, started, complete).

Sorts (``z3.DeclareSort``: uninterpreted, of any size, so a proof is one for every
number of machines, snapshots and messages):

* ``Machine`` -- EWD 864's machines; ``link(p, q)``: there is a buffer from p to q
  (any directed graph without self-loops: strong connectivity is not assumed);
* ``Snapshot`` -- the snapshots, any number of them, concurrent;
  ``starter(k, p)``: p may start k (any starters);
* ``Message`` -- the application messages, with their identities: every message
  ever sent in a run, past and future.  ``src(m)``, ``dst(m)`` its buffer,
  ``val(m)`` its value, and ``lt(x, y)``: x is sent before y on the same buffer (a
  strict total order per buffer, the way Ivy keeps unbounded sequences).  A buffer,
  a recorded stream and a shadow buffer are then *sets* of messages, ordered by
  ``lt`` (a recorded stream also by its own order ``rlt``, so that a bug that
  records out of order can be stated);
* ``LocalState``, ``Value``, ``Event`` -- the application's, never quantified: the
  application's operators are uninterpreted functions over them.

Red letters are not messages (a machine that turns red sends one over *each* of
its output buffers: as messages they would need a function from machines to
messages, a cycle Machine -> Message -> Machine that leaves the decidable
fragment).  A buffer's red letter of k is a flag ``has(k, p, q)`` and a cut:
``bl(k, m)`` says the in-buffer message m is ahead of it (every in-buffer message
is, when the buffer carries no letter of k), and ``lo(j, k, p, q)`` orders two
letters that stand in the same buffer.

A state's symbols carry a tag (``red@pre``, ``red@post``): the pre- and post-state
of a step are two copies of the same vocabulary.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import count, product
from typing import Any, TypeAlias

from redletter.python_model.z3env import z3

__all__ = [
    "Expr",
    "Rigid",
    "Sorts",
    "State",
    "Vocabulary",
    "exists",
    "forall",
    "grounded",
    "is_grounded",
]

Expr: TypeAlias = Any  # z3.ExprRef


@dataclass(frozen=True)
class Sorts:
    machine: Any
    snapshot: Any
    message: Any
    local: Any
    value: Any
    event: Any


def _sorts() -> Sorts:
    return Sorts(
        z3.DeclareSort("Machine"),
        z3.DeclareSort("Snapshot"),
        z3.DeclareSort("Message"),
        z3.DeclareSort("LocalState"),
        z3.DeclareSort("Value"),
        z3.DeclareSort("Event"),
    )


_fresh = count()


def _vars(sort: Any, n: int, stem: str) -> list[Expr]:
    i = next(_fresh)
    return [z3.Const(f"{stem}{j}_{i}", sort) for j in range(n)]


_GROUND: list[Mapping[Any, Sequence[Expr]]] = []


def is_grounded() -> bool:
    """Inside a :func:`grounded` block."""
    return bool(_GROUND)


@contextmanager
def grounded(domains: Mapping[Any, Sequence[Expr]]) -> Iterator[None]:
    """Within this block :func:`forall` and :func:`exists` over a sort of ``domains``
    expand into a conjunction (disjunction) over its constants: a formula built here
    speaks of a finite instance only (the bounded search for small counterexamples,
    and the tests that pin a concrete state)."""
    _GROUND.append(domains)
    try:
        yield
    finally:
        _GROUND.pop()


def _expand(sorts: Sequence[Any], body: Callable[..., Expr], *, conj: bool) -> Expr:
    domains = _GROUND[-1]
    terms = [body(*xs) for xs in product(*(domains[s] for s in sorts))]
    if not terms:
        return z3.BoolVal(conj)
    return z3.And(*terms) if conj else z3.Or(*terms)


def forall(sorts: list[Any], body: Callable[..., Expr], stem: str = "v") -> Expr:
    """``\\A x1 : sorts[0], ... : body(x1, ...)`` over fresh bound variables (in a
    :func:`grounded` block: the conjunction over the domains' constants)."""
    if _GROUND and all(s in _GROUND[-1] for s in sorts):
        return _expand(sorts, body, conj=True)
    xs = [_vars(s, 1, stem)[0] for s in sorts]
    return z3.ForAll(xs, body(*xs))


def exists(sorts: list[Any], body: Callable[..., Expr], stem: str = "w") -> Expr:
    """``\\E x1 : sorts[0], ... : body(x1, ...)`` (grounded: the disjunction)."""
    if _GROUND and all(s in _GROUND[-1] for s in sorts):
        return _expand(sorts, body, conj=False)
    xs = [_vars(s, 1, stem)[0] for s in sorts]
    return z3.Exists(xs, body(*xs))


class Fn:
    """A z3 function symbol, applied without the Python bindings' per-call checks
    (their sort checks cost most of the time of building a question; the arguments
    here are always terms of the right sorts)."""

    __slots__ = ("ctx", "decl", "wrap")

    def __init__(self, decl: Any) -> None:
        self.decl = decl
        self.ctx = decl.ctx
        self.wrap = z3.BoolRef if decl.range().kind() == z3.Z3_BOOL_SORT else z3.ExprRef

    def __call__(self, *args: Expr) -> Expr:
        arr = (z3.Ast * len(args))()
        for i, a in enumerate(args):
            arr[i] = a.as_ast()
        return self.wrap(
            z3.Z3_mk_app(self.ctx.ref(), self.decl.as_func_decl(), len(args), arr), self.ctx
        )

    def name(self) -> str:
        return str(self.decl.name())


def _fn(name: str, *sorts: Any) -> Fn:
    return Fn(z3.Function(name, *sorts))


class Rigid:
    """The symbols no step changes: the network, the messages' buffers, values and
    order, the starters, and the application's operators."""

    def __init__(self, s: Sorts) -> None:
        M, K, Msg, L, V, E = s.machine, s.snapshot, s.message, s.local, s.value, s.event
        B = z3.BoolSort()
        self.s = s
        self.link = _fn("link", M, M, B)
        self.src = _fn("src", Msg, M)
        self.dst = _fn("dst", Msg, M)
        self.val = _fn("val", Msg, V)
        self.lt = _fn("lt", Msg, Msg, B)
        self.starter = _fn("starter", K, M, B)
        # the application (EWD 864's machines' own actions), uninterpreted
        self.sendable = _fn("AppSendable", M, M, L, V, B)
        self.after_send = _fn("AppAfterSend", M, M, L, V, L)
        self.events = _fn("AppEvents", M, L, E, B)
        self.after_event = _fn("AppAfterEvent", M, L, E, L)
        self.can_receive = _fn("AppCanReceive", M, M, L, V, B)
        self.after_receive = _fn("AppAfterReceive", M, M, L, V, L)
        self.may_start = _fn("AppMayStart", M, K, L, B)

    def same_chan(self, x: Expr, y: Expr) -> Expr:
        """x and y are messages of the same buffer."""
        return z3.And(self.src(x) == self.src(y), self.dst(x) == self.dst(y))

    def on(self, x: Expr, p: Expr, q: Expr) -> Expr:
        """Message x is on the buffer from p to q."""
        return z3.And(self.src(x) == p, self.dst(x) == q)

    def axioms(self) -> list[tuple[str, Expr]]:
        """What every network and every run's messages satisfy."""
        M, Msg = self.s.machine, self.s.message
        lt, link = self.lt, self.link
        return [
            ("NoBufferToItself", forall([M], lambda p: z3.Not(link(p, p)))),
            ("MessagesTravelOnBuffers", forall([Msg], lambda m: link(self.src(m), self.dst(m)))),
            ("SendOrderIrreflexive", forall([Msg], lambda x: z3.Not(lt(x, x)))),
            (
                "SendOrderTransitive",
                forall(
                    [Msg, Msg, Msg],
                    lambda x, y, z: z3.Implies(z3.And(lt(x, y), lt(y, z)), lt(x, z)),
                ),
            ),
            (
                "SendOrderWithinBuffer",
                forall([Msg, Msg], lambda x, y: z3.Implies(lt(x, y), self.same_chan(x, y))),
            ),
            (
                "SendOrderTotal",
                forall(
                    [Msg, Msg],
                    lambda x, y: z3.Implies(
                        z3.And(self.same_chan(x, y), x != y), z3.Or(lt(x, y), lt(y, x))
                    ),
                ),
            ),
        ]


#: The state's symbols: name -> (argument sorts, result sort), by sort names.
STATE_SYMBOLS: dict[str, tuple[tuple[str, ...], str]] = {
    "loc": (("machine",), "local"),
    "sent": (("message",), "bool"),
    "rcvd": (("message",), "bool"),
    "red": (("snapshot", "machine"), "bool"),
    "rb": (("snapshot", "machine", "machine"), "bool"),
    "rm": (("snapshot", "machine"), "local"),
    "has": (("snapshot", "machine", "machine"), "bool"),
    "bl": (("snapshot", "message"), "bool"),
    "lo": (("snapshot", "snapshot", "machine", "machine"), "bool"),
    "rec": (("snapshot", "message"), "bool"),
    "rlt": (("snapshot", "message", "message"), "bool"),
}
"""Reality: ``loc`` (local[p]); ``sent``, ``rcvd`` (a buffer holds the messages sent
and not received); ``red`` (red[k]); ``rb`` (redBuf[k]); ``rm`` (recMachine[k]);
``has``, ``bl``, ``lo`` (the red letters); ``rec`` with its order ``rlt``
(recBuf[k])."""


class State:
    """One state's symbols (a tag names the copy)."""

    def __init__(self, s: Sorts, tag: str) -> None:
        self.tag = tag
        self.sorts = s
        self.fns: dict[str, Any] = {}
        for name, (args, res) in STATE_SYMBOLS.items():
            dom = [getattr(s, a) for a in args]
            rng = z3.BoolSort() if res == "bool" else getattr(s, res)
            self.fns[name] = _fn(f"{name}@{tag}", *dom, rng)

    def __getattr__(self, name: str) -> Any:
        fns = self.__dict__.get("fns", {})
        if name in fns:
            return fns[name]
        raise AttributeError(name)

    def items(self) -> Iterator[tuple[str, Any]]:
        return iter(self.fns.items())


class Vocabulary:
    """The sorts, the rigid symbols, and a constructor of state copies."""

    def __init__(self) -> None:
        self.sorts = _sorts()
        self.rigid = Rigid(self.sorts)

    def state(self, tag: str) -> State:
        return State(self.sorts, tag)
