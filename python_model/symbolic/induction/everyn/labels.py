"""Every conjunct and every obligation of the every-N proof, evaluated on the plain
Python semantics (:mod:`.concrete`), by the names the z3 encoding gives them.

A conjunct's value is the list of its instances that fail (empty: it holds), named
in the words of the run (``k2, p1→p3``, ``m4``), so a counterexample can say which
instance broke.  An obligation's value is a Boolean, universally quantified as in
the z3 encoding (``SkipOtherwise`` holds when it holds for every snapshot).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from redletter.python_model.symbolic.induction.apps import ConcreteApp
from redletter.python_model.symbolic.induction.everyn.concrete import (
    Chan,
    Net,
    Prophecy,
    Reality,
    Step,
    ahead,
    complete,
    in_progress,
    letters,
    messages,
    started,
)

__all__ = [
    "Shadow",
    "complete",
    "conjunct_failures",
    "consistency_labels",
    "layer1_step_labels",
    "layer3_step_labels",
    "lemma0_ends",
    "prophecy_failures",
    "reality_failures",
    "shadow0",
    "shadow1",
    "shadow_step",
    "snapshot1",
    "state_labels",
]

Failures = dict[str, list[str]]


def _k(k: int) -> str:
    return f"k{k + 1}"


def _buffers(net: Net, r: Reality) -> Iterator[tuple[int, Chan, tuple[object, ...]]]:
    for i, c in enumerate(net.links):
        yield i, c, r.bufs[i]


def reality_failures(net: Net, r: Reality) -> Failures:
    """The failing instances of every reality conjunct."""
    out: Failures = {
        n: []
        for n in (
            "RedLettersOnlyFromRed",
            "WhiteBufferOfRedSourceHoldsLetter",
            "RedBufferHoldsNoLetter",
            "RedBufferJoinsRedMachines",
            "WhiteMachineRecordsNothing",
            "RecordedWasReceived",
            "ReceivedInSendOrder",
            "RecordedInSendOrder",
        )
    }
    for k in range(net.snapshots):
        red, rb = r.red[k], r.rb[k]
        for i, c, b in _buffers(net, r):
            where = f"{_k(k)}, {net.chan_name(c)}"
            has = letters(b, k) > 0  # type: ignore[arg-type]
            p, q = c
            if has and p not in red:
                out["RedLettersOnlyFromRed"].append(where)
            if p in red and c not in rb and not has:
                out["WhiteBufferOfRedSourceHoldsLetter"].append(where)
            if c in rb and has:
                out["RedBufferHoldsNoLetter"].append(where)
            if c in rb and not (p in red and q in red):
                out["RedBufferJoinsRedMachines"].append(where)
            stream = r.rec[k][i]
            for m in stream:
                if q not in red:
                    out["WhiteMachineRecordsNothing"].append(f"{_k(k)}, m{m}")
                if m not in r.rcvd:
                    out["RecordedWasReceived"].append(f"{_k(k)}, m{m}")
            if [net.rank[m] for m in stream] != sorted(net.rank[m] for m in stream):
                out["RecordedInSendOrder"].append(where)
    for y in r.rcvd:
        for x in range(len(net.msgs)):
            if net.lt(x, y) and x not in r.rcvd:
                out["ReceivedInSendOrder"].append(f"m{x}, m{y}")
    return out


def prophecy_failures(net: Net, r: Reality, pr: Prophecy) -> Failures:
    """The failing instances of every prophecy conjunct (snapshot kappa)."""
    kappa = pr.kappa
    red = r.red[kappa]
    out: Failures = {
        n: []
        for n in (
            "ProphesiedStateRecorded",
            "RedSendsNothingWhite",
            "RedReceivesNothingWhite",
            "RedReceivesNoLetterWhite",
            "WhiteSentIsAheadOfLetter",
            "AcceptedWasSentWhite",
            "RecordedIsProphesied",
            "AcceptedWhiteWasSentWhite",
        )
    }
    for p in range(net.machines):
        if p in red and r.rm[kappa][p] != pr.sig[p]:
            out["ProphesiedStateRecorded"].append(net.name(p))
    for p in range(net.machines):
        for q in range(net.machines):
            if q in red and (p, q) not in r.rb[kappa] and (p, q) in pr.accl:
                out["RedReceivesNoLetterWhite"].append(f"{net.name(p)}→{net.name(q)}")
    inbuf: dict[int, tuple[object, ...]] = {}
    for _i, _c, b in _buffers(net, r):
        for x in messages(b):  # type: ignore[arg-type]
            inbuf[x] = b
    recorded = {m for i in range(len(net.links)) for m in r.rec[kappa][i]}
    for m in range(len(net.msgs)):
        p, q = net.chan(m)
        w = f"m{m}"
        if p in red and m not in r.sent and m in pr.ws:
            out["RedSendsNothingWhite"].append(w)
        if q in red and m not in r.rcvd and m in pr.acc:
            out["RedReceivesNothingWhite"].append(w)
        if m in inbuf:
            b = inbuf[m]
            has = letters(b, kappa) > 0  # type: ignore[arg-type]
            expected = m in ahead(b, kappa) if has else p not in red  # type: ignore[arg-type]
            if (m in pr.ws) != expected:
                out["WhiteSentIsAheadOfLetter"].append(w)
        if m in r.rcvd and m in pr.acc and m not in pr.ws:
            out["AcceptedWasSentWhite"].append(w)
        if (m in recorded) != (m in r.rcvd and m in pr.ws and m not in pr.acc):
            out["RecordedIsProphesied"].append(w)
        if m in pr.acc and m not in pr.ws:
            out["AcceptedWhiteWasSentWhite"].append(w)
    return out


def conjunct_failures(net: Net, r: Reality, pr: Prophecy | None) -> Failures:
    """The failing instances of every conjunct (the prophecy's only with ``pr``)."""
    out = reality_failures(net, r)
    if pr is not None:
        out.update(prophecy_failures(net, r, pr))
    return out


# ------------------------------------------------------------------------- Lemma 0


@dataclass(frozen=True)
class Shadow:
    """A shadow network over message identities, as the encoding keeps it: the
    machines' states, the messages in its buffers (a set), their order (pairs
    ``(x, y)``: x before y in their buffer), and (Lemma 1) the buffers holding its
    red letter."""

    local: tuple[int, ...]
    members: frozenset[int]
    before: frozenset[tuple[int, int]]
    letters: frozenset[Chan] = frozenset()

    def order(self) -> frozenset[tuple[int, int]]:
        """The order among the members only (what the obligations compare)."""
        return frozenset((x, y) for x, y in self.before if x in self.members and y in self.members)

    def same(self, other: Shadow) -> bool:
        return (
            self.local == other.local
            and self.members == other.members
            and self.order() == other.order()
            and self.letters == other.letters
        )

    def buffer(self, net: Net, c: Chan) -> list[int]:
        """The members of buffer c in the shadow's order (for showing it)."""
        ms = [m for m in self.members if net.chan(m) == c]
        return sorted(ms, key=lambda m: sum(1 for x in ms if (x, m) in self.before))


def shadow0(net: Net, r: Reality, k: int) -> Shadow:
    """The spec's Shadow0(k): rule (ii), and rule (iii) -- the recorded stream (in its
    recorded order), then what reality holds before the red letter of k while the
    buffer is white (in send order)."""
    local = tuple(
        rm if p in r.red[k] and (rm := r.rm[k][p]) is not None else r.loc[p]
        for p in range(net.machines)
    )
    members: set[int] = set()
    before: set[tuple[int, int]] = set()
    for i, c in enumerate(net.links):
        rec = r.rec[k][i]
        pending = () if c in r.rb[k] else ahead(r.bufs[i], k)
        members |= set(rec) | set(pending)
        for a, x in enumerate(rec):
            before |= {(x, y) for y in rec[a + 1 :]}
            before |= {(x, y) for y in pending if y not in rec}
        rest = [x for x in pending if x not in rec]
        before |= {(x, y) for x in rest for y in rest if net.rank[x] < net.rank[y]}
    return Shadow(local, frozenset(members), frozenset(before))


def _app_action(st: Step) -> bool:
    return st.action in ("SendApp", "ReceiveApp", "InternalEvent")


def layer1_step_labels(
    net: Net, app: ConcreteApp, r: Reality, st: Step, u: Reality
) -> dict[str, bool]:
    """The reality layer's step obligations (besides the conjuncts after the step):
    ``AtMostOneRedLetter`` and the spec's ShadowStep(k) for every k."""
    out: dict[str, bool] = {
        "AtMostOneRedLetter": all(letters(b, k) <= 1 for b in u.bufs for k in range(net.snapshots)),
        "SentInOrder": all(
            x in u.sent for y in u.sent for x in range(len(net.msgs)) if net.lt(x, y)
        ),
        "ReceivedOnlyOnceSent": u.rcvd <= u.sent,
    }
    each = [shadow_step(net, app, r, st, u, k) for k in range(net.snapshots)]
    for name in ("ShadowStartsInInitialState", "WhiteActionPossible", "WhiteActionCopied"):
        if name != "ShadowStartsInInitialState" and not _app_action(st):
            continue
        out[name] = all(labels[name] for labels in each)
    out["SkipOtherwise"] = all(labels["SkipOtherwise"] for labels in each)
    return out


def shadow_step(
    net: Net, app: ConcreteApp, r: Reality, st: Step, u: Reality, k: int
) -> dict[str, bool]:
    """The spec's ShadowStep(k) for one snapshot k, by the encoding's labels."""
    out = dict.fromkeys(
        ("ShadowStartsInInitialState", "WhiteActionPossible", "WhiteActionCopied", "SkipOtherwise"),
        True,
    )
    sh0, sh1 = shadow0(net, r, k), shadow0(net, u, k)
    if not started(r, k) and started(u, k):
        inbuf = frozenset(m for b in r.bufs for m in messages(b))
        order = frozenset((x, y) for x in inbuf for y in inbuf if net.lt(x, y))
        out["ShadowStartsInInitialState"] = sh1.same(Shadow(r.loc, inbuf, order))
    if not in_progress(net, r, k):
        return out
    if not _app_action(st) or st.actor(net) in r.red[k]:
        out["SkipOtherwise"] = sh1.same(sh0)
        return out
    out["WhiteActionPossible"], out["WhiteActionCopied"] = _act(net, app, st, sh0, sh1)
    return out


def _actor(net: Net, st: Step, g0: Shadow, g1: Shadow) -> tuple[int, bool]:
    """The machine that acts, and whether every other machine is as it was."""
    a = st.actor(net)
    return a, all(g1.local[p] == g0.local[p] for p in range(net.machines) if p != a)


def _event(app: ConcreteApp, a: int, st: Step, g0: Shadow, g1: Shadow) -> tuple[bool, bool]:
    """An internal event: possible in ``g0``, and ``g1``'s state for it its result."""
    assert st.e is not None
    ok = app.events(a, g0.local[a], st.e)
    return ok, g1.local[a] == app.after_event(a, g0.local[a], st.e)


def _act(net: Net, app: ConcreteApp, st: Step, g0: Shadow, g1: Shadow) -> tuple[bool, bool]:
    """ActEnabled of an application action in shadow ``g0``, and whether ``g1`` is
    ActResult -- over identities: a receipt takes the head of its buffer, which must
    be the message received; a send appends a message the buffer does not hold."""
    a, others = _actor(net, st, g0, g1)
    if st.action == "InternalEvent":
        ok, local = _event(app, a, st, g0, g1)
        same = g1.members == g0.members and g1.order() == g0.order()
        return ok, local and others and same
    assert st.m is not None
    m = st.m
    p, q = net.chan(m)
    if st.action == "SendApp":
        ok = app.sendable(p, q, g0.local[p], net.val(m))
        local = g1.local[p] == app.after_send(p, q, g0.local[p], net.val(m))
        kept = frozenset((x, y) for x, y in g1.before if x in g0.members and y in g0.members)
        last = all(
            (x, m) in g1.before and (m, x) not in g1.before
            for x in g0.members
            if net.chan(x) == (p, q)
        )
        members = m not in g0.members and g1.members == g0.members | {m}
        return ok, local and others and members and kept == g0.order() and last
    head = m in g0.members and all(
        (m, x) in g0.before for x in g0.members if x != m and net.chan(x) == (p, q)
    )
    ok = head and app.can_receive(q, p, g0.local[q], net.val(m))
    local = g1.local[q] == app.after_receive(q, p, g0.local[q], net.val(m))
    members = g1.members == g0.members - {m}
    kept = frozenset((x, y) for x, y in g0.before if x in g1.members and y in g1.members)
    return ok, local and others and members and g1.order() == kept


# ------------------------------------------------------------------------- the prophecy


def consistency_labels(net: Net, r: Reality, st: Step, pr: Prophecy) -> dict[str, bool]:
    """What the prophecy says of the step (see :func:`..steps.consistent`)."""
    kappa = pr.kappa
    a = st.actor(net)
    white = a not in r.red[kappa]
    out: dict[str, bool] = {}
    if st.action == "SendApp":
        out["SentWhiteIsProphesied"] = (st.m in pr.ws) == white
    if st.action == "ReceiveApp":
        out["ReceivedWhiteIsProphesied"] = (st.m in pr.acc) == white
    if st.action in ("ReceiveRedLetter", "StartSnapshot"):
        turning = st.k == kappa and white
        frm = st.p if st.action == "ReceiveRedLetter" else None
        out["TurnsRedInProphesiedState"] = not turning or pr.sig[a] == r.loc[a]
        out["SendsNothingMoreWhite"] = not turning or not any(
            net.chan(m)[0] == a and m not in r.sent and m in pr.ws for m in range(len(net.msgs))
        )
        out["ReceivesNothingMoreWhite"] = not turning or not any(
            net.chan(m)[1] == a and m not in r.rcvd and m in pr.acc for m in range(len(net.msgs))
        )
        out["ReceivesNoLetterMoreWhite"] = not turning or not any(
            (b, a) in pr.accl for b in range(net.machines) if b != frm
        )
        if frm is not None:
            out["LetterTurnsRedIsProphesied"] = not turning or (frm, a) in pr.accl
    return out


# ------------------------------------------------------------------------- Lemma 1


def shadow1(net: Net, r: Reality, pr: Prophecy) -> Shadow:
    """Lemma 1's shadow of kappa: rule (ii) (the prophesied state while white), and
    rule (iii) in one formula -- the messages sent or to be sent while white, or sent,
    not received and not to be received while white, in send order; its red letter,
    unless received or to be received by a white machine, after the messages sent
    while white and before the others."""
    kappa = pr.kappa
    local = tuple(r.loc[p] if p in r.red[kappa] else pr.sig[p] for p in range(net.machines))
    members = frozenset(
        m
        for m in range(len(net.msgs))
        if (m in pr.ws or m in r.sent) and m not in r.rcvd and m not in pr.acc
    )
    lets = frozenset(c for c in net.links if c not in r.rb[kappa] and c not in pr.accl)
    return Shadow(local, members, _send_order(net, members), lets)


def _send_order(net: Net, members: frozenset[int]) -> frozenset[tuple[int, int]]:
    return frozenset((x, y) for x in members for y in members if net.lt(x, y))


def snapshot1(net: Net, pr: Prophecy) -> Shadow:
    """The prophesied snapshot state of kappa: the states the machines will record; in
    each buffer the messages sent while white and not accepted while white, then the
    red letter, unless a white machine receives it."""
    members = frozenset(m for m in range(len(net.msgs)) if m in pr.ws and m not in pr.acc)
    lets = frozenset(c for c in net.links if c not in pr.accl)
    return Shadow(pr.sig, members, _send_order(net, members), lets)


def _act1(
    net: Net, app: ConcreteApp, st: Step, g0: Shadow, g1: Shadow, pr: Prophecy
) -> tuple[bool, bool]:
    """The action of a red machine on Lemma 1's shadow (with its red letters)."""
    a, others = _actor(net, st, g0, g1)
    if st.action == "InternalEvent":
        ok, good = _event(app, a, st, g0, g1)
        return ok, good and others and g1.members == g0.members and g1.letters == g0.letters
    if st.action == "ReceiveRedLetter":
        assert st.p is not None and st.q is not None
        c = (st.p, st.q)
        ok = c in g0.letters and not any(m in pr.ws for m in g0.members if net.chan(m) == c)
        good = g1.local == g0.local and g1.members == g0.members
        return ok, good and g1.letters == g0.letters - {c}
    assert st.m is not None
    m = st.m
    p, q = net.chan(m)
    if st.action == "SendApp":
        ok = app.sendable(p, q, g0.local[p], net.val(m))
        good = g1.local[p] == app.after_send(p, q, g0.local[p], net.val(m))
        last = all(net.lt(x, m) for x in g0.members if net.chan(x) == (p, q))
        behind = (p, q) not in g0.letters or m not in pr.ws
        members = m not in g0.members and g1.members == g0.members | {m}
        return ok, good and others and members and last and behind and g1.letters == g0.letters
    head = (
        m in g0.members
        and all(net.lt(m, x) for x in g0.members if x != m and net.chan(x) == (p, q))
        and ((p, q) not in g0.letters or m in pr.ws)
    )
    ok = head and app.can_receive(q, p, g0.local[q], net.val(m))
    good = g1.local[q] == app.after_receive(q, p, g0.local[q], net.val(m))
    members = g1.members == g0.members - {m}
    return ok, good and others and members and g1.letters == g0.letters


def layer3_step_labels(
    net: Net, app: ConcreteApp, r: Reality, st: Step, u: Reality, pr: Prophecy
) -> dict[str, bool]:
    """Lemma 1's shadow of kappa follows the step."""
    kappa = pr.kappa
    a = st.actor(net)
    g0, g1 = shadow1(net, r, pr), shadow1(net, u, pr)
    acts = _app_action(st) or st.action == "ReceiveRedLetter"
    if not acts:
        return {"SkipOtherwise": g1.same(g0)}
    copies = a in r.red[kappa] and (st.action != "ReceiveRedLetter" or st.k == kappa)
    out = {"RedActionPossible": True, "RedActionCopied": True, "SkipOtherwise": True}
    if copies:
        ok, good = _act1(net, app, st, g0, g1, pr)
        out["RedActionPossible"] = ok
        out["RedActionCopied"] = good
    else:
        out["SkipOtherwise"] = g1.same(g0)
    return out


# ------------------------------------------------------------------------- states


def lemma0_ends(net: Net, r: Reality, k: int) -> bool:
    """Lemma 0's shadow of k is the snapshot state (what ``Complete(k)`` asks)."""
    recorded = frozenset(m for stream in r.rec[k] for m in stream)
    order = frozenset(
        (x, y) for stream in r.rec[k] for a, x in enumerate(stream) for y in stream[a + 1 :]
    )
    rm = tuple(x if x is not None else -1 for x in r.rm[k])
    return shadow0(net, r, k).same(Shadow(rm, recorded, order))


def state_labels(net: Net, r: Reality, pr: Prophecy | None) -> dict[str, bool]:
    """The state obligations (Lemma 1's only with ``pr``)."""
    out = {
        "Lemma0EndsInSnapshotState": all(
            lemma0_ends(net, r, k) for k in range(net.snapshots) if complete(net, r, k)
        )
    }
    if pr is None:
        return out
    kappa = pr.kappa
    done = complete(net, r, kappa)
    g = shadow1(net, r, pr)
    out["Lemma1StartsInSnapshotState"] = started(r, kappa) or g.same(snapshot1(net, pr))
    inbuf = frozenset(m for b in r.bufs for m in messages(b))
    final = Shadow(r.loc, inbuf, _send_order(net, inbuf))
    out["Lemma1EndsInFinalState"] = not done or (
        g.same(final) and not any(letters(b, kappa) for b in r.bufs)
    )
    snap = snapshot1(net, pr)
    streams = tuple(tuple(m for m in net.on(c) if m in snap.members) for c in net.links)
    out["Lemma1SnapshotIsRecorded"] = not done or (
        r.rm[kappa] == pr.sig and r.rec[kappa] == streams
    )
    out["AcceptedWhiteWasSentWhite"] = not done or all(m in pr.ws for m in pr.acc)
    return out
