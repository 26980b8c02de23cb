"""z3 on the theorem "Lemma 0 implies Lemma 1 when the application is undisturbed".

``spec/ChandyLamport.tla`` states ``THEOREM Spec /\\ NoInterference =>
[]Lemma0ImpliesLemma1`` with a proof sketch that uses none of the steps a bug
overrides: only that the application's actions from S0 to Sf form a run of the
application alone (FIFO buffers), that the history splits them into the white
machines' actions W and the red machines' actions D, each in its order, and that a
machine's white actions precede its red ones.  TLC checks the theorem on every
model; here z3 checks the argument itself, for **every application** (local states
and message values are integers, and the application's guards and effects --
Sendable, AfterSend, Events, AfterEvent, CanReceive, AfterReceive -- are
uninterpreted functions), **every colouring** (any split of the run into white and
red actions with each machine white then red: every bug in colouring, recording and
red-letter handling gives one), **every initial state** (any local states, up to
``max_initial`` messages of any values per buffer) and **every run** of at most
``length`` actions on a fixed topology:

    W replays from S0  ==>  D replays from the state W reaches, and ends in Sf.

The snapshot state is taken to be the state W reaches (``EndsInSnapshotState``),
so "W replays" is ``Lemma0Holds`` and the conclusion is ``Lemma1Holds``.  z3 answers
*unsat* (no counterexample: proved for that bound), *sat* (a counterexample, which
:class:`Counterexample` shows) or *unknown* within its budget (open, never proved).

The hypotheses have teeth: :data:`VARIANTS` drops each in turn -- receipt from any
position of a buffer (not FIFO), a receipt that never reaches the application (a
recording that swallows it), a machine that turns white again -- and z3 then finds
a counterexample.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from redletter.errors import InputError
from redletter.python_model.topology import Topology, complete, directed_ring, ring

__all__ = ["VARIANTS", "Counterexample", "TheoremResult", "check_theorem", "topology_named"]

Expr = Any

VARIANTS: Final[Mapping[str, str]] = {
    "theorem": "the theorem's hypotheses: FIFO receipt, every receipt delivered, "
    "each machine white then red",
    "non-fifo": "drop FIFO: a receipt may take any message of its buffer",
    "swallowed": "drop delivery: a receipt may leave the receiver's state unchanged "
    "(the message is consumed, as by a swallowing recording)",
    "white-again": "drop monotone colour: a machine may act white after acting red",
}


def topology_named(name: str, machines: int) -> Topology:
    """``ring``, ``directed-ring`` or ``complete`` on ``machines`` machines."""
    make = {"ring": ring, "directed-ring": directed_ring, "complete": complete}
    if name not in make:
        raise InputError(
            f"--topology: unknown topology {name!r}; expected one of {', '.join(make)}",
            code="RL-INPUT-USAGE",
        )
    if machines < 2:
        raise InputError(f"--machines: expected at least 2, got {machines}", code="RL-INPUT-USAGE")
    return make[name](machines)


@dataclass(frozen=True)
class Counterexample:
    """A run, a colouring and where the conclusion fails."""

    steps: tuple[str, ...]  #: one line per action of the run, with its colour
    why: str


@dataclass(frozen=True)
class TheoremResult:
    """z3's answer for one topology, bound and variant."""

    topology: str
    length: int
    max_initial: int
    variant: str
    verdict: str  #: "proved", "counterexample" or "open"
    seconds: float
    counterexample: Counterexample | None = None
    reason: str = ""

    def describe(self) -> str:
        what = VARIANTS[self.variant]
        head = (
            f"{self.topology}, runs of up to {self.length} actions, up to "
            f"{self.max_initial} messages per buffer at S0, {what}: "
        )
        if self.verdict == "proved":
            return head + f"proved (z3: unsat, {self.seconds:.1f} s)"
        if self.verdict == "counterexample":
            assert self.counterexample is not None
            actions = sum(1 for line in self.counterexample.steps if line[:1].isdigit())
            return head + (
                f"counterexample in {actions} actions "
                f"({self.seconds:.1f} s): {self.counterexample.why}"
            )
        return head + f"open ({self.reason}, {self.seconds:.1f} s)"


