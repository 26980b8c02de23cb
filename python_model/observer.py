r"""ObserverSnapshot.tla (the observer with a piggybacked token, seeds/003) mirrored
1:1, as an :class:`~redletter.python_model.engine.Engine`.

The state (:class:`ObsState`) has the spec's variables in order, over small
integers: machines, buffers and snapshots are indices (sorted by name / id), sets of
machines are bitmasks, a message is ``(val, toks)`` with ``toks`` a bitmask of
snapshot indices, and a **bag** is a sorted tuple of ``(element, copies)`` pairs --
canonical, so equal bags are equal tuples:

* ``buf[c]``: a bag of messages; ``recBuf[k][c]``: a bag of values;
* ``nSent[c]`` / ``nRecv[c]``: counts; ``repSent[k][c]`` / ``repRecv[k][c]``: the
  counts reported with the saved states, ``None`` outside the function's domain;
* ``recMachine[k][p]``: the saved state, ``None`` outside the domain;
* ``S0[k]`` / ``Sf[k]``: a global app state (locals, and per buffer its values in
  increasing order, as the spec's ``AppState`` shows a bag) or ``None``;
* ``whiteActs[k]`` / ``redActs[k]``: application actions ``(kind, p, q, val)``.

Each action is a pure function named after the spec's (``_send_app``,
``_receive``, ``_start_snapshot``, ``_receive_request``, ``_declare_complete``);
:func:`observer_successors` enumerates ``Next``'s bindings in its order, one
successor per binding (``ReceiveApp(c) == \E m \in Elems(buf[c])``: one per
distinct message, not per copy).  The overridable step is ``CompletionRule``
(``AllSavedStatesIn``: the must-fail model's observer that does not count).

Action instances, numbered densely (``nc`` buffers, ``np`` machines, ``ns``
snapshots)::

    SendApp(c)              c
    InternalEvent(p)        nc + p
    ReceiveApp(c)           nc + np + c
    StartSnapshot(k)        2nc + np + k
    ReceiveRequest(p, k)    2nc + np + ns + p * ns + k
    DeclareComplete(k)      2nc + np + ns + np*ns + k
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, TypeAlias

from redletter.errors import InputError, SpecError
from redletter.python_model.apps import App, make_app
from redletter.python_model.engine import ActionInstance, Params, RawParams, state_fingerprint
from redletter.python_model.state import (
    ACT_INTERNAL,
    ACT_KINDS,
    ACT_RECEIVE,
    ACT_SEND,
    Act,
    GState,
    Local,
    _items,
    act_to_tla,
    gstate_to_tla,
)
from redletter.python_model.values import Record, Value, apply_fn, fcn
from redletter.python_model.values import State as TlaState
from redletter.python_model.variant_config import VariantModel, VariantSpec, load_variant

__all__ = ["ACTION_NAMES", "OBSERVER", "ObsState", "ObserverConfig", "ObserverEngine"]

Msg: TypeAlias = tuple[int, int]
"""An application message: its value and the bitmask of the tokens it bears."""
MsgBag: TypeAlias = tuple[tuple[Msg, int], ...]
IntBag: TypeAlias = tuple[tuple[int, int], ...]

SEND_APP: Final = 0
INTERNAL_EVENT: Final = 1
RECEIVE_APP: Final = 2
START_SNAPSHOT: Final = 3
RECEIVE_REQUEST: Final = 4
DECLARE_COMPLETE: Final = 5
ACTION_NAMES: Final = (
    "SendApp",
    "InternalEvent",
    "ReceiveApp",
    "StartSnapshot",
    "ReceiveRequest",
    "DeclareComplete",
)

#: What the mirror reads of an ObserverSnapshot model.
OBSERVER: Final = VariantSpec(
    wrapper="ObserverSnapshotToken",
    module="ObserverSnapshot",
    constants=("Proc", "Chan", "Tokens", "Snap", "Observer", "MaxSends"),
    overrides={"CompletionRule": ("CompletionRule", "AllSavedStatesIn")},
    specifications=("Spec", "FairSpec"),
    constraints=("SendBound",),
    invariants=(
        "TypeOK",
        "CountsInvariant",
        "RedMessagesFromRedMachines",
        "Lemma0",
        "Lemma1",
        "StableLemma0",
        "StableLemma1",
        "StableDetection",
        "SnapshotSatisfiesAppInv",
    ),
    properties=("CompleteIsFinal",),
    liveness=("SnapshotsComplete",),
)


@dataclass(frozen=True, eq=False)
class ObserverConfig:
    """A model of ObserverSnapshot with its index structures (a
    :class:`~redletter.python_model.state.ModelShape`, so Chandy-Lamport's codecs of
    global states and actions apply)."""

    model: VariantModel
    procs: tuple[str, ...]
    chans: tuple[tuple[str, str], ...]
    snaps: tuple[int, ...]
    observer: tuple[int, ...]  #: per snapshot index: the observer's index
    max_sends: int
    proc_index: Mapping[str, int]
    chan_index: Mapping[tuple[str, str], int]
    snap_index: Mapping[int, int]
    chan_src: tuple[int, ...]
    chan_dst: tuple[int, ...]
    in_chans: tuple[tuple[int, ...], ...]  #: per machine: its input buffers
    out_chans: tuple[tuple[int, ...], ...]  #: per machine: its output buffers
    app: App
    counts: bool  #: CompletionRule is the spec's (with the message counts)

    @property
    def name(self) -> str:
        return self.model.name


def load_observer(name: str, spec_dir: Path) -> ObserverConfig:
    """Read model ``name`` as a model of ObserverSnapshot."""
    m = load_variant(name, spec_dir, OBSERVER)
    k = m.constants
    proc_set, chan_set, snap_set = k["Proc"], k["Chan"], k["Snap"]
    if not (isinstance(proc_set, frozenset) and all(isinstance(p, str) for p in proc_set)):
        raise m.bad("Proc", "Proc must be a set of strings")
    procs = tuple(sorted(str(p) for p in proc_set))
    if not (
        isinstance(chan_set, frozenset)
        and all(
            isinstance(c, tuple) and len(c) == 2 and c[0] in proc_set and c[1] in proc_set
            for c in chan_set
        )
    ):
        raise m.bad("Chan", "Chan must be a set of pairs of machines")
    chans = tuple(sorted((str(c[0]), str(c[1])) for c in chan_set if isinstance(c, tuple)))
    if not (isinstance(snap_set, frozenset) and all(type(x) is int and x >= 1 for x in snap_set)):
        raise m.bad("Snap", "Snap must be a set of positive integers")
    snaps = tuple(sorted(int(x) for x in snap_set if type(x) is int))
    pidx = {p: i for i, p in enumerate(procs)}
    observer: list[int] = []
    for x in snaps:
        try:
            o = apply_fn(k["Observer"], x)
        except KeyError:
            raise m.bad("Observer", f"Observer has no entry for snapshot {x}") from None
        if not isinstance(o, str) or o not in pidx:
            raise m.bad("Observer", f"Observer[{x}] must be a machine")
        observer.append(pidx[o])
    max_sends = k["MaxSends"]
    if type(max_sends) is not int or max_sends < 0:
        raise m.bad("MaxSends", "MaxSends must be a natural number")
    src = tuple(pidx[c[0]] for c in chans)
    dst = tuple(pidx[c[1]] for c in chans)
    app = make_app("TokenApp", k, procs, chans, snaps, path=str(m.tla_path))
    return ObserverConfig(
        model=m,
        procs=procs,
        chans=chans,
        snaps=snaps,
        observer=tuple(observer),
        max_sends=max_sends,
        proc_index=pidx,
        chan_index={c: i for i, c in enumerate(chans)},
        snap_index={x: i for i, x in enumerate(snaps)},
        chan_src=src,
        chan_dst=dst,
        in_chans=tuple(
            tuple(c for c in range(len(chans)) if dst[c] == p) for p in range(len(procs))
        ),
        out_chans=tuple(
            tuple(c for c in range(len(chans)) if src[c] == p) for p in range(len(procs))
        ),
        app=app,
        counts=m.overrides["CompletionRule"] == "CompletionRule",
    )


# --------------------------------------------------------------------------- the state


@dataclass(frozen=True, slots=True, eq=False)
class ObsState:
    """A state of ObserverSnapshot (the encoding is in the module docstring); the init
    fields are the spec's variables in order."""

    local: tuple[Local, ...]
    buf: tuple[MsgBag, ...]
    red: tuple[int, ...]
    requests: tuple[int, ...]
    n_sent: tuple[int, ...]
    n_recv: tuple[int, ...]
    rec_machine: tuple[tuple[Local | None, ...], ...]
    rep_sent: tuple[tuple[int | None, ...], ...]
    rep_recv: tuple[tuple[int | None, ...], ...]
    rec_buf: tuple[tuple[IntBag, ...], ...]
    s0: tuple[GState | None, ...]
    sf: tuple[GState | None, ...]
    white_acts: tuple[tuple[Act, ...], ...]
    red_acts: tuple[tuple[Act, ...], ...]
    _hash: int = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash(self.key()))

    def key(self) -> tuple[object, ...]:
        """The fields as one tuple (what equality compares)."""
        return (
            self.local,
            self.buf,
            self.red,
            self.requests,
            self.n_sent,
            self.n_recv,
            self.rec_machine,
            self.rep_sent,
            self.rep_recv,
            self.rec_buf,
            self.s0,
            self.sf,
            self.white_acts,
            self.red_acts,
        )

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, ObsState) or self._hash != other._hash:
            return False
        return self.key() == other.key()


