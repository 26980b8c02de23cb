"""Judging the Flink experiment: each run's final state against the records the
source emitted (:func:`judge_run`), then a mode's runs against the mode's
guarantee (:func:`judge_mode`).

Per key, the final state is the multiset of record ids the counter counted
(its keyed state when the input ended, committed by the sink).  Against the
ids the source emitted for that key (:func:`~.workload.emitted`), a key is

- **exactly once**: every id counted once;
- **duplicated**: some id counted more than once (nothing missing);
- **lost**: some id not counted (nothing twice);
- **duplicated and lost**: both.

An id the source never emitted for the key is a corrupt state, reported as
lost-and-duplicated's worse cousin: it makes the key ``corrupt``.

A run is judged only when the job finished.  What it shows depends on how it
restarted: a restore from a completed checkpoint is what the guarantees speak
about; a restart from nothing (the failure came before the first checkpoint)
replays everything into empty state and tests nothing; no restart at all means
the injected failure did not fire.  Those runs are judged too, but they are
never the evidence a mode's verdict rests on.

Mode verdicts (:class:`~redletter.conformance.verdict.Verdict`):

- **aligned**, **unaligned** (exactly once): fail when any run has a duplicated
  or lost key; pass when at least one run restored from a checkpoint and every
  run's keys were exactly once; unknown when no run restored from a checkpoint.
- **at-least-once**: fail when any run lost a record; pass when a run that
  restored from a checkpoint duplicated records (what seed 002 says happens when
  alignment is skipped: "on a restore, these records will occur as
  duplicates"); unknown when the budget of runs ended without duplicates (which
  is a finding: the engine did not show what the model shows).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from redletter.conformance.adapters.flink.evidence import RunEvidence
from redletter.conformance.adapters.flink.workload import GUARANTEE, MODES, emitted, splits
from redletter.conformance.verdict import Verdict

__all__ = [
    "KeyResult",
    "ModeJudgement",
    "Outcome",
    "RunJudgement",
    "decisive",
    "judge_mode",
    "judge_run",
]


class Outcome(StrEnum):
    """What one run shows."""

    EXACT = "exactly once"  #: restored from a checkpoint; every key exactly once
    DUPLICATED = "duplicated"  #: some key counted a record twice
    LOST = "lost"  #: some key missed a record
    BOTH = "duplicated and lost"  #: both, in some keys
    CORRUPT = "corrupt"  #: a key counted an id the source never emitted for it
    FROM_NOTHING = "restarted from nothing"  #: restart before any checkpoint: tests nothing
    NOT_RESTORED = "no restore"  #: the injected failure did not fire: tests nothing
    ERROR = "job error"  #: the job did not finish (error, timeout, killed): not judged

    @property
    def duplicates(self) -> bool:
        return self in (Outcome.DUPLICATED, Outcome.BOTH, Outcome.CORRUPT)

    @property
    def losses(self) -> bool:
        return self in (Outcome.LOST, Outcome.BOTH, Outcome.CORRUPT)


@dataclass(frozen=True, slots=True)
class KeyResult:
    """One key's final state against what the source emitted for it."""

    key: str
    emitted: int  #: records the source emitted with this key
    counted: int  #: records the final state counted (with multiplicity)
    duplicated: tuple[int, ...]  #: ids counted more than once
    lost: tuple[int, ...]  #: ids emitted but not counted
    unexpected: tuple[int, ...]  #: ids counted that the source never emitted for the key
    missing_state: bool  #: the sink committed no final state for the key

    @property
    def verdict(self) -> str:
        """``exactly once``, ``duplicated``, ``lost``, ``duplicated and lost`` or ``corrupt``."""
        if self.unexpected:
            return "corrupt"
        if self.duplicated and self.lost:
            return "duplicated and lost"
        if self.duplicated:
            return "duplicated"
        if self.lost:
            return "lost"
        return "exactly once"

    @property
    def extra(self) -> int:
        """Counts beyond one per emitted id (the duplicates, with multiplicity)."""
        return self.counted - (self.emitted - len(self.lost))


