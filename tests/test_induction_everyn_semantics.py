"""The every-N induction's semantics against the fixed-topology one and the Python model.

* The identity-level interpreter (:mod:`...everyn.concrete`) takes the same steps as
  the fixed-topology proof's interpreter (identities forgotten) on every variant,
  on the shipped topologies and on seeded random digraphs, and as the Python model
  (``python_model.actions``, cross-checked with TLC) where the model has the same
  variant -- the same enabled steps from every state, to the same states.
* The z3 encoding over sorts, instantiated on one finite network (every quantifier
  expanded), takes exactly the interpreter's steps from random states (mostly
  unreachable) and from reachable ones: enabled exactly when the interpreter's step
  is, and then with the interpreter's successor as its only successor; and it gives
  every conjunct and every obligation the interpreter's value.
* Along real runs of the correct algorithm, with the prophecy read from each run,
  every conjunct and every obligation holds; each bug class breaks one on some run.
"""

from __future__ import annotations

import random

import pytest

import redletter.python_model.symbolic.induction.concrete as cc
import redletter.python_model.symbolic.induction.everyn.labels as lb
from redletter.python_model import actions
from redletter.python_model.bugs import get as bug_class
from redletter.python_model.symbolic.induction.case import VARIANTS
from redletter.python_model.symbolic.induction.everyn.concrete import (
    Net,
    Reality,
    apply,
    complete,
    enabled_steps,
    prophecy_of_run,
)
from redletter.python_model.symbolic.induction.everyn.invariant import CONJUNCTS
from redletter.python_model.symbolic.induction.everyn.replay import (
    all_labels,
    forget,
    forget_app,
    forget_step,
)
from redletter.python_model.topology import Topology, build_config, strongly_connected
from tests.everyn_support import (
    TOKEN,
    candidates,
    conjunct_values,
    make_net,
    obligation_values,
    random_links,
    random_prophecy,
    random_reality,
    random_run,
    shipped,
    successor_agrees,
    table_app,
)
from tests.induction_support import model_params, same_as_model

BUGS = [v for v in VARIANTS if v != "correct"]

#: the induction's resent-red-letters resends on every red letter a red machine
#: receives; the model's ResendOnWhite (RedLettersAgain) only when the letter's buffer
#: is still white -- the two part once a buffer holds a second red letter
SAME_IN_MODEL = [v for v in VARIANTS if v != "resent-red-letters"]

NETS = [
    ("ring", 2, 1),
    ("ring", 3, 2),
    ("directed-ring", 3, 2),
    ("complete", 3, 2),
    ("directed-ring", 4, 1),
    ("complete", 4, 1),
]


def _net(topology: str, n: int, snapshots: int, seed: int) -> Net:
    links = shipped(topology, n) if topology != "random" else random_links(n, seed)
    return make_net(n, links, snapshots, seed)


# ------------------------------------------------------------------------- the interpreters


FAST_NETS = [("complete", 3, 2), ("random", 3, 2)]
#: CI's share of the larger networks (make test-slow); the rest are long sweeps
SLOW_NETS = [
    pytest.param(
        *x, marks=pytest.mark.slow if x in (("ring", 3, 2), ("random", 4, 2)) else pytest.mark.long
    )
    for x in [*NETS, ("random", 4, 2), ("random", 4, 1)]
    if x not in FAST_NETS
]


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize(("topology", "n", "snapshots"), [*FAST_NETS, *SLOW_NETS])
def test_the_interpreter_takes_the_fixed_interpreters_steps(
    variant: str, topology: str, n: int, snapshots: int
) -> None:
    """From every state of seeded random runs: the same enabled steps (sends of the
    next message's value), each to the same state, identities forgotten."""
    for seed in range(2):
        net = _net(topology, n, snapshots, seed)
        states, _steps = random_run(net, TOKEN, variant, seed, steps=40)
        app = forget_app(TOKEN)
        for t, r in enumerate(states):
            case, fr = forget(net, variant, r)
            mine = {}
            for st, u in enabled_steps(net, TOKEN, variant, r):
                mine[forget_step(net, case, r, st)] = forget(net, variant, u)[1]
            nxt = {ch: [net.val(m) for m in net.on(ch) if m not in r.sent][:1] for ch in net.links}
            index = {ch: case.chans.index((net.name(ch[0]), net.name(ch[1]))) for ch in net.links}
            sends = {index[ch]: vals for ch, vals in nxt.items()}
            fixed = dict(cc.enabled_steps(case, app, fr, sends))
            assert mine == fixed, f"{net} seed {seed}, state {t}"


