"""The induction's results in words: a counterexample to induction as a student
reads it (the state before, the step, what changed, what broke and what the broken
conjunct says), and the lines of a case's summary.  Pure functions returning lines;
the command line prints them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import redletter.python_model.symbolic.induction.concrete as cc
from redletter.python_model.symbolic.concrete import Msg
from redletter.python_model.symbolic.induction.case import VARIANTS, Case
from redletter.python_model.symbolic.induction.invariant import CONJUNCTS, LAYERS
from redletter.python_model.symbolic.induction.result import (
    LAYER_TITLES,
    Cti,
    InductionResult,
)

__all__ = [
    "OBLIGATIONS",
    "broken_lines",
    "cti_lines",
    "result_lines",
    "unsettled_lines",
    "world_rows",
]

OBLIGATIONS: dict[str, str] = {
    "AtMostOneRedLetter": "a buffer carries at most one red letter of each snapshot",
    "ShadowStartsInInitialState": "Lemma 0's shadow starts in the initial state (S0)",
    "WhiteActionPossible": "Lemma 0's shadow can take the action a white machine takes",
    "WhiteActionCopied": "Lemma 0's shadow, taking it, arrives where rules (i)-(iii) say",
    "SkipOtherwise": "Lemma 0's shadow does not move on any other step",
    "RedActionPossible": "Lemma 1's shadow can take the action a red machine takes",
    "SnapshotPinned": "the stream a snapshot records for a buffer is fixed from the start",
    "ProphesiedState": "a machine turning red records the state the prophecy named",
    "SendsItsRedLetterNext": "a machine turning red has nothing left to send before its red letter",
    "ReceivesNothingMoreWhileWhite": (
        "a machine turning red has nothing left to receive while white"
    ),
    "CompleteMeansAllRed": "a complete snapshot has every machine red",
    "Lemma0EndsInSnapshotState": "Lemma 0's shadow ends in the snapshot state",
    "Lemma1StartsInSnapshotState": "Lemma 1's shadow starts in the snapshot state",
    "Lemma1EndsInFinalState": "Lemma 1's shadow ends in the final state",
}
"""What each obligation (other than the conjuncts) says."""


def _msgs(b: Sequence[Msg]) -> str:
    return "[" + ", ".join(f"R{m.snap}" if m.kind == "red" else str(m.val) for m in b) + "]"


def _seq(xs: Sequence[int]) -> str:
    return "[" + ", ".join(str(x) for x in xs) + "]"


def _gbuf(g: cc.GBuf) -> str:
    pre, has, post = g
    parts = [str(x) for x in pre] + (["R"] if has else []) + [str(x) for x in post]
    return "[" + ", ".join(parts) + "]"


def world_rows(case: Case, w: cc.World, layers: Sequence[str]) -> list[tuple[str, str]]:
    """The world as (what, value) rows: reality, and for the prophecy and shadow
    layers the prophecy and Lemma 1's shadow of every snapshot."""
    r = w.reality
    rows: list[tuple[str, str]] = []
    for p, name in enumerate(case.procs):
        colours = [
            f"red in {kid} (recorded {r.rec_machine[k][p]})"
            for k, kid in enumerate(case.snaps)
            if p in r.red[k]
        ]
        rows.append((f"machine {name}", f"{r.local[p]}, " + ("; ".join(colours) or "white")))
    for c in range(len(case.chans)):
        reds = [str(kid) for k, kid in enumerate(case.snaps) if c in r.red_buf[k]]
        colour = f" (red in {', '.join(reds)})" if reds else ""
        rows.append((f"buffer {case.chan_name(c)}", _msgs(r.buf[c]) + colour))
    for k, kid in enumerate(case.snaps):
        for c in range(len(case.chans)):
            if r.rec_buf[k][c] or case.dst(c) in r.red[k]:
                rows.append((f"recorded for {kid}: {case.chan_name(c)}", _seq(r.rec_buf[k][c])))
    if layers == ("reality",):
        for k, kid in enumerate(case.snaps):
            if not r.red[k]:
                continue
            local, bufs = cc.shadow0(case, r, k)
            for p, name in enumerate(case.procs):
                rows.append((f"Lemma 0 shadow {kid}: machine {name}", str(local[p])))
            for c in range(len(case.chans)):
                rows.append((f"Lemma 0 shadow {kid}: buffer {case.chan_name(c)}", _seq(bufs[c])))
        return rows
    for k, kid in enumerate(case.snaps):
        pr = w.prophecy[k]
        for p, name in enumerate(case.procs):
            if p not in r.red[k] or "shadow1" in layers:
                rows.append((f"prophecy {kid}: {name} will record", str(pr.sigma[p])))
        for c in range(len(case.chans)):
            cn = case.chan_name(c)
            if case.src(c) not in r.red[k]:
                rows.append((f"prophecy {kid}: {cn} still to send", _seq(pr.phi[c])))
            if case.dst(c) not in r.red[k]:
                accepted = _seq(pr.acc[c]) + (" + its red letter" if pr.accl[c] else "")
                rows.append((f"prophecy {kid}: {cn} still received white", accepted))
                if "prophecy" in layers and not pr.accl[c]:
                    rows.append((f"prophecy {kid}: {cn} still to record", _seq(pr.rest[c])))
        if "shadow1" not in layers:
            continue
        g = w.ghost[k]
        for p, name in enumerate(case.procs):
            rows.append((f"Lemma 1 shadow {kid}: machine {name}", str(g.local[p])))
        for c in range(len(case.chans)):
            rows.append((f"Lemma 1 shadow {kid}: buffer {case.chan_name(c)}", _gbuf(g.buf[c])))
    return rows


def _says(label: str) -> str:
    name = label.removeprefix("Initiation: ").split("(")[0]
    if name in CONJUNCTS:
        return CONJUNCTS[name].says
    return OBLIGATIONS.get(name, "")


