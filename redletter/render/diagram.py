"""Space-time diagrams of a run, with the cut each snapshot recorded.

A diagram is drawn from the run's *observable events* (the same events the
conformance harness sees): one horizontal line per machine, time flowing to the
right, one column per atomic step, a dot per event and an arrow per message.
What a reader of EWD 864 needs to see is drawn so that colour is never the only
cue (the palette is Okabe and Ito's, safe for the common colour blindnesses):

- application messages solid black; red letters dashed vermillion, one dash
  pattern per snapshot; a message still in flight when the run ends is drawn to
  the right edge and ends in an open arrowhead, labelled *in flight*;
- each snapshot has its own colour, dash pattern and marker shape: the marker
  where a machine records its state, the thick arrow of every message recorded
  in a buffer's stream, and **the cut**, a line through the recorded events from
  the top lane to the bottom one;
- beside each machine's line, what each snapshot recorded there: the machine's
  state and the stream of each of its input buffers (the machine that records a
  buffer is the buffer's receiver);
- a legend laid out in as many rows as the drawing's width needs.

Long runs scale: the step width and lane height shrink with the number of
columns and machines down to a floor that stays readable at 100 % zoom (labels
are dropped first, and the drawing says so); past that the drawing says, in
:attr:`Drawing.warnings` and in the picture, that it will not be legible.

The output is a self-contained SVG written by hand: it needs no browser, no font
files and no plotting library (a plotting library would add a heavy dependency
for what is lines, arrows and text whose every pixel the golden test pins).
Every element of an event carries ``data-step`` (the step it happens in; a
message also ``data-send``), so the proof explorer can highlight the current
step and fade the future without a second renderer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from html import escape, unescape
from itertools import pairwise

from redletter.errors import InputError

__all__ = [
    "BARRIER_WORDS",
    "CHANDY_LAMPORT_WORDS",
    "EVENT_KINDS",
    "EXPECTED_WORDS",
    "Callout",
    "Diagram",
    "Drawing",
    "Event",
    "RecordNote",
    "SnapshotStyle",
    "Words",
    "callout_mark",
    "draw",
    "label_boxes",
    "layout",
    "overlapping_labels",
    "render_svg",
    "snapshot_style",
    "texts_outside",
    "wrap_note",
]

#: The kinds of event a diagram understands.
EVENT_KINDS = ("send", "receive", "internal", "record_state", "record_message")

INK = "#1a1a1a"  #: text and application messages
VERMILLION = "#D55E00"  #: red letters (Okabe-Ito vermillion)
GREY = "#6b6b6b"  #: machine lines, notes

#: Average advance of a character of the 12 px sans-serif the SVG asks for, with
#: DejaVu Sans (the widest common fallback) as the bound: text is measured with it
#: so that nothing is cut off.
CHAR_PX = 7.4


@dataclass(frozen=True, slots=True)
class SnapshotStyle:
    """How snapshot ``k`` is drawn: colour, dash pattern of its cut and of its red
    letters, and the marker shape of its recorded events."""

    colour: str
    dash: str  #: the cut's stroke-dasharray
    letter_dash: str  #: the red letters' stroke-dasharray
    shape: str  #: "circle", "square", "diamond" or "triangle"
    shape_name: str  #: the shape in words, for legends and screen readers


#: Neighbouring ids get far-apart colours whether ids start at 1 (the specs: blue,
#: bluish green, orange, sky blue, reddish purple) or at 0 (COS 418: reddish purple, then
#: blue, ...); the two blues are three ids apart, each with its own dash and shape.
_STYLES = (
    SnapshotStyle("#0072B2", "7,4", "6,4", "circle", "circle"),
    SnapshotStyle("#009E73", "10,3,2,3", "10,3,2,3", "diamond", "diamond"),
    SnapshotStyle("#E69F00", "1,3", "12,3", "triangle", "triangle"),
    SnapshotStyle("#56B4E9", "4,2,1,2", "4,2,1,2", "square", "square"),
    SnapshotStyle("#CC79A7", "2,3", "9,3,2,3,2,3", "square", "square"),
)
#: A red letter where the rules send it and the program under test did not: solid and
#: pale with an open head (every snapshot's own red letters are dashed).
DUE_DASH = "none"
DUE_OPACITY = "0.45"


def snapshot_style(k: int) -> SnapshotStyle:
    """The style of snapshot id ``k`` (styles repeat after five; :data:`_STYLES`)."""
    return _STYLES[(k - 1) % len(_STYLES)]


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
    #: a red letter drawn as a finding (send events only): ``"due"`` where the rules send
    #: it but the program under test did not; ``"late"`` where the program sent it instead
    mark: str = ""

    def __post_init__(self) -> None:
        if self.kind not in EVENT_KINDS:
            raise InputError(
                f"unknown diagram event kind {self.kind!r}; expected one of "
                + ", ".join(EVENT_KINDS),
                code="RL-INPUT-DIAGRAM",
            )


@dataclass(frozen=True, slots=True)
class Words:
    """The words a diagram uses for its marks, so that each algorithm is drawn in its
    own vocabulary (Chandy-Lamport's red letters and snapshots, Flink's barriers and
    checkpoints) and a picture of an expectation says so."""

    message: str = "application message"
    marker: str = "red letter"  #: a marker in flight: "red letter 1 in flight"
    marker_legend: str = "red letter (marker)"
    snapshot: str = "snapshot"
    record_state: str = "a machine records its state"
    record_message: str = "message recorded in a buffer's stream"
    records_title: str = "recorded by each snapshot"
    due_marker: str = "red letter where the rules send it (the node did not)"
    late_marker: str = "red letter as the node sent it (not where the rules say)"


#: Chandy-Lamport's words (EWD 864's red letters).
CHANDY_LAMPORT_WORDS = Words()
#: Flink's asynchronous barrier snapshots: barriers, checkpoints, restores.
BARRIER_WORDS = Words(
    message="record (an element of a stream)",
    marker="barrier",
    marker_legend="barrier",
    snapshot="checkpoint",
    record_state="an operator snapshots its state",
    record_message="record stored with the checkpoint (in flight, logged)",
    records_title="stored by each checkpoint",
)
#: A picture of what the algorithm records, drawn beside what a program under test
#: recorded (COS 418): the marks are the expectation, never the program's records.
EXPECTED_WORDS = Words(
    marker="marker",
    marker_legend="marker",
    record_state="where the algorithm records the state (expected)",
    record_message="message the algorithm records in the stream (expected)",
    records_title="expected vs recorded, by snapshot",
    due_marker="marker where the rules send it (the package did not)",
    late_marker="marker as the package sent it (not where the rules say)",
)


@dataclass(frozen=True, slots=True)
class RecordNote:
    """What snapshot ``snapshot`` recorded at ``machine``: ``text`` is written beside
    the machine's line (its recorded state, then its input buffers' streams)."""

    snapshot: int
    machine: str
    text: str


@dataclass(frozen=True, slots=True)
class Callout:
    """A numbered mark beside each of the messages ``msg_ids`` (a finding: the marker
    where the rules send it, and where it was sent instead), with ``text`` written under
    the picture after the same number."""

    msg_ids: tuple[int, ...]
    text: str


@dataclass(frozen=True, slots=True)
class Diagram:
    """The laid-out diagram: machines top to bottom, events left to right.

    ``axis``: (step, time) pairs: a time axis under the machines, each time written under
    the columns of its steps (the times a report's words use)."""

    machines: tuple[str, ...]
    events: tuple[Event, ...]
    title: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)
    records: tuple[RecordNote, ...] = field(default_factory=tuple)
    words: Words = CHANDY_LAMPORT_WORDS
    axis: tuple[tuple[int, int], ...] = field(default_factory=tuple)
    callouts: tuple[Callout, ...] = field(default_factory=tuple)


