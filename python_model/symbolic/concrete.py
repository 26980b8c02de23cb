"""A tiny concrete interpreter of the same transition relation the z3 encoding states.

It is written independently of :mod:`redletter.python_model.symbolic.encoding` (plain Python
over tuples) so that every trace the solver returns is replayed and checked here:
a disagreement is a bug in one of the two and raises :class:`InternalError`.

States are plain immutable Python values (:class:`CState`), steps are the shared
vocabulary ``(action, params)``.  Besides the algorithm's variables, the interpreter
keeps the spec's history variables (S0, Sf, whiteActs, redActs), so a trace exports
to ITF with every variable of ``ChandyLamport.tla``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal, TypeAlias

from frozendict import frozendict

from redletter.errors import InputError
from redletter.python_model.symbolic.bughook import CStateView, bug_of
from redletter.python_model.symbolic.params import Chan, SymParams
from redletter.python_model.values import Record, State, Value, fcn

ParamValue: TypeAlias = int | str | Chan
Params: TypeAlias = frozendict[str, ParamValue]
Step: TypeAlias = tuple[str, Params]
"""``(action, params)`` in the shared vocabulary; ``c`` is a ``(src, dst)`` tuple."""

ACTIONS: tuple[str, ...] = (
    "SendApp",
    "InternalEvent",
    "ReceiveApp",
    "ReceiveRedLetter",
    "StartSnapshot",
)


@dataclass(frozen=True)
class Msg:
    """A message: an application message (kind "app", snap 0) or a red letter (val 0)."""

    kind: Literal["app", "red"]
    snap: int
    val: int


def app_msg(v: int) -> Msg:
    return Msg("app", 0, v)


def red_letter(k: int) -> Msg:
    return Msg("red", k, 0)


GState: TypeAlias = tuple[tuple[int, ...], tuple[tuple[int, ...], ...]]
"""A global application state: (tokens per machine, app values per buffer)."""

Act: TypeAlias = tuple[str, str, str, int]
"""An application action (kind, p, q, val) as in the spec's RecordAct."""


@dataclass(frozen=True)
class CState:
    """One state.  Tuples are indexed like ``params.procs`` / ``chans`` / ``snaps``."""

    local: tuple[int, ...]
    buf: tuple[tuple[Msg, ...], ...]
    red: tuple[frozenset[str], ...]
    red_buf: tuple[frozenset[Chan], ...]
    rec_machine: tuple[frozendict[str, int], ...]
    rec_buf: tuple[tuple[tuple[int, ...], ...], ...]
    s0: tuple[GState | None, ...] = ()
    sf: tuple[GState | None, ...] = ()
    white_acts: tuple[tuple[Act, ...], ...] = ()
    red_acts: tuple[tuple[Act, ...], ...] = ()

    def core(self) -> tuple[object, ...]:
        """The algorithm's variables, without the history (what z3 encodes)."""
        return (self.local, self.buf, self.red, self.red_buf, self.rec_machine, self.rec_buf)


def init_state(params: SymParams) -> CState:
    """Init: "Initially all machines and all buffers are white"."""
    ns = len(params.snaps)
    return CState(
        local=params.tokens,
        buf=tuple(() for _ in params.chans),
        red=tuple(frozenset() for _ in range(ns)),
        red_buf=tuple(frozenset() for _ in range(ns)),
        rec_machine=tuple(frozendict() for _ in range(ns)),
        rec_buf=tuple(tuple(() for _ in params.chans) for _ in range(ns)),
        s0=tuple(None for _ in range(ns)),
        sf=tuple(None for _ in range(ns)),
        white_acts=tuple(() for _ in range(ns)),
        red_acts=tuple(() for _ in range(ns)),
    )


def _with_history(params: SymParams, s: CState) -> CState:
    ns = len(params.snaps)
    if len(s.s0) == ns:
        return s
    return replace(
        s,
        s0=tuple(None for _ in range(ns)),
        sf=tuple(None for _ in range(ns)),
        white_acts=tuple(() for _ in range(ns)),
        red_acts=tuple(() for _ in range(ns)),
    )


def app_state(s: CState) -> GState:
    return (s.local, tuple(tuple(m.val for m in b if m.kind == "app") for b in s.buf))


