"""The actions of ChandyLamport.tla, one pure function each, same names in snake_case.

Public functions take machines by name (``"p1"``), buffers as ``(src, dst)`` pairs and
snapshots by id, return the successor :class:`~redletter.python_model.state.State` or ``None``
when the action is disabled, and never mutate anything.  The overridable steps
(Deliverable, Enqueue, RedLettersOut, RedLettersAgain, Recording, RecordMessage,
RedLetterRecord, RecordingConsumes, TurnsRed) come from ``cfg.steps`` (see
:mod:`redletter.python_model.mutants`).  SendApp and InternalEvent carry the guard
``AppBudgetLeft`` (:func:`app_budget_left`), the bound in the guards.

:func:`successors` enumerates the bindings in the structure of the spec's ``Next``::

    \\/ \\E c \\in Chan : SendApp(c)              \\* \\E m \\in AppSendable(...)
    \\/ \\E p \\in Proc : InternalEvent(p)        \\* \\E e \\in AppEvents(...)
    \\/ \\E c \\in Chan : ReceiveApp(c)           \\* \\E i \\in Deliverable(c)
    \\/ \\E c \\in Chan : ReceiveRedLetter(c)     \\* \\E i \\in Deliverable(c)
    \\/ \\E p \\in Proc : \\E k \\in Snap : StartSnapshot(p, k)

one successor per satisfying binding, so the number of successors of a state is the
number of states TLC generates from it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Final, TypeAlias

from redletter.errors import Exit, InputError, InternalError, RedletterError
from redletter.python_model.config import ModelConfig
from redletter.python_model.state import (
    ACT_INTERNAL,
    ACT_RECEIVE,
    ACT_SEND,
    Act,
    GState,
    Local,
    State,
)

__all__ = [
    "ACTION_NAMES",
    "ActionDisabled",
    "Params",
    "app_action_bound",
    "app_budget_left",
    "app_state",
    "fast_successors",
    "init_states",
    "internal_event",
    "receive_app",
    "receive_red_letter",
    "send_app",
    "start_snapshot",
    "step",
    "successors",
]

Params: TypeAlias = dict[str, object]
"""Action parameters in the shared vocabulary, e.g. ``{"c": ["p1", "p2"], "m": 1}``."""

SEND_APP: Final = 0
INTERNAL_EVENT: Final = 1
RECEIVE_APP: Final = 2
RECEIVE_RED_LETTER: Final = 3
START_SNAPSHOT: Final = 4
ACTION_NAMES: Final = (
    "SendApp",
    "InternalEvent",
    "ReceiveApp",
    "ReceiveRedLetter",
    "StartSnapshot",
)


class ActionDisabled(RedletterError):
    """A step of a trace is not enabled in the state it is taken from."""

    code = "RL-MODEL-DISABLED"
    exit_code = Exit.FAIL

    def __init__(self, message: str) -> None:
        # Set again here: compiled with mypyc (native.py), a subclass of a Python
        # class keeps no class attributes of its own.
        super().__init__(message, code="RL-MODEL-DISABLED")
        self.exit_code = Exit.FAIL


def app_state(s: State) -> GState:
    """``AppState``: the machines and the buffers with the red letters left out."""
    return (
        s.local,
        tuple(b if not b or min(b) >= 0 else tuple(v for v in b if v >= 0) for b in s.buf),
    )


def app_action_bound(cfg: ModelConfig, s: State) -> bool:
    """The CONSTRAINT ``AppActionBound == \\A k \\in Snap : Len(whiteActs[k]) +
    Len(redActs[k]) <= MaxAppActions``."""
    mx = cfg.max_app_actions
    w, r = s.white_acts, s.red_acts
    for k in range(len(w)):  # noqa: SIM110 (hot path: indexing compiles to C, zip does not)
        if len(w[k]) + len(r[k]) > mx:
            return False
    return True


def app_budget_left(cfg: ModelConfig, s: State) -> bool:
    """``AppBudgetLeft == \\A k \\in Snap : InProgress(k) => Len(whiteActs[k]) +
    Len(redActs[k]) < MaxAppActions`` (the guard of SendApp and InternalEvent)."""
    mx = cfg.max_app_actions
    s0, sf, w, r = s.s0, s.sf, s.white_acts, s.red_acts
    for k in range(len(s0)):
        if s0[k] is not None and sf[k] is None and len(w[k]) + len(r[k]) >= mx:
            return False
    return True


def init_states(cfg: ModelConfig) -> list[State]:
    """``Init``: "Initially all machines and all buffers are white"."""
    n, c = len(cfg.snaps), len(cfg.chans)
    nothing: tuple[Local | None, ...] = (None,) * len(cfg.procs)
    empty_bufs: tuple[tuple[int, ...], ...] = ((),) * c
    return [
        State(
            local=tuple(cfg.app.local_init(p) for p in range(len(cfg.procs))),
            buf=empty_bufs,
            red=(0,) * n,
            red_buf=(0,) * n,
            rec_machine=(nothing,) * n,
            rec_buf=(empty_bufs,) * n,
            s0=(None,) * n,
            sf=(None,) * n,
            white_acts=((),) * n,
            red_acts=((),) * n,
        )
    ]


# --------------------------------------------------------------------------- cores
# The cores take indices and assume the guard holds.


def _record_act(
    s: State, p: int, act: Act
) -> tuple[tuple[tuple[Act, ...], ...], tuple[tuple[Act, ...], ...]]:
    """``RecordAct(a)``: append a to whiteActs[k] / redActs[k] for every k in progress."""
    white, reds = s.white_acts, s.red_acts
    s0, sf, red = s.s0, s.sf, s.red
    for k in range(len(s0)):
        if s0[k] is not None and sf[k] is None:
            if red[k] >> p & 1:
                reds = (*reds[:k], (*reds[k], act), *reds[k + 1 :])
            else:
                white = (*white[:k], (*white[k], act), *white[k + 1 :])
    return white, reds


def _send_app(cfg: ModelConfig, s: State, c: int, m: int) -> State:
    p, q = cfg.chan_src[c], cfg.chan_dst[c]
    if m < 0:
        raise InternalError(f"application messages must be >= 0 in the Python model, got {m}")
    local, buf = s.local, s.buf
    w, r = _record_act(s, p, (ACT_SEND, p, q, m))
    return State(
        (*local[:p], cfg.app.after_send(p, q, m, local[p]), *local[p + 1 :]),
        (*buf[:c], cfg.steps.enqueue(buf[c], m), *buf[c + 1 :]),
        s.red,
        s.red_buf,
        s.rec_machine,
        s.rec_buf,
        s.s0,
        s.sf,
        w,
        r,
    )


def _internal_event(cfg: ModelConfig, s: State, p: int, e: int) -> State:
    local = s.local
    w, r = _record_act(s, p, (ACT_INTERNAL, p, p, e))
    return State(
        (*local[:p], cfg.app.after_event(p, e, local[p]), *local[p + 1 :]),
        s.buf,
        s.red,
        s.red_buf,
        s.rec_machine,
        s.rec_buf,
        s.s0,
        s.sf,
        w,
        r,
    )


def _receive_app(cfg: ModelConfig, s: State, c: int, i: int, m: int) -> State:
    p, q = cfg.chan_dst[c], cfg.chan_src[c]
    local, buf = s.local, s.buf
    bc = buf[c]
    rec_buf = s.rec_buf
    steps = cfg.steps
    recording, record = steps.recording, steps.record_message
    for k in range(len(rec_buf)):
        if recording(cfg, s, k, p, c):
            rb = rec_buf[k]
            rb_c = record(cfg, s, k, c, rb[c], m)
            rec_buf = (*rec_buf[:k], (*rb[:c], rb_c, *rb[c + 1 :]), *rec_buf[k + 1 :])
    if steps.recording_consumes(cfg, s, p, c):  # the message never reaches the application
        return State(
            local,
            (*buf[:c], (*bc[: i - 1], *bc[i:]), *buf[c + 1 :]),
            s.red,
            s.red_buf,
            s.rec_machine,
            rec_buf,
            s.s0,
            s.sf,
            s.white_acts,
            s.red_acts,
        )
    w, r = _record_act(s, p, (ACT_RECEIVE, p, q, m))
    return State(
        (*local[:p], cfg.app.after_receive(p, q, m, local[p]), *local[p + 1 :]),
        (*buf[:c], (*bc[: i - 1], *bc[i:]), *buf[c + 1 :]),
        s.red,
        s.red_buf,
        s.rec_machine,
        rec_buf,
        s.s0,
        s.sf,
        w,
        r,
    )


def _turn_red(
    cfg: ModelConfig, s: State, p: int, k: int, b: tuple[tuple[int, ...], ...], frm: int
) -> tuple[
    tuple[int, ...],
    tuple[tuple[Local | None, ...], ...],
    tuple[tuple[int, ...], ...],
    tuple[GState | None, ...],
]:
    """``TurnRed(p, k, b, from)``: the new red, recMachine, buf and S0 (``frm``: the
    buffer the red letter came from, -1 for a starter)."""
    red = (*s.red[:k], s.red[k] | 1 << p, *s.red[k + 1 :])
    rm = s.rec_machine[k]
    if rm[p] is None:  # recMachine[k] @@ (p :> local[p]): an existing entry wins
        rm = (*rm[:p], s.local[p], *rm[p + 1 :])
    rec_machine = (*s.rec_machine[:k], rm, *s.rec_machine[k + 1 :])
    out = cfg.steps.red_letters_out(cfg, s, p, k, frm)
    letter = -cfg.snaps[k]
    buf = tuple((*bc, letter) if out >> c & 1 else bc for c, bc in enumerate(b)) if out else b
    s0 = s.s0 if s.s0[k] is not None else (*s.s0[:k], app_state(s), *s.s0[k + 1 :])
    return red, rec_machine, buf, s0


def _receive_red_letter(cfg: ModelConfig, s: State, c: int, i: int, kid: int) -> State:
    p = cfg.chan_dst[c]
    k = cfg.snap_index.get(kid)
    if k is None:
        raise InternalError(f"a red letter of snapshot {kid}, which is not in Snap")
    bc = s.buf[c]
    b = (*s.buf[:c], (*bc[: i - 1], *bc[i:]), *s.buf[c + 1 :])
    turns = cfg.steps.turns_red(cfg, s, c, k)
    bit = 1 << c
    red_buf = tuple(rb | bit if turns >> j & 1 else rb for j, rb in enumerate(s.red_buf))
    steps = cfg.steps
    if s.red[k] >> p & 1:
        red, rec_machine, buf, s0 = s.red, s.rec_machine, b, s.s0
        again = steps.red_letters_again(cfg, s, p, k, c)
        if again:
            letter = -kid
            buf = tuple((*bc2, letter) if again >> d & 1 else bc2 for d, bc2 in enumerate(b))
    else:
        red, rec_machine, buf, s0 = _turn_red(cfg, s, p, k, b, c)
    rec_buf = s.rec_buf
    extra = steps.red_letter_record(cfg, s, k, p, c)
    if extra:
        rk = rec_buf[k]
        rec_buf = (*rec_buf[:k], (*rk[:c], (*rk[c], *extra), *rk[c + 1 :]), *rec_buf[k + 1 :])
    sf = s.sf
    allc = cfg.all_chans
    g: GState | None = None
    for j in range(len(sf)):
        if sf[j] is None and red_buf[j] == allc:
            if g is None:
                g = app_state(s)
            sf = (*sf[:j], g, *sf[j + 1 :])
    return State(s.local, buf, red, red_buf, rec_machine, rec_buf, s0, sf, s.white_acts, s.red_acts)


def _start_enabled(cfg: ModelConfig, s: State, p: int, k: int) -> str | None:
    """None when StartSnapshot(p, k) is enabled, else the guard that fails."""
    if not cfg.starters[k] >> p & 1:
        return "p \\notin Starters[k]"
    if s.red[k] >> p & 1:
        return "p \\in red[k]"
    kid = cfg.snaps[k]
    if not cfg.app.may_start(p, kid, s.local[p]):
        return "~AppMayStart(p, k, local[p])"
    if cfg.sequential:
        for j, jid in enumerate(cfg.snaps):
            if jid < kid and s.sf[j] is None:
                return f"Sequential and snapshot {jid} < {kid} has not completed"
    return None


def _start_snapshot(cfg: ModelConfig, s: State, p: int, k: int) -> State:
    red, rec_machine, buf, s0 = _turn_red(cfg, s, p, k, s.buf, -1)
    return State(
        s.local, buf, red, s.red_buf, rec_machine, s.rec_buf, s0, s.sf, s.white_acts, s.red_acts
    )


RawParams: TypeAlias = tuple[int, int]


def fast_successors(cfg: ModelConfig, s: State) -> Iterator[tuple[int, RawParams, State]]:
    """The successors as (action code, index parameters, state), in ``Next``'s order.

    Parameters are indices: (c, m), (p, e), (c, i), (c, i), (p, k index).
    """
    app = cfg.app
    steps = cfg.steps
    local = s.local
    buf = s.buf
    src, dst = cfg.chan_src, cfg.chan_dst
    nc = len(buf)
    budget = app_budget_left(cfg, s)
    if budget:
        for c in range(nc):
            p = src[c]
            for m in app.sendable(p, dst[c], local[p]):
                yield SEND_APP, (c, m), _send_app(cfg, s, c, m)
        for p in range(len(local)):
            for e in app.events(p, local[p]):
                yield INTERNAL_EVENT, (p, e), _internal_event(cfg, s, p, e)
    deliverable = steps.deliverable
    for c in range(nc):
        bc = buf[c]
        if not bc:
            continue
        p = dst[c]
        for i in deliverable(cfg, s, c):
            m = bc[i - 1]
            if m >= 0 and app.can_receive(p, src[c], m, local[p]):
                yield RECEIVE_APP, (c, i), _receive_app(cfg, s, c, i, m)
    for c in range(nc):
        bc = buf[c]
        if not bc:
            continue
        for i in deliverable(cfg, s, c):
            m = bc[i - 1]
            if m < 0:
                yield RECEIVE_RED_LETTER, (c, i), _receive_red_letter(cfg, s, c, i, -m)
    for p in range(len(local)):
        for k in range(len(cfg.snaps)):
            if _start_enabled(cfg, s, p, k) is None:
                yield START_SNAPSHOT, (p, k), _start_snapshot(cfg, s, p, k)


def params_of(cfg: ModelConfig, action: int, raw: RawParams) -> Params:
    """The shared-vocabulary parameters for index parameters from :func:`fast_successors`."""
    a, b = raw
    if action in (SEND_APP,):
        return {"c": list(cfg.chans[a]), "m": b}
    if action == INTERNAL_EVENT:
        return {"p": cfg.procs[a], "e": b}
    if action in (RECEIVE_APP, RECEIVE_RED_LETTER):
        return {"c": list(cfg.chans[a]), "i": b}
    return {"p": cfg.procs[a], "k": cfg.snaps[b]}


def successors(cfg: ModelConfig, s: State) -> Iterator[tuple[str, Params, State]]:
    """Every (action name, params, successor), one per binding, in ``Next``'s order."""
    for action, raw, t in fast_successors(cfg, s):
        yield ACTION_NAMES[action], params_of(cfg, action, raw), t


