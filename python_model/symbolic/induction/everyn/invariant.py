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

import inspect
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
    at_completion: bool = False


#: the sort of a conjunct's variable, by its name
_SORT_OF = {
    "k": "snapshot",
    "p": "machine",
    "q": "machine",
    "m": "message",
    "x": "message",
    "y": "message",
}


def _conjunct(
    layer: str, name: str, says: str, body: Callable[..., Expr], *, at_completion: bool = False
) -> Conjunct:
    """A conjunct: ``body(v, state, terms, prophecy, *variables)``, universally
    quantified over its variables, whose names give their sorts (``k`` a snapshot,
    ``p``, ``q`` machines, ``m``, ``x``, ``y`` messages)."""
    names = list(inspect.signature(body).parameters)[4:]

    def build(v: Vocabulary, st: State, pr: Prophecy) -> Expr:
        sorts = [getattr(v.sorts, _SORT_OF[n]) for n in names]
        return forall(sorts, lambda *xs: body(v, st, Terms(v, st), pr, *xs))

    return Conjunct(name, layer, says, build, at_completion)


def _reality(name: str, says: str, body: Callable[..., Expr]) -> Conjunct:
    return _conjunct("reality", name, says, body)


def _prophecy(
    name: str, says: str, body: Callable[..., Expr], *, at_completion: bool = False
) -> Conjunct:
    return _conjunct("prophecy", name, says, body, at_completion=at_completion)


def _src(v: Vocabulary, x: Expr) -> Expr:
    return v.rigid.src(x)


def _dst(v: Vocabulary, x: Expr) -> Expr:
    return v.rigid.dst(x)


_ALL: tuple[Conjunct, ...] = (
    # ------------------------------------------------------------ reality
    _reality(
        "RedLettersOnlyFromRed",
        "a buffer carries a red letter of k only if its source is red in k",
        lambda v, st, t, pr, k, p, q: z3.Implies(st.has(k, p, q), st.red(k, p)),
    ),
    _reality(
        "WhiteBufferOfRedSourceHoldsLetter",
        "a buffer still white in k whose source is red in k carries its red letter of k",
        lambda v, st, t, pr, k, p, q: z3.Implies(
            z3.And(v.rigid.link(p, q), st.red(k, p), z3.Not(st.rb(k, p, q))), st.has(k, p, q)
        ),
    ),
    _reality(
        "RedBufferHoldsNoLetter",
        "a buffer red in k carries no red letter of k (its one letter was received)",
        lambda v, st, t, pr, k, p, q: z3.Implies(st.rb(k, p, q), z3.Not(st.has(k, p, q))),
    ),
    _reality(
        "RedBufferJoinsRedMachines",
        "a buffer is red in k only between two machines red in k",
        lambda v, st, t, pr, k, p, q: z3.Implies(
            st.rb(k, p, q), z3.And(st.red(k, p), st.red(k, q))
        ),
    ),
    _reality(
        "WhiteMachineRecordsNothing",
        "a machine white in k has recorded nothing on its input buffers for k",
        lambda v, st, t, pr, k, m: z3.Implies(st.rec(k, m), st.red(k, _dst(v, m))),
    ),
    _reality(
        "RecordedWasReceived",
        "a message recorded for k has left its buffer (it was received)",
        lambda v, st, t, pr, k, m: z3.Implies(st.rec(k, m), st.rcvd(m)),
    ),
    _reality(
        "ReceivedInSendOrder",
        "buffers are first-in-first-out: a message is received only after every "
        "message sent before it on its buffer",
        lambda v, st, t, pr, x, y: z3.Implies(z3.And(st.rcvd(y), v.rigid.lt(x, y)), st.rcvd(x)),
    ),
    _reality(
        "RecordedInSendOrder",
        "a recorded stream lists its messages in the order they were sent",
        lambda v, st, t, pr, k, x, y: z3.Implies(
            z3.And(st.rec(k, x), st.rec(k, y), v.rigid.same_chan(x, y)),
            st.rlt(k, x, y) == v.rigid.lt(x, y),
        ),
    ),
    # ------------------------------------------------------------ the prophecy of kappa
    _prophecy(
        "ProphesiedStateRecorded",
        "a machine red in kappa recorded the state the prophecy named",
        lambda v, st, t, pr, p: z3.Implies(st.red(pr.kappa, p), st.rm(pr.kappa, p) == pr.sig(p)),
    ),
    _prophecy(
        "RedSendsNothingWhite",
        "a red machine sends nothing more while white: no message it has yet to send is "
        "prophesied white",
        lambda v, st, t, pr, m: z3.Implies(
            z3.And(st.red(pr.kappa, _src(v, m)), z3.Not(st.sent(m))), z3.Not(pr.ws(m))
        ),
    ),
    _prophecy(
        "RedReceivesNothingWhite",
        "a red machine receives nothing more while white: no message it has yet to "
        "receive is prophesied accepted while white",
        lambda v, st, t, pr, m: z3.Implies(
            z3.And(st.red(pr.kappa, _dst(v, m)), z3.Not(st.rcvd(m))), z3.Not(pr.acc(m))
        ),
    ),
    _prophecy(
        "RedReceivesNoLetterWhite",
        "a red machine receives no red letter of kappa while white from a buffer still white",
        lambda v, st, t, pr, p, q: z3.Implies(
            z3.And(st.red(pr.kappa, q), z3.Not(st.rb(pr.kappa, p, q))), z3.Not(pr.accl(p, q))
        ),
    ),
    _prophecy(
        "WhiteSentIsAheadOfLetter",
        "a message in a buffer was sent while white exactly when it stands before the "
        "buffer's red letter of kappa (or the buffer has none and its source is white)",
        lambda v, st, t, pr, m: z3.Implies(
            t.inbuf(m),
            pr.ws(m)
            == z3.If(
                st.has(pr.kappa, _src(v, m), _dst(v, m)),
                st.bl(pr.kappa, m),
                z3.Not(st.red(pr.kappa, _src(v, m))),
            ),
        ),
    ),
    _prophecy(
        "AcceptedWasSentWhite",
        "a message received while white was sent while white",
        lambda v, st, t, pr, m: z3.Implies(z3.And(st.rcvd(m), pr.acc(m)), pr.ws(m)),
    ),
    _prophecy(
        "RecordedIsProphesied",
        "a message is recorded for kappa exactly when it was received, sent while white "
        "and not accepted while white (the snapshot's stream)",
        lambda v, st, t, pr, m: (
            st.rec(pr.kappa, m) == z3.And(st.rcvd(m), pr.ws(m), z3.Not(pr.acc(m)))
        ),
    ),
    _prophecy(
        "AcceptedWhiteWasSentWhite",
        "every message accepted while white, received yet or not, was or will be sent "
        "while white (shown at kappa's completion: a fact of the prophecy alone)",
        lambda v, st, t, pr, m: z3.Implies(pr.acc(m), pr.ws(m)),
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