def started(s: CState, ki: int) -> bool:
    return bool(s.red[ki])


def complete(params: SymParams, s: CState, ki: int) -> bool:
    return len(s.red_buf[ki]) == len(params.chans)


def in_progress(params: SymParams, s: CState, ki: int) -> bool:
    return started(s, ki) and not complete(params, s, ki)


def step(action: str, **params: ParamValue) -> Step:
    """Build a step: ``step("SendApp", c=("p1", "p2"), m=1)``."""
    if action not in ACTIONS:
        raise InputError(f"unknown action {action!r}; expected one of {', '.join(ACTIONS)}")
    return (action, frozendict(params))


def step_to_json(st: Step) -> tuple[str, dict[str, object]]:
    """``(action, params)`` with ``c`` as a JSON list, as ITF and schedules carry it."""
    action, ps = st
    return action, {k: (list(v) if isinstance(v, tuple) else v) for k, v in ps.items()}


# --------------------------------------------------------------------------- actions


def _deliverable(params: SymParams, s: CState, ci: int) -> range | list[int]:
    """Deliverable(c): FIFO, or the registry's rule where the variant overrides it."""
    b = s.buf[ci]
    if not b:
        return range(0)
    bug = bug_of(params.mutant)
    if bug is not None and bug.step == "Deliverable" and bug.rule is not None:
        view = CStateView(params, s)
        return [i for i in range(1, len(b) + 1) if bug.rule(view, ci, i)]
    return range(1, 2)


def _recording(params: SymParams, s: CState, ki: int, p: str, ci: int) -> bool:
    """Recording(k, p, c), or the registry's rule where the variant overrides it."""
    bug = bug_of(params.mutant)
    if bug is not None and bug.step == "Recording" and bug.rule is not None:
        return bool(bug.rule(CStateView(params, s), ki, params.proc_index(p), ci))
    return p in s.red[ki] and params.chans[ci] not in s.red_buf[ki]


def _record_act(params: SymParams, s: CState, a: Act) -> CState:
    white = list(s.white_acts)
    redl = list(s.red_acts)
    for ki in range(len(params.snaps)):
        if in_progress(params, s, ki):
            if a[1] in s.red[ki]:
                redl[ki] = (*redl[ki], a)
            else:
                white[ki] = (*white[ki], a)
    return replace(s, white_acts=tuple(white), red_acts=tuple(redl))


def _turn_red(
    params: SymParams, s: CState, p: str, ki: int, b: tuple[tuple[Msg, ...], ...], frm: int
) -> CState | None:
    """TurnRed(p, k, b, from) (``frm``: the buffer index of the red letter, -1 for a
    starter); ``None`` when a buffer would exceed the capacity."""
    k = params.snaps[ki]
    outs = params.out_chans(p)
    bug = bug_of(params.mutant)
    if bug is not None and bug.step == "RedLettersOut" and bug.rule is not None:
        view = CStateView(params, s)
        outs = tuple(d for d in outs if bug.rule(view, params.proc_index(p), ki, frm, d))
    nb = list(b)
    for ci in outs:
        if len(nb[ci]) >= params.capacity:
            return None
        nb[ci] = (*nb[ci], red_letter(k))
    red = list(s.red)
    red[ki] = s.red[ki] | {p}
    rm = list(s.rec_machine)
    rm[ki] = frozendict({**s.rec_machine[ki], p: s.local[params.proc_index(p)]})
    s0 = list(s.s0)
    if not started(s, ki):
        s0[ki] = app_state(s)
    return replace(s, red=tuple(red), rec_machine=tuple(rm), buf=tuple(nb), s0=tuple(s0))


