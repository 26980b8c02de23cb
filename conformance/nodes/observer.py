"""The observer with a piggybacked token (seeds/003's Algorithm section): the reference
node and its mutants, to be read next to spec/ObserverSnapshot.tla.

Every process counts the app messages it sends on each output channel and receives
from each input channel (the spec's ``nSent`` / ``nRecv``).  Per snapshot k:

- **Rule 1** (``StartSnapshot(k)``, ``start_snapshot`` k at the observer
  ``Observer[k]``, which ``init.observers`` names): the observer saves its own state
  and sends a ``request`` bearing the token of k to every other process;
- **Rule 2** (``TurnRed``): a process that first holds the token of k -- on a
  ``request``, or on an app message bearing it -- saves its state as it was before
  that message and sends it to the observer (``saved_state``, with its counts: the
  spec's ``SendsState`` and ``SendsCounts``); from then on every app message it sends
  bears the token (``TokensHeld(p)``: the ``tokens`` of ``app``);
- **Rule 3** (``Receive``'s ``Rule3``): a token-less app message reaching a process
  that holds the token of k is forwarded to the observer of k (``forward``), as a
  message that was in transit;
- **completion** (``DeclareComplete(k)`` under ``CompletionRule(k)``): the observer
  declares k complete (``completed`` of a step reply) once it has every process's
  saved state (``AllSavedStates``) and, from every channel c, as many forwarded
  messages as the counts say were in transit: ``sent on c before Src(c) held the
  token - received from c before Dst(c) did`` (``AllInTransit``).  It checks at the
  end of each of its steps, idle turns included, so it never waits for ever once it
  may declare (the spec's ``WF_vars(DeclareComplete(k))``).

The observer's own saved state and the messages it forwards to itself need no
message.  ``report`` k answers ``snapshot_ok`` (the spec's ``Snapshot(k)``) at the
observer of k and ``report_ok`` elsewhere (the saved state, no channels, complete
once the node holds the token: its part is done).

Run it as ``python -m redletter.conformance.nodes.observer [MUTANT]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from redletter.conformance import protocol as p
from redletter.conformance.node import (
    Mutant,
    NodeFailure,
    SnapshotNode,
    msg_type,
    serve_choice,
)
from redletter.conformance.protocol import JsonValue

__all__ = [
    "MUTANTS",
    "AllSavedStatesIn",
    "NeverDeclares",
    "NoForward",
    "NoPiggyback",
    "ObserverMutant",
    "ObserverReferenceNode",
    "StaleCounts",
    "main",
]


@dataclass
class _Observed:
    """What the observer of one snapshot has received (the spec's recMachine[k],
    repSent[k], repRecv[k], recBuf[k])."""

    states: dict[str, JsonValue] = field(default_factory=dict)
    sent: dict[p.Channel, int] = field(default_factory=dict)
    received: dict[p.Channel, int] = field(default_factory=dict)
    forwards: dict[p.Channel, list[int]] = field(default_factory=dict)
    complete: bool = False


class ObserverReferenceNode(SnapshotNode):
    """The correct algorithm; the base class of the mutants."""

    algorithm = "observer"

    def __init__(self, init: p.Init) -> None:
        super().__init__(init)
        #: Observer[k] for every snapshot k
        self.observers: Mapping[int, str] = dict(init.observers or {})
        self.sent_count: dict[str, int] = {q: 0 for q in self.out_to}  #: nSent, by dst
        self.received_count: dict[str, int] = {q: 0 for q in self.in_from}  #: nRecv, by src
        self.held: set[int] = set()  #: TokensHeld(self)
        self.saved: dict[int, JsonValue] = {}  #: the saved state per snapshot held
        self.observed: dict[int, _Observed] = {}  #: the snapshots this node observes

    # -- rules 1 and 2 -------------------------------------------------------

    def observer_of(self, k: int) -> str:
        """Observer[k] (a snapshot init did not name is the harness's mistake)."""
        o = self.observers.get(k)
        if o is None:
            raise NodeFailure("bad-request", f"init.observers names no observer of snapshot {k}")
        return o

    def turn_red(self, k: int) -> None:
        """TurnRed(self, {k}): save the state, send it with the counts to the observer."""
        self.held.add(k)
        self.saved[k] = self.state
        sent, received = dict(self.sent_count), dict(self.received_count)
        o = self.observer_of(k)
        if o == self.node_id:
            self.take_saved_state(k, self.node_id, self.state, sent, received)
        else:
            self.send(o, p.SavedState(k, self.state, sent, received))

    def on_start_snapshot(self, k: int) -> None:
        if self.observer_of(k) != self.node_id:
            raise NodeFailure(
                "precondition-failed",
                f"{self.node_id} is not the observer of snapshot {k} ({self.observer_of(k)} is)",
            )
        if k in self.held:
            raise NodeFailure("precondition-failed", f"snapshot {k} has started already")
        self.observed[k] = _Observed()
        self.turn_red(k)
        for q in self.node_ids:
            if q != self.node_id:
                self.send(q, p.SnapshotRequest(k))
        self.check_completion()

    def tokens(self) -> tuple[int, ...]:
        """The tokens an app message sent now bears: TokensHeld(self)."""
        return tuple(sorted(self.held))

    def on_app_send(self, to: str, payload: int) -> None:
        self.sent_count[to] += 1
        self.send(to, p.AppMsg(payload, self.tokens()))
        self.check_completion()

    def on_app_internal(self, event: int) -> None:
        self.check_completion()

    def on_idle(self) -> None:
        self.check_completion()

    def receive_app(self, frm: str, msg: p.AppMsg, new_state: JsonValue) -> None:
        """Receive(c, m): rule 2 for every new token, rule 3 for every snapshot held
        whose token m does not bear, then the receipt (count and new state)."""
        toks = set(msg.tokens or ())
        for k in sorted(toks - self.held):
            self.turn_red(k)
        for k in sorted(self.held - toks):
            self.forward(k, frm, msg.payload)
        self.received_count[frm] += 1
        self.state = new_state

    def forward(self, k: int, frm: str, payload: int) -> None:
        """Rule 3: the message was in transit in snapshot k."""
        o = self.observer_of(k)
        if o == self.node_id:
            self.take_forward(k, self.node_id, frm, payload)
        else:
            self.send(o, p.Forward(k, frm, payload))

    # -- the observer's side -------------------------------------------------

    def observing(self, k: int, what: str) -> _Observed:
        obs = self.observed.get(k)
        if obs is None:
            raise NodeFailure(
                "bad-request",
                f"{self.node_id} received {what} of snapshot {k}, which it does "
                "not observe (or has not started)",
            )
        return obs

    def take_saved_state(
        self,
        k: int,
        node: str,
        state: JsonValue,
        sent: Mapping[str, int],
        received: Mapping[str, int],
    ) -> None:
        """SendsState, SendsCounts: the observer stores node's report."""
        obs = self.observing(k, "a saved state")
        if node in obs.states:
            raise NodeFailure("bad-request", f"{node} sent its saved state of {k} twice")
        obs.states[node] = state
        for dst, n in sent.items():
            obs.sent[(node, dst)] = n
        for src, n in received.items():
            obs.received[(src, node)] = n

    def take_forward(self, k: int, node: str, frm: str, payload: int) -> None:
        """Rule 3 at the observer: the message is in transit on [frm, node]."""
        self.observing(k, "a forwarded message").forwards.setdefault((frm, node), []).append(
            payload
        )

    def completion_rule(self, k: int) -> bool:
        """CompletionRule(k): every saved state, and every message in transit."""
        obs = self.observed[k]
        if set(obs.states) != set(self.node_ids):  # AllSavedStates
            return False
        chans = set(obs.sent) | set(obs.received)
        return all(  # AllInTransit
            c in obs.sent
            and c in obs.received
            and len(obs.forwards.get(c, ())) == obs.sent[c] - obs.received[c]
            for c in chans
        )

    def check_completion(self) -> None:
        """DeclareComplete: every snapshot this node may declare complete, it does."""
        for k in sorted(self.observed):
            obs = self.observed[k]
            if not obs.complete and self.completion_rule(k):
                obs.complete = True
                self.complete(k)

    # -- dispatch ------------------------------------------------------------

    def handle(self, body: p.Request) -> p.Reply:
        if isinstance(body, p.Deliver):
            self._sent, self._recorded, self._completed = [], [], []
            try:
                self.deliver(body.from_, body.msg, body.new_state)
            except NodeFailure as exc:
                return p.Error(body.msg_id, None, exc.code, exc.text)
            return p.DeliverOk(body.msg_id, None, *self._effects())
        if isinstance(body, p.Report) and self.observers.get(body.snapshot) == self.node_id:
            obs = self.observed.get(body.snapshot, _Observed())
            return p.SnapshotOk(
                body.msg_id,
                None,
                obs.complete,
                dict(obs.states),
                tuple(
                    p.InTransit(c, tuple(sorted(xs)))
                    for c, xs in sorted(obs.forwards.items())
                    if xs
                ),
            )
        return super().handle(body)

    def deliver(self, frm: str, msg: p.WireMsg, new_state: JsonValue) -> None:
        """One ``deliver``: an app message on [frm, self], or a message of the
        observer's channels from frm."""
        if isinstance(msg, p.AppMsg):
            if frm not in self.in_from:
                raise NodeFailure("bad-request", f"{frm} -> {self.node_id} is not an input channel")
            self.receive_app(frm, msg, new_state)
        elif isinstance(msg, p.SnapshotRequest):
            if self.observer_of(msg.snapshot) != frm:
                raise NodeFailure(
                    "bad-request",
                    f"the request of snapshot {msg.snapshot} came from {frm}, "
                    "not from its observer",
                )
            if msg.snapshot not in self.held:  # ReceiveRequest: turn red unless red already
                self.turn_red(msg.snapshot)
        elif isinstance(msg, p.SavedState):
            self.take_saved_state(msg.snapshot, frm, msg.state, msg.sent, msg.received)
        elif isinstance(msg, p.Forward):
            self.take_forward(msg.snapshot, frm, msg.from_, msg.payload)
        else:
            raise NodeFailure("unsupported", f"the observer algorithm has no {msg_type(msg)}")
        self.check_completion()

    # The Chandy-Lamport hooks this algorithm does not use.

    def on_marker(self, frm: str, k: int) -> None:
        raise NodeFailure("unsupported", "the observer algorithm has no markers")

    def on_app_message(self, frm: str, payload: int) -> None:
        raise AssertionError("deliver() handles app messages")

    def report(self, k: int) -> tuple[JsonValue, Mapping[str, tuple[int, ...]], bool]:
        """A process that is not the observer of k: its saved state, no channels,
        complete once it holds the token (its part of k is done)."""
        return self.saved.get(k), {}, k in self.held


# --------------------------------------------------------------------------- mutants


class AllSavedStatesIn(ObserverReferenceNode):
    """Bug: the observer declares the snapshot complete as soon as every saved state is
    in, without the message counts (the spec's must-fail override ``CompletionRule <-
    AllSavedStatesIn``, model MCObserverEarlyFailure).

    Breaks Lemma 0: a white message still in transit, forwarded later, is missing
    from the snapshot declared complete (what TLC's counterexample of
    MCObserverEarlyFailure shows).
    """

    def completion_rule(self, k: int) -> bool:
        return set(self.observed[k].states) == set(self.node_ids)


class NoPiggyback(ObserverReferenceNode):
    """Bug: app messages never bear the token (rule 2's "attaches the snapshot token to
    all subsequent messages" is left out).

    Breaks RedMessagesFromRedMachines and so Lemma 0: a message sent after its sender
    saved its state is taken as white, so its receiver either accepts it before saving
    its own state or forwards it as in transit: either way it is counted in the
    snapshot although it was sent after it.
    """

    def tokens(self) -> tuple[int, ...]:
        return ()


class NoForward(ObserverReferenceNode):
    """Bug: a token-less message reaching a process that holds the token is accepted but
    not forwarded to the observer (rule 3 is left out).

    Breaks Lemma 0: the message was in transit in the snapshot, which misses it; with
    the counts the observer then never completes (SnapshotsComplete).
    """

    def forward(self, k: int, frm: str, payload: int) -> None:
        return None


class StaleCounts(ObserverReferenceNode):
    """Bug: a process that turns red on an app message counts that message as received
    before it reports its counts (the count is taken after the receipt, the saved
    state before it).

    Breaks CountsInvariant: the observer waits for one forward too few from that
    channel, so it may declare the snapshot complete with a message in transit still
    to come (Lemma 0).
    """

    def receive_app(self, frm: str, msg: p.AppMsg, new_state: JsonValue) -> None:
        if set(msg.tokens or ()) - self.held:
            self.received_count[frm] += 1
            super().receive_app(frm, msg, new_state)
            self.received_count[frm] -= 1
        else:
            super().receive_app(frm, msg, new_state)


class NeverDeclares(ObserverReferenceNode):
    """Bug: the observer builds the snapshot but never declares it complete (it waits
    for something the counts do not ask for).

    Breaks SnapshotsComplete: once CompletionRule(k) holds it stays true, and
    ``WF_vars(DeclareComplete(k))`` says the observer eventually declares.
    """

    def completion_rule(self, k: int) -> bool:
        return False


#: A mutant of the observer algorithm (the one record of every variant's mutants).
ObserverMutant = Mutant


MUTANTS: Mapping[str, ObserverMutant] = {
    "AllSavedStatesIn": ObserverMutant(
        AllSavedStatesIn, "Lemma0 (CompletionRule <- AllSavedStatesIn, MCObserverEarlyFailure)"
    ),
    "NoPiggyback": ObserverMutant(NoPiggyback, "RedMessagesFromRedMachines, Lemma0"),
    "NoForward": ObserverMutant(NoForward, "Lemma0 (Rule3), SnapshotsComplete"),
    "StaleCounts": ObserverMutant(StaleCounts, "CountsInvariant, Lemma0"),
    "NeverDeclares": ObserverMutant(NeverDeclares, "SnapshotsComplete (WF DeclareComplete)"),
}


def main(argv: list[str] | None = None) -> None:
    """Serve the reference node, or mutant ``MUTANT`` (the argument), on stdin/stdout."""
    nodes = {"reference": ObserverReferenceNode, **{n: m.factory for n, m in MUTANTS.items()}}
    serve_choice("redletter.conformance.nodes.observer", nodes, argv)


if __name__ == "__main__":
    main()