class _Encoding:
    """The run, the two replays and the conclusion, for one bound.

    Buffers are encoded by counting, without arrays: the messages a buffer ever
    holds are its initial ones, then the ones sent into it, in order; a receipt takes
    the message whose index is the number of receipts from that buffer before it
    (FIFO), or any index not taken yet (the non-FIFO variant).  Each step is one of
    ``send on c``, ``receive on c``, ``internal event of p`` or a no-op (so runs of
    every length up to the bound are covered), and the application's guards and
    effects are uninterpreted functions of (machine, peer, value, local state).
    """

    def __init__(self, topo: Topology, length: int, max_initial: int, variant: str) -> None:
        from redletter.python_model.z3env import z3

        self.z3 = z3
        self.topo = topo
        self.n = length
        self.max_initial = max_initial
        self.variant = variant
        procs, chans = topo.procs, topo.chans
        self.np, self.nc = len(procs), len(chans)
        self.src = [procs.index(c[0]) for c in chans]
        self.dst = [procs.index(c[1]) for c in chans]
        ints, b = z3.IntSort(), z3.BoolSort()
        self.sendable = z3.Function("Sendable", ints, ints, ints, ints, b)
        self.after_send = z3.Function("AfterSend", ints, ints, ints, ints, ints)
        self.events = z3.Function("Events", ints, ints, ints, b)
        self.after_event = z3.Function("AfterEvent", ints, ints, ints, ints)
        self.can_receive = z3.Function("CanReceive", ints, ints, ints, ints, b)
        self.after_receive = z3.Function("AfterReceive", ints, ints, ints, ints, ints)
        n, nc, np_ = length, self.nc, self.np
        self.snd = [[z3.Bool(f"send{t}_{c}") for c in range(nc)] for t in range(n)]
        self.rcv = [[z3.Bool(f"recv{t}_{c}") for c in range(nc)] for t in range(n)]
        self.itn = [[z3.Bool(f"int{t}_{p}") for p in range(np_)] for t in range(n)]
        self.nop = [z3.Bool(f"nop{t}") for t in range(n)]
        self.val = [z3.Int(f"val{t}") for t in range(n)]
        self.red = [z3.Bool(f"red{t}") for t in range(n)]
        self.idx = [z3.Int(f"idx{t}") for t in range(n)]  # the index a receipt takes
        self.swallow = [z3.Bool(f"swallow{t}") for t in range(n)]
        self.local0 = [z3.Int(f"local0_{p}") for p in range(np_)]
        self.len0 = [z3.Int(f"len0_{c}") for c in range(nc)]
        self.init = [[z3.Int(f"init_{c}_{j}") for j in range(max_initial)] for c in range(nc)]
        cs: list[Expr] = []
        for c in range(nc):
            cs += [self.len0[c] >= 0, self.len0[c] <= max_initial]
        for t in range(n):
            choices = [*self.snd[t], *self.rcv[t], *self.itn[t], self.nop[t]]
            cs += [z3.PbEq([(x, 1) for x in choices], 1)]
            if t + 1 < n:  # no-ops only at the end: a run of fewer actions
                cs.append(z3.Implies(self.nop[t], self.nop[t + 1]))
            if variant != "swallowed":
                cs.append(z3.Not(self.swallow[t]))
        self.cs = cs

    # -- helpers -------------------------------------------------------------------

    def actor_is(self, t: int, p: int) -> Expr:
        z3 = self.z3
        return z3.Or(
            *[self.snd[t][c] for c in range(self.nc) if self.src[c] == p],
            *[self.rcv[t][c] for c in range(self.nc) if self.dst[c] == p],
            self.itn[t][p],
        )

    def count(self, xs: Sequence[Expr]) -> Expr:
        z3 = self.z3
        return z3.Sum([z3.If(x, 1, 0) for x in xs]) if xs else z3.IntVal(0)

    def message(self, c: int, j: Expr, sends: Sequence[tuple[Expr, Expr]]) -> Expr:
        """The value at index j of buffer c whose messages are its initial ones, then
        ``sends`` ((is this step a send into c, value), in order)."""
        z3 = self.z3
        out = z3.IntVal(-(10**6))  # no such message (never compared: guarded by lengths)
        before = z3.IntVal(0)
        entries: list[tuple[Expr, Expr]] = []
        for is_send, v in sends:
            entries.append((z3.And(is_send, j - self.len0[c] == before), v))
            before = before + z3.If(is_send, 1, 0)
        for cond, v in reversed(entries):
            out = z3.If(cond, v, out)
        for i in reversed(range(self.max_initial)):
            out = z3.If(z3.And(j < self.len0[c], j == i), self.init[c][i], out)
        return out

    def effect(self, t: int, p: int, local: Expr, *, swallow: Expr) -> Expr:
        """p's local state after step t, when p is its actor."""
        z3 = self.z3
        v = self.val[t]
        out = local
        for c in range(self.nc):
            if self.src[c] == p:
                out = z3.If(self.snd[t][c], self.after_send(p, self.dst[c], v, local), out)
            if self.dst[c] == p:
                out = z3.If(
                    self.rcv[t][c],
                    z3.If(swallow, local, self.after_receive(p, self.src[c], v, local)),
                    out,
                )
        return z3.If(self.itn[t][p], self.after_event(p, v, local), out)

    def guard(self, t: int, local: Sequence[Expr], recv_ok: Sequence[Expr]) -> Expr:
        """Step t is enabled: its application guard holds, and a receipt finds its
        message (``recv_ok[c]``)."""
        z3 = self.z3
        v = self.val[t]
        parts: list[Expr] = [self.nop[t]]
        for c in range(self.nc):
            p, q = self.src[c], self.dst[c]
            parts.append(z3.And(self.snd[t][c], self.sendable(p, q, v, local[p])))
            parts.append(z3.And(self.rcv[t][c], recv_ok[c], self.can_receive(q, p, v, local[q])))
        for p in range(self.np):
            parts.append(z3.And(self.itn[t][p], self.events(p, v, local[p])))
        return z3.Or(parts)

    def solve(self, timeout_ms: int) -> tuple[str, Any]:
        z3 = self.z3
        n, nc, np_ = self.n, self.nc, self.np
        fifo = self.variant != "non-fifo"
        # reality: each step enabled, FIFO (or any untaken index), from S0
        local = list(self.local0)
        for t in range(n):
            recv_ok = []
            for c in range(nc):
                sent_before = [(self.snd[u][c], self.val[u]) for u in range(t)]
                total = self.len0[c] + self.count([s for s, _ in sent_before])
                taken = [(self.rcv[u][c], self.idx[u]) for u in range(t)]
                if fifo:
                    at_ok = self.idx[t] == self.count([r for r, _ in taken])
                else:
                    at_ok = z3.And(
                        self.idx[t] >= 0,
                        *[z3.Implies(r, self.idx[t] != i) for r, i in taken],
                    )
                recv_ok.append(
                    z3.And(
                        at_ok,
                        self.idx[t] < total,
                        self.message(c, self.idx[t], sent_before) == self.val[t],
                    )
                )
            self.cs.append(self.guard(t, local, recv_ok))
            local = [
                z3.If(self.actor_is(t, p), self.effect(t, p, local[p], swallow=self.swallow[t]),
                      local[p])
                for p in range(np_)
            ]  # fmt: skip
        real_local = local
        # the colouring: each machine white, then red
        if self.variant != "white-again":
            for t in range(n):
                for u in range(t + 1, n):
                    for p in range(np_):
                        self.cs.append(
                            z3.Implies(
                                z3.And(self.red[t], self.actor_is(t, p), self.actor_is(u, p)),
                                self.red[u],
                            )
                        )
        white = [z3.Not(self.red[t]) for t in range(n)]
        # replay W from S0, then D from the state W reaches (FIFO, always delivered)
        order = [(t, white[t]) for t in range(n)] + [(t, self.red[t]) for t in range(n)]
        local = list(self.local0)
        ok: list[list[Expr]] = [[], []]
        for phase, (t, mine) in enumerate(order):
            part = 0 if phase < n else 1
            done = order[:phase]
            recv_ok = []
            for c in range(nc):
                sends = [(z3.And(m, self.snd[u][c]), self.val[u]) for u, m in done]
                total = self.len0[c] + self.count([s for s, _ in sends])
                r = self.count([z3.And(m, self.rcv[u][c]) for u, m in done])
                recv_ok.append(z3.And(r < total, self.message(c, r, sends) == self.val[t]))
            ok[part].append(z3.Implies(mine, self.guard(t, local, recv_ok)))
            local = [
                z3.If(z3.And(mine, self.actor_is(t, p)),
                      self.effect(t, p, local[p], swallow=z3.BoolVal(False)), local[p])
                for p in range(np_)
            ]  # fmt: skip
        same: list[Expr] = [a == b for a, b in zip(local, real_local, strict=True)]
        for c in range(nc):
            real_sends = [(self.snd[u][c], self.val[u]) for u in range(n)]
            replay_sends = [(z3.And(m, self.snd[u][c]), self.val[u]) for u, m in order]
            total = self.len0[c] + self.count([s for s, _ in real_sends])
            received = self.count([self.rcv[u][c] for u in range(n)])
            if fifo:
                for j in range(n + self.max_initial):
                    jj = z3.IntVal(j)
                    same.append(
                        z3.Implies(
                            z3.And(jj >= received, jj < total),
                            self.message(c, jj, replay_sends) == self.message(c, jj, real_sends),
                        )
                    )
        s = z3.Solver()
        s.set("timeout", timeout_ms)
        s.add(self.cs)
        s.add(z3.And(ok[0]))
        s.add(z3.Not(z3.And(*ok[1], *same)))
        self._ok_d = ok[1]
        answer = s.check()
        return str(answer), (s.model() if answer == z3.sat else s.reason_unknown())

    def counterexample(self, model: Any) -> Counterexample:
        z3 = self.z3
        names, chans = self.topo.procs, self.topo.chans
        lines: list[str] = []

        def true(e: Expr) -> bool:
            return bool(z3.is_true(model.eval(e, model_completion=True)))

        def num(e: Expr) -> int:
            return int(model.eval(e, model_completion=True).as_long())

        for c in range(self.nc):
            a, b = chans[c]
            held = [num(self.init[c][j]) for j in range(num(self.len0[c]))]
            if held:
                lines.append(f"S0: {a} -> {b} holds {held}")
        for t in range(self.n):
            if true(self.nop[t]):
                break
            colour = "red" if true(self.red[t]) else "white"
            v = num(self.val[t])
            what = ""
            for c, (a, b) in enumerate(chans):
                if true(self.snd[t][c]):
                    what = f"{a} sends {v} to {b}"
                if true(self.rcv[t][c]):
                    nth = num(self.idx[t]) + 1
                    what = f"{b} receives {v} from {a} (message {nth} of the buffer)"
                    if true(self.swallow[t]):
                        what += ", never delivered"
            for p in range(self.np):
                if true(self.itn[t][p]):
                    what = f"{names[p]} internal event {v}"
            lines.append(f"{t + 1}. {colour}: {what}")
        bad_d = [t for t, e in enumerate(self._ok_d) if not true(e)]
        if bad_d:
            why = f"the white actions replay, but red action {bad_d[0] + 1} is not enabled"
        else:
            why = "both replays go through, but the red actions do not end in the final state"
        return Counterexample(tuple(lines), why)


