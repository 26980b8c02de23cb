"""The every-N results in words: a counterexample to induction on the finite network
z3 chose, as a student reads it (the network, the state before, the step, what
changed, what broke and what it says), and the lines of the summary.  Pure
functions returning lines; the command line prints them."""

from __future__ import annotations

from collections.abc import Sequence

import redletter.python_model.symbolic.induction.everyn.labels as lb
from redletter.python_model.symbolic.induction.case import VARIANTS
from redletter.python_model.symbolic.induction.everyn.concrete import (
    Item,
    Net,
    Prophecy,
    Reality,
)
from redletter.python_model.symbolic.induction.everyn.invariant import CONJUNCTS, LAYERS
from redletter.python_model.symbolic.induction.everyn.liveness import CLAIMS
from redletter.python_model.symbolic.induction.everyn.result import (
    LAYER_TITLES,
    EnCti,
    EveryNResult,
)
from redletter.python_model.symbolic.induction.explain import broken_lines, unsettled_lines
from redletter.python_model.symbolic.induction.result import Budget

__all__ = ["OBLIGATIONS", "budget_words", "cti_lines", "net_lines", "result_lines", "world_rows"]

OBLIGATIONS: dict[str, str] = {
    "AtMostOneRedLetter": "a buffer carries at most one red letter of each snapshot",
    "ShadowStartsInInitialState": "Lemma 0's shadow starts in the initial state (S0)",
    "WhiteActionPossible": "Lemma 0's shadow can take the action a white machine takes",
    "WhiteActionCopied": "Lemma 0's shadow, taking it, arrives where rules (i)-(iii) say",
    "SkipOtherwise": "the shadow does not move on any other step",
    "RedActionPossible": "Lemma 1's shadow can take the action a red machine takes",
    "RedActionCopied": "Lemma 1's shadow, taking it, arrives where its rules say",
    "Lemma0EndsInSnapshotState": "Lemma 0's shadow ends in the snapshot state",
    "Lemma1StartsInSnapshotState": "Lemma 1's shadow starts in the snapshot state",
    "Lemma1EndsInFinalState": "Lemma 1's shadow ends in the final state",
    "Lemma1SnapshotIsRecorded": "the snapshot recorded is the prophesied one",
    "SentInOrder": "messages are sent in their buffer's order",
    "ReceivedOnlyOnceSent": "a message is received only once sent",
}
"""What each obligation (other than the conjuncts) says."""


def _seq(xs: Sequence[object]) -> str:
    return "[" + ", ".join(str(x) for x in xs) + "]"


def _items(net: Net, b: Sequence[Item]) -> str:
    return _seq([f"m{x}" if kind == "m" else f"R{x + 1}" for kind, x in b])


def net_lines(net: Net) -> list[str]:
    """The finite network a counterexample lives on."""
    machines = ", ".join(net.name(p) for p in range(net.machines))
    links = ", ".join(net.chan_name(c) for c in net.links) or "none"
    msgs = ", ".join(
        f"m{m} on {net.chan_name(net.chan(m))} (value v{net.val(m)})" for m in range(len(net.msgs))
    )
    starters = (
        ", ".join(f"{net.name(p)} may start k{k + 1}" for k, p in sorted(net.starters))
        or "no starter"
    )
    snaps = ", ".join(f"k{k + 1}" for k in range(net.snapshots))
    return [
        f"  on the network z3 chose: machines {machines}; buffers {links}; snapshots {snaps}",
        f"    messages (in each buffer's send order): {msgs}",
        f"    starters: {starters}",
    ]


