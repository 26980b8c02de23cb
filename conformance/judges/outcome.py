"""Judge an outcome: do the snapshots a black box produced come from SOME schedule?

Given a COS 418 scenario (topology, initial tokens, the sends and snapshot starts
with their tick structure) and the ``.snap`` snapshots an implementation produced,
:func:`judge_outcome` decides whether some FIFO schedule of the scenario, as the
COS 418 simulator runs it, makes a correct Chandy–Lamport implementation record
exactly those snapshots.

The schedules
-------------
Time is the simulator's: the scenario's events split at ``tick`` lines into
groups; a group happens at time ``T`` (the ticks before it), its events in file
order and with no delivery between them.  Deliveries happen during ticks:

- a message sent at time ``t`` (a group's send, or a red letter sent by a server
  that recorded during tick ``t``) is delivered at a tick ``>= t + 1``;
- links are FIFO, and a link delivers at most one message per tick;
- within a tick, deliveries go in the simulator's order: links sorted by source,
  then destination (a server that records during a tick records after the
  deliveries before it in that order and before those after it);
- after the last event, ticks go on until every message is delivered;
- a send needs its sender to hold the tokens.

Two facts of the simulator are NOT required, so the judge is more permissive
than the simulator there and never fails a run the simulator can produce: a
server may deliver on two of its links in one tick, and a message may wait
longer than its random delay (at most 5 ticks) even when nothing is ahead of it.

With ``ticks=False`` (programs that schedule themselves, such as the
adhoccomputing adapter) every event is a group of its own, far enough apart
that any number of deliveries fits between two events: the schedules are then
all FIFO interleavings of the events in file order.

The method
----------
The question is one of satisfiability modulo linear integer arithmetic, put to
z3 (the kit's symbolic engine).  The unknowns are the tick at which each
message (application message or red letter) is delivered and, for each server
that does not start snapshot ``k``, the tick ``tau`` at which it records ``k``
and the link offset ``o`` of the red letter that makes it record (the first one
it receives: a minimum over its input links).  Every comparison the semantics
needs is a difference between two ticks or a tick and a constant ("delivered
before ``d`` recorded ``k``": ``t < tau`` or ``t = tau`` and the link comes
first in the tick), which z3's arithmetic decides fast.  What a snapshot
records follows from those comparisons: ``d``'s tokens are its initial tokens,
less its sends before it recorded, plus the messages it received before; the
recorded channel ``s -> d`` is the window of ``s -> d``'s messages received
after ``d`` recorded and sent before ``s`` did (its red letter follows them).
Each recorded field (a server's tokens, a channel's messages, per snapshot) is
a constraint switched on by an assumption literal, so one solver answers the
whole question, and the unsatisfiable cores and models that follow explain a
fail without rebuilding anything.

A witness is turned into steps in the spec's vocabulary and replayed by a
correct Chandy–Lamport token app (:func:`replay_snapshots`); the judge checks
that the replay records exactly the snapshots before it answers ``pass``.

Verdicts: ``pass`` with a witness schedule; ``fail`` with an explanation (the
fields no schedule can produce, and the closest schedule: one that matches
every field but a minimum set, found by z3's MaxSAT); ``unknown`` when the
solver's resource budget (``budget``, z3's deterministic ``rlimit`` units) or
its wall-clock ``timeout`` runs out first.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, TypeAlias

from redletter.conformance.formats.cos418 import (
    Link,
    Scenario,
    Send,
    Snap,
    Snapshot,
    Step,
    Tick,
    Topology,
    check_scenario,
)
from redletter.conformance.verdict import Verdict
from redletter.errors import InputError, InternalError

if TYPE_CHECKING:
    from redletter.python_model.z3env import z3

__all__ = [
    "DEFAULT_EXPLAIN",
    "DEFAULT_TIMEOUT",
    "Field",
    "Judgement",
    "judge_outcome",
    "replay_snapshots",
]

#: Seconds the solver may take to decide before the answer is ``unknown``.
DEFAULT_TIMEOUT: Final = 300.0

#: Seconds a fail's explanation may take to find the closest schedule (after
#: that, the explanation names fields that cannot all hold together instead).
DEFAULT_EXPLAIN: Final = 30.0

#: A recorded field: ``("tokens", k, server)`` or ``("channel", k, "src -> dst")``.
Field: TypeAlias = tuple[str, int, str]

#: The snapshots a schedule records: id -> (tokens per server, recorded channels).
Recorded: TypeAlias = dict[int, tuple[dict[str, int], dict[Link, tuple[int, ...]]]]

#: Seconds one check of "is this field possible at all?" may take (then: not said).
_ALONE_CAP: Final = 0.1


@dataclass(frozen=True)
class Judgement:
    """The outcome judge's verdict, its explanation, and the schedules that back it
    (a :class:`~redletter.conformance.verdict.Result`)."""

    verdict: Verdict
    message: str  #: the explanation (several lines for a fail)
    witness: tuple[Step, ...] | None = None  #: pass: a schedule yielding the snapshots
    closest: tuple[Step, ...] | None = None  #: fail: the schedule matching the most fields
    matched: int = 0  #: fields the witness or closest schedule matches
    fields: int = 0  #: fields the snapshots record
    effort: int = 0  #: z3's resource units spent (deterministic, unlike seconds)
    seconds: float = 0.0  #: wall-clock time of the judgement

    @property
    def divergence(self) -> None:
        """None: an outcome has no step to diverge at (see :attr:`schedule`)."""
        return None

    @property
    def schedule(self) -> tuple[Step, ...] | None:
        """The witness (pass) or the closest schedule (fail), if one was found."""
        return self.witness if self.witness is not None else self.closest

    def explanation(self) -> str:
        """The verdict's reason in words (:attr:`message`)."""
        return self.message


