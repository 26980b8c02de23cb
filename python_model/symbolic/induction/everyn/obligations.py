"""The every-N proof obligations, each universally quantified like the conjuncts.

Lemma 0 (layer 1), per step: the spec's ``ShadowStep(k)`` for every k --
``ShadowStartsInInitialState``, ``WhiteActionPossible``, ``WhiteActionCopied``,
``SkipOtherwise`` -- with buffers compared as sets of messages in order (message
identities: stronger than the spec's comparison of values, and implying it);
``AtMostOneRedLetter``; the state after well formed.  State obligation:
``Lemma0EndsInSnapshotState``.

Lemma 1 (layer 3), per step, for snapshot kappa: ``RedActionPossible``,
``RedActionCopied``, ``SkipOtherwise``; state obligations
``Lemma1StartsInSnapshotState`` and ``Lemma1EndsInFinalState``.
"""

from __future__ import annotations

from redletter.python_model.symbolic.induction.everyn.steps import Disjunct
from redletter.python_model.symbolic.induction.everyn.terms import Prophecy, Terms
from redletter.python_model.symbolic.induction.everyn.vocab import (
    Expr,
    State,
    Vocabulary,
    forall,
)
from redletter.python_model.z3env import z3

__all__ = [
    "at_most_one_letter",
    "lemma0_ends",
    "lemma1_ends",
    "lemma1_starts",
    "shadow_lemma0",
    "shadow_lemma1",
]

Labelled = list[tuple[str, Expr]]


def at_most_one_letter(v: Vocabulary, d: Disjunct, pre: State) -> Labelled:
    """No step adds a second red letter of a snapshot to a buffer."""
    if d.appends is None:
        return []
    K, M = v.sorts.snapshot, v.sorts.machine
    a = d.actor

    def body(k: Expr, q: Expr) -> Expr:
        # the letter received in this step has left its buffer (it is not actor -> q)
        return z3.Implies(d.appending(k, q), z3.Not(pre.has(k, a, q)))

    return [("AtMostOneRedLetter", forall([K, M], body))]


# ------------------------------------------------------------------------- Lemma 0


def _same0(
    v: Vocabulary, k: Expr, t0: Terms, t1: Terms, *, machine: Expr | None = None
) -> list[Expr]:
    """Lemma 0's shadow of k is the same in both states (but for ``machine``'s state)."""
    M = v.sorts.machine
    out = [
        forall(
            [M],
            lambda r: z3.Implies(
                r != machine if machine is not None else z3.BoolVal(True),
                t1.shadow0_local(k, r) == t0.shadow0_local(k, r),
            ),
        ),
    ]
    return out + _same_buffers0(v, k, t0, t1)


def _same_buffers0(v: Vocabulary, k: Expr, t0: Terms, t1: Terms) -> list[Expr]:
    Msg = v.sorts.message
    return [
        forall([Msg], lambda x: t1.shadow0_has(k, x) == t0.shadow0_has(k, x)),
        forall(
            [Msg, Msg],
            lambda x, y: z3.Implies(
                z3.And(t0.shadow0_has(k, x), t0.shadow0_has(k, y)),
                t1.shadow0_before(k, x, y) == t0.shadow0_before(k, x, y),
            ),
        ),
    ]


