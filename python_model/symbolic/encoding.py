"""The z3 encoding of ChandyLamport.tla + TokenApp.tla for fixed parameters.

State variables of one step (all z3 Ints/Bools, one per scalar, named ``<var>@<t>``):

* ``tok[p]``                     -- local[p], the tokens machine p holds;
* per buffer c a bounded FIFO: ``len[c]`` and ``capacity`` slots ``msg[c][j]``, one
  Int per message: ``v > 0`` is AppMsg(v) (every token message carries at least one
  token), ``-k`` is RedLetter(k); slots at or past ``len`` hold 0, so equal states
  have equal variables;
* ``red[k][p]``, ``redBuf[k][c]``;
* ``recM[k][p]`` -- recMachine[k][p] (0 while p is white in k);
* per (k, c) a bounded recorded stream: ``recLen[k][c]`` and ``record_capacity``
  slots ``recVal[k][c][j]``.

Started(k) is ``red[k] # {}`` and Complete(k) is ``redBuf[k] = Chan``: S0 gets k in
its domain exactly when the first machine turns red in k, and Sf exactly when the
last buffer turns red (redBuf changes only there), so the history variables are not
needed for the algorithm or the invariants checked here; the concrete interpreter
(:mod:`.concrete`) rebuilds them when a trace is exported.

A step is exactly one action with its parameters: each concrete choice of (action,
buffer or machine, snapshot) is one disjunct with a Boolean selector, exactly one
selector is true, and the step variables ``m`` (message) and ``pos`` (1-based
position) carry the remaining parameters.  Every next-state variable is an ``If``
chain over the selectors of the disjuncts that change it, so a model of the
transition reads back as ``(action, params)``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from frozendict import frozendict

from redletter.errors import InputError
from redletter.python_model.symbolic.bughook import bug_of, positions, rule_formula
from redletter.python_model.symbolic.concrete import CState, Msg, Step, step
from redletter.python_model.symbolic.params import SymParams
from redletter.python_model.z3env import z3

Key: TypeAlias = tuple[Any, ...]
Expr: TypeAlias = Any  # z3.ExprRef (z3 ships no type information)
Label: TypeAlias = tuple[Any, ...]

WIDTH = 12
USE_INT = True
"""Numbers are signed bit-vectors of this width (bit-blasted: incremental SAT handles
the unrolled If chains far better than linear arithmetic).  Every value of the
bounded model (tokens, lengths, sums of tokens, -|Snap|..Total) fits easily;
:class:`SymParams` inputs are checked against it in :func:`check_width`."""


def num(name: str) -> Expr:
    """A fresh numeric variable."""
    return z3.Int(name) if USE_INT else z3.BitVec(name, WIDTH)


def lit(v: int) -> Expr:
    """A numeric constant."""
    return z3.IntVal(v) if USE_INT else z3.BitVecVal(v, WIDTH)


def check_width(params: SymParams) -> None:
    """Raise :class:`InputError` if a sum of this model might overflow WIDTH bits."""
    biggest = max(
        params.total
        * (
            1 + len(params.procs) + len(params.chans) * max(params.capacity, params.record_capacity)
        ),
        params.capacity,
        params.record_capacity,
        max(params.snaps),
    )
    if biggest >= 2 ** (WIDTH - 1):
        raise InputError(
            f"the model is too large for the symbolic engine's {WIDTH}-bit numbers "
            f"(values up to {biggest}); use fewer tokens or smaller bounds"
        )


"""A disjunct: ("SendApp", ci), ("ReceiveApp", ci), ("ReceiveRedLetter", ci, k),
("StartSnapshot", pi, k)."""


@dataclass(frozen=True)
class SymState:
    """The z3 variables (or expressions) of one state, by key."""

    v: Mapping[Key, Expr]

    def __getitem__(self, key: Key) -> Expr:
        return self.v[key]


@dataclass(frozen=True)
class SymStep:
    """The z3 variables of one step: a selector per disjunct, the message, the position."""

    sels: Mapping[Label, Expr]
    m: Expr
    pos: Expr

    def chose(self, label: Label) -> Expr:
        """The step is the disjunct ``label`` (FALSE if the model has no such disjunct)."""
        return self.sels.get(label, z3.BoolVal(False))


def state_keys(params: SymParams) -> list[tuple[Key, bool]]:
    """Every key with whether its variable is Boolean."""
    keys: list[tuple[Key, bool]] = []
    keys += [(("tok", p), False) for p in range(len(params.procs))]
    for c in range(len(params.chans)):
        keys.append((("len", c), False))
        keys += [(("msg", c, j), False) for j in range(params.capacity)]
    for k in range(len(params.snaps)):
        keys += [(("red", k, p), True) for p in range(len(params.procs))]
        keys += [(("rm", k, p), False) for p in range(len(params.procs))]
        for c in range(len(params.chans)):
            keys += [(("rb", k, c), True), (("rl", k, c), False)]
            keys += [(("rv", k, c, j), False) for j in range(params.record_capacity)]
    return keys


def fresh_state(params: SymParams, tag: str) -> SymState:
    """A state of fresh variables named ``<key>@<tag>``."""
    out: dict[Key, Expr] = {}
    for key, is_bool in state_keys(params):
        name = "_".join(str(x) for x in key) + "@" + tag
        out[key] = z3.Bool(name) if is_bool else num(name)
    return SymState(out)


def labels(params: SymParams) -> list[Label]:
    """Every disjunct of Next for these parameters, in a fixed order."""
    out: list[Label] = []
    for ci in range(len(params.chans)):
        out.append(("SendApp", ci))
        out.append(("ReceiveApp", ci))
        out += [("ReceiveRedLetter", ci, k) for k in params.snaps]
    for pi, p in enumerate(params.procs):
        out += [
            ("StartSnapshot", pi, k)
            for ki, k in enumerate(params.snaps)
            if p in params.starters[ki]
        ]
    return out


def fresh_step(params: SymParams, tag: str) -> SymStep:
    sels = {label: z3.Bool("_".join(str(x) for x in label) + "@" + tag) for label in labels(params)}
    return SymStep(sels, num(f"m@{tag}"), num(f"pos@{tag}"))


# --------------------------------------------------------------------------- predicates


def started(params: SymParams, s: SymState, ki: int) -> Expr:
    return z3.Or([s["red", ki, p] for p in range(len(params.procs))])


def complete(params: SymParams, s: SymState, ki: int) -> Expr:
    return z3.And([s["rb", ki, c] for c in range(len(params.chans))])


def in_progress(params: SymParams, s: SymState, ki: int) -> Expr:
    return z3.And(started(params, s, ki), z3.Not(complete(params, s, ki)))


def red_letter_count(params: SymParams, s: SymState, ki: int, ci: int) -> Expr:
    """The number of red letters of snapshot snaps[ki] in buffer ci."""
    k = params.snaps[ki]
    return z3.Sum([z3.If(s["msg", ci, j] == -k, lit(1), lit(0)) for j in range(params.capacity)])


def init(params: SymParams, s: SymState) -> Expr:
    """Init (buffers empty, everything white, nothing recorded)."""
    cs: list[Expr] = []
    for key, is_bool in state_keys(params):
        if key[0] == "tok":
            cs.append(s[key] == params.tokens[key[1]])
        else:
            cs.append(s[key] == (z3.BoolVal(False) if is_bool else 0))
    return z3.And(cs)


def well_formed(params: SymParams, s: SymState) -> Expr:
    """The bounded state space: TypeOK, the bounds, and canonical fillers.

    Used as the universe of the inductive checks (states satisfying it need not be
    reachable).
    """
    cs: list[Expr] = []
    total = params.total
    for p in range(len(params.procs)):
        cs.append(z3.And(s["tok", p] >= 0, s["tok", p] <= total))
    for c in range(len(params.chans)):
        n = s["len", c]
        cs.append(z3.And(n >= 0, n <= params.capacity))
        for j in range(params.capacity):
            v = s["msg", c, j]
            is_msg = z3.Or(z3.And(v >= 1, v <= total), *[v == -k for k in params.snaps])
            cs.append(z3.If(j < n, is_msg, v == 0))
    for k in range(len(params.snaps)):
        for p in range(len(params.procs)):
            rm = s["rm", k, p]
            cs.append(z3.If(s["red", k, p], z3.And(rm >= 0, rm <= total), rm == 0))
        for c in range(len(params.chans)):
            n = s["rl", k, c]
            cs.append(z3.And(n >= 0, n <= params.record_capacity))
            for j in range(params.record_capacity):
                rv = s["rv", k, c, j]
                cs.append(z3.If(j < n, z3.And(rv >= 1, rv <= total), rv == 0))
    return z3.And(cs)


# --------------------------------------------------------------------------- invariants


def type_ok(params: SymParams, s: SymState) -> Expr:
    """TypeOK for the encoded variables: local states in 0..Total, messages well formed."""
    return well_formed(params, s)


def red_letter_invariant(params: SymParams, s: SymState) -> Expr:
    """Dijkstra: "each buffer from a red machine to a white one contains precisely 1 red
    letter" (per snapshot k, counting the red letters of k)."""
    cs = []
    for ki in range(len(params.snaps)):
        for ci, (src, dst) in enumerate(params.chans):
            ps, pd = params.proc_index(src), params.proc_index(dst)
            cs.append(
                z3.Implies(
                    z3.And(s["red", ki, ps], z3.Not(s["red", ki, pd])),
                    red_letter_count(params, s, ki, ci) == 1,
                )
            )
    return z3.And(cs)