class _OutOfBudget(Exception):
    """The solver answered ``unknown`` (budget or timeout)."""


# ---------------------------------------------------------------------------
# the compiled scenario


@dataclass(frozen=True)
class _Start:
    """A starter's record: at its event, the ``i``-th of the group at time ``t``."""

    t: int
    i: int


@dataclass(frozen=True)
class _Free:
    """A record at the first red letter: tick ``tau``, link offset ``o`` (SMT names)."""

    tau: str
    o: str


_Rec: TypeAlias = _Start | _Free


class _Net:
    """Topology and scenario compiled to indices, with the SMT names of the unknowns.

    Links are numbered in the simulator's delivery order (sorted by source, then
    destination), and that number is also the link's offset within a tick.
    """

    def __init__(self, topology: Topology, scenario: Scenario, ticks: bool) -> None:
        self.ids = topology.ids
        self.S = len(self.ids)
        self.sidx = {s: i for i, s in enumerate(self.ids)}
        self.links: tuple[Link, ...] = tuple(sorted(topology.links))
        self.L = len(self.links)
        self.lidx = {link: i for i, link in enumerate(self.links)}
        self.lsrc = [self.sidx[a] for a, _ in self.links]
        self.ldst = [self.sidx[b] for _, b in self.links]
        self.inl = [[li for li in range(self.L) if self.ldst[li] == d] for d in range(self.S)]
        self.init = [s.tokens for s in topology.servers]
        # the events: (time of the group, index in the group, event)
        events = [e for e in scenario.events if not isinstance(e, Tick)]
        n_messages = len(events) + (len(scenario.snapshot_starters) + 1) * self.L
        self.events: list[tuple[int, int, Send | Snapshot]] = []
        now, index = 0, 0
        for e in scenario.events:
            if isinstance(e, Tick):
                if ticks:
                    now += e.n
                    index = 0
                continue
            if not ticks and self.events:
                now += n_messages + 1  # room for every delivery between two events
                index = 0
            self.events.append((now, index, e))
            index += 1
        #: app[l]: the messages of link l in FIFO order, (time, index, tokens)
        self.app: list[list[tuple[int, int, int]]] = [[] for _ in range(self.L)]
        #: sends[s]: the sends of server s in order, (time, index, tokens)
        self.sends: list[list[tuple[int, int, int]]] = [[] for _ in range(self.S)]
        self.starter: list[int] = []
        for t, i, e in self.events:
            if isinstance(e, Send):
                self.app[self.lidx[(e.src, e.dst)]].append((t, i, e.n))
                self.sends[self.sidx[e.src]].append((t, i, e.n))
            else:
                self.starter.append(self.sidx[e.server])
        self.K = len(self.starter)
        starts = [(t, i) for t, i, e in self.events if isinstance(e, Snapshot)]
        self.rec: list[list[_Rec]] = [
            [
                _Start(*starts[k]) if s == self.starter[k] else _Free(f"r{k}_{s}", f"o{k}_{s}")
                for s in range(self.S)
            ]
            for k in range(self.K)
        ]

    @staticmethod
    def app_var(li: int, i: int) -> str:
        return f"a{li}_{i}"

    @staticmethod
    def marker_var(k: int, li: int) -> str:
        return f"m{k}_{li}"

    def link_name(self, li: int) -> str:
        a, b = self.links[li]
        return f"{a} -> {b}"


# ---------------------------------------------------------------------------
# the encoding (SMT-LIB text: z3 parses it far faster than terms built one by one)


