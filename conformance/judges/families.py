"""Which drive judge speaks for a model: EWD 864's (:mod:`.drive`) for the
Chandy-Lamport models, and one per variant of the seeds for the others -- lazy red
letters (:mod:`.lazy`), the observer with a piggybacked token (:mod:`.observer`),
Flink's barrier snapshots (:mod:`.barrier`).

Every one has the same two functions: ``generate(model, spec_dir, walks=, seed=)``
(the model's traces) and ``judge_trace(trace, node, log_dir=)`` (a
:class:`~redletter.conformance.judges.drive.JudgeResult`), so the command room, the
run folder and the shrinker treat them alike.  A variant's judge is online: where
its spec leaves a choice to the node, the model follows the node, so a trace step
the node's choices left disabled is skipped and any subsequence of a trace is a
schedule (:func:`schedule_of`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final, Protocol, cast

from redletter.conformance.judges.drive import JudgeResult, NodeSpec
from redletter.conformance.traces import Step, Trace
from redletter.errors import InputError
from redletter.python_model.engines import family_of

__all__ = [
    "ALGORITHMS",
    "VARIANT_WALKS",
    "DriveJudge",
    "family_of_trace",
    "generate_traces",
    "judge_module",
    "judge_of",
    "schedule_of",
]

#: The judge module (under redletter.conformance.judges) of each engine family.
_MODULES: Final = {
    "ChandyLamport": "drive",
    "LazyChandyLamport": "lazy",
    "ObserverSnapshot": "observer",
    "BarrierSnapshot": "barrier",
}
#: The protocol's name (init.algorithm) of the algorithm of each engine family.
ALGORITHMS: Final = {
    "ChandyLamport": "chandy-lamport",
    "LazyChandyLamport": "lazy",
    "ObserverSnapshot": "observer",
    "BarrierSnapshot": "barrier",
}


class DriveJudge(Protocol):
    """What a judge module offers (the module itself satisfies it)."""

    def generate(
        self, model: str, spec_dir: Path, *, walks: int = ..., seed: int = ...
    ) -> list[Trace]: ...

    def judge_trace(
        self, trace: Trace, node: NodeSpec, *, log_dir: Path | None = ...
    ) -> JudgeResult: ...


class _ChandyLamport:
    """EWD 864's judge and its trace generator, under the common names."""

    @staticmethod
    def generate(model: str, spec_dir: Path, *, walks: int = 0, seed: int = 0) -> list[Trace]:
        from redletter.conformance.traces import generate

        return generate(model, spec_dir, walks=walks, seed=seed)

    @staticmethod
    def judge_trace(trace: Trace, node: NodeSpec, *, log_dir: Path | None = None) -> JudgeResult:
        from redletter.conformance.judges.drive import judge_trace

        return judge_trace(trace, node, log_dir=log_dir)


def judge_module(family: str) -> DriveJudge:
    """The judge of an engine family (see :data:`ALGORITHMS`)."""
    name = _MODULES.get(family)
    if name is None:
        raise InputError(
            f"no conformance judge for models of {family}; the judges: " + ", ".join(_MODULES),
            code="RL-INPUT-MODEL",
        )
    if name == "drive":
        return _ChandyLamport()
    return cast(DriveJudge, importlib.import_module(f"redletter.conformance.judges.{name}"))


def _family(model: str, spec_dir: Path, source: str | None = None) -> str:
    family = family_of(model, spec_dir, source=source)
    if family is None:
        raise InputError(
            f"model {model} is of no spec family a judge speaks for", code="RL-INPUT-MODEL"
        )
    return family


def family_of_trace(trace: Trace) -> str:
    """The engine family of the model a trace carries."""
    return _family(trace.model, Path("."), trace.model_tla)


#: Random walks of a variant's model when none are asked for (``--walks 0``, the
#: default of the commands): Chandy-Lamport's generator covers every edge of the
#: model's graph without walks, a variant's schedules are its walks.
VARIANT_WALKS: Final = 12


def generate_traces(model: str, spec_dir: Path, *, walks: int, seed: int) -> list[Trace]:
    """The traces of ``model`` from its family's generator (for a variant, at least
    :data:`VARIANT_WALKS` walks)."""
    family = _family(model, spec_dir)
    if family != "ChandyLamport" and walks <= 0:
        walks = VARIANT_WALKS
    return judge_module(family).generate(model, spec_dir, walks=walks, seed=seed)


def judge_of(trace: Trace, node: NodeSpec, log_dir: Path) -> Callable[[Trace], JudgeResult]:
    """The judge of ``trace``'s family, bound to ``node`` and ``log_dir``."""
    judge = judge_module(family_of_trace(trace))
    return lambda t: judge.judge_trace(t, node, log_dir=log_dir)


def schedule_of(trace: Trace) -> Callable[[Sequence[Step]], tuple[Step, ...]] | None:
    """How the shrinker makes a candidate a schedule: None (the Chandy-Lamport model's
    normalisation) for EWD 864's models, the steps as they are for a variant's."""
    return None if family_of_trace(trace) == "ChandyLamport" else tuple
