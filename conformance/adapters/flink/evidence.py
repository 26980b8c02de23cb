"""What one run of the Flink job left behind, read back: :func:`read_run`.

A run folder (written by :mod:`.runner`, or recorded and shipped as test data)
holds:

- ``config.json``: the :class:`~.workload.JobConfig` of the run;
- ``job.json``: how ``job.py`` ended (``finished`` or ``failed`` with the error);
- ``sink/**/part-*``: the part files Flink's ``FileSink`` committed, one JSON
  line per key with the final state the counter had for it (the ids it counted
  and the multiplicities above one); in-progress files (``.part-*``) of a failed
  attempt are never committed and are not read;
- ``events/<op>-<subtask>-<attempt>.ndjson``: the job's side notes (first
  record each source subtask emitted per attempt, the injected failure, the
  state each key had when the counter first saw it after a restore, each final
  state the counter emitted);
- ``log/*.log``: Flink's own log, from which the checkpoints Flink completed,
  the restarts, the checkpoint each restore started from, and the job's final
  status are read (only the lines :data:`LOG_PATTERNS` match, so a log cut down
  to those lines reads the same).

Everything is parsed with the standard library; nothing of PyFlink is imported.
A malformed file raises :class:`~redletter.errors.InputError` (``RL-INPUT-FLINK``)
with its path and line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from redletter.conformance.adapters.flink.workload import JobConfig
from redletter.errors import InputError
from redletter.untrusted import MAX_LOG_BYTES, MAX_SMALL_BYTES, read_input

__all__ = [
    "LOG_PATTERNS",
    "Checkpoint",
    "FinalState",
    "RunEvidence",
    "filter_log",
    "read_run",
    "slim_copy",
]

_CODE = "RL-INPUT-FLINK"

#: The lines of Flink's log the kit reads (Flink 2.3's wording).
LOG_PATTERNS: Final[Mapping[str, re.Pattern[str]]] = {
    "completed": re.compile(
        r"Completed checkpoint (\d+) for job [0-9a-f]+ \((\d+) bytes, checkpointDuration=(\d+) ms"
    ),
    "restored": re.compile(r"Restoring job [0-9a-f]+ from Checkpoint (\d+) @"),
    "no-checkpoint": re.compile(r"No checkpoint found during restore"),
    "job-state": re.compile(r"Job \S+ \([0-9a-f]+\) switched from state (\w+) to (\w+)"),
    "declined": re.compile(r"Failed to trigger or complete checkpoint (\d+)"),
}


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A checkpoint Flink completed: its id, size and duration (trigger to ack)."""

    id: int
    bytes: int
    ms: int


@dataclass(frozen=True, slots=True)
class FinalState:
    """A key's final state as the sink committed it: the multiset of ids counted."""

    key: str
    attempt: int
    subtask: int
    counts: Mapping[int, int]  #: record id -> how many times the state counted it

    @property
    def total(self) -> int:
        return sum(self.counts.values())


@dataclass(frozen=True, slots=True)
class RunEvidence:
    """Everything one run left behind, parsed."""

    config: JobConfig
    status: str  #: ``finished``, ``failed`` or ``missing`` (no job.json: killed)
    error: str | None  #: the job's error when it did not finish
    seconds: float | None
    checkpoints: tuple[Checkpoint, ...]  #: completed, in log order
    declined: int  #: checkpoints triggered but not completed
    restarts: int  #: RUNNING -> RESTARTING transitions of the job
    restored_from: tuple[int | None, ...]  #: per restart: the checkpoint id, or None (from nothing)
    job_states: tuple[str, ...]  #: the job's states in order (CREATED, RUNNING, ...)
    finals: tuple[FinalState, ...]  #: every committed final-state line
    failure: Mapping[str, object] | None  #: the injected failure event, when it fired
    replay_from: Mapping[int, tuple[int, ...]]  #: attempt -> first id of each source subtask
    restored_counts: Mapping[str, int] = field(default_factory=dict)  #: key -> count restored
    #: key -> the attempts in which the counter emitted its final state (the
    #: ``emitted`` side note; absent in runs recorded before the job wrote it)
    emitted_in: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    notes_emitted: bool = False  #: does the run write ``emitted`` side notes at all?

    def final_by_key(self) -> dict[str, FinalState]:
        """Each key's final state from the latest attempt that committed one."""
        out: dict[str, FinalState] = {}
        for f in self.finals:
            if f.key not in out or f.attempt >= out[f.key].attempt:
                out[f.key] = f
        return out


