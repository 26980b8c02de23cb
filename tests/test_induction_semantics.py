"""The induction's two semantics against each other and against the Python model.

* The concrete interpreter (:mod:`...induction.concrete`) takes the same steps as
  the Python model (``python_model.actions``, cross-checked with TLC), variant by
  variant, on seeded random runs.
* On every state of completed runs of the correct algorithm, with the prophecy
  read from the run's future and Lemma 1's shadow stepping along, every conjunct
  and every obligation holds concretely -- and the z3 encoding evaluates each
  conjunct to the same truth value, admits exactly the concrete successor of each
  step, and moves the prophecy and the shadow as the concrete run does.
* On the variants, the concrete obligations fail on some run (teeth).
"""

from __future__ import annotations

import random

import pytest
import z3

from redletter.python_model import actions
from redletter.python_model.symbolic.induction import Case
from redletter.python_model.symbolic.induction import concrete as cc
from redletter.python_model.symbolic.induction.apps import ConcreteApp, TokenApp, theory
from redletter.python_model.symbolic.induction.invariant import CONJUNCTS, instances
from redletter.python_model.symbolic.induction.obligations import shadow_lemma0
from redletter.python_model.symbolic.induction.replay import (
    assignment,
    shadow_lemma0_labels,
    state_labels,
)
from redletter.python_model.symbolic.induction.state import (
    GHOST,
    REALITY,
    fresh_state,
    well_formed,
)
from redletter.python_model.symbolic.induction.steps import (
    disjuncts,
    frame,
    ghost_step,
    prophecy_relation,
)
from redletter.python_model.topology import Topology, build_config, complete, directed_ring, ring
from tests.induction_support import model_params, same_as_model

TOKEN = TokenApp().concrete(None)

Run = tuple[list[cc.Reality], list[cc.Step]]


def random_run(case: Case, seed: int, *, sends: int = 4, steps: int = 400) -> Run:
    """A seeded random run of the token application: at most ``sends`` application
    messages (values 1..3), snapshots started at random, then drained."""
    rng = random.Random(seed)
    r = cc.init_reality(case, [rng.randint(0, 3) for _ in case.procs])
    states, taken = [r], []
    left = sends
    for _ in range(steps):
        offer = {c: [rng.randint(1, 3)] if left > 0 else [] for c in range(len(case.chans))}
        options = list(cc.enabled_steps(case, TOKEN, r, offer))
        if not options:
            break
        st, r = rng.choice(options)
        left -= st.action == "SendApp"
        states.append(r)
        taken.append(st)
    return states, taken


def completed_runs(case: Case, seeds: range, **kw: int) -> list[tuple[int, Run]]:
    out = []
    for seed in seeds:
        states, steps = random_run(case, seed, **kw)
        if all(cc.complete(case, states[-1], k) for k in range(case.snapshots)):
            out.append((seed, (states, steps)))
    return out


# ------------------------------------------------------------------------- vs the Python model

OVERRIDES = {
    "correct": {},
    "no-channel-recording": {"Recording": "NoRecording"},
    "late-red-letter": {"Enqueue": "LateEnqueue"},
    "stop-at-first-red-letter": {"Recording": "StopAtFirst"},
    "non-fifo": {"Deliverable": "AnyPosition"},
    "mixed-snapshots": {"TurnsRed": "TurnsRedInAll"},
    "never-forward": {"RedLettersOut": "StarterOnly"},
}


def _topology(case: Case) -> Topology:
    make = {"ring": ring, "directed-ring": directed_ring, "complete": complete}
    return make[case.topology](case.machines)


@pytest.mark.parametrize("variant", list(OVERRIDES))
@pytest.mark.parametrize(
    ("topology", "machines", "snapshots"), [("complete", 3, 2), ("directed-ring", 3, 2)]
)
def test_concrete_steps_are_the_python_models(
    variant: str, topology: str, machines: int, snapshots: int
) -> None:
    case = Case(topology, machines, snapshots, "token", variant)
    for seed in range(12):
        states, steps = random_run(case, seed, sends=5)
        cfg = build_config(
            _topology(case),
            tokens=dict(zip(case.procs, states[0].local, strict=True)),
            snaps=case.snaps,
            starters={k: case.procs for k in case.snaps},
            overrides=OVERRIDES[variant],
            # the spec bounds the application in the actions' guards: lift the bound
            # so every step of the random run is enabled
            max_app_actions=1000,
        )
        s = actions.init_states(cfg)[0]
        assert same_as_model(case, states[0], s), f"seed {seed}"
        for t, st in enumerate(steps):
            s = actions.step(cfg, s, st.action, model_params(case, st))
            assert same_as_model(case, states[t + 1], s), (
                f"seed {seed}, step {t + 1}: {st.text(case)}"
            )


