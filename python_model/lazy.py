r"""LazyChandyLamport.tla (lazy red letters, seeds/002's pseudo-code) mirrored 1:1, as
an :class:`~redletter.python_model.engine.Engine`.

The spec reuses ChandyLamport through ``CL == INSTANCE ChandyLamport`` and adds one
variable, ``owed[k]``: the output buffers of red machines still owed a red letter of
snapshot ``k``.  The mirror does the same: a :class:`LazyState` is ChandyLamport's
:class:`~redletter.python_model.state.State` plus ``owed`` (a bitmask of buffers per
snapshot index), and the actions the spec takes from ``CL`` unchanged (``InternalEvent``,
``ReceiveApp``, the application part of ``SendApp``) are ChandyLamport's own cores
applied to that state.  What the spec changes is written here:

* ``SendApp(c) == MaySend(c) /\ CL!SendApp(c)``: no application message enters a
  buffer still owed a red letter (``MaySend``; the must-fail model binds
  ``SendAnyway == TRUE``);
* ``TurnRedLazily(p, k, b)``: turning red records the state and *owes* ``Out(p)``
  instead of sending the red letters;
* ``SendRedLetter(c) == \E k \in Snap : PayRedLetter(c, k)``: paying one debt;
* ``ReceiveRedLetter(c)`` and ``StartSnapshot(p, k)`` turn red lazily.

The invariants: ``TypeOK`` (CL's, plus ``owed``'s type and
``OwedByRedMachinesOnly``) and ``RedLetterInvariant`` (one red letter, or none and
one owed) are the spec's own; ``Lemma0``, ``Lemma1``, the stable-predicate lemmas and
``ShadowLemma0`` are ChandyLamport's, evaluated by its
:class:`~redletter.python_model.invariants.Checker` on the CL part of the state
(exactly what ``Lemma0 == CL!Lemma0`` says).  The temporal properties and the
fairness (``ReceiptFairness /\ RedLetterFairness``, or the must-fail model's
``RedLetterFairness <- NoRedLetterFairness``) are read from the spec's text.

Action instances, numbered densely (``nc`` buffers, ``np`` machines, ``ns``
snapshots)::

    SendApp(c)              c
    InternalEvent(p)        nc + p
    ReceiveApp(c)           nc + np + c
    PayRedLetter(c, k)      2nc + np + c * ns + k     (the edges say SendRedLetter)
    ReceiveRedLetter(c)     2nc + np + nc*ns + c
    StartSnapshot(p, k)     3nc + np + nc*ns + p * ns + k
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from redletter.errors import InputError, InternalError
from redletter.python_model.actions import (
    _internal_event,
    _receive_app,
    _send_app,
    _start_enabled,
    app_action_bound,
    app_budget_left,
    app_state,
)
from redletter.python_model.cl_engine import snapshot_predicate
from redletter.python_model.config import ModelConfig
from redletter.python_model.engine import ActionInstance, Params, RawParams, state_fingerprint
from redletter.python_model.invariants import Checker, type_ok
from redletter.python_model.state import (
    TLA_NAMES,
    GState,
    Local,
    State,
    _items,
    from_tla,
    to_tla,
)
from redletter.python_model.values import State as TlaState
from redletter.python_model.values import Value, fcn

__all__ = ["ACTION_NAMES", "LazyEngine", "LazyState", "lazy_red_letter_invariant"]

SEND_APP: Final = 0
INTERNAL_EVENT: Final = 1
RECEIVE_APP: Final = 2
SEND_RED_LETTER: Final = 3
RECEIVE_RED_LETTER: Final = 4
START_SNAPSHOT: Final = 5
ACTION_NAMES: Final = (
    "SendApp",
    "InternalEvent",
    "ReceiveApp",
    "SendRedLetter",
    "ReceiveRedLetter",
    "StartSnapshot",
)
#: The operator each action's fairness speaks of (SendRedLetter(c) == \E k : PayRedLetter(c, k)).
_INSTANCE_NAMES: Final = (
    "SendApp",
    "InternalEvent",
    "ReceiveApp",
    "PayRedLetter",
    "ReceiveRedLetter",
    "StartSnapshot",
)


@dataclass(frozen=True, slots=True, eq=False)
class LazyState:
    """A state of LazyChandyLamport: ChandyLamport's variables (the encoding of
    :class:`~redletter.python_model.state.State`) and ``owed[k]``, a bitmask of buffers
    per snapshot index.  The init fields are the spec's variables in order."""

    local: tuple[Local, ...]
    buf: tuple[tuple[int, ...], ...]
    red: tuple[int, ...]
    red_buf: tuple[int, ...]
    rec_machine: tuple[tuple[Local | None, ...], ...]
    rec_buf: tuple[tuple[tuple[int, ...], ...], ...]
    s0: tuple[GState | None, ...]
    sf: tuple[GState | None, ...]
    white_acts: tuple[tuple[tuple[int, int, int, int], ...], ...]
    red_acts: tuple[tuple[tuple[int, int, int, int], ...], ...]
    owed: tuple[int, ...]
    _hash: int = field(init=False, repr=False)
    _cl: State | None = field(init=False, repr=False, default=None)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash(self.key()))

    def key(self) -> tuple[object, ...]:
        """The fields as one tuple (what equality compares)."""
        return (
            self.local,
            self.buf,
            self.red,
            self.red_buf,
            self.rec_machine,
            self.rec_buf,
            self.s0,
            self.sf,
            self.white_acts,
            self.red_acts,
            self.owed,
        )

    def cl(self) -> State:
        """The ChandyLamport part (``CL``'s variables), built once."""
        got = self._cl
        if got is None:
            got = State(
                self.local,
                self.buf,
                self.red,
                self.red_buf,
                self.rec_machine,
                self.rec_buf,
                self.s0,
                self.sf,
                self.white_acts,
                self.red_acts,
            )
            object.__setattr__(self, "_cl", got)
        return got

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, LazyState) or self._hash != other._hash:
            return False
        return self.key() == other.key()