def recorded_sum(params: SymParams, s: SymState, ki: int, ci: int) -> Expr:
    return z3.Sum([s["rv", ki, ci, j] for j in range(params.record_capacity)] or [lit(0)])


def snapshot_tokens(params: SymParams, s: SymState, ki: int) -> Expr:
    machines = [s["rm", ki, p] for p in range(len(params.procs))]
    streams = [recorded_sum(params, s, ki, c) for c in range(len(params.chans))]
    return z3.Sum([*machines, *streams])


def snapshot_conserves_tokens(params: SymParams, s: SymState) -> Expr:
    """SnapshotSatisfiesAppInv for the token app: a complete snapshot holds Total tokens."""
    return z3.And(
        [
            z3.Implies(complete(params, s, ki), snapshot_tokens(params, s, ki) == params.total)
            for ki in range(len(params.snaps))
        ]
    )


def tokens_conserved(params: SymParams, s: SymState) -> Expr:
    """AppInv(AppState): machines plus travelling tokens equal Total."""
    travelling = [
        z3.If(s["msg", c, j] > 0, s["msg", c, j], lit(0))
        for c in range(len(params.chans))
        for j in range(params.capacity)
    ]
    held = [s["tok", p] for p in range(len(params.procs))]
    return z3.Sum([*held, *travelling]) == params.total


