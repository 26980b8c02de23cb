"""Teaching: a model trace as observable events, drawn as a space-time diagram.

:func:`events_of_trace` replays a schedule (steps in the shared vocabulary) in
the reference model and derives, from each pair of successive states, what an
observer of the run sees: sends and receives (joined by message ids that
follow every message through its buffer), internal events, the moment each
machine records its state for a snapshot, and each message recorded in a
buffer's stream.  :func:`seed_schedule` is the run of the worked example in
``seeds/001`` (three processes, P1 starts the snapshot right after event B),
which ``redletter diagram MCSeed --seed-example`` draws.

:func:`show_local` and :func:`show_message` put the model's values in the words
of the application (``{A, B}``, ``2 tokens``, ``H``); :func:`record_notes` says
what each snapshot recorded beside each machine's line of the diagram.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import cast

from redletter.python_model.actions import step
from redletter.python_model.apps import HistoryApp
from redletter.python_model.config import ModelConfig
from redletter.python_model.explore import ExploreProgress, ExploreResult, as_engine, explore
from redletter.python_model.liveness import check_liveness
from redletter.python_model.state import Local, State
from redletter.render.diagram import Diagram, Event, RecordNote, layout

Step = tuple[str, Mapping[str, object]]

#: The run described in seeds/001, as steps of MCSeed.  P1 performs A and B (B
#: sends to P2), starts the snapshot; P3, after I, receives P1's red letter
#: and records {I}; P1 gets P3's red letter (P3 -> P1 records nothing); P2
#: performs F, G (receiving B's message) and H (sending to P1), then receives
#: P3's red letter and records {F, G, H}; P1's old red letter reaches P2
#: (P1 -> P2 records nothing); P1 performs C and D (receiving H's message,
#: which it records for P2 -> P1), then P2's red letter closes P2 -> P1 with
#: [H]; P3 gets P2's red letter, and the snapshot is complete.  J and E follow.
_SEED: tuple[Step, ...] = (
    ("InternalEvent", {"p": "P1", "e": 1}),
    ("SendApp", {"c": ["P1", "P2"], "m": 2}),
    ("StartSnapshot", {"p": "P1", "k": 1}),
    ("InternalEvent", {"p": "P3", "e": 1}),
    ("ReceiveRedLetter", {"c": ["P1", "P3"], "i": 1}),
    ("ReceiveRedLetter", {"c": ["P3", "P1"], "i": 1}),
    ("InternalEvent", {"p": "P2", "e": 1}),
    ("ReceiveApp", {"c": ["P1", "P2"], "i": 1}),
    ("SendApp", {"c": ["P2", "P1"], "m": 3}),
    ("ReceiveRedLetter", {"c": ["P3", "P2"], "i": 1}),
    ("ReceiveRedLetter", {"c": ["P1", "P2"], "i": 1}),
    ("InternalEvent", {"p": "P1", "e": 3}),
    ("ReceiveApp", {"c": ["P2", "P1"], "i": 1}),
    ("ReceiveRedLetter", {"c": ["P2", "P1"], "i": 1}),
    ("ReceiveRedLetter", {"c": ["P2", "P3"], "i": 1}),
    ("SendApp", {"c": ["P3", "P1"], "m": 2}),
    ("ReceiveApp", {"c": ["P3", "P1"], "i": 1}),
)


def seed_schedule() -> tuple[Step, ...]:
    """The worked example's run (seeds/001) as a schedule of MCSeed."""
    return _SEED


@dataclass(frozen=True, slots=True)
class Run:
    """A schedule replayed in the model: its states and its observable events.

    ``ids[t][c]`` are the message ids of buffer index ``c`` in ``states[t]``, oldest
    first (the ids the events use), and ``labels`` each message's label (the send
    event's name for a scripted application, else its value; ``R<k>`` for a red
    letter of snapshot k)."""

    states: tuple[State, ...]
    events: tuple[Event, ...]
    ids: tuple[tuple[tuple[int, ...], ...], ...] = ()
    labels: Mapping[int, str] = field(default_factory=lambda: MappingProxyType({}))


def _label(cfg: ModelConfig, s_after: State, p: int, fallback: str) -> str:
    """The event's name for scripted apps (the last name in p's history), else fallback."""
    local = s_after.local[p]
    if cfg.app.module == "HistoryApp":
        names = cast(tuple[str, ...], local)
        return names[-1] if names else fallback
    return fallback


def _inserted_at(old: tuple[int, ...], new: tuple[int, ...]) -> int:
    """Where one message was inserted into ``old`` to give ``new``."""
    for j, v in enumerate(old):
        if new[j] != v:
            return j
    return len(old)


