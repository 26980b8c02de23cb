"""The course's own events in a COS 418 run's log, and nothing the student added.

The course's code logs four kinds of events, each from one known place: a sent
event from the server's send helpers when a message goes on a link, a received
event in ``Tick()`` just before ``HandlePacket`` (at most one message per
sending server and tick), a start event in the simulator's ``StartSnapshot``
(in the step that injects the snapshot) and an end event in the completion
call.  Students add their own ``RecordEvent`` calls: debug records of their own
types (the driver counts them and drops them), a second received event from
``HandlePacket``, events of the course's types built with their fields in
another order, or with a plain int as the message.  None of that is evidence
against the student.

:func:`read_course_log` keeps what can be the course's events, says what it
ignored and why, and checks that what is left can be read consistently: every
receipt takes the oldest message of its link (FIFO), at most one receipt per
sending server and tick, and each of the scenario's sends is logged at its own
step.  When it cannot be read that way, the log is not used at all
(:attr:`CourseLog.usable` is false, with the reason): the run is then judged by
what does not depend on it.
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass

from redletter.conformance.formats.cos418 import Link, Send
from redletter.conformance.judges.rundoc import LoggedEvent, RunDocument, RunStep

__all__ = ["CourseLog", "read_course_log"]


@dataclass(frozen=True)
class CourseLog:
    """The course's events of a run, step by step, or why they cannot be read."""

    steps: tuple[RunStep, ...]
    usable: bool
    reason: str = ""  #: why the log is not used (when not usable)
    ignored: tuple[str, ...] = ()  #: what was left out and why, one line per kind

    def note(self) -> str:
        """One sentence on what was ignored ("" if nothing)."""
        if not self.ignored:
            return ""
        return (
            "the log held events that cannot be the course's own and were ignored (the"
            " package's own records are not evidence against it): " + "; ".join(self.ignored)
        )


def _show(link: Link) -> str:
    return f"{link[0]}→{link[1]}"


#: Choice points the reader may go back to before it gives up on a log.
_MAX_BACKTRACKS = 2000


@dataclass
class _State:
    """Where the reading is: the links' queues, what was kept, what was ignored."""

    queues: dict[Link, deque[LoggedEvent]]
    kept: list[list[LoggedEvent]]  #: per step
    ignored: Counter[str]
    started: set[tuple[str, int]]
    ended: set[tuple[str, int]]
    logged_sends: int = 0
    # within the current step
    delivered: dict[str, LoggedEvent] | None = None  #: sending server -> its receipt
    last_src: str = ""  #: the sender of the last receipt kept in this tick
    prev: LoggedEvent | None = None  #: the event kept just before, in this step
    send_seen: bool = False

    def copy(self) -> _State:
        return _State(
            {k: deque(v) for k, v in self.queues.items()},
            [list(x) for x in self.kept],
            Counter(self.ignored),
            set(self.started),
            set(self.ended),
            self.logged_sends,
            dict(self.delivered) if self.delivered is not None else None,
            self.last_src,
            self.prev,
            self.send_seen,
        )


class _Inconsistent(Exception):
    pass


