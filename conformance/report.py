"""Run folders and reports of the drive judge.

Every run writes to its own folder ``store/<timestamp>-<name>/`` (git-ignored):

- ``results.json``: one entry per judged trace (verdict, explanation, steps);
- ``journal.ndjson``: the observations of the failing run (or of the last one);
- ``logs/``: the node processes' stderr logs;
- ``shrunk.itf.json``: the shrunk failing trace (ITF, action and params per state);
- ``diagram.svg``: its space-time diagram, what the node did (sends, receives,
  recorded states and messages, what each snapshot recorded; redletter/render/diagram.py);
- ``explain.html`` (a failure): the proof explorer of the same schedule in the model
  (redletter/render/explorer.py), the step where the node diverges marked, continued
  with the model's own completion when the snapshot is still open (so that both
  shadow networks can be drawn); ``explain.itf.json`` is the run it shows;
- ``report.html``: the verdict, the divergence in words with the properties it
  breaks, the shrunk schedule with that step marked, the diagram with its column
  shaded, the replay command and every trace judged (redletter/render/report.py).

The command line prints the summary (verdict, explanation, shrunk schedule and
ONE command that replays it) from these results.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from redletter.conformance import protocol as p
from redletter.conformance.judges.drive import JudgeResult, drain_steps
from redletter.conformance.net import Observation, show_msg
from redletter.conformance.sandbox import SandboxReport
from redletter.conformance.shrink import ShrinkResult
from redletter.conformance.traces import (
    Step,
    Trace,
    model_of,
    replay_states,
    write_schedule,
    write_trace,
)
from redletter.conformance.verdict import Verdict
from redletter.project import kit_command
from redletter.python_model.actions import step as model_step
from redletter.python_model.config import ModelConfig
from redletter.python_model.engines import family_of
from redletter.render.diagram import (
    BARRIER_WORDS,
    CHANDY_LAMPORT_WORDS,
    Event,
    RecordNote,
    Words,
    draw,
    layout,
)
from redletter.render.explorer import Annotation, explorer_data, render_explorer, step_text
from redletter.render.proof import prove_run
from redletter.render.report import (
    DivergenceView,
    ReportPage,
    TraceRow,
    properties_named,
    render_report,
)

__all__ = [
    "RunFolder",
    "completion_steps",
    "diagram_events",
    "new_run_folder",
    "record_notes",
    "replay_command",
    "restore_notes",
    "sandbox_of",
    "show_step",
    "words_of",
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

    @property
    def schedule(self) -> Path:
        """The shrunk failing schedule of a variant's run (no states: see
        :func:`~redletter.conformance.traces.write_schedule`)."""
        return self.path / "shrunk.schedule.json"

    def shrunk_for(self, trace: Trace) -> Path:
        """Where the shrunk form of ``trace`` goes: an ITF trace for Chandy-Lamport, a
        schedule file for a variant."""
        return self.shrunk if is_chandy_lamport(trace) else self.schedule


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
    who = f" {params['p']}" if "p" in params else ""  # a variant's step may name no machine
    return f"{action}{who} {rest}".rstrip()


def replay_command(itf: Path, node_cmd: str, *, hosted: bool = False) -> str:
    """The one command that replays a trace file against a node command (the kit called
    as it runs here: :func:`~redletter.project.kit_command`)."""
    cmd = f"{kit_command()} conform replay {shlex.quote(str(itf))}"
    cmd += f" --node {shlex.quote(node_cmd)}"
    return cmd + (" --hosted" if hosted else "")


def diagram_events(observations: Sequence[Observation]) -> list[Event]:
    """The diagram events of a run, as the node showed them: sends, receives, internal
    events, recordings; each in the column of its step (``Observation.index``)."""
    events: list[Event] = []
    queues: dict[tuple[str, str], list[int]] = {}
    barrier_of: dict[int, int] = {}  # message id -> checkpoint of a barrier
    next_id = 0
    for o in observations:
        if o.skipped:  # not performed: nothing to draw
            continue
        at = o.index
        delivered_id: int | None = None
        if o.action == "Restore":
            # --- barrier --- the job restarts from checkpoint n: every node restores,
            # and what was in flight towards it is dropped (its arrow ends here)
            for ch, q in queues.items():
                if ch[1] != o.node:
                    continue
                for mid in q:
                    snap = barrier_of.get(mid)
                    events.append(Event("receive", o.node, ch, mid, snap, step=at))
                q.clear()
            events.append(
                Event("internal", o.node, label=f"restore checkpoint {o.params.get('n')}", step=at)
            )
            continue
        c = o.params.get("c")
        if o.delivered is not None and not isinstance(c, list | tuple):
            # a message off the buffers (the observer's request): drawn where it lands
            events.append(Event("internal", o.node, label=show_msg(o.delivered), step=at))
        elif o.delivered is not None:
            assert isinstance(c, list | tuple)
            ch = (str(c[0]), str(c[1]))
            q = queues.get(ch, [])
            delivered_id = q.pop(0) if q else None
            m = o.delivered
            snap = (
                m.snapshot
                if isinstance(m, p.Marker)
                else m.checkpoint
                if isinstance(m, p.Barrier)
                else None
            )
            label = (
                ""
                if snap is not None
                else str(m.payload)
                if isinstance(m, p.AppMsg)
                else show_msg(m)
            )
            events.append(Event("receive", o.node, ch, delivered_id, snap, label, step=at))
        if o.action == "InternalEvent":
            events.append(Event("internal", o.node, label=f"e{o.params.get('e')}", step=at))
        for r in o.recorded:
            if isinstance(r, p.RecordState):
                events.append(Event("record_state", o.node, snapshot=r.snapshot, step=at))
            elif isinstance(r, p.RecordMessage):
                events.append(
                    Event("record_message", o.node, r.channel, delivered_id, r.snapshot, step=at)
                )
        for s in o.sent:
            next_id += 1
            queues.setdefault(s.channel, []).append(next_id)
            if isinstance(s.msg, p.AppMsg):
                label = str(s.msg.payload)
                events.append(Event("send", o.node, s.channel, next_id, None, label, step=at))
            elif isinstance(s.msg, p.Marker):
                events.append(Event("send", o.node, s.channel, next_id, s.msg.snapshot, step=at))
            # --- barrier --- a barrier is drawn as a red letter, a record as a message
            elif isinstance(s.msg, p.Barrier):
                barrier_of[next_id] = s.msg.checkpoint
                events.append(Event("send", o.node, s.channel, next_id, s.msg.checkpoint, step=at))
            else:
                label = show_msg(s.msg)
                events.append(Event("send", o.node, s.channel, next_id, None, label, step=at))
    return events


def _show_json(v: object) -> str:
    if isinstance(v, list):
        return "{" + ", ".join(_show_json(x) for x in v) + "}"
    if isinstance(v, dict):
        return ", ".join(f"{k} {_show_json(x)}" for k, x in sorted(v.items()))
    return "nothing" if v is None else str(v)


def words_of(observations: Sequence[Observation]) -> Words:
    """The vocabulary of a run's diagram: a barrier run's (barriers, checkpoints) when
    the run carries barriers or restores, else Chandy-Lamport's."""
    for o in observations:
        if o.action in ("InjectBarrier", "ReceiveBarrier", "Restore") or any(
            isinstance(s.msg, p.Barrier) for s in o.sent
        ):
            return BARRIER_WORDS
    return CHANDY_LAMPORT_WORDS


