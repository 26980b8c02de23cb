"""Replay a counterexample to induction in the concrete interpreter.

z3's answer is trusted only once the plain-Python semantics (:mod:`.concrete`)
agrees with it: the step is a step of the variant from the state before to the
state after, the prophecy and the shadow move as the encoding says, every conjunct
the check assumed holds, and every obligation z3 says is broken is broken.  Any
disagreement is a bug of the kit (:class:`InternalError`, ``RL-INTERNAL-INDUCTION``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import redletter.python_model.symbolic.induction.concrete as cc
from redletter.errors import InternalError
from redletter.python_model.symbolic.induction.apps import ConcreteApp
from redletter.python_model.symbolic.induction.case import Case
from redletter.python_model.symbolic.induction.invariant import CONJUNCTS
from redletter.python_model.symbolic.induction.result import Cti
from redletter.python_model.symbolic.induction.state import EMPTY, SymState
from redletter.python_model.z3env import z3

__all__ = [
    "assignment",
    "replay_state",
    "replay_step",
    "shadow_lemma0_labels",
    "state_labels",
]

_CODE = "RL-INTERNAL-INDUCTION"


def _fail(case: Case, cti: Cti, what: str) -> InternalError:
    return InternalError(
        f"{case.name}: the counterexample to induction z3 found ({cti.layer}, {cti.check}) "
        f"does not replay in the concrete interpreter: {what}",
        code=_CODE,
    )


def _layer_conjuncts(layers: Sequence[str], dropped: Sequence[str]) -> list[str]:
    return [n for n, c in CONJUNCTS.items() if c.layer in layers and n not in dropped]


def _holds(case: Case, cti: Cti, w: cc.World, names: Sequence[str], where: str) -> None:
    values = cc.conjuncts(case, w)
    for label, ok in values.items():
        if label.split("(")[0] in names and not ok:
            raise _fail(case, cti, f"{label} does not hold in the state {where}")


def _broken(case: Case, cti: Cti, values: Mapping[str, bool]) -> None:
    for label in cti.broken:
        key = label.removeprefix("Initiation: ")
        if key not in values:
            raise _fail(case, cti, f"the concrete interpreter does not know {label!r}")
        if values[key]:
            raise _fail(case, cti, f"{label} holds concretely, z3 says it is broken")


def shadow_lemma0_labels(
    case: Case, app: ConcreteApp, r: cc.Reality, st: cc.Step, u: cc.Reality
) -> dict[str, bool]:
    """The spec's ShadowStep(k) for every k, by the labels of the z3 encoding."""
    out: dict[str, bool] = {}
    a = cc.actor(case, st)
    msg = cc.received(r, st)
    for k, kid in enumerate(case.snaps):
        sh0, sh1 = cc.shadow0(case, r, k), cc.shadow0(case, u, k)
        initial = (r.local, tuple(cc.app_values(b) for b in r.buf))
        out[f"ShadowStartsInInitialState({kid})"] = (
            not (not cc.started(r, k) and cc.started(u, k)) or sh1 == initial
        )
        progress = cc.in_progress(case, r, k)
        app_act = st.action in ("SendApp", "ReceiveApp", "InternalEvent")
        white = a not in r.red[k]
        if not app_act:
            out[f"SkipOtherwise({kid})"] = not progress or sh1 == sh0
            continue
        local, bufs = list(sh0[0]), list(sh0[1])
        s = sh0[0][a]
        assert s is not None
        if st.action == "SendApp":
            assert st.c is not None and st.m is not None
            q = case.dst(st.c)
            possible = app.sendable(a, q, s, st.m)
            local[a] = app.after_send(a, q, s, st.m)
            bufs[st.c] = (*bufs[st.c], st.m)
        elif st.action == "InternalEvent":
            assert st.e is not None
            possible = app.events(a, s, st.e)
            local[a] = app.after_event(a, s, st.e)
        else:
            assert st.c is not None and msg is not None
            p = case.src(st.c)
            b = bufs[st.c]
            possible = bool(b) and b[0] == msg.val and app.can_receive(a, p, s, msg.val)
            local[a] = app.after_receive(a, p, s, msg.val)
            bufs[st.c] = b[1:]
        both = progress and white
        out[f"WhiteActionPossible({kid})"] = not both or possible
        out[f"WhiteActionCopied({kid})"] = not both or sh1 == (tuple(local), tuple(bufs))
        out[f"SkipOtherwise({kid})"] = not (progress and not white) or sh1 == sh0
    return out


