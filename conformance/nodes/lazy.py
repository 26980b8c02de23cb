"""Lazy red letters: the reference node of spec/LazyChandyLamport.tla and its mutants.

The rule of seeds/002's pseudo-code: "send one Marker along c after p records its state
and before p sends further messages along c".  Read next to the spec:

- ``TurnRedLazily(p, k, b)`` -- turning red (``start_snapshot`` k, or the first red
  letter of k) the machine records its state (``RecordingRule1``) and *owes* a red
  letter of k to each output buffer (``OwesRedLetters``: ``self.owed[k]``), instead of
  sending them in the same step as EWD 864's machine does;
- ``PayRedLetter(c, k)`` -- it pays a debt by putting the red letter of k on c, in any
  step's reply: :class:`LazyReferenceNode` pays the debts of a buffer right before its
  next application message there (``SendApp(c) == MaySend(c) /\\ ...``: a buffer that
  owes a red letter takes no application message), and every debt on an ``idle`` turn
  (``RedLetterFairness``: a buffer it never sends on again must still get its red
  letter);
- ``ReceiveRedLetter`` / ``ReceiveApp`` / completion -- as in Chandy-Lamport
  (:class:`~redletter.conformance.nodes.reference.ReferenceNode`, which this node
  extends: the recording of input buffers does not change).

:class:`EagerNode` pays every debt in the step that creates it: EWD 864's atomic rule,
which is one of the lazy schedules (the lazy judge passes it too).

The mutants (:data:`MUTANTS`, each a small subclass naming its bug and the property it
breaks): ``SendAnyway`` (MCLazyLateRedLetterFailure's override of ``MaySend``: Lemma 0),
``NeverPays`` (MCLazyUnpaidFailure's ``NoRedLetterFairness``: SnapshotsComplete),
``RecordsWhenPaying`` (rule 1 at the wrong moment: Lemma 0) and ``PaysTwice``
(``RedLetterInvariant``).

Run one as a node program: ``python -m redletter.conformance.nodes.lazy [NAME]`` (no
name: the reference node; ``eager``: :class:`EagerNode`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from redletter.conformance import protocol as p
from redletter.conformance.node import Mutant, NodeFactory, serve_choice
from redletter.conformance.nodes.reference import ReferenceNode

__all__ = [
    "MUTANTS",
    "EagerNode",
    "LazyReferenceNode",
    "NeverPays",
    "PaysTwice",
    "RecordsWhenPaying",
    "SendAnyway",
    "main",
]


class LazyReferenceNode(ReferenceNode):
    """Lazy red letters, correct: pays the debt of a buffer before its next send there,
    and every debt on an idle turn."""

    algorithm: ClassVar[str] = "lazy"

    def __init__(self, init: p.Init) -> None:
        super().__init__(init)
        #: owed[k]: the output buffers (by destination) still owed a red letter of k
        self.owed: dict[int, list[str]] = {}

    # -- TurnRedLazily --------------------------------------------------------

    def send_markers(self, k: int) -> None:
        """``OwesRedLetters``: where EWD 864's machine sends its red letters on turning
        red (``ReferenceNode.turn_red`` calls this right after recording its state,
        ``RecordingRule1``), the lazy machine owes one to each output buffer."""
        self.owed[k] = list(self.out_to)

    # -- PayRedLetter ---------------------------------------------------------

    def pay(self, k: int, to: str) -> None:
        """``PayRedLetter([self, to], k)``: the red letter of k on [self, to]."""
        self.owed[k].remove(to)
        self.send(to, p.Marker(k))

    def pay_buffer(self, to: str) -> None:
        """Every debt of buffer [self, to], oldest snapshot first."""
        for k in sorted(self.owed):
            if to in self.owed[k]:
                self.pay(k, to)

    def pay_all(self) -> None:
        """Every debt, snapshot by snapshot, buffers in ``out_channels`` order."""
        for k in sorted(self.owed):
            for to in list(self.owed[k]):
                self.pay(k, to)

    # -- the steps ------------------------------------------------------------

    def on_app_send(self, to: str, payload: int) -> None:
        """``SendApp(c) == MaySend(c) /\\ ...``: pay what [self, to] is owed, then send."""
        self.pay_buffer(to)
        super().on_app_send(to, payload)

    def on_idle(self) -> None:
        """``RedLetterFairness``: an idle turn pays every debt."""
        self.pay_all()


class EagerNode(LazyReferenceNode):
    """EWD 864's rule as a lazy schedule: a machine that turns red pays every red letter
    it owes in the same step (``PayRedLetter`` right after ``TurnRedLazily``)."""

    def send_markers(self, k: int) -> None:
        super().send_markers(k)
        for to in list(self.owed[k]):
            self.pay(k, to)


class SendAnyway(LazyReferenceNode):
    """Bug: the application message goes out before the red letter owed on its buffer,
    which is paid right after it (``MaySend <- SendAnyway``, the must-fail model
    MCLazyLateRedLetterFailure).

    Breaks Lemma 0: the receiver, still white, takes a message its red sender sent
    after recording its state; the receipt is in the receiver's recorded state, the
    send is not in the sender's, so the snapshot is not reachable from S0.
    """

    def on_app_send(self, to: str, payload: int) -> None:
        self.send(to, p.AppMsg(payload))
        self.pay_buffer(to)


class NeverPays(LazyReferenceNode):
    """Bug: a debt is paid only before a send on its buffer, never on an idle turn
    (``RedLetterFairness <- NoRedLetterFairness``, the must-fail model
    MCLazyUnpaidFailure).

    Breaks SnapshotsComplete: a buffer the machine never sends on again never gets its
    red letter, so its receiver never closes that recording and the snapshot never
    completes.
    """

    def on_idle(self) -> None:
        pass


class RecordsWhenPaying(LazyReferenceNode):
    """Bug: the local state is recorded when the machine pays its first red letter of
    a snapshot, not when it turns red (an implementation that does "the snapshot work"
    in one place, when the marker goes out).

    Breaks Lemma 0 (rule 1): the state recorded includes what the machine did while
    already red, so it is not the state S* holds.
    """

    def record_state(self, k: int) -> None:
        if k in self.owed:  # turning red records nothing (k is not owed yet) ...
            super().record_state(k)

    def pay(self, k: int, to: str) -> None:
        if len(self.owed[k]) == len(self.out_to):  # ... the first payment does
            self.snapshots[k].state = self.state
            self.record_state(k)
        super().pay(k, to)


class PaysTwice(LazyReferenceNode):
    """Bug: the debts are forgotten only on idle turns, so a red letter paid before a
    send is paid again on the next idle turn (a "pending markers" list cleared in the
    wrong place).

    Breaks RedLetterInvariant: a buffer carries two red letters of one snapshot; the
    receiver would close a recording that is already closed.
    """

    def __init__(self, init: p.Init) -> None:
        super().__init__(init)
        self.paid_on_send: list[tuple[int, str]] = []

    def on_app_send(self, to: str, payload: int) -> None:
        self.paid_on_send += [(k, to) for k in sorted(self.owed) if to in self.owed[k]]
        super().on_app_send(to, payload)

    def on_idle(self) -> None:
        for k, to in self.paid_on_send:
            self.send(to, p.Marker(k))
        self.paid_on_send = []
        super().on_idle()


#: The mutants of lazy red letters, by the name of the spec's override where there is
#: one (MCLazyLateRedLetterFailure binds ``MaySend <- SendAnyway``; MCLazyUnpaidFailure
#: ``RedLetterFairness <- NoRedLetterFairness``, a node that never pays on idle).
MUTANTS: Mapping[str, Mutant] = {
    "SendAnyway": Mutant(
        SendAnyway, "Lemma 0 (an app message overtakes the red letter owed on its buffer)"
    ),
    "NeverPays": Mutant(
        NeverPays, "SnapshotsComplete under RedLetterFairness (a debt never paid on idle)"
    ),
    "RecordsWhenPaying": Mutant(
        RecordsWhenPaying, "Lemma 0 (rule 1: the state is recorded at the first payment)"
    ),
    "PaysTwice": Mutant(PaysTwice, "RedLetterInvariant (two red letters on one buffer)"),
}

#: The correct nodes: the reference (lazy) and the eager schedule.
CORRECT: Mapping[str, NodeFactory] = {"reference": LazyReferenceNode, "eager": EagerNode}


def main(argv: list[str] | None = None) -> None:
    """Serve the reference node, ``eager``, or mutant ``NAME`` on stdin/stdout."""
    nodes = {**CORRECT, **{n: m.factory for n, m in MUTANTS.items()}}
    serve_choice("redletter.conformance.nodes.lazy", nodes, argv)


if __name__ == "__main__":
    main()
