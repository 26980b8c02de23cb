"""TLC (2 workers) against the Python explorer on the same model and the same
properties, side by side.

    .venv/bin/python bench/bench_explore.py [--model MCTokenComplete3] [--workers 2]

Like with like: the Python explorer checks safety (every INVARIANT of the model's cfg
and its action properties such as ShadowLemma0), not liveness, so TLC runs on a copy
of the model whose cfg keeps exactly those and drops the temporal (liveness)
properties (``SnapshotsComplete``); the output prints what each side checked.  Both
engines run one after the other (not at once: the machine has two cores).  TLC's wall
time includes JVM start-up, as a user sees it, and its peak memory is the java
process's ``VmHWM`` sampled from ``/proc`` every 50 ms.  The explorer runs in a child
process (spawned, so its memory is its own) that reports ``ru_maxrss``.  Reported:
distinct states, seconds, distinct states per second, peak RSS, bytes of peak RSS per
distinct state, and the Python/TLC ratio of states per second.
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
from redletter.tlc import run_tlc

ROOT = Path(__file__).resolve().parent.parent

#: Temporal properties the Python explorer does not check (liveness under fairness).
LIVENESS = frozenset({"SnapshotsComplete"})


def safety_spec(model: str, into: Path) -> tuple[Path, list[str], list[str]]:
    """A copy of spec/ whose ``model``.cfg checks only what the Python explorer checks.

    Returns the directory, the properties kept and the ones dropped."""
    import shutil

    shutil.copytree(ROOT / "spec", into, dirs_exist_ok=True)
    cfg = into / f"{model}.cfg"
    kept: list[str] = []
    dropped: list[str] = []
    lines = []
    section = ""
    for line in cfg.read_text(encoding="utf-8").splitlines():
        words = line.split()
        if words and words[0].isupper() and words[0].isalpha():
            section = words[0]
            names = words[1:]
        else:
            names = words if not line.lstrip().startswith("\\*") else []
        if section in ("INVARIANT", "INVARIANTS", "PROPERTY", "PROPERTIES"):
            gone = [n for n in names if n in LIVENESS]
            dropped += gone
            kept += [n for n in names if n not in LIVENESS and n != section]
            line = " ".join(w for w in words if w not in LIVENESS) if gone else line
        lines.append(line)
    cfg.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return into, kept, dropped


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


def bench_tlc(model: str, workers: int, spec_dir: Path) -> tuple[int, float, int]:
    """(distinct, seconds, peak RSS in KiB) of one TLC run."""
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
    return r.distinct, r.seconds, peak


def _child(model: str, conn: mp.connection.Connection) -> None:
    cfg = load_model(model, ROOT / "spec")
    r = explore(cfg)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    conn.send((r.distinct, r.total, r.depth, r.seconds, rss))
    conn.close()


def bench_python(model: str) -> tuple[int, int, int, float, int]:
    """(distinct, total, depth, seconds, peak RSS in KiB) of one explorer run."""
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe(duplex=False)
    p = ctx.Process(target=_child, args=(model, child))
    p.start()
    result: tuple[int, int, int, float, int] = parent.recv()
    p.join()
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--model", default="MCTokenComplete3")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        spec_dir, kept, dropped = safety_spec(args.model, Path(tmp) / "spec")
        print(f"model {args.model}: both sides check {', '.join(kept)} (safety)")
        if dropped:
            print(
                f"  not checked by either side here: {', '.join(dropped)} (liveness; the"
                " Python explorer does not check it, so TLC's cfg drops it)"
            )
        for n in range(args.repeat):
            t_distinct, t_sec, t_rss = bench_tlc(args.model, args.workers, spec_dir)
            p_distinct, p_total, p_depth, p_sec, p_rss = bench_python(args.model)
            t_rate, p_rate = t_distinct / t_sec, p_distinct / p_sec
            print(f"run {n + 1}:")
            print(
                f"  TLC ({args.workers} workers): {t_distinct:>9,} distinct  {t_sec:7.2f} s  "
                f"{t_rate:9,.0f} states/s  peak RSS {t_rss / 1024:7.1f} MiB  "
                f"{t_rss * 1024 / t_distinct:8,.0f} B/state"
            )
            print(
                f"  Python explorer:   {p_distinct:>9,} distinct  {p_sec:7.2f} s  "
                f"{p_rate:9,.0f} states/s  peak RSS {p_rss / 1024:7.1f} MiB  "
                f"{p_rss * 1024 / p_distinct:8,.0f} B/state"
                f"  ({p_total:,} generated, depth {p_depth})"
            )
            print(
                f"  ratio Python/TLC states/s: {p_rate / t_rate:.2f}"
                f"  (counts equal: {p_distinct == t_distinct})"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
