"""The proofs of EWD 864 along one run, as data: what the explorer, the run report and
docs/proofs.md show.

:func:`prove_run` replays a schedule in the model and, for every snapshot that
starts and completes in it, runs Dijkstra's two shadow networks move by move
(:func:`redletter.python_model.lemmas.shadow.shadow_walk`: the very code the lemma
checks run, never a copy), evaluates every invariant of the spec on every state and
the shadow action property on every step, and says, for the first state (or step)
that breaks each one, which of the spec's labelled conjuncts fails and why in EWD
864's words.  Everything here is plain data; :mod:`redletter.render.explorer` turns
it into a page.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise

from redletter.errors import InputError, InternalError, SpecError
from redletter.python_model.actions import app_state
from redletter.python_model.config import ModelConfig
from redletter.python_model.invariants import (
    INVARIANTS,
    act_enabled,
    act_result,
    replay,
    shadow0,
    shadow_lemma0,
    snapshot,
)
from redletter.python_model.lemmas.shadow import (
    ShadowMove,
    ShadowWalk,
    buffer_rule,
    machine_rule,
    reality,
    shadow_walk,
)
from redletter.python_model.state import ACT_KINDS, Act, GState, State
from redletter.render.teach import (
    Run,
    chan_name,
    events_of_trace,
    message_label,
    show_local,
    show_message,
)

__all__ = [
    "ALGORITHM_RULES",
    "INVARIANT_WORDS",
    "RULE_WORDS",
    "Break",
    "ProofRun",
    "Walk",
    "describe_act",
    "describe_move",
    "move_why",
    "prove_run",
    "step_words",
]

Step = tuple[str, Mapping[str, object]]

#: What each invariant of the spec says, in EWD 864's words where it has them.
INVARIANT_WORDS: Mapping[str, str] = {
    "TypeOK": "every variable has its type",
    "RedLetterInvariant": "“each buffer from a red machine to a white one contains precisely 1 "
    "red letter”",
    "Lemma0": "“the snapshot state is reachable from the initial state”: the white machines' "
    "actions, replayed from S0, are each possible (WhiteActionsPossible) and end in the "
    "snapshot state (EndsInSnapshotState)",
    "Lemma1": "“the final state … is reachable from the snapshot state”: the red machines' "
    "actions, replayed from the snapshot state, are each possible (RedActionsPossible) and "
    "end in the final state (EndsInFinalState)",
    "StableLemma0": "“If the initial state of the snapshot algorithm satisfies a stable "
    "predicate, the snapshot state satisfies it”",
    "StableLemma1": "“If the snapshot state satisfies a stable predicate, the final state of "
    "the snapshot algorithm satisfies it”",
    "StableDetection": "a stable predicate seen in a snapshot holds from then on",
    "SnapshotSatisfiesAppInv": "every snapshot satisfies what every reachable state of the "
    "application does",
    "OneRedLetterPerBuffer": "each buffer carries exactly one red letter of each snapshot "
    "once its source is red (in flight, or received and the buffer red), none before",
    "Lemma0ImpliesLemma1": "for bugs in colouring and red-letter handling over FIFO buffers, "
    "Lemma 0 implies Lemma 1 on every completed snapshot",
    "NoInterference": "Chandy and Lamport's “the snapshot algorithm does not interfere”: seen "
    "through the application's state, every step is no step or one the application alone "
    "could take",
    "ShadowLemma0": "Lemma 0's shadow network keeps step: “to an action performed in reality by "
    "a white machine corresponds in the shadow network exactly the same action, to one "
    "performed by a red machine … a skip”",
}

#: EWD 864's rules of the algorithm itself, verbatim: the receipt of a red letter
#: (colouring and red-letter traffic) and the recording it triggers.
ALGORITHM_RULES: tuple[tuple[str, str, str], ...] = (
    (
        "letter 1",
        "receipt of a red letter, 1",
        "the input buffer from which the red letter is received (was white and) becomes "
        "red —for the red letter received by the starter from “nowhere” this part of the "
        "atomic action is void—",
    ),
    (
        "letter 2",
        "receipt of a red letter, 2",
        "if the receiving machine was white, it sends one red letter over each of its output "
        "buffers and becomes red, if the receiving machine was already red, it remains so and "
        "it sends no further red letters",
    ),
    ("record 1", "recording rule 1", "upon turning red, each machine records its own state"),
    (
        "record 2",
        "recording rule 2",
        "each red machine records for each of its input buffers the stream of messages that "
        "it receives from that buffer as long as the latter is white",
    ),
)

#: Dijkstra's rules (i)-(iii) of each shadow network, verbatim.
RULE_WORDS: Mapping[int, Mapping[str, str]] = {
    0: {
        "i": "the colour of a machine is as in reality",
        "ii a": "the state of a white machine is as in reality",
        "ii b": "the state of a red machine is as in the snapshot state",
        "iii a": "a buffer from a white to a white machine holds what it holds in reality",
        "iii b": "a buffer from a red to a red machine holds what the snapshot state holds",
        "iii c": "a buffer from a red machine to a white one holds, from the contents in "
        "reality, the prefix up to and including the red letter",
        "iii d": "a buffer from a white machine to a red one holds the record of incoming "
        "messages as recorded in reality by the red machine, postfixed by the contents of the "
        "buffer in reality",
        "correspondence": "to an action performed in reality by a white machine corresponds in "
        "the shadow network exactly the same action, to one performed by a red machine "
        "corresponds a skip",
        "start": "the shadow network starts in the same initial state as in reality",
        "end": "the shadow network ends in the snapshot state",
    },
    1: {
        "i": "the colour of a machine is as in reality",
        "ii a": "the state of a white machine is as in the snapshot state",
        "ii b": "the state of a red machine is as in reality",
        "iii a": "a buffer from a white to a white machine holds what the snapshot state holds",
        "iii b": "a buffer from a red machine to a red machine holds what it holds in reality",
        "iii c": "a buffer from a red machine to a white one holds a postfix of the contents in "
        "reality, extending over the messages that the target machine in reality shall accept "
        "while red",
        "iii d": "a buffer from a white machine to a red one holds reality postfixed by the "
        "messages up to and including the red letter that the white machine will enter in "
        "reality into the buffer",
        "correspondence": "to an action performed in reality by a red machine corresponds in "
        "the shadow network exactly the same action, to one performed by a white machine a "
        "skip, except that a shadow machine turns red when its partner in reality does so",
        "start": "the shadow network starts in the snapshot state",
        "end": "the shadow network ends in the final state in reality",
    },
}


@dataclass(frozen=True)
class Break:
    """The first state (or step) of the run that breaks a property: ``step`` is the
    state's index (``states[step]``, reached by step ``step``); ``conjunct`` is the
    spec's label of the conjunct that fails; ``why`` says how."""

    name: str
    step: int
    conjunct: str
    why: str
    checked: bool  #: does the model's cfg check this property?


