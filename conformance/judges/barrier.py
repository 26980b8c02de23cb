r"""The barrier judge: drive dataflow nodes along a schedule of BarrierSnapshot.tla and
judge every step online against the model (Flink's asynchronous barrier snapshots,
seeds/002).

The judge keeps one model state, a :class:`~redletter.python_model.barrier.BarrierState`
**led by the node**: every step is the spec's action taken from that state, and
where the spec leaves the outcome to the node's own rules -- which inputs it blocks
(``Blocked``), which records it stores with a checkpoint (``Overtaken``, ``Logging``),
what it restores (``Restore``) -- the state follows what the node did.  A node that
departs from the spec there is noted (the first departure is the verdict if nothing
worse follows), and the judge keeps going, checking the model's invariants
(ExactlyOnceAfterRestore, ConsistentCut, Lemma 0 and 1 ...) on the state the node's
choices led to: a node that skips alignment is shown applying a record twice after a
restore, exactly as TLC's counterexample of MCBarrierAtLeastOnceFailure does.
Everything else a node must do exactly (the barriers it forwards, the state it
records, the channels it closes, its completions); a difference there is a
divergence at once.

A step of the trace that is not enabled in the node-led state (a delivery from an
input the node blocks, a restore of a checkpoint that did not complete) is skipped,
and the verdict's text says how many were; so any subsequence of a trace is a valid
schedule.  After the schedule (``drain``) the harness gives every node an idle turn,
then delivers, reads and injects until nothing is left (the spec's fairness, the
failure excepted): a checkpoint still incomplete, or input not drained, is a
liveness failure (CheckpointsComplete, EventuallyDrained).
"""

from __future__ import annotations

import dataclasses
import random
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from redletter.conformance import protocol as p
from redletter.conformance.driver import Transport, call
from redletter.conformance.judges.drive import (
    JudgeResult,
    NodeSpec,
    after_last_reply,
    open_transport,
)
from redletter.conformance.net import Network, Observation, Topology, show_channel, show_msg
from redletter.conformance.process import NodeError, NodeTimeout
from redletter.conformance.traces import Step, Trace, load_carried, make_step
from redletter.conformance.verdict import Divergence, Verdict
from redletter.errors import InputError
from redletter.python_model import barrier as bm
from redletter.python_model.barrier import (
    ACTION_NAMES,
    EMIT,
    INJECT_BARRIER,
    PROCESS,
    RECEIVE_BARRIER,
    RESTORE,
    Bag,
    BarrierConfig,
    BarrierEngine,
    BarrierState,
    Msg,
    load_barrier,
)

__all__ = ["DataflowTopology", "generate", "judge_trace", "load_trace_model"]

_LIMIT: Final = 10_000  #: most steps a drain takes


@dataclass(frozen=True)
class DataflowTopology(Topology):
    """A dataflow's machines and buffers: not strongly connected (BarrierSnapshot's
    Dataflow.tla checks its own assumptions when the model is loaded)."""

    def __post_init__(self) -> None:
        if len(set(self.nodes)) != len(self.nodes):
            raise InputError("bad topology: a node is listed twice", code="RL-INPUT-TOPOLOGY")


# --------------------------------------------------------------------------- models


def load_trace_model(trace: Trace) -> BarrierConfig:
    """The BarrierSnapshot model a trace carries (loaded from its texts)."""
    return load_carried(
        trace.model, trace.model_tla, trace.model_cfg, load_barrier, what="a barrier model"
    )


def _spec_cfg(cfg: BarrierConfig) -> BarrierConfig:
    """The model with the spec's own Blocked, Overtaken and Logging: what a node is
    judged against, whatever the model's overrides."""
    return dataclasses.replace(cfg, blocking=True, store_overtaken=True, logging=True)


# --------------------------------------------------------------------------- traces


def _step_of(engine: BarrierEngine, action: int, raw: tuple[int, ...]) -> Step:
    return make_step(ACTION_NAMES[action], engine.params(action, raw))


def _shortest_violation(engine: BarrierEngine, limit: int = 300_000) -> list[Step] | None:
    """Breadth-first, the shortest path to a state violating one of the model's
    invariants (the counterexample TLC prints), or None."""
    init = engine.init_states()[0]
    parent: dict[BarrierState, tuple[BarrierState, Step] | None] = {init: None}
    todo = deque([init])
    while todo and len(parent) < limit:
        s = todo.popleft()
        if engine.violated_invariant(s) is not None:
            out: list[Step] = []
            link = parent[s]
            while link is not None:
                out.append(link[1])
                link = parent[link[0]]
            return out[::-1]
        for a, raw, t in engine.successors(s):
            if t not in parent:
                parent[t] = (s, _step_of(engine, a, raw))
                todo.append(t)
    return None


