"""Space-time diagrams of a run, with the cut each snapshot recorded.

A diagram is drawn from the run's *observable events* (the same events the
conformance harness sees): one horizontal line per machine, time flowing to the
right, a dot per event, an arrow per message (application messages solid,
red letters dashed and red), recorded local states circled and joined by the
snapshot's cut line, and the messages recorded in a buffer's stream
highlighted.  The output is a self-contained SVG written by hand: it needs no
browser, no font files and no plotting library, and it stays small for the
few hundred events a counterexample has (a plotting library would add a heavy
dependency for what is a handful of lines and circles).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape

from redletter.errors import InputError

#: The kinds of event a diagram understands.
EVENT_KINDS = ("send", "receive", "internal", "record_state", "record_message")

_CUT_COLOURS = ("#c0392b", "#2471a3", "#7d3c98", "#117a65", "#b9770e")


@dataclass(frozen=True, slots=True)
class Event:
    """One observable event of a run.

    ``kind`` is one of :data:`EVENT_KINDS`; ``machine`` the machine it happens
    at; ``channel`` the buffer ``(src, dst)`` of a send, receive or recorded
    message; ``msg_id`` identifies a message so that its send and receive are
    joined; ``snapshot`` is the snapshot id of a red letter or a recording;
    ``label`` is what the diagram writes next to the event (an event name,
    a message's value); ``step`` groups the events of one atomic step into
    one column (each event gets its own column when it is ``None``).
    """

    kind: str
    machine: str
    channel: tuple[str, str] | None = None
    msg_id: int | None = None
    snapshot: int | None = None
    label: str = ""
    step: int | None = None  #: events of one atomic step share a column

    def __post_init__(self) -> None:
        if self.kind not in EVENT_KINDS:
            raise InputError(
                f"unknown diagram event kind {self.kind!r}; expected one of "
                + ", ".join(EVENT_KINDS),
                code="RL-INPUT-DIAGRAM",
            )


@dataclass(frozen=True, slots=True)
class Diagram:
    """The laid-out diagram: machines top to bottom, events left to right."""

    machines: tuple[str, ...]
    events: tuple[Event, ...]
    title: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)


def layout(machines: Sequence[str], events: Sequence[Event], *, title: str = "") -> Diagram:
    """Check that every event names a known machine and every receive a sent message."""
    known = set(machines)
    sent: set[int] = set()
    for n, ev in enumerate(events):
        if ev.machine not in known:
            raise InputError(
                f"event {n} ({ev.kind}) happens at unknown machine {ev.machine!r}; "
                f"the machines are {', '.join(machines)}",
                code="RL-INPUT-DIAGRAM",
            )
        if ev.kind == "send" and ev.msg_id is not None:
            sent.add(ev.msg_id)
        if ev.kind == "receive" and ev.msg_id is not None and ev.msg_id not in sent:
            raise InputError(
                f"event {n} receives message {ev.msg_id}, which no earlier event sent",
                code="RL-INPUT-DIAGRAM",
            )
    return Diagram(tuple(machines), tuple(events), title)


def render_svg(diagram: Diagram, *, step_width: int = 46, lane_height: int = 80) -> str:
    """Render ``diagram`` as a standalone SVG document (a string)."""
    left, top = 70, 50 if diagram.title else 30
    lanes = {m: top + i * lane_height for i, m in enumerate(diagram.machines)}
    columns: list[int] = []
    col, last_step = -1, object()
    for ev in diagram.events:
        if ev.step is None or ev.step != last_step:
            col += 1
        last_step = ev.step if ev.step is not None else object()
        columns.append(col)
    width = left + step_width * (col + 2) + 20
    height = top + lane_height * max(len(diagram.machines) - 1, 0) + 80
    out: list[str] = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        "<defs>"
        '<marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#222"/></marker>'
        '<marker id="redarrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#c0392b"/></marker>'
        "</defs>",
        f'<rect width="{width}" height="{height}" fill="white"/>',
    ]
    if diagram.title:
        out.append(f'<text x="{left}" y="22" font-size="14">{escape(diagram.title)}</text>')
    for m, y in lanes.items():
        out.append(f'<text x="10" y="{y + 4}" font-weight="bold">{escape(m)}</text>')
        out.append(
            f'<line x1="{left}" y1="{y}" x2="{width - 20}" y2="{y}" stroke="#888" '
            'stroke-width="1.5"/>'
        )

    sends: dict[int, tuple[float, float, Event]] = {}
    recorded_msgs: set[tuple[int, int]] = set()  # (msg_id, snapshot)
    for ev in diagram.events:
        if ev.kind == "record_message" and ev.msg_id is not None and ev.snapshot is not None:
            recorded_msgs.add((ev.msg_id, ev.snapshot))
    cuts: dict[int, list[tuple[float, float]]] = {}

    for n, ev in enumerate(diagram.events):
        x = left + step_width * (columns[n] + 1)
        y = lanes[ev.machine]
        if ev.kind == "send" and ev.msg_id is not None:
            sends[ev.msg_id] = (x, y, ev)
        elif ev.kind == "receive" and ev.msg_id is not None and ev.msg_id in sends:
            sx, sy, sev = sends[ev.msg_id]
            is_red = sev.snapshot is not None
            recorded = any(mid == ev.msg_id for mid, _ in recorded_msgs)
            colour = "#c0392b" if is_red else ("#1e8449" if recorded else "#222")
            dash = ' stroke-dasharray="5,4"' if is_red else ""
            width_attr = "2.5" if recorded else "1.3"
            marker = "redarrow" if is_red else "arrow"
            out.append(
                f'<line x1="{sx}" y1="{sy}" x2="{x}" y2="{y}" stroke="{colour}" '
                f'stroke-width="{width_attr}"{dash} marker-end="url(#{marker})"/>'
            )
        if ev.kind == "record_state" and ev.snapshot is not None:
            colour = _CUT_COLOURS[(ev.snapshot - 1) % len(_CUT_COLOURS)]
            out.append(
                f'<circle cx="{x}" cy="{y}" r="9" fill="none" stroke="{colour}" '
                'stroke-width="2"/>'
            )
            cuts.setdefault(ev.snapshot, []).append((x, y))
        elif ev.kind in ("receive", "internal") or (ev.kind == "send" and ev.snapshot is None):
            fill = "#c0392b" if ev.snapshot is not None else "#222"
            out.append(f'<circle cx="{x}" cy="{y}" r="4" fill="{fill}"/>')
        if ev.label:
            out.append(
                f'<text x="{x}" y="{y - 12}" text-anchor="middle">{escape(ev.label)}</text>'
            )

    for k, points in sorted(cuts.items()):
        colour = _CUT_COLOURS[(k - 1) % len(_CUT_COLOURS)]
        ordered = sorted(points, key=lambda p: p[1])
        path = " ".join(f"{px},{py}" for px, py in ordered)
        out.append(
            f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="1.5" '
            'stroke-dasharray="2,3"/>'
        )
        lx, ly = ordered[-1]
        out.append(
            f'<text x="{lx + 8}" y="{ly + 24}" fill="{colour}">cut of snapshot {k}</text>'
        )
    out.append(
        f'<text x="{left}" y="{height - 10}" fill="#555">black: application message · '
        "dashed red: red letter · green: recorded in a buffer's stream · "
        "circle: a machine records its state (the cut)</text>"
    )
    out.append("</svg>")
    return "\n".join(out)