def _letters(case: Case, r: cc.Reality, u: cc.Reality) -> dict[str, bool]:
    out = {}
    for c in range(len(case.chans)):
        for kid in case.snaps:
            n = sum(1 for m in u.buf[c] if m.kind == "red" and m.snap == kid)
            out[f"AtMostOneRedLetter({kid}, {case.chan_name(c)})"] = n <= 1
    return out


def replay_step(case: Case, app: ConcreteApp, cti: Cti, dropped: Sequence[str]) -> None:
    """Check a counterexample of a step (or backward) check concretely."""
    assert cti.step is not None and cti.after is not None
    w, st, u = cti.before, cti.step, cti.after
    r = w.reality
    nxt = cc.apply(case, app, r, st)
    if nxt is None:
        raise _fail(case, cti, f"{st.text(case)} is not enabled in the state before")
    second = _letters(case, r, nxt)
    if any(label.startswith("AtMostOneRedLetter") for label in cti.broken):
        # the state after holds two red letters of one snapshot in one buffer, which
        # the encoding cannot represent: the concrete successor must hold them
        _broken(
            case,
            replace(cti, broken=tuple(b for b in cti.broken if b.startswith("AtMostOneRedLetter"))),
            second,
        )
        return
    if nxt != u.reality:
        raise _fail(case, cti, f"{st.text(case)} leads to {nxt}, z3 says {u.reality}")
    reality = _layer_conjuncts(("reality",), dropped)
    _holds(case, cti, w, reality, "before")
    values: dict[str, bool] = {}
    if cti.layer == "reality":
        values.update(cc.conjuncts(case, u))
        values.update(cc.well_formed(case, u))
        values.update(second)
        values.update(shadow_lemma0_labels(case, app, r, st, u.reality))
    elif cti.layer == "prophecy":
        _holds(case, cti, u, reality, "after")
        _holds(case, cti, u, _layer_conjuncts(("prophecy",), dropped), "after")
        before, conds = cc.prophecy_step(case, r, st, u.reality, u.prophecy)
        if before != w.prophecy:
            raise _fail(
                case, cti, f"the prophecy before the step is {before}, z3 says {w.prophecy}"
            )
        values.update(cc.conjuncts(case, w))
        values.update(conds)
    else:
        _holds(case, cti, u, reality, "after")
        facts = _layer_conjuncts(("prophecy", "shadow1"), dropped)
        _holds(case, cti, w, facts, "before")
        _holds(case, cti, u, _layer_conjuncts(("prophecy",), dropped), "after")
        before, conds = cc.prophecy_step(case, r, st, u.reality, u.prophecy)
        if before != w.prophecy or not all(conds.values()):
            raise _fail(case, cti, "the prophecy does not move as the step requires")
        for k, kid in enumerate(case.snaps):
            g, ok = cc.ghost_step(case, app, r, st, w.ghost[k], k)
            values[f"RedActionPossible({kid})"] = ok
            if ok and g != u.ghost[k]:
                raise _fail(case, cti, f"the shadow of Lemma 1 moves to {g}, z3 says {u.ghost[k]}")
            for c in range(len(case.chans)):
                values[f"SnapshotPinned({kid}, {case.chan_name(c)})"] = cc.pinned(
                    u.reality, u.ghost[k], k, c
                ) == cc.pinned(r, w.ghost[k], k, c)
        values.update(cc.conjuncts(case, u))
        values.update(cc.well_formed(case, u))
    _broken(case, cti, values)


def state_labels(case: Case, w: cc.World) -> dict[str, bool]:
    """The state obligations, by the labels of the z3 encoding."""
    r = w.reality
    out: dict[str, bool] = {}
    for k, kid in enumerate(case.snaps):
        complete, started = cc.complete(case, r, k), cc.started(r, k)
        sh0 = cc.shadow0(case, r, k)
        g, pr = w.ghost[k], w.prophecy[k]
        for p, name in enumerate(case.procs):
            n = f"({kid}, {name})"
            out["CompleteMeansAllRed" + n] = not complete or p in r.red[k]
            out["Lemma0EndsInSnapshotState" + n] = not complete or (
                p in r.red[k] and sh0[0][p] == r.rec_machine[k][p]
            )
            out["Lemma1StartsInSnapshotState" + n] = started or g.local[p] == pr.sigma[p]
            out["Lemma1EndsInFinalState" + n] = not complete or (
                g.local[p] == r.local[p] and r.rec_machine[k][p] == pr.sigma[p]
            )
        for c in range(len(case.chans)):
            n = f"({kid}, {case.chan_name(c)})"
            pre, _has, post = g.buf[c]
            pin = cc.pinned(r, g, k, c)
            out["Lemma0EndsInSnapshotState" + n] = not complete or sh0[1][c] == r.rec_buf[k][c]
            out["Lemma1StartsInSnapshotState" + n] = started or pre + post == pin
            out["Lemma1EndsInFinalState" + n] = not complete or (
                pre + post == cc.app_values(r.buf[c]) and pin == r.rec_buf[k][c]
            )
    return out


