"""The induction: every obligation of every layer, one solver call per disjunct of
Next and layer, under a budget; a counterexample to induction is replayed in the
concrete interpreter before it is reported.

Verdicts are three: ``proved`` (every obligation unsat), ``counterexample`` (z3 found
a state satisfying the invariant, a step, and a broken obligation -- the state need
not be reachable), ``open`` (z3 answered unknown, or the budget ran out, on some
obligation and found no counterexample).  Nothing is reported proved that z3 did not
prove within the budget.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Generic, TypeAlias, TypeVar

import redletter.python_model.symbolic.induction.concrete as cc
from redletter.errors import InputError, InternalError
from redletter.python_model.symbolic.concrete import Msg, app_msg, red_letter
from redletter.python_model.symbolic.induction.apps import AppTheory, theory
from redletter.python_model.symbolic.induction.case import Case
from redletter.python_model.symbolic.induction.invariant import (
    CONJUNCTS,
    PROPHECY,
    REALITY,
    SHADOW1,
    Instance,
    instances,
)
from redletter.python_model.symbolic.induction.obligations import (
    complete_means_all_red,
    init,
    init_ghost,
    lemma0_ends,
    lemma1_ends,
    lemma1_starts,
    pinned,
    prophecy_spent,
    shadow_lemma0,
)
from redletter.python_model.symbolic.induction.replay import replay_state, replay_step
from redletter.python_model.symbolic.induction.result import (
    Budget,
    Cti,
    InductionResult,
    Outcome,
)
from redletter.python_model.symbolic.induction.state import (
    GHOST,
    SEQ,
    Key,
    SymState,
    Terms,
    fresh_state,
    well_formed,
)
from redletter.python_model.symbolic.induction.state import (
    PROPHECY as PROPHECY_KEYS,
)
from redletter.python_model.symbolic.induction.state import (
    REALITY as REALITY_KEYS,
)
from redletter.python_model.symbolic.induction.steps import (
    Disjunct,
    changed,
    disjuncts,
    frame,
    ghost_step,
    prophecy_relation,
)
from redletter.python_model.z3env import z3

__all__ = ["Asking", "decode_step", "decode_world", "prove", "questions", "why_unknown"]

Expr: TypeAlias = Any
Labelled: TypeAlias = list[tuple[str, Expr]]

# ------------------------------------------------------------------------- decoding


def _int(model: z3.ModelRef, e: Expr) -> int:
    return int(model.eval(e, model_completion=True).as_long())


def _bool(model: z3.ModelRef, e: Expr) -> bool:
    return bool(z3.is_true(model.eval(e, model_completion=True)))


def _seq(model: z3.ModelRef, e: Expr) -> tuple[int, ...]:
    n = _int(model, z3.Length(e))
    return tuple(_int(model, e[i]) for i in range(n))


def decode_world(case: Case, model: z3.ModelRef, s: SymState) -> cc.World:
    """The concrete world a model gives a symbolic state."""
    np, nc, ns = len(case.procs), len(case.chans), case.snapshots
    bufs: list[tuple[Msg, ...]] = []
    for c in range(nc):
        bufs.append(_buffer(case, model, s, c))
    red = tuple(frozenset(p for p in range(np) if _bool(model, s["red", k, p])) for k in range(ns))
    reality = cc.Reality(
        local=tuple(_int(model, s["loc", p]) for p in range(np)),
        buf=tuple(bufs),
        red=red,
        red_buf=tuple(
            frozenset(c for c in range(nc) if _bool(model, s["rb", k, c])) for k in range(ns)
        ),
        rec_machine=tuple(
            tuple(_int(model, s["rm", k, p]) if p in red[k] else None for p in range(np))
            for k in range(ns)
        ),
        rec_buf=tuple(tuple(_seq(model, s["rec", k, c]) for c in range(nc)) for k in range(ns)),
    )
    prophecy = tuple(
        cc.Prophecy(
            sigma=tuple(_int(model, s["sig", k, p]) for p in range(np)),
            phi=tuple(_seq(model, s["phi", k, c]) for c in range(nc)),
            acc=tuple(_seq(model, s["acc", k, c]) for c in range(nc)),
            accl=tuple(_bool(model, s["accl", k, c]) for c in range(nc)),
            rest=tuple(_seq(model, s["rst", k, c]) for c in range(nc)),
        )
        for k in range(ns)
    )
    ghost = tuple(
        cc.Ghost(
            local=tuple(_int(model, s["gl", k, p]) for p in range(np)),
            buf=tuple(
                (
                    _seq(model, s["gpre", k, c]),
                    _bool(model, s["ghas", k, c]),
                    _seq(model, s["gpost", k, c]),
                )
                for c in range(nc)
            ),
        )
        for k in range(ns)
    )
    return cc.World(reality, prophecy, ghost)


def _letters(case: Case, model: z3.ModelRef, s: SymState, c: int) -> list[tuple[int, int]]:
    """(messages before it, snapshot index) of every red letter of buffer c, in order."""
    t = Terms(case, s)
    present = [k for k in range(case.snapshots) if _bool(model, s["has", k, c])]
    out = [(len(_seq(model, s["pre", k, c])), k) for k in present]

    def rank(item: tuple[int, int]) -> tuple[int, int]:
        n, k = item
        ahead = sum(1 for m, j in out if j != k and m == n and _bool(model, t.before(c, j, k)))
        return n, ahead

    return sorted(out, key=rank)


def _buffer(case: Case, model: z3.ModelRef, s: SymState, c: int) -> tuple[Msg, ...]:
    values = _seq(model, s["app", c])
    msgs: list[Msg] = []
    at = 0
    for n, k in _letters(case, model, s, c):
        msgs += [app_msg(v) for v in values[at:n]]
        msgs.append(red_letter(case.snaps[k]))
        at = n
    msgs += [app_msg(v) for v in values[at:]]
    return tuple(msgs)


def decode_step(case: Case, model: z3.ModelRef, d: Disjunct, pre: SymState) -> cc.Step:
    """The concrete step a model chose for disjunct ``d``."""
    if d.action == "SendApp":
        return cc.Step("SendApp", c=d.chan, m=_int(model, d.value))
    if d.action == "InternalEvent":
        return cc.Step("InternalEvent", p=d.actor, e=_int(model, d.value))
    if d.action == "StartSnapshot":
        assert d.k is not None
        return cc.Step("StartSnapshot", p=d.actor, k=case.snaps[d.k])
    assert d.chan is not None
    letters = _letters(case, model, pre, d.chan)
    if d.action == "ReceiveApp":
        before = len(_seq(model, d.params["before"]))
        ahead = sum(1 for n, _k in letters if n <= before)
        return cc.Step("ReceiveApp", c=d.chan, i=before + ahead + 1, m=_int(model, d.value))
    assert d.k is not None
    i = next(n for n, (_m, k) in enumerate(letters) if k == d.k)
    return cc.Step("ReceiveRedLetter", c=d.chan, i=letters[i][0] + i + 1, k=case.snaps[d.k])


# ------------------------------------------------------------------------- the prover


ProgressFn = Callable[[Outcome], None]


A = TypeVar("A", bound=Any)


@dataclass(kw_only=True)
class Asking(Generic[A]):
    """What a run of questions keeps (the fixed-topology proof's and the every-N
    proof's): its budget, the conjuncts dropped, whether it stops at the first
    counterexample, and the outcomes so far."""

    budget: Budget
    dropped: frozenset[str]
    stop_at_first: bool
    on_outcome: Callable[[A], None] | None
    t0: float = field(default_factory=time.perf_counter)
    outcomes: list[A] = field(default_factory=list)

    def kept(self, names: Sequence[str]) -> list[str]:
        return [n for n in names if n not in self.dropped]

    def remaining(self) -> float:
        return self.budget.case_seconds - (time.perf_counter() - self.t0)

    def stopped(self) -> bool:
        return self.stop_at_first and any(o.verdict == "counterexample" for o in self.outcomes)

    def record(self, o: A) -> None:
        self.outcomes.append(o)
        if self.on_outcome is not None:
            self.on_outcome(o)


@dataclass(kw_only=True)
class _Run(Asking[Outcome]):
    case: Case
    app: AppTheory
    reads: _Reads


def _check(
    run: _Run, context: Sequence[Expr], goal: Expr, units: int | None = None
) -> tuple[Any, z3.Solver]:
    """One fresh solver, one ``check()`` within ``units`` (default: a call's budget).
    (z3's sequence solver is much weaker under assumption literals and after earlier
    checks, so no solver is reused.)"""
    solver = z3.Solver()
    solver.set("rlimit", run.budget.call_units if units is None else units)
    solver.set("timeout", max(1, int(run.remaining() * 1000)))
    solver.add(*context)
    solver.add(goal)
    return solver.check(), solver


def _conquer(
    run: _Run,
    context: Sequence[Expr],
    goal: Expr,
    splits: Sequence[Expr],
    units: int | None = None,
) -> tuple[Any, z3.Solver | None, str]:
    """Is ``context /\\ goal`` satisfiable?  A question z3 does not answer within the
    budget's ``probe_units`` is split on the next Boolean of ``splits`` (both values:
    cube and conquer), down to single cases, which get ``units`` (default: a call's
    budget).  Returns (sat, the solver with the model), (unsat, None) when every case
    is unsat, or (unknown, a solver, why) at the first case z3 cannot settle."""
    probe = min(run.budget.probe_units, run.budget.call_units)
    cubes: list[tuple[Expr, ...]] = [()]
    while cubes:
        cube = cubes.pop()
        if run.remaining() <= 0:
            return z3.unknown, None, "the case's wall-clock budget is spent"
        last = len(cube) == len(splits)
        verdict, solver = _check(run, [*context, *cube], goal, units if last else probe)
        if verdict == z3.sat:
            return z3.sat, solver, ""
        if verdict == z3.unknown:
            if last:  # one case z3 cannot settle: the question is open
                return z3.unknown, solver, why_unknown(solver)
            lit = splits[len(cube)]
            cubes += [(*cube, z3.Not(lit)), (*cube, lit)]
    return z3.unsat, None, ""


def why_unknown(solver: z3.Solver) -> str:
    """Why z3 answered unknown, in the words of a verdict."""
    reason = str(solver.reason_unknown())
    if reason in ("canceled", "max. resource limit exceeded"):
        return "the per-call resource budget is spent"
    if reason == "timeout":
        return "the case's wall-clock budget is spent"
    return reason


class _Reads:
    """The state variables a formula reads, as keys (``pre`` and ``post`` alike), for
    pruning a question's context to the facts about what it talks of."""

    def __init__(self, *states: SymState) -> None:
        self.keys: dict[int, Key] = {}
        for st in states:
            for key, v in st.vars.items():
                self.keys[v.get_id()] = key
        self.cache: dict[int, frozenset[Key]] = {}

    def __call__(self, e: Expr) -> frozenset[Key]:
        eid = e.get_id()
        if eid in self.cache:
            return self.cache[eid]
        if eid in self.keys:
            out = frozenset((self.keys[eid],))
        elif z3.is_app(e) and e.num_args() > 0:
            out = frozenset().union(*(self(a) for a in e.children()))
        else:
            out = frozenset()
        self.cache[eid] = out
        return out


def _ask(
    run: _Run,
    layer: str,
    kind: str,
    check: str,
    context: Sequence[Expr],
    obligations: Labelled,
    witness: Callable[[z3.ModelRef, tuple[str, ...]], Cti],
    shrink: Sequence[Expr] = (),
    splits: Sequence[Expr] = (),
    *,
    core: Sequence[Expr] = (),
    focus: frozenset[Key] = frozenset(),
    one_by_one: bool = False,
) -> Outcome:
    """Ask whether ``core`` and ``context`` imply every obligation.

    Each question is first asked with the context pruned to the formulas that read
    a variable the obligations or ``focus`` read (fewer facts: an unsat answer is
    still a proof); if that is not unsat, it is asked again with the whole context.
    ``one_by_one`` asks one question per obligation, else one for all (then one by
    one if z3 does not answer).  On sat the model's sequences are shrunk and the
    counterexample is built and replayed (``witness``)."""
    t0 = time.perf_counter()
    if not obligations:
        return Outcome(layer, kind, check, "proved", 0, 0.0)
    if run.remaining() <= 0 or run.stopped():
        reason = "the case's wall-clock budget is spent" if run.remaining() <= 0 else ""
        return Outcome(layer, kind, check, "not run", len(obligations), 0.0, reason=reason)
    groups = [[ob] for ob in obligations] if one_by_one else [list(obligations)]
    reason = ""
    unknown = False
    for group in groups:
        # all at once, briefly (most steps are settled here); else one by one
        verdict, solver, why, full = _question(
            run, core, context, group, splits if len(group) == 1 else (), focus
        )
        if verdict == z3.unknown and len(group) > 1:
            for ob in group:
                verdict, solver, why, full = _question(run, core, context, [ob], splits, focus)
                if verdict == z3.sat:
                    break
                if verdict == z3.unknown:
                    unknown, reason = True, why or reason
            else:
                continue
        if verdict == z3.unknown:
            unknown, reason = True, why or reason
            continue
        if verdict == z3.unsat:
            continue
        assert solver is not None
        model = solver.model()
        chosen = next(ob for _, ob in group if not _bool(model, ob))
        model = _shrink(run, full, z3.Not(chosen), shrink, model)
        broken = tuple(label for label, ob in obligations if not _bool(model, ob))
        cti = witness(model, broken)
        return Outcome(
            layer,
            kind,
            check,
            "counterexample",
            len(obligations),
            time.perf_counter() - t0,
            cti=cti,
        )
    secs = time.perf_counter() - t0
    if unknown:
        return Outcome(layer, kind, check, "unknown", len(obligations), secs, reason=reason)
    _vacuity(run, layer, check, [*core, *context])
    return Outcome(layer, kind, check, "proved", len(obligations), time.perf_counter() - t0)


def _question(
    run: _Run,
    core: Sequence[Expr],
    context: Sequence[Expr],
    group: Labelled,
    splits: Sequence[Expr],
    focus: frozenset[Key],
) -> tuple[Any, z3.Solver | None, str, list[Expr]]:
    """One question (pruned context first, then the whole one): (verdict, solver,
    why unknown, the context the verdict is for)."""
    reads = run.reads
    goal = z3.Or([z3.Not(ob) for _, ob in group])
    wanted = focus.union(*(reads(ob) for _, ob in group))
    small = [*core, *[f for f in context if reads(f) & wanted]]
    full = [*core, *context]
    probe = None if len(group) == 1 else run.budget.probe_units
    verdict, solver, why = _conquer(run, small, goal, splits, probe)
    if verdict == z3.unsat or len(small) == len(full):
        return verdict, solver, why, small
    verdict, solver, why = _conquer(run, full, goal, splits, probe)
    return verdict, solver, why, full


def _vacuity(run: _Run, layer: str, check: str, context: Sequence[Expr]) -> None:
    """An obligation proved because the context is unsatisfiable proves nothing: the
    context of every check must have a model (a step of each disjunct must be
    possible from some state satisfying the invariant)."""
    verdict, _ = _check(run, context, z3.BoolVal(True))
    if verdict == z3.unsat:
        raise InternalError(
            f"{run.case.name}, layer {layer}, {check}: no state satisfies the invariant and "
            "takes this step, so its obligations hold vacuously; the encoding is wrong",
            code="RL-INTERNAL-INDUCTION",
        )


def _shrink(
    run: _Run, context: Sequence[Expr], goal: Expr, seqs: Sequence[Expr], model: z3.ModelRef
) -> z3.ModelRef:
    """A model with short sequences, for a counterexample a student can read: the
    smallest total length among 0, 1, 2, 3, 4, 6, 8, 12 that z3 finds within the
    probe budget."""
    if not seqs:
        return model
    total = z3.Sum([z3.Length(x) for x in seqs])
    found = _int(model, total)
    for bound in (0, 1, 2, 3, 4, 6, 8, 12):
        if bound >= found:
            break
        verdict, solver = _check(run, [*context, total <= bound], goal, run.budget.probe_units)
        if verdict == z3.sat:
            return solver.model()
    return model


def _splits(case: Case, d: Disjunct, pre: SymState) -> list[Expr]:
    """The Booleans a question about disjunct ``d`` is split on when z3 does not answer
    it at once: per snapshot, the colours of the machines at both ends of the step's
    buffer, the prophecy's red-letter bit, the red letter in the buffer, where a
    non-FIFO receipt is, the buffer's colour and the shadow's red letter."""
    out: list[Expr] = []
    for k in range(case.snapshots):
        out.append(pre["red", k, d.actor])
        if d.chan is not None:
            c = d.chan
            out += [
                pre["red", k, case.src(c)],
                pre["red", k, case.dst(c)],
                pre["accl", k, c],
                pre["has", k, c],
            ]
            if f"ahead{k}" in d.params:
                out.append(d.params[f"ahead{k}"])
            out += [pre["rb", k, c], pre["ghas", k, c]]
    unique: list[Expr] = []
    for x in out:
        if not any(x.eq(y) for y in unique):
            unique.append(x)
    return unique


def _seq_vars(*states: SymState) -> list[Expr]:
    return [v for s in states for v in s.vars.values() if v.sort() == SEQ]


def _labelled(items: Sequence[Instance]) -> Labelled:
    return [(i.label, i.formula) for i in items]


def _touched(items: Sequence[Instance], keys: set[Key]) -> Labelled:
    return [(i.label, i.formula) for i in items if i.reads & keys]


def questions(case: Case, layers: Sequence[str] = ("reality", "prophecy", "shadow1")) -> int:
    """How many outcomes :func:`prove` reports for ``case`` (for a progress bar)."""
    steps = len(disjuncts(case, theory(case.app), fresh_state(case, "count"), "count"))
    per_layer = {"reality": 3 + steps, "prophecy": case.snapshots + steps, "shadow1": 3 + steps}
    return sum(per_layer[x] for x in layers)


def prove(
    case: Case,
    *,
    drop: Sequence[str] = (),
    budget: Budget | None = None,
    stop_at_first: bool = False,
    layers: Sequence[str] = ("reality", "prophecy", "shadow1"),
    on_outcome: ProgressFn | None = None,
) -> InductionResult:
    """Check the invariant without the conjuncts ``drop``, layer by layer.

    Each counterexample is replayed in :mod:`.concrete` (:class:`InternalError` if
    it does not replay).  ``stop_at_first`` stops at the first counterexample.
    """
    unknown = [n for n in drop if n not in CONJUNCTS]
    if unknown:
        raise InputError(
            f"--drop: unknown conjunct {unknown[0]!r}; expected one of {', '.join(CONJUNCTS)}",
            code="RL-INPUT-USAGE",
        )
    budget = budget or Budget()
    app = theory(case.app)
    pre, post = fresh_state(case, "pre"), fresh_state(case, "post")
    run = _Run(
        case=case,
        app=app,
        budget=budget,
        dropped=frozenset(drop),
        stop_at_first=stop_at_first,
        on_outcome=on_outcome,
        reads=_Reads(pre, post),
    )
    steps = disjuncts(case, app, pre, "step")
    order = [x for x in ("reality", "prophecy", "shadow1") if x in layers]
    for layer in order:
        if layer == "reality":
            _reality(run, pre, post, steps)
        elif layer == "prophecy":
            _prophecy(run, pre, post, steps)
        else:
            _shadow1(run, pre, post, steps)
    return InductionResult(
        case,
        tuple(sorted(run.dropped, key=list(CONJUNCTS).index)),
        budget,
        tuple(run.outcomes),
        time.perf_counter() - run.t0,
    )


def _wf(case: Case, s: SymState, ghost: bool) -> list[Expr]:
    return [f for label, f in well_formed(case, s) if ghost or not label.startswith("shadow")]


def _wf_labelled(case: Case, s: SymState, ghost: bool) -> Labelled:
    return [(label, f) for label, f in well_formed(case, s) if label.startswith("shadow") == ghost]


def _reality(run: _Run, pre: SymState, post: SymState, steps: Sequence[Disjunct]) -> None:
    case, app = run.case, run.app
    inv = run.kept(REALITY)
    pre_inv = instances(case, pre, inv)
    post_inv = instances(case, post, inv)
    wf_pre = _wf(case, pre, ghost=False)
    seqs = _seq_vars_of(case, pre, REALITY_KEYS)
    # initiation
    run.record(
        _ask(
            run,
            "reality",
            "state",
            "Initiation",
            [init(case, pre), *wf_pre],
            [("Initiation: " + lab, f) for lab, f in _labelled(pre_inv)],
            _state_witness(run, "reality", "Initiation", pre),
            seqs,
            one_by_one=True,
        )
    )
    for d in steps:
        ctx = [*wf_pre, *[i.formula for i in pre_inv], *frame(d.upd, pre, post, REALITY_KEYS)]
        core = list(d.guard)
        obs: Labelled = _wf_labelled(case, post, ghost=False)
        t0 = Terms(case, pre)
        for x in d.letters:
            obs.append(
                (
                    f"AtMostOneRedLetter({case.snaps[x.k]}, {case.chan_name(x.chan)})",
                    z3.Implies(x.when, z3.Not(t0.has(x.k, x.chan))),
                )
            )
        obs += _touched(post_inv, changed(d, pre))
        for k in range(case.snapshots):
            aux, sh = shadow_lemma0(case, app, d, pre, post, k, "s0")
            core += aux
            obs += sh
        run.record(
            _ask(
                run,
                "reality",
                "step",
                d.label,
                ctx,
                obs,
                _step_witness(run, "reality", d, pre, post),
                seqs,
                _splits(case, d, pre),
                core=core,
                focus=frozenset(changed(d, pre)),
            )
        )
    for name, obs in (
        ("CompleteMeansAllRed", complete_means_all_red(case, pre)),
        ("Lemma0EndsInSnapshotState", lemma0_ends(case, pre)),
    ):
        run.record(
            _ask(
                run,
                "reality",
                "state",
                name,
                [*wf_pre, *[i.formula for i in pre_inv]],
                obs,
                _state_witness(run, "reality", name, pre),
                seqs,
                one_by_one=True,
            )
        )


def _seq_vars_of(case: Case, s: SymState, kinds: Sequence[str]) -> list[Expr]:
    return [v for key, v in s.vars.items() if key[0] in kinds and v.sort() == SEQ]


def _prophecy(run: _Run, pre: SymState, post: SymState, steps: Sequence[Disjunct]) -> None:
    case = run.case
    facts = run.kept(REALITY)
    props = run.kept(PROPHECY)
    seqs = _seq_vars_of(case, pre, (*REALITY_KEYS, *PROPHECY_KEYS))
    base = [*_wf(case, pre, ghost=False), *[i.formula for i in instances(case, pre, facts)]]
    p_pre = instances(case, pre, props)
    p_post = instances(case, post, props)
    post_facts = [i.formula for i in instances(case, post, facts)]
    for d in steps:
        rel = prophecy_relation(case, d, pre, post)
        ctx = [
            *base,
            *_wf(case, post, ghost=False),
            *post_facts,
            *frame(d.upd, pre, post, REALITY_KEYS),
            *rel.defs,
            *[i.formula for i in p_post],
        ]
        keys = changed(d, pre) | rel.consumed
        obs = _touched(p_pre, keys) + list(rel.conds)
        run.record(
            _ask(
                run,
                "prophecy",
                "backward",
                d.label,
                ctx,
                obs,
                _step_witness(run, "prophecy", d, pre, post),
                _seq_vars_of(case, post, (*REALITY_KEYS, *PROPHECY_KEYS)),
                _splits(case, d, pre),
                core=d.guard,
                focus=frozenset(keys),
            )
        )
    for k, kid in enumerate(case.snaps):
        t = Terms(case, pre)
        name = f"ProphecyAtCompletion({kid})"
        run.record(
            _ask(
                run,
                "prophecy",
                "state",
                name,
                base,
                [(i.label, i.formula) for i in p_pre if f"({kid}," in i.label],
                _state_witness(run, "prophecy", name, pre),
                seqs,
                core=[t.complete(k), prophecy_spent(case, pre, k)],
                one_by_one=True,
            )
        )


def _shadow1(run: _Run, pre: SymState, post: SymState, steps: Sequence[Disjunct]) -> None:
    case, app = run.case, run.app
    facts = run.kept(REALITY) + run.kept(PROPHECY)
    rules = run.kept(SHADOW1)
    seqs = _seq_vars(pre)
    base = [*_wf(case, pre, ghost=True), *[i.formula for i in instances(case, pre, facts)]]
    r_pre = instances(case, pre, rules)
    # initiation: the shadow's start, from the prophecy at Init
    run.record(
        _ask(
            run,
            "shadow1",
            "state",
            "Initiation",
            [init(case, pre), *base, init_ghost(case, pre)],
            [("Initiation: " + lab, f) for lab, f in _labelled(r_pre)]
            + [("Initiation: " + lab, f) for lab, f in _wf_labelled(case, pre, ghost=True)],
            _state_witness(run, "shadow1", "Initiation", pre),
            seqs,
            one_by_one=True,
        )
    )
    inv_pre = [i.formula for i in r_pre]
    r_post = instances(case, post, rules)
    post_facts = [i.formula for i in instances(case, post, facts)]
    for d in steps:
        rel = prophecy_relation(case, d, pre, post)
        ctx = [
            *base,
            *inv_pre,
            *_wf(case, post, ghost=False),
            *post_facts,
            *frame(d.upd, pre, post, REALITY_KEYS),
            *rel.defs,
            *[f for _, f in rel.conds],
        ]
        core = list(d.guard)
        gupd: dict[Key, Expr] = {}
        possible: Labelled = []
        for k, kid in enumerate(case.snaps):
            g = ghost_step(case, app, d, pre, k, "g")
            core += g.aux
            gupd.update(g.upd)
            possible.append((f"RedActionPossible({kid})", g.possible))
        ctx += frame(gupd, pre, post, GHOST)
        keys = (
            changed(d, pre) | rel.consumed | {key for key, v in gupd.items() if not v.eq(pre[key])}
        )
        obs = _wf_labelled(case, post, ghost=True) + possible + _touched(r_post, keys)
        for k in range(case.snapshots):
            for c in range(len(case.chans)):
                if keys & {("rec", k, c), ("gpre", k, c), ("ghas", k, c)}:
                    obs.append(pinned(case, pre, post, k, c))
        run.record(
            _ask(
                run,
                "shadow1",
                "step",
                d.label,
                ctx,
                obs,
                _step_witness(run, "shadow1", d, pre, post),
                seqs,
                _splits(case, d, pre),
                core=core,
                focus=frozenset(keys),
            )
        )
    for name, obs in (
        ("Lemma1StartsInSnapshotState", lemma1_starts(case, pre)),
        ("Lemma1EndsInFinalState", lemma1_ends(case, pre)),
    ):
        run.record(
            _ask(
                run,
                "shadow1",
                "state",
                name,
                [*base, *inv_pre],
                obs,
                _state_witness(run, "shadow1", name, pre),
                seqs,
                one_by_one=True,
            )
        )


# ------------------------------------------------------------------------- witnesses


def _state_witness(
    run: _Run, layer: str, name: str, s: SymState
) -> Callable[[z3.ModelRef, tuple[str, ...]], Cti]:
    def build(model: z3.ModelRef, broken: tuple[str, ...]) -> Cti:
        world = decode_world(run.case, model, s)
        cti = Cti(layer, "state", name, broken, world, None, None)
        app = run.app.concrete(model, run.case.procs)
        replay_state(run.case, app, cti, sorted(run.dropped))
        return replace(cti, functions=tuple(app.calls))

    return build


def _step_witness(
    run: _Run, layer: str, d: Disjunct, pre: SymState, post: SymState
) -> Callable[[z3.ModelRef, tuple[str, ...]], Cti]:
    def build(model: z3.ModelRef, broken: tuple[str, ...]) -> Cti:
        before = decode_world(run.case, model, pre)
        after = decode_world(run.case, model, post)
        st = decode_step(run.case, model, d, pre)
        kind = "backward" if layer == "prophecy" else "step"
        cti = Cti(layer, kind, d.label, broken, before, st, after)
        app = run.app.concrete(model, run.case.procs)
        replay_step(run.case, app, cti, sorted(run.dropped))
        return replace(cti, functions=tuple(app.calls))

    return build
