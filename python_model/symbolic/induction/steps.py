"""One step of the induction: the spec's Next, one disjunct per (action, buffer or
machine, snapshot), with the variant's overrides; the prophecy's relation between
two states; and the step Lemma 1's shadow network takes.

A disjunct's parameters (the message, the event, the segments a non-FIFO receipt
cuts a buffer into) are fresh z3 variables; its guard, its updates of reality's
variables and the red letters it sends are z3 terms over the state before.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from redletter.python_model.symbolic.induction.apps import AppTheory
from redletter.python_model.symbolic.induction.case import Case
from redletter.python_model.symbolic.induction.state import (
    EMPTY,
    SEQ,
    Key,
    SymState,
    Terms,
    concat,
    unit,
)
from redletter.python_model.z3env import z3

__all__ = ["Disjunct", "Letter", "disjuncts", "ghost_step", "prophecy_relation"]

Expr: TypeAlias = Any


@dataclass(frozen=True)
class Letter:
    """A red letter of snapshot index ``k`` the step appends to buffer ``chan`` when
    ``when`` holds."""

    chan: int
    k: int
    when: Expr


@dataclass
class Disjunct:
    """One concrete choice of Next: the action, its fixed parameters, its symbolic
    ones, its guard and what it does to reality."""

    label: str  #: e.g. ``ReceiveRedLetter(p1→p2, 1)``
    action: str  #: the spec's action name
    actor: int  #: the machine that acts
    chan: int | None = None
    k: int | None = None  #: snapshot index of the red letter received / snapshot started
    app_act: str | None = None  #: "send", "receive" or "internal" for application actions
    value: Expr | None = None  #: the message or event
    params: dict[str, Expr] = field(default_factory=dict)
    guard: list[Expr] = field(default_factory=list)
    upd: dict[Key, Expr] = field(default_factory=dict)
    letters: list[Letter] = field(default_factory=list)
    turns_red: dict[int, Expr] = field(default_factory=dict)  #: k -> actor turns red in k
    recording: dict[int, Expr] = field(default_factory=dict)  #: k -> the receipt is recorded


class _Effects:
    """Reality's next values for one disjunct, built over the state before."""

    def __init__(self, s: SymState, d: Disjunct) -> None:
        self.s = s
        self.d = d

    def get(self, key: Key) -> Expr:
        return self.d.upd.get(key, self.s[key])

    def set(self, key: Key, value: Expr, when: Expr | None = None) -> None:
        self.d.upd[key] = value if when is None else z3.If(when, value, self.get(key))


def _enqueue(case: Case, t: Terms, e: _Effects, c: int, m: Expr) -> None:
    """Enqueue(buf[c], AppMsg(m)): Append, or LateEnqueue (m goes before a red letter
    that is the buffer's last message)."""
    ns = case.snapshots
    s = t.s
    e.set(("app", c), concat(s["app", c], unit(m)))
    for k in range(ns):
        has = s["has", k, c]
        if case.variant == "late-red-letter":
            # IF s # << >> /\ s[Len(s)].kind = "red": the last message is red letter k
            last = z3.And(
                has,
                s["post", k, c] == EMPTY,
                *[
                    z3.Implies(z3.And(s["has", j, c], s["post", j, c] == EMPTY), t.before(c, j, k))
                    for j in range(ns)
                    if j != k
                ],
            )
        else:
            last = z3.BoolVal(False)
        e.set(
            ("pre", k, c),
            z3.If(z3.Or(z3.Not(has), last), concat(s["pre", k, c], unit(m)), s["pre", k, c]),
        )
        e.set(
            ("post", k, c),
            z3.If(z3.And(has, z3.Not(last)), concat(s["post", k, c], unit(m)), s["post", k, c]),
        )