def shadow_lemma0(v: Vocabulary, d: Disjunct, pre: State, post: State) -> Labelled:
    """The spec's ShadowStep(k), for every k, for one action."""
    r = v.rigid
    K, M, Msg = v.sorts.snapshot, v.sorts.machine, v.sorts.message
    t0, t1 = Terms(v, pre), Terms(v, post)
    out: Labelled = []

    def starts(k: Expr) -> Expr:
        initial = z3.And(
            forall([M], lambda p: t1.shadow0_local(k, p) == pre.loc(p)),
            forall([Msg], lambda x: t1.shadow0_has(k, x) == t0.inbuf(x)),
            forall(
                [Msg, Msg],
                lambda x, y: z3.Implies(
                    z3.And(t0.inbuf(x), t0.inbuf(y)), t1.shadow0_before(k, x, y) == r.lt(x, y)
                ),
            ),
        )
        return z3.Implies(z3.And(z3.Not(t0.started(k)), t1.started(k)), initial)

    out.append(("ShadowStartsInInitialState", forall([K], starts)))
    if d.app_act is None:
        out.append(
            (
                "SkipOtherwise",
                forall([K], lambda k: z3.Implies(t0.in_progress(k), z3.And(_same0(v, k, t0, t1)))),
            )
        )
        return out
    a = d.actor

    def white(k: Expr) -> Expr:
        return z3.And(t0.in_progress(k), z3.Not(pre.red(k, a)))

    if d.app_act == "send":
        m, q = d.msg, d.peer
        assert m is not None and q is not None

        def possible(k: Expr) -> Expr:
            return r.sendable(a, q, t0.shadow0_local(k, a), r.val(m))

        def copied(k: Expr) -> Expr:
            return z3.And(
                t1.shadow0_local(k, a) == r.after_send(a, q, t0.shadow0_local(k, a), r.val(m)),
                *_same0(v, k, t0, t1, machine=a)[:1],
                z3.Not(t0.shadow0_has(k, m)),
                forall(
                    [Msg], lambda x: t1.shadow0_has(k, x) == z3.Or(t0.shadow0_has(k, x), x == m)
                ),
                forall(
                    [Msg, Msg],
                    lambda x, y: z3.Implies(
                        z3.And(t0.shadow0_has(k, x), t0.shadow0_has(k, y)),
                        t1.shadow0_before(k, x, y) == t0.shadow0_before(k, x, y),
                    ),
                ),
                forall(
                    [Msg],
                    lambda x: z3.Implies(
                        z3.And(t0.shadow0_has(k, x), r.same_chan(x, m)),
                        z3.And(t1.shadow0_before(k, x, m), z3.Not(t1.shadow0_before(k, m, x))),
                    ),
                ),
            )

    elif d.app_act == "internal":
        ev = d.event

        def possible(k: Expr) -> Expr:
            return r.events(a, t0.shadow0_local(k, a), ev)

        def copied(k: Expr) -> Expr:
            return z3.And(
                t1.shadow0_local(k, a) == r.after_event(a, t0.shadow0_local(k, a), ev),
                *_same0(v, k, t0, t1, machine=a),
            )

    else:
        m, p = d.msg, d.peer
        assert m is not None and p is not None

        def possible(k: Expr) -> Expr:
            # the head of the shadow's buffer is m (Head(g.buf[c]) = a.val, by identity)
            return z3.And(
                t0.shadow0_has(k, m),
                forall(
                    [Msg],
                    lambda x: z3.Implies(
                        z3.And(t0.shadow0_has(k, x), r.same_chan(x, m), x != m),
                        t0.shadow0_before(k, m, x),
                    ),
                ),
                r.can_receive(a, p, t0.shadow0_local(k, a), r.val(m)),
            )

        def copied(k: Expr) -> Expr:
            return z3.And(
                t1.shadow0_local(k, a) == r.after_receive(a, p, t0.shadow0_local(k, a), r.val(m)),
                *_same0(v, k, t0, t1, machine=a)[:1],
                forall(
                    [Msg], lambda x: t1.shadow0_has(k, x) == z3.And(t0.shadow0_has(k, x), x != m)
                ),
                forall(
                    [Msg, Msg],
                    lambda x, y: z3.Implies(
                        z3.And(t1.shadow0_has(k, x), t1.shadow0_has(k, y)),
                        t1.shadow0_before(k, x, y) == t0.shadow0_before(k, x, y),
                    ),
                ),
            )

    out.append(("WhiteActionPossible", forall([K], lambda k: z3.Implies(white(k), possible(k)))))
    out.append(("WhiteActionCopied", forall([K], lambda k: z3.Implies(white(k), copied(k)))))
    out.append(
        (
            "SkipOtherwise",
            forall(
                [K],
                lambda k: z3.Implies(
                    z3.And(t0.in_progress(k), pre.red(k, a)), z3.And(_same0(v, k, t0, t1))
                ),
            ),
        )
    )
    return out