@dataclass(frozen=True)
class Walk:
    """A shadow network for one snapshot (``walk`` is None when it cannot run:
    ``unavailable`` says why)."""

    lemma: int
    snap: int
    walk: ShadowWalk | None
    unavailable: str = ""


@dataclass(frozen=True)
class ProofRun:
    """A run with its proofs: the states, the observable events (``run``), every
    invariant per state, the shadow property per step, the shadow networks per
    snapshot, and the first break of each property."""

    cfg: ModelConfig
    steps: tuple[Step, ...]
    run: Run
    holds: Mapping[str, tuple[bool | None, ...]]  #: per property, per state (None: error)
    walks: tuple[Walk, ...]
    breaks: tuple[Break, ...]
    errors: Mapping[str, str] = field(default_factory=dict)  #: evaluation errors

    @property
    def states(self) -> tuple[State, ...]:
        return self.run.states


def describe_act(cfg: ModelConfig, a: Act) -> str:
    """``P2 sends 3 to P1``, ``P1 receives 3 from P2``, ``P1 performs event 1``."""
    kind, p, q, v = a
    who, peer = cfg.procs[p], cfg.procs[q]
    if ACT_KINDS[kind] == "send":
        what = message_label(cfg, cfg.chan_index[(who, peer)], v)
        return f"{who} sends {what} to {peer}"
    if ACT_KINDS[kind] == "receive":
        what = message_label(cfg, cfg.chan_index[(peer, who)], v)
        return f"{who} receives {what} from {peer}"
    return f"{who} performs internal event {v}"