def _bag_plus(bag: tuple[tuple[object, int], ...], x: object) -> tuple[tuple[object, int], ...]:
    """``B (+) SetToBag({x})``."""
    d = dict(bag)
    d[x] = d.get(x, 0) + 1
    return tuple(sorted(d.items()))


def _bag_minus(bag: tuple[tuple[object, int], ...], x: object) -> tuple[tuple[object, int], ...]:
    """``B (-) SetToBag({x})``."""
    d = dict(bag)
    n = d.get(x, 0) - 1
    if n > 0:
        d[x] = n
    else:
        d.pop(x, None)
    return tuple(sorted(d.items()))


def _card(bag: tuple[tuple[object, int], ...]) -> int:
    """``BagCardinality(B)``."""
    return sum(n for _, n in bag)


def _msg_values(bag: MsgBag) -> tuple[int, ...]:
    """``MsgValues(B)``: the values of the messages of B, in increasing order."""
    return tuple(sorted(v for (v, _), n in bag for _ in range(n)))


def _bag_values(bag: IntBag) -> tuple[int, ...]:
    """``BagValues(B)``: the integers of B, in increasing order."""
    return tuple(v for v, n in bag for _ in range(n))


def app_state(s: ObsState) -> GState:
    """``AppState``: every buffer as its values in increasing order."""
    return (s.local, tuple(_msg_values(b) for b in s.buf))


