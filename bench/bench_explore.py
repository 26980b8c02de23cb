"""TLC (2 workers) against the Python model on 1 and on 2 worker processes, on the same
model and the same properties, side by side in one run, for safety and for the full
check.

    .venv/bin/python bench/bench_explore.py [--model MCTokenComplete3 ...] [--mode both]

Like with like, stated in the output:

* ``safety``: both sides check every INVARIANT of the model's cfg and its action
  properties (``ShadowLemma0``), no temporal property: TLC runs on a copy of the cfg
  without them, the Python model explores;
* ``full``: both sides check the invariants, the action properties and the temporal
  properties (``SnapshotsComplete``) under the cfg's fairness (TLC's liveness
  checking; the Python model's fair-SCC check, :mod:`redletter.python_model.liveness`).
  A model whose cfg has no temporal property (``MCTokenComplete3Large``) gets
  ``SPECIFICATION FairSpec`` and ``PROPERTIES SnapshotsComplete`` in the copy both
  sides read; the output says so.

The runs go one after the other (not at once: the machine has two cores): TLC with
``--tlc-workers`` workers (2) as the kit runs it (``-lncheck final``: liveness checked
once, on the whole graph; ``--tlc-liveness periodic`` for TLC's default, which also
checks the partial graph every so often: 165.5 s against 144.0 s on
``MCTokenComplete3Large``'s full check), then the Python model with each of ``--workers`` (1
and 2; 1 is the single-process explorer, more is ``explore --workers N``), then,
for the ceiling, two single-process explorers of the same check at once
(``bench_pipeline.py``'s measurement of this machine's ceiling: how much of twice
one process's work two cores give two plain processes).  Each row gives the verdict,
distinct states, seconds (TLC's include JVM start-up, as a user sees it; the Python
model's its start-up), states per second, **peak resident memory of the whole
process tree** (sampled every 0.1 s from ``/proc``: the JVM; the explorer and its
worker processes) and per distinct state, and the speed-up over TLC; the Python
rows also the speed-up over one worker and how far it is from the ceiling, and each
worker's own peak memory and processor time.  ``--no-tlc`` leaves TLC out (for
``MCTokenComplete3Huge``, whose TLC run takes 11 minutes).

The Python model runs in each of ``--builds`` (default both, compiled first):
``compiled``, its hot modules compiled with mypyc (``make native``,
:mod:`redletter.python_model.native`; the bench stops when there is no build of
these sources), and ``pure``, the same sources as Python (``REDLETTER_PURE=1``).
The output says what each build's processes ran; the ceiling is measured per build.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bench_pipeline import _measure, _tree_rss_kb
from redletter.python_model.native import PURE_ENV
from redletter.python_model.parallel import SPAWN_FRONTIER
from redletter.tlc import run_tlc

ROOT = Path(__file__).resolve().parent.parent

#: The temporal properties of the spec (a "full" run checks them, "safety" drops them).
LIVENESS = frozenset({"SnapshotsComplete"})


def derived_spec(model: str, mode: str, into: Path) -> tuple[Path, list[str], list[str], str]:
    """A copy of spec/ whose ``model``.cfg checks what ``mode`` says.

    Returns the directory, the properties checked, what was changed (in words) and
    the SPECIFICATION."""
    import shutil

    shutil.copytree(ROOT / "spec", into, dirs_exist_ok=True)
    cfg = into / f"{model}.cfg"
    kept: list[str] = []
    changes: list[str] = []
    lines = []
    section = ""
    spec = ""
    for line in cfg.read_text(encoding="utf-8").splitlines():
        words = line.split()
        if words and words[0].isupper() and words[0].isalpha():
            section = words[0]
            names = words[1:]
        else:
            names = words if not line.lstrip().startswith("\\*") else []
        if section == "SPECIFICATION" and names:
            spec = names[0]
            if mode == "full" and spec == "Spec":
                line = "SPECIFICATION FairSpec"
                spec = "FairSpec"
                changes.append("SPECIFICATION Spec -> FairSpec")
        if section in ("INVARIANT", "INVARIANTS", "PROPERTY", "PROPERTIES"):
            gone = [n for n in names if n in LIVENESS] if mode == "safety" else []
            if gone:
                changes.append("dropped " + ", ".join(gone))
            kept += [n for n in names if n not in gone and n != section]
            line = " ".join(w for w in words if w not in gone) if gone else line
        lines.append(line)
    if mode == "full" and not LIVENESS & set(kept):
        lines += ["PROPERTIES", "    " + " ".join(sorted(LIVENESS))]
        kept += sorted(LIVENESS)
        changes.append("added PROPERTIES " + ", ".join(sorted(LIVENESS)))
    cfg.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return into, kept, changes, spec


def bench_tlc(
    model: str, workers: int, spec_dir: Path, liveness: str = "final"
) -> tuple[str, int, float, int]:
    """(result, distinct, seconds, peak RSS of the JVM's process tree in KiB) of one
    TLC run, as the kit runs TLC (:func:`redletter.tlc.tlc_command`: ``-lncheck
    final``), or with TLC's own default liveness checking (``liveness="periodic"``:
    also on the partial graph every so often)."""
    peak = 0
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak
        me = os.getpid()
        while not stop.is_set():
            for pid in _children(me, b"java"):
                peak = max(peak, _tree_rss_kb(pid)[0])
            time.sleep(0.1)

    t = threading.Thread(target=sample, daemon=True)
    t.start()
    with tempfile.TemporaryDirectory() as tmp:
        r = run_tlc(
            model,
            spec_dir=spec_dir,
            jar=ROOT / ".cache" / "tla2tools.jar",
            cache_dir=Path(tmp),
            check_deadlock=False,
            workers=workers,
            extra_args=["-lncheck", "default"] if liveness == "periodic" else (),
        )
    stop.set()
    t.join()
    if r.distinct is None:
        raise SystemExit(f"TLC did not finish {model}: {r.describe()} {r.error or ''}")
    return r.kind.value, r.distinct, r.seconds, peak


def _children(pid: int, name: bytes) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == pid and name in cmd:
            out.append(int(entry))
    return out


def _row(
    who: str, result: str, distinct: int, sec: float, rss_kb: float, tlc_sec: float | None
) -> str:
    vs = f"  {tlc_sec / sec:5.2f}x TLC" if tlc_sec else ""
    return (
        f"  {who:<27} {result:<17} {distinct:>9,} distinct  {sec:8.2f} s  "
        f"{distinct / sec:9,.0f} states/s  peak RSS {rss_kb / 1024:7.1f} MiB  "
        f"{rss_kb * 1024 / max(distinct, 1):8,.0f} B/state{vs}"
    )


class _Build:
    """The environment of the Python model's runs for one build, restored after."""

    def __init__(self, build: str) -> None:
        self.build = build
        self.saved = os.environ.get(PURE_ENV)

    def __enter__(self) -> None:
        os.environ.pop(PURE_ENV, None)
        if self.build == "pure":
            os.environ[PURE_ENV] = "1"

    def __exit__(self, *exc: object) -> None:
        os.environ.pop(PURE_ENV, None)
        if self.saved is not None:
            os.environ[PURE_ENV] = self.saved


