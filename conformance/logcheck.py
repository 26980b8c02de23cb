"""Reading event logs as a run: integrity, one order, and what a cut log can show.

Both log judges read their logs through :class:`LogMerge`, which streams them:
each file is read a line at a time, and the events come out in one order
consistent with every process's own order, with the vector clocks and with FIFO
channels (the n-th receive on a channel matched with the n-th send on it).  The
memory this takes is what is in flight (sent and not yet received), each
process's last vector clock and one line per file, never the files themselves;
the bytes read from all files together are bounded (:data:`MAX_LOGS_TOTAL`,
``--max-input``).

A log that lost lines or whose clocks contradict it does not describe a run:
judging it would give a verdict about a run that never happened.  The merge
raises an :class:`~redletter.errors.InputError` naming the file and line:

``RL-INPUT-LOG-LOST`` (lines are missing)
    a node's seq does not start at 1 or skips a number (the recorders number a
    node's events 1, 2, 3, ...); an event's vector clock follows an event no log
    holds (the other node's log ends before it: its tail was lost, or the log of
    that node was not given); the last line of a file is cut short (only where
    the logs must be whole: a judge reads a cut last line as a crash).
``RL-INPUT-LOG-CLOCK`` (the clocks contradict the logs)
    ``vc[node]`` is not the event's ``seq``; a node's clock goes back; a receive
    does not follow all that its message's send followed (the clock it carried);
    in a file holding several nodes, an event comes before an event its clock
    follows (lines ordered by wall clocks that disagree between processes).
``RL-INPUT-LOG-CONFLICT`` (the events contradict each other)
    a receive that matches no send on its channel although the sender's log is
    whole; a send logged after the message it sent already caused something (a
    happened-before cycle); ``init`` that is not a node's first event, an event
    after its ``end``.
``RL-INPUT-LOG``
    one node's events split over two files.

Wall clocks never enter: the logs carry none, and the order of the files on the
command line does not matter.

**What a cut log can show** (:func:`settle`, the one rule both judges apply; the
table of docs/instrument.md).  A log without its ``end`` event, an empty log, or
one whose last line is cut short is the log of a process that crashed or was cut
short: the run goes on past its end, unseen.  A snapshot that completed before
the logs stop is judged whatever came after it, since EWD 864's lemmas speak of
the run up to the snapshot's completion; a snapshot still open where a log stops
is not judged (unknown), while a rule the events already break is a fail; a run
with no snapshot is unknown.  Only logs that hold the whole run (each ends with
its ``end`` event, or ``--whole-run``) make an open snapshot a liveness failure.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import repeat
from operator import ge as _ge
from operator import lt as _lt
from pathlib import Path
from typing import Final, NamedTuple, NoReturn

from redletter.conformance.eventlog import (
    LogEvent,
    LogFile,
    parse_log,
    read_log_bytes,
    show_chan,
    show_id,
)
from redletter.conformance.verdict import Verdict
from redletter.errors import InputError
from redletter.untrusted import MAX_LOGS_TOTAL, InputBudget, show_text

__all__ = [
    "CASES",
    "CODE_CLOCK",
    "CODE_CONFLICT",
    "CODE_LOST",
    "MAX_LOGS_TOTAL",
    "Ending",
    "LogMerge",
    "Matched",
    "check_logs",
    "merge_logs",
    "read_logs",
    "require_events",
    "settle",
]

CODE_LOST: Final = "RL-INPUT-LOG-LOST"
CODE_CLOCK: Final = "RL-INPUT-LOG-CLOCK"
CODE_CONFLICT: Final = "RL-INPUT-LOG-CONFLICT"
CODE: Final = "RL-INPUT-LOG"
_ZEROS: Final = repeat(0)  #: the default of dict.get mapped over a clock
_NEW: Final = tuple.__new__  #: a named tuple made at C speed (its own __new__ is Python)
_BATCH: Final = range(64)  #: the most events taken from one source in a row

#: The cases of the cut rule, as the summary line ends (docs/instrument.md's table
#: spells them word for word).
CASES: Final = {
    "whole": "a complete run",
    "after": "cut after every snapshot completed",
    "inside": "cut inside a snapshot",
    "none": "no snapshot to judge",
}


def _err(ev: LogEvent, msg: str, code: str) -> InputError:
    return InputError(msg, code=code, path=ev.path, line=ev.line)


def _show_vc(vc: Mapping[str, int]) -> str:
    return "{" + ", ".join(f"{show_id(q)}: {n}" for q, n in sorted(vc.items())) + "}"


# --------------------------------------------------------------------------- the cut rule


@dataclass(frozen=True)
class Ending:
    """How the logs end: whole (every log ends with its ``end`` event, or the user
    says so with ``--whole-run``), or not, with the reasons in words (a log empty,
    cut in the middle of a line, without its end event, or missing)."""

    whole: bool
    reasons: tuple[str, ...] = ()


def settle(*, failed: bool, snapshots: int, open_: int, ending: Ending) -> tuple[Verdict, str]:
    """The verdict and the case (a value of :data:`CASES`) of a judged run.

    ``failed``: a finding (a rule or lemma broken, or, on a whole run, a snapshot
    left open: the judge adds those liveness findings itself); ``snapshots``: how
    many were started; ``open_``: how many of them are not complete where the logs
    stop (not judged when the logs are cut)."""
    if snapshots == 0:
        case = CASES["none"]
    elif ending.whole:
        case = CASES["whole"]
    else:
        case = CASES["inside"] if open_ else CASES["after"]
    if failed:
        return Verdict.FAIL, case
    if snapshots == 0 or open_:
        return Verdict.UNKNOWN, case
    return Verdict.PASS, case


# --------------------------------------------------------------------------- sources


class _Source:
    """One input of the merge: a file read a line at a time, or a list of events."""

    __slots__ = ("dep_i", "done", "head", "idx", "match", "name", "next", "progress", "vc")

    def __init__(
        self,
        idx: int,
        name: str,
        nxt: Callable[[], tuple[LogEvent, Mapping[str, int] | None] | None],
        progress: Callable[[], float],
    ) -> None:
        self.idx, self.name, self.next, self.progress = idx, name, nxt, progress
        self.head: LogEvent | None = None
        self.vc: Mapping[str, int] | None = None  #: the head's vector clock
        self.done = False
        self.dep_i = 0  #: -1 once the head's clock is known to be satisfied
        self.match: Matched | None = None


class Matched(NamedTuple):
    """A receive's place in the run: the send it matches (None: its sender's log
    stops before it), and the send it overtakes when the channel is not FIFO.  A
    named tuple: one is made for every receive."""

    send: LogEvent | None
    overtaken: LogEvent | None = None


class _Node:
    __slots__ = ("ended", "first", "last", "last_vc", "src")

    def __init__(self, src: int, first: LogEvent) -> None:
        self.src = src
        self.first = first
        self.last = first
        self.last_vc: Mapping[str, int] | None = None
        self.ended = False


class LogMerge:
    """The events of several logs in one order, checked as they come (see the
    module docstring); iterate it for ``(pos, event, matched)``, where ``matched``
    is a :class:`Matched` for a receive and None otherwise.

    ``tolerant``: the logs are a crashed run's (an empty file, a cut last line, a
    receive whose sender's log stops before its send: each is a reason in
    :attr:`unclean`, not an error); ``whole_run``: every log holds its process's
    whole run even without an ``end`` event.  After the iteration,
    :attr:`ending` says how the logs end."""

    def __init__(
        self,
        sources: Sequence[_Source],
        *,
        tolerant: bool = True,
        whole_run: bool = False,
        dense: bool = True,
        files: Sequence[LogFile] = (),
        paths: Sequence[str] = (),
    ) -> None:
        self.sources = list(sources)
        self.tolerant, self.whole_run, self.dense = tolerant, whole_run, dense
        self.files = list(files)
        self.paths = list(paths) or [s.name for s in sources]
        self.nodes: dict[str, _Node] = {}
        self.taken: dict[str, int] = {}
        #: per channel, the sends taken and not yet received, with their clocks
        self.flight: dict[tuple[str, str], deque[tuple[LogEvent, Mapping[str, int] | None]]] = {}
        self.sends: dict[tuple[str, str], int] = {}  # sends taken per channel
        self.last_send: dict[tuple[str, str], LogEvent] = {}
        self.recvs: dict[tuple[str, str], int] = {}
        self.unclean: list[str] = []
        self.events = 0
        self._wait_vc: dict[str, list[tuple[int, int]]] = {}
        self._wait_chan: dict[tuple[str, str], list[int]] = {}
        self._heap: list[tuple[float, int]] = []
        self._blocked: set[int] = set()
        #: the parsed logs of :meth:`of_lists` (read again to name an error)
        self.lists: dict[int, Sequence[LogEvent]] = {}

    # -- building --------------------------------------------------------------------

    @classmethod
    def of_files(
        cls,
        paths: Sequence[Path],
        *,
        tolerant: bool = True,
        whole_run: bool = False,
        limit: int = MAX_LOGS_TOTAL,
    ) -> LogMerge:
        """The merge of log files, read a line at a time (``limit``: the most bytes
        read from all of them together, else an InputError naming the file)."""
        budget = InputBudget(limit, code=CODE, hint="raise the bound with --max-input")
        files = [LogFile(p, budget, tolerant=tolerant) for p in paths]
        # Thousands of files side by side: smaller chunks, so memory stays bounded.
        for f in files:
            f.reader.chunk = max(16 << 10, min(1 << 20, (64 << 20) // max(1, len(files))))
        sources = []
        for i, f in enumerate(files):
            src = _Source(i, f.path, partial(next, f.clocked, None), float)
            src.progress = partial(_progress, f, src)
            sources.append(src)
        return cls(
            sources,
            tolerant=tolerant,
            whole_run=whole_run,
            files=files,
            paths=[str(p) for p in paths],
        )

    @classmethod
    def of_lists(
        cls,
        logs: Sequence[Sequence[LogEvent]],
        *,
        tolerant: bool = False,
        whole_run: bool = False,
        dense: bool = True,
    ) -> LogMerge:
        """The merge of logs already parsed (one list per log)."""
        sources = []
        for i, log in enumerate(logs):
            it = iter(log)
            n = max(1, len(log))
            state = [0]

            def nxt(
                it: Iterator[LogEvent] = it, state: list[int] = state
            ) -> tuple[LogEvent, Mapping[str, int] | None] | None:
                ev = next(it, None)
                state[0] += 1
                return None if ev is None else (ev, ev.vc)

            name = log[0].path if log else f"<log {i + 1}>"
            sources.append(
                _Source(i, name, nxt, lambda state=state, n=n: state[0] / n)  # type: ignore[misc]
            )
        m = cls(sources, tolerant=tolerant, whole_run=whole_run, dense=dense)
        m.lists = dict(enumerate(logs))
        return m

    # -- the ends of the logs ---------------------------------------------------------

    @property
    def ending(self) -> Ending:
        """How the logs end (complete only after the iteration)."""
        if self.whole_run:
            return Ending(True)
        return Ending(not self.unclean, tuple(dict.fromkeys(self.unclean)))

    def ended(self, node: str) -> bool:
        """Whether ``node``'s log holds its whole run (its end event, or whole_run)."""
        n = self.nodes.get(node)
        return n is not None and (n.ended or self.whole_run)

    # -- reading a source's next event ------------------------------------------------

    def _advance(self, src: _Source) -> None:
        """Read ``src``'s next event into its head, checked (see :meth:`_head`)."""
        self._head(src, src.next())

    def _head(self, src: _Source, got: tuple[LogEvent, Mapping[str, int] | None] | None) -> None:
        """Make ``got``, the next event of ``src`` (None: the source is read to its
        end), its head: every check of an event against its node's last one."""
        src.match = None
        if got is None:
            src.head = src.vc = None
            src.done = True
            self._source_done(src)
            return
        ev, vc = got
        name, seq = ev.node, ev.seq
        node = self.nodes.get(name)
        if node is None:
            node = self.nodes[name] = _Node(src.idx, ev)
            if self.dense and seq != 1:
                self._gap(src, ev, None, 1)
        else:
            if node.src != src.idx:
                raise _err(
                    ev,
                    f"{show_id(name)}'s events are in two logs ({node.first.where} and "
                    "here): give one log per node, or one log holding every node",
                    CODE,
                )
            prev = node.last
            if seq != prev.seq + 1:
                if seq <= prev.seq:
                    raise _err(
                        ev,
                        f"seq {seq} of {show_id(name)} does not follow seq {prev.seq} (line "
                        f"{prev.line}): a node's seq must increase",
                        CODE,
                    )
                if self.dense:
                    self._gap(src, ev, prev, prev.seq + 1)
            if ev.event == "init" or prev.event == "end":
                self._misplaced(ev, prev, node)
        if vc is not None:
            if vc.get(name) != seq:
                raise _err(
                    ev,
                    f"the vector clock {_show_vc(vc)} must give {show_id(name)} its own seq {seq}",
                    CODE_CLOCK,
                )
            last = node.last_vc
            src.dep_i = 0  # _ready counts the entries not taken yet
            if last is not None and len(vc) <= 16:
                grown = _grown(vc, last, name, self.taken)
                if grown == _AHEAD:  # (an entry goes back, or one of last is left out)
                    self._monotone(ev, vc, last, node.last)
                elif grown == _TAKEN:
                    src.dep_i = -1
            elif last is not None:
                self._monotone(ev, vc, last, node.last)
            node.last_vc = vc
        node.last = ev
        src.head, src.vc = ev, vc

    def _gap(self, src: _Source, ev: LogEvent, prev: LogEvent | None, want: int) -> NoReturn:
        """Raise the error of a seq that is not the next one."""
        if prev is None:
            raise _err(
                ev,
                f"the first event of {show_id(ev.node)} has seq {ev.seq}: its events "
                f"1..{ev.seq - 1} are missing (lines lost, or the log's start was cut)",
                CODE_LOST,
            )
        got = src.next() if ev.seq > want else None
        nxt = got[0] if got is not None else None
        if nxt is not None and nxt.node == ev.node and nxt.seq < ev.seq:
            raise _err(  # the line is not lost: it comes later (writers out of order)
                nxt,
                f"seq {nxt.seq} of {show_id(ev.node)} does not follow seq {ev.seq} (line "
                f"{ev.line}): a node's seq must increase",
                CODE,
            )
        gap = f"{want}" if ev.seq == want + 1 else f"{want}..{ev.seq - 1}"
        raise _err(
            ev,
            f"seq {ev.seq} of {show_id(ev.node)} follows seq {prev.seq} ({prev.where}):"
            f" its event {gap} is missing (a lost line)",
            CODE_LOST,
        )

    def _misplaced(self, ev: LogEvent, prev: LogEvent, node: _Node) -> NoReturn:
        """Raise the error of an init after a node's first event, or an event after end."""
        if ev.event == "init":
            raise _err(
                ev,
                f"{show_id(ev.node)} logs init as its event {ev.seq}, after "
                f"{node.first.describe()} ({node.first.where}): init is a node's first "
                "event",
                CODE_CONFLICT,
            )
        raise _err(
            ev,
            f"{show_id(ev.node)} logs {ev.describe()} after its end ({prev.where}): "
            "end is a node's last event",
            CODE_CONFLICT,
        )

    def _monotone(
        self, ev: LogEvent, vc: Mapping[str, int], last: Mapping[str, int], prev: LogEvent
    ) -> None:
        """Raise the error of a clock that goes back (compared in C: a clock can hold
        thousands of entries; an entry missing is 0)."""
        if not all(map(_ge, map(vc.get, last, _ZEROS), last.values())):
            self._back(ev, vc, last, prev)

    def _back(
        self, ev: LogEvent, vc: Mapping[str, int], last: Mapping[str, int], prev: LogEvent
    ) -> NoReturn:
        """Raise the error of a clock that goes back."""
        q, n = next((q, n) for q, n in last.items() if vc.get(q, 0) < n)
        raise _err(
            ev,
            f"{show_id(ev.node)}'s vector clock goes back: {show_id(q)}: {vc.get(q, 0)} here, "
            f"{show_id(q)}: {n} at its previous event ({prev.where})",
            CODE_CLOCK,
        )

    def _source_done(self, src: _Source) -> None:
        f = self.files[src.idx] if src.idx < len(self.files) else None
        if f is not None and f.cut_reason is not None:
            self.unclean.append(f.cut_reason)
        if f is not None and f.events == 0 and f.cut_reason is None:
            self.unclean.append(
                f"{show_text(f.path)} is empty: its process wrote no event (it crashed or "
                "never started)"
            )
        for name, node in self.nodes.items():
            if node.src != src.idx:
                continue
            node.ended = node.last.event == "end"
            node.last_vc = None  # nothing more is compared with it
            if not node.ended and not self.whole_run:
                self.unclean.append(
                    f"{show_id(name)}'s log ends without its end event ({node.last.where}): "
                    "the process may have crashed or its log been cut short"
                )
        # a receive waiting for a send this source will never write
        for c in list(self._wait_chan):
            owner = self.nodes.get(c[0])
            if owner is not None and owner.src == src.idx:
                self._wake_chan(c)

    # -- readiness ---------------------------------------------------------------------

    def _ready(self, src: _Source) -> bool:
        ev = src.head
        assert ev is not None
        vc = src.vc
        if vc is not None and src.dep_i >= 0:
            taken = self.taken
            # Every entry but the event's own must be taken; the own entry is the one
            # short (its seq is one past the node's last).  Counted in C first.
            if sum(map(_lt, map(taken.get, vc, _ZEROS), vc.values())) > 1:
                for q, n in self._unmet(ev, vc):
                    heapq.heappush(self._wait_vc.setdefault(q, []), (n, src.idx))
                    return False
            src.dep_i = -1  # its clock is satisfied: no need to count again
        if ev.event == "receive" and src.match is None:
            m = self._match(ev, vc)
            if m is None:
                assert ev.channel is not None
                self._wait_chan.setdefault(ev.channel, []).append(src.idx)
                return False
            src.match = m
        return True

    def _unmet(self, ev: LogEvent, vc: Mapping[str, int] | None) -> Iterator[tuple[str, int]]:
        """The entries of ``ev``'s clock ``vc`` not taken yet (its own entry aside)."""
        taken, me = self.taken, ev.node
        for q, n in (vc or {}).items():
            if q != me and taken.get(q, 0) < n:
                yield q, n

    def _sender_final(self, c: tuple[str, str]) -> bool:
        """Whether no more sends can come on ``c`` (its sender's log was read to its end)."""
        owner = self.nodes.get(c[0])
        return owner is not None and self.sources[owner.src].done

    def _match(self, r: LogEvent, rvc: Mapping[str, int] | None) -> Matched | None:
        """The send a receive matches, None to wait for more sends; an error where
        no send can match."""
        c = r.channel
        assert c is not None
        q = self.flight.get(c)
        if q:
            if q[0][0].msg == r.msg:
                return Matched(q[0][0])
            for s, _ in q:
                if s.msg == r.msg:
                    return Matched(s, q[0][0])
        # Its send is not taken yet: wait for it, unless none can come.
        vc_dep = rvc.get(c[0], 0) if rvc is not None else 0
        known = vc_dep > 0 and self.taken.get(c[0], 0) >= vc_dep
        if not known and not self._sender_final(c):
            return None
        ended = self.ended(c[0])
        if q:
            s = q[0][0]
            if known or ended or not self.tolerant:
                raise _err(
                    r,
                    f"{r.describe()} matches no send: the next message sent on {show_chan(c)} "
                    f"is {s.msg[0] if s.msg else '?'} {_value(s)} ({s.where}), and no later "
                    "send on it carries this one",
                    CODE_CONFLICT,
                )
        elif ended or known or not self.tolerant:
            n = self.sends.get(c, 0)
            last = self.last_send.get(c)
            raise _err(
                r,
                f"{r.describe()} has no send: {show_id(c[0])} logs {n} sends on "
                f"{show_chan(c)} ({f'its last at {last.where}' if last else 'none'}) and this "
                f"is receive {self.recvs.get(c, 0) + 1} on it; log every send where the "
                "message leaves the process",
                CODE_CONFLICT,
            )
        self.unclean.append(
            f"{r.describe()} ({r.where}) has no send in the logs: the log of "
            f"{show_id(c[0])} is missing or cut short"
        )
        return Matched(None)

    # -- taking an event ---------------------------------------------------------------

    def _received(self, r: LogEvent, rvc: Mapping[str, int] | None, send: LogEvent) -> None:
        """Take the message of receive ``r`` off its channel: the one it matched,
        ``send`` (the first in flight, or one it overtakes), whose clock ``rvc``
        must follow."""
        c = r.channel
        assert c is not None
        q = self.flight[c]
        if q[0][0] is send:
            sv = q.popleft()[1]
        else:
            at = next(i for i, (s, _) in enumerate(q) if s is send)
            sv = q[at][1]
            del q[at]
        if sv is not None and rvc is not None:
            for who, n in sv.items():
                if rvc.get(who, 0) < n:
                    self._not_after(r, rvc, send, who, n)

    def _not_after(
        self, r: LogEvent, rvc: Mapping[str, int], send: LogEvent, who: str, n: int
    ) -> NoReturn:
        """Raise the error of a receive whose clock does not follow its send's."""
        raise _err(
            r,
            f"the vector clock {_show_vc(rvc)} of this receive does not follow all that its "
            f"message's send ({send.where}) follows ({show_id(who)}: {n} there): the clock it "
            "carried is not the send's",
            CODE_CLOCK,
        )

    def _wake(self, idx: int) -> None:
        if idx in self._blocked:
            self._blocked.discard(idx)
            src = self.sources[idx]
            heapq.heappush(self._heap, (src.progress(), idx))

    def _wake_chan(self, c: tuple[str, str]) -> None:
        for idx in self._wait_chan.pop(c, []):
            self._wake(idx)

    # -- the order ---------------------------------------------------------------------

    def __iter__(self) -> Iterator[tuple[int, LogEvent, Matched | None]]:
        for src in self.sources:
            self._advance(src)
        heap = self._heap = [(s.progress(), s.idx) for s in self.sources if not s.done]
        heapq.heapify(heap)
        pos = 0
        sources, blocked, nodes, taken = self.sources, self._blocked, self.nodes, self.taken
        flight, sends, last_send, recvs = self.flight, self.sends, self.last_send, self.recvs
        wait_vc, wait_chan = self._wait_vc, self._wait_chan
        pop, push, new = heapq.heappop, heapq.heappush, _NEW
        # Run once per event of logs of millions of events, so the common case of each
        # step is written inline here: readiness (_ready), taking the event (the
        # bookkeeping of the channels), and reading the source's next event (_head,
        # whose checks of a usual clock are made in one pass here).  Anything else is
        # left to those methods, which check it again from the start and say what is
        # wrong.
        while True:
            while heap:
                _, idx = pop(heap)
                src = sources[idx]
                if src.done or idx in blocked:
                    continue
                nxt = src.next
                # The source's head, its clock, its match and whether its clock is
                # known to be satisfied, kept here while the batch runs (written back
                # to src before a method reads them, and after the batch).
                ev, vc, m, dep = src.head, src.vc, src.match, src.dep_i
                # A batch from the source furthest behind: the files advance together,
                # so what is in flight stays near what was in flight in the run.
                for _ in _BATCH:
                    assert ev is not None
                    e, c = ev.event, ev.channel
                    # -- ready? (the clock known to be satisfied, the send in front)
                    if dep < 0 and (e != "receive" or m is not None):
                        pass
                    elif dep < 0 and (q := flight.get(c)) and q[0][0].msg == ev.msg:  # type: ignore[arg-type]
                        m = new(Matched, (q[0][0], None))
                    else:
                        src.head, src.vc, src.match, src.dep_i = ev, vc, m, dep
                        ready = self._ready(src)
                        ev, vc, m, dep = src.head, src.vc, src.match, src.dep_i
                        if not ready:
                            blocked.add(idx)
                            break
                    # -- take it
                    if c is not None:
                        if e == "send":
                            q = flight.get(c)
                            if q is None:
                                q = flight[c] = deque()
                            q.append((ev, vc))
                            sends[c] = sends.get(c, 0) + 1
                            last_send[c] = ev
                            if c in wait_chan:
                                self._wake_chan(c)
                        elif e == "receive":
                            assert m is not None
                            recvs[c] = recvs.get(c, 0) + 1
                            s = m.send
                            if s is not None:
                                q = flight[c]
                                if q[0][0] is not s:  # it overtakes another
                                    self._received(ev, vc, s)
                                elif (sv := q.popleft()[1]) is not None and vc is not None:
                                    for q_, n in sv.items():
                                        if vc.get(q_, 0) < n:
                                            self._not_after(ev, vc, s, q_, n)
                    name = ev.node
                    seq = taken[name] = ev.seq
                    if wait_vc and (waiting := wait_vc.get(name)):
                        while waiting and waiting[0][0] <= seq:
                            self._wake(pop(waiting)[1])
                        if not waiting:
                            del wait_vc[name]  # (so that no wait costs one test)
                    out = pos, ev, m
                    pos += 1
                    # -- the next event of the source (_head; its common case inline: the
                    # node's next seq with a usual clock, checked in one pass: equal to
                    # its last clock but for its own entry, or none going back)
                    got = nxt()
                    if got is not None:
                        ev, vc = got
                        name = ev.node
                        node = nodes.get(name)
                        if (
                            node is not None
                            and type(vc) is dict
                            and node.src == idx
                            and type(last := node.last_vc) is dict
                            and (seq := ev.seq) == (prev := node.last).seq + 1
                            and vc.get(name) == seq
                            and ev.event != "init"
                            and prev.event != "end"
                        ):
                            vc[name] = last[name]  # (its own entry, for a moment)
                            same = vc == last  # so none goes back, and it is ready
                            vc[name] = seq
                            dep = -1
                            if not same and len(vc) <= 16:
                                grown = _grown(vc, last, name, taken)
                                same = grown != _AHEAD  # (else _head says what is wrong)
                                if grown == _WAIT:
                                    dep = 0  # _ready waits for it
                            if same:
                                node.last_vc = vc
                                node.last = ev
                                m = None
                                yield out
                                continue
                    self._head(src, got)
                    ev, vc, m, dep = src.head, src.vc, src.match, src.dep_i
                    yield out
                    if ev is None:  # the source is read to its end
                        break
                else:
                    src.head, src.vc, src.match, src.dep_i = ev, vc, m, dep
                    push(heap, (src.progress(), idx))
                    continue
                if ev is not None:
                    src.head, src.vc, src.match, src.dep_i = ev, vc, m, dep
                if not src.done and idx not in blocked:
                    push(heap, (src.progress(), idx))
            stuck = [s for s in self.sources if not s.done]
            if not stuck:
                break
            self._unstick(stuck)
        self.events = pos

    # -- when no source can go on --------------------------------------------------------

    def _unstick(self, stuck: list[_Source]) -> None:
        """No head can be taken: name what is wrong (an InputError), or, for a receive
        whose sender's log never holds its send (a crashed run), take it unmatched."""
        for src in stuck:
            ev = src.head
            assert ev is not None
            for q, n in list(self._unmet(ev, src.vc)):
                self._impossible(ev, q, n)
        for src in stuck:
            ev = src.head
            assert ev is not None
            if ev.event == "receive" and next(self._unmet(ev, src.vc), None) is None:
                c = ev.channel
                assert c is not None
                if c[0] not in self.nodes and self._final_of(c[0]) is None:
                    self.unclean.append(
                        f"no log holds {show_id(c[0])}'s events (channel {show_chan(c)}): give "
                        "every process's log"
                    )
                    self.unclean.append(
                        f"{ev.describe()} ({ev.where}) has no send in the logs: the log of "
                        f"{show_id(c[0])} is missing or cut short"
                    )
                    src.match = Matched(None)  # taken unmatched (see _ready)
                    self._blocked.discard(src.idx)
                    heapq.heappush(self._heap, (src.progress(), src.idx))
                    return
        for src in stuck:
            ev = src.head
            assert ev is not None
            for q, n in list(self._unmet(ev, src.vc)):
                owner = self.nodes.get(q)
                same = owner.src == src.idx if owner is not None else self._holds(src.idx, q)
                if same:
                    dep = self._find(src.idx, q, n)
                    raise _err(
                        ev,
                        f"this event of {show_id(ev.node)} follows event {n} of {show_id(q)} "
                        f"(its vector clock), which comes later in the file ({dep.where}): the "
                        "file's order contradicts the vector clocks (lines ordered by wall "
                        "clocks that disagree between processes?); give one log per node",
                        CODE_CLOCK,
                    )
        r = next(
            (s.head for s in stuck if s.head is not None and s.head.event == "receive"),
            stuck[0].head,
        )
        assert r is not None
        if r.event == "receive" and r.channel is not None:
            c = r.channel
            owner = self.nodes.get(c[0])
            s = self._nth_send(owner.src, c, self.sends.get(c, 0) + 1) if owner else None
            if s is not None:
                raise _err(
                    r,
                    f"{r.describe()} cannot follow its send ({s.where}): the logs make the send "
                    "follow events that this receive precedes (a happened-before cycle); "
                    f"{show_id(c[0])} logs the send after the message left the process: log "
                    "it before the message is written",
                    CODE_CONFLICT,
                )
        raise _err(
            r,
            f"{r.describe()} cannot be ordered after what it follows: the logs make it follow "
            "events that follow it (a happened-before cycle)",
            CODE_CONFLICT,
        )

    def _impossible(self, ev: LogEvent, q: str, n: int) -> None:
        """Raise RL-INPUT-LOG-LOST when no log holds event ``n`` of ``q``."""
        final = self._final_of(q)
        if final is None:
            raise _err(
                ev,
                f"the vector clock of {show_id(ev.node)} follows event {n} of {show_id(q)}, but "
                f"no log holds {show_id(q)}'s events: give {show_id(q)}'s log too",
                CODE_LOST,
            )
        if n > final.seq:
            raise _err(
                ev,
                f"the vector clock of {show_id(ev.node)} follows event {n} of {show_id(q)}, "
                f"which {show_id(q)}'s log does not hold: it ends at seq {final.seq} "
                f"({final.where}); its last lines are lost, or it was cut short",
                CODE_LOST,
            )

    def _events_of(self, idx: int) -> Iterator[LogEvent]:
        """Source ``idx``'s events from its start again (only to name an error)."""
        if idx in self.lists:
            yield from self.lists[idx]
            return
        budget = InputBudget(1 << 62, code=CODE)
        f = LogFile(self.files[idx].path, budget, tolerant=True)
        while (ev := f.next_event()) is not None:
            yield ev

    def _final_of(self, q: str) -> LogEvent | None:
        """The last event any log holds of ``q`` (None: none holds any)."""
        node = self.nodes.get(q)
        if node is not None and self.sources[node.src].done:
            return node.last
        last: LogEvent | None = None
        idxs = [node.src] if node is not None else [s.idx for s in self.sources if not s.done]
        for idx in idxs:
            for ev in self._events_of(idx):
                if ev.node == q:
                    last = ev
        return last

    def _holds(self, idx: int, q: str) -> bool:
        return any(e.node == q for e in self._events_of(idx))

    def _find(self, idx: int, q: str, n: int) -> LogEvent:
        return next(e for e in self._events_of(idx) if e.node == q and e.seq == n)

    def _nth_send(self, idx: int, c: tuple[str, str], k: int) -> LogEvent | None:
        i = 0
        for e in self._events_of(idx):
            if e.event == "send" and e.channel == c:
                i += 1
                if i == k:
                    return e
        return None