@dataclass(frozen=True, slots=True)
class RunJudgement:
    """One run, judged."""

    run: int
    mode: str
    fail_at: int
    outcome: Outcome
    explanation: str  #: one sentence
    keys: tuple[KeyResult, ...]
    restored_from: int | None  #: the checkpoint the (first) restore started from, if known
    restored: bool  #: restarted from a completed checkpoint (``restored_from`` may be unknown)
    restarts: int
    checkpoints: int  #: completed during the run
    checkpoint_ms: tuple[int, ...]  #: durations of the completed checkpoints
    checkpoint_bytes: tuple[int, ...]
    declined: int
    replay_from: tuple[int, ...]  #: first id each source subtask emitted after the restore
    seconds: float | None
    error: str | None

    def count(self, verdict: str) -> int:
        """How many keys have this verdict."""
        return sum(k.verdict == verdict for k in self.keys)

    @property
    def duplicated_records(self) -> int:
        return sum(k.extra for k in self.keys)

    @property
    def lost_records(self) -> int:
        return sum(len(k.lost) for k in self.keys)

    @property
    def tested(self) -> bool:
        """Did this run restore from a completed checkpoint and finish?"""
        return self.restored and self.outcome is not Outcome.ERROR


def _key_results(ev: RunEvidence) -> tuple[KeyResult, ...]:
    finals = ev.final_by_key()
    out = []
    for key, ids in sorted(emitted(ev.config.records, ev.config.keys).items()):
        state = finals.get(key)
        counts = dict(state.counts) if state is not None else {}
        want = set(ids)
        out.append(
            KeyResult(
                key=key,
                emitted=len(ids),
                counted=sum(counts.values()),
                duplicated=tuple(sorted(i for i, c in counts.items() if c > 1 and i in want)),
                lost=tuple(i for i in ids if counts.get(i, 0) == 0),
                unexpected=tuple(sorted(i for i in counts if i not in want)),
                missing_state=state is None,
            )
        )
    for key in sorted(set(finals) - {k.key for k in out}):
        counts = dict(finals[key].counts)
        out.append(KeyResult(key, 0, sum(counts.values()), (), (), tuple(sorted(counts)), False))
    return tuple(out)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _untested(n: int) -> str:
    if n == 1:
        return "the run did not both restore from a checkpoint and finish"
    return f"none of the {n} runs both restored from a checkpoint and finished"


def _why_missing(ev: RunEvidence, keys: Sequence[KeyResult]) -> list[str]:
    """Why the sink has no final state for these keys, as far as the side notes tell."""
    if not keys:
        return []
    names = ", ".join(k.key for k in keys)
    if not ev.notes_emitted:
        return [f"the sink committed no final state for {names}"]
    last = max(ev.replay_from, default=0)
    never = [k.key for k in keys if last not in ev.emitted_in.get(k.key, ())]
    unsunk = [k.key for k in keys if k.key not in never]
    out = []
    if never:
        out.append(
            f"the counter never emitted a final state for {', '.join(never)} in the last"
            " attempt (its end-of-input timer did not fire)"
        )
    if unsunk:
        out.append(
            f"the counter emitted the final state of {', '.join(unsunk)} but the sink did"
            " not commit it"
        )
    return out


def _restart(ev: RunEvidence) -> tuple[bool, bool, int | None, str]:
    """``(restarted, restored from a checkpoint, its id, in words)``.

    Flink's log says which checkpoint a restore started from.  When the log is
    cut short (the JVM can truncate it as it shuts down), the job's side notes
    still show a restart (a source subtask's attempt 1) and what it restored:
    state the counter had before it, or sources that replay from other places
    than their splits' starts, mean a checkpoint; neither means nothing."""
    if ev.restored_from:
        first = ev.restored_from[0]
        if first is not None:
            return True, True, first, f"restored from checkpoint {first}"
        return True, False, None, "restarted from nothing (no checkpoint had completed)"
    if ev.restarts:
        return True, False, None, "restarted (Flink's log does not say from what)"
    later = [a for a in ev.replay_from if a > 0]
    if not later:
        return False, False, None, "never restarted"
    starts = tuple(first for first, _ in splits(ev.config.records, ev.config.parallelism))
    replay = ev.replay_from[min(later)]
    if any(ev.restored_counts.values()) or sorted(replay) != sorted(starts):
        return True, True, None, "restored from a checkpoint (Flink's log does not say which)"
    return True, False, None, "restarted from nothing (the sources replayed from their starts)"


