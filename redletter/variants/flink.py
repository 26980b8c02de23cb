"""The comparison page's "Apache Flink itself" section, written from
``docs/data/flink-results.json`` (what ``redletter flink run --publish`` measured on
the real engine, issue 13 part B).

Per mode: the runs, the restores, each key's verdict per run (exactly once,
duplicated, lost), the records counted twice or missing; then the findings, judged
here against what the TLA+ models say of each mode (aligned and unaligned
checkpoints: exactly once after a restore, ``MCBarrierAligned`` and
``MCBarrierUnaligned`` pass; alignment skipped: records counted twice after a
restore, never lost, ``MCBarrierAtLeastOnceFailure``).  A disagreement is written
as one: the page never hides it.

The file is read with the kit's careful JSON reader; a file of another shape stops
the page with ``RL-INPUT-FLINK`` naming the field.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from redletter.errors import InputError
from redletter.untrusted import loads

__all__ = ["FLINK_RESULTS", "FlinkMode", "FlinkRun", "flink_section", "load_flink_results"]

#: Where part B publishes its results (relative to the project root).
FLINK_RESULTS: Final = Path("docs/data/flink-results.json")

#: What each Flink mode is, in the model's terms: the models that say what it must
#: show, and whether it promises exactly once.
_MODEL_OF: Final[Mapping[str, tuple[str, bool]]] = {
    "aligned": ("`MCBarrierAligned` (passes: exactly once after restore)", True),
    "unaligned": ("`MCBarrierUnaligned` (passes: exactly once after restore)", True),
    "at-least-once": (
        "`MCBarrierAtLeastOnceFailure` (fails `ExactlyOnceAfterRestore`: records"
        " counted twice after a restore, none lost)",
        False,
    ),
}


@dataclass(frozen=True)
class FlinkRun:
    """One run of a mode: where it failed, what it restored, each key's verdict."""

    run: int
    fail_at: int
    restored_from: int | None
    outcome: str
    keys: tuple[tuple[str, str, int, int], ...]  #: (key, verdict, duplicated, lost)
    duplicated_records: int
    lost_records: int
    checkpoints_completed: int


@dataclass(frozen=True)
class FlinkMode:
    """One published row of the results file (a mode, possibly with other settings)."""

    label: str
    mode: str
    guarantee: str
    verdict: str
    command: str
    measured: str
    engine: str
    job: Mapping[str, Any]
    runs: tuple[FlinkRun, ...]
    restores: int
    keys_exactly_once: int
    keys_duplicated: int
    keys_lost: int
    duplicated_records: int
    lost_records: int
    first_run_with_duplicates: int | None
    checkpoints_completed: int
    checkpoint_ms_median: float
    checkpoint_ms_max: float
    checkpoint_bytes_median: float


def _bad(path: Path, what: str) -> InputError:
    return InputError(
        f"malformed Flink results ({what}); the file is what `.venv/bin/redletter flink run"
        " --publish` writes: publish the modes again with `make flink-results PUBLISH=1`",
        path=str(path),
        code="RL-INPUT-FLINK",
    )


def _run(r: Mapping[str, Any]) -> FlinkRun:
    keys = tuple(
        (str(k["key"]), str(k["verdict"]), int(k["duplicated"]), int(k["lost"]))
        for k in r["per_key"]
    )
    restored = r["restored_from_checkpoint"]
    return FlinkRun(
        run=int(r["run"]),
        fail_at=int(r["fail_at"]),
        restored_from=None if restored is None else int(restored),
        outcome=str(r["outcome"]),
        keys=keys,
        duplicated_records=int(r["duplicated_records"]),
        lost_records=int(r["lost_records"]),
        checkpoints_completed=int(r["checkpoints_completed"]),
    )