#: What :func:`_grown` finds.
_TAKEN: Final = 0
_WAIT: Final = 1
_AHEAD: Final = 2


def _grown(
    vc: Mapping[str, int], last: Mapping[str, int], me: str, taken: Mapping[str, int]
) -> int:
    """A usual clock ``vc`` of node ``me`` against its last one, in one pass:
    :data:`_AHEAD` when an entry goes back or an entry of ``last`` is left out (the
    caller checks it again, and says what is wrong), else :data:`_TAKEN` when every
    entry that grew is taken, :data:`_WAIT` when one is not yet.  Only the entries
    that grew can be waited for: the node's last event was taken, and all it
    followed before it."""
    kept = 0
    found = _TAKEN
    for q, n in vc.items():
        m = last.get(q)
        if m is not None:
            kept += 1
            if n <= m:
                if n < m:
                    return _AHEAD
                continue
        if q != me and taken.get(q, 0) < n:
            found = _WAIT
    return found if kept == len(last) else _AHEAD


def _progress(f: LogFile, src: _Source) -> float:
    """How far the merge has read file ``f``, the input of ``src``: through the line
    of its head (the last event read)."""
    return f.progress_through(src.head.line) if src.head is not None else 1.0


def _value(ev: LogEvent) -> str:
    from redletter.conformance.eventlog import show, show_snapshot

    if ev.msg is None:
        return "?"
    return show_snapshot(ev.msg[1]) if ev.msg[0] == "marker" else show(ev.msg[1])  # type: ignore[arg-type]