def _append_letter(case: Case, t: Terms, e: _Effects, c: int, k: int, when: Expr) -> None:
    """Append RedLetter(k) to buffer c when ``when``: behind every message and every
    other red letter."""
    s = t.s
    e.set(("has", k, c), z3.BoolVal(True), when)
    e.set(("pre", k, c), e.get(("app", c)), when)
    e.set(("post", k, c), EMPTY, when)
    for j in range(case.snapshots):
        if j < k:
            e.set(("ord", c, j, k), z3.BoolVal(True), when)
        elif j > k:
            e.set(("ord", c, k, j), z3.BoolVal(False), when)
    del s
    e.d.letters.append(Letter(c, k, when))


def _turn_red(
    case: Case, t: Terms, e: _Effects, p: int, k: int, when: Expr, *, by_letter: bool
) -> None:
    """TurnRed(p, k, b): colour, RecordingRule1, SendsRedLetters over RedLettersOut
    (``by_letter``: turned by a red letter's receipt, not by starting the snapshot)."""
    s = t.s
    e.set(("red", k, p), z3.BoolVal(True), when)
    e.set(("rm", k, p), s["loc", p], when)
    sends = when
    if case.variant == "never-forward" and by_letter:
        # StarterOnly(p, k, from) == IF from = {} THEN Out(p) ELSE {}
        sends = z3.BoolVal(False)
    for c in case.outs(p):
        _append_letter(case, t, e, c, k, sends)
    e.d.turns_red[k] = when


def _recording(case: Case, t: Terms, k: int, q: int, c: int) -> Expr:
    """Recording(k, q, c) and its mutants."""
    s = t.s
    if case.variant == "no-channel-recording":
        return z3.BoolVal(False)
    if case.variant == "stop-at-first-red-letter":
        return z3.And(s["red", k, q], *[z3.Not(s["rb", k, x]) for x in case.ins(q)])
    return z3.And(s["red", k, q], z3.Not(s["rb", k, c]))


