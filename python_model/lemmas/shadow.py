"""Way 3, **shadow**: Dijkstra's shadow networks executed along the whole trace
(:func:`shadow_lemma0`, :func:`shadow_lemma1`): the shadow state is *defined* at every
moment from reality by his rules (i)-(iii), and at every step of reality the shadow
must take the corresponding step from the state the rules define now and arrive at the
state the rules define next.

Buffers and red letters: the Python state keeps a red letter of snapshot k in a
buffer as ``-k``.  The shadow networks here are networks of snapshot k: their
buffers hold application messages and red letters of k (those of other snapshots are
not part of them), so rule (iii)'s "up to and including the red letter" can be taken
literally; they are compared with S0, S* and Sf (which hold application messages
only) with the red letters left out.  The shadow's application steps are the spec's
``ActEnabled``/``ActResult`` (FIFO receipt from the head), the same as replay's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from redletter.errors import InputError, InternalError, SpecError
from redletter.python_model.actions import Params, app_state
from redletter.python_model.config import ModelConfig
from redletter.python_model.invariants import act_enabled, act_result
from redletter.python_model.lemmas.verdict import Verdict
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
    "Reality",
    "ShadowMove",
    "ShadowVerdict",
    "ShadowWalk",
    "buffer_rule",
    "machine_rule",
    "reality",
    "shadow_lemma0",
    "shadow_lemma1",
    "shadow_verdicts",
    "shadow_walk",
]

Tagged = tuple[tuple[int, int], ...]
"""A buffer of reality with an identity per message: ``(id, value)`` oldest first."""


@dataclass(frozen=True)
class ShadowVerdict(Verdict):
    """A shadow network's answer: also the step where it failed (1-based index into
    the trace's steps) and the application actions the shadow took."""

    step: int | None = None
    acts: tuple[Act, ...] = ()


@dataclass(frozen=True)
class ShadowMove:
    """One move of a shadow network, as :func:`_run_shadow` computed it (for pictures
    of the proof: the explorer and docs/proofs.md show these, never a copy).

    ``step`` is the step of reality (1-based: ``states[step - 1] -> states[step]``),
    or ``t0`` itself for the start (``kind == "start"``).  ``kind`` says which of
    Dijkstra's correspondences fired: ``"start"``; ``"copy"`` (the shadow performs
    "exactly the same action": an application action, ``act``); ``"letter"`` (the
    same receipt of a red letter of this snapshot); ``"same"`` (the same step, which
    changes nothing in this snapshot's network, e.g. a red letter of another
    snapshot); ``"skip"`` (the other colour's step: the shadow stutters).  ``sent``
    lists the buffers the shadow's own red letters went into (Lemma 0, when a white
    machine turns red).  ``state`` is where the move took the shadow (red letters of
    this snapshot kept, as ``-k``); ``rules`` the state rules (i)-(iii) define at the
    same moment (``None`` when a rule cannot be applied).  ``ok`` is false at the
    move where the shadow and the rules part; ``rule`` then names the rule that is
    broken (``"iii c"``, ``"ii b"``, ``"correspondence"``, ``"start"``, ``"end"``)
    and ``why`` says how, in the words of the verdict.
    """

    step: int
    kind: str
    actor: int | None
    act: Act | None
    sent: tuple[int, ...]
    state: GState
    rules: GState | None
    ok: bool = True
    rule: str = ""
    why: str = ""


@dataclass(frozen=True)
class ShadowWalk:
    """A shadow network's whole walk along reality, for snapshot index ``k``:
    ``states[t0]`` is "the initial state", ``states[tf]`` "the final state";
    ``moves`` start at t0 and stop at tf or at the first move that fails."""

    lemma: int
    k: int
    t0: int
    tf: int
    moves: tuple[ShadowMove, ...]
    verdict: ShadowVerdict


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
class Reality:
    """A trace with identities: ``tagged[t]`` are the buffers of ``states[t]``."""

    states: tuple[State, ...]
    tagged: tuple[tuple[Tagged, ...], ...]
    events: tuple[_Event, ...]


def reality(
    cfg: ModelConfig, states: Sequence[State], steps: Sequence[tuple[str, Params]]
) -> Reality:
    """The trace ``states[0]`` -- ``steps[i]`` --> ``states[i+1]`` with an identity
    for every message (where a mutant's Enqueue puts it, which red letters a step
    entered), so the shadows can follow each message."""
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
        early: list[tuple[int, int, int]] = []  # red letters put before the message
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
            want_c = u.buf[c]
            have_c = tuple(v for _, v in new)
            tail = want_c[len(old) :]
            if (
                want_c[: len(have_c)] != have_c
                and want_c[: len(old)] == tuple(v for _, v in old)
                and m in tail
                and all(v < 0 for v in tail if v != m)
            ):
                # A node's run (its states given, not replayed): it put its red
                # letters on this buffer in its own order around the message, always
                # at the end (FIFO): keep its order, the message's identity first.
                new = list(old)
                own = next_id - 1
                for v in tail:
                    if v == m and own >= 0:
                        new.append((own, m))
                        own = -1
                    else:
                        new.append((next_id, v))
                        early.append((c, next_id, v))
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
        letters: list[tuple[int, int, int]] = list(early)
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
    return Reality(tuple(states), tuple(tagged), tuple(events))


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


