"""The induction's states as plain Python values, and everything the z3 encoding
states, written again over them: the step of each variant, the prophecy's relation,
Lemma 1's shadow step, every conjunct and every obligation.

It is written independently of the z3 encoding (buffers here are whole message
lists, there segments between red letters), so that every counterexample to
induction z3 returns is replayed here -- the step taken, the conjuncts that hold
before, the obligation that fails -- and a disagreement is a bug of one of the two
(:class:`~redletter.errors.InternalError`).  The tests also run it along real runs,
with the prophecy read from each run's future (:func:`prophecy_of_run`), and check
that every conjunct holds at every moment.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace

from redletter.python_model.symbolic.concrete import Msg, app_msg, red_letter
from redletter.python_model.symbolic.induction.apps import ConcreteApp
from redletter.python_model.symbolic.induction.case import Case

__all__ = [
    "Ghost",
    "Prophecy",
    "Reality",
    "Step",
    "World",
    "apply",
    "conjuncts",
    "enabled_steps",
    "ghost_of_run",
    "init_reality",
    "prophecy_of_run",
]

Seq = tuple[int, ...]
GBuf = tuple[Seq, bool, Seq]
"""A buffer of Lemma 1's shadow network of snapshot k: the messages before its red
letter of k, whether it holds that letter, the messages after it."""


@dataclass(frozen=True)
class Reality:
    """The spec's variables (without the history).  Snapshots are indices; a red
    machine's recorded state is ``rec_machine[k][p]`` (``None`` while white)."""

    local: tuple[int, ...]
    buf: tuple[tuple[Msg, ...], ...]
    red: tuple[frozenset[int], ...]
    red_buf: tuple[frozenset[int], ...]
    rec_machine: tuple[tuple[int | None, ...], ...]
    rec_buf: tuple[tuple[Seq, ...], ...]


@dataclass(frozen=True)
class Prophecy:
    """The prophecy of one snapshot (see :mod:`.state`)."""

    sigma: tuple[int, ...]
    phi: tuple[Seq, ...]
    acc: tuple[Seq, ...]
    accl: tuple[bool, ...]
    rest: tuple[Seq, ...]


@dataclass(frozen=True)
class Ghost:
    """Lemma 1's shadow network of one snapshot."""

    local: tuple[int, ...]
    buf: tuple[GBuf, ...]


@dataclass(frozen=True)
class World:
    """Reality with the prophecy and the shadow of every snapshot."""

    reality: Reality
    prophecy: tuple[Prophecy, ...]
    ghost: tuple[Ghost, ...]


@dataclass(frozen=True)
class Step:
    """One step: the action, and its parameters (buffer and machine indices, the
    message or event, the 1-based position received, the snapshot id)."""

    action: str
    c: int | None = None
    p: int | None = None
    m: int | None = None
    e: int | None = None
    i: int | None = None
    k: int | None = None  #: snapshot id (StartSnapshot)

    def text(self, case: Case) -> str:
        if self.action == "SendApp":
            return f"SendApp({case.chan_name(self.c or 0)}, m = {self.m})"
        if self.action == "InternalEvent":
            return f"InternalEvent({case.procs[self.p or 0]}, e = {self.e})"
        if self.action == "ReceiveApp":
            return f"ReceiveApp({case.chan_name(self.c or 0)}, i = {self.i}) of {self.m}"
        if self.action == "ReceiveRedLetter":
            return (
                f"ReceiveRedLetter({case.chan_name(self.c or 0)}, i = {self.i}) "
                f"of red letter {self.k}"
            )
        return f"StartSnapshot({case.procs[self.p or 0]}, {self.k})"


def init_reality(case: Case, local: Sequence[int]) -> Reality:
    ns, nc, np = case.snapshots, len(case.chans), len(case.procs)
    return Reality(
        tuple(local),
        tuple(() for _ in range(nc)),
        tuple(frozenset() for _ in range(ns)),
        tuple(frozenset() for _ in range(ns)),
        tuple(tuple(None for _ in range(np)) for _ in range(ns)),
        tuple(tuple(() for _ in range(nc)) for _ in range(ns)),
    )


# ------------------------------------------------------------------------- the step


def _recording(case: Case, r: Reality, k: int, q: int, c: int) -> bool:
    if case.variant == "no-channel-recording":
        return False
    if case.variant == "stop-at-first-red-letter":
        return q in r.red[k] and not any(x in r.red_buf[k] for x in case.ins(q))
    return q in r.red[k] and c not in r.red_buf[k]