def disjuncts(case: Case, app: AppTheory, s: SymState, tag: str) -> list[Disjunct]:
    """Every disjunct of Next from state ``s``; parameters are named ``<name>@<tag>``."""
    t = Terms(case, s)
    ns = case.snapshots
    nonfifo = case.variant == "non-fifo"
    out: list[Disjunct] = []
    for c in range(len(case.chans)):
        p, q = case.src(c), case.dst(c)
        cn = case.chan_name(c)
        # SendApp(c)
        m = z3.Int(f"m_send_{c}@{tag}")
        d = Disjunct(f"SendApp({cn})", "SendApp", p, chan=c, app_act="send", value=m)
        d.params["m"] = m
        e = _Effects(s, d)
        d.guard.append(app.sendable(p, q, s["loc", p], m))
        e.set(("loc", p), app.after_send(p, q, s["loc", p], m))
        _enqueue(case, t, e, c, m)
        out.append(d)
        # ReceiveApp(c): the oldest message, or (non-FIFO) any application message
        m = z3.Int(f"m_recv_{c}@{tag}")
        before = z3.Const(f"before_{c}@{tag}", SEQ)
        after = z3.Const(f"after_{c}@{tag}", SEQ)
        d = Disjunct(f"ReceiveApp({cn})", "ReceiveApp", q, chan=c, app_act="receive", value=m)
        d.params.update(m=m, before=before, after=after)
        e = _Effects(s, d)
        d.guard.append(s["app", c] == concat(before, unit(m), after))
        d.guard.append(app.can_receive(q, p, s["loc", q], m))
        e.set(("app", c), concat(before, after))
        if not nonfifo:
            # Deliverable(c) == {1}: the head, and no red letter before it
            d.guard.append(before == EMPTY)
            d.guard += [
                z3.Implies(s["has", k, c], z3.Length(s["pre", k, c]) >= 1) for k in range(ns)
            ]
        for k in range(ns):
            has, pre_k, post_k = s["has", k, c], s["pre", k, c], s["post", k, c]
            w = z3.Const(f"w_{k}_{c}@{tag}", SEQ)
            if not nonfifo:  # the red letter of k, if any, is behind the message
                d.guard.append(z3.Implies(has, pre_k == concat(unit(m), w)))
                e.set(("pre", k, c), z3.If(has, w, after))
                continue
            # the red letter of k stands before the message (its "pre" is a prefix of
            # `before`) or after it (its "pre" holds the message)
            ahead = z3.Bool(f"letter_ahead_{k}_{c}@{tag}")
            v = z3.Const(f"v_{k}_{c}@{tag}", SEQ)
            d.params[f"ahead{k}"] = ahead
            d.guard.append(z3.Implies(z3.And(has, ahead), before == concat(pre_k, v)))
            d.guard.append(z3.Implies(z3.And(has, ahead), post_k == concat(v, unit(m), after)))
            d.guard.append(
                z3.Implies(z3.And(has, z3.Not(ahead)), pre_k == concat(before, unit(m), w))
            )
            e.set(
                ("pre", k, c),
                z3.If(has, z3.If(ahead, pre_k, concat(before, w)), concat(before, after)),
            )
            e.set(("post", k, c), z3.If(z3.And(has, ahead), concat(v, after), post_k))
        recorded = []
        for k in range(ns):
            rec = _recording(case, t, k, q, c)
            d.recording[k] = rec
            recorded.append(rec)
            stream = s["rec", k, c]
            new = (
                concat(unit(m), stream)
                if case.variant == "newest-first-recording"
                else concat(stream, unit(m))
            )
            e.set(("rec", k, c), new, rec)
        delivered = app.after_receive(q, p, s["loc", q], m)
        if case.variant == "swallowing-recording":
            delivered = z3.If(z3.Or(recorded), s["loc", q], delivered)
        e.set(("loc", q), delivered)
        out.append(d)
        # ReceiveRedLetter(c), one disjunct per snapshot of the red letter
        for k, kid in enumerate(case.snaps):
            d = Disjunct(f"ReceiveRedLetter({cn}, {kid})", "ReceiveRedLetter", q, chan=c, k=k)
            e = _Effects(s, d)
            d.guard.append(s["has", k, c])
            if not nonfifo:
                # the head: no message and no other red letter before it
                d.guard.append(s["pre", k, c] == EMPTY)
                d.guard += [
                    z3.Implies(z3.And(s["has", j, c], s["pre", j, c] == EMPTY), t.before(c, k, j))
                    for j in range(ns)
                    if j != k
                ]
            e.set(("has", k, c), z3.BoolVal(False))
            e.set(("pre", k, c), s["app", c])
            e.set(("post", k, c), EMPTY)
            # Receipt1: the buffer turns red in TurnsRed(c, k)
            for j in range(ns):
                if j == k:
                    e.set(("rb", j, c), z3.BoolVal(True))
                elif case.variant == "mixed-snapshots":
                    e.set(("rb", j, c), z3.Or(s["rb", j, c], s["red", j, q]))
            # Receipt2: a white machine turns red
            _turn_red(case, t, e, q, k, z3.Not(s["red", k, q]), by_letter=True)
            if case.variant == "resent-red-letters":
                for x in case.outs(q):
                    _append_letter(case, t, e, x, k, s["red", k, q])
            out.append(d)
    for p in range(len(case.procs)):
        if app.has_events:
            ev = z3.Int(f"e_{p}@{tag}")
            d = Disjunct(
                f"InternalEvent({case.procs[p]})",
                "InternalEvent",
                p,
                app_act="internal",
                value=ev,
            )
            d.params["e"] = ev
            e = _Effects(s, d)
            d.guard.append(app.events(p, s["loc", p], ev))
            e.set(("loc", p), app.after_event(p, s["loc", p], ev))
            out.append(d)
        for k, kid in enumerate(case.snaps):
            d = Disjunct(f"StartSnapshot({case.procs[p]}, {kid})", "StartSnapshot", p, k=k)
            e = _Effects(s, d)
            d.guard += [z3.Not(s["red", k, p]), app.may_start(p, kid, s["loc", p])]
            _turn_red(case, t, e, p, k, z3.BoolVal(True), by_letter=False)
            out.append(d)
    return out


def changed(d: Disjunct, s: SymState) -> set[Key]:
    """The reality keys the disjunct may change."""
    return {key for key, v in d.upd.items() if not v.eq(s[key])}