def judge_run(ev: RunEvidence) -> RunJudgement:
    """Judge one run's final state against the records its source emitted."""
    cfg = ev.config
    restarted, restored_ok, restored, where = _restart(ev)
    replay = ev.replay_from.get(1, ())
    base = {
        "run": cfg.run,
        "mode": cfg.mode,
        "fail_at": cfg.fail_at,
        "restored_from": restored,
        "restored": restored_ok,
        "restarts": max(ev.restarts, 1 if restarted else 0),
        "checkpoints": len(ev.checkpoints),
        "checkpoint_ms": tuple(c.ms for c in ev.checkpoints),
        "checkpoint_bytes": tuple(c.bytes for c in ev.checkpoints),
        "declined": ev.declined,
        "replay_from": replay,
        "seconds": ev.seconds,
        "error": ev.error,
    }
    if ev.status != "finished":
        why = ev.error or "it was stopped before it wrote job.json (timeout or killed)"
        return RunJudgement(
            outcome=Outcome.ERROR,
            explanation=f"the job did not finish, so its state is not judged: {why}",
            keys=(),
            **base,  # type: ignore[arg-type]
        )
    keys = _key_results(ev)
    dup = [k for k in keys if k.duplicated]
    lost = [k for k in keys if k.lost]
    corrupt = [k for k in keys if k.unexpected]
    if corrupt:
        outcome = Outcome.CORRUPT
    elif dup and lost:
        outcome = Outcome.BOTH
    elif dup:
        outcome = Outcome.DUPLICATED
    elif lost:
        outcome = Outcome.LOST
    elif restored_ok:
        outcome = Outcome.EXACT
    elif restarted:
        outcome = Outcome.FROM_NOTHING
    else:
        outcome = Outcome.NOT_RESTORED
    parts = []
    if dup:
        n = sum(k.extra for k in dup)
        parts.append(
            f"{_plural(len(dup), 'key')} counted {_plural(n, 'record')} twice"
            f" ({', '.join(k.key for k in dup)}; e.g. record {dup[0].duplicated[0]})"
        )
    if lost:
        n = sum(len(k.lost) for k in lost)
        parts.append(
            f"{_plural(len(lost), 'key')} missed {_plural(n, 'record')}"
            f" ({', '.join(k.key for k in lost)}; e.g. record {lost[0].lost[0]})"
        )
        parts.extend(_why_missing(ev, [k for k in lost if k.missing_state]))
    if corrupt:
        parts.append(
            f"{_plural(len(corrupt), 'key')} counted ids the source never emitted for them"
            f" ({', '.join(k.key for k in corrupt)})"
        )
    if not parts:
        parts.append(f"all {_plural(len(keys), 'key')} counted every record exactly once")
    failed = "failed on record" if ev.failure is not None else "was to fail on record"
    explanation = f"the job {failed} {cfg.fail_at}, {where}; " + "; ".join(parts)
    if outcome is Outcome.NOT_RESTORED:
        explanation += " (the injected failure did not fire, so nothing was restored)"
    return RunJudgement(outcome=outcome, explanation=explanation, keys=keys, **base)  # type: ignore[arg-type]