def _deliv_before(t: str, li: int, r: _Rec) -> str:
    """The delivery of a message on link li at tick t precedes the record r."""
    if isinstance(r, _Start):
        return f"(<= {t} {r.t})"
    return f"(or (< {t} {r.tau}) (and (= {t} {r.tau}) (< {li} {r.o})))"


def _event_before(t: int, i: int, r: _Rec) -> str:
    """The event i of the group at time t precedes the record r."""
    if isinstance(r, _Start):
        return "true" if (t, i) < (r.t, r.i) else "false"
    return f"(>= {r.tau} {t + 1})"


def _rec_before(r1: _Rec, r2: _Rec) -> str:
    """Record r1 precedes record r2 (two records of one server)."""
    if isinstance(r1, _Start) and isinstance(r2, _Start):
        return "true" if (r1.t, r1.i) < (r2.t, r2.i) else "false"
    if isinstance(r1, _Start):
        assert isinstance(r2, _Free)
        return f"(>= {r2.tau} {r1.t + 1})"
    if isinstance(r2, _Start):
        return f"(<= {r1.tau} {r2.t})"
    return f"(or (< {r1.tau} {r2.tau}) (and (= {r1.tau} {r2.tau}) (< {r1.o} {r2.o})))"


def _first_tick(r: _Rec) -> str:
    """The first tick at which a red letter sent at record r can be delivered."""
    return str(r.t + 1) if isinstance(r, _Start) else f"(+ {r.tau} 1)"


def _neg(n: int) -> str:
    return str(n) if n >= 0 else f"(- {-n})"


def _sum(terms: Sequence[str]) -> str:
    if not terms:
        return "0"
    return terms[0] if len(terms) == 1 else "(+ " + " ".join(terms) + ")"


def _any(xs: Sequence[str]) -> str:
    if not xs:
        return "false"
    return xs[0] if len(xs) == 1 else "(or " + " ".join(xs) + ")"


def _all(xs: Sequence[str]) -> str:
    if not xs:
        return "true"
    return xs[0] if len(xs) == 1 else "(and " + " ".join(xs) + ")"


@dataclass(frozen=True)
class _Encoding:
    base: str  #: declarations and the constraints every schedule meets
    fields: tuple[Field, ...]  #: the recorded fields ...
    formulas: tuple[str, ...]  #: ... and what each says of the schedule

    def all_hard(self) -> str:
        """Every field asserted: the one question of a pass."""
        return self.base + "\n" + "\n".join(f"(assert {f})" for f in self.formulas)

    def switched(self) -> str:
        """Field i asserted under the literal ``f{i}``: many questions, one solver."""
        return (
            self.base
            + "\n"
            + "\n".join(
                f"(declare-const f{i} Bool)\n(assert (=> f{i} {f}))"
                for i, f in enumerate(self.formulas)
            )
        )


