r"""BarrierSnapshot.tla (Flink's Asynchronous Barrier Snapshots on a keyed dataflow,
seeds/002) mirrored 1:1, as an :class:`~redletter.python_model.engine.Engine`.

One module covers every mode the spec has: aligned (blocking inputs; on cycles the
back edges' records logged), unaligned (barriers overtake buffered records, which
are stored), and the must-fail models' overrides of ``Blocked`` (alignment skipped),
``Overtaken`` (overtaken records forgotten) and ``Logging`` (back edges not logged).

The state (:class:`BarrierState`) has the spec's variables in order, over small
integers: machines and buffers are indices (sorted by name), checkpoints indices
into the sorted ``Ckpt``; a **record** is ``(source, index, round)`` -- which is also
its *effect* -- and a **barrier** of checkpoint id ``n`` is ``(-1, n, 0)``:

* ``pos[i]``: the position of the ``i``-th source (sources sorted by name);
* ``state[j]``: the bag of effects of the ``j``-th operator (operators sorted), a
  sorted tuple of ``(effect, copies)``;
* ``buf[c]`` / ``recChan[n][c]``: messages, oldest first;
* ``snapped[n]`` / ``barrierIn[n]``: bitmasks of machines / buffers;
* ``recPos[n][i]`` / ``recState[n][j]``: ``None`` outside the function's domain;
* ``restored``: 0, or the checkpoint *id* the job was restored from;
* ``S0[n]`` / ``Sf[n]``: a dataflow state ``(pos, state, buf)`` (records only) or
  ``None``; ``whiteActs[n]`` / ``redActs[n]``: actions ``(kind, p, c, record)``,
  kind 0 "emit", 1 "process".

Action instances, numbered densely (``ns`` sources, ``nc`` buffers, ``nk``
checkpoints)::

    Emit(s)                 s
    Process(c)              ns + c
    InjectBarrier(s, n)     ns + nc + s * nk + n
    ReceiveBarrier(c)       ns + nc + ns*nk + c
    Restore(n)              ns + 2nc + ns*nk + n
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, TypeAlias

from redletter.errors import InputError, SpecError
from redletter.python_model.engine import ActionInstance, Params, RawParams, state_fingerprint
from redletter.python_model.state import _items
from redletter.python_model.values import Record, Value, apply_fn, fcn
from redletter.python_model.values import State as TlaState
from redletter.python_model.variant_config import VariantModel, VariantSpec, load_variant

__all__ = ["ACTION_NAMES", "BARRIER", "BarrierConfig", "BarrierEngine", "BarrierState"]

Msg: TypeAlias = tuple[int, int, int]
"""A record ``(source, index, round)`` (source >= 0), or a barrier ``(-1, id, 0)``."""
Bag: TypeAlias = tuple[tuple[Msg, int], ...]
BState: TypeAlias = tuple[
    tuple[int | None, ...], tuple[Bag | None, ...], tuple[tuple[Msg, ...], ...]
]
"""A global dataflow state ``[pos, state, buf]`` (``None``: outside a partial domain)."""
BAct: TypeAlias = tuple[int, int, int, Msg]
"""A dataflow action ``(kind, p, c, m)``: kind 0 emit, 1 process."""

EMIT: Final = 0
PROCESS: Final = 1
INJECT_BARRIER: Final = 2
RECEIVE_BARRIER: Final = 3
RESTORE: Final = 4
ACTION_NAMES: Final = ("Emit", "Process", "InjectBarrier", "ReceiveBarrier", "Restore")
ACT_KINDS: Final = ("emit", "process")

#: What the mirror reads of a BarrierSnapshot model.
BARRIER: Final = VariantSpec(
    wrapper="BarrierSnapshot",
    module="BarrierSnapshot",
    constants=(
        "Proc",
        "Chan",
        "Sources",
        "BackEdges",
        "Input",
        "RouteTo",
        "MaxRounds",
        "Ckpt",
        "Mode",
    ),
    overrides={
        "Blocked": ("Blocked", "NeverBlocked"),
        "Overtaken": ("Overtaken", "Forgotten"),
        "Logging": ("Logging", "NoLogging"),
    },
    specifications=("Spec", "FairSpec"),
    constraints=(),
    invariants=(
        "TypeOK",
        "BarrierInvariant",
        "ExactlyOnceAfterRestore",
        "ConsistentCut",
        "NoForwardChannelState",
        "Lemma0",
        "Lemma1",
    ),
    properties=(),
    liveness=("CheckpointsComplete", "EventuallyDrained"),
)


@dataclass(frozen=True, eq=False)
class BarrierConfig:
    """A model of BarrierSnapshot with its index structures."""

    model: VariantModel
    procs: tuple[str, ...]
    chans: tuple[tuple[str, str], ...]
    ckpts: tuple[int, ...]
    sources: tuple[int, ...]  #: the sources' machine indices, sorted by name
    ops: tuple[int, ...]  #: the operators' machine indices, sorted by name
    source_of: Mapping[int, int]  #: machine index -> its index in ``sources``
    op_of: Mapping[int, int]  #: machine index -> its index in ``ops``
    chan_src: tuple[int, ...]
    chan_dst: tuple[int, ...]
    back: int  #: bitmask of the back edges
    out_chans: tuple[tuple[int, ...], ...]  #: per machine: its output buffers
    forward_in: tuple[int, ...]  #: per machine: bitmask of its forward input buffers
    inputs: tuple[tuple[int, ...], ...]  #: per source index: the keys it reads
    route: Mapping[tuple[int, int], int]  #: (machine, key) -> the machine it sends to
    max_rounds: int
    unaligned: bool
    blocking: bool  #: Blocked is the spec's (not NeverBlocked)
    store_overtaken: bool  #: Overtaken is the spec's (not Forgotten)
    logging: bool  #: Logging is the spec's (not NoLogging)
    chan_index: Mapping[tuple[str, str], int]
    proc_index: Mapping[str, int]
    ckpt_index: Mapping[int, int]
    paths: Mapping[tuple[int, int], tuple[tuple[int, Msg], ...]]  #: Path(s, i), s a source index

    @property
    def name(self) -> str:
        return self.model.name


def load_barrier(name: str, spec_dir: Path) -> BarrierConfig:
    """Read model ``name`` as a model of BarrierSnapshot."""
    m = load_variant(name, spec_dir, BARRIER)
    k = m.constants
    proc_set, chan_set = k["Proc"], k["Chan"]
    if not (isinstance(proc_set, frozenset) and all(isinstance(p, str) for p in proc_set)):
        raise m.bad("Proc", "Proc must be a set of strings")
    procs = tuple(sorted(str(p) for p in proc_set))
    pidx = {p: i for i, p in enumerate(procs)}
    if not (
        isinstance(chan_set, frozenset)
        and all(
            isinstance(c, tuple) and len(c) == 2 and c[0] in proc_set and c[1] in proc_set
            for c in chan_set
        )
    ):
        raise m.bad("Chan", "Chan must be a set of pairs of machines")
    chans = tuple(sorted((str(c[0]), str(c[1])) for c in chan_set if isinstance(c, tuple)))
    cidx = {c: i for i, c in enumerate(chans)}
    srcs, back_set = k["Sources"], k["BackEdges"]
    if not (isinstance(srcs, frozenset) and all(s in pidx for s in srcs)):
        raise m.bad("Sources", "Sources must be a set of machines")
    if not (isinstance(back_set, frozenset) and all(c in cidx for c in back_set)):
        raise m.bad("BackEdges", "BackEdges must be a set of buffers")
    ck = k["Ckpt"]
    if not (isinstance(ck, frozenset) and all(type(x) is int and x >= 1 for x in ck)):
        raise m.bad("Ckpt", "Ckpt must be a set of positive integers")
    ckpts = tuple(sorted(int(x) for x in ck if type(x) is int))
    mode, max_rounds = k["Mode"], k["MaxRounds"]
    if mode not in ("aligned", "unaligned"):
        raise m.bad("Mode", 'Mode must be "aligned" or "unaligned"')
    if type(max_rounds) is not int or max_rounds < 0:
        raise m.bad("MaxRounds", "MaxRounds must be a natural number")
    sources = tuple(sorted(pidx[str(s)] for s in srcs))
    ops = tuple(p for p in range(len(procs)) if p not in sources)
    inputs: list[tuple[int, ...]] = []
    for s in sources:
        try:
            seq = apply_fn(k["Input"], procs[s])
        except KeyError:
            raise m.bad("Input", f"Input has no entry for {procs[s]}") from None
        if not (isinstance(seq, tuple) and all(type(x) is int for x in seq)):
            raise m.bad("Input", f"Input[{procs[s]}] must be a sequence of keys")
        inputs.append(tuple(int(x) for x in seq if type(x) is int))
    keys = sorted({x for seq in inputs for x in seq})
    route: dict[tuple[int, int], int] = {}
    for p in range(len(procs)):
        for key in keys:
            try:
                q = apply_fn(apply_fn(k["RouteTo"], procs[p]), key)
            except KeyError:
                raise m.bad("RouteTo", f"RouteTo[{procs[p]}] has no entry for key {key}") from None
            if not isinstance(q, str) or q not in pidx:
                raise m.bad("RouteTo", f"RouteTo[{procs[p]}][{key}] must be a machine")
            if q != procs[p] and (procs[p], q) not in cidx:
                raise m.bad("RouteTo", f"RouteTo[{procs[p]}][{key}] = {q}: no buffer leads there")
            route[(p, key)] = pidx[q]
    back = 0
    for c in back_set:
        back |= 1 << cidx[(str(c[0]), str(c[1]))] if isinstance(c, tuple) else 0
    src = tuple(pidx[c[0]] for c in chans)
    dst = tuple(pidx[c[1]] for c in chans)
    cfg = BarrierConfig(
        model=m,
        procs=procs,
        chans=chans,
        ckpts=ckpts,
        sources=sources,
        ops=ops,
        source_of={s: i for i, s in enumerate(sources)},
        op_of={p: j for j, p in enumerate(ops)},
        chan_src=src,
        chan_dst=dst,
        back=back,
        out_chans=tuple(
            tuple(c for c in range(len(chans)) if src[c] == p) for p in range(len(procs))
        ),
        forward_in=tuple(
            sum(1 << c for c in range(len(chans)) if dst[c] == p and not back >> c & 1)
            for p in range(len(procs))
        ),
        inputs=tuple(inputs),
        route=route,
        max_rounds=max_rounds,
        unaligned=mode == "unaligned",
        blocking=m.overrides["Blocked"] == "Blocked",
        store_overtaken=m.overrides["Overtaken"] == "Overtaken",
        logging=m.overrides["Logging"] == "Logging",
        chan_index=cidx,
        proc_index=pidx,
        ckpt_index={x: i for i, x in enumerate(ckpts)},
        paths={},
    )
    paths = {
        (si, i): _path_from(cfg, s, (si, i, 0))
        for si, s in enumerate(sources)
        for i in range(1, len(inputs[si]) + 1)
    }
    object.__setattr__(cfg, "paths", paths)
    return cfg


def outputs(cfg: BarrierConfig, p: int, m: Msg) -> tuple[tuple[int, Msg], ...]:
    """``Outputs(p, m)``: at most one hop ``(buffer, record as sent)``."""
    si, i, r = m
    q = cfg.route[(p, cfg.inputs[si][i - 1])]
    if q == p:
        return ()
    c = cfg.chan_index[(cfg.procs[p], cfg.procs[q])]
    if cfg.back >> c & 1:
        return ((c, (si, i, r + 1)),) if r < cfg.max_rounds else ()
    return ((c, m),)


def _path_from(cfg: BarrierConfig, p: int, m: Msg) -> tuple[tuple[int, Msg], ...]:
    """``PathFrom(p, m)``: the hops of a record from machine p on."""
    out: list[tuple[int, Msg]] = []
    while True:
        o = outputs(cfg, p, m)
        if not o:
            return tuple(out)
        out.append(o[0])
        c, m = o[0]
        p = cfg.chan_dst[c]


def _send(
    b: tuple[tuple[Msg, ...], ...], hops: tuple[tuple[int, Msg], ...]
) -> tuple[tuple[Msg, ...], ...]:
    """``Send(b, O)``."""
    for c, m in hops:
        b = (*b[:c], (*b[c], m), *b[c + 1 :])
    return b


def _plus(bag: Bag, e: Msg) -> Bag:
    """``B (+) SetToBag({e})``."""
    d = dict(bag)
    d[e] = d.get(e, 0) + 1
    return tuple(sorted(d.items()))


def _copies(bag: Bag | None, e: Msg) -> int:
    """``CopiesIn(e, B)``."""
    if bag is None:
        raise _eval_error("a recorded state applied outside its domain")
    for x, n in bag:
        if x == e:
            return n
    return 0


def _eval_error(what: str) -> SpecError:
    return SpecError(f"evaluation error (TLC would stop here too): {what}", code="RL-SPEC-EVAL")


# --------------------------------------------------------------------------- the state


@dataclass(frozen=True, slots=True, eq=False)
class BarrierState:
    """A state of BarrierSnapshot (the encoding is in the module docstring); the init
    fields are the spec's variables in order."""

    pos: tuple[int, ...]
    state: tuple[Bag, ...]
    buf: tuple[tuple[Msg, ...], ...]
    snapped: tuple[int, ...]
    barrier_in: tuple[int, ...]
    rec_pos: tuple[tuple[int | None, ...], ...]
    rec_state: tuple[tuple[Bag | None, ...], ...]
    rec_chan: tuple[tuple[tuple[Msg, ...], ...], ...]
    restored: int
    s0: tuple[BState | None, ...]
    sf: tuple[BState | None, ...]
    white_acts: tuple[tuple[BAct, ...], ...]
    red_acts: tuple[tuple[BAct, ...], ...]
    _hash: int = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash(self.key()))

    def key(self) -> tuple[object, ...]:
        """The fields as one tuple (what equality compares)."""
        return (
            self.pos,
            self.state,
            self.buf,
            self.snapped,
            self.barrier_in,
            self.rec_pos,
            self.rec_state,
            self.rec_chan,
            self.restored,
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
        if not isinstance(other, BarrierState) or self._hash != other._hash:
            return False
        return self.key() == other.key()

    def with_(self, **changes: object) -> BarrierState:
        """A copy with some variables changed (the others: UNCHANGED)."""
        fields = dict(zip(_FIELDS, self.key(), strict=True))
        fields.update(changes)
        return BarrierState(**fields)  # type: ignore[arg-type]


_FIELDS: Final = (
    "pos",
    "state",
    "buf",
    "snapped",
    "barrier_in",
    "rec_pos",
    "rec_state",
    "rec_chan",
    "restored",
    "s0",
    "sf",
    "white_acts",
    "red_acts",
)


def _records(b: tuple[Msg, ...]) -> tuple[Msg, ...]:
    """``Records(s)``: the records of a buffer, in order."""
    return tuple(m for m in b if m[0] >= 0)


def app_state(s: BarrierState) -> BState:
    """``AppState``: positions, operator states, and the records of the buffers."""
    return (s.pos, s.state, tuple(_records(b) for b in s.buf))


def snapshot(s: BarrierState, n: int) -> BState:
    """``Snapshot(n)``."""
    return (s.rec_pos[n], s.rec_state[n], s.rec_chan[n])


def _live(s: BarrierState) -> bool:
    return s.restored == 0


# --------------------------------------------------------------------------- actions


def blocked(cfg: BarrierConfig, s: BarrierState, c: int) -> bool:
    """``Blocked(c)`` (``NeverBlocked(c) == FALSE`` when alignment is skipped)."""
    if not cfg.blocking or not _live(s) or cfg.unaligned or cfg.back >> c & 1:
        return False
    p = cfg.chan_dst[c]
    return any(
        s.barrier_in[n] >> c & 1 and not s.snapped[n] >> p & 1 for n in range(len(cfg.ckpts))
    )


def _record_act(
    s: BarrierState, a: BAct
) -> tuple[tuple[tuple[BAct, ...], ...], tuple[tuple[BAct, ...], ...]]:
    """``RecordAct(a)``: for every checkpoint in progress (and the job live)."""
    white, reds = s.white_acts, s.red_acts
    if not _live(s):
        return white, reds
    p = a[1]
    for n in range(len(s.s0)):
        if s.s0[n] is not None and s.sf[n] is None:
            if s.snapped[n] >> p & 1:
                reds = (*reds[:n], (*reds[n], a), *reds[n + 1 :])
            else:
                white = (*white[:n], (*white[n], a), *white[n + 1 :])
    return white, reds


def _take_snapshot(
    cfg: BarrierConfig, s: BarrierState, p: int, n: int, b: tuple[tuple[Msg, ...], ...]
) -> dict[str, object]:
    """``TakeSnapshot(p, n, b)``: snapped, recState/recPos (``@@``: an entry kept), buf."""
    changes: dict[str, object] = {
        "snapped": (*s.snapped[:n], s.snapped[n] | 1 << p, *s.snapped[n + 1 :])
    }
    if p in cfg.op_of:
        j = cfg.op_of[p]
        rs = s.rec_state[n]
        if rs[j] is None:
            rs = (*rs[:j], s.state[j], *rs[j + 1 :])
        changes["rec_state"] = (*s.rec_state[:n], rs, *s.rec_state[n + 1 :])
    else:
        i = cfg.source_of[p]
        rp = s.rec_pos[n]
        if rp[i] is None:
            rp = (*rp[:i], s.pos[i], *rp[i + 1 :])
        changes["rec_pos"] = (*s.rec_pos[:n], rp, *s.rec_pos[n + 1 :])
    barrier: Msg = (-1, cfg.ckpts[n], 0)
    changes["buf"] = _send(b, tuple((c, barrier) for c in cfg.out_chans[p]))
    return changes


def _emit(cfg: BarrierConfig, s: BarrierState, i: int) -> BarrierState:
    p = cfg.sources[i]
    m: Msg = (i, s.pos[i] + 1, 0)
    outs = outputs(cfg, p, m)
    if not outs:
        raise _eval_error(f"CHOOSE from an empty Outputs({cfg.procs[p]}, m)")
    o = outs[0]
    w, r = _record_act(s, (0, p, o[0], m))
    return s.with_(
        pos=(*s.pos[:i], s.pos[i] + 1, *s.pos[i + 1 :]),
        buf=_send(s.buf, (o,)),
        white_acts=w,
        red_acts=r,
    )


def _logging(cfg: BarrierConfig, s: BarrierState, n: int, p: int, c: int) -> bool:
    """``Logging(n, p, c)`` (``NoLogging == FALSE``)."""
    return cfg.logging and _live(s) and bool(s.snapped[n] >> p & 1) and not s.barrier_in[n] >> c & 1


def _process(cfg: BarrierConfig, s: BarrierState, c: int) -> BarrierState:
    p = cfg.chan_dst[c]
    m = s.buf[c][0]
    j = cfg.op_of[p]
    b = (*s.buf[:c], s.buf[c][1:], *s.buf[c + 1 :])
    rec_chan = tuple(
        (*rc[:c], (*rc[c], m), *rc[c + 1 :]) if _logging(cfg, s, n, p, c) else rc
        for n, rc in enumerate(s.rec_chan)
    )
    w, r = _record_act(s, (1, p, c, m))
    return s.with_(
        state=(*s.state[:j], _plus(s.state[j], m), *s.state[j + 1 :]),
        buf=_send(b, outputs(cfg, p, m)),
        rec_chan=rec_chan,
        white_acts=w,
        red_acts=r,
    )


def _inject_enabled(s: BarrierState, p: int, n: int) -> bool:
    return (
        _live(s)
        and not s.snapped[n] >> p & 1
        and all(s.snapped[j] >> p & 1 for j in range(n))  # every j < n (ids sorted)
    )


def _inject_barrier(cfg: BarrierConfig, s: BarrierState, p: int, n: int) -> BarrierState:
    changes = _take_snapshot(cfg, s, p, n, s.buf)
    if s.s0[n] is None:
        changes["s0"] = (*s.s0[:n], app_state(s), *s.s0[n + 1 :])
    return s.with_(**changes)


def barrier_positions(cfg: BarrierConfig, s: BarrierState, c: int) -> tuple[int, ...]:
    """``BarrierPositions(c)`` (1-based)."""
    for i, m in enumerate(s.buf[c], start=1):
        if m[0] < 0:
            return (i,) if i == 1 or cfg.unaligned else ()
    return ()


def _receive_barrier(cfg: BarrierConfig, s: BarrierState, c: int, i: int) -> BarrierState:
    p = cfg.chan_dst[c]
    bc = s.buf[c]
    n = cfg.ckpt_index[bc[i - 1][1]]
    ahead = bc[: i - 1]
    b = (*s.buf[:c], (*bc[: i - 1], *bc[i:]), *s.buf[c + 1 :])
    ins = s.barrier_in[n] | 1 << c
    changes: dict[str, object] = {
        "barrier_in": (*s.barrier_in[:n], ins, *s.barrier_in[n + 1 :]),
    }
    kept = ahead if cfg.store_overtaken else ()
    rc = s.rec_chan[n]
    changes["rec_chan"] = (
        *s.rec_chan[:n],
        (*rc[:c], (*rc[c], *kept), *rc[c + 1 :]),
        *s.rec_chan[n + 1 :],
    )
    aligned = cfg.unaligned or cfg.forward_in[p] & ~ins == 0
    if not s.snapped[n] >> p & 1 and aligned:
        changes.update(_take_snapshot(cfg, s, p, n, b))
    else:
        changes["buf"] = b
    snapped = changes.get("snapped", s.snapped)
    assert isinstance(snapped, tuple)
    everyone = (1 << len(cfg.procs)) - 1
    if snapped[n] == everyone and ins == (1 << len(cfg.chans)) - 1 and s.sf[n] is None:
        changes["sf"] = (*s.sf[:n], app_state(s), *s.sf[n + 1 :])
    return s.with_(**changes)


def _restore(cfg: BarrierConfig, s: BarrierState, n: int) -> BarrierState:
    pos = s.rec_pos[n]
    state = s.rec_state[n]
    if any(x is None for x in pos) or any(x is None for x in state):
        raise _eval_error("Restore of a checkpoint whose recorded state is partial")
    return s.with_(pos=pos, state=state, buf=s.rec_chan[n], restored=cfg.ckpts[n])


def barrier_successors(
    cfg: BarrierConfig, s: BarrierState
) -> Iterator[tuple[int, RawParams, BarrierState]]:
    """``Next``'s successors, one per binding, in its order."""
    nc, nk = len(cfg.chans), len(cfg.ckpts)
    for i in range(len(cfg.sources)):
        if s.pos[i] < len(cfg.inputs[i]):
            yield EMIT, (i,), _emit(cfg, s, i)
    for c in range(nc):
        bc = s.buf[c]
        if bc and bc[0][0] >= 0 and not blocked(cfg, s, c):
            yield PROCESS, (c,), _process(cfg, s, c)
    for i, p in enumerate(cfg.sources):
        for n in range(nk):
            if _inject_enabled(s, p, n):
                yield INJECT_BARRIER, (i, n), _inject_barrier(cfg, s, p, n)
    for c in range(nc):
        for i in barrier_positions(cfg, s, c):
            if not blocked(cfg, s, c):
                yield RECEIVE_BARRIER, (c, i), _receive_barrier(cfg, s, c, i)
    if _live(s):
        for n in range(nk):
            if s.sf[n] is not None:
                yield RESTORE, (n,), _restore(cfg, s, n)


def init_state(cfg: BarrierConfig) -> BarrierState:
    """``Init``."""
    nc, nk = len(cfg.chans), len(cfg.ckpts)
    return BarrierState(
        pos=(0,) * len(cfg.sources),
        state=((),) * len(cfg.ops),
        buf=((),) * nc,
        snapped=(0,) * nk,
        barrier_in=(0,) * nk,
        rec_pos=((None,) * len(cfg.sources),) * nk,
        rec_state=((None,) * len(cfg.ops),) * nk,
        rec_chan=(((),) * nc,) * nk,
        restored=0,
        s0=(None,) * nk,
        sf=(None,) * nk,
        white_acts=((),) * nk,
        red_acts=((),) * nk,
    )


# --------------------------------------------------------------------------- invariants


def act_enabled(cfg: BarrierConfig, g: BState, a: BAct) -> bool:
    """``ActEnabled(g, a)``."""
    kind, p, c, m = a
    if kind == 0:
        x = g[0][cfg.source_of[p]]
        if x is None:
            raise _eval_error("g.pos[a.p] applied outside its domain")
        return x + 1 == m[1]
    b = g[2][c]
    return bool(b) and b[0] == m


def act_result(cfg: BarrierConfig, g: BState, a: BAct) -> BState:
    """``ActResult(g, a)``."""
    kind, p, c, m = a
    pos, state, buf = g
    if kind == 0:
        i = cfg.source_of[p]
        x = pos[i]
        assert x is not None
        return ((*pos[:i], x + 1, *pos[i + 1 :]), state, _send(buf, outputs(cfg, p, m)))
    j = cfg.op_of[p]
    bag = state[j]
    if bag is None:
        raise _eval_error("g.state[a.p] applied outside its domain")
    b = (*buf[:c], buf[c][1:], *buf[c + 1 :])
    return (pos, (*state[:j], _plus(bag, m), *state[j + 1 :]), _send(b, outputs(cfg, p, m)))


def replay(cfg: BarrierConfig, g: BState, acts: tuple[BAct, ...]) -> tuple[bool, BState]:
    """``Replay(g, acts)``."""
    for a in acts:
        if not act_enabled(cfg, g, a):
            return False, g
        g = act_result(cfg, g, a)
    return True, g


def _msg_ok(cfg: BarrierConfig, m: Msg) -> bool:
    if m[0] < 0:
        return m[1] in cfg.ckpt_index and m[2] == 0
    return 0 <= m[0] < len(cfg.sources) and m[1] >= 0 and 0 <= m[2] <= cfg.max_rounds


def type_ok(cfg: BarrierConfig, s: BarrierState) -> bool:
    """``TypeOK`` (what the encoding does not already guarantee)."""
    if any(x < 0 for x in s.pos):
        return False
    if any(m[0] < 0 or not _msg_ok(cfg, m) for bag in s.state for m, _ in bag):
        return False
    if any(not _msg_ok(cfg, m) for b in s.buf for m in b):
        return False
    if any(not _msg_ok(cfg, m) for rc in s.rec_chan for b in rc for m in b):
        return False
    everyone = (1 << len(cfg.procs)) - 1
    for n in range(len(cfg.ckpts)):
        if s.snapped[n] & ~everyone or s.barrier_in[n] & ~((1 << len(cfg.chans)) - 1):
            return False
        for i, p in enumerate(cfg.sources):
            if (s.rec_pos[n][i] is not None) != bool(s.snapped[n] >> p & 1):
                return False
        for j, p in enumerate(cfg.ops):
            rs = s.rec_state[n][j]
            if (rs is not None) != bool(s.snapped[n] >> p & 1):
                return False
            if rs is not None and any(m[0] < 0 or not _msg_ok(cfg, m) for m, _ in rs):
                return False
        if s.sf[n] is not None and s.s0[n] is None:
            return False
    return s.restored == 0 or s.restored in cfg.ckpt_index


def barrier_invariant(cfg: BarrierConfig, s: BarrierState) -> bool:
    """``BarrierInvariant``: while the job runs, one barrier n in each buffer from a
    machine that has snapshotted n whose barrier n has not been received."""
    if not _live(s):
        return True
    for n, x in enumerate(cfg.ckpts):
        barrier = (-1, x, 0)
        for c, b in enumerate(s.buf):
            owed = s.snapped[n] >> cfg.chan_src[c] & 1 and not s.barrier_in[n] >> c & 1
            if owed and b.count(barrier) != 1:
                return False
    return True


def drained(cfg: BarrierConfig, s: BarrierState) -> bool:
    """``Drained``."""
    return all(p == len(cfg.inputs[i]) for i, p in enumerate(s.pos)) and not any(
        m[0] >= 0 for b in s.buf for m in b
    )


def exactly_once_after_restore(cfg: BarrierConfig, s: BarrierState) -> bool:
    """``ExactlyOnceAfterRestore``: NoEffectTwice and EveryEffectOnceDrained."""
    if s.restored == 0:
        return True
    if any(n != 1 for bag in s.state for _, n in bag):
        return False
    if drained(cfg, s):
        for path in cfg.paths.values():
            for c, m in path:
                if _copies(s.state[cfg.op_of[cfg.chan_dst[c]]], m) != 1:
                    return False
    return True


def consistent_cut(cfg: BarrierConfig, s: BarrierState) -> bool:
    """``ConsistentCut``: every hop of every record sent across the cut as often as
    it is received in it or stored in the buffer."""
    for n, g in enumerate(s.sf):
        if g is None:
            continue
        rec_state = s.rec_state[n]
        for (si, i), path in cfg.paths.items():
            for h, (c, m) in enumerate(path):
                if h == 0:
                    rp = s.rec_pos[n][si]
                    if rp is None:
                        raise _eval_error("recPos[n][s] applied outside its domain")
                    sent = 1 if i <= rp else 0
                else:
                    pc, pm = path[h - 1]
                    sent = _copies(rec_state[cfg.op_of[cfg.chan_dst[pc]]], pm)
                received = _copies(rec_state[cfg.op_of[cfg.chan_dst[c]]], m)
                stored = s.rec_chan[n][c].count(m)
                if sent != received + stored:
                    return False
    return True


def no_forward_channel_state(cfg: BarrierConfig, s: BarrierState) -> bool:
    """``NoForwardChannelState``: aligned checkpoints store nothing of forward buffers."""
    if cfg.unaligned:
        return True
    return all(
        not rc[c] for rc in s.rec_chan for c in range(len(cfg.chans)) if not cfg.back >> c & 1
    )


def _lemma0(cfg: BarrierConfig, s: BarrierState) -> bool:
    for n, g in enumerate(s.sf):
        if g is None:
            continue
        s0 = s.s0[n]
        if s0 is None:
            raise _eval_error("S0[n] applied outside its domain")
        ok, r = replay(cfg, s0, s.white_acts[n])
        if not ok or r != snapshot(s, n):
            return False
    return True


def _lemma1(cfg: BarrierConfig, s: BarrierState) -> bool:
    for n, g in enumerate(s.sf):
        if g is None:
            continue
        ok, r = replay(cfg, snapshot(s, n), s.red_acts[n])
        if not ok or r != g:
            return False
    return True


INVARIANTS: Final[Mapping[str, Callable[[BarrierConfig, BarrierState], bool]]] = {
    "TypeOK": type_ok,
    "BarrierInvariant": barrier_invariant,
    "ExactlyOnceAfterRestore": exactly_once_after_restore,
    "ConsistentCut": consistent_cut,
    "NoForwardChannelState": no_forward_channel_state,
    "Lemma0": _lemma0,
    "Lemma1": _lemma1,
}


# --------------------------------------------------------------------------- the engine


class BarrierEngine:
    """One model of BarrierSnapshot.tla (see the module docstring)."""

    action_names = ACTION_NAMES
    variables = (
        "pos",
        "state",
        "buf",
        "snapped",
        "barrierIn",
        "recPos",
        "recState",
        "recChan",
        "restored",
        "S0",
        "Sf",
        "whiteActs",
        "redActs",
    )

    def __init__(self, cfg: BarrierConfig) -> None:
        self.cfg = cfg
        m = cfg.model
        ns, nc, nk = len(cfg.sources), len(cfg.chans), len(cfg.ckpts)
        self._nk = nk
        self._base = (0, ns, ns + nc, ns + nc + ns * nk, ns + 2 * nc + ns * nk)
        self.instance_count = ns + 2 * nc + ns * nk + nk
        self.constrained = False
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

    def init_states(self) -> list[BarrierState]:
        return [init_state(self.cfg)]

    def successors(self, s: BarrierState) -> Iterator[tuple[int, RawParams, BarrierState]]:
        return barrier_successors(self.cfg, s)

    def in_model(self, s: BarrierState) -> bool:
        return True

    def params(self, action: int, raw: RawParams) -> Params:
        cfg = self.cfg
        if action == EMIT:
            return {"s": cfg.procs[cfg.sources[raw[0]]]}
        if action == PROCESS:
            return {"c": list(cfg.chans[raw[0]])}
        if action == INJECT_BARRIER:
            return {"s": cfg.procs[cfg.sources[raw[0]]], "n": cfg.ckpts[raw[1]]}
        if action == RECEIVE_BARRIER:
            return {"c": list(cfg.chans[raw[0]]), "i": raw[1]}
        return {"n": cfg.ckpts[raw[0]]}

    def instance_id(self, action: int, raw: RawParams) -> int:
        if action == INJECT_BARRIER:
            return self._base[action] + raw[0] * self._nk + raw[1]
        return self._base[action] + raw[0]

    def instance_of_id(self, iid: int) -> ActionInstance:
        cfg = self.cfg
        action = max(a for a, b in enumerate(self._base) if b <= iid)
        rest = iid - self._base[action]
        name = ACTION_NAMES[action]
        if action == INJECT_BARRIER:
            i, n = divmod(rest, self._nk)
            return name, (cfg.procs[cfg.sources[i]], cfg.ckpts[n])
        if action == EMIT:
            return name, (cfg.procs[cfg.sources[rest]],)
        if action == RESTORE:
            return name, (cfg.ckpts[rest],)
        return name, (cfg.chans[rest],)

    def instance(self, action: int, raw: RawParams) -> ActionInstance:
        return self.instance_of_id(self.instance_id(action, raw))

    # ------------------------------------------------------------------ safety

    def violated_invariant(self, s: BarrierState) -> str | None:
        for name in self.invariants:
            if not INVARIANTS[name](self.cfg, s):
                return name
        return None

    def violated_property(self, s: BarrierState, t: BarrierState) -> str | None:
        return None  # the barrier models list no action property

    # ------------------------------------------------------------------ liveness

    def constant(self, name: str) -> Value:
        return self.cfg.model.constants[name]

    def predicate(
        self, name: str, args: tuple[Value, ...]
    ) -> Callable[[BarrierState], bool] | None:
        """``Started(n)``, ``Complete(n)``, ``InProgress(n)``, ``Live``, ``Drained``."""
        cfg = self.cfg
        if not args:
            if name == "Live":
                return _live
            if name == "Drained":
                return lambda s: drained(cfg, s)
            return None
        if len(args) != 1 or args[0] not in cfg.ckpt_index:
            return None
        n = cfg.ckpt_index[args[0]]  # type: ignore[index]
        if name == "Started":
            return lambda s: s.s0[n] is not None
        if name == "Complete":
            return lambda s: s.sf[n] is not None
        if name == "InProgress":
            return lambda s: s.s0[n] is not None and s.sf[n] is None and _live(s)
        return None

    # ------------------------------------------------------------------ identity

    def fingerprint(self, s: BarrierState) -> int:
        return state_fingerprint(s)

    def to_tla(self, s: BarrierState) -> TlaState:
        return TlaState(zip(self.variables, _to_tla(self.cfg, s), strict=True))

    def from_tla(self, t: Mapping[str, Value]) -> BarrierState:
        return _from_tla(self.cfg, t, self.variables)


# --------------------------------------------------------------------------- TLA+ codec


def _msg_to_tla(cfg: BarrierConfig, m: Msg) -> Value:
    if m[0] < 0:
        return Record((("kind", "barrier"), ("src", ""), ("idx", 0), ("round", 0), ("ckpt", m[1])))
    return Record(
        (
            ("kind", "rec"),
            ("src", cfg.procs[cfg.sources[m[0]]]),
            ("idx", m[1]),
            ("round", m[2]),
            ("ckpt", 0),
        )
    )


def _bag_to_tla(cfg: BarrierConfig, bag: Bag) -> Value:
    return fcn([((cfg.procs[cfg.sources[e[0]]], e[1], e[2]), n) for e, n in bag])


def _bstate_to_tla(cfg: BarrierConfig, g: BState) -> Value:
    pos, state, buf = g
    return Record(
        (
            (
                "pos",
                fcn(
                    [
                        (cfg.procs[p], x)
                        for p, x in zip(cfg.sources, pos, strict=True)
                        if x is not None
                    ]
                ),
            ),
            (
                "state",
                fcn(
                    [
                        (cfg.procs[p], _bag_to_tla(cfg, b))
                        for p, b in zip(cfg.ops, state, strict=True)
                        if b is not None
                    ]
                ),
            ),
            (
                "buf",
                fcn(
                    [
                        (c, tuple(_msg_to_tla(cfg, m) for m in b))
                        for c, b in zip(cfg.chans, buf, strict=True)
                    ]
                ),
            ),
        )
    )


def _act_to_tla(cfg: BarrierConfig, a: BAct) -> Value:
    kind, p, c, m = a
    return Record(
        (
            ("kind", ACT_KINDS[kind]),
            ("p", cfg.procs[p]),
            ("c", cfg.chans[c]),
            ("m", _msg_to_tla(cfg, m)),
        )
    )


def _to_tla(cfg: BarrierConfig, s: BarrierState) -> list[Value]:
    ks, cs, ps = cfg.ckpts, cfg.chans, cfg.procs

    def per_ckpt(xs: Sequence[Value]) -> Value:
        return fcn(list(zip(ks, xs, strict=True)))

    def msgs(b: tuple[Msg, ...]) -> Value:
        return tuple(_msg_to_tla(cfg, m) for m in b)

    def partial(xs: tuple[BState | None, ...]) -> Value:
        return fcn(
            [(k, _bstate_to_tla(cfg, g)) for k, g in zip(ks, xs, strict=True) if g is not None]
        )

    return [
        fcn([(ps[p], x) for p, x in zip(cfg.sources, s.pos, strict=True)]),
        fcn([(ps[p], _bag_to_tla(cfg, b)) for p, b in zip(cfg.ops, s.state, strict=True)]),
        fcn([(c, msgs(b)) for c, b in zip(cs, s.buf, strict=True)]),
        per_ckpt([frozenset(p for i, p in enumerate(ps) if m >> i & 1) for m in s.snapped]),
        per_ckpt([frozenset(c for i, c in enumerate(cs) if m >> i & 1) for m in s.barrier_in]),
        per_ckpt(
            [
                fcn([(ps[p], x) for p, x in zip(cfg.sources, rp, strict=True) if x is not None])
                for rp in s.rec_pos
            ]
        ),
        per_ckpt(
            [
                fcn(
                    [
                        (ps[p], _bag_to_tla(cfg, b))
                        for p, b in zip(cfg.ops, rs, strict=True)
                        if b is not None
                    ]
                )
                for rs in s.rec_state
            ]
        ),
        per_ckpt([fcn([(c, msgs(b)) for c, b in zip(cs, rc, strict=True)]) for rc in s.rec_chan]),
        s.restored,
        partial(s.s0),
        partial(s.sf),
        per_ckpt([tuple(_act_to_tla(cfg, a) for a in w) for w in s.white_acts]),
        per_ckpt([tuple(_act_to_tla(cfg, a) for a in r) for r in s.red_acts]),
    ]


def _bad(what: str) -> InputError:
    return InputError(f"not a state of BarrierSnapshot: {what}", code="RL-INPUT-STATE")


def _from_tla(
    cfg: BarrierConfig, t: Mapping[str, Value], variables: tuple[str, ...]
) -> BarrierState:
    missing = [n for n in variables if n not in t]
    if missing:
        raise _bad("missing variables " + ", ".join(missing))
    ks: tuple[Value, ...] = cfg.ckpts
    cs: tuple[Value, ...] = cfg.chans
    src_names: tuple[Value, ...] = tuple(cfg.procs[p] for p in cfg.sources)
    op_names: tuple[Value, ...] = tuple(cfg.procs[p] for p in cfg.ops)
    sidx = {n: i for i, n in enumerate(src_names)}
    pidx: dict[Value, int] = {p: i for p, i in cfg.proc_index.items()}
    cidx: dict[Value, int] = {c: i for c, i in cfg.chan_index.items()}

    def over(v: Value, domain: tuple[Value, ...], what: str) -> list[Value]:
        d = _items(v, what)
        if set(d) != set(domain):
            raise _bad(f"{what} has the wrong domain")
        return [d[x] for x in domain]

    def nat(v: Value, what: str) -> int:
        if type(v) is not int or v < 0:
            raise _bad(f"{what} is not a natural number")
        return int(v)

    def msg(v: Value) -> Msg:
        if not isinstance(v, Record):
            raise _bad("a message is not a record")
        if v.get("kind") == "barrier":
            return (-1, nat(v["ckpt"], "a barrier's ckpt"), 0)
        if v.get("kind") == "rec" and v.get("src") in sidx:
            return (sidx[v["src"]], nat(v["idx"], "idx"), nat(v["round"], "round"))
        raise _bad(f"unexpected message {v!r}")

    def msgs(v: Value, what: str) -> tuple[Msg, ...]:
        if not isinstance(v, tuple):
            raise _bad(f"{what} is not a sequence")
        return tuple(msg(m) for m in v)

    def bag(v: Value) -> Bag:
        out: list[tuple[Msg, int]] = []
        for e, n in _items(v, "a bag of effects").items():
            if not (isinstance(e, tuple) and len(e) == 3 and e[0] in sidx):
                raise _bad(f"unexpected effect {e!r}")
            out.append(((sidx[e[0]], nat(e[1], "idx"), nat(e[2], "round")), nat(n, "copies")))
        return tuple(sorted(out))

    def partial_pos(v: Value) -> tuple[int | None, ...]:
        d = _items(v, "a position function")
        return tuple(nat(d[s], "a position") if s in d else None for s in src_names)

    def partial_state(v: Value) -> tuple[Bag | None, ...]:
        d = _items(v, "a state function")
        return tuple(bag(d[p]) if p in d else None for p in op_names)

    def bstate(v: Value) -> BState:
        if not isinstance(v, Record):
            raise _bad("a global state is not a record")
        return (
            partial_pos(v["pos"]),
            partial_state(v["state"]),
            tuple(msgs(b, "a buffer") for b in over(v["buf"], cs, "a global state's buf")),
        )

    def partial_g(v: Value, what: str) -> tuple[BState | None, ...]:
        d = _items(v, what)
        return tuple(bstate(d[k]) if k in d else None for k in ks)

    def mask(v: Value, index: Mapping[Value, int], what: str) -> int:
        if not isinstance(v, frozenset) or not all(x in index for x in v):
            raise _bad(f"{what} is not a set of known elements")
        return sum(1 << index[x] for x in v)

    def acts(v: Value) -> tuple[BAct, ...]:
        if not isinstance(v, tuple):
            raise _bad("an action history is not a sequence")
        out: list[BAct] = []
        for a in v:
            if not isinstance(a, Record) or a.get("kind") not in ACT_KINDS:
                raise _bad("an action is not a record")
            out.append((ACT_KINDS.index(str(a["kind"])), pidx[a["p"]], cidx[a["c"]], msg(a["m"])))
        return tuple(out)

    restored = t["restored"]
    if type(restored) is not int:
        raise _bad("restored is not an integer")
    pos = partial_pos(t["pos"])
    state = partial_state(t["state"])
    if any(x is None for x in pos) or any(x is None for x in state):
        raise _bad("pos or state has the wrong domain")
    return BarrierState(
        pos=tuple(x for x in pos if x is not None),
        state=tuple(x for x in state if x is not None),
        buf=tuple(msgs(b, "buf[c]") for b in over(t["buf"], cs, "buf")),
        snapped=tuple(mask(x, pidx, "snapped[n]") for x in over(t["snapped"], ks, "snapped")),
        barrier_in=tuple(
            mask(x, cidx, "barrierIn[n]") for x in over(t["barrierIn"], ks, "barrierIn")
        ),
        rec_pos=tuple(partial_pos(x) for x in over(t["recPos"], ks, "recPos")),
        rec_state=tuple(partial_state(x) for x in over(t["recState"], ks, "recState")),
        rec_chan=tuple(
            tuple(msgs(b, "recChan[n][c]") for b in over(rc, cs, "recChan[n]"))
            for rc in over(t["recChan"], ks, "recChan")
        ),
        restored=int(restored),
        s0=partial_g(t["S0"], "S0"),
        sf=partial_g(t["Sf"], "Sf"),
        white_acts=tuple(acts(w) for w in over(t["whiteActs"], ks, "whiteActs")),
        red_acts=tuple(acts(r) for r in over(t["redActs"], ks, "redActs")),
    )