def _mode(label: str, d: Mapping[str, Any]) -> FlinkMode:
    first = d["first_run_with_duplicates"]
    engine = d["engine"]
    return FlinkMode(
        label=label,
        mode=str(d["mode"]),
        guarantee=str(d["guarantee"]),
        verdict=str(d["verdict"]),
        # Recorded before commands were printed in the venv's form: printed as they run.
        command=re.sub(r"^redletter ", ".venv/bin/redletter ", str(d["command"])),
        measured=str(d["measured"]),
        engine=f"{engine['name']}, PyFlink {engine['pyflink']}, Java {engine['java']}",
        job=dict(d["job"]),
        runs=tuple(_run(r) for r in d["per_run"]),
        restores=int(d["restores_from_checkpoint"]),
        keys_exactly_once=int(d["keys_exactly_once"]),
        keys_duplicated=int(d["keys_duplicated"]),
        keys_lost=int(d["keys_lost"]),
        duplicated_records=int(d["duplicated_records"]),
        lost_records=int(d["lost_records"]),
        first_run_with_duplicates=None if first is None else int(first),
        checkpoints_completed=int(d["checkpoints_completed"]),
        checkpoint_ms_median=float(d["checkpoint_ms_median"]),
        checkpoint_ms_max=float(d["checkpoint_ms_max"]),
        checkpoint_bytes_median=float(d["checkpoint_bytes_median"]),
    )