def _enqueue(case: Case, b: tuple[Msg, ...], m: int) -> tuple[Msg, ...]:
    if case.variant == "late-red-letter" and b and b[-1].kind == "red":
        return (*b[:-1], app_msg(m), b[-1])
    return (*b, app_msg(m))


def _turn_red(
    case: Case, r: Reality, p: int, k: int, buf: list[tuple[Msg, ...]], *, by_letter: bool
) -> Reality:
    kid = case.snaps[k]
    # StarterOnly(p, k, from) == IF from = {} THEN Out(p) ELSE {}
    sends = not (case.variant == "never-forward" and by_letter)
    if sends:
        for c in case.outs(p):
            buf[c] = (*buf[c], red_letter(kid))
    red = list(r.red)
    red[k] = r.red[k] | {p}
    rm = list(r.rec_machine)
    row = list(rm[k])
    row[p] = r.local[p]
    rm[k] = tuple(row)
    return replace(r, red=tuple(red), rec_machine=tuple(rm), buf=tuple(buf))


def apply(case: Case, app: ConcreteApp, r: Reality, st: Step) -> Reality | None:
    """The state after step ``st`` (the variant's Next), or ``None`` if disabled."""
    nonfifo = case.variant == "non-fifo"
    if st.action == "SendApp":
        assert st.c is not None and st.m is not None
        p, q = case.src(st.c), case.dst(st.c)
        if not app.sendable(p, q, r.local[p], st.m):
            return None
        local = list(r.local)
        local[p] = app.after_send(p, q, r.local[p], st.m)
        buf = list(r.buf)
        buf[st.c] = _enqueue(case, r.buf[st.c], st.m)
        return replace(r, local=tuple(local), buf=tuple(buf))
    if st.action == "InternalEvent":
        assert st.p is not None and st.e is not None
        if not app.events(st.p, r.local[st.p], st.e):
            return None
        local = list(r.local)
        local[st.p] = app.after_event(st.p, r.local[st.p], st.e)
        return replace(r, local=tuple(local))
    if st.action in ("ReceiveApp", "ReceiveRedLetter"):
        assert st.c is not None and st.i is not None
        c, b = st.c, r.buf[st.c]
        if not 1 <= st.i <= len(b) or (st.i != 1 and not nonfifo):
            return None
        msg = b[st.i - 1]
        rest = list(r.buf)
        rest[c] = b[: st.i - 1] + b[st.i :]
        p, q = case.src(c), case.dst(c)
        if st.action == "ReceiveApp":
            if msg.kind != "app" or not app.can_receive(q, p, r.local[q], msg.val):
                return None
            recb = list(r.rec_buf)
            recorded = False
            for k in range(case.snapshots):
                if _recording(case, r, k, q, c):
                    recorded = True
                    row = list(recb[k])
                    row[c] = (
                        (msg.val, *row[c])
                        if case.variant == "newest-first-recording"
                        else (*row[c], msg.val)
                    )
                    recb[k] = tuple(row)
            local = list(r.local)
            if not (case.variant == "swallowing-recording" and recorded):
                local[q] = app.after_receive(q, p, r.local[q], msg.val)
            return replace(r, local=tuple(local), buf=tuple(rest), rec_buf=tuple(recb))
        if msg.kind != "red":
            return None
        k = case.snaps.index(msg.snap)
        turns = {k}
        if case.variant == "mixed-snapshots":
            turns |= {j for j in range(case.snapshots) if q in r.red[j]}
        red_buf = tuple(
            r.red_buf[j] | {c} if j in turns else r.red_buf[j] for j in range(case.snapshots)
        )
        if q in r.red[k]:
            out = replace(r, buf=tuple(rest))
            if case.variant == "resent-red-letters":
                more = list(out.buf)
                for x in case.outs(q):
                    more[x] = (*more[x], red_letter(msg.snap))
                out = replace(out, buf=tuple(more))
        else:
            out = _turn_red(case, r, q, k, rest, by_letter=True)
        return replace(out, red_buf=red_buf)
    if st.action == "StartSnapshot":
        assert st.p is not None and st.k is not None
        k = case.snaps.index(st.k)
        if st.p in r.red[k] or not app.may_start(st.p, st.k, r.local[st.p]):
            return None
        return _turn_red(case, r, st.p, k, list(r.buf), by_letter=False)
    return None