def snapshot(s: ObsState, k: int) -> GState:
    """``Snapshot(k)``: the saved states and the forwarded messages."""
    return (s.rec_machine[k], tuple(_bag_values(b) for b in s.rec_buf[k]))


def _set(t: tuple[object, ...], i: int, x: object) -> tuple[object, ...]:
    return (*t[:i], x, *t[i + 1 :])


# --------------------------------------------------------------------------- actions


def _record_act(
    s: ObsState, a: Act, red: tuple[int, ...]
) -> tuple[tuple[tuple[Act, ...], ...], tuple[tuple[Act, ...], ...]]:
    """``RecordAct(a, R)``: for every snapshot in progress, by a.p's colour in R."""
    white, reds = s.white_acts, s.red_acts
    p = a[1]
    for k in range(len(s.s0)):
        if s.s0[k] is not None and s.sf[k] is None:
            if red[k] >> p & 1:
                reds = (*reds[:k], (*reds[k], a), *reds[k + 1 :])
            else:
                white = (*white[:k], (*white[k], a), *white[k + 1 :])
    return white, reds


def _turn_red(
    cfg: ObserverConfig, s: ObsState, p: int, ks: int
) -> tuple[
    tuple[int, ...],
    tuple[tuple[Local | None, ...], ...],
    tuple[tuple[int | None, ...], ...],
    tuple[tuple[int | None, ...], ...],
]:
    """``TurnRed(p, K)`` (K a bitmask of snapshot indices): red, recMachine, repSent,
    repRecv; ``f @@ g`` keeps f's entries."""
    red, rm, rs, rr = list(s.red), list(s.rec_machine), list(s.rep_sent), list(s.rep_recv)
    for k in range(len(red)):
        if not ks >> k & 1:
            continue
        red[k] |= 1 << p
        if rm[k][p] is None:
            rm[k] = (*rm[k][:p], s.local[p], *rm[k][p + 1 :])
        sent = list(rs[k])
        for c in cfg.out_chans[p]:
            if sent[c] is None:
                sent[c] = s.n_sent[c]
        rs[k] = tuple(sent)
        recv = list(rr[k])
        for c in cfg.in_chans[p]:
            if recv[c] is None:
                recv[c] = s.n_recv[c]
        rr[k] = tuple(recv)
    return tuple(red), tuple(rm), tuple(rs), tuple(rr)


def _tokens_held(s: ObsState, p: int) -> int:
    """``TokensHeld(p)`` as a bitmask of snapshot indices."""
    return sum(1 << k for k, r in enumerate(s.red) if r >> p & 1)


def _send_app(cfg: ObserverConfig, s: ObsState, c: int, v: int) -> ObsState:
    p, q = cfg.chan_src[c], cfg.chan_dst[c]
    w, r = _record_act(s, (ACT_SEND, p, q, v), s.red)
    return ObsState(
        _set(s.local, p, cfg.app.after_send(p, q, v, s.local[p])),
        _set(s.buf, c, _bag_plus(s.buf[c], (v, _tokens_held(s, p)))),  # type: ignore[arg-type]
        s.red,
        s.requests,
        _set(s.n_sent, c, s.n_sent[c] + 1),  # type: ignore[arg-type]
        s.n_recv,
        s.rec_machine,
        s.rep_sent,
        s.rep_recv,
        s.rec_buf,
        s.s0,
        s.sf,
        w,
        r,
    )


def _internal_event(cfg: ObserverConfig, s: ObsState, p: int, e: int) -> ObsState:
    w, r = _record_act(s, (ACT_INTERNAL, p, p, e), s.red)
    return ObsState(
        _set(s.local, p, cfg.app.after_event(p, e, s.local[p])),
        s.buf,
        s.red,
        s.requests,
        s.n_sent,
        s.n_recv,
        s.rec_machine,
        s.rep_sent,
        s.rep_recv,
        s.rec_buf,
        s.s0,
        s.sf,
        w,
        r,
    )


