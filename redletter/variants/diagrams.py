"""The comparison page's counterexamples as space-time diagrams.

Each model that must fail has its counterexample in ``docs/variants.json`` (TLC's,
state by state).  Here every state is read into the variant's Python engine state
(:meth:`Engine.from_tla`) and each step is read from the difference between a state
and the next, as the events :mod:`redletter.render.diagram` draws: a message is a
send and a receive joined by an arrow; a red letter, an observer's request or a
barrier is a marker of its snapshot (dashed); a machine recording its state is its
snapshot's shape, and the cut is drawn through them; a message recorded as in
transit -- logged, forwarded to the observer, stored with the checkpoint -- is
drawn thick; a restore is an event on every machine; what is still in a buffer at
the end is drawn *in flight*.

``redletter variants diagrams`` writes ``docs/variants/<model>.svg``; the page
shows them, and a test fails when one is stale.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any, Final

from redletter.errors import InternalError
from redletter.project import Project
from redletter.python_model.values import parse_state
from redletter.render.diagram import (
    BARRIER_WORDS,
    CHANDY_LAMPORT_WORDS,
    Diagram,
    Event,
    layout,
    render_svg,
)
from redletter.variants.measure import Counterexample, Measurements

__all__ = [
    "DIAGRAM_DIR",
    "counterexample_diagram",
    "diagram_path",
    "render_diagrams",
    "run_diagram",
]

#: Where the page's diagrams live (relative to the project root).
DIAGRAM_DIR: Final = Path("docs/variants")


def diagram_path(model: str) -> Path:
    """``docs/variants/<model>.svg`` (relative to the project root)."""
    return DIAGRAM_DIR / f"{model}.svg"


class _Events:
    """Events in the making: message ids per buffer, in buffer order."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.queues: dict[object, list[int]] = {}
        self.next_id = 0

    def send(
        self,
        step: int,
        chan: tuple[str, str],
        label: str,
        snapshot: int | None = None,
        key: object = None,
    ) -> int:
        mid = self.next_id
        self.next_id += 1
        self.queues.setdefault(chan if key is None else key, []).append(mid)
        self.events.append(Event("send", chan[0], chan, mid, snapshot, label, step))
        return mid

    def receive(
        self,
        step: int,
        chan: tuple[str, str],
        index: int,
        label: str,
        snapshot: int | None = None,
        key: object = None,
    ) -> int:
        mid = self.queues[chan if key is None else key].pop(index)
        self.events.append(Event("receive", chan[1], chan, mid, snapshot, label, step))
        return mid

    def record_state(self, step: int, machine: str, snapshot: int, label: str) -> None:
        self.events.append(Event("record_state", machine, None, None, snapshot, label, step))

    def record_message(
        self, step: int, machine: str, chan: tuple[str, str], mid: int, snapshot: int
    ) -> None:
        self.events.append(Event("record_message", machine, chan, mid, snapshot, "", step))

    def internal(self, step: int, machine: str, label: str) -> None:
        self.events.append(Event("internal", machine, None, None, None, label, step))


def _seq_diff(before: Sequence[Any], after: Sequence[Any]) -> tuple[int | None, tuple[Any, ...]]:
    """How buffer ``before`` became ``after``: the index removed (or ``None``) and the
    messages appended."""
    n = len(before)
    if tuple(after[:n]) == tuple(before):
        return None, tuple(after[n:])
    for i in range(n):
        rest = (*before[:i], *before[i + 1 :])
        if tuple(after[: len(rest)]) == rest:
            return i, tuple(after[len(rest) :])
    raise InternalError("a buffer changed in a way no single step makes")


def _new_bits(before: int, after: int) -> list[int]:
    return [i for i in range(after.bit_length()) if after >> i & 1 and not before >> i & 1]


# --------------------------------------------------------------------------- families


