"""Run folders and reports of the drive judge.

Every run writes to its own folder ``store/<timestamp>-<name>/`` (git-ignored):

- ``results.json``: one entry per judged trace (verdict, explanation, steps);
- ``journal.ndjson``: the observations of the failing run (or of the last one);
- ``logs/``: the node processes' stderr logs;
- ``shrunk.itf.json``: the shrunk failing trace (ITF, action and params per state);
- ``diagram.svg``: its space-time diagram (sends, receives, recorded states and
  recorded messages; redletter/render/diagram.py);
- ``report.html``: the verdict, the divergence in words, the shrunk schedule as a
  table, the diagram inline, and the replay command.

The command line prints the summary (verdict, explanation, shrunk schedule and
ONE command that replays it) from these results.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from html import escape
from pathlib import Path

from redletter.conformance import protocol as p
from redletter.conformance.judges.drive import JudgeResult
from redletter.conformance.net import Observation
from redletter.conformance.sandbox import SandboxReport
from redletter.conformance.shrink import ShrinkResult
from redletter.conformance.traces import Step, write_trace
from redletter.conformance.verdict import Verdict
from redletter.render.diagram import Event, layout, render_svg

__all__ = [
    "RunFolder",
    "diagram_events",
    "new_run_folder",
    "replay_command",
    "sandbox_of",
    "show_step",
    "write_report",
]


@dataclass(frozen=True)
class RunFolder:
    """The folder of one run and its files."""

    path: Path

    @property
    def logs(self) -> Path:
        return self.path / "logs"

    @property
    def shrunk(self) -> Path:
        return self.path / "shrunk.itf.json"


def new_run_folder(store: Path, name: str, *, now: datetime | None = None) -> RunFolder:
    """Create ``store/<UTC timestamp>-<name>/`` (a suffix if it exists already)."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in name)
    base = store / f"{stamp}-{safe}"
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{base.name}-{n}")
    (path / "logs").mkdir(parents=True)
    return RunFolder(path)


def show_step(action: str, params: Mapping[str, object]) -> str:
    """``SendApp p1 -> p2 m=1`` / ``StartSnapshot p2 k=1``."""
    c = params.get("c")
    if isinstance(c, list | tuple) and len(c) == 2:
        rest = " ".join(f"{k}={v}" for k, v in params.items() if k not in ("c", "i"))
        return f"{action} {c[0]} -> {c[1]}" + (f" {rest}" if rest else "")
    rest = " ".join(f"{k}={v}" for k, v in params.items() if k != "p")
    return f"{action} {params.get('p')} {rest}".rstrip()


def replay_command(itf: Path, node_cmd: str, *, hosted: bool = False) -> str:
    """The one command that replays a trace file against a node command."""
    cmd = f"redletter conform replay {shlex.quote(str(itf))} --node {shlex.quote(node_cmd)}"
    return cmd + (" --hosted" if hosted else "")


def diagram_events(observations: Sequence[Observation]) -> list[Event]:
    """The diagram events of a run: sends, receives, internal events, recordings."""
    events: list[Event] = []
    queues: dict[tuple[str, str], list[int]] = {}
    next_id = 0
    for o in observations:
        delivered_id: int | None = None
        if o.delivered is not None:
            c = o.params.get("c")
            assert isinstance(c, list | tuple)
            ch = (str(c[0]), str(c[1]))
            q = queues.get(ch, [])
            delivered_id = q.pop(0) if q else None
            snap = o.delivered.snapshot if isinstance(o.delivered, p.Marker) else None
            events.append(Event("receive", o.node, ch, delivered_id, snap))
        if o.action == "InternalEvent":
            events.append(Event("internal", o.node, label=f"e{o.params.get('e')}"))
        for r in o.recorded:
            if isinstance(r, p.RecordState):
                events.append(Event("record_state", o.node, snapshot=r.snapshot))
            elif isinstance(r, p.RecordMessage):
                events.append(Event("record_message", o.node, r.channel, delivered_id, r.snapshot))
        for s in o.sent:
            next_id += 1
            queues.setdefault(s.channel, []).append(next_id)
            if isinstance(s.msg, p.AppMsg):
                events.append(Event("send", o.node, s.channel, next_id, None, str(s.msg.payload)))
            else:
                events.append(Event("send", o.node, s.channel, next_id, s.msg.snapshot))
    return events


def _obs_json(o: Observation) -> dict[str, object]:
    return {
        "index": o.index,
        "action": o.action,
        "params": {k: (list(v) if isinstance(v, tuple) else v) for k, v in o.params.items()},
        "node": o.node,
        "describe": o.describe(),
        "new_state": o.new_state,
        "sent": [{"channel": list(s.channel), "msg": _wire(s.msg)} for s in o.sent],
        "completed": list(o.completed),
    }


def _wire(m: p.WireMsg) -> str:
    return f"app {m.payload}" if isinstance(m, p.AppMsg) else f"marker {m.snapshot}"


def _result_json(r: JudgeResult) -> dict[str, object]:
    return {
        "trace": r.trace.name,
        "model": r.trace.model,
        "source": r.trace.source,
        "verdict": r.verdict,
        "exit_code": r.exit_code,
        "steps": len(r.trace.steps),
        "drained": r.drained,
        "seconds": round(r.seconds, 6),
        "explanation": r.explanation(),
        "divergence_kind": r.divergence.kind if r.divergence is not None else None,
    }


def sandbox_of(results: Sequence[JudgeResult]) -> SandboxReport | None:
    """The sandbox's layers of a run (the last judged trace's; None: nodes in-process)."""
    return next((r.sandbox for r in reversed(results) if r.sandbox is not None), None)


