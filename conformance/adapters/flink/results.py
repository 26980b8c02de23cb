"""What a Flink campaign writes: ``store/<run>/results.json``, ``report.html``
and ``report.svg`` (the table and a picture of every run's keys), and its entry
in the comparison page's data file (``docs/data/flink-results.json``,
:func:`publish`).

The data file has one entry per mode, so the three modes can be measured by
three commands and each entry says which command produced it::

    {"schema": 1,
     "source": "redletter flink run (conformance/adapters/flink)",
     "modes": {"aligned": {...}, "unaligned": {...}, "at-least-once": {...}}}

Entries are keyed by a label, the mode's name unless ``--label`` gave another
(a second measurement of a mode under other settings); each entry repeats it
as ``label`` and names its ``mode``.

A mode's entry (:func:`mode_json`, also the whole of ``results.json``):

- ``mode``, ``guarantee`` (in words), ``verdict`` (pass / fail / unknown),
  ``exit_code`` (0 / 1 / 2), ``explanation`` (one sentence);
- ``command`` (the command line that measured it), ``measured`` (UTC,
  ISO 8601), ``engine`` (``name``, ``pyflink``, ``java``);
- ``job``: ``seed``, ``records``, ``keys``, ``parallelism``,
  ``checkpoint_interval_ms``, ``delay_ms_per_record`` (the counter's work),
  ``skew_ms_per_record_last_source`` (the slow input), ``restart_strategy``;
- the table's totals: ``runs_planned``, ``runs``, ``restores_from_checkpoint``,
  ``keys_exactly_once``, ``keys_duplicated``, ``keys_lost``, ``keys_corrupt``
  (keys summed over runs; a key both duplicated and lost counts in both),
  ``duplicated_records``, ``lost_records``, ``first_run_with_duplicates``
  (1-based, or null);
- what checkpointing cost: ``checkpoints_completed``, ``checkpoint_ms_median``,
  ``checkpoint_ms_max`` (Flink's checkpointDuration: trigger to last ack, where
  alignment shows), ``checkpoint_bytes_median`` (unaligned checkpoints also
  store the records in flight);
- ``per_run``: for each run ``run``, ``fail_at``, ``outcome``, ``explanation``,
  ``restarts``, ``restored_from_checkpoint`` (null when unknown or none),
  ``restored`` (from a completed checkpoint), ``replay_from`` (first id each
  source subtask emitted after the restore), ``checkpoints_completed``,
  ``checkpoints_declined``, ``checkpoint_ms``, ``checkpoint_bytes``, ``keys``
  (count per key verdict), ``duplicated_records``, ``lost_records``,
  ``per_key`` (``key``, ``verdict``, ``emitted``, ``counted``, ``duplicated``,
  ``lost``, ``unexpected``, and the first 50 ``duplicated_ids`` and
  ``lost_ids``), ``seconds``, ``error``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from html import escape
from pathlib import Path
from typing import Final

from redletter.conformance.adapters.flink.judge import ModeJudgement, RunJudgement
from redletter.conformance.adapters.flink.runner import Settings
from redletter.errors import InputError

__all__ = [
    "SCHEMA",
    "VERDICTS",
    "Meta",
    "mode_json",
    "publish",
    "read_meta",
    "render_svg",
    "write_results",
]

SCHEMA: Final = 1
#: The key verdicts, in the order tables show them.
VERDICTS: Final = ("exactly once", "duplicated", "lost", "duplicated and lost", "corrupt")
_COLOURS: Final = {
    "exactly once": "#4c9a2a",
    "duplicated": "#c0392b",
    "lost": "#e67e22",
    "duplicated and lost": "#8e44ad",
    "corrupt": "#000000",
}


@dataclass(frozen=True, slots=True)
class Meta:
    """Where and how the campaign ran."""

    command: str  #: the command line that produced the results
    seed: int
    settings: Settings
    pyflink: str
    java: str
    measured: str = ""  #: UTC time, ISO 8601 (filled in when empty)


def _run_json(r: RunJudgement) -> dict[str, object]:
    return {
        "run": r.run,
        "fail_at": r.fail_at,
        "outcome": str(r.outcome),
        "explanation": r.explanation,
        "restarts": r.restarts,
        "restored_from_checkpoint": r.restored_from,
        "restored": r.restored,
        "replay_from": list(r.replay_from),
        "checkpoints_completed": r.checkpoints,
        "checkpoints_declined": r.declined,
        "checkpoint_ms": list(r.checkpoint_ms),
        "checkpoint_bytes": list(r.checkpoint_bytes),
        "keys": {v: r.count(v) for v in VERDICTS},
        "duplicated_records": r.duplicated_records,
        "lost_records": r.lost_records,
        "per_key": [
            {
                "key": k.key,
                "verdict": k.verdict,
                "emitted": k.emitted,
                "counted": k.counted,
                "duplicated_ids": list(k.duplicated[:50]),
                "duplicated": len(k.duplicated),
                "lost_ids": list(k.lost[:50]),
                "lost": len(k.lost),
                "unexpected": len(k.unexpected),
            }
            for k in r.keys
        ],
        "seconds": r.seconds,
        "error": r.error,
    }


def mode_json(mj: ModeJudgement, meta: Meta) -> dict[str, object]:
    """A mode's results (the fields are listed in the module's docstring)."""
    s = meta.settings
    med_ms, med_b = mj.median_ms(), mj.median_bytes()
    return {
        "mode": mj.mode,
        "guarantee": mj.guarantee,
        "verdict": str(mj.verdict),
        "exit_code": int(mj.verdict.exit_code),
        "explanation": mj.explanation,
        "command": meta.command,
        "measured": meta.measured or datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "engine": {
            "name": "Apache Flink (PyFlink, local MiniCluster)",
            "pyflink": meta.pyflink,
            "java": meta.java,
        },
        "job": {
            "seed": meta.seed,
            "records": s.records,
            "keys": s.keys,
            "parallelism": s.parallelism,
            "checkpoint_interval_ms": s.checkpoint_ms,
            "delay_ms_per_record": s.delay_ms,
            "skew_ms_per_record_last_source": s.skew_ms,
            "restart_strategy": f"fixed delay, 1 attempt, {s.restart_delay_ms} ms",
        },
        "runs_planned": mj.planned,
        "runs": len(mj.runs),
        "restores_from_checkpoint": mj.restores,
        "keys_exactly_once": mj.keys("exactly once"),
        "keys_duplicated": mj.keys("duplicated") + mj.keys("duplicated and lost"),
        "keys_lost": mj.keys("lost") + mj.keys("duplicated and lost"),
        "keys_corrupt": mj.keys("corrupt"),
        "duplicated_records": sum(r.duplicated_records for r in mj.runs),
        "lost_records": sum(r.lost_records for r in mj.runs),
        "first_run_with_duplicates": mj.first_duplicates,
        "checkpoints_completed": len(mj.checkpoint_ms),
        "checkpoint_ms_median": med_ms,
        "checkpoint_ms_max": max(mj.checkpoint_ms, default=None),
        "checkpoint_bytes_median": med_b,
        "per_run": [_run_json(r) for r in mj.runs],
    }


def render_svg(mj: ModeJudgement) -> str:
    """One row per run: its keys as coloured cells (green exactly once, red
    duplicated, orange lost), the checkpoint it restored from, and the records
    counted twice or missed."""
    cell, gap, left, top = 22, 3, 70, 46
    keys = max((len(r.keys) for r in mj.runs), default=0)
    title = f"{mj.mode}: each run's keys after the restore ({mj.guarantee})"
    width = max(left + keys * (cell + gap) + 360, 8 * len(title))
    height = top + len(mj.runs) * (cell + 8) + 40
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}"'
        ' font-family="sans-serif" font-size="12">',
        f'<text x="4" y="16" font-weight="bold">{escape(title)}</text>',
    ]
    widest = max(mj.runs, key=lambda r: len(r.keys), default=None)
    for col, k in enumerate(widest.keys if widest is not None else ()):
        x = left + col * (cell + gap) + cell // 2
        out.append(f'<text x="{x}" y="{top - 6}" text-anchor="middle">{escape(k.key)}</text>')
    for row, r in enumerate(mj.runs):
        y = top + row * (cell + 8)
        out.append(f'<text x="4" y="{y + 15}">run {r.run}</text>')
        for col, k in enumerate(r.keys):
            x = left + col * (cell + gap)
            tip = f"{k.key}: {k.verdict}, {k.counted} counted of {k.emitted} emitted"
            out.append(
                f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}"'
                f' fill="{_COLOURS[k.verdict]}"><title>{escape(tip)}</title></rect>'
            )
        where = (
            f"ckpt {r.restored_from}"
            if r.restored_from is not None
            else "ckpt ?"
            if r.restored
            else str(r.outcome)
        )
        note = f"{where}; fail at {r.fail_at}"
        if r.duplicated_records:
            note += f"; {r.duplicated_records} counted twice"
        if r.lost_records:
            note += f"; {r.lost_records} missed"
        x = left + keys * (cell + gap) + 8
        out.append(f'<text x="{x}" y="{y + 15}">{escape(note)}</text>')
    y = top + len(mj.runs) * (cell + 8) + 16
    x = 4
    for verdict in VERDICTS[:3]:
        colour = _COLOURS[verdict]
        out.append(f'<rect x="{x}" y="{y - 11}" width="12" height="12" fill="{colour}"/>')
        out.append(f'<text x="{x + 16}" y="{y}">{verdict}</text>')
        x += 120
    out.append("</svg>")
    return "\n".join(out)


def _html(mj: ModeJudgement, data: Mapping[str, object], svg: str) -> str:
    rows = "".join(
        f"<tr><td>{r.run}</td><td>{r.fail_at}</td><td>{escape(str(r.outcome))}</td>"
        f"<td>{'' if r.restored_from is None else r.restored_from}</td>"
        f"<td>{r.checkpoints}</td><td>{r.count('exactly once')}</td>"
        f"<td>{r.count('duplicated') + r.count('duplicated and lost')}</td>"
        f"<td>{r.count('lost') + r.count('duplicated and lost')}</td>"
        f"<td>{r.duplicated_records}</td><td>{r.lost_records}</td>"
        f"<td>{escape(r.explanation)}</td></tr>"
        for r in mj.runs
    )
    return (
        "<!doctype html><meta charset='utf-8'>"
        f"<title>redletter flink run --mode {escape(mj.mode)}</title>"
        "<style>body{font-family:sans-serif;margin:2em}td,th{border:1px solid #ccc;"
        "padding:3px 6px;font-size:13px}table{border-collapse:collapse}</style>"
        f"<h1>Flink, {escape(mj.mode)} checkpoints: {escape(str(mj.verdict))}</h1>"
        f"<p>{escape(mj.explanation)}</p>"
        f"<p>Command: <code>{escape(str(data['command']))}</code></p>"
        f"{svg}"
        "<table><tr><th>run</th><th>fails at</th><th>outcome</th><th>restored from</th>"
        "<th>checkpoints</th><th>keys exactly once</th><th>duplicated</th><th>lost</th>"
        "<th>records counted twice</th><th>records missed</th><th>explanation</th></tr>"
        f"{rows}</table>"
    )


def write_results(folder: Path, mj: ModeJudgement, meta: Meta) -> dict[str, object]:
    """Write ``results.json``, ``report.svg`` and ``report.html`` into the
    campaign's folder; return the results."""
    data = mode_json(mj, meta)
    svg = render_svg(mj)
    (folder / "results.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    (folder / "report.svg").write_text(svg + "\n", encoding="utf-8")
    (folder / "report.html").write_text(_html(mj, data, svg) + "\n", encoding="utf-8")
    return data


def read_meta(path: Path) -> Meta:
    """The :class:`Meta` a campaign's ``results.json`` records (to publish a
    campaign judged again); bad input if it is not one the kit wrote."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        job, engine = data["job"], data["engine"]
        restart = str(job["restart_strategy"]).rsplit(", ", 1)[-1].removesuffix(" ms")
        settings = Settings(
            records=int(job["records"]),
            keys=int(job["keys"]),
            parallelism=int(job["parallelism"]),
            checkpoint_ms=int(job["checkpoint_interval_ms"]),
            delay_ms=float(job["delay_ms_per_record"]),
            skew_ms=float(job["skew_ms_per_record_last_source"]),
            restart_delay_ms=int(restart),
        )
        return Meta(
            command=str(data["command"]),
            seed=int(job["seed"]),
            settings=settings,
            pyflink=str(engine["pyflink"]),
            java=str(engine["java"]),
            measured=str(data["measured"]),
        )
    except OSError as exc:
        raise InputError(
            f"cannot read the campaign's results ({exc.strerror})",
            code="RL-INPUT-FLINK",
            path=str(path),
        ) from None
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(
            "not the results.json of `.venv/bin/redletter flink run`"
            f" ({type(exc).__name__}: {exc})",
            code="RL-INPUT-FLINK",
            path=str(path),
        ) from None


def publish(path: Path, data: Mapping[str, object], label: str | None = None) -> None:
    """Put a mode's results (:func:`mode_json`) into the comparison page's data
    file under ``label`` (default: the mode's name; another label keeps a second
    measurement of a mode, e.g. with inputs at one speed), keeping the other
    entries; bad input if the file is not one."""
    doc: dict[str, object] = {
        "schema": SCHEMA,
        "source": "redletter flink run (conformance/adapters/flink)",
        "modes": {},
    }
    if path.exists():
        try:
            old = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise InputError(
                f"not a Flink results file ({exc}); move it away or fix it",
                code="RL-INPUT-FLINK",
                path=str(path),
            ) from None
        if (
            not isinstance(old, dict)
            or old.get("schema") != SCHEMA
            or not isinstance(old.get("modes"), dict)
        ):
            raise InputError(
                f'not a Flink results file of schema {SCHEMA} (an object with "schema" and'
                ' "modes"); move it away or fix it',
                code="RL-INPUT-FLINK",
                path=str(path),
            )
        doc = old
    modes = dict(doc["modes"])  # type: ignore[call-overload]
    key = label or str(data["mode"])
    modes[key] = {**dict(data), "label": key}
    order = ("aligned", "unaligned", "at-least-once")
    ordered = [m for m in order if m in modes] + sorted(m for m in modes if m not in order)
    doc["modes"] = {m: modes[m] for m in ordered}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
