"""EWD 864's two lemmas checked three ways that must agree.

For a snapshot k that has completed ("the initial state" S0 just before the first
machine turned red, "the snapshot state" S*, "the final state" Sf when the last red
letter was received):

1. **replay** -- the recorded action sequences: ``whiteActs[k]`` replays from S0 to
   S* and ``redActs[k]`` from S* to Sf (:func:`redletter.python_model.invariants.replay`, the
   spec's Lemma0/Lemma1);
2. **reachability** -- S* is reachable from S0, and Sf from S*, in the
   application's own state graph (:class:`AppGraph`: global application states, the
   application's actions only, no snapshot algorithm), found by breadth-first search
   and independent of the recorded sequences;
3. **shadow** -- Dijkstra's shadow networks executed along the whole trace
   (:func:`shadow_lemma0`, :func:`shadow_lemma1`): the shadow state is *defined* at
   every moment from reality by his rules (i)-(iii), and at every step of reality
   the shadow must take the corresponding step from the state the rules define now
   and arrive at the state the rules define next.

The three are not the same check: a shadow that keeps step with reality proves that
the white (red) actions replay, and a replay is a path in the application's graph,
so ``shadow => replay => reachable`` for each lemma on every completed snapshot.  In
a model without mutant steps all three must pass; in a mutant the implications must
hold.  Anything else is a bug in the kit and raises :class:`InternalError` naming the
model, the state and what each way said.  :func:`check_lemmas_everywhere` does this
on every reachable state of a model.

Buffers and red letters: the Python state keeps a red letter of snapshot k in a
buffer as ``-k``.  The shadow networks here are networks of snapshot k: their
buffers hold application messages and red letters of k (those of other snapshots are
not part of them), so rule (iii)'s "up to and including the red letter" can be taken
literally; they are compared with S0, S* and Sf (which hold application messages
only) with the red letters left out.  The shadow's application steps are the spec's
``ActEnabled``/``ActResult`` (FIFO receipt from the head), the same as replay's.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import pairwise

from redletter.errors import InputError, InternalError, SpecError
from redletter.python_model.actions import (
    ACTION_NAMES,
    Params,
    app_state,
    fast_successors,
    params_of,
)
from redletter.python_model.config import OVERRIDES, ModelConfig
from redletter.python_model.explore import explore
from redletter.python_model.invariants import act_enabled, act_result, replay, snapshot
from redletter.python_model.state import (
    ACT_INTERNAL,
    ACT_RECEIVE,
    ACT_SEND,
    Act,
    GState,
    Local,
    State,
)
from redletter.python_model.values import print_state

__all__ = [
    "WAYS",
    "AppGraph",
    "LemmaCounts",
    "ShadowVerdict",
    "Verdict",
    "Verdicts",
    "check_lemmas_everywhere",
    "check_trace",
    "is_mutant",
    "label_step",
    "replay_verdicts",
    "shadow_lemma0",
    "shadow_lemma1",
]

WAYS = ("replay", "reachability", "shadow")

Tagged = tuple[tuple[int, int], ...]
"""A buffer of reality with an identity per message: ``(id, value)`` oldest first."""


@dataclass(frozen=True)
class Verdict:
    """One way's answer for one lemma of one snapshot: ``ok`` and, if not, why."""

    ok: bool
    why: str = ""

    def __str__(self) -> str:
        return "holds" if self.ok else f"fails ({self.why})"


PASS = Verdict(True)


@dataclass(frozen=True)
class ShadowVerdict(Verdict):
    """A shadow network's answer: also the step where it failed (1-based index into
    the trace's steps) and the application actions the shadow took."""

    step: int | None = None
    acts: tuple[Act, ...] = ()


@dataclass(frozen=True)
class Verdicts:
    """The six answers for snapshot ``snap`` (an id): two lemmas, three ways."""

    snap: int
    replay0: Verdict
    replay1: Verdict
    reach0: Verdict
    reach1: Verdict
    shadow0: Verdict
    shadow1: Verdict

    def way(self, way: str, lemma: int) -> Verdict:
        """The verdict of ``way`` (one of :data:`WAYS`) on Lemma ``lemma`` (0 or 1)."""
        attr = {"replay": "replay", "reachability": "reach", "shadow": "shadow"}[way]
        v = getattr(self, f"{attr}{lemma}")
        assert isinstance(v, Verdict)
        return v

    def describe(self) -> str:
        return "; ".join(f"Lemma {n} by {w}: {self.way(w, n)}" for n in (0, 1) for w in WAYS)


def is_mutant(cfg: ModelConfig) -> bool:
    """Does the model override any step of the algorithm with a mutant's?"""
    return any(cfg.overrides.get(op, names[0]) != names[0] for op, names in OVERRIDES.items())


# --------------------------------------------------------------------------- 1. replay