def _encode(net: _Net, snaps: dict[int, Snap]) -> _Encoding:
    out: list[str] = []
    decl = out.append
    for li in range(net.L):
        for i in range(len(net.app[li])):
            decl(f"(declare-const {net.app_var(li, i)} Int)")
        for k in range(net.K):
            decl(f"(declare-const {net.marker_var(k, li)} Int)")
    for k in range(net.K):
        for r in net.rec[k]:
            if isinstance(r, _Free):
                decl(f"(declare-const {r.tau} Int)")
                decl(f"(declare-const {r.o} Int)")

    def hard(formula: str) -> None:
        out.append(f"(assert {formula})")

    # application messages: after their send, FIFO, one per link and tick
    for li, msgs in enumerate(net.app):
        for i, (t, _, _) in enumerate(msgs):
            hard(f"(>= {net.app_var(li, i)} {t + 1})")
            if i:
                hard(f"(> {net.app_var(li, i)} {net.app_var(li, i - 1)})")
    for k in range(net.K):
        for li in range(net.L):
            r_src = net.rec[k][net.lsrc[li]]
            m = net.marker_var(k, li)
            # a red letter leaves when its sender records, behind what it sent before
            hard(f"(>= {m} {_first_tick(r_src)})")
            for i, (t, gi, _) in enumerate(net.app[li]):
                x = net.app_var(li, i)
                before = _event_before(t, gi, r_src)
                if before == "true":
                    hard(f"(< {x} {m})")
                elif before == "false":
                    hard(f"(> {x} {m})")
                else:
                    hard(f"(ite {before} (< {x} {m}) (> {x} {m}))")
            for k2 in range(k + 1, net.K):
                m2 = net.marker_var(k2, li)
                first = _rec_before(r_src, net.rec[k2][net.lsrc[li]])
                hard(f"(ite {first} (< {m} {m2}) (> {m} {m2}))")
        # a server that does not start k records k at the first red letter of k it receives
        for d in range(net.S):
            r = net.rec[k][d]
            if not isinstance(r, _Free):
                continue
            hard(f"(>= {r.o} 0)")
            hard(f"(< {r.o} {net.L})")
            firsts = []
            for li in net.inl[d]:
                m = net.marker_var(k, li)
                hard(f"(>= {m} {r.tau})")
                hard(f"(=> (= {m} {r.tau}) (<= {r.o} {li}))")
                firsts.append(f"(and (= {m} {r.tau}) (= {r.o} {li}))")
            hard(_any(firsts))
    # a send needs its sender to hold the tokens
    for s in range(net.S):
        spent = 0
        for t, _, n in net.sends[s]:
            spent += n
            if spent <= net.init[s]:
                continue
            got = [
                f"(ite (<= {net.app_var(li, i)} {t}) {n2} 0)"
                for li in net.inl[s]
                for i, (_, _, n2) in enumerate(net.app[li])
            ]
            hard(f"(>= {_sum(got)} {spent - net.init[s]})")

    # the recorded fields
    fields: list[Field] = []
    formulas: list[str] = []

    def field(name: Field, formula: str) -> None:
        fields.append(name)
        formulas.append(formula)

    for k in sorted(snaps):
        snap = snaps[k]
        toks = snap.tokens_dict()
        for d in range(net.S):
            r = net.rec[k][d]
            terms = [f"(ite {_event_before(t, gi, r)} {_neg(-n)} 0)" for t, gi, n in net.sends[d]]
            terms += [
                f"(ite {_deliv_before(net.app_var(li, i), li, r)} {n} 0)"
                for li in net.inl[d]
                for i, (_, _, n) in enumerate(net.app[li])
            ]
            want = toks[net.ids[d]] - net.init[d]
            field(("tokens", k, net.ids[d]), f"(= {_sum(terms)} {_neg(want)})")
        for li in range(net.L):
            want_msgs = snap.channel(net.links[li])
            field(("channel", k, net.link_name(li)), _channel(net, k, li, want_msgs))
    return _Encoding("\n".join(out), tuple(fields), tuple(formulas))


def _channel(net: _Net, k: int, li: int, want: tuple[int, ...]) -> str:
    """Snapshot k records exactly ``want`` on link li: the messages of li received
    after its destination recorded (the first ``a`` are received before) and sent
    before its source recorded (the first ``b``) are ``want``."""
    msgs = net.app[li]
    n, m = len(msgs), len(want)
    r_dst = net.rec[k][net.ldst[li]]
    r_src = net.rec[k][net.lsrc[li]]
    values = tuple(x for _, _, x in msgs)

    def received(i: int) -> str:  # at least i messages received before the record
        if i <= 0:
            return "true"
        if i > n:
            return "false"
        return _deliv_before(net.app_var(li, i - 1), li, r_dst)

    def sent(i: int) -> str:  # at least i messages sent before the red letter
        if i <= 0:
            return "true"
        if i > n:
            return "false"
        t, gi, _ = msgs[i - 1]
        return _event_before(t, gi, r_src)

    windows = [
        _all([received(b - m), f"(not {received(b - m + 1)})", sent(b), f"(not {sent(b + 1)})"])
        for b in range(m, n + 1)
        if values[b - m : b] == want
    ]
    if not windows:
        return "false"
    # The window fixes a = b - m, so message i is received before the record exactly
    # when message i + m is sent before the red letter: stated outright, it lets the
    # solver propagate instead of search.
    ties = [f"(= {received(i)} {sent(i + m)})" for i in range(1, n - m + 1)]
    return _all([_any(windows), *ties])


# ---------------------------------------------------------------------------
# the solver