def restore_notes(observations: Sequence[Observation]) -> tuple[str, ...]:
    """The diagram's words on the restores of a barrier run (none otherwise)."""
    restored = list(
        dict.fromkeys(str(o.params.get("n")) for o in observations if o.action == "Restore")
    )
    if not restored:
        return ()
    return (
        f"restore of checkpoint {', '.join(restored)}: every operator and source goes back to "
        "what the checkpoint stored; messages in flight then are dropped (their arrows end at "
        "the restore)",
    )


def record_notes(observations: Sequence[Observation]) -> list[RecordNote]:
    """What the node said each snapshot recorded, machine by machine: its state and
    the messages it recorded per input channel (``open`` until it closed it)."""
    word = words_of(observations).snapshot
    states: dict[tuple[int, str], str] = {}
    streams: dict[tuple[int, tuple[str, str]], list[str]] = {}
    closed: set[tuple[int, tuple[str, str]]] = set()
    for o in observations:
        for r in o.recorded:
            if isinstance(r, p.RecordState):
                states.setdefault((r.snapshot, o.node), _show_json(r.state))
            elif isinstance(r, p.RecordMessage):
                streams.setdefault((r.snapshot, r.channel), []).append(str(r.payload))
            elif isinstance(r, p.CloseChannel):
                closed.add((r.snapshot, r.channel))
    snaps = sorted({k for k, _ in states} | {k for k, _ in streams} | {k for k, _ in closed})
    machines = list(dict.fromkeys([m for _, m in states] + [c[1] for _, c in streams]))
    machines += [c[1] for _, c in closed if c[1] not in machines]
    notes: list[RecordNote] = []
    for k in snaps:
        for m in machines:
            parts = [states.get((k, m), "no state recorded")]
            chans = sorted({c for kk, c in [*streams, *closed] if kk == k and c[1] == m})
            for c in chans:
                stream = "[" + ", ".join(streams.get((k, c), [])) + "]"
                parts.append(f"{c[0]}→{c[1]}: {stream}" + ("" if (k, c) in closed else " open"))
            notes.append(RecordNote(k, m, f"{word} {k}: " + "; ".join(parts)))
    return notes


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
        **({"skipped": o.skipped} if o.skipped else {}),
    }


