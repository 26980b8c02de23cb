"""The lazy red letters judge: drive nodes along a schedule of a LazyChandyLamport model
and check every reply against the spec's rules, online.

The spec (spec/LazyChandyLamport.tla) leaves one choice to the node: *when* to pay each
red letter it owes (``PayRedLetter(c, k)``), at any time between turning red
(``TurnRedLazily``) and its next application message on ``c`` (``MaySend(c)``).  So the
judge does not predict the node's reply: it keeps the model state
(:class:`~redletter.python_model.lazy.LazyState`) that the node's own choices lead to,
and reads each reply as a sequence of the spec's steps:

- ``start_snapshot`` / ``deliver`` / ``app_internal``: the main action
  (``StartSnapshot``, ``ReceiveRedLetter``, ``ReceiveApp``, ``InternalEvent``) first,
  then each marker of snapshot k on buffer c, in the order of ``sent``, as
  ``PayRedLetter(c, k)``.  Main action first is no loss: the markers a reply pays are
  on the node's output buffers, the main action changes only the node's input buffer
  and its own state (or creates the debts it may pay), and ``PayRedLetter`` on one
  buffer commutes with every step on another; a marker the node owes only *after* the
  main action (the red letters of a machine turning red) can only come after it;
- ``app_send`` to ``to``: the ``sent`` list in order: each marker is a
  ``PayRedLetter``, the application message is ``SendApp([self, to], m)``, whose guard
  ``MaySend`` must hold at that point (all red letters owed on ``[self, to]`` already
  paid): an application message ahead of its buffer's owed red letter is the bug of
  MCLazyLateRedLetterFailure (Lemma 0);
- ``idle``: markers only, each a ``PayRedLetter``.

A marker the node does not owe (a second one, or one before turning red) is a
divergence; so is any application message the harness did not ask for.  What the step
records and completes is compared with the model's successor on ChandyLamport's part of
the state (``LazyState.cl()``), by the Chandy-Lamport drive judge's own comparisons
(:func:`~redletter.conformance.judges.drive.compare_recorded` and friends: the same
words), and so is every final ``report``.

Trace steps are the engine's actions.  ``SendRedLetter(c, k)`` becomes an ``idle`` turn
of ``c``'s source (the node decides what, if anything, to pay: an idle turn is always
possible); every other step is performed only when it is enabled in the model state the
node's choices led to (``SendApp`` without its ``MaySend`` conjunct: paying what the
buffer owes is the node's part of the step), and skipped otherwise (the observation
says why), so any subsequence of a trace is a schedule.

After the schedule (``drain=True``) the harness delivers everything in flight, FIFO,
and, when nothing is left to deliver, gives every machine an ``idle`` turn (one that
owes nothing must send nothing), until nothing changes for :data:`IDLE_PATIENCE` rounds
of idle turns in a row.  A started snapshot
that is then incomplete because a red letter is still owed is a ``fail``: the node
breaks ``SnapshotsComplete`` under ``RedLetterFairness`` (MCLazyUnpaidFailure's
counterexample).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from redletter.conformance import protocol as p
from redletter.conformance.driver import Transport, call, init_nodes
from redletter.conformance.judges.drive import (
    Expected,
    JudgeResult,
    NodeSpec,
    StepContext,
    after_last_reply,
    check_names,
    compare_completed,
    compare_recorded,
    compare_report,
    expected_effects,
    model_json,
    open_transport,
)
from redletter.conformance.net import (
    ChannelViolation,
    Network,
    Observation,
    Topology,
    show_channel,
    show_msg,
)
from redletter.conformance.process import NodeError, NodeProtocolError, NodeTimeout
from redletter.conformance.traces import Step, Trace, make_step, model_of, model_source
from redletter.conformance.verdict import Divergence, Verdict
from redletter.errors import InputError
from redletter.python_model.config import ModelConfig
from redletter.python_model.engines import load_engine
from redletter.python_model.lazy import (
    ACTION_NAMES,
    INTERNAL_EVENT,
    RECEIVE_APP,
    RECEIVE_RED_LETTER,
    SEND_APP,
    SEND_RED_LETTER,
    START_SNAPSHOT,
    LazyEngine,
    LazyState,
    lazy_successors,
)

__all__ = ["ALGORITHM", "IDLE_PATIENCE", "generate", "judge_trace"]

ALGORITHM: Final = "lazy"  #: init.algorithm of a lazy node

#: Rounds of idle turns in a row with nothing else happening after which the drain
#: stops: a fair node pays an owed red letter within this many idle turns.
IDLE_PATIENCE: Final = 3

_DRAIN_LIMIT: Final = 10_000


# --------------------------------------------------------------------------- the model


class _Model:
    """The engine of a trace's model, with the steps the judge takes by name."""

    def __init__(self, cfg: ModelConfig) -> None:
        if cfg.spec_module != "LazyChandyLamport":
            raise InputError(
                f"model {cfg.name} is a model of {cfg.spec_module}, not of LazyChandyLamport:"
                " the lazy judge judges lazy red letters only",
                code="RL-INPUT-MODEL",
            )
        self.cfg = cfg
        self.engine = LazyEngine(cfg)
        # The model as configured: MCLazyLateRedLetterFailure lets a send overtake a debt
        # (MaySend <- SendAnyway), MCLazyUnpaidFailure has no fairness of paying.
        self.may_send_always = cfg.overrides.get("MaySend") == "SendAnyway"
        self.fair_paying = "RedLetterFairness" not in self.engine.definition_overrides
        inits = list(self.engine.init_states())
        if len(inits) != 1:
            raise InputError(
                f"model {cfg.name} has {len(inits)} initial states; a schedule needs one",
                code="RL-INPUT-MODEL",
            )
        self.init = inits[0]

    def succ(
        self, s: LazyState, action: int, raw: tuple[int, ...], *, anyway: bool = False
    ) -> LazyState | None:
        """The successor of ``s`` by ``action`` with binding ``raw``, or None when it is
        not enabled (``anyway``: SendApp without MaySend)."""
        for a, r, t in lazy_successors(self.cfg, s, may_send_always=anyway or self.may_send_always):
            if a == action and r == raw:
                return t
        return None

    def local_json(self, s: LazyState, node: str) -> p.JsonValue:
        return model_json(self.cfg, s.local[self.cfg.proc_index[node]])

    def owed_on(self, s: LazyState, ci: int) -> list[int]:
        """The snapshot indices whose red letter buffer ``ci`` is owed."""
        return [k for k, o in enumerate(s.owed) if o >> ci & 1]

    def debts_of(self, s: LazyState, node: str) -> list[tuple[int, int]]:
        """``(buffer, snapshot index)`` of every red letter ``node`` owes."""
        pi = self.cfg.proc_index[node]
        return [
            (ci, k)
            for ci in range(len(self.cfg.chans))
            if self.cfg.chan_src[ci] == pi
            for k in self.owed_on(s, ci)
        ]