def layout(
    machines: Sequence[str],
    events: Sequence[Event],
    *,
    title: str = "",
    records: Sequence[RecordNote] = (),
    notes: Sequence[str] = (),
    words: Words = CHANDY_LAMPORT_WORDS,
    axis: Sequence[tuple[int, int]] = (),
    callouts: Sequence[Callout] = (),
) -> Diagram:
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
    for r in records:
        if r.machine not in known:
            raise InputError(
                f"a recording of snapshot {r.snapshot} is noted at unknown machine "
                f"{r.machine!r}; the machines are {', '.join(machines)}",
                code="RL-INPUT-DIAGRAM",
            )
    return Diagram(
        tuple(machines),
        tuple(events),
        title,
        tuple(notes),
        tuple(records),
        words,
        tuple(axis),
        tuple(callouts),
    )


# --------------------------------------------------------------------------- geometry

MAX_STEP_W = 46  #: column width of a short run
MIN_STEP_W = 8  #: the narrowest column that still separates two events by eye
MAX_LANE_H = 72
MIN_LANE_H = 22  #: two lines of 12 px text apart
PLOT_BUDGET_W = 1600  #: columns shrink to fit this width before the floor
PLOT_BUDGET_H = 900
#: Beyond these the drawing is no longer legible at 100 % zoom or in print.
LEGIBLE_W = 16000
LEGIBLE_H = 4000
#: A note of what a snapshot recorded wraps after this many characters (never cut).
RECORD_WRAP_CHARS = 72
#: Bold text is this much wider than regular (DejaVu Sans Bold over DejaVu Sans).
BOLD = 1.12


def _text_w(text: str, size: float = 12, *, bold: bool = False) -> float:
    return len(text) * CHAR_PX * size / 12 * (BOLD if bold else 1.0)


def _f(x: float) -> str:
    """A coordinate: at most one decimal, no trailing zeros."""
    r = round(x, 1)
    return str(int(r)) if r == int(r) else f"{r}"


@dataclass(frozen=True)
class Drawing:
    """A rendered diagram: the SVG text, its size, and what the renderer had to give
    up (``warnings``: e.g. labels dropped, or a run too long to be legible)."""

    svg: str
    width: int
    height: int
    step_width: float
    lane_height: float
    labels: bool
    warnings: tuple[str, ...]

    @property
    def legible(self) -> bool:
        """Readable at 100 % zoom (every mark at least the floor size, the whole
        drawing within :data:`LEGIBLE_W` x :data:`LEGIBLE_H`)."""
        return self.width <= LEGIBLE_W and self.height <= LEGIBLE_H


def _columns(events: Sequence[Event]) -> tuple[list[int], int]:
    columns: list[int] = []
    col, last_step = -1, object()
    for ev in events:
        if ev.step is None or ev.step != last_step:
            col += 1
        last_step = ev.step if ev.step is not None else object()
        columns.append(col)
    return columns, col + 1


def _shape(shape: str, x: float, y: float, r: float, colour: str, attrs: str) -> str:
    common = f'fill="white" fill-opacity="0.6" stroke="{colour}" stroke-width="2.5"{attrs}'
    if shape == "circle":
        return f'<circle cx="{_f(x)}" cy="{_f(y)}" r="{_f(r)}" {common}/>'
    if shape == "square":
        s = r * 0.9
        return (
            f'<rect x="{_f(x - s)}" y="{_f(y - s)}" width="{_f(2 * s)}" height="{_f(2 * s)}" '
            f"{common}/>"
        )
    if shape == "diamond":
        pts = f"{_f(x)},{_f(y - r * 1.2)} {_f(x + r * 1.2)},{_f(y)} {_f(x)},{_f(y + r * 1.2)} "
        pts += f"{_f(x - r * 1.2)},{_f(y)}"
        return f'<polygon points="{pts}" {common}/>'
    pts = f"{_f(x)},{_f(y - r * 1.2)} {_f(x + r * 1.1)},{_f(y + r * 0.8)} "
    pts += f"{_f(x - r * 1.1)},{_f(y + r * 0.8)}"
    return f'<polygon points="{pts}" {common}/>'