def load_flink_results(path: Path) -> tuple[FlinkMode, ...] | None:
    """The modes of the results file, in its order; ``None`` when there is no file
    (the page then says the experiment has not been run)."""
    if not path.is_file():
        return None
    data = loads(path.read_bytes(), path=str(path), code="RL-INPUT-FLINK")
    try:
        if data["schema"] != 1:
            raise _bad(path, f"schema {data['schema']!r}, the kit reads schema 1")
        return tuple(_mode(str(label), d) for label, d in data["modes"].items())
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise _bad(path, f"{type(e).__name__}: {e}") from None


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _table(head: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return out


def _ms(x: float) -> str:
    return f"{x:g} ms"


def _span(xs: Sequence[int]) -> str:
    if not xs:
        return "\u2014"
    lo, hi = min(xs), max(xs)
    return str(lo) if lo == hi else f"{lo}\u2013{hi}"


def _summary(modes: Sequence[FlinkMode]) -> list[str]:
    rows = []
    for m in modes:
        keys = m.keys_exactly_once + m.keys_duplicated + m.keys_lost
        twice = [r.duplicated_records for r in m.runs if r.duplicated_records]
        dup = (
            f"{m.duplicated_records} ({_span(twice)} a run, in {len(twice)} of {len(m.runs)} runs)"
            if twice
            else "0"
        )
        restored = [r.restored_from for r in m.runs if r.restored_from is not None]
        rows.append(
            (
                m.label,
                str(len(m.runs)),
                f"{m.restores} (checkpoints {_span(restored)})",
                f"{m.keys_exactly_once} of {keys}",
                str(m.keys_duplicated),
                str(m.keys_lost),
                dup,
                str(m.lost_records),
                str(m.first_run_with_duplicates or "\u2014"),
                str(m.checkpoints_completed),
                f"{_ms(m.checkpoint_ms_median)} ({_ms(m.checkpoint_ms_max)})",
                f"{m.checkpoint_bytes_median / 1000:.0f} KB",
                m.verdict,
            )
        )
    head = (
        "mode",
        "runs",
        "restored from a checkpoint",
        "keys exactly once",
        "keys duplicated",
        "keys lost",
        "records counted twice",
        "records lost",
        "first run with duplicates",
        "checkpoints completed",
        "checkpoint duration, median (max)",
        "checkpoint size, median",
        "verdict",
    )
    return _table(head, rows)


def _short(verdict: str, dup: int, lost: int) -> str:
    if verdict == "exactly once":
        return "once"
    parts = []
    if dup:
        parts.append(f"{dup} twice")
    if lost:
        parts.append(f"{lost} lost")
    return ", ".join(parts) or verdict


def _per_run(m: FlinkMode) -> list[str]:
    keys = sorted({k for r in m.runs for k, _, _, _ in r.keys})
    rows = []
    for r in m.runs:
        by_key = {k: _short(v, d, lo) for k, v, d, lo in r.keys}
        rows.append(
            (
                str(r.run),
                str(r.fail_at),
                "\u2014" if r.restored_from is None else str(r.restored_from),
                *(by_key.get(k, "\u2014") for k in keys),
                r.outcome,
            )
        )
    head = ("run", "failed on record", "restored checkpoint", *keys, "outcome")
    return _table(head, rows)


def _findings(modes: Sequence[FlinkMode]) -> list[str]:
    out: list[str] = []
    for m in modes:
        model, exactly_once = _MODEL_OF.get(m.mode, ("no model", True))
        restored = sum(1 for r in m.runs if r.restored_from is not None)
        if exactly_once:
            agrees = m.keys_duplicated == 0 and m.keys_lost == 0
            what = (
                f"every key exactly once in all {len(m.runs)} runs ({restored} restored"
                " from a checkpoint)"
                if agrees
                else f"{m.keys_duplicated} key(s) duplicated and {m.keys_lost} lost in"
                f" {len(m.runs)} runs"
            )
        else:
            dup_runs = sum(1 for r in m.runs if r.duplicated_records)
            agrees = m.lost_records == 0 and dup_runs > 0
            what = (
                f"records counted twice after the restore in {dup_runs} of {len(m.runs)}"
                f" runs ({m.duplicated_records} in all), {m.lost_records} lost"
            )
        verdict = "agrees with the model" if agrees else "**DISAGREES with the model** (a finding)"
        out.append(f"* **{m.label}**: {what}; {verdict}, {model}.")
    by_mode = {m.mode: m for m in modes if m.label == m.mode}
    a, u = by_mode.get("aligned"), by_mode.get("unaligned")
    if a is not None and u is not None and len(a.runs) == len(u.runs):
        out.append(
            f"* Unaligned checkpoints completed {u.checkpoints_completed} times against"
            f" {a.checkpoints_completed} aligned in {len(a.runs)} runs each (median"
            f" duration {_ms(u.checkpoint_ms_median)} against {_ms(a.checkpoint_ms_median)}),"
            f" and are larger (median {u.checkpoint_bytes_median / 1000:.0f} KB against"
            f" {a.checkpoint_bytes_median / 1000:.0f} KB): the records a barrier overtakes"
            " are stored with them, the channel state the model's unaligned checkpoints"
            " record."
        )
    return out


def flink_section(modes: Sequence[FlinkMode] | None) -> list[str]:
    """The section's body (between its markers)."""
    if modes is None:
        return [
            f"Not measured yet: `{FLINK_RESULTS}` is absent; `make flink` then"
            " `make flink-results PUBLISH=1` run the experiment and publish it.",
            "",
        ]
    if not modes:
        return [f"`{FLINK_RESULTS}` holds no mode yet.", ""]
    first = modes[0]
    job = first.job
    out = [
        "The seeds' claims tested on the real engine (`.venv/bin/redletter flink run`,"
        " `conformance/adapters/flink/`): a deterministic keyed count"
        f" ({job.get('records')} records over {job.get('keys')} keys, parallelism"
        f" {job.get('parallelism')}, an operator with several inputs after a shuffle,"
        f" checkpoints every {job.get('checkpoint_interval_ms')} ms) on a replayable"
        " source, with one failure injected at a seeded record, so that Flink restores"
        " its latest checkpoint and replays the sources from their recorded positions.",
        "The kit judges each key's final count against the records the source emitted:"
        " exactly once, duplicated (a record counted twice) or lost.",
        f"Engine: {first.engine}.  Measured on a 2-core machine shared with other jobs;"
        f" `{FLINK_RESULTS}` holds every run.",
        "",
        *_summary(modes),
        "",
        "### Findings",
        "",
        *_findings(modes),
        "",
    ]
    for m in modes:
        out += [
            f"### {m.label}",
            "",
            f"`{m.command}` (measured {m.measured}; {m.guarantee}).  Each key's verdict"
            " per run (*once*: counted exactly once; *N twice*: N of its records counted"
            " twice; *N lost*: N missing):",
            "",
            *_per_run(m),
            "",
        ]
    return out
