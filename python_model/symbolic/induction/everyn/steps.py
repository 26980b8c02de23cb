"""The spec's Next over sorts: one disjunct per action (SendApp, InternalEvent,
ReceiveApp, ReceiveRedLetter, StartSnapshot), its parameters free constants (the
message, the machine, the snapshot), with the variant's overrides.

A disjunct gives its guard (formulas over the state before), and for every state
symbol its value after the step as a function of its arguments (over the state
before): ``transition`` states ``\\A args : f@post(args) = update(args)``.  It also
says what the prophecy of a snapshot kappa must be for the step to belong to the run
it was read from (``consistent``): definitions, true of every step of every run
for the prophecy read from that run, whatever the variant.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from redletter.python_model.symbolic.induction.everyn.terms import Prophecy, Terms
from redletter.python_model.symbolic.induction.everyn.vocab import (
    STATE_SYMBOLS,
    Expr,
    State,
    Vocabulary,
    exists,
    forall,
)
from redletter.python_model.z3env import z3

__all__ = ["ACTIONS", "Disjunct", "consistent", "disjunct", "disjuncts", "transition"]

ACTIONS = ("SendApp", "InternalEvent", "ReceiveApp", "ReceiveRedLetter", "StartSnapshot")

Update = Callable[..., Expr]


@dataclass
class Disjunct:
    """One action of Next, over free parameters."""

    action: str
    actor: Expr  #: the machine that acts
    params: dict[str, Expr]
    guard: list[Expr] = field(default_factory=list)
    upd: dict[str, Update] = field(default_factory=dict)
    app_act: str | None = None  #: "send", "receive", "internal": an application action
    msg: Expr | None = None  #: the message sent or received
    peer: Expr | None = (
        None  #: the other end of the buffer (receiver of a send, sender of a receipt)
    )
    event: Expr | None = None
    letter: Expr | None = None  #: the snapshot of the red letter received / snapshot started
    #: (k, q) -> the step appends a red letter of k to the buffer actor -> q
    appends: Callable[[Expr, Expr], Expr] | None = None
    #: k -> the actor turns red in k in this step
    turns: Callable[[Expr], Expr] | None = None
    #: the buffer the red letter came from (its source), for ReceiveRedLetter
    from_src: Expr | None = None
    #: k -> the message received is recorded for k (ReceiveApp)
    recording: Callable[[Expr], Expr] | None = None

    def turning(self, k: Expr) -> Expr:
        return self.turns(k) if self.turns is not None else z3.BoolVal(False)

    def appending(self, k: Expr, q: Expr) -> Expr:
        return self.appends(k, q) if self.appends is not None else z3.BoolVal(False)


def _const(v: Vocabulary, name: str, sort: Any, tag: str) -> Expr:
    return z3.Const(f"{name}@{tag}", sort)


def _turn_red(
    v: Vocabulary, pre: State, d: Disjunct, p: Expr, k0: Expr, white: Expr, sends: Expr
) -> None:
    """TurnRed(p, k0, ...) when ``white``: p red in k0, records its state, and sends a
    red letter of k0 over every output buffer when ``sends`` (RedLettersOut); the
    letter goes behind every message and every other letter."""
    r = v.rigid
    d.turns = lambda k: z3.And(k == k0, white)
    d.appends = lambda k, q: z3.And(k == k0, r.link(p, q), sends)
    old_red: Update = d.upd.get("red", pre.red)
    old_rm: Update = d.upd.get("rm", pre.rm)
    old_has: Update = d.upd.get("has", pre.has)
    old_lo: Update = d.upd.get("lo", pre.lo)
    d.upd["red"] = lambda k, x: z3.Or(old_red(k, x), z3.And(k == k0, x == p, white))
    d.upd["rm"] = lambda k, x: z3.If(z3.And(k == k0, x == p, white), pre.loc(p), old_rm(k, x))
    app: Callable[[Expr, Expr], Expr] = d.appends
    d.upd["has"] = lambda k, a, b: z3.Or(old_has(k, a, b), z3.And(a == p, app(k, b)))

    def lo(j: Expr, k: Expr, a: Expr, b: Expr) -> Expr:
        # the new letter of k0 on p->b comes after every letter already there
        new_k = z3.And(a == p, app(k, b))
        new_j = z3.And(a == p, app(j, b))
        return z3.If(
            new_k, z3.And(j != k, pre.has(j, a, b)), z3.If(new_j, False, old_lo(j, k, a, b))
        )

    d.upd["lo"] = lo


def disjuncts(v: Vocabulary, pre: State, variant: str, tag: str = "step") -> list[Disjunct]:
    """Every action of Next from ``pre`` for ``variant`` (``correct`` or a bug class
    of :data:`redletter.python_model.symbolic.induction.case.VARIANTS`)."""
    return [disjunct(v, pre, variant, action, tag) for action in ACTIONS]


def disjunct(v: Vocabulary, pre: State, variant: str, action: str, tag: str = "step") -> Disjunct:
    """The disjunct of Next for ``action``."""
    if action == "SendApp":
        return _send(v, pre, variant, tag)
    if action == "InternalEvent":
        return _internal(v, pre, tag)
    if action == "ReceiveApp":
        return _receive(v, pre, variant, tag)
    if action == "ReceiveRedLetter":
        return _receive_letter(v, pre, variant, tag)
    return _start(v, pre, tag)


def _send(v: Vocabulary, pre: State, variant: str, tag: str) -> Disjunct:
    """SendApp(c): the next message of its buffer, Enqueue (or LateEnqueue)."""
    r, t = v.rigid, Terms(v, pre)
    K, Msg = v.sorts.snapshot, v.sorts.message
    m = _const(v, "m_send", Msg, tag)
    p, q = r.src(m), r.dst(m)
    d = Disjunct("SendApp", p, {"m": m}, app_act="send", msg=m, peer=q)
    d.guard += [
        z3.Not(pre.sent(m)),
        # the next message of its buffer: every one before it is sent
        forall([Msg], lambda x: z3.Implies(r.lt(x, m), pre.sent(x))),
        r.sendable(p, q, pre.loc(p), r.val(m)),
    ]
    d.upd["loc"] = lambda x: z3.If(x == p, r.after_send(p, q, pre.loc(p), r.val(m)), pre.loc(x))
    d.upd["sent"] = lambda x: z3.Or(pre.sent(x), x == m)

    def last(k: Expr) -> Expr:
        # LateEnqueue: the buffer's last element is its red letter of k
        return z3.And(
            pre.has(k, p, q),
            forall([Msg], lambda y: z3.Implies(z3.And(t.inbuf(y), r.on(y, p, q)), pre.bl(k, y))),
            forall(
                [K],
                lambda j: z3.Implies(z3.And(pre.has(j, p, q), j != k), pre.lo(j, k, p, q)),
            ),
        )

    if variant == "late-red-letter":
        d.upd["bl"] = lambda k, x: z3.If(
            x == m, z3.Or(z3.Not(pre.has(k, p, q)), last(k)), pre.bl(k, x)
        )
    else:
        d.upd["bl"] = lambda k, x: z3.If(x == m, z3.Not(pre.has(k, p, q)), pre.bl(k, x))
    return d


def _internal(v: Vocabulary, pre: State, tag: str) -> Disjunct:
    """InternalEvent(p)."""
    r = v.rigid
    a = _const(v, "p_event", v.sorts.machine, tag)
    e = _const(v, "e", v.sorts.event, tag)
    d = Disjunct("InternalEvent", a, {"p": a, "e": e}, app_act="internal", event=e)
    d.guard.append(r.events(a, pre.loc(a), e))
    d.upd["loc"] = lambda x: z3.If(x == a, r.after_event(a, pre.loc(a), e), pre.loc(x))
    return d


def _receive(v: Vocabulary, pre: State, variant: str, tag: str) -> Disjunct:
    """ReceiveApp(c): the head of its buffer (any message, non-FIFO), recorded for
    every snapshot in which Recording holds."""
    r, t = v.rigid, Terms(v, pre)
    M, K, Msg = v.sorts.machine, v.sorts.snapshot, v.sorts.message
    m = _const(v, "m_recv", Msg, tag)
    p, q = r.src(m), r.dst(m)
    d = Disjunct("ReceiveApp", q, {"m": m}, app_act="receive", msg=m, peer=p)
    d.guard += [t.inbuf(m), r.can_receive(q, p, pre.loc(q), r.val(m))]
    if variant != "non-fifo":
        # Deliverable(c) == {1}: the oldest message, no red letter before it
        d.guard += [
            forall([Msg], lambda x: z3.Implies(r.lt(x, m), z3.Not(t.inbuf(x)))),
            forall([K], lambda k: z3.Implies(pre.has(k, p, q), pre.bl(k, m))),
        ]
    d.upd["rcvd"] = lambda x: z3.Or(pre.rcvd(x), x == m)

    def recording(k: Expr) -> Expr:
        if variant == "no-channel-recording":
            return z3.BoolVal(False)
        if variant == "stop-at-first-red-letter":
            return z3.And(pre.red(k, q), forall([M], lambda b: z3.Not(pre.rb(k, b, q))))
        return z3.And(pre.red(k, q), z3.Not(pre.rb(k, p, q)))

    d.recording = recording
    d.upd["rec"] = lambda k, x: z3.Or(pre.rec(k, x), z3.And(x == m, recording(k)))
    newest_first = variant == "newest-first-recording"

    def rlt(k: Expr, x: Expr, y: Expr) -> Expr:
        def stream(z: Expr) -> Expr:
            return z3.And(pre.rec(k, z), r.on(z, p, q), z != m)

        new = z3.And(x == m, stream(y)) if newest_first else z3.And(y == m, stream(x))
        return z3.If(z3.And(recording(k), z3.Or(x == m, y == m)), new, pre.rlt(k, x, y))

    d.upd["rlt"] = rlt
    delivered = r.after_receive(q, p, pre.loc(q), r.val(m))
    if variant == "swallowing-recording":
        # ConsumeRecorded: a message some snapshot records does not reach the application
        delivered = z3.If(exists([K], recording), pre.loc(q), delivered)
    d.upd["loc"] = lambda x: z3.If(x == q, delivered, pre.loc(x))
    return d


def _receive_letter(v: Vocabulary, pre: State, variant: str, tag: str) -> Disjunct:
    """ReceiveRedLetter(c): Receipt1 (TurnsRed) and Receipt2 (TurnRed when white)."""
    r, t = v.rigid, Terms(v, pre)
    M, K, Msg = v.sorts.machine, v.sorts.snapshot, v.sorts.message
    p = _const(v, "p_letter", M, tag)
    q = _const(v, "q_letter", M, tag)
    k0 = _const(v, "k_letter", K, tag)
    d = Disjunct("ReceiveRedLetter", q, {"p": p, "q": q, "k": k0}, letter=k0, peer=p, from_src=p)
    d.guard.append(pre.has(k0, p, q))
    if variant != "non-fifo":
        # the head of its buffer: no message and no other letter before it
        d.guard += [
            forall(
                [Msg],
                lambda x: z3.Implies(z3.And(t.inbuf(x), r.on(x, p, q)), z3.Not(pre.bl(k0, x))),
            ),
            forall(
                [K],
                lambda j: z3.Implies(z3.And(pre.has(j, p, q), j != k0), pre.lo(k0, j, p, q)),
            ),
        ]
    white = z3.Not(pre.red(k0, q))
    d.upd["has"] = lambda k, a, b: z3.And(pre.has(k, a, b), z3.Not(z3.And(k == k0, a == p, b == q)))
    # with no letter of k0 left on p->q, every message of it is ahead (NoLetterAllAhead)
    d.upd["bl"] = lambda k, x: z3.Or(pre.bl(k, x), z3.And(k == k0, r.on(x, p, q)))
    mixed = variant == "mixed-snapshots"

    def turns(j: Expr) -> Expr:
        # TurnsRed(c, k) == {k}; TurnsRedInAll adds {j \in Snap : Dst(c) \in red[j]}
        return z3.Or(j == k0, pre.red(j, q)) if mixed else j == k0

    d.upd["rb"] = lambda j, a, b: z3.Or(pre.rb(j, a, b), z3.And(a == p, b == q, turns(j)))
    if variant == "never-forward":
        sends = z3.BoolVal(False)  # StarterOnly: a machine turned red by a letter sends none
    elif variant == "resent-red-letters":
        sends = z3.BoolVal(True)  # again, when already red
    else:
        sends = white
    _turn_red(v, pre, d, q, k0, white, sends)
    return d


def _start(v: Vocabulary, pre: State, tag: str) -> Disjunct:
    """StartSnapshot(p, k): a starter acts "as if it has received a red letter (from
    nowhere)"."""
    r = v.rigid
    a = _const(v, "p_start", v.sorts.machine, tag)
    k0 = _const(v, "k_start", v.sorts.snapshot, tag)
    d = Disjunct("StartSnapshot", a, {"p": a, "k": k0}, letter=k0)
    d.guard += [r.starter(k0, a), z3.Not(pre.red(k0, a)), r.may_start(a, k0, pre.loc(a))]
    _turn_red(v, pre, d, a, k0, z3.BoolVal(True), z3.BoolVal(True))
    return d


