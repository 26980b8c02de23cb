"""Replay an every-N counterexample to induction in two interpreters.

z3's answer is trusted only once the plain semantics agree with it, on the finite
network z3 chose:

* the identity-level interpreter (:mod:`.concrete`, :mod:`.labels`): the step is a
  step of the variant from the state before to the state after; every conjunct and
  every prophecy condition the question assumed holds; and the obligations broken
  are exactly those z3 says are broken;
* the fixed-topology proof's interpreter
  (:mod:`redletter.python_model.symbolic.induction.concrete`), with the identities
  forgotten (:func:`forget`): the same step, from the same state, to the same state.

Any disagreement is a bug of the kit (``RL-INTERNAL-INDUCTION``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import redletter.python_model.symbolic.induction.concrete as cc
import redletter.python_model.symbolic.induction.everyn.labels as lb
import redletter.python_model.symbolic.induction.everyn.liveness as lv
from redletter.errors import InternalError
from redletter.python_model.symbolic.concrete import Msg, app_msg, red_letter
from redletter.python_model.symbolic.induction.apps import ConcreteApp
from redletter.python_model.symbolic.induction.case import Case
from redletter.python_model.symbolic.induction.everyn.concrete import (
    Net,
    Prophecy,
    Reality,
    Step,
    apply,
    complete,
    init_reality,
    letters,
)
from redletter.python_model.symbolic.induction.everyn.invariant import CONJUNCTS
from redletter.python_model.symbolic.induction.everyn.result import EnCti

__all__ = ["all_labels", "forget", "forget_app", "forget_step", "replay"]

_CODE = "RL-INTERNAL-INDUCTION"

#: the representation's constraints (:func:`..terms.well_formed`): a state of
#: sequences has them by construction, but for the two counted here
WELL_FORMED = (
    "SentInOrder",
    "ReceivedOnlyOnceSent",
    "NoLetterAllAhead",
    "LetterIsACut",
    "LettersOrdered",
    "LetterOrderTransitive",
    "LetterOrderMatchesCuts",
    "RecordOrderIrreflexive",
    "RecordOrderTotal",
    "RecordOrderTransitive",
    "LettersOnBuffers",
    "RedBuffersOnBuffers",
)


def _fail(cti: EnCti, what: str) -> InternalError:
    return InternalError(
        f"the every-N counterexample to induction z3 found ({cti.layer}, {cti.check}, on "
        f"{cti.size()}) does not replay in the concrete interpreter: {what}",
        code=_CODE,
    )


def _names(layer: str, dropped: Sequence[str], *, forward: bool = False) -> list[str]:
    return [
        n
        for n, c in CONJUNCTS.items()
        if c.layer == layer and n not in dropped and not (forward and c.at_completion)
    ]


def _holds(
    cti: EnCti, net: Net, r: Reality, pr: Prophecy | None, names: Sequence[str], where: str
) -> None:
    fails = lb.conjunct_failures(net, r, pr)
    for n in names:
        if fails[n]:
            raise _fail(cti, f"{n} does not hold in the state {where} ({', '.join(fails[n])})")


def all_labels(
    net: Net,
    app: ConcreteApp,
    layer: str,
    r: Reality,
    st: Step,
    u: Reality,
    pr: Prophecy | None,
    dropped: Sequence[str] = (),
) -> dict[str, bool]:
    """Every step obligation of ``layer`` for the step ``r --st--> u``, by the z3
    encoding's labels."""
    out: dict[str, bool] = {}
    if layer == "reality":
        out.update({n: True for n in WELL_FORMED})
        fails = lb.reality_failures(net, u)
        out.update({n: not fails[n] for n in _names("reality", dropped)})
        out.update(lb.layer1_step_labels(net, app, r, st, u))
        if st.action not in ("ReceiveRedLetter", "StartSnapshot"):
            out.pop("AtMostOneRedLetter", None)
    elif layer == "prophecy":
        assert pr is not None
        fails = lb.prophecy_failures(net, u, pr)
        out.update({n: not fails[n] for n in _names("prophecy", dropped, forward=True)})
    else:
        assert pr is not None
        out.update(lb.layer3_step_labels(net, app, r, st, u, pr))
    return out


