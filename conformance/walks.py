"""Runs produced for tests, benchmarks and the mutant zoo (the judges take theirs
from traces and logs).

- :func:`model_walk`: a seeded random walk of the model, as a schedule;
- :func:`random_walk`: a seeded random walk of a :class:`~redletter.conformance.driver.Driver`'s
  nodes, the application computed by the model's :class:`~redletter.python_model.apps.App`;
- :func:`drive_and_log`: the event log (:mod:`redletter.conformance.eventlog`) that nodes
  run in process along a schedule would write.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import TypeAlias, cast

from redletter.conformance import protocol as p
from redletter.conformance.driver import Driver, InProcessTransport
from redletter.conformance.net import Observation, Topology
from redletter.conformance.node import NodeFactory, NodeHost
from redletter.errors import InputError, RedletterError
from redletter.python_model.actions import app_action_bound, init_states, step, successors
from redletter.python_model.apps import App
from redletter.python_model.config import ModelConfig
from redletter.python_model.state import Local

__all__ = [
    "ScheduleStep",
    "drive_and_log",
    "initial_app_states",
    "model_walk",
    "random_walk",
]

Json: TypeAlias = p.JsonValue
ScheduleStep: TypeAlias = tuple[str, dict[str, object]]
"""A step of the spec's vocabulary with plain params: ``(action, params)``."""


def model_walk(cfg: ModelConfig, seed: int, *, max_steps: int = 200) -> list[ScheduleStep]:
    """A seeded random walk of the model under its CONSTRAINT, until no step is left."""
    rng = random.Random(seed)
    s = init_states(cfg)[0]
    out: list[ScheduleStep] = []
    for _ in range(max_steps):
        nxt = [
            (a, prm, t)
            for a, prm, t in successors(cfg, s)
            if not cfg.constraints or app_action_bound(cfg, t)
        ]
        if not nxt:
            break
        a, prm, s = nxt[rng.randrange(len(nxt))]
        out.append((a, dict(prm)))
    return out


def initial_app_states(app: App, nodes: Sequence[str]) -> dict[str, Json]:
    """Every node's initial app state in the protocol's JSON (node i is machine i)."""
    return {n: app.local_to_json(app.local_init(i)) for i, n in enumerate(nodes)}


def random_walk(
    driver: Driver,
    app: App,
    *,
    seed: int,
    steps: int,
    snapshots: Sequence[int] = (1,),
    start_weight: float = 0.05,
) -> list[Observation]:
    """Perform up to ``steps`` random enabled steps (fewer if none is enabled).

    The application is ``app``, one of the model's (machine i is the i-th node of
    the driver's topology); the walk computes each node's new app state with it.
    Each step is chosen uniformly among the enabled ones (an app send picks a
    uniformly random message), except that starting a snapshot is chosen with
    probability ``start_weight`` when enabled.  Snapshot k may be started by
    any machine not yet red in k.  Deterministic for a given ``seed``.
    """
    rng = random.Random(seed)
    topo = driver.topology
    index = {n: i for i, n in enumerate(topo.nodes)}
    local: dict[str, Local] = {}
    for n, v in driver.states.items():
        s = app.local_from_json(v)
        if s is None:
            raise InputError(f"node {n}'s app state {v!r} is not a {app.module} state")
        local[n] = s
    out: list[Observation] = []
    for _ in range(steps):
        net = driver.network
        starts = [
            (q, k) for k in snapshots for q in topo.nodes if q not in driver.red.get(k, frozenset())
        ]
        if starts and rng.random() < start_weight:
            q, k = starts[rng.randrange(len(starts))]
            out.append(driver.start_snapshot(q, k))
            continue
        moves: list[tuple[str, tuple[str, str] | tuple[str, int]]] = []
        for c in topo.channels:
            src, dst = index[c[0]], index[c[1]]
            if app.sendable(src, dst, local[c[0]]):
                moves.append(("send", c))
            head = net.head(c)
            if head is not None and (
                not isinstance(head, p.AppMsg)
                or app.can_receive(dst, src, head.payload, local[c[1]])
            ):
                moves.append(("deliver", c))
        for n in topo.nodes:
            for e in app.events(index[n], local[n]):
                moves.append(("internal", (n, e)))
        if not moves:
            if not starts:
                break
            q, k = starts[rng.randrange(len(starts))]
            out.append(driver.start_snapshot(q, k))
            continue
        kind, arg = moves[rng.randrange(len(moves))]
        if kind == "send":
            a, b = cast(tuple[str, str], arg)
            options = app.sendable(index[a], index[b], local[a])
            m = options[rng.randrange(len(options))]
            local[a] = app.after_send(index[a], index[b], m, local[a])
            out.append(driver.app_send(a, b, m, app.local_to_json(local[a])))
        elif kind == "deliver":
            a, b = cast(tuple[str, str], arg)
            head = net.head((a, b))
            new: Json = None
            if isinstance(head, p.AppMsg):
                local[b] = app.after_receive(index[b], index[a], head.payload, local[b])
                new = app.local_to_json(local[b])
            out.append(driver.deliver((a, b), new))
        else:
            n, e = cast(tuple[str, int], arg)
            local[n] = app.after_event(index[n], e, local[n])
            out.append(driver.app_internal(n, e, app.local_to_json(local[n])))
    return out


def _actor(action: str, params: Mapping[str, object]) -> str:
    """The machine that takes a step of the spec's vocabulary."""
    if action in ("SendApp", "ReceiveApp", "ReceiveRedLetter"):
        c = cast(Sequence[str], params["c"])
        return str(c[0] if action == "SendApp" else c[1])
    return str(params["p"])


