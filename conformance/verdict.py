"""The one verdict and the one result every judge returns.

Three judges answer the same question (does this implementation behave as the
model says?) from three kinds of evidence:

- the drive judge (:mod:`redletter.conformance.judges.drive`) drives a node step by
  step along a trace;
- the log judges judge an event log the implementation wrote while running by
  itself: on its own run, without a model (:mod:`redletter.conformance.judges.runlog`),
  or replayed in a model (:mod:`redletter.conformance.judges.log`);
- the outcome judge (:mod:`redletter.conformance.judges.outcome`) searches for a
  schedule that explains the snapshots a black box produced.

Each answers with a :class:`Verdict` and a result that satisfies :class:`Result`:
the verdict, an explanation in words, the first :class:`Divergence` (drive and
log judges), and the schedule that backs the verdict where there is one (the
failing prefix of a driven run, which shrinking makes minimal; the outcome
judge's witness or closest schedule).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol, TypeAlias

from redletter.errors import Exit

__all__ = ["Divergence", "Result", "Schedule", "Verdict"]

Schedule: TypeAlias = Sequence[tuple[str, Mapping[str, object]]]
"""Steps in the spec's vocabulary: ``(action, params)`` (see docs/protocol.md)."""


class Verdict(StrEnum):
    """A judge's answer.  Its value is the word results.json and ``--json`` carry."""

    PASS = "pass"  #: the implementation behaved as the model says
    FAIL = "fail"  #: it did not: a divergence, or no schedule explains its outcome
    UNKNOWN = "unknown"  #: undecided: a timeout, a budget ran out, liveness not judgeable

    @property
    def exit_code(self) -> Exit:
        """The process exit code of this verdict: 0, 1 or 2."""
        return _EXIT[self]


_EXIT: Mapping[Verdict, Exit] = {
    Verdict.PASS: Exit.OK,
    Verdict.FAIL: Exit.FAIL,
    Verdict.UNKNOWN: Exit.UNKNOWN,
}


@dataclass(frozen=True)
class Divergence:
    """The first place where the implementation and the model part, in words.

    It is located at a step of a run: a driven run's step (``step``, 1-based; 0 for
    the final report), or an event of a log (``path`` and ``line``; ``step`` is then
    the event's 1-based position in the merged order of the logs).
    """

    kind: str  #: e.g. ``missing-record-message``, ``fifo``
    node: str  #: the node that departed from the model
    summary: str  #: what the implementation did, or what differs, in one sentence
    model_did: str  #: what the model does there
    node_did: str = ""  #: what the node did instead (driven runs)
    why: str = ""  #: which lemma or invariant that breaks, and how (driven runs)
    step: int = 0
    path: str | None = None  #: the log file (event logs)
    line: int = 0  #: the line in ``path`` (event logs)

    def describe(self) -> str:
        """The divergence in words: ``FILE:LINE: event: expected`` for an event log,
        one paragraph (what differs, the model, the node, why it matters) for a run."""
        if self.path is not None:
            return f"{self.path}:{self.line}: {self.summary}: {self.model_did}"
        where = f"at step {self.step}" if self.step else "in the final report"
        return (
            f"{where}, {self.summary}. The model: {self.model_did}. Node {self.node}: "
            f"{self.node_did}. Why it matters: {self.why}"
        )


class Result(Protocol):
    """What every judge returns (see the module docstring)."""

    @property
    def verdict(self) -> Verdict: ...

    @property
    def divergence(self) -> Divergence | None:
        """The first divergence (drive and log judges; ``None`` for a pass)."""

    @property
    def schedule(self) -> Schedule | None:
        """The schedule that backs the verdict, where there is one."""

    def explanation(self) -> str:
        """The verdict's reason in words (may be several lines)."""
