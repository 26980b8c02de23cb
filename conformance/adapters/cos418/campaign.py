"""The campaign ``redletter cos418 test`` runs on a COS 418 package, and shrinking.

Scenarios come in four generated classes, each on a random strongly connected
topology of 2 to 12 servers (some races only show with 7 or more) with random
token transfers:

- ``one``: one snapshot amid the sends;
- ``sequential``: two to four snapshots, each followed by a gap of ticks long
  enough for it to complete before the next one starts;
- ``concurrent``: two to five snapshots started a tick or two apart, so that
  they overlap;
- ``same-tick``: two to four snapshots started in the same step, amid sends.

plus ``package``: the package's own ``test_data/`` scenarios (judged like every
other run, never against the ``.snap`` files beside them, which hold for one
seed of the original simulator only).  Each scenario runs under several
simulator seeds, so that different schedules happen.  Everything is drawn from
the campaign seed: the same seed gives the same campaign.

:func:`shrink` makes a failing scenario small: fewer servers (a server removed
with its sends and snapshots; links bypass it when needed to keep the topology
strongly connected), fewer events (delta debugging), fewer and shorter ticks,
fewer tokens; a candidate is kept when it fails *the same way* (the same kind of
failure) under the failing seed or one of a few others.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final

from redletter.conformance.adapters.cos418.judge import (
    OutcomeFn,
    RunResult,
    judge_raw,
    outcome_in_process,
)
from redletter.conformance.adapters.cos418.workspace import RunLimits, Workspace
from redletter.conformance.formats.cos418 import (
    Event,
    Scenario,
    Send,
    Server,
    Snapshot,
    Tick,
    Topology,
    check_scenario,
    read_scenario,
    read_topology,
)
from redletter.conformance.verdict import Verdict
from redletter.errors import InputError

__all__ = [
    "CLASSES",
    "STOPS_CAMPAIGN",
    "Case",
    "CaseRun",
    "Shrunk",
    "generate_case",
    "generate_cases",
    "jobs_of",
    "package_cases",
    "run_campaign",
    "run_one",
    "shrink",
]

#: Failures that say nothing about a scenario: the package's initialisation never
#: let the driver start, or the package wrote what only the driver writes.  Every
#: other run would fail (or wait) the same way, so the campaign stops at the first
#: (even when asked for every run) and it is not shrunk.
STOPS_CAMPAIGN: Final = frozenset({"never-started", "tampered"})

#: The generated scenario classes, in the order the campaign interleaves them.
CLASSES: Final = ("one", "sequential", "concurrent", "same-tick")
PACKAGE_CLASS: Final = "package"
_SIZES: Final = (2, 3, 3, 4, 4, 5, 5, 6, 7, 8, 9, 10, 11, 12)


@dataclass(frozen=True)
class Case:
    """A scenario to run: its class, topology and events, and where it comes from."""

    name: str
    klass: str
    topology: Topology
    scenario: Scenario
    source: str = ""

    @property
    def servers(self) -> int:
        return len(self.topology.servers)

    @property
    def events(self) -> int:
        """Sends and snapshot starts (ticks not counted)."""
        return sum(not isinstance(e, Tick) for e in self.scenario.events)

    @property
    def snapshots(self) -> int:
        return sum(isinstance(e, Snapshot) for e in self.scenario.events)

    def size(self) -> str:
        ticks = sum(e.n for e in self.scenario.events if isinstance(e, Tick))
        return (
            f"{self.servers} servers, {len(self.topology.links)} links, {self.events} events"
            f" ({self.snapshots} snapshot(s)), {ticks} ticks"
        )


@dataclass(frozen=True)
class CaseRun:
    """One scenario run under one simulator seed, and its verdict."""

    case: Case
    seed: int
    result: RunResult


# --------------------------------------------------------------------------- generation


def _topology(rng: random.Random, n: int) -> Topology:
    ids = [f"N{i}" for i in range(1, n + 1)]
    order = ids[:]
    rng.shuffle(order)
    links = {(order[i], order[(i + 1) % n]) for i in range(n)}
    candidates = sorted((a, b) for a in ids for b in ids if a != b and (a, b) not in links)
    extra = rng.randint(0, min(len(candidates), n + 2))
    links |= set(rng.sample(candidates, extra))
    servers = tuple(Server(i, rng.randint(5, 40)) for i in ids)
    return Topology(servers, tuple(sorted(links)))


class _Builder:
    def __init__(self, rng: random.Random, topology: Topology) -> None:
        self.rng = rng
        self.top = topology
        self.balance = {s.id: s.tokens for s in topology.servers}
        self.events: list[Event] = []

    def tick(self, lo: int = 1, hi: int = 3) -> None:
        n = self.rng.randint(lo, hi)
        if n <= 0:
            return
        if self.events and isinstance(self.events[-1], Tick):
            self.events[-1] = Tick(self.events[-1].n + n)
        else:
            self.events.append(Tick(n))

    def maybe_tick(self, p: float = 0.4) -> None:
        if self.rng.random() < p:
            self.tick()

    def send(self) -> None:
        able = [link for link in self.top.links if self.balance[link[0]] > 0]
        if not able:
            return
        src, dst = self.rng.choice(able)
        n = self.rng.randint(1, max(1, min(self.balance[src], 1 + self.balance[src] // 3)))
        self.balance[src] -= n
        self.events.append(Send(src, dst, n))

    def sends(self, count: int, p_tick: float = 0.4) -> None:
        for _ in range(count):
            self.send()
            self.maybe_tick(p_tick)

    def snapshot(self, server: str | None = None) -> None:
        self.events.append(Snapshot(server or self.rng.choice(self.top.ids)))

    def initiators(self, m: int) -> list[str]:
        ids = list(self.top.ids)
        self.rng.shuffle(ids)
        return [
            ids[i % len(ids)] if self.rng.random() < 0.85 else self.rng.choice(ids)
            for i in range(m)
        ]

    def scenario(self) -> Scenario:
        events = list(self.events)
        while events and isinstance(events[-1], Tick):
            events.pop()
        return Scenario(tuple(events))


def _settle_gap(topology: Topology, in_flight: int) -> int:
    """Ticks after which a snapshot started now has completed in practice: markers
    cross at most n-1 links, each waiting up to the delay bound plus the messages
    queued ahead of it (one delivery per sender and tick)."""
    n = len(topology.servers)
    return min(500, 20 + 8 * (n - 1) + in_flight)


def generate_case(seed: int, index: int, klass: str | None = None) -> Case:
    """Scenario ``index`` of the campaign drawn from ``seed`` (class by index, round robin)."""
    k = klass if klass is not None else CLASSES[index % len(CLASSES)]
    rng = random.Random(f"redletter-cos418:{seed}:{index}:{k}")
    n = rng.choice(_SIZES)
    top = _topology(rng, n)
    b = _Builder(rng, top)
    per = max(2, min(12, 2 * n))
    if k == "one":
        b.sends(rng.randint(1, per))
        b.snapshot()
        b.sends(rng.randint(1, per))
    elif k == "sequential":
        m = rng.randint(2, 4)
        for i, who in enumerate(b.initiators(m)):
            b.sends(rng.randint(0, per // 2))
            b.snapshot(who)
            b.sends(rng.randint(1, per // 2 + 1))
            if i < m - 1:
                sent = sum(isinstance(e, Send) for e in b.events)
                b.events.append(Tick(_settle_gap(top, sent + len(top.links) * (i + 1))))
    elif k == "concurrent":
        m = rng.randint(2, 5)
        b.sends(rng.randint(1, per // 2 + 1))
        for who in b.initiators(m):
            b.snapshot(who)
            b.sends(rng.randint(0, 2), p_tick=0.0)
            b.tick(1, 2)
        b.sends(rng.randint(1, per // 2 + 1))
    elif k == "same-tick":
        m = rng.randint(2, 4)
        b.sends(rng.randint(1, per // 2 + 1))
        b.tick()
        for who in b.initiators(m):
            b.snapshot(who)
            if rng.random() < 0.6:
                b.send()
        b.tick()
        b.sends(rng.randint(1, per // 2 + 1))
    else:
        raise InputError(f"unknown scenario class {k!r}", code="RL-INPUT-USAGE")
    return Case(f"s{index:03d}-{k}", k, top, b.scenario(), f"generated (seed {seed}, #{index})")


def generate_cases(seed: int, count: int) -> list[Case]:
    """``count`` scenarios, the classes interleaved."""
    return [generate_case(seed, i) for i in range(count)]


def package_cases(test_data: Path) -> tuple[list[Case], list[str]]:
    """The package's own scenarios: each ``X.events`` with the ``.top`` whose name is the
    longest prefix of X (``8nodes-concurrent.events`` goes with ``8nodes.top``).  Also
    returns notes on what was skipped and why."""
    tops = sorted(test_data.glob("*.top"))
    cases: list[Case] = []
    notes: list[str] = []
    for events in sorted(test_data.glob("*.events")):
        stem = events.stem
        match = [t for t in tops if stem == t.stem or stem.startswith(t.stem)]
        if not match:
            notes.append(f"{events.name}: no .top file whose name starts it; skipped")
            continue
        top_path = max(match, key=lambda t: len(t.stem))
        try:
            # Found in the package's folder: a link (or a hard link to someone else's
            # file, as root) is refused unread, never quoted in a note.
            top = read_topology(top_path, found=True)
            sc = read_scenario(events, found=True)
            check_scenario(top, sc, str(events))
        except InputError as exc:
            notes.append(f"{events.name}: {exc.message}; skipped")
            continue
        if not top.strongly_connected():
            notes.append(f"{events.name}: {top_path.name} is not strongly connected; skipped")
            continue
        cases.append(
            Case(
                stem, PACKAGE_CLASS, top, sc, f"{test_data.name}/{events.name} with {top_path.name}"
            )
        )
    return cases, notes


def jobs_of(cases: Sequence[Case], seeds: Sequence[int]) -> list[tuple[Case, int]]:
    """Each case under each seed, in order."""
    return [(c, s) for c in cases for s in seeds]


# --------------------------------------------------------------------------- running


def run_one(
    ws: Workspace,
    case: Case,
    seed: int,
    limits: RunLimits,
    *,
    outcome: OutcomeFn | None = outcome_in_process,
) -> RunResult:
    """Run one scenario under one seed and judge it."""
    return judge_raw(ws.run(case.topology, case.scenario, seed, limits), outcome=outcome)


def run_campaign(
    ws: Workspace,
    jobs: Sequence[tuple[Case, int]],
    limits: RunLimits,
    *,
    stop_at_first: bool = True,
    workers: int = 2,
    outcome: OutcomeFn | None = outcome_in_process,
    on_result: Callable[[CaseRun], None] | None = None,
) -> list[CaseRun]:
    """Run and judge every job, ``workers`` at a time, reporting them in order;
    stop after the first failure if asked, and always after one of
    :data:`STOPS_CAMPAIGN`.  ``on_result`` sees each run as it is judged."""
    out: list[CaseRun] = []
    if not jobs:
        return out
    width = max(1, workers)
    stop = False

    def job(case: Case, seed: int) -> RunResult:
        if stop:
            raise _Cancelled
        return run_one(ws, case, seed, limits, outcome=outcome)

    pool = ThreadPoolExecutor(max_workers=width, thread_name_prefix="redletter-run")
    try:
        pending: list[tuple[Case, int, Future[RunResult]]] = []
        it: Iterator[tuple[Case, int]] = iter(jobs)

        def fill() -> None:
            while len(pending) < width + 1:
                nxt = next(it, None)
                if nxt is None:
                    return
                pending.append((nxt[0], nxt[1], pool.submit(job, *nxt)))

        fill()
        while pending:
            case, seed, fut = pending.pop(0)
            while True:
                # A short wait, again and again: a Ctrl-C reaches this thread at once.
                with contextlib.suppress(TimeoutError):
                    r = fut.result(timeout=0.2)
                    break
            cr = CaseRun(case, seed, r)
            out.append(cr)
            if on_result is not None:
                on_result(cr)
            if cr.result.verdict == Verdict.FAIL and (
                stop_at_first or cr.result.kind in STOPS_CAMPAIGN
            ):
                stop = True
                for _, _, f in pending:
                    f.cancel()
                for _, _, f in pending:
                    if not f.cancelled():
                        with contextlib.suppress(_Cancelled):
                            f.result()
                pending.clear()
                break
            fill()
    except BaseException:
        # Interrupted: kill the runs in progress and leave without waiting for them.
        stop = True
        ws.abort()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return out


class _Cancelled(Exception):
    pass


# --------------------------------------------------------------------------- shrinking


#: A failure may be shrunk into a more general one: recording messages after the
#: first marker on its own channel is a case of recording after a channel's marker.
_GENERALISES: Final = {"first-channel-recorded": ("recorded-after-marker",)}


@dataclass(frozen=True)
class Shrunk:
    """The smallest failing scenario found, the seed it fails under, its verdict."""

    case: Case
    seed: int
    result: RunResult
    original: Case
    runs: int
    seconds: float
    confirmed: bool  #: the shrunk scenario failed the same way when run again at the end


def _no_overdraw(top: Topology, sc: Scenario) -> bool:
    spent = {s.id: 0 for s in top.servers}
    have = {s.id: s.tokens for s in top.servers}
    for e in sc.events:
        if isinstance(e, Send):
            spent[e.src] += e.n
            if spent[e.src] > have[e.src]:
                return False
    return True


def _normal(events: Sequence[Event]) -> Scenario:
    """Consecutive ticks merged, leading and trailing ticks dropped."""
    out: list[Event] = []
    for e in events:
        if isinstance(e, Tick):
            if not out:
                continue
            if isinstance(out[-1], Tick):
                out[-1] = Tick(out[-1].n + e.n)
                continue
        out.append(e)
    while out and isinstance(out[-1], Tick):
        out.pop()
    return Scenario(tuple(out))


def _without_server(case: Case, v: str) -> Case | None:
    servers = tuple(s for s in case.topology.servers if s.id != v)
    if len(servers) < 2:
        return None
    links = [link for link in case.topology.links if v not in link]
    top = Topology(servers, tuple(links))
    if not top.strongly_connected():
        ins = [a for a, b in case.topology.links if b == v]
        outs = [b for a, b in case.topology.links if a == v]
        extra = [(a, b) for a in ins for b in outs if a != b and (a, b) not in links]
        top = Topology(servers, tuple(sorted({*links, *extra})))
        if not top.strongly_connected():
            return None
    events = [
        e
        for e in case.scenario.events
        if not (isinstance(e, Send) and v in (e.src, e.dst))
        and not (isinstance(e, Snapshot) and e.server == v)
    ]
    return replace(case, topology=top, scenario=_normal(events))


def shrink(
    ws: Workspace,
    failing: CaseRun,
    limits: RunLimits,
    *,
    seeds: Sequence[int] = (),
    max_runs: int = 300,
    max_seconds: float = 90.0,
    outcome: OutcomeFn | None = outcome_in_process,
) -> Shrunk:
    """A smaller scenario failing like ``failing`` (see the module docstring); a
    failure of :data:`STOPS_CAMPAIGN` is returned as it is, with no run."""
    started = time.monotonic()
    if failing.result.kind in STOPS_CAMPAIGN:
        return Shrunk(failing.case, failing.seed, failing.result, failing.case, 0, 0.0, True)
    key = failing.result.failure_key
    use_outcome = key == "outcome"
    trial = limits
    others = [s for s in seeds if s != failing.seed]
    spare = max([failing.seed, *seeds]) + 1
    while len(others) < 3:
        others.append(spare)
        spare += 1
    try_seeds = [failing.seed, *others[:3]]
    strict_tokens = _no_overdraw(failing.case.topology, failing.case.scenario)
    runs = 0
    seen: dict[tuple[Topology, Scenario], tuple[int, RunResult] | None] = {}
    best = failing.case
    best_seed, best_result = failing.seed, failing.result

    def out_of_budget() -> bool:
        return runs >= max_runs or time.monotonic() - started > max_seconds

    def fails(cand: Case) -> bool:
        nonlocal runs, best, best_seed, best_result, key
        k = (cand.topology, cand.scenario)
        if k in seen:
            hit = seen[k]
        else:
            hit = None
            ok = (
                len(cand.topology.servers) >= 2
                and cand.topology.strongly_connected()
                and (not strict_tokens or _no_overdraw(cand.topology, cand.scenario))
            )
            if ok:
                try:
                    check_scenario(cand.topology, cand.scenario)
                except InputError:
                    ok = False
            for s in try_seeds if ok else ():
                if out_of_budget():
                    return False
                runs += 1
                r = run_one(ws, cand, s, trial, outcome=outcome if use_outcome else None)
                if r.failure_key == key or r.failure_key in _GENERALISES.get(key, ()):
                    hit = (s, r)
                    break
            seen[k] = hit
        if hit is None:
            return False
        best, (best_seed, best_result) = cand, hit
        key = hit[1].failure_key  # the same, or a more general failure
        return True

    def servers_pass() -> bool:
        changed = False
        for v in reversed(best.topology.ids):
            if out_of_budget():
                break
            cand = _without_server(best, v)
            if cand is not None and fails(cand):
                changed = True
        return changed

    def events_pass() -> bool:
        """ddmin over the sends and snapshot starts (ticks stay where they are)."""
        changed = False
        n = 2
        while not out_of_budget():
            evs = list(best.scenario.events)
            idx = [i for i, e in enumerate(evs) if not isinstance(e, Tick)]
            if len(idx) < 1:
                break
            size = max(1, len(idx) // n)
            chunks = [idx[i : i + size] for i in range(0, len(idx), size)]
            reduced = False
            for chunk in chunks:
                drop = set(chunk)
                cand = replace(
                    best, scenario=_normal([e for i, e in enumerate(evs) if i not in drop])
                )
                if cand.scenario != best.scenario and fails(cand):
                    changed = reduced = True
                    n = max(n - 1, 2)
                    break
            if not reduced:
                if size == 1:
                    break
                n = min(n * 2, len(idx))
        return changed

    def ticks_pass() -> bool:
        changed = False
        i = 0
        while i < len(best.scenario.events) and not out_of_budget():
            e = best.scenario.events[i]
            if isinstance(e, Tick):
                evs = list(best.scenario.events)
                options = [None, 1, e.n // 2] if e.n > 1 else [None]
                for n in options:
                    if n is not None and (n <= 0 or n == e.n):
                        continue
                    new = evs[:i] + ([] if n is None else [Tick(n)]) + evs[i + 1 :]
                    cand = replace(best, scenario=_normal(new))
                    if cand.scenario != best.scenario and fails(cand):
                        changed = True
                        break
            i += 1
        return changed

    def tokens_pass() -> bool:
        need = {s.id: 0 for s in best.topology.servers}
        for e in best.scenario.events:
            if isinstance(e, Send):
                need[e.src] += e.n
        servers = tuple(Server(s.id, min(s.tokens, need[s.id])) for s in best.topology.servers)
        if servers == best.topology.servers:
            return False
        cand = replace(best, topology=Topology(servers, best.topology.links))
        return fails(cand)

    for _ in range(4):
        if out_of_budget():
            break
        a = servers_pass()
        b = events_pass()
        c = ticks_pass()
        if not (a or b or c):
            break
    tokens_pass()

    confirmed = True
    if best is not failing.case:
        runs += 1
        final = run_one(ws, best, best_seed, limits, outcome=outcome)
        if final.failure_key == key:
            best_result = final
        else:
            confirmed = False
            best, best_seed, best_result = failing.case, failing.seed, failing.result
    shrunk_case = (
        replace(best, name=f"{failing.case.name}-shrunk") if best is not failing.case else best
    )
    return Shrunk(
        case=shrunk_case,
        seed=best_seed,
        result=best_result,
        original=failing.case,
        runs=runs,
        seconds=time.monotonic() - started,
        confirmed=confirmed,
    )
