"""The invariants and the action property of ChandyLamport.tla, by the spec's names.

State predicates ``(cfg, s) -> bool``: :func:`type_ok` (TypeOK),
:func:`red_letter_invariant` (RedLetterInvariant), :func:`one_red_letter_per_buffer`
(OneRedLetterPerBuffer), :func:`lemma0`, :func:`lemma1`, :func:`lemma0_implies_lemma1`,
:func:`stable_lemma0`, :func:`stable_lemma1`, :func:`stable_detection`,
:func:`snapshot_satisfies_app_inv`; the action properties :func:`shadow_lemma0`
``(cfg, s, t) -> bool`` (ShadowLemma0's ``\\A k \\in Snap : ShadowStep(k)``) and
:func:`no_interference` (NoInterference's ``AppStep``).
:data:`INVARIANTS` maps the TLA+ names to them.  Helpers: :func:`replay` (Replay),
:func:`act_enabled` / :func:`act_result`, :func:`snapshot` (Snapshot), :func:`shadow0`
(Shadow0) and :func:`app_state` (AppState).  Snapshots are *indices* into
``cfg.snaps`` in these helpers.

:class:`Checker` evaluates what the cfg lists, in cfg order, as TLC does (the first
invariant that fails is the one reported), with memoisation that keeps it exactly as
strong as evaluating every formula on every state: the per-snapshot parts of Lemma0,
Lemma1, StableLemma0/1, SnapshotSatisfiesAppInv and StableDetection's antecedent are
pure functions of ``S0[k], Sf[k], whiteActs[k], redActs[k], recMachine[k], recBuf[k]``
and are cached on exactly that tuple of inputs.  (Those inputs freeze once snapshot k
completes -- RecordAct only appends while InProgress(k), every machine and buffer is
red then so TurnRed and every Recording variant are off -- so in practice each
snapshot's lemmas are evaluated once per distinct completion; but the cache does not
rely on that argument: a state whose inputs differ is evaluated afresh.)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

from redletter.errors import SpecError
from redletter.python_model.actions import app_state
from redletter.python_model.config import ModelConfig
from redletter.python_model.state import (
    ACT_INTERNAL,
    ACT_RECEIVE,
    ACT_SEND,
    Act,
    GState,
    Local,
    State,
)

__all__ = [
    "INVARIANTS",
    "PROPERTIES",
    "Checker",
    "act_enabled",
    "act_result",
    "app_actions",
    "app_state",
    "lemma0",
    "lemma0_implies_lemma1",
    "lemma1",
    "no_interference",
    "one_red_letter_per_buffer",
    "red_letter_invariant",
    "replay",
    "shadow0",
    "shadow_lemma0",
    "snapshot",
    "snapshot_part",
    "snapshot_satisfies_app_inv",
    "stable_detection",
    "stable_lemma0",
    "stable_lemma1",
    "type_ok",
]


def _eval_error(what: str) -> SpecError:
    return SpecError(f"evaluation error (TLC would stop here too): {what}", code="RL-SPEC-EVAL")


def _chan_of(cfg: ModelConfig, src: int, dst: int) -> int:
    for c in range(len(cfg.chans)):
        if cfg.chan_src[c] == src and cfg.chan_dst[c] == dst:
            return c
    raise _eval_error(f"<<{cfg.procs[src]}, {cfg.procs[dst]}>> is not a buffer")


def _local_of(cfg: ModelConfig, g: GState, p: int) -> Local:
    x = g[0][p]
    if x is None:
        raise _eval_error(f"g.local[{cfg.procs[p]}] applied outside the domain of a partial state")
    return x


def act_enabled(cfg: ModelConfig, g: GState, a: Act) -> bool:
    """``ActEnabled(g, a)``."""
    kind, p, q, v = a
    app = cfg.app
    if kind == ACT_SEND:
        return v in app.sendable(p, q, _local_of(cfg, g, p))
    if kind == ACT_INTERNAL:
        return v in app.events(p, _local_of(cfg, g, p))
    b = g[1][_chan_of(cfg, q, p)]
    return bool(b) and b[0] == v and app.can_receive(p, q, v, _local_of(cfg, g, p))


def act_result(cfg: ModelConfig, g: GState, a: Act) -> GState:
    """``ActResult(g, a)``."""
    kind, p, q, v = a
    app = cfg.app
    loc, bufs = g
    x = _local_of(cfg, g, p)
    if kind == ACT_SEND:
        c = _chan_of(cfg, p, q)
        return (
            (*loc[:p], app.after_send(p, q, v, x), *loc[p + 1 :]),
            (*bufs[:c], (*bufs[c], v), *bufs[c + 1 :]),
        )
    if kind == ACT_INTERNAL:
        return ((*loc[:p], app.after_event(p, v, x), *loc[p + 1 :]), bufs)
    assert kind == ACT_RECEIVE
    c = _chan_of(cfg, q, p)
    return (
        (*loc[:p], app.after_receive(p, q, v, x), *loc[p + 1 :]),
        (*bufs[:c], bufs[c][1:], *bufs[c + 1 :]),
    )


def replay(cfg: ModelConfig, g: GState, acts: tuple[Act, ...]) -> tuple[bool, GState]:
    """``Replay(g, acts)``: (ok, the state reached or where it got stuck)."""
    for a in acts:
        if not act_enabled(cfg, g, a):
            return False, g
        g = act_result(cfg, g, a)
    return True, g


def snapshot(s: State, k: int) -> GState:
    """``Snapshot(k)`` (k an index): recorded machine states and buffer streams."""
    return (s.rec_machine[k], s.rec_buf[k])


def snapshot_part(s: State, k: int) -> tuple[object, ...]:
    """What the invariants over snapshot ``k`` read of ``s``, with ``k``: its ``S0``,
    ``Sf``, acts and recordings (the key their verdicts are memoised by)."""
    return (k, s.s0[k], s.sf[k], s.white_acts[k], s.red_acts[k], s.rec_machine[k], s.rec_buf[k])


def _before(b: tuple[int, ...], letter: int) -> tuple[int, ...]:
    """``Before(s, k)``: the app values of s before its first RedLetter(k)."""
    out: list[int] = []
    for v in b:
        if v == letter:
            break
        if v >= 0:
            out.append(v)
    return tuple(out)


def shadow0(cfg: ModelConfig, s: State, k: int) -> GState:
    """``Shadow0(k)``: Dijkstra's shadow state by his rules (i)-(iii)."""
    red, rm = s.red[k], s.rec_machine[k]
    rb, red_buf = s.rec_buf[k], s.red_buf[k]
    letter = -cfg.snaps[k]
    return (
        tuple(rm[p] if red >> p & 1 else x for p, x in enumerate(s.local)),
        tuple(
            rb[c] if red_buf >> c & 1 else (*rb[c], *_before(b, letter))
            for c, b in enumerate(s.buf)
        ),
    )


