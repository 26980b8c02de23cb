"""A failing node's own run, as states of the model: what the explorer draws beside the
model's run.

The drive judge (:mod:`redletter.conformance.judges.drive`) stops at the first step
where a node parts from the model, so its observations end there, usually before the
node's snapshot completes.  :func:`follow_node` drives the node again through the
schedule, **without stopping at the divergence**, and then through its own completion:
every message the node put in flight is delivered, channel by channel, oldest first
(the judge's drain, on the node's network instead of the model's), while the
application can receive it; at the end every node reports every snapshot.

:func:`node_states` turns that run into states of the model (``ChandyLamport.tla``'s
variables), so that the model's own code can evaluate every invariant on them and run
Dijkstra's shadow networks along them (:func:`redletter.render.proof.prove_run` with
``states``): the application's part (local states, app messages) is the harness's, the
snapshot's part is the node's own, as it reported it step by step:

- ``buf``: the node's network (its red letters where it put them, or nowhere);
- ``red[k]``: the nodes that recorded their state for snapshot k; ``recMachine[k]``
  what they recorded; ``recBuf[k]`` the messages they recorded per input channel;
  ``redBuf[k]`` the channels they closed;
- the history variables as the spec defines them along the run: ``S0[k]`` the
  application's state just before the first node recorded for k, ``Sf[k]`` once every
  channel is closed, ``whiteActs``/``redActs`` each application action between the two
  by the colour of its node.

A node whose recording breaks a rule then breaks, in these states, the invariant or the
shadow network that rule guarantees, at the step where it broke it: its own run shows
the failure as the must-fail models' counterexamples do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from redletter.conformance import protocol as p
from redletter.conformance.driver import Driver
from redletter.conformance.judges.drive import NodeSpec, open_transport
from redletter.conformance.net import Network, Observation, Topology, show_channel
from redletter.conformance.process import NodeError
from redletter.conformance.traces import Step, Trace, make_step, model_of
from redletter.python_model.actions import app_state, init_states
from redletter.python_model.config import ModelConfig
from redletter.python_model.state import ACT_INTERNAL, ACT_RECEIVE, ACT_SEND, Act, Local, State

__all__ = ["NodeRun", "follow_node", "node_states"]

#: Steps of a node's own completion at most (a node that keeps sending never ends).
_DRAIN_LIMIT = 2000


@dataclass(frozen=True)
class NodeRun:
    """A node's own run of a schedule (module docstring)."""

    steps: tuple[Step, ...]  #: the steps performed: the schedule's, then its completion
    observations: tuple[Observation, ...]
    locals_after: tuple[tuple[Local, ...], ...]  #: the application's states after each step
    scheduled: int  #: how many of ``steps`` are the schedule's
    reports: Mapping[tuple[str, int], p.ReportOk]
    stopped: str = ""  #: why the run ended early ("" when it ran to its end)


def _head_action(net: Network, c: tuple[str, str]) -> str | None:
    head = net.head(c)
    if head is None:
        return None
    return "ReceiveRedLetter" if isinstance(head, p.Marker) else "ReceiveApp"


