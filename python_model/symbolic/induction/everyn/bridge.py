"""Between the z3 encoding and the plain semantics: finite domains for the sorts
(a grounded question speaks of one finite network), a z3 model read back as a
concrete network, states, prophecy and step, and a concrete world pinned down as
z3 constraints (the tests compare the two semantics on it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from redletter.errors import InternalError
from redletter.python_model.symbolic.induction.apps import ConcreteApp
from redletter.python_model.symbolic.induction.everyn.concrete import (
    Chan,
    Item,
    Net,
    Prophecy,
    Reality,
    Step,
    ahead,
    letters,
    messages,
)
from redletter.python_model.symbolic.induction.everyn.steps import Disjunct
from redletter.python_model.symbolic.induction.everyn.terms import Prophecy as ZProphecy
from redletter.python_model.symbolic.induction.everyn.vocab import Expr, State, Vocabulary
from redletter.python_model.z3env import z3

__all__ = ["Domains", "Reader", "domains", "pin_prophecy", "pin_reality", "pin_rigid"]

_CODE = "RL-INTERNAL-INDUCTION"


@dataclass
class Domains:
    """Constants of the three quantified sorts (a finite network: machines, snapshots,
    messages), and of the application's sorts as the pinning needs them."""

    machines: list[Expr]
    snapshots: list[Expr]
    messages: list[Expr]
    locals: dict[int, Expr] = field(default_factory=dict)
    values: dict[int, Expr] = field(default_factory=dict)
    events: dict[int, Expr] = field(default_factory=dict)

    def mapping(self, v: Vocabulary) -> dict[Any, Sequence[Expr]]:
        """For :func:`..vocab.grounded`."""
        s = v.sorts
        return {s.machine: self.machines, s.snapshot: self.snapshots, s.message: self.messages}

    def closed(self, v: Vocabulary, terms: Sequence[Expr]) -> list[Expr]:
        """Every term of a quantified sort among ``terms`` (the step's parameters,
        kappa), and every message's buffer, is one of the domain's constants: the
        finite network is closed."""
        dom = self.mapping(v)
        out = []
        for t in terms:
            if t.sort() in dom:
                out.append(z3.Or([t == c for c in dom[t.sort()]]))
        r = v.rigid
        for x in self.messages:
            out.append(z3.Or([r.src(x) == c for c in self.machines]))
            out.append(z3.Or([r.dst(x) == c for c in self.machines]))
        return out


def domains(v: Vocabulary, machines: int, snapshots: int, messages: int, stem: str = "") -> Domains:
    s = v.sorts
    return Domains(
        [z3.Const(f"{stem}M{i}", s.machine) for i in range(machines)],
        [z3.Const(f"{stem}K{i}", s.snapshot) for i in range(snapshots)],
        [z3.Const(f"{stem}X{i}", s.message) for i in range(messages)],
    )


# ------------------------------------------------------------------------- pinning


def _const(d: dict[int, Expr], sort: Any, stem: str, x: int) -> Expr:
    if x not in d:
        d[x] = z3.Const(f"{stem}{x}", sort)
    return d[x]


def pin_rigid(v: Vocabulary, dom: Domains, net: Net) -> list[Expr]:
    """The network, the messages and the starters of ``net`` (distinct constants)."""
    r, s = v.rigid, v.sorts
    M, K, X = dom.machines, dom.snapshots, dom.messages
    out = [z3.Distinct(*M) if len(M) > 1 else z3.BoolVal(True)]
    out += [z3.Distinct(*K)] if len(K) > 1 else []
    out += [z3.Distinct(*X)] if len(X) > 1 else []
    links = set(net.links)
    for p in range(net.machines):
        for q in range(net.machines):
            out.append(r.link(M[p], M[q]) == ((p, q) in links))
    for m, (a, b, val) in enumerate(net.msgs):
        out += [
            r.src(X[m]) == M[a],
            r.dst(X[m]) == M[b],
            r.val(X[m]) == _const(dom.values, s.value, "V", val),
        ]
        for n in range(len(net.msgs)):
            out.append(r.lt(X[m], X[n]) == net.lt(m, n))
    for k in range(net.snapshots):
        for p in range(net.machines):
            out.append(r.starter(K[k], M[p]) == ((k, p) in net.starters))
    return out