def _wire(m: p.WireMsg) -> str:
    return show_msg(m)


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


def is_chandy_lamport(trace: Trace) -> bool:
    """Whether ``trace`` is a schedule of a Chandy-Lamport model (not of a variant)."""
    return family_of(trace.model, Path("."), source=trace.model_tla) == "ChandyLamport"


def sandbox_of(results: Sequence[JudgeResult]) -> SandboxReport | None:
    """The sandbox's layers of a run (the last judged trace's; None: nodes in-process)."""
    return next((r.sandbox for r in reversed(results) if r.sandbox is not None), None)


def completion_steps(cfg: ModelConfig, steps: Sequence[Step]) -> tuple[Step, ...]:
    """The model's own completion of ``steps``: what the drive judge's drain delivers
    after the schedule (every message in flight, FIFO, while the application can
    receive it), up to the state where every started snapshot has completed (nothing
    when they all have, or when none started)."""
    states = replay_states(cfg, steps)
    last = states[-1]
    if all(s0 is None or sf is not None for s0, sf in zip(last.s0, last.sf, strict=True)):
        return ()
    extra = drain_steps(cfg, last)
    s, kept = last, []
    for st in extra:
        s = model_step(cfg, s, st[0], st[1])
        kept.append(st)
        if all(s0 is None or sf is not None for s0, sf in zip(s.s0, s.sf, strict=True)):
            break
    return tuple(kept)