def read_course_log(doc: RunDocument) -> CourseLog:
    """The course's events of ``doc`` (module docstring).

    A receipt that could be the course's delivery and also the package's own copy
    of a delivery just made (e.g. a marker logged again with its fields swapped,
    while the same marker waits on the reverse link) is read as a delivery first;
    if the log cannot be read consistently that way, the reader goes back and
    reads it as the copy."""
    base: Counter[str] = Counter()
    if doc.other_records:
        base["records of the package's own types (debug lines)"] += doc.other_records

    def done(state: _State | None, reason: str = "") -> CourseLog:
        ign = state.ignored if state is not None else base
        shown = tuple(f"{n} of {what}" for what, n in ign.most_common())
        steps = (
            tuple(
                RunStep(st.phase, st.time, st.event_index, tuple(kept))
                for st, kept in zip(doc.steps, state.kept, strict=False)
            )
            if state is not None and not reason
            else ()
        )
        return CourseLog(steps, not reason, reason, shown)

    if not doc.schedule_available:
        return done(None, doc.schedule_note or "the simulator's log could not be read")
    top = doc.topology
    links = set(top.links)
    ids = set(top.ids)
    scenario = doc.scenario.events
    by_event = {s.event_index: s for s in doc.snapshots}
    # Every event as (step, position), an empty step as (step, -1).
    items = [(i, j) for i, st in enumerate(doc.steps) for j in (range(len(st.events)) or [-1])]

    def want(i: int) -> Send | None:
        st = doc.steps[i]
        if st.phase != "inject" or st.event_index is None:
            return None
        if not 0 <= st.event_index < len(scenario):
            return None
        ev = scenario[st.event_index]
        return ev if isinstance(ev, Send) else None

    def end_step(state: _State, i: int) -> None:
        w = want(i)
        if w is not None and not state.send_seen:
            raise _Inconsistent(
                f"the scenario's `send {w.src} {w.dst} {w.n}` (event"
                f" {(doc.steps[i].event_index or 0) + 1}) logged no such send"
            )

    def begin_step(state: _State) -> None:
        state.kept.append([])
        state.delivered = {}
        state.last_src = ""
        state.prev = None
        state.send_seen = False

    def keep(state: _State, e: LoggedEvent) -> None:
        state.kept[-1].append(e)
        state.prev = e

    # Returns False when `e` is a receipt that could be read either way and the
    # copy reading was not forced: the caller makes a choice point.
    def apply(state: _State, i: int, e: LoggedEvent, as_copy: bool) -> bool | None:
        st = doc.steps[i]
        if e.event in ("send", "receive"):
            if e.message not in ("token", "marker"):
                what = e.type or "an unknown type"
                state.ignored[f"{e.event} events whose message is of type {what}"] += 1
                return None
            if e.link not in links:
                state.ignored[f"{e.event} events between servers that have no link"] += 1
                return None
        if e.event == "send":
            prev = state.prev
            # The course's send helper logs one event per message; two sends in a
            # row from different servers never come from it (a server's sends are
            # separated from another's by a receipt or a step).
            if (
                prev is not None
                and prev.event == "send"
                and prev.same_message(e)
                and (e.link == prev.link or (e.src, e.dest) == (prev.dest, prev.src))
            ):
                state.ignored["sent events logged a second time for one message"] += 1
                return None
            if e.message == "token":
                w = want(i)
                if w is None or state.send_seen or (e.src, e.dest, e.tokens) != (w.src, w.dst, w.n):
                    raise _Inconsistent(
                        f"at time {st.time} the log shows {e.src} sending token({e.tokens}) on"
                        f" {_show(e.link)}, which no send event of the scenario asks for at"
                        " that step"
                    )
                state.send_seen = True
                state.logged_sends += 1
            state.queues[e.link].append(e)
            keep(state, e)
            return None
        if e.event == "receive":
            if st.phase != "tick":
                state.ignored["received events outside Tick()"] += 1
                return None
            delivered = state.delivered if state.delivered is not None else {}
            first = delivered.get(e.src)
            earlier = [
                d
                for d in delivered.values()
                if d.same_message(e) and e.link in (d.link, (d.dest, d.src))
            ]
            q = state.queues[e.link]
            # The course's Tick delivers for each sending server in sorted order,
            # one message each: its receipts in a tick have rising senders.
            could_deliver = first is None and e.src > state.last_src and bool(q)
            if could_deliver and q[0].same_message(e) and not as_copy:
                if earlier:
                    return False  # either reading: a choice point
                q.popleft()
                delivered[e.src] = e
                state.last_src = e.src
                keep(state, e)
                return None
            if earlier:
                same = any(d.link == e.link for d in earlier)
                state.ignored[
                    "received events logged a second time for one delivery"
                    if same
                    else "received events with their source and destination swapped"
                ] += 1
                return None
            head = q[0].show_message() if q else "nothing"
            raise _Inconsistent(
                f"at time {st.time} the log shows {e.dest} receiving {e.show_message()} on"
                f" {_show(e.link)}, but the oldest message in flight there was {head}"
                + (
                    f" and {e.src} had already delivered a message in that tick"
                    if first is not None
                    else ""
                )
            )
        if e.event == "snapshot_start":
            s = (
                by_event.get(st.event_index)
                if st.phase == "inject" and st.event_index is not None
                else None
            )
            key = (e.server, e.snapshot_id)
            if s is not None and (s.initiator, s.id) == key and key not in state.started:
                state.started.add(key)
                keep(state, e)
            else:
                state.ignored["start-snapshot events away from the snapshot's own event"] += 1
            return None
        if e.event == "snapshot_end":
            key = (e.server, e.snapshot_id)
            if e.server in ids and key not in state.ended:
                state.ended.add(key)
                keep(state, e)
            else:
                state.ignored["end-snapshot events logged a second time"] += 1
        return None

    def deliver(state: _State, i: int, e: LoggedEvent) -> None:
        q = state.queues[e.link]
        q.popleft()
        assert state.delivered is not None
        state.delivered[e.src] = e
        state.last_src = e.src
        keep(state, e)

    state = _State({link: deque() for link in top.links}, [], Counter(base), set(), set())
    choices: list[tuple[int, _State]] = []  # (position, state before it): read as a copy
    backtracks = 0
    first_error = ""
    pos = 0
    forced_copy = -1
    while True:
        try:
            while pos < len(items):
                i, j = items[pos]
                if j <= 0 and pos != forced_copy:  # a new step (not when resuming in one)
                    if pos > 0:
                        end_step(state, items[pos - 1][0])
                    begin_step(state)
                if j >= 0:
                    e = doc.steps[i].events[j]
                    if apply(state, i, e, as_copy=pos == forced_copy) is False:
                        choices.append((pos, state.copy()))
                        deliver(state, i, e)
                pos += 1
            if items:
                end_step(state, items[-1][0])
            sends = sum(isinstance(e, Send) for e in scenario)
            if sends and not state.logged_sends:
                raise _Inconsistent("the log shows none of the scenario's sends")
            stepped = {st.event_index for st in doc.steps if st.phase == "inject"}
            for n, sc in enumerate(scenario):
                if isinstance(sc, Send) and n not in stepped:
                    raise _Inconsistent(
                        f"the scenario's `send {sc.src} {sc.dst} {sc.n}` (event {n + 1}) logged"
                        " no such send"
                    )
            return done(state)
        except _Inconsistent as exc:
            first_error = first_error or str(exc)
            if not choices or backtracks >= _MAX_BACKTRACKS:
                return done(state, first_error)
            backtracks += 1
            pos, state = choices.pop()
            forced_copy = pos