def before_red_letter(params: SymParams, s: SymState, ki: int, ci: int) -> Expr:
    """The tokens in buffer ci ahead of its first red letter of k (all, if none)."""
    k = params.snaps[ki]
    terms = []
    blocked: Expr = z3.BoolVal(False)
    for j in range(params.capacity):
        v = s["msg", ci, j]
        terms.append(z3.If(z3.And(v > 0, z3.Not(blocked)), v, lit(0)))
        blocked = z3.Or(blocked, v == -k)
    return z3.Sum(terms)


def shadow_conserves_tokens(params: SymParams, s: SymState) -> Expr:
    """AppInv(Shadow0(k)) for every k: Dijkstra's shadow network holds Total tokens.

    The shadow state of rules (i)-(iii): a red machine's recorded state, a white
    machine's real one; per buffer the stream recorded so far followed by what
    reality holds ahead of the red letter (nothing once the buffer is red).  It
    equals reality before k starts and the snapshot once k is complete, so this
    strengthens SnapshotSatisfiesAppInv into an invariant that holds at every step.
    """
    cs = []
    for ki in range(len(params.snaps)):
        machines = [
            z3.If(s["red", ki, p], s["rm", ki, p], s["tok", p]) for p in range(len(params.procs))
        ]
        buffers = [
            recorded_sum(params, s, ki, c)
            + z3.If(s["rb", ki, c], lit(0), before_red_letter(params, s, ki, c))
            for c in range(len(params.chans))
        ]
        cs.append(z3.Sum([*machines, *buffers]) == params.total)
    return z3.And(cs)