# --------------------------------------------------------------------------- invariants


def type_ok(cfg: ModelConfig, s: State) -> bool:
    """``TypeOK``."""
    app = cfg.app
    if not all(app.in_local_states(x) for x in s.local):
        return False
    for b in s.buf:
        for v in b:
            if v < 0 and -v not in cfg.snap_index:
                return False
    nprocs = (1 << len(cfg.procs)) - 1
    for k in range(len(cfg.snaps)):
        if s.red[k] & ~nprocs or s.red_buf[k] & ~cfg.all_chans:
            return False
        dom = 0
        for p, x in enumerate(s.rec_machine[k]):
            if x is not None:
                if not app.in_local_states(x):
                    return False
                dom |= 1 << p
        if dom != s.red[k]:
            return False
        if s.sf[k] is not None and s.s0[k] is None:  # DOMAIN Sf \subseteq DOMAIN S0
            return False
    return True


def red_letter_invariant(cfg: ModelConfig, s: State) -> bool:
    """``RedLetterInvariant``: each buffer from a red to a white machine holds exactly
    one red letter (of that snapshot)."""
    for k, red in enumerate(s.red):
        if not red:
            continue
        letter = -cfg.snaps[k]
        for c, b in enumerate(s.buf):
            if (
                red >> cfg.chan_src[c] & 1
                and not red >> cfg.chan_dst[c] & 1
                and b.count(letter) != 1
            ):
                return False
    return True


