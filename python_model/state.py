"""The state of ChandyLamport.tla: a frozen dataclass whose fields are its variables.

Fields are the TLA+ variables in snake_case (:data:`TLA_NAMES` maps them back), over
the small-integer indices of :class:`~redletter.python_model.config.ModelConfig` so that a state
is cheap to build, hash and compare:

* ``local[p]``: the application's local state of machine index ``p`` (see apps.py);
* ``buf[c]``: the messages of buffer index ``c``, oldest first, each an ``int``: an
  application message ``AppMsg(v)`` is ``v`` (``v >= 0``), a red letter
  ``RedLetter(k)`` is ``-k`` (snapshot ids are positive);
* ``red[k]`` / ``red_buf[k]`` (``k`` a snapshot index): bitmasks of machines / buffers;
* ``rec_machine[k][p]``: the recorded local state, ``None`` when ``p`` is outside
  ``DOMAIN recMachine[k]``;
* ``rec_buf[k][c]``: the recorded application values;
* ``s0[k]`` / ``sf[k]``: a global app state :data:`GState` or ``None`` outside the domain;
* ``white_acts[k]`` / ``red_acts[k]``: tuples of :data:`Act`.

The hash is computed once, at construction.  :func:`to_tla` gives exactly the value
TLC prints (parsed with :func:`redletter.python_model.values.parse_state`); :func:`from_tla`
is its inverse.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Final, Protocol, TypeAlias

from redletter.errors import InputError
from redletter.python_model.values import Fcn, Record, Value, fcn
from redletter.python_model.values import State as TlaState

__all__ = [
    "ACT_INTERNAL",
    "ACT_KINDS",
    "ACT_RECEIVE",
    "ACT_SEND",
    "TLA_NAMES",
    "Act",
    "GState",
    "Local",
    "LocalCodec",
    "ModelShape",
    "State",
    "act_to_tla",
    "from_tla",
    "gstate_to_tla",
    "to_tla",
]

Local: TypeAlias = Hashable
"""An application's local state (int for TokenApp, tuples for the others)."""

GState: TypeAlias = tuple[tuple[Local, ...], tuple[tuple[int, ...], ...]]
"""A global app state ``[local |-> ..., buf |-> ...]``: locals per machine (``None``
outside the domain, for a partial snapshot) and app values per buffer."""


class LocalCodec(Protocol):
    """An application's local states as TLA+ values
    (every :class:`~redletter.python_model.apps.App` is one)."""

    def local_to_tla(self, s: Local) -> Value: ...
    def local_from_tla(self, v: Value) -> Local: ...


class ModelShape(Protocol):
    """What :func:`to_tla` and :func:`from_tla` read of a model: its machines, buffers
    and snapshots in index order, and its application's local-state codec
    (:class:`~redletter.python_model.config.ModelConfig` is one)."""

    @property
    def procs(self) -> tuple[str, ...]: ...
    @property
    def chans(self) -> tuple[tuple[str, str], ...]: ...
    @property
    def snaps(self) -> tuple[int, ...]: ...
    @property
    def proc_index(self) -> Mapping[str, int]: ...
    @property
    def chan_index(self) -> Mapping[tuple[str, str], int]: ...
    @property
    def app(self) -> LocalCodec: ...


ACT_SEND: Final = 0
ACT_RECEIVE: Final = 1
ACT_INTERNAL: Final = 2
ACT_KINDS: Final = ("send", "receive", "internal")

Act: TypeAlias = tuple[int, int, int, int]
"""An application action ``[kind, p, q, val]``: kind code, machine, peer, value."""

TLA_NAMES: Final[Mapping[str, str]] = {
    "local": "local",
    "buf": "buf",
    "red": "red",
    "red_buf": "redBuf",
    "rec_machine": "recMachine",
    "rec_buf": "recBuf",
    "s0": "S0",
    "sf": "Sf",
    "white_acts": "whiteActs",
    "red_acts": "redActs",
}
"""Python field name -> TLA+ variable name, in the spec's order."""