def replay_state(case: Case, app: ConcreteApp, cti: Cti, dropped: Sequence[str]) -> None:
    """Check a counterexample of a state check concretely."""
    w = cti.before
    r = w.reality
    if cti.check == "Initiation":
        assumed: tuple[str, ...] = () if cti.layer == "reality" else ("reality", "prophecy")
    elif cti.layer == "shadow1":
        assumed = ("reality", "prophecy", "shadow1")
    else:
        assumed = ("reality",)
    _holds(case, cti, w, _layer_conjuncts(assumed, dropped), "checked")
    values = dict(cc.conjuncts(case, w))
    values.update(cc.well_formed(case, w))
    values.update(state_labels(case, w))
    if cti.check == "Initiation":
        if r != cc.init_reality(case, r.local):
            raise _fail(case, cti, "the state is not an initial state")
        if cti.layer == "shadow1" and w.ghost != cc.initial_ghost(case, r, w.prophecy):
            raise _fail(case, cti, "the shadow of Lemma 1 is not the one the rules define at Init")
    elif cti.check.startswith("ProphecyAtCompletion"):
        kid = int(cti.check.split("(")[1].rstrip(")"))
        k = case.snaps.index(kid)
        pr = w.prophecy[k]
        if not cc.complete(case, r, k) or any(pr.phi) or any(pr.acc) or any(pr.accl):
            raise _fail(case, cti, "the state is not a complete snapshot with a spent prophecy")
    _broken(case, cti, values)


def _seq_value(xs: Sequence[int]) -> Any:
    if not xs:
        return EMPTY
    units = [z3.Unit(z3.IntVal(x)) for x in xs]
    return units[0] if len(units) == 1 else z3.Concat(*units)


def assignment(case: Case, s: SymState, w: cc.World) -> list[tuple[Any, Any]]:
    """The z3 values of a concrete world, variable by variable (``z3.substitute``
    pairs): the encoding's view of the same state, to compare the two semantics."""
    r = w.reality
    out: list[tuple[Any, Any]] = []
    for p in range(len(case.procs)):
        out.append((s["loc", p], z3.IntVal(r.local[p])))
    for c in range(len(case.chans)):
        out.append((s["app", c], _seq_value(cc.app_values(r.buf[c]))))
        where = {m.snap: n for n, m in enumerate(r.buf[c]) if m.kind == "red"}
        for k, kid in enumerate(case.snaps):
            before, has, after = cc.split(r.buf[c], kid)
            out += [
                (s["has", k, c], z3.BoolVal(has)),
                (s["pre", k, c], _seq_value(before)),
                (s["post", k, c], _seq_value(after)),
            ]
        for j, jid in enumerate(case.snaps):
            for k, kid in enumerate(case.snaps):
                if j < k:
                    ahead = jid in where and kid in where and where[jid] < where[kid]
                    out.append((s["ord", c, j, k], z3.BoolVal(ahead)))
    for k in range(case.snapshots):
        pr, g = w.prophecy[k], w.ghost[k]
        for p in range(len(case.procs)):
            rm = r.rec_machine[k][p]
            out += [
                (s["red", k, p], z3.BoolVal(p in r.red[k])),
                (s["rm", k, p], z3.IntVal(rm if rm is not None else 0)),
                (s["sig", k, p], z3.IntVal(pr.sigma[p])),
                (s["gl", k, p], z3.IntVal(g.local[p])),
            ]
        for c in range(len(case.chans)):
            gpre, ghas, gpost = g.buf[c]
            out += [
                (s["rb", k, c], z3.BoolVal(c in r.red_buf[k])),
                (s["rec", k, c], _seq_value(r.rec_buf[k][c])),
                (s["phi", k, c], _seq_value(pr.phi[c])),
                (s["acc", k, c], _seq_value(pr.acc[c])),
                (s["accl", k, c], z3.BoolVal(pr.accl[c])),
                (s["rst", k, c], _seq_value(pr.rest[c])),
                (s["gpre", k, c], _seq_value(gpre)),
                (s["ghas", k, c], z3.BoolVal(ghas)),
                (s["gpost", k, c], _seq_value(gpost)),
            ]
    return out
