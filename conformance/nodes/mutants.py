"""The mutant zoo: reference nodes with one real bug each, from the one registry.

Every bug class of :mod:`redletter.python_model.bugs` that a node can have is here:

* a step override whose rule reads only what one machine knows of itself runs as a
  node *derived* from the rule (:func:`~redletter.conformance.nodes.steps.derived_node`),
  with no code of its own;
* a bug that lives in how an implementation stores or reports what it records (the
  registry's node bugs), and the late red letter, whose step reads a buffer a node
  cannot see, are hand-written below: each subclasses
  :class:`~redletter.conformance.nodes.reference.ReferenceNode` and changes the
  smallest piece that reproduces the bug.

Each node's docstring names the bug and the lemma (or rule) of spec/ChandyLamport.tla
it breaks; :data:`MUTANTS` lists them all as ``name -> Mutant(factory, bug, lemma,
bug_class)``.  The kit must fail every one of them and pass the reference node on
the same traces.

Run one as a node program: ``python -m redletter.conformance.nodes.mutants NAME`` (a
registry name or an older one: ``stop-all-at-first``).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import NamedTuple

from redletter.conformance import protocol as p
from redletter.conformance.node import NodeFactory, serve
from redletter.conformance.nodes.reference import ReferenceNode
from redletter.conformance.nodes.steps import derived_node
from redletter.conformance.protocol import JsonValue
from redletter.errors import InputError
from redletter.python_model import bugs

__all__ = ["MUTANTS", "Mutant", "main", "resolve"]


class LateState(ReferenceNode):
    """Bug: the local state is recorded too late, after the node's next step
    (e.g. recorded lazily when the node next touches its state), so it includes an
    app action the node performed while already red.

    Breaks Lemma 0: the recorded state is not the one the white actions reach.
    """

    def __init__(self, init: p.Init) -> None:
        super().__init__(init)
        self._owed: list[int] = []

    def record_state(self, k: int) -> None:
        self._owed.append(k)

    def handle(self, body: p.Request) -> p.Reply:
        owed, self._owed = self._owed, []
        reply = super().handle(body)
        if not owed or not isinstance(reply, p.StepReply):
            self._owed = owed + self._owed
            return reply
        for k in owed:
            self.snapshots[k].state = self.state
        late = tuple(p.RecordState(k, self.state) for k in owed)
        return type(reply)(
            reply.in_reply_to, reply.msg_id, reply.sent, late + reply.recorded, reply.completed
        )


class EarlyState(ReferenceNode):
    """Bug: the local state is recorded too early: the node records the state it
    had before its last app step (a stale copy kept for "undo").

    Breaks Lemma 0: the recorded state misses an action of the white machine.
    """

    def __init__(self, init: p.Init) -> None:
        super().__init__(init)
        self._previous: JsonValue = init.app_state

    def handle(self, body: p.Request) -> p.Reply:
        before = self.state
        reply = super().handle(body)
        if self.state != before:
            self._previous = before
        return reply

    def record_state(self, k: int) -> None:
        self.snapshots[k].state = self._previous
        self._recorded.append(p.RecordState(k, self._previous))


class MarkerAfterApp(ReferenceNode):
    """Bug: the markers are queued behind the next app message on the same channel
    (an outbox flushed after the app send), so the app message overtakes its red
    letter (the spec's LateEnqueue).

    Breaks Lemma 0: the message sent by a red machine is received by a white one.
    """

    def __init__(self, init: p.Init) -> None:
        super().__init__(init)
        self._held: dict[str, list[int]] = {}

    def send_markers(self, k: int) -> None:
        for to in self.out_to:
            self._held.setdefault(to, []).append(k)

    def on_app_send(self, to: str, payload: int) -> None:
        super().on_app_send(to, payload)
        for k in self._held.pop(to, []):
            self.send(to, p.Marker(k))

    def handle(self, body: p.Request) -> p.Reply:
        if isinstance(body, p.AppSend):
            return super().handle(body)
        flushed = tuple(
            p.Sent((self.node_id, to), p.Marker(k)) for to, ks in self._held.items() for k in ks
        )
        self._held.clear()
        reply = super().handle(body)
        if flushed and isinstance(reply, p.StepReply):
            return type(reply)(
                reply.in_reply_to,
                reply.msg_id,
                flushed + reply.sent,
                reply.recorded,
                reply.completed,
            )
        return reply


class FirstChannelRecorded(ReferenceNode):
    """Bug: the channel the first marker came on is recorded like the others (it
    should be empty): messages arriving on it after the marker are recorded, until
    every other input channel has closed.

    Breaks Lemma 0: the snapshot holds a message sent by a red machine.
    """

    def __init__(self, init: p.Init) -> None:
        super().__init__(init)
        self._first: dict[int, str] = {}

    def on_marker(self, frm: str, k: int) -> None:
        if k not in self.snapshots:
            self.turn_red(k)
            self._first[k] = frm
            if len(self.in_from) > 1:
                return
        else:
            super().on_marker(frm, k)
        snap = self.snapshots[k]
        rest = [q for q in self.in_from if q not in snap.red_inputs]
        if rest == [self._first.get(k)]:
            snap.red_inputs.add(rest[0])
            self.close_channel(k, rest[0])
            self._check_complete(k)


class CompleteAtFirst(ReferenceNode):
    """Bug: the node declares its part of a snapshot complete at the first marker
    (it counts markers, not channels), so the collector takes a snapshot whose
    channel states are cut short.

    Breaks Lemma 0: the snapshot taken at completion misses in-flight messages.
    """

    def __init__(self, init: p.Init) -> None:
        super().__init__(init)
        self._at_completion: dict[int, dict[str, tuple[int, ...]]] = {}

    def _check_complete(self, k: int) -> None:
        snap = self.snapshots[k]
        if not snap.complete and snap.red_inputs:
            snap.complete = True
            self._at_completion[k] = {q: tuple(ms) for q, ms in snap.channels.items()}
            self.complete(k)

    def report(self, k: int) -> tuple[JsonValue, Mapping[str, tuple[int, ...]], bool]:
        state, channels, complete = super().report(k)
        return state, self._at_completion.get(k, channels), complete


class SharedRecording(ReferenceNode):
    """Bug: one recorded-message list per channel, shared by every snapshot in
    progress (keyed by channel, not by snapshot): a message recorded for one
    snapshot lands in the others too.

    Breaks Lemma 0 of the snapshot whose channel was already closed.
    """

    def __init__(self, init: p.Init) -> None:
        super().__init__(init)
        self._lists: dict[str, list[int]] = {q: [] for q in self.in_from}

    def turn_red(self, k: int) -> None:
        super().turn_red(k)
        self.snapshots[k].channels = self._lists

    def on_app_message(self, frm: str, payload: int) -> None:
        recording = [k for k in sorted(self.snapshots) if frm not in self.snapshots[k].red_inputs]
        if recording:
            self._lists[frm].append(payload)
            for k in sorted(self.snapshots):
                self.record_message(k, frm, payload)


class DuplicatedMessages(ReferenceNode):
    """Bug: every recorded message is recorded twice (a retry that appends again).

    Breaks Lemma 0 (and the token app's conservation): the channel state holds a
    message that was never sent twice.
    """

    def record_message(self, k: int, frm: str, payload: int) -> None:
        super().record_message(k, frm, payload)
        self.snapshots[k].channels[frm].append(payload)
        super().record_message(k, frm, payload)


class AliasedMessages(ReferenceNode):
    """Bug: recorded messages are aliased: the node reuses one list object per
    channel and hands it to every snapshot, clearing it on each new snapshot, so a
    later append (or clear) shows up in an earlier, already completed snapshot.

    Breaks Lemma 0 of the earlier snapshot, as reported.
    """

    def __init__(self, init: p.Init) -> None:
        super().__init__(init)
        self._lists: dict[str, list[int]] = {q: [] for q in self.in_from}

    def turn_red(self, k: int) -> None:
        super().turn_red(k)
        for q in self.in_from:
            self._lists[q].clear()
        self.snapshots[k].channels = self._lists

    def on_app_message(self, frm: str, payload: int) -> None:
        recording = False
        for k in sorted(self.snapshots):
            if frm not in self.snapshots[k].red_inputs:
                recording = True
                self.record_message(k, frm, payload)
        if recording:
            self._lists[frm].append(payload)


class CrashOnConcurrent(ReferenceNode):
    """Bug: the node assumes one snapshot at a time and crashes (an uncaught
    exception) when a second snapshot starts while one is still in progress.

    Breaks SnapshotsComplete: the concurrent snapshot never completes.
    """

    def turn_red(self, k: int) -> None:
        if any(not s.complete for s in self.snapshots.values()):
            raise RuntimeError(f"{self.node_id}: snapshot {k} started while another is in progress")
        super().turn_red(k)


class WaitsForMessage(ReferenceNode):
    """Bug: the node assumes channels are never empty: when a channel's marker
    arrives and nothing was recorded on it yet, it keeps the channel open until an
    app message arrives on it, records that message, then closes it.

    Breaks Lemma 0: the message recorded was sent after its sender turned red.
    """

    def __init__(self, init: p.Init) -> None:
        super().__init__(init)
        self._waiting: dict[int, set[str]] = {}

    def on_marker(self, frm: str, k: int) -> None:
        snap = self.snapshots.get(k)
        if snap is not None and not snap.channels[frm]:
            self._waiting.setdefault(k, set()).add(frm)
            return
        super().on_marker(frm, k)

    def on_app_message(self, frm: str, payload: int) -> None:
        super().on_app_message(frm, payload)
        for k in sorted(self._waiting):
            if frm in self._waiting[k]:
                self._waiting[k].discard(frm)
                self.snapshots[k].red_inputs.add(frm)
                self.close_channel(k, frm)
                self._check_complete(k)


class LiveStateReport(ReferenceNode):
    """Bug: the node reports its current local state, after the app steps it took
    since recording, instead of the state it recorded (a reference to the live
    state instead of a copy).

    Breaks Lemma 0: the reported state includes actions of the red machine.
    """

    def report(self, k: int) -> tuple[JsonValue, Mapping[str, tuple[int, ...]], bool]:
        state, channels, complete = super().report(k)
        return (self.state if k in self.snapshots else state), channels, complete


class Mutant(NamedTuple):
    """One entry of the zoo: how to build it, the bug, the lemma it breaks, and the
    bug class of the registry it belongs to."""

    factory: NodeFactory
    bug: str
    lemma: str
    bug_class: str = ""


def _node_name(cls: type) -> str:
    out = ""
    for ch in cls.__name__:
        out += ("-" + ch.lower()) if ch.isupper() and out else ch.lower()
    return out


_THIS_MODULE = "redletter.conformance.nodes.mutants"  # also when run as __main__


def _zoo() -> dict[str, Mutant]:
    """Every bug class a node can have, by node name: derived ones by their class
    name, hand-written ones by their own (``MarkerAfterApp``: ``marker-after-app``)."""
    here = globals()
    zoo: dict[str, Mutant] = {}
    for b in bugs.BUGS.values():
        if b.node == "derived":
            zoo[b.name] = Mutant(derived_node(b), b.summary, b.lemma, b.name)
        elif b.node is not None:
            module, _, cls = b.node.partition(":")
            factory = here.get(cls) if module == _THIS_MODULE else None
            if not isinstance(factory, type):
                raise ImportError(f"bug class {b.name}: no node class {b.node}")
            zoo[_node_name(factory)] = Mutant(factory, b.summary, b.lemma, b.name)
    return zoo


MUTANTS: Mapping[str, Mutant] = _zoo()


def resolve(name: str) -> str | None:
    """The zoo's name for ``name`` (a node name, a bug class or an older name)."""
    if name in MUTANTS:
        return name
    try:
        b = bugs.get(name)
    except InputError:
        return None
    return next((n for n, m in MUTANTS.items() if m.bug_class == b.name), None)


def main(argv: list[str] | None = None) -> None:
    """Serve mutant ``NAME`` (the first argument) on stdin/stdout."""
    args = sys.argv[1:] if argv is None else argv
    name = resolve(args[0]) if len(args) == 1 else None
    if name is None:
        sys.stderr.write(
            "usage: python -m redletter.conformance.nodes.mutants NAME\nmutants: "
            + ", ".join(MUTANTS)
            + "\n"
        )
        raise SystemExit(5)
    serve(MUTANTS[name].factory)


if __name__ == "__main__":
    main()
