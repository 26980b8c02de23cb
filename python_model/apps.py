"""The applications the snapshot algorithm is superposed on, one class per TLA+ module.

Each mirrors its module's interface operator for operator (see TokenApp.tla):
``local_init`` (LocalInit), ``sendable`` (Sendable), ``after_send`` (AfterSend),
``events`` (Events), ``after_event`` (AfterEvent), ``can_receive`` (CanReceive),
``after_receive`` (AfterReceive), ``may_start`` (MayStart), ``stable`` (Stable),
``inv`` (Inv) and ``in_local_states`` (membership in LocalStates).  Machines ``p``,
``q`` are indices into ``ModelConfig.procs``; ``k`` is a snapshot id; a global app
state ``g`` is a :data:`redletter.python_model.state.GState`.

Local states: TokenApp an ``int``; DiffusingApp a tuple ``(active, sent, recvd)``;
HistoryApp a tuple of event names.

Each application has two codecs for its local states, side by side: TLA+ values
(``local_to_tla`` / ``local_from_tla``, as TLC prints them) and JSON
(``local_to_json`` / ``local_from_json``, as the conformance protocol and the
event logs carry them): a TokenApp state is a JSON integer, a DiffusingApp state
``{"active": bool, "sent": int, "recvd": int}``, a HistoryApp state a list of
event names.  The harness and every judge use these, so the rules and the
encodings live here only.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import TypeAlias, cast

from redletter.errors import InputError
from redletter.python_model.state import GState, Local
from redletter.python_model.values import FALSE, TRUE, Bool, Record, Value, apply_fn

__all__ = ["App", "DiffusingApp", "HistoryApp", "Json", "TokenApp", "make_app"]

Json: TypeAlias = "bool | int | float | str | list[Json] | dict[str, Json] | None"
"""A JSON value as :func:`json.loads` returns it."""

_NONE: tuple[int, ...] = ()


class App(ABC):
    """The interface every application module offers (see TokenApp.tla)."""

    module: str

    @abstractmethod
    def local_init(self, p: int) -> Local: ...
    @abstractmethod
    def sendable(self, p: int, q: int, s: Local) -> Sequence[int]: ...
    @abstractmethod
    def after_send(self, p: int, q: int, m: int, s: Local) -> Local: ...
    @abstractmethod
    def events(self, p: int, s: Local) -> Sequence[int]: ...
    @abstractmethod
    def after_event(self, p: int, e: int, s: Local) -> Local: ...
    @abstractmethod
    def can_receive(self, p: int, q: int, m: int, s: Local) -> bool: ...
    @abstractmethod
    def after_receive(self, p: int, q: int, m: int, s: Local) -> Local: ...
    @abstractmethod
    def may_start(self, p: int, k: int, s: Local) -> bool: ...
    @abstractmethod
    def stable(self, g: GState) -> bool: ...
    @abstractmethod
    def inv(self, g: GState) -> bool: ...
    @abstractmethod
    def in_local_states(self, s: Local) -> bool: ...
    @abstractmethod
    def local_to_tla(self, s: Local) -> Value: ...
    @abstractmethod
    def local_from_tla(self, v: Value) -> Local: ...
    @abstractmethod
    def local_to_json(self, s: Local) -> Json:
        """The local state in the protocol's JSON encoding."""

    @abstractmethod
    def local_from_json(self, v: Json) -> Local | None:
        """The local state a JSON value encodes, or ``None`` if it encodes none."""


class TokenApp(App):
    """TokenApp.tla: a machine holds a number of tokens; a message carries some."""

    module = "TokenApp"

    def __init__(self, tokens: Sequence[int]) -> None:
        self.tokens = tuple(tokens)
        self.total = sum(self.tokens)  # Total == Sum(Tokens)

    def local_init(self, p: int) -> Local:
        return self.tokens[p]

    def sendable(self, p: int, q: int, s: Local) -> Sequence[int]:
        return range(1, cast(int, s) + 1)  # 1..s

    def after_send(self, p: int, q: int, m: int, s: Local) -> Local:
        return cast(int, s) - m

    def events(self, p: int, s: Local) -> Sequence[int]:
        return _NONE

    def after_event(self, p: int, e: int, s: Local) -> Local:
        return s

    def can_receive(self, p: int, q: int, m: int, s: Local) -> bool:
        return True

    def after_receive(self, p: int, q: int, m: int, s: Local) -> Local:
        return cast(int, s) + m

    def may_start(self, p: int, k: int, s: Local) -> bool:
        return True

    def tokens_in(self, g: GState) -> int:
        """TokensIn(g): held by machines plus travelling."""
        return sum(cast(int, x) for x in g[0]) + sum(sum(b) for b in g[1])

    def stable(self, g: GState) -> bool:
        return self.tokens_in(g) == self.total

    def inv(self, g: GState) -> bool:
        return self.tokens_in(g) == self.total

    def in_local_states(self, s: Local) -> bool:
        return type(s) is int and 0 <= s <= self.total

    def local_to_tla(self, s: Local) -> Value:
        return cast(int, s)

    def local_from_tla(self, v: Value) -> Local:
        if type(v) is not int:
            raise InputError(
                f"a TokenApp local state is an integer, not {v!r}", code="RL-INPUT-STATE"
            )
        return v

    def local_to_json(self, s: Local) -> Json:
        return cast(int, s)

    def local_from_json(self, v: Json) -> Local | None:
        return v if type(v) is int else None