def world_rows(net: Net, r: Reality, pr: Prophecy | None, layer: str) -> list[tuple[str, str]]:
    """The state as (what, value) rows: reality; Lemma 0's shadows (layer reality);
    the prophecy and Lemma 1's shadow (layers prophecy and shadow1)."""
    rows: list[tuple[str, str]] = []
    for p in range(net.machines):
        colours = [
            f"red in k{k + 1} (recorded s{r.rm[k][p]})"
            for k in range(net.snapshots)
            if p in r.red[k]
        ]
        rows.append((f"machine {net.name(p)}", f"s{r.loc[p]}, " + ("; ".join(colours) or "white")))
    for i, c in enumerate(net.links):
        reds = [f"k{k + 1}" for k in range(net.snapshots) if c in r.rb[k]]
        colour = f" (red in {', '.join(reds)})" if reds else ""
        rows.append((f"buffer {net.chan_name(c)}", _items(net, r.bufs[i]) + colour))
    for k in range(net.snapshots):
        for i, c in enumerate(net.links):
            if r.rec[k][i] or c[1] in r.red[k]:
                rows.append(
                    (
                        f"recorded for k{k + 1}: {net.chan_name(c)}",
                        _seq([f"m{m}" for m in r.rec[k][i]]),
                    )
                )
    received = sorted(r.rcvd)
    unsent = [m for m in range(len(net.msgs)) if m not in r.sent]
    rows.append(("received so far", _seq([f"m{m}" for m in received])))
    rows.append(("not sent yet", _seq([f"m{m}" for m in unsent])))
    if layer == "reality":
        for k in range(net.snapshots):
            if not r.red[k]:
                continue
            g = lb.shadow0(net, r, k)
            for p in range(net.machines):
                rows.append((f"Lemma 0 shadow k{k + 1}: machine {net.name(p)}", f"s{g.local[p]}"))
            for c in net.links:
                rows.append(
                    (
                        f"Lemma 0 shadow k{k + 1}: buffer {net.chan_name(c)}",
                        _seq([f"m{m}" for m in g.buffer(net, c)]),
                    )
                )
        return rows
    assert pr is not None
    kappa = f"k{pr.kappa + 1}"
    rows.append((f"prophecy {kappa}: sent while white", _seq([f"m{m}" for m in sorted(pr.ws)])))
    rows.append(
        (f"prophecy {kappa}: received while white", _seq([f"m{m}" for m in sorted(pr.acc)]))
    )
    rows.append(
        (
            f"prophecy {kappa}: red letters received while white",
            _seq([net.chan_name(c) for c in sorted(pr.accl)]),
        )
    )
    rows.append(
        (
            f"prophecy {kappa}: states to record",
            ", ".join(f"{net.name(p)} s{s}" for p, s in enumerate(pr.sig)),
        )
    )
    if layer == "shadow1":
        g = lb.shadow1(net, r, pr)
        for p in range(net.machines):
            rows.append((f"Lemma 1 shadow {kappa}: machine {net.name(p)}", f"s{g.local[p]}"))
        for c in net.links:
            ms = [f"m{m}" for m in g.buffer(net, c)]
            if c in g.letters:
                white = [f"m{m}" for m in g.buffer(net, c) if m in pr.ws]
                ms = [*white, f"R{pr.kappa + 1}", *[x for x in ms if x not in white]]
            rows.append((f"Lemma 1 shadow {kappa}: buffer {net.chan_name(c)}", _seq(ms)))
    return rows


def _says(label: str) -> str:
    name = label.removeprefix("Initiation: ")
    if name in CONJUNCTS:
        return CONJUNCTS[name].says
    return OBLIGATIONS.get(name, CLAIMS.get(name, ""))


def cti_lines(cti: EnCti, variant: str, dropped: Sequence[str] = ()) -> list[str]:
    """A counterexample to induction, for a student."""
    net = cti.net
    out = [f"Counterexample to induction in layer {cti.layer}: {LAYER_TITLES[cti.layer]}"]
    if dropped:
        out.append(f"  the invariant without {', '.join(dropped)}")
    if variant != "correct":
        v = VARIANTS[variant]
        out.append(f"  variant {variant}: {v.bug}")
    out.append(f"  a finite counterexample: {cti.size()}")
    out += net_lines(net)
    if cti.prophecy is not None:
        out.append(
            f"  the snapshot whose Lemma 1 is checked: k{cti.prophecy.kappa + 1} (the prophecy is "
            "what the run will do; the state need not be reachable)"
        )
    if cti.head is not None:
        h = cti.head
        what = f"the red letter k{h.j + 1}" if h.letter else f"message m{h.m}"
        out.append(f"  the head the check follows: {what} of buffer {net.chan_name((h.a, h.b))}")
    if cti.snapshot is not None:
        out.append(f"  the snapshot the check is about: k{cti.snapshot + 1}")
    before = world_rows(net, cti.before, cti.prophecy, cti.layer)
    width = max((len(a) for a, _ in before), default=10)
    if cti.step is None:
        out.append(f"  the state ({cti.check}; it satisfies every conjunct the check assumes):")
        out += [f"    {a:<{width}}  {b}" for a, b in before]
    else:
        assert cti.after is not None
        out.append("  the state before (it satisfies the invariant; it need not be reachable):")
        out += [f"    {a:<{width}}  {b}" for a, b in before]
        who = net.name(cti.step.actor(net))
        out.append(f"  the step: {cti.step.text(net)}, taken by {who}")
        old = dict(before)
        changes = [
            (a, b)
            for a, b in world_rows(net, cti.after, cti.prophecy, cti.layer)
            if old.get(a) != b
        ]
        out.append("  the state after (what changed):")
        out += [f"    {a:<{width}}  {b}" for a, b in changes] or ["    nothing"]
    out += broken_lines(cti.broken, _says)
    out += _why_needed(cti, dropped)
    if cti.functions:
        out.append("  the application (uninterpreted functions, as z3 chose them):")
        out += [f"    {f}" for f in cti.functions]
    return out


