"""Liveness for every N: the premises of a ranking argument, checked with z3.

The claim (the spec's ``SnapshotsComplete``): every snapshot that has started
completes, on every strongly connected network, under weak fairness of receipt
(the spec's ``Fairness``), for an application that can always receive a message
(``AppCanReceive`` true: TokenApp's case; with an application that may refuse a
message for ever, the red letter queued behind it is never received, and no
fairness of receipt helps -- the spec then needs ``ProgressSpec`` and a model that
checks it, which no proof over an uninterpreted application can replace).

The argument, per snapshot k.  Its measure is the set of buffers still white in k
(finite, and it never grows: ``ColoursStay``).  While k has started and is not
complete, some white buffer carries k's red letter (``SomeLetterInFlight``, from
the invariant and, when some machine is still white, the one fact of strong
connectivity needed: an edge leaves the set of red machines).  That letter stays
until it is received (``LetterStays``), then its buffer is red; nothing ever gets
ahead of it (``NothingGetsAhead``), so what is ahead of it only shrinks; and the
head of its buffer -- a message, or a red letter -- is received, by weak fairness
of ``ReceiveApp(c)`` or ``ReceiveRedLetter(c)``: Lamport's rule WF1, whose three
premises are checked for each (``HeadStays``, ``HeadTaken``, ``HeadEnabled``).
So the letter reaches the head and is received, and the set of white buffers
shrinks; it cannot shrink for ever, so k completes.

z3 checks every premise, for every N, as the safety questions are checked.  The
rule WF1, the well-founded induction on finite sets and the finiteness of a
buffer's contents are the argument's, on paper.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from redletter.python_model.symbolic.induction.apps import ConcreteApp
from redletter.python_model.symbolic.induction.everyn.concrete import (
    Item,
    Net,
    Reality,
    Step,
    apply,
    complete,
    started,
)
from redletter.python_model.symbolic.induction.everyn.steps import Disjunct
from redletter.python_model.symbolic.induction.everyn.terms import Terms
from redletter.python_model.symbolic.induction.everyn.vocab import (
    Expr,
    State,
    Vocabulary,
    exists,
    forall,
)
from redletter.python_model.z3env import z3

__all__ = [
    "CLAIMS",
    "ConcreteHead",
    "Head",
    "colours_stay",
    "cut_holds",
    "enabled_label",
    "head",
    "head_enabled",
    "head_stays",
    "head_taken",
    "in_flight_label",
    "letter_stays",
    "nothing_gets_ahead",
    "some_letter_in_flight",
    "step_labels",
]

Labelled = list[tuple[str, Expr]]

CLAIMS = {
    "ColoursStay": "a red machine stays red, a red buffer stays red",
    "LetterStays": "a red letter stays in its buffer until it is received, which turns the "
    "buffer red",
    "NothingGetsAhead": "nothing gets ahead of a red letter in its buffer",
    "SomeLetterInFlight": "while a snapshot runs, some white buffer carries its red letter "
    "(on a strongly connected network)",
    "HeadStays": "the head of a buffer stays its head until it is received (WF1, premise 1)",
    "HeadTaken": "receiving from a buffer takes its head (WF1, premise 2)",
    "HeadEnabled": "the head of a buffer can be received (WF1, premise 3; an application that "
    "can always receive)",
}
"""The liveness premises, by name."""


def colours_stay(v: Vocabulary, pre: State, post: State) -> Labelled:
    K, M = v.sorts.snapshot, v.sorts.machine
    return [
        (
            "ColoursStay",
            z3.And(
                forall([K, M], lambda k, p: z3.Implies(pre.red(k, p), post.red(k, p))),
                forall([K, M, M], lambda k, p, q: z3.Implies(pre.rb(k, p, q), post.rb(k, p, q))),
            ),
        )
    ]


def letter_stays(v: Vocabulary, d: Disjunct, pre: State, post: State) -> Labelled:
    K, M = v.sorts.snapshot, v.sorts.machine

    def stays(k: Expr, p: Expr, q: Expr) -> Expr:
        return z3.Implies(pre.has(k, p, q), z3.Or(post.has(k, p, q), post.rb(k, p, q)))

    return [("LetterStays", forall([K, M, M], stays))]


def nothing_gets_ahead(v: Vocabulary, pre: State, post: State) -> Labelled:
    """What stands ahead of a red letter that stays in its buffer was ahead of it
    before: messages and other red letters."""
    r = v.rigid
    K, M, Msg = v.sorts.snapshot, v.sorts.machine, v.sorts.message
    t0, t1 = Terms(v, pre), Terms(v, post)

    def messages(k: Expr, x: Expr) -> Expr:
        p, q = r.src(x), r.dst(x)
        stays = z3.And(pre.has(k, p, q), post.has(k, p, q))
        return z3.Implies(z3.And(stays, t1.ahead(k, x)), t0.ahead(k, x))

    def letters(j: Expr, k: Expr, p: Expr, q: Expr) -> Expr:
        stays = z3.And(pre.has(k, p, q), post.has(k, p, q), j != k)
        ahead1 = z3.And(post.has(j, p, q), post.lo(j, k, p, q))
        ahead0 = z3.And(pre.has(j, p, q), pre.lo(j, k, p, q))
        return z3.Implies(z3.And(stays, ahead1), ahead0)

    return [
        (
            "NothingGetsAhead",
            z3.And(forall([K, Msg], messages), forall([K, K, M, M], letters)),
        )
    ]


def some_letter_in_flight(v: Vocabulary, st: State, k: Expr) -> tuple[list[Expr], Labelled]:
    """(the fact of strong connectivity for red[k]: an edge leaves it, if it is neither
    empty nor everything; the obligation)."""
    r, t = v.rigid, Terms(v, st)
    M = v.sorts.machine
    cut = z3.Implies(
        z3.And(t.started(k), exists([M], lambda q: z3.Not(st.red(k, q)))),
        exists(
            [M, M],
            lambda a, b: z3.And(r.link(a, b), st.red(k, a), z3.Not(st.red(k, b))),
        ),
    )
    flying = exists(
        [M, M], lambda a, b: z3.And(r.link(a, b), st.has(k, a, b), z3.Not(st.rb(k, a, b)))
    )
    return [cut], [
        (
            "SomeLetterInFlight",
            z3.Implies(z3.And(t.started(k), z3.Not(t.complete(k))), flying),
        )
    ]


class Head:
    """The head of buffer ``a -> b``: message ``m`` (``letter`` false) or the red letter
    of snapshot ``j`` (``letter`` true); free constants."""

    def __init__(self, v: Vocabulary, tag: str) -> None:
        s = v.sorts
        self.v = v
        self.a = z3.Const(f"head_src@{tag}", s.machine)
        self.b = z3.Const(f"head_dst@{tag}", s.machine)
        self.m = z3.Const(f"head_msg@{tag}", s.message)
        self.j = z3.Const(f"head_letter@{tag}", s.snapshot)
        self.letter = z3.Bool(f"head_is_letter@{tag}")

    def consts(self) -> list[Expr]:
        return [self.a, self.b, self.m, self.j]

    def holds(self, st: State) -> Expr:
        """The head of ``a -> b`` in ``st`` is the item named."""
        r, t = self.v.rigid, Terms(self.v, st)
        K, Msg = self.v.sorts.snapshot, self.v.sorts.message
        a, b, m, j = self.a, self.b, self.m, self.j
        message = z3.And(
            t.inbuf(m),
            r.on(m, a, b),
            forall(
                [Msg], lambda x: z3.Implies(z3.And(r.lt(x, m), r.on(x, a, b)), z3.Not(t.inbuf(x)))
            ),
            forall([K], lambda k: z3.Implies(st.has(k, a, b), st.bl(k, m))),
        )
        letter = z3.And(
            st.has(j, a, b),
            forall(
                [Msg],
                lambda x: z3.Implies(z3.And(t.inbuf(x), r.on(x, a, b)), z3.Not(st.bl(j, x))),
            ),
            forall([K], lambda k: z3.Implies(z3.And(st.has(k, a, b), k != j), st.lo(j, k, a, b))),
        )
        return z3.If(self.letter, letter, message)

    def gone(self, st: State) -> Expr:
        """The item named has left the buffer."""
        t = Terms(self.v, st)
        return z3.If(self.letter, z3.Not(st.has(self.j, self.a, self.b)), z3.Not(t.inbuf(self.m)))


def head(v: Vocabulary, tag: str = "live") -> Head:
    return Head(v, tag)


def head_stays(h: Head, pre: State, post: State) -> Labelled:
    """WF1 premise 1: every step keeps the head the head, or takes it."""
    return [("HeadStays", z3.Implies(h.holds(pre), z3.Or(h.holds(post), h.gone(post))))]


def head_taken(v: Vocabulary, d: Disjunct, h: Head, pre: State, post: State) -> Labelled:
    """WF1 premise 2: ReceiveApp(a -> b) (ReceiveRedLetter(a -> b)) takes the head, when
    the head is a message (a red letter)."""
    r = v.rigid
    if d.action == "ReceiveApp":
        assert d.msg is not None
        ours = z3.And(z3.Not(h.letter), r.on(d.msg, h.a, h.b))
    else:
        ours = z3.And(h.letter, d.params["p"] == h.a, d.params["q"] == h.b)
    return [("HeadTaken", z3.Implies(z3.And(h.holds(pre), ours), h.gone(post)))]


def head_enabled(
    v: Vocabulary, h: Head, pre: State, receive: Disjunct, letter: Disjunct
) -> tuple[list[Expr], Labelled]:
    """WF1 premise 3: the head can be received -- the guard of ``receive``
    (ReceiveApp) for message m, or of ``letter`` (ReceiveRedLetter) for the letter of
    j, holds -- given that the application can receive m: (that fact, the
    obligation)."""
    r = v.rigid
    a, b, m, j = h.a, h.b, h.m, h.j
    can = r.can_receive(b, a, pre.loc(b), r.val(m))
    ps = letter.params
    recv = z3.substitute(z3.And(*receive.guard), (receive.params["m"], m))
    take = z3.substitute(z3.And(*letter.guard), (ps["p"], a), (ps["q"], b), (ps["k"], j))
    return [z3.Implies(z3.Not(h.letter), can)], [
        ("HeadEnabled", z3.Implies(h.holds(pre), z3.If(h.letter, take, recv)))
    ]


# ------------------------------------------------------------------------- concretely


@dataclass(frozen=True)
class ConcreteHead:
    """A head of buffer ``a -> b``: message ``m``, or (``letter``) the red letter of
    snapshot ``j``."""

    a: int
    b: int
    letter: bool
    m: int
    j: int

    def holds(self, net: Net, r: Reality) -> bool:
        c = (self.a, self.b)
        if c not in net.chan_index:
            return False
        buf = r.bufs[net.chan_index[c]]
        return bool(buf) and buf[0] == (("r", self.j) if self.letter else ("m", self.m))

    def gone(self, net: Net, r: Reality) -> bool:
        c = (self.a, self.b)
        buf = r.bufs[net.chan_index[c]] if c in net.chan_index else ()
        return (("r", self.j) if self.letter else ("m", self.m)) not in buf


def _ahead(b: Sequence[Item], k: int) -> tuple[Item, ...]:
    at = b.index(("r", k))
    return tuple(b[:at])


def step_labels(
    net: Net,
    app: ConcreteApp,
    variant: str,
    r: Reality,
    st: Step,
    u: Reality,
    h: ConcreteHead,
) -> dict[str, bool]:
    """The liveness premises of one step, by the encoding's labels."""
    colours = all(r.red[k] <= u.red[k] and r.rb[k] <= u.rb[k] for k in range(net.snapshots))
    stays = ahead = True
    for i, c in enumerate(net.links):
        b0, b1 = r.bufs[i], u.bufs[i]
        for k in range(net.snapshots):
            if ("r", k) not in b0:
                continue
            if ("r", k) not in b1:
                stays &= c in u.rb[k]
                continue
            ahead &= set(_ahead(b1, k)) <= set(_ahead(b0, k))
    out = {
        "ColoursStay": colours,
        "LetterStays": stays,
        "NothingGetsAhead": ahead,
        "HeadStays": not h.holds(net, r) or h.holds(net, u) or h.gone(net, u),
    }
    if st.action in ("ReceiveApp", "ReceiveRedLetter"):
        if st.action == "ReceiveApp":
            assert st.m is not None
            ours = not h.letter and net.chan(st.m) == (h.a, h.b)
        else:
            ours = h.letter and (st.p, st.q) == (h.a, h.b)
        out["HeadTaken"] = not (h.holds(net, r) and ours) or h.gone(net, u)
    del app, variant
    return out


def enabled_label(
    net: Net, app: ConcreteApp, variant: str, r: Reality, h: ConcreteHead
) -> dict[str, bool]:
    """HeadEnabled: the head can be received (the interpreter's own step is enabled)."""
    if not h.holds(net, r):
        return {"HeadEnabled": True}
    st = Step("ReceiveRedLetter", p=h.a, q=h.b, k=h.j) if h.letter else Step("ReceiveApp", m=h.m)
    return {"HeadEnabled": apply(net, app, variant, r, st) is not None}


def in_flight_label(net: Net, r: Reality, k: int) -> dict[str, bool]:
    """SomeLetterInFlight for snapshot k (given the fact of strong connectivity)."""
    if not started(r, k) or complete(net, r, k):
        return {"SomeLetterInFlight": True}
    flying = any(("r", k) in r.bufs[i] and c not in r.rb[k] for i, c in enumerate(net.links))
    return {"SomeLetterInFlight": flying}


def cut_holds(net: Net, r: Reality, k: int) -> bool:
    """The fact of strong connectivity the check assumes, concretely."""
    white = [p for p in range(net.machines) if p not in r.red[k]]
    if not started(r, k) or not white:
        return True
    return any(a in r.red[k] and b not in r.red[k] for a, b in net.links)