def _bad(message: str, path: Path, line: int | None = None) -> InputError:
    return InputError(message, code=_CODE, path=str(path), line=line)


def _read(path: Path, limit: int = MAX_LOG_BYTES, what: str = "the file") -> bytes:
    """A file of the run folder: a regular file of at most ``limit`` bytes (a FIFO
    or a device in the folder is refused before anything is read from it)."""
    return read_input(
        path,
        code=_CODE,
        limit=limit,
        what=what,
        unreadable=lambda exc: f"cannot read {what} ({exc})",
    )


def _json_lines(path: Path) -> Iterator[tuple[int, dict[str, object]]]:
    try:
        text = _read(path).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _bad(f"cannot read the file ({exc})", path) from None
    for n, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise _bad(f"not a JSON line ({exc.msg})", path, n) from None
        if not isinstance(value, dict):
            raise _bad("expected a JSON object", path, n)
        yield n, value


def _int(value: object, what: str, path: Path, line: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _bad(f"{what} must be an integer, got {value!r}", path, line)
    return value


def _final(value: dict[str, object], path: Path, line: int) -> FinalState:
    key = value.get("key")
    ids = value.get("ids")
    multi = value.get("multi", {})
    if not isinstance(key, str) or not isinstance(ids, list) or not isinstance(multi, dict):
        raise _bad(
            'a final-state line needs "key" (a string), "ids" (a list) and "multi" (an object)',
            path,
            line,
        )
    counts = {_int(i, "an id", path, line): 1 for i in ids}
    for k, v in multi.items():
        try:
            rid = int(k)
        except ValueError:
            raise _bad(f'"multi" has a key that is not an id: {k!r}', path, line) from None
        if rid not in counts:
            raise _bad(f'"multi" names id {rid}, which is not in "ids"', path, line)
        counts[rid] = _int(v, "a multiplicity", path, line)
    return FinalState(
        key=key,
        attempt=_int(value.get("attempt"), '"attempt"', path, line),
        subtask=_int(value.get("subtask"), '"subtask"', path, line),
        counts=counts,
    )


def _log_files(folder: Path) -> list[Path]:
    return sorted((folder / "log").glob("*.log")) if (folder / "log").is_dir() else []


def filter_log(text: str) -> str:
    """The lines of a Flink log that :func:`read_run` reads (a recorded run's
    log cut down to what matters)."""
    keep = [ln for ln in text.splitlines() if any(p.search(ln) for p in LOG_PATTERNS.values())]
    return "\n".join(keep) + ("\n" if keep else "")


def read_run(folder: Path) -> RunEvidence:
    """Parse the run folder ``folder`` (see the module's docstring)."""
    cfg_path = folder / "config.json"
    try:
        data = read_input(
            cfg_path,
            code=_CODE,
            limit=MAX_SMALL_BYTES,
            what="the run's config",
            unreadable=lambda exc: f"cannot read the run's config ({exc.strerror})",
        )
        config = JobConfig.from_json(data.decode("utf-8"))
    except (ValueError, TypeError) as exc:
        raise _bad(f"not a job config: {exc}", cfg_path) from None

    status, error, seconds = "missing", None, None
    job_path = folder / "job.json"
    if job_path.is_file():
        try:
            job = json.loads(_read(job_path, MAX_SMALL_BYTES).decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise _bad(f"not JSON ({exc})", job_path) from None
        if not isinstance(job, dict) or job.get("status") not in ("finished", "failed"):
            raise _bad('expected an object with "status": "finished" or "failed"', job_path)
        status = str(job["status"])
        error = job.get("error") if isinstance(job.get("error"), str) else None
        sec = job.get("seconds")
        seconds = float(sec) if isinstance(sec, int | float) else None

    checkpoints: list[Checkpoint] = []
    declined: set[int] = set()
    restarts = 0
    restored: list[int | None] = []
    states: list[str] = []
    for log in _log_files(folder):
        for line in _read(log).decode("utf-8", "replace").splitlines():
            if m := LOG_PATTERNS["completed"].search(line):
                checkpoints.append(Checkpoint(int(m[1]), int(m[2]), int(m[3])))
            elif m := LOG_PATTERNS["restored"].search(line):
                if restarts > len(restored):
                    restored.append(int(m[1]))
            elif LOG_PATTERNS["no-checkpoint"].search(line):
                # Also logged once when the job first starts: only a restart's counts.
                if restarts > len(restored):
                    restored.append(None)
            elif m := LOG_PATTERNS["job-state"].search(line):
                if not states:
                    states.append(m[1])
                states.append(m[2])
                if m[2] == "RESTARTING":
                    restarts += 1
            elif m := LOG_PATTERNS["declined"].search(line):
                declined.add(int(m[1]))
    done = {c.id for c in checkpoints}

    finals: list[FinalState] = []
    sink = folder / "sink"
    if sink.is_dir():
        for part in sorted(p for p in sink.rglob("part-*") if p.is_file()):
            finals.extend(_final(v, part, n) for n, v in _json_lines(part))

    failure: dict[str, object] | None = None
    replay: dict[int, dict[int, int]] = {}
    restored_counts: dict[str, int] = {}
    emitted_in: dict[str, list[int]] = {}
    events = folder / "events"
    if events.is_dir():
        for path in sorted(events.glob("*.ndjson")):
            for n, ev in _json_lines(path):
                kind = ev.get("event")
                if kind == "failure":
                    failure = ev
                elif kind == "first":
                    attempt = _int(ev.get("attempt"), '"attempt"', path, n)
                    sub = _int(ev.get("subtask"), '"subtask"', path, n)
                    replay.setdefault(attempt, {})[sub] = _int(ev.get("id"), '"id"', path, n)
                elif kind == "emitted":
                    key = ev.get("key")
                    if not isinstance(key, str):
                        raise _bad('an "emitted" note needs a "key" string', path, n)
                    attempt = _int(ev.get("attempt"), '"attempt"', path, n)
                    emitted_in.setdefault(key, []).append(attempt)
                elif kind == "restored":
                    key = ev.get("key")
                    if isinstance(key, str):
                        restored_counts[key] = _int(ev.get("count"), '"count"', path, n)
                else:
                    raise _bad(f"unknown event {kind!r}", path, n)

    return RunEvidence(
        config=config,
        status=status,
        error=error,
        seconds=seconds,
        checkpoints=tuple(checkpoints),
        declined=len(declined - done),
        restarts=restarts,
        restored_from=tuple(restored),
        job_states=tuple(states),
        finals=tuple(finals),
        failure=failure,
        replay_from={a: tuple(v for _, v in sorted(s.items())) for a, s in sorted(replay.items())},
        restored_counts=restored_counts,
        emitted_in={k: tuple(sorted(v)) for k, v in sorted(emitted_in.items())},
        notes_emitted=bool(emitted_in),
    )


def slim_copy(src: Path, dst: Path) -> Path:
    """Copy the run folder ``src`` to ``dst`` cut down to what :func:`read_run`
    reads (config, job.json, side notes, committed sink files, Flink's log
    filtered to :data:`LOG_PATTERNS`): a run to keep as a test case or attach to
    a report, a few kilobytes instead of the checkpoints and the whole log."""
    import shutil

    dst.mkdir(parents=True, exist_ok=False)
    for name in ("config.json", "job.json"):
        if (src / name).is_file():
            shutil.copy2(src / name, dst / name)
    if (src / "events").is_dir():
        shutil.copytree(src / "events", dst / "events")
    for part in sorted(p for p in (src / "sink").rglob("part-*") if p.is_file()):
        target = dst / part.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(part, target)
    for log in _log_files(src):
        (dst / "log").mkdir(exist_ok=True)
        text = log.read_text(encoding="utf-8", errors="replace")
        (dst / "log" / "flink.log").write_text(filter_log(text), encoding="utf-8")
    return dst