def replay_verdicts(cfg: ModelConfig, s: State, k: int) -> tuple[Verdict, Verdict]:
    """Way 1 on completed snapshot index ``k`` of ``s``: Lemma0 and Lemma1 by replay
    of the recorded sequences (the spec's formulas)."""
    s0, sf = s.s0[k], s.sf[k]
    if s0 is None or sf is None:
        raise InputError(f"snapshot {cfg.snaps[k]} has not completed in this state")
    star = snapshot(s, k)
    out: list[Verdict] = []
    for name, start, acts, end in (
        ("whiteActs", s0, s.white_acts[k], star),
        ("redActs", star, s.red_acts[k], sf),
    ):
        try:
            ok, g = replay(cfg, start, acts)
        except SpecError as e:
            out.append(Verdict(False, f"replaying {name} is an evaluation error: {e.message}"))
            continue
        if not ok:
            done = _replayed_prefix(cfg, start, acts)
            out.append(Verdict(False, f"action {done + 1} of {name} is not enabled"))
        elif g != end:
            target = "the snapshot state" if end is star else "the final state"
            out.append(Verdict(False, f"replaying {name} does not end in {target}"))
        else:
            out.append(PASS)
    return out[0], out[1]


def _replayed_prefix(cfg: ModelConfig, g: GState, acts: tuple[Act, ...]) -> int:
    for n, a in enumerate(acts):
        if not act_enabled(cfg, g, a):
            return n
        g = act_result(cfg, g, a)
    return len(acts)


# --------------------------------------------------------------------------- 2. reachability


class _Search:
    """An incremental breadth-first search from one source."""

    def __init__(self, src: GState) -> None:
        self.seen: set[GState] = {src}
        self.frontier: deque[GState] = deque([src])


class AppGraph:
    """The application's own state graph: global application states (machines'
    local states and buffers of application messages), the application's actions
    (send, internal event, FIFO receipt) and nothing of the snapshot algorithm.

    :meth:`reachable` runs a breadth-first search from the source, kept between
    calls (memo per source), so each model explores each source's graph at most once.
    """

    def __init__(self, cfg: ModelConfig) -> None:
        self.cfg = cfg
        self._searches: dict[GState, _Search] = {}
        self.explored = 0  #: application states visited over all searches

    def successors(self, g: GState) -> Iterator[tuple[Act, GState]]:
        """Every application action enabled in ``g`` and its result."""
        cfg, app = self.cfg, self.cfg.app
        loc, bufs = g
        for c in range(len(cfg.chans)):
            p, q = cfg.chan_src[c], cfg.chan_dst[c]
            x = loc[p]
            for m in app.sendable(p, q, x):
                yield (
                    (ACT_SEND, p, q, m),
                    (
                        (*loc[:p], app.after_send(p, q, m, x), *loc[p + 1 :]),
                        (*bufs[:c], (*bufs[c], m), *bufs[c + 1 :]),
                    ),
                )
        for p, x in enumerate(loc):
            for e in app.events(p, x):
                yield (
                    (ACT_INTERNAL, p, p, e),
                    (
                        (*loc[:p], app.after_event(p, e, x), *loc[p + 1 :]),
                        bufs,
                    ),
                )
        for c, b in enumerate(bufs):
            if not b:
                continue
            p, q = cfg.chan_dst[c], cfg.chan_src[c]
            x, m = loc[p], b[0]
            if app.can_receive(p, q, m, x):
                yield (
                    (ACT_RECEIVE, p, q, m),
                    (
                        (*loc[:p], app.after_receive(p, q, m, x), *loc[p + 1 :]),
                        (*bufs[:c], b[1:], *bufs[c + 1 :]),
                    ),
                )

    def reachable(self, src: GState, dst: GState) -> bool:
        """Is ``dst`` reachable from ``src`` by application actions?  A partial state
        (a machine without a state) is no application state: only itself reaches it."""
        if src == dst:
            return True
        if any(x is None for x in src[0]) or any(x is None for x in dst[0]):
            return False
        search = self._searches.get(src)
        if search is None:
            search = self._searches[src] = _Search(src)
        seen, frontier = search.seen, search.frontier
        if dst in seen:
            return True
        while frontier:
            g = frontier.popleft()
            found = False
            for _, h in self.successors(g):
                if h not in seen:
                    seen.add(h)
                    frontier.append(h)
                    self.explored += 1
                    found = found or h == dst
            if found:
                return True
        return False

    def verdicts(self, s0: GState, star: GState, sf: GState) -> tuple[Verdict, Verdict]:
        """Way 2: S0 reaches S*, and S* reaches Sf."""
        v0 = (
            PASS
            if self.reachable(s0, star)
            else Verdict(False, "the snapshot state is not reachable from the initial state")
        )
        v1 = (
            PASS
            if self.reachable(star, sf)
            else Verdict(False, "the final state is not reachable from the snapshot state")
        )
        return v0, v1


# --------------------------------------------------------------------------- 3. shadows


class _Undefined(Exception):
    """A rule of (iii) cannot be applied (e.g. no red letter where one must be)."""