def decisive(run: RunJudgement) -> bool:
    """Does this run settle its mode's verdict (so a campaign may stop)?
    Exactly once: a duplicated or lost key.  At least once: duplicates (what the
    seed predicts) or a loss."""
    if run.mode == "at-least-once":
        return run.outcome.losses or (run.outcome.duplicates and run.tested)
    return run.outcome.duplicates or run.outcome.losses


@dataclass(frozen=True, slots=True)
class ModeJudgement:
    """A mode's runs against the mode's guarantee."""

    mode: str
    guarantee: str
    verdict: Verdict
    explanation: str
    runs: tuple[RunJudgement, ...]
    planned: int  #: the run budget

    @property
    def restores(self) -> int:
        """Runs that restored from a completed checkpoint (the ones that test the claim)."""
        return sum(r.tested for r in self.runs)

    def keys(self, verdict: str) -> int:
        """Keys with this verdict, summed over the runs."""
        return sum(r.count(verdict) for r in self.runs)

    @property
    def first_duplicates(self) -> int | None:
        """The first run (1-based index) whose state held duplicates."""
        return next((r.run for r in self.runs if r.outcome.duplicates), None)

    @property
    def checkpoint_ms(self) -> tuple[int, ...]:
        return tuple(ms for r in self.runs for ms in r.checkpoint_ms)

    @property
    def checkpoint_bytes(self) -> tuple[int, ...]:
        return tuple(b for r in self.runs for b in r.checkpoint_bytes)

    def median_ms(self) -> float | None:
        ms = self.checkpoint_ms
        return statistics.median(ms) if ms else None

    def median_bytes(self) -> float | None:
        bs = self.checkpoint_bytes
        return statistics.median(bs) if bs else None


def judge_mode(mode: str, runs: Sequence[RunJudgement], planned: int) -> ModeJudgement:
    """The verdict of a mode over its runs (see the module's docstring)."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}")
    tested = [r for r in runs if r.tested]
    bad_dup = [r for r in runs if r.outcome.duplicates]
    bad_lost = [r for r in runs if r.outcome.losses]
    errors = sum(r.outcome is Outcome.ERROR for r in runs)
    tail = f" ({_plural(errors, 'run')} did not finish)" if errors else ""
    n = len(runs)
    if mode == "at-least-once":
        if bad_lost:
            verdict = Verdict.FAIL
            text = (
                f"run {bad_lost[0].run} lost records, which at-least-once must never do:"
                f" {bad_lost[0].explanation}"
            )
        elif any(r.tested for r in bad_dup):
            first = next(r for r in bad_dup if r.tested)
            verdict = Verdict.PASS
            text = (
                f"at least once holds: no record lost in {_plural(n, 'run')}; the duplicates"
                f" of run {first.run} are what this mode allows (the model shows them too when"
                f" alignment is skipped): {first.explanation}"
            )
        elif not tested:
            verdict = Verdict.UNKNOWN
            text = f"{_untested(n)}, so nothing was tested{tail}"
        else:
            verdict = Verdict.UNKNOWN
            text = (
                f"budget out: {_plural(len(tested), 'run')} restored from a checkpoint, none"
                f" duplicated a record (the model says alignment skipped can duplicate;"
                f" the engine did not show it in {_plural(n, 'run')}){tail}"
            )
    else:
        if bad_dup or bad_lost:
            first = (bad_dup + bad_lost)[0]
            verdict = Verdict.FAIL
            text = (
                f"{mode} checkpoints must give exactly once, but run {first.run}:"
                f" {first.explanation}"
            )
        elif tested:
            verdict = Verdict.PASS
            every = "the one run" if n == 1 else f"all {n} runs"
            text = (
                f"exactly once in {every}; {len(tested)} restored from a checkpoint and"
                f" replayed the source from its recorded position{tail}"
            )
        else:
            verdict = Verdict.UNKNOWN
            text = f"{_untested(n)}, so the guarantee was not tested{tail}"
    return ModeJudgement(
        mode=mode,
        guarantee=GUARANTEE[mode],
        verdict=verdict,
        explanation=text,
        runs=tuple(runs),
        planned=planned,
    )