def _lazy(cl: State, owed: tuple[int, ...]) -> LazyState:
    t = LazyState(
        cl.local,
        cl.buf,
        cl.red,
        cl.red_buf,
        cl.rec_machine,
        cl.rec_buf,
        cl.s0,
        cl.sf,
        cl.white_acts,
        cl.red_acts,
        owed,
    )
    object.__setattr__(t, "_cl", cl)
    return t


def _turn_red_lazily(
    cfg: ModelConfig, s: LazyState, p: int, k: int
) -> tuple[
    tuple[int, ...],
    tuple[tuple[Local | None, ...], ...],
    tuple[int, ...],
    tuple[GState | None, ...],
]:
    """``TurnRedLazily(p, k, b)``: the new red, recMachine, owed and S0 (buf' = b)."""
    red = (*s.red[:k], s.red[k] | 1 << p, *s.red[k + 1 :])
    rm = s.rec_machine[k]
    if rm[p] is None:  # recMachine[k] @@ (p :> local[p]): an existing entry wins
        rm = (*rm[:p], s.local[p], *rm[p + 1 :])
    rec_machine = (*s.rec_machine[:k], rm, *s.rec_machine[k + 1 :])
    owed = (*s.owed[:k], s.owed[k] | cfg.out_mask[p], *s.owed[k + 1 :])
    s0 = s.s0 if s.s0[k] is not None else (*s.s0[:k], app_state(s.cl()), *s.s0[k + 1 :])
    return red, rec_machine, owed, s0


def _pay_red_letter(cfg: ModelConfig, s: LazyState, c: int, k: int) -> LazyState:
    letter = -cfg.snaps[k]
    buf = (*s.buf[:c], (*s.buf[c], letter), *s.buf[c + 1 :])
    owed = (*s.owed[:k], s.owed[k] & ~(1 << c), *s.owed[k + 1 :])
    return LazyState(
        s.local,
        buf,
        s.red,
        s.red_buf,
        s.rec_machine,
        s.rec_buf,
        s.s0,
        s.sf,
        s.white_acts,
        s.red_acts,
        owed,
    )


