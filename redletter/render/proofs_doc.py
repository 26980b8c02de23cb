"""docs/proofs.md: EWD 864's two lemmas executed with the kit, generated.

:func:`build` computes the page and its pictures (``docs/proofs/*.svg``) from the
model's own code -- the worked example of seeds/001 replayed in MCSeed, its
red-letter traffic, its recording, both shadow networks move by move, and the
shortest counterexample of every model that must fail with what it breaks -- and
returns them as ``{relative path: text}``; nothing is copied by hand, so the page
cannot drift (``tests/test_proofs_doc.py`` fails when the files on disk differ).
Regenerate with ``make docs`` (``python -m redletter.render.proofs_doc``).

The section between the ``teeth-matrix`` markers is the teeth matrix of the manifest
(:func:`redletter.python_model.teeth.docs.teeth_matrix_section`: which must-fail model
violates which property), the matrix ``make check-teeth`` verifies cell by cell.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from redletter.manifest import load_manifest
from redletter.python_model.actions import init_states
from redletter.python_model.config import ModelConfig, load_model
from redletter.python_model.engines import family_of
from redletter.python_model.lemmas.shadow import ShadowMove, ShadowWalk
from redletter.python_model.state import GState
from redletter.render.diagram import draw
from redletter.render.explorer import step_text
from redletter.render.proof import (
    INVARIANT_WORDS,
    RULE_WORDS,
    ProofRun,
    buffer_rules,
    describe_move,
    machine_rules,
    move_why,
    prove_run,
)
from redletter.render.teach import (
    chan_name,
    counterexample,
    diagram_of_trace,
    message_label,
    seed_schedule,
    show_local,
)

__all__ = ["DOC", "PICTURES", "TEETH_BEGIN", "TEETH_END", "build", "main"]

DOC = "docs/proofs.md"
PICTURES = "docs/proofs"
RL = ".venv/bin/redletter"  #: how every command the page prints starts (works from a fresh clone)
TEETH_BEGIN = (
    "<!-- teeth-matrix:begin (the manifest's teeth matrix; make check-teeth verifies it) -->"
)
TEETH_END = "<!-- teeth-matrix:end -->"

Step = tuple[str, Mapping[str, object]]


def _md(text: str) -> str:
    """Text safe in a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def _gstate(cfg: ModelConfig, g: GState) -> str:
    machines = "; ".join(f"{p} {show_local(cfg, x)}" for p, x in zip(cfg.procs, g[0], strict=True))
    bufs = "; ".join(
        f"{chan_name(c)} [{', '.join(message_label(cfg, i, v) for v in b)}]"
        for i, (c, b) in enumerate(zip(cfg.chans, g[1], strict=True))
        if b
    )
    return machines + (f"; {bufs}" if bufs else "; buffers empty")


def _steps_table(cfg: ModelConfig, steps: Sequence[Step]) -> list[str]:
    out = ["| step | what happens | as the spec writes it |", "| ---: | --- | --- |"]
    for n, (a, p) in enumerate(steps, start=1):
        shown = ", ".join(
            f"{k}={'<<' + ', '.join(map(str, v)) + '>>' if isinstance(v, list | tuple) else v}"
            for k, v in p.items()
        )
        out.append(f"| {n} | {_md(step_text(cfg, a, p))} | `{a}({shown})` |")
    return out


