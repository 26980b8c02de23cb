"""The experiment's workload, shared by the kit and the Flink job: what one run is
(:class:`JobConfig`), which records the source emits and which key each has.

This module is imported twice: by the kit (``redletter.conformance.adapters.flink``)
to know what the source emitted, and by ``job.py`` inside the Flink virtual
environment, where the kit is not installed; so it imports the standard library
only, and the two sides cannot disagree about the records.

The source is Flink's ``NumberSequenceSource`` over ``1..records``: a replayable
source whose position (the next number of each split) is part of every
checkpoint, so a restore replays from the recorded position.  Record ``i`` has
key ``key_of(i, keys)``; every key receives records from every source subtask,
so the counting operator's subtasks each read several input channels (one per
source subtask) after the shuffle (``key_by``).
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Final

#: The three ways Flink can checkpoint, in the words of the seeds (002).
MODES: Final = ("aligned", "unaligned", "at-least-once")

#: What each mode guarantees for the state after a restore.
GUARANTEE: Final[Mapping[str, str]] = {
    "aligned": "exactly once",
    "unaligned": "exactly once",
    "at-least-once": "at least once: no loss, duplicates expected after a restore",
}

#: The failure point is drawn from this fraction of a source split, so that
#: checkpoints have usually completed before it and records remain after it.
FAIL_WINDOW: Final = (0.5, 0.9)


@dataclass(frozen=True, slots=True)
class JobConfig:
    """One run of the keyed-count job: written as ``config.json`` by the kit,
    read by ``job.py``."""

    mode: str  #: aligned, unaligned or at-least-once
    run: int  #: the run's index in its campaign (1-based)
    seed: int  #: the campaign's seed (the failure point derives from it and ``run``)
    records: int  #: the source emits 1..records
    keys: int  #: number of distinct keys
    parallelism: int  #: of every operator (source, counter, sink)
    checkpoint_ms: int  #: checkpoint interval
    fail_at: int  #: the counter fails (once, in attempt 0) on this record id
    delay_ms: float  #: work per record in the counter (keeps the job busy long enough)
    skew_ms: float  #: extra work per record in the last source subtask's tagging (slow input)
    restart_delay_ms: int  #: fixed-delay restart strategy, 1 attempt
    out: str  #: the run's folder (absolute): sink output, events, checkpoints, log

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=True)

    @staticmethod
    def from_json(text: str) -> JobConfig:
        data = json.loads(text)
        names = {f.name for f in fields(JobConfig)}
        if not isinstance(data, dict) or set(data) != names:
            raise ValueError(f"a job config has exactly the fields {sorted(names)}")
        return JobConfig(**data)


def key_of(record: int, keys: int) -> str:
    """The key of record ``record``: ``k0`` .. ``k<keys-1>``, round robin."""
    return f"k{record % keys}"


def emitted(records: int, keys: int) -> dict[str, list[int]]:
    """The records the source emits, by key (each id once, ascending)."""
    out: dict[str, list[int]] = {key_of(i, keys): [] for i in range(1, min(records, keys) + 1)}
    for i in range(1, records + 1):
        out[key_of(i, keys)].append(i)
    return out


def splits(records: int, parallelism: int) -> list[tuple[int, int]]:
    """The ranges ``(first, last)`` the source reads in parallel, as Flink's
    ``NumberSequenceSource`` splits ``1..records`` into ``parallelism`` splits
    (equal sizes, the first ``records % parallelism`` one longer)."""
    size, extra = divmod(records, parallelism)
    out, first = [], 1
    for i in range(parallelism):
        last = first + size + (1 if i < extra else 0) - 1
        out.append((first, last))
        first = last + 1
    return [s for s in out if s[0] <= s[1]]


def failure_point(seed: int, run: int, records: int, parallelism: int) -> int:
    """The record id on which run ``run`` of a campaign seeded ``seed`` fails:
    a seeded split of the source, and a seeded position in :data:`FAIL_WINDOW`
    of it.  The splits are read side by side, so a position late in a split is
    late in time, when several checkpoints have completed.  The same on every
    machine (``random.Random`` with an integer seed)."""
    rng = random.Random(seed * 1_000_003 + run)
    first, last = rng.choice(splits(records, parallelism))
    span = last - first
    lo = first + int(span * FAIL_WINDOW[0])
    hi = first + max(int(span * FAIL_WINDOW[1]), int(span * FAIL_WINDOW[0]))
    return rng.randint(lo, hi)