# --------------------------------------------------------------------------- generation


def _walk(engine: LazyEngine, rng: random.Random, length: int) -> list[Step]:
    s = next(iter(engine.init_states()))
    steps: list[Step] = []
    for _ in range(length):
        succ = [(a, r, t) for a, r, t in engine.successors(s) if engine.in_model(t)]
        if not succ:
            break
        a, r, s = rng.choice(succ)
        steps.append(make_step(ACTION_NAMES[a], engine.params(a, r)))
    return steps


def _defer_payments(steps: Sequence[Step]) -> list[Step]:
    """``steps`` without each ``SendRedLetter(c, k)`` after which the walk sends on ``c``
    before any red letter is received on ``c``: a node that pays at that send puts the
    red letter where the walk had it (nothing else enters ``c`` in between, since only
    its source writes on it), so every later step stays enabled, and the send must pay
    the debt first (``MaySend``)."""
    out: list[Step] = []
    for i, (action, params) in enumerate(steps):
        if action == "SendRedLetter":
            c = params["c"]
            later = next(
                (
                    a
                    for a, ps in steps[i + 1 :]
                    if a in ("SendApp", "ReceiveRedLetter") and ps["c"] == c
                ),
                None,
            )
            if later == "SendApp":
                continue
        out.append((action, params))
    return out


