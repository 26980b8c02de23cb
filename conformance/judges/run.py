"""Judge a COS 418 run against the run itself: the course's events of its log.

The COS 418 driver (``conformance/adapters/cos418/driver/``) runs a scenario in a
package exactly as the course's harness does and writes one document
(:mod:`redletter.conformance.judges.rundoc`): the steps it took, the events the
simulator's logger gained in each, and the snapshots ``CollectSnapshot``
returned.  :mod:`redletter.conformance.judges.courselog` keeps the course's own
events of that log (never the student's own records) and says whether they can
be read consistently.

:func:`judge_run` replays those events, step by step, in a reference
Chandy–Lamport implementation at the level of the COS 418 interface, and checks
each step against the algorithm's rules:

- a server that starts a snapshot, or receives the first marker of one, records
  its state then and sends a marker on every outbound link *in that same step*
  (before any other message on it); it never sends a marker it has not recorded
  for, nor two on one link;
- the channel of the first marker is recorded empty; every other inbound channel
  is recorded from that moment until its marker arrives;
- a server's part of a snapshot ends when the marker has arrived on every
  inbound channel (not before), and every started snapshot completes;
- the snapshot ``CollectSnapshot`` returns is the one the algorithm records for
  *this* run: each server's tokens at its recording, each channel's messages,
  and it is returned once the snapshot is complete, not before.

A log is the package's own writing, so a departure seen only in the log is not
held against the package: the verdict is ``fail`` only when a snapshot the
package returned differs from what the algorithm records for the logged run, or
a snapshot was never collected; the first departure, which explains why, is
reported in words naming the rule it breaks, as a
:class:`~redletter.conformance.verdict.Divergence` in a :class:`RunJudgement`.
A snapshot can be consistent (some FIFO schedule yields it) and still be wrong
for its run: a server that records and sends its markers late records a later
moment than the one asked for.  Only this judge sees that.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Final

from redletter.conformance.formats.cos418 import (
    Link,
    RecordedMessage,
    Send,
    Snap,
    Snapshot,
    Step,
)
from redletter.conformance.judges.courselog import CourseLog, read_course_log
from redletter.conformance.judges.expected import ExpectedRun, expected_run
from redletter.conformance.judges.rundoc import (
    LoggedEvent,
    RecordedSnapshot,
    RunDocument,
    RunStep,
)
from redletter.conformance.verdict import Divergence, Verdict

__all__ = ["RETURNED_KINDS", "Difference", "RunJudgement", "differences", "judge_run", "show_link"]

# --------------------------------------------------------------------------- the judgement


@dataclass(frozen=True)
class RunJudgement:
    """The run judge's verdict (a :class:`~redletter.conformance.verdict.Result`).

    ``kind`` names the rule broken (``""`` for a pass): it is what "fails the same
    way" compares when a failing scenario is shrunk.  ``expected`` holds the
    snapshots Chandy–Lamport records on the logged run's application schedule with
    every marker sent when the rules say (:mod:`~redletter.conformance.judges.expected`:
    the package's late or missing markers are the finding, never an input to the
    expectation), ``recorded`` those the package returned; ``expected_run`` is that
    run, event by event (what a report draws).
    """

    verdict: Verdict
    kind: str
    message: str
    divergence: Divergence | None = None
    steps: tuple[Step, ...] = ()
    expected: tuple[Snap, ...] = ()
    recorded: tuple[Snap, ...] = ()
    notes: tuple[str, ...] = ()
    #: the log's course events could be read consistently (else: unknown)
    log_usable: bool = True
    #: a pass whose log departs from the rules without changing a returned
    #: snapshot: the fail the log alone would give (for the caller to confirm
    #: with evidence that does not depend on the log)
    unconfirmed: RunJudgement | None = None
    expected_run: ExpectedRun | None = None
    #: where the returned snapshots differ from the expected ones (a fail's message
    #: lists them)
    differences: tuple[Difference, ...] = ()

    @property
    def schedule(self) -> tuple[Step, ...]:
        """The logged run in the spec's vocabulary (SendApp, ReceiveApp, ...)."""
        return self.steps

    @property
    def finding(self) -> RunJudgement | None:
        """The judgement that explains a failure: this one when it fails, else the fail
        the log alone gives (``unconfirmed``) when there is one."""
        return self if self.verdict == Verdict.FAIL else self.unconfirmed

    def explanation(self) -> str:
        return self.message


#: Findings about what the package returned (or when): a fail rests on these.
RETURNED_KINDS: Final = frozenset(
    {
        "wrong-id",
        "wrong-servers",
        "wrong-state",
        "recorded-marker",
        "first-channel-recorded",
        "recorded-after-marker",
        "recorded-before-state",
        "recorded-unknown",
        "missing-in-flight",
        "channel-order",
        "overwritten",
        "collected-early",
        "never-completes",
        "collect-hang",
        "collect-panic",
    }
)


def show_link(link: Link) -> str:
    return f"{link[0]}→{link[1]}"


def _show_msgs(ns: Sequence[int]) -> str:
    return "[" + ", ".join(f"token({n})" for n in ns) + "]" if ns else "nothing"