def _timeline(cfg: ModelConfig, r: Reality, k: int, *, partial: bool = False) -> _Timeline:
    states = r.states
    t0 = next(
        (t for t in range(len(states) - 1) if not states[t].red[k] and states[t + 1].red[k]),
        None,
    )
    tf = next((t for t, s in enumerate(states) if s.sf[k] is not None), None)
    if partial and tf is None and t0 is not None:
        tf = len(states) - 1  # never completes: the snapshot state as recorded by the end
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


def _rules0(cfg: ModelConfig, r: Reality, tl: _Timeline, t: int) -> GState:
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


def _future_entries(r: Reality, tl: _Timeline, c: int, src: int, t: int) -> tuple[int, ...]:
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
    cfg: ModelConfig, r: Reality, tl: _Timeline, t: int, white_ids: frozenset[int]
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


def _diff_rule(cfg: ModelConfig, got: GState, want: GState, red: int) -> str:
    """The rule :func:`_diff` names ("ii a", "iii c", ...)."""
    for p, (x, y) in enumerate(zip(got[0], want[0], strict=True)):
        if x != y:
            return "ii b" if red >> p & 1 else "ii a"
    for c, (x2, y2) in enumerate(zip(got[1], want[1], strict=True)):
        if x2 != y2:
            return _case(cfg, red, c)
    return ""


def machine_rule(red: int, p: int) -> str:
    """Rule (ii)'s case for machine index ``p`` under colouring ``red`` (a bitmask):
    ``"ii a"`` for a white machine, ``"ii b"`` for a red one."""
    return "ii b" if red >> p & 1 else "ii a"


def buffer_rule(cfg: ModelConfig, red: int, c: int) -> str:
    """Rule (iii)'s case for buffer index ``c`` under colouring ``red``: ``"iii a"``
    white to white, ``"iii b"`` red to red, ``"iii c"`` red to white, ``"iii d"``
    white to red."""
    return _case(cfg, red, c)


def _step_text(ev: _Event) -> str:
    shown = ", ".join(f"{k}={v!r}" for k, v in ev.params.items())
    return f"{ev.action}({shown})"


def _check_histories(cfg: ModelConfig, r: Reality, tl: _Timeline) -> None:
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
    if end.sf[k] is not None and end.sf[k] != app_state(end):
        problems.append("Sf is not the state when the last red letter was received")
    if tuple(white) != end.white_acts[k]:
        problems.append("whiteActs are not the white machines' actions of the trace")
    if tuple(reds) != end.red_acts[k]:
        problems.append("redActs are not the red machines' actions of the trace")
    # A model that overrides a step plants a bug that may keep the history variables
    # apart from the trace (a recording that consumes the message it records, say):
    # the shadow networks are built from the trace alone, so they still judge it.
    mutant = any(op != name for op, name in cfg.overrides.items())
    if problems and not mutant:
        raise InternalError(
            f"{cfg.name}, snapshot {cfg.snaps[k]}: " + "; ".join(problems),
            code="RL-INTERNAL-LEMMAS",
        )