def generate(
    model: str, spec_dir: Path, *, walks: int = 8, seed: int = 0, length: int = 40
) -> list[Trace]:
    """Schedules of the harness for a lazy model: for each machine that may start a
    snapshot at once, a *quiet* trace (it starts, then nothing: its red letters are paid
    only on the drain's idle turns, by fairness) and a *send* trace (it starts, then
    sends on each output buffer the application lets it: each send must pay its
    buffer's debt first); then ``walks`` seeded random walks of the engine (walk ``i``
    of seed ``s`` uses ``random.Random(f"{s}:{i}")``), each also without its
    ``SendRedLetter`` steps that a later send on the same buffer can pay
    (``-deferred``, :func:`_defer_payments`)."""
    engine = load_engine(model, spec_dir)
    if not isinstance(engine, LazyEngine):
        raise InputError(
            f"model {model} is not a model of LazyChandyLamport", code="RL-INPUT-MODEL"
        )
    tla, cfg_text = model_source(model, spec_dir)
    cfg = engine.cfg

    def trace(name: str, source: str, steps: Sequence[Step]) -> Trace:
        return Trace(name, model, source, tuple(steps), tla, cfg_text)

    out: list[Trace] = []
    init = next(iter(engine.init_states()))
    for a, r, t in engine.successors(init):
        if a != START_SNAPSHOT:
            continue
        start = make_step("StartSnapshot", engine.params(a, r))
        who, kid = cfg.procs[r[0]], cfg.snaps[r[1]]
        out.append(
            trace(
                f"{model}-quiet-{who}-{kid}",
                f"lazy: {who} starts snapshot {kid}, then only the drain",
                [start],
            )
        )
        sends: list[Step] = [start]
        done: set[int] = set()
        for a2, r2, _ in lazy_successors(cfg, t, may_send_always=True):
            if a2 == SEND_APP and cfg.chan_src[r2[0]] == r[0] and r2[0] not in done:
                done.add(r2[0])
                sends.append(make_step("SendApp", engine.params(a2, r2)))
        if len(sends) > 1:
            out.append(
                trace(
                    f"{model}-send-{who}-{kid}",
                    f"lazy: {who} starts snapshot {kid}, then sends before any idle turn",
                    sends,
                )
            )
    for i in range(walks):
        steps = _walk(engine, random.Random(f"{seed}:{i}"), length)
        name = f"{model}-walk-s{seed}-{i:03d}"
        src = f"random walk {i} of the lazy engine, seed {seed}"
        out.append(trace(name, src, steps))
        deferred = _defer_payments(steps)
        if len(deferred) != len(steps):
            out.append(
                trace(
                    f"{name}-deferred",
                    src + ", each red letter paid at the next send on its buffer",
                    deferred,
                )
            )
    return out


# --------------------------------------------------------------------------- the run


@dataclass(frozen=True)
class _Planned:
    """A trace step as a request, or why it is skipped."""

    node: str
    body: p.Request | None  #: None: skipped
    expected: type[p.StepReply]
    action: str  #: the observation's action ("Idle" for an idle turn)
    params: Mapping[str, object]
    main: tuple[int, tuple[int, ...]] | None = None  #: the model action taken first
    app: tuple[int, int] | None = None  #: app_send: (buffer, payload) the node must send
    delivered: p.WireMsg | None = None
    new_state: p.JsonValue = None
    skipped: str = ""


def _chan(cfg: ModelConfig, v: object, step: Step) -> int:
    if isinstance(v, list | tuple) and len(v) == 2:
        ci = cfg.chan_index.get((str(v[0]), str(v[1])))
        if ci is not None:
            return ci
    raise InputError(
        f"{step[0]} names {v!r}, which is not a buffer of {cfg.name}", code="RL-INPUT-SCHEDULE"
    )