def _msg_json(m: p.WireMsg) -> dict[str, Json]:
    if isinstance(m, p.AppMsg):
        return {"app": m.payload}
    if isinstance(m, p.Marker):
        return {"marker": m.snapshot}
    if isinstance(m, p.Barrier):
        return {"barrier": m.checkpoint}
    if isinstance(m, p.StreamRecord):
        return {"record": [m.source, m.index, m.round]}
    return {"observer": m.snapshot}  # the observer algorithm's request, saved state, forward


def drive_and_log(
    cfg: ModelConfig, factory: NodeFactory, schedule: Sequence[ScheduleStep]
) -> list[dict[str, Json]]:
    """Run nodes built by ``factory`` in process along ``schedule`` (steps of the
    model) and return the event log they would write (see :mod:`redletter.conformance.eventlog`).

    The run stops at the first step the nodes cannot perform (a node failed, or a
    message the schedule receives is not at the head of its channel); the log ends
    there, with that step's action logged.  ``complete`` events carry the node's
    final report for the snapshot.
    """
    topo = Topology(cfg.procs, cfg.chans)
    app = p.APP_NAMES[cfg.app_module]
    s = init_states(cfg)[0]
    initial = {n: cfg.app.local_to_json(s.local[i]) for i, n in enumerate(cfg.procs)}
    log: list[dict[str, Json]] = []
    seq: dict[str, int] = dict.fromkeys(cfg.procs, 0)
    vcs: dict[str, dict[str, int]] = {n: {} for n in cfg.procs}
    sent_vc: dict[tuple[str, str], list[dict[str, int]]] = {c: [] for c in cfg.chans}
    completes: list[tuple[dict[str, Json], str, int]] = []

    def emit(
        node: str, event: str, merge: dict[str, int] | None = None, **kw: Json
    ) -> dict[str, Json]:
        seq[node] += 1
        vc = vcs[node]
        if merge:
            for q, v in merge.items():
                vc[q] = max(vc.get(q, 0), v)
        vc[node] = seq[node]
        line: dict[str, Json] = {"node": node, "seq": seq[node], "vc": dict(vc), "event": event}
        line.update(kw)
        log.append(line)
        return line

    driver = Driver(InProcessTransport(NodeHost(factory)), topo, app, initial)
    with driver:
        driver.init()
        for action, params in schedule:
            try:
                t = step(cfg, s, action, params)
            except RedletterError:
                break
            node = _actor(action, params)
            pi = cfg.proc_index[node]
            new = cfg.app.local_to_json(t.local[pi]) if action != "StartSnapshot" else None
            head = None
            if action in ("ReceiveApp", "ReceiveRedLetter"):
                c = cast(list[str], params["c"])
                head = driver.network.head((c[0], c[1]))
                mh = s.buf[cfg.chan_index[(c[0], c[1])]][0]
                if head is None or _msg_json(head) != ({"app": mh} if mh >= 0 else {"marker": -mh}):
                    break  # the nodes did not send what the model did: the run ends
            try:
                obs = driver.perform(action, params, new if action != "ReceiveRedLetter" else None)
            except Exception:
                if action == "StartSnapshot":
                    emit(node, "start_snapshot", snapshot=cast(int, params["k"]))
                elif action == "InternalEvent":
                    emit(node, "internal", msg={"internal": cast(int, params["e"])}, state=new)
                elif head is not None:
                    c = cast(list[str], params["c"])
                    emit(
                        node,
                        "receive",
                        sent_vc[(c[0], c[1])].pop(0),
                        channel=list(c),
                        msg=_msg_json(head),
                    )
                break
            s = t
            if action == "StartSnapshot":
                emit(node, "start_snapshot", snapshot=cast(int, params["k"]))
            elif action == "InternalEvent":
                emit(node, "internal", msg={"internal": cast(int, params["e"])}, state=new)
            elif action in ("ReceiveApp", "ReceiveRedLetter"):
                assert obs.delivered is not None
                c = cast(list[str], params["c"])
                kw: dict[str, Json] = {"channel": list(c), "msg": _msg_json(obs.delivered)}
                if isinstance(obs.delivered, p.AppMsg):
                    kw["state"] = new
                emit(node, "receive", sent_vc[(c[0], c[1])].pop(0), **kw)
            for snt in obs.sent:
                extra: dict[str, Json] = {}
                if action == "SendApp" and isinstance(snt.msg, p.AppMsg):
                    extra["state"] = new
                extra["channel"] = list(snt.channel)
                extra["msg"] = _msg_json(snt.msg)
                line = emit(node, "send", None, **extra)
                sent_vc[snt.channel].append(dict(cast(dict[str, int], line["vc"])))
            for r in obs.recorded:
                if isinstance(r, p.RecordState):
                    emit(node, "record_state", snapshot=r.snapshot, state=r.state)
                elif isinstance(r, p.RecordMessage):
                    emit(
                        node,
                        "record_message",
                        snapshot=r.snapshot,
                        channel=list(r.channel),
                        msg={"app": r.payload},
                    )
                else:
                    emit(node, "close_channel", snapshot=r.snapshot, channel=list(r.channel))
            for k in obs.completed:
                completes.append((emit(node, "complete", snapshot=k), node, k))
        for line, node, k in completes:
            try:
                rep = driver.report(node, k)
            except Exception:
                continue
            line["state"] = rep.local_state
            line["channels"] = {q: list(ms) for q, ms in rep.channels.items()}
    return log