@pytest.mark.parametrize("variant", SAME_IN_MODEL)
@pytest.mark.parametrize(
    ("topology", "n", "snapshots", "seeds"),
    [
        ("complete", 3, 2, 3),
        pytest.param("ring", 3, 2, 3, marks=pytest.mark.long),
        pytest.param("directed-ring", 4, 1, 3, marks=pytest.mark.long),
        pytest.param("random", 4, 2, 8, marks=pytest.mark.slow),
    ],
)
def test_the_interpreter_takes_the_python_models_steps(
    variant: str, topology: str, n: int, snapshots: int, seeds: int
) -> None:
    checked = 0
    for seed in range(seeds):
        links = shipped(topology, n) if topology != "random" else random_links(n, seed, 0.6)
        net = make_net(n, links, snapshots, seed)
        case = forget(net, variant, random_reality(net, 0))[0]
        if not strongly_connected(case.procs, case.chans):
            continue  # the Python model takes strongly connected networks only
        states, steps = random_run(net, TOKEN, variant, seed, steps=60)
        bug = bug_class(variant) if variant != "correct" else None
        cfg = build_config(
            Topology(case.procs, case.chans, f"seed {seed}"),
            tokens=dict(zip(case.procs, states[0].loc, strict=True)),
            snaps=case.snaps,
            starters={k: case.procs for k in case.snaps},
            overrides={bug.step: bug.definition}
            if bug is not None and bug.step and bug.definition
            else {},
            max_app_actions=1000,
        )
        s = actions.init_states(cfg)[0]
        assert same_as_model(case, forget(net, variant, states[0])[1], s)
        for t, st in enumerate(steps):
            step = forget_step(net, case, states[t], st)
            s = actions.step(cfg, s, step.action, model_params(case, step))
            assert same_as_model(case, forget(net, variant, states[t + 1])[1], s), (
                f"seed {seed}, step {t + 1}: {st.text(net)}"
            )
            checked += 1
    assert checked > 40


# ---------------------------------------------------------------------- the encoding, instantiated


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize(
    ("n", "instances", "per_instance"),
    [
        (2, 1, 4),
        pytest.param(3, 2, 8, marks=pytest.mark.long),
        pytest.param(4, 1, 3, marks=pytest.mark.slow),
    ],
)
def test_the_encoding_takes_exactly_the_interpreters_steps_from_random_states(
    variant: str, n: int, instances: int, per_instance: int
) -> None:
    """Steps enabled or not, from seeded random states (mostly unreachable), on
    seeded networks of n machines (a shipped topology or a random digraph), with a
    seeded generic application (its operators random tables)."""
    rng = random.Random(f"{variant}-{n}")
    checked = 0
    for seed in range(instances):
        topology = rng.choice(("ring", "directed-ring", "complete", "random"))
        links = shipped(topology, n) if topology != "random" else random_links(n, seed, 0.6)
        net = make_net(n, links, 2, seed, per_chan=1 if n > 2 else 2)
        app = table_app(seed)
        r = random_reality(net, seed)
        steps = candidates(net, r, events=1)
        for st in rng.sample(steps, min(per_instance, len(steps))):
            u = apply(net, app, variant, r, st)
            problem = successor_agrees(variant, net, app, r, st, u)
            assert not problem, f"{variant}, {topology} {net}, state {r}: {problem}"
            checked += 1
    assert checked >= per_instance * instances // 2


@pytest.mark.parametrize(
    ("variant", "topology", "n", "snapshots", "steps"),
    [
        ("correct", "complete", 2, 2, 6),
        pytest.param("correct", "ring", 3, 2, 10, marks=pytest.mark.long),
        pytest.param("correct", "directed-ring", 4, 1, 8, marks=pytest.mark.long),
        pytest.param("correct", "complete", 4, 1, 4, marks=pytest.mark.slow),
        pytest.param("correct", "random", 4, 2, 8, marks=pytest.mark.long),
        *[
            pytest.param(v, "complete", 3, 2, 8, marks=pytest.mark.long)
            for v in ("late-red-letter", "non-fifo", "mixed-snapshots", "resent-red-letters")
        ],
    ],
)
def test_the_encoding_takes_exactly_the_interpreters_steps_along_runs(
    variant: str, topology: str, n: int, snapshots: int, steps: int
) -> None:
    net = make_net(
        n,
        shipped(topology, n) if topology != "random" else random_links(n, 1, 0.6),
        snapshots,
        1,
        per_chan=1 if n > 2 else 2,
    )
    states, taken = random_run(net, TOKEN, variant, 7, steps=steps)
    assert len(taken) == steps
    for t, st in enumerate(taken):
        problem = successor_agrees(variant, net, TOKEN, states[t], st, states[t + 1])
        assert not problem, f"step {t + 1}: {problem}"