def one_red_letter_per_buffer(cfg: ModelConfig, s: State) -> bool:
    """``OneRedLetterPerBuffer``: per snapshot, the red letters of k in a buffer plus
    one if the buffer is red equal one if its source is red, else zero."""
    for k, red in enumerate(s.red):
        letter = -cfg.snaps[k]
        red_buf = s.red_buf[k]
        for c, b in enumerate(s.buf):
            want = red >> cfg.chan_src[c] & 1
            if b.count(letter) + (red_buf >> c & 1) != want:
                return False
    return True


def _complete(s: State) -> list[int]:
    return [k for k, g in enumerate(s.sf) if g is not None]


def _lemma0_k(cfg: ModelConfig, s: State, k: int) -> bool:
    s0 = s.s0[k]
    if s0 is None:
        raise _eval_error("S0[k] applied outside its domain")
    ok, g = replay(cfg, s0, s.white_acts[k])
    return ok and g == snapshot(s, k)


def _lemma1_k(cfg: ModelConfig, s: State, k: int) -> bool:
    ok, g = replay(cfg, snapshot(s, k), s.red_acts[k])
    return ok and g == s.sf[k]


def _lemma0_implies_lemma1_k(cfg: ModelConfig, s: State, k: int) -> bool:
    return not _lemma0_k(cfg, s, k) or _lemma1_k(cfg, s, k)


def _s0(s: State, k: int) -> GState:
    g = s.s0[k]
    if g is None:
        raise _eval_error("S0[k] applied outside its domain")
    return g


def _sf(s: State, k: int) -> GState:
    g = s.sf[k]
    assert g is not None
    return g


def _stable_lemma0_k(cfg: ModelConfig, s: State, k: int) -> bool:
    return not cfg.app.stable(_s0(s, k)) or cfg.app.stable(snapshot(s, k))


def _stable_lemma1_k(cfg: ModelConfig, s: State, k: int) -> bool:
    return not cfg.app.stable(snapshot(s, k)) or cfg.app.stable(_sf(s, k))


def _stable_snapshot_k(cfg: ModelConfig, s: State, k: int) -> bool:
    return cfg.app.stable(snapshot(s, k))


def _app_inv_k(cfg: ModelConfig, s: State, k: int) -> bool:
    return cfg.app.inv(snapshot(s, k))


_PER_K: Final[Mapping[str, Callable[[ModelConfig, State, int], bool]]] = {
    "Lemma0": _lemma0_k,
    "Lemma1": _lemma1_k,
    "Lemma0ImpliesLemma1": _lemma0_implies_lemma1_k,
    "StableLemma0": _stable_lemma0_k,
    "StableLemma1": _stable_lemma1_k,
    "SnapshotSatisfiesAppInv": _app_inv_k,
    "stable(Snapshot(k))": _stable_snapshot_k,
}


def lemma0(cfg: ModelConfig, s: State) -> bool:
    """``Lemma0``: replaying whiteActs[k] from S0[k] works and ends in Snapshot(k)."""
    return all(_lemma0_k(cfg, s, k) for k in _complete(s))


def lemma1(cfg: ModelConfig, s: State) -> bool:
    """``Lemma1``: replaying redActs[k] from Snapshot(k) works and ends in Sf[k]."""
    return all(_lemma1_k(cfg, s, k) for k in _complete(s))


def lemma0_implies_lemma1(cfg: ModelConfig, s: State) -> bool:
    """``Lemma0ImpliesLemma1``: Lemma0Holds(k) => Lemma1Holds(k) for every completed k."""
    return all(_lemma0_implies_lemma1_k(cfg, s, k) for k in _complete(s))