@dataclass(frozen=True)
class _Event:
    """What one step of reality did, with message identities."""

    action: str
    params: Params
    actor: int
    act: Act | None  #: the application action, if the step is one
    recv: tuple[int, int, int] | None  #: (buffer, id, value) received
    sent: tuple[int, int, int] | None  #: (buffer, id, value) of an application message
    letters: tuple[tuple[int, int, int], ...]  #: (buffer, id, value) red letters entered


@dataclass(frozen=True)
class _Reality:
    """A trace with identities: ``tagged[t]`` are the buffers of ``states[t]``."""

    states: tuple[State, ...]
    tagged: tuple[tuple[Tagged, ...], ...]
    events: tuple[_Event, ...]


def _reality(
    cfg: ModelConfig, states: Sequence[State], steps: Sequence[tuple[str, Params]]
) -> _Reality:
    if len(steps) != len(states) - 1:
        raise InputError("a trace needs exactly one step between consecutive states")
    next_id = 0
    first: list[Tagged] = []
    for b0 in states[0].buf:
        first.append(tuple((next_id + n, v) for n, v in enumerate(b0)))
        next_id += len(b0)
    tagged: list[tuple[Tagged, ...]] = [tuple(first)]
    events: list[_Event] = []
    for t, (action, params) in enumerate(steps):
        u = states[t + 1]
        bufs = list(tagged[-1])
        act: Act | None = None
        recv: tuple[int, int, int] | None = None
        sent: tuple[int, int, int] | None = None
        if action == "SendApp":
            c = cfg.chan_index[_pair(params["c"])]
            m = _int(params["m"])
            actor = cfg.chan_src[c]
            act = (ACT_SEND, actor, cfg.chan_dst[c], m)
            # Where the (possibly mutant) Enqueue puts the message: run it on stand-ins
            # that keep each message's kind (an application message >= 0, a red letter
            # < 0) and its position, and the new message as len(buffer).
            old = bufs[c]
            stand = tuple(n if v >= 0 else -(n + 1) for n, (_, v) in enumerate(old))
            placed = cfg.steps.enqueue(stand, len(old))
            new: list[tuple[int, int]] = []
            for x in placed:
                if x == len(old):
                    new.append((next_id, m))
                else:
                    new.append(old[x] if x >= 0 else old[-x - 1])
            sent = (c, next_id, m)
            next_id += 1
            bufs[c] = tuple(new)
        elif action in ("ReceiveApp", "ReceiveRedLetter"):
            c = cfg.chan_index[_pair(params["c"])]
            i = _int(params["i"])
            actor = cfg.chan_dst[c]
            mid, v = bufs[c][i - 1]
            recv = (c, mid, v)
            bufs[c] = (*bufs[c][: i - 1], *bufs[c][i:])
            if action == "ReceiveApp":
                act = (ACT_RECEIVE, actor, cfg.chan_src[c], v)
        elif action == "InternalEvent":
            actor = cfg.proc_index[str(params["p"])]
            act = (ACT_INTERNAL, actor, actor, _int(params["e"]))
        elif action == "StartSnapshot":
            actor = cfg.proc_index[str(params["p"])]
        else:
            raise InputError(f"unknown action {action!r} in a trace")
        letters: list[tuple[int, int, int]] = []
        for c, b in enumerate(bufs):
            have = tuple(v for _, v in b)
            want = u.buf[c]
            if have == want:
                continue
            extra = want[len(have) :]
            if want[: len(have)] != have or any(v >= 0 for v in extra):
                raise InternalError(
                    f"{cfg.name}: step {t + 1} ({action}) changed buffer "
                    f"{_chan_name(cfg, c)} in a way the shadow construction cannot follow"
                )
            more = tuple((next_id + n, v) for n, v in enumerate(extra))
            letters.extend((c, mid, v) for mid, v in more)
            next_id += len(extra)
            bufs[c] = (*b, *more)
        tagged.append(tuple(bufs))
        events.append(_Event(action, params, actor, act, recv, sent, tuple(letters)))
    return _Reality(tuple(states), tuple(tagged), tuple(events))


def _pair(v: object) -> tuple[str, str]:
    if isinstance(v, list | tuple) and len(v) == 2:
        return (str(v[0]), str(v[1]))
    raise InputError(f"a buffer must be a pair of machines, not {v!r}")


def _int(v: object) -> int:
    if type(v) is not int:
        raise InputError(f"expected an integer parameter, not {v!r}")
    return v


def _chan_name(cfg: ModelConfig, c: int) -> str:
    a, b = cfg.chans[c]
    return f"<<{a}, {b}>>"


@dataclass(frozen=True)
class _Timeline:
    """Snapshot index k along a reality: when it starts and completes, and S*."""

    k: int
    letter: int  #: RedLetter(k) as the Python state writes it
    t0: int  #: states[t0] is "the initial state": the last one with no red machine
    tf: int  #: states[tf] is "the final state": the first with Sf[k] defined
    star_local: tuple[Local | None, ...]
    star_buf: tuple[tuple[int, ...], ...]
    #: buffers whose red letter of k a white machine received (recorded as empty)
    turned_red_by: frozenset[int]
    #: per machine: the step (index into events) in which it turned red, if it did
    turns_red_at: tuple[int | None, ...]