def apply(params: SymParams, s: CState, st: Step) -> CState | None:
    """The successor of ``s`` by step ``st``, or ``None`` when the step is disabled."""
    s = _with_history(params, s)
    action, ps = st
    if action in ("SendApp", "ReceiveApp", "ReceiveRedLetter"):
        c_any = ps.get("c")
        if not isinstance(c_any, tuple) or c_any not in params.chans:
            return None
        c: Chan = c_any
        ci = params.chan_index(c)
        src, dst = c
    if action == "SendApp":
        m = ps.get("m")
        pi = params.proc_index(src)
        if not isinstance(m, int) or not 1 <= m <= s.local[pi]:
            return None
        if len(s.buf[ci]) >= params.capacity:
            return None
        local = list(s.local)
        local[pi] -= m
        buf = list(s.buf)
        buf[ci] = (*buf[ci], app_msg(m))
        nxt = replace(s, local=tuple(local), buf=tuple(buf))
        return _record_act(params, nxt, ("send", src, dst, m))
    if action == "InternalEvent":
        return None  # Events(p, s) == {} for the token app
    if action in ("ReceiveApp", "ReceiveRedLetter"):
        i = ps.get("i")
        if not isinstance(i, int) or i not in _deliverable(params, s, ci):
            return None
        msg = s.buf[ci][i - 1]
        b = list(s.buf)
        b[ci] = s.buf[ci][: i - 1] + s.buf[ci][i:]
        if action == "ReceiveApp":
            if msg.kind != "app":
                return None
            local = list(s.local)
            local[params.proc_index(dst)] += msg.val
            rb = list(s.rec_buf)
            for ki in range(len(params.snaps)):
                if _recording(params, s, ki, dst, ci):
                    if len(rb[ki][ci]) >= params.record_capacity:
                        return None
                    row = list(rb[ki])
                    row[ci] = (*row[ci], msg.val)
                    rb[ki] = tuple(row)
            nxt = replace(s, local=tuple(local), buf=tuple(b), rec_buf=tuple(rb))
            return _record_act(params, nxt, ("receive", dst, src, msg.val))
        if msg.kind != "red":
            return None
        ki = params.snap_index(msg.snap)
        turns = {ki}
        bug = bug_of(params.mutant)
        if bug is not None and bug.step == "TurnsRed" and bug.rule is not None:
            view = CStateView(params, s)
            turns = {j for j in range(len(params.snaps)) if bug.rule(view, ci, ki, j)}
        red_buf = tuple(
            s.red_buf[j] | {c} if j in turns else s.red_buf[j] for j in range(len(params.snaps))
        )
        if dst in s.red[ki]:
            after: CState | None = replace(s, buf=tuple(b))
        else:
            after = _turn_red(params, s, dst, ki, tuple(b), ci)
        if after is None:
            return None
        after = replace(after, red_buf=red_buf)
        sf = list(after.sf)
        for j in range(len(params.snaps)):
            if not complete(params, s, j) and complete(params, after, j):
                sf[j] = app_state(after)
        return replace(after, sf=tuple(sf))
    if action == "StartSnapshot":
        p = ps.get("p")
        k = ps.get("k")
        if not isinstance(p, str) or p not in params.procs or k not in params.snaps:
            return None
        assert isinstance(k, int)
        ki = params.snap_index(k)
        if p not in params.starters[ki] or p in s.red[ki]:
            return None
        if params.sequential and not all(
            complete(params, s, j) for j in range(len(params.snaps)) if params.snaps[j] < k
        ):
            return None
        return _turn_red(params, s, p, ki, s.buf, -1)
    return None


def enabled_steps(params: SymParams, s: CState) -> Iterator[tuple[Step, CState]]:
    """Every enabled step of ``s`` with its successor, in a fixed order."""
    for c in params.chans:
        src = params.proc_index(c[0])
        for m in range(1, s.local[src] + 1):
            st = step("SendApp", c=c, m=m)
            nxt = apply(params, s, st)
            if nxt is not None:
                yield st, nxt
    for action in ("ReceiveApp", "ReceiveRedLetter"):
        for ci, c in enumerate(params.chans):
            for i in _deliverable(params, s, ci):
                st = step(action, c=c, i=i)
                nxt = apply(params, s, st)
                if nxt is not None:
                    yield st, nxt
    for p in params.procs:
        for k in params.snaps:
            st = step("StartSnapshot", p=p, k=k)
            nxt = apply(params, s, st)
            if nxt is not None:
                yield st, nxt


def replay(params: SymParams, steps: Sequence[Step], start: CState | None = None) -> list[CState]:
    """The states visited by ``steps`` from ``start`` (default Init).

    Raises :class:`InputError` naming the first disabled step.
    """
    s = start if start is not None else init_state(params)
    out = [s]
    for n, st in enumerate(steps, start=1):
        nxt = apply(params, s, st)
        if nxt is None:
            action, ps = step_to_json(st)
            raise InputError(f"step {n} ({action} {ps}) is not enabled", code="RL-INPUT-TRACE")
        out.append(nxt)
        s = nxt
    return out


