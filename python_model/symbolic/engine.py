"""Bounded model checking, inductive checks and goal-directed trace synthesis on z3.

Every trace the solver returns is replayed by the concrete interpreter
(:mod:`.concrete`) and compared with the solver's states; a mismatch raises
:class:`InternalError` (a bug in the encoding or the interpreter), so what these
functions return is always a real behaviour of the encoded spec.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import redletter.python_model.symbolic.encoding as enc
import redletter.stopping as stopping
from redletter.errors import InputError, InternalError
from redletter.python_model.itf import ItfState, trace_to_json
from redletter.python_model.symbolic.concrete import (
    CState,
    Step,
    apply,
    replay,
    step_to_json,
    to_tla,
)
from redletter.python_model.symbolic.params import Chan, SymParams
from redletter.python_model.z3env import z3

Expr = Any

Encoding = Literal["flat", "legacy"]
"""The transition encoding: ``flat`` (default) has one selector per fully concrete
(action, parameters) choice (:func:`encoding.flat_transition`); ``legacy`` has one
per (action, buffer or machine, snapshot) with symbolic message and position
(:func:`encoding.transition`).  Both state the same relation."""


@dataclass(frozen=True)
class Trace:
    """A behaviour: ``states[0]`` is Init, ``states[n]`` follows ``steps[n-1]``."""

    params: SymParams
    steps: tuple[Step, ...]
    states: tuple[CState, ...]

    def pairs(self) -> list[tuple[str, dict[str, object]]]:
        """The steps as ``[(action, params), ...]`` with JSON-ready params."""
        return [step_to_json(s) for s in self.steps]

    def __len__(self) -> int:
        return len(self.steps)


def trace_to_itf(trace: Trace, meta: Mapping[str, object] | None = None) -> dict[str, Any]:
    """The ITF JSON of a trace; each state's ``#meta`` has the ``action`` and ``params``
    of the step that led to it (``Init`` and ``{}`` for the first)."""
    items: list[ItfState] = []
    for n, s in enumerate(trace.states):
        if n == 0:
            action, ps = "Init", dict[str, object]()
        else:
            action, ps = step_to_json(trace.steps[n - 1])
        items.append(ItfState.of(to_tla(trace.params, s), {"action": action, "params": ps}))
    info: dict[str, object] = {"source": "redletter symbolic", "model": trace.params.describe()}
    info.update(meta or {})
    return trace_to_json(items, info)


# --------------------------------------------------------------------------- unrolling


class _Unrolling:
    """States 0..n and steps 0..n-1 of one solver, grown one step at a time."""

    def __init__(
        self,
        params: SymParams,
        solver: z3.Solver,
        *,
        from_init: bool = True,
        encoding: Encoding = "flat",
    ) -> None:
        self.params = params
        self.solver = solver
        self.encoding = encoding
        enc.check_width(params)
        self.states: list[enc.SymState] = [enc.fresh_state(params, "0")]
        self.steps: list[enc.SymStep] = []
        if from_init:
            solver.add(enc.init(params, self.states[0]))

    def extend(self) -> None:
        n = len(self.steps)
        nxt = enc.fresh_state(self.params, str(n + 1))
        if self.encoding == "flat":
            st = enc.fresh_flat_step(self.params, str(n))
            self.solver.add(enc.flat_transition(self.params, self.states[-1], st, nxt))
        else:
            st = enc.fresh_step(self.params, str(n))
            self.solver.add(enc.transition(self.params, self.states[-1], st, nxt))
        self.steps.append(st)
        self.states.append(nxt)

    def trace(self, model: z3.ModelRef, upto: int) -> Trace:
        steps = tuple(enc.decode_step(self.params, model, s) for s in self.steps[:upto])
        try:
            states = replay(self.params, steps)
        except InputError as exc:
            raise InternalError(
                f"the solver's trace does not replay in the concrete interpreter: {exc}"
            ) from exc
        for n, (concrete, sym) in enumerate(zip(states, self.states[: upto + 1], strict=True)):
            solved = enc.decode_state(self.params, model, sym)
            if concrete.core() != solved.core():
                raise InternalError(
                    f"state {n} of the solver's trace differs from its replay: "
                    f"solver {solved.core()!r}, replay {concrete.core()!r}"
                )
        return Trace(self.params, steps, tuple(states))


# --------------------------------------------------------------------------- BMC


@dataclass(frozen=True)
class BmcResult:
    """The outcome of :func:`bmc`.

    ``violated`` names the invariants false in the last state of ``trace``;
    ``depth`` is the depth of the counterexample (minimal) or the depth checked.
    """

    params: SymParams
    depth: int
    violated: tuple[str, ...]
    trace: Trace | None
    seconds_per_depth: tuple[float, ...]
    #: the facts proved were inductive: no violation at any depth *of the bounded
    #: system* (buffers of ``params.capacity`` messages, recorded streams of
    #: ``params.record_capacity``); token sums, not Lemma 0 and Lemma 1
    inductive: bool = False

    @property
    def ok(self) -> bool:
        return self.trace is None


LOCAL_TIMEOUT_MS = 30_000
"""How long the one-transition check (per disjunct, with the flat encoding) may take
before BMC falls back to unrolling (an unknown answer is treated as "not inductive",
which is always sound)."""


QUICK_TIMEOUT_MS = 2_000
"""The flat one-transition check first asks the whole question for this long."""


def _relatively_inductive(
    params: SymParams, names: frozenset[str], encoding: Encoding = "flat"
) -> bool:
    """Whether the conjunction of ``names`` is preserved by every step from every
    well-formed state satisfying it (one transition, a fresh solver).

    With the flat encoding the question is asked once per fully concrete disjunct
    (``check(selector)`` on one solver): each sub-question is small, linear and
    fixed-parameter, so z3 answers it in well under a second, where the single
    question over the whole disjunction times out on 3-4 machines.  Every disjunct
    unsat is exactly the whole question unsat; any sat or unknown answer means "not
    shown inductive" (always sound: BMC then unrolls).  The whole question is asked
    first for :data:`QUICK_TIMEOUT_MS`, which settles the mutants (sat) at once."""
    table: dict[str, enc.Invariant] = {**enc.INVARIANTS, **LEMMAS}
    pre = enc.fresh_state(params, "lpre")
    post = enc.fresh_state(params, "lpost")
    solver = z3.Solver()
    solver.set("timeout", LOCAL_TIMEOUT_MS)
    solver.add(enc.well_formed(params, pre), *[table[n](params, pre) for n in sorted(names)])
    solver.add(z3.Not(z3.And([table[n](params, post) for n in sorted(names)])))
    if encoding == "flat":
        st = enc.fresh_flat_step(params, "lstep")
        solver.add(enc.flat_transition(params, pre, st, post))
        solver.set("timeout", QUICK_TIMEOUT_MS)
        quick = solver.check()
        if quick != z3.unknown:  # a mutant's break is usually found at once
            return bool(quick == z3.unsat)
        solver.set("timeout", LOCAL_TIMEOUT_MS)
        return all(solver.check(sel) == z3.unsat for sel in st.sels.values())
    st = enc.fresh_step(params, "lstep")
    solver.add(enc.transition(params, pre, st, post))
    return bool(solver.check() == z3.unsat)


def bmc(
    params: SymParams,
    depth: int,
    *,
    invariants: Sequence[str] = tuple(enc.INVARIANTS),
    lemmas: bool = True,
    on_depth: Callable[[int, float], None] | None = None,
    encoding: Encoding = "flat",
) -> BmcResult:
    """Check the invariants in every state reachable in at most ``depth`` steps.

    One solver holds the unrolling, grown one transition per depth; the check at
    depth d is made under an assumption literal (``bad_d => some invariant is false
    at d``), so nothing is retracted and the first violation found is at the minimal
    depth.  Once the check at d is unsat, the invariants are asserted at d as facts.

    With ``lemmas`` (the default), the strengthening of :data:`LEMMAS` (the
    red-letter bookkeeping and Dijkstra's shadow network) is checked and asserted the
    same way, and a depth is first tried locally: if the facts proved at d-1 are
    preserved by every step (:func:`_relatively_inductive`, one transition, cached),
    they hold at d without unrolling.  A lemma that fails at some depth (as in a
    mutant) is dropped from then on and never reported, and the depth falls back to
    the unrolled check, so lemmas change the speed, never a verdict.
    ``BmcResult.inductive`` says whether the facts were found inductive, i.e. the
    invariants hold at every depth, not only up to ``depth`` -- of the bounded system
    (buffers of at most ``params.capacity`` messages, recorded streams of at most
    ``params.record_capacity``: a step past either bound is disabled).  The invariants
    are token sums (``SnapshotSatisfiesAppInv``), not Lemma 0 and Lemma 1: for those,
    see :mod:`redletter.python_model.symbolic.induction`.
    """
    unknown = [name for name in invariants if name not in enc.INVARIANTS]
    if unknown:
        raise InputError(
            f"unknown invariant {unknown[0]!r}; expected one of {', '.join(enc.INVARIANTS)}"
        )
    if depth < 0:
        raise InputError(f"--depth: expected a depth >= 0, got {depth}")
    solver = z3.Solver()
    un = _Unrolling(params, solver, encoding=encoding)
    live_lemmas = dict(LEMMAS) if lemmas else {}
    local_cache: dict[frozenset[str], bool] = {}
    inductive = False
    times: list[float] = []
    for d in range(depth + 1):
        t0 = time.perf_counter()
        if d > 0:
            un.extend()
        s = un.states[d]
        checks = {name: enc.INVARIANTS[name](params, s) for name in invariants}
        facts = frozenset(checks) | frozenset(live_lemmas)
        if lemmas and d > 0:
            if facts not in local_cache:
                local_cache[facts] = _relatively_inductive(params, facts, encoding)
            if local_cache[facts]:
                inductive = True
                solver.add(*checks.values(), *[f(params, s) for f in live_lemmas.values()])
                times.append(time.perf_counter() - t0)
                if on_depth is not None:
                    on_depth(d, times[-1])
                continue
        inductive = False
        bad = z3.Bool(f"bad@{d}")
        solver.add(z3.Implies(bad, z3.Not(z3.And(list(checks.values())))))
        verdict = solver.check(bad)
        if verdict == z3.sat:
            times.append(time.perf_counter() - t0)
            if on_depth is not None:
                on_depth(d, times[-1])
            model = solver.model()
            violated = tuple(
                name for name, f in checks.items() if not z3.is_true(model.eval(f, True))
            )
            return BmcResult(params, d, violated, un.trace(model, d), tuple(times), False)
        if verdict != z3.unsat:
            raise InternalError(f"z3 answered {verdict} at depth {d}: {solver.reason_unknown()}")
        solver.add(*checks.values())
        for name in list(live_lemmas):
            fact = live_lemmas[name](params, s)
            lit = z3.Bool(f"lemma_{name}@{d}")
            solver.add(z3.Implies(lit, z3.Not(fact)))
            if solver.check(lit) == z3.unsat:
                solver.add(fact)
            else:
                del live_lemmas[name]
        times.append(time.perf_counter() - t0)
        if on_depth is not None:
            on_depth(d, times[-1])
    return BmcResult(params, depth, (), None, tuple(times), inductive)


# --------------------------------------------------------------------------- induction


def at_most_one_red_letter(params: SymParams, s: enc.SymState) -> Expr:
    """Each buffer holds at most one red letter of each snapshot."""
    return z3.And(
        [
            enc.red_letter_count(params, s, ki, ci) <= 1
            for ki in range(len(params.snaps))
            for ci in range(len(params.chans))
        ]
    )


def _per_buffer(
    params: SymParams, s: enc.SymState, f: Callable[[int, int, Expr, Expr, Expr, Expr], Expr]
) -> Expr:
    cs = []
    for ki in range(len(params.snaps)):
        for ci, (src, dst) in enumerate(params.chans):
            ps, pd = params.proc_index(src), params.proc_index(dst)
            cs.append(
                f(
                    ki,
                    ci,
                    s["red", ki, ps],
                    s["red", ki, pd],
                    s["rb", ki, ci],
                    enc.red_letter_count(params, s, ki, ci),
                )
            )
    return z3.And(cs)


def red_letters_only_from_red(params: SymParams, s: enc.SymState) -> Expr:
    """A red letter of k travels only a buffer whose source is red in k."""
    return _per_buffer(params, s, lambda ki, ci, rs, rd, rb, n: z3.Implies(n > 0, rs))


def white_buffer_of_red_source_holds_letter(params: SymParams, s: enc.SymState) -> Expr:
    """A buffer white in k whose source is red in k still holds a red letter of k."""
    return _per_buffer(
        params, s, lambda ki, ci, rs, rd, rb, n: z3.Implies(z3.And(rs, z3.Not(rb)), n >= 1)
    )


def red_buffer_holds_no_letter(params: SymParams, s: enc.SymState) -> Expr:
    """A buffer red in k holds no red letter of k (its one letter was received)."""
    return _per_buffer(params, s, lambda ki, ci, rs, rd, rb, n: z3.Implies(rb, n == 0))


def red_buffer_joins_red_machines(params: SymParams, s: enc.SymState) -> Expr:
    """A buffer is red in k only if its source and its destination are red in k."""
    return _per_buffer(params, s, lambda ki, ci, rs, rd, rb, n: z3.Implies(rb, z3.And(rs, rd)))


STRENGTHENING: Mapping[str, enc.Invariant] = {
    "AtMostOneRedLetter": at_most_one_red_letter,
    "RedLettersOnlyFromRed": red_letters_only_from_red,
    "WhiteBufferOfRedSourceHoldsLetter": white_buffer_of_red_source_holds_letter,
    "RedBufferHoldsNoLetter": red_buffer_holds_no_letter,
    "RedBufferJoinsRedMachines": red_buffer_joins_red_machines,
}
"""The conjuncts that, added to RedLetterInvariant, make it inductive.  Together
they say: the red letters of k in buffer c number 1 if c's source is red and c is
white in k, else 0; and c is red in k only between two machines red in k."""

LEMMAS: Mapping[str, enc.Invariant] = {
    **STRENGTHENING,
    "ShadowConservesTokens": enc.shadow_conserves_tokens,
}
"""The lemmas :func:`bmc` proves and reuses depth by depth."""


@dataclass(frozen=True)
class Cti:
    """A counterexample to induction: a state satisfying the candidate, a step, and a
    successor violating it (the pre-state need not be reachable)."""

    before: CState
    step: Step
    after: CState
    violated: tuple[str, ...]


@dataclass(frozen=True)
class InductionResult:
    """``proved`` is True when ``Init => Inv``, ``Inv /\\ Next => Inv'`` and
    ``Inv => RedLetterInvariant`` all hold (in the bounded state space).  This is EWD
    864's first stage only, the red-letter traffic: it is blind to every recording
    bug; :mod:`redletter.python_model.symbolic.induction` proves the lemmas."""

    params: SymParams
    conjuncts: tuple[str, ...]
    initiation: bool
    consecution: bool
    implies_target: bool
    cti: Cti | None
    seconds: float

    @property
    def proved(self) -> bool:
        return self.initiation and self.consecution and self.implies_target


def induct(
    params: SymParams,
    conjuncts: Sequence[str] = ("RedLetterInvariant", *STRENGTHENING),
    target: str = "RedLetterInvariant",
) -> InductionResult:
    """Check that the conjunction of ``conjuncts`` is an inductive invariant that
    implies ``target``, over well-formed states (TypeOK, buffers within capacity).

    Conjunct names are those of :data:`STRENGTHENING` and of
    :data:`encoding.INVARIANTS`.
    """
    table: dict[str, enc.Invariant] = {**enc.INVARIANTS, **STRENGTHENING}
    for name in (*conjuncts, target):
        if name not in table:
            raise InputError(f"unknown invariant {name!r}; expected one of {', '.join(table)}")
    t0 = time.perf_counter()

    def inv(s: enc.SymState) -> dict[str, Expr]:
        return {name: table[name](params, s) for name in conjuncts}

    enc.check_width(params)
    s0 = enc.fresh_state(params, "pre")
    st = enc.fresh_step(params, "ind")
    s1 = enc.fresh_state(params, "post")

    solver = z3.Solver()
    solver.add(enc.init(params, s0), z3.Not(z3.And(list(inv(s0).values()))))
    initiation = solver.check() == z3.unsat

    solver = z3.Solver()
    solver.add(enc.well_formed(params, s0), z3.And(list(inv(s0).values())))
    solver.add(z3.Not(table[target](params, s0)))
    implies_target = solver.check() == z3.unsat

    solver = z3.Solver()
    post = inv(s1)
    solver.add(enc.well_formed(params, s0), z3.And(list(inv(s0).values())))
    solver.add(enc.transition(params, s0, st, s1), z3.Not(z3.And(list(post.values()))))
    verdict = solver.check()
    cti: Cti | None = None
    if verdict == z3.sat:
        model = solver.model()
        before = enc.decode_state(params, model, s0)
        taken = enc.decode_step(params, model, st)
        after = enc.decode_state(params, model, s1)
        check = apply(params, before, taken)
        if check is None or check.core() != after.core():
            raise InternalError(
                f"the counterexample to induction does not replay: {taken} from {before!r}"
            )
        violated = tuple(n for n, f in post.items() if not z3.is_true(model.eval(f, True)))
        cti = Cti(before, taken, after, violated)
    elif verdict != z3.unsat:
        raise InternalError(f"z3 answered {verdict}: {solver.reason_unknown()}")
    return InductionResult(
        params,
        tuple(conjuncts),
        initiation,
        verdict == z3.unsat,
        implies_target,
        cti,
        time.perf_counter() - t0,
    )


def necessary_conjuncts(params: SymParams) -> dict[str, bool]:
    """For each strengthening conjunct, whether dropping it breaks inductiveness."""
    full = ("RedLetterInvariant", *STRENGTHENING)
    return {
        name: not induct(params, tuple(c for c in full if c != name)).proved
        for name in STRENGTHENING
    }


# --------------------------------------------------------------------------- synthesis


@dataclass(frozen=True)
class SymTrace:
    """What a goal sees: the symbolic states 0..n and steps 0..n-1 of a prefix."""

    params: SymParams
    states: tuple[enc.SymState, ...]
    steps: tuple[enc.SymStep, ...]


Goal = Callable[[SymTrace], Expr]
"""A goal: a z3 formula over a symbolic trace prefix (usually about its last state)."""


def synthesize(params: SymParams, goal: Goal, max_steps: int) -> Trace | None:
    """A shortest behaviour of at most ``max_steps`` steps whose prefix satisfies
    ``goal``, or ``None`` if there is none within the bounds."""
    if max_steps < 0:
        raise InputError(f"--max-steps: expected a number >= 0, got {max_steps}")
    solver = z3.Solver()
    un = _Unrolling(params, solver)
    for n in range(max_steps + 1):
        stopping.check()  # z3's finalizers lose KeyboardInterrupts: ask at each depth
        if n > 0:
            un.extend()
        prefix = SymTrace(params, tuple(un.states), tuple(un.steps))
        lit = z3.Bool(f"goal@{n}")
        solver.add(z3.Implies(lit, goal(prefix)))
        verdict = solver.check(lit)
        if verdict == z3.sat:
            return un.trace(solver.model(), n)
        if verdict != z3.unsat:
            raise InternalError(f"z3 answered {verdict} at {n} steps: {solver.reason_unknown()}")
    return None


def goal_concurrent(k1: int, k2: int) -> Goal:
    """Snapshots k1 and k2 are both in progress in the last state."""

    def goal(t: SymTrace) -> Expr:
        p, s = t.params, t.states[-1]
        return z3.And(
            enc.in_progress(p, s, p.snap_index(k1)), enc.in_progress(p, s, p.snap_index(k2))
        )

    return goal


def goal_records(k: int, chan: Chan, n: int, *, while_running: int | None = None) -> Goal:
    """Snapshot k has recorded at least n messages for buffer ``chan`` in the last
    state, and (optionally) snapshot ``while_running`` is still in progress."""

    def goal(t: SymTrace) -> Expr:
        p, s = t.params, t.states[-1]
        cs = [s["rl", p.snap_index(k), p.chan_index(chan)] >= n]
        if while_running is not None:
            cs.append(enc.in_progress(p, s, p.snap_index(while_running)))
        return z3.And(cs)

    return goal


def goal_two_starters(k: int) -> Goal:
    """Two different machines performed StartSnapshot for snapshot k."""

    def goal(t: SymTrace) -> Expr:
        p = t.params
        started_by = [
            z3.Or([st.chose(("StartSnapshot", pi, k)) for st in t.steps] or [z3.BoolVal(False)])
            for pi in range(len(p.procs))
        ]
        return z3.Sum([z3.If(b, enc.lit(1), enc.lit(0)) for b in started_by]) >= 2

    return goal


def goal_complete(k: int) -> Goal:
    """Snapshot k is complete in the last state."""

    def goal(t: SymTrace) -> Expr:
        return enc.complete(t.params, t.states[-1], t.params.snap_index(k))

    return goal


def named_goal(name: str, params: SymParams) -> Goal:
    """The CLI's goals.  ``two-recorded``: snapshot 2 records two messages on p3→p1
    while snapshot 1 is still running."""
    if name == "two-recorded":
        return goal_records(2, ("p3", "p1"), 2, while_running=1)
    if name == "concurrent":
        return goal_concurrent(1, 2)
    if name == "two-starters":
        return goal_two_starters(1)
    if name == "complete":
        return goal_complete(1)
    raise InputError(
        f"--goal: unknown goal {name!r}; expected one of two-recorded, concurrent, "
        f"two-starters, complete"
    )