def _why_needed(cti: EnCti, dropped: Sequence[str]) -> list[str]:
    """The instances of the dropped conjuncts that the counterexample's state breaks:
    the whole invariant rules that state out."""
    if not dropped:
        return []
    fails = lb.conjunct_failures(cti.net, cti.before, cti.prophecy)
    false = [(n, fails.get(n, [])) for n in dropped if fails.get(n)]
    where = "the state" if cti.step is None else "the state before"
    if not false:
        return [
            f"  why it is needed: {where} satisfies {', '.join(dropped)} too, so this "
            "counterexample is one of the layer's other assumptions"
        ]
    out = [f"  why it is needed: {where} breaks what the dropped conjunct says,"]
    for n, instances in false:
        out.append(f"    {n} ({', '.join(instances)}): {CONJUNCTS[n].says}")
    out.append(
        "  so the whole invariant rules that state out: with the conjunct, the check "
        "starts only from states where it holds"
    )
    return out


def _budget(result: EveryNResult) -> str:
    return budget_words(result.budget)


def budget_words(b: Budget) -> str:
    """The every-N budget in words."""
    return (
        f"{b.call_units / 1e6:g}M z3 resource units per solver call ({b.probe_units / 1e6:g}M "
        "for the first try over the sorts and for each small network), "
        f"{b.case_seconds:g} s of wall-clock time in all"
    )


def result_lines(result: EveryNResult) -> list[str]:
    """The summary: the invariant, each layer's verdict with its questions, time,
    quantifier instantiations and fragment, and what is open."""
    counts = ", ".join(
        f"{layer} {sum(1 for n in names if n not in result.dropped)}"
        for layer, names in LAYERS.items()
    )
    out = [
        "Induction for every N: any number of machines, any directed graph, any number of "
        "concurrent snapshots, any starters, any application (uninterpreted), variant "
        f"{result.variant}",
        f"Budget: {_budget(result)}",
        f"Invariant: {counts} conjuncts, each universally quantified over machines, "
        "snapshots and messages"
        + (f" (dropped: {', '.join(result.dropped)})" if result.dropped else ""),
    ]
    for layer in (*LAYERS, "liveness"):
        mine = [o for o in result.outcomes if o.layer == layer]
        if not mine:
            continue
        verdict = result.layer_verdict((layer,))
        asked = [o for o in mine if o.verdict != "not run"]
        count = (
            f"{len(mine)} questions"
            if len(asked) == len(mine)
            else f"{len(asked)} of {len(mine)} questions asked"
        )
        inst = sum(o.instantiations for o in asked)
        out.append(
            f"  {layer:<8} {verdict:<14} {count} ({sum(o.obligations for o in asked)} "
            f"obligations), {result.layer_seconds(layer):.1f} s, {inst} quantifier instantiations"
        )
    fragments = sorted({o.fragment for o in result.outcomes if o.fragment})
    for f in fragments:
        n = sum(1 for o in result.outcomes if o.fragment == f)
        out.append(f"  fragment of {n} question{'s' * (n != 1)}: {f}")
    return out + unsettled_lines(result.outcomes)
