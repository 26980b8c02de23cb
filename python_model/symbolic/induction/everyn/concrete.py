"""The every-N semantics as plain Python over one finite network: buffers as
sequences of message identities and red letters, recorded streams as sequences,
the prophecy of one snapshot as sets.

Written independently of the z3 encoding (there: relations over sorts, a red letter
a flag and a cut, a stream a set with an order), so that every counterexample to
induction z3 returns is replayed here -- the step, the conjuncts assumed, the
obligations broken -- and a disagreement is a bug of one of the two
(:class:`~redletter.errors.InternalError`).  :func:`forget` drops the identities:
the state the fixed-topology interpreter
(:mod:`redletter.python_model.symbolic.induction.concrete`) and the Python model
keep, so the tests hold the three to the same steps.

Machines, snapshots and messages are indices.  A message's identity is fixed for
the whole run, with its buffer, its value and its place in its buffer's send order
(its *rank*); sending one takes the next unsent message of its buffer, as the z3
encoding does (a run's messages are numbered in the order they are sent).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property

from redletter.python_model.symbolic.induction.apps import ConcreteApp

__all__ = [
    "Chan",
    "Item",
    "Net",
    "Prophecy",
    "Reality",
    "Step",
    "apply",
    "enabled_steps",
    "init_reality",
    "prophecy_of_run",
]

Chan = tuple[int, int]
Item = tuple[str, int]
"""An element of a buffer: ``("m", message)`` or ``("r", snapshot)`` (a red letter)."""


@dataclass(frozen=True)
class Net:
    """A finite instance of the rigid vocabulary: the machines ``0..machines-1``, the
    buffers ``links`` (sorted), ``snapshots`` snapshots, every message of the run
    ``msgs[i] = (src, dst, value)`` with its ``rank`` in its buffer's send order, and
    the ``starters`` ``(k, p)``."""

    machines: int
    links: tuple[Chan, ...]
    snapshots: int
    msgs: tuple[tuple[int, int, int], ...]
    rank: tuple[int, ...]
    starters: frozenset[tuple[int, int]]
    names: tuple[str, ...] = ()

    @cached_property
    def chan_index(self) -> dict[Chan, int]:
        return {c: i for i, c in enumerate(self.links)}

    def name(self, p: int) -> str:
        return self.names[p] if self.names else f"p{p + 1}"

    def chan_name(self, c: Chan) -> str:
        return f"{self.name(c[0])}→{self.name(c[1])}"

    def chan(self, m: int) -> Chan:
        return self.msgs[m][0], self.msgs[m][1]

    def val(self, m: int) -> int:
        return self.msgs[m][2]

    def lt(self, x: int, y: int) -> bool:
        return self.chan(x) == self.chan(y) and self.rank[x] < self.rank[y]

    def on(self, c: Chan) -> list[int]:
        """The messages of buffer c, in send order."""
        return sorted(
            (m for m in range(len(self.msgs)) if self.chan(m) == c), key=self.rank.__getitem__
        )

    def outs(self, p: int) -> list[Chan]:
        return [c for c in self.links if c[0] == p]

    def ins(self, q: int) -> list[Chan]:
        return [c for c in self.links if c[1] == q]


@dataclass(frozen=True)
class Reality:
    """The spec's variables over message identities: ``bufs[i]`` is buffer
    ``net.links[i]``, oldest first; ``rec[k][i]`` its recorded stream in snapshot k."""

    loc: tuple[int, ...]
    sent: frozenset[int]
    rcvd: frozenset[int]
    bufs: tuple[tuple[Item, ...], ...]
    red: tuple[frozenset[int], ...]
    rb: tuple[frozenset[Chan], ...]
    rm: tuple[tuple[int | None, ...], ...]
    rec: tuple[tuple[tuple[int, ...], ...], ...]


@dataclass(frozen=True)
class Prophecy:
    """The prophecy of snapshot ``kappa`` (see :class:`..terms.Prophecy`)."""

    kappa: int
    ws: frozenset[int]
    acc: frozenset[int]
    accl: frozenset[Chan]
    sig: tuple[int, ...]


@dataclass(frozen=True)
class Step:
    """An action and its parameters: ``m`` the message (SendApp, ReceiveApp), ``p`` the
    machine (InternalEvent, StartSnapshot; the source of ReceiveRedLetter), ``q`` the
    receiver of a red letter, ``k`` the snapshot, ``e`` the event."""

    action: str
    m: int | None = None
    p: int | None = None
    q: int | None = None
    k: int | None = None
    e: int | None = None

    def actor(self, net: Net) -> int:
        if self.action == "SendApp":
            assert self.m is not None
            return net.msgs[self.m][0]
        if self.action == "ReceiveApp":
            assert self.m is not None
            return net.msgs[self.m][1]
        if self.action == "ReceiveRedLetter":
            assert self.q is not None
            return self.q
        assert self.p is not None
        return self.p

    def text(self, net: Net, value: Callable[[int], str] = lambda v: f"value v{v}") -> str:
        """The step in words (``value`` names a message's value: ``value v0``, an
        element z3 chose, by default)."""
        if self.action == "SendApp":
            assert self.m is not None
            where = net.chan_name(net.chan(self.m))
            return f"SendApp({where}) of message m{self.m} ({value(net.val(self.m))})"
        if self.action == "ReceiveApp":
            assert self.m is not None
            where = net.chan_name(net.chan(self.m))
            return f"ReceiveApp({where}) of message m{self.m} ({value(net.val(self.m))})"
        if self.action == "ReceiveRedLetter":
            assert self.p is not None and self.q is not None and self.k is not None
            return (
                f"ReceiveRedLetter({net.chan_name((self.p, self.q))}) of red letter k{self.k + 1}"
            )
        if self.action == "InternalEvent":
            assert self.p is not None
            return f"InternalEvent({net.name(self.p)}, e = {self.e})"
        assert self.p is not None and self.k is not None
        return f"StartSnapshot({net.name(self.p)}, k{self.k + 1})"


def init_reality(net: Net, local: Sequence[int]) -> Reality:
    ns, nc, n = net.snapshots, len(net.links), net.machines
    return Reality(
        tuple(local),
        frozenset(),
        frozenset(),
        tuple(() for _ in range(nc)),
        tuple(frozenset() for _ in range(ns)),
        tuple(frozenset() for _ in range(ns)),
        tuple(tuple(None for _ in range(n)) for _ in range(ns)),
        tuple(tuple(() for _ in range(nc)) for _ in range(ns)),
    )


# ------------------------------------------------------------------------- the step


def _set(t: tuple, i: int, v: object) -> tuple:  # type: ignore[type-arg]
    return (*t[:i], v, *t[i + 1 :])


def _recording(net: Net, variant: str, r: Reality, k: int, q: int, c: Chan) -> bool:
    if variant == "no-channel-recording":
        return False
    if variant == "stop-at-first-red-letter":
        return q in r.red[k] and not any(x in r.rb[k] for x in net.ins(q))
    return q in r.red[k] and c not in r.rb[k]


def _turn_red(net: Net, variant: str, r: Reality, p: int, k: int, *, by_letter: bool) -> Reality:
    bufs = list(r.bufs)
    if not (variant == "never-forward" and by_letter):
        for c in net.outs(p):
            i = net.chan_index[c]
            bufs[i] = (*bufs[i], ("r", k))
    return replace(
        r,
        bufs=tuple(bufs),
        red=_set(r.red, k, r.red[k] | {p}),
        rm=_set(r.rm, k, _set(r.rm[k], p, r.loc[p])),
    )


def apply(net: Net, app: ConcreteApp, variant: str, r: Reality, st: Step) -> Reality | None:
    """The state after ``st`` (the variant's Next), or ``None`` if it is not enabled."""
    fifo = variant != "non-fifo"
    if st.action == "SendApp":
        m = st.m
        assert m is not None
        p, q = net.chan(m)
        if m in r.sent or any(net.lt(x, m) and x not in r.sent for x in range(len(net.msgs))):
            return None
        if not app.sendable(p, q, r.loc[p], net.val(m)):
            return None
        i = net.chan_index[(p, q)]
        b = r.bufs[i]
        if variant == "late-red-letter" and b and b[-1][0] == "r":
            nb = (*b[:-1], ("m", m), b[-1])  # LateEnqueue
        else:
            nb = (*b, ("m", m))
        return replace(
            r,
            loc=_set(r.loc, p, app.after_send(p, q, r.loc[p], net.val(m))),
            sent=r.sent | {m},
            bufs=_set(r.bufs, i, nb),
        )
    if st.action == "InternalEvent":
        a, e = st.p, st.e
        assert a is not None and e is not None
        if not app.events(a, r.loc[a], e):
            return None
        return replace(r, loc=_set(r.loc, a, app.after_event(a, r.loc[a], e)))
    if st.action == "ReceiveApp":
        m = st.m
        assert m is not None
        c = net.chan(m)
        p, q = c
        i = net.chan_index[c]
        b = r.bufs[i]
        if ("m", m) not in b or (fifo and b[0] != ("m", m)):
            return None
        if not app.can_receive(q, p, r.loc[q], net.val(m)):
            return None
        rec = list(r.rec)
        recorded = False
        for k in range(net.snapshots):
            if _recording(net, variant, r, k, q, c):
                recorded = True
                stream = rec[k][i]
                new = (m, *stream) if variant == "newest-first-recording" else (*stream, m)
                rec[k] = _set(rec[k], i, new)
        loc = r.loc
        if not (variant == "swallowing-recording" and recorded):
            loc = _set(r.loc, q, app.after_receive(q, p, r.loc[q], net.val(m)))
        return replace(
            r,
            loc=loc,
            rcvd=r.rcvd | {m},
            bufs=_set(r.bufs, i, tuple(x for x in b if x != ("m", m))),
            rec=tuple(rec),
        )
    if st.action == "ReceiveRedLetter":
        src, dst, kl = st.p, st.q, st.k
        assert src is not None and dst is not None and kl is not None
        c, q = (src, dst), dst
        if c not in net.chan_index:
            return None
        i = net.chan_index[c]
        b = r.bufs[i]
        if ("r", kl) not in b or (fifo and b[0] != ("r", kl)):
            return None
        at = b.index(("r", kl))
        out = replace(r, bufs=_set(r.bufs, i, b[:at] + b[at + 1 :]))
        turns = {kl}
        if variant == "mixed-snapshots":
            turns |= {j for j in range(net.snapshots) if q in r.red[j]}
        out = replace(
            out, rb=tuple(r.rb[j] | {c} if j in turns else r.rb[j] for j in range(net.snapshots))
        )
        if q in r.red[kl]:
            if variant == "resent-red-letters":
                bufs = list(out.bufs)
                for d in net.outs(q):
                    j = net.chan_index[d]
                    bufs[j] = (*bufs[j], ("r", kl))
                out = replace(out, bufs=tuple(bufs))
            return out
        return _turn_red(net, variant, out, q, kl, by_letter=True)
    if st.action == "StartSnapshot":
        a, kk = st.p, st.k
        assert a is not None and kk is not None
        if (kk, a) not in net.starters or a in r.red[kk] or not app.may_start(a, kk, r.loc[a]):
            return None
        return _turn_red(net, variant, r, a, kk, by_letter=False)
    return None


def enabled_steps(
    net: Net, app: ConcreteApp, variant: str, r: Reality, events: Mapping[int, Sequence[int]] = {}
) -> Iterator[tuple[Step, Reality]]:
    """Every enabled step (internal events only those ``events`` offers)."""
    candidates: list[Step] = []
    for c in net.links:
        nxt = [m for m in net.on(c) if m not in r.sent]
        if nxt:
            candidates.append(Step("SendApp", m=nxt[0]))
    for i, c in enumerate(net.links):
        b = r.bufs[i]
        for x in b if variant == "non-fifo" else b[:1]:
            if x[0] == "m":
                candidates.append(Step("ReceiveApp", m=x[1]))
            else:
                candidates.append(Step("ReceiveRedLetter", p=c[0], q=c[1], k=x[1]))
    for p, evs in events.items():
        candidates += [Step("InternalEvent", p=p, e=e) for e in evs]
    for k in range(net.snapshots):
        candidates += [Step("StartSnapshot", p=p, k=k) for p in range(net.machines)]
    for st in candidates:
        nxt_state = apply(net, app, variant, r, st)
        if nxt_state is not None:
            yield st, nxt_state


# ------------------------------------------------------------------------- derived notions


def letters(b: Sequence[Item], k: int) -> int:
    return sum(1 for x in b if x == ("r", k))


def ahead(b: Sequence[Item], k: int) -> tuple[int, ...]:
    """The messages of a buffer before its (first) red letter of k: all of them if none."""
    out: list[int] = []
    for x in b:
        if x == ("r", k):
            break
        if x[0] == "m":
            out.append(x[1])
    return tuple(out)


def messages(b: Sequence[Item]) -> tuple[int, ...]:
    return tuple(x[1] for x in b if x[0] == "m")


def started(r: Reality, k: int) -> bool:
    return bool(r.red[k])


def complete(net: Net, r: Reality, k: int) -> bool:
    return len(r.red[k]) == net.machines and all(c in r.rb[k] for c in net.links)


def in_progress(net: Net, r: Reality, k: int) -> bool:
    return started(r, k) and not complete(net, r, k)


# ------------------------------------------------------------------------- the prophecy of a run


def prophecy_of_run(
    net: Net, states: Sequence[Reality], steps: Sequence[Step], kappa: int
) -> Prophecy:
    """The prophecy of snapshot ``kappa`` read from a run: which messages are sent and
    received while white, which red letters turn their receiver red, and the state
    each machine records (its state at Init, for a machine that never turns red)."""
    ws: set[int] = set()
    acc: set[int] = set()
    accl: set[Chan] = set()
    sig = list(states[0].loc)
    for r, st in zip(states, steps, strict=False):
        a = st.actor(net)
        white = a not in r.red[kappa]
        if st.action == "SendApp" and white:
            assert st.m is not None
            ws.add(st.m)
        if st.action == "ReceiveApp" and white:
            assert st.m is not None
            acc.add(st.m)
        if st.action == "ReceiveRedLetter" and st.k == kappa and white:
            assert st.p is not None and st.q is not None
            accl.add((st.p, st.q))
        turns = st.action in ("ReceiveRedLetter", "StartSnapshot") and st.k == kappa and white
        if turns:
            sig[a] = r.loc[a]
    return Prophecy(kappa, frozenset(ws), frozenset(acc), frozenset(accl), tuple(sig))