def transition(v: Vocabulary, d: Disjunct, pre: State, post: State) -> list[tuple[str, Expr]]:
    """The post-state of ``d``: one definition per state symbol (``\\A args :
    f@post(args) = update(args)``; unchanged symbols equal their pre-state)."""
    out = []
    for name, (args, _res) in STATE_SYMBOLS.items():
        sorts = [getattr(v.sorts, x) for x in args]
        upd = d.upd.get(name, getattr(pre, name))
        f = getattr(post, name)
        out.append((f"{name}'", forall(sorts, lambda *xs, f=f, upd=upd: f(*xs) == upd(*xs))))
    return out


def consistent(v: Vocabulary, d: Disjunct, pre: State, pr: Prophecy) -> list[tuple[str, Expr]]:
    """What the prophecy of snapshot kappa says of this step, for the step to be one of
    the run it was read from.  Each holds of every step of every run (of every
    variant) for the prophecy defined from that run: it restates the definition."""
    r = v.rigid
    M, Msg = v.sorts.machine, v.sorts.message
    kappa = pr.kappa
    out: list[tuple[str, Expr]] = []
    if d.action == "SendApp":
        assert d.msg is not None
        out.append(("SentWhiteIsProphesied", pr.ws(d.msg) == z3.Not(pre.red(kappa, d.actor))))
    if d.action == "ReceiveApp":
        assert d.msg is not None
        out.append(("ReceivedWhiteIsProphesied", pr.acc(d.msg) == z3.Not(pre.red(kappa, d.actor))))
    if d.turns is not None:
        q = d.actor
        turning = d.turning(kappa)
        frm = d.from_src
        out += [
            ("TurnsRedInProphesiedState", z3.Implies(turning, pr.sig(q) == pre.loc(q))),
            (
                "SendsNothingMoreWhite",
                z3.Implies(
                    turning,
                    forall(
                        [Msg],
                        lambda x: z3.Implies(
                            z3.And(r.src(x) == q, z3.Not(pre.sent(x))), z3.Not(pr.ws(x))
                        ),
                    ),
                ),
            ),
            (
                "ReceivesNothingMoreWhite",
                z3.Implies(
                    turning,
                    forall(
                        [Msg],
                        lambda x: z3.Implies(
                            z3.And(r.dst(x) == q, z3.Not(pre.rcvd(x))), z3.Not(pr.acc(x))
                        ),
                    ),
                ),
            ),
            (
                "ReceivesNoLetterMoreWhite",
                z3.Implies(
                    turning,
                    forall(
                        [M],
                        lambda b: z3.Implies(
                            b != frm if frm is not None else z3.BoolVal(True),
                            z3.Not(pr.accl(b, q)),
                        ),
                    ),
                ),
            ),
        ]
        if frm is not None:
            out.append(("LetterTurnsRedIsProphesied", z3.Implies(turning, pr.accl(frm, q))))
    return out
