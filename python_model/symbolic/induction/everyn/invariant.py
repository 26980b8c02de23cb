"""The every-N invariant, conjunct by conjunct, each one formula universally
quantified over the sorts (so its instances are every snapshot, buffer, machine
and message of every network at once).

* :data:`REALITY` -- EWD 864's red-letter traffic and recording, over every
  snapshot; inductive by itself (no prophecy); Lemma 0 follows through the spec's
  shadow network (:mod:`.obligations`).
* :data:`PROPHECY` -- what the prophecy of one snapshot kappa says, against reality:
  forward conjuncts (about the past, and about the future of a machine already
  red), true at Init whatever the prophecy and kept by every step the prophecy
  allows; and one conjunct about the future alone, ``AcceptedWhiteWasSentWhite``,
  which is shown where the future is known: at kappa's completion (it speaks of
  the rigid prophecy only, so true then is true at every moment).
* Lemma 1's shadow needs no conjunct of its own: with message identities it is a
  state function of reality and the prophecy (:meth:`.terms.Terms.shadow1_has`),
  like Lemma 0's of reality.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from redletter.python_model.symbolic.induction.everyn.terms import Prophecy, Terms
from redletter.python_model.symbolic.induction.everyn.vocab import (
    Expr,
    State,
    Vocabulary,
    forall,
)
from redletter.python_model.z3env import z3

__all__ = ["CONJUNCTS", "LAYERS", "PROPHECY", "REALITY", "Conjunct", "formulas"]

Builder = Callable[[Vocabulary, State, Prophecy], Expr]


@dataclass(frozen=True)
class Conjunct:
    """A conjunct: its name, its layer, what it says in EWD 864's words, its formula,
    and (for the prophecy) whether it is checked forward or at completion."""

    name: str
    layer: str
    says: str
    build: Builder
    quantifies: str  #: the sorts its variables range over, e.g. "k, p, q"
    at_completion: bool = False


def _reality(
    name: str, says: str, quantifies: str, body: Callable[..., Expr], sorts: str
) -> Conjunct:
    def build(v: Vocabulary, st: State, pr: Prophecy) -> Expr:
        srt = [
            {"k": v.sorts.snapshot, "p": v.sorts.machine, "m": v.sorts.message}[c] for c in sorts
        ]
        return forall(srt, lambda *xs: body(v, st, Terms(v, st), *xs))

    return Conjunct(name, "reality", says, build, quantifies)


def _prophecy(
    name: str,
    says: str,
    quantifies: str,
    body: Callable[..., Expr],
    sorts: str,
    *,
    at_completion: bool = False,
) -> Conjunct:
    def build(v: Vocabulary, st: State, pr: Prophecy) -> Expr:
        srt = [{"p": v.sorts.machine, "m": v.sorts.message}[c] for c in sorts]
        return forall(srt, lambda *xs: body(v, st, Terms(v, st), pr, *xs))

    return Conjunct(name, "prophecy", says, build, quantifies, at_completion)


def _src(v: Vocabulary, x: Expr) -> Expr:
    return v.rigid.src(x)


def _dst(v: Vocabulary, x: Expr) -> Expr:
    return v.rigid.dst(x)


_ALL: tuple[Conjunct, ...] = (
    # ------------------------------------------------------------ reality
    _reality(
        "RedLettersOnlyFromRed",
        "a buffer carries a red letter of k only if its source is red in k",
        "k, p, q",
        lambda v, st, t, k, p, q: z3.Implies(st.has(k, p, q), st.red(k, p)),
        "kpp",
    ),
    _reality(
        "WhiteBufferOfRedSourceHoldsLetter",
        "a buffer still white in k whose source is red in k carries its red letter of k",
        "k, p, q",
        lambda v, st, t, k, p, q: z3.Implies(
            z3.And(v.rigid.link(p, q), st.red(k, p), z3.Not(st.rb(k, p, q))), st.has(k, p, q)
        ),
        "kpp",
    ),
    _reality(
        "RedBufferHoldsNoLetter",
        "a buffer red in k carries no red letter of k (its one letter was received)",
        "k, p, q",
        lambda v, st, t, k, p, q: z3.Implies(st.rb(k, p, q), z3.Not(st.has(k, p, q))),
        "kpp",
    ),
    _reality(
        "RedBufferJoinsRedMachines",
        "a buffer is red in k only between two machines red in k",
        "k, p, q",
        lambda v, st, t, k, p, q: z3.Implies(st.rb(k, p, q), z3.And(st.red(k, p), st.red(k, q))),
        "kpp",
    ),
    _reality(
        "WhiteMachineRecordsNothing",
        "a machine white in k has recorded nothing on its input buffers for k",
        "k, m",
        lambda v, st, t, k, m: z3.Implies(st.rec(k, m), st.red(k, _dst(v, m))),
        "km",
    ),
    _reality(
        "RecordedWasReceived",
        "a message recorded for k has left its buffer (it was received)",
        "k, m",
        lambda v, st, t, k, m: z3.Implies(st.rec(k, m), st.rcvd(m)),
        "km",
    ),
    _reality(
        "ReceivedInSendOrder",
        "buffers are first-in-first-out: a message is received only after every "
        "message sent before it on its buffer",
        "x, y",
        lambda v, st, t, x, y: z3.Implies(z3.And(st.rcvd(y), v.rigid.lt(x, y)), st.rcvd(x)),
        "mm",
    ),
    _reality(
        "RecordedInSendOrder",
        "a recorded stream lists its messages in the order they were sent",
        "k, x, y",
        lambda v, st, t, k, x, y: z3.Implies(
            z3.And(st.rec(k, x), st.rec(k, y), v.rigid.same_chan(x, y)),
            st.rlt(k, x, y) == v.rigid.lt(x, y),
        ),
        "kmm",
    ),
    # ------------------------------------------------------------ the prophecy of kappa
    _prophecy(
        "ProphesiedStateRecorded",
        "a machine red in kappa recorded the state the prophecy named",
        "p",
        lambda v, st, t, pr, p: z3.Implies(st.red(pr.kappa, p), st.rm(pr.kappa, p) == pr.sig(p)),
        "p",
    ),
    _prophecy(
        "RedSendsNothingWhite",
        "a red machine sends nothing more while white: no message it has yet to send is "
        "prophesied white",
        "m",
        lambda v, st, t, pr, m: z3.Implies(
            z3.And(st.red(pr.kappa, _src(v, m)), z3.Not(st.sent(m))), z3.Not(pr.ws(m))
        ),
        "m",
    ),
    _prophecy(
        "RedReceivesNothingWhite",
        "a red machine receives nothing more while white: no message it has yet to "
        "receive is prophesied accepted while white",
        "m",
        lambda v, st, t, pr, m: z3.Implies(
            z3.And(st.red(pr.kappa, _dst(v, m)), z3.Not(st.rcvd(m))), z3.Not(pr.acc(m))
        ),
        "m",
    ),
    _prophecy(
        "RedReceivesNoLetterWhite",
        "a red machine receives no red letter of kappa while white from a buffer still white",
        "p, q",
        lambda v, st, t, pr, p, q: z3.Implies(
            z3.And(st.red(pr.kappa, q), z3.Not(st.rb(pr.kappa, p, q))), z3.Not(pr.accl(p, q))
        ),
        "pp",
    ),
    _prophecy(
        "WhiteSentIsAheadOfLetter",
        "a message in a buffer was sent while white exactly when it stands before the "
        "buffer's red letter of kappa (or the buffer has none and its source is white)",
        "m",
        lambda v, st, t, pr, m: z3.Implies(
            t.inbuf(m),
            pr.ws(m)
            == z3.If(
                st.has(pr.kappa, _src(v, m), _dst(v, m)),
                st.bl(pr.kappa, m),
                z3.Not(st.red(pr.kappa, _src(v, m))),
            ),
        ),
        "m",
    ),
    _prophecy(
        "AcceptedWasSentWhite",
        "a message received while white was sent while white",
        "m",
        lambda v, st, t, pr, m: z3.Implies(z3.And(st.rcvd(m), pr.acc(m)), pr.ws(m)),
        "m",
    ),
    _prophecy(
        "RecordedIsProphesied",
        "a message is recorded for kappa exactly when it was received, sent while white "
        "and not accepted while white (the snapshot's stream)",
        "m",
        lambda v, st, t, pr, m: (
            st.rec(pr.kappa, m) == z3.And(st.rcvd(m), pr.ws(m), z3.Not(pr.acc(m)))
        ),
        "m",
    ),
    _prophecy(
        "AcceptedWhiteWasSentWhite",
        "every message accepted while white, received yet or not, was or will be sent "
        "while white (shown at kappa's completion: a fact of the prophecy alone)",
        "m",
        lambda v, st, t, pr, m: z3.Implies(pr.acc(m), pr.ws(m)),
        "m",
        at_completion=True,
    ),
)

CONJUNCTS: Mapping[str, Conjunct] = {c.name: c for c in _ALL}
"""Every conjunct of the every-N invariant, by name."""

REALITY: tuple[str, ...] = tuple(n for n, c in CONJUNCTS.items() if c.layer == "reality")
PROPHECY: tuple[str, ...] = tuple(n for n, c in CONJUNCTS.items() if c.layer == "prophecy")
LAYERS: Mapping[str, tuple[str, ...]] = {"reality": REALITY, "prophecy": PROPHECY, "shadow1": ()}


def formulas(
    v: Vocabulary, st: State, pr: Prophecy, names: tuple[str, ...] | list[str]
) -> list[tuple[str, Expr]]:
    """The named conjuncts' formulas in state ``st``."""
    return [(n, CONJUNCTS[n].build(v, st, pr)) for n in names]