_RULE: Final[Mapping[str, str]] = {
    "fifo": "links are FIFO: a server receives the messages of a link in the order they were sent",
    "unexpected-send": "the only application messages are the scenario's sends, each made at its"
    " event",
    "send-missing": "each send event of the scenario puts its tokens on the link at once",
    "unknown-message": "the only messages on links are tokens and markers",
    "marker-unrecorded": "a server sends the marker of a snapshot only once it has recorded its"
    " state for it",
    "marker-twice": "a server sends one marker per snapshot on each outbound link",
    "marker-missing": "a server that records its state for a snapshot sends the marker on every"
    " outbound link",
    "late-marker": "a server that records its state (when it starts a snapshot, or receives the"
    " snapshot's first marker) sends a marker on every outbound link in that same step",
    "marker-overtaken": "a server sends its markers right after recording its state, before any"
    " other message on those links: a message sent after the recording must arrive after the"
    " marker",
    "late-recording": "a server that starts a snapshot records its state and sends its markers"
    " at once, in the step the snapshot starts",
    "ended-early": "a server's part of a snapshot ends only when the marker has arrived on"
    " every inbound channel",
    "never-completes": "a server's part of a snapshot ends when the marker has arrived on every"
    " inbound channel, and then the snapshot completes",
    "collect-hang": "CollectSnapshot returns once every server has finished its part",
    "collect-panic": "CollectSnapshot returns the snapshot once it is complete",
    "wrong-id": "CollectSnapshot(id) returns the snapshot with that id",
    "wrong-servers": "a snapshot holds the recorded state of every server, and only those",
    "wrong-state": "a server records its state when it starts the snapshot or receives its"
    " first marker",
    "recorded-marker": "markers are not recorded as in-flight messages",
    "first-channel-recorded": "a channel is recorded only until its marker arrives, so the"
    " channel a server's first marker came on is recorded empty",
    "recorded-after-marker": "a channel is recorded only until its marker arrives",
    "recorded-before-state": "a channel is recorded only from the moment its receiver records its"
    " state (earlier messages are part of that state)",
    "recorded-unknown": "a channel's recording holds the messages that arrived on it",
    "missing-in-flight": "every message that arrives on a channel after its receiver recorded its"
    " state and before the channel's marker is recorded as in flight",
    "channel-order": "a channel's recorded messages keep the order they arrived in",
    "overwritten": "each snapshot keeps its own recorded messages: recording one snapshot must"
    " not change another",
    "collected-early": "CollectSnapshot returns a snapshot once every server has finished its"
    " part of it, not before",
}


@dataclass
class _Finding:
    kind: str
    step: int  # index into the document's steps (len(steps) for the end of the run)
    node: str
    summary: str
    model_did: str
    extra: list[str] = field(default_factory=list)
    marker: tuple[int, Link] | None = None  #: the late marker of a late-marker finding


@dataclass
class _Rec:
    step: int
    time: int
    first: Link | None  # the first marker's channel, None for the initiator
    tokens: int
    seq: int = 0  # position of the recording among the run's events