def describe_move(
    cfg: ModelConfig, lemma: int, move: ShadowMove, red: int, action: str = ""
) -> str:
    """The correspondence that fired, in EWD 864's words (``red``: the colouring of
    the snapshot before the step; ``action``: the name of reality's step)."""
    if move.kind == "start":
        return RULE_WORDS[lemma]["start"]
    if move.kind == "end":
        return RULE_WORDS[lemma]["end"]
    actor = cfg.procs[move.actor] if move.actor is not None else "?"
    colour = "red" if move.actor is not None and red >> move.actor & 1 else "white"
    own = "the white step" if lemma == 0 else "the red step"
    other = "the red skip" if lemma == 0 else "the white skip"
    if move.kind == "skip":
        return f"{other}: {actor} is {colour}, so the shadow network skips"
    if move.kind == "copy" and move.act is not None:
        return (
            f"{own}: {actor} is {colour}, so the shadow network performs exactly the same "
            f"action ({describe_act(cfg, move.act)})"
        )
    if move.kind == "letter":
        sent = ", ".join(chan_name(cfg.chans[c]) for c in move.sent)
        text = f"{own}: {actor} is {colour}; the shadow network performs the same step"
        if action == "StartSnapshot":
            text += " (the start: a red letter from nowhere)"
        elif move.act is None:
            text += " (the receipt of the red letter)"
        if sent:
            text += f" and, as {actor} turns red, sends red letters on {sent}"
        return text
    return f"{own}: {actor} is {colour}; the same step changes nothing in this snapshot's network"


def move_why(cfg: ModelConfig, steps: Sequence[Step], move: ShadowMove) -> str:
    """Why a shadow move failed, in words: the component where the shadow and the rules
    part (values as the application writes them, red letters as ``R1``), else the
    verdict's own reason with reality's step in words."""
    if move.ok:
        return ""
    where = ""
    if 1 <= move.step <= len(steps) and move.kind not in ("start", "end"):
        a, p = steps[move.step - 1]
        where = f"after step {move.step} ({step_words(cfg, a, p)}): "
    if move.rules is not None and move.state[0]:
        for q, (x, y) in enumerate(zip(move.state[0], move.rules[0], strict=True)):
            if x != y:
                return (
                    f"{where}machine {cfg.procs[q]} is {show_local(cfg, x)} in the shadow, but "
                    f"rule ({move.rule}) says {show_local(cfg, y)}"
                )
        for c, (b1, b2) in enumerate(zip(move.state[1], move.rules[1], strict=True)):
            if b1 != b2:
                got = ", ".join(message_label(cfg, c, v) for v in b1)
                want = ", ".join(message_label(cfg, c, v) for v in b2)
                return (
                    f"{where}buffer {chan_name(cfg.chans[c])} holds [{got}] in the shadow, but "
                    f"rule ({move.rule}) says [{want}]"
                )
    reason = move.why.split(": ", 1)[1] if ": " in move.why and where else move.why
    return where + reason


def step_words(cfg: ModelConfig, action: str, params: Mapping[str, object]) -> str:
    """A step in words: ``P1 sends B to P2``, ``P3 receives a red letter from P1``."""
    c = params.get("c")
    if isinstance(c, list | tuple) and len(c) == 2:
        src, dst = str(c[0]), str(c[1])
        if action == "SendApp":
            ci = cfg.chan_index[(src, dst)]
            return f"{src} sends {message_label(cfg, ci, int(str(params.get('m'))))} to {dst}"
        if action == "ReceiveApp":
            return f"{dst} receives a message from {src}"
        if action == "ReceiveRedLetter":
            return f"{dst} receives a red letter from {src}"
    if action == "InternalEvent":
        return f"{params.get('p')} performs internal event {params.get('e')}"
    if action == "StartSnapshot":
        return f"{params.get('p')} starts snapshot {params.get('k')} (a red letter from nowhere)"
    return action