def _build_status(build: str) -> str:
    """What the Python model's processes run for ``build`` (``compiled`` or ``pure``):
    :func:`redletter.python_model.native.status` in a fresh process with that
    environment."""
    with _Build(build):
        out = subprocess.run(
            [sys.executable, "-c", "import redletter.python_model.native as n; print(n.status())"],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
    return out.stdout.strip()


def _python_rows(
    spec_dir: Path,
    model: str,
    mode: str,
    counts: list[int],
    tlc: tuple[str, int, float] | None,
    build: str,
) -> dict[int, dict[str, Any]]:
    """The Python model on each worker count, a row each (with each worker's figures)."""
    rows: dict[int, dict[str, Any]] = {}
    for n in counts:
        with _Build(build):
            r = rows[n] = _measure(["explore-workers", str(spec_dir), model, mode, str(n)])
        who = f"Python {build}, 1 process" if n == 1 else f"Python {build}, {n} workers"
        tlc_sec = tlc[2] if tlc is not None else None
        line = _row(who, r["result"], r["states"], r["seconds"], r["peak_mb"] * 1024, tlc_sec)
        if n != 1 and 1 in rows:
            line += f"  {rows[1]['seconds'] / r['seconds']:4.2f}x 1 process"
        print(line)
        if r["workers"] and not any(mem for _, mem, _ in r["workers"]):
            print(
                "    no worker process was started: no frontier reached"
                f" {SPAWN_FRONTIER:,} states, so the partitions ran in the calling process"
            )
        elif r["workers"]:
            each = ", ".join(
                f"{st:,} states {mem / 2**20:.0f} MiB {cpu:.1f} s" for st, mem, cpu in r["workers"]
            )
            print(f"    per worker (states, peak RSS, processor time): {each}")
        first = rows[counts[0]]
        if [r[k] for k in ("result", "states", "total", "depth")] != [
            first[k] for k in ("result", "states", "total", "depth")
        ]:
            print("    DIFFERENT verdict or counts from the first Python row")
        if tlc is not None and (r["result"], r["states"]) != tlc[:2]:
            print("    DIFFERENT verdict or distinct states from TLC")
    return rows


def _ceiling(
    spec_dir: Path, model: str, mode: str, rows: dict[int, dict[str, Any]], build: str
) -> None:
    """Two single-process explorers at once: this machine's ceiling for two processes,
    and how far each worker count is from it."""
    with _Build(build):
        both = _measure(["explore-workers", str(spec_dir), model, mode, "1"], copies=2)
    one = rows[1]["seconds"]
    ceiling = 2 * one / both["seconds"]
    print(
        f"  ceiling ({build}): two single-process explorers at once took"
        f" {' and '.join(format(x, '.2f') for x in both['each'])} s against {one:.2f} s"
        f" alone: two cores give {ceiling:.2f}x one core's work"
    )
    for n, r in rows.items():
        if n > 1:
            got = one / r["seconds"]
            print(f"  {n} workers: {got:.2f}x one process, {got / ceiling:.0%} of the ceiling")


_LIVENESS_MODES = {
    "final": "once, on the whole state graph (-lncheck final, as the kit runs TLC)",
    "periodic": "on the partial graph every so often and on the whole one (-lncheck"
    " default, TLC's default)",
}


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--model", action="append", help="repeatable (default MCTokenComplete3)")
    ap.add_argument("--mode", choices=("safety", "full", "both"), default="both")
    ap.add_argument("--tlc-workers", type=int, default=2)
    ap.add_argument("--workers", default="1,2", help="the Python model's worker counts")
    ap.add_argument(
        "--tlc-liveness",
        choices=("final", "periodic"),
        default="final",
        help="TLC checks liveness once on the whole graph (-lncheck final, as the kit"
        " runs it) or also periodically on the partial graph (TLC's default)",
    )
    ap.add_argument("--no-tlc", action="store_true", help="leave TLC out")
    ap.add_argument("--no-ceiling", action="store_true", help="leave the ceiling out")
    ap.add_argument(
        "--builds",
        default="compiled,pure",
        help="the Python model's builds, in this order: compiled (its hot modules"
        " compiled with mypyc, make native) and pure (REDLETTER_PURE=1)",
    )
    args = ap.parse_args()
    builds = [b for b in args.builds.split(",") if b]
    if any(b not in ("compiled", "pure") for b in builds):
        raise SystemExit(f"--builds takes compiled and pure, got {args.builds}")
    for b in builds:
        st = _build_status(b)
        print(f"the Python model {b}: its processes run {st}")
        if b == "compiled" and st != "compiled with mypyc":
            raise SystemExit("no compiled build of these sources: run make native first")
    modes = ("safety", "full") if args.mode == "both" else (args.mode,)
    counts = [int(x) for x in args.workers.split(",")]
    summary: list[str] = []
    for model in args.model or ["MCTokenComplete3"]:
        for mode in modes:
            with tempfile.TemporaryDirectory() as tmp:
                spec_dir, kept, changes, spec = derived_spec(model, mode, Path(tmp) / "spec")
                what = "safety" if mode == "safety" else f"safety and liveness under {spec}"
                sides = "the Python model checks" if args.no_tlc else "both sides check"
                print(f"{model} [{mode}]: {sides} {', '.join(kept)} ({what})")
                if changes:
                    print(f"  the cfg both sides read: {'; '.join(changes)}")
                tlc: tuple[str, int, float] | None = None
                t_rss = 0
                if not args.no_tlc:
                    t_res, t_distinct, t_sec, t_rss = bench_tlc(
                        model, args.tlc_workers, spec_dir, args.tlc_liveness
                    )
                    tlc = (t_res, t_distinct, t_sec)
                    who = f"TLC ({args.tlc_workers} workers)"
                    if mode == "full":
                        print(f"  TLC checks liveness {_LIVENESS_MODES[args.tlc_liveness]}")
                    print(_row(who, t_res, t_distinct, t_sec, t_rss, None))
                side = f"TLC {tlc[2]:.1f} s, {t_rss / 1024:.0f} MiB; " if tlc is not None else ""
                descs = []
                for build in builds:
                    rows = _python_rows(spec_dir, model, mode, counts, tlc, build)
                    if not args.no_ceiling and 1 in rows:
                        _ceiling(spec_dir, model, mode, rows, build)
                    descs.append(
                        f"Python {build} "
                        + "; ".join(
                            f"{n} {'process' if n == 1 else 'workers'} {r['seconds']:.1f} s"
                            f" {r['peak_mb']:.0f} MiB"
                            + (f" {tlc[2] / r['seconds']:.2f}x TLC" if tlc is not None else "")
                            for n, r in rows.items()
                        )
                    )
                summary.append(f"{model} [{mode}] {side}{' | '.join(descs)}")
    print("summary:")
    for line in summary:
        print("  " + line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
