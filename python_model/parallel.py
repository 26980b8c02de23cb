"""The breadth-first search on several processes: ``redletter explore --workers N``.

**Partitions.**  A state belongs to partition ``fp mod N``, ``fp`` its engine's
64-bit fingerprint (:meth:`Engine.fingerprint`, the same in every process).  Each
partition keeps what it owns compactly: the fingerprints it has seen (a
:class:`FingerprintTable`, 16 to 32 bytes a state, twice that with the local ids
the graph needs),
and per state its fingerprint, its BFS parent's fingerprint and id (three 8-byte
integers); the states themselves only while they are on its frontier (and, when the
whole graph is asked for, all of them).  A level is one round of three steps:

1. *expand*: each partition generates the successors of its frontier, in the order
   the frontier's states were added (below), counting every one in ``total`` and
   applying the cfg's CONSTRAINT exactly as
   :func:`redletter.python_model.explore.explore` does (TLC 2.15's semantics, see
   there): a successor outside it is no state but its invariants are checked, and
   action properties are checked on every step, by the partition that owns the
   step's source.  The successors inside it are deduplicated
   within the partition and grouped into one batch per owning partition;
2. *exchange*: the partitions swap their batches (one message per pair and level,
   the states' fields written by :mod:`marshal`, never a message per state);
3. *dedupe*: each partition keeps the candidates it owns whose fingerprints it has
   not seen, in the order they came (the batches in partition order, each in its
   sender's order: deterministic for a given ``N``; sorting them by fingerprint
   scattered the states' memory and cost a third more time on
   ``MCTokenComplete3Large``), each with **the smallest parent** (by
   fingerprint) among all that generated it -- the rule of the Spark BFS
   (``_keep`` in :mod:`redletter.pipeline.explore`; a state generated twice within
   one partition's level keeps the smaller parent already in *expand*), so the BFS
   tree, and with it the counterexample, is the same however many partitions there
   are and however the processes are scheduled.  It checks the invariants of its new
   states.

With the graph (``graph``, for the cross-check and ``--graph``) or the liveness data
(``liveness``), every edge is kept by the partition of its source, and the owners
answer each batch with the ids of its candidates (a second, smaller exchange), so
that each partition's edges are in the order of their sources and the graph is
assembled by concatenation.  Liveness needs no state in one place either: each
partition records the fair instances enabled in its states and evaluates the
temporal properties' state predicates on them; the liveness check runs on the
assembled arrays (:class:`~redletter.python_model.explore.FairGraph`) and rebuilds a
lasso's states by replaying the model along their fingerprints.

**Violations** are those of :mod:`redletter.python_model.explore`, found at the same
depth (a shortest counterexample); the search stops after the first level that has
one, and of those it reports the one the Spark BFS reports: violations of a step
(a successor outside the CONSTRAINT violating an invariant, or an action property)
before the invariants of the level's new states, then the smallest ``(kind, source
fingerprint, name)``, then the first successor generated.  Its trace follows the BFS
parents from an initial state and is replayed in the model.  The first level is the
initial states', in-model ones deduplicated like any other; one outside the
CONSTRAINT that violates an invariant stops the search first, as in the Spark BFS.

**Where it runs.**  The first levels are small: they run in the calling process, the
``N`` partitions one after the other with the very same functions, until a frontier
reaches ``spawn_frontier`` states; then each partition moves into its own process
(a fresh interpreter entering this module: safe from the threads of the caller -- the
live display, a test runner -- which *fork* is not, and unlike ``multiprocessing``'s
*spawn* it never re-runs the caller's main module) and the rounds go on there, the
calling process only coordinating; the processes talk over socket pairs
(:class:`multiprocessing.connection.Connection`).  The results
are the same either way (the tests compare them).  A model whose frontier never
reaches that size is explored without starting a process.

A fingerprint, as in TLC and the Spark BFS, stands for its state in the visited
sets: two different states with one fingerprint would be taken for one (about
``n^2 / 2^65``, 2e-6 for 7.8 million states); two such states new in the same
level are caught (``RL-INTERNAL-FP``).  ``--workers 1`` is
:func:`redletter.python_model.explore.explore`, which keeps every state and needs
no fingerprint.
"""

from __future__ import annotations

import marshal
import os
import pickle
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, Final, Protocol

from redletter.errors import EnvironmentMissing, InternalError
from redletter.python_model.engine import Engine
from redletter.python_model.engines import load_engine
from redletter.python_model.explore import (
    ExploreProgress,
    ExploreResult,
    FairGraph,
    Graph,
    Step,
    Violation,
    WorkerReport,
    gc_paused,
    path_steps,
    replay_fingerprints,
)

__all__ = [
    "SPAWN_FRONTIER",
    "FingerprintTable",
    "default_workers",
    "explore_parallel",
    "worker_entry",
]

#: The frontier size from which the partitions run in processes of their own.
SPAWN_FRONTIER: Final = 2_000