def pin_reality(v: Vocabulary, dom: Domains, net: Net, st: State, w: Reality) -> list[Expr]:
    """State ``st`` is ``w``: every symbol where it means something (``bl`` of the
    messages in their buffers, ``lo`` of two letters in one buffer, ``rlt`` of two
    recorded messages, ``rm`` of red machines); elsewhere it is left free, as the
    encoding leaves it."""
    s = v.sorts
    M, K, X = dom.machines, dom.snapshots, dom.messages

    def L(x: int) -> Expr:
        return _const(dom.locals, s.local, "L", x)

    out = [st.loc(M[p]) == L(w.loc[p]) for p in range(net.machines)]
    for m in range(len(net.msgs)):
        out += [st.sent(X[m]) == (m in w.sent), st.rcvd(X[m]) == (m in w.rcvd)]
    chans = {c: i for i, c in enumerate(net.links)}
    for k in range(net.snapshots):
        for p in range(net.machines):
            out.append(st.red(K[k], M[p]) == (p in w.red[k]))
            if p in w.red[k]:
                rm = w.rm[k][p]
                assert rm is not None
                out.append(st.rm(K[k], M[p]) == L(rm))
        for p in range(net.machines):
            for q in range(net.machines):
                c = (p, q)
                b: tuple[Item, ...] = w.bufs[chans[c]] if c in chans else ()
                out.append(st.rb(K[k], M[p], M[q]) == (c in w.rb[k]))
                out.append(st.has(K[k], M[p], M[q]) == (letters(b, k) > 0))
                before = ahead(b, k)
                for m in messages(b):
                    out.append(st.bl(K[k], X[m]) == (m in before))
                for j in range(net.snapshots):
                    if j != k and letters(b, j) and letters(b, k):
                        out.append(
                            st.lo(K[j], K[k], M[p], M[q]) == (b.index(("r", j)) < b.index(("r", k)))
                        )
        recorded = {m: (i, n) for i, stream in enumerate(w.rec[k]) for n, m in enumerate(stream)}
        for m in range(len(net.msgs)):
            out.append(st.rec(K[k], X[m]) == (m in recorded))
            for n in range(len(net.msgs)):
                if m in recorded and n in recorded and net.chan(m) == net.chan(n):
                    out.append(st.rlt(K[k], X[m], X[n]) == (recorded[m][1] < recorded[n][1]))
    return out


def pin_prophecy(v: Vocabulary, dom: Domains, net: Net, pr: ZProphecy, w: Prophecy) -> list[Expr]:
    s = v.sorts
    M, K, X = dom.machines, dom.snapshots, dom.messages
    out = [pr.kappa == K[w.kappa]]
    out += [pr.sig(M[p]) == _const(dom.locals, s.local, "L", w.sig[p]) for p in range(net.machines)]
    for m in range(len(net.msgs)):
        out += [pr.ws(X[m]) == (m in w.ws), pr.acc(X[m]) == (m in w.acc)]
    for p in range(net.machines):
        for q in range(net.machines):
            out.append(pr.accl(M[p], M[q]) == ((p, q) in w.accl))
    return out


def pin_app(
    v: Vocabulary, dom: Domains, net: Net, app: ConcreteApp, events: Sequence[int]
) -> list[Expr]:
    """The application's operators on every local state and value the domains have
    constants for (call after pinning the states: their locals must be there)."""
    r, s = v.rigid, v.sorts
    M, K = dom.machines, dom.snapshots

    def L(x: int) -> Expr:
        return _const(dom.locals, s.local, "L", x)

    out: list[Expr] = []
    locals_ = sorted(dom.locals)
    values = sorted({net.val(m) for m in range(len(net.msgs))})
    for val in values:
        _const(dom.values, s.value, "V", val)
    evs = [_const(dom.events, s.event, "E", e) for e in events]
    for p in range(net.machines):
        for x in locals_:
            for k in range(net.snapshots):
                out.append(r.may_start(M[p], K[k], L(x)) == app.may_start(p, k, x))
            for e, ez in zip(events, evs, strict=True):
                ok = app.events(p, x, e)
                out.append(r.events(M[p], L(x), ez) == ok)
                out.append(r.after_event(M[p], L(x), ez) == L(app.after_event(p, x, e)))
            for q in range(net.machines):
                for val in values:
                    vz = dom.values[val]
                    out += [
                        r.sendable(M[p], M[q], L(x), vz) == app.sendable(p, q, x, val),
                        r.after_send(M[p], M[q], L(x), vz) == L(app.after_send(p, q, x, val)),
                        r.can_receive(M[p], M[q], L(x), vz) == app.can_receive(p, q, x, val),
                        r.after_receive(M[p], M[q], L(x), vz) == L(app.after_receive(p, q, x, val)),
                    ]
    distinct = [list(d.values()) for d in (dom.locals, dom.values, dom.events)]
    out += [z3.Distinct(*xs) for xs in distinct if len(xs) > 1]
    return out


# ------------------------------------------------------------------------- reading a model