# --------------------------------------------------------------------------- public


def _chan(cfg: ModelConfig, c: Sequence[str]) -> int:
    key = (str(c[0]), str(c[1])) if len(c) == 2 else None
    if key is None or key not in cfg.chan_index:
        raise InputError(f"unknown buffer {list(c)!r} (Chan of {cfg.name})", code="RL-INPUT-STEP")
    return cfg.chan_index[key]


def _proc(cfg: ModelConfig, p: str) -> int:
    if p not in cfg.proc_index:
        raise InputError(f"unknown machine {p!r} (Proc of {cfg.name})", code="RL-INPUT-STEP")
    return cfg.proc_index[p]


def _snap(cfg: ModelConfig, k: int) -> int:
    if k not in cfg.snap_index:
        raise InputError(f"unknown snapshot {k!r} (Snap of {cfg.name})", code="RL-INPUT-STEP")
    return cfg.snap_index[k]


_NO_BUDGET = (
    "~AppBudgetLeft (MaxAppActions application actions have happened in a snapshot in progress)"
)


def _why_send(cfg: ModelConfig, s: State, c: int, m: int) -> str | None:
    p, q = cfg.chan_src[c], cfg.chan_dst[c]
    if not app_budget_left(cfg, s):
        return _NO_BUDGET
    if m in cfg.app.sendable(p, q, s.local[p]):
        return None
    return f"m \\notin AppSendable(p, q, local[p]) (m = {m}, local[p] = {s.local[p]!r})"