# ------------------------------------------------------------------------- prophecy


@dataclass
class ProphecyRelation:
    """How the prophecy of the state before follows from the one after.

    ``defs`` determine each variable before from the variables after (the messages a
    white machine sends or receives now are the heads of what was prophesied); they
    hold in both directions.  ``conds`` are what the step requires of the prophecy
    after it (a machine that turns red has nothing left to send before its red
    letter, nothing left to receive while white, and its prophesied state is the one
    it records): checked by the backward check, assumed by the forward one.
    """

    defs: list[Expr] = field(default_factory=list)
    conds: list[tuple[str, Expr]] = field(default_factory=list)
    consumed: set[Key] = field(default_factory=set)  #: prophecy keys the step may change


def prophecy_relation(case: Case, d: Disjunct, pre: SymState, post: SymState) -> ProphecyRelation:
    """The prophecy relation of disjunct ``d`` for every snapshot."""
    rel = ProphecyRelation()
    ns = case.snapshots
    for k in range(ns):
        kid = case.snaps[k]
        turning = d.turns_red.get(k, z3.BoolVal(False))
        for p in range(len(case.procs)):
            rel.defs.append(pre["sig", k, p] == post["sig", k, p])
            if p == d.actor and k in d.turns_red:
                rel.conds.append(
                    (
                        f"ProphesiedState({kid}, {case.procs[p]})",
                        z3.Implies(turning, post["sig", k, p] == pre["loc", p]),
                    )
                )
        letters = {(x.chan, x.k): x.when for x in d.letters}
        for c in range(len(case.chans)):
            src, dst = case.src(c), case.dst(c)
            name = f"({kid}, {case.chan_name(c)})"
            # what the source still sends before its red letter
            if d.action == "SendApp" and d.chan == c:
                white = z3.Not(pre["red", k, src])
                rel.defs.append(
                    pre["phi", k, c]
                    == z3.If(white, concat(unit(d.value), post["phi", k, c]), post["phi", k, c])
                )
                rel.consumed.add(("phi", k, c))
            else:
                rel.defs.append(pre["phi", k, c] == post["phi", k, c])
            if (c, k) in letters:
                rel.conds.append(
                    (
                        f"SendsItsRedLetterNext{name}",
                        z3.Implies(letters[c, k], post["phi", k, c] == EMPTY),
                    )
                )
            # what the destination still receives while white
            white_dst = z3.Not(pre["red", k, dst])
            if d.action == "ReceiveApp" and d.chan == c:
                rel.defs.append(
                    pre["acc", k, c]
                    == z3.If(white_dst, concat(unit(d.value), post["acc", k, c]), post["acc", k, c])
                )
                rel.defs.append(pre["accl", k, c] == post["accl", k, c])
                rel.consumed.add(("acc", k, c))
            elif d.action == "ReceiveRedLetter" and d.chan == c and d.k == k:
                rel.defs.append(pre["acc", k, c] == post["acc", k, c])
                rel.defs.append(pre["accl", k, c] == z3.Or(white_dst, post["accl", k, c]))
                rel.consumed.add(("accl", k, c))
            else:
                rel.defs.append(pre["acc", k, c] == post["acc", k, c])
                rel.defs.append(pre["accl", k, c] == post["accl", k, c])
            # what the destination will record: unchanged, until it turns red; the
            # stream of a buffer whose destination turns red (not by its letter) is all
            # to be recorded
            if dst == d.actor and k in d.turns_red:
                whole = z3.If(
                    pre["red", k, src],
                    Terms(case, pre).pre(k, c),
                    concat(Terms(case, pre).app_all(c), pre["phi", k, c]),
                )
                rel.defs.append(pre["rst", k, c] == z3.If(turning, whole, post["rst", k, c]))
                rel.consumed.add(("rst", k, c))
            else:
                rel.defs.append(pre["rst", k, c] == post["rst", k, c])
            if dst == d.actor and k in d.turns_red:
                rel.conds.append(
                    (
                        f"ReceivesNothingMoreWhileWhite{name}",
                        z3.Implies(
                            turning,
                            z3.And(post["acc", k, c] == EMPTY, z3.Not(post["accl", k, c])),
                        ),
                    )
                )
    return rel


