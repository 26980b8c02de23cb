"""The every-N induction: every obligation of every layer, one question per action of
Next (and per state check), for every network at once; each question under a
budget; a counterexample read back on the finite network z3 chose, and replayed.

How a question is asked:

1. over the sorts, with the probe budget: unsat is a proof for every number of
   machines, snapshots and messages, every graph and every starter;
2. if not settled, on small finite networks (every quantifier expanded over a few
   machines, snapshots and messages, smallest first): a model there is a
   counterexample, and a small one;
3. if still not settled, over the sorts with a call's whole budget.

Unknown in the end is ``open``, never ``proved``.  A counterexample found over the
sorts is searched again on finite networks up to the size of z3's model, to read
back the smallest.  A proved question whose context no state satisfies is an error
(``RL-INTERNAL-INDUCTION``): a step proved only because no state can take it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import redletter.python_model.symbolic.induction.everyn.liveness as lv
import redletter.python_model.symbolic.induction.everyn.obligations as ob
from redletter.errors import InputError, InternalError
from redletter.python_model.symbolic.induction.case import VARIANTS, variant_named
from redletter.python_model.symbolic.induction.everyn.bridge import Domains, Reader, domains
from redletter.python_model.symbolic.induction.everyn.fragment import classify
from redletter.python_model.symbolic.induction.everyn.invariant import (
    CONJUNCTS,
    PROPHECY,
    REALITY,
    formulas,
)
from redletter.python_model.symbolic.induction.everyn.replay import replay
from redletter.python_model.symbolic.induction.everyn.result import (
    EnCti,
    EnOutcome,
    EveryNResult,
)
from redletter.python_model.symbolic.induction.everyn.steps import (
    ACTIONS,
    Disjunct,
    consistent,
    transition,
)
from redletter.python_model.symbolic.induction.everyn.steps import disjunct as make_disjunct
from redletter.python_model.symbolic.induction.everyn.terms import (
    Prophecy,
    Terms,
    init,
    prophecy,
    well_formed,
)
from redletter.python_model.symbolic.induction.everyn.vocab import (
    Expr,
    State,
    Vocabulary,
    grounded,
    is_grounded,
)
from redletter.python_model.symbolic.induction.prove import Asking
from redletter.python_model.symbolic.induction.prove import why_unknown as _why
from redletter.python_model.symbolic.induction.result import Budget
from redletter.python_model.z3env import z3

__all__ = ["LAYERS", "SIZES", "make_disjunct", "prove_every_n", "questions"]

LAYERS = ("reality", "prophecy", "shadow1", "liveness")

SIZES: tuple[tuple[int, int, int], ...] = (
    (2, 1, 1),
    (2, 1, 2),
    (2, 2, 1),
    (2, 2, 2),
    (3, 1, 2),
    (3, 1, 3),
    (3, 2, 2),
    (3, 2, 3),
    (4, 2, 4),
)
"""The finite networks a question is tried on, smallest first: (machines,
snapshots, messages), each "at most" (two constants may name one element).  None
has one machine: a network has a message (no sort is empty), and a message travels
on a buffer between two machines."""

Labelled = list[tuple[str, Expr]]


@dataclass
class Built:
    """One question, built over the sorts or on a finite network."""

    context: list[Expr]
    obligations: Labelled
    terms: list[Expr] = field(default_factory=list)  #: constants of quantified sorts


@dataclass(frozen=True)
class Question:
    layer: str
    kind: str
    check: str
    build: Callable[[], Built]
    states: tuple[State, ...]
    disjunct: Disjunct | None = None
    uses_prophecy: bool = False
    head: lv.Head | None = None  #: liveness: the head the question follows
    snapshot: Expr | None = None  #: liveness: the snapshot a state question is about


@dataclass(kw_only=True)
class _Run(Asking[EnOutcome]):
    v: Vocabulary
    variant: str
    pr: Prophecy
    built: dict[str, list[Expr]] = field(default_factory=dict)

    def memo(self, key: str, build: Callable[[], list[Expr]]) -> list[Expr]:
        """``build()``, kept for the next question over the sorts (a question on a
        finite network builds its own: its quantifiers expand)."""
        if is_grounded():
            return build()
        if key not in self.built:
            self.built[key] = build()
        return self.built[key]


def _solver(run: _Run, units: int) -> z3.Solver:
    s = z3.Solver()
    s.set("rlimit", units)
    s.set("timeout", max(1, int(run.remaining() * 1000)))
    return s


def _instantiations(s: z3.Solver) -> int:
    st = s.statistics()
    keys = list(st.keys())
    return int(st.get_key_value("quant instantiations")) if "quant instantiations" in keys else 0


def _goal(obs: Labelled) -> Expr:
    return z3.Or([z3.Not(f) for _, f in obs])


def _ground(run: _Run, q: Question, size: tuple[int, int, int]) -> tuple[Built, Domains]:
    dom = domains(run.v, *size, stem="g")
    with grounded(dom.mapping(run.v)):
        built = q.build()
    built.context += dom.closed(run.v, built.terms)
    return built, dom


Found = tuple[z3.ModelRef, Built, Domains]
"""A counterexample on a finite network: z3's model, the question, its domains."""