def check_theorem(
    topology: str = "complete",
    machines: int = 2,
    length: int = 4,
    *,
    max_initial: int = 1,
    variant: str = "theorem",
    timeout: float = 60.0,
) -> TheoremResult:
    """Ask z3 for a counterexample to the theorem (``variant`` "theorem") or to the
    theorem without one of its hypotheses (see :data:`VARIANTS`)."""
    if variant not in VARIANTS:
        raise InputError(
            f"unknown variant {variant!r}; expected one of {', '.join(VARIANTS)}",
            code="RL-INPUT-USAGE",
        )
    if length < 1:
        raise InputError(f"--length: expected at least 1, got {length}", code="RL-INPUT-USAGE")
    topo = topology_named(topology, machines)
    start = time.perf_counter()
    enc = _Encoding(topo, length, max_initial, variant)
    answer, info = enc.solve(int(timeout * 1000))
    seconds = time.perf_counter() - start
    label = f"{topology} {machines}"
    if answer == "unsat":
        return TheoremResult(label, length, max_initial, variant, "proved", seconds)
    if answer == "sat":
        return TheoremResult(
            label, length, max_initial, variant, "counterexample", seconds,
            counterexample=enc.counterexample(info),
        )  # fmt: skip
    return TheoremResult(label, length, max_initial, variant, "open", seconds, reason=f"z3: {info}")