def replay(cti: EnCti, app: ConcreteApp, variant: str, dropped: Sequence[str]) -> None:
    """Check a counterexample concretely (:class:`InternalError` if it does not
    replay)."""
    net, r, pr = cti.net, cti.before, cti.prophecy
    reality = _names("reality", dropped)
    forward = _names("prophecy", dropped, forward=True)
    everything = _names("prophecy", dropped)
    if cti.step is None:
        if cti.layer == "liveness":
            _replay_liveness(cti, app, variant, reality)
            return
        _replay_state(cti, reality, forward, everything)
        return
    st, u = cti.step, cti.after
    assert u is not None
    if cti.layer == "liveness":
        _replay_liveness(cti, app, variant, reality)
        return
    nxt = apply(net, app, variant, r, st)
    if nxt is None:
        raise _fail(cti, f"{st.text(net)} is not enabled in the state before")
    if "AtMostOneRedLetter" in cti.broken:
        _second_letter(cti, nxt)
        return
    if nxt != u:
        raise _fail(cti, f"{st.text(net)} leads to {nxt}, z3 says {u}")
    _same_as_fixed(cti, app, variant)
    _holds(cti, net, r, pr, reality, "before")
    if cti.layer != "reality":
        assert pr is not None
        _holds(cti, net, u, None, reality, "after")
        conds = lb.consistency_labels(net, r, st, pr)
        bad = [n for n, ok in conds.items() if not ok]
        if bad:
            raise _fail(cti, f"the step is not one the prophecy allows: {', '.join(bad)}")
        _holds(cti, net, r, pr, forward if cti.layer == "prophecy" else everything, "before")
        if cti.layer == "shadow1":
            _holds(cti, net, u, pr, everything, "after")
    values = all_labels(net, app, cti.layer, r, st, u, pr, dropped)
    _agree(cti, values)


def _replay_liveness(cti: EnCti, app: ConcreteApp, variant: str, reality: list[str]) -> None:
    net, r, h = cti.net, cti.before, cti.head
    _holds(cti, net, r, None, reality, "before")
    if cti.step is None:
        if cti.check == "HeadEnabled":
            assert h is not None
            if not h.letter and not app.can_receive(h.b, h.a, r.loc[h.b], net.val(h.m)):
                raise _fail(cti, "the application cannot receive the head, which the check assumes")
            _agree(cti, lv.enabled_label(net, app, variant, r, h))
            return
        assert cti.snapshot is not None
        if not lv.cut_holds(net, r, cti.snapshot):
            raise _fail(cti, "no edge leaves the red machines, which the check assumes")
        _agree(cti, lv.in_flight_label(net, r, cti.snapshot))
        return
    assert cti.after is not None and h is not None
    nxt = apply(net, app, variant, r, cti.step)
    if nxt is None:
        raise _fail(cti, f"{cti.step.text(net)} is not enabled in the state before")
    if "AtMostOneRedLetter" in cti.broken:
        _second_letter(cti, nxt)
        return
    if nxt != cti.after:
        raise _fail(cti, f"{cti.step.text(net)} leads to {nxt}, z3 says {cti.after}")
    _holds(cti, net, cti.after, None, reality, "after")
    values = lv.step_labels(net, app, variant, r, cti.step, cti.after, h)
    if cti.step.action in ("ReceiveRedLetter", "StartSnapshot"):
        values["AtMostOneRedLetter"] = True
    _agree(cti, values)


def _second_letter(cti: EnCti, nxt: Reality) -> None:
    """Two red letters of one snapshot in one buffer: the encoding cannot hold the
    state after, the interpreter can."""
    if not any(letters(b, k) > 1 for b in nxt.bufs for k in range(cti.net.snapshots)):
        raise _fail(cti, "z3 says a buffer gets a second red letter, the interpreter does not")


def _agree(cti: EnCti, values: dict[str, bool]) -> None:
    broken = {label.removeprefix("Initiation: ") for label in cti.broken}
    unknown = broken - set(values)
    if unknown:
        raise _fail(cti, f"the interpreter does not know {sorted(unknown)}")
    concrete = {n for n, ok in values.items() if not ok}
    if concrete != broken:
        raise _fail(
            cti,
            f"z3 says {sorted(broken)} break, the interpreter says {sorted(concrete)}",
        )


