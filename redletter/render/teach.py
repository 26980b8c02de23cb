"""Teaching: a model trace as observable events, drawn as a space-time diagram.

:func:`events_of_trace` replays a schedule (steps in the shared vocabulary) in
the reference model and derives, from each pair of successive states, what an
observer of the run sees: sends and receives (joined by message ids that
follow every message through its buffer), internal events, the moment each
machine records its state for a snapshot, and each message recorded in a
buffer's stream.  :func:`seed_schedule` is the run of the worked example in
``seeds/001`` (three processes, P1 starts the snapshot right after event B),
which ``redletter diagram MCSeed --seed-example`` draws.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import cast

from redletter.python_model.actions import step
from redletter.python_model.config import ModelConfig
from redletter.python_model.state import State
from redletter.render.diagram import Diagram, Event, layout

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
    """A schedule replayed in the model: its states and its observable events."""

    states: tuple[State, ...]
    events: tuple[Event, ...]


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


def events_of_trace(cfg: ModelConfig, start: State, steps: Sequence[Step]) -> Run:
    """Replay ``steps`` from ``start`` and derive each step's observable events."""
    ids = [list[int]() for _ in cfg.chans]  # message ids, aligned with each buffer
    next_id = 0
    states = [start]
    events: list[Event] = []
    s = start
    for action, params in steps:
        t = step(cfg, s, action, params)
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
            if len(new) < len(old):  # a receipt: find the removed position
                pos = _inserted_at(new, old)
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
            elif len(new) > len(old):  # a send: one message per buffer per step
                pos = _inserted_at(old, new)
                msg = new[pos]
                ids[c].insert(pos, next_id)
                if msg >= 0:
                    label = _label(cfg, t, cfg.chan_src[c], str(msg))
                    sent.append(Event("send", src, chan, next_id, label=label))
                else:
                    sent.append(Event("send", src, chan, next_id, snapshot=-msg))
                next_id += 1
        n = len(states) - 1
        events.extend(replace(e, step=n) for e in received + recorded + sent)
        states.append(t)
        s = t
    return Run(tuple(states), tuple(events))


def diagram_of_trace(
    cfg: ModelConfig, start: State, steps: Sequence[Step], *, title: str = ""
) -> Diagram:
    """The space-time diagram of a schedule replayed in the model."""
    run = events_of_trace(cfg, start, steps)
    return layout(cfg.procs, run.events, title=title)