def _timeline(cfg: ModelConfig, r: _Reality, k: int) -> _Timeline:
    states = r.states
    t0 = next(
        (t for t in range(len(states) - 1) if not states[t].red[k] and states[t + 1].red[k]),
        None,
    )
    tf = next((t for t, s in enumerate(states) if s.sf[k] is not None), None)
    if t0 is None or tf is None:
        raise InputError(f"snapshot {cfg.snaps[k]} does not start and complete in this trace")
    letter = -cfg.snaps[k]
    turned: set[int] = set()
    at: list[int | None] = [None] * len(cfg.procs)
    for t in range(t0, tf):
        ev = r.events[t]
        before, after = states[t].red[k], states[t + 1].red[k]
        for p in range(len(cfg.procs)):
            if not before >> p & 1 and after >> p & 1:
                at[p] = t
        if ev.recv is not None and ev.recv[2] == letter and not before >> ev.actor & 1:
            turned.add(ev.recv[0])
    end = states[tf]
    return _Timeline(
        k, letter, t0, tf, end.rec_machine[k], end.rec_buf[k], frozenset(turned), tuple(at)
    )


def _proj(b: Tagged, letter: int) -> tuple[int, ...]:
    """Reality's buffer as a buffer of snapshot k's network: application messages and
    red letters of k."""
    return tuple(v for _, v in b if v >= 0 or v == letter)


def _app(g: GState) -> GState:
    """A shadow state with the red letters left out (to compare with S0, S*, Sf)."""
    return (g[0], tuple(tuple(v for v in b if v >= 0) for b in g[1]))


def _record(tl: _Timeline, c: int) -> tuple[int, ...]:
    """The snapshot string of buffer c in Dijkstra's sense: "For a buffer from which a
    white machine received a red letter, the empty string is recorded; for all other
    buffers, the string ends with the red letter carried by that buffer"."""
    if c in tl.turned_red_by:
        return tl.star_buf[c]
    return (*tl.star_buf[c], tl.letter)


def _case(cfg: ModelConfig, red: int, c: int) -> str:
    src, dst = red >> cfg.chan_src[c] & 1, red >> cfg.chan_dst[c] & 1
    return {(0, 0): "iii a", (1, 1): "iii b", (1, 0): "iii c", (0, 1): "iii d"}[(src, dst)]


def _rules0(cfg: ModelConfig, r: _Reality, tl: _Timeline, t: int) -> GState:
    """Lemma 0's shadow state at moment t, by EWD 864's rules, verbatim:

    "In the shadow network we have at any moment
    (i) the colour of a machine is as in reality,
    (ii) the state of a machine is: (a) for a white machine as in reality, (b) for a
    red machine as in the snapshot state,
    (iii) the contents of a buffer are: (a) for a buffer from a white to a white
    machine as in reality, (b) for a buffer from a red to a red machine as in the
    snapshot state, (c) for a buffer from a red machine to a white one, from the
    contents in reality, the prefix up to and including the red letter, (d) for a
    buffer from a white machine to a red one, the record of incoming messages as
    recorded in reality by the red machine, postfixed by the contents of the buffer in
    reality."

    The snapshot state is S*, read at the completion ``tl.tf`` (offline, the trace is
    known); (i) holds because colours are read from reality.
    """
    s = r.states[t]
    red, k, letter = s.red[tl.k], tl.k, tl.letter
    local = tuple(tl.star_local[p] if red >> p & 1 else x for p, x in enumerate(s.local))
    bufs: list[tuple[int, ...]] = []
    for c, b in enumerate(r.tagged[t]):
        case = _case(cfg, red, c)
        here = _proj(b, letter)
        if case == "iii a":
            bufs.append(here)
        elif case == "iii b":
            bufs.append(_record(tl, c))
        elif case == "iii c":
            if letter not in here:
                raise _Undefined(
                    f"rule (iii c) needs a red letter in {_chan_name(cfg, c)}, which holds none"
                )
            bufs.append(here[: here.index(letter) + 1])
        else:
            bufs.append((*s.rec_buf[k][c], *here))
    return (local, tuple(bufs))


def _future_entries(r: _Reality, tl: _Timeline, c: int, src: int, t: int) -> tuple[int, ...]:
    """Rule (iii d)'s "the messages up to and including the red letter that the white machine will
    enter in reality into the buffer": what ``src`` enters into c from step t on,
    through the step in which it turns red (and sends the red letter)."""
    until = tl.turns_red_at[src]
    if until is None:
        raise _Undefined(
            f"rule (iii d) needs the red letter that machine {src} will enter, "
            "but it never turns red in this trace"
        )
    out: list[int] = []
    for ev in r.events[t : until + 1]:
        if ev.sent is not None and ev.sent[0] == c:
            out.append(ev.sent[2])
        out.extend(v for d, _, v in ev.letters if d == c and v == tl.letter)
    return tuple(out)