def _receive(cfg: ObserverConfig, s: ObsState, c: int, m: Msg) -> ObsState:
    """``Receive(c, m)``: rule 2 (turn red in every token m brings), rule 3 (forward a
    token-less m in every snapshot p is red in), then the receipt."""
    p, q = cfg.chan_dst[c], cfg.chan_src[c]
    v, toks = m
    ks = sum(1 << k for k in range(len(s.red)) if toks >> k & 1 and not s.red[k] >> p & 1)
    red, rm, rs, rr = _turn_red(cfg, s, p, ks)
    rec_buf = tuple(
        _set(rb, c, _bag_plus(rb[c], v)) if not toks >> k & 1 and s.red[k] >> p & 1 else rb
        for k, rb in enumerate(s.rec_buf)
    )
    w, r = _record_act(s, (ACT_RECEIVE, p, q, v), red)
    return ObsState(
        _set(s.local, p, cfg.app.after_receive(p, q, v, s.local[p])),
        _set(s.buf, c, _bag_minus(s.buf[c], m)),  # type: ignore[arg-type]
        red,
        s.requests,
        s.n_sent,
        _set(s.n_recv, c, s.n_recv[c] + 1),  # type: ignore[arg-type]
        rm,
        rs,
        rr,
        rec_buf,  # type: ignore[arg-type]
        s.s0,
        s.sf,
        w,
        r,
    )


def _start_snapshot(cfg: ObserverConfig, s: ObsState, k: int) -> ObsState:
    p = cfg.observer[k]
    red, rm, rs, rr = _turn_red(cfg, s, p, 1 << k)
    everyone = (1 << len(cfg.procs)) - 1
    return ObsState(
        s.local,
        s.buf,
        red,
        _set(s.requests, k, everyone & ~(1 << p)),  # type: ignore[arg-type]
        s.n_sent,
        s.n_recv,
        rm,
        rs,
        rr,
        s.rec_buf,
        _set(s.s0, k, app_state(s)),  # type: ignore[arg-type]
        s.sf,
        s.white_acts,
        s.red_acts,
    )


def _receive_request(cfg: ObserverConfig, s: ObsState, p: int, k: int) -> ObsState:
    if s.red[k] >> p & 1:
        red, rm, rs, rr = s.red, s.rec_machine, s.rep_sent, s.rep_recv
    else:
        red, rm, rs, rr = _turn_red(cfg, s, p, 1 << k)
    return ObsState(
        s.local,
        s.buf,
        red,
        _set(s.requests, k, s.requests[k] & ~(1 << p)),  # type: ignore[arg-type]
        s.n_sent,
        s.n_recv,
        rm,
        rs,
        rr,
        s.rec_buf,
        s.s0,
        s.sf,
        s.white_acts,
        s.red_acts,
    )


def completion_rule(cfg: ObserverConfig, s: ObsState, k: int) -> bool:
    """``CompletionRule(k)`` (or the must-fail model's ``AllSavedStatesIn(k)``)."""
    if any(x is None for x in s.rec_machine[k]):  # AllSavedStates
        return False
    if not cfg.counts:
        return True
    for c in range(len(cfg.chans)):  # AllInTransit
        sent, recv = s.rep_sent[k][c], s.rep_recv[k][c]
        if sent is None or recv is None:
            raise _eval_error("repSent[k][c] applied outside its domain")
        if _card(s.rec_buf[k][c]) != sent - recv:
            return False
    return True


def _declare_complete(s: ObsState, k: int) -> ObsState:
    return ObsState(
        s.local,
        s.buf,
        s.red,
        s.requests,
        s.n_sent,
        s.n_recv,
        s.rec_machine,
        s.rep_sent,
        s.rep_recv,
        s.rec_buf,
        s.s0,
        _set(s.sf, k, app_state(s)),  # type: ignore[arg-type]
        s.white_acts,
        s.red_acts,
    )


def observer_successors(
    cfg: ObserverConfig, s: ObsState
) -> Iterator[tuple[int, RawParams, ObsState]]:
    """``Next``'s successors, one per binding, in its order."""
    app = cfg.app
    src, dst = cfg.chan_src, cfg.chan_dst
    nc, ns = len(cfg.chans), len(cfg.snaps)
    for c in range(nc):
        p = src[c]
        for v in app.sendable(p, dst[c], s.local[p]):
            yield SEND_APP, (c, v), _send_app(cfg, s, c, v)
    for p in range(len(cfg.procs)):
        for e in app.events(p, s.local[p]):
            yield INTERNAL_EVENT, (p, e), _internal_event(cfg, s, p, e)
    for c in range(nc):
        p = dst[c]
        for m, _ in s.buf[c]:
            if app.can_receive(p, src[c], m[0], s.local[p]):
                yield RECEIVE_APP, (c, m[0], m[1]), _receive(cfg, s, c, m)
    for k in range(ns):
        o = cfg.observer[k]
        if s.s0[k] is None and app.may_start(o, cfg.snaps[k], s.local[o]):
            yield START_SNAPSHOT, (k,), _start_snapshot(cfg, s, k)
    for p in range(len(cfg.procs)):
        for k in range(ns):
            if s.requests[k] >> p & 1:
                yield RECEIVE_REQUEST, (p, k), _receive_request(cfg, s, p, k)
    for k in range(ns):
        if s.s0[k] is not None and s.sf[k] is None and completion_rule(cfg, s, k):
            yield DECLARE_COMPLETE, (k,), _declare_complete(s, k)


def init_state(cfg: ObserverConfig) -> ObsState:
    """``Init``."""
    nc, ns, np_ = len(cfg.chans), len(cfg.snaps), len(cfg.procs)
    return ObsState(
        local=tuple(cfg.app.local_init(p) for p in range(np_)),
        buf=((),) * nc,
        red=(0,) * ns,
        requests=(0,) * ns,
        n_sent=(0,) * nc,
        n_recv=(0,) * nc,
        rec_machine=((None,) * np_,) * ns,
        rep_sent=((None,) * nc,) * ns,
        rep_recv=((None,) * nc,) * ns,
        rec_buf=(((),) * nc,) * ns,
        s0=(None,) * ns,
        sf=(None,) * ns,
        white_acts=((),) * ns,
        red_acts=((),) * ns,
    )