def follow_node(
    trace: Trace,
    node: NodeSpec,
    *,
    cfg: ModelConfig | None = None,
    log_dir: Path | None = None,
) -> NodeRun:
    """Drive ``node`` through ``trace``'s schedule and its own completion, whatever it
    does (module docstring)."""
    cfg = cfg if cfg is not None else model_of(trace)
    app = cfg.app
    local: list[Local] = list(init_states(cfg)[0].local)
    topo = Topology(cfg.procs, cfg.chans)
    initial = {n: app.local_to_json(local[i]) for i, n in enumerate(cfg.procs)}
    steps: list[Step] = []
    observations: list[Observation] = []
    locals_after: list[tuple[Local, ...]] = []
    reports: dict[tuple[str, int], p.ReportOk] = {}
    stopped = ""
    scheduled = 0
    transport = open_transport(node, cfg.procs, log_dir)

    def perform(d: Driver, action: str, params: Mapping[str, object]) -> None:
        new_state = None
        if action == "SendApp":
            c = params["c"]
            assert isinstance(c, list | tuple)
            pi, qi = cfg.proc_index[str(c[0])], cfg.proc_index[str(c[1])]
            local[pi] = app.after_send(pi, qi, int(str(params["m"])), local[pi])
            new_state = app.local_to_json(local[pi])
        elif action == "InternalEvent":
            pi = cfg.proc_index[str(params["p"])]
            local[pi] = app.after_event(pi, int(str(params["e"])), local[pi])
            new_state = app.local_to_json(local[pi])
        elif action == "ReceiveApp":
            c = params["c"]
            assert isinstance(c, list | tuple)
            head = d.network.head((str(c[0]), str(c[1])))
            assert isinstance(head, p.AppMsg)
            pi, qi = cfg.proc_index[str(c[1])], cfg.proc_index[str(c[0])]
            local[pi] = app.after_receive(pi, qi, head.payload, local[pi])
            new_state = app.local_to_json(local[pi])
        observations.append(d.perform(action, params, new_state))
        steps.append(make_step(action, dict(params)))
        locals_after.append(tuple(local))

    def receivable(d: Driver, c: tuple[str, str]) -> str | None:
        action = _head_action(d.network, c)
        if action == "ReceiveApp":
            head = d.network.head(c)
            assert isinstance(head, p.AppMsg)
            pi, qi = cfg.proc_index[c[1]], cfg.proc_index[c[0]]
            if not app.can_receive(pi, qi, head.payload, local[pi]):
                return None
        return action

    try:
        with Driver(transport, topo, p.APP_NAMES[cfg.app_module], initial) as d:
            d.init()
            for n, (action, params) in enumerate(trace.steps, start=1):
                if action in ("ReceiveApp", "ReceiveRedLetter"):
                    c = params["c"]
                    assert isinstance(c, list | tuple)
                    ch = (str(c[0]), str(c[1]))
                    if receivable(d, ch) != action:
                        head = _head_action(d.network, ch)
                        stopped = (
                            f"the schedule's step {n} ({action} on {show_channel(ch)}) is not"
                            " possible in the node's run: the channel "
                            + ("is empty" if head is None else f"has {head} next")
                            + "; the node's run goes on with its own completion from there"
                        )
                        break
                perform(d, action, params)
                scheduled += 1
            while len(steps) - scheduled < _DRAIN_LIMIT:
                moved = False
                for c in cfg.chans:
                    receipt = receivable(d, c)
                    if receipt is not None:
                        perform(d, receipt, {"c": list(c), "i": 1})
                        moved = True
                if not moved:
                    break
            for k in cfg.snaps:
                for who in cfg.procs:
                    reports[(who, k)] = d.report(who, k)
    except NodeError as exc:
        stopped = f"the node stopped answering after step {len(steps)}: {exc.message}"
    return NodeRun(
        tuple(steps), tuple(observations), tuple(locals_after), scheduled, reports, stopped
    )


def _buf(net: Network, c: tuple[str, str]) -> tuple[int, ...]:
    out = []
    for m in net.queues.get(c, ()):
        if isinstance(m, p.AppMsg):
            out.append(m.payload)
        elif isinstance(m, p.Marker):
            out.append(-m.snapshot)
    return tuple(out)


def _act(cfg: ModelConfig, action: str, params: Mapping[str, object], got: int) -> Act | None:
    if action == "SendApp":
        c = params["c"]
        assert isinstance(c, list | tuple)
        return (ACT_SEND, cfg.proc_index[str(c[0])], cfg.proc_index[str(c[1])], got)
    if action == "ReceiveApp":
        c = params["c"]
        assert isinstance(c, list | tuple)
        return (ACT_RECEIVE, cfg.proc_index[str(c[1])], cfg.proc_index[str(c[0])], got)
    if action == "InternalEvent":
        pi = cfg.proc_index[str(params["p"])]
        return (ACT_INTERNAL, pi, pi, int(str(params["e"])))
    return None


