"""The every-N conjuncts along a run of the Python model: which hold in each state.

A run of the model (its states, the message identities the space-time diagram
gives each buffer's contents, its steps) is read as a run of the every-N
interpreter: messages keep their identities, each snapshot's prophecy is read from
the run itself (:func:`.concrete.prophecy_of_run`), and every conjunct is evaluated
in every state (:mod:`.labels`), with the instances that fail.  For a correct run
all of them hold in every state; for a mutant the first to break shows where.

A model whose overrides put into a state what the every-N state cannot hold (a red
letter recorded as a message) has no such reading; :attr:`Track.why` says so.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import redletter.python_model.symbolic.induction.everyn.labels as lb
from redletter.python_model.config import ModelConfig
from redletter.python_model.state import State
from redletter.python_model.symbolic.induction.apps import ConcreteApp
from redletter.python_model.symbolic.induction.everyn.concrete import (
    Chan,
    Item,
    Net,
    Reality,
    Step,
    prophecy_of_run,
)
from redletter.python_model.symbolic.induction.everyn.invariant import CONJUNCTS
from redletter.python_model.symbolic.induction.everyn.replay import all_labels

__all__ = ["STEP_OBLIGATIONS", "Track", "track"]

Ids = Sequence[Sequence[int]]


#: the obligations of a step, beside the conjuncts (Lemma 0's and Lemma 1's shadows)
STEP_OBLIGATIONS = (
    "AtMostOneRedLetter",
    "ShadowStartsInInitialState",
    "WhiteActionPossible",
    "WhiteActionCopied",
    "SkipOtherwise",
    "RedActionPossible",
    "RedActionCopied",
    "Lemma0EndsInSnapshotState",
    "Lemma1StartsInSnapshotState",
    "Lemma1EndsInFinalState",
    "Lemma1SnapshotIsRecorded",
)


@dataclass(frozen=True)
class Track:
    """Per state, per conjunct, the instances that fail (empty: it holds; the
    prophecy's conjuncts for every snapshot, instances named ``k1: m3``); and per
    state, per obligation of the step into it (and of the state itself), the
    snapshots for which it fails (``Lemma 0``/``k1`` for Lemma 0's shadow, whose
    obligations are quantified over every snapshot at once)."""

    available: bool
    why: str
    failures: tuple[Mapping[str, tuple[str, ...]], ...]
    obligations: tuple[Mapping[str, tuple[str, ...]], ...] = ()

    def holds(self, name: str) -> list[bool]:
        return [not f[name] for f in self.failures]

    def first_broken(self) -> tuple[int, str] | None:
        """The first state where a conjunct or an obligation fails, and which (the
        conjuncts first, in the order of :data:`CONJUNCTS`)."""
        for n, f in enumerate(self.failures):
            for name in CONJUNCTS:
                if f.get(name):
                    return n, name
            obs = self.obligations[n] if n < len(self.obligations) else {}
            for name in STEP_OBLIGATIONS:
                if obs.get(name):
                    return n, name
        return None


class _Unreadable(Exception):
    pass


def _reality(
    cfg: ModelConfig,
    net: Net,
    s: State,
    ids: Ids,
    sent: frozenset[int],
    rec: tuple[tuple[tuple[int, ...], ...], ...],
    number: dict[Hashable, int],
) -> Reality:
    def local(x: Hashable) -> int:
        return number.setdefault(x, len(number))

    bufs: list[tuple[Item, ...]] = []
    for c in range(len(cfg.chans)):
        items: list[Item] = []
        for v, mid in zip(s.buf[c], ids[c], strict=True):
            items.append(("m", mid) if v >= 0 else ("r", cfg.snap_index[-v]))
        bufs.append(tuple(items))
    inbuf = {x for b in bufs for kind, x in b if kind == "m"}
    nk = len(cfg.snaps)
    red = tuple(frozenset(p for p in range(net.machines) if s.red[k] >> p & 1) for k in range(nk))
    return Reality(
        tuple(local(x) for x in s.local),
        sent,
        frozenset(sent - inbuf),
        tuple(bufs),
        red,
        tuple(
            frozenset(net.links[c] for c in range(len(cfg.chans)) if s.red_buf[k] >> c & 1)
            for k in range(nk)
        ),
        tuple(
            tuple(
                local(x) if p in red[k] and (x := s.rec_machine[k][p]) is not None else None
                for p in range(net.machines)
            )
            for k in range(nk)
        ),
        rec,
    )


def track(
    cfg: ModelConfig,
    states: Sequence[State],
    ids: Sequence[Ids],
    steps: Sequence[tuple[str, Mapping[str, object]]],
) -> Track:
    """The every-N conjuncts in every state of a run of the model (``ids[t][c]``: the
    identities of buffer ``c``'s elements in ``states[t]``, red letters included)."""
    try:
        return _track(cfg, states, ids, steps)
    except _Unreadable as e:
        return Track(False, str(e), ())


def _track(
    cfg: ModelConfig,
    states: Sequence[State],
    ids: Sequence[Ids],
    steps: Sequence[tuple[str, Mapping[str, object]]],
) -> Track:
    n, nk = len(cfg.procs), len(cfg.snaps)
    links: tuple[Chan, ...] = tuple(zip(cfg.chan_src, cfg.chan_dst, strict=True))
    # every application message of the run, numbered by its id, in send order
    msgs: dict[int, tuple[int, int, int]] = {}
    rank: dict[int, int] = {}
    for s, row in zip(states, ids, strict=True):
        for c, (b, bids) in enumerate(zip(s.buf, row, strict=True)):
            for v, mid in zip(b, bids, strict=True):
                if v >= 0 and mid not in msgs:
                    msgs[mid] = (links[c][0], links[c][1], v)
                    rank[mid] = sum(1 for x in msgs.values() if x[:2] == links[c]) - 1
    order = sorted(msgs)
    index = {mid: i for i, mid in enumerate(order)}
    starters = frozenset((k, p) for k in range(nk) for p in range(n) if cfg.starters[k] >> p & 1)
    net = Net(
        n,
        links,
        nk,
        tuple(msgs[m] for m in order),
        tuple(rank[m] for m in order),
        starters,
        tuple(cfg.procs),
    )
    renamed = [[[index.get(x, -1) for x in bids] for bids in row] for row in ids]
    newest_first = cfg.overrides.get("RecordMessage") == "RecordNewestFirst"
    number: dict[Hashable, int] = {}
    sent: set[int] = set()
    rec = [[() for _ in links] for _ in range(nk)]  # type: list[list[tuple[int, ...]]]
    realities: list[Reality] = []
    id_steps = _id_steps(cfg, states, renamed, steps)
    for t, s in enumerate(states):
        row = renamed[t]
        sent |= {
            x for c, bids in enumerate(row) for v, x in zip(s.buf[c], bids, strict=True) if v >= 0
        }
        if t > 0:
            prev = states[t - 1]
            got = id_steps[t - 1].m if id_steps[t - 1].action == "ReceiveApp" else None
            for k in range(nk):
                for c in range(len(links)):
                    old, new = prev.rec_buf[k][c], s.rec_buf[k][c]
                    if old == new:
                        continue
                    if got is None or len(new) != len(old) + 1:
                        raise _Unreadable(
                            f"step {t}: the recorded stream of "
                            f"{cfg.chans[c][0]}→{cfg.chans[c][1]} in snapshot "
                            f"{cfg.snaps[k]} changes without a message received into it (this "
                            "model records a red letter as a message, which the every-N state "
                            "cannot hold)"
                        )
                    stream = rec[k][c]
                    rec[k][c] = (got, *stream) if newest_first else (*stream, got)
        realities.append(
            _reality(
                cfg,
                net,
                s,
                row,
                frozenset(sent),
                tuple(tuple(x) for x in rec),
                number,
            )
        )
    failures: list[dict[str, tuple[str, ...]]] = []
    prophecies = [prophecy_of_run(net, realities, id_steps, k) for k in range(nk)]
    app = _app(cfg, number)
    obligations: list[dict[str, tuple[str, ...]]] = []
    for t, r in enumerate(realities):
        obs: dict[str, list[str]] = {name: [] for name in STEP_OBLIGATIONS}
        if t > 0:
            st, before = id_steps[t - 1], realities[t - 1]
            for name, ok in all_labels(net, app, "reality", before, st, r, None).items():
                if name == "AtMostOneRedLetter" and not ok:
                    obs[name].append("some buffer")
            for k in range(nk):
                for name, ok in lb.shadow_step(net, app, before, st, r, k).items():
                    if not ok:
                        obs[name].append(f"Lemma 0, k{k + 1}")
        for k, pr in enumerate(prophecies):
            if t > 0:
                labels = all_labels(net, app, "shadow1", realities[t - 1], id_steps[t - 1], r, pr)
                for name, ok in labels.items():
                    if not ok:
                        obs[name].append(f"k{k + 1}")
            for name, ok in lb.state_labels(net, r, pr).items():
                if name.startswith("Lemma1") and not ok:
                    obs[name].append(f"k{k + 1}")
        for k in range(nk):
            if lb.complete(net, r, k) and not lb.lemma0_ends(net, r, k):
                obs["Lemma0EndsInSnapshotState"].append(f"k{k + 1}")
        obligations.append({name: tuple(x) for name, x in obs.items()})
    for r in realities:
        f = {name: tuple(bad) for name, bad in lb.reality_failures(net, r).items()}
        for name in CONJUNCTS:
            if CONJUNCTS[name].layer != "prophecy":
                continue
            bad: list[str] = []
            for k, pr in enumerate(prophecies):
                bad += [f"k{k + 1}: {x}" for x in lb.prophecy_failures(net, r, pr)[name]]
            f[name] = tuple(bad)
        failures.append(f)
    return Track(True, "", tuple(failures), tuple(obligations))


def _app(cfg: ModelConfig, number: dict[Hashable, int]) -> ConcreteApp:
    """The model's application over the numbers :func:`_reality` gives its local
    states (numbering new ones as it meets them)."""
    app = cfg.app
    back: dict[int, Hashable] = {}

    def local(n: int) -> Hashable:
        if len(back) != len(number):
            back.update({v: k for k, v in number.items()})
        return back[n]

    def num(x: Hashable) -> int:
        return number.setdefault(x, len(number))

    return ConcreteApp(
        sendable=lambda p, q, s, v: v in app.sendable(p, q, local(s)),
        after_send=lambda p, q, s, v: num(app.after_send(p, q, v, local(s))),
        events=lambda p, s, e: e in app.events(p, local(s)),
        after_event=lambda p, s, e: num(app.after_event(p, e, local(s))),
        can_receive=lambda p, q, s, v: app.can_receive(p, q, v, local(s)),
        after_receive=lambda p, q, s, v: num(app.after_receive(p, q, v, local(s))),
        may_start=lambda p, k, s: app.may_start(p, cfg.snaps[k], local(s)),
    )


def _id_steps(
    cfg: ModelConfig,
    states: Sequence[State],
    ids: Sequence[Sequence[Sequence[int]]],
    steps: Sequence[tuple[str, Mapping[str, object]]],
) -> list[Step]:
    out: list[Step] = []
    for t, (action, params) in enumerate(steps):
        if action in ("SendApp", "ReceiveApp", "ReceiveRedLetter"):
            raw = params["c"]
            assert isinstance(raw, list | tuple)
            c = cfg.chan_index[(str(raw[0]), str(raw[1]))]
            before, after = states[t], states[t + 1]
            if action == "SendApp":
                new = [x for x in ids[t + 1][c] if x not in ids[t][c]]
                if len(new) != 1 or new[0] < 0:
                    raise _Unreadable(
                        f"step {t + 1}: a send puts {len(new)} messages in its buffer"
                    )
                out.append(Step(action, m=new[0]))
                continue
            i = int(str(params["i"])) - 1
            v = before.buf[c][i]
            if action == "ReceiveApp":
                out.append(Step(action, m=ids[t][c][i]))
            else:
                out.append(Step(action, p=cfg.chan_src[c], q=cfg.chan_dst[c], k=cfg.snap_index[-v]))
            del after
        elif action == "InternalEvent":
            out.append(Step(action, p=cfg.proc_index[str(params["p"])], e=int(str(params["e"]))))
        else:
            k = cfg.snap_index[int(str(params["k"]))]
            out.append(Step(action, p=cfg.proc_index[str(params["p"])], k=k))
    return out