def _lazy(engine: Any, states: Sequence[Any], actions: Sequence[str]) -> tuple[list[str], _Events]:
    cfg = engine.cfg
    ev = _Events()
    for step, (s, t) in enumerate(pairwise(states), start=1):
        sends: list[tuple[tuple[str, str], int]] = []
        for c, chan in enumerate(cfg.chans):
            removed, added = _seq_diff(s.buf[c], t.buf[c])
            if removed is not None:
                v = s.buf[c][removed]
                snap = -v if v < 0 else None
                mid = ev.receive(step, chan, removed, "" if v < 0 else str(v), snap)
                for k in range(len(cfg.snaps)):
                    if len(t.rec_buf[k][c]) > len(s.rec_buf[k][c]):
                        ev.record_message(step, chan[1], chan, mid, cfg.snaps[k])
            sends += [(chan, v) for v in added]
        for k, kid in enumerate(cfg.snaps):
            for p in _new_bits(s.red[k], t.red[k]):
                ev.record_state(step, cfg.procs[p], kid, f"{cfg.procs[p]} turns red")
        for chan, v in sends:
            ev.send(step, chan, "" if v < 0 else str(v), -v if v < 0 else None)
    return list(cfg.procs), ev


def _observer(
    engine: Any, states: Sequence[Any], actions: Sequence[str]
) -> tuple[list[str], _Events]:
    cfg = engine.cfg
    ev = _Events()
    for step, (s, t, action) in enumerate(zip(states, states[1:], actions, strict=False), start=1):
        for c, chan in enumerate(cfg.chans):
            before, after = dict(s.buf[c]), dict(t.buf[c])
            for m, n in sorted(before.items()):
                if after.get(m, 0) < n:  # received: the oldest copy of m
                    key = (chan, m)
                    mid = ev.queues[key].pop(0)
                    ev.events.append(
                        Event("receive", chan[1], chan, mid, None, _obs_label(cfg, m), step)
                    )
                    for k in range(len(cfg.snaps)):
                        if sum(x for _, x in t.rec_buf[k][c]) > sum(x for _, x in s.rec_buf[k][c]):
                            ev.record_message(step, chan[1], chan, mid, cfg.snaps[k])
        for k, kid in enumerate(cfg.snaps):
            o = cfg.procs[cfg.observer[k]]
            for p in _new_bits(t.requests[k], s.requests[k]):  # a request arrives
                chan = (o, cfg.procs[p])
                ev.receive(step, chan, 0, "request", kid, key=("request", chan))
            for p in _new_bits(s.red[k], t.red[k]):
                ev.record_state(step, cfg.procs[p], kid, f"{cfg.procs[p]} saves its state")
            for p in _new_bits(s.requests[k], t.requests[k]):  # the observer's requests
                chan = (o, cfg.procs[p])
                ev.send(step, chan, "request", kid, key=("request", chan))
            if s.sf[k] is None and t.sf[k] is not None:
                ev.internal(step, o, f"declares snapshot {kid} complete")
        for c, chan in enumerate(cfg.chans):
            before, after = dict(s.buf[c]), dict(t.buf[c])
            for m, n in sorted(after.items()):
                for _ in range(n - before.get(m, 0)):
                    ev.send(step, chan, _obs_label(cfg, m), key=(chan, m))
        del action
    return list(cfg.procs), ev


def _obs_label(cfg: Any, m: tuple[int, int]) -> str:
    v, toks = m
    return f"{v} + token" if toks else str(v)