def node_states(cfg: ModelConfig, run: NodeRun) -> tuple[State, ...]:
    """The node's run as states of the model (module docstring): ``states[0]`` the
    initial state, ``states[n]`` after step n."""
    first = init_states(cfg)[0]
    nk, nproc = len(cfg.snaps), len(cfg.procs)
    red = [0] * nk
    red_buf = [0] * nk
    rec_machine: list[list[Local | None]] = [[None] * nproc for _ in range(nk)]
    rec_buf: list[list[tuple[int, ...]]] = [[()] * len(cfg.chans) for _ in range(nk)]
    raw: list[State] = [first]
    for o, local in zip(run.observations, run.locals_after, strict=True):
        pi = cfg.proc_index[o.node]
        for r in o.recorded:
            k = cfg.snap_index.get(r.snapshot)
            if k is None:
                continue
            if isinstance(r, p.RecordState):
                red[k] |= 1 << pi
                if rec_machine[k][pi] is None:
                    # a value that is no state of the application stays unrecorded (the
                    # judge names it; TypeOK and the lemmas then break on it)
                    rec_machine[k][pi] = cfg.app.local_from_json(r.state)
            elif isinstance(r, p.RecordMessage) and r.channel in cfg.chan_index:
                c = cfg.chan_index[r.channel]
                rec_buf[k][c] = (*rec_buf[k][c], r.payload)
            elif isinstance(r, p.CloseChannel) and r.channel in cfg.chan_index:
                red_buf[k] |= 1 << cfg.chan_index[r.channel]
        raw.append(
            State(
                local,
                tuple(_buf(o.network, c) for c in cfg.chans),
                tuple(red),
                tuple(red_buf),
                tuple(tuple(x) for x in rec_machine),
                tuple(tuple(x) for x in rec_buf),
                (None,) * nk,
                (None,) * nk,
                ((),) * nk,
                ((),) * nk,
            )
        )
    # the history variables, as the spec defines them along a run
    s0: list[object] = [None] * nk
    sf: list[object] = [None] * nk
    white: list[tuple[Act, ...]] = [()] * nk
    reds: list[tuple[Act, ...]] = [()] * nk
    out = [raw[0]]
    for n, (action, params) in enumerate(run.steps):
        before, after = raw[n], raw[n + 1]
        got = 0
        if action == "SendApp":
            got = int(str(params["m"]))
        elif action == "ReceiveApp":
            delivered = run.observations[n].delivered
            got = delivered.payload if isinstance(delivered, p.AppMsg) else 0
        act = _act(cfg, action, params, got)
        for k in range(nk):
            if s0[k] is None and after.red[k]:
                s0[k] = app_state(before)
            # an action from the step the first node turns red up to the step the last
            # channel closes, by the colour of its node before the step
            if act is not None and s0[k] is not None and sf[k] is None:
                if before.red[k] >> act[1] & 1:
                    reds[k] = (*reds[k], act)
                else:
                    white[k] = (*white[k], act)
            if sf[k] is None and s0[k] is not None and after.red_buf[k] == cfg.all_chans:
                sf[k] = app_state(after)
        out.append(
            State(
                after.local,
                after.buf,
                after.red,
                after.red_buf,
                after.rec_machine,
                after.rec_buf,
                tuple(s0),  # type: ignore[arg-type]
                tuple(sf),  # type: ignore[arg-type]
                tuple(white),
                tuple(reds),
            )
        )
    return tuple(out)


def show_reports(cfg: ModelConfig, run: NodeRun) -> Sequence[str]:
    """What each node reported per snapshot, one line each (for a page's notes)."""
    out = []
    for (n, k), r in sorted(run.reports.items(), key=lambda x: (x[0][1], x[0][0])):
        chans = ", ".join(
            f"{src}→{n}: [{', '.join(map(str, v))}]" for src, v in sorted(r.channels.items())
        )
        out.append(f"snapshot {k} at {n}: {r.local_state}" + (f"; {chans}" if chans else ""))
    del cfg
    return out