# ------------------------------------------------------------------------- Lemma 1's shadow


@dataclass
class GhostStep:
    """The step Lemma 1's shadow network takes for one disjunct and one snapshot:
    "to an action performed in reality by a red machine corresponds in the shadow
    network exactly the same action, to an action performed in reality by a white
    machine corresponds in the shadow network a skip"."""

    upd: dict[Key, Expr] = field(default_factory=dict)
    aux: list[Expr] = field(default_factory=list)  #: definitions of helper variables
    possible: Expr = field(default_factory=lambda: z3.BoolVal(True))  #: the copy is enabled


def ghost_step(case: Case, app: AppTheory, d: Disjunct, s: SymState, k: int, tag: str) -> GhostStep:
    """Lemma 1's shadow step of snapshot index ``k`` for disjunct ``d``."""
    g = GhostStep()
    red = s["red", k, d.actor]
    a = d.actor
    if d.action == "SendApp":
        assert d.chan is not None
        c, q = d.chan, case.dst(d.chan)
        g.possible = z3.Implies(red, app.sendable(a, q, s["gl", k, a], d.value))
        sent = app.after_send(a, q, s["gl", k, a], d.value)
        g.upd[("gl", k, a)] = z3.If(red, sent, s["gl", k, a])
        has = s["ghas", k, c]
        g.upd[("gpost", k, c)] = z3.If(
            z3.And(red, has), concat(s["gpost", k, c], unit(d.value)), s["gpost", k, c]
        )
        g.upd[("gpre", k, c)] = z3.If(
            z3.And(red, z3.Not(has)), concat(s["gpre", k, c], unit(d.value)), s["gpre", k, c]
        )
    elif d.action == "InternalEvent":
        g.possible = z3.Implies(red, app.events(a, s["gl", k, a], d.value))
        g.upd[("gl", k, a)] = z3.If(red, app.after_event(a, s["gl", k, a], d.value), s["gl", k, a])
    elif d.action == "ReceiveApp":
        assert d.chan is not None
        c, p = d.chan, case.src(d.chan)
        head = z3.Int(f"ghd_{k}_{c}@{tag}")
        rest = z3.Const(f"gtl_{k}_{c}@{tag}", SEQ)
        pre = s["gpre", k, c]
        g.aux.append(z3.If(z3.Length(pre) >= 1, pre == concat(unit(head), rest), rest == EMPTY))
        g.possible = z3.Implies(
            red,
            z3.And(
                z3.Length(pre) >= 1,
                head == d.value,
                app.can_receive(a, p, s["gl", k, a], d.value),
            ),
        )
        g.upd[("gpre", k, c)] = z3.If(red, rest, pre)
        g.upd[("gl", k, a)] = z3.If(
            red, app.after_receive(a, p, s["gl", k, a], d.value), s["gl", k, a]
        )
    elif d.action == "ReceiveRedLetter" and d.k == k:
        assert d.chan is not None
        c = d.chan
        g.possible = z3.Implies(red, z3.And(s["gpre", k, c] == EMPTY, s["ghas", k, c]))
        g.upd[("gpre", k, c)] = z3.If(red, s["gpost", k, c], s["gpre", k, c])
        g.upd[("ghas", k, c)] = z3.If(red, z3.BoolVal(False), s["ghas", k, c])
        g.upd[("gpost", k, c)] = z3.If(red, EMPTY, s["gpost", k, c])
    return g


def frame(
    updates: Mapping[Key, Expr], pre: SymState, post: SymState, kinds: tuple[str, ...]
) -> list[Expr]:
    """``post[key] == updates.get(key, pre[key])`` for every key of the given kinds."""
    return [post[key] == updates.get(key, pre[key]) for key in pre.vars if key[0] in kinds]