def _int(v: object, step: Step) -> int:
    if type(v) is not int:
        raise InputError(f"{step[0]}: expected an integer, got {v!r}", code="RL-INPUT-SCHEDULE")
    return v


def _plan(m: _Model, s: LazyState, step: Step, msg_id: int) -> _Planned:
    """What the harness asks for trace step ``step`` in model state ``s``."""
    cfg = m.cfg
    action, params = step
    ps = dict(params)
    try:
        if action == "SendRedLetter":
            ci = _chan(cfg, ps["c"], step)
            node = cfg.chans[ci][0]
            return _Planned(node, p.Idle(msg_id), p.IdleOk, "Idle", {"p": node})
        if action in ("SendApp", "ReceiveApp", "ReceiveRedLetter"):
            ci = _chan(cfg, ps["c"], step)
            src, dst = cfg.chans[ci]
            shown = {"c": [src, dst], **{k: v for k, v in ps.items() if k != "c"}}
            if action == "SendApp":
                pay = _int(ps["m"], step)
                t = m.succ(s, SEND_APP, (ci, pay), anyway=True)
                why = (
                    f"the application of {src} cannot send {pay} on {show_channel((src, dst))}"
                    " now (or its bound of application actions is spent)"
                )
                if t is None:
                    return _Planned(src, None, p.AppSendOk, action, shown, skipped=why)
                new = m.local_json(t, src)
                return _Planned(
                    src,
                    p.AppSend(msg_id, dst, pay, new),
                    p.AppSendOk,
                    action,
                    shown,
                    app=(ci, pay),
                    new_state=new,
                )
            i = _int(ps.get("i", 1), step)
            shown = {"c": [src, dst], "i": i}
            kind = RECEIVE_APP if action == "ReceiveApp" else RECEIVE_RED_LETTER
            t = m.succ(s, kind, (ci, i))
            if t is None or i != 1:
                head = s.buf[ci][0] if s.buf[ci] else None
                has = (
                    "is empty"
                    if head is None
                    else f"has {'app ' + str(head) if head >= 0 else f'marker {-head}'} first"
                    if i == 1
                    else "is FIFO: only position 1 can be received"
                )
                why = f"{show_channel((src, dst))} {has}"
                if head is not None and head >= 0 and action == "ReceiveApp" and i == 1:
                    why = f"{dst}'s application cannot receive app {head} now"
                return _Planned(dst, None, p.DeliverOk, action, shown, skipped=why)
            head = s.buf[ci][0]
            if kind == RECEIVE_APP:
                new = m.local_json(t, dst)
                msg: p.WireMsg = p.AppMsg(head)
                return _Planned(
                    dst,
                    p.Deliver(msg_id, src, msg, new),
                    p.DeliverOk,
                    action,
                    shown,
                    main=(kind, (ci, i)),
                    delivered=msg,
                    new_state=new,
                )
            msg = p.Marker(-head)
            return _Planned(
                dst,
                p.Deliver(msg_id, src, msg),
                p.DeliverOk,
                action,
                shown,
                main=(kind, (ci, i)),
                delivered=msg,
            )
        if action in ("InternalEvent", "StartSnapshot"):
            node = str(ps["p"])
            pi = cfg.proc_index.get(node)
            if pi is None:
                raise InputError(
                    f"{action} names {node!r}, which is not a machine of {cfg.name}",
                    code="RL-INPUT-SCHEDULE",
                )
            shown = {"p": node, **{k: v for k, v in ps.items() if k != "p"}}
            if action == "InternalEvent":
                e = _int(ps["e"], step)
                t = m.succ(s, INTERNAL_EVENT, (pi, e))
                if t is None:
                    why = f"the application of {node} has no event {e} now"
                    return _Planned(node, None, p.AppInternalOk, action, shown, skipped=why)
                new = m.local_json(t, node)
                return _Planned(
                    node,
                    p.AppInternal(msg_id, e, new),
                    p.AppInternalOk,
                    action,
                    shown,
                    main=(INTERNAL_EVENT, (pi, e)),
                    new_state=new,
                )
            kid = _int(ps["k"], step)
            ki = cfg.snap_index.get(kid)
            if ki is None:
                raise InputError(
                    f"StartSnapshot of snapshot {kid}, which is not in Snap of {cfg.name}",
                    code="RL-INPUT-SCHEDULE",
                )
            if m.succ(s, START_SNAPSHOT, (pi, ki)) is None:
                why = f"{node} may not start snapshot {kid} now (already red, or not a starter)"
                return _Planned(node, None, p.StartSnapshotOk, action, shown, skipped=why)
            return _Planned(
                node,
                p.StartSnapshot(msg_id, kid),
                p.StartSnapshotOk,
                action,
                shown,
                main=(START_SNAPSHOT, (pi, ki)),
            )
    except KeyError as exc:
        raise InputError(
            f"bad parameters for {action}: {ps!r} (no {exc})", code="RL-INPUT-SCHEDULE"
        ) from None
    raise InputError(
        f"{action} is not an action of LazyChandyLamport ({', '.join(ACTION_NAMES)})",
        code="RL-INPUT-SCHEDULE",
    )


