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
from redletter.conformance.judges.drive import JudgeResult, NodeSpec, drain_steps
from redletter.conformance.judges.noderun import NodeRun, follow_node, node_states
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
from redletter.errors import InputError, RedletterError
from redletter.project import kit_command
from redletter.python_model.actions import step as model_step
from redletter.python_model.config import ModelConfig
from redletter.python_model.engines import family_of
from redletter.python_model.state import State
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
    SnapshotView,
    TraceRow,
    properties_named,
    render_report,
)
from redletter.render.teach import show_local

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
    "snapshot_rows",
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
    try:
        store.mkdir(parents=True, exist_ok=True)
        while True:
            try:
                # mkdir never follows: a name already taken (a link left there too,
                # dangling or not) is passed over, never written through.
                path.mkdir()
                break
            except FileExistsError:
                n += 1
                path = base.with_name(f"{base.name}-{n}")
        (path / "logs").mkdir()
    except OSError as exc:
        raise InputError(
            f"cannot make a run folder in it: {exc.strerror or exc}; give a writable folder"
            " with --store",
            code="RL-INPUT-USAGE",
            path=str(store),
        ) from None
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


def record_notes(
    observations: Sequence[Observation], cfg: ModelConfig | None = None
) -> list[RecordNote]:
    """What the node said each snapshot recorded, machine by machine: its state and
    the messages it recorded per input channel (``open`` until it closed it).
    ``cfg``: the model; with it states are shown in the application's words (``1
    token``), every input channel of a machine that recorded its state is shown, an
    empty recording too (``[] open``), and a machine that recorded nothing says so."""
    channels = cfg.chans if cfg is not None else ()

    def shown(v: p.JsonValue) -> str:
        if cfg is not None:
            local = cfg.app.local_from_json(v)
            if local is not None:
                return show_local(cfg, local)
        return _show_json(v)

    word = words_of(observations).snapshot
    states: dict[tuple[int, str], str] = {}
    streams: dict[tuple[int, tuple[str, str]], list[str]] = {}
    closed: set[tuple[int, tuple[str, str]]] = set()
    for o in observations:
        for r in o.recorded:
            if isinstance(r, p.RecordState):
                states.setdefault((r.snapshot, o.node), shown(r.state))
            elif isinstance(r, p.RecordMessage):
                streams.setdefault((r.snapshot, r.channel), []).append(str(r.payload))
            elif isinstance(r, p.CloseChannel):
                closed.add((r.snapshot, r.channel))
    snaps = sorted({k for k, _ in states} | {k for k, _ in streams} | {k for k, _ in closed})
    machines = list(dict.fromkeys([m for _, m in states] + [c[1] for _, c in streams]))
    machines += [c[1] for _, c in closed if c[1] not in machines]
    machines += [c[1] for c in channels if c[1] not in machines]
    notes: list[RecordNote] = []
    for k in snaps:
        for m in machines:
            parts = [states.get((k, m), "no state recorded")]
            chans = sorted({c for kk, c in [*streams, *closed] if kk == k and c[1] == m})
            if (k, m) in states:
                chans = sorted({*chans, *(c for c in channels if c[1] == m)})
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


def _own_completion_note(run: NodeRun) -> str:
    first, last = run.scheduled + 1, len(run.steps)
    span = f"step {first}" if first == last else f"steps {first}–{last}"
    return (
        f"{span}: the node's own completion after the schedule (every message it put in"
        " flight delivered, oldest first), so that its snapshot can complete"
    )