def _traffic(pr: ProofRun) -> list[str]:
    """The red letters: who sent each, on which buffer, when it arrived, what it did."""
    cfg, run = pr.cfg, pr.run
    sent: dict[int, tuple[int, str, tuple[str, str], int]] = {}
    rows = []
    for ev in run.events:
        if ev.kind == "send" and ev.snapshot is not None and ev.msg_id is not None:
            assert ev.channel is not None and ev.step is not None
            sent[ev.msg_id] = (ev.step, ev.machine, ev.channel, ev.snapshot)
    for ev in run.events:
        if ev.kind == "receive" and ev.snapshot is not None and ev.msg_id in sent:
            assert ev.step is not None and ev.msg_id is not None
            s_step, src, ch, k = sent[ev.msg_id]
            before = pr.states[ev.step - 1]
            ki = cfg.snap_index[k]
            white = not before.red[ki] >> cfg.proc_index[ev.machine] & 1
            effect = (
                f"{ev.machine} was white: it turns red, records its state and sends red "
                "letters on each of its output buffers; the buffer is recorded empty"
                if white
                else f"{ev.machine} was red already: the buffer turns red and its recording closes"
            )
            rows.append(f"| {chan_name(ch)} | {s_step} ({src}) | {ev.step} | {_md(effect)} |")
    flying = [m for m in sent if m not in {e.msg_id for e in run.events if e.kind == "receive"}]
    out = [
        "| buffer | sent at step (by) | received at step | what the receipt does |",
        "| --- | ---: | ---: | --- |",
        *rows,
    ]
    if flying:
        out.append("")
        out.append(f"{len(flying)} red letters are still in flight when the run ends.")
    return out


def _recording(pr: ProofRun, k: int) -> list[str]:
    cfg = pr.cfg
    states = pr.states
    last = states[-1]
    out = ["| machine | turns red at step | records its state |", "| --- | ---: | --- |"]
    for p, m in enumerate(cfg.procs):
        at = next((n for n in range(1, len(states)) if states[n].red[k] >> p & 1), None)
        out.append(
            f"| {m} | {at if at is not None else 'never'} | "
            f"{_md(show_local(cfg, last.rec_machine[k][p]))} |"
        )
    out += [
        "",
        "| buffer | recorded from step | to step | recorded stream |",
        "| --- | ---: | ---: | --- |",
    ]
    for c, ch in enumerate(cfg.chans):
        dst = cfg.chan_dst[c]
        opened = next((n for n in range(1, len(states)) if states[n].red[k] >> dst & 1), None)
        closed = next((n for n in range(1, len(states)) if states[n].red_buf[k] >> c & 1), None)
        if opened is not None and closed == opened:
            window = ("—", "—")  # a white machine received the red letter: recorded empty
        else:
            window = (str(opened or "—"), str(closed or "—"))
        stream = ", ".join(message_label(cfg, c, v) for v in last.rec_buf[k][c])
        out.append(f"| {chan_name(ch)} | {window[0]} | {window[1]} | [{stream}] |")
    return out


def _walk_table(pr: ProofRun, walk: ShadowWalk) -> list[str]:
    out = [
        "| step | reality | correspondence | rules that now apply | shadow state after the step |",
        "| ---: | --- | --- | --- | --- |",
    ]
    for mv in walk.moves:
        out.append(_move_row(pr, walk, mv))
    return out


def _move_row(pr: ProofRun, walk: ShadowWalk, mv: ShadowMove) -> str:
    cfg, states = pr.cfg, pr.states
    k = walk.k
    at = min(max(mv.step, 0), len(states) - 1)
    after = states[at].red[k]
    if mv.kind == "start":
        reality = "(the initial state)"
        before = None
        fired = [
            f"{m} ({c})"
            for m, c in zip(cfg.procs, machine_rules(after, len(cfg.procs)), strict=True)
        ]
    else:
        a, p = pr.steps[mv.step - 1]
        reality = step_text(cfg, a, p)
        before = states[at - 1].red[k]
        m0, m1 = machine_rules(before, len(cfg.procs)), machine_rules(after, len(cfg.procs))
        b0, b1 = buffer_rules(cfg, before), buffer_rules(cfg, after)
        fired = [
            f"{cfg.procs[i]} ({y})" for i, (x, y) in enumerate(zip(m0, m1, strict=True)) if x != y
        ]
        fired += [
            f"{chan_name(cfg.chans[i])} ({x} → {y})"
            for i, (x, y) in enumerate(zip(b0, b1, strict=True))
            if x != y
        ]
    text = describe_move(
        cfg, walk.lemma, mv, before if before is not None else after,
        pr.steps[mv.step - 1][0] if mv.kind not in ("start", "end") else "",
    )  # fmt: skip
    if not mv.ok:
        text += f" — **breaks rule ({mv.rule})**: {move_why(cfg, pr.steps, mv)}"
    state = _gstate(cfg, mv.state) if mv.state[0] else "—"
    return (
        f"| {mv.step if mv.kind != 'start' else f'state {mv.step}'} | {_md(reality)} | "
        f"{_md(text)} | {_md(', '.join(fired) or '—')} | {_md(state)} |"
    )


