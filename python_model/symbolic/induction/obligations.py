"""The proof obligations of the three layers, as (label, formula) pairs over the state
before, the step and the state after.

Step obligations of a disjunct (what must hold of every step it takes from a state
satisfying the layer's invariant):

* reality: the state after is well formed (``AtMostOneRedLetter`` among it), every
  reality conjunct the step may touch holds after it, and the spec's
  ``ShadowStep(k)`` of Lemma 0 -- ``ShadowStartsInInitialState``,
  ``WhiteActionPossible``, ``WhiteActionCopied``, ``SkipOtherwise``;
* prophecy (backwards): every prophecy conjunct the step may touch held before it,
  and what the step requires of the prophecy after it holds;
* Lemma 1's shadow: every shadow conjunct the step may touch holds after it, the
  shadow's copy of a red machine's action is possible (``RedActionPossible``), and
  each buffer's snapshot stream stays what it is (``SnapshotPinned``).

State obligations: each layer's invariant holds initially, and the ends of the two
shadow networks are the states the lemmas name.
"""

from __future__ import annotations

from typing import Any, TypeAlias

from redletter.python_model.symbolic.induction.apps import AppTheory
from redletter.python_model.symbolic.induction.case import Case
from redletter.python_model.symbolic.induction.state import (
    EMPTY,
    SymState,
    Terms,
    concat,
    unit,
)
from redletter.python_model.symbolic.induction.steps import Disjunct
from redletter.python_model.z3env import z3

__all__ = [
    "init",
    "init_ghost",
    "lemma0_ends",
    "lemma1_ends",
    "lemma1_starts",
    "pinned",
    "shadow_lemma0",
]

Expr: TypeAlias = Any
Labelled: TypeAlias = list[tuple[str, Expr]]


def init(case: Case, s: SymState) -> Expr:
    """Init: "Initially all machines and all buffers are white", every buffer empty,
    nothing recorded (local states are left free: any LocalInit)."""
    cs: list[Expr] = []
    ns = case.snapshots
    for c in range(len(case.chans)):
        cs.append(s["app", c] == EMPTY)
        for k in range(ns):
            cs += [z3.Not(s["has", k, c]), s["pre", k, c] == EMPTY, s["post", k, c] == EMPTY]
    for k in range(ns):
        cs += [z3.Not(s["red", k, p]) for p in range(len(case.procs))]
        cs += [z3.Not(s["rb", k, c]) for c in range(len(case.chans))]
        cs += [s["rec", k, c] == EMPTY for c in range(len(case.chans))]
    return z3.And(cs)


def init_ghost(case: Case, s: SymState) -> Expr:
    """Lemma 1's shadow at Init, as rules (ii) and (iii a) define it from the
    prophecy: machines in their prophesied states; each buffer what its source
    will send before its red letter, without what its destination will receive
    while white, then the red letter -- or nothing, if that receipt includes the
    red letter."""
    cs: list[Expr] = []
    for k in range(case.snapshots):
        cs += [s["gl", k, p] == s["sig", k, p] for p in range(len(case.procs))]
        for c in range(len(case.chans)):
            phi, acc, accl = s["phi", k, c], s["acc", k, c], s["accl", k, c]
            rest = z3.SubSeq(phi, z3.Length(acc), z3.Length(phi) - z3.Length(acc))
            cs += [
                s["ghas", k, c] == z3.Not(accl),
                s["gpre", k, c] == z3.If(accl, EMPTY, rest),
                s["gpost", k, c] == EMPTY,
            ]
    return z3.And(cs)


def _all(xs: list[Expr]) -> Expr:
    return z3.And(xs) if xs else z3.BoolVal(True)


def shadow_lemma0(
    case: Case, app: AppTheory, d: Disjunct, pre: SymState, post: SymState, k: int, tag: str
) -> tuple[list[Expr], Labelled]:
    """The spec's ``ShadowStep(k)`` for one disjunct: (helper definitions, obligations)."""
    t0, t1 = Terms(case, pre), Terms(case, post)
    kid = case.snaps[k]
    np, nc = len(case.procs), len(case.chans)
    loc0 = [t0.shadow0_local(k, p) for p in range(np)]
    loc1 = [t1.shadow0_local(k, p) for p in range(np)]
    buf0 = [t0.shadow0_buf(k, c) for c in range(nc)]
    buf1 = [t1.shadow0_buf(k, c) for c in range(nc)]
    aux: list[Expr] = []
    out: Labelled = []
    start = z3.And(z3.Not(t0.started(k)), t1.started(k))
    initial = _all(
        [loc1[p] == pre["loc", p] for p in range(np)]
        + [buf1[c] == t0.app_all(c) for c in range(nc)]
    )
    out.append((f"ShadowStartsInInitialState({kid})", z3.Implies(start, initial)))

    def same_except(p_: int | None, c_: int | None) -> list[Expr]:
        return [loc1[p] == loc0[p] for p in range(np) if p != p_] + [
            buf1[c] == buf0[c] for c in range(nc) if c != c_
        ]

    progress = t0.in_progress(k)
    if d.app_act is None:
        out.append((f"SkipOtherwise({kid})", z3.Implies(progress, _all(same_except(None, None)))))
        return aux, out
    a, m = d.actor, d.value
    white = z3.Not(pre["red", k, a])
    if d.app_act == "send":
        assert d.chan is not None
        c, q = d.chan, case.dst(d.chan)
        possible = app.sendable(a, q, loc0[a], m)
        copied = _all(
            [
                loc1[a] == app.after_send(a, q, loc0[a], m),
                buf1[c] == concat(buf0[c], unit(m)),
                *same_except(a, c),
            ]
        )
    elif d.app_act == "internal":
        possible = app.events(a, loc0[a], m)
        copied = _all([loc1[a] == app.after_event(a, loc0[a], m), *same_except(a, None)])
    else:
        assert d.chan is not None
        c, p = d.chan, case.src(d.chan)
        head = z3.Int(f"s0hd_{k}_{c}@{tag}")
        rest = z3.Const(f"s0tl_{k}_{c}@{tag}", buf0[c].sort())
        # Head and Tail of the shadow's buffer (Tail(<< >>) taken as << >>, as the
        # concrete interpreter takes it)
        aux.append(
            z3.If(z3.Length(buf0[c]) >= 1, buf0[c] == concat(unit(head), rest), rest == EMPTY)
        )
        possible = z3.And(z3.Length(buf0[c]) >= 1, head == m, app.can_receive(a, p, loc0[a], m))
        copied = _all(
            [loc1[a] == app.after_receive(a, p, loc0[a], m), buf1[c] == rest, *same_except(a, c)]
        )
    both = z3.And(progress, white)
    out.append((f"WhiteActionPossible({kid})", z3.Implies(both, possible)))
    out.append((f"WhiteActionCopied({kid})", z3.Implies(both, copied)))
    out.append(
        (
            f"SkipOtherwise({kid})",
            z3.Implies(z3.And(progress, z3.Not(white)), _all(same_except(None, None))),
        )
    )
    return aux, out


