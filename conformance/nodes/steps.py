"""Nodes derived from the registry of bug classes: one bug's rule, run at a node.

:class:`StepNode` is the reference node (:mod:`.reference`) with the steps of
``spec/ChandyLamport.tla`` made explicit: on turning red it sends red letters over
the output buffers ``RedLettersOut`` names, on a red letter it closes the buffers
``TurnsRed`` names, records what ``RedLetterRecord`` adds and sends the red letters
``RedLettersAgain`` names, and it records what it receives where ``Recording`` says,
as ``RecordMessage`` says.  Each step is the spec's own definition, except the one
the bug class overrides, whose rule (:mod:`redletter.python_model.bugs`) runs on a
:class:`NodeView`: what one machine knows of itself -- its colour per snapshot, its
input buffers' colours, its recordings.  :func:`derived_node` builds the node class
of a bug class; the zoo (:mod:`.mutants`) lists one for every bug class whose
registry entry says ``node="derived"``, so a new bug class needs no node code.

A rule that reads anything else (another machine's colour, a buffer's contents)
raises :class:`~redletter.python_model.stepview.NotLocal`: no node can have that bug.
"""

from __future__ import annotations

from typing import ClassVar, cast

from redletter.conformance import protocol as p
from redletter.conformance.node import NodeFailure
from redletter.conformance.nodes.reference import ReferenceNode, _Snapshot
from redletter.python_model.bugs import BugClass
from redletter.python_model.mutants import spec_view_rule
from redletter.python_model.stepview import NotLocal

__all__ = ["NodeView", "StepNode", "derived_node"]


class NodeView:
    """A :class:`~redletter.python_model.stepview.StepView` of one machine: machines
    are indices into ``node_ids``, buffers into the machine's input then output
    buffers, snapshots into the ids it has seen (sorted), plus ``also``, a snapshot
    whose red letter is arriving and in which the machine is still white."""

    def __init__(self, node: StepNode, also: int | None = None) -> None:
        self._n = node
        self.procs = tuple(node.node_ids)
        self.chans: tuple[tuple[str, str], ...] = tuple(
            (str(a), str(b)) for a, b in (*node.in_channels, *node.out_channels)
        )
        self.snaps = tuple(sorted({*node.snapshots, *(() if also is None else (also,))}))
        self.me = self.procs.index(node.node_id)

    def chan(self, src: str, dst: str) -> int:
        return self.chans.index((src, dst))

    def snap(self, k: int) -> int:
        return self.snaps.index(k)

    @property
    def n_procs(self) -> int:
        return len(self.procs)

    @property
    def n_chans(self) -> int:
        return len(self.chans)

    @property
    def n_snaps(self) -> int:
        return len(self.snaps)

    def src(self, c: int) -> int:
        return self.procs.index(self.chans[c][0])

    def dst(self, c: int) -> int:
        return self.procs.index(self.chans[c][1])

    def ins(self, q: int) -> tuple[int, ...]:
        if q != self.me:
            raise NotLocal(f"the input buffers of {self.procs[q]}")
        return tuple(i for i, c in enumerate(self.chans) if c[1] == self.procs[q])

    def outs(self, q: int) -> tuple[int, ...]:
        if q != self.me:
            raise NotLocal(f"the output buffers of {self.procs[q]}")
        return tuple(i for i, c in enumerate(self.chans) if c[0] == self.procs[q])

    def red(self, k: int, q: int) -> bool:
        if q != self.me:
            raise NotLocal(f"the colour of {self.procs[q]}")
        return self.snaps[k] in self._n.snapshots

    def red_buf(self, k: int, c: int) -> bool:
        src, dst = self.chans[c]
        if dst != self._n.node_id:
            raise NotLocal(f"the colour of buffer {src} -> {dst}")
        snap = self._n.snapshots.get(self.snaps[k])
        return snap is not None and src in snap.red_inputs

    def length(self, c: int) -> int:
        raise NotLocal("the contents of a buffer")

    def letter_at(self, c: int, i: int) -> int | None:
        raise NotLocal("the contents of a buffer")

    def recorded_len(self, k: int, c: int) -> int:
        snap = self._n.snapshots.get(self.snaps[k])
        return 0 if snap is None else len(snap.channels.get(self.chans[c][0], []))


class StepNode(ReferenceNode):
    """The reference node with the spec's steps explicit, one of them a bug's."""

    bug: ClassVar[BugClass | None] = None

    def _ask(self, view: NodeView, op: str, *args: object) -> object:
        bug = self.bug
        rule = (
            bug.rule
            if bug is not None and bug.step == op and bug.rule is not None
            else spec_view_rule(op)
        )
        try:
            return rule(view, *args)
        except NotLocal as e:
            raise NodeFailure("unsupported", f"{op} reads {e}, which a node cannot know") from e

    def _turn_red_from(self, k: int, frm: str | None) -> None:
        self.snapshots[k] = _Snapshot(self.state, {q: [] for q in self.in_from})
        self.record_state(k)
        v = NodeView(self)
        src = -1 if frm is None else v.chan(frm, self.node_id)
        for to in self.out_to:
            if self._ask(v, "RedLettersOut", v.me, v.snap(k), src, v.chan(self.node_id, to)):
                self.send(to, p.Marker(k))

    def turn_red(self, k: int) -> None:
        self._turn_red_from(k, None)

    def on_marker(self, frm: str, k: int) -> None:
        # ReceiveRedLetter: every step is asked in the state before the receipt
        v = NodeView(self, also=k)
        me, c, ki = v.me, v.chan(frm, self.node_id), v.snap(k)
        turns = [j for j in v.snaps if self._ask(v, "TurnsRed", c, ki, v.snap(j))]
        extra = cast(tuple[int, ...], self._ask(v, "RedLetterRecord", ki, me, c))
        if k in self.snapshots:  # "if it was already red, it sends no further red letters"
            for to in self.out_to:
                if self._ask(v, "RedLettersAgain", me, ki, c, v.chan(self.node_id, to)):
                    self.send(to, p.Marker(k))
        else:
            self._turn_red_from(k, frm)
        for m in extra:
            self.snapshots[k].channels[frm].append(m)
            self.record_message(k, frm, m)
        for j in turns:
            snap = self.snapshots.get(j)
            if snap is not None and frm not in snap.red_inputs:
                snap.red_inputs.add(frm)
                self.close_channel(j, frm)
        for j in sorted(self.snapshots):
            self._check_complete(j)

    def on_app_message(self, frm: str, payload: int) -> None:
        v = NodeView(self)
        me, c = v.me, v.chan(frm, self.node_id)
        for k in sorted(self.snapshots):
            ki = v.snap(k)
            if self._ask(v, "Recording", ki, me, c):
                snap = self.snapshots[k]
                new = self._ask(v, "RecordMessage", ki, c, tuple(snap.channels[frm]), payload)
                snap.channels[frm] = list(cast(tuple[int, ...], new))
                self.record_message(k, frm, payload)


def derived_node(bug: BugClass) -> type[StepNode]:
    """The node class of ``bug`` (a step override whose rule a node can run)."""
    if bug.rule is None:
        raise ValueError(f"{bug.name} has no rule to derive a node from")
    doc = (
        f"Bug: {bug.summary} ({bug.name}, derived from the registry's rule for "
        f"{bug.step} <- {bug.definition}).\n\nBreaks {bug.lemma}: {bug.breaks}."
    )
    name = "".join(w.capitalize() for w in bug.name.split("-")) + "Node"
    return type(name, (StepNode,), {"bug": bug, "__doc__": doc, "__module__": __name__})