class Reader:
    """A z3 model of a grounded question, read as one finite network: the machines,
    snapshots and messages are the distinct values of the domain's constants (in
    order of first appearance); the application's values are numbered as met."""

    def __init__(self, v: Vocabulary, model: z3.ModelRef, dom: Domains, names: bool = True) -> None:
        self.v, self.model = v, model

        def distinct(consts: Sequence[Expr]) -> list[Expr]:
            out: list[Expr] = []
            for c in consts:
                e = model.eval(c, model_completion=True)
                if not any(e.eq(x) for x in out):
                    out.append(e)
            return out

        self.machines = distinct(dom.machines)
        self.snapshots = distinct(dom.snapshots)
        self.messages = distinct(dom.messages)
        self.sorts: dict[str, list[Expr]] = {"local": [], "value": [], "event": []}

    def _index(self, elems: list[Expr], e: Expr, what: str) -> int:
        e = self.model.eval(e, model_completion=True)
        for i, x in enumerate(elems):
            if x.eq(e):
                return i
        raise InternalError(
            f"the counterexample's {what} {e} is outside its finite network", code=_CODE
        )

    def machine(self, e: Expr) -> int:
        return self._index(self.machines, e, "machine")

    def snapshot(self, e: Expr) -> int:
        return self._index(self.snapshots, e, "snapshot")

    def message(self, e: Expr) -> int:
        return self._index(self.messages, e, "message")

    def number(self, kind: str, e: Expr) -> int:
        """An element of the application's sort ``kind``, numbered as met."""
        e = self.model.eval(e, model_completion=True)
        elems = self.sorts[kind]
        for i, x in enumerate(elems):
            if x.eq(e):
                return i
        elems.append(e)
        return len(elems) - 1

    def element(self, kind: str, i: int) -> Expr:
        return self.sorts[kind][i]

    def true(self, e: Expr) -> bool:
        return bool(z3.is_true(self.model.eval(e, model_completion=True)))

    def net(self) -> Net:
        r = self.v.rigid
        M, K, X = self.machines, self.snapshots, self.messages
        n = len(M)
        links = tuple((p, q) for p in range(n) for q in range(n) if self.true(r.link(M[p], M[q])))
        msgs = tuple(
            (self.machine(r.src(x)), self.machine(r.dst(x)), self.number("value", r.val(x)))
            for x in X
        )
        rank = tuple(
            sum(1 for y in range(len(X)) if self.true(r.lt(X[y], X[x]))) for x in range(len(X))
        )
        starters = frozenset(
            (k, p) for k in range(len(K)) for p in range(n) if self.true(r.starter(K[k], M[p]))
        )
        return Net(n, links, len(K), msgs, rank, starters)

    def reality(self, net: Net, st: State) -> Reality:
        M, K, X = self.machines, self.snapshots, self.messages
        n, nk = net.machines, net.snapshots
        loc = tuple(self.number("local", st.loc(M[p])) for p in range(n))
        sent = frozenset(m for m in range(len(X)) if self.true(st.sent(X[m])))
        rcvd = frozenset(m for m in range(len(X)) if self.true(st.rcvd(X[m])))
        red = tuple(
            frozenset(p for p in range(n) if self.true(st.red(K[k], M[p]))) for k in range(nk)
        )
        rb = tuple(
            frozenset(c for c in net.links if self.true(st.rb(K[k], M[c[0]], M[c[1]])))
            for k in range(nk)
        )
        rm = tuple(
            tuple(
                self.number("local", st.rm(K[k], M[p])) if p in red[k] else None for p in range(n)
            )
            for k in range(nk)
        )
        bufs = tuple(self._buffer(net, st, c, sent, rcvd) for c in net.links)
        rec = tuple(tuple(self._stream(net, st, k, c) for c in net.links) for k in range(nk))
        return Reality(loc, sent, rcvd, bufs, red, rb, rm, rec)

    def _buffer(
        self, net: Net, st: State, c: Chan, sent: frozenset[int], rcvd: frozenset[int]
    ) -> tuple[Item, ...]:
        M, K, X = self.machines, self.snapshots, self.messages
        ms = [m for m in net.on(c) if m in sent and m not in rcvd]
        present = [k for k in range(net.snapshots) if self.true(st.has(K[k], M[c[0]], M[c[1]]))]
        cut = {k: sum(1 for m in ms if self.true(st.bl(K[k], X[m]))) for k in present}
        for k in present:
            if any(self.true(st.bl(K[k], X[m])) for m in ms[cut[k] :]):
                raise InternalError(
                    f"the red letter k{k + 1} of {net.chan_name(c)} is not a cut of its buffer",
                    code=_CODE,
                )

        def later(j: int, k: int) -> bool:  # letter j comes after letter k at one cut
            return self.true(st.lo(K[k], K[j], M[c[0]], M[c[1]]))

        order = sorted(
            present, key=lambda k: (cut[k], sum(1 for j in present if j != k and later(k, j)))
        )
        out: list[Item] = []
        at = 0
        for k in order:
            out += [("m", m) for m in ms[at : cut[k]]]
            out.append(("r", k))
            at = cut[k]
        out += [("m", m) for m in ms[at:]]
        return tuple(out)

    def _stream(self, net: Net, st: State, k: int, c: Chan) -> tuple[int, ...]:
        K, X = self.snapshots, self.messages
        ms = [m for m in net.on(c) if self.true(st.rec(K[k], X[m]))]
        return tuple(
            sorted(
                ms,
                key=lambda m: sum(1 for n in ms if n != m and self.true(st.rlt(K[k], X[n], X[m]))),
            )
        )

    def prophecy(self, net: Net, pr: ZProphecy) -> Prophecy:
        M, X = self.machines, self.messages
        n = net.machines
        return Prophecy(
            self.snapshot(pr.kappa),
            frozenset(m for m in range(len(X)) if self.true(pr.ws(X[m]))),
            frozenset(m for m in range(len(X)) if self.true(pr.acc(X[m]))),
            frozenset((p, q) for p in range(n) for q in range(n) if self.true(pr.accl(M[p], M[q]))),
            tuple(self.number("local", pr.sig(M[p])) for p in range(n)),
        )

    def step(self, d: Disjunct) -> Step:
        ps = d.params
        if d.action in ("SendApp", "ReceiveApp"):
            return Step(d.action, m=self.message(ps["m"]))
        if d.action == "InternalEvent":
            return Step(d.action, p=self.machine(ps["p"]), e=self.number("event", ps["e"]))
        if d.action == "ReceiveRedLetter":
            return Step(
                d.action, p=self.machine(ps["p"]), q=self.machine(ps["q"]), k=self.snapshot(ps["k"])
            )
        return Step(d.action, p=self.machine(ps["p"]), k=self.snapshot(ps["k"]))

    def app(self) -> ConcreteApp:
        """The application's operators as the model interprets them (each value asked
        for is noted in ``calls``, with the machines' names)."""
        r = self.v.rigid
        M, K = self.machines, self.snapshots
        calls: list[str] = []

        def note(name: str, args: Sequence[str], value: str) -> None:
            text = f"{name}({', '.join(args)}) = {value}"
            if text not in calls:
                calls.append(text)

        def pred(f: Any, name: str, *args: tuple[str, int]) -> bool:
            zs = [self._arg(kind, i) for kind, i in args]
            value = self.true(f(*zs))
            note(name, [self._shown(kind, i) for kind, i in args], str(value).lower())
            return value

        def fun(f: Any, name: str, *args: tuple[str, int]) -> int:
            zs = [self._arg(kind, i) for kind, i in args]
            value = self.number("local", f(*zs))
            note(name, [self._shown(kind, i) for kind, i in args], f"s{value}")
            return value

        del M, K
        return ConcreteApp(
            sendable=lambda p, q, s, x: pred(
                r.sendable, "AppSendable", ("m", p), ("m", q), ("local", s), ("value", x)
            ),
            after_send=lambda p, q, s, x: fun(
                r.after_send, "AppAfterSend", ("m", p), ("m", q), ("local", s), ("value", x)
            ),
            events=lambda p, s, e: pred(
                r.events, "AppEvents", ("m", p), ("local", s), ("event", e)
            ),
            after_event=lambda p, s, e: fun(
                r.after_event, "AppAfterEvent", ("m", p), ("local", s), ("event", e)
            ),
            can_receive=lambda p, q, s, x: pred(
                r.can_receive, "AppCanReceive", ("m", p), ("m", q), ("local", s), ("value", x)
            ),
            after_receive=lambda p, q, s, x: fun(
                r.after_receive, "AppAfterReceive", ("m", p), ("m", q), ("local", s), ("value", x)
            ),
            may_start=lambda p, k, s: pred(
                r.may_start, "AppMayStart", ("m", p), ("k", k), ("local", s)
            ),
            calls=calls,
        )

    def _arg(self, kind: str, i: int) -> Expr:
        if kind == "m":
            return self.machines[i]
        if kind == "k":
            return self.snapshots[i]
        elems = self.sorts[kind]
        if i < len(elems):
            return elems[i]
        # a value the model never named: any element of the sort will do, named apart
        raise InternalError(f"the counterexample has no {kind} number {i}", code=_CODE)

    def _shown(self, kind: str, i: int) -> str:
        return {
            "m": f"p{i + 1}",
            "k": f"k{i + 1}",
            "local": f"s{i}",
            "value": f"v{i}",
            "event": f"e{i}",
        }[kind]
