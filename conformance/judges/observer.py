"""The observer judge: replay a schedule of an ObserverSnapshot model against nodes that
run the observer algorithm (``init.algorithm`` = ``observer``), comparing every step
with the model (spec/ObserverSnapshot.tla, mirrored by
:mod:`redletter.python_model.observer`).

**The network** is the harness's, as for Chandy-Lamport, but each app channel is a
*bag* (the spec's ``buf[c]``): a ``deliver`` hands over whichever message in flight
on [from, self] the schedule names (``ReceiveApp`` ``{"c", "val", "toks"}``).  The
observer's own channels are not app channels: a ``request`` of snapshot k waits
until the schedule delivers it (``ReceiveRequest(p, k)``); ``saved_state`` and
``forward`` messages reach the observer in the step that sends them (the spec
updates ``recMachine``/``repSent``/``repRecv``/``recBuf`` in that step), so the
harness delivers each to the observer at once, in the order the sender listed them,
as part of the same model step.

**The schedule's steps** are the engine's actions with its parameters (``SendApp``
``{"c", "v"}``, ``InternalEvent`` ``{"p", "e"}``, ``ReceiveApp``, ``StartSnapshot``
``{"k"}``, ``ReceiveRequest`` ``{"p", "k"}``); ``DeclareComplete`` ``{"k"}`` is an
*idle turn* of the observer of k, because completion is the observer's choice: any
step reply of the observer of k (its own steps, the deliveries to it, its idle turns)
may list k in ``completed``, which the judge accepts only when the model's
``CompletionRule(k)`` holds then (declaring earlier is the ``AllSavedStatesIn`` bug:
Lemma 0).  The judge is online: its model state follows what the node did, and a
schedule step not enabled in that state is skipped (and said so in the result), so
any subsequence of a schedule is one.

**Per step** the judge derives from the model's step what the acting node must send:
the app message with the tokens its sender holds (``TokensHeld``), the requests of
rule 1, the saved states with their counts of rule 2, the forwards of rule 3; a
difference is a :class:`~redletter.conformance.verdict.Divergence` in words naming
the property it breaks.  **After the schedule** (``drain``) the harness delivers
every request and app message still in flight, gives every observer an idle turn,
and a snapshot still not declared although ``CompletionRule`` holds is a liveness
failure (``SnapshotsComplete`` under ``WF_vars(DeclareComplete(k))``).  Then every
node ``report``s every snapshot: the observer's ``snapshot_ok`` must be the model's
``Snapshot(k)``, another node's ``report_ok`` its saved state.

Observations are one per step performed (schedule, then drain); a step's observation
lists what the acting node sent, and in ``completed`` every snapshot declared in that
step, by the acting node or by an observer on a delivery of the step.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Final, TypeAlias

from redletter.conformance import protocol as p
from redletter.conformance.driver import Transport, call
from redletter.conformance.judges.drive import (
    JudgeResult,
    NodeSpec,
    after_last_reply,
    clip,
    open_transport,
)
from redletter.conformance.net import Network, Observation, Topology, show_channel, show_msg
from redletter.conformance.process import (
    NodeError,
    NodeErrorReply,
    NodeProtocolError,
    NodeTimeout,
)
from redletter.conformance.traces import Step, Trace, load_carried, make_step
from redletter.conformance.verdict import Divergence, Verdict
from redletter.errors import InputError
from redletter.python_model.observer import (
    RECEIVE_APP,
    RECEIVE_REQUEST,
    START_SNAPSHOT,
    ObserverConfig,
    ObserverEngine,
    ObsState,
    completion_rule,
    load_observer,
    snapshot,
)

__all__ = ["ALGORITHM", "generate", "judge_trace", "load_trace_model"]

ALGORITHM: Final = "observer"

Json: TypeAlias = p.JsonValue


# --------------------------------------------------------------------------- the model


@lru_cache(maxsize=32)
def _load(model: str, tla: str, cfg: str) -> ObserverEngine:
    return load_carried(
        model, tla, cfg, lambda n, d: ObserverEngine(load_observer(n, d)), what="an observer model"
    )


def load_trace_model(trace: Trace) -> ObserverEngine:
    """The ObserverSnapshot model a trace carries (its MC texts)."""
    return _load(trace.model, trace.model_tla, trace.model_cfg)


def _norm(x: object) -> object:
    if isinstance(x, list | tuple):
        return tuple(_norm(y) for y in x)
    if isinstance(x, Mapping):
        return tuple(sorted((str(k), _norm(v)) for k, v in x.items()))
    return x


def _find(
    eng: ObserverEngine, s: ObsState, action: str, params: Mapping[str, object]
) -> tuple[int, tuple[int, ...], ObsState] | None:
    """The successor of ``s`` that is step ``(action, params)``, within the model's
    constraint; None when the step is not enabled there."""
    want = _norm(params)
    for a, raw, t in eng.successors(s):
        if eng.action_names[a] == action and _norm(eng.params(a, raw)) == want:
            return (a, raw, t) if eng.in_model(t) else None
    return None


def _json(cfg: ObserverConfig, x: object) -> Json:
    return None if x is None else cfg.app.local_to_json(x)


def _toks(cfg: ObserverConfig, mask: int) -> tuple[int, ...]:
    return tuple(k for i, k in enumerate(cfg.snaps) if mask >> i & 1)


def _held(s: ObsState, pi: int) -> int:
    return sum(1 << k for k, r in enumerate(s.red) if r >> pi & 1)


def _in_progress(s: ObsState, ki: int) -> bool:
    return s.s0[ki] is not None and s.sf[ki] is None


# --------------------------------------------------------------------------- generation


def _walk(eng: ObserverEngine, rng: random.Random, length: int) -> list[Step]:
    s = eng.init_states()[0]
    steps: list[Step] = []
    for _ in range(length):
        succ = [x for x in eng.successors(s) if eng.in_model(x[2])]
        if not succ:
            break
        starts = [x for x in succ if x[0] == START_SNAPSHOT]
        others = [x for x in succ if x[0] != START_SNAPSHOT]
        pool = starts if starts and (not others or rng.random() < 0.15) else others
        a, raw, s = pool[rng.randrange(len(pool))]
        steps.append(make_step(eng.action_names[a], eng.params(a, raw)))
    return steps


#: Deterministic goals: (name, does the step s -> t reach it?)
_GOALS: Final[tuple[tuple[str, Callable[[ObserverConfig, ObsState, int, ObsState], bool]], ...]] = (
    (
        # MCObserverEarlyFailure's counterexample: every saved state is in while a white
        # message is still in transit (AllSavedStatesIn holds, CompletionRule does not).
        "early",
        lambda cfg, s, a, t: any(
            _in_progress(t, k)
            and all(x is not None for x in t.rec_machine[k])
            and not completion_rule(cfg, t, k)
            for k in range(len(cfg.snaps))
        ),
    ),
    # A process takes the token from an app message (rule 2 on a message, with counts).
    ("red-by-message", lambda cfg, s, a, t: a == RECEIVE_APP and t.red != s.red),
    # A token-less message reaches a process holding the token (rule 3).
    ("forward", lambda cfg, s, a, t: a == RECEIVE_APP and t.rec_buf != s.rec_buf),
)


def _goal_path(
    eng: ObserverEngine,
    goal: Callable[[ObserverConfig, ObsState, int, ObsState], bool],
    *,
    limit: int = 50_000,
) -> list[Step] | None:
    """The shortest schedule whose last step reaches ``goal`` (breadth-first, at most
    ``limit`` states), or None."""
    s0 = eng.init_states()[0]
    parent: dict[ObsState, tuple[ObsState, Step] | None] = {s0: None}
    todo = deque([s0])
    while todo and len(parent) < limit:
        s = todo.popleft()
        for a, raw, t in eng.successors(s):
            if not eng.in_model(t) or t in parent:
                continue
            parent[t] = (s, make_step(eng.action_names[a], eng.params(a, raw)))
            if goal(eng.cfg, s, a, t):
                path: list[Step] = []
                x: ObsState | None = t
                while x is not None and parent[x] is not None:
                    prev, st = parent[x]  # type: ignore[misc]
                    path.append(st)
                    x = prev
                return path[::-1]
            todo.append(t)
    return None


def generate(
    model: str, spec_dir: Path, *, walks: int = 8, seed: int = 0, length: int = 40
) -> list[Trace]:
    """Schedules for observer model ``model`` of ``spec_dir``: the shortest schedule to
    each of a few goals (every saved state in while a white message is in transit, as
    in MCObserverEarlyFailure's counterexample; a process turning red on an app
    message; a forward), then ``walks`` seeded random walks of the engine (seed
    ``seed + i``; a start is taken with probability 0.15 when one is enabled)."""
    tla = (spec_dir / f"{model}.tla").read_text(encoding="utf-8")
    cfg = (spec_dir / f"{model}.cfg").read_text(encoding="utf-8")
    eng = _load(model, tla, cfg)
    out: list[Trace] = []
    for name, goal in _GOALS:
        path = _goal_path(eng, goal)
        if path is not None:
            out.append(Trace(f"{model}-goal-{name}", model, f"goal {name}", tuple(path), tla, cfg))
    for i in range(walks):
        rng = random.Random(seed + i)
        out.append(
            Trace(
                f"{model}-walk-{seed + i:04d}",
                model,
                f"random-walk seed {seed + i}",
                tuple(_walk(eng, rng, length)),
                tla,
                cfg,
            )
        )
    return out


# --------------------------------------------------------------------------- explanations


def _show_json(v: Json) -> str:
    return clip("nothing" if v is None else json.dumps(v, sort_keys=True))


def _show_sent(xs: Sequence[p.Sent]) -> str:
    if not xs:
        return "nothing"
    return clip(", ".join(f"{show_msg(x.msg)} on {show_channel(x.channel)}" for x in xs))


def _key(x: p.Sent) -> str:
    return p.encode(p.Envelope("x", "y", p.AppSendOk(0, None, (x,))))


class _Diverged(Exception):
    def __init__(self, div: Divergence) -> None:
        super().__init__(div.summary)
        self.div = div


@dataclass
class _Run:
    """One judged run: the model, its state, the nodes, the network."""

    eng: ObserverEngine
    transport: Transport
    s: ObsState
    index: int = 0  #: the step being performed (1-based)
    msg_id: int = 1

    @property
    def cfg(self) -> ObserverConfig:
        return self.eng.cfg

    def observer(self, ki: int) -> str:
        return self.cfg.procs[self.cfg.observer[ki]]

    def next_id(self) -> int:
        self.msg_id += 1
        return self.msg_id

    def div(self, kind: str, node: str, summary: str, model: str, did: str, why: str) -> _Diverged:
        return _Diverged(Divergence(kind, node, summary, model, did, why, step=self.index))

    def network(self) -> Network:
        cfg = self.cfg
        return Network(
            Topology(cfg.procs, cfg.chans),
            {
                c: tuple(
                    p.AppMsg(v, _toks(cfg, t)) for (v, t), n in self.s.buf[ci] for _ in range(n)
                )
                for ci, c in enumerate(cfg.chans)
            },
        )


def _expected_sent(
    run: _Run, s: ObsState, t: ObsState, action: int, raw: tuple[int, ...], node: str
) -> list[p.Sent]:
    """What the acting node must send in the step s -> t (spec action ``action``)."""
    cfg = run.cfg
    pi = cfg.proc_index[node]
    out: list[p.Sent] = []
    if action == 0:  # SendApp(c): the app message bearing TokensHeld(p)
        c = raw[0]
        out.append(p.Sent(cfg.chans[c], p.AppMsg(raw[1], _toks(cfg, _held(s, pi)))))
    if action == START_SNAPSHOT:  # rule 1: a request to every other process
        k = cfg.snaps[raw[0]]
        out.extend(p.Sent((node, q), p.SnapshotRequest(k)) for q in cfg.procs if q != node)
    for ki, k in enumerate(cfg.snaps):
        o = run.observer(ki)
        if o == node:
            continue  # the observer's own saved state and forwards need no message
        if not s.red[ki] >> pi & 1 and t.red[ki] >> pi & 1:  # rule 2: TurnRed
            sent = {cfg.chans[c][1]: t.rep_sent[ki][c] for c in cfg.out_chans[pi]}
            recv = {cfg.chans[c][0]: t.rep_recv[ki][c] for c in cfg.in_chans[pi]}
            state = _json(cfg, t.rec_machine[ki][pi])
            out.append(p.Sent((node, o), p.SavedState(k, state, sent, recv)))  # type: ignore[arg-type]
        if action == RECEIVE_APP and t.rec_buf[ki] != s.rec_buf[ki]:  # rule 3: Forward
            c = raw[0]
            out.append(p.Sent((node, o), p.Forward(k, cfg.chans[c][0], raw[1])))
    return out


def _compare_sent(
    run: _Run, node: str, what: str, want: list[p.Sent], got: Sequence[p.Sent]
) -> None:
    """The node's sent messages against the model's, as multisets (a step is atomic)."""
    for x in got:
        if x.channel[0] != node or x.channel[1] not in run.cfg.proc_index or x.channel[1] == node:
            raise run.div(
                "wrong-channel",
                node,
                f"{what}: {node} put {show_msg(x.msg)} on {show_channel(x.channel)}",
                f"every message {node} sends goes on a channel [{node}, q] to another node",
                f"sent {show_msg(x.msg)} on {show_channel(x.channel)}",
                "a node sends only on its own channels: its app output channels, and "
                "[self, observer] / [observer, q] for the observer's messages",
            )
        if isinstance(x.msg, p.AppMsg) and x.channel not in run.cfg.chan_index:
            raise run.div(
                "wrong-channel",
                node,
                f"{what}: {node} put {show_msg(x.msg)} on {show_channel(x.channel)}, which is "
                "not an app channel",
                "app messages go on the model's app channels (Chan)",
                f"sent {show_msg(x.msg)} on {show_channel(x.channel)}",
                "an app message on a channel the application does not have is not a step of "
                "the model",
            )
    missing = Counter(map(_key, want)) - Counter(map(_key, got))
    extra = Counter(map(_key, got)) - Counter(map(_key, want))
    if not missing and not extra:
        return
    miss = [x for x in want if _key(x) in missing]
    more = [x for x in got if _key(x) in extra]
    summary = f"{what}: {node} sent {_show_sent(got)}; the model sends {_show_sent(want)}"
    model, did = f"sends {_show_sent(want)}", f"sent {_show_sent(got)}"

    def find(kind: type, xs: list[p.Sent]) -> p.Sent | None:
        return next((x for x in xs if isinstance(x.msg, kind)), None)

    a_want, a_got = find(p.AppMsg, miss), find(p.AppMsg, more)
    if a_want is not None and a_got is not None:
        w, g = a_want.msg, a_got.msg
        assert isinstance(w, p.AppMsg) and isinstance(g, p.AppMsg)
        if w.payload == g.payload and a_want.channel == a_got.channel:
            held = ", ".join(map(str, w.tokens or ())) or "none"
            gave = ", ".join(map(str, g.tokens or ())) or "none"
            raise run.div(
                "wrong-tokens",
                node,
                f"{what}: {node} sent app {w.payload} bearing the tokens [{gave}], but it "
                f"holds [{held}]",
                f"the message bears the tokens {node} holds: [{held}] (TokensHeld)",
                f"sent it bearing [{gave}]",
                "rule 2 attaches the token to every message sent after the saved state; a "
                "message without it is taken as white, so its receiver accepts it before "
                "saving its own state or forwards it as in transit, counting in the "
                "snapshot a message sent after it (RedMessagesFromRedMachines, Lemma 0)",
            )
    f_want, f_got = find(p.Forward, miss), find(p.Forward, more)
    if f_want is not None:
        m = f_want.msg
        assert isinstance(m, p.Forward)
        raise run.div(
            "missing-forward",
            node,
            f"{what}: {node} holds the token of snapshot {m.snapshot} and received app "
            f"{m.payload} without it from {m.from_}, but did not forward it to the observer",
            f"forwards app {m.payload} to {f_want.channel[1]} as in transit on "
            f"{show_channel((m.from_, node))} (Rule3)",
            f"sent {_show_sent(got)}",
            "a token-less message reaching a process that holds the token was sent before "
            "its sender saved its state and received after its receiver did: it was in "
            "transit, and without the forward the snapshot misses it (Lemma 0); with the "
            "counts the observer waits for it for ever (SnapshotsComplete)",
        )
    if f_got is not None:
        m = f_got.msg
        assert isinstance(m, p.Forward)
        raise run.div(
            "extra-forward",
            node,
            f"{what}: {node} forwarded app {m.payload} from {m.from_} in snapshot "
            f"{m.snapshot}, which the model does not forward",
            "forwards nothing here: the message bears the token, or the receiver does not hold it",
            f"sent {show_msg(m)} on {show_channel(f_got.channel)}",
            "only a token-less message received while holding the token was in transit; "
            "forwarding another puts in the snapshot a message that is not in transit "
            "there (Lemma 0)",
        )
    s_want, s_got = find(p.SavedState, miss), find(p.SavedState, more)
    if s_want is not None and s_got is not None:
        w2, g2 = s_want.msg, s_got.msg
        assert isinstance(w2, p.SavedState) and isinstance(g2, p.SavedState)
        if w2.snapshot == g2.snapshot and s_want.channel != s_got.channel:
            raise run.div(
                "wrong-observer",
                node,
                f"{what}: {node} sent its saved state of snapshot {w2.snapshot} to "
                f"{s_got.channel[1]}, but the observer of {w2.snapshot} is {s_want.channel[1]}",
                f"sends its saved state to {s_want.channel[1]} (Observer[{w2.snapshot}])",
                f"sent it to {s_got.channel[1]}",
                "only the observer builds the snapshot; a saved state sent elsewhere never "
                "reaches it (AllSavedStates, SnapshotsComplete)",
            )
        if w2.snapshot == g2.snapshot and w2.state == g2.state:
            raise run.div(
                "wrong-counts",
                node,
                f"{what}: {node} reported the counts sent {_show_json(dict(g2.sent))}, "
                f"received {_show_json(dict(g2.received))} with its saved state of snapshot "
                f"{w2.snapshot}; the model's are sent {_show_json(dict(w2.sent))}, received "
                f"{_show_json(dict(w2.received))}",
                f"reports the counts of the moment it saved its state (SendsCounts): sent "
                f"{_show_json(dict(w2.sent))}, received {_show_json(dict(w2.received))}",
                f"reported sent {_show_json(dict(g2.sent))}, received "
                f"{_show_json(dict(g2.received))}",
                "the observer waits for sent - received forwards per channel; counts taken "
                "at another moment make it wait for too many (it never completes) or too "
                "few (it completes with a message in transit missing: CountsInvariant, "
                "Lemma 0)",
            )
        raise run.div(
            "wrong-saved-state",
            node,
            f"{what}: {node} sent the saved state {_show_json(g2.state)} of snapshot "
            f"{g2.snapshot}; the model saves {_show_json(w2.state)}",
            f"saves {_show_json(w2.state)}, its state before the message that brought the "
            "token (SendsState)",
            f"saved {_show_json(g2.state)}",
            "the saved state must be the one the process had when it first held the token; "
            "another state is not reachable from S0 with the rest of the snapshot (Lemma 0)",
        )
    if s_want is not None:
        m3 = s_want.msg
        assert isinstance(m3, p.SavedState)
        raise run.div(
            "missing-saved-state",
            node,
            f"{what}: {node} first holds the token of snapshot {m3.snapshot} but did not send "
            f"its saved state to {s_want.channel[1]}",
            f"sends its saved state {_show_json(m3.state)} with its counts (rule 2, TurnRed)",
            f"sent {_show_sent(got)}",
            "without every saved state the observer never has a snapshot "
            "(AllSavedStates, SnapshotsComplete)",
        )
    if s_got is not None:
        m4 = s_got.msg
        assert isinstance(m4, p.SavedState)
        raise run.div(
            "extra-saved-state",
            node,
            f"{what}: {node} sent a saved state of snapshot {m4.snapshot}, but it does not "
            "first hold that token here",
            "sends no saved state: the process held the token already, or does not get it here",
            f"sent {show_msg(m4)} on {show_channel(s_got.channel)}",
            "a process saves its state once per snapshot, when it first holds the token "
            "(rule 2); another saved state is not the one the snapshot's cut needs (Lemma 0)",
        )
    raise run.div(
        "wrong-sent",
        node,
        summary,
        model,
        did,
        "the messages of a step are the app message the schedule asks for (bearing the "
        "tokens held), the requests of rule 1, the saved states of rule 2 and the forwards "
        "of rule 3, nothing else (docs/protocol.md, the observer algorithm)",
    )


def _early(run: _Run, node: str, ki: int, what: str) -> _Diverged:
    """A completion the model does not allow: say what is missing."""
    cfg, s = run.cfg, run.s
    k = cfg.snaps[ki]
    if s.sf[ki] is not None:
        return run.div(
            "duplicate-complete",
            node,
            f"{what}: {node} declared snapshot {k} complete again",
            f"snapshot {k} is complete already",
            f"declared snapshot {k} complete",
            "the observer declares a snapshot complete once (DeclareComplete: InProgress)",
        )
    if s.s0[ki] is None:
        return run.div(
            "early-complete",
            node,
            f"{what}: {node} declared snapshot {k} complete before it started",
            f"snapshot {k} has not started",
            f"declared snapshot {k} complete",
            "only a started snapshot can complete (DeclareComplete: InProgress)",
        )
    if node != run.observer(ki):
        return run.div(
            "not-observer",
            node,
            f"{what}: {node} declared snapshot {k} complete, but its observer is "
            f"{run.observer(ki)}",
            f"only {run.observer(ki)} declares snapshot {k} complete",
            f"declared snapshot {k} complete",
            "only the observer has the saved states and the forwards (DeclareComplete)",
        )
    missing_states = [cfg.procs[i] for i, x in enumerate(s.rec_machine[ki]) if x is None]
    if missing_states:
        return run.div(
            "early-complete",
            node,
            f"{what}: {node} declared snapshot {k} complete without the saved state of "
            f"{', '.join(missing_states)}",
            f"snapshot {k} is not complete: AllSavedStates fails",
            f"declared snapshot {k} complete",
            "a snapshot without a process's saved state is no global state (SnapshotsComplete "
            "is about a complete snapshot; Lemma 0)",
        )
    short: list[str] = []
    for ci, c in enumerate(cfg.chans):
        sent, recv = s.rep_sent[ki][ci], s.rep_recv[ki][ci]
        have = sum(n for _, n in s.rec_buf[ki][ci])
        if sent is not None and recv is not None and have != sent - recv:
            white = [v for (v, t), n in s.buf[ci] if not t >> ki & 1 for _ in range(n)]
            where = f" (still in flight: {', '.join(map(str, white))})" if white else ""
            short.append(
                f"{show_channel(c)}: {sent} sent - {recv} received = {sent - recv} in transit, "
                f"{have} forwarded{where}"
            )
    return run.div(
        "early-complete",
        node,
        f"{what}: {node} declared snapshot {k} complete with every saved state in but a "
        f"message in transit still missing ({'; '.join(short)})",
        f"snapshot {k} is not complete: AllInTransit fails ({'; '.join(short)})",
        f"declared snapshot {k} complete",
        "every saved state is in, but a white message still in transit will be forwarded "
        "later: the snapshot declared complete misses it, so it is not reachable from S0 "
        "(Lemma 0; the AllSavedStatesIn bug of MCObserverEarlyFailure)",
    )


def _complete(
    run: _Run, node: str, claimed: Sequence[int], what: str, pending: Sequence[p.Sent]
) -> list[int]:
    """Apply the completions a reply of ``node`` declares (DeclareComplete)."""
    cfg = run.cfg
    done: list[int] = []
    for k in claimed:
        ki = cfg.snap_index.get(k)
        if ki is None:
            raise run.div(
                "unknown-snapshot",
                node,
                f"{what}: {node} declared snapshot {k} complete, which does not exist",
                "snapshots " + ", ".join(map(str, cfg.snaps)),
                f"declared snapshot {k} complete",
                "a node names only the model's snapshots",
            )
        later = [x for x in pending if getattr(x.msg, "snapshot", None) == k]
        step = _find(run.eng, run.s, "DeclareComplete", {"k": k})
        if step is None or later or node != run.observer(ki):
            raise _early(run, node, ki, what)
        run.s = step[2]
        done.append(k)
    return done


# --------------------------------------------------------------------------- the judge


def _perform(run: _Run, action: str, params: Mapping[str, object]) -> tuple[Observation, bool]:
    """Perform one schedule step; (its observation, was it performed)."""
    cfg, eng, s = run.cfg, run.eng, run.s
    if action == "DeclareComplete":  # an idle turn of the observer of k
        k = params.get("k")
        ki = cfg.snap_index.get(k) if type(k) is int else None
        if ki is None or not _in_progress(s, ki):
            return _skipped(run, action, params), False
        node = run.observer(ki)
        body: p.Request = p.Idle(run.next_id())
        idle = call(run.transport, node, body, p.IdleOk)
        what = f"an idle turn of {node}"
        _no_records(run, node, what, idle)
        _compare_sent(run, node, what, [], idle.sent)
        done = _complete(run, node, idle.completed, what, ())
        return _obs(run, action, params, node, None, None, idle.sent, done), True
    found = _find(eng, s, action, params)
    if found is None:
        return _skipped(run, action, params), False
    a, raw, t = found
    delivered: p.WireMsg | None = None
    new_state: Json = None
    expected: type[p.StepReply]
    if action == "SendApp":
        c = cfg.chans[raw[0]]
        node = c[0]
        new_state = _json(cfg, t.local[cfg.proc_index[node]])
        body, expected = p.AppSend(run.next_id(), c[1], raw[1], new_state), p.AppSendOk
        what = f"{node} sends app {raw[1]} to {c[1]}"
    elif action == "InternalEvent":
        node = cfg.procs[raw[0]]
        new_state = _json(cfg, t.local[raw[0]])
        body, expected = p.AppInternal(run.next_id(), raw[1], new_state), p.AppInternalOk
        what = f"internal event {raw[1]} of {node}"
    elif a == RECEIVE_APP:
        c = cfg.chans[raw[0]]
        node = c[1]
        new_state = _json(cfg, t.local[cfg.proc_index[node]])
        delivered = p.AppMsg(raw[1], _toks(cfg, raw[2]))
        body, expected = p.Deliver(run.next_id(), c[0], delivered, new_state), p.DeliverOk
        what = f"{node} receives {show_msg(delivered)} from {c[0]}"
    elif a == START_SNAPSHOT:
        node = run.observer(raw[0])
        k = cfg.snaps[raw[0]]
        body, expected = p.StartSnapshot(run.next_id(), k), p.StartSnapshotOk
        what = f"{node} starts snapshot {k}"
    elif a == RECEIVE_REQUEST:
        node = cfg.procs[raw[0]]
        k = cfg.snaps[raw[1]]
        delivered = p.SnapshotRequest(k)
        body, expected = p.Deliver(run.next_id(), run.observer(raw[1]), delivered), p.DeliverOk
        what = f"{node} receives the request of snapshot {k}"
    else:  # pragma: no cover - the engine's actions are the ones above
        raise InputError(f"unknown action {action}", code="RL-INPUT-SCHEDULE")
    reply = call(run.transport, node, body, expected)
    _no_records(run, node, what, reply)
    want = _expected_sent(run, s, t, a, raw, node)
    _compare_sent(run, node, what, want, reply.sent)
    run.s = t
    control = [x for x in reply.sent if not isinstance(x.msg, p.AppMsg | p.SnapshotRequest)]
    done = _complete(run, node, reply.completed, what, control)
    for i, x in enumerate(control):  # saved states and forwards reach the observer now
        o = x.channel[1]
        sub = f"{what} (the delivery of its {show_msg(x.msg)} to {o})"
        r = call(run.transport, o, p.Deliver(run.next_id(), node, x.msg), p.DeliverOk)
        _no_records(run, o, sub, r)
        _compare_sent(run, o, sub, [], r.sent)
        done += _complete(run, o, r.completed, sub, control[i + 1 :])
    return _obs(run, action, params, node, delivered, new_state, reply.sent, done), True


def _no_records(run: _Run, node: str, what: str, reply: p.StepReply) -> None:
    if reply.recorded:
        raise run.div(
            "unexpected-record",
            node,
            f"{what}: {node} listed recording events, which the observer algorithm has none of",
            "records nothing: saved states and forwards are messages to the observer",
            f"recorded {len(reply.recorded)} event(s)",
            "in the observer algorithm the snapshot is built by the observer from the "
            "saved_state and forward messages (docs/protocol.md)",
        )


def _obs(
    run: _Run,
    action: str,
    params: Mapping[str, object],
    node: str,
    delivered: p.WireMsg | None,
    new_state: Json,
    sent: Sequence[p.Sent],
    done: Sequence[int],
) -> Observation:
    return Observation(
        run.index,
        action,
        dict(params),
        node,
        delivered,
        new_state,
        tuple(sent),
        (),
        tuple(done),
        run.network(),
    )


def _skipped(run: _Run, action: str, params: Mapping[str, object]) -> Observation:
    return _obs(run, action, params, "", None, None, (), ())


def _drain(run: _Run) -> list[Step]:
    """The steps that deliver every request and app message in flight (requests first,
    then app messages, channel by channel, smallest first) while the application can
    receive them, then an idle turn of the observer of every snapshot in progress."""
    cfg, s = run.cfg, run.s
    out: list[Step] = []
    for ki, k in enumerate(cfg.snaps):
        for pi, q in enumerate(cfg.procs):
            if s.requests[ki] >> pi & 1:
                out.append(make_step("ReceiveRequest", {"p": q, "k": k}))
    return out


def _app_drain(run: _Run) -> Step | None:
    cfg, s = run.cfg, run.s
    for ci, c in enumerate(cfg.chans):
        for (v, t), _ in s.buf[ci]:
            params = {"c": list(c), "val": v, "toks": list(_toks(cfg, t))}
            if _find(run.eng, s, "ReceiveApp", params) is not None:
                return make_step("ReceiveApp", params)
    return None


def _report(run: _Run, node: str, k: int) -> p.ReportOk | p.SnapshotOk:
    """``report`` k to ``node``: report_ok or snapshot_ok (anything else is the node's
    failure, as in :func:`~redletter.conformance.driver.call`)."""
    body = p.Report(run.next_id(), k)
    reply = run.transport.call(node, body)
    if isinstance(reply, p.ReportOk | p.SnapshotOk):
        return reply
    what = f"report (msg_id {body.msg_id})"
    if isinstance(reply, p.Error):
        raise run.transport.fail(
            node,
            NodeErrorReply,
            f"node {node} answered {what} with error {reply.code}: {clip(reply.text)}",
        )
    raise run.transport.fail(
        node,
        NodeProtocolError,
        f"node {node} answered {what} with {reply.type}; expected report_ok or snapshot_ok",
    )


def _compare_report(run: _Run, node: str, ki: int, rep: p.ReportOk | p.SnapshotOk) -> None:
    cfg, s = run.cfg, run.s
    k = cfg.snaps[ki]
    o = run.observer(ki)
    run.index = 0

    def fail(kind: str, summary: str, model: str, did: str, why: str) -> _Diverged:
        return _Diverged(Divergence(kind, node, summary, model, did, why))

    if node == o:
        if not isinstance(rep, p.SnapshotOk):
            raise fail(
                "report-type",
                f"{node}, the observer of snapshot {k}, answered report with report_ok",
                "the observer answers snapshot_ok: the whole snapshot (Snapshot(k))",
                "answered report_ok",
                "the observer builds the snapshot; only it can report it (docs/protocol.md)",
            )
        g = snapshot(s, ki)
        want_states = {cfg.procs[i]: _json(cfg, x) for i, x in enumerate(g[0]) if x is not None}
        if dict(rep.states) != want_states:
            raise fail(
                "report-states",
                f"{node} reports the saved states {_show_json(dict(rep.states))} for snapshot "
                f"{k}, the model's Snapshot({k}) holds {_show_json(want_states)}",
                f"Snapshot({k}) holds the saved states {_show_json(want_states)}",
                f"reported {_show_json(dict(rep.states))}",
                "the snapshot's local states are the saved states the processes sent "
                "(recMachine); others are not the cut Lemma 0 says is reachable from S0",
            )
        got: dict[p.Channel, tuple[int, ...]] = {}
        for entry in rep.in_transit:
            if entry.channel in got or entry.channel not in cfg.chan_index:
                raise fail(
                    "report-channel",
                    f"{node} lists {show_channel(entry.channel)} in the in_transit of snapshot "
                    f"{k} twice, or it is not an app channel",
                    "one entry per app channel with a message in transit",
                    f"listed {show_channel(entry.channel)}",
                    "in_transit lists each app channel at most once (docs/protocol.md)",
                )
            got[entry.channel] = tuple(sorted(entry.payloads))
        for ci, c in enumerate(cfg.chans):
            want = g[1][ci]
            have = got.get(c, ())
            if want != have:
                raise fail(
                    "report-in-transit",
                    f"{node} reports {list(have)} in transit on {show_channel(c)} in snapshot "
                    f"{k}, the model's Snapshot({k}) {list(want)}",
                    f"Snapshot({k}) has {list(want)} in transit on {show_channel(c)}",
                    f"reported {list(have)}",
                    "the messages in transit are exactly those forwarded (recBuf); with others "
                    "the snapshot is not reachable from S0 (Lemma 0)",
                )
        if rep.complete != (s.sf[ki] is not None):
            raise fail(
                "report-complete",
                f"{node} reports snapshot {k} {'complete' if rep.complete else 'not complete'}"
                f", but it {'did not declare' if rep.complete else 'declared'} it complete",
                f"snapshot {k} is {'complete' if s.sf[ki] is not None else 'not complete'}",
                f"reported {'complete' if rep.complete else 'not complete'}",
                "complete means declared complete (the spec's Complete(k))",
            )
        return
    if not isinstance(rep, p.ReportOk):
        raise fail(
            "report-type",
            f"{node} answered report of snapshot {k} with snapshot_ok, but {o} is its observer",
            "a process that is not the observer answers report_ok with its saved state",
            "answered snapshot_ok",
            "only the observer builds the snapshot (docs/protocol.md)",
        )
    pi = cfg.proc_index[node]
    want_state = _json(cfg, s.rec_machine[ki][pi])
    red = bool(s.red[ki] >> pi & 1)
    if rep.local_state != want_state or dict(rep.channels) or rep.complete != red:
        raise fail(
            "report-state",
            f"{node} reports the saved state {_show_json(rep.local_state)}, channels "
            f"{_show_json({q: list(v) for q, v in rep.channels.items()})}, "
            f"{'complete' if rep.complete else 'not complete'} for snapshot {k}; the model: "
            f"{_show_json(want_state)}, no channels, {'complete' if red else 'not complete'}",
            f"{node} saved {_show_json(want_state)} and "
            f"{'holds' if red else 'does not hold'} the token of {k}",
            f"reported {_show_json(rep.local_state)}",
            "a process reports the state it saved when it first held the token (SendsState), "
            "records no channel, and its part is complete once it holds the token",
        )


def judge_trace(
    trace: Trace,
    node: NodeSpec,
    *,
    log_dir: Path | None = None,
    drain: bool = True,
    on_step: Callable[[Observation], None] | None = None,
) -> JudgeResult:
    """Judge ``trace`` (a schedule of an ObserverSnapshot model) against ``node`` (see the
    module docstring)."""
    start = time.perf_counter()
    eng = load_trace_model(trace)
    cfg = eng.cfg
    if cfg.app.module not in p.APP_NAMES:
        raise InputError(f"model {cfg.name}: no protocol app for {cfg.app.module}")
    observations: list[Observation] = []
    executed: list[Step] = []
    skipped: list[str] = []
    drained = 0

    def result(verdict: Verdict, **kw: object) -> JudgeResult:
        reason = str(kw.pop("reason", ""))
        if skipped:
            note = (
                f"{len(skipped)} schedule step{'s' if len(skipped) != 1 else ''} not enabled "
                "in the model state the node's choices led to, skipped: " + clip(", ".join(skipped))
            )
            reason = f"{reason}; {note}" if reason else note
        return JudgeResult(
            trace,
            verdict,
            tuple(executed),
            drained,
            tuple(observations),
            reason=reason,
            seconds=time.perf_counter() - start,
            **kw,  # type: ignore[arg-type]
        )

    transport = open_transport(node, cfg.procs, log_dir)
    report = transport.sandbox_report
    run = _Run(eng, transport, eng.init_states()[0])
    topo = Topology(cfg.procs, cfg.chans)
    observers = {k: cfg.procs[cfg.observer[ki]] for ki, k in enumerate(cfg.snaps)}
    try:
        try:
            for n in cfg.procs:
                body = p.Init(
                    run.next_id(),
                    n,
                    topo.nodes,
                    topo.in_channels(n),
                    topo.out_channels(n),
                    p.APP_NAMES[cfg.app.module],
                    _json(cfg, run.s.local[cfg.proc_index[n]]),
                    algorithm=ALGORITHM,
                    observers=observers,
                )
                call(transport, n, body, p.InitOk)
            report = transport.sandbox_report

            def perform(st: Step) -> bool:
                run.index = len(executed) + 1
                try:
                    obs, done = _perform(run, st[0], st[1])
                except _Diverged as exc:  # the failing step is part of the schedule
                    executed.append(st)
                    observations.append(_obs(run, st[0], st[1], exc.div.node, None, None, (), ()))
                    raise
                if not done:
                    skipped.append(f"{st[0]} {clip(str(dict(st[1])))}")
                    return False
                executed.append(st)
                observations.append(obs)
                if on_step is not None:
                    on_step(obs)
                return True

            for st in trace.steps:
                perform(st)
            if drain:
                before = len(executed)
                while True:
                    todo = _drain(run)
                    nxt = _app_drain(run)
                    if nxt is not None:
                        todo.append(nxt)
                    if not todo:
                        break
                    for st in todo:
                        perform(st)
                for ki, k in enumerate(cfg.snaps):  # every observer's idle turn
                    if _in_progress(run.s, ki):
                        perform(make_step("DeclareComplete", {"k": k}))
                drained = len(executed) - before
            for ki, k in enumerate(cfg.snaps):
                if drain and _in_progress(run.s, ki) and completion_rule(cfg, run.s, ki):
                    o = run.observer(ki)
                    raise _Diverged(
                        Divergence(
                            "missing-complete",
                            o,
                            f"after the schedule and an idle turn, {o} has not declared "
                            f"snapshot {k} complete although it has every saved state and "
                            "every message in transit",
                            f"{o} declares snapshot {k} complete (CompletionRule({k}) holds)",
                            "did not declare it",
                            "an observer that never declares a snapshot it may declare "
                            "breaks SnapshotsComplete (WF_vars(DeclareComplete(k)))",
                            step=len(executed),
                        )
                    )
            for ki in range(len(cfg.snaps)):
                for n in cfg.procs:
                    _compare_report(run, n, ki, _report(run, n, cfg.snaps[ki]))
            late = after_last_reply(transport)
            if late is not None:
                return result(Verdict.FAIL, reason=late[0], node_error=late[1], sandbox=report)
            stuck = [k for ki, k in enumerate(cfg.snaps) if _in_progress(run.s, ki)]
            if stuck:
                why = (
                    "the application cannot receive every message still in flight"
                    if drain
                    else "the schedule ends before the snapshot can complete (no drain)"
                )
                return result(
                    Verdict.UNKNOWN,
                    reason=(
                        f"snapshot {', '.join(map(str, stuck))} never completed: {why}, so "
                        "liveness cannot be judged on this trace (every step agreed with the "
                        "model)"
                    ),
                    sandbox=report,
                )
        except _Diverged as exc:
            return result(Verdict.FAIL, divergence=exc.div, sandbox=report)
    except NodeTimeout as exc:
        return result(Verdict.UNKNOWN, reason=exc.message, node_error=exc, sandbox=report)
    except NodeError as exc:
        return result(Verdict.FAIL, reason=exc.message, node_error=exc, sandbox=report)
    finally:
        transport.close()
    return result(Verdict.PASS, sandbox=report)