@dataclass(frozen=True, slots=True, eq=False, init=False)
class State:
    """One state of the spec (see the module docstring for the encoding)."""

    local: tuple[Local, ...]
    buf: tuple[tuple[int, ...], ...]
    red: tuple[int, ...]
    red_buf: tuple[int, ...]
    rec_machine: tuple[tuple[Local | None, ...], ...]
    rec_buf: tuple[tuple[tuple[int, ...], ...], ...]
    s0: tuple[GState | None, ...]
    sf: tuple[GState | None, ...]
    white_acts: tuple[tuple[Act, ...], ...]
    red_acts: tuple[tuple[Act, ...], ...]
    _hash: int = field(init=False, repr=False)

    # Written out rather than generated (``init=False``): the search builds a State
    # for every successor, and mypyc compiles this ``__init__`` to direct slot stores
    # where the one ``dataclasses`` generates runs interpreted, through the generic
    # ``object.__setattr__``: 30 % of the compiled search of MCTokenComplete3Large.
    def __init__(
        self,
        local: tuple[Local, ...],
        buf: tuple[tuple[int, ...], ...],
        red: tuple[int, ...],
        red_buf: tuple[int, ...],
        rec_machine: tuple[tuple[Local | None, ...], ...],
        rec_buf: tuple[tuple[tuple[int, ...], ...], ...],
        s0: tuple[GState | None, ...],
        sf: tuple[GState | None, ...],
        white_acts: tuple[tuple[Act, ...], ...],
        red_acts: tuple[tuple[Act, ...], ...],
    ) -> None:
        object.__setattr__(self, "local", local)
        object.__setattr__(self, "buf", buf)
        object.__setattr__(self, "red", red)
        object.__setattr__(self, "red_buf", red_buf)
        object.__setattr__(self, "rec_machine", rec_machine)
        object.__setattr__(self, "rec_buf", rec_buf)
        object.__setattr__(self, "s0", s0)
        object.__setattr__(self, "sf", sf)
        object.__setattr__(self, "white_acts", white_acts)
        object.__setattr__(self, "red_acts", red_acts)
        object.__setattr__(self, "_hash", hash(self.key()))

    def __reduce__(self) -> tuple[type[State], tuple[object, ...]]:
        # Pickled as its fields and rebuilt by __init__: a compiled class's __new__
        # runs __init__, so pickle's default (__new__ without arguments) fails.
        return State, self.key()

    def key(self) -> tuple[object, ...]:
        """The fields as one tuple (what equality compares)."""
        return (
            self.local,
            self.buf,
            self.red,
            self.red_buf,
            self.rec_machine,
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
        if not isinstance(other, State) or self._hash != other._hash:
            return False
        return self.key() == other.key()


# --------------------------------------------------------------------------- to TLA+


def _fn(pairs: list[tuple[Value, Value]]) -> Value:
    return fcn(pairs)


def _msg(v: int) -> Value:
    if v >= 0:
        return Record((("kind", "app"), ("snap", 0), ("val", v)))
    return Record((("kind", "red"), ("snap", -v), ("val", 0)))


def gstate_to_tla(cfg: ModelShape, g: GState) -> Value:
    """``[local |-> ..., buf |-> ...]`` as TLC prints it."""
    app = cfg.app
    local = _fn([(cfg.procs[i], app.local_to_tla(x)) for i, x in enumerate(g[0]) if x is not None])
    buf = _fn([(cfg.chans[i], tuple(b)) for i, b in enumerate(g[1])])
    return Record((("local", local), ("buf", buf)))


def act_to_tla(cfg: ModelShape, a: Act) -> Value:
    """``[kind |-> "send", p |-> ..., q |-> ..., val |-> ...]``."""
    return Record(
        (
            ("kind", ACT_KINDS[a[0]]),
            ("p", cfg.procs[a[1]]),
            ("q", cfg.procs[a[2]]),
            ("val", a[3]),
        )
    )


def _procs(cfg: ModelShape, mask: int) -> frozenset[Value]:
    return frozenset(p for i, p in enumerate(cfg.procs) if mask >> i & 1)


def _chans(cfg: ModelShape, mask: int) -> frozenset[Value]:
    return frozenset(c for i, c in enumerate(cfg.chans) if mask >> i & 1)


def to_tla(cfg: ModelShape, s: State) -> TlaState:
    """The state as :func:`redletter.python_model.values.parse_state` reads TLC's print of it."""
    app = cfg.app
    ks = cfg.snaps

    def per_snap(f: list[Value]) -> Value:
        return _fn(list(zip(ks, f, strict=True)))

    def partial(xs: tuple[GState | None, ...]) -> Value:
        return _fn(
            [(k, gstate_to_tla(cfg, g)) for k, g in zip(ks, xs, strict=True) if g is not None]
        )

    return TlaState(
        [
            (
                "local",
                _fn([(p, app.local_to_tla(x)) for p, x in zip(cfg.procs, s.local, strict=True)]),
            ),
            (
                "buf",
                _fn(
                    [(c, tuple(_msg(v) for v in b)) for c, b in zip(cfg.chans, s.buf, strict=True)]
                ),
            ),
            ("red", per_snap([_procs(cfg, m) for m in s.red])),
            ("redBuf", per_snap([_chans(cfg, m) for m in s.red_buf])),
            (
                "recMachine",
                per_snap(
                    [
                        _fn(
                            [
                                (cfg.procs[i], app.local_to_tla(x))
                                for i, x in enumerate(rm)
                                if x is not None
                            ]
                        )
                        for rm in s.rec_machine
                    ]
                ),
            ),
            (
                "recBuf",
                per_snap(
                    [
                        _fn([(c, tuple(b)) for c, b in zip(cfg.chans, rb, strict=True)])
                        for rb in s.rec_buf
                    ]
                ),
            ),
            ("S0", partial(s.s0)),
            ("Sf", partial(s.sf)),
            ("whiteActs", per_snap([tuple(act_to_tla(cfg, a) for a in w) for w in s.white_acts])),
            ("redActs", per_snap([tuple(act_to_tla(cfg, a) for a in r) for r in s.red_acts])),
        ]
    )


# --------------------------------------------------------------------------- from TLA+


def _bad(what: str) -> InputError:
    return InputError(f"not a state of ChandyLamport: {what}", code="RL-INPUT-STATE")


def _items(v: Value, what: str) -> dict[Value, Value]:
    if isinstance(v, tuple):
        return {i + 1: x for i, x in enumerate(v)}
    if isinstance(v, Record):
        return dict(v.fields)
    if isinstance(v, Fcn):
        return dict(v.pairs)
    raise _bad(f"{what} is not a function")


def _int_seq(v: Value, what: str) -> tuple[int, ...]:
    if not isinstance(v, tuple) or not all(type(x) is int for x in v):
        raise _bad(f"{what} is not a sequence of integers")
    return tuple(int(x) for x in v if type(x) is int)


def from_tla(cfg: ModelShape, t: Mapping[str, Value]) -> State:
    """The :class:`State` for a TLC state (inverse of :func:`to_tla`)."""
    missing = [n for n in TLA_NAMES.values() if n not in t]
    if missing:
        raise _bad("missing variables " + ", ".join(missing))
    app = cfg.app

    def over(v: Value, domain: tuple[Value, ...], what: str) -> list[Value]:
        d = _items(v, what)
        if set(d) != set(domain):
            raise _bad(f"{what} has the wrong domain")
        return [d[x] for x in domain]

    def mask(v: Value, index: Mapping[Value, int], what: str) -> int:
        if not isinstance(v, frozenset) or not all(x in index for x in v):
            raise _bad(f"{what} is not a set of known elements")
        return sum(1 << index[x] for x in v)

    pidx: dict[Value, int] = {p: i for p, i in cfg.proc_index.items()}
    cidx: dict[Value, int] = {c: i for c, i in cfg.chan_index.items()}
    procs: tuple[Value, ...] = cfg.procs
    chans: tuple[Value, ...] = cfg.chans
    snaps: tuple[Value, ...] = cfg.snaps

    def msg(v: Value) -> int:
        if not isinstance(v, Record):
            raise _bad("a message is not a record")
        kind, snap, val = v.get("kind"), v.get("snap"), v.get("val")
        if kind == "app" and type(val) is int and val >= 0:
            return int(val)
        if kind == "red" and type(snap) is int and snap >= 1:
            return -int(snap)
        raise _bad(f"unexpected message {v!r}")

    def gstate(v: Value) -> GState:
        if not isinstance(v, Record):
            raise _bad("a global state is not a record")
        loc = _items(v["local"], "a global state's local")
        return (
            tuple(app.local_from_tla(loc[p]) if p in loc else None for p in procs),
            tuple(_int_seq(b, "a buffer") for b in over(v["buf"], chans, "a global state's buf")),
        )

    def partial_g(v: Value, what: str) -> tuple[GState | None, ...]:
        d = _items(v, what)
        return tuple(gstate(d[k]) if k in d else None for k in snaps)

    def act(v: Value) -> Act:
        if not isinstance(v, Record) or v.get("kind") not in ACT_KINDS:
            raise _bad("an action is not a record")
        val = v["val"]
        if type(val) is not int:
            raise _bad("an action's val is not an integer")
        return (ACT_KINDS.index(str(v["kind"])), pidx[v["p"]], pidx[v["q"]], int(val))

    def acts(v: Value) -> tuple[Act, ...]:
        if not isinstance(v, tuple):
            raise _bad("an action history is not a sequence")
        return tuple(act(a) for a in v)

    def buf(b: Value) -> tuple[int, ...]:
        if not isinstance(b, tuple):
            raise _bad("a buffer is not a sequence")
        return tuple(msg(m) for m in b)

    rec_machine: list[tuple[Local | None, ...]] = []
    for rm in over(t["recMachine"], snaps, "recMachine"):
        d = _items(rm, "recMachine[k]")
        rec_machine.append(tuple(app.local_from_tla(d[p]) if p in d else None for p in procs))
    return State(
        local=tuple(app.local_from_tla(x) for x in over(t["local"], procs, "local")),
        buf=tuple(buf(b) for b in over(t["buf"], chans, "buf")),
        red=tuple(mask(x, pidx, "red[k]") for x in over(t["red"], snaps, "red")),
        red_buf=tuple(mask(x, cidx, "redBuf[k]") for x in over(t["redBuf"], snaps, "redBuf")),
        rec_machine=tuple(rec_machine),
        rec_buf=tuple(
            tuple(_int_seq(b, "recBuf[k][c]") for b in over(rb, chans, "recBuf[k]"))
            for rb in over(t["recBuf"], snaps, "recBuf")
        ),
        s0=partial_g(t["S0"], "S0"),
        sf=partial_g(t["Sf"], "Sf"),
        white_acts=tuple(acts(w) for w in over(t["whiteActs"], snaps, "whiteActs")),
        red_acts=tuple(acts(r) for r in over(t["redActs"], snaps, "redActs")),
    )