def _explorer(folder: RunFolder, trace: Trace, divergence_step: int, why: str, node: str) -> Path:
    """The proof explorer of ``trace`` in the model, the divergence marked.

    A shrunk schedule is cut at the divergence, often before the snapshot completes,
    and the shadow networks are defined only for a completed snapshot.  The schedule is
    then continued with the model's own completion (:func:`completion_steps`: the
    judge's drain, the very steps the node is given after a schedule), so that the
    page shows both shadow networks up to and past the failing step; the node had
    already diverged at its step, so the failure is unchanged.  The added steps are
    marked on the page."""
    cfg = model_of(trace)
    steps = [(a, dict(ps)) for a, ps in trace.steps]
    completion = completion_steps(cfg, trace.steps)
    extra = [(a, dict(ps)) for a, ps in completion]
    states = replay_states(cfg, trace.steps)
    pr = prove_run(cfg, states[0], steps + extra)
    at = divergence_step if divergence_step else len(steps)
    note = Annotation(
        at,
        f"Node {node} parts from the model here" if divergence_step else "After the last step",
        why,
        properties_named(why),
    )
    subtitle = (
        "The model's run of the schedule the node failed on; the node's divergence is "
        "marked at its step."
    )
    if extra:
        first, last = len(steps) + 1, len(steps) + len(extra)
        span = f"step {first}" if first == last else f"steps {first}–{last}"
        subtitle += (
            f" The shrunk schedule ends at step {len(steps)}, before every snapshot "
            f"completes; {span} are the model's own completion (the judge's drain: every "
            "message in flight delivered in FIFO order), added so that both shadow "
            "networks can be drawn. The node was judged on the shrunk schedule."
        )
    end = pr.states[-1]
    open_snaps = [
        str(cfg.snaps[k])
        for k in range(len(cfg.snaps))
        if end.s0[k] is not None and end.sf[k] is None
    ]
    if open_snaps:
        which = ", ".join(open_snaps)
        subtitle += (
            f" Snapshot {which} cannot complete in the model even after its own completion "
            "(the application cannot receive what is still in flight), so its shadow networks, "
            "which start from or end in the snapshot state, are not drawn; the recorded-so-far "
            "panel and the invariants show the partial snapshot step by step."
        )
    # the page's own run (the schedule and its completion), so that its command
    # rebuilds this very page
    shown = folder.path / "explain.itf.json"
    write_trace(shown, trace.with_steps(trace.steps + completion, name=f"{trace.name}-explained"))
    data = explorer_data(
        pr,
        title=f"{trace.model}: {trace.name}",
        subtitle=subtitle,
        command=f"{kit_command()} explain --itf {shlex.quote(str(shown))}",
        annotations=[note],
        added_from=len(steps) + 1 if extra else None,
    )
    path = folder.path / "explain.html"
    path.write_text(render_explorer(data), encoding="utf-8")
    return path