def _buffer_change(
    old: tuple[int, ...], new: tuple[int, ...], received: int | None
) -> tuple[int | None, list[int]]:
    """How one buffer changed in a step: the position a message was removed from (or
    None) and the positions (in ``new``) of the messages put in.  ``received``: the
    position the step receives from in this buffer (None: it receives nothing here),
    for a run whose states are given (a node's: it may put several messages on one
    buffer in a step, always at its end); else one insertion or one removal, wherever
    the model's (possibly mutant) Enqueue puts it."""
    if received is not None or len(new) >= len(old):
        base = old[:received] + old[received + 1 :] if received is not None else old
        if new[: len(base)] == base and (received is not None or len(new) > len(old)):
            return received, list(range(len(base), len(new)))
    if len(new) < len(old):
        return _inserted_at(new, old), []
    if len(new) > len(old):
        return None, [_inserted_at(old, new)]
    return None, []


def events_of_trace(
    cfg: ModelConfig,
    start: State,
    steps: Sequence[Step],
    *,
    states: Sequence[State] | None = None,
) -> Run:
    """Replay ``steps`` from ``start`` and derive each step's observable events.

    ``states``: the run's states, when they are given instead of replayed
    (``states[0]`` is ``start``; a node's own run, whose recordings are the node's:
    :mod:`redletter.conformance.judges.noderun`)."""
    ids = [list[int]() for _ in cfg.chans]  # message ids, aligned with each buffer
    next_id = 0
    for c, b0 in enumerate(start.buf):  # messages already in flight in the first state
        ids[c] = list(range(next_id, next_id + len(b0)))
        next_id += len(b0)
    labels: dict[int, str] = {
        mid: (str(v) if v >= 0 else f"R{-v}")
        for c, b in enumerate(start.buf)
        for mid, v in zip(ids[c], b, strict=True)
    }
    id_history = [tuple(tuple(x) for x in ids)]
    seen = [start]
    events: list[Event] = []
    s = start
    for n_step, (action, params) in enumerate(steps, start=1):
        t = step(cfg, s, action, params) if states is None else states[n_step]
        recv_chan: tuple[str, str] | None = None
        recv_at = 0
        c_param = params.get("c")
        if (
            states is not None
            and action in ("ReceiveApp", "ReceiveRedLetter")
            and isinstance(c_param, list | tuple)
        ):
            recv_chan = (str(c_param[0]), str(c_param[1]))
            recv_at = int(str(params.get("i", 1))) - 1
        received: list[Event] = []  # the message this step consumed
        recorded: list[Event] = []  # what it recorded (machine states, then messages)
        sent: list[Event] = []  # what it put on the wire, in buffer order
        if action == "InternalEvent":
            p = cfg.proc_index[str(params["p"])]
            received.append(Event("internal", cfg.procs[p], label=_label(cfg, t, p, "")))
        for k_i, k in enumerate(cfg.snaps):
            newly = t.red[k_i] & ~s.red[k_i]
            for p in range(len(cfg.procs)):
                if newly >> p & 1:
                    recorded.append(Event("record_state", cfg.procs[p], snapshot=k))
        for c, (old, new) in enumerate(zip(s.buf, t.buf, strict=True)):
            src, dst = cfg.chans[c]
            chan = (src, dst)
            removed, added = _buffer_change(old, new, recv_at if chan == recv_chan else None)
            if removed is not None:  # a receipt
                pos = removed
                mid = ids[c].pop(pos)
                msg = old[pos]
                if msg >= 0:
                    label = _label(cfg, t, cfg.chan_dst[c], "")
                    received.append(Event("receive", dst, chan, mid, label=label))
                    for k_i, k in enumerate(cfg.snaps):
                        if len(t.rec_buf[k_i][c]) > len(s.rec_buf[k_i][c]):
                            recorded.append(Event("record_message", dst, chan, mid, k))
                else:
                    received.append(Event("receive", dst, chan, mid, snapshot=-msg))
            for pos in added:  # a send (a node's step may put several on a buffer)
                msg = new[pos]
                ids[c].insert(pos, next_id)
                if msg >= 0:
                    label = _label(cfg, t, cfg.chan_src[c], str(msg))
                    sent.append(Event("send", src, chan, next_id, label=label))
                    labels[next_id] = label
                else:
                    sent.append(Event("send", src, chan, next_id, snapshot=-msg))
                    labels[next_id] = f"R{-msg}"
                next_id += 1
        n = len(seen)  # steps are numbered from 1: states[n - 1] -> states[n]
        events.extend(replace(e, step=n) for e in received + recorded + sent)
        seen.append(t)
        id_history.append(tuple(tuple(x) for x in ids))
        s = t
    return Run(tuple(seen), tuple(events), tuple(id_history), MappingProxyType(labels))