def _rules1(
    cfg: ModelConfig, r: _Reality, tl: _Timeline, t: int, white_ids: frozenset[int]
) -> GState:
    """Lemma 1's shadow state at moment t, by EWD 864's rules, verbatim:

    "In the shadow network we have at any moment
    (i) the colour of a machine is as in reality
    (ii) the state of a machine is (a) for a white machine as in the snapshot state,
    (b) for a red machine as in reality,
    (iii) the contents of a buffer are (a) for a buffer from a white to a white machine
    as in the snapshot state, (b) for a buffer from a red machine to a red machine as
    in reality, (c) for a buffer from a red machine to a white one, a postfix of the
    contents in reality, extending over the messages that the target machine in
    reality shall accept while red. [...] (d) for a buffer from a white machine to a
    red one, reality postfixed by the messages up to and including the red letter
    that the white machine will enter in reality into the buffer."

    (iii c) and (iii d) are defined from reality's FUTURE; offline the whole trace is
    known, so no prophecy variable is needed: (iii c) keeps the messages of the buffer
    that its target will not receive while white (``white_ids``: the identities of
    everything received by a white machine), (iii d) appends what the source enters
    from now until it turns red.  "The snapshot state" of a buffer in (iii a) is its
    snapshot string (:func:`_record`).
    """
    s = r.states[t]
    red, letter = s.red[tl.k], tl.letter
    local: list[Local] = []
    for p, x in enumerate(s.local):
        if red >> p & 1:
            local.append(x)
        elif tl.star_local[p] is None:
            raise _Undefined(f"rule (ii a): machine {p} has no state in the snapshot")
        else:
            local.append(tl.star_local[p])
    bufs: list[tuple[int, ...]] = []
    for c, b in enumerate(r.tagged[t]):
        case = _case(cfg, red, c)
        if case == "iii a":
            bufs.append(_record(tl, c))
        elif case == "iii b":
            bufs.append(_proj(b, letter))
        elif case == "iii c":
            bufs.append(
                tuple(v for mid, v in b if (v >= 0 or v == letter) and mid not in white_ids)
            )
        else:
            bufs.append((*_proj(b, letter), *_future_entries(r, tl, c, cfg.chan_src[c], t)))
    return (tuple(local), tuple(bufs))


def _pop_letter(g: GState, c: int, letter: int) -> GState | None:
    b = g[1][c]
    if not b or b[0] != letter:
        return None
    return (g[0], (*g[1][:c], b[1:], *g[1][c + 1 :]))


def _diff(cfg: ModelConfig, got: GState, want: GState, red: int) -> str:
    for p, (x, y) in enumerate(zip(got[0], want[0], strict=True)):
        if x != y:
            case = "ii b" if red >> p & 1 else "ii a"
            return f"machine {cfg.procs[p]} is {x!r}, rule ({case}) says {y!r}"
    for c, (x2, y2) in enumerate(zip(got[1], want[1], strict=True)):
        if x2 != y2:
            return (
                f"buffer {_chan_name(cfg, c)} holds {list(x2)}, "
                f"rule ({_case(cfg, red, c)}) says {list(y2)}"
            )
    return "the states differ"


def _step_text(ev: _Event) -> str:
    shown = ", ".join(f"{k}={v!r}" for k, v in ev.params.items())
    return f"{ev.action}({shown})"


def _check_histories(cfg: ModelConfig, r: _Reality, tl: _Timeline) -> None:
    """The history variables must say what the trace says (else the kit is wrong)."""
    end, k = r.states[tl.tf], tl.k
    start_hist = r.states[tl.t0 + 1].s0[k]
    white: list[Act] = []
    reds: list[Act] = []
    for t in range(tl.t0, tl.tf):
        ev = r.events[t]
        if ev.act is not None:
            (reds if r.states[t].red[k] >> ev.actor & 1 else white).append(ev.act)
    problems = []
    if start_hist != app_state(r.states[tl.t0]):
        problems.append("S0 is not the state just before the first machine turned red")
    if end.sf[k] != app_state(end):
        problems.append("Sf is not the state when the last red letter was received")
    if tuple(white) != end.white_acts[k]:
        problems.append("whiteActs are not the white machines' actions of the trace")
    if tuple(reds) != end.red_acts[k]:
        problems.append("redActs are not the red machines' actions of the trace")
    if problems:
        raise InternalError(
            f"{cfg.name}, snapshot {cfg.snaps[k]}: " + "; ".join(problems),
            code="RL-INTERNAL-LEMMAS",
        )


