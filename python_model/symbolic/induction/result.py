"""What an induction run returns: its budget, one outcome per solver question, the
counterexamples to induction, and a verdict per lemma."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, Literal, Protocol, TypeVar

import redletter.python_model.symbolic.induction.concrete as cc
from redletter.python_model.symbolic.induction.case import Case
from redletter.python_model.symbolic.induction.invariant import CONJUNCTS

__all__ = ["LAYER_TITLES", "Budget", "Cti", "InductionResult", "Layered", "Outcome", "Verdict"]

Verdict = Literal["proved", "counterexample", "open"]

LAYER_TITLES = {
    "reality": "reality (the red-letter traffic and the recording) and Lemma 0",
    "prophecy": "the prophecy, backwards from the snapshot's completion",
    "shadow1": "the shadow network of Lemma 1",
}


@dataclass(frozen=True)
class Budget:
    """How much z3 may spend, in its deterministic resource units (``rlimit``; about
    five million make a second of one core here), so that a verdict does not depend
    on the machine's load: ``call_units`` per solver call, ``probe_units`` for a
    question before it is split into cases; and ``case_seconds`` of wall-clock time
    in all, a safety net (a case that hits it is open, and says so)."""

    call_units: int = 50_000_000
    probe_units: int = 5_000_000
    case_seconds: float = 3600.0

    def describe(self) -> str:
        return (
            f"{self.call_units / 1e6:g}M z3 resource units per solver call "
            f"({self.probe_units / 1e6:g}M before a question is split into cases), "
            f"{self.case_seconds:g} s of wall-clock time per case"
        )


@dataclass(frozen=True)
class Cti:
    """A counterexample to induction, replayed concretely: a state satisfying the
    layer's invariant (it need not be reachable), a step, the state after (for a
    backward check: the state after satisfies the prophecy conjuncts and the one
    before does not), and the obligations the step breaks."""

    layer: str
    kind: str  #: "step", "backward" or "state"
    check: str  #: the disjunct's label, or the state obligation's name
    broken: tuple[str, ...]
    before: cc.World
    step: cc.Step | None
    after: cc.World | None
    functions: tuple[str, ...] = ()  #: the generic application's functions in the model


@dataclass(frozen=True)
class Outcome:
    """One solver question: the obligations of one disjunct (or state check) of one
    layer."""

    layer: str
    kind: str
    check: str
    verdict: Literal["proved", "counterexample", "unknown", "not run"]
    obligations: int
    seconds: float
    cti: Cti | None = None
    reason: str = ""


class _Answer(Protocol):
    @property
    def layer(self) -> str: ...
    @property
    def verdict(self) -> str: ...
    @property
    def reason(self) -> str: ...


Out = TypeVar("Out", bound=_Answer)


class Layered(Generic[Out]):
    """The verdicts of a result whose ``outcomes`` come by layer (the fixed-topology
    proof's and the every-N proof's)."""

    outcomes: tuple[Out, ...]

    def layer_verdict(self, layers: Sequence[str]) -> Verdict:
        mine = [o for o in self.outcomes if o.layer in layers]
        if any(o.verdict == "counterexample" for o in mine):
            return "counterexample"
        if any(o.verdict != "proved" for o in mine):
            return "open"
        # a layer that was not checked at all proves nothing
        return "proved" if {o.layer for o in mine} == set(layers) else "open"

    @property
    def lemma0(self) -> Verdict:
        """Lemma 0: the reality layer (no prophecy)."""
        return self.layer_verdict(("reality",))

    @property
    def lemma1(self) -> Verdict:
        """Lemma 1: all three layers."""
        return self.layer_verdict(("reality", "prophecy", "shadow1"))

    @property
    def open_checks(self) -> list[Out]:
        return [o for o in self.outcomes if o.verdict in ("unknown", "not run")]


@dataclass(frozen=True)
class InductionResult(Layered[Outcome]):
    case: Case
    dropped: tuple[str, ...]
    budget: Budget
    outcomes: tuple[Outcome, ...]
    seconds: float

    @property
    def conjuncts(self) -> tuple[str, ...]:
        return tuple(n for n in CONJUNCTS if n not in self.dropped)

    @property
    def verdict(self) -> Verdict:
        return self.lemma1

    @property
    def ctis(self) -> list[Cti]:
        return [o.cti for o in self.outcomes if o.cti is not None]

    @property
    def solver_seconds(self) -> float:
        return sum(o.seconds for o in self.outcomes)