def _steps_table_html(steps: Sequence[Step]) -> str:
    rows = "".join(
        f"<tr><td>{i}</td><td>{escape(a)}</td><td>{escape(show_step(a, ps))}</td></tr>"
        for i, (a, ps) in enumerate(steps, start=1)
    )
    return f"<table><tr><th>#</th><th>action</th><th>step</th></tr>{rows}</table>"


def write_report(
    folder: RunFolder,
    results: Sequence[JudgeResult],
    *,
    node_cmd: str,
    hosted: bool = False,
    shrunk: ShrinkResult | None = None,
    stopped: str = "",
) -> dict[str, Path]:
    """Write results.json, journal.ndjson, and for a failure shrunk.itf.json,
    diagram.svg and report.html; return the paths written.  ``stopped`` says why
    traces were left unjudged (the run is then unknown unless one failed)."""
    out: dict[str, Path] = {}
    verdict = (
        Verdict.FAIL
        if any(r.verdict == Verdict.FAIL for r in results)
        else Verdict.UNKNOWN
        if stopped or not results or any(r.verdict == Verdict.UNKNOWN for r in results)
        else Verdict.PASS
    )
    sandbox = sandbox_of(results)
    summary: dict[str, object] = {
        "verdict": verdict,
        "node": node_cmd,
        "traces": len(results),
        "counts": {v.value: sum(r.verdict == v for r in results) for v in Verdict},
        "stopped": stopped or None,
        "sandbox": sandbox.to_json() if sandbox is not None else None,
        "results": [_result_json(r) for r in results],
    }
    shown = shrunk.result if shrunk is not None else (results[-1] if results else None)
    if shrunk is not None:
        write_trace(folder.shrunk, shrunk.trace)
        out["shrunk"] = folder.shrunk
        summary["shrunk"] = {
            "trace": shrunk.trace.name,
            "steps": len(shrunk.trace.steps),
            "from_steps": shrunk.original_steps,
            "runs": shrunk.runs,
            "complete": shrunk.complete,
            "seconds": round(shrunk.seconds, 3),
            "explanation": shrunk.result.explanation(),
            "replay": replay_command(folder.shrunk, node_cmd, hosted=hosted),
        }
    (folder.path / "results.json").write_text(json.dumps(summary, indent=1) + "\n")
    out["results"] = folder.path / "results.json"
    journal = folder.path / "journal.ndjson"
    with journal.open("w", encoding="utf-8") as f:
        for o in shown.observations if shown is not None else ():
            f.write(json.dumps(_obs_json(o), default=str) + "\n")
    out["journal"] = journal
    svg = ""
    if shown is not None and shown.observations:
        machines = list(dict.fromkeys(o.node for o in shown.observations))
        for o in shown.observations:
            for s in o.sent:
                machines.extend(x for x in s.channel if x not in machines)
        diagram = layout(
            sorted(set(machines)),
            diagram_events(shown.observations),
            title=f"{shown.trace.name}: {shown.verdict}",
        )
        svg = render_svg(diagram)
        (folder.path / "diagram.svg").write_text(svg, encoding="utf-8")
        out["diagram"] = folder.path / "diagram.svg"
    replay = replay_command(folder.shrunk, node_cmd, hosted=hosted) if shrunk is not None else ""
    counts = {v.value: sum(r.verdict == v for r in results) for v in Verdict}
    html = [
        "<!doctype html><html><head><meta charset='utf-8'><title>redletter conform</title>",
        "<style>body{font-family:sans-serif;max-width:70em;margin:2em auto}"
        "td,th{border:1px solid #ccc;padding:2px 8px}table{border-collapse:collapse}"
        ".fail{color:#c0392b}.pass{color:#1e8449}.unknown{color:#b9770e}</style></head><body>",
        f"<h1>redletter conform: <span class='{verdict}'>{verdict}</span></h1>",
        f"<p>node: <code>{escape(node_cmd)}</code>; traces judged: {len(results)} "
        f"({', '.join(f'{k} {v}' for k, v in counts.items())})</p>",
    ]
    if stopped:
        html.append(f"<p class='unknown'>Stopped early: {escape(stopped)}</p>")
    if shown is not None and shown.verdict != Verdict.PASS:
        html.append(f"<h2>Divergence</h2><p>{escape(shown.explanation())}</p>")
    if shrunk is not None:
        html.append(
            f"<h2>Shrunk schedule ({len(shrunk.trace.steps)} steps, from "
            f"{shrunk.original_steps})</h2>{_steps_table_html(shrunk.trace.steps)}"
        )
        html.append(f"<h2>Replay</h2><pre>{escape(replay)}</pre>")
    if svg:
        html.append(f"<h2>Space-time diagram</h2>{svg}")
    if sandbox is not None:
        rows = "".join(
            f"<tr><td>{escape(x.name)}</td><td class='{'pass' if x.active else 'unknown'}'>"
            f"{'active' if x.active else 'not active'}</td><td>{escape(x.detail)}</td></tr>"
            for x in sandbox.layers
        )
        html.append(
            f"<h2>Sandbox ({escape(sandbox.mode)})</h2>"
            f"<table><tr><th>layer</th><th>state</th><th>what it does, or why not</th></tr>"
            f"{rows}</table>"
        )
    html.append("</body></html>")
    (folder.path / "report.html").write_text("\n".join(html), encoding="utf-8")
    out["html"] = folder.path / "report.html"
    return out
