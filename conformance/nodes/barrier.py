r"""Flink's asynchronous barrier snapshots (spec/BarrierSnapshot.tla): the node library
of a dataflow node, the reference node and its mutants.

**The library** (:class:`DataflowNode`): the harness computes the application, a
keyed count (it tells a source which record it reads and where it goes, and an
operator, with each record, its new state and the records it sends on), so a node
writes only the checkpointing part.  ``init`` gives the node its ``role`` (source or
operator), its ``back_edges`` and the ``mode`` (aligned or unaligned); the steps are
``emit``, ``inject_barrier``, ``deliver`` of a record or a barrier, ``restore`` and
``report`` (docs/protocol.md, "Algorithm barrier").

**The reference node** (:class:`BarrierReferenceNode`), rule by rule, per checkpoint n:

- ``InjectBarrier(s, n)`` (a source): it records its position (``recPos``) and sends
  barrier n on every output (``Broadcast``); its part of n is complete at once;
- ``ReceiveBarrier(c)`` (an operator): the input c is closed for n (``barrierIn``,
  "trigger (block | input)"): in aligned mode it is *blocked* (``Blocked(c)``) until
  the operator snapshots, back edges excepted; the records the barrier overtook
  (unaligned) are stored with n (``Overtakes``: ``recChan``); once every forward input
  has barrier n (aligned) or at the first barrier (unaligned) the operator records its
  state (``RecordsState``: ``recState``) and sends barrier n on every output;
- ``Process(c)``: the operator applies the record (the harness gives the new state),
  sends on what the harness names, and, while it has snapshotted n and c's barrier
  n has not arrived, stores the record with n (``RecordingRule2``, ``Logging``: the
  back edges' log in aligned mode, every input in unaligned mode);
- ``Restore(n)``: every node resets to what it recorded for n (a source its position,
  an operator its state) and hands back the records it stored with n for its inputs;
  the job is then no longer live: nothing blocks, nothing is logged.

Run it as ``python -m redletter.conformance.nodes.barrier [MUTANT]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar, Final

from redletter.conformance import protocol as p
from redletter.conformance.node import Mutant, NodeFailure, SnapshotNode, serve_choice
from redletter.conformance.protocol import JsonValue

__all__ = [
    "MUTANTS",
    "BarrierReferenceNode",
    "DataflowNode",
    "Forgotten",
    "KeepsState",
    "NeverBlocked",
    "NoLogging",
    "NoRewind",
    "main",
]


class DataflowNode(SnapshotNode):
    """The library part of a dataflow node: dispatch, effects, replies (subclass it and
    write the hooks ``on_emit``, ``on_inject_barrier``, ``on_record``, ``on_barrier``,
    ``on_restore``, ``blocked_inputs`` and ``checkpoint_report``)."""

    algorithm: ClassVar[str] = "barrier"

    def __init__(self, init: p.Init) -> None:
        super().__init__(init)
        #: "source" or "operator" (init.role; a node without inputs is a source)
        self.role = init.role or ("operator" if init.in_channels else "source")
        self.mode = init.mode or "aligned"
        self.back_edges = frozenset(init.back_edges or ())
        self._blocked_override: tuple[p.Channel, ...] | None = None

    # -- effects ---------------------------------------------------------------

    def store_record(self, n: int, frm: str, record: p.StreamRecord) -> None:
        """Store ``record`` with checkpoint n as in flight on [frm, self]."""
        self._recorded.append(p.StoreRecord(n, (frm, self.node_id), record))

    def send_barriers(self, n: int) -> None:
        """Send barrier n on every output channel, in order."""
        for to in self.out_to:
            self.send(to, p.Barrier(n))

    # -- hooks ---------------------------------------------------------------

    def on_emit(self, record: p.StreamRecord, to: str) -> None:
        """A source read ``record`` (``self.state`` is its new position): send it."""
        self.send(to, record)

    def on_inject_barrier(self, n: int) -> None:
        raise NodeFailure("unsupported", "inject_barrier is not implemented")

    def on_record(self, frm: str, record: p.StreamRecord, outputs: tuple[p.Sent, ...]) -> None:
        raise NodeFailure("unsupported", "records are not implemented")

    def on_barrier(self, frm: str, n: int, overtaken: tuple[p.StreamRecord, ...]) -> None:
        raise NodeFailure("unsupported", "barriers are not implemented")

    def on_restore(self, n: int) -> dict[str, tuple[p.StreamRecord, ...]]:
        """Reset to checkpoint n; the records to put back, per input source."""
        raise NodeFailure("unsupported", "restore is not implemented")

    def blocked_inputs(self) -> tuple[str, ...]:
        """The sources of the input channels blocked now."""
        return ()

    def checkpoint_report(
        self, n: int
    ) -> tuple[JsonValue, Mapping[str, tuple[p.StreamRecord, ...]], bool]:
        """(recorded state or None, {src: stored records}, complete)."""
        raise NodeFailure("unsupported", "report is not implemented")

    # -- Chandy-Lamport's hooks do not apply --------------------------------

    def on_start_snapshot(self, k: int) -> None:
        raise NodeFailure("unsupported", "a dataflow node starts no snapshot (inject_barrier)")

    def on_marker(self, frm: str, k: int) -> None:
        raise NodeFailure("unsupported", "a dataflow node receives barriers, not markers")

    def on_app_message(self, frm: str, payload: int) -> None:
        raise NodeFailure("unsupported", "a dataflow node receives records, not app messages")

    def report(self, k: int) -> tuple[JsonValue, Mapping[str, tuple[int, ...]], bool]:
        raise NodeFailure("unsupported", "a dataflow node reports checkpoints")

    # -- dispatch ------------------------------------------------------------

    def _blocked(self) -> tuple[p.Channel, ...]:
        return tuple((src, self.node_id) for src in self.blocked_inputs())

    def handle(self, body: p.Request) -> p.Reply:
        self._sent, self._recorded, self._completed = [], [], []
        rid = body.msg_id
        try:
            if isinstance(body, p.Emit):
                if self.role != "source" or body.to not in self.out_to:
                    raise NodeFailure("bad-request", f"{self.node_id} cannot emit to {body.to}")
                self.state = body.new_state
                self.on_emit(body.record, body.to)
                return p.EmitOk(rid, None, *self._effects(), blocked=self._blocked())
            if isinstance(body, p.InjectBarrier):
                if self.role != "source":
                    raise NodeFailure("bad-request", f"{self.node_id} is not a source")
                self.on_inject_barrier(body.checkpoint)
                return p.InjectBarrierOk(rid, None, *self._effects(), blocked=self._blocked())
            if isinstance(body, p.Deliver):
                if body.from_ not in self.in_from:
                    raise NodeFailure(
                        "bad-request", f"{body.from_} -> {self.node_id} is not an input channel"
                    )
                msg = body.msg
                if isinstance(msg, p.StreamRecord):
                    self.state = body.new_state
                    self.on_record(body.from_, msg, body.outputs or ())
                elif isinstance(msg, p.Barrier):
                    self.on_barrier(body.from_, msg.checkpoint, body.overtaken or ())
                else:
                    raise NodeFailure(
                        "unsupported", "a dataflow node receives records and barriers"
                    )
                return p.DeliverOk(rid, None, *self._effects(), blocked=self._blocked())
            if isinstance(body, p.Restore):
                requeued = self.on_restore(body.checkpoint)
                return p.RestoreOk(
                    rid,
                    None,
                    *self._effects(),
                    blocked=self._blocked(),
                    state=self.state,
                    requeued=requeued,
                )
            if isinstance(body, p.Report):
                state, channels, complete = self.checkpoint_report(body.snapshot)
                return p.CheckpointReportOk(rid, None, state, dict(channels), complete)
            if isinstance(body, p.Idle):
                self.on_idle()
                return p.IdleOk(rid, None, *self._effects(), blocked=self._blocked())
            return super().handle(body)
        except NodeFailure as exc:
            return p.Error(rid, None, exc.code, exc.text)


@dataclass
class _Checkpoint:
    """What this node knows of one checkpoint."""

    state: JsonValue = None  #: the position or state recorded (None: not snapshotted)
    snapped: bool = False
    barriers: set[str] = field(default_factory=set)  #: inputs (by source) whose barrier came
    stored: dict[str, list[p.StreamRecord]] = field(default_factory=dict)  #: per input source
    complete: bool = False


class BarrierReferenceNode(DataflowNode):
    """The reference node (the module docstring maps its code to the spec's rules)."""

    def __init__(self, init: p.Init) -> None:
        super().__init__(init)
        self.live = True  #: the job has not failed (spec: Live)
        self.ckpts: dict[int, _Checkpoint] = {}

    def _ck(self, n: int) -> _Checkpoint:
        return self.ckpts.setdefault(n, _Checkpoint(stored={src: [] for src in self.in_from}))

    # -- the rules, one method each (the mutants override one) ----------------

    def blocks(self, src: str) -> bool:
        """``Blocked(c)``: aligned, live, not a back edge, and some checkpoint's barrier
        came on c while this operator has not snapshotted it."""
        c = (src, self.node_id)
        return (
            self.live
            and self.mode == "aligned"
            and c not in self.back_edges
            and any(src in ck.barriers and not ck.snapped for ck in self.ckpts.values())
        )

    def logs(self, n: int, src: str) -> bool:
        """``Logging(n, p, c)``: live, snapshotted n, and c's barrier n still to come."""
        ck = self.ckpts[n]
        return self.live and ck.snapped and src not in ck.barriers

    def kept_overtaken(self, overtaken: tuple[p.StreamRecord, ...]) -> tuple[p.StreamRecord, ...]:
        """``Overtaken(ahead)``: the records a barrier overtook, stored with it."""
        return overtaken

    def restored_state(self, n: int) -> JsonValue:
        """The state after ``Restore(n)``: what was recorded for n."""
        return self.ckpts[n].state

    # -- the hooks -------------------------------------------------------------

    def blocked_inputs(self) -> tuple[str, ...]:
        return tuple(src for src in self.in_from if self.blocks(src))

    def _snapshot(self, n: int) -> None:
        """``TakeSnapshot``: RecordsState and Broadcast."""
        ck = self._ck(n)
        ck.snapped, ck.state = True, self.state
        self.record_state(n)
        self.send_barriers(n)

    def _check_complete(self, n: int) -> None:
        ck = self.ckpts[n]
        if not ck.complete and ck.snapped and ck.barriers >= set(self.in_from):
            ck.complete = True
            self.complete(n)

    def on_inject_barrier(self, n: int) -> None:
        if not self.live or self._ck(n).snapped:
            raise NodeFailure("precondition-failed", f"{self.node_id} cannot inject barrier {n}")
        self._snapshot(n)
        self._check_complete(n)

    def on_record(self, frm: str, record: p.StreamRecord, outputs: tuple[p.Sent, ...]) -> None:
        for o in outputs:
            self.send(o.channel[1], o.msg)
        for n in sorted(self.ckpts):
            if self.logs(n, frm):
                self.ckpts[n].stored[frm].append(record)
                self.store_record(n, frm, record)

    def on_barrier(self, frm: str, n: int, overtaken: tuple[p.StreamRecord, ...]) -> None:
        ck = self._ck(n)
        ck.barriers.add(frm)
        self.close_channel(n, frm)
        for r in self.kept_overtaken(overtaken):
            ck.stored[frm].append(r)
            self.store_record(n, frm, r)
        forward = {src for src in self.in_from if (src, self.node_id) not in self.back_edges}
        aligned = self.mode == "unaligned" or forward <= ck.barriers
        if not ck.snapped and aligned:
            self._snapshot(n)
        self._check_complete(n)

    def on_restore(self, n: int) -> dict[str, tuple[p.StreamRecord, ...]]:
        ck = self.ckpts.get(n)
        if ck is None or not ck.snapped:
            raise NodeFailure(
                "precondition-failed", f"{self.node_id} did not record checkpoint {n}"
            )
        self.live = False
        self.state = self.restored_state(n)
        return {src: tuple(ck.stored[src]) for src in self.in_from}

    def checkpoint_report(
        self, n: int
    ) -> tuple[JsonValue, Mapping[str, tuple[p.StreamRecord, ...]], bool]:
        ck = self.ckpts.get(n)
        if ck is None:
            return None, {src: () for src in self.in_from}, False
        return ck.state, {src: tuple(ck.stored[src]) for src in self.in_from}, ck.complete


# --------------------------------------------------------------------------- mutants


class NeverBlocked(BarrierReferenceNode):
    """Alignment skipped ("at least once"): an input whose barrier arrived is never
    blocked, so the operator processes records of checkpoint n+1 before it snapshots n;
    they are inside n's state and are applied again after a restore of n
    (ExactlyOnceAfterRestore; MCBarrierAtLeastOnceFailure, and ConsistentCut:
    MCBarrierAtLeastOnceCutFailure)."""

    def blocks(self, src: str) -> bool:
        return False


class Forgotten(BarrierReferenceNode):
    """Unaligned checkpoints that do not store the records a barrier overtakes: a
    restore loses them (ExactlyOnceAfterRestore; MCBarrierUnalignedLostFailure)."""

    def kept_overtaken(self, overtaken: tuple[p.StreamRecord, ...]) -> tuple[p.StreamRecord, ...]:
        return ()


class NoLogging(BarrierReferenceNode):
    """The cyclic extension without its log: records received on a back edge between
    the snapshot and the back edge's barrier are not stored, so a record in flight
    round the loop is lost after a restore (ExactlyOnceAfterRestore;
    MCBarrierCyclicNoLogFailure)."""

    def logs(self, n: int, src: str) -> bool:
        return False


class NoRewind(BarrierReferenceNode):
    """A restore bug: a source that does not rewind to its recorded position, so the
    records it read after the checkpoint are never read again: lost after the restore
    (ExactlyOnceAfterRestore, EveryEffectOnceDrained)."""

    def restored_state(self, n: int) -> JsonValue:
        return self.state if self.role == "source" else super().restored_state(n)


class KeepsState(BarrierReferenceNode):
    """A restore bug: an operator that keeps its current state instead of the recorded
    one, so every record processed after the checkpoint and replayed after the restore
    is applied twice (ExactlyOnceAfterRestore, NoEffectTwice)."""

    def restored_state(self, n: int) -> JsonValue:
        return self.state if self.role == "operator" else super().restored_state(n)


#: name -> (factory, what it breaks)
MUTANTS: Final[Mapping[str, Mutant]] = {
    "NeverBlocked": Mutant(
        NeverBlocked,
        "alignment skipped: records after a barrier enter the checkpoint's state and are "
        "applied twice after a restore (ExactlyOnceAfterRestore, ConsistentCut)",
    ),
    "Forgotten": Mutant(
        Forgotten,
        "unaligned: the records a barrier overtakes are not stored and are lost after a "
        "restore (ExactlyOnceAfterRestore)",
    ),
    "NoLogging": Mutant(
        NoLogging,
        "cyclic: back-edge records are not logged and are lost after a restore "
        "(ExactlyOnceAfterRestore)",
    ),
    "NoRewind": Mutant(
        NoRewind,
        "restore: a source does not rewind to its recorded position; records are lost "
        "(ExactlyOnceAfterRestore)",
    ),
    "KeepsState": Mutant(
        KeepsState,
        "restore: an operator keeps its current state; records are applied twice "
        "(ExactlyOnceAfterRestore)",
    ),
}


def main(argv: list[str] | None = None) -> None:
    """``python -m redletter.conformance.nodes.barrier [MUTANT]``."""
    nodes = {"reference": BarrierReferenceNode, **{n: m.factory for n, m in MUTANTS.items()}}
    serve_choice("redletter.conformance.nodes.barrier", nodes, argv)


if __name__ == "__main__":
    main()