Invariant: TypeAlias = Callable[[SymParams, SymState], Expr]

INVARIANTS: Mapping[str, Invariant] = {
    "TypeOK": type_ok,
    "RedLetterInvariant": red_letter_invariant,
    "SnapshotSatisfiesAppInv": snapshot_conserves_tokens,
    "TokensConserved": tokens_conserved,
}


# --------------------------------------------------------------------------- transitions


@dataclass
class _Effects:
    """The next-state values one disjunct assigns, built functionally over ``cur``."""

    cur: SymState
    upd: dict[Key, Expr] = field(default_factory=dict)
    guard: list[Expr] = field(default_factory=list)

    def get(self, key: Key) -> Expr:
        return self.upd.get(key, self.cur[key])

    def set(self, key: Key, value: Expr, when: Expr | None = None) -> None:
        self.upd[key] = value if when is None else z3.If(when, value, self.get(key))


def _read(params: SymParams, e: _Effects, ci: int, pos0: Expr | int) -> Expr:
    """The message at 0-based position ``pos0`` of buffer ci."""
    if isinstance(pos0, int):
        return e.get(("msg", ci, pos0))
    out: Expr = lit(0)
    for j in reversed(range(params.capacity)):
        out = z3.If(pos0 == j, e.get(("msg", ci, j)), out)
    return out


def _remove_at(params: SymParams, e: _Effects, ci: int, pos0: Expr | int) -> None:
    cap = params.capacity
    old = [e.get(("msg", ci, j)) for j in range(cap)]
    for j in range(cap):
        after = old[j + 1] if j + 1 < cap else lit(0)
        if isinstance(pos0, int):
            new = old[j] if j < pos0 else after
        else:
            new = z3.If(j < pos0, old[j], after)
        e.set(("msg", ci, j), new)
    e.set(("len", ci), e.get(("len", ci)) - 1)


def _append(params: SymParams, e: _Effects, ci: int, msg: Expr, when: Expr | None) -> None:
    """Enqueue; the guard says the buffer has room (when ``when`` holds)."""
    n = e.get(("len", ci))
    room = n < params.capacity
    e.guard.append(room if when is None else z3.Implies(when, room))
    for j in range(params.capacity):
        e.set(("msg", ci, j), z3.If(n == j, msg, e.get(("msg", ci, j))), when)
    e.set(("len", ci), n + 1, when)


def _literal(params: SymParams, s: SymState) -> Callable[[tuple[Any, ...], object], Expr]:
    """For the registry hook: "this input a step reads has this value" in state s."""

    def literal(key: tuple[Any, ...], value: object) -> Expr:
        what = key[0]
        if what == "red":
            return s["red", key[1], key[2]] if value else z3.Not(s["red", key[1], key[2]])
        if what == "red_buf":
            return s["rb", key[1], key[2]] if value else z3.Not(s["rb", key[1], key[2]])
        if what == "length":
            assert isinstance(value, int)
            return s["len", key[1]] == lit(value)
        if what == "letter_at":
            head = s["msg", key[1], key[2] - 1]
            if value is None:
                return head > 0
            assert isinstance(value, int)
            return head == lit(-params.snaps[value])
        raise InputError(f"the symbolic encoding cannot read {key} for a bug class's rule")

    return literal