def generate(
    model: str, spec_dir: Path, *, walks: int = 8, seed: int = 0, length: int = 40
) -> list[Trace]:
    """Schedules for a BarrierSnapshot model: for a must-fail model (one overriding
    Blocked, Overtaken or Logging) first the shortest counterexample, as TLC finds it;
    then ``walks`` random walks of the model (seeds ``seed``, ``seed + 1``, ...; every
    odd one restores a completed checkpoint as soon as it may, half the time)."""
    cfg = load_barrier(model, spec_dir)
    engine = BarrierEngine(cfg)
    tla = (spec_dir / f"{model}.tla").read_text(encoding="utf-8")
    cfg_text = (spec_dir / f"{model}.cfg").read_text(encoding="utf-8")
    out: list[Trace] = []
    if not (cfg.blocking and cfg.store_overtaken and cfg.logging):
        cex = _shortest_violation(engine)
        if cex is not None:
            out.append(
                Trace(
                    f"{model}-counterexample",
                    model,
                    "shortest counterexample",
                    tuple(cex),
                    tla,
                    cfg_text,
                )
            )
    for w in range(walks):
        rng = random.Random(seed + w)
        s = engine.init_states()[0]
        steps: list[Step] = []
        for _ in range(length):
            succ = list(engine.successors(s))
            if not succ:
                break
            restores = [x for x in succ if x[0] == RESTORE]
            if w % 2 == 1 and restores and rng.random() < 0.5:
                a, raw, s = rng.choice(restores)
            else:
                a, raw, s = rng.choice(succ)
            steps.append(_step_of(engine, a, raw))
        out.append(
            Trace(
                f"{model}-walk-{seed + w:04d}",
                model,
                f"random-walk seed {seed + w}",
                tuple(steps),
                tla,
                cfg_text,
            )
        )
    return out


# --------------------------------------------------------------------------- values


class _Codec:
    """Model values <-> protocol values for one model."""

    def __init__(self, cfg: BarrierConfig) -> None:
        self.cfg = cfg
        self.src_names = tuple(cfg.procs[s] for s in cfg.sources)
        self.src_index = {n: i for i, n in enumerate(self.src_names)}

    def record(self, m: Msg) -> p.StreamRecord:
        return p.StreamRecord(self.src_names[m[0]], m[1], m[2])

    def wire(self, m: Msg) -> p.WireMsg:
        return p.Barrier(m[1]) if m[0] < 0 else self.record(m)

    def msg(self, r: p.StreamRecord) -> Msg | None:
        si = self.src_index.get(r.source)
        return None if si is None else (si, r.index, r.round)

    def bag(self, bag: Bag | None) -> p.JsonValue:
        if bag is None:
            return None
        return [[self.src_names[e[0]], e[1], e[2]] for e, n in bag for _ in range(n)]

    def parse_bag(self, v: p.JsonValue) -> Bag | None:
        if not isinstance(v, list):
            return None
        d: dict[Msg, int] = {}
        for x in v:
            if not (isinstance(x, list) and len(x) == 3 and x[0] in self.src_index):
                return None
            if type(x[1]) is not int or type(x[2]) is not int:
                return None
            e = (self.src_index[str(x[0])], x[1], x[2])
            d[e] = d.get(e, 0) + 1
        return tuple(sorted(d.items()))

    def local(self, s: BarrierState, node: int) -> p.JsonValue:
        if node in self.cfg.source_of:
            return s.pos[self.cfg.source_of[node]]
        return self.bag(s.state[self.cfg.op_of[node]])

    def recorded(self, s: BarrierState, n: int, node: int) -> p.JsonValue:
        if node in self.cfg.source_of:
            return s.rec_pos[n][self.cfg.source_of[node]]
        return self.bag(s.rec_state[n][self.cfg.op_of[node]])

    def show(self, m: Msg) -> str:
        return show_msg(self.wire(m))


# --------------------------------------------------------------------------- the run


@dataclass(frozen=True)
class _Departure:
    """Where the node left the spec in a way the judge can follow."""

    divergence: Divergence