def enabled_steps(
    case: Case, app: ConcreteApp, r: Reality, sends: Mapping[int, Sequence[int]]
) -> Iterator[tuple[Step, Reality]]:
    """Every enabled step, sending only the messages ``sends[c]`` offers (the
    application's values are unbounded; a run chooses among a few)."""
    for c, values in sends.items():
        for m in values:
            st = Step("SendApp", c=c, m=m)
            nxt = apply(case, app, r, st)
            if nxt is not None:
                yield st, nxt
    for c, b in enumerate(r.buf):
        last = len(b) if case.variant == "non-fifo" else min(1, len(b))
        positions = range(1, last + 1)
        for i in positions:
            msg = b[i - 1]
            action = "ReceiveApp" if msg.kind == "app" else "ReceiveRedLetter"
            st = Step(
                action,
                c=c,
                i=i,
                m=msg.val if msg.kind == "app" else None,
                k=msg.snap if msg.kind == "red" else None,
            )
            nxt = apply(case, app, r, st)
            if nxt is not None:
                yield st, nxt
    for p in range(len(case.procs)):
        for kid in case.snaps:
            st = Step("StartSnapshot", p=p, k=kid)
            nxt = apply(case, app, r, st)
            if nxt is not None:
                yield st, nxt


def actor(case: Case, st: Step) -> int:
    """The machine that takes the step."""
    if st.action == "SendApp":
        assert st.c is not None
        return case.src(st.c)
    if st.action in ("ReceiveApp", "ReceiveRedLetter"):
        assert st.c is not None
        return case.dst(st.c)
    assert st.p is not None
    return st.p


def received(r: Reality, st: Step) -> Msg | None:
    """The message a receipt takes (from the state before it)."""
    if st.action not in ("ReceiveApp", "ReceiveRedLetter") or st.c is None or st.i is None:
        return None
    b = r.buf[st.c]
    return b[st.i - 1] if 1 <= st.i <= len(b) else None


# ------------------------------------------------------------------------- snapshot k's view


def app_values(b: Sequence[Msg]) -> Seq:
    return tuple(m.val for m in b if m.kind == "app")


def split(b: Sequence[Msg], kid: int) -> tuple[Seq, bool, Seq]:
    """(application messages before the red letter of ``kid``, whether there is one,
    those after it): the buffer as snapshot ``kid`` sees it."""
    for n, m in enumerate(b):
        if m.kind == "red" and m.snap == kid:
            return app_values(b[:n]), True, app_values(b[n + 1 :])
    return app_values(b), False, ()


def started(r: Reality, k: int) -> bool:
    return bool(r.red[k])


def complete(case: Case, r: Reality, k: int) -> bool:
    return len(r.red_buf[k]) == len(case.chans)


def in_progress(case: Case, r: Reality, k: int) -> bool:
    return started(r, k) and not complete(case, r, k)


def shadow0(case: Case, r: Reality, k: int) -> tuple[tuple[int | None, ...], tuple[Seq, ...]]:
    """The spec's Shadow0(k)."""
    kid = case.snaps[k]
    local = tuple(
        r.rec_machine[k][p] if p in r.red[k] else r.local[p] for p in range(len(case.procs))
    )
    buf = tuple(
        r.rec_buf[k][c] + (() if c in r.red_buf[k] else split(r.buf[c], kid)[0])
        for c in range(len(case.chans))
    )
    return local, buf


def pinned(r: Reality, g: Ghost, k: int, c: int) -> Seq:
    pre, has, _post = g.buf[c]
    return r.rec_buf[k][c] + (pre if has else ())


# ------------------------------------------------------------------------- the conjuncts