def pinned(case: Case, pre: SymState, post: SymState, k: int, c: int) -> tuple[str, Expr]:
    """``SnapshotPinned``: the stream snapshot k records for c -- what is recorded so
    far, then what Lemma 1's shadow still holds before its red letter -- does not
    change.  It is what the shadow held at the start, and what is recorded at the
    end."""
    t0, t1 = Terms(case, pre), Terms(case, post)
    return (
        f"SnapshotPinned({case.snaps[k]}, {case.chan_name(c)})",
        t1.pinned(k, c) == t0.pinned(k, c),
    )


def complete_means_all_red(case: Case, s: SymState) -> Labelled:
    t = Terms(case, s)
    return [
        (
            f"CompleteMeansAllRed({kid}, {case.procs[p]})",
            z3.Implies(t.complete(k), s["red", k, p]),
        )
        for k, kid in enumerate(case.snaps)
        for p in range(len(case.procs))
    ]


def _per_part(case: Case, name: str, when: Any, k: int, machine: Any, buffer: Any) -> Labelled:
    """One obligation per machine and per buffer: ``when => machine(p)``, ...."""
    kid = case.snaps[k]
    out: Labelled = [
        (f"{name}({kid}, {case.procs[p]})", z3.Implies(when, machine(p)))
        for p in range(len(case.procs))
    ]
    out += [
        (f"{name}({kid}, {case.chan_name(c)})", z3.Implies(when, buffer(c)))
        for c in range(len(case.chans))
    ]
    return out


def lemma0_ends(case: Case, s: SymState) -> Labelled:
    """Complete(k) => Shadow0(k) = Snapshot(k): the shadow of Lemma 0 ends in the
    snapshot state."""
    t = Terms(case, s)
    out: Labelled = []
    for k in range(case.snapshots):
        out += _per_part(
            case,
            "Lemma0EndsInSnapshotState",
            t.complete(k),
            k,
            lambda p, k=k: t.shadow0_local(k, p) == s["rm", k, p],
            lambda c, k=k: t.shadow0_buf(k, c) == s["rec", k, c],
        )
    return out


def lemma1_starts(case: Case, s: SymState) -> Labelled:
    """~Started(k) => the shadow of Lemma 1 is the snapshot state: machines in their
    prophesied (recorded) states, each buffer's messages the pinned stream."""
    t = Terms(case, s)
    out: Labelled = []
    for k in range(case.snapshots):
        out += _per_part(
            case,
            "Lemma1StartsInSnapshotState",
            z3.Not(t.started(k)),
            k,
            lambda p, k=k: s["gl", k, p] == s["sig", k, p],
            lambda c, k=k: t.ghost_app(k, c) == t.pinned(k, c),
        )
    return out


def lemma1_ends(case: Case, s: SymState) -> Labelled:
    """Complete(k) => the shadow of Lemma 1 is reality (the final state) and the
    prophesied snapshot is the recorded one."""
    t = Terms(case, s)
    out: Labelled = []
    for k in range(case.snapshots):
        out += _per_part(
            case,
            "Lemma1EndsInFinalState",
            t.complete(k),
            k,
            lambda p, k=k: z3.And(s["gl", k, p] == s["loc", p], s["sig", k, p] == s["rm", k, p]),
            lambda c, k=k: z3.And(
                t.ghost_app(k, c) == t.app_all(c), t.pinned(k, c) == s["rec", k, c]
            ),
        )
    return out


def prophecy_spent(case: Case, s: SymState, k: int) -> Expr:
    """The prophecy read from the future once snapshot index k is complete: every
    machine has turned red, so nothing is left to send before a red letter or to
    receive while white, and each prophesied state is the recorded one.  The base
    of the backward check: the prophecy conjuncts must hold of it."""
    spent = [s["sig", k, p] == s["rm", k, p] for p in range(len(case.procs))]
    spent += [
        z3.And(s["phi", k, c] == EMPTY, s["acc", k, c] == EMPTY, z3.Not(s["accl", k, c]))
        for c in range(len(case.chans))
    ]
    return z3.And(spent)