def _holds_all(
    cfg: ModelConfig, states: Sequence[State]
) -> tuple[dict[str, tuple[bool | None, ...]], dict[str, str]]:
    holds: dict[str, tuple[bool | None, ...]] = {}
    errors: dict[str, str] = {}
    for name, fn in INVARIANTS.items():
        row: list[bool | None] = []
        for s in states:
            try:
                row.append(fn(cfg, s))
            except SpecError as e:
                row.append(None)
                errors.setdefault(name, e.message)
        holds[name] = tuple(row)
    prop: list[bool | None] = [True]
    for s, t in pairwise(states):
        try:
            prop.append(shadow_lemma0(cfg, s, t))
        except SpecError as e:
            prop.append(None)
            errors.setdefault("ShadowLemma0", e.message)
    holds["ShadowLemma0"] = tuple(prop)
    return holds, errors


def _red_letter_why(cfg: ModelConfig, s: State) -> str:
    for k, red in enumerate(s.red):
        letter = -cfg.snaps[k]
        for c, b in enumerate(s.buf):
            src, dst = cfg.chan_src[c], cfg.chan_dst[c]
            if red >> src & 1 and not red >> dst & 1 and b.count(letter) != 1:
                return (
                    f"buffer {chan_name(cfg.chans[c])} goes from red {cfg.procs[src]} to white "
                    f"{cfg.procs[dst]} in snapshot {cfg.snaps[k]} and holds "
                    f"{b.count(letter)} red letters of it"
                )
    return ""


def _one_letter_why(cfg: ModelConfig, s: State) -> str:
    for k, red in enumerate(s.red):
        letter = -cfg.snaps[k]
        for c, b in enumerate(s.buf):
            src = cfg.chan_src[c]
            carried = b.count(letter) + (s.red_buf[k] >> c & 1)
            want = red >> src & 1
            if carried != want:
                state = "red" if want else "white"
                return (
                    f"buffer {chan_name(cfg.chans[c])} has carried {carried} red letters of "
                    f"snapshot {cfg.snaps[k]} (in flight or received), but its source "
                    f"{cfg.procs[src]} is {state}: it must have carried {want}"
                )
    return ""


def _show_g(cfg: ModelConfig, g: GState) -> str:
    machines = ", ".join(f"{p}: {show_local(cfg, x)}" for p, x in zip(cfg.procs, g[0], strict=True))
    bufs = ", ".join(
        f"{chan_name(c)} [{', '.join(show_message(cfg, v) for v in b)}]"
        for c, b in zip(cfg.chans, g[1], strict=True)
        if b
    )
    return machines + (f"; in flight: {bufs}" if bufs else "; nothing in flight")


def _lemma_break(cfg: ModelConfig, s: State, lemma: int) -> tuple[str, str]:
    for k, sf in enumerate(s.sf):
        if sf is None:
            continue
        kid = cfg.snaps[k]
        if lemma == 0:
            s0 = s.s0[k]
            assert s0 is not None
            ok, g = replay(cfg, s0, s.white_acts[k])
            if not ok:
                a = s.white_acts[k][_stuck(cfg, s0, s.white_acts[k])]
                return "WhiteActionsPossible", (
                    f"snapshot {kid}: replaying the white machines' actions from S0 gets "
                    f"stuck at “{describe_act(cfg, a)}”"
                )
            if g != snapshot(s, k):
                return "EndsInSnapshotState", (
                    f"snapshot {kid}: the white machines' actions lead from S0 to "
                    f"{_show_g(cfg, g)}, but the snapshot state is "
                    f"{_show_g(cfg, snapshot(s, k))}"
                )
        else:
            ok, g = replay(cfg, snapshot(s, k), s.red_acts[k])
            if not ok:
                a = s.red_acts[k][_stuck(cfg, snapshot(s, k), s.red_acts[k])]
                return "RedActionsPossible", (
                    f"snapshot {kid}: replaying the red machines' actions from the snapshot "
                    f"state gets stuck at “{describe_act(cfg, a)}”"
                )
            if g != sf:
                return "EndsInFinalState", (
                    f"snapshot {kid}: the red machines' actions lead from the snapshot state to "
                    f"{_show_g(cfg, g)}, but the final state is {_show_g(cfg, sf)}"
                )
    return "", ""


