"""The HTML page of a conformance run (``store/<run>/report.html``).

The harness gives plain data (:class:`ReportPage`); this module lays it out with
the explorer's styles: the verdict, the divergence as a definition list (where,
what the model does, what the node did, why it matters, and the properties it
breaks), the shrunk schedule with the divergence's row marked, the space-time
diagram of what the node did with that step's column shaded, the command that
replays it, a link to the proof explorer of the same schedule in the model, and
the table of every trace judged.  Self-contained (no script needed, no network),
readable at 100 % zoom, and it prints.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape

from redletter.render.explorer import asset, fill

__all__ = [
    "PROPERTY_NAMES",
    "DivergenceView",
    "ReportPage",
    "SnapshotView",
    "TraceRow",
    "properties_named",
    "render_report",
]

#: The properties a divergence's explanation may name, with the words that name them.
PROPERTY_NAMES: tuple[tuple[str, str], ...] = (
    ("Lemma0", r"Lemma 0|Lemma0"),
    ("Lemma1", r"Lemma 1|Lemma1"),
    ("RedLetterInvariant", r"RedLetterInvariant"),
    ("SnapshotsComplete", r"SnapshotsComplete"),
    ("SnapshotSatisfiesAppInv", r"SnapshotSatisfiesAppInv"),
    ("rule 1 (record the state on turning red)", r"\brule 1\b"),
    ("rule 2 (record a white buffer's stream)", r"\brule 2\b"),
)


def properties_named(text: str) -> tuple[str, ...]:
    """The properties (and recording rules) an explanation in words names, in the order of
    :data:`PROPERTY_NAMES` (the judges write them by these names)."""
    return tuple(name for name, pattern in PROPERTY_NAMES if re.search(pattern, text))


@dataclass(frozen=True)
class DivergenceView:
    """A divergence, as the report shows it."""

    step: int  #: 1-based step of the schedule; 0: the final report
    node: str
    summary: str
    model_did: str
    node_did: str
    why: str
    kind: str = ""

    @property
    def breaks(self) -> tuple[str, ...]:
        return properties_named(self.why)


@dataclass(frozen=True)
class SnapshotView:
    """One snapshot, what the model records beside what the node reported: rows of
    (machine or channel, the model's, the node's, whether they differ)."""

    snapshot: int
    rows: Sequence[tuple[str, str, str, bool]]
    note: str = ""  #: e.g. the tokens each holds in all

    @property
    def differs(self) -> tuple[str, ...]:
        """The machines and channels where the node's snapshot differs from the model's."""
        return tuple(place for place, _, _, bad in self.rows if bad)


@dataclass(frozen=True)
class TraceRow:
    """One judged trace."""

    name: str
    source: str
    steps: int
    verdict: str
    explanation: str


@dataclass(frozen=True)
class ReportPage:
    """Everything the report shows."""

    verdict: str
    node: str
    counts: Sequence[tuple[str, int]]
    trace: str = ""  #: the trace shown (the shrunk failure, or the last one judged)
    model: str = ""
    divergence: DivergenceView | None = None
    reason: str = ""  #: for an unknown verdict or a node error
    schedule: Sequence[tuple[str, str]] = ()  #: (step in words, raw step)
    shrunk_from: int | None = None
    shrink_runs: int | None = None
    replay: str = ""
    svg: str = ""
    diagram_notes: Sequence[str] = ()
    explorer: str = ""  #: relative link to the explorer page, if written
    snapshots: Sequence[SnapshotView] = ()  #: the model's snapshots beside the node's
    node_run: bool = False  #: the explorer shows the node's own run too
    journal: Sequence[str] = ()  #: the node's observed steps, in words
    traces: Sequence[TraceRow] = field(default_factory=tuple)
    stopped: str = ""  #: why traces were left unjudged, if the run stopped early
    sandbox: Sequence[tuple[str, bool, str]] = ()  #: (layer, active, what it does or why not)
    sandbox_mode: str = ""


def _counts(page: ReportPage) -> str:
    return ", ".join(f"{n} {k}" for k, n in page.counts)


def render_report(page: ReportPage) -> str:
    """The page as one HTML document."""
    v = escape(page.verdict)
    body: list[str] = [
        f'<h1>redletter conform: <span class="rl-verdict {v}">{v}</span></h1>',
        f'<p class="rl-sub">node <code>{escape(page.node)}</code>; {len(page.traces)} '
        f"trace{'s' if len(page.traces) != 1 else ''} judged ({escape(_counts(page))})"
        + (
            f"; shown: <code>{escape(page.trace)}</code> of {escape(page.model)}"
            if page.trace
            else ""
        )
        + "</p>",
    ]
    if page.stopped:
        body.append(f'<p class="rl-verdict unknown">Stopped early: {escape(page.stopped)}</p>')
    d = page.divergence
    if d is not None:
        where = f"step {d.step}" if d.step else "the final report"
        breaks = ", ".join(d.breaks) if d.breaks else "the run no longer follows the model"
        body.append(
            '<section class="rl-divergence" aria-labelledby="rl-div-h">'
            f'<h2 id="rl-div-h">Where node {escape(d.node)} parts from the model: '
            f"{escape(where)}</h2>"
            "<dl>"
            f"<dt>What differs</dt><dd>{escape(d.summary)}</dd>"
            f"<dt>The model</dt><dd>{escape(d.model_did)}</dd>"
            f"<dt>Node {escape(d.node)}</dt><dd>{escape(d.node_did)}</dd>"
            f"<dt>Why it matters</dt><dd>{escape(d.why)}</dd>"
            f'<dt>It breaks</dt><dd class="rl-breaks">{escape(breaks)}</dd>'
            + (f"<dt>Kind</dt><dd><code>{escape(d.kind)}</code></dd>" if d.kind else "")
            + "</dl></section>"
        )
    elif page.reason:
        body.append(
            '<section class="rl-divergence" aria-labelledby="rl-div-h">'
            f'<h2 id="rl-div-h">Why the verdict is {v}</h2><p>{escape(page.reason)}</p></section>'
        )
    if page.explorer:
        body.append(
            f'<p class="rl-noprint"><a href="{escape(page.explorer)}'
            + (f"#step={d.step}" if d is not None and d.step else "")
            + '">Step through this schedule in the proof explorer</a>: '
            + (
                "the node's own run beside the model's, each with both shadow networks of "
                "EWD 864, the divergence marked.</p>"
                if page.node_run
                else "the model's run of the same steps, with both shadow networks of EWD 864 "
                "and the divergence marked.</p>"
            )
        )
    if page.schedule:
        rows = []
        for i, (text, raw) in enumerate(page.schedule, start=1):
            here = d is not None and d.step == i
            cls = ' class="rl-here"' if here else ""
            rows.append(
                f'<tr id="step-{i}"{cls}><td>{i}</td>'
                f"<td>{escape(text)}{' ← diverges here' if here else ''}</td>"
                f"<td><code>{escape(raw)}</code></td></tr>"
            )
        title = f"Schedule ({len(page.schedule)} steps"
        if page.shrunk_from is not None:
            title += f", shrunk from {page.shrunk_from} in {page.shrink_runs} runs"
        title += ")"
        body.append(
            f'<section aria-labelledby="rl-sched-h"><h2 id="rl-sched-h">{escape(title)}</h2>'
            "<table><tr><th>#</th><th>step</th><th>as the spec writes it</th></tr>"
            + "".join(rows)
            + "</table></section>"
        )
    if page.replay:
        body.append(
            '<section aria-labelledby="rl-replay-h"><h2 id="rl-replay-h">Replay it</h2>'
            f"<pre>{escape(page.replay)}</pre></section>"
        )
    if page.svg:
        notes = "".join(f"<p class='rl-hint'>{escape(n)}</p>" for n in page.diagram_notes)
        shade = (
            f"<p class='rl-hint'>The shaded column is step {d.step}, where the node diverges.</p>"
            if d is not None and d.step
            else ""
        )
        body.append(
            '<section aria-labelledby="rl-diagram-h"><h2 id="rl-diagram-h">What the node did: '
            f"space-time diagram</h2>{shade}{notes}"
            f'<div class="rl-svgwrap">{page.svg}</div></section>'
        )
    for snap in page.snapshots:
        marked = ' class="rl-differs"'
        snap_rows = "".join(
            f"<tr{marked if bad else ''}><td>{escape(place)}</td>"
            f"<td>{escape(want)}</td><td>{escape(got)}{' ✗ differs' if bad else ''}</td></tr>"
            for place, want, got, bad in snap.rows
        )
        where = (
            "it differs from the model's at " + ", ".join(snap.differs)
            if snap.differs
            else "it is the model's"
        )
        body.append(
            f'<section aria-labelledby="rl-snap-{snap.snapshot}-h">'
            f'<h2 id="rl-snap-{snap.snapshot}-h">Snapshot {snap.snapshot}: what Chandy–Lamport '
            "records vs what the node reported</h2>"
            f"<p>The model's snapshot is the one Chandy–Lamport records on this schedule (and "
            f"its completion); the node's is what it reported at the end of its own run: "
            f"{escape(where)}{'; ' + escape(snap.note) if snap.note else ''}.</p>"
            "<table><tr><th>machine / channel</th><th>Chandy–Lamport records</th>"
            f"<th>node reported</th></tr>{snap_rows}</table></section>"
        )
    if page.journal:
        items = "".join(f"<li>{escape(line)}</li>" for line in page.journal)
        body.append(
            '<section aria-labelledby="rl-journal-h"><h2 id="rl-journal-h">What each step '
            f"showed</h2><ol>{items}</ol></section>"
        )
    if page.sandbox:
        layer_rows = "".join(
            f"<tr><td>{escape(name)}</td><td>"
            f'<span class="rl-verdict {"pass" if active else "unknown"}">'
            f"{'active' if active else 'not active'}</span></td><td>{escape(detail)}</td></tr>"
            for name, active, detail in page.sandbox
        )
        body.append(
            '<section aria-labelledby="rl-sandbox-h"><h2 id="rl-sandbox-h">Sandbox '
            f"({escape(page.sandbox_mode)})</h2><table><tr><th>layer</th><th>state</th>"
            f"<th>what it does, or why not</th></tr>{layer_rows}</table></section>"
        )
    if page.traces:
        trace_rows = "".join(
            f"<tr><td><code>{escape(t.name)}</code></td><td>{escape(t.source)}</td>"
            f'<td>{t.steps}</td><td><span class="rl-verdict {escape(t.verdict)}">'
            f"{escape(t.verdict)}</span></td><td>{escape(t.explanation)}</td></tr>"
            for t in page.traces
        )
        body.append(
            '<section aria-labelledby="rl-traces-h"><h2 id="rl-traces-h">Traces judged</h2>'
            "<table><tr><th>trace</th><th>source</th><th>steps</th><th>verdict</th>"
            f"<th>explanation</th></tr>{trace_rows}</table></section>"
        )
    css = asset("page.css")
    if d is not None and d.step:
        css += (
            f'\nsvg .rl-col[data-step="{d.step}"] {{ fill: #fbe3d3; stroke: #d55e00; '
            "stroke-dasharray: 4 3; }\n"
        )
    return fill(
        asset("report.html"),
        title=f"redletter conform: {v}",
        css=css,
        body="\n".join(body),
    )