class _Run:
    def __init__(self, trace: Trace, cfg: BarrierConfig, transport: Transport) -> None:
        self.trace = trace
        self.cfg = _spec_cfg(cfg)
        self.invariants = BarrierEngine(cfg).invariants
        self.codec = _Codec(self.cfg)
        self.t = transport
        self.s = bm.init_state(self.cfg)
        self.blocked: dict[str, frozenset[p.Channel]] = {n: frozenset() for n in self.cfg.procs}
        self.departures: list[Divergence] = []
        self.observations: list[Observation] = []
        self.executed: list[Step] = []
        self.skipped: list[str] = []
        self.msg_id = 1
        self.topology = DataflowTopology(self.cfg.procs, self.cfg.chans)
        self.on_step: Callable[[Observation], None] | None = None

    # -- plumbing ---------------------------------------------------------------

    def next_id(self) -> int:
        self.msg_id += 1
        return self.msg_id

    def network(self) -> Network:
        return Network(
            self.topology,
            {
                c: tuple(self.codec.wire(m) for m in self.s.buf[ci])
                for ci, c in enumerate(self.cfg.chans)
            },
        )

    def init(self) -> None:
        cfg = self.cfg
        for i, n in enumerate(cfg.procs):
            ins = tuple(c for c in cfg.chans if c[1] == n)
            body = p.Init(
                self.next_id(),
                n,
                cfg.procs,
                ins,
                tuple(c for c in cfg.chans if c[0] == n),
                "keyed-count",
                self.codec.local(self.s, i),
                "barrier",
                role="source" if i in cfg.source_of else "operator",
                back_edges=tuple(c for c in ins if cfg.back >> cfg.chan_index[c] & 1),
                mode="unaligned" if cfg.unaligned else "aligned",
            )
            call(self.t, n, body, p.InitOk)

    def div(self, kind: str, node: str, summary: str, model: str, did: str, why: str) -> Divergence:
        return Divergence(kind, node, summary, model, did, why, step=len(self.executed))

    # -- enabledness in the node-led state ----------------------------------------

    def enabled(
        self, action: str, params: Mapping[str, object]
    ) -> tuple[int, tuple[int, ...]] | None:
        cfg, s = self.cfg, self.s
        try:
            if action == "Emit":
                i = cfg.source_of[cfg.proc_index[str(params["s"])]]
                return (EMIT, (i,)) if s.pos[i] < len(cfg.inputs[i]) else None
            if action in ("Process", "ReceiveBarrier"):
                c = params["c"]
                assert isinstance(c, Sequence)
                ci = cfg.chan_index[(str(c[0]), str(c[1]))]
                if cfg.chans[ci] in self.blocked[cfg.chans[ci][1]]:
                    return None
                if action == "Process":
                    b = s.buf[ci]
                    return (PROCESS, (ci,)) if b and b[0][0] >= 0 else None
                pos = bm.barrier_positions(cfg, s, ci)
                return (RECEIVE_BARRIER, (ci, pos[0])) if pos else None
            if action == "InjectBarrier":
                src = cfg.proc_index[str(params["s"])]
                n = cfg.ckpt_index[int(str(params["n"]))]
                ok = bm._inject_enabled(s, src, n)
                return (INJECT_BARRIER, (cfg.source_of[src], n)) if ok else None
            if action == "Restore":
                n = cfg.ckpt_index[int(str(params["n"]))]
                return (RESTORE, (n,)) if s.restored == 0 and s.sf[n] is not None else None
        except (KeyError, ValueError, AssertionError):
            raise InputError(
                f"trace {self.trace.name}: {action} {dict(params)} is not a step of"
                f" {self.cfg.name}",
                code="RL-INPUT-SCHEDULE",
            ) from None
        raise InputError(
            f"trace {self.trace.name}: {action} is not an action of BarrierSnapshot",
            code="RL-INPUT-SCHEDULE",
        )

    def drain_next(self) -> tuple[int, tuple[int, ...]] | None:
        """The first step the spec's fairness still owes (Restore excepted)."""
        cfg = self.cfg
        for c in cfg.chans:
            for action in ("Process", "ReceiveBarrier"):
                got = self.enabled(action, {"c": list(c)})
                if got is not None:
                    return got
        for src in cfg.sources:
            for n in cfg.ckpts:
                got = self.enabled("InjectBarrier", {"s": cfg.procs[src], "n": n})
                if got is not None:
                    return got
            got = self.enabled("Emit", {"s": cfg.procs[src]})
            if got is not None:
                return got
        return None

    # -- one step ---------------------------------------------------------------

    def perform(self, action: int, raw: tuple[int, ...]) -> Divergence | None:
        cfg, s = self.cfg, self.s
        engine_params = BarrierEngine(cfg).params(action, raw)
        self.executed.append(make_step(ACTION_NAMES[action], engine_params))
        if action == RESTORE:
            return self.restore(raw[0])
        if action == EMIT:
            i = raw[0]
            node = cfg.sources[i]
            t = bm._emit(cfg, s, i)
            m: Msg = (i, s.pos[i] + 1, 0)
            o = bm.outputs(cfg, node, m)[0]
            body: p.Request = p.Emit(
                self.next_id(), self.codec.record(m), cfg.procs[cfg.chan_dst[o[0]]], t.pos[i]
            )
            base = s.buf
            delivered: p.WireMsg | None = None
        elif action == PROCESS:
            ci = raw[0]
            node = cfg.chan_dst[ci]
            t = bm._process(cfg, s, ci)
            m = s.buf[ci][0]
            delivered = self.codec.record(m)
            body = p.Deliver(
                self.next_id(),
                cfg.chans[ci][0],
                delivered,
                self.codec.local(t, node),
                outputs=tuple(
                    p.Sent(cfg.chans[c], self.codec.record(x)) for c, x in bm.outputs(cfg, node, m)
                ),
            )
            base = (*s.buf[:ci], s.buf[ci][1:], *s.buf[ci + 1 :])
        elif action == INJECT_BARRIER:
            i, n = raw
            node = cfg.sources[i]
            t = bm._inject_barrier(cfg, s, node, n)
            body = p.InjectBarrier(self.next_id(), cfg.ckpts[n])
            base = s.buf
            delivered = None
        else:
            ci, at = raw
            node = cfg.chan_dst[ci]
            t = bm._receive_barrier(cfg, s, ci, at)
            ahead = s.buf[ci][: at - 1]
            delivered = self.codec.wire(s.buf[ci][at - 1])
            body = p.Deliver(
                self.next_id(),
                cfg.chans[ci][0],
                delivered,
                overtaken=tuple(self.codec.record(x) for x in ahead) or None,
            )
            b = s.buf[ci]
            base = (*s.buf[:ci], (*b[: at - 1], *b[at:]), *s.buf[ci + 1 :])
        name = cfg.procs[node]
        reply = call(self.t, name, body, p.StepReply)
        obs = Observation(
            len(self.executed),
            ACTION_NAMES[action],
            engine_params,
            name,
            delivered,
            getattr(body, "new_state", None),
            reply.sent,
            reply.recorded,
            reply.completed,
            self.network(),
        )
        div = self.compare(obs, reply, s, t, base, node)
        self.observations.append(
            dataclasses.replace(obs, network=self.network()) if div is None else obs
        )
        if self.on_step is not None:
            self.on_step(self.observations[-1])
        return div

    def what(self, obs: Observation) -> str:
        return obs.describe().split(":", 1)[0].split(" ", 1)[1]

    def compare(
        self,
        obs: Observation,
        reply: p.StepReply,
        s: BarrierState,
        t: BarrierState,
        base: tuple[tuple[Msg, ...], ...],
        node: int,
    ) -> Divergence | None:
        cfg, codec, name, what = self.cfg, self.codec, cfg_name(self.cfg, node), self.what(obs)
        # --- what goes on the wire: exactly the spec's
        got: dict[p.Channel, list[p.WireMsg]] = {}
        for x in reply.sent:
            got.setdefault(x.channel, []).append(x.msg)
        for ch in [*cfg.chans, *sorted(set(got) - set(cfg.chans))]:
            ci = cfg.chan_index.get(ch)
            want = [codec.wire(m) for m in t.buf[ci][len(base[ci]) :]] if ci is not None else []
            have = got.get(ch, [])
            if want != have:
                shown_w = ", ".join(map(show_msg, want)) or "nothing"
                shown_h = ", ".join(map(show_msg, have)) or "nothing"
                barrier = any(isinstance(x, p.Barrier) for x in [*want, *have])
                why = (
                    f"a machine that snapshots a checkpoint sends its barrier on every output "
                    f"at once and never another (Broadcast); without it {ch[1]} never aligns "
                    "and the checkpoint never completes (CheckpointsComplete), and a barrier "
                    "out of place puts records on the wrong side of the cut (ConsistentCut)"
                    if barrier
                    else "the harness computes the keyed count and the node must send exactly "
                    "the records it is told to (Emit, Process: Outputs(p, m)); the run no "
                    "longer follows the schedule"
                )
                return self.div(
                    "wrong-barrier" if barrier else "wrong-records",
                    name,
                    f"{what} sends the wrong messages on {show_channel(ch)}",
                    f"{ch[0]} puts {shown_w} on {show_channel(ch)}",
                    f"put {shown_h} on {show_channel(ch)}",
                    why,
                )
        # --- recorded states and closed channels: exactly the spec's
        states: dict[int, list[p.JsonValue]] = {}
        closes: list[tuple[int, p.Channel]] = []
        stores: dict[tuple[int, int], list[Msg]] = {}
        inputs = {c for c in cfg.chans if c[1] == name}
        for r in reply.recorded:
            if r.snapshot not in cfg.ckpt_index:
                return self.div(
                    "unknown-checkpoint",
                    name,
                    f"{what}: {name} recorded for checkpoint {r.snapshot}, which does not exist",
                    "the run's checkpoints are " + ", ".join(map(str, cfg.ckpts)),
                    f"recorded for checkpoint {r.snapshot}",
                    "a node records only for checkpoints whose barrier it injected or received",
                )
            if isinstance(r, p.RecordState):
                states.setdefault(r.snapshot, []).append(r.state)
            elif isinstance(r, p.CloseChannel | p.StoreRecord) and r.channel not in inputs:
                return self.div(
                    "unknown-channel",
                    name,
                    f"{what}: {name} recorded for {show_channel(r.channel)}, not one of its inputs",
                    f"{name} records only its input channels",
                    f"recorded for {show_channel(r.channel)}",
                    "a checkpoint stores records in flight on the buffers into a machine only",
                )
            elif isinstance(r, p.CloseChannel):
                closes.append((r.snapshot, r.channel))
            elif isinstance(r, p.StoreRecord):
                m = codec.msg(r.record)
                if m is None:
                    return self.div(
                        "unknown-record",
                        name,
                        f"{what}: {name} stored a record of {r.record.source}, which is no source",
                        "records come from the sources " + ", ".join(codec.src_names),
                        f"stored {show_msg(r.record)}",
                        "a checkpoint stores records that were in flight, nothing else",
                    )
                key = (cfg.ckpt_index[r.snapshot], cfg.chan_index[r.channel])
                stores.setdefault(key, []).append(m)
            else:
                return self.div(
                    "foreign-event",
                    name,
                    f"{what}: {name} recorded a Chandy-Lamport app message",
                    "a dataflow node records states, closes inputs and stores records",
                    "recorded an app message",
                    "record_message belongs to the chandy-lamport algorithm (docs/protocol.md)",
                )
        for n, k in enumerate(cfg.ckpts):
            snaps = not s.snapped[n] >> node & 1 and t.snapped[n] >> node & 1
            want_state = codec.recorded(t, n, node) if snaps else None
            have_s = states.get(k, [])
            if snaps and have_s != [want_state]:
                role = "position" if node in cfg.source_of else "state"
                return self.div(
                    "missing-record-state" if not have_s else "wrong-record-state",
                    name,
                    f"{what}: {name} snapshots checkpoint {k} but recorded "
                    + (f"the {role} " + ", ".join(map(str, have_s)) if have_s else f"no {role}"),
                    f"{name} records its {role} {want_state} (RecordsState)",
                    "recorded " + (", ".join(map(str, have_s)) or "nothing"),
                    f"the checkpoint must hold {name}'s {role} at the moment it snapshots; "
                    "another one is not the cut the barriers draw (ConsistentCut, Lemma 0)",
                )
            if not snaps and have_s:
                return self.div(
                    "extra-record-state",
                    name,
                    f"{what}: {name} recorded a state for checkpoint {k} when the model does not",
                    f"{name} does not snapshot checkpoint {k} in this step"
                    + (
                        " (an aligned operator snapshots once the barrier came on every"
                        " forward input)"
                        if node in cfg.op_of and not cfg.unaligned
                        else ""
                    ),
                    f"recorded {have_s[0]}",
                    "a machine snapshots once per checkpoint, when its barriers are aligned "
                    "(Aligned); a state recorded at another moment is not on the cut the "
                    "barriers draw (ConsistentCut)",
                )
            for ci, c in enumerate(cfg.chans):
                opened = t.barrier_in[n] >> ci & 1 and not s.barrier_in[n] >> ci & 1
                if bool(opened) != ((k, c) in closes):
                    return self.div(
                        "missing-close" if opened else "extra-close",
                        name,
                        f"{what}: {name} "
                        + ("did not close" if opened else "closed")
                        + f" {show_channel(c)} for checkpoint {k}",
                        f"barrier {k} "
                        + ("arrives" if opened else "does not arrive")
                        + f" on {show_channel(c)} (barrierIn)",
                        "did not close it" if opened else "closed it",
                        "an input is closed for a checkpoint when, and only when, its barrier "
                        "arrives: it ends what is stored for it (Logging) and aligns the "
                        "operator (Aligned)",
                    )
        # --- completions
        ins = sum(1 << cfg.chan_index[c] for c in inputs)
        want_done = {
            k
            for n, k in enumerate(cfg.ckpts)
            if t.snapped[n] >> node & 1
            and t.barrier_in[n] & ins == ins
            and not (s.snapped[n] >> node & 1 and s.barrier_in[n] & ins == ins)
        }
        if sorted(reply.completed) != sorted(want_done):
            return self.div(
                "wrong-complete",
                name,
                f"{what}: {name} declared "
                + (", ".join(map(str, reply.completed)) or "nothing")
                + " complete",
                f"{name} completes "
                + (", ".join(map(str, sorted(want_done))) or "nothing")
                + " (snapshotted, and the barrier arrived on every input)",
                "completed " + (", ".join(map(str, reply.completed)) or "nothing"),
                "a machine's part of a checkpoint is complete when it snapshotted and every "
                "input has its barrier; the checkpoint completes when every part has "
                "(CheckpointsComplete)",
            )
        # --- stored records: the node's choice, followed
        rec_chan = list(s.rec_chan)
        for n in range(len(cfg.ckpts)):
            row = list(s.rec_chan[n])
            for ci in range(len(cfg.chans)):
                want_new = t.rec_chan[n][ci][len(s.rec_chan[n][ci]) :]
                have_new = tuple(stores.get((n, ci), ()))
                row[ci] = (*s.rec_chan[n][ci], *have_new)
                if want_new != have_new:
                    self.departure_store(n, ci, want_new, have_new, obs)
            rec_chan[n] = tuple(row)
        t = t.with_(rec_chan=tuple(rec_chan))
        # --- blocked inputs: the node's choice, followed
        self.s = t
        return self.check_blocked(obs, node, reply.blocked)

    def departure_store(
        self, n: int, ci: int, want: tuple[Msg, ...], have: tuple[Msg, ...], obs: Observation
    ) -> None:
        cfg, codec = self.cfg, self.codec
        k, c = cfg.ckpts[n], cfg.chans[ci]
        shown_w = ", ".join(map(codec.show, want)) or "nothing"
        shown_h = ", ".join(map(codec.show, have)) or "nothing"
        back = cfg.back >> ci & 1
        if obs.action == "ReceiveBarrier" and len(have) < len(want):
            kind, why = (
                "overtaken-not-stored",
                f"the barrier overtook {shown_w}, which were sent before the cut and not yet "
                f"processed by {c[1]}: unless they are stored with checkpoint {k} (Overtakes, "
                f"Overtaken(ahead)) a restore of {k} loses them (ExactlyOnceAfterRestore; "
                "TLC's counterexample of MCBarrierUnalignedLostFailure)",
            )
        elif obs.action == "Process" and len(have) < len(want):
            kind, why = (
                "not-logged",
                f"{c[1]} has snapshotted checkpoint {k} and the barrier of {show_channel(c)} "
                f"has not arrived, so the record is in flight across the cut and must be "
                f"stored with the checkpoint (RecordingRule2, Logging"
                + ("; the back edge's log" if back else "")
                + f"): a restore of {k} loses it otherwise (ExactlyOnceAfterRestore"
                + ("; TLC's counterexample of MCBarrierCyclicNoLogFailure)" if back else ")"),
            )
        else:
            kind, why = (
                "wrong-store",
                "a checkpoint stores exactly the records in flight across its cut; any other "
                "is applied again, or invented, after a restore (ConsistentCut, "
                "ExactlyOnceAfterRestore)",
            )
        self.departures.append(
            self.div(
                kind,
                obs.node,
                f"{self.what(obs)}: {obs.node} stored {shown_h} with checkpoint {k} for "
                f"{show_channel(c)}, the model {shown_w}",
                f"stores {shown_w}",
                f"stored {shown_h}",
                why,
            )
        )

    def check_blocked(
        self, obs: Observation, node: int, blocked: tuple[p.Channel, ...] | None
    ) -> Divergence | None:
        cfg, name = self.cfg, cfg_name(self.cfg, node)
        inputs = [c for c in cfg.chans if c[1] == name]
        have = frozenset(blocked or ())
        stray = sorted(have - set(inputs))
        if stray:
            return self.div(
                "unknown-channel",
                name,
                f"{self.what(obs)}: {name} blocks {show_channel(stray[0])}, not one of its inputs",
                f"{name} blocks only its own inputs",
                f"blocked {show_channel(stray[0])}",
                "an operator blocks its input channels, nothing else (Blocked)",
            )
        want = frozenset(c for c in inputs if bm.blocked(cfg, self.s, cfg.chan_index[c]))
        self.blocked[name] = have
        if want == have:
            return None
        missing, extra = sorted(want - have), sorted(have - want)
        if missing:
            c = missing[0]
            n = next(
                k
                for i, k in enumerate(cfg.ckpts)
                if self.s.barrier_in[i] >> cfg.chan_index[c] & 1
                and not self.s.snapped[i] >> node & 1
            )
            self.departures.append(
                self.div(
                    "not-blocked",
                    name,
                    f"{self.what(obs)}: barrier {n} has arrived on {show_channel(c)} but {name} "
                    "does not block that input",
                    f"{show_channel(c)} is blocked until {name} has barrier {n} on every input "
                    '(Blocked: "trigger (block | input)")',
                    "blocks " + (", ".join(map(show_channel, sorted(have))) or "nothing"),
                    f"a record processed from {show_channel(c)} after its barrier and before "
                    f"{name} snapshots {n} was sent after the cut of checkpoint {n}"
                    f" but enters {n}'s state; restoring {n} replays it from its source, so it "
                    "is applied twice (ExactlyOnceAfterRestore; TLC's counterexample of "
                    "MCBarrierAtLeastOnceFailure)",
                )
            )
        else:
            c = extra[0]
            self.departures.append(
                self.div(
                    "extra-blocked",
                    name,
                    f"{self.what(obs)}: {name} blocks {show_channel(c)}, which the model does not",
                    f"{show_channel(c)} is not blocked (Blocked)",
                    "blocks " + ", ".join(map(show_channel, sorted(have))),
                    "a blocked input delivers nothing: the operator may never align and the "
                    "checkpoint never complete (CheckpointsComplete)",
                )
            )
        return None

    def restore(self, n: int) -> Divergence | None:
        cfg, codec, s = self.cfg, self.codec, self.s
        t = bm._restore(cfg, s, n)
        k = cfg.ckpts[n]
        pos, state, buf = list(t.pos), list(t.state), list(t.buf)
        for node, name in enumerate(cfg.procs):
            reply = call(self.t, name, p.Restore(self.next_id(), k), p.RestoreOk)
            obs = Observation(
                len(self.executed),
                "Restore",
                {"n": k},
                name,
                None,
                reply.state,
                reply.sent,
                reply.recorded,
                reply.completed,
                self.network(),
            )
            self.observations.append(obs)
            if self.on_step is not None:
                self.on_step(obs)
            if reply.sent or reply.recorded or reply.completed or reply.blocked:
                return self.div(
                    "restore-effects",
                    name,
                    f"Restore {k}: {name} sent, recorded, completed or blocked something",
                    "a restore only resets the node (Restore)",
                    obs.describe(),
                    "the job restarts from the checkpoint: no message, no recording, no block",
                )
            want = codec.recorded(s, n, node)
            if reply.state != want:
                role = "position" if node in cfg.source_of else "state"
                new = (
                    reply.state
                    if node in cfg.source_of
                    and type(reply.state) is int
                    and 0 <= reply.state <= len(cfg.inputs[cfg.source_of[node]])
                    else codec.parse_bag(reply.state)
                    if node in cfg.op_of
                    else None
                )
                if new is None:
                    return self.div(
                        "restore-state",
                        name,
                        f"Restore {k}: {name} restored the {role} {reply.state}",
                        f"{name} restores the {role} {want} it recorded for {k}",
                        f"restored {reply.state}",
                        "what a node restores must be a " + role,
                    )
                if node in cfg.source_of:
                    assert isinstance(new, int)
                    pos[cfg.source_of[node]] = new
                else:
                    assert isinstance(new, tuple)
                    state[cfg.op_of[node]] = new
                self.departures.append(
                    self.div(
                        "restore-state",
                        name,
                        f"Restore {k}: {name} restored the {role} {reply.state}, not the one "
                        f"it recorded",
                        f"{name} restores its recorded {role} {want} (Restore)",
                        f"restored {reply.state}",
                        "the job restarts from the checkpoint and the sources replay from their "
                        "recorded positions: a source that does not rewind loses records, an "
                        "operator that keeps its state applies them twice "
                        "(ExactlyOnceAfterRestore)",
                    )
                )
            for ci, c in enumerate(cfg.chans):
                if c[1] != name:
                    continue
                have = tuple(codec.msg(r) for r in reply.requeued.get(c[0], ()))
                if any(x is None for x in have):
                    return self.div(
                        "unknown-record",
                        name,
                        f"Restore {k}: {name} requeued a record of no source",
                        "records come from the sources",
                        "requeued " + ", ".join(map(show_msg, reply.requeued.get(c[0], ()))),
                        "a restore puts back what the checkpoint stored, nothing else",
                    )
                have_m = tuple(x for x in have if x is not None)
                if have_m != t.buf[ci]:
                    buf[ci] = have_m
                    self.departures.append(
                        self.div(
                            "restore-channel",
                            name,
                            f"Restore {k}: {name} put back "
                            + (", ".join(map(codec.show, have_m)) or "nothing")
                            + f" on {show_channel(c)}",
                            f"puts back what checkpoint {k} stored: "
                            + (", ".join(map(codec.show, t.buf[ci])) or "nothing"),
                            "put back " + (", ".join(map(codec.show, have_m)) or "nothing"),
                            "the records stored with a checkpoint were in flight across its cut; "
                            "a restore that does not put them back loses them "
                            "(ExactlyOnceAfterRestore)",
                        )
                    )
            self.blocked[name] = frozenset()
        self.s = t.with_(pos=tuple(pos), state=tuple(state), buf=tuple(buf))
        return None

    # -- the properties on the node-led state -----------------------------------

    def check_properties(self) -> Divergence | None:
        cfg, s = self.cfg, self.s
        for inv in self.invariants:
            if inv == "TypeOK" or bm.INVARIANTS[inv](cfg, s):
                continue
            return self.property_divergence(inv)
        return None

    def property_divergence(self, inv: str) -> Divergence:
        cfg, s, codec = self.cfg, self.s, self.codec
        cause = self.departures[0] if self.departures else None
        node = cause.node if cause is not None else "?"
        because = (
            f"; it follows from step {cause.step}, where {cause.summary}"
            if cause is not None
            else ""
        )
        detail = ""
        if inv == "ExactlyOnceAfterRestore":
            for j, bag in enumerate(s.state):
                for e, copies in bag:
                    if copies > 1:
                        detail = (
                            f"after the restore of checkpoint {s.restored}, operator "
                            f"{cfg.procs[cfg.ops[j]]} has applied {codec.show(e)} {copies} times"
                            " (NoEffectTwice)"
                        )
                        break
                if detail:
                    break
            if not detail:
                for path in cfg.paths.values():
                    for c, m in path:
                        j = cfg.op_of[cfg.chan_dst[c]]
                        if bm._copies(s.state[j], m) != 1:
                            detail = (
                                f"after the restore of checkpoint {s.restored} the input is "
                                f"drained and operator {cfg.procs[cfg.ops[j]]} never applied "
                                f"{codec.show(m)}: it is lost (EveryEffectOnceDrained)"
                            )
                            break
                    if detail:
                        break
        elif inv == "ConsistentCut":
            detail = (
                "a completed checkpoint's recorded states and stored records do not account for "
                "every record sent across its cut exactly once"
            )
        else:
            detail = f"the state the node's choices led to violates {inv}"
        return self.div(
            _kebab(inv),
            node,
            f"the run violates {inv}: {detail}{because}",
            f"{inv} holds in every reachable state of the spec",
            cause.node_did if cause is not None else "see the steps above",
            (cause.why if cause is not None else f"{inv} is a property of BarrierSnapshot.tla"),
        )