def _bounded(run: _Run, q: Question, sizes: Sequence[tuple[int, int, int]]) -> Found | None:
    """A counterexample on the first finite network of ``sizes`` that has one; None
    when none has (or z3 does not settle one: a larger network will not be settled
    within the same budget either)."""
    for size in sizes:
        if run.remaining() <= 0:
            return None
        built, dom = _ground(run, q, size)
        s = _solver(run, run.budget.probe_units)
        s.add(*built.context, _goal(built.obligations))
        verdict = s.check()
        if verdict == z3.sat:
            return s.model(), built, dom
        if verdict == z3.unknown:
            return None
    return None


def _ask(run: _Run, q: Question) -> EnOutcome:
    t0 = time.perf_counter()
    if run.remaining() <= 0 or run.stopped():
        reason = "the wall-clock budget is spent" if run.remaining() <= 0 else ""
        return EnOutcome(q.layer, q.kind, q.check, "not run", 0, 0.0, reason=reason)
    built = q.build()
    if not built.obligations:
        return EnOutcome(q.layer, q.kind, q.check, "proved", 0, 0.0, reason="no obligation")
    question = [*built.context, _goal(built.obligations)]
    fragment = classify(question, _QUANTIFIED)
    verdict, inst, why, found = _settle(run, q, question)

    def outcome(verdict: str, **kw: Any) -> EnOutcome:
        return EnOutcome(
            q.layer,
            q.kind,
            q.check,
            verdict,  # type: ignore[arg-type]
            len(built.obligations),
            time.perf_counter() - t0,
            fragment=fragment,
            instantiations=inst,
            **kw,
        )

    if found is not None:
        return outcome("counterexample", cti=_cti(run, q, *found))
    if verdict == z3.unsat:
        why = _vacuity(run, q, built)
        return outcome("unknown", reason=why) if why else outcome("proved")
    return outcome("unknown", reason=why)


def _settle(run: _Run, q: Question, question: list[Expr]) -> tuple[Any, int, str, Found | None]:
    """Ask ``question`` (see the module's docstring): (z3's verdict, its quantifier
    instantiations, why unknown, a counterexample on a finite network if found)."""
    s = _solver(run, run.budget.probe_units)  # 1. over the sorts, briefly
    s.add(*question)
    verdict = s.check()
    if verdict == z3.unknown:
        found = _bounded(run, q, SIZES)  # 2. small finite networks
        if found is not None:
            return z3.sat, _instantiations(s), "", found
        s = _solver(run, run.budget.call_units)  # 3. over the sorts, the whole budget
        s.add(*question)
        verdict = s.check()
    inst = _instantiations(s)
    if verdict != z3.sat:
        return verdict, inst, _why(s) if verdict == z3.unknown else "", None
    size = _universe(run.v, s.model())
    sizes = [x for x in SIZES if all(a <= b for a, b in zip(x, size, strict=True))]
    found = _bounded(run, q, sizes if size in sizes else [*sizes, size])
    if found is None:
        why = (
            "z3 found a counterexample over the sorts but none on a finite network of "
            f"its size {size} within the budget"
        )
        return z3.unknown, inst, why, None
    return z3.sat, inst, "", found