def snapshot_rows(cfg: ModelConfig, trace: Trace, node_run: NodeRun) -> tuple[SnapshotView, ...]:
    """Per snapshot, what the model records on ``trace``'s schedule (continued with its
    own completion until every snapshot has completed) beside what the node reported at
    the end of its own run (:func:`follow_node`), machine by machine and channel by
    channel; with the tokens each holds in all when the application counts tokens."""
    states = replay_states(cfg, tuple(trace.steps) + completion_steps(cfg, trace.steps))
    end = states[-1]
    tokens = cfg.app.module == "TokenApp"
    out: list[SnapshotView] = []
    for ki, k in enumerate(cfg.snaps):
        reports = {n: node_run.reports.get((n, k)) for n in cfg.procs}
        if end.s0[ki] is None and not any(
            r is not None and r.local_state for r in reports.values()
        ):
            continue
        rows: list[tuple[str, str, str, bool]] = []
        exp_total = got_total = 0
        for pi, n in enumerate(cfg.procs):
            want = end.rec_machine[ki][pi]
            rep_ = reports[n]
            got = cfg.app.local_from_json(rep_.local_state) if rep_ is not None else None
            shown_got = (
                show_local(cfg, got)
                if got is not None
                else "nothing"
                if rep_ is None or rep_.local_state is None
                else str(rep_.local_state)
            )
            rows.append((n, show_local(cfg, want), shown_got, want != got))
            if tokens:
                exp_total += int(str(want)) if isinstance(want, int) else 0
                got_total += got if isinstance(got, int) else 0
        for ci, (src, dst) in enumerate(cfg.chans):
            want_c = tuple(end.rec_buf[ki][ci])
            rep_ = reports[dst]
            got_c = tuple(rep_.channels.get(src, ())) if rep_ is not None else ()
            rows.append(
                (
                    f"{src}→{dst}",
                    "[" + ", ".join(map(str, want_c)) + "]",
                    "[" + ", ".join(map(str, got_c)) + "]",
                    want_c != got_c,
                )
            )
            if tokens:
                exp_total += sum(want_c)
                got_total += sum(got_c)
        inputs = cfg.in_mask
        for pi, n in enumerate(cfg.procs):
            done = end.red_buf[ki] & inputs[pi] == inputs[pi] and end.s0[ki] is not None
            rep_ = reports[n]
            said = rep_ is not None and rep_.complete
            rows.append(
                (f"{n}'s part complete", "yes" if done else "no", "yes" if said else "no",
                 done != said)
            )  # fmt: skip
        total = sum(int(str(x)) for x in end.local) + sum(sum(b) for b in _app_bufs(end))
        note = (
            f"the model's snapshot {k} holds {exp_total} token{'s' if exp_total != 1 else ''}"
            f" in all, the node's {got_total}; the system holds {total}"
            if tokens
            else ""
        )
        out.append(SnapshotView(k, tuple(rows), note))
    return tuple(out)


def _app_bufs(s: State) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(v for v in b if v >= 0) for b in s.buf)


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