def _stuck(cfg: ModelConfig, g: GState, acts: Sequence[Act]) -> int:
    for i, a in enumerate(acts):
        if not act_enabled(cfg, g, a):
            return i
        g = act_result(cfg, g, a)
    return len(acts) - 1


def _shadow_property_break(cfg: ModelConfig, s: State, t: State) -> tuple[str, str]:
    for k in range(len(cfg.snaps)):
        kid = cfg.snaps[k]
        started = s.s0[k] is not None
        s0t = t.s0[k]
        if not started and s0t is not None and shadow0(cfg, t, k) != s0t:
            return "ShadowStartsInInitialState", (
                f"snapshot {kid}: the shadow state after the first machine turns red is not S0"
            )
        if started and s.sf[k] is None:
            sh = shadow0(cfg, s, k)
            w, w2 = s.white_acts[k], t.white_acts[k]
            if len(w2) > len(w):
                a = w2[-1]
                if not act_enabled(cfg, sh, a):
                    return "WhiteActionPossible", (
                        f"snapshot {kid}: the white action “{describe_act(cfg, a)}” is not "
                        f"possible in the shadow state {_show_g(cfg, sh)}"
                    )
                if shadow0(cfg, t, k) != act_result(cfg, sh, a):
                    return "WhiteActionCopied", (
                        f"snapshot {kid}: after the white action “{describe_act(cfg, a)}” the "
                        "shadow state by rules (ii) and (iii) is "
                        f"{_show_g(cfg, shadow0(cfg, t, k))}, not the copy "
                        f"{_show_g(cfg, act_result(cfg, sh, a))}"
                    )
            elif shadow0(cfg, t, k) != sh:
                return "SkipOtherwise", (
                    f"snapshot {kid}: a step that is no white action changes the shadow state "
                    f"from {_show_g(cfg, sh)} to {_show_g(cfg, shadow0(cfg, t, k))}"
                )
    return "", ""


def _break_of(cfg: ModelConfig, name: str, states: Sequence[State], n: int) -> tuple[str, str]:
    s = states[n]
    if name == "RedLetterInvariant":
        return "", _red_letter_why(cfg, s)
    if name == "OneRedLetterPerBuffer":
        return "", _one_letter_why(cfg, s)
    if name == "Lemma0ImpliesLemma1":
        conjunct, why = _lemma_break(cfg, s, 1)
        return conjunct, (f"Lemma 0 holds and Lemma 1 does not: {why}" if why else "")
    if name == "NoInterference":
        return "", (
            "seen through the application's state the step is neither no step nor one step "
            "the application alone could take: the snapshot algorithm interferes"
        )
    if name == "Lemma0":
        return _lemma_break(cfg, s, 0)
    if name == "Lemma1":
        return _lemma_break(cfg, s, 1)
    if name == "ShadowLemma0":
        return _shadow_property_break(cfg, states[n - 1], s)
    for k, sf in enumerate(s.sf):
        if sf is None:
            continue
        kid, star = cfg.snaps[k], snapshot(s, k)
        s0 = s.s0[k]
        assert s0 is not None
        stable = cfg.app.stable
        if name == "StableLemma0" and stable(s0) and not stable(star):
            return (
                "",
                f"snapshot {kid}: S0 is stable, the snapshot state {_show_g(cfg, star)} is not",
            )
        if name == "StableLemma1" and stable(star) and not stable(sf):
            return "", f"snapshot {kid}: the snapshot state is stable, the final state is not"
        if name == "StableDetection" and stable(star) and not stable(app_state(s)):
            return "", f"snapshot {kid}: the snapshot state is stable, the current state is not"
        if name == "SnapshotSatisfiesAppInv" and not cfg.app.inv(star):
            return "", (
                f"snapshot {kid}: the snapshot state {_show_g(cfg, star)} is no state the "
                "application can be in"
            )
    return "", ""


