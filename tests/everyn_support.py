"""Finite instances of the every-N semantics for the tests: networks (the shipped
topologies and seeded random digraphs), seeded random runs, seeded random states
(not necessarily reachable), and the z3 encoding instantiated on one network with
a concrete state pinned (every quantifier expanded over its machines, snapshots and
messages)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import z3

import redletter.python_model.symbolic.induction.everyn.obligations as ob
from redletter.python_model.symbolic.induction.apps import ConcreteApp, TokenApp
from redletter.python_model.symbolic.induction.everyn.bridge import (
    Domains,
    domains,
    pin_app,
    pin_prophecy,
    pin_reality,
    pin_rigid,
)
from redletter.python_model.symbolic.induction.everyn.concrete import (
    Chan,
    Item,
    Net,
    Prophecy,
    Reality,
    Step,
    enabled_steps,
    init_reality,
)
from redletter.python_model.symbolic.induction.everyn.invariant import CONJUNCTS, formulas
from redletter.python_model.symbolic.induction.everyn.steps import (
    ACTIONS,
    Disjunct,
    consistent,
    disjunct,
    transition,
)
from redletter.python_model.symbolic.induction.everyn.terms import prophecy, well_formed
from redletter.python_model.symbolic.induction.everyn.vocab import State, Vocabulary, grounded
from redletter.python_model.topology import complete, directed_ring, ring

TOKEN = TokenApp().concrete(None)

Run = tuple[list[Reality], list[Step]]


def table_app(seed: int, locals_: int = 4, values: int = 3) -> ConcreteApp:
    """A seeded random application over local states ``0..locals_-1`` (every operator
    a table): the generic application, concretely."""
    rng = random.Random(seed)
    memo: dict[tuple[object, ...], object] = {}

    def pick(key: tuple[object, ...], choices: Sequence[object]) -> object:
        if key not in memo:
            memo[key] = rng.choice(list(choices))
        return memo[key]

    def b(*key: object) -> bool:
        return bool(pick(key, (True, True, False)))

    def s(*key: object) -> int:
        got = pick(key, range(locals_))
        assert isinstance(got, int)
        return got

    return ConcreteApp(
        sendable=lambda p, q, x, v: b("send", p, q, x, v),
        after_send=lambda p, q, x, v: s("aft-send", p, q, x, v),
        events=lambda p, x, e: b("event", p, x, e),
        after_event=lambda p, x, e: s("aft-event", p, x, e),
        can_receive=lambda p, q, x, v: b("recv", p, q, x, v),
        after_receive=lambda p, q, x, v: s("aft-recv", p, q, x, v),
        may_start=lambda p, k, x: b("start", p, k, x),
    )


# ------------------------------------------------------------------------- networks


def shipped(topology: str, n: int) -> tuple[Chan, ...]:
    """The buffers of a shipped topology, as machine indices."""
    make = {"ring": ring, "directed-ring": directed_ring, "complete": complete}
    t = make[topology](n)
    index = {p: i for i, p in enumerate(t.procs)}
    return tuple(sorted((index[a], index[b]) for a, b in t.chans))


def random_links(n: int, seed: int, density: float = 0.5) -> tuple[Chan, ...]:
    """A seeded random directed graph without self-loops (strongly connected or not)."""
    rng = random.Random(seed)
    links = [(p, q) for p in range(n) for q in range(n) if p != q and rng.random() < density]
    return tuple(sorted(links))


def make_net(
    n: int,
    links: Sequence[Chan],
    snapshots: int,
    seed: int,
    *,
    per_chan: int = 2,
    values: Sequence[int] = (1, 2, 3),
    starters: str = "all",
) -> Net:
    """A network with ``per_chan`` messages per buffer of seeded values."""
    rng = random.Random(seed)
    msgs: list[tuple[int, int, int]] = []
    rank: list[int] = []
    for p, q in sorted(links):
        for i in range(per_chan):
            msgs.append((p, q, rng.choice(list(values))))
            rank.append(i)
    if starters == "all":
        st = frozenset((k, p) for k in range(snapshots) for p in range(n))
    else:
        st = frozenset((k, p) for k in range(snapshots) for p in range(n) if rng.random() < 0.5)
    return Net(n, tuple(sorted(links)), snapshots, tuple(msgs), tuple(rank), st)


# ------------------------------------------------------------------------- runs and states


def random_run(
    net: Net, app: ConcreteApp, variant: str, seed: int, *, steps: int = 300, events: int = 0
) -> Run:
    """A seeded random run from Init (local states 0..3), ``events`` internal events
    offered per machine."""
    rng = random.Random(seed)
    r = init_reality(net, [rng.randint(0, 3) for _ in range(net.machines)])
    offer = {p: list(range(events)) for p in range(net.machines)} if events else {}
    states, taken = [r], []
    for _ in range(steps):
        options = list(enabled_steps(net, app, variant, r, offer))
        if not options:
            break
        st, r = rng.choice(options)
        states.append(r)
        taken.append(st)
    return states, taken


def random_reality(net: Net, seed: int, locals_: int = 4) -> Reality:
    """A seeded random state over ``net`` (well formed as sequences: messages sent in
    order, buffers in send order, at most one red letter of a snapshot per buffer;
    colours, records and red letters otherwise at random -- usually unreachable)."""
    rng = random.Random(seed)
    sent: set[int] = set()
    rcvd: set[int] = set()
    bufs: list[tuple[Item, ...]] = []
    for c in net.links:
        ms = net.on(c)
        n_sent = rng.randint(0, len(ms))
        sent |= set(ms[:n_sent])
        gone = {m for m in ms[:n_sent] if rng.random() < 0.4}
        rcvd |= gone
        items: list[Item] = [("m", m) for m in ms[:n_sent] if m not in gone]
        for k in range(net.snapshots):
            if rng.random() < 0.4:
                items.insert(rng.randint(0, len(items)), ("r", k))
        bufs.append(tuple(items))
    red = tuple(
        frozenset(p for p in range(net.machines) if rng.random() < 0.5)
        for _ in range(net.snapshots)
    )
    rb = tuple(frozenset(c for c in net.links if rng.random() < 0.3) for _ in range(net.snapshots))
    rm = tuple(
        tuple(rng.randrange(locals_) if p in red[k] else None for p in range(net.machines))
        for k in range(net.snapshots)
    )
    rec = tuple(
        tuple(
            tuple(
                rng.sample(
                    sorted(m for m in net.on(c) if m in rcvd),
                    rng.randint(0, len([m for m in net.on(c) if m in rcvd])),
                )
            )
            for c in net.links
        )
        for _ in range(net.snapshots)
    )
    return Reality(
        tuple(rng.randrange(locals_) for _ in range(net.machines)),
        frozenset(sent),
        frozenset(rcvd),
        tuple(bufs),
        red,
        rb,
        rm,
        rec,
    )


def random_prophecy(net: Net, seed: int, locals_: int = 4) -> Prophecy:
    rng = random.Random(seed)
    n = net.machines
    return Prophecy(
        rng.randrange(net.snapshots),
        frozenset(m for m in range(len(net.msgs)) if rng.random() < 0.5),
        frozenset(m for m in range(len(net.msgs)) if rng.random() < 0.5),
        frozenset((p, q) for p in range(n) for q in range(n) if p != q and rng.random() < 0.3),
        tuple(rng.randrange(locals_) for _ in range(n)),
    )


def candidates(net: Net, r: Reality, events: int = 0) -> list[Step]:
    """Every step with parameters in range, enabled or not."""
    out = [Step("SendApp", m=m) for m in range(len(net.msgs))]
    out += [Step("ReceiveApp", m=m) for m in range(len(net.msgs))]
    for p, q in net.links:
        out += [Step("ReceiveRedLetter", p=p, q=q, k=k) for k in range(net.snapshots)]
    for p in range(net.machines):
        out += [Step("StartSnapshot", p=p, k=k) for k in range(net.snapshots)]
        out += [Step("InternalEvent", p=p, e=e) for e in range(events)]
    return out


# ------------------------------------------------------------------------- the encoding, pinned


@dataclass
class Pinned:
    """The z3 encoding of ``variant`` on ``net``, with the state before pinned to a
    concrete one (and, with ``pr``, the prophecy)."""

    v: Vocabulary
    dom: Domains
    pre: State
    post: State
    disjuncts: dict[str, Disjunct]
    context: list[z3.ExprRef]
    pr: object

    def params(self, st: Step) -> list[z3.ExprRef]:
        d = self.disjuncts[st.action]
        M, K, X = self.dom.machines, self.dom.snapshots, self.dom.messages
        out = []
        if st.m is not None:
            out.append(d.params["m"] == X[st.m])
        if st.action == "ReceiveRedLetter":
            assert st.p is not None and st.q is not None and st.k is not None
            out += [d.params["p"] == M[st.p], d.params["q"] == M[st.q], d.params["k"] == K[st.k]]
        elif st.action in ("StartSnapshot", "InternalEvent"):
            assert st.p is not None
            out.append(d.params["p"] == M[st.p])
            if st.action == "StartSnapshot":
                assert st.k is not None
                out.append(d.params["k"] == K[st.k])
            else:
                assert st.e is not None
                out.append(d.params["e"] == self.dom.events[st.e])
        return out


def pinned(
    variant: str,
    net: Net,
    app: ConcreteApp,
    r: Reality,
    events: int = 1,
    pr: Prophecy | None = None,
    extra_states: Sequence[Reality] = (),
    actions: Sequence[str] = ACTIONS,
) -> Pinned:
    """The encoding instantiated on ``net`` with ``r`` pinned as the state before;
    ``extra_states`` are states whose local states the application must know (the
    expected successors)."""
    v = Vocabulary()
    pre, post = v.state("pre"), v.state("post")
    dom = domains(v, net.machines, net.snapshots, len(net.msgs))
    zpr = prophecy(v)
    for e in range(events):
        dom.events[e] = z3.Const(f"E{e}", v.sorts.event)
    with grounded(dom.mapping(v)):
        ds = {a: disjunct(v, pre, variant, a) for a in actions}
        # the network is pinned whole (its order is a strict total order per buffer by
        # construction), so the rigid axioms need not be stated
        ctx = pin_rigid(v, dom, net) + pin_reality(v, dom, net, pre, r)
        if pr is not None:
            ctx += pin_prophecy(v, dom, net, zpr, pr)
        for x in extra_states:
            for p in range(net.machines):
                dom.locals.setdefault(x.loc[p], z3.Const(f"L{x.loc[p]}", v.sorts.local))
                for k in range(net.snapshots):
                    rm = x.rm[k][p]
                    if rm is not None:
                        dom.locals.setdefault(rm, z3.Const(f"L{rm}", v.sorts.local))
        ctx += pin_app(v, dom, net, app, list(range(events)))
    return Pinned(v, dom, pre, post, ds, ctx, zpr)


def successor_agrees(
    variant: str, net: Net, app: ConcreteApp, r: Reality, st: Step, expected: Reality | None
) -> str:
    """Empty when the encoding takes exactly the interpreter's step from ``r``:
    disabled when it is (``expected`` None), else enabled with ``expected`` its only
    successor.  Otherwise what differs."""
    extra = [expected] if expected is not None else []
    pz = pinned(variant, net, app, r, extra_states=extra, actions=[st.action])
    d = pz.disjuncts[st.action]
    with grounded(pz.dom.mapping(pz.v)):
        step = [*d.guard, *[f for _, f in transition(pz.v, d, pz.pre, pz.post)]]
        after = pin_reality(pz.v, pz.dom, net, pz.post, expected) if expected is not None else []
    s = z3.Solver()
    s.add(*pz.context, *pz.params(st), *step)
    verdict = s.check()
    if expected is None:
        return "" if verdict == z3.unsat else f"{st} is disabled concretely, enabled in z3"
    if verdict != z3.sat:
        return f"{st} is enabled concretely, not in z3 ({verdict})"
    s.push()
    s.add(*after)
    if s.check() != z3.sat:
        return f"{st}: z3 does not admit the concrete successor"
    s.pop()
    s.add(z3.Not(z3.And(*after)))
    if s.check() != z3.unsat:
        return f"{st}: z3 admits another successor"
    return ""


def value(s: z3.Solver, f: z3.ExprRef) -> bool:
    """The truth value ``f`` has in every model of ``s`` (it must have one)."""
    s.push()
    s.add(z3.Not(f))
    can_be_false = s.check() == z3.sat
    s.pop()
    s.push()
    s.add(f)
    can_be_true = s.check() == z3.sat
    s.pop()
    assert can_be_true != can_be_false, f"not determined by the pinned state: {f}"
    return bool(can_be_true)


def conjunct_values(net: Net, r: Reality, pr: Prophecy) -> dict[str, bool]:
    """Every conjunct's value as the encoding has it on ``r`` (and ``pr``)."""
    pz = pinned("correct", net, TOKEN, r, pr=pr, actions=[])
    s = z3.Solver()
    s.add(*pz.context)
    assert s.check() == z3.sat
    with grounded(pz.dom.mapping(pz.v)):
        fs = formulas(pz.v, pz.pre, pz.pr, list(CONJUNCTS))  # type: ignore[arg-type]
    return {n: value(s, f) for n, f in fs}