def default_workers() -> int:
    """The cores this process may run on (its CPU affinity, as ``taskset`` or a
    container's cpuset sets it), else ``os.cpu_count()``."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


# --------------------------------------------------------------------------- a partition


@dataclass(frozen=True)
class _Options:
    """What every partition is told (it travels to the worker processes)."""

    model: str
    spec_dir: str
    edges: bool  #: keep the edges (the graph or the liveness data)
    keep: bool  #: keep the states and the edges' actions (the whole graph)
    liveness: bool  #: record the fairness bits and enabled instances


Batch = tuple[array, array, array, list[Any], bool]  # type: ignore[type-arg]
"""Candidates for one partition: their fingerprints, their parents' fingerprints and
ids, the states (or their fields, when the last item is true)."""

Found = tuple[int, str, int, str, Any]
"""A violation: ``(rank, kind, fingerprint, name, successor's fields or None)``; rank
0 for a step of the level expanded (``fingerprint`` its source's), 1 for a new
state's invariant (``fingerprint`` its own)."""


def _rss() -> int:
    """This process's peak resident memory in bytes."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _clash(model: str, fp: int, a: object, b: object) -> InternalError:
    return InternalError(
        f"{model}: two states share the 64-bit fingerprint {fp}: {a!r} {b!r}; the"
        " exploration is not exact",
        code="RL-INTERNAL-FP",
    )


class FingerprintTable:
    """A set of fingerprints, each with a local id: open addressing over arrays of
    8-byte integers, half full at most, so 16 to 32 bytes a fingerprint once large (32
    to 64 with the ids) where a set of Python ints takes about 70 and a dict about 110
    -- what lets a worker hold millions of states.  Written here because the standard
    library has no compact hash set of integers; a lookup is a few array reads
    (fingerprints are uniform: no hashing)."""

    def __init__(self, *, ids: bool) -> None:
        self._cap = 1 << 12
        self._keys: array[int] = array("q", bytes(8 * self._cap))
        self._ids: array[int] | None = array("q", bytes(8 * self._cap)) if ids else None
        self._zero = -1  #: the id of fingerprint 0 (0 marks an empty slot)
        self._n = 0

    def __len__(self) -> int:
        return self._n

    def get(self, fp: int) -> int:
        """The id of ``fp`` (0 without ids), or -1 when it is not in the table."""
        if fp == 0:
            return self._zero
        keys, mask = self._keys, self._cap - 1
        i = fp & mask
        while True:
            k = keys[i]
            if k == fp:
                return self._ids[i] if self._ids is not None else 0
            if k == 0:
                return -1
            i = (i + 1) & mask

    def add(self, fp: int, ident: int = 0) -> None:
        """Add ``fp`` (not in the table) with its id."""
        self._n += 1
        if fp == 0:
            self._zero = ident
            return
        if 2 * self._n > self._cap:
            self._grow()
        self._put(fp, ident)

    def _put(self, fp: int, ident: int) -> None:
        keys, mask = self._keys, self._cap - 1
        i = fp & mask
        while keys[i] != 0:
            i = (i + 1) & mask
        keys[i] = fp
        if self._ids is not None:
            self._ids[i] = ident

    def _grow(self) -> None:
        old_keys, old_ids = self._keys, self._ids
        self._cap *= 4 if self._cap < 1 << 20 else 2
        self._keys = array("q", bytes(8 * self._cap))
        self._ids = array("q", bytes(8 * self._cap)) if old_ids is not None else None
        for i, k in enumerate(old_keys):
            if k != 0:
                self._put(k, old_ids[i] if old_ids is not None else 0)


class _Partition:
    """The states of one partition and the three steps of a level (module docstring)."""

    def __init__(self, me: int, n: int, engine: Engine[Any], opts: _Options) -> None:
        self.me, self.n, self.engine, self.opts = me, n, engine, opts
        self.fps: array[int] = array("q")
        self.parent_fp: array[int] = array("q")
        self.parent_id: array[int] = array("q")  #: packed ids: local index * n + partition
        self.visited = FingerprintTable(ids=opts.edges)
        self.levels: list[int] = []  #: the local index each level starts at
        self.frontier: list[Any] = []
        self.total = 0
        self.e_start: array[int] = array("q")  #: per expanded state, its first edge
        self.e_act: array[int] = array("b")
        self.e_bit: array[int] = array("h")
        self.e_dst: array[int] = array("q")  #: packed ids (a slot until answered)
        self.enabled: array[int] = array("q")
        self.states: list[Any] = []
        self._level_edges = 0
        self._setup()

    def _setup(self) -> None:
        engine = self.engine
        self.bits: Sequence[int] | None = None
        self.preds: list[Callable[[Any], bool]] = []
        self.flags: list[bytearray] = getattr(self, "flags", [])
        if self.opts.liveness:
            from redletter.python_model.liveness import fair_bit_table, temporal_of

            spec = temporal_of(engine)
            self.bits = fair_bit_table(engine, spec.fairness)
            if not self.opts.keep:  # with the states kept, the check evaluates them
                for prop in spec.properties:
                    self.preds.append(prop.p)
                    if prop.q is not None:
                        self.preds.append(prop.q)
        if not self.flags:
            self.flags = [bytearray() for _ in self.preds]
        self.cls: type | None = None

    # ------------------------------------------------------------------ the steps

    def _add(self, fp: int, pfp: int, pid: int, s: Any, found: list[Found]) -> None:
        i = len(self.fps)
        self.fps.append(fp)
        self.parent_fp.append(pfp)
        self.parent_id.append(pid)
        self.visited.add(fp, i)
        self.frontier.append(s)
        if self.opts.keep:
            self.states.append(s)
        for flag, pred in zip(self.flags, self.preds, strict=True):
            flag.append(1 if pred(s) else 0)
        name = self.engine.violated_invariant(s)
        if name is not None:
            found.append((1, "invariant", fp, name, None))

    def seed(self, rows: Sequence[tuple[int, Any]]) -> list[Found]:
        """The first level: this partition's in-model initial states, by fingerprint."""
        found: list[Found] = []
        self.levels.append(len(self.fps))
        for fp, s in sorted(rows, key=lambda r: r[0]):
            self._add(fp, 0, -1, s, found)
        return found

    def expand(self) -> tuple[list[Batch], list[Found]]:
        """Step 1: the successors of the frontier, one batch per owning partition."""
        engine = self.engine
        n, me = self.n, self.me
        successors = engine.successors
        in_model = engine.in_model
        constrained = engine.constrained
        fingerprint = engine.fingerprint
        violated_invariant = engine.violated_invariant
        violated_property = engine.violated_property
        check_props = bool(engine.action_properties)
        edges, keep = self.opts.edges, self.opts.keep
        bits = self.bits if self.bits is not None else ()
        track = self.bits is not None
        iid = engine.instance_id
        out_fp = [array("q") for _ in range(n)]
        out_pfp = [array("q") for _ in range(n)]
        out_pid = [array("q") for _ in range(n)]
        out_obj: list[list[Any]] = [[] for _ in range(n)]
        best: dict[Any, int] = {}
        found: list[Found] = []
        e_start, e_act, e_bit, e_dst = self.e_start, self.e_act, self.e_bit, self.e_dst
        enabled = self.enabled
        self._level_edges = len(e_dst)
        base = self.levels[-1]
        fps = self.fps
        total = 0
        b = -1
        frontier, self.frontier = self.frontier, []
        for j in range(len(frontier)):
            s = frontier[j]
            frontier[j] = None  # each state freed once expanded (unless kept for the graph)
            i = base + j
            fs = fps[i]
            ps = i * n + me
            if edges:
                e_start.append(len(e_dst))
            mask = 0
            for action, raw, t in successors(s):
                total += 1
                if track:
                    b = bits[iid(action, raw)]
                    if b >= 0 and t != s:
                        mask |= 1 << b
                if not constrained or in_model(t):
                    slot = best.get(t)
                    if slot is None:
                        fp = fingerprint(t)
                        o = fp % n
                        slot = best[t] = len(out_fp[o]) * n + o
                        out_fp[o].append(fp)
                        out_pfp[o].append(fs)
                        out_pid[o].append(ps)
                        out_obj[o].append(t)
                    else:  # generated again this level: the smallest parent is kept
                        pos, o = divmod(slot, n)
                        if fs < out_pfp[o][pos]:
                            out_pfp[o][pos] = fs
                            out_pid[o][pos] = ps
                    if edges:
                        e_dst.append(slot)
                        if keep:
                            e_act.append(action)
                        if track:
                            e_bit.append(b)
                else:
                    name = violated_invariant(t)
                    if name is not None:
                        found.append((0, "invariant", fs, name, t.key()))
                if check_props:
                    name = violated_property(s, t)
                    if name is not None:
                        found.append((0, "action property", fs, name, t.key()))
            if track:
                enabled.append(mask)
        self.total += total
        batches: list[Batch] = [
            (out_fp[o], out_pfp[o], out_pid[o], out_obj[o], False) for o in range(n)
        ]
        return batches, found

    def dedupe(self, batches: Sequence[Batch]) -> tuple[list[array[int]], list[Found]]:
        """Step 3: the new states among the candidates of every partition (``batches``
        in partition order), in the order they came, the smallest parent kept; with
        the edges, the ids of every batch's candidates, for the partition that sent
        it."""
        seen = self.visited.get
        new: dict[int, list[Any]] = {}
        for b_fp, b_pfp, b_pid, objs, as_key in batches:
            for k, fp in enumerate(b_fp):
                if seen(fp) >= 0:
                    continue
                entry = new.get(fp)
                if entry is None:
                    new[fp] = [b_pfp[k], b_pid[k], objs[k], as_key]
                    continue
                a = entry[2] if entry[3] else entry[2].key()
                other = objs[k] if as_key else objs[k].key()
                if a != other:
                    raise _clash(self.opts.model, fp, a, other)
                if b_pfp[k] < entry[0]:
                    entry[0], entry[1] = b_pfp[k], b_pid[k]
        found: list[Found] = []
        self.levels.append(len(self.fps))
        self.frontier = []
        # The fields of this level's states that came over the wire, each value once
        # (a level's: what it holds goes with the level's states).
        shared: dict[Any, Any] = {}
        share = shared.setdefault
        for fp in new:
            pfp, pid, obj, as_key = new[fp]
            if as_key:
                if self.cls is None:
                    self.cls = type(next(iter(self.engine.init_states())))
                # A state that came over the wire is a fresh tree of tuples, none of it
                # shared with the states already here as a successor shares its
                # parent's unchanged fields: its fields are looked up among those seen,
                # so equal fields are one object again (dictionary lookups of the
                # invariants' memo then compare by identity), 10 % of a worker's time
                # and a quarter of its memory on MCTokenComplete3Large.
                obj = self.cls(*[share(f, f) for f in obj])
            self._add(fp, pfp, pid, obj, found)
        replies: list[array[int]] = []
        if self.opts.edges:
            for b_fp, *_ in batches:
                replies.append(array("q", [seen(fp) for fp in b_fp]))
        return replies, found

    def apply(self, replies: Sequence[array[int]]) -> None:
        """The ids the owners gave this level's candidates: the edges' targets."""
        n = self.n
        e_dst = self.e_dst
        for j in range(self._level_edges, len(e_dst)):
            pos, o = divmod(e_dst[j], n)
            e_dst[j] = replies[o][pos] * n + o

    def parent_of(self, fp: int) -> tuple[int, int]:
        """The parent's fingerprint and packed id of the state ``fp`` (id -1: initial)."""
        try:
            i = self.fps.index(fp)
        except ValueError:
            raise InternalError(
                f"state {fp} is not in partition {self.me} of the exploration",
                code="RL-INTERNAL-BFS",
            ) from None
        return self.parent_fp[i], self.parent_id[i]

    def counts(self) -> Shape:
        """Where each level starts among this partition's states and edges (and where
        they end, last)."""
        states = [*self.levels, len(self.fps)]
        e_start, n_edges = self.e_start, len(self.e_dst)
        edges = [e_start[b] if b < len(e_start) else n_edges for b in states[:-1]]
        return states, [*edges, n_edges]

    def finish(self, bounds: Sequence[Sequence[int]], sbase: Sequence[Sequence[int]]) -> Part:
        """The partition's part of the assembled graph, its ids made global: ids go
        level by level, and within a level partition by partition (``bounds[o]``:
        where partition ``o``'s levels start, ``sbase[level][o]``: the first id of
        that level's states of ``o``)."""
        n = self.n
        maps: list[array[int]] = []
        for o in range(n):
            m: array[int] = array("q")
            for level, first in enumerate(sbase):
                m.extend(range(first[o], first[o] + bounds[o][level + 1] - bounds[o][level]))
            maps.append(m)
        out: Part = {
            "fps": self.fps,
            "parent": array("q", [-1 if p < 0 else maps[p % n][p // n] for p in self.parent_id]),
        }
        if self.opts.edges:
            out["start"] = self.e_start
            out["dst"] = array("i", [maps[p % n][p // n] for p in self.e_dst])
            out["bit"] = self.e_bit
            out["act"] = self.e_act
            out["enabled"] = self.enabled
            out["flags"] = self.flags
        if self.opts.keep:
            out["states"] = self.states
        return out

    # ------------------------------------------------------------------ moving

    def export(self) -> bytes:
        """Everything but the engine, to go on in a worker process."""
        data = {k: v for k, v in vars(self).items() if k not in ("engine", "preds", "bits", "cls")}
        data["frontier"] = [s.key() for s in self.frontier]
        data["states"] = [s.key() for s in self.states]
        return pickle.dumps(data, pickle.HIGHEST_PROTOCOL)

    @classmethod
    def restore(cls, blob: bytes, engine: Engine[Any]) -> _Partition:
        """The partition :meth:`export` wrote, in this process."""
        part = cls.__new__(cls)
        vars(part).update(pickle.loads(blob))
        part.engine = engine
        part._setup()
        keys = part.frontier + part.states
        if keys:
            part.cls = type(next(iter(engine.init_states())))
            make = part.cls
            part.frontier = [make(*k) for k in part.frontier]
            part.states = [make(*k) for k in part.states]
        return part


def _wire(batch: Batch) -> bytes:
    fps, pfp, pid, objs, as_key = batch
    keys = objs if as_key else [t.key() for t in objs]
    return marshal.dumps((fps.tobytes(), pfp.tobytes(), pid.tobytes(), keys))


def _unwire(data: bytes) -> Batch:
    fb, pb, qb, keys = marshal.loads(data)
    fps, pfp, pid = array("q"), array("q"), array("q")
    fps.frombytes(fb)
    pfp.frombytes(pb)
    pid.frombytes(qb)
    return fps, pfp, pid, keys, True


# --------------------------------------------------------------------------- the rounds

Shape = tuple[list[int], list[int]]
"""Where a partition's levels start among its states, then among its edges; each
list ends with the total."""

Part = dict[str, Any]
"""A partition's arrays for the assembled graph (:meth:`_Partition.finish`)."""

Stats = tuple[int, int, list[Found]]
"""After a round, per partition: its frontier, its generated successors so far, and
the violations of the round."""


class _Cluster(Protocol):
    def seed(self, rows: Sequence[Sequence[tuple[int, Any]]]) -> list[Stats]: ...
    def round(self) -> list[Stats]: ...
    def parent_of(self, fp: int) -> tuple[int, int]: ...
    def counts(self) -> list[Shape]: ...
    def finish(
        self, bounds: Sequence[Sequence[int]], sbase: Sequence[Sequence[int]]
    ) -> list[Part]: ...
    def close(self, *, force: bool = False) -> list[tuple[int, float]]: ...


class _InProcess:
    """The partitions in the calling process, one after the other."""

    def __init__(self, n: int, engine: Engine[Any], opts: _Options) -> None:
        self.parts = [_Partition(w, n, engine, opts) for w in range(n)]
        self.opts = opts

    def seed(self, rows: Sequence[Sequence[tuple[int, Any]]]) -> list[Stats]:
        stats: list[Stats] = []
        for p, r in zip(self.parts, rows, strict=True):
            found = p.seed(r)
            stats.append((len(p.frontier), p.total, found))
        return stats

    def round(self) -> list[Stats]:
        n = len(self.parts)
        expanded = [p.expand() for p in self.parts]
        replies: list[list[array[int]]] = []
        stats: list[Stats] = []
        for o, p in enumerate(self.parts):
            got, found = p.dedupe([expanded[w][0][o] for w in range(n)])
            replies.append(got)
            stats.append((len(p.frontier), p.total, expanded[o][1] + found))
        if self.opts.edges:
            for w, p in enumerate(self.parts):
                p.apply([replies[o][w] for o in range(n)])
        return stats

    def parent_of(self, fp: int) -> tuple[int, int]:
        return self.parts[fp % len(self.parts)].parent_of(fp)

    def counts(self) -> list[Shape]:
        return [p.counts() for p in self.parts]

    def finish(self, bounds: Sequence[Sequence[int]], sbase: Sequence[Sequence[int]]) -> list[Part]:
        return [p.finish(bounds, sbase) for p in self.parts]

    def close(self, *, force: bool = False) -> list[tuple[int, float]]:
        return [(0, 0.0)] * len(self.parts)


class _PeerLost(Exception):
    """Another worker's end of an exchange closed (it failed or was killed)."""


def _exchange(peers: dict[int, Connection], payloads: dict[int, bytes]) -> dict[int, bytes]:
    """Send each peer its payload and receive one from each, at once: the sending runs
    in a thread, so two workers sending each other more than a pipe holds never wait
    on each other."""
    errors: list[BaseException] = []

    def send() -> None:
        try:
            for o, conn in peers.items():
                conn.send_bytes(payloads[o])
        except OSError as e:
            errors.append(e)

    sender = threading.Thread(target=send, name="redletter-exchange", daemon=True)
    sender.start()
    got: dict[int, bytes] = {}
    waiting = {id(conn): (o, conn) for o, conn in peers.items()}
    try:
        while waiting:
            for conn in wait([c for _, c in waiting.values()]):
                o, c = waiting.pop(id(conn))
                got[o] = c.recv_bytes()
    except (EOFError, OSError) as e:
        raise _PeerLost from e
    sender.join()
    if errors:
        raise _PeerLost from errors[0]
    return got


def _worker_round(part: _Partition, peers: dict[int, Connection]) -> Stats:
    """One level in a worker process, Python's cyclic garbage collector paused
    (:func:`~redletter.python_model.explore.gc_paused`; unwiring a batch alone took
    7.5 s with it, 0.8 s without); it runs between rounds."""
    with gc_paused():
        return _round_of(part, peers)


def _round_of(part: _Partition, peers: dict[int, Connection]) -> Stats:
    me, n = part.me, part.n
    batches, found = part.expand()
    got = _exchange(peers, {o: _wire(batches[o]) for o in peers})
    incoming = [batches[me] if w == me else _unwire(got[w]) for w in range(n)]
    del got, batches
    replies, found_new = part.dedupe(incoming)
    del incoming
    if part.opts.edges:
        answers = _exchange(peers, {o: replies[o].tobytes() for o in peers})
        mine: list[array[int]] = []
        for o in range(n):
            if o == me:
                mine.append(replies[me])
            else:
                a = array("q")
                a.frombytes(answers[o])
                mine.append(a)
        part.apply(mine)
    return len(part.frontier), part.total, found + found_new


def _worker_main(
    me: int, n: int, opts: _Options, coord: Connection, peers: dict[int, Connection]
) -> None:
    """A worker process: one partition, driven by the coordinator's messages."""
    part: _Partition | None = None
    try:
        engine = load_engine(opts.model, Path(opts.spec_dir))
        while True:
            op, *args = coord.recv()
            if op == "adopt":
                part = _Partition.restore(args[0], engine)
                coord.send(("ok", None))
                continue
            if part is None:
                raise InternalError(f"worker {me} was asked to {op!r} before it had a partition")
            if op == "round":
                coord.send(("ok", _worker_round(part, peers)))
            elif op == "parent":
                coord.send(("ok", part.parent_of(args[0])))
            elif op == "counts":
                coord.send(("ok", part.counts()))
            elif op == "finish":
                out = part.finish(args[0], args[1])
                if "states" in out:  # their fields: lighter to send than the objects
                    out["states"] = [s.key() for s in out["states"]]
                    out["as_keys"] = True
                coord.send(("ok", out))
            elif op == "stop":
                coord.send(("ok", (_rss(), time.process_time())))
                return
            else:
                raise InternalError(f"worker {me}: unknown request {op!r}")
    except _PeerLost:
        coord.send(("peer-lost", None))
    except BaseException:  # reported to the coordinator, which raises it
        coord.send(("error", traceback.format_exc()))


def _die_with_parent(parent: int) -> None:
    """Ask Linux to kill this worker when the coordinator dies (``PR_SET_PDEATHSIG``):
    a killed coordinator leaves no worker computing a level for nobody.  Elsewhere the
    worker still ends at its next message, when it finds the connection closed."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        return
    if os.getppid() != parent:  # the coordinator died before the request took effect
        os._exit(1)


def worker_entry(argv: Sequence[str]) -> None:
    """A worker process's entry point (``python -c``; see :class:`_Processes`):
    ``argv`` is its partition, the number of partitions, the file descriptor of its
    connection to the coordinator, the coordinator's process id and, for each other
    partition, ``peer=fd``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the coordinator handles Ctrl-C
    me, n, coord_fd, parent = (int(x) for x in argv[:4])
    _die_with_parent(parent)
    peers: dict[int, Connection] = {}
    for arg in argv[4:]:
        o, fd = arg.split("=")
        peers[int(o)] = Connection(int(fd))
    coord = Connection(coord_fd)
    try:
        opts = coord.recv()
        _worker_main(me, n, opts, coord, peers)
    except (EOFError, OSError):
        pass  # the coordinator is gone (it stopped the exploration): nothing to say


#: How a worker starts: a fresh interpreter (the caller's threads -- a live display, a
#: test runner -- make ``fork`` unsafe) entering this module, not the caller's main
#: module (``multiprocessing``'s *spawn* re-runs that, which needs its
#: ``if __name__ == "__main__"`` guard and would import the whole command line).
_ENTRY: Final = (
    "import sys; from redletter.python_model.parallel import worker_entry;"
    " worker_entry(sys.argv[1:])"
)


class _Processes:
    """The partitions in worker processes of their own; this process coordinates."""

    def __init__(self, parts: Sequence[_Partition], opts: _Options) -> None:
        n = len(parts)
        ours: list[Connection] = []
        theirs: list[socket.socket] = []
        for _ in range(n):
            a, b = socket.socketpair()
            ours.append(Connection(a.detach()))
            theirs.append(b)
        pairs = {(a, b): socket.socketpair() for a in range(n) for b in range(a + 1, n)}
        self.conns = ours
        self.procs: list[subprocess.Popen[bytes]] = []
        try:
            for w in range(n):
                peers = {
                    o: pairs[(w, o)][0] if w < o else pairs[(o, w)][1] for o in range(n) if o != w
                }
                fds = [theirs[w].fileno(), *(sk.fileno() for sk in peers.values())]
                argv = [str(w), str(n), str(fds[0]), str(os.getpid())]
                argv += [f"{o}={sk.fileno()}" for o, sk in peers.items()]
                self.procs.append(
                    subprocess.Popen(
                        [sys.executable, "-c", _ENTRY, *argv],
                        pass_fds=fds,
                        stdin=subprocess.DEVNULL,
                        stdout=subprocess.DEVNULL,
                    )
                )
        except OSError as e:
            self.close(force=True)
            raise EnvironmentMissing(
                f"cannot start the worker processes of the parallel exploration: {e}",
                code="RL-ENV-WORKER",
            ) from None
        finally:
            # this process keeps only its own ends: a worker that dies closes its sockets
            for sk in theirs:
                sk.close()
            for x, y in pairs.values():
                x.close()
                y.close()
        for conn in self.conns:
            conn.send(opts)
        self._call([("adopt", p.export()) for p in parts])

    def _call(self, messages: Sequence[tuple[Any, ...]]) -> list[Any]:
        """Send each worker its message and gather the answers (or raise the failure)."""
        answers: dict[int, tuple[str, Any]] = {}
        for w, (conn, msg) in enumerate(zip(self.conns, messages, strict=True)):
            try:
                conn.send(msg)
            except OSError:
                answers[w] = ("died", None)
        waiting = {id(self.conns[w]): w for w in range(len(self.conns)) if w not in answers}
        while waiting:
            for ready in wait([self.conns[w] for w in waiting.values()]):
                w = waiting.pop(id(ready))
                try:
                    answers[w] = self.conns[w].recv()
                except (EOFError, OSError):
                    answers[w] = ("died", None)
        failed = {w: a for w, a in answers.items() if a[0] != "ok"}
        if failed:
            self.close(force=True)
            raise self._failure(failed)
        return [answers[w][1] for w in range(len(self.conns))]

    def _failure(self, failed: dict[int, tuple[str, Any]]) -> Exception:
        """The error to raise: a worker's own failure first, else one killed."""
        for w, (kind, tb) in sorted(failed.items()):
            if kind == "error":
                last = [x for x in str(tb).strip().splitlines() if x.strip()][-3:]
                return InternalError(
                    f"worker {w} of the parallel exploration failed: " + " | ".join(last),
                    code="RL-INTERNAL-WORKER",
                )
        for w in sorted(failed):
            code = self.procs[w].returncode
            if code is not None and code < 0:
                name = signal.Signals(-code).name
                hint = (
                    " (the kernel's out-of-memory killer sends it): run with fewer"
                    " --workers, or on a machine with more memory"
                    if -code == signal.SIGKILL
                    else ""
                )
                return EnvironmentMissing(
                    f"worker {w} of the parallel exploration was killed by {name}{hint}",
                    code="RL-ENV-WORKER",
                )
        w = min(failed)
        return InternalError(
            f"worker {w} of the parallel exploration ended unexpectedly"
            f" (exit code {self.procs[w].returncode})",
            code="RL-INTERNAL-WORKER",
        )

    def seed(self, rows: Sequence[Sequence[tuple[int, Any]]]) -> list[Stats]:  # pragma: no cover
        raise InternalError("the first level runs in the calling process")

    def round(self) -> list[Stats]:
        got: list[Stats] = self._call([("round",)] * len(self.conns))
        return got

    def parent_of(self, fp: int) -> tuple[int, int]:
        w = fp % len(self.conns)
        self.conns[w].send(("parent", fp))
        kind, value = self.conns[w].recv()
        if kind != "ok":
            self.close(force=True)
            raise self._failure({w: (kind, value)})
        parent_fp, parent_id = value
        return int(parent_fp), int(parent_id)

    def counts(self) -> list[Shape]:
        got: list[Shape] = self._call([("counts",)] * len(self.conns))
        return got

    def finish(self, bounds: Sequence[Sequence[int]], sbase: Sequence[Sequence[int]]) -> list[Part]:
        message = ("finish", [list(b) for b in bounds], [list(x) for x in sbase])
        got: list[Part] = self._call([message] * len(self.conns))
        return got

    def close(self, *, force: bool = False) -> list[tuple[int, float]]:
        """Stop the workers; their peak resident memory (bytes) and processor time
        (seconds), when they say them."""
        rss = [(0, 0.0)] * len(self.procs)
        if not force and len(self.procs) == len(self.conns):
            try:
                rss = [tuple(x) for x in self._call([("stop",)] * len(self.conns))]
            except (InternalError, EnvironmentMissing):
                force = True
        for c in self.conns:
            c.close()
        for p in self.procs:
            try:
                p.wait(timeout=1 if force else 30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        return rss


# --------------------------------------------------------------------------- the driver


def explore_parallel(
    model: str,
    spec_dir: Path,
    *,
    workers: int,
    graph: bool = False,
    liveness: bool = False,
    on_progress: Callable[[ExploreProgress], None] | None = None,
    spawn_frontier: int | None = SPAWN_FRONTIER,
    spawn_when: Callable[[], bool] | None = None,
) -> ExploreResult:
    """Explore ``model`` of ``spec_dir`` on ``workers`` partitions (module docstring):
    the same distinct states, total and depth as
    :func:`~redletter.python_model.explore.explore`, a shortest counterexample on a
    violation.  ``graph`` assembles the whole labelled graph (``ExploreResult.graph``,
    with the fairness data too when ``liveness``); ``liveness`` alone assembles the
    liveness check's :class:`~redletter.python_model.explore.FairGraph`
    (``ExploreResult.fair``) without the states.  The partitions move to processes of
    their own once a frontier has ``spawn_frontier`` states (0: from the first level;
    ``None``: never) and ``spawn_when()`` says the cores are free (asked at each level:
    the cross-check waits for TLC to end)."""
    start = time.perf_counter()
    if workers < 1:
        raise InternalError(f"explore_parallel needs at least one worker, got {workers}")
    spec_dir = Path(spec_dir).resolve()
    engine = load_engine(model, spec_dir)
    opts = _Options(model, str(spec_dir), graph or liveness, graph, liveness)
    n = workers
    fingerprint = engine.fingerprint
    total = 0
    rows: list[list[tuple[int, Any]]] = [[] for _ in range(n)]
    seen: dict[int, Any] = {}
    violation: Violation | None = None
    for s in engine.init_states():
        total += 1
        if not engine.constrained or engine.in_model(s):
            fp = fingerprint(s)
            old = seen.get(fp)
            if old is None:
                seen[fp] = s
                rows[fp % n].append((fp, s))
            elif old != s:
                raise _clash(model, fp, old.key(), s.key())
        elif violation is None:
            name = engine.violated_invariant(s)
            if name is not None:
                violation = Violation(name, "invariant", (Step("Init", {}, s),))
    init_total = total
    local: _InProcess | None = _InProcess(n, engine, opts)
    cluster: _Cluster = _InProcess(n, engine, opts) if local is None else local
    distinct = depth = 0
    try:
        if violation is None:
            stats = cluster.seed(rows)
            distinct = frontier = sum(s[0] for s in stats)
            depth = 1 if distinct else 0
            found = [f for s in stats for f in s[2]]
            if found:
                violation = _violation(engine, cluster, found)
        else:
            frontier, depth = 0, 1
        while violation is None and frontier:
            if (
                local is not None
                and spawn_frontier is not None
                and frontier >= spawn_frontier
                and (spawn_when is None or spawn_when())
            ):
                cluster = _Processes(local.parts, opts)
                local = None
            stats = cluster.round()
            frontier = sum(s[0] for s in stats)
            total = init_total + sum(s[1] for s in stats)
            distinct += frontier
            found = [f for s in stats for f in s[2]]
            if found:
                violation = _violation(engine, cluster, found)
                depth += min(found, key=lambda f: f[:4])[0]  # a new state's: one deeper
            elif frontier:
                depth += 1
            if on_progress is not None:
                on_progress(ExploreProgress(distinct, total, frontier, depth))
        assembled = _assemble(engine, cluster, opts) if violation is None and distinct else None
        counts = [sh[0][-1] for sh in cluster.counts()]
        rss = cluster.close()
    except BaseException:
        cluster.close(force=True)
        raise
    reports = tuple(
        WorkerReport(w, c, mem, cpu)
        for w, (c, (mem, cpu)) in enumerate(zip(counts, rss, strict=True))
    )
    g = assembled if isinstance(assembled, Graph) else None
    fair = assembled if isinstance(assembled, FairGraph) else None
    if graph and g is None and violation is None:
        g = _empty_graph(engine)
    return ExploreResult(
        model=engine.name,
        distinct=distinct,
        total=total,
        depth=depth,
        seconds=time.perf_counter() - start,
        violation=violation,
        graph=g,
        fair=fair,
        workers=reports,
        peak_rss=_rss(),
    )


def _empty_graph(engine: Engine[Any]) -> Graph:
    return Graph(
        (), (), array("i"), array("b"), array("i"), array("q"), tuple(engine.action_names),
        array("h"), [],
    )  # fmt: skip


def _violation(engine: Engine[Any], cluster: _Cluster, found: list[Found]) -> Violation:
    """The violation the Spark BFS reports among ``found`` (module docstring), with its
    trace along the BFS parents."""
    _rank, kind, fp, name, extra = min(found, key=lambda f: f[:4])
    chain = [fp]
    while True:
        pfp, pid = cluster.parent_of(chain[-1])
        if pid < 0:
            break
        chain.append(pfp)
    chain.reverse()
    path = replay_fingerprints(engine, chain)
    if extra is not None:
        path.append(type(path[0])(*extra))
    return Violation(name, kind, tuple(path_steps(engine, path)))


def _assemble(engine: Engine[Any], cluster: _Cluster, opts: _Options) -> Graph | FairGraph | None:
    """The graph (``keep``) or the liveness data (``liveness``) from the partitions,
    ids level by level (as the single-process explorer's: a lasso's prefix starts at
    the shallowest state it can), and within a level partition by partition."""
    if not opts.edges:
        return None
    shapes = cluster.counts()
    n = len(shapes)
    levels = len(shapes[0][0]) - 1
    sbase = [[0] * n for _ in range(levels)]
    ebase = [[0] * n for _ in range(levels)]
    s_at = e_at = 0
    for level in range(levels):
        for w, (sb, eb) in enumerate(shapes):
            sbase[level][w], ebase[level][w] = s_at, e_at
            s_at += sb[level + 1] - sb[level]
            e_at += eb[level + 1] - eb[level]
    parts = cluster.finish([sh[0] for sh in shapes], sbase)
    initial = tuple(range(sum(sb[1] - sb[0] for sb, _ in shapes)))
    fps: array[int] = array("q")
    parent: array[int] = array("q")
    start: array[int] = array("q")
    dst: array[int] = array("i")
    bit: array[int] = array("h")
    act: array[int] = array("b")
    enabled: array[int] = array("q")
    flags = [bytearray() for _ in parts[0]["flags"]]
    kept: list[Any] = []
    make = type(next(iter(engine.init_states())))
    for level in range(levels):
        for w, part in enumerate(parts):
            sb, eb = shapes[w]
            a, b, ea, eb_ = sb[level], sb[level + 1], eb[level], eb[level + 1]
            fps.extend(part["fps"][a:b])
            parent.extend(part["parent"][a:b])
            shift = ebase[level][w] - ea
            start.extend(array("q", [x + shift for x in part["start"][a:b]]))
            dst.extend(part["dst"][ea:eb_])
            if opts.liveness:
                bit.extend(part["bit"][ea:eb_])
                enabled.extend(part["enabled"][a:b])
            if opts.keep:
                act.extend(part["act"][ea:eb_])
                got = part["states"][a:b]
                kept.extend([make(*k) for k in got] if part.get("as_keys") else got)
            for mine, theirs in zip(flags, part["flags"], strict=True):
                mine.extend(theirs[a:b])
    start.append(len(dst))
    if opts.keep:
        src = array("i")
        for v in range(len(fps)):
            src.extend(array("i", [v]) * (start[v + 1] - start[v]))
        return Graph(
            tuple(kept), initial, src, act, dst, parent, tuple(engine.action_names),
            bit if opts.liveness else array("h"), enabled if opts.liveness else [],
        )  # fmt: skip
    from redletter.python_model.liveness import temporal_of

    spec = temporal_of(engine)
    labelled: list[tuple[str, bytearray, bytearray | None]] = []
    it = iter(flags)
    for prop in spec.properties:
        p = next(it)
        q = next(it) if prop.q is not None else None
        labelled.append((prop.label, p, q))
    return FairGraph(len(fps), initial, parent, start, dst, bit, enabled, tuple(labelled), fps)