# --------------------------------------------------------------------------- invariants


def _eval_error(what: str) -> SpecError:
    return SpecError(f"evaluation error (TLC would stop here too): {what}", code="RL-SPEC-EVAL")


def _local_of(g: GState, p: int) -> Local:
    x = g[0][p]
    if x is None:
        raise _eval_error("g.local[p] applied outside the domain of a partial state")
    return x


def _chan_of(cfg: ObserverConfig, p: int, q: int) -> int:
    c = cfg.chan_index.get((cfg.procs[p], cfg.procs[q]))
    if c is None:
        raise _eval_error(f"<<{cfg.procs[p]}, {cfg.procs[q]}>> is not a buffer")
    return c


def act_enabled(cfg: ObserverConfig, g: GState, a: Act) -> bool:
    """``ActEnabled(g, a)`` (a receipt may take any message of the buffer)."""
    kind, p, q, v = a
    if kind == ACT_SEND:
        return v in cfg.app.sendable(p, q, _local_of(g, p))
    if kind == ACT_INTERNAL:
        return v in cfg.app.events(p, _local_of(g, p))
    b = g[1][_chan_of(cfg, q, p)]
    return v in b and cfg.app.can_receive(p, q, v, _local_of(g, p))


def act_result(cfg: ObserverConfig, g: GState, a: Act) -> GState:
    """``ActResult(g, a)``: Insert on a send, RemoveOne on a receipt."""
    kind, p, q, v = a
    loc, bufs = g
    x = _local_of(g, p)
    if kind == ACT_SEND:
        c = _chan_of(cfg, p, q)
        return (
            (*loc[:p], cfg.app.after_send(p, q, v, x), *loc[p + 1 :]),
            (*bufs[:c], tuple(sorted((*bufs[c], v))), *bufs[c + 1 :]),
        )
    if kind == ACT_INTERNAL:
        return ((*loc[:p], cfg.app.after_event(p, v, x), *loc[p + 1 :]), bufs)
    c = _chan_of(cfg, q, p)
    b = list(bufs[c])
    b.remove(v)
    return (
        (*loc[:p], cfg.app.after_receive(p, q, v, x), *loc[p + 1 :]),
        (*bufs[:c], tuple(b), *bufs[c + 1 :]),
    )


def replay(cfg: ObserverConfig, g: GState, acts: tuple[Act, ...]) -> tuple[bool, GState]:
    """``Replay(g, acts)``."""
    for a in acts:
        if not act_enabled(cfg, g, a):
            return False, g
        g = act_result(cfg, g, a)
    return True, g


def type_ok(cfg: ObserverConfig, s: ObsState) -> bool:
    """``TypeOK``."""
    app = cfg.app
    everyone = (1 << len(cfg.procs)) - 1
    every_snap = (1 << len(cfg.snaps)) - 1
    if not all(app.in_local_states(x) for x in s.local):
        return False
    if any(toks & ~every_snap for b in s.buf for (_, toks), _ in b):
        return False
    for k in range(len(cfg.snaps)):
        if s.red[k] & ~everyone or s.requests[k] & ~everyone:
            return False
        for p, x in enumerate(s.rec_machine[k]):
            if (x is not None) != bool(s.red[k] >> p & 1):
                return False
            if x is not None and not app.in_local_states(x):
                return False
        for c in range(len(cfg.chans)):
            if (s.rep_sent[k][c] is not None) != bool(s.red[k] >> cfg.chan_src[c] & 1):
                return False
            if (s.rep_recv[k][c] is not None) != bool(s.red[k] >> cfg.chan_dst[c] & 1):
                return False
        if s.sf[k] is not None and s.s0[k] is None:
            return False
    return True


def counts_invariant(cfg: ObserverConfig, s: ObsState) -> bool:
    """``CountsInvariant``: once both ends of c are red in k, the reported counts say
    how many white messages of c were forwarded or are still in the buffer."""
    for k, red in enumerate(s.red):
        for c in range(len(cfg.chans)):
            if red >> cfg.chan_src[c] & 1 and red >> cfg.chan_dst[c] & 1:
                sent, recv = s.rep_sent[k][c], s.rep_recv[k][c]
                assert sent is not None and recv is not None
                white = sum(n for (_, toks), n in s.buf[c] if not toks >> k & 1)
                if sent - recv != _card(s.rec_buf[k][c]) + white:
                    return False
    return True


def red_messages_from_red_machines(cfg: ObserverConfig, s: ObsState) -> bool:
    """``RedMessagesFromRedMachines``."""
    for c, b in enumerate(s.buf):
        src = cfg.chan_src[c]
        for (_, toks), _ in b:
            for k, red in enumerate(s.red):
                if toks >> k & 1 and not red >> src & 1:
                    return False
    return True


