"""The run folder of ``redletter cos418 test``: results, the shrunk failure, report.html.

Like ``conform run`` (:mod:`redletter.conformance.report`), every campaign writes
``store/<UTC timestamp>-cos418-<package>/``:

- ``results.json``: the verdict, the package (its dialect) and its build, the
  package's own tests and their verdict beside the kit's (and why they differ),
  the campaign (seed, scenarios, seeds), the counts by scenario class, every run
  (scenario, class, seed, verdict, kind of failure, the evidence it rests on,
  explanation), and the first failure shrunk;
- for a failure: ``shrunk.top`` and ``shrunk.events`` (the smallest failing
  scenario), ``shrunk.run.json`` (the driver's document of its failing run),
  ``expected-<k>.snap`` / ``recorded-<k>.snap`` (what Chandy–Lamport records
  for that run, what the package returned), ``diagram.svg`` (its space-time
  diagram) and ``report.html`` (all of it on one page, with the command that
  replays it).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from html import escape
from pathlib import Path

from redletter.conformance.adapters.cos418.campaign import Case, CaseRun
from redletter.conformance.adapters.cos418.judge import RunResult
from redletter.conformance.adapters.cos418.summary import PackageCheck, class_rows
from redletter.conformance.formats.cos418 import (
    Link,
    Snap,
    format_scenario,
    format_snap,
    format_topology,
)
from redletter.conformance.judges.courselog import read_course_log
from redletter.conformance.judges.expected import ExpectedRun, ExpEvent
from redletter.conformance.judges.expected import expected_run as compute_expected_run
from redletter.conformance.judges.run import show_link
from redletter.conformance.judges.rundoc import RunDocument
from redletter.conformance.report import RunFolder
from redletter.conformance.verdict import Verdict
from redletter.render.diagram import (
    EXPECTED_WORDS,
    Callout,
    Event,
    RecordNote,
    layout,
    render_svg,
)

__all__ = ["diagram_of", "expected_vs_recorded", "snapshots_html", "summary_json", "write_report"]


# --------------------------------------------------------------------------- diagram


def expected_vs_recorded(
    servers: Sequence[str],
    links: Sequence[Link],
    expected: Sequence[Snap],
    recorded: Sequence[Snap],
) -> list[RecordNote]:
    """Per snapshot and server, two lines beside its line: what Chandy-Lamport records
    there (expected) and what the package returned (recorded, and whether it differs):
    its tokens and the messages of those of its input links that hold any in either
    ("no messages in flight" when none does); "nothing" where the package returned no
    snapshot of that id."""
    exp = {x.id: x for x in expected}
    rec = {x.id: x for x in recorded}

    def part(snap: Snap | None, server: str, shown: Sequence[Link]) -> str:
        if snap is None:
            return "nothing"
        tokens = snap.tokens_dict().get(server)
        words = [f"{tokens} tokens" if tokens is not None else "no tokens"]
        for link in shown:
            words.append(f"{link[0]}→{server}: [{', '.join(map(str, snap.channel(link)))}]")
        if not shown:
            words.append("no messages in flight")
        return ", ".join(words)

    notes: list[RecordNote] = []
    for k in sorted(set(exp) | set(rec)):
        for server in servers:
            e_s, r_s = exp.get(k), rec.get(k)
            shown = [
                link
                for link in links
                if link[1] == server and any(x is not None and x.channel(link) for x in (e_s, r_s))
            ]
            e, r = part(e_s, server, shown), part(r_s, server, shown)
            notes.append(RecordNote(k, server, f"snapshot {k} expected: {e}"))
            verdict = "as expected" if e == r else "differs"
            notes.append(RecordNote(k, server, f"snapshot {k} recorded: {r} ({verdict})"))
    return notes


def diagram_of(
    doc: RunDocument,
    title: str = "",
    *,
    expected: Sequence[Snap] = (),
    recorded: Sequence[Snap] = (),
    expected_run: ExpectedRun | None = None,
) -> str:
    """The space-time diagram (SVG) of a run: the course's logged sends and receipts
    (never the package's own records) on a time axis, and Chandy–Lamport's run on the
    same application schedule (``expected_run``, computed from the log when not given):
    where each server records its state for each snapshot, the messages it records as in
    flight, and every marker where the rules send it.  A marker the package sent
    elsewhere (late) or never is drawn both ways, the rule's and the package's, with a
    numbered note under the picture.  Beside each server's line, per snapshot, the
    expected record and the package's (``expected``, ``recorded``)."""
    log = read_course_log(doc)
    doc = replace(doc, steps=log.steps)
    if expected_run is None:
        expected_run = compute_expected_run(doc)
    ids = doc.topology.ids
    events: list[Event] = []
    callouts: list[Callout] = []
    after: list[str] = []
    if expected_run is not None:
        # a marker moved only because an earlier one was late is drawn where the rules
        # put it; the package's own (on time for its run) would only crowd the picture
        follows = {(m.snapshot, m.link) for m in expected_run.moved if m.follows is not None}
        events = [
            _event(e)
            for e in expected_run.events
            if not (e.origin == "package" and (e.value, e.link) in follows)
        ]
        primary = [m for m in expected_run.moved if m.follows is None]
        if len(primary) > _CALLOUTS:
            after = [
                f"{len(primary) - _CALLOUTS} more markers went out elsewhere than the rules say"
                " (the report lists them all, above the picture)"
            ]
        for m in primary[:_CALLOUTS]:
            ids_ = tuple(
                x
                for x in (
                    _marker_msg(expected_run, m.snapshot, m.link, "rule"),
                    _marker_msg(expected_run, m.snapshot, m.link, "package"),
                )
                if x is not None
            )
            if ids_:
                d = m.describe()
                callouts.append(Callout(ids_, d[0].upper() + d[1:]))
        axis = tuple((i, expected_run.time_of(i)) for i in range(len(expected_run.times)))
    else:
        axis = tuple((i, st.time) for i, st in enumerate(doc.steps))
    notes = expected_vs_recorded(ids, doc.topology.links, expected, recorded)
    after += (
        [
            f"the last {expected_run.after} time step(s) follow the logged run: there the "
            "markers the package never delivered arrive (what is still in flight is delivered "
            "link by link, oldest first)"
        ]
        if expected_run is not None and expected_run.after
        else []
    )
    diagram = layout(
        list(ids),
        events,
        title=title,
        records=notes,
        words=EXPECTED_WORDS,
        axis=axis,
        callouts=callouts,
        notes=(
            "the marks of the snapshots are where Chandy–Lamport records (expected); what the "
            "package recorded is written beside each server",
            *after,
        )
        if notes
        else tuple(after),
    )
    return render_svg(diagram)


#: Markers numbered in a picture at most (the others are counted in a note under it).
_CALLOUTS = 9


def _marker_msg(run: ExpectedRun, k: int, link: Link, origin: str) -> int | None:
    return next(
        (
            e.msg
            for e in run.events
            if e.kind == "send" and e.message == "marker" and e.value == k and e.link == link
            and e.origin == origin
        ),
        None,
    )  # fmt: skip


def _event(e: ExpEvent) -> Event:
    """An event of the expected run as the diagram draws it."""
    mark = {"rule": "due", "package": "late"}.get(e.origin, "") if e.message == "marker" else ""
    if e.kind == "send" and e.message == "marker":
        return Event("send", e.server, e.link, e.msg, e.value, step=e.step, mark=mark)
    if e.kind == "send":
        return Event("send", e.server, e.link, e.msg, None, f"token({e.value})", step=e.step)
    if e.kind == "receive":
        snap = e.value if e.message == "marker" else None
        return Event("receive", e.server, e.link, e.msg, snap, step=e.step)
    if e.kind == "record_state":
        return Event("record_state", e.server, snapshot=e.snapshot, step=e.step)
    return Event("record_message", e.server, e.link, e.msg, e.snapshot, step=e.step)


# --------------------------------------------------------------------------- results.json


def _run_json(cr: CaseRun) -> dict[str, object]:
    r = cr.result
    return {
        "scenario": cr.case.name,
        "class": cr.case.klass,
        "seed": cr.seed,
        "verdict": str(r.verdict),
        "kind": r.kind or None,
        "evidence": list(r.evidence),
        "explanation": r.message,
        "course_checks": list(r.course),
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
        "evidence": list(r.evidence),
        "explanation": r.message,
        "course_checks": list(r.course),
        "details": list(r.details),
        "notes": list(r.notes),
        "outcome_verdict": str(r.outcome_verdict) if r.outcome_verdict is not None else None,
        "outcome_explanation": r.outcome_message or None,
        "expected": [_snap_json(s) for s in r.expected],
        "recorded": [_snap_json(s) for s in r.recorded],
    }


def summary_json(s: PackageCheck, *, runs: bool = True) -> dict[str, object]:
    """The JSON of ``cos418 test --json`` and results.json (with every run)."""
    counts = {v.value: sum(r.result.verdict == v for r in s.runs) for v in Verdict}
    opts = s.options
    out: dict[str, object] = {
        "verdict": str(s.verdict),
        "exit_code": int(s.verdict.exit_code),
        "explanation": s.message,
        "package": {
            "path": str(s.package.source),
            "name": s.package.name,
            "dialect": s.package.dialect.key,
            "go_mod": s.package.gomod,
            "go_directive": s.package.go_directive,
            "test_data": str(s.package.test_data) if s.package.test_data else None,
            "own_tests": list(s.package.tests),
        },
        "build": {
            "ok": s.build.ok,
            "race": s.build.race,
            "seconds": round(s.build.seconds, 2),
            "command": s.build.command,
            "output": s.build.output or None,
        },
        "course_test": (
            {
                "verdict": str(s.course.verdict),
                "summary": s.course.summary(),
                "command": s.course.command,
                "race": s.course.race,
                "races": s.course.races,
                "seconds": round(s.course.seconds, 2),
                "tests": [
                    {"name": t.name, "status": t.status, "messages": list(t.messages)}
                    for t in s.course.tests
                ],
                "reason": s.course.reason or None,
                "disagreement": s.disagreement or None,
            }
            if s.course is not None
            else None
        ),
        "campaign": {
            "seed": opts.seed,
            "seeds": list(s.seeds),
            "planned_runs": s.planned,
            "runs": len(s.runs),
            "stopped_at_first_failure": s.stopped_early,
            "seconds": round(s.seconds, 2),
            "runs_per_second": round(len(s.runs) / s.seconds, 2) if s.seconds > 0 else None,
            "outcome_judge_timeouts": s.outcome_timeouts,
            "limits": {
                "step_timeout": opts.limits.step_timeout,
                "deadlock_after": opts.limits.deadlock_after,
                "collect_timeout": opts.limits.collect_timeout,
                "kill_after": opts.limits.kill_after,
            },
        },
        "counts": counts,
        "classes": [row.__dict__ for row in class_rows(s.runs)],
        "notes": list(s.notes),
        "touches": [{"file": x.file, "line": x.line, "what": x.what} for x in s.touches],
        "folder": str(s.folder) if s.folder is not None else None,
        "report": str(s.folder / "report.html") if s.folder is not None else None,
        "exported": [str(p) for p in s.exported],
        "seconds": round(s.total_seconds, 2),
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
    if runs:
        out["runs"] = [_run_json(r) for r in s.runs]
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


def snapshots_html(r: RunResult, servers: Sequence[str], links: Sequence[Link]) -> list[str]:
    """The expected and the returned snapshots, table by table, the rows that differ
    marked; or, where the run's log could not be used (the snapshots were judged by
    outcome, up to some FIFO schedule of the scenario), the returned ones alone, and why
    there is no one expected snapshot to show."""
    out: list[str] = []
    rec = {x.id: x for x in r.recorded}
    if not r.expected:
        if not rec:
            return out
        why = (
            "this run's log could not be used"
            if r.run is not None and not r.run.log_usable
            else "the run was not judged against its own log"
        )
        out.append(
            f"<p>There is no one snapshot Chandy–Lamport records to show here: {why}, so "
            "the snapshots were judged by outcome, up to <i>some</i> FIFO schedule of the "
            "scenario (does any such schedule yield them?). What the package returned:</p>"
        )
        for k in sorted(rec):
            out.append(f"<h3>Snapshot {k}: recorded</h3>")
            out.append(_recorded_table(rec[k], servers, links))
        return out
    exp = {x.id: x for x in r.expected}
    plan = r.run.expected_run if r.run is not None else None
    if plan is not None and plan.notes():
        out.append(
            "<p><b>The expectation.</b> Chandy–Lamport's run on the logged application "
            "schedule, with every marker sent when the rules say: "
            + escape(" ".join(plan.notes()))
            + "</p>"
        )
    finding = r.run.finding if r.run is not None else None
    if finding is not None and finding.differences:
        items = "".join(f"<li>{escape(d.describe())}</li>" for d in finding.differences)
        out.append(f"<p>Where the package's snapshots differ:</p><ul class='rl-diffs'>{items}</ul>")
    for k in sorted(set(exp) | set(rec)):
        out.append(f"<h3>Snapshot {k}: expected vs recorded</h3>")
        out.append(_snap_table(exp.get(k), rec.get(k), servers, links))
    return out


def _recorded_table(snap: Snap, servers: Sequence[str], links: Sequence[Link]) -> str:
    tokens = snap.tokens_dict()
    rows = [f"<tr><td>{escape(p)}</td><td>{tokens.get(p)}</td></tr>" for p in servers]
    for link in links:
        msgs = snap.channel(link)
        if msgs:
            shown = ", ".join(f"token({n})" for n in msgs)
            rows.append(f"<tr><td>{escape(show_link(link))}</td><td>{shown}</td></tr>")
    return (
        "<table><tr><th>server / channel</th><th>the package returned</th></tr>"
        + "".join(rows)
        + "</table>"
    )


def _schedule_table(doc: RunDocument) -> str:
    """The course's logged events step by step (the package's own records left out)."""
    doc = replace(doc, steps=read_course_log(doc).steps)
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


def _course_html(s: PackageCheck) -> list[str]:
    c = s.course
    if c is None:
        return []
    cls = str(c.verdict)
    out = [
        f"<h2>The package's own tests: <span class='{cls}'>{escape(c.summary())}</span></h2>",
        f"<p>Run as they are: <code>{escape(c.command)}</code> on an untouched copy,"
        f" {c.seconds:.1f} s. The kit's verdict: <span class='{s.verdict}'>{s.verdict}</span>.</p>",
    ]
    if s.disagreement:
        out.append(f"<p><b>Why they differ.</b> {escape(s.disagreement)}</p>")
    rows = "".join(
        f"<tr><td>{escape(t.name)}</td><td class='{t.status}'>{t.status}</td>"
        f"<td>{escape(chr(10).join(t.messages))}</td></tr>"
        for t in c.tests
    )
    if rows:
        out.append(f"<table><tr><th>test</th><th>verdict</th><th>said</th></tr>{rows}</table>")
    if c.verdict == Verdict.FAIL:
        out.append(f"<details><summary>its output</summary><pre>{escape(c.output)}</pre></details>")
    return out


def write_report(folder: RunFolder, s: PackageCheck) -> dict[str, Path]:
    """Write the run folder (module docstring); return the paths written."""
    out: dict[str, Path] = {}
    if folder.logs.is_dir() and not any(folder.logs.iterdir()):
        folder.logs.rmdir()  # no logs: the driver's output is in the documents
    data = summary_json(s)
    (folder.path / "results.json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    out["results"] = folder.path / "results.json"
    shown = s.shown
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
            svg = diagram_of(
                r.document,
                title=f"{shown.case.name}, seed {shown.seed}: {r.verdict}",
                expected=r.expected,
                recorded=r.recorded,
                expected_run=r.run.expected_run if r.run is not None else None,
            )
            (folder.path / "diagram.svg").write_text(svg, encoding="utf-8")
            out["diagram"] = folder.path / "diagram.svg"
    v = s.verdict
    ran = (
        f"stopped at the first failure after {len(s.runs)} of {s.planned} runs"
        if s.stopped_early
        else f"{len(s.runs)} of {s.planned} runs"
    )
    html = [
        "<!doctype html><html><head><meta charset='utf-8'><title>redletter cos418 test</title>",
        "<style>body{font-family:sans-serif;max-width:75em;margin:2em auto}"
        "td,th{border:1px solid #ccc;padding:2px 8px;vertical-align:top}"
        "table{border-collapse:collapse;margin:.5em 0}pre{background:#f6f6f6;padding:.5em;"
        "white-space:pre-wrap;overflow-wrap:anywhere}"
        "svg{max-width:100%;height:auto}"
        ".fail{color:#c0392b}.pass{color:#1e8449}.unknown{color:#b9770e}</style></head><body>",
        f"<h1>redletter cos418 test: <span class='{v}'>{v}</span></h1>",
        (
            "<p>The <a href='#first-failure'>first failure</a>"
            + (", shrunk," if s.shrunk is not None else "")
            + " is explained below.</p>"
            if shown is not None and s.message == shown.result.message
            else f"<p>{escape(s.message)}</p>"
        ),
        f"<p>package <code>{escape(s.package.name)}</code> at"
        f" <code>{escape(str(s.package.source))}</code>, {escape(s.package.dialect.title)}"
        f" ({'go.mod' if s.package.gomod else 'no go.mod: GOPATH mode'}"
        f"{', race detector' if s.build.race else ''}); campaign seed {s.options.seed},"
        f" simulator seeds {', '.join(map(str, s.seeds))}; {ran} in {s.seconds:.1f} s.</p>",
    ]
    if not s.build.ok:
        html.append(
            f"<h2 class='fail'>The package does not build</h2><pre>{escape(s.build.output)}</pre>"
        )
    if s.touches:
        items = "".join(f"<li><code>{escape(x.show())}</code></li>" for x in s.touches)
        html.append(
            "<h2>Touches the kit</h2><p>These places of the package's code do what the"
            " assignment never needs and an attack on the kit does; the instructor decides what"
            f" they mean.</p><ul>{items}</ul>"
        )
    html += _course_html(s)
    rows = "".join(
        f"<tr><td>{escape(r.klass)}</td><td>{r.scenarios}</td><td>{r.schedules}</td>"
        f"<td>{r.passed}</td><td>{r.failed}</td><td>{r.unknown}</td></tr>"
        for r in class_rows(s.runs)
    )
    if s.runs:
        html.append(
            "<h2>The kit's campaign</h2><table><tr><th>class</th><th>scenarios</th>"
            "<th>schedules</th><th>passed</th>"
            f"<th>failed</th><th>unknown</th></tr>{rows}</table>"
        )
    for note in s.notes:
        html.append(f"<p>{escape(note)}</p>")
    if shown is not None:
        r = shown.result
        title = "First failure, shrunk" if s.shrunk is not None else "First failure"
        html.append(f"<h2 id='first-failure'>{title}</h2><p>{escape(r.message)}</p>")
        if r.evidence:
            html.append("<p>The verdict rests on: " + escape("; ".join(r.evidence)) + ".</p>")
        if r.details:
            html.append(f"<pre>{escape(chr(10).join(r.details))}</pre>")
        for note in r.notes:
            html.append(f"<p><i>{escape(note)}</i></p>")
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
        html += snapshots_html(r, shown.case.topology.ids, shown.case.topology.links)
        if r.document is not None and r.document.steps:
            html.append(f"<h3>The run's schedule (logged)</h3>{_schedule_table(r.document)}")
        if svg:
            html.append(
                "<h3>Space-time diagram: expected vs recorded</h3><p>The sends and receipts "
                "of tokens are the course's log of the run, on its time axis. Where each "
                "server records its state, which messages are recorded in flight and where "
                "each marker goes are what Chandy–Lamport does on that schedule with every "
                "marker sent when the rules say (expected), not what the package did; a "
                "marker the package sent elsewhere is drawn both ways and numbered. What the "
                "package returned is written beside each server, under what was expected.</p>" + svg
            )
        if s.replay:
            html.append(f"<h3>Replay</h3><pre>{escape(s.replay)}</pre>")
        if s.exported:
            html.append(
                "<h3>Reproduce with go test</h3><p>Written: "
                + escape(", ".join(str(p) for p in s.exported))
                + "</p>"
            )
    html.append("</body></html>")
    (folder.path / "report.html").write_text("\n".join(html), encoding="utf-8")
    out["html"] = folder.path / "report.html"
    return out