_LEMMA0_OVERTAKE: Final = (
    "SendApp(c) requires MaySend(c): no application message enters a buffer that is still "
    'owed a red letter ("before p sends further messages along c"). {dst}, white in '
    "snapshot {k}, receives {m} before the red letter: it counts a message {src} sent "
    "after recording its state; the receipt is in {dst}'s recorded state, the send is not "
    "in {src}'s, so the snapshot is not reachable from S0 (Lemma 0; TLC's counterexample "
    "of MCLazyLateRedLetterFailure)"
)


def _read_sent(
    m: _Model, s: LazyState, plan: _Planned, ctx_of: Callable[[LazyState], StepContext]
) -> tuple[LazyState, Divergence | None]:
    """The reply's ``sent`` list as the spec's steps from ``s`` (see the module doc)."""
    cfg = m.cfg
    node = plan.node
    obs_ctx = ctx_of(s)
    sent_app = False
    for entry in obs_ctx.obs.sent:
        ch = entry.channel
        ci = cfg.chan_index[ch]
        chs = show_channel(ch)
        if isinstance(entry.msg, p.Marker):
            kid = entry.msg.snapshot
            ki = cfg.snap_index[kid]
            t = m.succ(s, SEND_RED_LETTER, (ci, ki))
            if t is None:
                red = s.red[ki] >> cfg.proc_index[node] & 1
                done = (
                    "it is still white in that snapshot, so it owes nothing"
                    if not red
                    else ("it has paid that red letter already")
                )
                why = (
                    "PayRedLetter(c, k) is enabled only while c \\in owed[k]: a machine "
                    "owes each output buffer one red letter of each snapshot, from the moment "
                    "it turns red (TurnRedLazily) until it pays it. "
                    + (
                        f"A second red letter of snapshot {kid} on {chs} makes {ch[1]} close "
                        "a recording that is already closed, or close a later one too early "
                        "(RedLetterInvariant: one red letter, or none and one owed)"
                        if red
                        else f"A red letter from a white machine turns {ch[1]} red before "
                        f"{node} records its state: what {node} sends before turning red is "
                        f"then in neither {ch[1]}'s recording of {chs} nor, received after it "
                        "turned red, in its state, so the snapshot loses it (Lemma 0)"
                    )
                )
                return s, obs_ctx.div(
                    "unowed-red-letter",
                    f"{obs_ctx.what()}: {node} put marker {kid} on {chs}, a red letter it does "
                    "not owe",
                    f"{node} owes no red letter of snapshot {kid} on {chs}: {done}",
                    f"put marker {kid} on {chs}",
                    why,
                )
            s = t
            continue
        if not isinstance(entry.msg, p.AppMsg):
            shown = show_msg(entry.msg)
            return s, obs_ctx.div(
                "foreign-message",
                f"{obs_ctx.what()}: {node} put {shown} on {chs}, a message of another algorithm",
                f"{node} puts only app messages and red letters on {chs}",
                f"put {shown} on {chs}",
                "the lazy algorithm's wire messages are Chandy-Lamport's (docs/protocol.md);"
                " anything else is not a step of LazyChandyLamport",
            )
        payload = entry.msg.payload
        if plan.app is None or sent_app or plan.app != (ci, payload):
            asked = (
                f"{node} puts app {plan.app[1]} on {show_channel(cfg.chans[plan.app[0]])}, once"
                if plan.app is not None
                else f"{node} sends no app message in this step"
            )
            return s, obs_ctx.div(
                "wrong-app-traffic",
                f"{obs_ctx.what()} sends the wrong messages on {chs}",
                asked,
                f"put app {payload} on {chs}",
                "the harness computes the application and the node must put exactly the app "
                f"message it was told to send on {chs}; the run no longer follows the schedule",
            )
        sent_app = True
        t = m.succ(s, SEND_APP, (ci, payload))
        if t is None:
            k = m.owed_on(s, ci)[0]
            kid = cfg.snaps[k]
            return s, obs_ctx.div(
                "app-before-red-letter",
                f"{obs_ctx.what()}: {node} put app {payload} on {chs} while it still owes the "
                f"red letter of snapshot {kid} there",
                f"{node} pays the red letter of snapshot {kid} on {chs} (marker {kid}) before "
                f"app {payload}",
                f"put app {payload} on {chs} first",
                _LEMMA0_OVERTAKE.format(dst=ch[1], src=node, k=kid, m=f"app {payload}"),
            )
        s = t
    if plan.app is not None and not sent_app:
        chs = show_channel(cfg.chans[plan.app[0]])
        return s, obs_ctx.div(
            "wrong-app-traffic",
            f"{obs_ctx.what()} sends the wrong messages on {chs}",
            f"{node} puts app {plan.app[1]} on {chs}",
            "did not send it",
            "the harness computes the application and the node must put exactly the app "
            f"message it was told to send on {chs}; the run no longer follows the schedule",
        )
    return s, None