def prove_run(
    cfg: ModelConfig,
    start: State,
    steps: Sequence[Step],
    *,
    states: Sequence[State] | None = None,
) -> ProofRun:
    """Replay ``steps`` from ``start`` and compute everything the proofs show.

    ``states``: the run's states when they are given rather than replayed (a node's own
    run: :mod:`redletter.conformance.judges.noderun`); the invariants and the shadow
    networks are then evaluated on them, by the same code.  A snapshot that a given run
    never completes gets its shadow networks up to the end of the run, the snapshot
    state read from what is recorded by then, so that a rule the run breaks shows where
    it breaks it."""
    given = states
    run = events_of_trace(cfg, start, steps, states=given)
    states = run.states
    holds, errors = _holds_all(cfg, states)
    breaks: list[Break] = []
    checked = set(cfg.invariants) | set(cfg.properties)
    for name, row in holds.items():
        n = next((i for i, h in enumerate(row) if h is False), None)
        if n is not None:
            conjunct, why = _break_of(cfg, name, states, n)
            breaks.append(Break(name, n, conjunct, why, name in checked))
        elif name in errors:
            n = next(i for i, h in enumerate(row) if h is None)
            breaks.append(Break(name, n, "", f"evaluation error: {errors[name]}", name in checked))
    walks: list[Walk] = []
    plain = [(a, dict(p)) for a, p in steps]
    try:
        r = reality(cfg, states, plain)
    except InternalError as e:
        if given is None:
            raise
        why = f"the shadow networks cannot follow this run: {e.message}"
        walks = [Walk(lemma, kid, None, why) for kid in cfg.snaps for lemma in (0, 1)]
        breaks.sort(key=lambda b: (b.step, b.name))
        return ProofRun(cfg, tuple(steps), run, holds, tuple(walks), tuple(breaks), errors)
    for k, kid in enumerate(cfg.snaps):
        for lemma in (0, 1):
            if given is not None and states[-1].s0[k] is not None and states[-1].sf[k] is None:
                try:
                    walks.append(Walk(lemma, kid, shadow_walk(cfg, r, k, lemma, partial=True)))
                except InputError as e:
                    walks.append(Walk(lemma, kid, None, e.message))
                continue
            if states[-1].sf[k] is None:
                why = (
                    f"snapshot {kid} never starts in this run"
                    if states[-1].s0[k] is None
                    else f"snapshot {kid} does not complete in this run: the shadow networks "
                    "are defined from the snapshot state, which is known only when the last "
                    "red letter has been received"
                )
                walks.append(Walk(lemma, kid, None, why))
                continue
            try:
                walks.append(Walk(lemma, kid, shadow_walk(cfg, r, k, lemma)))
            except InputError as e:
                walks.append(Walk(lemma, kid, None, e.message))
    breaks.sort(key=lambda b: (b.step, b.name))
    return ProofRun(cfg, tuple(steps), run, holds, tuple(walks), tuple(breaks), errors)


def machine_rules(red: int, n: int) -> list[str]:
    """Rule (ii)'s case for each of ``n`` machines under colouring ``red``."""
    return [machine_rule(red, p) for p in range(n)]


def buffer_rules(cfg: ModelConfig, red: int) -> list[str]:
    """Rule (iii)'s case for each buffer under colouring ``red``."""
    return [buffer_rule(cfg, red, c) for c in range(len(cfg.chans))]