def _receive_red_letter(cfg: ModelConfig, s: LazyState, c: int, i: int, kid: int) -> LazyState:
    p = cfg.chan_dst[c]
    k = cfg.snap_index.get(kid)
    if k is None:
        raise InternalError(f"a red letter of snapshot {kid}, which is not in Snap")
    bc = s.buf[c]
    b = (*s.buf[:c], (*bc[: i - 1], *bc[i:]), *s.buf[c + 1 :])
    turns = cfg.steps.turns_red(cfg, s.cl(), c, k)
    bit = 1 << c
    red_buf = tuple(rb | bit if turns >> j & 1 else rb for j, rb in enumerate(s.red_buf))
    if s.red[k] >> p & 1:
        red, rec_machine, owed, s0 = s.red, s.rec_machine, s.owed, s.s0
    else:
        red, rec_machine, owed, s0 = _turn_red_lazily(cfg, s, p, k)
    sf = s.sf
    g: GState | None = None
    for j in range(len(sf)):
        if sf[j] is None and red_buf[j] == cfg.all_chans:
            if g is None:
                g = app_state(s.cl())
            sf = (*sf[:j], g, *sf[j + 1 :])
    return LazyState(
        s.local, b, red, red_buf, rec_machine, s.rec_buf, s0, sf, s.white_acts, s.red_acts, owed
    )


def _start_snapshot(cfg: ModelConfig, s: LazyState, p: int, k: int) -> LazyState:
    red, rec_machine, owed, s0 = _turn_red_lazily(cfg, s, p, k)
    return LazyState(
        s.local,
        s.buf,
        red,
        s.red_buf,
        rec_machine,
        s.rec_buf,
        s0,
        s.sf,
        s.white_acts,
        s.red_acts,
        owed,
    )


def lazy_successors(
    cfg: ModelConfig, s: LazyState, *, may_send_always: bool = False
) -> Iterator[tuple[int, RawParams, LazyState]]:
    """``Next``'s successors, one per binding, in its order: (action, raw, state)."""
    app = cfg.app
    cl = s.cl()
    local, buf, owed = s.local, s.buf, s.owed
    src, dst = cfg.chan_src, cfg.chan_dst
    nc = len(buf)
    # CL!SendApp and CL!InternalEvent carry the application's bound, AppBudgetLeft
    budget = app_budget_left(cfg, cl)
    for c in range(nc if budget else 0):
        if not may_send_always and any(o >> c & 1 for o in owed):
            continue  # MaySend(c) == \A k \in Snap : c \notin owed[k]
        p = src[c]
        for m in app.sendable(p, dst[c], local[p]):
            yield SEND_APP, (c, m), _lazy(_send_app(cfg, cl, c, m), owed)
    for p in range(len(local) if budget else 0):
        for e in app.events(p, local[p]):
            yield INTERNAL_EVENT, (p, e), _lazy(_internal_event(cfg, cl, p, e), owed)
    deliverable = cfg.steps.deliverable
    for c in range(nc):
        bc = buf[c]
        if not bc:
            continue
        for i in deliverable(cfg, cl, c):
            m = bc[i - 1]
            if m >= 0 and app.can_receive(dst[c], src[c], m, local[dst[c]]):
                yield RECEIVE_APP, (c, i), _lazy(_receive_app(cfg, cl, c, i, m), owed)
    for c in range(nc):
        for k in range(len(owed)):
            if owed[k] >> c & 1:
                yield SEND_RED_LETTER, (c, k), _pay_red_letter(cfg, s, c, k)
    for c in range(nc):
        bc = buf[c]
        if not bc:
            continue
        for i in deliverable(cfg, cl, c):
            m = bc[i - 1]
            if m < 0:
                yield RECEIVE_RED_LETTER, (c, i), _receive_red_letter(cfg, s, c, i, -m)
    for p in range(len(local)):
        for k in range(len(cfg.snaps)):
            if _start_enabled(cfg, cl, p, k) is None:
                yield START_SNAPSHOT, (p, k), _start_snapshot(cfg, s, p, k)