def _legend_items(
    snapshots: Sequence[int],
    in_flight: bool,
    words: Words = CHANDY_LAMPORT_WORDS,
    marks: set[str] | frozenset[str] = frozenset(),
) -> list[tuple[str, str]]:
    """(glyph SVG at origin, text) per legend entry; glyphs are 24 px wide."""
    items: list[tuple[str, str]] = [
        (
            f'<line x1="0" y1="0" x2="22" y2="0" stroke="{INK}" stroke-width="1.4" '
            'marker-end="url(#rl-arrow)"/>',
            words.message,
        ),
        (f'<circle cx="11" cy="0" r="3.5" fill="{INK}"/>', "event (send, receive, internal)"),
    ]
    many = len(snapshots) > 1
    for k in snapshots:
        st = snapshot_style(k)
        items.append(
            (
                f'<line x1="0" y1="0" x2="22" y2="0" stroke="{VERMILLION}" stroke-width="1.6" '
                f'stroke-dasharray="{st.letter_dash}" marker-end="url(#rl-redarrow)"/>',
                f"{words.marker_legend} of {words.snapshot} {k}" if many else words.marker_legend,
            )
        )
    for k in snapshots:
        st = snapshot_style(k)
        who = f" of {words.snapshot} {k}" if many else ""
        items.append(
            (
                _shape(st.shape, 11, 0, 6, st.colour, ""),
                f"{words.record_state}{who} ({st.shape_name})",
            )
        )
        items.append(
            (
                f'<line x1="0" y1="0" x2="22" y2="0" stroke="{st.colour}" stroke-width="3.2" '
                f'marker-end="url(#rl-arrow-{k})"/>',
                f"{words.record_message}{who}",
            )
        )
        items.append(
            (
                f'<line x1="11" y1="-8" x2="11" y2="8" stroke="{st.colour}" stroke-width="2" '
                f'stroke-dasharray="{st.dash}"/>',
                f"the cut{who}",
            )
        )
    if "due" in marks:
        items.append(
            (
                f'<line x1="0" y1="0" x2="22" y2="0" stroke="{VERMILLION}" stroke-width="2.6" '
                f'stroke-opacity="{DUE_OPACITY}" marker-end="url(#rl-redopen)"/>',
                words.due_marker,
            )
        )
    if "late" in marks:
        items.append(
            (
                '<line x1="0" y1="0" x2="22" y2="0" stroke="#f6c7a6" stroke-width="8"/>'
                f'<line x1="0" y1="0" x2="22" y2="0" stroke="{VERMILLION}" stroke-width="2.6" '
                'marker-end="url(#rl-redarrow)"/>',
                words.late_marker,
            )
        )
    if in_flight:
        items.append(
            (
                f'<line x1="0" y1="0" x2="22" y2="0" stroke="{INK}" stroke-width="1.4" '
                'marker-end="url(#rl-open)"/>',
                "in flight when the run ends (open arrowhead)",
            )
        )
    return items


def _markers(snapshots: Sequence[int]) -> str:
    def solid(name: str, colour: str) -> str:
        return (
            f'<marker id="{name}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="9" '
            f'markerHeight="9" markerUnits="userSpaceOnUse" orient="auto-start-reverse">'
            f'<path d="M0,0 L10,5 L0,10 z" fill="{colour}"/></marker>'
        )

    out = [solid("rl-arrow", INK), solid("rl-redarrow", VERMILLION)]
    out.append(
        '<marker id="rl-open" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="11" '
        'markerHeight="11" markerUnits="userSpaceOnUse" orient="auto-start-reverse">'
        '<path d="M0,0 L10,5 L0,10 z" '
        f'fill="white" stroke="{INK}" stroke-width="1.5"/></marker>'
    )
    out.append(
        '<marker id="rl-redopen" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="11" '
        'markerHeight="11" markerUnits="userSpaceOnUse" orient="auto-start-reverse">'
        '<path d="M0,0 L10,5 L0,10 z" '
        f'fill="white" stroke="{VERMILLION}" stroke-width="1.5"/></marker>'
    )
    out.extend(solid(f"rl-arrow-{k}", snapshot_style(k).colour) for k in snapshots)
    return "<defs>" + "".join(out) + "</defs>"


def wrap_note(text: str, chars: int = RECORD_WRAP_CHARS) -> list[str]:
    """``text`` in lines of at most ``chars`` characters, broken after ``"; "`` or
    ``", "`` where it can (else at a space, else anywhere); lines after the first are
    indented two spaces.  The proof explorer wraps the notes it rewrites step by step
    the same way (``wrapNote`` in assets/explorer.js)."""
    if len(text) <= chars:
        return [text]
    pieces = re.split(r"(?<=; )|(?<=, )", text)
    lines: list[str] = []
    cur = ""
    for piece in pieces:
        while piece:
            if len(cur) + len(piece) <= chars:
                cur += piece
                piece = ""
            elif cur.strip():
                lines.append(cur.rstrip())
                cur = "  "
            else:  # one piece longer than a line: break it at a space, else anywhere
                room = chars - len(cur)
                cut = piece.rfind(" ", 0, room)
                cut = cut + 1 if cut > 0 else room
                lines.append((cur + piece[:cut]).rstrip())
                piece = piece[cut:]
                cur = "  "
    if cur.strip():
        lines.append(cur.rstrip())
    return lines


def _wrap_words(text: str, chars: int) -> list[str]:
    """A note under the picture in lines of at most ``chars`` characters, broken at
    spaces (never inside a word, unless a word is longer than a line)."""
    out: list[str] = []
    for para in text.split("\n"):
        line = ""
        for word in para.split(" "):
            while len(word) > chars:
                if line:
                    out.append(line)
                    line = ""
                out.append(word[:chars])
                word = word[chars:]
            if not line:
                line = word
            elif len(line) + 1 + len(word) <= chars:
                line += " " + word
            else:
                out.append(line)
                line = word
        out.append(line)
    return out


#: Circled numbers for the callouts of a picture (its findings), 1 to 20.
_CIRCLED = "①②③④⑤⑥⑦⑧⑨⑩⑪⑫⑬⑭⑮⑯⑰⑱⑲⑳"


def callout_mark(n: int) -> str:
    """The mark of callout ``n`` (1-based): ``①``."""
    return _CIRCLED[n - 1] if 1 <= n <= len(_CIRCLED) else f"({n})"