class _Replay:
    """The reference: the logged run replayed under Chandy–Lamport's rules."""

    def __init__(self, doc: RunDocument) -> None:
        self.doc = doc
        top = doc.topology
        self.top = top
        self.ids = top.ids
        self.links = set(top.links)
        self.inbound = {s: top.inbound(s) for s in self.ids}
        self.outbound = {s: top.outbound(s) for s in self.ids}
        self.tokens = {s.id: s.tokens for s in top.servers}
        self.queues: dict[Link, deque[tuple[LoggedEvent, int]]] = {
            link: deque() for link in top.links
        }
        #: per link: (receive step, time, message shown, send step, event position)
        self.deliveries: dict[Link, list[tuple[int, int, str, int, int]]] = {
            link: [] for link in top.links
        }
        self.findings: list[_Finding] = []
        self.broken = False
        self.steps_out: list[Step] = []
        self.snap_ids = [s.id for s in doc.snapshots]
        self.snap_by_event = {s.event_index: s for s in doc.snapshots}
        # per snapshot k
        self.rec: dict[int, dict[str, _Rec]] = {k: {} for k in self.snap_ids}
        self.recording: dict[int, dict[Link, list[tuple[int, int]]]] = {
            k: {} for k in self.snap_ids
        }
        self.closed: dict[int, dict[Link, tuple[int, ...]]] = {k: {} for k in self.snap_ids}
        self.marker_sent: dict[tuple[int, Link], tuple[int, int]] = {}
        self.marker_arrived: dict[tuple[int, Link], tuple[int, int]] = {}
        self.ended: dict[tuple[int, str], tuple[int, int]] = {}
        # history
        self.receipts: dict[Link, list[tuple[int, int, int]]] = {link: [] for link in top.links}
        self.token_sends: dict[Link, list[tuple[int, int, int]]] = {link: [] for link in top.links}
        self.held: dict[str, list[tuple[int, int, int]]] = {
            s.id: [(-1, 0, s.tokens)] for s in top.servers
        }
        self.pending: list[tuple[int, str, int]] = []  # (k, server, step) to check markers
        self.seq = 0  # events processed so far
        self.any_end = any(e.event == "snapshot_end" for st in doc.steps for e in st.events)

    # -- helpers

    def find(self, kind: str, step: int, node: str, summary: str, model_did: str) -> _Finding:
        f = _Finding(kind, step, node, summary, model_did)
        self.findings.append(f)
        return f

    def moment(self, step: int) -> str:
        """``after event 3 (`send N1 N2 2`) at time 0`` or ``at time 7``."""
        if 0 <= step < len(self.doc.steps):
            st = self.doc.steps[step]
            events = self.doc.scenario.events
            if st.phase == "inject" and st.event_index is not None:
                e = events[st.event_index]
                shown = (
                    f"send {e.src} {e.dst} {e.n}"
                    if isinstance(e, Send)
                    else f"snapshot {e.server}"
                    if isinstance(e, Snapshot)
                    else "tick"
                )
                return f"after event {st.event_index + 1} (`{shown}`) at time {st.time}"
            return f"at time {st.time}"
        return f"at time {self.doc.time}"

    def time_of(self, step: int) -> int:
        if 0 <= step < len(self.doc.steps):
            return self.doc.steps[step].time
        return self.doc.time

    def record(self, k: int, server: str, step: int, first: Link | None) -> None:
        self.rec[k][server] = _Rec(step, self.time_of(step), first, self.tokens[server], self.seq)
        for link in self.inbound[server]:
            if link == first:
                self.closed[k][link] = ()
            else:
                self.recording[k][link] = []
        self.pending.append((k, server, step))

    # -- the replay

    def run(self) -> None:
        scenario = self.doc.scenario.events
        for i, st in enumerate(self.doc.steps):
            if self.broken:
                return
            ev = (
                scenario[st.event_index]
                if st.event_index is not None
                and st.phase == "inject"
                and 0 <= st.event_index < len(scenario)
                else None
            )
            start = (
                self.snap_by_event.get(st.event_index)
                if isinstance(ev, Snapshot) and st.event_index is not None
                else None
            )
            if start is not None and start.initiator in self.tokens:
                self.steps_out.append(("StartSnapshot", {"p": start.initiator, "k": start.id}))
                self.record(start.id, start.initiator, i, None)
            expected_send = ev if isinstance(ev, Send) else None
            for e in st.events:
                self.seq += 1
                self.event(i, st, e, expected_send)
                if (
                    e.event == "send"
                    and expected_send is not None
                    and e.message == "token"
                    and (e.src, e.dest, e.tokens)
                    == (expected_send.src, expected_send.dst, expected_send.n)
                ):
                    expected_send = None
                if self.stopped():
                    return
            if expected_send is not None and self.has_sends():
                self.find(
                    "send-missing",
                    i,
                    expected_send.src,
                    f"at time {st.time}, the scenario's event `send {expected_send.src} "
                    f"{expected_send.dst} {expected_send.n}` logged no such send",
                    f"{expected_send.src} puts token({expected_send.n}) on "
                    f"{show_link((expected_send.src, expected_send.dst))} at once",
                )
            self.check_markers(i)

    def stopped(self) -> bool:
        """The replay cannot go on (the log broke FIFO or named an unknown link)."""
        return self.broken

    def has_sends(self) -> bool:
        return any(e.event == "send" for st in self.doc.steps for e in st.events)

    def event(self, i: int, st: RunStep, e: LoggedEvent, expected_send: Send | None) -> None:
        if e.event in ("send", "receive"):
            if e.link not in self.links:
                self.find(
                    "unknown-message",
                    i,
                    e.src,
                    f"at time {st.time}, the log shows a {e.event} on {show_link(e.link)}, which is"
                    " not a link of the topology",
                    "messages travel on the topology's links only",
                )
                self.broken = True
                return
            if e.message not in ("token", "marker"):
                self.find(
                    "unknown-message",
                    i,
                    e.src,
                    f"at time {st.time}, {e.src} sent {e.show_message()} on {show_link(e.link)}",
                    "only tokens and markers travel on links",
                )
                self.broken = True
                return
        if e.event == "send":
            self.send(i, st, e, expected_send)
        elif e.event == "receive":
            self.receive(i, st, e)
        elif e.event == "snapshot_end":
            self.end(i, st, e)
        # snapshot_start: the reference starts snapshots at their inject step.

    def send(self, i: int, st: RunStep, e: LoggedEvent, expected_send: Send | None) -> None:
        link = e.link
        if e.message == "token":
            if expected_send is None or (e.src, e.dest, e.tokens) != (
                expected_send.src,
                expected_send.dst,
                expected_send.n,
            ):
                self.find(
                    "unexpected-send",
                    i,
                    e.src,
                    f"at time {st.time}, {e.src} sent token({e.tokens}) on {show_link(link)},"
                    " which no send event of the scenario asked for at that step",
                    "application messages are sent only by the scenario's send events",
                )
            self.tokens[e.src] -= e.tokens
            self.held[e.src].append((i, st.time, self.tokens[e.src]))
            self.token_sends[link].append((i, st.time, e.tokens))
            self.steps_out.append(("SendApp", {"c": [e.src, e.dest], "m": e.tokens}))
        else:
            k = e.snapshot_id
            if k not in self.rec:
                self.find(
                    "marker-unrecorded",
                    i,
                    e.src,
                    f"at time {st.time}, {e.src} sent marker({k}) on {show_link(link)}, but no"
                    f" snapshot {k} was started",
                    "a marker belongs to a started snapshot",
                )
            elif e.src not in self.rec[k]:
                self.find(
                    "marker-unrecorded",
                    i,
                    e.src,
                    f"at time {st.time}, {e.src} sent marker({k}) on {show_link(link)} before it"
                    f" recorded its state for snapshot {k} (it had neither started that snapshot"
                    " nor received one of its markers)",
                    f"{e.src} records its state first, then sends its markers",
                )
            elif (k, link) in self.marker_sent:
                self.find(
                    "marker-twice",
                    i,
                    e.src,
                    f"at time {st.time}, {e.src} sent marker({k}) on {show_link(link)} a second"
                    f" time (the first at time {self.marker_sent[(k, link)][1]})",
                    f"{e.src} sends one marker of snapshot {k} per outbound link",
                )
            self.marker_sent.setdefault((k, link), (i, st.time))
        self.queues[link].append((e, i))

    def receive(self, i: int, st: RunStep, e: LoggedEvent) -> None:
        link = e.link
        q = self.queues[link]
        if not q:
            self.find(
                "fifo",
                i,
                e.dest,
                f"at time {st.time}, {e.dest} received {e.show_message()} on {show_link(link)},"
                " but no message was in flight on that link",
                "a server receives only messages that were sent to it",
            )
            self.broken = True
            return
        head, sent_at = q[0]
        if (head.message, head.tokens, head.snapshot_id) != (e.message, e.tokens, e.snapshot_id):
            order = ", ".join(m.show_message() for m, _ in list(q)[:4])
            self.find(
                "fifo",
                i,
                e.dest,
                f"at time {st.time}, {e.dest} received {e.show_message()} on {show_link(link)},"
                f" but the oldest message in flight on that link was {head.show_message()}"
                f" (in flight, oldest first: {order})",
                f"{e.dest} receives {head.show_message()} next on that link",
            )
            self.broken = True
            return
        q.popleft()
        self.deliveries[link].append((i, st.time, e.show_message(), sent_at, self.seq))
        if e.message == "token":
            self.tokens[e.dest] += e.tokens
            self.held[e.dest].append((i, st.time, self.tokens[e.dest]))
            self.receipts[link].append((i, st.time, e.tokens))
            for k in self.snap_ids:
                chan = self.recording[k].get(link)
                if chan is not None:
                    chan.append((i, e.tokens))
            self.steps_out.append(("ReceiveApp", {"c": [e.src, e.dest], "i": 1}))
            return
        k = e.snapshot_id
        self.steps_out.append(("ReceiveRedLetter", {"c": [e.src, e.dest], "i": 1}))
        if k not in self.rec:
            return  # reported at the send
        self.marker_arrived.setdefault((k, link), (i, st.time))
        if e.dest not in self.rec[k]:
            self.record(k, e.dest, i, link)
        elif link in self.recording[k]:
            self.closed[k][link] = tuple(n for _, n in self.recording[k].pop(link))

    def end(self, i: int, st: RunStep, e: LoggedEvent) -> None:
        k, p = e.snapshot_id, e.server
        if k not in self.rec or p not in self.inbound:
            return
        if (k, p) in self.ended:
            return
        self.ended[(k, p)] = (i, st.time)
        waiting = [link for link in self.inbound[p] if link not in self.closed[k]]
        if p not in self.rec[k]:
            self.find(
                "ended-early",
                i,
                p,
                f"at time {st.time}, {p} reported its part of snapshot {k} done before it had"
                f" recorded its state for it (no marker of snapshot {k} had reached it)",
                f"{p} finishes snapshot {k} once the marker has arrived on each of its inbound"
                " channels",
            )
        elif waiting:
            shown = ", ".join(show_link(link) for link in waiting)
            self.find(
                "ended-early",
                i,
                p,
                f"at time {st.time}, {p} reported its part of snapshot {k} done, but the marker"
                f" of snapshot {k} had not yet arrived on {shown}",
                f"{p} keeps recording {shown} until that marker arrives",
            )

    def check_markers(self, i: int) -> None:
        still = []
        for k, p, step in self.pending:
            if step != i:
                still.append((k, p, step))
                continue
            for link in self.outbound[p]:
                if (k, link) not in self.marker_sent:
                    self.late_marker(k, p, link, step)
                    break
        self.pending = still

    def late_marker(self, k: int, p: str, link: Link, step: int) -> None:
        r = self.rec[k][p]
        how = (
            f"started snapshot {k}"
            if r.first is None
            else f"received its first marker of snapshot {k} (on {show_link(r.first)})"
        )
        f = self.find(
            "late-marker",
            step,
            p,
            f"at time {r.time}, {p} {how} but sent no marker on {show_link(link)} in that step",
            f"{p} records its state and sends marker({k}) on each outbound link in that same step",
        )
        f.marker = (k, link)  # resolved in finish(), once the whole run is known

    # -- after the run

    def finish(self) -> None:
        """Resolve late markers (when did they go out, what overtook them?), then check
        completion and the returned snapshots."""
        last = len(self.doc.steps)
        for f in self.findings:
            if f.kind != "late-marker" or f.marker is None:
                continue
            k, link = f.marker
            r = self.rec[k][f.node]
            sent = self.marker_sent.get((k, link))
            overtook = [
                (t, n)
                for (j, t, n) in self.token_sends[link]
                if r.step <= j and (sent is None or j <= sent[0])
            ]
            if sent is None:
                f.kind = "marker-missing"
                f.summary += "; it never sent one"
            else:
                f.summary += f"; it sent it only at time {sent[1]}"
            recorded = self.returned_tokens(k, f.node)
            if sent is not None and recorded is not None and recorded != r.tokens:
                moments = [
                    j for j, _, v in self.held[f.node] if r.step <= j <= sent[0] and v == recorded
                ]
                if moments:
                    f.kind = "late-recording" if r.first is None else "late-marker"
                    f.extra.append(
                        f"Its recorded state ({recorded} tokens) is what it held later,"
                        f" {self.moment(moments[-1])}, not the {r.tokens} it held when"
                        f" {'the snapshot started' if r.first is None else 'the marker came'}:"
                        " the snapshot shows a later moment than the one it was asked for"
                    )
                    continue
            if sent is not None:
                ahead = [
                    (t, shown)
                    for (j, t, shown, at, seq) in self.deliveries[link]
                    if at <= r.step and seq > r.seq and j <= sent[0]
                ]
                if ahead and self.time_of(sent[0]) - ahead[-1][0] <= 1:
                    f.extra.append(
                        f"It held the marker until the message(s) already in flight on that"
                        f" link ({', '.join(m for _, m in ahead)}) were delivered, the last at"
                        f" time {ahead[-1][0]}; a marker needs no such wait: sent at once, it"
                        " queues behind them, and the link's FIFO order keeps it there"
                    )
            if overtook:
                f.kind = "marker-overtaken"
                shown = ", ".join(f"token({n}) at time {t}" for t, n in overtook)
                f.extra.append(
                    f"Meanwhile {f.node} sent {shown} on {show_link(link)}: sent after its"
                    " recording, it arrives ahead of the marker and is counted twice, in"
                    f" {f.node}'s recorded state and again by {link[1]} (in its state or on"
                    " the channel)"
                )
        # completion
        for s in self.doc.snapshots:
            k = s.id
            if s.status == "not_collected":
                self.never_completed(s, last)
            elif s.status == "panic":
                self.find(
                    "collect-panic",
                    last,
                    s.initiator,
                    f"CollectSnapshot({k}) panicked: {s.error.splitlines()[0] if s.error else '?'}",
                    f"CollectSnapshot({k}) returns the snapshot",
                )
            elif s.status == "nil":
                self.find(
                    "collect-panic",
                    last,
                    s.initiator,
                    f"CollectSnapshot({k}) returned nil",
                    f"CollectSnapshot({k}) returns the snapshot",
                )
            elif s.status == "collected":
                self.compare(s, last)

    def returned_tokens(self, k: int, p: str) -> int | None:
        for s in self.doc.snapshots:
            if s.id == k and s.tokens is not None:
                return dict(s.tokens).get(p)
        return None

    def tokens_at(self, p: str, step: int) -> int:
        """What ``p`` held after ``step``."""
        held = self.held[p][0][2]
        for j, _, n in self.held[p]:
            if j > step:
                break
            held = n
        return held

    def times_held(self, p: str, n: int, before: int) -> list[int]:
        return [t for j, t, v in self.held[p] if v == n and j != -1 and j < before]

    def never_completed(self, s: RecordedSnapshot, last: int) -> None:
        k = s.id
        done = [
            p
            for p in self.ids
            if p in self.rec[k] and all(link in self.closed[k] for link in self.inbound[p])
        ]
        stuck = [p for p in done if (k, p) not in self.ended]
        if stuck and self.any_end:
            p = stuck[0]
            arrivals = [self.marker_arrived.get((k, link)) for link in self.inbound[p]]
            lastt = max((a[1] for a in arrivals if a is not None), default=self.rec[k][p].time)
            first = self.rec[k][p].first
            how = f" (the first on {show_link(first)})" if first is not None else ""
            self.find(
                "never-completes",
                last,
                p,
                f"snapshot {k} never completed: {p} had received its marker on every inbound"
                f" channel{how} by time {lastt}, yet it never reported its part done"
                f" ({len(stuck)} of {len(self.ids)} servers never did)",
                f"{p} finishes snapshot {k} when the last of those markers arrives",
            )
        elif not stuck and len(done) == len(self.ids):
            self.find(
                "collect-hang",
                last,
                s.initiator,
                f"CollectSnapshot({k}) did not return, although every server had received its"
                f" marker of snapshot {k} on every inbound channel"
                + (" and reported its part done" if self.any_end else ""),
                f"CollectSnapshot({k}) returns the completed snapshot",
            )
        else:
            missing = [p for p in self.ids if p not in done]
            self.find(
                "never-completes",
                last,
                missing[0] if missing else s.initiator,
                f"snapshot {k} never completed: the markers of snapshot {k} never reached every"
                f" channel in the run (still waiting: {', '.join(missing)})",
                f"every server records snapshot {k} and sends its markers",
            )

    def expected_snap(self, k: int) -> Snap | None:
        if len(self.rec[k]) != len(self.ids) or self.recording[k]:
            return None
        order = {s: i for i, s in enumerate(self.ids)}
        msgs = [
            RecordedMessage(a, b, n)
            for (a, b) in sorted(self.closed[k], key=lambda link: (order[link[1]], order[link[0]]))
            for n in self.closed[k][(a, b)]
        ]
        return Snap(k, tuple((p, self.rec[k][p].tokens) for p in self.ids), tuple(msgs))

    def collected_early(self, s: RecordedSnapshot, last: int) -> bool:
        """Did ``CollectSnapshot`` return snapshot ``s`` before it was complete, and
        with other contents than the complete one?  Adds the finding; True if so."""
        k = s.id
        exp, got = self.expected_snap(k), s.as_snap()
        if exp is not None and exp == got:
            return False
        waiting = [
            p
            for p in self.ids
            if p not in self.rec[k] or any(c not in self.closed[k] for c in self.inbound[p])
        ]
        when = f" at time {s.returned_time}" if s.returned_time is not None else ""
        if waiting:
            p = waiting[0]
            open_ = [c for c in self.inbound[p] if c not in self.closed[k]]
            how = (
                "had not recorded its state"
                if p not in self.rec[k]
                else f"was still recording {', '.join(show_link(c) for c in open_)}"
            )
            self.find(
                "collected-early",
                last,
                p,
                f"CollectSnapshot({k}) returned{when}, but by the run's log {p} {how} for"
                f" snapshot {k} and never finished it in this run",
                f"CollectSnapshot({k}) waits until every server has finished its part",
            )
            return True
        if s.returned_time is None:
            return False
        arrivals = [
            (self.marker_arrived[(k, c)], c)
            for p in self.ids
            for c in self.inbound[p]
            if (k, c) in self.marker_arrived
        ]
        recs = [((r.step, r.time), None) for r in self.rec[k].values()]
        (step, t), link = max([*arrivals, *recs], key=lambda x: x[0][0])
        if s.returned_time >= t:
            return False
        p = link[1] if link is not None else s.initiator
        self.find(
            "collected-early",
            step,
            p,
            f"CollectSnapshot({k}) returned at time {s.returned_time}, but snapshot {k} was"
            f" complete only at time {t}, when {p} received its last marker"
            + (f" (on {show_link(link)})" if link is not None else ""),
            f"CollectSnapshot({k}) waits until every server has finished its part",
        )
        return True

    def compare(self, s: RecordedSnapshot, last: int) -> None:
        k = s.id
        if self.collected_early(s, last):
            return
        if s.returned_id is not None and s.returned_id != k:
            self.find(
                "wrong-id",
                last,
                s.initiator,
                f"CollectSnapshot({k}) returned a snapshot whose id is {s.returned_id}",
                f"CollectSnapshot({k}) returns snapshot {k}",
            )
        tokens = dict(s.tokens or ())
        extra = sorted(set(tokens) - set(self.ids))
        missing = [p for p in self.ids if p not in tokens]
        if extra or missing:
            parts = ([f"no state of {', '.join(missing)}"] if missing else []) + (
                [f"a state of unknown server(s) {', '.join(extra)}"] if extra else []
            )
            self.find(
                "wrong-servers",
                last,
                (missing or extra)[0],
                f"snapshot {k} holds {' and '.join(parts)}",
                f"snapshot {k} holds the recorded state of each of the {len(self.ids)} servers",
            )
        for p in self.ids:
            r = self.rec[k].get(p)
            if r is None or p not in tokens or tokens[p] == r.tokens:
                continue
            how = (
                f"started snapshot {k} at time {r.time}"
                if r.first is None
                else f"received its first marker of snapshot {k} (on {show_link(r.first)})"
                f" at time {r.time}"
            )
            f = self.find(
                "wrong-state",
                r.step,
                p,
                f"{p} recorded {tokens[p]} tokens for snapshot {k}, but it held {r.tokens} when"
                f" it {how}",
                f"{p} records {r.tokens} tokens",
            )
            held = [t for t in self.times_held(p, tokens[p], last)]
            if held:
                f.extra.append(f"{tokens[p]} is what {p} held at time {held[-1]}")
        msgs = s.messages or ()
        for m in msgs:
            if m.message != "token":
                self.find(
                    "recorded-marker",
                    last,
                    m.dest,
                    f"snapshot {k} records {m.show_message()} on {show_link(m.link)} as an"
                    " in-flight message",
                    "only application messages are recorded",
                )
                return
        got: dict[Link, list[int]] = {}
        for m in msgs:
            got.setdefault(m.link, []).append(m.tokens)
        for link in got:
            if link not in self.links:
                self.find(
                    "recorded-unknown",
                    last,
                    link[1],
                    f"snapshot {k} records messages on {show_link(link)}, which is not a link",
                    "only the topology's channels are recorded",
                )
                return
        for p in self.ids:
            if p not in self.rec[k]:
                continue
            have_p = [(m.link, m.tokens) for m in msgs if m.dest == p]
            if self.overwritten(k, p, have_p, last):
                continue
            for link in self.inbound[p]:
                if link not in self.closed[k]:
                    continue
                want = list(self.closed[k][link])
                have = got.get(link, [])
                if want != have:
                    self.channel_findings(k, p, link, want, have, last)

    def channel_findings(
        self, k: int, p: str, link: Link, want: list[int], have: list[int], last: int
    ) -> list[_Finding]:
        r = self.rec[k][p]
        rec_t = r.time
        arrived = self.marker_arrived.get((k, link))
        mark_t = arrived[1] if arrived else None
        out: list[_Finding] = []
        rest = list(want)
        extras = []
        for n in have:
            if n in rest:
                rest.remove(n)
            else:
                extras.append(n)
        if not extras and not rest:
            out.append(
                self.find(
                    "channel-order",
                    last,
                    p,
                    f"snapshot {k} records {_show_msgs(have)} on {show_link(link)}, in another"
                    f" order than they arrived ({_show_msgs(want)})",
                    f"{p} records {_show_msgs(want)}",
                )
            )
            return out
        receipts = self.receipts[link]
        if r.first == link and have:
            late = [j for j, _, v in receipts if j > r.step and v in have]
            out.append(
                self.find(
                    "first-channel-recorded",
                    late[0] if late else r.step,
                    p,
                    f"snapshot {k} records {_show_msgs(have)} on {show_link(link)}, messages that"
                    f" arrived after {p}'s first marker of snapshot {k}, which came on that very"
                    f" channel (at time {rec_t})",
                    f"{p} records {show_link(link)} empty",
                )
            )
            extras, rest = [], []
        for n in extras:
            after = [
                (j, t) for j, t, v in receipts if v == n and arrived is not None and j > arrived[0]
            ]
            before = [(j, t) for j, t, v in receipts if v == n and j < r.step]
            if after:
                j, t = after[0]
                out.append(
                    self.find(
                        "recorded-after-marker",
                        j,
                        p,
                        f"snapshot {k} records token({n}) on {show_link(link)}, which arrived at"
                        f" time {t}, after that channel's marker of snapshot {k} (time {mark_t})",
                        f"{p} stops recording {show_link(link)} when its marker arrives",
                    )
                )
            elif before:
                j, t = before[-1]
                out.append(
                    self.find(
                        "recorded-before-state",
                        j,
                        p,
                        f"snapshot {k} records token({n}) on {show_link(link)}, which arrived at"
                        f" time {t}, before {p} recorded its state (time {rec_t})",
                        f"{p} counts token({n}) in its recorded state, not on the channel",
                    )
                )
            else:
                out.append(
                    self.find(
                        "recorded-unknown",
                        last,
                        p,
                        f"snapshot {k} records token({n}) on {show_link(link)}, but no such message"
                        f" arrived on that channel while it was recorded",
                        f"{p} records {_show_msgs(want)} on {show_link(link)}",
                    )
                )
        for n in rest:
            hits = [
                (j, t)
                for j, t, v in receipts
                if v == n and r.step < j and (arrived is None or j < arrived[0])
            ]
            j, t = hits[0] if hits else (last, self.doc.time)
            out.append(
                self.find(
                    "missing-in-flight",
                    j,
                    p,
                    f"snapshot {k} does not record token({n}) on {show_link(link)}: it arrived at"
                    f" time {t}, after {p} recorded its state (time {rec_t}) and before that"
                    f" channel's marker (time {mark_t}), so it was in flight",
                    f"{p} records {_show_msgs(want)} on {show_link(link)}",
                )
            )
        for f in out:
            hint = self.concurrent_hint(k, p, link, f.step)
            if hint:
                f.extra.append(hint)
        return out

    def concurrent_hint(self, k: int, p: str, link: Link, step: int) -> str:
        """Another snapshot in progress at ``p`` while ``p`` recorded ``link`` for
        snapshot ``k`` (from its recording up to ``step``)."""
        start = self.rec[k][p].step
        for j in self.snap_ids:
            if j == k or p not in self.rec[j]:
                continue
            rj = self.rec[j][p]
            arrivals = [self.marker_arrived.get((j, c)) for c in self.inbound[p]]
            done = max((a[0] for a in arrivals if a is not None), default=len(self.doc.steps))
            if any(a is None for a in arrivals):
                done = len(self.doc.steps)
            if rj.step <= step and done >= start:
                return (
                    f"Snapshot {j} was in progress at {p} at the same time (from time {rj.time}):"
                    " concurrent snapshots each need their own recording state at a server"
                )
        return ""

    def overwritten(self, k: int, p: str, have: list[tuple[Link, int]], last: int) -> bool:
        """Snapshot k's messages at p replaced, slot for slot, by messages other snapshots
        record at p (recorded lists sharing storage)?  Adds the finding; True if so."""
        want = [(link, n) for link in self.inbound[p] for n in self.closed[k].get(link, ())]
        if len(want) != len(have) or sorted(want) == sorted(have):
            return False
        rest = list(want)
        extras = []
        for m in have:
            if m in rest:
                rest.remove(m)
            else:
                extras.append(m)
        others = {
            (link, n)
            for j in self.snap_ids
            if j != k
            for link, ns in self.closed[j].items()
            if link[1] == p
            for n in ns
        }
        if not extras or not all(m in others for m in extras):
            return False
        (link, n), (mlink, mn) = extras[0], rest[0]
        arrivals = [j for j, _, v in self.receipts[link] if v == n]
        owner = next(j for j in self.snap_ids if j != k and n in self.closed[j].get(link, ()))
        self.find(
            "overwritten",
            arrivals[-1] if arrivals else last,
            p,
            f"snapshot {k}'s recorded messages at {p} were changed after it recorded them:"
            f" where it recorded token({mn}) from {show_link(mlink)} it now holds token({n}) from"
            f" {show_link(link)}, a message that snapshot {owner} records at {p}"
            f" ({len(extras)} of its {len(want)} recorded message(s) there replaced)",
            f"{p} keeps snapshot {k}'s recorded messages as they were",
        ).extra.append(
            "The recorded-message lists of two snapshots seem to share storage (e.g. one Go"
            " slice's backing array): appending to one overwrites the other"
        )
        return True