_NOTHING: Final = Expected({}, {}, {}, frozenset(), frozenset())


class _Run:
    """One run: the transport, the harness's network, the model state, what was seen."""

    def __init__(
        self,
        m: _Model,
        transport: Transport,
        topo: Topology,
        on_step: Callable[[Observation], None] | None,
    ) -> None:
        self.m, self.transport, self.on_step = m, transport, on_step
        self.network = Network.empty(topo)
        self.state = m.init
        self.msg_id = 0
        self.executed: list[Step] = []
        self.observations: list[Observation] = []

    def next_id(self) -> int:
        self.msg_id += 1
        return self.msg_id

    def perform(self, step: Step) -> Divergence | None:
        """Perform one trace step (or skip it) and judge the reply."""
        m, cfg, s = self.m, self.m.cfg, self.state
        plan = _plan(m, s, step, self.msg_id + 1)
        index = len(self.observations) + 1
        self.executed.append(step)
        if plan.body is None:
            obs = Observation(
                index,
                plan.action,
                plan.params,
                plan.node,
                None,
                None,
                (),
                (),
                (),
                self.network,
                skipped=f"not enabled in the model state the node's choices led to: {plan.skipped}",
            )
            self._observe(obs)
            return None
        self.msg_id += 1
        reply = call(self.transport, plan.node, plan.body, plan.expected)
        network = self.network
        if plan.delivered is not None:
            c = plan.params["c"]
            assert isinstance(c, list)
            _, network = network.pop((str(c[0]), str(c[1])))
        try:
            network = network.enqueue(plan.node, reply.sent)
        except ChannelViolation as exc:
            raise self.transport.fail(plan.node, NodeProtocolError, exc.message) from None
        self.network = network
        obs = Observation(
            index,
            plan.action,
            plan.params,
            plan.node,
            plan.delivered,
            plan.new_state,
            reply.sent,
            reply.recorded,
            reply.completed,
            network,
        )
        self._observe(obs)
        first = s
        if plan.main is not None:
            t = m.succ(s, *plan.main)
            assert t is not None  # _plan found it enabled
            s = t

        def ctx_of(x: LazyState) -> StepContext:
            return StepContext(cfg, first.cl(), x.cl(), index, obs)

        div = check_names(ctx_of(s))
        if div is not None:
            return div
        s, div = _read_sent(m, s, plan, ctx_of)
        if div is not None:
            return div
        ctx = ctx_of(s)
        if plan.action == "Idle":
            exp = _NOTHING
        else:
            main_action = plan.action
            exp = expected_effects(cfg, first.cl(), s.cl(), main_action, plan.params)
        div = compare_recorded(ctx, exp) or compare_completed(ctx, exp)
        self.state = s
        return div

    def _observe(self, obs: Observation) -> None:
        self.observations.append(obs)
        if self.on_step is not None:
            self.on_step(obs)

    def drain(self) -> Divergence | None:
        """Deliver everything (FIFO); when nothing is deliverable, an idle turn for every
        machine; until nothing is owed and a round changes nothing, or
        :data:`IDLE_PATIENCE` rounds of idle turns in a row change nothing."""
        m, cfg = self.m, self.m.cfg
        quiet = 0
        while len(self.executed) < _DRAIN_LIMIT:
            progress = False
            for ci, c in enumerate(cfg.chans):
                head = self.state.buf[ci][0] if self.state.buf[ci] else None
                if head is None:
                    continue
                action = "ReceiveRedLetter" if head < 0 else "ReceiveApp"
                kind = RECEIVE_RED_LETTER if head < 0 else RECEIVE_APP
                if m.succ(self.state, kind, (ci, 1)) is None:
                    continue
                div = self.perform(make_step(action, {"c": list(c), "i": 1}))
                if div is not None:
                    return div
                progress = True
            if progress:
                quiet = 0
                continue
            # An idle turn for every machine, in order: a machine that owes a red letter
            # may pay it (the drain's step is SendRedLetter of its first debt), one that
            # owes nothing must send nothing.
            before = (self.state.owed, self.state.buf)
            for n in cfg.procs:
                debts = m.debts_of(self.state, n)
                ci, k = debts[0] if debts else (cfg.chans.index(_first_out(cfg, n)), 0)
                st = make_step("SendRedLetter", {"c": list(cfg.chans[ci]), "k": cfg.snaps[k]})
                div = self.perform(st)
                if div is not None:
                    return div
            if not any(m.debts_of(self.state, n) for n in cfg.procs):
                if (self.state.owed, self.state.buf) == before:
                    return None
                continue
            if (self.state.owed, self.state.buf) != before:
                quiet = 0
                continue
            quiet += 1
            if quiet >= IDLE_PATIENCE:
                return None
        return None