def _run_shadow(cfg: ModelConfig, r: _Reality, tl: _Timeline, lemma: int) -> ShadowVerdict:
    k, letter = tl.k, tl.letter
    white_ids = frozenset(
        ev.recv[1]
        for t, ev in enumerate(r.events)
        if ev.recv is not None and not r.states[t].red[k] >> ev.actor & 1
    )

    def rules(t: int) -> GState:
        if lemma == 0:
            return _rules0(cfg, r, tl, t)
        return _rules1(cfg, r, tl, t, white_ids)

    acts: list[Act] = []
    try:
        sh = rules(tl.t0)
    except _Undefined as e:
        return ShadowVerdict(False, f"at the start: {e}", step=tl.t0, acts=())
    start = app_state(r.states[tl.t0]) if lemma == 0 else (tl.star_local, tl.star_buf)
    if _app(sh) != start:
        what = "the initial state" if lemma == 0 else "the snapshot state"
        return ShadowVerdict(False, f"the shadow does not start in {what}", step=tl.t0)
    for t in range(tl.t0, tl.tf):
        ev = r.events[t]
        red = r.states[t].red[k]
        # Lemma 0: "to an action performed in reality by a white machine corresponds
        # in the shadow network exactly the same action, to one performed by a red
        # machine corresponds in the shadow network a skip"; Lemma 1 the other way
        # round ("except that a shadow machine turns red when its partner in reality
        # does so": colours are read from reality).
        takes = bool(red >> ev.actor & 1) == (lemma == 1)
        nxt: GState | None = sh
        if takes:
            if ev.act is not None:
                try:
                    enabled = act_enabled(cfg, sh, ev.act)
                except SpecError as e:
                    return ShadowVerdict(False, e.message, step=t + 1, acts=tuple(acts))
                if not enabled:
                    return ShadowVerdict(
                        False,
                        f"step {t + 1} {_step_text(ev)}: the shadow cannot take it",
                        step=t + 1,
                        acts=tuple(acts),
                    )
                nxt = act_result(cfg, sh, ev.act)
                acts.append(ev.act)
            elif ev.recv is not None and ev.recv[2] == letter:
                nxt = _pop_letter(sh, ev.recv[0], letter)
                if nxt is None:
                    return ShadowVerdict(
                        False,
                        f"step {t + 1} {_step_text(ev)}: the shadow buffer does not "
                        "start with the red letter",
                        step=t + 1,
                        acts=tuple(acts),
                    )
            if lemma == 0:
                # a white machine turning red sends the red letters reality sends
                for c, _, v in ev.letters:
                    if v == letter:
                        assert nxt is not None
                        nxt = (nxt[0], (*nxt[1][:c], (*nxt[1][c], v), *nxt[1][c + 1 :]))
        assert nxt is not None
        try:
            want = rules(t + 1)
        except _Undefined as e:
            return ShadowVerdict(
                False, f"after step {t + 1} {_step_text(ev)}: {e}", step=t + 1, acts=tuple(acts)
            )
        if nxt != want:
            red2 = r.states[t + 1].red[k]
            return ShadowVerdict(
                False,
                f"after step {t + 1} {_step_text(ev)}: {_diff(cfg, nxt, want, red2)}",
                step=t + 1,
                acts=tuple(acts),
            )
        sh = nxt
    end = (tl.star_local, tl.star_buf) if lemma == 0 else app_state(r.states[tl.tf])
    if _app(sh) != end:
        what = "the snapshot state" if lemma == 0 else "the final state"
        return ShadowVerdict(False, f"the shadow does not end in {what}", step=tl.tf)
    return ShadowVerdict(True, "", acts=tuple(acts))


def shadow_lemma0(
    cfg: ModelConfig, states: Sequence[State], steps: Sequence[tuple[str, Params]], k: int
) -> ShadowVerdict:
    """Way 3 for Lemma 0 along a whole trace (``states[0]`` -- ``steps[i]`` -->
    ``states[i+1]``) in which snapshot index ``k`` completes.

    The shadow starts in the initial state (the last state with no red machine), is
    defined at every moment by rules (i)-(iii) (:func:`_rules0`), takes "exactly the
    same action" when reality's step is a white machine's (the same application step,
    or the same red-letter receipt and sending), "a skip" when it is a red machine's,
    and must end in the snapshot state.
    """
    r = _reality(cfg, states, steps)
    tl = _timeline(cfg, r, k)
    _check_histories(cfg, r, tl)
    return _run_shadow(cfg, r, tl, 0)


def shadow_lemma1(
    cfg: ModelConfig, states: Sequence[State], steps: Sequence[tuple[str, Params]], k: int
) -> ShadowVerdict:
    """Way 3 for Lemma 1: "the shadow network starts in the snapshot state (with all
    machines and buffers white) and ends in the final state in reality"; it takes
    reality's red machines' steps and stutters on white ones, its state defined by
    rules (i)-(iii) with (iii c)/(iii d) read from reality's future (:func:`_rules1`).
    """
    r = _reality(cfg, states, steps)
    tl = _timeline(cfg, r, k)
    _check_histories(cfg, r, tl)
    return _run_shadow(cfg, r, tl, 1)