_QUANTIFIED = ("Machine", "Snapshot", "Message")


def _universe(v: Vocabulary, model: z3.ModelRef) -> tuple[int, int, int]:
    s = v.sorts
    sizes = []
    for sort in (s.machine, s.snapshot, s.message):
        try:
            sizes.append(max(1, len(model.get_universe(sort))))
        except z3.Z3Exception:
            sizes.append(1)
    return sizes[0], sizes[1], sizes[2]


def _vacuity(run: _Run, q: Question, built: Built) -> str:
    """Some state satisfies the question's context and takes its step: else it was
    proved only because nothing can happen (an error of the encoding).  Returns why
    it could not be shown, if z3 did not settle it."""
    s = _solver(run, run.budget.call_units)
    s.add(*built.context)
    verdict = s.check()
    if verdict == z3.sat:
        return ""
    if verdict == z3.unknown:
        for size in SIZES:
            gbuilt, _dom = _ground(run, q, size)
            gs = _solver(run, run.budget.probe_units)
            gs.add(*gbuilt.context)
            if gs.check() == z3.sat:
                return ""
        return "z3 did not show that some state satisfies the invariant and takes this step"
    raise InternalError(
        f"every-N induction ({run.variant}), layer {q.layer}, {q.check}: no state satisfies "
        "the invariant and takes this step, so its obligations hold vacuously; the encoding "
        "is wrong",
        code="RL-INTERNAL-INDUCTION",
    )


def _cti(run: _Run, q: Question, model: z3.ModelRef, built: Built, dom: Domains) -> EnCti:
    """Read the counterexample back on its finite network and replay it."""
    broken = tuple(
        label for label, f in built.obligations if z3.is_false(model.eval(f, model_completion=True))
    )
    rd = Reader(run.v, model, dom)
    net = rd.net()
    before = rd.reality(net, q.states[0])
    after = rd.reality(net, q.states[1]) if len(q.states) > 1 else None
    step = rd.step(q.disjunct) if q.disjunct is not None else None
    pr = rd.prophecy(net, run.pr) if q.uses_prophecy else None
    head = None
    if q.head is not None:
        h = q.head
        head = lv.ConcreteHead(
            rd.machine(h.a), rd.machine(h.b), rd.true(h.letter), rd.message(h.m), rd.snapshot(h.j)
        )
    snap = rd.snapshot(q.snapshot) if q.snapshot is not None else None
    app = rd.app()
    cti = EnCti(q.layer, q.kind, q.check, broken, net, before, step, after, pr, (), head, snap)
    replay(cti, app, run.variant, sorted(run.dropped))
    return replace(cti, functions=tuple(app.calls))


# ------------------------------------------------------------------------- the questions


def _labelled(xs: Labelled, prefix: str = "") -> Labelled:
    return [(prefix + label, f) for label, f in xs]


def _conj(run: _Run, st: State, names: Sequence[str]) -> list[Expr]:
    return run.memo(
        f"{st.tag}:{','.join(names)}",
        lambda: [f for _, f in formulas(run.v, st, run.pr, list(names))],
    )


def _forward(names: Sequence[str]) -> list[str]:
    return [n for n in names if not CONJUNCTS[n].at_completion]