# --------------------------------------------------------------------------- lists


def read_logs(paths: Sequence[Path]) -> list[list[LogEvent]]:
    """Read and parse each log whole; a last line cut short is ``RL-INPUT-LOG-LOST``."""
    logs: list[list[LogEvent]] = []
    for path in paths:
        data = read_log_bytes(path)
        try:
            logs.append(parse_log(data, path=str(path)))
        except InputError as exc:
            cut = None if not data or data.endswith(b"\n") else data.count(b"\n") + 1
            if cut is None or exc.line != cut:
                raise
            said = exc.message.removeprefix(f"{exc.path}:{exc.line}: ")
            raise InputError(
                f"the last line is cut short ({said}): the writer stopped in the middle of "
                "a line, so the log's end is lost",
                code=CODE_LOST,
                path=str(path),
                line=cut,
            ) from None
    return logs


def require_events(logs: Sequence[Sequence[LogEvent]] | int, paths: Sequence[Path]) -> None:
    """``RL-INPUT-LOG`` when no log of ``paths`` holds an event (``logs``: the logs,
    or how many events they hold): nothing to judge."""
    if (logs if isinstance(logs, int) else sum(len(x) for x in logs)) > 0:
        return
    shown = ", ".join(show_text(str(p)) for p in paths[:3]) + (", ..." if len(paths) > 3 else "")
    raise InputError(
        f"no event in {shown}: an empty log proves nothing (is the implementation's"
        " logger writing to this file?)",
        code=CODE,
        path=str(paths[0]) if paths else None,
        line=1,
    )


def check_logs(logs: Sequence[Sequence[LogEvent]], *, dense: bool = True) -> None:
    """Raise :class:`InputError` when the logs lost lines, their clocks contradict
    them or their events contradict each other (see the module docstring); ``dense``:
    a node's seqs are 1, 2, 3, ...  ``logs`` is one log per node, or one log holding
    every node (in file order)."""
    for _ in LogMerge.of_lists(logs, dense=dense):
        pass


def merge_logs(logs: Sequence[Sequence[LogEvent]]) -> list[LogEvent]:
    """One total order of several logs, consistent with their order, their vector
    clocks and FIFO channels (:class:`LogMerge`); a log alone keeps its order."""
    if len(logs) == 1:
        return list(logs[0])
    return [ev for _, ev, _ in LogMerge.of_lists(logs, dense=False)]