def cti_lines(case: Case, cti: Cti, dropped: Sequence[str] = ()) -> list[str]:
    """A counterexample to induction, for a student: why the invariant (without the
    dropped conjuncts) is not inductive, or why the variant breaks it."""
    layers = {
        "reality": ("reality",),
        "prophecy": ("reality", "prophecy"),
        "shadow1": ("reality", "prophecy", "shadow1"),
    }[cti.layer]
    out = [f"Counterexample to induction in layer {cti.layer}: {LAYER_TITLES[cti.layer]}"]
    if dropped:
        out.append(f"  the invariant without {', '.join(dropped)}")
    if case.variant != "correct":
        v = VARIANTS[case.variant]
        out.append(f"  variant {case.variant}: {v.bug}; it breaks {v.breaks}")
    width = max((len(a) for a, _ in world_rows(case, cti.before, layers)), default=10)
    if cti.kind == "state":
        out.append(f"  the state (it satisfies every conjunct the check assumes): {cti.check}")
        out += [f"    {a:<{width}}  {b}" for a, b in world_rows(case, cti.before, layers)]
    else:
        assert cti.step is not None and cti.after is not None
        if cti.kind == "backward":
            out.append(
                "  backwards: the state after the step satisfies the prophecy conjuncts, "
                "the state before does not (the prophecy before the step is the one after "
                "it, with what the step consumed put back)"
            )
        out.append("  the state before (it satisfies the invariant; it need not be reachable):")
        before = world_rows(case, cti.before, layers)
        out += [f"    {a:<{width}}  {b}" for a, b in before]
        who = case.procs[cc.actor(case, cti.step)]
        out.append(f"  the step: {cti.step.text(case)}, taken by {who}")
        old = dict(before)
        changes = [(a, b) for a, b in world_rows(case, cti.after, layers) if old.get(a) != b]
        out.append("  the state after (what changed):")
        out += [f"    {a:<{width}}  {b}" for a, b in changes] or ["    nothing"]
    out += broken_lines(cti.broken, _says)
    out += _why_needed(case, cti, dropped)
    if cti.functions:
        out.append("  the application (uninterpreted functions, as z3 chose them):")
        out += [f"    {f}" for f in cti.functions]
    return out


def _why_needed(case: Case, cti: Cti, dropped: Sequence[str]) -> list[str]:
    """Why the dropped conjuncts are needed: the instances of them that the
    counterexample's assumed state breaks (the state before the step; for a backward
    check, the state after it).  The whole invariant excludes that state, so the
    counterexample is not one against it."""
    if not dropped:
        return []
    world = cti.after if cti.kind == "backward" and cti.after is not None else cti.before
    values = cc.conjuncts(case, world)
    false = [label for label, ok in values.items() if not ok and label.split("(")[0] in dropped]
    where = "after" if cti.kind == "backward" else "before"
    if cti.kind == "state":
        where = ""
    state = f"the state {where}".replace("the state  ", "the state ").rstrip()
    if not false:
        return [
            f"  why it is needed: {state} satisfies {', '.join(dropped)} too, so this "
            "counterexample is one of the layer's assumptions, not of the dropped conjunct"
        ]
    out = [f"  why it is needed: {state} breaks what the dropped conjunct says,"]
    out += [f"    {label}: {_says(label)}" for label in false]
    out.append(
        "  so the whole invariant rules that state out: with the conjunct, the check "
        "starts only from states where it holds"
    )
    return out


def result_lines(result: InductionResult) -> list[str]:
    """A case's summary: the invariant, each layer's verdict, each lemma's, and what
    is open (with z3's reason)."""
    case = result.case
    out = [
        f"Induction: {case.describe()}",
        f"Budget: {result.budget.describe()}",
        "Invariant: "
        + ", ".join(
            f"{layer} {sum(1 for n in names if n not in result.dropped)}"
            for layer, names in LAYERS.items()
        )
        + " conjuncts"
        + (f" (dropped: {', '.join(result.dropped)})" if result.dropped else ""),
    ]
    for layer in LAYERS:
        mine = [o for o in result.outcomes if o.layer == layer]
        if not mine:
            continue
        verdict = result.layer_verdict((layer,))
        secs = sum(o.seconds for o in mine)
        asked = [o for o in mine if o.verdict != "not run"]
        count = (
            f"{len(mine)} questions"
            if len(asked) == len(mine)
            else (f"{len(asked)} of {len(mine)} questions asked")
        )
        out.append(
            f"  {layer:<8} {verdict:<14} {count} "
            f"({sum(o.obligations for o in asked)} obligations), {secs:.1f} s"
        )
    return out + unsettled_lines(result.outcomes)


def broken_lines(broken: Sequence[str], says: Callable[[str], str]) -> list[str]:
    """What a counterexample breaks, each with what it says."""
    out = ["  broken:"]
    for label in broken:
        words = says(label)
        out.append(f"    {label}" + (f": {words}" if words else ""))
    return out


def unsettled_lines(outcomes: Sequence[Any]) -> list[str]:
    """The questions not asked (the run stopped at a counterexample) and the open ones,
    with z3's reason: the end of a summary (the every-N one's too)."""
    out: list[str] = []
    skipped = [o for o in outcomes if o.verdict == "not run" and not o.reason]
    if skipped:
        out.append(
            f"  stopped at the first counterexample: {len(skipped)} questions not asked "
            "(--keep-going asks them)"
        )
    for o in outcomes:
        if o.verdict not in ("unknown", "not run") or o in skipped:
            continue
        why = f": {o.reason}" if o.reason else ""
        out.append(f"  open: {o.layer} {o.kind} {o.check} ({o.verdict}{why})")
    return out