def _turn_red(
    params: SymParams, e: _Effects, pi: int, ki: int, when: Expr | None, frm: int
) -> None:
    """TurnRed(p, k, b, from) on the buffers built so far (``b``), when ``when`` holds
    (``frm``: the buffer of the red letter, -1 for a starter)."""
    k = params.snaps[ki]
    p = params.procs[pi]
    bug = bug_of(params.mutant)
    for ci in params.out_chans(p):
        outs_when = when
        if bug is not None and bug.step == "RedLettersOut":
            sends = rule_formula(bug, params, (pi, ki, frm, ci), _literal(params, e.cur))
            outs_when = sends if when is None else z3.And(when, sends)
        _append(params, e, ci, lit(-k), outs_when)
    e.set(("red", ki, pi), z3.BoolVal(True), when)
    e.set(("rm", ki, pi), e.cur["tok", pi], when)


def _recording(params: SymParams, s: SymState, ki: int, pi: int, ci: int) -> Expr:
    """Recording(k, p, c), or the registry's rule where the variant overrides it."""
    bug = bug_of(params.mutant)
    if bug is not None and bug.step == "Recording":
        return rule_formula(bug, params, (ki, pi, ci), _literal(params, s))
    return z3.And(s["red", ki, pi], z3.Not(s["rb", ki, ci]))


def _turns_red(params: SymParams, e: _Effects, cur: SymState, ci: int, ki: int) -> None:
    """Receipt1: the buffers a red letter of ki from ci turns red (TurnsRed)."""
    bug = bug_of(params.mutant)
    for kj in range(len(params.snaps)):
        if bug is not None and bug.step == "TurnsRed":
            turns = rule_formula(bug, params, (ci, ki, kj), _literal(params, cur))
            if not z3.is_false(turns):
                e.set(("rb", kj, ci), z3.Or(cur["rb", kj, ci], turns))
        elif kj == ki:
            e.set(("rb", kj, ci), z3.BoolVal(True))


def _deliverable(params: SymParams, cur: SymState, ci: int, i: int) -> Expr:
    """Position i (1-based) of buffer ci may be received: FIFO, or the registry's rule."""
    bug = bug_of(params.mutant)
    if bug is not None and bug.step == "Deliverable":
        return rule_formula(bug, params, (ci, i), _literal(params, cur))
    return z3.BoolVal(i == 1)


def _position(params: SymParams, cur: SymState, st: SymStep, ci: int) -> tuple[Expr, Expr | int]:
    """(guard on st.pos, 0-based position) for a receipt from buffer ci."""
    n = cur["len", ci]
    bug = bug_of(params.mutant)
    if bug is not None and bug.step == "Deliverable":
        allowed = [
            z3.And(st.pos == i, n >= i, _deliverable(params, cur, ci, i))
            for i in positions(bug, params, ci)
        ]
        return z3.Or(allowed) if allowed else z3.BoolVal(False), st.pos - 1
    return z3.And(st.pos == 1, n >= 1), 0


@dataclass(frozen=True)
class Disjunct:
    """One concrete action choice: selector, guard and the variables it changes."""

    label: Label
    sel: Expr
    guard: Expr
    upd: Mapping[Key, Expr]