# --------------------------------------------------------------------------- together


def _agree(cfg: ModelConfig, v: Verdicts) -> str | None:
    """None when the three ways agree, else what is wrong."""
    for n in (0, 1):
        sh, rp, re = v.way("shadow", n), v.way("replay", n), v.way("reachability", n)
        if sh.ok and not rp.ok:
            return f"Lemma {n}: the shadow network keeps step but the replay fails"
        if rp.ok and not re.ok:
            return f"Lemma {n}: the replay succeeds but the search finds no path"
        if not is_mutant(cfg) and not (sh.ok == rp.ok == re.ok):
            return f"Lemma {n}: the three ways disagree on a model without mutant steps"
    return None


def _disagreement(cfg: ModelConfig, s: State, v: Verdicts, what: str) -> InternalError:
    from redletter.python_model.state import to_tla

    return InternalError(
        f"the lemma checks disagree on model {cfg.name}, snapshot {v.snap}: {what}. "
        f"{v.describe()}. State:\n{print_state(to_tla(cfg, s))}",
        code="RL-INTERNAL-LEMMAS",
    )


def check_trace(
    cfg: ModelConfig,
    states: Sequence[State],
    steps: Sequence[tuple[str, Params]],
    graph: AppGraph | None = None,
) -> list[Verdicts]:
    """All three ways on every snapshot completed in the trace's last state (replay
    and reachability on that state, the shadows along the trace); raises
    :class:`InternalError` if they disagree.  ``graph`` carries the reachability memo."""
    g = graph if graph is not None else AppGraph(cfg)
    last = states[-1]
    out: list[Verdicts] = []
    r: _Reality | None = None
    for k, sf in enumerate(last.sf):
        if sf is None:
            continue
        if r is None:
            r = _reality(cfg, states, steps)
        tl = _timeline(cfg, r, k)
        _check_histories(cfg, r, tl)
        s0 = last.s0[k]
        assert s0 is not None
        rp0, rp1 = replay_verdicts(cfg, last, k)
        re0, re1 = g.verdicts(s0, snapshot(last, k), sf)
        v = Verdicts(
            cfg.snaps[k], rp0, rp1, re0, re1, _run_shadow(cfg, r, tl, 0), _run_shadow(cfg, r, tl, 1)
        )
        bad = _agree(cfg, v)
        if bad is not None:
            raise _disagreement(cfg, last, v, bad)
        out.append(v)
    return out


def label_step(cfg: ModelConfig, s: State, t: State) -> tuple[str, Params]:
    """The action and parameters of a step ``s -> t`` (the first binding of ``Next``
    that yields t)."""
    for action, raw, u in fast_successors(cfg, s):
        if u == t:
            return ACTION_NAMES[action], params_of(cfg, action, raw)
    raise InternalError(f"{cfg.name}: no action leads from the given state to the next")


@dataclass
class LemmaCounts:
    """What :func:`check_lemmas_everywhere` checked and found."""

    model: str
    mutant: bool
    states: int = 0  #: reachable states explored
    completed_states: int = 0  #: states with at least one completed snapshot
    pairs: int = 0  #: (state, completed snapshot) pairs, each checked all three ways
    #: way -> lemma (0/1) -> number of pairs on which that way found a violation
    failed: dict[str, list[int]] = field(default_factory=lambda: {w: [0, 0] for w in WAYS})
    #: way -> distinct evaluations (replays, searches, shadow runs along a trace)
    evaluations: dict[str, int] = field(default_factory=lambda: {w: 0 for w in WAYS})
    app_states_searched: int = 0  #: application states the reachability searches visited
    #: way -> the first violation it found: (state id, snapshot id, lemma, why)
    first: dict[str, tuple[int, int, int, str]] = field(default_factory=dict)

    def passed(self, way: str, lemma: int) -> int:
        return self.pairs - self.failed[way][lemma]

    @property
    def all_pass(self) -> bool:
        return all(n == 0 for f in self.failed.values() for n in f)

    @property
    def all_report_violation(self) -> bool:
        """Every way found a violation of some lemma somewhere."""
        return all(any(f) for f in self.failed.values())