def show_local(cfg: ModelConfig, x: Local | None) -> str:
    """A machine's local state in the application's words: ``{A, B}`` (the events of
    a scripted machine), ``2 tokens``, ``active, sent 1, received 0``."""
    if x is None:
        return "not recorded"
    module = cfg.app.module
    if module == "HistoryApp":
        return "{" + ", ".join(cast(tuple[str, ...], x)) + "}"
    if module == "TokenApp":
        n = cast(int, x)
        return f"{n} token{'s' if n != 1 else ''}"
    if module == "DiffusingApp":
        active, sent, recvd = cast(tuple[bool, int, int], x)
        return f"{'active' if active else 'idle'}, sent {sent}, received {recvd}"
    return repr(x)


def show_message(cfg: ModelConfig, v: int) -> str:
    """An application message or red letter in words (``R1``: a red letter of 1)."""
    if v < 0:
        return f"R{-v}"
    if cfg.app.module == "TokenApp":
        return f"{v} token{'s' if v != 1 else ''}"
    return str(v)


def message_label(cfg: ModelConfig, c: int, v: int) -> str:
    """A message of buffer index ``c`` as a chip shows it: ``R1`` (a red letter of 1),
    the send event's name for a scripted application (``H``), else its value."""
    if v < 0:
        return f"R{-v}"
    if isinstance(cfg.app, HistoryApp):
        row = cfg.app.script[cfg.chan_src[c]]
        if 1 <= v <= len(row):
            return row[v - 1][0]
    return str(v)


def chan_name(c: tuple[str, str]) -> str:
    """``P2→P1``."""
    return f"{c[0]}→{c[1]}"


def record_notes(cfg: ModelConfig, run: Run, at: int | None = None) -> tuple[RecordNote, ...]:
    """Per started snapshot and machine: the state it recorded and the stream recorded
    for each of its input buffers (as the messages' labels), at the end of the run, or
    in state ``at`` (only what is recorded by then: nothing of the future)."""
    n = len(run.states) - 1 if at is None else at
    last = run.states[n]
    recorded: dict[tuple[int, int], list[str]] = {}  # (snapshot id, buffer) -> labels
    for ev in run.events:
        if ev.kind == "record_message" and ev.channel is not None and ev.snapshot is not None:
            if ev.step is not None and ev.step > n:
                continue
            label = run.labels.get(ev.msg_id, "?") if ev.msg_id is not None else "?"
            recorded.setdefault((ev.snapshot, cfg.chan_index[ev.channel]), []).append(label)
    out: list[RecordNote] = []
    for k_i, k in enumerate(cfg.snaps):
        if run.states[-1].s0[k_i] is None:
            continue  # never started
        for p, m in enumerate(cfg.procs):
            if last.s0[k_i] is None:
                out.append(RecordNote(k, m, f"snapshot {k}: not started yet"))
                continue
            mine = last.rec_machine[k_i][p]
            parts = [
                show_local(cfg, mine)
                if mine is not None or at is None
                else "state not recorded yet"
            ]
            for c, ch in enumerate(cfg.chans):
                if cfg.chan_dst[c] != p:
                    continue
                labels = recorded.get((k, c))
                if labels is None:  # recorded without an observable receipt (a mutant)
                    labels = [show_message(cfg, v) for v in last.rec_buf[k_i][c]]
                stream = "[" + ", ".join(labels) + "]"
                if not last.red_buf[k_i] >> c & 1:
                    stream += " open"
                parts.append(f"{chan_name(ch)}: {stream}")
            out.append(RecordNote(k, m, f"snapshot {k}: " + "; ".join(parts)))
    return tuple(out)


def diagram_of_trace(
    cfg: ModelConfig, start: State, steps: Sequence[Step], *, title: str = ""
) -> Diagram:
    """The space-time diagram of a schedule replayed in the model, with what each
    snapshot recorded written beside each machine."""
    run = events_of_trace(cfg, start, steps)
    return layout(cfg.procs, run.events, title=title, records=record_notes(cfg, run))


def counterexample(
    cfg: ModelConfig, on_progress: Callable[[ExploreProgress], None] | None = None
) -> tuple[list[Step] | None, ExploreResult]:
    """A run of ``cfg`` that breaks what its cfg checks: the shortest safety
    counterexample the explorer finds, else (when the cfg has temporal properties)
    the first failing lasso's prefix and one turn of its cycle; ``None`` when the
    model passes.  Also returns the exploration (for its state count)."""
    result = explore(cfg, on_progress=on_progress)
    if result.violation is not None:
        return [(st.action, dict(st.params)) for st in result.violation.trace[1:]], result
    if not as_engine(cfg).liveness:
        return None, result
    live, _ = check_liveness(cfg)
    lasso = next((v.lasso for v in live.verdicts if not v.holds and v.lasso is not None), None)
    if lasso is None:
        return None, result
    return [(st.action, dict(st.params)) for st in lasso.steps[1:]], result