class DiffusingApp(App):
    """DiffusingApp.tla: a diffusing computation; local state (active, sent, recvd)."""

    module = "DiffusingApp"

    def __init__(self, root: int, budget: int) -> None:
        self.root = root
        self.budget = budget

    def local_init(self, p: int) -> Local:
        return (p == self.root, 0, 0)

    def sendable(self, p: int, q: int, s: Local) -> Sequence[int]:
        active, sent, _ = cast(tuple[bool, int, int], s)
        return (1,) if active and sent < self.budget else _NONE

    def after_send(self, p: int, q: int, m: int, s: Local) -> Local:
        active, sent, recvd = cast(tuple[bool, int, int], s)
        return (active, sent + 1, recvd)

    def events(self, p: int, s: Local) -> Sequence[int]:
        return (0,) if cast(tuple[bool, int, int], s)[0] else _NONE  # event 0: become idle

    def after_event(self, p: int, e: int, s: Local) -> Local:
        _, sent, recvd = cast(tuple[bool, int, int], s)
        return (False, sent, recvd)

    def can_receive(self, p: int, q: int, m: int, s: Local) -> bool:
        return True

    def after_receive(self, p: int, q: int, m: int, s: Local) -> Local:
        _, sent, recvd = cast(tuple[bool, int, int], s)
        return (True, sent, recvd + 1)

    def may_start(self, p: int, k: int, s: Local) -> bool:
        return True

    def stable(self, g: GState) -> bool:
        """Terminated(g)."""
        return not any(cast(tuple[bool, int, int], x)[0] for x in g[0]) and not any(g[1])

    def inv(self, g: GState) -> bool:
        ls = cast(tuple[tuple[bool, int, int], ...], g[0])
        return sum(x[1] for x in ls) == sum(x[2] for x in ls) + sum(len(b) for b in g[1])

    def in_local_states(self, s: Local) -> bool:
        if not (isinstance(s, tuple) and len(s) == 3):
            return False
        active, sent, recvd = s
        return (
            isinstance(active, bool)
            and type(sent) is int
            and 0 <= sent <= self.budget
            and type(recvd) is int
            and recvd >= 0
        )

    def local_to_tla(self, s: Local) -> Value:
        active, sent, recvd = cast(tuple[bool, int, int], s)
        return Record((("active", TRUE if active else FALSE), ("recvd", recvd), ("sent", sent)))

    def local_from_tla(self, v: Value) -> Local:
        if not (isinstance(v, Record) and set(v) == {"active", "sent", "recvd"}):
            raise InputError(f"not a DiffusingApp local state: {v!r}", code="RL-INPUT-STATE")
        active, sent, recvd = v["active"], v["sent"], v["recvd"]
        if not (isinstance(active, Bool) and type(sent) is int and type(recvd) is int):
            raise InputError(f"not a DiffusingApp local state: {v!r}", code="RL-INPUT-STATE")
        return (active.value, sent, recvd)

    def local_to_json(self, s: Local) -> Json:
        active, sent, recvd = cast(tuple[bool, int, int], s)
        return {"active": active, "sent": sent, "recvd": recvd}

    def local_from_json(self, v: Json) -> Local | None:
        if isinstance(v, dict) and set(v) == {"active", "sent", "recvd"}:
            active, sent, recvd = v["active"], v["sent"], v["recvd"]
            if isinstance(active, bool) and type(sent) is int and type(recvd) is int:
                return (active, sent, recvd)
        return None


_KINDS = ("internal", "send", "receive")