def _snap_total(s: Snap) -> int:
    return sum(n for _, n in s.tokens) + sum(m.n for m in s.messages)


@dataclass(frozen=True)
class Difference:
    """Where a snapshot the package returned differs from what Chandy–Lamport records:
    ``place`` is a server (its recorded tokens), a link ``A→B`` (its recorded messages),
    or ``""`` for the whole snapshot (never returned); the two records in words."""

    snapshot: int
    place: str
    expected: str
    recorded: str

    def describe(self) -> str:
        if not self.place:
            return f"snapshot {self.snapshot} was never returned"
        return (
            f"snapshot {self.snapshot} {'on' if '→' in self.place else 'at'} {self.place}"
            f" (returned {self.recorded}; Chandy–Lamport records {self.expected})"
        )


def differences(
    expected: Sequence[Snap], recorded: Sequence[Snap], servers: Sequence[str],
    links: Sequence[Link],
) -> tuple[Difference, ...]:  # fmt: skip
    """Every place where a returned snapshot differs from the expected one of its id, in
    the order of the snapshots, then the servers, then the links."""
    got = {s.id: s for s in recorded}
    out: list[Difference] = []
    for e in sorted(expected, key=lambda s: s.id):
        r = got.get(e.id)
        if r is None:
            out.append(Difference(e.id, "", "", ""))
            continue
        want_t, have_t = e.tokens_dict(), r.tokens_dict()
        for p in servers:
            a, b = want_t.get(p), have_t.get(p)
            if a != b:
                out.append(
                    Difference(
                        e.id, p, "nothing" if a is None else f"{a} tokens",
                        "nothing" if b is None else f"{b} tokens",
                    )
                )  # fmt: skip
        for link in links:
            a2, b2 = e.channel(link), r.channel(link)
            if a2 != b2:
                out.append(Difference(e.id, show_link(link), _show_msgs(a2), _show_msgs(b2)))
    return tuple(out)