def _replay_state(
    cti: EnCti, reality: list[str], forward: list[str], everything: list[str]
) -> None:
    net, r, pr = cti.net, cti.before, cti.prophecy
    values: dict[str, bool] = {}
    if cti.kind == "initiation":
        if r != init_reality(net, r.loc):
            raise _fail(cti, "the state is not an initial state")
        fails = lb.conjunct_failures(net, r, pr)
        names = reality if cti.layer == "reality" else forward
        values = {n: not fails[n] for n in names}
    elif cti.kind == "completion":
        assert pr is not None
        _holds(cti, net, r, pr, reality, "checked")
        _holds(cti, net, r, pr, forward, "checked")
        if not complete(net, r, pr.kappa):
            raise _fail(cti, "the snapshot is not complete in the state")
        fails = lb.conjunct_failures(net, r, pr)
        values = {n: not fails[n] for n in everything if n not in forward}
    else:
        _holds(cti, net, r, pr, reality, "checked")
        if cti.layer == "shadow1":
            assert pr is not None
            _holds(cti, net, r, pr, everything, "checked")
        labels = lb.state_labels(net, r, pr)
        if cti.check == "Lemma0EndsInSnapshotState":
            values = {"Lemma0EndsInSnapshotState": labels["Lemma0EndsInSnapshotState"]}
        elif cti.check == "Lemma1StartsInSnapshotState":
            values = {"Lemma1StartsInSnapshotState": labels["Lemma1StartsInSnapshotState"]}
        else:
            values = {n: labels[n] for n in ("Lemma1EndsInFinalState", "Lemma1SnapshotIsRecorded")}
    _agree(cti, values)


# ------------------------------------------------------------------------- forgetting identities


def forget(net: Net, variant: str, r: Reality) -> tuple[Case, cc.Reality]:
    """The fixed-topology interpreter's view of ``r``: buffers of values and red
    letters, recorded streams of values, buffers numbered as its case numbers them."""
    case = fixed_case(net, variant)
    index = {c: case.chans.index((net.name(c[0]), net.name(c[1]))) for c in net.links}
    order = sorted(net.links, key=index.__getitem__)

    def buf(c: tuple[int, int]) -> tuple[Msg, ...]:
        b = r.bufs[net.chan_index[c]]
        return tuple(app_msg(net.val(x)) if kind == "m" else red_letter(x + 1) for kind, x in b)

    return case, cc.Reality(
        local=r.loc,
        buf=tuple(buf(c) for c in order),
        red=r.red,
        red_buf=tuple(frozenset(index[c] for c in rb) for rb in r.rb),
        rec_machine=r.rm,
        rec_buf=tuple(
            tuple(tuple(net.val(x) for x in r.rec[k][net.chan_index[c]]) for c in order)
            for k in range(net.snapshots)
        ),
    )


def fixed_case(net: Net, variant: str) -> Case:
    edges = tuple((net.name(a), net.name(b)) for a, b in net.links)
    return Case.digraph(net.machines, edges, net.snapshots, variant)


def forget_step(net: Net, case: Case, r: Reality, st: Step) -> cc.Step:
    """The fixed-topology interpreter's step (positions counted with red letters)."""

    def chan(c: tuple[int, int]) -> int:
        return case.chans.index((net.name(c[0]), net.name(c[1])))

    if st.action == "SendApp":
        assert st.m is not None
        return cc.Step("SendApp", c=chan(net.chan(st.m)), m=net.val(st.m))
    if st.action == "InternalEvent":
        return cc.Step("InternalEvent", p=st.p, e=st.e)
    if st.action == "StartSnapshot":
        assert st.k is not None
        return cc.Step("StartSnapshot", p=st.p, k=st.k + 1)
    if st.action == "ReceiveApp":
        assert st.m is not None
        c = net.chan(st.m)
        b = r.bufs[net.chan_index[c]]
        return cc.Step("ReceiveApp", c=chan(c), i=b.index(("m", st.m)) + 1, m=net.val(st.m))
    assert st.p is not None and st.q is not None and st.k is not None
    c = (st.p, st.q)
    b = r.bufs[net.chan_index[c]]
    return cc.Step("ReceiveRedLetter", c=chan(c), i=b.index(("r", st.k)) + 1, k=st.k + 1)


def forget_app(app: ConcreteApp) -> ConcreteApp:
    """The same operators for the fixed interpreter, which names a snapshot by its id
    (1, 2, ...) where this one numbers it from 0."""
    return replace(app, may_start=lambda p, kid, s: app.may_start(p, kid - 1, s))


def _same_as_fixed(cti: EnCti, app: ConcreteApp, variant: str) -> None:
    assert cti.step is not None and cti.after is not None
    net = cti.net
    case, before = forget(net, variant, cti.before)
    _case, after = forget(net, variant, cti.after)
    step = forget_step(net, case, cti.before, cti.step)
    nxt = cc.apply(case, forget_app(app), before, step)
    if nxt != after:
        raise _fail(
            cti,
            f"the fixed-topology interpreter takes {step.text(case)} to {nxt}, the every-N one "
            f"to {after}",
        )