def disjuncts(params: SymParams, cur: SymState, st: SymStep) -> list[Disjunct]:
    """Every (action, buffer or machine, snapshot) choice of Next, from state ``cur``."""
    out: list[Disjunct] = []

    def add(label: Label, e: _Effects) -> None:
        out.append(Disjunct(label, st.sels[label], z3.And(e.guard), dict(e.upd)))

    for ci, (src, dst) in enumerate(params.chans):
        ps, pd = params.proc_index(src), params.proc_index(dst)
        # SendApp(c): \E m \in 1..local[p] : local' = local - m, Enqueue(buf[c], AppMsg(m))
        e = _Effects(cur)
        e.guard += [st.m >= 1, st.m <= cur["tok", ps], st.pos == 0]
        e.set(("tok", ps), cur["tok", ps] - st.m)
        _append(params, e, ci, st.m, None)
        add(("SendApp", ci), e)

        # ReceiveApp(c): the message at a deliverable position is an application message
        e = _Effects(cur)
        pos_ok, pos0 = _position(params, cur, st, ci)
        v = _read(params, e, ci, pos0)
        e.guard += [pos_ok, v > 0, st.m == v]
        e.set(("tok", pd), cur["tok", pd] + v)
        _remove_at(params, e, ci, pos0)
        for ki in range(len(params.snaps)):
            rec = _recording(params, cur, ki, pd, ci)
            n = cur["rl", ki, ci]
            e.guard.append(z3.Implies(rec, n < params.record_capacity))
            for j in range(params.record_capacity):
                e.set(("rv", ki, ci, j), z3.If(n == j, v, cur["rv", ki, ci, j]), rec)
            e.set(("rl", ki, ci), n + 1, rec)
        add(("ReceiveApp", ci), e)

        # ReceiveRedLetter(c), one disjunct per snapshot k of the red letter received
        for ki, k in enumerate(params.snaps):
            e = _Effects(cur)
            pos_ok, pos0 = _position(params, cur, st, ci)
            e.guard += [pos_ok, _read(params, e, ci, pos0) == -k, st.m == 0]
            _remove_at(params, e, ci, pos0)
            _turns_red(params, e, cur, ci, ki)
            _turn_red(params, e, pd, ki, z3.Not(cur["red", ki, pd]), ci)
            add(("ReceiveRedLetter", ci, k), e)

    for pi, p in enumerate(params.procs):
        for ki, k in enumerate(params.snaps):
            if p not in params.starters[ki]:
                continue
            e = _Effects(cur)
            e.guard += [z3.Not(cur["red", ki, pi]), st.m == 0, st.pos == 0]
            if params.sequential:
                e.guard += [complete(params, cur, kj) for kj, j in enumerate(params.snaps) if j < k]
            _turn_red(params, e, pi, ki, None, -1)
            add(("StartSnapshot", pi, k), e)
    return out


def transition(params: SymParams, cur: SymState, st: SymStep, nxt: SymState) -> Expr:
    """Next as one formula: exactly one disjunct is selected, enabled, and taken."""
    ds = disjuncts(params, cur, st)
    cs: list[Expr] = [z3.AtMost(*[d.sel for d in ds], 1)]
    cs.append(z3.Or([d.sel for d in ds]))
    cs += [z3.Implies(d.sel, d.guard) for d in ds]
    for key, _ in state_keys(params):
        value = cur[key]
        for d in reversed(ds):
            if key in d.upd and not d.upd[key].eq(cur[key]):
                value = z3.If(d.sel, d.upd[key], value)
        cs.append(nxt[key] == value)
    return z3.And(cs)


# --------------------------------------------------------------------------- decoding


def _int(model: z3.ModelRef, e: Expr) -> int:
    return int(model.eval(e, model_completion=True).as_long())


def _bool(model: z3.ModelRef, e: Expr) -> bool:
    return bool(z3.is_true(model.eval(e, model_completion=True)))


def decode_step(params: SymParams, model: z3.ModelRef, st: SymStep) -> Step:
    """The ``(action, params)`` a model chose for a step."""
    chosen = [label for label, sel in st.sels.items() if _bool(model, sel)]
    if len(chosen) != 1:
        raise AssertionError(f"the model selects {len(chosen)} disjuncts, expected one")
    label = chosen[0]
    if label[0] == "SendApp" and len(label) == 3:  # flat: ("SendApp", ci, m)
        return step("SendApp", c=params.chans[label[1]], m=label[2])
    if label[0] == "ReceiveApp" and len(label) == 4:  # flat: ("ReceiveApp", ci, i, v)
        return step("ReceiveApp", c=params.chans[label[1]], i=label[2])
    if label[0] == "ReceiveRedLetter" and len(label) == 4:  # flat: (..., ci, k, i)
        return step("ReceiveRedLetter", c=params.chans[label[1]], i=label[3])
    if label[0] == "SendApp":
        return step("SendApp", c=params.chans[label[1]], m=_int(model, st.m))
    if label[0] in ("ReceiveApp", "ReceiveRedLetter"):
        return step(label[0], c=params.chans[label[1]], i=_int(model, st.pos))
    return step("StartSnapshot", p=params.procs[label[1]], k=label[2])