def _rules_list(lemma: int) -> list[str]:
    words = RULE_WORDS[lemma]
    return [f"- ({r}) {words[r]}" for r in ("ii a", "ii b", "iii a", "iii b", "iii c", "iii d")]


def _seed(spec_dir: Path) -> tuple[list[str], dict[str, str]]:
    cfg = load_model("MCSeed", spec_dir)
    steps = list(seed_schedule())
    start = init_states(cfg)[0]
    pr = prove_run(cfg, start, steps)
    svg = draw(
        diagram_of_trace(cfg, start, steps, title="MCSeed: the worked example of seeds/001")
    ).svg
    pictures = {f"{PICTURES}/seed-example.svg": svg}
    k = 0
    w0 = next(w.walk for w in pr.walks if w.lemma == 0 and w.walk is not None)
    w1 = next(w.walk for w in pr.walks if w.lemma == 1 and w.walk is not None)
    end = pr.states[w0.tf]
    star = (end.rec_machine[k], end.rec_buf[k])
    sf, s0 = end.sf[k], end.s0[k]
    assert sf is not None and s0 is not None
    lines = [
        "## The worked example of seeds/001",
        "",
        "Three machines P1, P2, P3, connected both ways; events A…J; P1 starts the snapshot",
        "right after its event B (Gupta's CS425 example as retold in `seeds/001`).  The model",
        "is `spec/MCSeed.tla`; the run is `seed_schedule()` in `redletter/render/teach.py`.",
        "",
        "![The worked example: three machines, the red letters dashed, the cut through the "
        "three recorded events, and what the snapshot recorded beside each machine]"
        "(proofs/seed-example.svg)",
        "",
        "```sh",
        ".venv/bin/redletter diagram MCSeed --seed-example -o store/proofs/seed-example.svg",
        ".venv/bin/redletter explain MCSeed --seed-example -o store/proofs/seed.html"
        "   # step through it in a browser",
        "```",
        "",
        "### The run",
        "",
        *_steps_table(cfg, steps),
        "",
        "### The red-letter traffic",
        "",
        "EWD 864's first stage: a machine that receives its first red letter (or, for the",
        "starter, “a red letter from nowhere”) turns red and sends one red letter over each of",
        "its output buffers; a red machine that receives one sends no more.  When the last red",
        f"letter is received (step {w0.tf}) every buffer is red: that state is “the final state”.",
        "",
        *_traffic(pr),
        "",
        "### The recording",
        "",
        "The second stage: “upon turning red, each machine records its own state” (rule 1) and",
        "“each red machine records for each of its input buffers the stream of messages that it",
        "receives from that buffer as long as the latter is white” (rule 2).",
        "",
        *_recording(pr, k),
        "",
        f"The initial state (state {w0.t0}, just before P1 turned red): {_gstate(cfg, s0)}.",
        f"The snapshot state: {_gstate(cfg, star)}.",
        f"The final state (state {w0.tf}): {_gstate(cfg, sf)}.",
        "",
        "### Lemma 0: the shadow network of the white actions",
        "",
        "“If the initial state of the snapshot algorithm satisfies a stable predicate, the",
        "snapshot state satisfies it”, because the snapshot state is reachable from the initial",
        "state.  The shadow network starts in the initial state; “to an action performed in",
        "reality by a white machine corresponds in the shadow network exactly the same action,",
        "to one performed by a red machine corresponds in the shadow network a skip”; at every",
        "moment its state is the one his rules define:",
        "",
        *_rules_list(0),
        "",
        "Executed along the run (`shadow_walk` in `python_model/lemmas/shadow.py`, the same",
        "code `.venv/bin/redletter lemmas` runs); red letters are written R1:",
        "",
        *_walk_table(pr, w0),
        "",
        "It ends in the snapshot state: "
        + ("yes" if w0.verdict.ok else "no: " + w0.verdict.why)
        + ".  (Its buffers keep the red letters: Dijkstra's snapshot string of a buffer",
        "“ends with the red letter carried by that buffer”, except where a white machine",
        "received the red letter; with the red letters left out it is the snapshot state",
        "above.)",
        "",
        "### Lemma 1: the shadow network of the red actions",
        "",
        "“If the snapshot state satisfies a stable predicate, the final state of the snapshot",
        "algorithm satisfies it”, because the final state is reachable from the snapshot state.",
        "This shadow network starts in the snapshot state, copies the actions of red machines",
        "and skips those of white ones; two of its rules are defined from reality's *future*",
        "(“the messages that the target machine in reality shall accept while red”), which an",
        "offline check knows:",
        "",
        *_rules_list(1),
        "",
        *_walk_table(pr, w1),
        "",
        "It ends in the final state: "
        + ("yes" if w1.verdict.ok else "no: " + w1.verdict.why)
        + ".",
        "",
    ]
    return lines, pictures