def send_app(cfg: ModelConfig, s: State, c: Sequence[str], m: int) -> State | None:
    """``SendApp(c)`` with ``\\E m \\in AppSendable(p, q, local[p])`` bound to ``m``.

    Guard: ``AppBudgetLeft /\\ m \\in AppSendable(Src(c), Dst(c), local[Src(c)])``."""
    ci = _chan(cfg, c)
    return None if _why_send(cfg, s, ci, m) else _send_app(cfg, s, ci, m)


def _why_internal(cfg: ModelConfig, s: State, p: int, e: int) -> str | None:
    if not app_budget_left(cfg, s):
        return _NO_BUDGET
    if e in cfg.app.events(p, s.local[p]):
        return None
    return f"e \\notin AppEvents(p, local[p]) (e = {e}, local[p] = {s.local[p]!r})"


def internal_event(cfg: ModelConfig, s: State, p: str, e: int) -> State | None:
    """``InternalEvent(p)`` with ``\\E e \\in AppEvents(p, local[p])`` bound to ``e``.

    Guard: ``AppBudgetLeft /\\ e \\in AppEvents(p, local[p])``."""
    pi = _proc(cfg, p)
    return None if _why_internal(cfg, s, pi, e) else _internal_event(cfg, s, pi, e)


def _why_receive(cfg: ModelConfig, s: State, c: int, i: int, red: bool) -> str | None:
    if i not in cfg.steps.deliverable(cfg, s, c):
        return f"i \\notin Deliverable(c) (i = {i}, Len(buf[c]) = {len(s.buf[c])})"
    m = s.buf[c][i - 1]
    if red:
        return None if m < 0 else 'buf[c][i].kind # "red"'
    if m < 0:
        return 'buf[c][i].kind # "app"'
    p, q = cfg.chan_dst[c], cfg.chan_src[c]
    if not cfg.app.can_receive(p, q, m, s.local[p]):
        return f"~AppCanReceive(p, q, m, local[p]) (m = {m}, local[p] = {s.local[p]!r})"
    return None