def _run_shadow(
    cfg: ModelConfig,
    r: Reality,
    tl: _Timeline,
    lemma: int,
    on_move: Callable[[ShadowMove], None] | None = None,
) -> ShadowVerdict:
    """Run the shadow network of Lemma ``lemma`` along reality; ``on_move`` (if given)
    sees every move as it is made, the failing one included (:class:`ShadowMove`)."""
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

    def note(move: ShadowMove) -> None:
        if on_move is not None:
            on_move(move)

    empty: GState = ((), ())
    acts: list[Act] = []
    try:
        sh = rules(tl.t0)
    except _Undefined as e:
        note(ShadowMove(tl.t0, "start", None, None, (), empty, None, False, "start", str(e)))
        return ShadowVerdict(False, f"at the start: {e}", step=tl.t0, acts=())
    start = app_state(r.states[tl.t0]) if lemma == 0 else (tl.star_local, tl.star_buf)
    if _app(sh) != start:
        what = "the initial state" if lemma == 0 else "the snapshot state"
        why = f"the shadow does not start in {what}"
        note(ShadowMove(tl.t0, "start", None, None, (), sh, sh, False, "start", why))
        return ShadowVerdict(False, why, step=tl.t0)
    note(ShadowMove(tl.t0, "start", None, None, (), sh, sh))
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
        kind = "same" if takes else "skip"
        sent: list[int] = []
        if takes:
            if ev.act is not None:
                kind = "copy"
                try:
                    enabled = act_enabled(cfg, sh, ev.act)
                except SpecError as e:
                    note(
                        ShadowMove(
                            t + 1, kind, ev.actor, ev.act, (), sh, None, False,
                            "correspondence", e.message,
                        )
                    )  # fmt: skip
                    return ShadowVerdict(False, e.message, step=t + 1, acts=tuple(acts))
                if not enabled:
                    why = f"step {t + 1} {_step_text(ev)}: the shadow cannot take it"
                    note(
                        ShadowMove(
                            t + 1, kind, ev.actor, ev.act, (), sh, None, False,
                            "correspondence", why,
                        )
                    )  # fmt: skip
                    return ShadowVerdict(False, why, step=t + 1, acts=tuple(acts))
                nxt = act_result(cfg, sh, ev.act)
                acts.append(ev.act)
            elif ev.recv is not None and ev.recv[2] == letter:
                kind = "letter"
                nxt = _pop_letter(sh, ev.recv[0], letter)
                if nxt is None:
                    why = (
                        f"step {t + 1} {_step_text(ev)}: the shadow buffer does not "
                        "start with the red letter"
                    )
                    note(
                        ShadowMove(
                            t + 1, kind, ev.actor, None, (), sh, None, False,
                            "correspondence", why,
                        )
                    )  # fmt: skip
                    return ShadowVerdict(False, why, step=t + 1, acts=tuple(acts))
            if lemma == 0:
                # a white machine turning red sends the red letters reality sends
                for c, _, v in ev.letters:
                    if v == letter:
                        assert nxt is not None
                        nxt = (nxt[0], (*nxt[1][:c], (*nxt[1][c], v), *nxt[1][c + 1 :]))
                        sent.append(c)
                if sent and kind == "same":
                    kind = "letter"
        assert nxt is not None
        try:
            want = rules(t + 1)
        except _Undefined as e:
            why = f"after step {t + 1} {_step_text(ev)}: {e}"
            rule = str(e).split("rule (", 1)[-1].split(")", 1)[0] if "rule (" in str(e) else ""
            note(
                ShadowMove(t + 1, kind, ev.actor, ev.act, tuple(sent), nxt, None, False, rule, why)
            )
            return ShadowVerdict(False, why, step=t + 1, acts=tuple(acts))
        if nxt != want:
            red2 = r.states[t + 1].red[k]
            why = f"after step {t + 1} {_step_text(ev)}: {_diff(cfg, nxt, want, red2)}"
            rule = _diff_rule(cfg, nxt, want, red2)
            note(
                ShadowMove(t + 1, kind, ev.actor, ev.act, tuple(sent), nxt, want, False, rule, why)
            )
            return ShadowVerdict(False, why, step=t + 1, acts=tuple(acts))
        note(ShadowMove(t + 1, kind, ev.actor, ev.act, tuple(sent), nxt, want))
        sh = nxt
    if r.states[tl.tf].sf[k] is None:
        end_state = "the snapshot state" if lemma == 0 else "the final state"
        why = (
            "the snapshot never completes in this run (a red letter never arrives), so the "
            f"shadow network cannot end in {end_state}"
        )
        note(ShadowMove(tl.tf, "end", None, None, (), sh, None, False, "end", why))
        return ShadowVerdict(False, why, step=tl.tf, acts=tuple(acts))
    end = (tl.star_local, tl.star_buf) if lemma == 0 else app_state(r.states[tl.tf])
    if _app(sh) != end:
        what = "the snapshot state" if lemma == 0 else "the final state"
        why = f"the shadow does not end in {what}"
        note(ShadowMove(tl.tf, "end", None, None, (), sh, None, False, "end", why))
        return ShadowVerdict(False, why, step=tl.tf)
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
    r = reality(cfg, states, steps)
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
    r = reality(cfg, states, steps)
    tl = _timeline(cfg, r, k)
    _check_histories(cfg, r, tl)
    return _run_shadow(cfg, r, tl, 1)


def shadow_verdicts(cfg: ModelConfig, r: Reality, k: int) -> tuple[ShadowVerdict, ShadowVerdict]:
    """Way 3 for both lemmas on snapshot index ``k``, which completes in reality ``r``
    (the history variables are checked against the trace first)."""
    tl = _timeline(cfg, r, k)
    _check_histories(cfg, r, tl)
    return _run_shadow(cfg, r, tl, 0), _run_shadow(cfg, r, tl, 1)


def shadow_walk(
    cfg: ModelConfig, r: Reality, k: int, lemma: int, *, partial: bool = False
) -> ShadowWalk:
    """The shadow network of Lemma ``lemma`` (0 or 1) for snapshot index ``k`` along
    reality ``r``, move by move: the very run :func:`shadow_verdicts` judges (the
    history variables are checked against the trace first).  Raises
    :class:`InputError` when snapshot ``k`` does not start and complete in ``r``.

    ``partial``: a snapshot that starts and never completes is walked to the end of
    ``r``, its snapshot state read from what is recorded by then; the walk breaks
    where a rule does, or at the end (it cannot end in a state that never comes)."""
    tl = _timeline(cfg, r, k, partial=partial)
    _check_histories(cfg, r, tl)
    moves: list[ShadowMove] = []
    verdict = _run_shadow(cfg, r, tl, lemma, moves.append)
    return ShadowWalk(lemma, k, tl.t0, tl.tf, tuple(moves), verdict)