def judge_run(doc: RunDocument, log: CourseLog | None = None) -> RunJudgement:
    """Replay the course's events of ``doc``'s log in the reference and judge them
    (module docstring).

    Only the rules of the algorithm are judged here; a hang or a panic of the run
    (``doc.outcome``) is judged by the caller.  A run whose log cannot be read
    consistently (:func:`~redletter.conformance.judges.courselog.read_course_log`)
    is ``unknown``, with the reason.
    """
    if log is None:
        log = read_course_log(doc)
    recorded = doc.snaps()
    notes = (log.note(),) if log.ignored else ()
    if not log.usable:
        return RunJudgement(
            Verdict.UNKNOWN,
            "no-schedule",
            f"the run cannot be checked against its own log: {log.reason}",
            recorded=recorded,
            notes=notes,
            log_usable=False,
        )
    clean = replace(doc, steps=log.steps)
    rp = _Replay(clean)
    rp.run()
    if not rp.broken:
        rp.finish()
    exp_run = expected_run(clean) if not rp.broken else None
    expected = (
        exp_run.snaps
        if exp_run is not None
        else tuple(s for s in (rp.expected_snap(k) for k in rp.snap_ids) if s is not None)
    )
    steps = tuple(rp.steps_out)
    moves = sum(e.event in ("send", "receive") for st in clean.steps for e in st.events)
    passed = (
        f"each step of the logged run ({moves} sends and receipts) follows Chandy–Lamport's"
        f" rules, and the {len(recorded)} snapshot(s) returned are the ones the algorithm"
        " records for this run"
    )
    if not rp.findings:
        return RunJudgement(
            Verdict.PASS,
            "",
            passed,
            steps=steps,
            expected=expected,
            recorded=recorded,
            notes=notes,
            expected_run=exp_run,
        )
    if any(f.kind == "recorded-after-marker" for f in rp.findings):
        for f in rp.findings:
            if f.kind == "first-channel-recorded":
                f.kind = "recorded-after-marker"
    first = min(rp.findings, key=lambda f: (f.step, rp.findings.index(f)))
    rule = _RULE.get(first.kind, "")
    text = first.summary[0].upper() + first.summary[1:] + "."
    for extra in first.extra:
        text += f" {extra}."
    text += f" Rule broken: {rule}."
    totals = [(s.id, _snap_total(s)) for s in recorded if _snap_total(s) != doc.topology.total]
    if totals:
        k, n = totals[0]
        text += (
            f" (Snapshot {k} holds {n} tokens in all, recorded states and in-flight messages;"
            f" the system holds {doc.topology.total}.)"
        )
    diffs = differences(expected, recorded, doc.topology.ids, doc.topology.links)
    if diffs:
        shown = "; ".join(d.describe() for d in diffs[:6])
        more = f"; and {len(diffs) - 6} more" if len(diffs) > 6 else ""
        text += f" Where the package's snapshots differ from Chandy–Lamport's: {shown}{more}."
    others = len(rp.findings) - 1
    if others:
        text += f" ({others} more departure(s) from the algorithm in this run.)"
    step_no = first.step + 1 if first.step < len(clean.steps) else 0
    div = Divergence(
        kind=first.kind,
        node=first.node,
        summary=first.summary,
        model_did=first.model_did,
        why=rule,
        step=step_no,
    )
    failed = RunJudgement(
        Verdict.FAIL,
        first.kind,
        text,
        div,
        steps=steps,
        expected=expected,
        recorded=recorded,
        notes=notes,
        expected_run=exp_run,
        differences=diffs,
    )
    if not any(f.kind in RETURNED_KINDS for f in rp.findings):
        # Only the log departs from the algorithm, and the log is the package's
        # own writing: every snapshot it returned is the one of this run.
        return RunJudgement(
            Verdict.PASS,
            "",
            passed.replace("each step of the logged run", "the logged run")
            + f" (its log shows {len(rp.findings)} departure(s) from the rules that changed no"
            f" snapshot, the first: {first.summary})",
            steps=steps,
            expected=expected,
            recorded=recorded,
            notes=notes,
            unconfirmed=failed,
            expected_run=exp_run,
        )
    return failed