def _msg(v: int) -> Msg:
    return Msg("app", 0, v) if v > 0 else Msg("red", -v, 0)


def decode_state(params: SymParams, model: z3.ModelRef, s: SymState) -> CState:
    """The concrete state (without history) a model gives a symbolic state."""
    procs, chans, snaps = params.procs, params.chans, params.snaps
    red = tuple(
        frozenset(p for pi, p in enumerate(procs) if _bool(model, s["red", ki, pi]))
        for ki in range(len(snaps))
    )
    return CState(
        local=tuple(_int(model, s["tok", p]) for p in range(len(procs))),
        buf=tuple(
            tuple(_msg(_int(model, s["msg", c, j])) for j in range(_int(model, s["len", c])))
            for c in range(len(chans))
        ),
        red=red,
        red_buf=tuple(
            frozenset(c for ci, c in enumerate(chans) if _bool(model, s["rb", ki, ci]))
            for ki in range(len(snaps))
        ),
        rec_machine=tuple(
            frozendict(
                {p: _int(model, s["rm", ki, pi]) for pi, p in enumerate(procs) if p in red[ki]}
            )
            for ki in range(len(snaps))
        ),
        rec_buf=tuple(
            tuple(
                tuple(_int(model, s["rv", ki, ci, j]) for j in range(_int(model, s["rl", ki, ci])))
                for ci in range(len(chans))
            )
            for ki in range(len(snaps))
        ),
    )


# --------------------------------------------------------------------------- flat transitions


def flat_labels(params: SymParams) -> list[Label]:
    """Every fully concrete disjunct of Next: the action with *all* its parameters.

    ``("SendApp", ci, m)``, ``("ReceiveApp", ci, i, v)`` (the application message of
    value v at 1-based position i), ``("ReceiveRedLetter", ci, k, i)``,
    ``("StartSnapshot", pi, k)``.  Positions range over 1..capacity for the non-FIFO
    variant, else only 1.  Fixing the message and the position in the label turns
    every read into a comparison with a constant and every write into a constant or
    an offset, which the solver handles far better than symbolic ``m``/``pos``.
    """
    bug = bug_of(params.mutant)
    total = params.total
    out: list[Label] = []
    for ci in range(len(params.chans)):
        at = positions(bug, params, ci)
        out += [("SendApp", ci, m) for m in range(1, total + 1)]
        out += [("ReceiveApp", ci, i, v) for i in at for v in range(1, total + 1)]
        out += [("ReceiveRedLetter", ci, k, i) for k in params.snaps for i in at]
    for pi, p in enumerate(params.procs):
        out += [
            ("StartSnapshot", pi, k)
            for ki, k in enumerate(params.snaps)
            if p in params.starters[ki]
        ]
    return out


def fresh_flat_step(params: SymParams, tag: str) -> SymStep:
    """A step of the flat encoding: one selector per :func:`flat_labels` entry; ``m``
    and ``pos`` are the (derived) message and position of the chosen label."""
    sels = {
        label: z3.Bool("f_" + "_".join(str(x) for x in label) + "@" + tag)
        for label in flat_labels(params)
    }
    m: Expr = lit(0)
    pos: Expr = lit(0)
    for label, sel in sels.items():
        if label[0] == "SendApp":
            m = z3.If(sel, lit(label[2]), m)
        elif label[0] == "ReceiveApp":
            m = z3.If(sel, lit(label[3]), m)
            pos = z3.If(sel, lit(label[2]), pos)
        elif label[0] == "ReceiveRedLetter":
            pos = z3.If(sel, lit(label[3]), pos)
    return SymStep(sels, m, pos)


