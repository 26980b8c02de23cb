"""Derived notions of one state: what a buffer holds, started and complete, the
state's well-formedness (the representation's own constraints), Init, and the two
shadow networks as state functions (Lemma 0's of reality; Lemma 1's of reality and
the prophecy)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from redletter.python_model.symbolic.induction.everyn.vocab import (
    Expr,
    Fn,
    Rigid,
    State,
    Vocabulary,
    exists,
    forall,
)
from redletter.python_model.z3env import z3

__all__ = ["Prophecy", "Terms", "init", "well_formed"]


@dataclass(frozen=True)
class Prophecy:
    """The prophecy of one snapshot ``kappa`` (rigid: a property of each message and
    machine in the run, read from the run's future):

    * ``ws(m)`` -- m is (or will be) sent while its source is white in kappa;
    * ``acc(m)`` -- m is (or will be) received while its destination is white;
    * ``accl(p, q)`` -- q receives kappa's red letter from buffer p->q while white
      (that receipt turns it red);
    * ``sig(p)`` -- the state p is in when it turns red in kappa (what it records).
    """

    kappa: Any
    ws: Any
    acc: Any
    accl: Any
    sig: Any


def prophecy(v: Vocabulary) -> Prophecy:
    s = v.sorts
    B = z3.BoolSort()
    return Prophecy(
        z3.Const("kappa", s.snapshot),
        Fn(z3.Function("WS", s.message, B)),
        Fn(z3.Function("A", s.message, B)),
        Fn(z3.Function("AL", s.machine, s.machine, B)),
        Fn(z3.Function("sig", s.machine, s.local)),
    )


class Terms:
    """The derived notions of state ``st``."""

    def __init__(self, v: Vocabulary, st: State) -> None:
        self.v = v
        self.r: Rigid = v.rigid
        self.st = st
        self.M = v.sorts.machine
        self.K = v.sorts.snapshot
        self.Msg = v.sorts.message

    # ---------------------------------------------------------------- buffers

    def inbuf(self, x: Expr) -> Expr:
        """Message x is in its buffer (sent, not yet received)."""
        return z3.And(self.st.sent(x), z3.Not(self.st.rcvd(x)))

    def ahead(self, k: Expr, x: Expr) -> Expr:
        """In-buffer message x stands before its buffer's red letter of k."""
        return z3.And(self.inbuf(x), self.st.has(k, self.r.src(x), self.r.dst(x)), self.st.bl(k, x))

    # ---------------------------------------------------------------- colours

    def started(self, k: Expr) -> Expr:
        """Some machine is red in k (the spec's Started(k))."""
        return exists([self.M], lambda p: self.st.red(k, p))

    def complete(self, k: Expr) -> Expr:
        """Every machine and every buffer is red in k.  (The spec's Complete(k) is
        every buffer red; the two agree on every graph in which each machine has a
        buffer, by RedBufferJoinsRedMachines.)"""
        st, link = self.st, self.r.link
        return z3.And(
            forall([self.M], lambda p: st.red(k, p)),
            forall([self.M, self.M], lambda p, q: z3.Implies(link(p, q), st.rb(k, p, q))),
        )

    def in_progress(self, k: Expr) -> Expr:
        return z3.And(self.started(k), z3.Not(self.complete(k)))

    # ---------------------------------------------------------------- Lemma 0's shadow

    def pending0(self, k: Expr, x: Expr) -> Expr:
        """x is in Lemma 0's shadow buffer after the recorded part: in reality, before
        the red letter of k, and the buffer still white (rule iii)."""
        st, r = self.st, self.r
        return z3.And(self.inbuf(x), st.bl(k, x), z3.Not(st.rb(k, r.src(x), r.dst(x))))

    def shadow0_has(self, k: Expr, x: Expr) -> Expr:
        """Message x is in Lemma 0's shadow network of k (Shadow0(k).buf: the recorded
        stream, then what reality holds before the red letter while the buffer is
        white)."""
        return z3.Or(self.st.rec(k, x), self.pending0(k, x))

    def shadow0_before(self, k: Expr, x: Expr, y: Expr) -> Expr:
        """x comes before y in their shadow buffer of k: recorded ones in their recorded
        order, then the rest in send order."""
        st, r = self.st, self.r
        px, py = self.pending0(k, x), self.pending0(k, y)
        return z3.And(
            r.same_chan(x, y),
            z3.Or(
                z3.And(st.rec(k, x), st.rec(k, y), st.rlt(k, x, y)),
                z3.And(st.rec(k, x), z3.Not(st.rec(k, y)), py),
                z3.And(z3.Not(st.rec(k, x)), z3.Not(st.rec(k, y)), px, py, r.lt(x, y)),
            ),
        )

    def shadow0_local(self, k: Expr, p: Expr) -> Expr:
        """Shadow0(k).local[p]: rule (ii), the recorded state once red."""
        return z3.If(self.st.red(k, p), self.st.rm(k, p), self.st.loc(p))

    # ---------------------------------------------------------------- Lemma 1's shadow

    def shadow1_has(self, pr: Prophecy, x: Expr) -> Expr:
        """Message x is in Lemma 1's shadow network of kappa: sent or to be sent while
        white, or sent already; not received; not to be received while white.  One
        formula for rule (iii)'s four cases, as Shadow0 is one for Lemma 0."""
        st = self.st
        return z3.And(z3.Or(pr.ws(x), st.sent(x)), z3.Not(st.rcvd(x)), z3.Not(pr.acc(x)))

    def shadow1_letter(self, pr: Prophecy, p: Expr, q: Expr) -> Expr:
        """Lemma 1's shadow buffer p->q holds kappa's red letter: it is not received
        yet, and will not be received by a white machine."""
        return z3.And(self.r.link(p, q), z3.Not(self.st.rb(pr.kappa, p, q)), z3.Not(pr.accl(p, q)))

    def shadow1_local(self, pr: Prophecy, p: Expr) -> Expr:
        """Rule (ii) of Lemma 1: as in reality once red, the prophesied (recorded)
        state while white."""
        return z3.If(self.st.red(pr.kappa, p), self.st.loc(p), pr.sig(p))


def well_formed(v: Vocabulary, st: State) -> list[tuple[str, Expr]]:
    """The representation's constraints on a state, by name: messages are sent in
    their buffer's order and received only once sent; each red letter is a cut of
    its buffer; the letters in one buffer are in a strict total order consistent
    with their cuts; a recorded stream is in a strict total order; letters and red
    buffers only on buffers of the network."""
    r, t = v.rigid, Terms(v, st)
    M, K, Msg = v.sorts.machine, v.sorts.snapshot, v.sorts.message
    has, lo, bl, rlt = st.has, st.lo, st.bl, st.rlt

    def letters(j: Expr, k: Expr, p: Expr, q: Expr) -> Expr:
        return z3.And(has(j, p, q), has(k, p, q), j != k)

    return [
        (
            "SentInOrder",
            forall([Msg, Msg], lambda x, y: z3.Implies(z3.And(r.lt(x, y), st.sent(y)), st.sent(x))),
        ),
        ("ReceivedOnlyOnceSent", forall([Msg], lambda x: z3.Implies(st.rcvd(x), st.sent(x)))),
        (
            "NoLetterAllAhead",
            forall(
                [K, Msg],
                lambda k, x: z3.Implies(
                    z3.And(t.inbuf(x), z3.Not(has(k, r.src(x), r.dst(x)))), bl(k, x)
                ),
            ),
        ),
        (
            "LetterIsACut",
            forall(
                [K, Msg, Msg],
                lambda k, x, y: z3.Implies(
                    z3.And(t.inbuf(x), t.inbuf(y), r.lt(x, y), bl(k, y)), bl(k, x)
                ),
            ),
        ),
        (
            "LettersOrdered",
            forall(
                [K, K, M, M],
                lambda j, k, p, q: z3.Implies(
                    letters(j, k, p, q), lo(j, k, p, q) != lo(k, j, p, q)
                ),
            ),
        ),
        (
            "LetterOrderTransitive",
            forall(
                [K, K, K, M, M],
                lambda i, j, k, p, q: z3.Implies(
                    z3.And(
                        letters(i, j, p, q),
                        letters(j, k, p, q),
                        i != k,
                        lo(i, j, p, q),
                        lo(j, k, p, q),
                    ),
                    lo(i, k, p, q),
                ),
            ),
        ),
        (
            "LetterOrderMatchesCuts",
            forall(
                [K, K, Msg],
                lambda j, k, x: z3.Implies(
                    z3.And(
                        letters(j, k, r.src(x), r.dst(x)),
                        lo(j, k, r.src(x), r.dst(x)),
                        t.inbuf(x),
                        bl(j, x),
                    ),
                    bl(k, x),
                ),
            ),
        ),
        (
            "RecordOrderIrreflexive",
            forall([K, Msg], lambda k, x: z3.Implies(st.rec(k, x), z3.Not(rlt(k, x, x)))),
        ),
        (
            "RecordOrderTotal",
            forall(
                [K, Msg, Msg],
                lambda k, x, y: z3.Implies(
                    z3.And(st.rec(k, x), st.rec(k, y), r.same_chan(x, y), x != y),
                    rlt(k, x, y) != rlt(k, y, x),
                ),
            ),
        ),
        (
            "RecordOrderTransitive",
            forall(
                [K, Msg, Msg, Msg],
                lambda k, x, y, z: z3.Implies(
                    z3.And(
                        st.rec(k, x),
                        st.rec(k, y),
                        st.rec(k, z),
                        r.same_chan(x, y),
                        r.same_chan(y, z),
                        rlt(k, x, y),
                        rlt(k, y, z),
                    ),
                    rlt(k, x, z),
                ),
            ),
        ),
        (
            "LettersOnBuffers",
            forall([K, M, M], lambda k, p, q: z3.Implies(has(k, p, q), r.link(p, q))),
        ),
        (
            "RedBuffersOnBuffers",
            forall([K, M, M], lambda k, p, q: z3.Implies(st.rb(k, p, q), r.link(p, q))),
        ),
    ]


def init(v: Vocabulary, st: State) -> Expr:
    """Init: "Initially all machines and all buffers are white", nothing sent, no
    red letter, nothing recorded; local states free (any AppLocalInit)."""
    M, K, Msg = v.sorts.machine, v.sorts.snapshot, v.sorts.message
    return z3.And(
        forall([Msg], lambda x: z3.Not(st.sent(x))),
        forall([Msg], lambda x: z3.Not(st.rcvd(x))),
        forall([K, M], lambda k, p: z3.Not(st.red(k, p))),
        forall([K, M, M], lambda k, p, q: z3.And(z3.Not(st.rb(k, p, q)), z3.Not(st.has(k, p, q)))),
        forall([K, Msg], lambda k, x: z3.Not(st.rec(k, x))),
    )