def check_lemmas_everywhere(cfg: ModelConfig) -> LemmaCounts:
    """Explore every reachable state of ``cfg`` (no stop at a violation: the model's
    invariants are not checked here) and, for every completed snapshot of every state,
    check both lemmas all three ways: replay on the state, reachability in the
    application's graph, and the shadow networks along a shortest trace to the state
    (BFS parents; a snapshot's shadows depend only on the trace up to its completion,
    so they run once per completion and are shared by the states after it).
    Raises :class:`InternalError` if the ways disagree (see the module docstring)."""
    result = explore(dataclasses.replace(cfg, invariants=(), properties=()), graph=True)
    graph = result.graph
    assert graph is not None
    states = graph.states
    n = len(states)
    parent = [-1] * n
    has_parent = [False] * n
    for i in graph.initial:
        has_parent[i] = True
    for src, dst in zip(graph.edge_src, graph.edge_dst, strict=True):
        if not has_parent[dst]:
            has_parent[dst] = True
            parent[dst] = src
    counts = LemmaCounts(cfg.name, is_mutant(cfg), states=n)
    app_graph = AppGraph(cfg)
    labels: dict[int, tuple[str, Params]] = {}
    nk = len(cfg.snaps)
    completion: list[tuple[int, ...]] = []  # per state: per k, the node where k completed
    replay_memo: dict[tuple[object, ...], tuple[Verdict, Verdict]] = {}
    reach_memo: dict[tuple[GState, GState, GState], tuple[Verdict, Verdict]] = {}
    shadow_memo: dict[tuple[int, int], tuple[ShadowVerdict, ShadowVerdict]] = {}

    def path(j: int) -> tuple[list[State], list[tuple[str, Params]]]:
        chain: list[int] = []
        while j >= 0:
            chain.append(j)
            j = parent[j]
        chain.reverse()
        steps: list[tuple[str, Params]] = []
        for a, b in pairwise(chain):
            lab = labels.get(b)
            if lab is None:
                lab = labels[b] = label_step(cfg, states[a], states[b])
            steps.append(lab)
        return [states[i] for i in chain], steps

    for j, s in enumerate(states):
        p = parent[j]
        comp = tuple(
            -1 if s.sf[k] is None else (completion[p][k] if p >= 0 and completion[p][k] >= 0 else j)
            for k in range(nk)
        )
        completion.append(comp)
        done = [k for k in range(nk) if comp[k] >= 0]
        if not done:
            continue
        counts.completed_states += 1
        for k in done:
            counts.pairs += 1
            key = (
                k,
                s.s0[k],
                s.sf[k],
                s.white_acts[k],
                s.red_acts[k],
                s.rec_machine[k],
                s.rec_buf[k],
            )
            rp = replay_memo.get(key)
            if rp is None:
                rp = replay_memo[key] = replay_verdicts(cfg, s, k)
                counts.evaluations["replay"] += 1
            s0, sf = s.s0[k], s.sf[k]
            assert s0 is not None and sf is not None
            star = snapshot(s, k)
            rkey = (s0, star, sf)
            re = reach_memo.get(rkey)
            if re is None:
                re = reach_memo[rkey] = app_graph.verdicts(s0, star, sf)
                counts.evaluations["reachability"] += 1
            sh = shadow_memo.get((k, comp[k]))
            if sh is None:
                tr_states, tr_steps = path(comp[k])
                r = _reality(cfg, tr_states, tr_steps)
                tl = _timeline(cfg, r, k)
                _check_histories(cfg, r, tl)
                sh = shadow_memo[(k, comp[k])] = (
                    _run_shadow(cfg, r, tl, 0),
                    _run_shadow(cfg, r, tl, 1),
                )
                counts.evaluations["shadow"] += 1
            v = Verdicts(cfg.snaps[k], rp[0], rp[1], re[0], re[1], sh[0], sh[1])
            bad = _agree(cfg, v)
            if bad is not None:
                raise _disagreement(cfg, s, v, bad)
            for way in WAYS:
                for lemma in (0, 1):
                    w = v.way(way, lemma)
                    if not w.ok:
                        counts.failed[way][lemma] += 1
                        counts.first.setdefault(way, (j, cfg.snaps[k], lemma, w.why))
    counts.app_states_searched = app_graph.explored
    found = [w for w in WAYS if any(counts.failed[w])]
    if found and len(found) != len(WAYS):
        missing = [w for w in WAYS if w not in found]
        raise InternalError(
            f"the lemma checks disagree on model {cfg.name}: "
            + ", ".join(found)
            + " found a violation, "
            + ", ".join(missing)
            + " found none",
            code="RL-INTERNAL-LEMMAS",
        )
    return counts


def describe_counts(c: LemmaCounts) -> list[str]:
    """The lines ``redletter lemmas`` prints."""
    lines = [
        f"{c.model}: {c.states:,} reachable states, {c.completed_states:,} with a completed "
        f"snapshot, {c.pairs:,} (state, snapshot) pairs checked each way"
        + (" (a mutant model)" if c.mutant else ""),
    ]
    for way in WAYS:
        lines.append(
            f"  {way:<13} Lemma 0: {c.passed(way, 0):,} hold, {c.failed[way][0]:,} fail;"
            f"  Lemma 1: {c.passed(way, 1):,} hold, {c.failed[way][1]:,} fail"
            f"  ({c.evaluations[way]:,} distinct evaluations)"
        )
    lines.append(f"  reachability searched {c.app_states_searched:,} application states")
    for way, (state, snap, lemma, why) in c.first.items():
        lines.append(
            f"  first {way} violation: state {state}, snapshot {snap}, Lemma {lemma}: {why}"
        )
    return lines