# --------------------------------------------------------------------------- invariants


def red_letter_invariant(params: SymParams, s: CState) -> bool:
    """Each buffer from a red machine to a white one holds precisely one red letter of k."""
    for ki, k in enumerate(params.snaps):
        for ci, (src, dst) in enumerate(params.chans):
            if (
                src in s.red[ki]
                and dst not in s.red[ki]
                and sum(1 for m in s.buf[ci] if m == red_letter(k)) != 1
            ):
                return False
    return True


def snapshot_tokens(params: SymParams, s: CState, ki: int) -> int:
    """The tokens in snapshot k: recorded machine states plus recorded buffer streams."""
    return sum(s.rec_machine[ki].values()) + sum(sum(r) for r in s.rec_buf[ki])


def snapshot_conserves_tokens(params: SymParams, s: CState) -> bool:
    """SnapshotSatisfiesAppInv for the token app: a complete snapshot holds Total tokens."""
    return all(
        snapshot_tokens(params, s, ki) == params.total
        for ki in range(len(params.snaps))
        if complete(params, s, ki)
    )


def tokens_conserved(params: SymParams, s: CState) -> bool:
    """AppInv(AppState): machines plus travelling tokens equal Total."""
    return sum(s.local) + sum(m.val for b in s.buf for m in b if m.kind == "app") == params.total


INVARIANTS: Mapping[str, object] = frozendict(
    {
        "RedLetterInvariant": red_letter_invariant,
        "SnapshotSatisfiesAppInv": snapshot_conserves_tokens,
        "TokensConserved": tokens_conserved,
    }
)


# --------------------------------------------------------------------------- TLA+ values


def _gstate_value(params: SymParams, g: GState) -> Value:
    local, bufs = g
    return Record(
        [
            ("local", fcn(zip(params.procs, local, strict=True))),
            ("buf", fcn(zip(params.chans, bufs, strict=True))),
        ]
    )


def _msg_value(m: Msg) -> Value:
    return Record([("kind", m.kind), ("snap", m.snap), ("val", m.val)])


def _act_value(a: Act) -> Value:
    return Record([("kind", a[0]), ("p", a[1]), ("q", a[2]), ("val", a[3])])


def to_tla(params: SymParams, s: CState) -> State:
    """The state as the TLA+ values of the spec's variables (for ITF and printing)."""
    s = _with_history(params, s)
    snaps = params.snaps
    return State(
        [
            ("local", fcn(zip(params.procs, s.local, strict=True))),
            (
                "buf",
                fcn(
                    (c, tuple(_msg_value(m) for m in b))
                    for c, b in zip(params.chans, s.buf, strict=True)
                ),
            ),
            ("red", fcn(zip(snaps, s.red, strict=True))),
            ("redBuf", fcn(zip(snaps, s.red_buf, strict=True))),
            (
                "recMachine",
                fcn((k, fcn(sorted(r.items()))) for k, r in zip(snaps, s.rec_machine, strict=True)),
            ),
            (
                "recBuf",
                fcn(
                    (k, fcn(zip(params.chans, rb, strict=True)))
                    for k, rb in zip(snaps, s.rec_buf, strict=True)
                ),
            ),
            (
                "S0",
                fcn(
                    (k, _gstate_value(params, g))
                    for k, g in zip(snaps, s.s0, strict=True)
                    if g is not None
                ),
            ),
            (
                "Sf",
                fcn(
                    (k, _gstate_value(params, g))
                    for k, g in zip(snaps, s.sf, strict=True)
                    if g is not None
                ),
            ),
            (
                "whiteActs",
                fcn(
                    (k, tuple(_act_value(a) for a in acts))
                    for k, acts in zip(snaps, s.white_acts, strict=True)
                ),
            ),
            (
                "redActs",
                fcn(
                    (k, tuple(_act_value(a) for a in acts))
                    for k, acts in zip(snaps, s.red_acts, strict=True)
                ),
            ),
        ]
    )