def _counterexample(cfg: ModelConfig) -> list[Step]:
    steps, _ = counterexample(cfg)
    if steps is None:  # pragma: no cover - the manifest says the model must fail
        raise AssertionError(f"{cfg.name} has no counterexample")
    return steps


def _must_fail(spec_dir: Path) -> tuple[list[str], dict[str, str]]:
    manifest = load_manifest(spec_dir / "manifest.json")
    rows = [
        m
        for m in manifest.models
        if m.suite == "default"
        and m.expect != "success"
        and family_of(m.model, spec_dir) == "ChandyLamport"  # EWD 864's own proofs
    ]
    lines = [
        "## What each must-fail model breaks",
        "",
        "Each model below overrides one step of the algorithm with a classic bug.  For each:",
        "the shortest counterexample the Python explorer finds for the properties its cfg",
        "checks, every property that run breaks (first state, the spec's conjunct, and how),",
        "and where each shadow network parts from reality.  `ShadowLemma0` (Lemma 0 in",
        "Dijkstra's own form, an action property no must-fail cfg lists) names the very step",
        "that goes wrong, earlier than the invariants, which can only see a completed snapshot.",
        "",
    ]
    pictures: dict[str, str] = {}
    for row in rows:
        cfg = load_model(row.model, spec_dir)
        steps = _counterexample(cfg)
        start = init_states(cfg)[0]
        pr = prove_run(cfg, start, steps)
        title = f"{row.model}: " + (
            "the shortest counterexample"
            if row.expect != "liveness failure"
            else "a behaviour that never completes"
        )
        pictures[f"{PICTURES}/{row.model}.svg"] = draw(
            diagram_of_trace(cfg, start, steps, title=title)
        ).svg
        lines += [
            f"### {row.model}",
            "",
            f"Bug: {row.bug or '—'}.  Must fail with: `{row.violated or row.expect}`.",
            "",
            f"![{row.model}: the counterexample]({Path(PICTURES).name}/{row.model}.svg)",
            "",
            "```sh",
            f"{RL} diagram {row.model} --counterexample -o store/proofs/{row.model}.svg",
            f"{RL} explain {row.model} --counterexample -o store/proofs/{row.model}.html",
            "```",
            "",
            *_steps_table(cfg, steps),
            "",
        ]
        if pr.breaks:
            lines += [
                "| property | first broken at | conjunct | how |",
                "| --- | ---: | --- | --- |",
                *(
                    f"| `{b.name}`{'' if b.checked else ' (not in the cfg)'} | state {b.step} | "
                    f"{b.conjunct or '—'} | {_md(b.why)} |"
                    for b in pr.breaks
                ),
                "",
            ]
        else:
            lines += [
                "No state of this run breaks a safety property: it is a behaviour that never "
                "completes the snapshot (the steps above are the lasso's prefix and one turn of "
                "its cycle; after them nothing the fairness of the SPECIFICATION demands is "
                "left to happen).",
                "",
            ]
        for w in pr.walks:
            name = f"Lemma {w.lemma}'s shadow network (snapshot {w.snap})"
            if w.walk is None:
                lines.append(f"- {name}: does not run — {w.unavailable}.")
            elif w.walk.verdict.ok:
                lines.append(f"- {name}: keeps step from state {w.walk.t0} to state {w.walk.tf}.")
            else:
                last = w.walk.moves[-1]
                lines.append(
                    f"- {name}: breaks at step {w.walk.verdict.step}, rule ({last.rule}) — "
                    f"“{RULE_WORDS[w.lemma].get(last.rule, '')}”: "
                    f"{move_why(cfg, steps, last)}."
                )
        lines.append("")
    return lines, pictures