def stable_lemma0(cfg: ModelConfig, s: State) -> bool:
    """``StableLemma0``: AppStable(S0[k]) => AppStable(Snapshot(k))."""
    return all(_stable_lemma0_k(cfg, s, k) for k in _complete(s))


def stable_lemma1(cfg: ModelConfig, s: State) -> bool:
    """``StableLemma1``: AppStable(Snapshot(k)) => AppStable(Sf[k])."""
    return all(_stable_lemma1_k(cfg, s, k) for k in _complete(s))


def stable_detection(cfg: ModelConfig, s: State) -> bool:
    """``StableDetection``: AppStable(Snapshot(k)) => AppStable(AppState)."""
    return all(
        not _stable_snapshot_k(cfg, s, k) or cfg.app.stable(app_state(s)) for k in _complete(s)
    )


def snapshot_satisfies_app_inv(cfg: ModelConfig, s: State) -> bool:
    """``SnapshotSatisfiesAppInv``: AppInv(Snapshot(k))."""
    return all(_app_inv_k(cfg, s, k) for k in _complete(s))


INVARIANTS: Final[Mapping[str, Callable[[ModelConfig, State], bool]]] = {
    "TypeOK": type_ok,
    "RedLetterInvariant": red_letter_invariant,
    "OneRedLetterPerBuffer": one_red_letter_per_buffer,
    "Lemma0": lemma0,
    "Lemma1": lemma1,
    "Lemma0ImpliesLemma1": lemma0_implies_lemma1,
    "StableLemma0": stable_lemma0,
    "StableLemma1": stable_lemma1,
    "StableDetection": stable_detection,
    "SnapshotSatisfiesAppInv": snapshot_satisfies_app_inv,
}


# --------------------------------------------------------------------------- action property


def _shadow_step(cfg: ModelConfig, s: State, t: State, k: int, sh: GState | None) -> bool:
    """``ShadowStep(k)`` on the step s -> t (``sh``: Shadow0(k) of s, if known)."""
    started = s.s0[k] is not None
    if not started and t.s0[k] is not None and shadow0(cfg, t, k) != t.s0[k]:
        return False
    if started and s.sf[k] is None:
        if sh is None:
            sh = shadow0(cfg, s, k)
        w, w2 = s.white_acts[k], t.white_acts[k]
        if len(w2) > len(w):
            a = w2[-1]
            return act_enabled(cfg, sh, a) and shadow0(cfg, t, k) == act_result(cfg, sh, a)
        return shadow0(cfg, t, k) == sh
    return True


def shadow_lemma0(cfg: ModelConfig, s: State, t: State) -> bool:
    """``ShadowLemma0`` on one step: ``\\A k \\in Snap : ShadowStep(k)``."""
    return all(_shadow_step(cfg, s, t, k, None) for k in range(len(cfg.snaps)))


def app_actions(cfg: ModelConfig, g: GState) -> list[Act]:
    """``AppActions(g)``: every action the application alone could take in g (before
    ActEnabled: a receipt is offered for every non-empty buffer)."""
    app = cfg.app
    loc, bufs = g
    out: list[Act] = []
    for c in range(len(cfg.chans)):
        p, q = cfg.chan_src[c], cfg.chan_dst[c]
        out += [(ACT_SEND, p, q, m) for m in app.sendable(p, q, _local_of(cfg, g, p))]
    for p in range(len(loc)):
        out += [(ACT_INTERNAL, p, p, e) for e in app.events(p, _local_of(cfg, g, p))]
    for c, b in enumerate(bufs):
        if b:
            out.append((ACT_RECEIVE, cfg.chan_dst[c], cfg.chan_src[c], b[0]))
    return out