def conjuncts(case: Case, w: World) -> dict[str, bool]:
    """Every instance of every conjunct, by the label the z3 encoding gives it."""
    r = w.reality
    out: dict[str, bool] = {}
    for k, kid in enumerate(case.snaps):
        red, rb = r.red[k], r.red_buf[k]
        pr, gh = w.prophecy[k], w.ghost[k]
        for c in range(len(case.chans)):
            n = f"({kid}, {case.chan_name(c)})"
            src, dst = case.src(c), case.dst(c)
            before, has, after = split(r.buf[c], kid)
            everything = app_values(r.buf[c])
            out["RedLettersOnlyFromRed" + n] = not has or src in red
            out["WhiteBufferOfRedSourceHoldsLetter" + n] = not (src in red and c not in rb) or has
            out["RedBufferHoldsNoLetter" + n] = c not in rb or not has
            out["RedBufferJoinsRedMachines" + n] = c not in rb or (src in red and dst in red)
            out["WhiteMachineRecordsNothing" + n] = dst in red or r.rec_buf[k][c] == ()
            acc, accl, phi = pr.acc[c], pr.accl[c], pr.phi[c]
            out["ProphecySpent" + n] = (src not in red or phi == ()) and (
                dst not in red or (acc == () and not accl)
            )
            stream = everything + phi
            rest = pr.rest[c]
            if dst in red:
                prefix = True
            elif src in red:
                prefix = (acc == before and has) if accl else before == acc + rest
            else:
                prefix = acc == stream if accl else stream == acc + rest
            out["AcceptedIsPrefix" + n] = prefix
            gb = gh.buf[c]
            colour = {
                (False, False): "iii a",
                (True, True): "iii b",
                (True, False): "iii c",
                (False, True): "iii d",
            }[(src in red, dst in red)]
            if colour == "iii b":
                rule = gb == (before, has, after)
            elif colour == "iii d":
                rule = gb == (everything + phi, True, ())
            elif colour == "iii c":
                if accl:
                    rule = acc == before and has and gb == (after, False, ())
                else:
                    rule = before[: len(acc)] == acc and gb == (before[len(acc) :], has, after)
            elif accl:
                rule = acc == stream and gb == ((), False, ())
            else:
                rule = stream[: len(acc)] == acc and gb == (stream[len(acc) :], True, ())
            for other in ("iii a", "iii b", "iii c", "iii d"):
                label = f"ShadowRuleIII({kid}, {case.chan_name(c)}, {other})"
                out[label] = rule if other == colour else True
        for p in range(len(case.procs)):
            n = f"({kid}, {case.procs[p]})"
            out["ProphesiedStateRecorded" + n] = p not in red or r.rec_machine[k][p] == pr.sigma[p]
            out["ShadowRuleII" + n] = gh.local[p] == (r.local[p] if p in red else pr.sigma[p])
    return out


def well_formed(case: Case, w: World) -> dict[str, bool]:
    """The representation's constraints, by the labels of :func:`state.well_formed`
    (those a whole message list can break: one red letter per snapshot per buffer,
    and shadow buffers in normal form)."""
    out: dict[str, bool] = {}
    for c in range(len(case.chans)):
        letters = [m.snap for m in w.reality.buf[c] if m.kind == "red"]
        out[f"AtMostOneRedLetter({case.chan_name(c)})"] = len(letters) == len(set(letters))
        for k in range(case.snapshots):
            _pre, has, post = w.ghost[k].buf[c]
            out[f"shadow buffer {case.chan_name(c)} of snapshot {case.snaps[k]} is normal"] = (
                has or post == ()
            )
    return out


# ------------------------------------------------------------------------- one step


def prophecy_step(
    case: Case, r: Reality, st: Step, after: Reality, post: Sequence[Prophecy]
) -> tuple[tuple[Prophecy, ...], dict[str, bool]]:
    """The prophecy before step ``st`` determined by the one after it, and what the
    step requires of the prophecy after it (by the labels of the z3 encoding)."""
    a = actor(case, st)
    msg = received(r, st)
    out: list[Prophecy] = []
    conds: dict[str, bool] = {}
    for k, kid in enumerate(case.snaps):
        pr = post[k]
        phi, acc, accl, rest = list(pr.phi), list(pr.acc), list(pr.accl), list(pr.rest)
        turned = a not in r.red[k] and a in after.red[k]
        if turned:
            conds[f"ProphesiedState({kid}, {case.procs[a]})"] = pr.sigma[a] == r.local[a]
        for c in range(len(case.chans)):
            name = f"({kid}, {case.chan_name(c)})"
            src, dst = case.src(c), case.dst(c)
            if st.action == "SendApp" and st.c == c and src not in r.red[k]:
                assert st.m is not None
                phi[c] = (st.m, *pr.phi[c])
            if st.action == "ReceiveApp" and st.c == c and dst not in r.red[k]:
                assert msg is not None
                acc[c] = (msg.val, *pr.acc[c])
            if (
                st.action == "ReceiveRedLetter"
                and st.c == c
                and msg is not None
                and msg.snap == kid
                and dst not in r.red[k]
            ):
                accl[c] = True
            new_letters = [m for m in after.buf[c] if m.kind == "red" and m.snap == kid]
            old_letters = [m for m in r.buf[c] if m.kind == "red" and m.snap == kid]
            if st.action == "ReceiveRedLetter" and st.c == c:
                pass  # a letter left this buffer; none entered it
            elif len(new_letters) > len(old_letters):
                conds[f"SendsItsRedLetterNext{name}"] = pr.phi[c] == ()
            if dst == a and turned:
                before, _has, _after = split(r.buf[c], kid)
                rest[c] = before if src in r.red[k] else app_values(r.buf[c]) + pr.phi[c]
                conds[f"ReceivesNothingMoreWhileWhite{name}"] = pr.acc[c] == () and not pr.accl[c]
        out.append(Prophecy(pr.sigma, tuple(phi), tuple(acc), tuple(accl), tuple(rest)))
    return tuple(out), conds


