"""The integrity of event logs, checked before the log judge gives a verdict.

A log that lost lines (a crash, a full disk, a writer without a lock) or whose
vector clocks contradict each other does not describe a run: replaying it would
give a verdict about a run that never happened.  :func:`check_logs` finds these
and raises an :class:`~redletter.errors.InputError` naming the file and line,
so that the verdict of :mod:`redletter.conformance.judges.log` is only ever
about the implementation:

``RL-INPUT-LOG-LOST`` (lines are missing)
    a node's seq does not start at 1 or skips a number (the recorders of
    :mod:`redletter.conformance.adapters.instrument` and its Go package number
    a node's events 1, 2, 3, ...);
    an event's vector clock follows an event no log holds (the other node's
    log ends before it: its tail was lost, or the log of that node was not
    given); the last line of a file is cut short (the writer died mid-line).
``RL-INPUT-LOG-CLOCK`` (the clocks contradict the logs)
    ``vc[node]`` is not the event's ``seq``; a node's clock goes back; an event
    follows another without following everything that one follows; in a file
    holding several nodes, an event comes before an event its clock follows
    (lines ordered by wall clocks that disagree between processes).
``RL-INPUT-LOG``
    one node's events split over two files.

Wall clocks never enter: the logs carry none, and the order of the files on
the command line does not matter.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Final

from redletter.conformance.eventlog import LogEvent, parse_log, read_log_bytes
from redletter.errors import InputError

__all__ = ["CODE_CLOCK", "CODE_LOST", "check_logs", "read_logs", "read_logs_tolerant"]

CODE_LOST: Final = "RL-INPUT-LOG-LOST"
CODE_CLOCK: Final = "RL-INPUT-LOG-CLOCK"


def _err(ev: LogEvent, msg: str, code: str) -> InputError:
    return InputError(msg, code=code, path=ev.path, line=ev.line)


def read_logs(paths: Sequence[Path]) -> list[list[LogEvent]]:
    """Read and parse each log; a last line cut short is ``RL-INPUT-LOG-LOST``."""
    logs: list[list[LogEvent]] = []
    for path in paths:
        data = read_log_bytes(path)
        try:
            logs.append(parse_log(data, path=str(path)))
        except InputError as exc:
            cut = _cut_line(data)
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


def read_logs_tolerant(paths: Sequence[Path]) -> tuple[list[list[LogEvent]], list[str]]:
    """Read and parse each log as a crashed run leaves them: an empty file or a
    last line cut short (the writer died mid-line) is not an error but a reason
    the logs may not hold the whole run (the second value, in words); the cut
    line is dropped.  Every other defect is an :class:`InputError` as in
    :func:`read_logs`."""
    logs: list[list[LogEvent]] = []
    reasons: list[str] = []
    for path in paths:
        data = read_log_bytes(path)
        if not data.strip():
            reasons.append(
                f"{path} is empty: its process wrote no event (it crashed or never started)"
            )
            logs.append([])
            continue
        cut = _cut_line(data)
        if cut is not None:
            data = data[: data.rfind(b"\n") + 1]
            reasons.append(
                f"the last line of {path} (line {cut}) is cut short: its process stopped "
                "in the middle of writing it"
            )
        logs.append(parse_log(data, path=str(path)))
    return logs, reasons


def require_events(logs: Sequence[Sequence[LogEvent]], paths: Sequence[Path]) -> None:
    """``RL-INPUT-LOG`` when no log of ``paths`` holds an event: nothing to judge."""
    if any(logs):
        return
    shown = ", ".join(str(p) for p in paths[:3]) + (", ..." if len(paths) > 3 else "")
    raise InputError(
        f"no event in {shown}: an empty log proves nothing (is the implementation's"
        " logger writing to this file?)",
        code="RL-INPUT-LOG",
        path=str(paths[0]) if paths else None,
        line=1,
    )


def _cut_line(data: bytes) -> int | None:
    """The number of the last line when the log does not end with a newline."""
    if not data or data.endswith(b"\n"):
        return None
    return data.count(b"\n") + 1


def _show_vc(vc: dict[str, int]) -> str:
    return "{" + ", ".join(f"{q}: {n}" for q, n in sorted(vc.items())) + "}"


def check_logs(logs: Sequence[Sequence[LogEvent]], *, dense: bool = True) -> None:
    """Raise :class:`InputError` when the logs lost lines or their clocks contradict
    them (see the module docstring); ``dense``: a node's seqs are 1, 2, 3, ...

    ``logs`` is one log per node, or one log holding every node (in file order).
    """
    owner: dict[str, int] = {}
    events: dict[str, dict[int, LogEvent]] = {}
    last: dict[str, LogEvent] = {}
    # Pass 1: each node on its own: numbering and a clock that never goes back.
    for i, log in enumerate(logs):
        for ev in log:
            first_log = owner.setdefault(ev.node, i)
            if first_log != i:
                other = next(e for e in logs[first_log] if e.node == ev.node)
                raise _err(
                    ev,
                    f"{ev.node}'s events are in two logs ({other.where} and here): give one "
                    "log per node, or one log holding every node",
                    "RL-INPUT-LOG",
                )
            prev = last.get(ev.node)
            if dense:
                want = 1 if prev is None else prev.seq + 1
                if ev.seq != want:
                    if prev is None:
                        raise _err(
                            ev,
                            f"the first event of {ev.node} has seq {ev.seq}: its events "
                            f"1..{ev.seq - 1} are missing (lines lost, or the log's start "
                            "was cut)",
                            CODE_LOST,
                        )
                    gap = f"{want}" if ev.seq == want + 1 else f"{want}..{ev.seq - 1}"
                    raise _err(
                        ev,
                        f"seq {ev.seq} of {ev.node} follows seq {prev.seq} ({prev.where}): "
                        f"its event {gap} is missing (a lost line)",
                        CODE_LOST,
                    )
            if ev.vc is not None:
                vc = dict(ev.vc)
                if vc.get(ev.node) != ev.seq:
                    raise _err(
                        ev,
                        f"the vector clock {_show_vc(vc)} must give {ev.node} its own seq {ev.seq}",
                        CODE_CLOCK,
                    )
            events.setdefault(ev.node, {})[ev.seq] = ev
            last[ev.node] = ev
    # Pass 2: what each event's clock says it follows must be in the logs.
    for log in logs:
        for ev in log:
            for q, n in ev.vc or ():
                if q != ev.node and n > 0:
                    _follows(ev, q, n, events, last)
    # Pass 3, in file order: the clocks agree with each other and with the files.
    order = {id(ev): (i, j) for i, log in enumerate(logs) for j, ev in enumerate(log)}
    for log in logs:
        before: dict[str, LogEvent] = {}
        for ev in log:
            prev = before.get(ev.node)
            before[ev.node] = ev
            if ev.vc is None:
                continue
            vc = dict(ev.vc)
            for q, n in ev.vc:
                if q == ev.node or n == 0:
                    continue
                dep = events[q][n]
                if order[id(dep)][0] == order[id(ev)][0] and order[id(dep)] > order[id(ev)]:
                    raise _err(
                        ev,
                        f"this event of {ev.node} follows event {n} of {q} (its vector "
                        f"clock), which comes later in the file ({dep.where}): the file's "
                        "order contradicts the vector clocks (lines ordered by wall clocks "
                        "that disagree between processes?); give one log per node",
                        CODE_CLOCK,
                    )
                for r, m in dep.vc or ():
                    if vc.get(r, 0) < m:
                        raise _err(
                            ev,
                            f"the vector clock {_show_vc(vc)} of {ev.node} follows event "
                            f"{n} of {q} ({dep.where}) but not all that event follows "
                            f"({r}: {m} there): the clocks contradict each other",
                            CODE_CLOCK,
                        )
            if prev is None or prev.vc is None:
                continue
            for q, n in prev.vc:
                if vc.get(q, 0) < n:
                    raise _err(
                        ev,
                        f"{ev.node}'s vector clock goes back: {q}: {vc.get(q, 0)} here, "
                        f"{q}: {n} at its previous event ({prev.where})",
                        CODE_CLOCK,
                    )


def _follows(
    ev: LogEvent,
    q: str,
    n: int,
    events: dict[str, dict[int, LogEvent]],
    last: dict[str, LogEvent],
) -> None:
    """Raise RL-INPUT-LOG-LOST unless the logs hold event ``n`` of ``q``."""
    held = events.get(q)
    if held is None:
        raise _err(
            ev,
            f"the vector clock of {ev.node} follows event {n} of {q}, but no log holds "
            f"{q}'s events: give {q}'s log too",
            CODE_LOST,
        )
    if n in held:
        return
    end = last[q]
    if n > end.seq:
        where = f"ends at seq {end.seq} ({end.where})"
        why = "its last lines are lost, or it was cut short"
    else:
        earlier = [e for s, e in held.items() if s < n]
        if earlier:
            after = max(earlier, key=lambda e: e.seq)
            where = f"jumps from seq {after.seq} ({after.where}) past {n}"
        else:
            start = min(held.values(), key=lambda e: e.seq)
            where = f"starts at seq {start.seq} ({start.where})"
        why = "a line was lost"
    raise _err(
        ev,
        f"the vector clock of {ev.node} follows event {n} of {q}, which {q}'s log does not "
        f"hold: it {where}; {why}",
        CODE_LOST,
    )