def no_interference(cfg: ModelConfig, s: State, t: State) -> bool:
    """``NoInterference``'s ``AppStep`` on the step s -> t: AppState is unchanged, or
    changed by exactly one action the application alone could take."""
    g, h = app_state(s), app_state(t)
    if g == h:
        return True
    return any(act_enabled(cfg, g, a) and act_result(cfg, g, a) == h for a in app_actions(cfg, g))


PROPERTIES: Final[Mapping[str, Callable[[ModelConfig, State, State], bool]]] = {
    "ShadowLemma0": shadow_lemma0,
    "NoInterference": no_interference,
}


# --------------------------------------------------------------------------- checker


class Checker:
    """Evaluates a model's listed invariants and action properties, memoised."""

    def __init__(self, cfg: ModelConfig) -> None:
        self.cfg = cfg
        self.invariants = cfg.invariants
        self.properties = cfg.properties
        self._per_k: dict[tuple[object, ...], dict[str, bool]] = {}
        self._shadow_src: State | None = None
        self._shadow_cache: dict[int, GState] = {}
        self._cheap = {
            "TypeOK": type_ok,
            "RedLetterInvariant": red_letter_invariant,
            "OneRedLetterPerBuffer": one_red_letter_per_buffer,
        }

    def _memos(self, s: State, complete: list[int]) -> list[tuple[int, dict[str, bool]]]:
        """Per snapshot ``k`` of ``complete``: the memo of what holds of its part of
        ``s`` (found once per state, shared by every invariant over ``k``)."""
        out: list[tuple[int, dict[str, bool]]] = []
        per_k = self._per_k
        for k in complete:
            key = snapshot_part(s, k)
            memo = per_k.get(key)
            if memo is None:
                memo = per_k[key] = {}
            out.append((k, memo))
        return out

    def _holds(self, name: str, s: State, memos: list[tuple[int, dict[str, bool]]]) -> bool:
        cheap = self._cheap.get(name)
        if cheap is not None:
            return cheap(self.cfg, s)
        if name == "StableDetection":  # stable(Snapshot(k)) => stable(AppState)
            for k, memo in memos:
                r = memo.get("stable(Snapshot(k))")
                if r is None:
                    r = memo["stable(Snapshot(k))"] = _stable_snapshot_k(self.cfg, s, k)
                if r and not self.cfg.app.stable(app_state(s)):
                    return False
            return True
        check = _PER_K[name]
        for k, memo in memos:
            r = memo.get(name)
            if r is None:
                r = memo[name] = check(self.cfg, s, k)
            if not r:
                return False
        return True

    def holds(self, name: str, s: State, complete: list[int] | None = None) -> bool:
        """Does invariant ``name`` hold in ``s``?  (``complete``: DOMAIN Sf, if known.)"""
        if complete is None:
            complete = [k for k, g in enumerate(s.sf) if g is not None]
        return self._holds(name, s, self._memos(s, complete))

    def violated_invariant(self, s: State) -> str | None:
        """The first invariant of the cfg that ``s`` violates, or None."""
        complete = [k for k, g in enumerate(s.sf) if g is not None]
        memos = self._memos(s, complete)
        for name in self.invariants:
            if not complete and name not in self._cheap:
                continue  # \A k \in DOMAIN Sf : ... holds vacuously
            if not self._holds(name, s, memos):
                return name
        return None

    def violated_property(self, s: State, t: State) -> str | None:
        """The first action property of the cfg that the step s -> t violates, or None."""
        for name in self.properties:
            if name == "ShadowLemma0":
                if s is not self._shadow_src:
                    self._shadow_src = s
                    self._shadow_cache = {}
                for k in range(len(self.cfg.snaps)):
                    sh: GState | None = None
                    if s.s0[k] is not None and s.sf[k] is None:
                        sh = self._shadow_cache.get(k)
                        if sh is None:
                            sh = self._shadow_cache[k] = shadow0(self.cfg, s, k)
                    if not _shadow_step(self.cfg, s, t, k, sh):
                        return name
            elif not PROPERTIES[name](self.cfg, s, t):
                return name
        return None