def ghost_step(
    case: Case, app: ConcreteApp, r: Reality, st: Step, g: Ghost, k: int
) -> tuple[Ghost, bool]:
    """Lemma 1's shadow after step ``st``, and whether its copy of the step was
    possible ("to an action performed in reality by a red machine corresponds in the
    shadow network exactly the same action", a skip for a white one)."""
    a = actor(case, st)
    if a not in r.red[k]:
        return g, True
    local, buf = list(g.local), list(g.buf)
    msg = received(r, st)
    ok = True
    if st.action == "SendApp":
        assert st.c is not None and st.m is not None
        q = case.dst(st.c)
        ok = app.sendable(a, q, g.local[a], st.m)
        local[a] = app.after_send(a, q, g.local[a], st.m)
        pre, has, post = g.buf[st.c]
        buf[st.c] = (pre, has, (*post, st.m)) if has else ((*pre, st.m), has, post)
    elif st.action == "InternalEvent":
        assert st.e is not None
        ok = app.events(a, g.local[a], st.e)
        local[a] = app.after_event(a, g.local[a], st.e)
    elif st.action == "ReceiveApp":
        assert st.c is not None and msg is not None
        p = case.src(st.c)
        pre, has, post = g.buf[st.c]
        ok = bool(pre) and pre[0] == msg.val and app.can_receive(a, p, g.local[a], msg.val)
        local[a] = app.after_receive(a, p, g.local[a], msg.val)
        buf[st.c] = (pre[1:], has, post)
    elif st.action == "ReceiveRedLetter" and msg is not None and msg.snap == case.snaps[k]:
        assert st.c is not None
        pre, has, post = g.buf[st.c]
        ok = pre == () and has
        buf[st.c] = (post, False, ())
    return Ghost(tuple(local), tuple(buf)), ok


# ------------------------------------------------------------------------- the prophecy of a run


def prophecy_of_run(
    case: Case, states: Sequence[Reality], steps: Sequence[Step]
) -> list[tuple[Prophecy, ...]]:
    """The prophecy at every moment of a run in which every snapshot completes, read
    from its future: at the end it is spent (each machine's prophesied state is its
    recorded one), and before each step it is what the step consumes followed by
    what it is after the step."""
    end = states[-1]
    for k in range(case.snapshots):
        if not complete(case, end, k):
            raise ValueError(f"snapshot {case.snaps[k]} does not complete in this run")
    nc = len(case.chans)
    last = tuple(
        Prophecy(
            tuple(x if x is not None else 0 for x in end.rec_machine[k]),
            tuple(() for _ in range(nc)),
            tuple(() for _ in range(nc)),
            tuple(False for _ in range(nc)),
            tuple(() for _ in range(nc)),
        )
        for k in range(case.snapshots)
    )
    out = [last]
    for t in reversed(range(len(steps))):
        before, _conds = prophecy_step(case, states[t], steps[t], states[t + 1], out[-1])
        out.append(before)
    out.reverse()
    return out


def initial_ghost(case: Case, r: Reality, pr: Sequence[Prophecy]) -> tuple[Ghost, ...]:
    """Lemma 1's shadow at a moment before any machine turned red, by rules (ii) and
    (iii a)."""
    out = []
    for k in range(case.snapshots):
        bufs: list[GBuf] = []
        for c in range(len(case.chans)):
            stream = app_values(r.buf[c]) + pr[k].phi[c]
            if pr[k].accl[c]:
                bufs.append(((), False, ()))
            else:
                bufs.append((stream[len(pr[k].acc[c]) :], True, ()))
        out.append(Ghost(pr[k].sigma, tuple(bufs)))
    return tuple(out)


def ghost_of_run(
    case: Case,
    app: ConcreteApp,
    states: Sequence[Reality],
    steps: Sequence[Step],
    prophecy: Sequence[tuple[Prophecy, ...]],
) -> list[tuple[Ghost, ...]]:
    """Lemma 1's shadow at every moment of a run, started by the rules and then
    stepping with the red machines (a failed copy raises ``ValueError``)."""
    ghosts = [initial_ghost(case, states[0], prophecy[0])]
    for t, st in enumerate(steps):
        nxt = []
        for k in range(case.snapshots):
            g, ok = ghost_step(case, app, states[t], st, ghosts[-1][k], k)
            if not ok:
                raise ValueError(
                    f"step {t + 1} ({st.text(case)}): the shadow of Lemma 1 cannot copy it"
                )
            nxt.append(g)
        ghosts.append(tuple(nxt))
    return ghosts
