"""The properties of ``spec/ChandyLamport.tla``: the columns of the teeth matrix.

Each is named as in the spec, with its kind (what TLC checks it as), the statement
of EWD 864 (``seeds/000_...``) it expresses, and what it checks in words.  A check
that no must-fail model violates proves nothing about the bugs it is meant to
catch; the matrix (:mod:`redletter.python_model.teeth.matrix`) shows, for every
model that must fail, every property it violates and every one it must not.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

__all__ = [
    "ALONE_PREMISES",
    "MUST_BE_VIOLATED_ALONE",
    "PROPERTIES",
    "PROPERTY_NAMES",
    "Property",
    "kind_of",
]


@dataclass(frozen=True)
class Property:
    """One property of the spec."""

    name: str
    kind: str  #: "invariant", "action" (an action property [][A]_vars) or "temporal"
    ewd: str  #: the statement of EWD 864 it expresses
    checks: str  #: what it checks, in words


PROPERTIES: Final[tuple[Property, ...]] = (
    Property(
        "TypeOK",
        "invariant",
        "(none: the types of the spec's variables)",
        "every variable has its type",
    ),
    Property(
        "RedLetterInvariant",
        "invariant",
        "\u201cThe above algorithm maintains the invariant that each buffer from a red "
        "machine to a white one contains precisely 1 red letter\u201d",
        "a buffer from a red machine to a white one holds exactly one red letter of the snapshot",
    ),
    Property(
        "OneRedLetterPerBuffer",
        "invariant",
        "\u201cSince each buffer is the output buffer of some machine that has turned "
        "red once, each buffer has accepted 1 red letter\u201d",
        "a buffer carries one red letter per snapshot from the moment its source turns "
        "red until the letter's receipt turns it red, and none before",
    ),
    Property(
        "Lemma0",
        "invariant",
        "Lemma 0's proof obligation: \u201cthe snapshot state is reachable from the "
        "initial state in reality\u201d",
        "the white machines' actions, replayed from S0, are each enabled and end in "
        "the snapshot state (one witness of reachability)",
    ),
    Property(
        "Lemma1",
        "invariant",
        "Lemma 1's proof obligation: \u201cthe final state in reality is reachable from "
        "the snapshot state\u201d",
        "the red machines' actions, replayed from the snapshot state, are each enabled "
        "and end in the final state (one witness)",
    ),
    Property(
        "Lemma0ImpliesLemma1",
        "invariant",
        "(this spec's theorem: with the application undisturbed, Lemma 0 in the form "
        "checked here implies Lemma 1)",
        "for every completed snapshot, Lemma0 for it implies Lemma1 for it",
    ),
    Property(
        "StableLemma0",
        "invariant",
        "Lemma 0: \u201cIf the initial state of the snapshot algorithm satisifies a stable "
        "predicate, the snapshot state satisfies it\u201d (so stability is detected)",
        "AppStable(S0) implies AppStable(snapshot state)",
    ),
    Property(
        "StableLemma1",
        "invariant",
        "Lemma 1: \u201cIf the snapshot state satisfies a stable predicate, the final "
        "state of the snapshot algorithm satisfies it\u201d (no erroneous detection)",
        "AppStable(snapshot state) implies AppStable(Sf)",
    ),
    Property(
        "StableDetection",
        "invariant",
        "the purpose: \u201cto collect information allowing the detection that a stable "
        "state has been reached\u201d, with \u201cno errorneous detection of stability\u201d",
        "a stable predicate seen in a completed snapshot holds in every later state",
    ),
    Property(
        "SnapshotSatisfiesAppInv",
        "invariant",
        "(a corollary of Lemma 0: the snapshot state is a reachable state)",
        "the snapshot state satisfies a property of every reachable application state "
        "(tokens conserved, messages counted, a consistent cut)",
    ),
    Property(
        "ShadowLemma0",
        "action",
        "the proof of Lemma 0: the shadow network by rules (i)-(iii), \u201cto an action "
        "performed in reality by a white machine corresponds in the shadow network "
        "exactly the same action, to one performed by a red machine ... a skip\u201d",
        "the shadow state, defined from reality, takes each white machine's action and "
        "stutters on every other step",
    ),
    Property(
        "NoInterference",
        "action",
        "Chandy and Lamport's assumption (seeds/003): \u201cThe snapshot algorithm does "
        "not interfere with the normal execution of the processes\u201d",
        "seen through the application's state, every step is no step or exactly one "
        "action the application alone could take, FIFO buffers included",
    ),
    Property(
        "SnapshotsComplete",
        "temporal",
        "\u201con account of the fairness of that white machine, the latter will receive "
        "the red letter and turn red itself ... when the last red letter is received, "
        "the only still white buffer becomes red\u201d",
        "every snapshot that starts completes (under weak fairness of receipt)",
    ),
)
"""The matrix's columns, in the order of the spec's definitions."""

PROPERTY_NAMES: Final[tuple[str, ...]] = tuple(p.name for p in PROPERTIES)

_KIND: Final[Mapping[str, str]] = {p.name: p.kind for p in PROPERTIES}

ALONE_PREMISES: Final[tuple[str, ...]] = ("Lemma0", "StableLemma0")
"""A property is violated *alone* by a model that violates it while these hold: the
snapshot is right, the error lies after the cut (or in the red-letter traffic)."""

MUST_BE_VIOLATED_ALONE: Final[tuple[str, ...]] = ("Lemma1", "StableLemma1", "StableDetection")
"""The properties some must-fail model has to violate alone (issue 14's bar)."""


def kind_of(name: str) -> str:
    """``invariant``, ``action`` or ``temporal`` (KeyError for an unknown name)."""
    return _KIND[name]
