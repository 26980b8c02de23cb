"""The application the snapshot algorithm is superposed on, as z3 terms and as
Python functions.

The spec receives its application as the constant operators ``AppSendable``,
``AppAfterSend``, ``AppEvents``, ``AppAfterEvent``, ``AppCanReceive``,
``AppAfterReceive`` and ``AppMayStart``.  Two theories of them:

* :class:`GenericApp` -- each operator an *uninterpreted* function of the machine,
  its peer, its local state and the message or event (all integers).  A proof with
  this theory holds for every interpretation, hence for every application whose
  local states can be numbered: TokenApp, DiffusingApp and HistoryApp alike.
* :class:`TokenApp` -- ``spec/TokenApp.tla``: a machine's local state is its number
  of tokens, it may send ``1..s`` of them, receives any message, has no internal
  events and may always start.

:meth:`AppTheory.concrete` gives the same functions in Python -- for the generic
theory, read from a z3 model -- so that the concrete interpreter
(:mod:`.concrete`) can replay a counterexample to induction.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from redletter.python_model.z3env import z3

Expr = Any  # z3.ExprRef: z3 ships no type information

__all__ = ["AppTheory", "ConcreteApp", "GenericApp", "TokenApp", "theory"]


@dataclass(frozen=True)
class ConcreteApp:
    """The application's operators as Python functions over integers
    (machines are indices; see :class:`AppTheory` for the argument order)."""

    sendable: Callable[[int, int, int, int], bool]
    after_send: Callable[[int, int, int, int], int]
    events: Callable[[int, int, int], bool]
    after_event: Callable[[int, int, int], int]
    can_receive: Callable[[int, int, int, int], bool]
    after_receive: Callable[[int, int, int, int], int]
    may_start: Callable[[int, int, int], bool]
    calls: list[str] = field(default_factory=list)  #: what the generic theory was asked


class AppTheory(ABC):
    """The application operators as z3 terms.

    Arguments: ``p`` the machine that acts, ``q`` its peer (the receiver of a send,
    the sender of a receipt), ``s`` the acting machine's local state, ``m`` the
    message, ``e`` the event, ``k`` the snapshot id; machines are indices.
    """

    name: str
    has_events: bool

    @abstractmethod
    def sendable(self, p: int, q: int, s: Expr, m: Expr) -> Expr: ...
    @abstractmethod
    def after_send(self, p: int, q: int, s: Expr, m: Expr) -> Expr: ...
    @abstractmethod
    def events(self, p: int, s: Expr, e: Expr) -> Expr: ...
    @abstractmethod
    def after_event(self, p: int, s: Expr, e: Expr) -> Expr: ...
    @abstractmethod
    def can_receive(self, p: int, q: int, s: Expr, m: Expr) -> Expr: ...
    @abstractmethod
    def after_receive(self, p: int, q: int, s: Expr, m: Expr) -> Expr: ...
    @abstractmethod
    def may_start(self, p: int, k: int, s: Expr) -> Expr: ...
    @abstractmethod
    def concrete(self, model: z3.ModelRef | None, procs: tuple[str, ...] = ()) -> ConcreteApp:
        """The same operators in Python (the generic theory reads them from ``model``
        and notes each value it was asked for in ``calls``, naming machines by
        ``procs``)."""


class TokenApp(AppTheory):
    """``spec/TokenApp.tla`` over unbounded token counts."""

    name = "token"
    has_events = False

    def sendable(self, p: int, q: int, s: Expr, m: Expr) -> Expr:
        return z3.And(m >= 1, m <= s)  # m \in 1..s

    def after_send(self, p: int, q: int, s: Expr, m: Expr) -> Expr:
        return s - m

    def events(self, p: int, s: Expr, e: Expr) -> Expr:
        return z3.BoolVal(False)

    def after_event(self, p: int, s: Expr, e: Expr) -> Expr:
        return s

    def can_receive(self, p: int, q: int, s: Expr, m: Expr) -> Expr:
        return z3.BoolVal(True)

    def after_receive(self, p: int, q: int, s: Expr, m: Expr) -> Expr:
        return s + m

    def may_start(self, p: int, k: int, s: Expr) -> Expr:
        return z3.BoolVal(True)

    def concrete(self, model: z3.ModelRef | None, procs: tuple[str, ...] = ()) -> ConcreteApp:
        return ConcreteApp(
            sendable=lambda p, q, s, m: 1 <= m <= s,
            after_send=lambda p, q, s, m: s - m,
            events=lambda p, s, e: False,
            after_event=lambda p, s, e: s,
            can_receive=lambda p, q, s, m: True,
            after_receive=lambda p, q, s, m: s + m,
            may_start=lambda p, k, s: True,
        )


_I = z3.IntSort()
_B = z3.BoolSort()


class GenericApp(AppTheory):
    """Every application operator an uninterpreted function over integers."""

    name = "generic"
    has_events = True

    def __init__(self) -> None:
        self.f_sendable = z3.Function("AppSendable", _I, _I, _I, _I, _B)
        self.f_after_send = z3.Function("AppAfterSend", _I, _I, _I, _I, _I)
        self.f_events = z3.Function("AppEvents", _I, _I, _I, _B)
        self.f_after_event = z3.Function("AppAfterEvent", _I, _I, _I, _I)
        self.f_can_receive = z3.Function("AppCanReceive", _I, _I, _I, _I, _B)
        self.f_after_receive = z3.Function("AppAfterReceive", _I, _I, _I, _I, _I)
        self.f_may_start = z3.Function("AppMayStart", _I, _I, _I, _B)

    def sendable(self, p: int, q: int, s: Expr, m: Expr) -> Expr:
        return self.f_sendable(p, q, s, m)

    def after_send(self, p: int, q: int, s: Expr, m: Expr) -> Expr:
        return self.f_after_send(p, q, s, m)

    def events(self, p: int, s: Expr, e: Expr) -> Expr:
        return self.f_events(p, s, e)

    def after_event(self, p: int, s: Expr, e: Expr) -> Expr:
        return self.f_after_event(p, s, e)

    def can_receive(self, p: int, q: int, s: Expr, m: Expr) -> Expr:
        return self.f_can_receive(p, q, s, m)

    def after_receive(self, p: int, q: int, s: Expr, m: Expr) -> Expr:
        return self.f_after_receive(p, q, s, m)

    def may_start(self, p: int, k: int, s: Expr) -> Expr:
        return self.f_may_start(p, k, s)

    def concrete(self, model: z3.ModelRef | None, procs: tuple[str, ...] = ()) -> ConcreteApp:
        if model is None:
            raise ValueError("the generic application is concrete only in a model")
        m = model
        calls: list[str] = []
        machines = {  # how many leading arguments are machines
            "AppSendable": 2,
            "AppAfterSend": 2,
            "AppCanReceive": 2,
            "AppAfterReceive": 2,
            "AppEvents": 1,
            "AppAfterEvent": 1,
            "AppMayStart": 1,
        }

        def ask(f: Any, *args: int) -> Any:
            value = m.eval(f(*args), model_completion=True)
            shown = str(value).lower() if z3.is_bool(value) else str(value)
            n = machines.get(f.name(), 0)
            named = [
                procs[a] if i < n and 0 <= a < len(procs) else str(a) for i, a in enumerate(args)
            ]
            note = f"{f.name()}({', '.join(named)}) = {shown}"
            if note not in calls:
                calls.append(note)
            return value

        def num(f: Any, *args: int) -> int:
            return int(ask(f, *args).as_long())

        def truth(f: Any, *args: int) -> bool:
            return bool(z3.is_true(ask(f, *args)))

        return ConcreteApp(
            sendable=lambda p, q, s, v: truth(self.f_sendable, p, q, s, v),
            after_send=lambda p, q, s, v: num(self.f_after_send, p, q, s, v),
            events=lambda p, s, e: truth(self.f_events, p, s, e),
            after_event=lambda p, s, e: num(self.f_after_event, p, s, e),
            can_receive=lambda p, q, s, v: truth(self.f_can_receive, p, q, s, v),
            after_receive=lambda p, q, s, v: num(self.f_after_receive, p, q, s, v),
            may_start=lambda p, k, s: truth(self.f_may_start, p, k, s),
            calls=calls,
        )


def theory(name: str) -> AppTheory:
    """The theory of the application called ``name`` (``generic`` or ``token``)."""
    return GenericApp() if name == "generic" else TokenApp()