def _invariants_table() -> list[str]:
    return [
        "## What each property says",
        "",
        "| property | in EWD 864's words (or the spec's) |",
        "| --- | --- |",
        *(f"| `{name}` | {_md(words)} |" for name, words in INVARIANT_WORDS.items()),
        "",
        "`Lemma0` checks one witness, the white machines' own actions replayed from S0, which",
        "is stronger than EWD's “reachable”: it can fail where the snapshot state is still",
        "reachable another way (`.venv/bin/redletter lemmas` counts such pairs by searching the",
        "application's state graph).",
        "",
    ]


def _teeth(spec_dir: Path) -> list[str]:
    """The teeth matrix of the manifest (what ``make check-teeth`` verifies cell by
    cell; its last run and timings are on docs/teeth.md)."""
    from redletter.python_model.teeth.docs import teeth_matrix_section

    section = teeth_matrix_section(load_manifest(spec_dir / "manifest.json"))
    body = (
        section.split("\n", 1)[1]
        .strip("\n")
        .replace("(see the registry below)", "(the registry is on [the teeth page](teeth.md))")
    )
    return [
        "## The teeth matrix",
        "",
        TEETH_BEGIN,
        body,
        "",
        "The last run of `make check-teeth` (both engines, cell by cell, with timings) is",
        "recorded on [the teeth page](teeth.md).",
        TEETH_END,
        "",
    ]


def build(root: Path) -> dict[str, str]:
    """The page and its pictures, ``{path relative to root: text}``."""
    spec_dir = root / "spec"
    seed_lines, pictures = _seed(spec_dir)
    fail_lines, more = _must_fail(spec_dir)
    pictures.update(more)
    head = [
        "# The proofs of EWD 864, executed",
        "",
        "<!-- Generated by `make docs` (python -m redletter.render.proofs_doc) from the model's",
        "     own code; do not edit by hand: tests/test_proofs_doc.py fails when it is stale. -->",
        "",
        "Dijkstra's note EWD 864 (`../shared/seeds/000_…`) proves the snapshot algorithm of",
        "Chandy, Lamport and Misra with two lemmas, each by a *shadow network* that runs beside",
        "reality.  This page executes both, step by step, on the worked example of",
        "`seeds/001`, and shows what each model that must fail breaks.  Every table and picture",
        "is computed by the kit; `.venv/bin/redletter explain` shows the same in an interactive",
        "page (keyboard, slider, a permalink per step), and `.venv/bin/redletter lemmas MODEL`",
        "runs the same shadow networks on every reachable state of a model.",
        "",
        "Notation: machines and buffers are *white* or *red*; a red letter (the marker) of",
        "snapshot 1 is written R1; `P2→P1` is the buffer from P2 to P1; a step number *n* is",
        "the step from state *n - 1* to state *n*.",
        "",
    ]
    page = "\n".join([*head, *seed_lines, *fail_lines, *_invariants_table(), *_teeth(spec_dir)])
    return {DOC: page, **pictures}


def main(argv: Sequence[str] | None = None) -> int:
    """Write docs/proofs.md and its pictures under the project root (the current
    directory, or the one argument); remove pictures no longer generated."""
    args = list(sys.argv[1:] if argv is None else argv)
    root = Path(args[0]) if args else Path.cwd()
    files = build(root)
    pics = root / PICTURES
    pics.mkdir(parents=True, exist_ok=True)
    for old in pics.glob("*.svg"):
        if f"{PICTURES}/{old.name}" not in files:
            old.unlink()
    for rel, text in files.items():
        (root / rel).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