class _Solver:
    """The questions the judge puts to z3.  A pass needs one: every field at once
    (:meth:`decide`).  Explaining a fail needs many about subsets of the fields,
    which one incremental solver answers, each field switched on by an assumption
    literal (:meth:`check`, :meth:`closest`, :meth:`possible`).  Every question
    raises :class:`_OutOfBudget` when z3 answers ``unknown``."""

    def __init__(self, net: _Net, enc: _Encoding, budget: int | None, deadline: float) -> None:
        from redletter.python_model.z3env import (
            z3,  # deferred: importing the judge must not load z3
        )

        self.z3 = z3
        # A context of its own: judgements may run in several threads at once (a
        # campaign's), and z3's default context must not be shared between them.
        self.ctx = z3.Context()
        self.net, self.enc = net, enc
        self.budget, self.deadline = budget, deadline
        self.effort = 0
        self.core: list[int] = []  #: after an unsatisfiable check: fields that clash
        self.model: z3.ModelRef | None = None  #: after a satisfiable check: its model
        self._switched: z3.Solver | None = None
        self._lits = [z3.Bool(f"f{i}", self.ctx) for i in range(len(enc.fields))]
        self._index = {str(lit): i for i, lit in enumerate(self._lits)}

    def _run(self, solver: z3.Solver, assumptions: Sequence[object], cap: float | None) -> bool:
        """Satisfiable?  Within the time and resources left, and ``cap`` seconds."""
        z3 = self.z3
        left = self.deadline - time.monotonic()
        if left <= 0 or (self.budget is not None and self.effort >= self.budget):
            raise _OutOfBudget
        solver.set("timeout", max(1, int(min(left, cap or left) * 1000)))
        if self.budget is not None:
            solver.set("rlimit", self.budget - self.effort)
        answer = solver.check(*assumptions)
        for key, value in solver.statistics():
            if key == "rlimit count":
                self.effort += int(value)
        if answer == z3.unknown:
            raise _OutOfBudget
        return bool(answer == z3.sat)

    def decide(self) -> list[int] | None:
        """Delivery ticks of a schedule giving every field, or None (then
        :attr:`core` names fields that clash).

        Two solvers race in two threads, each with a z3 context of its own: one
        with every field asserted outright (the fastest way to a pass) and the
        incremental one with every field switched on by its literal (where a fail
        must go on, for its core and its explanation).  The first answer wins; a
        satisfiable one stops the other.
        """
        import threading

        z3 = self.z3
        hard = z3.SolverFor("QF_LIA", ctx=z3.Context())
        hard.from_string(self.enc.all_hard())
        everything = range(len(self.enc.fields))
        if self.budget is not None:
            # A budget in z3's resource units promises the same verdict on every
            # machine: no race (whose winner depends on timing), one solver at a time.
            if self._run(hard, (), None):
                self.core = []
                return self._ticks(hard.model())
            return self.check(everything)
        results: dict[str, object] = {}
        lock = threading.Lock()
        winner: list[str] = []

        def run(name: str) -> None:
            try:
                if name == "hard":
                    results[name] = self._run(hard, (), None)
                else:
                    results[name] = self.check(everything) is not None
            except BaseException as exc:  # handed to the caller below
                results[name] = exc
            with lock:
                if results[name] is True and not winner:
                    winner.append(name)  # a pass: the other question is moot
                    (self.ctx if name == "hard" else hard.ctx).interrupt()

        threads = [threading.Thread(target=run, args=(n,), daemon=True) for n in ("hard", "sw")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if winner == ["hard"]:
            self.core = []
            return self._ticks(hard.model())
        if winner == ["sw"]:
            assert self.model is not None
            return self._ticks(self.model)
        sw = results.get("sw")
        if isinstance(sw, BaseException):
            raise sw
        return None

    def check(self, on: Sequence[int] | set[int], cap: float | None = None) -> list[int] | None:
        """Delivery ticks of a schedule giving the fields ``on`` (indices), or None
        (then :attr:`core` names some of them that no schedule gives together)."""
        if self._switched is None:
            self._switched = self.z3.SolverFor("QF_LIA", ctx=self.ctx)
            self._switched.from_string(self.enc.switched())
        solver = self._switched
        if self._run(solver, [self._lits[i] for i in sorted(on)], cap):
            self.core = []
            self.model = solver.model()
            return self._ticks(self.model)
        self.core = sorted(self._index[str(lit)] for lit in solver.unsat_core())
        return None

    def hint(self, model: z3.ModelRef) -> None:
        """Start later questions from this schedule: a question that needs little
        change to it is answered fast even when it leaves much free."""
        assert self._switched is not None
        solver, z3 = self._switched, self.z3
        for name in self._unknowns():
            v = z3.Int(name, self.ctx)
            solver.set_initial_value(v, model.eval(v, model_completion=True))

    def _unknowns(self) -> list[str]:
        net = self.net
        names = [net.app_var(li, i) for li in range(net.L) for i in range(len(net.app[li]))]
        names += [net.marker_var(k, li) for k in range(net.K) for li in range(net.L)]
        for recs in net.rec:
            for r in recs:
                if isinstance(r, _Free):
                    names += [r.tau, r.o]
        return names

    def closest(self) -> tuple[list[int], set[int], z3.ModelRef] | None:
        """A schedule that gives all fields but a minimal set (no missed field can be
        given back), and that set; None when no schedule performs the scenario.

        Core-guided: a field of an unsatisfiable core must go; a core member whose
        removal alone makes the rest satisfiable is preferred, else one goes and
        the next core is taken.  Forced removals are then tried back one by one.
        """
        on = set(range(len(self.enc.fields)))
        missed: set[int] = set()
        ticks = self.check(on)
        while ticks is None:
            core = self.core
            if not core:
                return None  # no fields left to blame: the scenario itself cannot run
            for f in core:
                ticks = self.check(on - {f})
                if ticks is not None:
                    on.discard(f)
                    missed.add(f)
                    break
            else:
                on.discard(core[0])
                missed.add(core[0])
                ticks = self.check(on)
        model = self.model
        for f in sorted(missed):
            if len(missed) == 1:
                break
            back = self.check(on | {f})
            if back is not None:
                on.add(f)
                missed.discard(f)
                ticks, model = back, self.model
        assert model is not None
        return ticks, missed, model

    def possible(self, f: int, cap: float) -> bool | None:
        """Does some schedule give field f at all?  None when the solver does not
        tell within ``cap`` seconds.  A clash of f with the scenario shows at once;
        a schedule for f alone, with much left free, can take longer to build, and
        starts from the closest schedule (see :meth:`hint`)."""
        try:
            return self.check([f], cap) is not None
        except _OutOfBudget:
            if time.monotonic() >= self.deadline:
                raise
            return None

    def _ticks(self, model: z3.ModelRef) -> list[int]:
        """The delivery tick of every message: link by link, the application messages
        in FIFO order, then the red letters of each snapshot."""
        z3, net = self.z3, self.net
        names = [
            name
            for li in range(net.L)
            for name in (
                *(net.app_var(li, i) for i in range(len(net.app[li]))),
                *(net.marker_var(k, li) for k in range(net.K)),
            )
        ]
        return [model.eval(z3.Int(v, model.ctx), model_completion=True).as_long() for v in names]


def _schedule(net: _Net, ticks: Sequence[int]) -> tuple[Step, ...]:
    """The steps of the schedule with these delivery ticks (see :meth:`_Solver._ticks`)."""
    items: list[tuple[int, int, Step]] = []
    k = 0
    for t, i, e in net.events:
        if isinstance(e, Send):
            step: Step = ("SendApp", {"c": [e.src, e.dst], "m": e.n})
        else:
            step = ("StartSnapshot", {"p": e.server, "k": k})
            k += 1
        items.append((t, net.L + i, step))  # a group follows its tick's deliveries
    x = 0
    for li, (a, b) in enumerate(net.links):
        for _ in net.app[li]:
            items.append((ticks[x], li, ("ReceiveApp", {"c": [a, b], "i": 1})))
            x += 1
        for _ in range(net.K):
            items.append((ticks[x], li, ("ReceiveRedLetter", {"c": [a, b], "i": 1})))
            x += 1
    items.sort(key=lambda item: (item[0], item[1]))
    return tuple(step for _, _, step in items)


# ---------------------------------------------------------------------------
# replaying a schedule, and words


def replay_snapshots(topology: Topology, steps: Sequence[Step]) -> Recorded:
    """The snapshots a correct Chandy–Lamport token app records along ``steps``."""
    return _replay(topology, steps)[0]


def _replay(topology: Topology, steps: Sequence[Step]) -> tuple[Recorded, str | None]:
    """The recorded snapshots, and the first step the schedule cannot take (if any)."""
    tokens = {s.id: s.tokens for s in topology.servers}
    queues: dict[Link, list[int]] = {link: [] for link in topology.links}
    rec: dict[int, tuple[dict[str, int], dict[Link, list[int]], dict[Link, tuple[int, ...]]]] = {}
    problem: str | None = None

    def record(server: str, k: int, first: Link | None) -> None:
        toks, open_, closed = rec.setdefault(k, ({}, {}, {}))
        toks[server] = tokens[server]
        for link in topology.inbound(server):
            if link == first:
                closed[link] = ()
            else:
                open_[link] = []
        for link in topology.outbound(server):
            queues[link].append(-(k + 1))

    for n, (action, params) in enumerate(steps, start=1):
        if action == "StartSnapshot":
            record(str(params["p"]), int(str(params["k"])), None)
            continue
        c = params["c"]
        assert isinstance(c, list)
        link = (str(c[0]), str(c[1]))
        if action == "SendApp":
            amount = int(str(params["m"]))
            if tokens[link[0]] < amount and problem is None:
                problem = f"step {n}: {link[0]} sends {amount} tokens but holds {tokens[link[0]]}"
            tokens[link[0]] -= amount
            queues[link].append(amount)
        elif action in ("ReceiveApp", "ReceiveRedLetter"):
            if not queues[link]:
                problem = problem or f"step {n}: {action} on an empty link {link[0]} -> {link[1]}"
                continue
            head = queues[link].pop(0)
            if (head > 0) != (action == "ReceiveApp") and problem is None:
                problem = f"step {n}: {action} but the head of {link[0]} -> {link[1]} is not that"
            if head > 0:
                tokens[link[1]] += head
                for _, open_, _ in rec.values():
                    if link in open_:
                        open_[link].append(head)
            else:
                k = -head - 1
                if link[1] not in rec.get(k, ({}, {}, {}))[0]:
                    record(link[1], k, link)
                else:
                    _, open_, closed = rec[k]
                    closed[link] = tuple(open_.pop(link))
    return {k: (toks, closed) for k, (toks, _, closed) in rec.items()}, problem


# ---------------------------------------------------------------------------
# structure checks and words


def _show_msgs(ns: Sequence[int]) -> str:
    return "[" + ", ".join(f"token({n})" for n in ns) + "]"


def _structure(
    topology: Topology, scenario: Scenario, snaps: Sequence[Snap], require_all: bool
) -> str | None:
    starters = scenario.snapshot_starters
    ids = set(topology.ids)
    links = set(topology.links)
    seen: set[int] = set()
    for snap in snaps:
        if snap.id in seen:
            return f"two snapshots have the id {snap.id}"
        seen.add(snap.id)
        if snap.id >= len(starters):
            started = (
                "it starts no snapshot"
                if not starters
                else "it starts snapshots " + ", ".join(str(i) for i in range(len(starters)))
            )
            return f"snapshot {snap.id} is not started by the scenario ({started})"
        toks = snap.tokens_dict()
        for server in toks:
            if server not in ids:
                return (
                    f"snapshot {snap.id} records tokens for {server}, "
                    "which is not a server of the topology"
                )
        for server in topology.ids:
            if server not in toks:
                return f"snapshot {snap.id} records no tokens for {server}"
        for m in snap.messages:
            if (m.src, m.dst) not in links:
                return (
                    f"snapshot {snap.id} records a message on {m.src} -> {m.dst}, "
                    "which is not a link of the topology"
                )
        at_servers = sum(toks.values())
        in_flight = sum(m.n for m in snap.messages)
        if at_servers + in_flight != topology.total:
            return (
                f"snapshot {snap.id} does not conserve tokens: it records {at_servers} tokens "
                f"at the servers and {in_flight} in flight, {at_servers + in_flight} in all, "
                f"but the system holds {topology.total}"
            )
    if require_all:
        for k, starter in enumerate(starters):
            if k not in seen:
                return f"snapshot {k} (started by {starter}) was not produced"
    return None


# ---------------------------------------------------------------------------
# deciding, and explaining a fail


def _want(snaps: dict[int, Snap], f: Field) -> str:
    kind, k, where = f
    if kind == "tokens":
        return f"{snaps[k].tokens_dict()[where]} tokens"
    src, dst = where.split(" -> ")
    return _show_msgs(snaps[k].channel((src, dst)))


def _got(rec: Recorded, f: Field) -> str:
    kind, k, where = f
    toks, chans = rec.get(k, ({}, {}))
    if kind == "tokens":
        return f"{toks.get(where, '?')} tokens"
    src, dst = where.split(" -> ")
    return _show_msgs(chans.get((src, dst), ()))


def _verified(
    topology: Topology, snaps: dict[int, Snap], steps: tuple[Step, ...], fields: Sequence[Field]
) -> Recorded:
    """Replay the schedule; it must perform every step and give every field in ``fields``
    (the solver's answer is checked, not trusted)."""
    rec, problem = _replay(topology, steps)
    wrong = [f for f in fields if _want(snaps, f) != _got(rec, f)]
    if problem is not None or wrong:
        what = problem or f"it records {_got(rec, wrong[0])} for {wrong[0]}"
        raise InternalError(f"the outcome judge built a schedule that does not hold: {what}")
    return rec


def judge_outcome(
    topology: Topology,
    scenario: Scenario,
    snaps: Sequence[Snap],
    *,
    require_all: bool = True,
    ticks: bool = True,
    budget: int | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    explain: float = DEFAULT_EXPLAIN,
) -> Judgement:
    """Decide whether some schedule of ``scenario`` yields exactly ``snaps``.

    The schedules are the simulator's (see the module docstring); ``ticks=False``
    drops its tick structure, for programs that schedule themselves.
    ``require_all`` demands one snap per snapshot the scenario starts.  ``budget``
    (z3 resource units, deterministic) and ``timeout`` (seconds) bound the
    decision: past either the answer is ``unknown``.  A fail is explained by the
    closest schedule if one is found within ``explain`` seconds (0: do not look),
    else by a set of recorded fields that cannot all hold together.
    """
    started = time.monotonic()
    check_scenario(topology, scenario)
    if not topology.strongly_connected():
        raise InputError(
            "the topology is not strongly connected, so a snapshot may never complete",
            code="RL-INPUT-COS418",
        )
    by_id = {s.id: s for s in snaps}
    n_fields = len(by_id) * (len(topology.servers) + len(topology.links))
    problem = _structure(topology, scenario, snaps, require_all)
    if problem is not None:
        return Judgement(Verdict.FAIL, problem, fields=n_fields)
    net = _Net(topology, scenario, ticks)
    enc = _encode(net, by_id)
    solver = _Solver(net, enc, budget, started + timeout)

    def done(verdict: Verdict, message: str, **more: object) -> Judgement:
        return Judgement(
            verdict,
            message,
            fields=n_fields,
            effort=solver.effort,
            seconds=time.monotonic() - started,
            **more,  # type: ignore[arg-type]
        )

    try:
        ticks_ = solver.decide()
        if ticks_ is not None:
            steps = _schedule(net, ticks_)
            _verified(topology, by_id, steps, enc.fields)
            return done(
                Verdict.PASS,
                f"a FIFO schedule of {len(steps)} steps yields these snapshots",
                witness=steps,
                matched=n_fields,
            )
        clash = solver.core
        solver.deadline = min(solver.deadline, time.monotonic() + explain)
        try:
            message, closest, matched = _explain(topology, by_id, net, enc, solver)
        except _OutOfBudget:
            if solver.budget is not None and solver.effort >= solver.budget:
                raise
            return done(Verdict.FAIL, _clash(by_id, enc, clash, explain))
        return done(Verdict.FAIL, message, closest=closest, matched=matched)
    except _OutOfBudget:
        limit = (
            f"the solver's budget of {budget:,} units"
            if budget is not None and solver.effort >= budget
            else f"the time limit of {timeout:g} s"
        )
        return done(
            Verdict.UNKNOWN,
            f"{limit} ran out before a FIFO schedule yielding these snapshots was found or "
            "ruled out",
        )


def _clash(snaps: dict[int, Snap], enc: _Encoding, core: Sequence[int], explain: float) -> str:
    """A fail explained without the closest schedule: fields that clash."""
    lines = [
        "no FIFO schedule of the scenario yields these snapshots; these fields cannot all "
        "hold together:"
    ]
    for i in core:
        kind, k, where = enc.fields[i]
        want = _want(snaps, enc.fields[i])
        what = f"{where} with {want}" if kind == "tokens" else f"{want} on {where}"
        lines.append(f"- snapshot {k} records {what}")
    if explain > 0:
        lines.append(
            f"(the closest schedule was not found within {explain:g} s; a longer explanation "
            "time finds it)"
        )
    return "\n".join(lines)


def _explain(
    topology: Topology,
    snaps: dict[int, Snap],
    net: _Net,
    enc: _Encoding,
    solver: _Solver,
) -> tuple[str, tuple[Step, ...] | None, int]:
    """A fail's explanation, closest schedule and matched fields: the closest
    schedule misses the fewest fields; each field it misses is listed, saying
    whether some schedule gives that field at all."""
    head = "no FIFO schedule of the scenario yields these snapshots"
    best = solver.closest()
    if best is None:
        return (
            f"{head}: no schedule can perform every event and complete every snapshot",
            None,
            0,
        )
    ticks_, missed, model = best
    solver.hint(model)
    steps = _schedule(net, ticks_)
    kept = [f for i, f in enumerate(enc.fields) if i not in missed]
    rec = _verified(topology, snaps, steps, kept)
    lines = [head + ":"]
    for i in sorted(missed):
        f = enc.fields[i]
        kind, k, where = f
        want, got = _want(snaps, f), _got(rec, f)
        what = f"{where} with {want}" if kind == "tokens" else f"{want} on {where}"
        alone = solver.possible(i, _ALONE_CAP)
        if alone is False:
            lines.append(
                f"- no FIFO schedule records {what} for snapshot {k} "
                f"(the closest schedule records {got})"
            )
        elif alone:
            lines.append(
                f"- snapshot {k} records {what}: some schedule gives that, but none together "
                f"with the other fields (the closest schedule records {got})"
            )
        else:
            lines.append(
                f"- snapshot {k} records {what}: no schedule gives that together with the "
                f"other fields (the closest schedule records {got})"
            )
    matched = len(enc.fields) - len(missed)
    lines.append(
        f"the closest schedule ({len(steps)} steps) matches {matched} of {len(enc.fields)} fields"
    )
    return "\n".join(lines), steps, matched