# ------------------------------------------------------------------------- the invariant on runs


def _worlds(case: Case, app: ConcreteApp, run: Run) -> list[cc.World]:
    states, steps = run
    prophecy = cc.prophecy_of_run(case, states, steps)
    ghosts = cc.ghost_of_run(case, app, states, steps, prophecy)
    return [cc.World(r, p, g) for r, p, g in zip(states, prophecy, ghosts, strict=True)]


def _concrete_labels(
    case: Case, app: ConcreteApp, run: Run, t: int, w: cc.World, nxt: cc.World | None
) -> dict[str, bool]:
    states, steps = run
    values = cc.conjuncts(case, w)
    values.update(cc.well_formed(case, w))
    values.update(state_labels(case, w))
    if nxt is not None:
        st = steps[t]
        values.update(shadow_lemma0_labels(case, app, states[t], st, states[t + 1]))
        _before, conds = cc.prophecy_step(case, states[t], st, states[t + 1], nxt.prophecy)
        values.update(conds)
        for k, kid in enumerate(case.snaps):
            values[f"RedActionPossible({kid})"] = cc.ghost_step(
                case, app, states[t], st, w.ghost[k], k
            )[1]
            for c in range(len(case.chans)):
                values[f"SnapshotPinned({kid}, {case.chan_name(c)})"] = cc.pinned(
                    states[t + 1], nxt.ghost[k], k, c
                ) == cc.pinned(states[t], w.ghost[k], k, c)
    return values


@pytest.mark.parametrize(
    ("topology", "machines", "snapshots"),
    [("complete", 2, 1), ("complete", 3, 2), ("ring", 3, 2), ("directed-ring", 4, 1)],
)
def test_every_conjunct_and_obligation_holds_along_real_runs(
    topology: str, machines: int, snapshots: int
) -> None:
    case = Case(topology, machines, snapshots, "token")
    runs = completed_runs(case, range(25))
    assert len(runs) >= 10, "too few runs complete every snapshot"
    for seed, run in runs:
        worlds = _worlds(case, TOKEN, run)
        for t, w in enumerate(worlds):
            nxt = worlds[t + 1] if t + 1 < len(worlds) else None
            bad = [k for k, v in _concrete_labels(case, TOKEN, run, t, w, nxt).items() if not v]
            assert not bad, f"seed {seed}, state {t}: {bad}"


def _meaningful(case: Case, s: object, w: cc.World) -> list[tuple[z3.ExprRef, z3.ExprRef]]:
    """The assignment without the order bits of red letters the buffer does not hold
    (the encoding leaves them free)."""
    from redletter.python_model.symbolic.induction.state import SymState

    assert isinstance(s, SymState)
    free = {
        s["ord", c, j, k].get_id()
        for c in range(len(case.chans))
        for j in range(case.snapshots)
        for k in range(j + 1, case.snapshots)
        if not (
            cc.split(w.reality.buf[c], case.snaps[j])[1]
            and cc.split(w.reality.buf[c], case.snaps[k])[1]
        )
    }
    return [(a, b) for a, b in assignment(case, s, w) if a.get_id() not in free]


def _z3_true(e: z3.ExprRef, pairs: list[tuple[z3.ExprRef, z3.ExprRef]]) -> bool:
    v = z3.simplify(z3.substitute(e, *pairs))
    assert z3.is_true(v) or z3.is_false(v), f"not a value: {v}"
    return bool(z3.is_true(v))