def questions_of(run: _Run, layers: Sequence[str]) -> list[Question]:
    v, pr = run.v, run.pr
    pre, post = v.state("pre"), v.state("post")

    def axioms() -> list[Expr]:
        return run.memo("axioms", lambda: [f for _, f in v.rigid.axioms()])

    reality = run.kept(REALITY)
    proph = run.kept(PROPHECY)
    out: list[Question] = []

    def wf(st: State) -> list[Expr]:
        return run.memo(f"wf:{st.tag}", lambda: [f for _, f in well_formed(v, st)])

    def step_base(d: Disjunct, layer: str) -> list[Expr]:
        ctx = [*axioms(), *wf(pre), *_conj(run, pre, reality), *d.guard]
        ctx += [f for _, f in transition(v, d, pre, post)]
        if layer != "reality":
            ctx += [*wf(post), *_conj(run, post, reality)]
            ctx += [f for _, f in consistent(v, d, pre, pr)]
        return ctx

    def terms(d: Disjunct | None, kappa: bool) -> list[Expr]:
        out_ = list(d.params.values()) if d is not None else []
        return [*out_, pr.kappa] if kappa else out_

    actions = list(ACTIONS)

    def disjunct(action: str) -> Disjunct:
        return make_disjunct(v, pre, run.variant, action)

    if "reality" in layers:

        def init0() -> Built:
            return Built(
                [*axioms(), init(v, pre), *wf(pre)],
                _labelled(formulas(v, pre, pr, reality), "Initiation: "),
            )

        out.append(Question("reality", "initiation", "Initiation", init0, (pre,)))
        for action in actions:

            def step0(action: str = action) -> Built:
                d = disjunct(action)
                obs = well_formed(v, post) + formulas(v, post, pr, reality)
                obs += ob.at_most_one_letter(v, d, pre) + ob.shadow_lemma0(v, d, pre, post)
                return Built(step_base(d, "reality"), obs, terms(d, False))

            out.append(Question("reality", "step", action, step0, (pre, post), disjunct(action)))

        def ends0() -> Built:
            return Built([*axioms(), *wf(pre), *_conj(run, pre, reality)], ob.lemma0_ends(v, pre))

        out.append(Question("reality", "state", "Lemma0EndsInSnapshotState", ends0, (pre,)))
    if "prophecy" in layers:
        forward = _forward(proph)

        def init1() -> Built:
            return Built(
                [*axioms(), init(v, pre), *wf(pre)],
                _labelled(formulas(v, pre, pr, forward), "Initiation: "),
                [pr.kappa],
            )

        out.append(Question("prophecy", "initiation", "Initiation", init1, (pre,), None, True))
        for action in actions:

            def step1(action: str = action) -> Built:
                d = disjunct(action)
                ctx = [*step_base(d, "prophecy"), *_conj(run, pre, forward)]
                return Built(ctx, formulas(v, post, pr, forward), terms(d, True))

            out.append(
                Question("prophecy", "step", action, step1, (pre, post), disjunct(action), True)
            )
        at_end = [n for n in proph if CONJUNCTS[n].at_completion]

        def completion() -> Built:
            t = Terms(v, pre)
            ctx = [*axioms(), *wf(pre), *_conj(run, pre, reality), *_conj(run, pre, forward)]
            ctx.append(t.complete(pr.kappa))
            return Built(ctx, formulas(v, pre, pr, at_end), [pr.kappa])

        out.append(
            Question("prophecy", "completion", "AtCompletion", completion, (pre,), None, True)
        )
    if "shadow1" in layers:

        def state_ctx() -> list[Expr]:
            return [*axioms(), *wf(pre), *_conj(run, pre, reality), *_conj(run, pre, proph)]

        def starts() -> Built:
            return Built(state_ctx(), ob.lemma1_starts(v, pre, pr), [pr.kappa])

        out.append(
            Question("shadow1", "state", "Lemma1StartsInSnapshotState", starts, (pre,), None, True)
        )
        for action in actions:

            def step3(action: str = action) -> Built:
                d = disjunct(action)
                ctx = [*step_base(d, "shadow1"), *_conj(run, pre, proph), *_conj(run, post, proph)]
                return Built(ctx, ob.shadow_lemma1(v, d, pre, post, pr), terms(d, True))

            out.append(
                Question("shadow1", "step", action, step3, (pre, post), disjunct(action), True)
            )

        def ends() -> Built:
            return Built(state_ctx(), ob.lemma1_ends(v, pre, pr), [pr.kappa])

        out.append(Question("shadow1", "state", "Lemma1EndsInFinalState", ends, (pre,), None, True))
    if "liveness" in layers:
        h = lv.head(v)
        for action in actions:

            def live(action: str = action) -> Built:
                d = disjunct(action)
                ctx = [*step_base(d, "reality"), *wf(post), *_conj(run, post, reality)]
                obs = ob.at_most_one_letter(v, d, pre) + lv.colours_stay(v, pre, post)
                obs += lv.letter_stays(v, d, pre, post)
                obs += lv.nothing_gets_ahead(v, pre, post) + lv.head_stays(h, pre, post)
                if action in ("ReceiveApp", "ReceiveRedLetter"):
                    obs += lv.head_taken(v, d, h, pre, post)
                return Built(ctx, obs, [*terms(d, False), *h.consts()])

            out.append(
                Question("liveness", "step", action, live, (pre, post), disjunct(action), head=h)
            )

        def enabled() -> Built:
            facts, obs = lv.head_enabled(
                v, h, pre, disjunct("ReceiveApp"), disjunct("ReceiveRedLetter")
            )
            ctx = [*axioms(), *wf(pre), *_conj(run, pre, reality), *facts]
            return Built(ctx, obs, h.consts())

        out.append(Question("liveness", "state", "HeadEnabled", enabled, (pre,), head=h))
        k = z3.Const("live_snapshot", v.sorts.snapshot)

        def flying() -> Built:
            facts, obs = lv.some_letter_in_flight(v, pre, k)
            ctx = [*axioms(), *wf(pre), *_conj(run, pre, reality), *facts]
            return Built(ctx, obs, [k])

        out.append(Question("liveness", "state", "SomeLetterInFlight", flying, (pre,), snapshot=k))
    return out