# --------------------------------------------------------------------------- invariants


def lazy_type_ok(cfg: ModelConfig, s: LazyState) -> bool:
    """``TypeOK``: CL's, ``owed \\in [Snap -> SUBSET Chan]`` and
    ``OwedByRedMachinesOnly``."""
    if not type_ok(cfg, s.cl()):
        return False
    for k, o in enumerate(s.owed):
        if o & ~cfg.all_chans:
            return False
        for c in range(len(cfg.chans)):
            if o >> c & 1 and not s.red[k] >> cfg.chan_src[c] & 1:
                return False
    return True


def lazy_red_letter_invariant(cfg: ModelConfig, s: LazyState) -> bool:
    """``RedLetterInvariant``: a buffer from a red machine to a white one holds one red
    letter and owes none, or holds none and owes one."""
    for k, red in enumerate(s.red):
        if not red:
            continue
        letter = -cfg.snaps[k]
        for c, b in enumerate(s.buf):
            if red >> cfg.chan_src[c] & 1 and not red >> cfg.chan_dst[c] & 1:
                n = b.count(letter)
                owes = bool(s.owed[k] >> c & 1)
                if not ((n == 1 and not owes) or (n == 0 and owes)):
                    return False
    return True


_OWN: Final[Mapping[str, Callable[[ModelConfig, LazyState], bool]]] = {
    "TypeOK": lazy_type_ok,
    "RedLetterInvariant": lazy_red_letter_invariant,
}


# --------------------------------------------------------------------------- the engine