def _first_out(cfg: ModelConfig, n: str) -> tuple[str, str]:
    """The first output buffer of ``n`` (an idle turn's step names one)."""
    return next(c for c in cfg.chans if c[0] == n)


def _unpaid(m: _Model, s: LazyState, index: int) -> Divergence | None:
    """The liveness failure of a red letter still owed after the drain's idle turns."""
    cfg = m.cfg
    for n in cfg.procs:
        debts = m.debts_of(s, n)
        if not debts:
            continue
        ci, k = debts[0]
        kid, ch = cfg.snaps[k], cfg.chans[ci]
        chs = show_channel(ch)
        return Divergence(
            "unpaid-red-letter",
            n,
            f"snapshot {kid} never completes: {n} still owes its red letter on {chs} after "
            f"{IDLE_PATIENCE} idle turns in a row with nothing else to do",
            "RedLetterFairness (WF_vars(PayRedLetter(c, k))): a red letter owed is "
            "eventually paid, even on a buffer its machine never sends on again",
            f"kept owing marker {kid} on {chs}",
            f"{ch[1]} never receives a red letter of snapshot {kid} on {chs}, so that buffer "
            f"never turns red and the snapshot never completes (SnapshotsComplete; TLC's "
            "counterexample of MCLazyUnpaidFailure)",
            step=index,
        )
    return None