def write_report(
    folder: RunFolder,
    results: Sequence[JudgeResult],
    *,
    node_cmd: str,
    hosted: bool = False,
    shrunk: ShrinkResult | None = None,
    stopped: str = "",
) -> dict[str, Path]:
    """Write results.json, journal.ndjson, diagram.svg and report.html, and for a
    failure shrunk.itf.json and explain.html; return the paths written.  ``stopped``
    says why traces were left unjudged (the run is then unknown unless one failed)."""
    out: dict[str, Path] = {}
    verdict = (
        Verdict.FAIL
        if any(r.verdict == Verdict.FAIL for r in results)
        else Verdict.UNKNOWN
        if stopped or not results or any(r.verdict == Verdict.UNKNOWN for r in results)
        else Verdict.PASS
    )
    counts = {v.value: sum(r.verdict == v for r in results) for v in Verdict}
    sandbox = sandbox_of(results)
    summary: dict[str, object] = {
        "verdict": verdict,
        "node": node_cmd,
        "traces": len(results),
        "counts": counts,
        "stopped": stopped or None,
        "sandbox": sandbox.to_json() if sandbox is not None else None,
        "results": [_result_json(r) for r in results],
    }
    shown = shrunk.result if shrunk is not None else (results[-1] if results else None)
    # The proof explorer and the steps in EWD 864's words speak of Chandy-Lamport's
    # model; a variant's run (lazy, observer, barrier) shows its steps as they are,
    # and its shrunk schedule is a schedule file (no states).
    cl = shown is not None and is_chandy_lamport(shown.trace)
    shrunk_file = folder.shrunk_for(shown.trace) if shown is not None else folder.shrunk
    if shrunk is not None:
        if cl:
            write_trace(shrunk_file, shrunk.trace)
        else:
            write_schedule(shrunk_file, shrunk.trace)
        out["shrunk"] = shrunk_file
        summary["shrunk"] = {
            "trace": shrunk.trace.name,
            "steps": len(shrunk.trace.steps),
            "from_steps": shrunk.original_steps,
            "runs": shrunk.runs,
            "complete": shrunk.complete,
            "seconds": round(shrunk.seconds, 3),
            "explanation": shrunk.result.explanation(),
            "replay": replay_command(shrunk_file, node_cmd, hosted=hosted),
        }
    (folder.path / "results.json").write_text(json.dumps(summary, indent=1) + "\n")
    out["results"] = folder.path / "results.json"
    journal = folder.path / "journal.ndjson"
    with journal.open("w", encoding="utf-8") as f:
        for o in shown.observations if shown is not None else ():
            f.write(json.dumps(_obs_json(o), default=str) + "\n")
    out["journal"] = journal
    svg, notes = "", tuple[str, ...]()
    if shown is not None and shown.observations:
        machines = list(dict.fromkeys(o.node for o in shown.observations))
        for o in shown.observations:
            for s in o.sent:
                machines.extend(x for x in s.channel if x not in machines)
        drawing = draw(
            layout(
                sorted(set(machines)),
                diagram_events(shown.observations),
                title=f"{shown.trace.name}: {shown.verdict}",
                records=record_notes(shown.observations),
                words=words_of(shown.observations),
                notes=restore_notes(shown.observations),
            )
        )
        svg, notes = drawing.svg, drawing.warnings
        (folder.path / "diagram.svg").write_text(svg, encoding="utf-8")
        out["diagram"] = folder.path / "diagram.svg"
    replay = replay_command(shrunk_file, node_cmd, hosted=hosted) if shrunk is not None else ""
    div = shown.divergence if shown is not None and shown.verdict != Verdict.PASS else None
    explorer = ""
    if shrunk is not None and div is not None and cl:
        out["explorer"] = _explorer(folder, shrunk.trace, div.step, div.describe(), div.node)
        explorer = out["explorer"].name
    cfg = model_of(shown.trace) if shown is not None and cl else None
    steps = (shrunk.trace.steps if shrunk is not None else shown.executed) if shown else ()
    page = ReportPage(
        verdict=str(verdict),
        node=node_cmd,
        counts=[(k, n) for k, n in counts.items()],
        trace=shown.trace.name if shown is not None else "",
        model=shown.trace.model if shown is not None else "",
        divergence=DivergenceView(
            div.step, div.node, div.summary, div.model_did, div.node_did, div.why, div.kind
        )
        if div is not None
        else None,
        reason=shown.reason
        if shown is not None and div is None and shown.verdict != "pass"
        else "",
        schedule=[
            (step_text(cfg, a, ps) if cfg is not None else a, show_step(a, ps)) for a, ps in steps
        ],
        shrunk_from=shrunk.original_steps if shrunk is not None else None,
        shrink_runs=shrunk.runs if shrunk is not None else None,
        replay=replay,
        svg=svg,
        diagram_notes=notes,
        explorer=explorer,
        journal=[o.describe() for o in shown.observations] if shown is not None else (),
        stopped=stopped,
        sandbox=[(x.name, x.active, x.detail) for x in sandbox.layers]
        if sandbox is not None
        else (),
        sandbox_mode=sandbox.mode if sandbox is not None else "",
        traces=[
            TraceRow(
                r.trace.name, r.trace.source, len(r.trace.steps), str(r.verdict), r.explanation()
            )
            for r in results
        ],
    )
    (folder.path / "report.html").write_text(render_report(page), encoding="utf-8")
    out["html"] = folder.path / "report.html"
    return out