def receive_app(cfg: ModelConfig, s: State, c: Sequence[str], i: int) -> State | None:
    """``ReceiveApp(c)`` with ``\\E i \\in Deliverable(c)`` bound to ``i``.

    Guard: ``i \\in Deliverable(c) /\\ buf[c][i].kind = "app"
    /\\ AppCanReceive(p, q, buf[c][i].val, local[p])``."""
    ci = _chan(cfg, c)
    if _why_receive(cfg, s, ci, i, red=False):
        return None
    return _receive_app(cfg, s, ci, i, s.buf[ci][i - 1])


def receive_red_letter(cfg: ModelConfig, s: State, c: Sequence[str], i: int) -> State | None:
    """``ReceiveRedLetter(c)`` with ``\\E i \\in Deliverable(c)`` bound to ``i``.

    Guard: ``i \\in Deliverable(c) /\\ buf[c][i].kind = "red"``."""
    ci = _chan(cfg, c)
    if _why_receive(cfg, s, ci, i, red=True):
        return None
    return _receive_red_letter(cfg, s, ci, i, -s.buf[ci][i - 1])


def start_snapshot(cfg: ModelConfig, s: State, p: str, k: int) -> State | None:
    """``StartSnapshot(p, k)``.

    Guard: ``p \\in Starters[k] /\\ p \\notin red[k] /\\ AppMayStart(p, k, local[p])
    /\\ Sequential => \\A j \\in Snap : j < k => Complete(j)``."""
    pi, ki = _proc(cfg, p), _snap(cfg, k)
    return None if _start_enabled(cfg, s, pi, ki) else _start_snapshot(cfg, s, pi, ki)