def questions(layers: Sequence[str] = LAYERS) -> int:
    """How many outcomes :func:`prove_every_n` reports (for a progress bar)."""
    per = {"reality": 7, "prophecy": 7, "shadow1": 7, "liveness": 7}
    return sum(per[x] for x in layers)


def prove_every_n(
    variant: str = "correct",
    *,
    drop: Sequence[str] = (),
    budget: Budget | None = None,
    stop_at_first: bool = False,
    layers: Sequence[str] = LAYERS,
    on_outcome: Callable[[EnOutcome], None] | None = None,
) -> EveryNResult:
    """Check the every-N invariant without the conjuncts ``drop``, layer by layer, for
    ``variant``.  Each counterexample is replayed (:mod:`.replay`)."""
    unknown = [n for n in drop if n not in CONJUNCTS]
    if unknown:
        raise InputError(
            f"--drop: unknown conjunct {unknown[0]!r}; expected one of {', '.join(CONJUNCTS)}",
            code="RL-INPUT-USAGE",
        )
    variant = variant_named(variant).name
    assert variant in VARIANTS
    v = Vocabulary()
    run = _Run(
        v=v,
        variant=variant,
        pr=prophecy(v),
        budget=budget or Budget(),
        dropped=frozenset(drop),
        stop_at_first=stop_at_first,
        on_outcome=on_outcome,
    )
    for q in questions_of(run, [x for x in LAYERS if x in layers]):
        run.record(_ask(run, q))
    return EveryNResult(
        variant,
        tuple(sorted(run.dropped, key=list(CONJUNCTS).index)),
        run.budget,
        tuple(run.outcomes),
        time.perf_counter() - run.t0,
    )