@pytest.mark.parametrize(
    "seed",
    [
        0,
        1,
        pytest.param(2, marks=pytest.mark.slow),
        *[pytest.param(x, marks=pytest.mark.long) for x in range(3, 8)],
    ],
)
def test_the_encoding_gives_every_conjunct_the_interpreters_value(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.choice((2, 3))
    net = make_net(n, random_links(n, seed, 0.7), 2, seed)
    r = random_reality(net, seed)
    pr = random_prophecy(net, seed)
    fails = lb.conjunct_failures(net, r, pr)
    assert conjunct_values(net, r, pr) == {name: not bad for name, bad in fails.items()}


# ------------------------------------------------------------------------- along real runs


def _completed(
    net: Net, variant: str, seeds: range, steps: int = 400
) -> list[tuple[int, list[Reality], list]]:  # type: ignore[type-arg]
    out = []
    for seed in seeds:
        states, taken = random_run(net, TOKEN, variant, seed, steps=steps)
        if all(complete(net, states[-1], k) for k in range(net.snapshots)):
            out.append((seed, states, taken))
    return out


@pytest.mark.parametrize(("topology", "n", "snapshots"), [*FAST_NETS, *SLOW_NETS])
def test_every_conjunct_and_obligation_holds_along_real_runs(
    topology: str, n: int, snapshots: int
) -> None:
    checked = 0
    for net_seed in range(2):
        net = _net(topology, n, snapshots, net_seed)
        for seed, states, steps in _completed(net, "correct", range(8)):
            for kappa in range(net.snapshots):
                pr = prophecy_of_run(net, states, steps, kappa)
                for t, r in enumerate(states):
                    fails = {k: v for k, v in lb.conjunct_failures(net, r, pr).items() if v}
                    assert not fails, f"seed {seed}, kappa {kappa}, state {t}: {fails}"
                    bad = [k for k, ok in lb.state_labels(net, r, pr).items() if not ok]
                    assert not bad, f"seed {seed}, kappa {kappa}, state {t}: {bad}"
                    if t == len(steps):
                        continue
                    u, st = states[t + 1], steps[t]
                    values = lb.consistency_labels(net, r, st, pr)
                    for layer in ("reality", "prophecy", "shadow1"):
                        values.update(all_labels(net, TOKEN, layer, r, st, u, pr))
                    bad = [k for k, ok in values.items() if not ok]
                    assert not bad, (
                        f"seed {seed}, kappa {kappa}, step {t + 1} {st.text(net)}: {bad}"
                    )
                    checked += 1
    assert checked > 50


@pytest.mark.parametrize(
    ("variant", "determined", "checks"),
    [
        ("correct", False, 2),
        pytest.param("correct", True, 4, marks=pytest.mark.slow),
        pytest.param("no-channel-recording", False, 4, marks=pytest.mark.long),
        pytest.param("swallowing-recording", False, 4, marks=pytest.mark.long),
    ],
)
def test_the_encoding_gives_every_obligation_the_interpreters_value_along_runs(
    variant: str, determined: bool, checks: int
) -> None:
    """Lemma 0's and Lemma 1's step obligations and the prophecy's conditions, on the
    steps of a completed run (``determined``: each value the same in every model of
    the pinned step, not read from one)."""
    net = make_net(2, shipped("complete", 2), 2, 0)
    runs = _completed(net, variant, range(10), steps=120)
    assert runs
    seed, states, steps = runs[0]
    pr = prophecy_of_run(net, states, steps, 0)
    for t in range(0, len(steps), max(1, len(steps) // checks)):
        r, st, u = states[t], steps[t], states[t + 1]
        mine = {
            k: ok
            for k, ok in all_labels(net, TOKEN, "reality", r, st, u, pr).items()
            if k not in CONJUNCTS
        }
        mine.update(
            {
                "shadow1:" + k: ok
                for k, ok in all_labels(net, TOKEN, "shadow1", r, st, u, pr).items()
            }
        )
        mine.update(
            {"prophecy:" + k: ok for k, ok in lb.consistency_labels(net, r, st, pr).items()}
        )
        z = obligation_values(variant, net, TOKEN, r, st, u, pr, determined=determined)
        assert z == mine, f"seed {seed}, step {t + 1} {st.text(net)}"


@pytest.mark.parametrize("variant", BUGS)
def test_every_bug_class_breaks_an_obligation_on_some_real_run(variant: str) -> None:
    n, snapshots = (3, 1) if variant == "stop-at-first-red-letter" else (2, 2)
    net = make_net(n, shipped("complete", n), snapshots, 0, per_chan=3)
    broken: set[str] = set()
    for seed in range(200):
        states, steps = random_run(net, TOKEN, variant, seed, steps=200)
        for kappa in range(net.snapshots):
            pr = prophecy_of_run(net, states, steps, kappa)
            for t, st in enumerate(steps):
                r, u = states[t], states[t + 1]
                values = {}
                for layer in ("reality", "shadow1"):
                    values.update(all_labels(net, TOKEN, layer, r, st, u, pr))
                if complete(net, u, kappa):
                    values.update(lb.state_labels(net, u, pr))
                broken |= {k for k, ok in values.items() if not ok}
        if broken:
            break
    assert broken, f"{variant}: every obligation held on every run"


# ------------------------------------------------------------------------- vs the fixed encoding


def test_the_encoding_takes_the_fixed_encodings_steps() -> None:
    """Along a run on a shipped topology, the fixed-topology z3 encoding, pinned to the
    state with identities forgotten, has exactly the successor the every-N encoding
    and interpreter have (identities forgotten)."""
    import z3

    from redletter.python_model.symbolic.induction import concrete as fixed_cc
    from redletter.python_model.symbolic.induction.apps import theory
    from redletter.python_model.symbolic.induction.replay import assignment
    from redletter.python_model.symbolic.induction.state import REALITY, fresh_state
    from redletter.python_model.symbolic.induction.steps import disjuncts, frame

    net = make_net(2, shipped("complete", 2), 2, 0)
    states, steps = random_run(net, TOKEN, "correct", 5, steps=10)
    case = forget(net, "correct", states[0])[0]
    app = theory("token")
    pre, post = fresh_state(case, "pre"), fresh_state(case, "post")
    labels = {d.label: d for d in disjuncts(case, app, pre, "t")}

    def world(r: cc.Reality) -> fixed_cc.World:
        n, nc = len(case.procs), len(case.chans)
        pr = fixed_cc.Prophecy((0,) * n, ((),) * nc, ((),) * nc, (False,) * nc, ((),) * nc)
        g = fixed_cc.Ghost((0,) * n, (((), False, ()),) * nc)
        return fixed_cc.World(r, (pr,) * case.snapshots, (g,) * case.snapshots)

    def pins(s: object, r: cc.Reality) -> list[z3.ExprRef]:
        kept = []
        for a, b in assignment(case, s, world(r)):  # type: ignore[arg-type]
            name = str(a).split("@")[0]
            if name.split("_")[0] in ("ord",):
                continue  # the order of two letters not both in the buffer is free
            if name.split("_")[0] in REALITY:
                kept.append(a == b)
        return kept

    for t, st in enumerate(steps):
        before, after = (
            forget(net, "correct", states[t])[1],
            forget(net, "correct", states[t + 1])[1],
        )
        fst = forget_step(net, case, states[t], st)
        label = {
            "SendApp": f"SendApp({case.chan_name(fst.c or 0)})",
            "ReceiveApp": f"ReceiveApp({case.chan_name(fst.c or 0)})",
            "ReceiveRedLetter": f"ReceiveRedLetter({case.chan_name(fst.c or 0)}, {fst.k})",
            "StartSnapshot": f"StartSnapshot({case.procs[fst.p or 0]}, {fst.k})",
        }[st.action]
        d = labels[label]
        s = z3.Solver()
        s.add(*pins(pre, before), *d.guard, *frame(d.upd, pre, post, REALITY))
        if st.action == "SendApp":
            s.add(d.value == fst.m)
        assert s.check() == z3.sat, f"step {t + 1}: {label} disabled in the fixed encoding"
        s.add(z3.Not(z3.And(*pins(post, after))))
        assert s.check() == z3.unsat, f"step {t + 1}: the fixed encoding goes elsewhere"