def obligation_values(
    variant: str,
    net: Net,
    app: ConcreteApp,
    r: Reality,
    st: Step,
    u: Reality,
    pr: Prophecy,
    *,
    determined: bool = False,
) -> dict[str, bool]:
    """Every step obligation's value (layers 1 and 3) as the encoding has it on the
    step ``r --st--> u``, and the prophecy's conditions on it (``determined``: and
    check that every model of the pinned step gives it that value; else read from
    one model)."""
    pz = pinned(variant, net, app, r, pr=pr, extra_states=[u], actions=[st.action])
    d = pz.disjuncts[st.action]
    v = pz.v
    with grounded(pz.dom.mapping(v)):
        step = [*d.guard, *[f for _, f in transition(v, d, pz.pre, pz.post)]]
        obs = well_formed(v, pz.post)
        obs += ob.at_most_one_letter(v, d, pz.pre) + ob.shadow_lemma0(v, d, pz.pre, pz.post)
        obs += [(f"shadow1:{n}", f) for n, f in ob.shadow_lemma1(v, d, pz.pre, pz.post, pz.pr)]  # type: ignore[arg-type]
        obs += [(f"prophecy:{n}", f) for n, f in consistent(v, d, pz.pre, pz.pr)]  # type: ignore[arg-type]
    s = z3.Solver()
    s.add(*pz.context, *pz.params(st), *step)
    assert s.check() == z3.sat, st
    if not determined:
        model = s.model()
        return {n: bool(z3.is_true(model.eval(f, model_completion=True))) for n, f in obs}
    return {n: value(s, f) for n, f in obs}
