"""The proof explorer: one self-contained HTML page that steps through a run.

:func:`explorer_data` turns a :class:`~redletter.render.proof.ProofRun` into the
page's data (plain JSON: every state, every shadow move, every invariant per state,
all computed by the model's own code); :func:`render_explorer` writes the page:
the space-time diagram inline (:mod:`redletter.render.diagram`, with the current
step highlighted and the future faded), the machines with their colour per snapshot,
the buffers with the red letters in place, what is recorded so far, and the two
shadow networks side by side with Dijkstra's rules named as they fire.  The script
and styles are inlined from ``assets/`` (no server, no network: the page works from
``file://``), and the page prints.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from importlib.resources import files
from typing import cast

from redletter.python_model.actions import app_state
from redletter.python_model.config import ModelConfig
from redletter.python_model.lemmas.shadow import ShadowMove
from redletter.python_model.state import GState, State
from redletter.render.diagram import draw, layout, snapshot_style
from redletter.render.proof import (
    ALGORITHM_RULES,
    INVARIANT_WORDS,
    RULE_WORDS,
    ProofRun,
    buffer_rules,
    describe_move,
    machine_rules,
    move_why,
    step_words,
)
from redletter.render.teach import chan_name, message_label, record_notes, show_local

#: The rules of each shadow network in the order of EWD 864 (the page's legend).
RULE_CODES = ("i", "ii a", "ii b", "iii a", "iii b", "iii c", "iii d", "correspondence")

__all__ = [
    "RULE_CODES",
    "RUN_KEYS",
    "Annotation",
    "asset",
    "explorer_data",
    "fill",
    "message_label",
    "render_explorer",
    "step_text",
]


@dataclass(frozen=True)
class Annotation:
    """A note pinned to a step of the run (e.g. where a node under test diverged from
    the model): ``names`` are the properties it breaks."""

    step: int
    title: str
    text: str
    names: tuple[str, ...] = ()


def asset(name: str) -> str:
    """The text of ``redletter/render/assets/<name>``."""
    return files("redletter.render").joinpath("assets", name).read_text(encoding="utf-8")


def step_text(cfg: ModelConfig, action: str, params: Mapping[str, object]) -> str:
    """A step in words (:func:`redletter.render.proof.step_words`)."""
    return step_words(cfg, action, params)


def _raw(action: str, params: Mapping[str, object]) -> str:
    shown = ", ".join(
        f"{k}={'<<' + ', '.join(map(str, v)) + '>>' if isinstance(v, list | tuple) else v}"
        for k, v in params.items()
    )
    return f"{action}({shown})"


def _gstate(cfg: ModelConfig, g: GState) -> dict[str, object]:
    return {
        "local": [show_local(cfg, x) for x in g[0]],
        "buf": [[message_label(cfg, c, v) for v in b] for c, b in enumerate(g[1])],
    }


def _app_only(b: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(v for v in b if v >= 0)


def _fired(cfg: ModelConfig, lemma: int, before: int | None, after: int) -> list[str]:
    """Rules (ii) and (iii) whose case changed between colourings ``before`` and
    ``after`` (all of them at the start, ``before`` None)."""
    words = RULE_WORDS[lemma]
    n = len(cfg.procs)
    out: list[str] = []
    m0 = machine_rules(before, n) if before is not None else None
    b0 = buffer_rules(cfg, before) if before is not None else None
    for p, case in enumerate(machine_rules(after, n)):
        if m0 is None or m0[p] != case:
            lead = f"{cfg.procs[p]} turns red: " if m0 is not None else f"{cfg.procs[p]}: "
            out.append(f"{lead}({case}) {words[case]}")
    for c, case in enumerate(buffer_rules(cfg, after)):
        if b0 is None or b0[c] != case:
            if b0 is None:
                out.append(f"{chan_name(cfg.chans[c])}: ({case}) {words[case]}")
            else:
                out.append(f"{chan_name(cfg.chans[c])} from ({b0[c]}) to ({case}): {words[case]}")
    return out


def _move_json(
    cfg: ModelConfig, pr: ProofRun, lemma: int, k: int, move: ShadowMove, target: GState
) -> dict[str, object]:
    states = pr.states
    at = min(max(move.step, 0), len(states) - 1)
    after = states[at].red[k]
    before = states[at - 1].red[k] if move.kind not in ("start", "end") and at > 0 else None
    state = move.state
    match_m = [x == y for x, y in zip(state[0], target[0], strict=False)] if state[0] else []
    match_b = (
        [_app_only(x) == y for x, y in zip(state[1], target[1], strict=False)] if state[1] else []
    )
    return {
        "step": move.step,
        "kind": move.kind,
        "text": describe_move(
            cfg,
            lemma,
            move,
            before if before is not None else after,
            pr.steps[move.step - 1][0] if move.kind not in ("start", "end") else "",
        ),
        "state": _gstate(cfg, state) if state[0] else None,
        "rules": _gstate(cfg, move.rules) if move.rules is not None else None,
        "cases": {"m": machine_rules(after, len(cfg.procs)), "b": buffer_rules(cfg, after)},
        "fired": _fired(cfg, lemma, before, after) if move.kind != "end" else [],
        "ok": move.ok,
        "rule": move.rule,
        "ruleText": RULE_WORDS[lemma].get(move.rule, ""),
        "why": move_why(cfg, pr.steps, move),
        "match": {"m": match_m, "b": match_b},
    }


#: The parts of the page's data that belong to one run (the rest is shared by every
#: run a page shows: a failing node's run and the model's, side by side).
RUN_KEYS = (
    "runLabel",
    "runCaption",
    "addedNote",
    "steps",
    "states",
    "props",
    "breaks",
    "walks",
    "annotations",
    "recNotes",
    "addedFrom",
    "warnings",
    "svg",
)


def explorer_data(
    pr: ProofRun,
    *,
    title: str,
    subtitle: str = "",
    command: str = "",
    annotations: Sequence[Annotation] = (),
    added_from: int | None = None,
    run_label: str = "",
    run_caption: str = "",
    added_note: str = "the model's own completion",
) -> dict[str, object]:
    """The page's data (see the module docstring).  ``added_from``: the first step that
    is not part of the schedule judged but the run's own completion of it (the page
    marks those steps with ``added_note``).  ``run_label``/``run_caption``: the run's
    name when a page shows several (:func:`render_explorer`)."""
    cfg, run, states = pr.cfg, pr.run, pr.states
    nk = len(cfg.snaps)
    # recorded message labels per state: (k, c) -> labels, from the run's events
    rec_labels: list[dict[tuple[int, int], list[str]]] = [{}]
    by_step: dict[int, list[tuple[int, int, str]]] = {}
    for ev in run.events:
        if ev.kind == "record_message" and ev.channel is not None and ev.snapshot is not None:
            c = cfg.chan_index[ev.channel]
            lab = run.labels.get(ev.msg_id, "?") if ev.msg_id is not None else "?"
            by_step.setdefault(ev.step or 0, []).append((cfg.snap_index[ev.snapshot], c, lab))
    for n in range(1, len(states)):
        cur = {key: list(v) for key, v in rec_labels[-1].items()}
        for k, c, lab in by_step.get(n, []):
            cur.setdefault((k, c), []).append(lab)
        rec_labels.append(cur)

    def state_json(n: int, s: State) -> dict[str, object]:
        ids = run.ids[n] if n < len(run.ids) else ()
        bufs = []
        for c, b in enumerate(s.buf):
            row = []
            for j, v in enumerate(b):
                mid = ids[c][j] if c < len(ids) and j < len(ids[c]) else None
                row.append({"l": message_label(cfg, c, v), "r": -v if v < 0 else 0, "id": mid})
            bufs.append(row)
        rec = []
        for k in range(nk):
            recorded = rec_labels[n]
            rec.append(
                {
                    "m": [None if x is None else show_local(cfg, x) for x in s.rec_machine[k]],
                    "b": [
                        recorded.get((k, c), [message_label(cfg, c, v) for v in s.rec_buf[k][c]])
                        for c in range(len(cfg.chans))
                    ],
                }
            )
        return {
            "local": [show_local(cfg, x) for x in s.local],
            "red": [[bool(s.red[k] >> p & 1) for p in range(len(cfg.procs))] for k in range(nk)],
            "redBuf": [
                [bool(s.red_buf[k] >> c & 1) for c in range(len(cfg.chans))] for k in range(nk)
            ],
            "buf": bufs,
            "rec": rec,
            "started": [g is not None for g in s.s0],
            "complete": [g is not None for g in s.sf],
        }

    walks = []
    for w in pr.walks:
        k = cfg.snap_index[w.snap]
        item: dict[str, object] = {
            "snap": w.snap,
            "lemma": w.lemma,
            "available": w.walk is not None,
            "why": w.unavailable,
        }
        if w.walk is not None:
            end = states[w.walk.tf]
            target: GState = (
                (end.rec_machine[k], end.rec_buf[k])
                if w.lemma == 0
                else cast(GState, end.sf[k] if end.sf[k] is not None else app_state(end))
            )
            item.update(
                t0=w.walk.t0,
                tf=w.walk.tf,
                ok=w.walk.verdict.ok,
                verdictWhy=w.walk.verdict.why,
                verdictStep=w.walk.verdict.step,
                target=_gstate(cfg, target),
                moves=[_move_json(cfg, pr, w.lemma, k, m, target) for m in w.walk.moves],
            )
        walks.append(item)

    checked = set(cfg.invariants) | set(cfg.properties)
    props = [
        {
            "name": name,
            "words": INVARIANT_WORDS.get(name, ""),
            "checked": name in checked,
            "kind": "action property" if name == "ShadowLemma0" else "invariant",
            "holds": list(row),
        }
        for name, row in pr.holds.items()
    ]
    notes_at = [record_notes(cfg, run, n) for n in range(len(states))]
    diagram = layout(cfg.procs, run.events, records=record_notes(cfg, run))
    drawing = draw(diagram, reserve=[r.text for notes in notes_at for r in notes])
    return {
        "title": title,
        "subtitle": subtitle,
        "command": command,
        "model": cfg.name,
        "app": cfg.app.module,
        "machines": list(cfg.procs),
        "chans": [chan_name(c) for c in cfg.chans],
        "snaps": list(cfg.snaps),
        "snapStyles": [
            {"colour": snapshot_style(k).colour, "shape": snapshot_style(k).shape_name}
            for k in cfg.snaps
        ],
        "steps": [{"text": "the initial state", "raw": "Init", "actor": None}]
        + [
            {"text": step_text(cfg, a, p), "raw": _raw(a, p), "actor": _actor(a, p)}
            for a, p in pr.steps
        ],
        "states": [state_json(n, s) for n, s in enumerate(states)],
        "props": props,
        "breaks": [
            {
                "name": b.name,
                "step": b.step,
                "conjunct": b.conjunct,
                "why": b.why,
                "checked": b.checked,
                "words": INVARIANT_WORDS.get(b.name, ""),
            }
            for b in pr.breaks
        ],
        "walks": walks,
        "annotations": [
            {"step": a.step, "title": a.title, "text": a.text, "names": list(a.names)}
            for a in annotations
        ],
        "recNotes": [{f"{r.snapshot}:{r.machine}": r.text for r in notes} for notes in notes_at],
        "rules": {
            str(lemma): [[code, RULE_WORDS[lemma][code]] for code in RULE_CODES] for lemma in (0, 1)
        },
        "algorithm": [list(r) for r in ALGORITHM_RULES],
        "addedFrom": added_from,
        "addedNote": added_note,
        "runLabel": run_label,
        "runCaption": run_caption,
        "everyN": every_n_panel(pr),
        "warnings": list(drawing.warnings),
        "svg": drawing.svg,
    }


def every_n_panel(pr: ProofRun) -> dict[str, object]:
    """The every-N induction's conjuncts and obligations in each state of the run
    (computed by the model layer: :mod:`...induction.everyn.onrun`)."""
    from redletter.python_model.symbolic.induction.everyn import CONJUNCTS
    from redletter.python_model.symbolic.induction.everyn.explain import OBLIGATIONS
    from redletter.python_model.symbolic.induction.everyn.onrun import STEP_OBLIGATIONS, track

    t = track(pr.cfg, pr.run.states, pr.run.ids, pr.steps)
    if not t.available:
        return {"available": False, "why": t.why}
    first = t.first_broken()
    return {
        "available": True,
        "conjuncts": [
            {"name": n, "layer": c.layer, "says": c.says, "fails": [list(f[n]) for f in t.failures]}
            for n, c in CONJUNCTS.items()
        ],
        "obligations": [
            {"name": n, "says": OBLIGATIONS[n], "fails": [list(o[n]) for o in t.obligations]}
            for n in STEP_OBLIGATIONS
        ],
        "first": None if first is None else {"step": first[0], "name": first[1]},
    }


def _actor(action: str, params: Mapping[str, object]) -> str | None:
    c = params.get("c")
    if isinstance(c, list | tuple) and len(c) == 2:
        return str(c[0] if action == "SendApp" else c[1])
    p = params.get("p")
    return str(p) if p is not None else None


def _json_for_script(data: object) -> str:
    """JSON safe inside a ``<script>`` element (no ``</`` can close it)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("</", "<\\/").replace("<!--", "<\\!--")


