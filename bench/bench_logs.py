"""Judge large event logs without a model: memory, events a second, and vector clocks.

    .venv/bin/python bench/bench_logs.py [--size 10M,100M,1G] [--chain 1000,3000]
        [--before PATH/TO/OTHER/.venv/bin/redletter] [--keep DIR] [--mem-limit 8G]

Two kinds of run, both written here by a seeded simulation of Chandy–Lamport
(the recorders' format byte for byte: seq, vector clock, state), both correct, so
the judge does all its work and the verdict must be ``pass``:

``--size``
    four processes on a complete directed topology (twelve channels) transfer
    amounts, ``{"amount": n}``, and take snapshots one after another (each one
    records its channels and logs ``complete`` everywhere; about one in
    ``--snapshot-every`` steps, 100 by default), until the four logs hold about
    SIZE bytes together;
``--chain``
    N processes in a chain p1 -> p2 -> ... -> pN: p1 starts a snapshot, each
    process passes the red letter and then one message on, so each process's
    vector clock holds every process before it (the logs grow as N squared).

Each judgement is ``redletter conform validate LOG...`` in a child process,
timed (wall and CPU) and measured (its peak resident memory, from ``wait4``).
``--before`` runs the same logs with another checkout's command (the code before
a change), in a child whose address space is capped at ``--mem-limit``, so a
run that would exhaust the machine fails instead.  Output: one line per run,
``what  size  events  verdict  wall  cpu  events/s (cpu)  peak RSS``, and for
the size runs the targets of issue 28 (100 MB in at most 400 MB of memory and at
least 50,000 events a second; 3,000 processes in under a minute), met or missed.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REDLETTER = ROOT / ".venv" / "bin" / "redletter"

_UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def parse_size(text: str) -> int:
    """``10M``, ``1G``, ``500K`` or a number of bytes (MB here means MiB)."""
    text = text.strip().upper().removesuffix("B")
    if text and text[-1] in _UNITS:
        return int(float(text[:-1]) * _UNITS[text[-1]])
    return int(text)


def show_size(n: int) -> str:
    for unit, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}iB"
    return f"{n} B"


# --------------------------------------------------------------------------- writing logs


class _Proc:
    """One simulated process: its log file, seq, vector clock and balance."""

    def __init__(self, name: str, out: Path, balance: int) -> None:
        self.name = name
        self.f = open(out / f"{name}.ndjson", "w", encoding="utf-8")  # noqa: SIM115
        self.seq = 0
        self.vc: dict[str, int] = {}
        self.balance = balance
        self.head = '{"node":' + json.dumps(name) + ',"seq":'
        self.bytes = 0

    def log(self, body: str, merge: dict[str, int] | None = None) -> dict[str, int]:
        """Write one event (``body``: its fields after the clock); the new clock."""
        self.seq += 1
        vc = self.vc
        if merge:
            for q, n in merge.items():
                if n > vc.get(q, 0):
                    vc[q] = n
        vc[self.name] = self.seq
        clock = ",".join(f'"{q}":{n}' for q, n in vc.items())  # plain names: no escaping
        line = f'{self.head}{self.seq},"vc":{{{clock}}}{body}}}\n'
        self.f.write(line)
        self.bytes += len(line)
        return dict(vc)


def _ev(event: str, **fields: object) -> str:
    return (
        ',"event":'
        + json.dumps(event)
        + "".join(
            "," + json.dumps(k) + ":" + json.dumps(v, separators=(",", ":"))
            for k, v in fields.items()
        )
    )


def write_size_run(
    out: Path, size: int, *, procs: int = 4, seed: int = 0, every: int = 100
) -> list[Path]:
    """Logs of a correct run of ``procs`` processes on a complete topology, of about
    ``size`` bytes together (see the module docstring); a snapshot starts at a step
    with probability 1/``every`` when none is open."""
    rng = random.Random(seed)
    names = [f"p{i}" for i in range(1, procs + 1)]
    ps = {n: _Proc(n, out, 100) for n in names}
    chans = [(a, b) for a in names for b in names if a != b]
    queue: dict[tuple[str, str], list[tuple[str, object, dict[str, int]]]] = {c: [] for c in chans}
    for n in names:
        others = [q for q in names if q != n]
        ps[n].log(_ev("init", state=100, inputs=others, outputs=others))
    snap = 0
    red: dict[str, bool] = {}
    rec_ch: dict[str, dict[str, list[int]]] = {}
    open_in: dict[str, set[str]] = {}

    def turn_red(n: str, k: int) -> None:
        p = ps[n]
        red[n] = True
        p.log(_ev("record_state", snapshot=k, state=p.balance))
        rec_ch[n] = {q: [] for q in names if q != n}
        open_in[n] = {q for q in names if q != n}
        for q in names:
            if q != n:
                clock = p.log(_ev("send", channel=[n, q], msg={"marker": k}))
                queue[(n, q)].append(("marker", k, clock))

    def total() -> int:
        return sum(p.bytes for p in ps.values())

    while total() < size or snap == 0 or red:
        if not red and total() < size and rng.random() < 1 / every:
            snap += 1
            starter = names[snap % procs]
            ps[starter].log(_ev("start_snapshot", snapshot=snap))
            turn_red(starter, snap)
            continue
        busy = [c for c in chans if queue[c]]
        if total() < size and (not busy or rng.random() < 0.5):
            a, b = rng.choice(chans)
            p = ps[a]
            amount = rng.randint(1, 9)
            if p.balance < amount:
                continue
            p.balance -= amount
            clock = p.log(
                f',"event":"send","channel":["{a}","{b}"],"msg":{{"app":{{"amount":{amount}}}}},'
                f'"state":{p.balance}'
            )
            queue[(a, b)].append(("app", {"amount": amount}, clock))
            continue
        if not busy:
            break
        a, b = rng.choice(busy)
        kind, value, clock = queue[(a, b)].pop(0)
        p = ps[b]
        if kind == "marker":
            p.log(_ev("receive", channel=[a, b], msg={"marker": value}), clock)
            if not red.get(b):
                turn_red(b, value)  # type: ignore[arg-type]
            open_in[b].discard(a)
            p.log(_ev("close_channel", snapshot=value, channel=[a, b]))
            if not open_in[b]:
                p.log(
                    _ev("complete", snapshot=value, state=None, channels=rec_ch[b]).replace(
                        ',"state":null', ""
                    )
                )
                del red[b]
        else:
            p.balance += value["amount"]  # type: ignore[index]
            got = value["amount"]  # type: ignore[index]
            seq = p.log(
                f',"event":"receive","channel":["{a}","{b}"],"msg":{{"app":{{"amount":{got}}}}},'
                f'"state":{p.balance}',
                clock,
            )[b]
            if red.get(b) and a in open_in[b]:
                rec_ch[b][a].append(value)  # type: ignore[arg-type]
                p.log(
                    _ev("record_message", snapshot=snap, channel=[a, b], msg={"app": value}, of=seq)
                )
    for p in ps.values():
        p.log(_ev("end", state=p.balance))
        p.f.close()
    return [out / f"{n}.ndjson" for n in names]


def write_chain(out: Path, n: int) -> list[Path]:
    """Logs of a chain of ``n`` processes (see the module docstring)."""
    names = [f"p{i}" for i in range(1, n + 1)]
    carried: tuple[dict[str, int], dict[str, int]] | None = None
    paths = []
    for i, name in enumerate(names):
        p = _Proc(name, out, 1 if i == 0 else 0)
        ins = [names[i - 1]] if i else []
        outs = [names[i + 1]] if i + 1 < n else []
        p.log(_ev("init", state=p.balance, inputs=ins, outputs=outs))
        if carried is None:
            p.log(_ev("start_snapshot", snapshot=1))
        else:
            p.log(_ev("receive", channel=[ins[0], name], msg={"marker": 1}), carried[0])
        p.log(_ev("record_state", snapshot=1, state=p.balance))
        marker = p.log(_ev("send", channel=[name, outs[0]], msg={"marker": 1})) if outs else {}
        if carried is not None:
            p.log(_ev("close_channel", snapshot=1, channel=[ins[0], name]))
        p.log(_ev("complete", snapshot=1))
        if carried is not None:
            p.balance += 1
            p.log(
                _ev("receive", channel=[ins[0], name], msg={"app": 1}, state=p.balance), carried[1]
            )
        app = {}
        if outs:
            p.balance -= 1
            app = p.log(_ev("send", channel=[name, outs[0]], msg={"app": 1}, state=p.balance))
        p.log(_ev("end", state=p.balance))
        p.f.close()
        carried = (marker, app)
        paths.append(out / f"{name}.ndjson")
    return paths


# --------------------------------------------------------------------------- judging


@dataclass
class Measured:
    verdict: str
    events: int
    wall: float
    cpu: float
    rss: int  #: bytes
    error: str = ""


def judge(
    command: Path, paths: list[Path], *, mem_limit: int | None = None, timeout: float = 900
) -> Measured:
    """``command conform validate PATHS...`` in a child: its verdict, time and memory."""
    argv = [str(command), "conform", "validate", *map(str, paths)]

    def limit() -> None:
        if mem_limit:
            resource.setrlimit(resource.RLIMIT_AS, (mem_limit, mem_limit))

    start = time.perf_counter()
    child = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=limit, text=True
    )
    try:
        out, err = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        usage = _last_rusage(child.pid)
        return Measured("timeout", 0, time.perf_counter() - start, usage[0], usage[1],
                        f"stopped after {timeout:.0f} s")  # fmt: skip
    wall = time.perf_counter() - start
    # the child's own rusage (communicate reaped it: read it from RUSAGE_CHILDREN deltas)
    usage = _last_rusage(child.pid)
    first = out.splitlines()[0] if out else ""
    verdict = first.split(":", 1)[0] if first else f"exit {child.returncode}"
    events = 0
    if first:
        try:
            events = int(first.split(":", 1)[1].split()[0])
        except (IndexError, ValueError):
            events = 0
    return Measured(
        verdict,
        events,
        wall,
        usage[0],
        usage[1],
        "" if first else (err.strip().splitlines() or ["no output"])[-1][:200],
    )


_SEEN = [0.0, 0.0]


def _last_rusage(pid: int) -> tuple[float, int]:
    """CPU seconds and peak RSS (bytes) of the child just reaped.  RUSAGE_CHILDREN sums
    CPU over reaped children (the delta is this one's) and keeps the largest peak
    RSS of any, so each run's peak is measured in a fresh intermediate process
    (see :func:`measured`)."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = r.ru_utime + r.ru_stime
    delta = cpu - _SEEN[0]
    _SEEN[0] = cpu
    return delta, r.ru_maxrss * 1024


def measured(command: Path, paths: list[Path], mem_limit: int | None, timeout: float) -> Measured:
    """:func:`judge` in a fresh process of this script, so that its peak RSS is its own."""
    done = subprocess.run(
        [sys.executable, __file__, "--judge-one", str(command), "--mem-limit-bytes",
         str(mem_limit or 0), "--timeout", str(timeout), *map(str, paths)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        return Measured(f"exit {done.returncode}", 0, 0, 0, 0, done.stderr[-300:])
    return Measured(**json.loads(done.stdout))


def _row(what: str, size: int, m: Measured) -> str:
    rate = m.events / m.cpu if m.cpu else 0
    return (
        f"{what:<28} {show_size(size):>10} {m.events:>10,} {m.verdict:>8} {m.wall:>8.1f} s "
        f"{m.cpu:>8.1f} s {rate:>10,.0f}/s {m.rss / (1 << 20):>8,.0f} MiB"
        + (f"  ({m.error})" if m.error else "")
    )


def _write_size(out: Path, *, size: int, every: int) -> list[Path]:
    return write_size_run(out, size, every=every)


def _write_chain(out: Path, *, n: int) -> list[Path]:
    return write_chain(out, n)


def _no_target(m: Measured) -> str:
    return ""


def _target_100m(m: Measured) -> str:
    rate = m.events / m.cpu if m.cpu else 0
    return (
        f"  target 100 MB: peak RSS {m.rss / (1 << 20):,.0f} MiB (<= 400: "
        f"{'met' if m.rss <= 400 << 20 else 'MISSED'}), {rate:,.0f} events/s "
        f"(>= 50,000: {'met' if rate >= 50_000 else 'MISSED'})"
    )


def _target_3000(m: Measured) -> str:
    return f"  target 3,000 processes: {m.wall:.1f} s (< 60: {'met' if m.wall < 60 else 'MISSED'})"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default="10M,100M,1G", help="total log sizes (empty: none)")
    ap.add_argument("--chain", default="1000,3000", help="chain lengths (empty: none)")
    ap.add_argument(
        "--snapshot-every",
        type=int,
        default=100,
        metavar="STEPS",
        help="about one snapshot per STEPS steps of the size runs",
    )
    ap.add_argument("--before", type=Path, help="another checkout's .venv/bin/redletter")
    ap.add_argument("--mem-limit", default="8G", help="address-space cap of --before runs")
    ap.add_argument("--keep", type=Path, help="write the logs here and keep them")
    ap.add_argument("--timeout", type=float, default=900, help="seconds a judgement may take")
    ap.add_argument("--judge-one", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--mem-limit-bytes", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("paths", nargs="*", type=Path, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.judge_one:
        m = judge(a.judge_one, a.paths, mem_limit=a.mem_limit_bytes or None, timeout=a.timeout)
        print(json.dumps(m.__dict__))
        return 0
    base = a.keep or Path(tempfile.mkdtemp(prefix="bench-logs-"))
    base.mkdir(parents=True, exist_ok=True)
    cap = parse_size(a.mem_limit)
    print(
        f"{'run':<28} {'logs':>10} {'events':>10} {'verdict':>8} {'wall':>10} {'cpu':>10} "
        f"{'events/s':>12} {'peak RSS':>12}"
    )
    runs: list[tuple[str, Path, Callable[[Path], list[Path]], Callable[[Measured], str]]] = []
    for text in filter(None, a.size.split(",")):
        size = partial(_write_size, size=parse_size(text), every=a.snapshot_every)
        hundred = _target_100m if text.upper().startswith("100M") else _no_target
        runs.append((text, base / f"size-{text}", size, hundred))
    for text in filter(None, a.chain.split(",")):
        n = int(text)
        chain = _target_3000 if n == 3000 else _no_target
        runs.append((f"chain of {n}", base / f"chain-{n}", partial(_write_chain, n=n), chain))
    ok = True
    try:
        for what, out, write, target in runs:
            out.mkdir(exist_ok=True)
            t = time.perf_counter()
            paths = write(out)
            total = sum(p.stat().st_size for p in paths)
            took = time.perf_counter() - t
            print(f"  (wrote {len(paths)} logs, {show_size(total)}, in {took:.0f} s)")
            m = measured(REDLETTER, paths, None, a.timeout)
            print(_row(f"after: {what}", total, m), flush=True)
            ok &= m.verdict == "pass"
            if said := target(m):
                print(said)
            if a.before:
                b = measured(a.before, paths, cap, a.timeout)
                print(_row(f"before: {what}", total, b), flush=True)
            if not a.keep:
                shutil.rmtree(out)
    finally:
        if not a.keep:
            shutil.rmtree(base, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