class LazyEngine:
    """One model of LazyChandyLamport.tla (see the module docstring)."""

    action_names = ACTION_NAMES
    variables = (*TLA_NAMES.values(), "owed")

    def __init__(self, cfg: ModelConfig) -> None:
        if cfg.spec_module != "LazyChandyLamport":
            raise InternalError(f"{cfg.name} is a model of {cfg.spec_module}")
        self.cfg = cfg
        self.checker = Checker(cfg)
        nc, np_, ns = len(cfg.chans), len(cfg.procs), len(cfg.snaps)
        self._nc, self._ns = nc, ns
        self._base = (0, nc, nc + np_, 2 * nc + np_, 2 * nc + np_ + nc * ns, 3 * nc + np_ + nc * ns)
        self.instance_count = 3 * nc + np_ + nc * ns + np_ * ns
        self.constrained = bool(cfg.constraints)
        self.invariants = cfg.invariants
        self.action_properties = cfg.properties
        self.liveness = cfg.liveness
        self.specification = cfg.specification
        self._may_send_always = cfg.overrides.get("MaySend") == "SendAnyway"
        #: the cfg's overrides of definitions the temporal formulas use
        self.definition_overrides: Mapping[str, str] = {
            k: v for k, v in cfg.overrides.items() if k == "RedLetterFairness" and v != k
        }

    @property
    def name(self) -> str:
        return self.cfg.name

    @property
    def tla_path(self) -> Path:
        return self.cfg.tla_path

    # ------------------------------------------------------------------ the graph

    def init_states(self) -> list[LazyState]:
        """``Init == CL!Init /\\ owed = [k \\in Snap |-> {}]``."""
        from redletter.python_model.actions import init_states

        return [_lazy(s, (0,) * len(self.cfg.snaps)) for s in init_states(self.cfg)]

    def successors(self, s: LazyState) -> Iterator[tuple[int, RawParams, LazyState]]:
        return lazy_successors(self.cfg, s, may_send_always=self._may_send_always)

    def in_model(self, s: LazyState) -> bool:
        return app_action_bound(self.cfg, s.cl()) if self.constrained else True

    def params(self, action: int, raw: RawParams) -> Params:
        cfg = self.cfg
        a, b = raw
        if action == SEND_APP:
            return {"c": list(cfg.chans[a]), "m": b}
        if action == INTERNAL_EVENT:
            return {"p": cfg.procs[a], "e": b}
        if action in (RECEIVE_APP, RECEIVE_RED_LETTER):
            return {"c": list(cfg.chans[a]), "i": b}
        if action == SEND_RED_LETTER:
            return {"c": list(cfg.chans[a]), "k": cfg.snaps[b]}
        return {"p": cfg.procs[a], "k": cfg.snaps[b]}

    def instance_id(self, action: int, raw: RawParams) -> int:
        if action in (SEND_RED_LETTER, START_SNAPSHOT):
            return self._base[action] + raw[0] * self._ns + raw[1]
        return self._base[action] + raw[0]

    def instance_of_id(self, iid: int) -> ActionInstance:
        cfg = self.cfg
        action = max(a for a, b in enumerate(self._base) if b <= iid)
        rest = iid - self._base[action]
        name = _INSTANCE_NAMES[action]
        if action == START_SNAPSHOT:
            p, k = divmod(rest, self._ns)
            return name, (cfg.procs[p], cfg.snaps[k])
        if action == SEND_RED_LETTER:
            c, k = divmod(rest, self._ns)
            return name, (cfg.chans[c], cfg.snaps[k])
        if action == INTERNAL_EVENT:
            return name, (cfg.procs[rest],)
        return name, (cfg.chans[rest],)

    def instance(self, action: int, raw: RawParams) -> ActionInstance:
        return self.instance_of_id(self.instance_id(action, raw))

    # ------------------------------------------------------------------ safety

    def violated_invariant(self, s: LazyState) -> str | None:
        """The first INVARIANT of the cfg ``s`` violates: the lazy spec's own
        ``TypeOK`` and ``RedLetterInvariant``, CL's lemmas on the CL part."""
        complete = [k for k, g in enumerate(s.sf) if g is not None]
        for name in self.invariants:
            own = _OWN.get(name)
            if own is not None:
                if not own(self.cfg, s):
                    return name
            elif complete and not self.checker.holds(name, s.cl(), complete):
                return name
        return None

    def violated_property(self, s: LazyState, t: LazyState) -> str | None:
        """``ShadowLemma0 == [][\\A k \\in Snap : CL!ShadowStep(k)]_vars``."""
        return self.checker.violated_property(s.cl(), t.cl())

    # ------------------------------------------------------------------ liveness

    def constant(self, name: str) -> Value:
        return self.cfg.constants[name]

    def predicate(self, name: str, args: tuple[Value, ...]) -> Callable[[LazyState], bool] | None:
        """``Started(k)``, ``Complete(k)``, ``InProgress(k)``, also as ``CL!...``."""
        return snapshot_predicate(self.cfg, name.removeprefix("CL!"), args)

    # ------------------------------------------------------------------ identity

    def fingerprint(self, s: LazyState) -> int:
        return state_fingerprint(s)

    def to_tla(self, s: LazyState) -> TlaState:
        cfg = self.cfg
        owed = fcn(
            [
                (k, frozenset(c for i, c in enumerate(cfg.chans) if o >> i & 1))
                for k, o in zip(cfg.snaps, s.owed, strict=True)
            ]
        )
        return TlaState([*to_tla(cfg, s.cl()).items(), ("owed", owed)])

    def from_tla(self, t: Mapping[str, Value]) -> LazyState:
        cfg = self.cfg
        cl = from_tla(cfg, t)
        if "owed" not in t:
            raise _bad("missing variables owed")
        d = _items(t["owed"], "owed")
        if set(d) != set(cfg.snaps):
            raise _bad("owed has the wrong domain")
        owed: list[int] = []
        for k in cfg.snaps:
            chans = d[k]
            if not isinstance(chans, frozenset):
                raise _bad("owed[k] is not a set of buffers")
            mask = 0
            for c in chans:
                i = cfg.chan_index.get(c) if isinstance(c, tuple) else None  # type: ignore[arg-type]
                if i is None:
                    raise _bad(f"owed[k] holds {c!r}, which is not a buffer")
                mask |= 1 << i
            owed.append(mask)
        return _lazy(cl, tuple(owed))


def _bad(what: str) -> InputError:
    return InputError(f"not a state of LazyChandyLamport: {what}", code="RL-INPUT-STATE")