def render_explorer(data: Mapping[str, object], *more: Mapping[str, object]) -> str:
    """The self-contained HTML page of the explorer: the run of ``data``, and of each
    of ``more`` beside it (same model, e.g. a failing node's own run and the model's):
    every run's diagram is shown, one above the other, and a switch picks the run the
    other panels follow."""
    runs = [data, *more]
    payload = {k: v for k, v in data.items() if k not in RUN_KEYS}
    payload["runs"] = [{k: r[k] for k in RUN_KEYS if k in r and k != "svg"} for r in runs]
    if len(runs) == 1:
        svg = str(data["svg"])
    else:
        svg = "\n".join(
            f'<figure class="rl-run" data-run="{i}"><figcaption>'
            f"{escape(str(r.get('runCaption') or r.get('runLabel') or ''))}</figcaption>"
            f"{r['svg']}</figure>"
            for i, r in enumerate(runs)
        )
    title = escape(str(data["title"]))
    return fill(
        asset("explorer.html"),
        title=title,
        css=asset("page.css") + "\n" + asset("explorer.css"),
        svg=svg,
        data=_json_for_script(payload),
        js=asset("explorer.js"),
    )


def fill(template: str, **parts: str) -> str:
    """``template`` with every ``{{name}}`` replaced by ``parts[name]``, in one pass
    (so that text put in never has its own braces read as a placeholder)."""
    return re.sub(r"\{\{(\w+)\}\}", lambda m: parts[m.group(1)], template)