# --------------------------------------------------------------------------- the judge


def judge_trace(
    trace: Trace,
    node: NodeSpec,
    *,
    log_dir: Path | None = None,
    drain: bool = True,
    on_step: Callable[[Observation], None] | None = None,
) -> JudgeResult:
    """Drive ``node`` along ``trace`` (a schedule of a LazyChandyLamport model) and judge
    every reply, then the drain and the final reports (see the module docstring)."""
    start = time.perf_counter()
    cfg = model_of(trace)
    m = _Model(cfg)
    if cfg.app_module not in p.APP_NAMES:
        raise InputError(f"model {cfg.name}: no protocol app for {cfg.app_module}")
    topo = Topology(cfg.procs, cfg.chans)
    transport = open_transport(node, cfg.procs, log_dir)
    report = transport.sandbox_report
    run = _Run(m, transport, topo, on_step)
    drained = 0

    def result(verdict: Verdict, **kw: object) -> JudgeResult:
        return JudgeResult(
            trace,
            verdict,
            tuple(run.executed),
            drained,
            tuple(run.observations),
            seconds=time.perf_counter() - start,
            sandbox=report,
            **kw,  # type: ignore[arg-type]
        )

    initial = {n: m.local_json(m.init, n) for n in cfg.procs}
    try:
        try:
            run.msg_id = (
                init_nodes(
                    transport, topo, p.APP_NAMES[cfg.app_module], initial, algorithm=ALGORITHM
                )
                - 1
            )
            report = transport.sandbox_report
            for st in trace.steps:
                div = run.perform(st)
                if div is not None:
                    return result(Verdict.FAIL, divergence=div)
            scheduled = len(run.executed)
            if drain:
                div = run.drain()
                drained = len(run.executed) - scheduled
                if div is not None:
                    return result(Verdict.FAIL, divergence=div)
            final = run.state
            for kid in cfg.snaps:
                for n in cfg.procs:
                    rep = call(transport, n, p.Report(run.next_id(), kid), p.ReportOk)
                    div = compare_report(cfg, final.cl(), n, kid, rep)
                    if div is not None:
                        return result(Verdict.FAIL, divergence=div)
            late = after_last_reply(transport)
            if late is not None:
                return result(Verdict.FAIL, reason=late[0], node_error=late[1])
            stuck = [
                kid
                for ki, kid in enumerate(cfg.snaps)
                if final.s0[ki] is not None and final.sf[ki] is None
            ]
            if stuck:
                if drain and m.fair_paying:
                    div = _unpaid(m, final, len(run.executed))
                    if div is not None:
                        return result(Verdict.FAIL, divergence=div)
                why = (
                    "the schedule ends before its last red letter is received (no drain)"
                    if not drain
                    else "a red letter is still owed and the model has no fairness of paying"
                    f" ({cfg.name} overrides RedLetterFairness)"
                    if any(m.debts_of(final, n) for n in cfg.procs)
                    else "the application cannot receive every message still in flight"
                )
                return result(
                    Verdict.UNKNOWN,
                    reason=(
                        f"snapshot {', '.join(map(str, stuck))} never completed: {why}, so "
                        "liveness cannot be judged on this trace (every step agreed with "
                        "the model)"
                    ),
                )
        finally:
            transport.close()
    except NodeTimeout as exc:
        return result(Verdict.UNKNOWN, reason=exc.message, node_error=exc)
    except NodeError as exc:
        return result(Verdict.FAIL, reason=exc.message, node_error=exc)
    return result(Verdict.PASS)