def flat_disjuncts(params: SymParams, cur: SymState, st: SymStep) -> list[Disjunct]:
    """The disjuncts of :func:`flat_labels`, each with constant parameters."""
    out: list[Disjunct] = []

    def add(label: Label, e: _Effects) -> None:
        out.append(Disjunct(label, st.sels[label], z3.And(e.guard), dict(e.upd)))

    for label in flat_labels(params):
        e = _Effects(cur)
        if label[0] == "SendApp":
            ci, m = label[1], label[2]
            ps = params.proc_index(params.chans[ci][0])
            e.guard.append(cur["tok", ps] >= m)
            e.set(("tok", ps), cur["tok", ps] - m)
            _append(params, e, ci, lit(m), None)
        elif label[0] == "ReceiveApp":
            ci, i, v = label[1], label[2], label[3]
            pd = params.proc_index(params.chans[ci][1])
            e.guard += [cur["len", ci] >= i, cur["msg", ci, i - 1] == v]
            if i > 1 or bug_of(params.mutant) is not None:
                e.guard.append(_deliverable(params, cur, ci, i))
            e.set(("tok", pd), cur["tok", pd] + v)
            _remove_at(params, e, ci, i - 1)
            for ki in range(len(params.snaps)):
                rec = _recording(params, cur, ki, pd, ci)
                if z3.is_false(rec):
                    continue
                n = cur["rl", ki, ci]
                e.guard.append(z3.Implies(rec, n < params.record_capacity))
                for j in range(params.record_capacity):
                    e.set(("rv", ki, ci, j), z3.If(n == j, lit(v), cur["rv", ki, ci, j]), rec)
                e.set(("rl", ki, ci), n + 1, rec)
        elif label[0] == "ReceiveRedLetter":
            ci, k, i = label[1], label[2], label[3]
            ki = params.snap_index(k)
            pd = params.proc_index(params.chans[ci][1])
            e.guard += [cur["len", ci] >= i, cur["msg", ci, i - 1] == -k]
            if i > 1 or bug_of(params.mutant) is not None:
                e.guard.append(_deliverable(params, cur, ci, i))
            _remove_at(params, e, ci, i - 1)
            _turns_red(params, e, cur, ci, ki)
            _turn_red(params, e, pd, ki, z3.Not(cur["red", ki, pd]), ci)
        else:
            pi, k = label[1], label[2]
            ki = params.snap_index(k)
            e.guard.append(z3.Not(cur["red", ki, pi]))
            if params.sequential:
                e.guard += [complete(params, cur, kj) for kj, j in enumerate(params.snaps) if j < k]
            _turn_red(params, e, pi, ki, None, -1)
        add(label, e)
    return out


def flat_transition(params: SymParams, cur: SymState, st: SymStep, nxt: SymState) -> Expr:
    """Next over :func:`flat_disjuncts`: exactly one fully concrete disjunct is taken.

    Each selector implies its guard and the new value of every variable it changes;
    every variable no selected disjunct changes keeps its value (explanatory frame
    axioms: one clause per variable, keyed on the selectors that may change it).
    """
    ds = flat_disjuncts(params, cur, st)
    sels = [d.sel for d in ds]
    cs: list[Expr] = [z3.Or(sels), z3.AtMost(*sels, 1)]
    changers: dict[Key, list[Expr]] = {}
    for d in ds:
        effects = [d.guard]
        for key, value in d.upd.items():
            if value.eq(cur[key]):
                continue
            effects.append(nxt[key] == value)
            changers.setdefault(key, []).append(d.sel)
        cs.append(z3.Implies(d.sel, z3.And(effects)))
    for key, _ in state_keys(params):
        if key in changers:
            cs.append(z3.Or(*changers[key], nxt[key] == cur[key]))
        else:
            cs.append(nxt[key] == cur[key])
    return z3.And(cs)