def _per_complete(
    f: Callable[[ObserverConfig, ObsState, int], bool],
) -> Callable[[ObserverConfig, ObsState], bool]:
    def check(cfg: ObserverConfig, s: ObsState) -> bool:
        return all(f(cfg, s, k) for k, g in enumerate(s.sf) if g is not None)

    return check


def _s0(s: ObsState, k: int) -> GState:
    g = s.s0[k]
    if g is None:
        raise _eval_error("S0[k] applied outside its domain")
    return g


def _lemma0_k(cfg: ObserverConfig, s: ObsState, k: int) -> bool:
    ok, g = replay(cfg, _s0(s, k), s.white_acts[k])
    return ok and g == snapshot(s, k)


def _lemma1_k(cfg: ObserverConfig, s: ObsState, k: int) -> bool:
    ok, g = replay(cfg, snapshot(s, k), s.red_acts[k])
    return ok and g == s.sf[k]


def _stable_lemma0_k(cfg: ObserverConfig, s: ObsState, k: int) -> bool:
    return not cfg.app.stable(_s0(s, k)) or cfg.app.stable(snapshot(s, k))


def _stable_lemma1_k(cfg: ObserverConfig, s: ObsState, k: int) -> bool:
    sf = s.sf[k]
    assert sf is not None
    return not cfg.app.stable(snapshot(s, k)) or cfg.app.stable(sf)


def _stable_detection_k(cfg: ObserverConfig, s: ObsState, k: int) -> bool:
    return not cfg.app.stable(snapshot(s, k)) or cfg.app.stable(app_state(s))


def _app_inv_k(cfg: ObserverConfig, s: ObsState, k: int) -> bool:
    return cfg.app.inv(snapshot(s, k))


INVARIANTS: Final[Mapping[str, Callable[[ObserverConfig, ObsState], bool]]] = {
    "TypeOK": type_ok,
    "CountsInvariant": counts_invariant,
    "RedMessagesFromRedMachines": red_messages_from_red_machines,
    "Lemma0": _per_complete(_lemma0_k),
    "Lemma1": _per_complete(_lemma1_k),
    "StableLemma0": _per_complete(_stable_lemma0_k),
    "StableLemma1": _per_complete(_stable_lemma1_k),
    "StableDetection": _per_complete(_stable_detection_k),
    "SnapshotSatisfiesAppInv": _per_complete(_app_inv_k),
}


def complete_is_final(cfg: ObserverConfig, s: ObsState, t: ObsState) -> bool:
    """``CompleteIsFinal``'s step: ``\\A k \\in DOMAIN Sf : recBuf'[k] = recBuf[k]``."""
    return all(t.rec_buf[k] == s.rec_buf[k] for k, g in enumerate(s.sf) if g is not None)


# --------------------------------------------------------------------------- the engine