def _explorer(
    folder: RunFolder,
    trace: Trace,
    divergence_step: int,
    why: str,
    node: str,
    node_run: NodeRun | None = None,
) -> Path:
    """The proof explorer of ``trace`` in the model, the divergence marked; with
    ``node_run``, the node's own run beside it (the page opens on it).

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
        run_label="the model's run",
        run_caption="The model's run of the schedule (what Chandy–Lamport does)",
    )
    runs = [data]
    if node_run is not None and node_run.steps:
        mine = _node_explorer(cfg, trace, node_run, note, subtitle)
        data = {**mine, "subtitle": _both_subtitle(node, node_run, len(steps)) + subtitle}
        runs = [data, {k: v for k, v in runs[0].items()}]
    path = folder.path / "explain.html"
    path.write_text(render_explorer(*runs), encoding="utf-8")
    return path


def _both_subtitle(node: str, node_run: NodeRun, scheduled: int) -> str:
    own = len(node_run.steps) - node_run.scheduled
    text = (
        f"Two runs of the schedule side by side: node {node}'s own run (what it sent and "
        "recorded, its shadow networks built from its own recordings) and the model's. "
    )
    if own:
        text += (
            f"The node's run goes on past the schedule with its own completion ({own} step"
            f"{'s' if own != 1 else ''}: every message it put in flight delivered, oldest "
            "first), so that its snapshot can complete. "
        )
    if node_run.stopped:
        text += node_run.stopped[0].upper() + node_run.stopped[1:] + ". "
    del scheduled
    return text


def _node_explorer(
    cfg: ModelConfig, trace: Trace, node_run: NodeRun, note: Annotation, subtitle: str
) -> dict[str, object]:
    """The explorer's data of the node's own run (:mod:`.judges.noderun`)."""
    states = node_states(cfg, node_run)
    steps = [(a, dict(ps)) for a, ps in node_run.steps]
    pr = prove_run(cfg, states[0], steps, states=states)
    return explorer_data(
        pr,
        title=f"{trace.model}: {trace.name}",
        subtitle=subtitle,
        annotations=[note] if note.step <= len(steps) else [],
        added_from=node_run.scheduled + 1 if node_run.scheduled < len(steps) else None,
        run_label="the node's run",
        run_caption="The node's own run (what it sent and recorded)",
        added_note="the node's own completion",
    )


def write_report(
    folder: RunFolder,
    results: Sequence[JudgeResult],
    *,
    node_cmd: str,
    hosted: bool = False,
    shrunk: ShrinkResult | None = None,
    stopped: str = "",
    node: NodeSpec | None = None,
) -> dict[str, Path]:
    """Write results.json, journal.ndjson, diagram.svg and report.html, and for a
    failure shrunk.itf.json and explain.html; return the paths written.  ``stopped``
    says why traces were left unjudged (the run is then unknown unless one failed).
    ``node``: the node judged; given, a failing node is driven once more through its
    shrunk schedule without stopping at the divergence (:func:`follow_node`), and its
    own run is drawn and shown in the explorer beside the model's."""
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
    div = shown.divergence if shown is not None and shown.verdict != Verdict.PASS else None
    node_run: NodeRun | None = None
    lost = ""
    if node is not None and shrunk is not None and div is not None and cl:
        try:
            node_run = follow_node(shrunk.trace, node, log_dir=folder.logs)
        except RedletterError as exc:  # the verdict stands; only the extra picture is lost
            lost = f"the node's own run could not be drawn: {exc.message}"
    svg, notes = "", tuple[str, ...]()
    observations = (
        node_run.observations
        if node_run is not None and node_run.observations
        else shown.observations
        if shown is not None
        else ()
    )
    if shown is not None and observations:
        machines = list(dict.fromkeys(o.node for o in observations))
        for o in observations:
            for s in o.sent:
                machines.extend(x for x in s.channel if x not in machines)
        model = model_of(shown.trace) if cl else None
        own = (
            [_own_completion_note(node_run)]
            if node_run is not None and len(node_run.steps) > node_run.scheduled
            else []
        )
        drawing = draw(
            layout(
                sorted(set(machines)),
                diagram_events(observations),
                title=f"{shown.trace.name}: {shown.verdict}",
                records=record_notes(observations, model),
                words=words_of(observations),
                notes=(*own, *restore_notes(observations), *([lost] if lost else [])),
            )
        )
        svg, notes = drawing.svg, drawing.warnings
        (folder.path / "diagram.svg").write_text(svg, encoding="utf-8")
        out["diagram"] = folder.path / "diagram.svg"
    replay = replay_command(shrunk_file, node_cmd, hosted=hosted) if shrunk is not None else ""
    explorer = ""
    if shrunk is not None and div is not None and cl:
        out["explorer"] = _explorer(
            folder, shrunk.trace, div.step, div.describe(), div.node, node_run
        )
        explorer = out["explorer"].name
    cfg = model_of(shown.trace) if shown is not None and cl else None
    snapshots = (
        snapshot_rows(cfg, shrunk.trace, node_run)
        if cfg is not None and shrunk is not None and node_run is not None
        else ()
    )
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
        snapshots=snapshots,
        node_run=node_run is not None and bool(node_run.steps),
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