def lemma0_ends(v: Vocabulary, st: State) -> Labelled:
    """Complete(k) => Shadow0(k) = Snapshot(k), for every k."""
    K, M, Msg = v.sorts.snapshot, v.sorts.machine, v.sorts.message
    t = Terms(v, st)

    def ends(k: Expr) -> Expr:
        return z3.Implies(
            t.complete(k),
            z3.And(
                forall([M], lambda p: t.shadow0_local(k, p) == st.rm(k, p)),
                forall([Msg], lambda x: t.shadow0_has(k, x) == st.rec(k, x)),
                forall(
                    [Msg, Msg],
                    lambda x, y: z3.Implies(
                        z3.And(st.rec(k, x), st.rec(k, y), v.rigid.same_chan(x, y)),
                        t.shadow0_before(k, x, y) == st.rlt(k, x, y),
                    ),
                ),
            ),
        )

    return [("Lemma0EndsInSnapshotState", forall([K], ends))]


# ------------------------------------------------------------------------- Lemma 1


def _same1(
    v: Vocabulary,
    pr: Prophecy,
    t0: Terms,
    t1: Terms,
    *,
    machine: Expr | None = None,
    message: Expr | None = None,
    letter: tuple[Expr, Expr] | None = None,
) -> list[Expr]:
    """Lemma 1's shadow is the same in both states, but for ``machine``'s state,
    ``message`` and the red letter on buffer ``letter``."""
    M, Msg = v.sorts.machine, v.sorts.message
    true = z3.BoolVal(True)
    return [
        forall(
            [M],
            lambda r: z3.Implies(
                r != machine if machine is not None else true,
                t1.shadow1_local(pr, r) == t0.shadow1_local(pr, r),
            ),
        ),
        forall(
            [Msg],
            lambda x: z3.Implies(
                x != message if message is not None else true,
                t1.shadow1_has(pr, x) == t0.shadow1_has(pr, x),
            ),
        ),
        forall(
            [M, M],
            lambda p, q: z3.Implies(
                z3.Not(z3.And(p == letter[0], q == letter[1])) if letter is not None else true,
                t1.shadow1_letter(pr, p, q) == t0.shadow1_letter(pr, p, q),
            ),
        ),
    ]


def shadow_lemma1(v: Vocabulary, d: Disjunct, pre: State, post: State, pr: Prophecy) -> Labelled:
    """Lemma 1's shadow of kappa follows reality: "to an action performed in reality by
    a red machine corresponds in the shadow network exactly the same action, to an
    action performed in reality by a white machine corresponds in the shadow network
    a skip".  Its buffers are ordered by the send order, its red letter after the
    messages sent while white and before the others."""
    r = v.rigid
    Msg = v.sorts.message
    t0, t1 = Terms(v, pre), Terms(v, post)
    kappa, a = pr.kappa, d.actor
    red = pre.red(kappa, a)
    skip = z3.And(_same1(v, pr, t0, t1))
    acts = d.app_act is not None or (d.action == "ReceiveRedLetter")
    if not acts:
        return [("SkipOtherwise", skip)]
    if d.action == "ReceiveRedLetter":
        p, k0 = d.peer, d.letter
        assert p is not None and k0 is not None
        copies = z3.And(red, k0 == kappa)
        possible = z3.And(
            t0.shadow1_letter(pr, p, a),
            forall(
                [Msg],
                lambda x: z3.Implies(
                    z3.And(t0.shadow1_has(pr, x), r.on(x, p, a)), z3.Not(pr.ws(x))
                ),
            ),
        )
        copied = z3.And(z3.Not(t1.shadow1_letter(pr, p, a)), *_same1(v, pr, t0, t1, letter=(p, a)))
    elif d.app_act == "send":
        m, q = d.msg, d.peer
        assert m is not None and q is not None
        copies = red
        possible = r.sendable(a, q, t0.shadow1_local(pr, a), r.val(m))
        copied = z3.And(
            t1.shadow1_local(pr, a) == r.after_send(a, q, t0.shadow1_local(pr, a), r.val(m)),
            z3.Not(t0.shadow1_has(pr, m)),
            t1.shadow1_has(pr, m),
            # appended: behind every message and the red letter of its shadow buffer
            forall(
                [Msg],
                lambda x: z3.Implies(z3.And(t0.shadow1_has(pr, x), r.same_chan(x, m)), r.lt(x, m)),
            ),
            z3.Implies(t0.shadow1_letter(pr, a, q), z3.Not(pr.ws(m))),
            *_same1(v, pr, t0, t1, machine=a, message=m),
        )
    elif d.app_act == "internal":
        copies = red
        possible = r.events(a, t0.shadow1_local(pr, a), d.event)
        copied = z3.And(
            t1.shadow1_local(pr, a) == r.after_event(a, t0.shadow1_local(pr, a), d.event),
            *_same1(v, pr, t0, t1, machine=a),
        )
    else:
        m, p = d.msg, d.peer
        assert m is not None and p is not None
        copies = red
        possible = z3.And(
            t0.shadow1_has(pr, m),
            # the head of its shadow buffer: no message and no red letter before it
            forall(
                [Msg],
                lambda x: z3.Implies(
                    z3.And(t0.shadow1_has(pr, x), r.same_chan(x, m), x != m), r.lt(m, x)
                ),
            ),
            z3.Implies(t0.shadow1_letter(pr, p, a), pr.ws(m)),
            r.can_receive(a, p, t0.shadow1_local(pr, a), r.val(m)),
        )
        copied = z3.And(
            t1.shadow1_local(pr, a) == r.after_receive(a, p, t0.shadow1_local(pr, a), r.val(m)),
            z3.Not(t1.shadow1_has(pr, m)),
            *_same1(v, pr, t0, t1, machine=a, message=m),
        )
    return [
        ("RedActionPossible", z3.Implies(copies, possible)),
        ("RedActionCopied", z3.Implies(copies, copied)),
        ("SkipOtherwise", z3.Implies(z3.Not(copies), skip)),
    ]