class HistoryApp(App):
    """HistoryApp.tla: each machine runs a fixed script; its state is its event names."""

    module = "HistoryApp"

    def __init__(
        self,
        script: Sequence[Sequence[tuple[str, str, int]]],
        start_after: Mapping[int, int],
    ) -> None:
        # script[p][i] = (name, kind, peer index) of p's (i+1)-th event
        self.script = tuple(tuple(s) for s in script)
        self.start_after = dict(start_after)
        self.names = frozenset(e[0] for s in self.script for e in s)

    def _next_is(self, p: int, s: Local, kind: str, q: int) -> bool:
        """NextIs(p, s, kind, q)."""
        n = len(cast(tuple[str, ...], s))
        sc = self.script[p]
        return n < len(sc) and sc[n][1] == kind and sc[n][2] == q

    def _did(self, p: int, s: Local) -> Local:
        """Did(p, s): s with p's next event's name appended."""
        t = cast(tuple[str, ...], s)
        return (*t, self.script[p][len(t)][0])

    def local_init(self, p: int) -> Local:
        return ()

    def sendable(self, p: int, q: int, s: Local) -> Sequence[int]:
        if self._next_is(p, s, "send", q):
            return (len(cast(tuple[str, ...], s)) + 1,)
        return _NONE

    def after_send(self, p: int, q: int, m: int, s: Local) -> Local:
        return self._did(p, s)

    def events(self, p: int, s: Local) -> Sequence[int]:
        if self._next_is(p, s, "internal", p):
            return (len(cast(tuple[str, ...], s)) + 1,)
        return _NONE

    def after_event(self, p: int, e: int, s: Local) -> Local:
        return self._did(p, s)

    def can_receive(self, p: int, q: int, m: int, s: Local) -> bool:
        return self._next_is(p, s, "receive", q)

    def after_receive(self, p: int, q: int, m: int, s: Local) -> Local:
        return self._did(p, s)

    def may_start(self, p: int, k: int, s: Local) -> bool:
        return len(cast(tuple[str, ...], s)) == self.start_after[k]

    def count(self, p: int, n: int, kind: str, q: int) -> int:
        """Count(p, n, kind, q)."""
        return sum(1 for e in self.script[p][:n] if e[1] == kind and e[2] == q)

    def inv_on(self, g: GState, chans: Sequence[tuple[int, int]]) -> bool:
        loc = cast(tuple[tuple[str, ...], ...], g[0])
        for ci, (src, dst) in enumerate(chans):
            sent = self.count(src, len(loc[src]), "send", dst)
            recv = self.count(dst, len(loc[dst]), "receive", src)
            if not (recv <= sent and len(g[1][ci]) == sent - recv):
                return False
        return True

    chan_pairs: tuple[tuple[int, int], ...] = ()

    def inv(self, g: GState) -> bool:
        return self.inv_on(g, self.chan_pairs)

    def stable(self, g: GState) -> bool:
        """Terminated(g): every script has run to its end and no message is in flight."""
        loc = cast(tuple[tuple[str, ...], ...], g[0])
        if any(g[1]):
            return False
        return all(len(loc[p]) == len(self.script[p]) for p in range(len(self.script)))

    def in_local_states(self, s: Local) -> bool:
        return isinstance(s, tuple) and all(x in self.names for x in s)

    def local_to_tla(self, s: Local) -> Value:
        return cast(tuple[str, ...], s)

    def local_from_tla(self, v: Value) -> Local:
        if not (isinstance(v, tuple) and all(isinstance(x, str) for x in v)):
            raise InputError(f"not a HistoryApp local state: {v!r}", code="RL-INPUT-STATE")
        return v

    def local_to_json(self, s: Local) -> Json:
        return list(cast(tuple[str, ...], s))

    def local_from_json(self, v: Json) -> Local | None:
        if isinstance(v, list) and all(isinstance(x, str) for x in v):
            return tuple(str(x) for x in v)
        return None


def make_app(
    module: str,
    constants: Mapping[str, Value],
    procs: tuple[str, ...],
    chans: tuple[tuple[str, str], ...],
    snaps: tuple[int, ...],
    *,
    path: str,
) -> App:
    """The application ``module`` with the model's constants."""

    def bad(what: str) -> InputError:
        return InputError(what, path=path, code="RL-INPUT-MODEL")

    pidx = {p: i for i, p in enumerate(procs)}
    if module == "TokenApp":
        tokens: list[int] = []
        for p in procs:
            try:
                t = apply_fn(constants["Tokens"], p)
            except KeyError:
                raise bad(f"Tokens has no entry for {p}") from None
            if type(t) is not int or t < 0:
                raise bad(f"Tokens[{p}] must be a natural number")
            tokens.append(t)
        return TokenApp(tokens)
    if module == "DiffusingApp":
        root, budget = constants["Root"], constants["Budget"]
        if not isinstance(root, str) or root not in pidx:
            raise bad("Root must be one of the machines")
        if type(budget) is not int or budget < 0:
            raise bad("Budget must be a natural number")
        return DiffusingApp(pidx[root], budget)
    if module == "HistoryApp":
        script: list[list[tuple[str, str, int]]] = []
        for p in procs:
            try:
                events = apply_fn(constants["Script"], p)
            except KeyError:
                raise bad(f"Script has no entry for {p}") from None
            if not isinstance(events, tuple):
                raise bad(f"Script[{p}] must be a sequence of events")
            row: list[tuple[str, str, int]] = []
            for e in events:
                if not (
                    isinstance(e, Record)
                    and isinstance(e.get("name"), str)
                    and e.get("kind") in _KINDS
                    and e.get("peer") in pidx
                ):
                    raise bad(f"Script[{p}] has a malformed event {e!r}")
                row.append((str(e["name"]), str(e["kind"]), pidx[str(e["peer"])]))
            script.append(row)
        start_after: dict[int, int] = {}
        for k in snaps:
            try:
                n = apply_fn(constants["StartAfter"], k)
            except KeyError:
                raise bad(f"StartAfter has no entry for snapshot {k}") from None
            if type(n) is not int:
                raise bad(f"StartAfter[{k}] must be an integer")
            start_after[k] = n
        app = HistoryApp(script, start_after)
        app.chan_pairs = tuple((pidx[a], pidx[b]) for a, b in chans)
        return app
    raise bad(f"unknown application module {module}")