def draw(
    diagram: Diagram,
    *,
    step_width: float | None = None,
    lane_height: float | None = None,
    reserve: Sequence[str] = (),
) -> Drawing:
    """Lay out and render ``diagram`` (sizes chosen from its length unless given).

    ``reserve``: other texts the record notes may show (the proof explorer rewrites
    them step by step, to what is recorded so far): the notes' column is made wide
    and tall enough for them too."""
    machines = diagram.machines
    events = diagram.events
    columns, ncol = _columns(events)
    n = max(len(machines), 1)
    warnings: list[str] = []

    snapshots = sorted(
        {ev.snapshot for ev in events if ev.snapshot is not None}
        | {r.snapshot for r in diagram.records}
    )
    records_at: dict[str, list[RecordNote]] = {}
    for r in diagram.records:
        records_at.setdefault(r.machine, []).append(r)
    # what each snapshot recorded, wrapped (never cut): lines per note, at least as
    # many as the longest of the texts the explorer may put in its place
    least = max((len(wrap_note(t)) for t in reserve), default=1)
    rec_texts = {m: [(r, wrap_note(r.text)) for r in notes] for m, notes in records_at.items()}
    rec_lines = max(
        (sum(max(len(ls), least) for _, ls in v) for v in rec_texts.values()), default=0
    )

    # ---- sizes
    w = step_width if step_width is not None else MAX_STEP_W
    if step_width is None and ncol > 0:
        w = max(MIN_STEP_W, min(MAX_STEP_W, PLOT_BUDGET_W / (ncol + 1)))
    h = lane_height if lane_height is not None else MAX_LANE_H
    if lane_height is None:
        h = max(MIN_LANE_H, min(MAX_LANE_H, PLOT_BUDGET_H / n))
        h = max(h, 15.0 * rec_lines + 12) if rec_lines else h
    longest_label = max((len(ev.label) for ev in events), default=0)
    labels = longest_label == 0 or w >= _text_w("M" * min(longest_label, 3)) + 4
    if not labels:
        warnings.append(
            f"event labels omitted: {ncol} steps leave {_f(w)} px per step "
            "(each event's label is in the step list)"
        )
    name_w = max((_text_w(m, 13, bold=True) for m in machines), default=20) + 26
    if diagram.axis:
        name_w = max(name_w, _text_w("time", bold=True) + 26)
    x0 = name_w
    in_flight_extra = w + 30
    x_end = x0 + w * (ncol + 1) + in_flight_extra
    rec_w = max((_text_w(t) for v in rec_texts.values() for _, ls in v for t in ls), default=0.0)
    if rec_texts:
        rec_w = max(
            [
                rec_w,
                *(_text_w(line) for t in reserve for line in wrap_note(t)),
                _text_w(diagram.words.records_title, bold=True) - 18,
            ]
        )
    sent_ids = {ev.msg_id for ev in events if ev.kind == "send" and ev.msg_id is not None}
    got_ids = {ev.msg_id for ev in events if ev.kind == "receive" and ev.msg_id is not None}
    in_flight_ids = sent_ids - got_ids
    # the labels of messages in flight stand right of their arrowheads, in a column of
    # their own between the plot and the records (never over the plot's own labels)
    send_of = {ev.msg_id: ev for ev in events if ev.kind == "send" and ev.msg_id is not None}
    in_flight_text = {mid: _in_flight_text(send_of[mid], diagram.words) for mid in in_flight_ids}
    in_w = max((_text_w(t) for t in in_flight_text.values()), default=-12.0) + 12
    rec_x = x_end + 18 + in_w
    width_core = rec_x + (rec_w + 30 if rec_w else 0) + 10

    # ---- the legend, in rows that fit the width
    words = diagram.words
    marks = {ev.mark for ev in events if ev.kind == "send" and ev.mark}
    items = _legend_items(snapshots, bool(in_flight_ids), words, marks)
    # rows no wider than a screen, so the legend reads at 100 % zoom without scrolling
    legend_w = min(max(width_core - 20, 620.0), 1100.0)
    rows: list[list[tuple[str, str, float]]] = [[]]
    used = 0.0
    for glyph, text in items:
        item_w = 30 + _text_w(text) + 22
        if rows[-1] and used + item_w > legend_w:
            rows.append([])
            used = 0.0
        rows[-1].append((glyph, text, used))
        used += item_w
    legend_right = max((x + 30 + _text_w(t) for row in rows for _, t, x in row), default=0.0)
    width = int(max(width_core, legend_right + 30))

    title_h = 28 if diagram.title else 8
    legend_top = title_h + 8
    legend_h = 20 * len(rows)
    label_rows = len(snapshots) + (1 if records_at else 0)
    # headroom for a second row of labels over the top line, below the cut labels
    head = (
        LABEL_ROW
        if labels and machines and any(ev.label and ev.machine == machines[0] for ev in events)
        else 0.0
    )
    top = legend_top + legend_h + 14 + 17 * label_rows + h * 0.45 + head
    lanes = {m: top + i * h for i, m in enumerate(machines)}
    bottom_lane = top + h * (n - 1)
    label_y0 = top - h * 0.45 - 6 - head  # the baseline of the lowest cut label
    sides = _label_sides(events, lanes)
    # below the last line: its labels (those of messages that come from above), then
    # the time axis, then the notes
    below_last = any(
        ev.label and s == "below" and ev.machine == machines[-1]
        for ev, s in zip(events, sides, strict=True)
    )
    floor = bottom_lane + (16 + 2 * LABEL_ROW if below_last else h * 0.45)
    placed = _place_labels(events, columns, lanes, machines, labels, x0, w, label_y0, floor, sides)
    cut_short = sum(
        1 for i, ev in enumerate(events) if ev.label and labels and placed[i][1] != ev.label
    )
    if cut_short:
        warnings.append(
            f"{cut_short} event label{'s' if cut_short != 1 else ''} shortened or left out where "
            f"{'it' if cut_short == 1 else 'they'} would overlap another (each is in the step list)"
        )
    axis_y = floor + 10
    notes_top = axis_y + (34 if diagram.axis else 30)
    # notes under the picture wrap at its width (never wider than a screen)
    note_chars = max(60, int(min(max(width_core, 620.0), 1100.0) // CHAR_PX) - 2)
    callouts = [
        (callout_mark(i), c)
        for i, c in enumerate(diagram.callouts, start=1)
        if any(mid in sent_ids for mid in c.msg_ids)
    ]

    def note_lines() -> list[str]:
        texts = [f"{mark} {c.text}" for mark, c in callouts] + [*diagram.notes, *warnings]
        return [line for t in texts for line in _wrap_words(t, note_chars)]

    notes_lines = note_lines()
    height_est = notes_top + 18 * len(notes_lines) - 8
    if width > LEGIBLE_W or height_est > LEGIBLE_H:
        warnings.append(
            f"not legible at 100 % zoom or in print: {len(events)} events in {ncol} steps on "
            f"{len(machines)} machines need {width} x {int(height_est)} px "
            f"(more than {LEGIBLE_W} x {LEGIBLE_H}); draw a shorter run or fewer machines"
        )
        notes_lines = note_lines()
    height = int(notes_top + 18 * len(notes_lines) - 8)
    width = int(
        max(
            [
                width,
                _text_w(diagram.title, 14, bold=True) + 20 if diagram.title else 0,
                *(_text_w(line) + 20 for line in notes_lines),
            ]
        )
    )

    # ---- SVG
    desc = (
        f"Space-time diagram: {len(machines)} machines ({', '.join(machines[:12])}"
        f"{', ...' if len(machines) > 12 else ''}), {ncol} steps, "
        f"{len(snapshots)} snapshot{'s' if len(snapshots) != 1 else ''}."
    )
    out: list[str] = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Liberation Sans, Arial, '
        f'sans-serif" font-size="12" role="img" aria-labelledby="rl-title rl-desc" '
        f'data-steps="{ncol}">',
        f'<title id="rl-title">{escape(diagram.title or "space-time diagram")}</title>',
        f'<desc id="rl-desc">{escape(desc)}</desc>',
        _markers(snapshots),
        f'<rect width="{width}" height="{height}" fill="white"/>',
    ]
    if diagram.title:
        out.append(
            f'<text x="10" y="20" font-size="14" font-weight="bold" fill="{INK}">'
            f"{escape(diagram.title)}</text>"
        )
    out.append('<g class="rl-legend">')
    for r_i, row in enumerate(rows):
        ly = legend_top + 20 * r_i + 10.0
        for glyph, text, x in row:
            out.append(f'<g transform="translate({_f(10 + x)},{_f(ly)})">{glyph}</g>')
            out.append(
                f'<text x="{_f(10 + x + 30)}" y="{_f(ly + 4)}" fill="{INK}">{escape(text)}</text>'
            )
    out.append("</g>")

    def col_x(c: int) -> float:
        return x0 + w * (c + 1)

    # column bands (invisible; the explorer highlights the current step's)
    steps_of_col: dict[int, int] = {}
    for ev, c in zip(events, columns, strict=True):
        if ev.step is not None:
            steps_of_col.setdefault(c, ev.step)
    out.append('<g class="rl-cols">')
    for c in range(ncol):
        step = steps_of_col.get(c, c)
        out.append(
            f'<rect class="rl-col" data-step="{step}" x="{_f(col_x(c) - w / 2)}" '
            f'y="{_f(top - h / 2)}" width="{_f(w)}" height="{_f(h * n)}" fill="none"/>'
        )
    out.append("</g>")

    for m, y in lanes.items():
        out.append(
            f'<text x="10" y="{_f(y + 4)}" font-size="13" font-weight="bold" fill="{INK}">'
            f"{escape(m)}</text>"
        )
        out.append(
            f'<line x1="{_f(x0)}" y1="{_f(y)}" x2="{_f(x_end)}" y2="{_f(y)}" stroke="{GREY}" '
            'stroke-width="1.5"/>'
        )

    # ---- the time axis: each time under the columns of its steps
    if diagram.axis and ncol:
        out.append(_time_axis(diagram.axis, steps_of_col, ncol, col_x, w, x0, x_end, axis_y))

    def step_of(i: int) -> int:
        ev = events[i]
        return ev.step if ev.step is not None else columns[i]

    # ---- messages
    recorded_by: dict[int, int] = {}  # msg_id -> snapshot that recorded it
    for ev in events:
        if ev.kind == "record_message" and ev.msg_id is not None and ev.snapshot is not None:
            recorded_by.setdefault(ev.msg_id, ev.snapshot)
    sends: dict[int, tuple[float, float, Event, int]] = {}
    ends: dict[int, tuple[float, float, float, float]] = {}  # msg_id -> its line
    r_dot = 4.0 if w >= 14 else 2.8
    out.append('<g class="rl-msgs">')
    for i, ev in enumerate(events):
        if ev.kind == "send" and ev.msg_id is not None:
            sends[ev.msg_id] = (col_x(columns[i]), lanes[ev.machine], ev, step_of(i))
        elif ev.kind == "receive" and ev.msg_id is not None and ev.msg_id in sends:
            sx, sy, sev, sstep = sends[ev.msg_id]
            x, y = col_x(columns[i]), lanes[ev.machine]
            out.append(_message(sev, ev.msg_id, sx, sy, x, y, sstep, step_of(i), recorded_by))
            ends[ev.msg_id] = (sx, sy, x, y)
    # Messages in flight end half-way to the receiver's line, at the right edge, their
    # labels right of the arrowheads; the ends are then spread so that no two labels
    # (12 px high) come closer than 16 px, in the order of their wished-for heights.
    wish: list[tuple[float, int]] = []
    for mid in sorted(in_flight_ids):
        sx, sy, sev, _ = sends[mid]
        assert sev.channel is not None
        ty = lanes.get(sev.channel[1], sy)
        wish.append(((sy + ty) / 2, mid))
    wish.sort()
    end_y: dict[int, float] = {}
    prev = float("-inf")
    for want, mid in wish:
        end_y[mid] = max(want, prev + 16)
        prev = end_y[mid]
    if wish:
        overshoot = prev - (bottom_lane + h * 0.45)
        lift = min(overshoot, min(end_y.values()) - (top - h * 0.45)) if overshoot > 0 else 0.0
        for mid in end_y:
            end_y[mid] -= max(lift, 0.0)
    for mid in sorted(in_flight_ids):
        sx, sy, sev, sstep = sends[mid]
        assert sev.channel is not None
        tx, ty = x_end - 4, end_y[mid]
        ends[mid] = (sx, sy, tx, ty)
        colour = VERMILLION if sev.snapshot is not None else INK
        letter = (
            DUE_DASH
            if sev.mark == "due"
            else snapshot_style(sev.snapshot).letter_dash
            if sev.snapshot is not None
            else ""
        )
        dash = f' stroke-dasharray="{letter}"' if letter else ""
        if sev.mark == "due":
            dash += f' stroke-opacity="{DUE_OPACITY}"'
        marker = "rl-redopen" if sev.snapshot is not None else "rl-open"
        cls = f" rl-{sev.mark}" if sev.mark else ""
        out.append(
            f'<line class="rl-msg rl-inflight{cls}" data-send="{sstep}" data-step="{sstep}" '
            f'x1="{_f(sx)}" y1="{_f(sy)}" x2="{_f(tx)}" y2="{_f(ty)}" stroke="{colour}" '
            f'stroke-width="{"2.6" if sev.mark == "late" else "1.5"}"{dash} '
            f'marker-end="url(#{marker})"/>'
        )
        out.append(
            f'<text class="rl-inflight-label" data-step="{sstep}" x="{_f(tx + 10)}" '
            f'y="{_f(ty + 4)}" font-style="italic" fill="{colour}">'
            f"{escape(in_flight_text[mid])}</text>"
        )
    out.append("</g>")

    # ---- events
    cuts: dict[int, list[tuple[float, float, int]]] = {}
    out.append('<g class="rl-events">')
    for i, ev in enumerate(events):
        x, y, s = col_x(columns[i]), lanes[ev.machine], step_of(i)
        if ev.kind == "record_state" and ev.snapshot is not None:
            st = snapshot_style(ev.snapshot)
            out.append(
                _shape(
                    st.shape,
                    x,
                    y,
                    8.5 if w >= 14 else 5,
                    st.colour,
                    f' class="rl-rec" data-step="{s}" data-snapshot="{ev.snapshot}"',
                )
            )
            cuts.setdefault(ev.snapshot, []).append((x, y, s))
        elif ev.kind == "record_message" and ev.snapshot is not None:
            st = snapshot_style(ev.snapshot)
            out.append(
                _shape(
                    st.shape,
                    x,
                    y,
                    4.5 if w >= 14 else 3,
                    st.colour,
                    f' class="rl-recmsg" data-step="{s}" data-snapshot="{ev.snapshot}"',
                )
            )
        elif ev.kind == "receive" and ev.snapshot is not None:
            out.append(
                f'<circle class="rl-ev" data-step="{s}" cx="{_f(x)}" cy="{_f(y)}" '
                f'r="{_f(r_dot * 0.75)}" fill="{VERMILLION}"/>'
            )
        elif ev.kind in ("receive", "internal") or (ev.kind == "send" and ev.snapshot is None):
            out.append(
                f'<circle class="rl-ev" data-step="{s}" cx="{_f(x)}" cy="{_f(y)}" '
                f'r="{_f(r_dot)}" fill="{INK}"/>'
            )
        ly, shown = placed[i]
        if shown:
            full = f"<title>{escape(ev.label)}</title>" if shown != ev.label else ""
            out.append(
                f'<text class="rl-label" data-step="{s}" x="{_f(x)}" y="{_f(ly)}" '
                f'text-anchor="middle" fill="{INK}">{full}{escape(shown)}</text>'
            )
    out.append("</g>")

    # ---- callouts: a numbered mark beside each message that is a finding, off its line
    if callouts:
        out.append('<g class="rl-callouts">')
        # what a mark must not cover: the labels placed, and the marks placed before it
        taken = [
            (col_x(columns[i]) - _text_w(t) / 2, b - 11.2, col_x(columns[i]) + _text_w(t) / 2,
             b + 2.9)
            for i, (b, t) in enumerate(placed)
            if t
        ]  # fmt: skip
        for mark, callout, mid in [(m, co, x) for m, co in callouts for x in co.msg_ids]:
            if mid not in ends:
                continue
            sx, sy, ex, ey = ends[mid]
            # 13 px off the line (on either side), at the first place along it that
            # touches nothing written before
            dx, dy = ey - sy, sx - ex
            norm = max((dx * dx + dy * dy) ** 0.5, 1.0)
            if dy > 0:
                dx, dy = -dx, -dy
            ox, oy = 13 * dx / norm, 13 * dy / norm
            spots = [
                (sx + (ex - sx) * f + side * ox, sy + (ey - sy) * f + side * oy)
                for f in (0.35, 0.5, 0.65, 0.2, 0.8)
                for side in (1, -1)
            ]
            free = next(
                (
                    (x, y)
                    for x, y in spots
                    if not any(
                        x - 10 < b[2] and b[0] < x + 10 and y - 10 < b[3] and b[1] < y + 10
                        for b in taken
                    )
                ),
                None,
            )
            if free is None:  # no room beside this arrow: its note still says it
                continue
            cx, cy = free
            taken.append((cx - 10, cy - 10, cx + 10, cy + 10))
            step = sends[mid][3]
            out.append(
                f'<g class="rl-callout" data-step="{step}" data-msg="{mid}">'
                f'<circle cx="{_f(cx)}" cy="{_f(cy)}" r="9" fill="white" stroke="{VERMILLION}" '
                f'stroke-width="1.6"/><text x="{_f(cx)}" y="{_f(cy + 4.5)}" '
                f'text-anchor="middle" font-size="13" font-weight="bold" fill="{VERMILLION}">'
                f"<title>{escape(callout.text)}</title>{mark}</text></g>"
            )
        out.append("</g>")

    # ---- cuts: a line through each snapshot's recorded events
    out.append('<g class="rl-cuts">')
    for k, points in sorted(cuts.items()):
        st = snapshot_style(k)
        ordered = sorted(points, key=lambda p: p[1])
        last_step = max(p[2] for p in ordered)
        first, last = ordered[0], ordered[-1]
        # A curve that crosses every machine's line upright at the recorded event, so
        # that it reads as a cut and not as one more message.
        d = [f"M{_f(first[0])},{_f(top - h * 0.45)} L{_f(first[0])},{_f(first[1])}"]
        for (ax, ay, _sa), (bx, by, _sb) in pairwise(ordered):
            half = (by - ay) / 2
            d.append(f"C{_f(ax)},{_f(ay + half)} {_f(bx)},{_f(by - half)} {_f(bx)},{_f(by)}")
        d.append(f"L{_f(last[0])},{_f(bottom_lane + h * 0.45)}")
        missing = [m for m in machines if m not in {_lane_of(lanes, py) for _, py, _ in points}]
        # a white halo under each cut, so that where two cuts cross each stays one line
        out.append(
            f'<path class="rl-cut-halo" data-step="{last_step}" d="{" ".join(d)}" fill="none" '
            'stroke="white" stroke-width="5" stroke-opacity="0.9"/>'
        )
        out.append(
            f'<path class="rl-cut" data-step="{last_step}" data-snapshot="{k}" '
            f'd="{" ".join(d)}" fill="none" stroke="{st.colour}" stroke-width="2.2" '
            f'stroke-dasharray="{st.dash}"/>'
        )
        label = f"cut of {words.snapshot} {k}"
        if missing:
            label += " (not recorded: " + ", ".join(missing) + ")"
        rank = snapshots.index(k)
        ly = label_y0 - 17 * (len(snapshots) - 1 - rank)
        out.append(
            f'<line class="rl-cut-label" data-step="{last_step}" x1="{_f(first[0])}" '
            f'y1="{_f(ly + 2)}" x2="{_f(first[0])}" y2="{_f(top - h * 0.45)}" '
            f'stroke="{st.colour}" stroke-width="1" stroke-dasharray="1,2"/>'
        )
        out.append(
            f'<text class="rl-cut-label" data-step="{last_step}" x="{_f(first[0] + 4)}" '
            f'y="{_f(ly)}" fill="{st.colour}" font-weight="bold">{escape(label)}</text>'
        )
    out.append("</g>")

    # ---- what each snapshot recorded, beside each machine's line (wrapped, never cut)
    if rec_texts:
        out.append('<g class="rl-records">')
        out.append(
            f'<text x="{_f(rec_x)}" y="{_f(label_y0 - 17 * len(snapshots))}" '
            f'font-weight="bold" fill="{INK}">{escape(words.records_title)}</text>'
        )
        for m, texts in rec_texts.items():
            total = sum(max(len(ls), least) for _, ls in texts)
            y = lanes[m] - (total - 1) * 7.5
            for r, lines in texts:
                st = snapshot_style(r.snapshot)
                out.append(_shape(st.shape, rec_x + 6, y - 4, 4.5, st.colour, ""))
                spans = (
                    escape(lines[0])
                    if len(lines) == 1
                    else "".join(
                        f'<tspan x="{_f(rec_x + 18)}" dy="{0 if j == 0 else 15}">'
                        f"{escape(line)}</tspan>"
                        for j, line in enumerate(lines)
                    )
                )
                out.append(
                    f'<text class="rl-record" data-snapshot="{r.snapshot}" '
                    f'data-machine="{escape(r.machine)}" data-lines="{max(len(lines), least)}" '
                    f'x="{_f(rec_x + 18)}" y="{_f(y)}" fill="{INK}">{spans}</text>'
                )
                y += 15 * max(len(lines), least)
        out.append("</g>")

    for j, note in enumerate(notes_lines):
        out.append(
            f'<text class="rl-note" x="10" y="{_f(notes_top + 18 * j)}" fill="{GREY}">'
            f"{escape(note)}</text>"
        )
    out.append("</svg>")
    return Drawing("\n".join(out) + "\n", width, height, w, h, labels, tuple(warnings))


def _time_axis(
    axis: Sequence[tuple[int, int]],
    steps_of_col: dict[int, int],
    ncol: int,
    col_x: Callable[[int], float],
    w: float,
    x0: float,
    x_end: float,
    y: float,
) -> str:
    """The time axis: a line under the machines, a tick where the time changes, and
    each time written under the columns of its steps (``time 6`` where it fits, else
    ``6``; a time whose text would touch the previous one is left out)."""
    time_of = dict(axis)
    groups: list[tuple[int, int, int]] = []  # (time, first col, last col)
    for c in range(ncol):
        t = time_of.get(steps_of_col.get(c, -1))
        if t is None:
            continue
        if groups and groups[-1][0] == t and groups[-1][2] == c - 1:
            groups[-1] = (t, groups[-1][1], c)
        else:
            groups.append((t, c, c))
    out = [
        f'<g class="rl-axis"><line x1="{_f(x0)}" y1="{_f(y)}" x2="{_f(x_end)}" y2="{_f(y)}" '
        f'stroke="{GREY}" stroke-width="1"/>'
        f'<text x="10" y="{_f(y + 15)}" font-weight="bold" fill="{INK}">time</text>'
    ]
    right = x0 + 2
    for t, a, b in groups:
        left_x, right_x = col_x(a) - w / 2, col_x(b) + w / 2
        out.append(
            f'<line x1="{_f(left_x)}" y1="{_f(y - 4)}" x2="{_f(left_x)}" y2="{_f(y + 4)}" '
            f'stroke="{GREY}" stroke-width="1"/>'
        )
        mid = (col_x(a) + col_x(b)) / 2
        for text in (f"time {t}", str(t)):
            half = _text_w(text) / 2
            if mid - half >= right + 4 and (text == str(t) or 2 * half <= right_x - left_x + 6):
                out.append(
                    f'<text class="rl-time" data-time="{t}" x="{_f(mid)}" y="{_f(y + 15)}" '
                    f'text-anchor="middle" fill="{INK}">{text}</text>'
                )
                right = mid + half
                break
    out.append("</g>")
    return "".join(out)


def _in_flight_text(sev: Event, words: Words) -> str:
    what = f"{words.marker} {sev.snapshot}" if sev.snapshot is not None else (sev.label or "msg")
    return f"{what} in flight → {sev.channel[1] if sev.channel else '?'}"


LABEL_ROW = 15.0  #: the rise from one row of event labels to the next (a box is 14 px high)


def _label_sides(events: Sequence[Event], lanes: dict[str, float]) -> list[str]:
    """Where each event's label goes, ``above`` or ``below`` its machine's line: on the
    side away from its own message's line (a receipt of a message from a line above
    has it below, a send to a line above too), so that no label sits on its arrow."""
    sender: dict[int, str] = {}
    for ev in events:
        if ev.kind == "send" and ev.msg_id is not None:
            sender[ev.msg_id] = ev.machine
    out = []
    for ev in events:
        other: str | None = None
        if ev.kind == "receive" and ev.msg_id is not None:
            other = sender.get(ev.msg_id)
        elif ev.kind == "send" and ev.channel is not None:
            other = ev.channel[1]
        if other is not None and other in lanes and lanes[other] < lanes[ev.machine]:
            out.append("below")
        else:
            out.append("above")
    return out


def _place_labels(
    events: Sequence[Event],
    columns: Sequence[int],
    lanes: dict[str, float],
    machines: Sequence[str],
    labels: bool,
    x0: float,
    w: float,
    ceiling_top: float,
    floor: float,
    sides: Sequence[str],
) -> list[tuple[float, str]]:
    """(baseline y, text shown) of each event's label, so that no two labels overlap.

    A label sits centred above its event (below it when its message comes from, or goes
    to, a line above: :func:`_label_sides`); when it would run into a label placed
    before, it moves a row further from the line (as many rows as fit before the next
    line, the cut labels above the top line, or ``floor`` under the last); when no row is
    free it is shortened to the room left (the full text in a tooltip), or left out
    ("")."""
    out: list[tuple[float, str]] = [(0.0, "")] * len(events)
    if not labels:
        return out
    order = list(machines)
    boxes: list[tuple[float, float, float, float]] = []  # left, top, right, bottom

    def baseline(y: float, side: str, row: int) -> float:
        return y - 11 - LABEL_ROW * row if side == "above" else y + 16 + LABEL_ROW * row

    def right_of(top: float, bottom: float, x: float) -> float:
        """The right edge of the labels placed before in this band, left of ``x``."""
        return max(
            (b[2] for b in boxes if b[1] < bottom and top < b[3] and b[0] < x),
            default=float("-inf"),
        )

    for i, ev in enumerate(events):
        if not ev.label:
            continue
        y = lanes[ev.machine]
        lane_i = order.index(ev.machine)
        side = sides[i]
        if side == "above":
            ceiling = ceiling_top + 6 if lane_i == 0 else lanes[order[lane_i - 1]] + 12
            nrows = max(1, min(3, int((y - 11 - 12 - ceiling) // LABEL_ROW) + 1))
        else:
            limit = lanes[order[lane_i + 1]] - 26 if lane_i + 1 < len(order) else floor
            nrows = max(1, min(3, int((limit - (y + 16)) // LABEL_ROW) + 1))
        x = x0 + w * (columns[i] + 1)
        half = _text_w(ev.label) / 2
        text = ev.label
        row = None
        for r in range(nrows):
            b = baseline(y, side, r)
            if right_of(b - 11.2, b + 2.9, x + half) + 4 <= x - half:
                row = r
                break
        if row is None:
            rights = [
                right_of(baseline(y, side, r) - 11.2, baseline(y, side, r) + 2.9, x)
                for r in range(nrows)
            ]
            row = min(range(nrows), key=lambda r: rights[r])
            room = 2 * (x - rights[row] - 4)
            chars = int(room // CHAR_PX)
            text = ev.label[: chars - 1] + "…" if chars >= 3 else ""
            half = _text_w(text) / 2
        b = baseline(y, side, row)
        if text:
            boxes.append((x - half, b - 11.2, x + half, b + 2.9))
        out[i] = (b, text)
    return out


_TEXT = re.compile(r"<text([^>]*)>(.*?)</text>", re.S)
_ATTR = re.compile(r'([\w-]+)="([^"]*)"')
_TSPAN = re.compile(r"<tspan([^>]*)>(.*?)</tspan>", re.S)


def label_boxes(svg: str) -> list[tuple[str, float, float, float, float]]:
    """Every text of a drawing with its box ``(text, left, top, right, bottom)``,
    measured as the renderer measures (:data:`CHAR_PX` per character at 12 px) and as a
    browser boxes a line of DejaVu Sans (0.93 of the font size above the baseline, 0.24
    below)."""
    out: list[tuple[str, float, float, float, float]] = []
    for m in _TEXT.finditer(svg):
        attrs = dict(_ATTR.findall(m.group(1)))
        inner = re.sub(r"<title>.*?</title>", "", m.group(2))
        if "x" not in attrs or "y" not in attrs:
            continue
        x, y = float(attrs["x"]), float(attrs["y"])
        size = float(attrs.get("font-size", "12"))
        bold = attrs.get("font-weight") == "bold"
        anchor = attrs.get("text-anchor", "start")
        spans = _TSPAN.findall(inner)
        lines = (
            [(dict(_ATTR.findall(a)), unescape(re.sub(r"<[^>]+>", "", t))) for a, t in spans]
            if spans
            else [({}, unescape(re.sub(r"<[^>]+>", "", inner)))]
        )
        for span, text in lines:
            x = float(span.get("x", x))
            y += float(span.get("dy", 0))
            if not text:
                continue
            width = _text_w(text, size, bold=bold)
            left = x if anchor == "start" else x - width if anchor == "end" else x - width / 2
            out.append((text, left, y - 0.93 * size, left + width, y + 0.24 * size))
    return out


def texts_outside(svg: str) -> list[str]:
    """The texts of a drawing whose boxes (:func:`label_boxes`) leave the drawing's own
    box (its ``width`` and ``height``): what a browser would cut off."""
    m = re.search(r'<svg[^>]*\swidth="([\d.]+)"[^>]*\sheight="([\d.]+)"', svg)
    if m is None:
        return []
    width, height = float(m.group(1)), float(m.group(2))
    return [
        text
        for text, left, top, right, bottom in label_boxes(svg)
        if left < 0 or top < 0 or right > width or bottom > height
    ]


def overlapping_labels(svg: str) -> list[tuple[str, str]]:
    """The pairs of texts of a drawing whose boxes (:func:`label_boxes`) overlap."""
    boxes = label_boxes(svg)
    return [
        (a[0], b[0])
        for i, a in enumerate(boxes)
        for b in boxes[i + 1 :]
        if a[1] < b[3] and b[1] < a[3] and a[2] < b[4] and b[2] < a[4]
    ]


def _lane_of(lanes: dict[str, float], y: float) -> str:
    return next(m for m, ly in lanes.items() if ly == y)


def _message(
    sev: Event,
    mid: int,
    sx: float,
    sy: float,
    x: float,
    y: float,
    sstep: int,
    rstep: int,
    recorded_by: dict[int, int],
) -> str:
    rec = recorded_by.get(mid)
    if sev.snapshot is not None:
        st = snapshot_style(sev.snapshot)
        # a finding: the red letter where the rules send it (dotted, open head), or where
        # the program under test sent it instead (thick)
        dash, width, head, cls, under = st.letter_dash, "1.6", "rl-redarrow", "", ""
        opacity = ""
        if sev.mark == "due":
            dash, width, head, cls = DUE_DASH, "2.6", "rl-redopen", " rl-due"
            opacity = f' stroke-opacity="{DUE_OPACITY}"'
        elif sev.mark == "late":
            width, cls = "2.6", " rl-late"
            under = (
                f'<line class="rl-late-halo" data-send="{sstep}" data-step="{rstep}" '
                f'x1="{_f(sx)}" y1="{_f(sy)}" x2="{_f(x)}" y2="{_f(y)}" stroke="#f6c7a6" '
                'stroke-width="8" stroke-linecap="round"/>'
            )
        return under + (
            f'<line class="rl-msg rl-red{cls}" data-send="{sstep}" data-step="{rstep}" '
            f'data-snapshot="{sev.snapshot}" data-msg="{mid}" x1="{_f(sx)}" y1="{_f(sy)}" '
            f'x2="{_f(x)}" y2="{_f(y)}" stroke="{VERMILLION}" stroke-width="{width}"{opacity} '
            f'stroke-dasharray="{"none" if sev.mark == "late" else dash}" '
            f'stroke-linecap="round" marker-end="url(#{head})"/>'
        )
    if rec is not None:
        st = snapshot_style(rec)
        return (
            f'<line class="rl-msg rl-recorded" data-send="{sstep}" data-step="{rstep}" '
            f'data-snapshot="{rec}" x1="{_f(sx)}" y1="{_f(sy)}" x2="{_f(x)}" y2="{_f(y)}" '
            f'stroke="{st.colour}" stroke-width="3.2" marker-end="url(#rl-arrow-{rec})"/>'
        )
    return (
        f'<line class="rl-msg rl-app" data-send="{sstep}" data-step="{rstep}" '
        f'x1="{_f(sx)}" y1="{_f(sy)}" x2="{_f(x)}" y2="{_f(y)}" stroke="{INK}" '
        'stroke-width="1.4" marker-end="url(#rl-arrow)"/>'
    )


def render_svg(
    diagram: Diagram, *, step_width: float | None = None, lane_height: float | None = None
) -> str:
    """Render ``diagram`` as a standalone SVG document (a string); see :func:`draw`."""
    return draw(diagram, step_width=step_width, lane_height=lane_height).svg
