"""TLC (2 workers) against the Python model on the same model and the same
properties, side by side, for safety and for the full check.

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

Both engines run one after the other (not at once: the machine has two cores).  TLC's
wall time includes JVM start-up, as a user sees it, and its peak memory is the java
process's ``VmHWM`` sampled from ``/proc`` every 50 ms.  The Python model runs in a
child process (spawned, so its memory is its own) that reports ``ru_maxrss``.
Reported: the verdict, distinct states, seconds, distinct states per second, peak
RSS, bytes of peak RSS per distinct state, and the Python/TLC ratio of states per
second (= TLC's time over Python's).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import resource
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from redletter.python_model.config import load_model
from redletter.python_model.explore import explore
from redletter.python_model.liveness import full_check
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


def _children_java(pid: int) -> list[int]:
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
        if ppid == pid and b"java" in cmd:
            out.append(int(entry))
    return out


def _hwm_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def bench_tlc(model: str, workers: int, spec_dir: Path) -> tuple[str, int, float, int]:
    """(result, distinct, seconds, peak RSS in KiB) of one TLC run."""
    peak = 0
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak
        me = os.getpid()
        while not stop.is_set():
            for pid in _children_java(me):
                peak = max(peak, _hwm_kb(pid))
            time.sleep(0.05)

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
        )
    stop.set()
    t.join()
    if r.distinct is None:
        raise SystemExit(f"TLC did not finish {model}: {r.describe()} {r.error or ''}")
    return r.kind.value, r.distinct, r.seconds, peak


def _child(model: str, spec_dir: str, mode: str, conn: mp.connection.Connection) -> None:
    cfg = load_model(model, Path(spec_dir))
    t0 = time.perf_counter()
    if mode == "full":
        r, live = full_check(cfg)
        result = live.result if live is not None and r.violation is None else r.result
    else:
        r = explore(cfg)
        result = r.result
    seconds = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    conn.send((result, r.distinct, r.total, r.depth, seconds, rss))
    conn.close()


def bench_python(model: str, spec_dir: Path, mode: str) -> tuple[str, int, int, int, float, int]:
    """(result, distinct, total, depth, seconds, peak RSS in KiB) of one run."""
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe(duplex=False)
    p = ctx.Process(target=_child, args=(model, str(spec_dir), mode, child))
    p.start()
    result: tuple[str, int, int, int, float, int] = parent.recv()
    p.join()
    return result


def _row(who: str, result: str, distinct: int, sec: float, rss: int) -> str:
    return (
        f"  {who:<19} {result:<17} {distinct:>9,} distinct  {sec:8.2f} s  "
        f"{distinct / sec:9,.0f} states/s  peak RSS {rss / 1024:7.1f} MiB  "
        f"{rss * 1024 / distinct:8,.0f} B/state"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--model", action="append", help="repeatable (default MCTokenComplete3)")
    ap.add_argument("--mode", choices=("safety", "full", "both"), default="both")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    modes = ("safety", "full") if args.mode == "both" else (args.mode,)
    summary: list[str] = []
    for model in args.model or ["MCTokenComplete3"]:
        for mode in modes:
            with tempfile.TemporaryDirectory() as tmp:
                spec_dir, kept, changes, spec = derived_spec(model, mode, Path(tmp) / "spec")
                what = "safety" if mode == "safety" else f"safety and liveness under {spec}"
                print(f"{model} [{mode}]: both sides check {', '.join(kept)} ({what})")
                if changes:
                    print(f"  the cfg both sides read: {'; '.join(changes)}")
                t_res, t_distinct, t_sec, t_rss = bench_tlc(model, args.workers, spec_dir)
                print(_row(f"TLC ({args.workers} workers)", t_res, t_distinct, t_sec, t_rss))
                p_res, p_distinct, p_total, p_depth, p_sec, p_rss = bench_python(
                    model, spec_dir, mode
                )
                print(_row("Python", p_res, p_distinct, p_sec, p_rss))
                ratio = t_sec / p_sec
                same = (t_res, t_distinct) == (p_res, p_distinct)
                line = (
                    f"  ratio Python/TLC states/s: {ratio:.2f}  (same verdict and count:"
                    f" {same}; {p_total:,} generated, depth {p_depth})"
                )
                print(line)
                summary.append(
                    f"{model} [{mode}] TLC {t_sec:.1f} s, {t_rss / 1024:.0f} MiB;"
                    f" Python {p_sec:.1f} s, {p_rss / 1024:.0f} MiB: {ratio:.2f}x"
                )
    print("summary:")
    for line in summary:
        print("  " + line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
