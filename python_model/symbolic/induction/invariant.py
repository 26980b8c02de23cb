"""The inductive invariant, conjunct by conjunct, and the proof obligations.

Three layers, each a named set of conjuncts (every conjunct one formula per
snapshot and buffer or machine, so a counterexample names the instance it breaks):

* :data:`REALITY` -- facts about reality alone (EWD 864's two stages: the red-letter
  traffic and the recording).  Inductive by itself, with no prophecy; from it
  Lemma 0 follows through the spec's own shadow network (``ShadowLemma0``).
* :data:`PROPHECY` -- what the prophecy means (checked *backwards*: if it holds after a
  step it held before, and it holds trivially once the snapshot is complete, so it
  holds at every moment for the prophecy read from the run's future).
* :data:`SHADOW1` -- Dijkstra's rules (ii) and (iii) of Lemma 1 relating the shadow
  network (a ghost that copies the red machines' actions) to reality and the
  prophecy.  Inductive given the two layers above; from it Lemma 1 follows.

Each conjunct also gives the keys its instances read, so a step that changes none of
them cannot break the instance (it held before, and nothing it reads changed).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from redletter.python_model.symbolic.induction.case import Case
from redletter.python_model.symbolic.induction.state import (
    EMPTY,
    Key,
    SymState,
    Terms,
    concat,
)
from redletter.python_model.z3env import z3

__all__ = [
    "CONJUNCTS",
    "LAYERS",
    "PROPHECY",
    "REALITY",
    "SHADOW1",
    "Conjunct",
    "Instance",
    "instances",
]

Expr: TypeAlias = Any


@dataclass(frozen=True)
class Instance:
    """One instance of a conjunct: its label, its formula and the keys it reads."""

    conjunct: str
    label: str
    formula: Expr
    reads: frozenset[Key]


Builder = Callable[[Case, Terms], list[Instance]]


@dataclass(frozen=True)
class Conjunct:
    """A conjunct of the invariant: its name, its layer, what it says, its instances."""

    name: str
    layer: str
    says: str
    build: Builder


def _buf(case: Case, c: int) -> set[Key]:
    """The keys of buffer c (every snapshot's view of it)."""
    ns = case.snapshots
    out: set[Key] = {("app", c)}
    for k in range(ns):
        out |= {("has", k, c), ("pre", k, c), ("post", k, c)}
    return out


def _per_buffer(name: str, f: Callable[[Case, Terms, int, int], tuple[Expr, set[Key]]]) -> Builder:
    def build(case: Case, t: Terms) -> list[Instance]:
        out = []
        for k, kid in enumerate(case.snaps):
            for c in range(len(case.chans)):
                formula, reads = f(case, t, k, c)
                out.append(
                    Instance(name, f"{name}({kid}, {case.chan_name(c)})", formula, frozenset(reads))
                )
        return out

    return build


def _per_machine(name: str, f: Callable[[Case, Terms, int, int], tuple[Expr, set[Key]]]) -> Builder:
    def build(case: Case, t: Terms) -> list[Instance]:
        out = []
        for k, kid in enumerate(case.snaps):
            for p in range(len(case.procs)):
                formula, reads = f(case, t, k, p)
                out.append(
                    Instance(name, f"{name}({kid}, {case.procs[p]})", formula, frozenset(reads))
                )
        return out

    return build


# ------------------------------------------------------------------------- reality


def _only_from_red(case: Case, t: Terms, k: int, c: int) -> tuple[Expr, set[Key]]:
    src = case.src(c)
    return z3.Implies(t.has(k, c), t.red(k, src)), _buf(case, c) | {("red", k, src)}


def _white_buffer_holds_letter(case: Case, t: Terms, k: int, c: int) -> tuple[Expr, set[Key]]:
    src = case.src(c)
    f = z3.Implies(z3.And(t.red(k, src), z3.Not(t.s["rb", k, c])), t.has(k, c))
    return f, _buf(case, c) | {("red", k, src), ("rb", k, c)}


def _red_buffer_no_letter(case: Case, t: Terms, k: int, c: int) -> tuple[Expr, set[Key]]:
    return z3.Implies(t.s["rb", k, c], z3.Not(t.has(k, c))), _buf(case, c) | {("rb", k, c)}


def _red_buffer_red_ends(case: Case, t: Terms, k: int, c: int) -> tuple[Expr, set[Key]]:
    src, dst = case.src(c), case.dst(c)
    f = z3.Implies(t.s["rb", k, c], z3.And(t.red(k, src), t.red(k, dst)))
    return f, {("rb", k, c), ("red", k, src), ("red", k, dst)}


def _white_records_nothing(case: Case, t: Terms, k: int, c: int) -> tuple[Expr, set[Key]]:
    dst = case.dst(c)
    f = z3.Implies(z3.Not(t.red(k, dst)), t.s["rec", k, c] == EMPTY)
    return f, {("red", k, dst), ("rec", k, c)}


# ------------------------------------------------------------------------- prophecy


def _state_recorded(case: Case, t: Terms, k: int, p: int) -> tuple[Expr, set[Key]]:
    s = t.s
    f = z3.Implies(s["red", k, p], s["rm", k, p] == s["sig", k, p])
    return f, {("red", k, p), ("rm", k, p), ("sig", k, p)}


def _spent(case: Case, t: Terms, k: int, c: int) -> tuple[Expr, set[Key]]:
    s = t.s
    src, dst = case.src(c), case.dst(c)
    f = z3.And(
        z3.Implies(s["red", k, src], s["phi", k, c] == EMPTY),
        z3.Implies(s["red", k, dst], z3.And(s["acc", k, c] == EMPTY, z3.Not(s["accl", k, c]))),
    )
    return f, {("red", k, src), ("red", k, dst), ("phi", k, c), ("acc", k, c), ("accl", k, c)}


def _accepted_prefix(case: Case, t: Terms, k: int, c: int) -> tuple[Expr, set[Key]]:
    s = t.s
    src, dst = case.src(c), case.dst(c)
    acc, accl, rest = s["acc", k, c], s["accl", k, c], s["rst", k, c]
    stream = concat(t.app_all(c), s["phi", k, c])
    red_src = z3.If(accl, z3.And(acc == t.pre(k, c), t.has(k, c)), t.pre(k, c) == concat(acc, rest))
    white_src = z3.If(accl, acc == stream, stream == concat(acc, rest))
    f = z3.Implies(z3.Not(s["red", k, dst]), z3.If(s["red", k, src], red_src, white_src))
    reads = _buf(case, c) | {
        ("red", k, src),
        ("red", k, dst),
        ("phi", k, c),
        ("acc", k, c),
        ("accl", k, c),
        ("rst", k, c),
    }
    return f, reads


# ------------------------------------------------------------------------- Lemma 1's shadow


def _rule_ii(case: Case, t: Terms, k: int, p: int) -> tuple[Expr, set[Key]]:
    s = t.s
    f = s["gl", k, p] == z3.If(s["red", k, p], s["loc", p], s["sig", k, p])
    return f, {("gl", k, p), ("red", k, p), ("loc", p), ("sig", k, p)}


def _rule_iii(case: Case, t: Terms) -> list[Instance]:
    """Rule (iii) of Lemma 1, one instance per buffer and colour case (a)-(d)."""
    s = t.s
    out: list[Instance] = []
    for k, kid in enumerate(case.snaps):
        for c in range(len(case.chans)):
            src, dst = case.src(c), case.dst(c)
            gpre, ghas, gpost = s["gpre", k, c], s["ghas", k, c], s["gpost", k, c]
            acc, accl, phi = s["acc", k, c], s["accl", k, c], s["phi", k, c]
            before, has, after = t.pre(k, c), t.has(k, c), t.post(k, c)
            stream = concat(t.app_all(c), phi)
            rs, rd = s["red", k, src], s["red", k, dst]
            cases = {
                # (a) white to white: the snapshot string, by both prophecies
                "iii a": (
                    z3.And(z3.Not(rs), z3.Not(rd)),
                    z3.If(
                        accl,
                        z3.And(acc == stream, gpre == EMPTY, z3.Not(ghas), gpost == EMPTY),
                        z3.And(stream == concat(acc, gpre), ghas, gpost == EMPTY),
                    ),
                ),
                # (b) red to red: as in reality
                "iii b": (
                    z3.And(rs, rd),
                    z3.And(gpre == before, ghas == has, gpost == after),
                ),
                # (c) red to white: the postfix of reality its destination accepts while red
                "iii c": (
                    z3.And(rs, z3.Not(rd)),
                    z3.If(
                        accl,
                        z3.And(acc == before, has, gpre == after, z3.Not(ghas), gpost == EMPTY),
                        z3.And(before == concat(acc, gpre), ghas == has, gpost == after),
                    ),
                ),
                # (d) white to red: reality postfixed by what the source will still send,
                # up to and including its red letter
                "iii d": (
                    z3.And(z3.Not(rs), rd),
                    z3.And(gpre == stream, ghas, gpost == EMPTY),
                ),
            }
            reads = frozenset(
                _buf(case, c)
                | {
                    ("red", k, src),
                    ("red", k, dst),
                    ("gpre", k, c),
                    ("ghas", k, c),
                    ("gpost", k, c),
                    ("acc", k, c),
                    ("accl", k, c),
                    ("phi", k, c),
                }
            )
            for rule, (when, then) in cases.items():
                out.append(
                    Instance(
                        "ShadowRuleIII",
                        f"ShadowRuleIII({kid}, {case.chan_name(c)}, {rule})",
                        z3.Implies(when, then),
                        reads,
                    )
                )
    return out


CONJUNCTS: Mapping[str, Conjunct] = {
    c.name: c
    for c in (
        Conjunct(
            "RedLettersOnlyFromRed",
            "reality",
            "a buffer carries a red letter of k only if its source is red in k",
            _per_buffer("RedLettersOnlyFromRed", _only_from_red),
        ),
        Conjunct(
            "WhiteBufferOfRedSourceHoldsLetter",
            "reality",
            "a buffer still white in k whose source is red in k carries its red letter of k",
            _per_buffer("WhiteBufferOfRedSourceHoldsLetter", _white_buffer_holds_letter),
        ),
        Conjunct(
            "RedBufferHoldsNoLetter",
            "reality",
            "a buffer red in k carries no red letter of k (its one letter was received)",
            _per_buffer("RedBufferHoldsNoLetter", _red_buffer_no_letter),
        ),
        Conjunct(
            "RedBufferJoinsRedMachines",
            "reality",
            "a buffer is red in k only between two machines red in k",
            _per_buffer("RedBufferJoinsRedMachines", _red_buffer_red_ends),
        ),
        Conjunct(
            "WhiteMachineRecordsNothing",
            "reality",
            "a machine white in k has recorded nothing on its input buffers for k",
            _per_buffer("WhiteMachineRecordsNothing", _white_records_nothing),
        ),
        Conjunct(
            "ProphesiedStateRecorded",
            "prophecy",
            "a machine red in k recorded the state the prophecy named",
            _per_machine("ProphesiedStateRecorded", _state_recorded),
        ),
        Conjunct(
            "ProphecySpent",
            "prophecy",
            "a red source sends nothing more before its red letter; a red destination "
            "receives nothing more while white",
            _per_buffer("ProphecySpent", _spent),
        ),
        Conjunct(
            "AcceptedIsPrefix",
            "prophecy",
            "what a white destination will still receive while white, then what it will "
            "record, is the stream before the red letter (what it receives is all of it, "
            "with the red letter, if that letter turns it red)",
            _per_buffer("AcceptedIsPrefix", _accepted_prefix),
        ),
        Conjunct(
            "ShadowRuleII",
            "shadow1",
            "rule (ii) of Lemma 1: a shadow machine is in the state the snapshot records "
            "while white, and as in reality once red",
            _per_machine("ShadowRuleII", _rule_ii),
        ),
        Conjunct(
            "ShadowRuleIII",
            "shadow1",
            "rule (iii) of Lemma 1: a shadow buffer is (a) the snapshot string, (b) as in "
            "reality, (c) the postfix of reality its destination accepts while red, (d) "
            "reality postfixed by what its source will send up to its red letter",
            _rule_iii,
        ),
    )
}
"""Every conjunct of the invariant, by name."""

REALITY: tuple[str, ...] = tuple(n for n, c in CONJUNCTS.items() if c.layer == "reality")
PROPHECY: tuple[str, ...] = tuple(n for n, c in CONJUNCTS.items() if c.layer == "prophecy")
SHADOW1: tuple[str, ...] = tuple(n for n, c in CONJUNCTS.items() if c.layer == "shadow1")
LAYERS: Mapping[str, tuple[str, ...]] = {
    "reality": REALITY,
    "prophecy": PROPHECY,
    "shadow1": SHADOW1,
}


def instances(case: Case, s: SymState, names: Sequence[str]) -> list[Instance]:
    """Every instance of the named conjuncts in state ``s``."""
    t = Terms(case, s)
    out: list[Instance] = []
    for name in names:
        out += CONJUNCTS[name].build(case, t)
    return out
