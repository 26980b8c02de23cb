"""What Chandy–Lamport records on a COS 418 run: the expectation a report shows.

The run judge (:mod:`redletter.conformance.judges.run`) replays the course's events of
a run's log and judges every step against the algorithm's rules.  Its verdict compares
what the package returned with what the algorithm records *for the delivery order the
log shows*; but that order includes the package's own markers, and a marker the
package sent late (or never) is the finding, not an input to the expectation: a
snapshot computed on the package's late marker repeats the bug (it holds the token
that overtook the marker twice: 6 tokens in a 4-token system).

:func:`expected_run` computes the run Chandy–Lamport makes on the **same application
schedule** (every token sent and received where the log shows it) with **every marker
sent when the rules say**: a server that starts a snapshot, or receives the first
marker of one, records its state and puts a marker on each outbound link in that very
step, ahead of anything it sends later.  Where each such marker arrives:

- where the package's own marker of that snapshot and link arrived, when the link's
  FIFO order allows it (the marker was on time, or late with nothing overtaking it);
- else just before the first token that travels behind it on the link is received
  (a token sent after the marker cannot arrive before it);
- a marker that neither the log nor a later token places arrives after the run,
  when everything still in flight is delivered, link by link, oldest first.

The servers then record as the rules say (the channel of the first marker recorded
empty, every other channel from the recording until its marker), so each snapshot
holds every token exactly once: it conserves the system's tokens.  When the moment a
moved marker arrives is free (the rules allow a window) and the receiver does
something inside that window, the record depends on the moment: the expected run
takes the latest and says so (:attr:`MovedMarker.window`).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Final

from redletter.conformance.formats.cos418 import Link, RecordedMessage, Snap
from redletter.conformance.judges.rundoc import RunDocument

__all__ = ["ExpEvent", "ExpectedRun", "MovedMarker", "expected_run"]

#: Positions: step i's events are at i * _STEP + _EV * (j + 1); what the expected run
#: adds goes just before or after the logged event it belongs to.
_STEP: Final = 1 << 20
_EV: Final = 8


def _show(link: Link) -> str:
    return f"{link[0]}→{link[1]}"


@dataclass(frozen=True)
class ExpEvent:
    """One event of the expected run, in order.

    ``kind`` is ``send``, ``receive``, ``record_state`` or ``record_message``; a
    message is ``token`` (``value`` its tokens) or ``marker`` (``value`` its
    snapshot); ``msg`` joins a send to its receipt; ``step`` is the index of the
    document's step it happens in (``len(doc.steps) + r - 1`` for the r-th round of
    deliveries after the run).  ``origin``: ``logged`` (as the log shows it),
    ``rule`` (a marker where the rules put it, which the package's log shows elsewhere
    or not at all) or ``package`` (the package's own marker where the log shows it,
    drawn beside the rule's: it takes no part in the expected run).
    """

    kind: str
    server: str
    link: Link | None = None
    message: str = ""
    value: int = 0
    msg: int = 0
    step: int = 0
    origin: str = "logged"
    snapshot: int | None = None  #: of a record_state / record_message


@dataclass(frozen=True)
class MovedMarker:
    """A marker the package sent at another moment than the rules say (or never)."""

    snapshot: int
    link: Link
    due_step: int
    due_time: int
    sent_step: int | None  #: when the package's log shows it sent (None: never)
    sent_time: int | None
    arrival_step: int  #: where the expected run has it arrive
    arrival_time: int
    #: tokens the package sent on the link after the marker was due and before its own
    #: marker, as (tokens, time sent): on time they travel behind the marker
    overtaken: tuple[tuple[int, int], ...] = ()
    #: (from time, to time): the arrival is free in this window and the receiver acts
    #: in it, so the record depends on the moment (the expected run takes the latest)
    window: tuple[int, int] | None = None
    #: when the sender's first marker came in the package's run, when that is not when
    #: it comes in the expected run: this marker then only follows from an earlier one
    follows: int | None = None

    def describe(self) -> str:
        """One sentence for a report."""
        where = _show(self.link)
        sent = (
            "the package never sent it"
            if self.sent_time is None
            else f"the package sent it at time {self.sent_time}"
        )
        if self.follows is not None:
            return (
                f"marker {self.snapshot} on {where} follows: with the markers on time,"
                f" {self.link[0]} records its state and sends it at time {self.due_time} (in"
                f" the package's run its first marker came at time {self.follows}); on time it"
                f" arrives at time {self.arrival_time}"
            )
        text = f"marker {self.snapshot} on {where} was due at time {self.due_time}; {sent}"
        if self.overtaken:
            shown = ", ".join(f"token({n}) sent at time {t}" for n, t in self.overtaken)
            text += f", after {shown}, which on time travels behind it"
        text += f"; on time it arrives at time {self.arrival_time}"
        if self.window is not None:
            a, b = self.window
            text += (
                f" (any time from {a} to {b} keeps the application's schedule, and what"
                f" {self.link[1]} records depends on when: the expected snapshot takes the"
                " latest)"
            )
        return text


@dataclass(frozen=True)
class ExpectedRun:
    """The run Chandy–Lamport makes on a run's application schedule (module docstring)."""

    events: tuple[ExpEvent, ...]
    snaps: tuple[Snap, ...]
    moved: tuple[MovedMarker, ...]
    times: tuple[int, ...]  #: the time of each step index (the rounds after the run too)
    after: int = 0  #: rounds of deliveries after the logged run

    def time_of(self, step: int) -> int:
        """The time of step index ``step``."""
        if not self.times:
            return 0
        return self.times[min(max(step, 0), len(self.times) - 1)]

    def notes(self) -> tuple[str, ...]:
        """What a reader needs to know about the expectation, one sentence each."""
        out = []
        for m in self.moved:
            d = m.describe()
            out.append(d[0].upper() + d[1:] + ".")
        if self.after:
            out.append(
                f"The expected run goes on {self.after} step(s) after the logged run: the"
                " markers the package never delivered arrive then (what is still in flight"
                " is delivered link by link, oldest first)."
            )
        return tuple(out)


class _Unreadable(Exception):
    """The log's tokens do not follow FIFO in the expected run (cannot happen for a log
    the course-log reader accepted; then there is no expectation to show)."""


@dataclass
class _Item:
    message: str  # token or marker
    value: int
    msg: int
    sent: int  # position
    step: int  # step sent in
    deferred: bool = False  # a marker whose logged arrival came before it headed its link


@dataclass
class _Snap:
    rec: dict[str, int] = field(default_factory=dict)  # tokens recorded
    recording: dict[Link, list[int]] = field(default_factory=dict)
    closed: dict[Link, tuple[int, ...]] = field(default_factory=dict)


class _Run:
    """The expected run (module docstring), computed in one pass over the log."""

    def __init__(self, doc: RunDocument) -> None:
        top = doc.topology
        self.doc = doc
        self.ids = top.ids
        self.links = tuple(top.links)
        self.inbound = {s: top.inbound(s) for s in self.ids}
        self.outbound = {s: top.outbound(s) for s in self.ids}
        self.tokens = {s.id: s.tokens for s in top.servers}
        self.queues: dict[Link, deque[_Item]] = {link: deque() for link in self.links}
        self.snaps: dict[int, _Snap] = {s.id: _Snap() for s in doc.snapshots}
        self.events: list[ExpEvent] = []
        self.times = [st.time for st in doc.steps] or [0]
        self.step = 0
        self.pos = 0
        self.next_msg = 0
        self.rounds = 0
        # the package's log: its markers, and every token send, by position
        self.logged_send: dict[tuple[int, Link], tuple[int, int]] = {}  # (pos, step)
        self.logged_recv: dict[tuple[int, Link], tuple[int, int]] = {}
        self.token_sends: dict[Link, list[tuple[int, int, int]]] = {
            link: [] for link in self.links
        }  # (pos, step, tokens)
        # the expected run
        self.due: dict[tuple[int, Link], tuple[int, int]] = {}  # rule's send (pos, step)
        self.arrived: dict[tuple[int, Link], tuple[int, int]] = {}  # (pos, step)
        self.receipts: dict[Link, list[tuple[int, int, int]]] = {
            link: [] for link in self.links
        }  # (pos, step, position it was sent at)
        self.acts: dict[str, list[tuple[int, int]]] = {s: [] for s in self.ids}  # (pos, time)
        self.package_msg: dict[tuple[int, Link], int] = {}
        self.early: set[tuple[int, Link]] = set()
        #: per (k, server): the step its first marker came in the package's log
        self.logged_first: dict[tuple[int, str], int] = {}
        for i, st in enumerate(doc.steps):
            for j, e in enumerate(st.events):
                where = (i * _STEP + _EV * (j + 1), i)
                if e.link not in self.queues:
                    continue
                if e.event == "send" and e.message == "marker":
                    self.logged_send.setdefault((e.snapshot_id, e.link), where)
                elif e.event == "send" and e.message == "token":
                    self.token_sends[e.link].append((*where, e.tokens))
                elif e.event == "receive" and e.message == "marker":
                    self.logged_recv.setdefault((e.snapshot_id, e.link), where)
                    self.logged_first.setdefault((e.snapshot_id, e.dest), i)

    # -- helpers

    def time(self, step: int) -> int:
        return self.times[min(step, len(self.times) - 1)]

    def on_time(self, k: int, link: Link, due: int) -> bool:
        """The package's marker (k, link) left in the rule's step, with the same tokens
        ahead of it on the link: it is the rule's marker."""
        logged = self.logged_send.get((k, link))
        if logged is None or logged[1] != self.step:
            return False
        lo, hi = sorted((logged[0], due))
        return not any(lo < pos < hi for pos, _, _ in self.token_sends[link])

    def record(self, k: int, p: str, first: Link | None) -> None:
        s = self.snaps[k]
        s.rec[p] = self.tokens[p]
        self.events.append(ExpEvent("record_state", p, step=self.step, snapshot=k))
        for link in self.inbound[p]:
            if link == first:
                s.closed[link] = ()
            else:
                s.recording[link] = []
        for link in self.outbound[p]:
            self.next_msg += 1
            item = _Item("marker", k, self.next_msg, self.pos, self.step)
            item.deferred = (k, link) in self.early
            self.queues[link].append(item)
            self.due[(k, link)] = (self.pos, self.step)
            origin = "logged" if self.on_time(k, link, self.pos) else "rule"
            self.events.append(
                ExpEvent("send", p, link, "marker", k, self.next_msg, self.step, origin)
            )

    def deliver(self, link: Link, *, logged: bool = False) -> None:
        item = self.queues[link].popleft()
        dest = link[1]
        self.acts[dest].append((self.pos, self.time(self.step)))
        self.receipts[link].append((self.pos, self.step, item.sent))
        if item.message == "token":
            self.tokens[dest] += item.value
            self.events.append(
                ExpEvent("receive", dest, link, "token", item.value, item.msg, self.step)
            )
            for k, s in self.snaps.items():
                rec = s.recording.get(link)
                if rec is not None:
                    rec.append(item.value)
                    self.events.append(
                        ExpEvent("record_message", dest, link, "token", item.value, item.msg,
                                 self.step, snapshot=k)
                    )  # fmt: skip
            return
        k = item.value
        self.arrived[(k, link)] = (self.pos, self.step)
        origin = "logged" if logged and self.on_time_sent(k, link) else "rule"
        self.events.append(
            ExpEvent("receive", dest, link, "marker", k, item.msg, self.step, origin)
        )
        s = self.snaps[k]
        if dest not in s.rec:
            self.record(k, dest, link)
        elif link in s.recording:
            s.closed[link] = tuple(s.recording.pop(link))

    def on_time_sent(self, k: int, link: Link) -> bool:
        return any(
            e.kind == "send" and e.message == "marker" and e.value == k and e.link == link
            and e.origin == "logged"
            for e in self.events
        )  # fmt: skip

    def deliver_deferred(self, link: Link) -> None:
        """Markers whose logged arrival came before they headed the link go as soon as
        they head it, in a later step than they were sent."""
        q = self.queues[link]
        while q and q[0].deferred and q[0].step < self.step:
            self.pos += 1
            self.deliver(link)

    # -- the run

    def run(self) -> None:
        doc = self.doc
        by_event = {s.event_index: s for s in doc.snapshots}
        for i, st in enumerate(doc.steps):
            self.step = i
            self.pos = i * _STEP
            for link in self.links:
                self.deliver_deferred(link)
            start = (
                by_event.get(st.event_index)
                if st.phase == "inject" and st.event_index is not None
                else None
            )
            if start is not None and start.id in self.snaps and start.initiator in self.tokens:
                self.pos += 1
                if start.initiator not in self.snaps[start.id].rec:
                    self.record(start.id, start.initiator, None)
            for j, e in enumerate(st.events):
                at = i * _STEP + _EV * (j + 1)
                if e.link not in self.queues:
                    continue
                if e.event == "send" and e.message == "token":
                    self.pos = at
                    self.tokens[e.src] -= e.tokens
                    self.next_msg += 1
                    self.queues[e.link].append(_Item("token", e.tokens, self.next_msg, at, i))
                    self.acts[e.src].append((at, st.time))
                    self.events.append(
                        ExpEvent("send", e.src, e.link, "token", e.tokens, self.next_msg, i)
                    )
                elif e.event == "send" and e.message == "marker":
                    self.pos = at
                    self.package_send(e.snapshot_id, e.link)
                elif e.event == "receive" and e.message == "token":
                    q = self.queues[e.link]
                    self.pos = at - _EV // 2
                    while q and q[0].message == "marker":
                        self.pos += 1
                        self.deliver(e.link)  # it travels ahead of this token
                    if not q or (q[0].message, q[0].value) != ("token", e.tokens):
                        raise _Unreadable
                    self.pos = at
                    self.deliver(e.link, logged=True)
                    self.deliver_deferred(e.link)
                elif e.event == "receive" and e.message == "marker":
                    self.pos = at
                    self.package_receipt(e.snapshot_id, e.link)
        # After the run: everything still in flight, link by link, oldest first.
        while any(self.queues.values()) and self.rounds < 100_000:
            self.rounds += 1
            self.step = len(doc.steps) + self.rounds - 1
            self.pos = self.step * _STEP
            self.times.append(doc.time + self.rounds)
            for link in self.links:
                if self.queues[link]:
                    self.pos += 1
                    self.deliver(link)

    def package_send(self, k: int, link: Link) -> None:
        """The package's marker (k, link) where the log shows it sent: drawn beside the
        rule's when it is not the rule's own."""
        due = self.due.get((k, link))
        if due is not None and due[1] == self.step and self.on_time_sent(k, link):
            return
        self.next_msg += 1
        self.package_msg[(k, link)] = self.next_msg
        self.events.append(
            ExpEvent("send", link[0], link, "marker", k, self.next_msg, self.step, "package")
        )

    def package_receipt(self, k: int, link: Link) -> None:
        msg = self.package_msg.get((k, link))
        if msg is not None:
            self.events.append(
                ExpEvent("receive", link[1], link, "marker", k, msg, self.step, "package")
            )
        if (k, link) in self.arrived:
            return
        q = self.queues[link]
        for item in q:
            if item.message == "marker" and item.value == k:
                if q[0] is item and item.step < self.step:
                    self.deliver(link, logged=True)
                else:
                    item.deferred = True
                return
        self.early.add((k, link))  # the rule has not sent it yet

    # -- the result

    def snap(self, k: int) -> Snap | None:
        s = self.snaps[k]
        if len(s.rec) != len(self.ids) or s.recording:
            return None
        order = {p: n for n, p in enumerate(self.ids)}
        msgs = [
            RecordedMessage(a, b, n)
            for (a, b) in sorted(s.closed, key=lambda link: (order[link[1]], order[link[0]]))
            for n in s.closed[(a, b)]
        ]
        return Snap(k, tuple((p, s.rec[p]) for p in self.ids), tuple(msgs))

    def moved(self) -> list[MovedMarker]:
        out: list[MovedMarker] = []
        for (k, link), (due, due_step) in sorted(self.due.items(), key=lambda x: x[1]):
            arrival = self.arrived.get((k, link))
            if arrival is None:
                continue
            sent = next(
                (e for e in self.events if e.kind == "send" and e.message == "marker"
                 and e.value == k and e.link == link and e.origin == "logged"),
                None,
            )  # fmt: skip
            if sent is not None:
                continue
            logged = self.logged_send.get((k, link))
            first = self.logged_first.get((k, link[0]))
            follows = (
                self.time(first)
                if first is not None and first != due_step and self.snaps[k].rec
                and not self.is_initiator(k, link[0])
                else None
            )  # fmt: skip
            overtaken = tuple(
                (n, self.time(step))
                for pos, step, n in self.token_sends[link]
                if due < pos and (logged is None or pos < logged[0])
            )
            out.append(
                MovedMarker(
                    k,
                    link,
                    due_step,
                    self.time(due_step),
                    logged[1] if logged is not None else None,
                    self.time(logged[1]) if logged is not None else None,
                    arrival[1],
                    self.time(arrival[1]),
                    overtaken,
                    self.window(link, due, due_step, arrival[0], arrival[1]),
                    follows,
                )
            )
        return out

    def is_initiator(self, k: int, server: str) -> bool:
        return any(s.id == k and s.initiator == server for s in self.doc.snapshots)

    def window(
        self, link: Link, due: int, due_step: int, arrival: int, arrival_step: int
    ) -> tuple[int, int] | None:
        """Where a moved marker's arrival is free: after its sending (a later tick) and
        after the receipt of whatever travels ahead of it, up to where it arrives; the
        window when its receiver acts inside it (else None: any moment in it gives the
        same record)."""
        ahead = [(pos, step) for pos, step, sent in self.receipts[link] if sent < due]
        lo = max([due, *(pos for pos, _ in ahead)])
        lo_time = max([self.time(due_step) + 1, *(self.time(step) for _, step in ahead)])
        acts = [(pos, t) for pos, t in self.acts[link[1]] if lo < pos < arrival and t >= lo_time]
        if not acts:
            return None
        return (lo_time, self.time(arrival_step))


def expected_run(doc: RunDocument) -> ExpectedRun | None:
    """The expected run of ``doc`` (module docstring); ``doc``'s steps must hold the
    course's events only (:func:`~redletter.conformance.judges.courselog.read_course_log`).
    None when its tokens cannot be followed (a log the course-log reader refuses)."""
    r = _Run(doc)
    try:
        r.run()
    except _Unreadable:
        return None
    snaps = tuple(s for s in (r.snap(k) for k in r.snaps) if s is not None)
    return ExpectedRun(tuple(r.events), snaps, tuple(r.moved()), tuple(r.times), r.rounds)