def _param(params: Mapping[str, object], name: str, action: str) -> object:
    if name not in params:
        raise InputError(f"{action} needs parameter {name!r}", code="RL-INPUT-STEP")
    return params[name]


def _int_param(params: Mapping[str, object], name: str, action: str) -> int:
    v = _param(params, name, action)
    if type(v) is not int:
        raise InputError(f"{action} parameter {name!r} must be an integer", code="RL-INPUT-STEP")
    return v


def _chan_param(cfg: ModelConfig, params: Mapping[str, object], action: str) -> int:
    v = _param(params, "c", action)
    if not (isinstance(v, list | tuple) and len(v) == 2 and all(isinstance(x, str) for x in v)):
        raise InputError(f"{action} parameter 'c' must be a pair of machines", code="RL-INPUT-STEP")
    return _chan(cfg, [str(x) for x in v])


def step(cfg: ModelConfig, s: State, action: str, params: Mapping[str, object]) -> State:
    """Take one step of a trace; :class:`ActionDisabled` says which guard fails."""
    why: str | None
    if action == "SendApp":
        c, m = _chan_param(cfg, params, action), _int_param(params, "m", action)
        why = _why_send(cfg, s, c, m)
        result = None if why else _send_app(cfg, s, c, m)
    elif action == "InternalEvent":
        p = _param(params, "p", action)
        pi = _proc(cfg, str(p))
        e = _int_param(params, "e", action)
        why = _why_internal(cfg, s, pi, e)
        result = None if why else _internal_event(cfg, s, pi, e)
    elif action in ("ReceiveApp", "ReceiveRedLetter"):
        c, i = _chan_param(cfg, params, action), _int_param(params, "i", action)
        red = action == "ReceiveRedLetter"
        why = _why_receive(cfg, s, c, i, red=red)
        if why:
            result = None
        elif red:
            result = _receive_red_letter(cfg, s, c, i, -s.buf[c][i - 1])
        else:
            result = _receive_app(cfg, s, c, i, s.buf[c][i - 1])
    elif action == "StartSnapshot":
        pi = _proc(cfg, str(_param(params, "p", action)))
        ki = _snap(cfg, _int_param(params, "k", action))
        why = _start_enabled(cfg, s, pi, ki)
        result = None if why else _start_snapshot(cfg, s, pi, ki)
    else:
        raise InputError(
            f"unknown action {action!r} (expected one of {', '.join(ACTION_NAMES)})",
            code="RL-INPUT-STEP",
        )
    if result is None:
        shown = ", ".join(f"{k}={v!r}" for k, v in params.items())
        raise ActionDisabled(f"{action}({shown}) is disabled: {why}")
    return result