@pytest.mark.parametrize(
    ("topology", "machines", "snapshots", "seeds"),
    [
        ("complete", 2, 2, 3),
        pytest.param("complete", 2, 2, 12, marks=pytest.mark.long),  # CI time
        pytest.param("ring", 3, 1, 8, marks=pytest.mark.long),  # CI time
    ],
)
def test_the_encoding_agrees_with_the_concrete_semantics_on_real_runs(
    topology: str, machines: int, snapshots: int, seeds: int
) -> None:
    case = Case(topology, machines, snapshots, "token")
    app = theory("token")
    pre, post = fresh_state(case, "pre"), fresh_state(case, "post")
    steps = {d.label: d for d in disjuncts(case, app, pre, "t")}
    labels = {
        "SendApp": lambda st: f"SendApp({case.chan_name(st.c)})",
        "ReceiveApp": lambda st: f"ReceiveApp({case.chan_name(st.c)})",
        "ReceiveRedLetter": lambda st: f"ReceiveRedLetter({case.chan_name(st.c)}, {st.k})",
        "StartSnapshot": lambda st: f"StartSnapshot({case.procs[st.p]}, {st.k})",
    }
    checked = 0
    for seed, run in completed_runs(case, range(seeds), sends=3):
        worlds = _worlds(case, TOKEN, run)
        for t, w in enumerate(worlds):
            pairs = assignment(case, pre, w)
            for label, f in well_formed(case, pre):
                assert _z3_true(f, pairs), f"seed {seed}, state {t}: {label}"
            concrete = cc.conjuncts(case, w)
            for inst in instances(case, pre, list(CONJUNCTS)):
                assert _z3_true(inst.formula, pairs) == concrete[inst.label], (
                    f"seed {seed}, state {t}: {inst.label}"
                )
            if t + 1 == len(worlds):
                continue
            st = run[1][t]
            d = steps[labels[st.action](st)]
            after = _meaningful(case, post, worlds[t + 1])
            rel = prophecy_relation(case, d, pre, post)
            solver = z3.Solver()
            solver.add(*[a == b for a, b in pairs])
            solver.add(*d.guard, *frame(d.upd, pre, post, REALITY))
            if st.action == "SendApp":
                solver.add(d.value == st.m)
            # the encoding admits the concrete successor, and only it
            assert solver.check() == z3.sat, f"seed {seed}, step {t + 1}: {d.label} disabled"
            differs = z3.Or([a != b for a, b in after if str(a).split("_")[0] in REALITY])
            solver.push()
            solver.add(differs)
            assert solver.check() == z3.unsat, f"seed {seed}, step {t + 1}: {d.label} differs"
            solver.pop()
            # the prophecy and Lemma 1's shadow move as in the concrete run, and the
            # spec's ShadowStep of Lemma 0 holds
            solver.add(*[a == b for a, b in after])
            solver.add(*rel.defs, *[f for _, f in rel.conds])
            for k in range(case.snapshots):
                g = ghost_step(case, app, d, pre, k, "g")
                aux, obligations = shadow_lemma0(case, app, d, pre, post, k, "s0")
                solver.add(*g.aux, *aux, g.possible, *[f for _, f in obligations])
            ghosts: dict[tuple[object, ...], z3.ExprRef] = {}
            for k in range(case.snapshots):
                ghosts.update(ghost_step(case, app, d, pre, k, "g").upd)
            solver.add(*frame(ghosts, pre, post, GHOST))
            assert solver.check() == z3.sat, f"seed {seed}, step {t + 1}: {d.label}"
            checked += 1
    assert checked >= 2 * seeds


@pytest.mark.parametrize(
    ("variant", "topology", "machines", "snapshots"),
    [
        ("no-channel-recording", "complete", 2, 1),
        ("late-red-letter", "complete", 2, 1),
        ("stop-at-first-red-letter", "complete", 3, 1),
        ("non-fifo", "complete", 2, 1),
        ("swallowing-recording", "complete", 2, 1),
        ("newest-first-recording", "complete", 2, 1),
    ],
)
def test_the_variants_break_an_obligation_on_some_real_run(
    variant: str, topology: str, machines: int, snapshots: int
) -> None:
    case = Case(topology, machines, snapshots, "token", variant)
    broken: set[str] = set()
    for _seed, run in completed_runs(case, range(60), sends=5):
        try:
            worlds = _worlds(case, TOKEN, run)
        except ValueError:  # the shadow of Lemma 1 cannot copy a step
            broken.add("RedActionPossible")
            continue
        for t, w in enumerate(worlds):
            nxt = worlds[t + 1] if t + 1 < len(worlds) else None
            values = _concrete_labels(case, TOKEN, run, t, w, nxt)
            broken |= {k.split("(")[0] for k, v in values.items() if not v}
    assert broken, f"{variant}: every obligation held on every run"