def cfg_name(cfg: BarrierConfig, node: int) -> str:
    return cfg.procs[node]


def _kebab(name: str) -> str:
    out = "".join("-" + ch.lower() if ch.isupper() else ch for ch in name).lstrip("-")
    return out.replace("lemma0", "lemma-0").replace("lemma1", "lemma-1")


# --------------------------------------------------------------------------- reports


def _compare_report(run: _Run, n: int, node: int, rep: p.CheckpointReportOk) -> Divergence | None:
    cfg, s, codec = run.cfg, run.s, run.codec
    name, k = cfg.procs[node], cfg.ckpts[n]

    def div(kind: str, summary: str, model: str, did: str, why: str) -> Divergence:
        return Divergence(kind, name, summary, model, did, why)

    want = codec.recorded(s, n, node)
    if rep.state != want:
        return div(
            "report-state",
            f"node {name} reports the state {rep.state} for checkpoint {k}, the model {want}",
            f"checkpoint {k} holds {want} for {name} (recPos/recState)",
            f"reported {rep.state}",
            "the report must give what the node recorded when it snapshotted; a restore would "
            "otherwise start from another cut (ExactlyOnceAfterRestore)",
        )
    for ci, c in enumerate(cfg.chans):
        if c[1] != name:
            continue
        have = tuple(codec.msg(r) for r in rep.channels.get(c[0], ()))
        if have != s.rec_chan[n][ci]:
            shown = ", ".join(map(show_msg, rep.channels.get(c[0], ())))
            return div(
                "report-channel",
                f"node {name} reports {shown or 'nothing'} stored for {show_channel(c)} in "
                f"checkpoint {k}",
                "stored "
                + (", ".join(map(codec.show, s.rec_chan[n][ci])) or "nothing")
                + " (recChan)",
                "reported otherwise",
                "the stored records are what a restore puts back (ExactlyOnceAfterRestore)",
            )
    ins = sum(1 << cfg.chan_index[c] for c in cfg.chans if c[1] == name)
    complete = bool(s.snapped[n] >> node & 1) and s.barrier_in[n] & ins == ins
    if rep.complete != complete:
        return div(
            "report-complete",
            f"node {name} reports checkpoint {k} {'complete' if rep.complete else 'incomplete'}",
            f"{name}'s part of {k} is {'complete' if complete else 'not complete'}",
            f"reported {'complete' if rep.complete else 'not complete'}",
            "a part is complete when the node snapshotted and every input has the barrier",
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
    """Drive ``node`` along ``trace`` and judge it online (see the module docstring)."""
    start = time.perf_counter()
    cfg = load_trace_model(trace)
    transport = open_transport(node, cfg.procs, log_dir)
    run = _Run(trace, cfg, transport)
    run.on_step = on_step
    scheduled = 0

    def result(verdict: Verdict, **kw: object) -> JudgeResult:
        return JudgeResult(
            trace,
            verdict,
            tuple(run.executed),
            len(run.executed) - scheduled,
            tuple(run.observations),
            seconds=time.perf_counter() - start,
            sandbox=transport.sandbox_report,
            **kw,  # type: ignore[arg-type]
        )

    try:
        try:
            run.init()
            for action, params in trace.steps:
                got = run.enabled(action, params)
                if got is None:
                    run.skipped.append(f"{action} {dict(params)}")
                    continue
                div = run.perform(*got) or run.check_properties()
                if div is not None:
                    return result(Verdict.FAIL, divergence=div)
            scheduled = len(run.executed)
            if drain:
                for name in cfg.procs:
                    idle = call(transport, name, p.Idle(run.next_id()), p.IdleOk)
                    if idle.sent or idle.recorded or idle.completed:
                        return result(
                            Verdict.FAIL,
                            divergence=run.div(
                                "idle-step",
                                name,
                                f"an idle turn: {name} sent or recorded something",
                                "a dataflow node takes no step by itself",
                                "acted on an idle turn",
                                "every step of BarrierSnapshot is a delivery, a read, a barrier "
                                "injection or a restore the harness asks for",
                            ),
                        )
                while len(run.executed) - scheduled < _LIMIT:
                    got = run.drain_next()
                    if got is None:
                        break
                    div = run.perform(*got) or run.check_properties()
                    if div is not None:
                        return result(Verdict.FAIL, divergence=div)
            for n in range(len(cfg.ckpts)):
                for i in range(len(cfg.procs)):
                    rep = call(
                        transport,
                        cfg.procs[i],
                        p.Report(run.next_id(), cfg.ckpts[n]),
                        p.CheckpointReportOk,
                    )
                    div = _compare_report(run, n, i, rep)
                    if div is not None:
                        return result(Verdict.FAIL, divergence=div)
            late = after_last_reply(transport)
            if late is not None:
                return result(Verdict.FAIL, reason=late[0], node_error=late[1])
            s = run.s
            if drain and s.restored == 0:
                stuck = [
                    k for n, k in enumerate(cfg.ckpts) if s.s0[n] is not None and s.sf[n] is None
                ]
                if stuck:
                    who = sorted({c[1] for ch in run.blocked.values() for c in ch})
                    return result(
                        Verdict.FAIL,
                        divergence=run.div(
                            "checkpoint-incomplete",
                            ", ".join(who) or cfg.procs[0],
                            f"after the drain checkpoint {', '.join(map(str, stuck))} never "
                            "completed",
                            "every checkpoint that starts completes (CheckpointsComplete)",
                            "blocks " + (", ".join(who) or "nothing"),
                            "under the spec's fairness every barrier is eventually received; a "
                            "node that blocks an input for ever stops the checkpoint "
                            "(CheckpointsComplete)",
                        ),
                    )
            if drain and not bm.drained(cfg, s):
                return result(
                    Verdict.FAIL,
                    divergence=run.div(
                        "not-drained",
                        cfg.procs[0],
                        "after the drain records are still in flight or unread",
                        "the input is eventually drained (EventuallyDrained)",
                        "blocked for ever",
                        "a node that blocks an input for ever stops the dataflow "
                        "(EventuallyDrained)",
                    ),
                )
            if run.departures:
                return result(Verdict.FAIL, divergence=run.departures[0])
        finally:
            transport.close()
    except NodeTimeout as exc:
        return result(Verdict.UNKNOWN, reason=exc.message, node_error=exc)
    except NodeError as exc:
        return result(Verdict.FAIL, reason=exc.message, node_error=exc)
    reason = (
        f"{len(run.skipped)} step{'s' if len(run.skipped) != 1 else ''} of the trace "
        "were not enabled in the state the node's choices led to, and were skipped"
        if run.skipped
        else ""
    )
    return result(Verdict.PASS, reason=reason)
