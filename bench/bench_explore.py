"""TLC (2 workers) against the Python explorer on the same model, side by side.

    python bench/bench_explore.py [--model MCTokenComplete3] [--workers 2] [--repeat 1]

Both engines run one after the other (not at once: the machine has two cores).  TLC
runs through :func:`redletter.tlc.run_tlc` with the model's full cfg (invariants,
ShadowLemma0 and the liveness property); its wall time includes JVM start-up, as a
user sees it, and its peak memory is the java process's ``VmHWM`` sampled from
``/proc`` every 50 ms.  The explorer runs in a child process (spawned, so its memory is
its own) that reports ``ru_maxrss``.  Reported: distinct states, seconds, distinct
states per second, peak RSS, and the Python/TLC ratio of states per second.
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


def bench_tlc(model: str, workers: int) -> tuple[int, float, int]:
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
            spec_dir=ROOT / "spec",
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
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="MCTokenComplete3")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    for n in range(args.repeat):
        t_distinct, t_sec, t_rss = bench_tlc(args.model, args.workers)
        p_distinct, p_total, p_depth, p_sec, p_rss = bench_python(args.model)
        t_rate, p_rate = t_distinct / t_sec, p_distinct / p_sec
        print(f"run {n + 1}: model {args.model}")
        print(
            f"  TLC ({args.workers} workers): {t_distinct:>9,} distinct  {t_sec:7.2f} s  "
            f"{t_rate:9,.0f} states/s  peak RSS {t_rss / 1024:7.1f} MiB"
        )
        print(
            f"  Python explorer:   {p_distinct:>9,} distinct  {p_sec:7.2f} s  "
            f"{p_rate:9,.0f} states/s  peak RSS {p_rss / 1024:7.1f} MiB"
            f"  ({p_total:,} generated, depth {p_depth})"
        )
        print(
            f"  ratio Python/TLC states/s: {p_rate / t_rate:.2f}"
            f"  (counts equal: {p_distinct == t_distinct})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
