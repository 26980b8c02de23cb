"""Shrinking a failing trace to a minimal schedule that still fails the same way.

Delta debugging (Zeller's ddmin) over the step list, where a candidate is first
made a schedule the model accepts: its steps are replayed in the model and every
step whose guard fails is dropped (:func:`normalise`).  A candidate "still fails"
when the judge's verdict is ``fail`` with the same kind of divergence (or the
same node error class).  Then single-step removals until none fails (a fixpoint:
the result is 1-minimal), and finally the run is cut at the divergence.
Deterministic: no randomness, candidates tried in a fixed order.  Bounded: at
most ``max_runs`` runs and ``budget`` seconds (a node that fails slowly, a
memory hog say, must not cost hours); when a bound stops it, the smallest
failing schedule found so far is the result and :attr:`ShrinkResult.complete`
is false.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import redletter.stopping as stopping
from redletter.conformance.judges.drive import JudgeResult, NodeSpec, judge_trace
from redletter.conformance.traces import Step, Trace, model_of, replay_states
from redletter.conformance.verdict import Verdict
from redletter.python_model.actions import ActionDisabled, step
from redletter.python_model.config import ModelConfig

__all__ = ["ShrinkResult", "failure_key", "normalise", "shrink"]


@dataclass(frozen=True)
class ShrinkResult:
    """The shrunk trace, the judge's result on it, and how many runs it took."""

    trace: Trace
    result: JudgeResult
    runs: int
    original_steps: int
    complete: bool = True  #: 1-minimal; False when a bound (runs, seconds) stopped it
    seconds: float = 0.0


def failure_key(r: JudgeResult) -> str | None:
    """What "fails the same way" compares: the divergence kind or the node error class."""
    if r.verdict != Verdict.FAIL:
        return None
    if r.divergence is not None:
        return r.divergence.kind
    return type(r.node_error).__name__ if r.node_error is not None else "fail"


def normalise(cfg: ModelConfig, steps: Sequence[Step]) -> tuple[Step, ...]:
    """The steps the model accepts, in order, each from the state the kept ones reach."""
    s = replay_states(cfg, ())[0]
    kept: list[Step] = []
    for st in steps:
        try:
            s = step(cfg, s, st[0], st[1])
        except ActionDisabled:
            continue
        kept.append(st)
    return tuple(kept)


def shrink(
    failing: JudgeResult,
    node: NodeSpec,
    *,
    judge: Callable[[Trace], JudgeResult] | None = None,
    max_runs: int = 2000,
    budget: float | None = None,
    on_run: Callable[[object], None] | None = None,
    schedule_of: Callable[[Sequence[Step]], tuple[Step, ...]] | None = None,
) -> ShrinkResult:
    """A minimal schedule failing like ``failing`` (see the module docstring),
    within ``max_runs`` runs and ``budget`` seconds.

    ``schedule_of`` makes a candidate a schedule; by default :func:`normalise` in the
    trace's Chandy-Lamport model.  A variant's judge skips the steps its model does
    not enable by itself (its node's choices decide what is enabled), so its
    candidates are the steps as they are (``schedule_of=tuple``) and ``judge`` is
    that variant's."""
    started = time.monotonic()
    trace = failing.trace
    if schedule_of is None:
        cfg = model_of(trace)
        schedule_of = lambda steps: normalise(cfg, steps)  # noqa: E731
        run = judge if judge is not None else (lambda t: judge_trace(t, node, cfg=cfg))
    elif judge is None:
        raise ValueError("shrinking with schedule_of needs the variant's judge")
    else:
        run = judge
    key = failure_key(failing)
    cache: dict[tuple[Step, ...], JudgeResult | None] = {}
    runs = 0
    stopped = False
    best_steps = schedule_of(failing.schedule)
    best = failing

    def fails(steps: tuple[Step, ...]) -> bool:
        nonlocal runs, best, best_steps, stopped
        cand = schedule_of(steps)
        if cand in cache:
            r = cache[cand]
        else:
            if runs >= max_runs or (budget is not None and time.monotonic() - started >= budget):
                stopped = True
                return False
            stopping.check()
            runs += 1
            r = run(trace.with_steps(cand))
            if on_run is not None:
                on_run(r)
            r = r if failure_key(r) == key else None
            cache[cand] = r
        if r is None:
            return False
        if len(cand) < len(best_steps) or (cand == best_steps and best is failing):
            best_steps, best = cand, r
        return True

    if not fails(best_steps):
        # The prefix alone does not fail the same way (e.g. the drain matters): shrink
        # the whole schedule instead.
        best_steps = schedule_of(trace.steps)
        fails(best_steps)

    # ddmin
    n = 2
    while len(best_steps) >= 2 and not stopped:
        steps = best_steps
        size = max(1, len(steps) // n)
        chunks = [steps[i : i + size] for i in range(0, len(steps), size)]
        reduced = False
        for i in range(len(chunks)):
            complement = tuple(x for j, c in enumerate(chunks) if j != i for x in c)
            if fails(complement):
                n = max(n - 1, 2)
                reduced = True
                break
        if not reduced:
            if n >= len(steps):
                break
            n = min(n * 2, len(steps))
    # one-step removals to a fixpoint
    changed = True
    while changed and not stopped:
        changed = False
        for i in range(len(best_steps)):
            cand = best_steps[:i] + best_steps[i + 1 :]
            if fails(cand):
                changed = True
                break
    final = best
    prefix = final.schedule
    shrunk = trace.with_steps(prefix, name=f"{trace.name}-shrunk")
    # Re-judge the cut run without a drain: it must fail at its last step by itself.
    last = run(shrunk)
    runs += 1
    if failure_key(last) == key:
        final = last
    return ShrinkResult(
        shrunk,
        final,
        runs,
        len(trace.steps),
        complete=not stopped,
        seconds=time.monotonic() - started,
    )
