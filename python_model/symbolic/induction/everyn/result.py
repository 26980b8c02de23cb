"""What an every-N induction run returns: one outcome per question (with z3's
quantifier instantiations and the fragment the question sits in), the
counterexamples, replayed, and a verdict per lemma."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from redletter.python_model.symbolic.induction.everyn.concrete import (
    Net,
    Prophecy,
    Reality,
    Step,
)
from redletter.python_model.symbolic.induction.everyn.invariant import CONJUNCTS
from redletter.python_model.symbolic.induction.everyn.liveness import ConcreteHead
from redletter.python_model.symbolic.induction.result import Budget, Layered, Verdict

__all__ = ["LAYER_TITLES", "EnCti", "EnOutcome", "EveryNResult"]

LAYER_TITLES = {
    "reality": "reality (the red-letter traffic and the recording) and Lemma 0",
    "prophecy": "the prophecy of a snapshot, against reality",
    "shadow1": "the shadow network of Lemma 1",
    "liveness": "the premises of the ranking argument that every started snapshot completes",
}


@dataclass(frozen=True)
class EnCti:
    """A counterexample to induction on a finite network (any network z3 chose: its
    machines, buffers, snapshots and messages), replayed concretely: a state
    satisfying the layer's invariant (it need not be reachable), a step, the state
    after, and the obligations the step breaks."""

    layer: str
    kind: str  #: "step", "state", "initiation" or "completion"
    check: str  #: the action, or the state obligation
    broken: tuple[str, ...]
    net: Net
    before: Reality
    step: Step | None
    after: Reality | None
    prophecy: Prophecy | None
    functions: tuple[str, ...] = ()  #: the application's values z3 chose, as asked
    head: ConcreteHead | None = None  #: liveness: the head of a buffer the check follows
    snapshot: int | None = None  #: liveness: the snapshot a state check is about

    def size(self) -> str:
        n = self.net
        return (
            f"{n.machines} machine{'s' * (n.machines != 1)}, {len(n.links)} buffer"
            f"{'s' * (len(n.links) != 1)}, {n.snapshots} snapshot{'s' * (n.snapshots != 1)}, "
            f"{len(n.msgs)} message{'s' * (len(n.msgs) != 1)}"
        )


@dataclass(frozen=True)
class EnOutcome:
    """One question: the obligations of one action (or one state check) of one layer,
    for every network at once."""

    layer: str
    kind: str
    check: str
    verdict: Literal["proved", "counterexample", "unknown", "not run"]
    obligations: int
    seconds: float
    cti: EnCti | None = None
    reason: str = ""
    instantiations: int = 0  #: z3's quantifier instantiations for the answer
    fragment: str = ""  #: where the question sits (see :mod:`.fragment`)


@dataclass(frozen=True)
class EveryNResult(Layered[EnOutcome]):
    variant: str
    dropped: tuple[str, ...]
    budget: Budget
    outcomes: tuple[EnOutcome, ...]
    seconds: float

    @property
    def conjuncts(self) -> tuple[str, ...]:
        return tuple(n for n in CONJUNCTS if n not in self.dropped)

    @property
    def liveness(self) -> Verdict:
        """The premises of the liveness argument (``open`` when not checked)."""
        return self.layer_verdict(("liveness",))

    @property
    def verdict(self) -> Verdict:
        """Both lemmas, and the liveness premises when they were checked."""
        layers = ["reality", "prophecy", "shadow1"]
        if any(o.layer == "liveness" for o in self.outcomes):
            layers.append("liveness")
        return self.layer_verdict(layers)

    @property
    def ctis(self) -> list[EnCti]:
        return [o.cti for o in self.outcomes if o.cti is not None]

    def layer_seconds(self, layer: str) -> float:
        return sum(o.seconds for o in self.outcomes if o.layer == layer)
