"""The run folder of ``redletter cos418 test``: results, the shrunk failure, report.html.

Like ``conform run`` (:mod:`redletter.conformance.report`), every campaign writes
``store/<UTC timestamp>-cos418-<package>/``:

- ``results.json``: the verdict, the package and its build, the campaign (seed,
  scenarios, seeds), the counts by scenario class, every run (scenario, class,
  seed, verdict, kind of failure, explanation), and the first failure shrunk;
- for a failure: ``shrunk.top`` and ``shrunk.events`` (the smallest failing
  scenario), ``shrunk.run.json`` (the driver's document of its failing run),
  ``expected-<k>.snap`` / ``recorded-<k>.snap`` (what Chandy–Lamport records
  for that run, what the package returned), ``diagram.svg`` (its space-time
  diagram) and ``report.html`` (all of it on one page, with the command that
  replays it).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import Path

from redletter.conformance.adapters.cos418 import Build, GoPackage, RunResult
from redletter.conformance.adapters.cos418_campaign import PACKAGE_CLASS, Case, CaseRun, Shrunk
from redletter.conformance.formats.cos418 import (
    Link,
    Snap,
    format_scenario,
    format_snap,
    format_topology,
)
from redletter.conformance.judges.run import RunDocument, show_link
from redletter.conformance.report import RunFolder
from redletter.conformance.verdict import Verdict
from redletter.render.diagram import Event, layout, render_svg

__all__ = [
    "ClassRow",
    "Cos418Summary",
    "class_rows",
    "diagram_of",
    "overall",
    "replay_command",
    "summary_json",
    "write_cos418_report",
]


@dataclass(frozen=True)
class ClassRow:
    """One row of the summary table: a scenario class and how its runs fared."""

    klass: str
    scenarios: int
    schedules: int
    passed: int
    failed: int
    unknown: int


@dataclass(frozen=True)
class Cos418Summary:
    """Everything ``cos418 test`` reports."""

    package: GoPackage
    build: Build
    verdict: Verdict
    seed: int
    seeds: tuple[int, ...]
    runs: tuple[CaseRun, ...]
    planned: int  #: runs planned (the campaign may stop at the first failure)
    seconds: float
    first_failure: CaseRun | None = None
    shrunk: Shrunk | None = None
    replay: str = ""
    notes: tuple[str, ...] = ()
    outcome_timeouts: int = 0
    stopped_early: bool = False
    extra: Mapping[str, object] = field(default_factory=dict)


_ORDER = ("one", "sequential", "concurrent", "same-tick", PACKAGE_CLASS, "given")


def class_rows(runs: Sequence[CaseRun]) -> list[ClassRow]:
    """Counts by scenario class (classes in a fixed order), then the total."""
    classes = sorted(
        {r.case.klass for r in runs}, key=lambda k: (_ORDER.index(k) if k in _ORDER else 99, k)
    )
    rows = []
    for k in [*classes, "all"]:
        rs = [r for r in runs if k == "all" or r.case.klass == k]
        rows.append(
            ClassRow(
                k,
                len({r.case.name for r in rs}),
                len(rs),
                sum(r.result.verdict == Verdict.PASS for r in rs),
                sum(r.result.verdict == Verdict.FAIL for r in rs),
                sum(r.result.verdict == Verdict.UNKNOWN for r in rs),
            )
        )
    return rows


def overall(runs: Sequence[CaseRun]) -> Verdict:
    """fail if any run failed, else unknown if any was undecided, else pass."""
    if any(r.result.verdict == Verdict.FAIL for r in runs):
        return Verdict.FAIL
    if any(r.result.verdict == Verdict.UNKNOWN for r in runs):
        return Verdict.UNKNOWN
    return Verdict.PASS


def replay_command(package: Path, top: Path, events: Path, seed: int, *, race: bool) -> str:
    """The one command that replays a scenario under one seed."""
    cmd = (
        f"redletter cos418 test {shlex.quote(str(package))} --top {shlex.quote(str(top))}"
        f" --events {shlex.quote(str(events))} --seed {seed} --seeds 1"
    )
    return cmd + (" --race" if race else "")


# --------------------------------------------------------------------------- diagram


def diagram_of(doc: RunDocument, title: str = "") -> str:
    """The space-time diagram (SVG) of a run: its logged sends and receipts, where
    each server records its state for each snapshot (by the algorithm's rules), and
    the messages the algorithm records as in flight."""
    ids = doc.topology.ids
    inbound = {s: doc.topology.inbound(s) for s in ids}
    events: list[Event] = []
    queues: dict[Link, list[int]] = {link: [] for link in doc.topology.links}
    recorded: dict[int, set[str]] = {}
    open_: dict[tuple[int, Link], bool] = {}
    next_id = 0
    by_event = {s.event_index: s for s in doc.snapshots}

    def record(k: int, p: str, first: Link | None, step: int) -> None:
        recorded.setdefault(k, set()).add(p)
        events.append(Event("record_state", p, snapshot=k, step=step))
        for link in inbound[p]:
            open_[(k, link)] = link != first

    for i, st in enumerate(doc.steps):
        start = (
            by_event.get(st.event_index)
            if st.phase == "inject" and st.event_index is not None
            else None
        )
        if start is not None and start.initiator in inbound:
            record(start.id, start.initiator, None, i)
        for e in st.events:
            if e.event == "send" and e.link in queues:
                next_id += 1
                queues[e.link].append(next_id)
                if e.message == "marker":
                    events.append(Event("send", e.src, e.link, next_id, e.snapshot_id, step=i))
                else:
                    events.append(
                        Event("send", e.src, e.link, next_id, None, e.show_message(), step=i)
                    )
            elif e.event == "receive" and e.link in queues and queues[e.link]:
                mid = queues[e.link].pop(0)
                if e.message == "marker":
                    events.append(Event("receive", e.dest, e.link, mid, e.snapshot_id, step=i))
                    k = e.snapshot_id
                    if e.dest not in recorded.get(k, set()):
                        record(k, e.dest, e.link, i)
                    open_[(k, e.link)] = False
                else:
                    events.append(Event("receive", e.dest, e.link, mid, step=i))
                    for (k, link), is_open in open_.items():
                        if is_open and link == e.link:
                            events.append(Event("record_message", e.dest, e.link, mid, k, step=i))
    diagram = layout(list(ids), events, title=title)
    return render_svg(diagram)


# --------------------------------------------------------------------------- results.json


def _run_json(cr: CaseRun) -> dict[str, object]:
    r = cr.result
    return {
        "scenario": cr.case.name,
        "class": cr.case.klass,
        "seed": cr.seed,
        "verdict": str(r.verdict),
        "kind": r.kind or None,
        "explanation": r.message,
        "outcome_verdict": str(r.outcome_verdict) if r.outcome_verdict is not None else None,
        "seconds": round(r.raw.seconds, 4),
    }


def _snap_json(s: Snap) -> dict[str, object]:
    return {
        "id": s.id,
        "tokens": dict(s.tokens),
        "messages": [{"src": m.src, "dest": m.dst, "tokens": m.n} for m in s.messages],
    }


def _case_json(c: Case) -> dict[str, object]:
    return {
        "name": c.name,
        "class": c.klass,
        "source": c.source,
        "servers": c.servers,
        "links": len(c.topology.links),
        "events": c.events,
        "snapshots": c.snapshots,
        "top": format_topology(c.topology),
        "events_text": format_scenario(c.scenario),
    }


def _failure_json(r: RunResult) -> dict[str, object]:
    return {
        "verdict": str(r.verdict),
        "kind": r.kind,
        "explanation": r.message,
        "details": list(r.details),
        "notes": list(r.notes),
        "outcome_verdict": str(r.outcome_verdict) if r.outcome_verdict is not None else None,
        "outcome_explanation": r.outcome_message or None,
        "expected": [_snap_json(s) for s in r.expected],
        "recorded": [_snap_json(s) for s in r.recorded],
    }


def summary_json(s: Cos418Summary, folder: Path | None) -> dict[str, object]:
    """The JSON of ``cos418 test --json`` and results.json (without the runs list)."""
    counts = {v.value: sum(r.result.verdict == v for r in s.runs) for v in Verdict}
    out: dict[str, object] = {
        "verdict": str(s.verdict),
        "exit_code": int(s.verdict.exit_code),
        "package": {
            "path": str(s.package.source),
            "name": s.package.name,
            "go_mod": s.package.gomod,
            "go_directive": s.package.go_directive,
            "test_data": str(s.package.test_data) if s.package.test_data else None,
        },
        "build": {
            "ok": s.build.ok,
            "race": s.build.race,
            "seconds": round(s.build.seconds, 2),
            "command": s.build.command,
            "output": s.build.output or None,
        },
        "campaign": {
            "seed": s.seed,
            "seeds": list(s.seeds),
            "planned_runs": s.planned,
            "runs": len(s.runs),
            "stopped_at_first_failure": s.stopped_early,
            "seconds": round(s.seconds, 2),
            "runs_per_second": round(len(s.runs) / s.seconds, 2) if s.seconds > 0 else None,
            "outcome_judge_timeouts": s.outcome_timeouts,
        },
        "counts": counts,
        "classes": [row.__dict__ for row in class_rows(s.runs)],
        "notes": list(s.notes),
        "report": str(folder / "report.html") if folder is not None else None,
        **s.extra,
    }
    if s.first_failure is not None:
        ff = s.first_failure
        out["first_failure"] = {
            "scenario": _case_json(ff.case),
            "seed": ff.seed,
            **_failure_json(ff.result),
        }
    if s.shrunk is not None:
        sh = s.shrunk
        out["shrunk"] = {
            "scenario": _case_json(sh.case),
            "seed": sh.seed,
            "runs": sh.runs,
            "seconds": round(sh.seconds, 2),
            "confirmed": sh.confirmed,
            "from": {"servers": sh.original.servers, "events": sh.original.events},
            **_failure_json(sh.result),
        }
    if s.replay:
        out["replay"] = s.replay
    return out


# --------------------------------------------------------------------------- report.html


def _snap_table(
    expected: Snap | None, recorded: Snap | None, servers: Sequence[str], links: Sequence[Link]
) -> str:
    rows = []
    e_t = dict(expected.tokens) if expected else {}
    r_t = dict(recorded.tokens) if recorded else {}
    for p in servers:
        a, b = e_t.get(p), r_t.get(p)
        cls = "" if a == b else " class='fail'"
        rows.append(f"<tr{cls}><td>{escape(p)}</td><td>{a}</td><td>{b}</td></tr>")
    for link in links:
        a2 = expected.channel(link) if expected else ()
        b2 = recorded.channel(link) if recorded else ()
        if not a2 and not b2:
            continue
        cls = "" if a2 == b2 else " class='fail'"
        shown_a = ", ".join(f"token({n})" for n in a2) or "—"
        shown_b = ", ".join(f"token({n})" for n in b2) or "—"
        rows.append(
            f"<tr{cls}><td>{escape(show_link(link))}</td><td>{shown_a}</td><td>{shown_b}</td></tr>"
        )
    return (
        "<table><tr><th>server / channel</th><th>Chandy–Lamport records</th>"
        f"<th>the package returned</th></tr>{''.join(rows)}</table>"
    )


def _schedule_table(doc: RunDocument) -> str:
    rows = []
    for st in doc.steps:
        if not st.events and st.phase == "tick":
            continue
        shown = []
        for e in st.events:
            if e.event in ("send", "receive"):
                shown.append(f"{e.event} {e.show_message()} {show_link(e.link)}")
            else:
                shown.append(f"{e.event} {e.server} #{e.snapshot_id}")
        what = st.phase
        if st.phase == "inject" and st.event_index is not None:
            ev = doc.scenario.events[st.event_index]
            what = (
                f"event {st.event_index + 1}: " + format_scenario(type(doc.scenario)((ev,))).strip()
            )
        rows.append(
            f"<tr><td>{st.time}</td><td>{escape(what)}</td><td>{escape('; '.join(shown))}</td></tr>"
        )
    return (
        f"<table><tr><th>time</th><th>step</th><th>logged events</th></tr>{''.join(rows)}</table>"
    )


def write_cos418_report(folder: RunFolder, s: Cos418Summary) -> dict[str, Path]:
    """Write the run folder (module docstring); return the paths written."""
    out: dict[str, Path] = {}
    if folder.logs.is_dir() and not any(folder.logs.iterdir()):
        folder.logs.rmdir()  # no logs: the driver's output is in the documents
    data = summary_json(s, folder.path)
    data["runs"] = [_run_json(r) for r in s.runs]
    (folder.path / "results.json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    out["results"] = folder.path / "results.json"
    shown: CaseRun | None = None
    if s.shrunk is not None:
        shown = CaseRun(s.shrunk.case, s.shrunk.seed, s.shrunk.result)
    elif s.first_failure is not None:
        shown = s.first_failure
    svg = ""
    if shown is not None:
        top, events = folder.path / "shrunk.top", folder.path / "shrunk.events"
        top.write_text(format_topology(shown.case.topology), encoding="utf-8")
        events.write_text(format_scenario(shown.case.scenario), encoding="utf-8")
        out["top"], out["events"] = top, events
        r = shown.result
        if r.raw.document is not None:
            doc_path = folder.path / "shrunk.run.json"
            doc_path.write_text(json.dumps(r.raw.document) + "\n", encoding="utf-8")
            out["document"] = doc_path
        for snap in r.expected:
            (folder.path / f"expected-{snap.id}.snap").write_text(
                format_snap(snap), encoding="utf-8"
            )
        for snap in r.recorded:
            (folder.path / f"recorded-{snap.id}.snap").write_text(
                format_snap(snap), encoding="utf-8"
            )
        if r.document is not None and r.document.steps:
            svg = diagram_of(r.document, title=f"{shown.case.name}, seed {shown.seed}: {r.verdict}")
            (folder.path / "diagram.svg").write_text(svg, encoding="utf-8")
            out["diagram"] = folder.path / "diagram.svg"
    v = s.verdict
    html = [
        "<!doctype html><html><head><meta charset='utf-8'><title>redletter cos418 test</title>",
        "<style>body{font-family:sans-serif;max-width:75em;margin:2em auto}"
        "td,th{border:1px solid #ccc;padding:2px 8px;vertical-align:top}"
        "table{border-collapse:collapse;margin:.5em 0}pre{background:#f6f6f6;padding:.5em}"
        ".fail{color:#c0392b}.pass{color:#1e8449}.unknown{color:#b9770e}</style></head><body>",
        f"<h1>redletter cos418 test: <span class='{v}'>{v}</span></h1>",
        f"<p>package <code>{escape(s.package.name)}</code> at"
        f" <code>{escape(str(s.package.source))}</code>"
        f" ({'go.mod' if s.package.gomod else 'no go.mod: GOPATH mode'}"
        f"{', race detector' if s.build.race else ''}); campaign seed {s.seed},"
        f" simulator seeds {', '.join(map(str, s.seeds))}; {len(s.runs)} of {s.planned} runs"
        f" in {s.seconds:.1f} s.</p>",
    ]
    if not s.build.ok:
        html.append(
            f"<h2 class='fail'>The package does not build</h2><pre>{escape(s.build.output)}</pre>"
        )
    rows = "".join(
        f"<tr><td>{escape(r.klass)}</td><td>{r.scenarios}</td><td>{r.schedules}</td>"
        f"<td>{r.passed}</td><td>{r.failed}</td><td>{r.unknown}</td></tr>"
        for r in class_rows(s.runs)
    )
    if s.runs:
        html.append(
            "<table><tr><th>class</th><th>scenarios</th><th>schedules</th><th>passed</th>"
            f"<th>failed</th><th>unknown</th></tr>{rows}</table>"
        )
    for note in s.notes:
        html.append(f"<p>{escape(note)}</p>")
    if shown is not None:
        r = shown.result
        title = "First failure, shrunk" if s.shrunk is not None else "First failure"
        html.append(f"<h2>{title}</h2><p>{escape(r.message)}</p>")
        if r.details:
            html.append(f"<pre>{escape(chr(10).join(r.details))}</pre>")
        if s.shrunk is not None:
            sh = s.shrunk
            html.append(
                f"<p>Shrunk from {escape(sh.original.size())} ({escape(sh.original.name)}) to"
                f" {escape(sh.case.size())} in {sh.runs} runs; simulator seed {sh.seed}.</p>"
            )
        html.append(
            "<h3>Scenario</h3><table><tr><th>topology (.top)</th><th>events (.events)</th></tr>"
            f"<tr><td><pre>{escape(format_topology(shown.case.topology))}</pre></td>"
            f"<td><pre>{escape(format_scenario(shown.case.scenario))}</pre></td></tr></table>"
        )
        exp = {x.id: x for x in r.expected}
        rec = {x.id: x for x in r.recorded}
        for k in sorted(set(exp) | set(rec)):
            html.append(f"<h3>Snapshot {k}: expected vs recorded</h3>")
            html.append(
                _snap_table(
                    exp.get(k), rec.get(k), shown.case.topology.ids, shown.case.topology.links
                )
            )
        if r.document is not None and r.document.steps:
            html.append(f"<h3>The run's schedule (logged)</h3>{_schedule_table(r.document)}")
        if svg:
            html.append(f"<h3>Space-time diagram</h3>{svg}")
        if s.replay:
            html.append(f"<h3>Replay</h3><pre>{escape(s.replay)}</pre>")
    html.append("</body></html>")
    (folder.path / "report.html").write_text("\n".join(html), encoding="utf-8")
    out["html"] = folder.path / "report.html"
    return out