def _barrier(
    engine: Any, states: Sequence[Any], actions: Sequence[str]
) -> tuple[list[str], _Events]:
    cfg = engine.cfg

    def label(m: tuple[int, int, int]) -> str:
        if m[0] < 0:
            return ""
        src = cfg.procs[cfg.sources[m[0]]]
        return f"{src}.{m[1]}" + (f" round {m[2]}" if m[2] else "")

    ev = _Events()
    for step, (s, t, action) in enumerate(zip(states, states[1:], actions, strict=False), start=1):
        if action == "Restore":
            ev.queues = {}
            for p in cfg.procs:
                ev.internal(step, p, f"restore checkpoint {t.restored}")
            for c, chan in enumerate(cfg.chans):
                for m in t.buf[c]:
                    ev.send(step, chan, label(m) + " (stored)")
            continue
        sends: list[tuple[tuple[str, str], tuple[int, int, int]]] = []
        for c, chan in enumerate(cfg.chans):
            removed, added = _seq_diff(s.buf[c], t.buf[c])
            if removed is not None:
                m = s.buf[c][removed]
                ahead = list(ev.queues.get(chan, [])[:removed])
                mid = ev.receive(step, chan, removed, label(m), m[1] if m[0] < 0 else None)
                for n, nid in enumerate(cfg.ckpts):
                    grown = len(t.rec_chan[n][c]) - len(s.rec_chan[n][c])
                    if grown and m[0] >= 0:  # logged (recording rule 2)
                        ev.record_message(step, chan[1], chan, mid, nid)
                    elif grown:  # stored: the records the barrier overtook
                        for aid in ahead[:grown]:
                            ev.record_message(step, chan[1], chan, aid, nid)
            sends += [(chan, m) for m in added]
        for n, nid in enumerate(cfg.ckpts):
            for p in _new_bits(s.snapped[n], t.snapped[n]):
                what = "records its position" if p in cfg.source_of else "snapshots its state"
                ev.record_state(step, cfg.procs[p], nid, f"{cfg.procs[p]} {what}")
        for chan, m in sends:
            ev.send(step, chan, label(m), m[1] if m[0] < 0 else None)
    return list(cfg.procs), ev


_FAMILIES: Final = {
    "LazyEngine": _lazy,
    "ObserverEngine": _observer,
    "BarrierEngine": _barrier,
}


def run_diagram(
    engine: Any,
    states: Sequence[Any],
    actions: Sequence[str],
    *,
    title: str,
    notes: Sequence[str] = (),
) -> Diagram | None:
    """The diagram of a run of a variant's engine (its states in order and the action
    of each step), or ``None`` when the engine has no drawing."""
    build = _FAMILIES.get(type(engine).__name__)
    if build is None:
        return None
    machines, ev = build(engine, states, actions)
    barrier = type(engine).__name__ == "BarrierEngine"
    return layout(
        machines,
        ev.events,
        title=title,
        notes=notes,
        words=BARRIER_WORDS if barrier else CHANDY_LAMPORT_WORDS,
    )


def counterexample_diagram(project: Project, c: Counterexample) -> Diagram | None:
    """The diagram of a measured counterexample, or ``None`` when the model's engine
    has no drawing (Chandy-Lamport's models are drawn by ``redletter diagram``)."""
    from redletter.python_model.engines import load_engine

    engine = load_engine(c.model, project.spec_dir)
    if type(engine).__name__ not in _FAMILIES:
        return None
    shown = [s for s in c.states if s.text]
    states = [engine.from_tla(parse_state(s.text)) for s in shown]
    actions = [s.action for s in shown[1:]]
    what = c.violated or "SnapshotsComplete"
    back = [s.back_to for s in c.states if s.back_to is not None]
    title = f"{c.model}: {c.result} ({what}), TLC's counterexample"
    notes = [f"then back to state {back[0]}: the cycle repeats for ever"] if back else []
    if c.states and c.states[-1].action == "Stuttering":
        notes = ["then the run stutters for ever (TLC's lasso): the property never holds again"]
    return run_diagram(engine, states, actions, title=title, notes=notes)


def render_diagrams(project: Project, m: Measurements) -> dict[str, str]:
    """Every counterexample of ``m`` that has a drawing, as SVG text, by model."""
    out: dict[str, str] = {}
    for name, c in sorted(m.counterexamples.items()):
        d = counterexample_diagram(project, c)
        if d is not None:
            out[name] = render_svg(d)
    return out