class ObserverEngine:
    """One model of ObserverSnapshot.tla (see the module docstring)."""

    action_names = ACTION_NAMES
    variables = (
        "local",
        "buf",
        "red",
        "requests",
        "nSent",
        "nRecv",
        "recMachine",
        "repSent",
        "repRecv",
        "recBuf",
        "S0",
        "Sf",
        "whiteActs",
        "redActs",
    )

    def __init__(self, cfg: ObserverConfig) -> None:
        self.cfg = cfg
        m = cfg.model
        nc, np_, ns = len(cfg.chans), len(cfg.procs), len(cfg.snaps)
        self._np, self._ns = np_, ns
        self._base = (
            0,
            nc,
            nc + np_,
            2 * nc + np_,
            2 * nc + np_ + ns,
            2 * nc + np_ + ns + np_ * ns,
        )
        self.instance_count = 2 * nc + np_ + 2 * ns + np_ * ns
        self.constrained = bool(m.constraints)
        self.invariants = m.invariants
        self.action_properties = m.properties
        self.liveness = m.liveness
        self.specification = m.specification

    @property
    def name(self) -> str:
        return self.cfg.name

    @property
    def tla_path(self) -> Path:
        return self.cfg.model.tla_path

    # ------------------------------------------------------------------ the graph

    def init_states(self) -> list[ObsState]:
        return [init_state(self.cfg)]

    def successors(self, s: ObsState) -> Iterator[tuple[int, RawParams, ObsState]]:
        return observer_successors(self.cfg, s)

    def in_model(self, s: ObsState) -> bool:
        """``SendBound == \\A c \\in Chan : nSent[c] <= MaxSends``."""
        if not self.constrained:
            return True
        mx = self.cfg.max_sends
        return all(n <= mx for n in s.n_sent)

    def params(self, action: int, raw: RawParams) -> Params:
        cfg = self.cfg
        if action == SEND_APP:
            return {"c": list(cfg.chans[raw[0]]), "v": raw[1]}
        if action == INTERNAL_EVENT:
            return {"p": cfg.procs[raw[0]], "e": raw[1]}
        if action == RECEIVE_APP:
            toks = [cfg.snaps[k] for k in range(len(cfg.snaps)) if raw[2] >> k & 1]
            return {"c": list(cfg.chans[raw[0]]), "val": raw[1], "toks": toks}
        if action == RECEIVE_REQUEST:
            return {"p": cfg.procs[raw[0]], "k": cfg.snaps[raw[1]]}
        return {"k": cfg.snaps[raw[0]]}

    def instance_id(self, action: int, raw: RawParams) -> int:
        if action == RECEIVE_REQUEST:
            return self._base[action] + raw[0] * self._ns + raw[1]
        return self._base[action] + raw[0]

    def instance_of_id(self, iid: int) -> ActionInstance:
        cfg = self.cfg
        action = max(a for a, b in enumerate(self._base) if b <= iid)
        rest = iid - self._base[action]
        name = ACTION_NAMES[action]
        if action == RECEIVE_REQUEST:
            p, k = divmod(rest, self._ns)
            return name, (cfg.procs[p], cfg.snaps[k])
        if action in (START_SNAPSHOT, DECLARE_COMPLETE):
            return name, (cfg.snaps[rest],)
        if action == INTERNAL_EVENT:
            return name, (cfg.procs[rest],)
        return name, (cfg.chans[rest],)

    def instance(self, action: int, raw: RawParams) -> ActionInstance:
        return self.instance_of_id(self.instance_id(action, raw))

    # ------------------------------------------------------------------ safety

    def violated_invariant(self, s: ObsState) -> str | None:
        for name in self.invariants:
            if not INVARIANTS[name](self.cfg, s):
                return name
        return None

    def violated_property(self, s: ObsState, t: ObsState) -> str | None:
        for name in self.action_properties:
            if name == "CompleteIsFinal" and not complete_is_final(self.cfg, s, t):
                return name
        return None

    # ------------------------------------------------------------------ liveness

    def constant(self, name: str) -> Value:
        return self.cfg.model.constants[name]

    def predicate(self, name: str, args: tuple[Value, ...]) -> Callable[[ObsState], bool] | None:
        """``Started(k)``, ``Complete(k)``, ``InProgress(k)``."""
        if len(args) != 1 or args[0] not in self.cfg.snap_index:
            return None
        k = self.cfg.snap_index[args[0]]  # type: ignore[index]
        if name == "Started":
            return lambda s: s.s0[k] is not None
        if name == "Complete":
            return lambda s: s.sf[k] is not None
        if name == "InProgress":
            return lambda s: s.s0[k] is not None and s.sf[k] is None
        return None

    # ------------------------------------------------------------------ identity

    def fingerprint(self, s: ObsState) -> int:
        return state_fingerprint(s)

    def to_tla(self, s: ObsState) -> TlaState:
        cfg = self.cfg
        app = cfg.app
        ks, ps, cs = cfg.snaps, cfg.procs, cfg.chans

        def per_snap(xs: list[Value]) -> Value:
            return fcn(list(zip(ks, xs, strict=True)))

        def per_chan(xs: list[Value]) -> Value:
            return fcn(list(zip(cs, xs, strict=True)))

        def toks(mask: int) -> frozenset[Value]:
            return frozenset(x for i, x in enumerate(ks) if mask >> i & 1)

        def msgs(b: MsgBag) -> Value:
            return fcn([(Record((("toks", toks(t)), ("val", v))), n) for (v, t), n in b])

        def partial(xs: tuple[GState | None, ...]) -> Value:
            return fcn(
                [(k, gstate_to_tla(cfg, g)) for k, g in zip(ks, xs, strict=True) if g is not None]
            )

        def opt_chans(xs: tuple[int | None, ...]) -> Value:
            return fcn([(c, x) for c, x in zip(cs, xs, strict=True) if x is not None])

        return TlaState(
            [
                (
                    "local",
                    fcn([(p, app.local_to_tla(x)) for p, x in zip(ps, s.local, strict=True)]),
                ),
                ("buf", per_chan([msgs(b) for b in s.buf])),
                (
                    "red",
                    per_snap([frozenset(p for i, p in enumerate(ps) if m >> i & 1) for m in s.red]),
                ),
                (
                    "requests",
                    per_snap(
                        [frozenset(p for i, p in enumerate(ps) if m >> i & 1) for m in s.requests]
                    ),
                ),
                ("nSent", per_chan(list(s.n_sent))),
                ("nRecv", per_chan(list(s.n_recv))),
                (
                    "recMachine",
                    per_snap(
                        [
                            fcn(
                                [
                                    (ps[i], app.local_to_tla(x))
                                    for i, x in enumerate(rm)
                                    if x is not None
                                ]
                            )
                            for rm in s.rec_machine
                        ]
                    ),
                ),
                ("repSent", per_snap([opt_chans(x) for x in s.rep_sent])),
                ("repRecv", per_snap([opt_chans(x) for x in s.rep_recv])),
                ("recBuf", per_snap([per_chan([fcn(list(b)) for b in rb]) for rb in s.rec_buf])),
                ("S0", partial(s.s0)),
                ("Sf", partial(s.sf)),
                (
                    "whiteActs",
                    per_snap([tuple(act_to_tla(cfg, a) for a in w) for w in s.white_acts]),
                ),
                ("redActs", per_snap([tuple(act_to_tla(cfg, a) for a in r) for r in s.red_acts])),
            ]
        )

    def from_tla(self, t: Mapping[str, Value]) -> ObsState:
        cfg = self.cfg
        app = cfg.app
        missing = [n for n in self.variables if n not in t]
        if missing:
            raise _bad("missing variables " + ", ".join(missing))
        ks: tuple[Value, ...] = cfg.snaps
        ps: tuple[Value, ...] = cfg.procs
        cs: tuple[Value, ...] = cfg.chans
        kidx: dict[Value, int] = {k: i for i, k in enumerate(cfg.snaps)}
        pidx: dict[Value, int] = {p: i for i, p in enumerate(cfg.procs)}

        def over(v: Value, domain: tuple[Value, ...], what: str) -> list[Value]:
            d = _items(v, what)
            if set(d) != set(domain):
                raise _bad(f"{what} has the wrong domain")
            return [d[x] for x in domain]

        def nat(v: Value, what: str) -> int:
            if type(v) is not int or v < 0:
                raise _bad(f"{what} is not a natural number")
            return int(v)

        def mask(v: Value, index: Mapping[Value, int], what: str) -> int:
            if not isinstance(v, frozenset) or not all(x in index for x in v):
                raise _bad(f"{what} is not a set of known elements")
            return sum(1 << index[x] for x in v)

        def msg_bag(v: Value) -> MsgBag:
            out: list[tuple[Msg, int]] = []
            for m, n in _items(v, "buf[c]").items():
                if not isinstance(m, Record) or type(m.get("val")) is not int:
                    raise _bad(f"unexpected message {m!r}")
                val = m["val"]
                assert type(val) is int
                out.append(((val, mask(m["toks"], kidx, "a message's toks")), nat(n, "copies")))
            return tuple(sorted(out))

        def int_bag(v: Value) -> IntBag:
            out: list[tuple[int, int]] = []
            for x, n in _items(v, "recBuf[k][c]").items():
                if type(x) is not int:
                    raise _bad("recBuf[k][c] holds a value that is not an integer")
                out.append((int(x), nat(n, "copies")))
            return tuple(sorted(out))

        def partial_local(v: Value) -> tuple[Local | None, ...]:
            d = _items(v, "recMachine[k]")
            return tuple(app.local_from_tla(d[p]) if p in d else None for p in ps)

        def partial_chans(v: Value, what: str) -> tuple[int | None, ...]:
            d = _items(v, what)
            return tuple(nat(d[c], what) if c in d else None for c in cs)

        def gstate(v: Value) -> GState:
            if not isinstance(v, Record):
                raise _bad("a global state is not a record")
            loc = _items(v["local"], "a global state's local")
            bufs: list[tuple[int, ...]] = []
            for b in over(v["buf"], cs, "a global state's buf"):
                if not isinstance(b, tuple) or not all(type(x) is int for x in b):
                    raise _bad("a buffer of a global state is not a sequence of integers")
                bufs.append(tuple(int(x) for x in b if type(x) is int))
            return (
                tuple(app.local_from_tla(loc[p]) if p in loc else None for p in ps),
                tuple(bufs),
            )

        def partial_g(v: Value, what: str) -> tuple[GState | None, ...]:
            d = _items(v, what)
            return tuple(gstate(d[k]) if k in d else None for k in ks)

        def acts(v: Value) -> tuple[Act, ...]:
            if not isinstance(v, tuple):
                raise _bad("an action history is not a sequence")
            out: list[Act] = []
            for a in v:
                if not isinstance(a, Record) or a.get("kind") not in ACT_KINDS:
                    raise _bad("an action is not a record")
                val = a["val"]
                if type(val) is not int:
                    raise _bad("an action's val is not an integer")
                out.append((ACT_KINDS.index(str(a["kind"])), pidx[a["p"]], pidx[a["q"]], int(val)))
            return tuple(out)

        return ObsState(
            local=tuple(app.local_from_tla(x) for x in over(t["local"], ps, "local")),
            buf=tuple(msg_bag(b) for b in over(t["buf"], cs, "buf")),
            red=tuple(mask(x, pidx, "red[k]") for x in over(t["red"], ks, "red")),
            requests=tuple(
                mask(x, pidx, "requests[k]") for x in over(t["requests"], ks, "requests")
            ),
            n_sent=tuple(nat(x, "nSent[c]") for x in over(t["nSent"], cs, "nSent")),
            n_recv=tuple(nat(x, "nRecv[c]") for x in over(t["nRecv"], cs, "nRecv")),
            rec_machine=tuple(partial_local(x) for x in over(t["recMachine"], ks, "recMachine")),
            rep_sent=tuple(
                partial_chans(x, "repSent[k]") for x in over(t["repSent"], ks, "repSent")
            ),
            rep_recv=tuple(
                partial_chans(x, "repRecv[k]") for x in over(t["repRecv"], ks, "repRecv")
            ),
            rec_buf=tuple(
                tuple(int_bag(b) for b in over(rb, cs, "recBuf[k]"))
                for rb in over(t["recBuf"], ks, "recBuf")
            ),
            s0=partial_g(t["S0"], "S0"),
            sf=partial_g(t["Sf"], "Sf"),
            white_acts=tuple(acts(w) for w in over(t["whiteActs"], ks, "whiteActs")),
            red_acts=tuple(acts(r) for r in over(t["redActs"], ks, "redActs")),
        )


def _bad(what: str) -> InputError:
    return InputError(f"not a state of ObserverSnapshot: {what}", code="RL-INPUT-STATE")