def lemma1_starts(v: Vocabulary, st: State, pr: Prophecy) -> Labelled:
    """Before kappa starts, Lemma 1's shadow is the (prophesied) snapshot state: the
    states the machines will record, the messages sent while white and not accepted
    while white, and a red letter where no white machine will receive it."""
    M, Msg = v.sorts.machine, v.sorts.message
    t = Terms(v, st)
    snapshot = z3.And(
        forall([M], lambda p: t.shadow1_local(pr, p) == pr.sig(p)),
        forall([Msg], lambda x: t.shadow1_has(pr, x) == z3.And(pr.ws(x), z3.Not(pr.acc(x)))),
        forall(
            [M, M],
            lambda p, q: (
                t.shadow1_letter(pr, p, q) == z3.And(v.rigid.link(p, q), z3.Not(pr.accl(p, q)))
            ),
        ),
    )
    return [("Lemma1StartsInSnapshotState", z3.Implies(z3.Not(t.started(pr.kappa)), snapshot))]


def lemma1_ends(v: Vocabulary, st: State, pr: Prophecy) -> Labelled:
    """Once kappa is complete, Lemma 1's shadow is reality (the final state) and the
    prophesied snapshot is the one recorded: the states, the streams and their order."""
    M, Msg = v.sorts.machine, v.sorts.message
    t = Terms(v, st)
    kappa = pr.kappa
    final = z3.And(
        forall([M], lambda p: t.shadow1_local(pr, p) == st.loc(p)),
        forall([Msg], lambda x: t.shadow1_has(pr, x) == t.inbuf(x)),
        forall([M, M], lambda p, q: z3.Not(t.shadow1_letter(pr, p, q))),
        forall([M, M], lambda p, q: z3.Not(st.has(kappa, p, q))),
    )
    recorded = z3.And(
        forall([M], lambda p: st.rm(kappa, p) == pr.sig(p)),
        forall([Msg], lambda x: st.rec(kappa, x) == z3.And(pr.ws(x), z3.Not(pr.acc(x)))),
        forall(
            [Msg, Msg],
            lambda x, y: z3.Implies(
                z3.And(st.rec(kappa, x), st.rec(kappa, y), v.rigid.same_chan(x, y)),
                st.rlt(kappa, x, y) == v.rigid.lt(x, y),
            ),
        ),
    )
    done = t.complete(kappa)
    return [
        ("Lemma1EndsInFinalState", z3.Implies(done, final)),
        ("Lemma1SnapshotIsRecorded", z3.Implies(done, recorded)),
    ]
