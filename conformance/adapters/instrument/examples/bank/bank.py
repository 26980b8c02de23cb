"""Four bank branches over TCP with threads, and audits of the money in them.

Written the way a threaded socket program is usually written, then
instrumented: every line that exists only for redletter ends with the comment
``# rl`` (count them with ``grep -c '# rl'``).

The branches (``north``, ``east``, ``south``, ``west``) are linked by one-way
TCP connections (a directed topology, strongly connected)::

    north -> east -> south -> west -> north,   north -> south,   south -> north

Each branch has a balance guarded by a lock, a teller thread that transfers
random amounts to the branches it links to, a reader thread per incoming
connection, and a sender thread per outgoing connection that delays every
message by the link's latency (a slow network: messages are in flight while an
audit runs).  A message is queued for its sender under the branch's lock and
the queue is drained in order, so a message's place on its link is fixed when
it is queued: that is where its send is logged.  Messages are JSON lines:
``{"kind": "transfer", "amount": 7}`` or ``{"kind": "marker", "audit": "audit-N"}``.

Audits: ``north`` and ``south`` start one each at the same moment (the
operator holds both branches' locks while starting them).  A branch turns red
at its start or at the first marker of an audit: it records its balance and
queues a marker on every outgoing link; it records the transfers that arrive on
an incoming link after that and before the link's marker.  The money is
conserved: every audit must find the 250 the branches started with
(``--conserved-sum amount``).

Two bugs, each a flag (``--bug``):

``marker-as-message``
    the recording loop runs on every incoming message before looking at its
    kind, so a marker of the other audit arriving on a link being recorded is
    recorded as a transfer;
``record-after-close``
    a link is not closed when its marker arrives: the branch records its
    transfers until the audit is complete at the branch.

Run it::

    python -m redletter.conformance.adapters.instrument.examples.bank --out /tmp/bank
    .venv/bin/redletter conform validate --conserved-sum amount /tmp/bank/*.ndjson
"""

from __future__ import annotations

import argparse
import json
import queue
import random
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from redletter.conformance.adapters.instrument.redletter_recorder import Recorder, attach, detach

__all__ = ["BRANCHES", "BUGS", "LINKS", "main", "run_bank"]

BUGS: Final = ("marker-as-message", "record-after-close")
BRANCHES: Final = {"north": 100, "east": 50, "south": 80, "west": 20}
LINKS: Final = (
    ("north", "east"),
    ("east", "south"),
    ("south", "west"),
    ("west", "north"),
    ("north", "south"),
    ("south", "north"),
)
STARTERS: Final = (("north", "audit-N"), ("south", "audit-S"))


@dataclass
class Audit:
    balance: int
    open: set[str]
    markers: set[str] = field(default_factory=set)
    channels: dict[str, list[Any]] = field(default_factory=dict)
    done: bool = False


class Link:
    """An outgoing connection: a queue drained in order by a sender thread."""

    def __init__(self, sock: socket.socket, latency: float) -> None:
        self.sock, self.latency = sock, latency
        self.queue: queue.Queue[tuple[float, dict[str, Any]] | None] = queue.Queue()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def put(self, msg: dict[str, Any]) -> None:
        self.queue.put((time.monotonic() + self.latency, msg))

    def run(self) -> None:
        while (item := self.queue.get()) is not None:
            due, msg = item
            time.sleep(max(0.0, due - time.monotonic()))
            self.sock.sendall((json.dumps(msg) + "\n").encode())
        self.sock.close()


class Branch:
    def __init__(self, name: str, logs: Path, rng: random.Random, bug: str | None) -> None:
        self.name, self.rng, self.bug = name, rng, bug
        self.balance = BRANCHES[name]
        self.inputs = [a for a, b in LINKS if b == name]
        self.outputs = [b for a, b in LINKS if a == name]
        self.lock = threading.Lock()
        self.links: dict[str, Link] = {}
        self.audits: dict[str, Audit] = {}
        self.all_done = threading.Event()
        self.readers: list[threading.Thread] = []
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.rec = Recorder(name, logs / f"{name}.ndjson")  # rl
        self.rec.init(self.balance, inputs=self.inputs, outputs=self.outputs)  # rl

    # -- the network -----------------------------------------------------------------

    def accept_all(self) -> None:
        for _ in self.inputs:
            conn, _ = self.server.accept()
            t = threading.Thread(target=self.read, args=(conn,), daemon=True)
            self.readers.append(t)
            t.start()

    def connect(self, ports: dict[str, int], latency: dict[tuple[str, str], float]) -> None:
        for q in self.outputs:
            sock = socket.create_connection(("127.0.0.1", ports[q]))
            sock.sendall((json.dumps({"from": self.name}) + "\n").encode())
            self.links[q] = Link(sock, latency[(self.name, q)])

    def read(self, conn: socket.socket) -> None:
        with conn, conn.makefile("r", encoding="utf-8") as lines:
            src = json.loads(next(lines))["from"]
            for line in lines:
                msg, clock = detach(json.loads(line))  # rl: detach
                with self.lock:
                    self.handle(src, msg, clock)

    # -- the bank ----------------------------------------------------------------------

    def teller(self, transfers: int) -> None:
        for _ in range(transfers):
            time.sleep(self.rng.uniform(0.001, 0.004))
            with self.lock:
                if self.balance == 0:
                    continue
                q = self.rng.choice(self.outputs)
                amount = self.rng.randint(1, min(10, self.balance))
                self.balance -= amount
                clock = self.rec.send_app(q, {"amount": amount}, state=self.balance)  # rl
                self.links[q].put(attach({"kind": "transfer", "amount": amount}, clock))  # rl

    def handle(self, src: str, msg: dict[str, Any], clock: dict[str, int] | None) -> None:
        if msg["kind"] == "marker":
            self.rec.receive_marker(src, msg["audit"], clock)  # rl
        else:
            self.balance += msg["amount"]
            self.rec.receive_app(src, {"amount": msg["amount"]}, clock, state=self.balance)  # rl
        if self.bug == "marker-as-message" or msg["kind"] == "transfer":
            for k, audit in self.audits.items():
                if src in audit.open and not audit.done:
                    what = {key: v for key, v in msg.items() if key != "kind"}
                    audit.channels[src].append(what)
                    self.rec.record_message(k, src, what)  # rl
        if msg["kind"] == "marker":
            k = msg["audit"]
            if k not in self.audits:
                self.turn_red(k)
            audit = self.audits[k]
            audit.markers.add(src)
            if self.bug != "record-after-close":
                audit.open.discard(src)
                self.rec.close_channel(k, src)  # rl
            self.check_done(k)

    # -- audits --------------------------------------------------------------------------

    def start(self, k: str) -> None:
        """Start audit ``k``; the caller holds ``self.lock``."""
        self.rec.start_snapshot(k)  # rl
        self.turn_red(k)
        self.check_done(k)

    def turn_red(self, k: str) -> None:
        audit = Audit(self.balance, set(self.inputs), channels={q: [] for q in self.inputs})
        self.audits[k] = audit
        self.rec.record_state(k, self.balance)  # rl
        for q in self.outputs:
            clock = self.rec.send_marker(q, k)  # rl
            self.links[q].put(attach({"kind": "marker", "audit": k}, clock))  # rl: attach

    def check_done(self, k: str) -> None:
        audit = self.audits[k]
        if audit.markers == set(self.inputs) and not audit.done:
            audit.done = True
            self.rec.complete(k, state=audit.balance, channels=audit.channels)  # rl
            if sum(a.done for a in self.audits.values()) == len(STARTERS):
                self.all_done.set()


def run_bank(
    logs: Path, *, seed: int = 0, bug: str | None = None, transfers: int = 40
) -> list[Path]:
    """Run the bank once; the event logs it wrote (one per branch)."""
    if bug is not None and bug not in BUGS:
        raise ValueError(f"unknown bug {bug!r}: one of {', '.join(BUGS)}")
    logs.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    latency = {link: rng.uniform(0.005, 0.02) for link in LINKS}
    branches = {n: Branch(n, logs, random.Random(rng.random()), bug) for n in BRANCHES}
    ports = {n: b.port for n, b in branches.items()}
    accepting = [threading.Thread(target=b.accept_all) for b in branches.values()]
    for t in accepting:
        t.start()
    for b in branches.values():
        b.connect(ports, latency)
    for t in accepting:
        t.join()
    tellers = [threading.Thread(target=b.teller, args=(transfers,)) for b in branches.values()]
    for t in tellers:
        t.start()
    time.sleep(0.03)
    starters = [branches[n] for n, _ in STARTERS]
    for b in starters:  # the operator starts both audits at once
        b.lock.acquire()
    for (_, k), b in zip(STARTERS, starters, strict=True):
        b.start(k)
    for b in starters:
        b.lock.release()
    for t in tellers:
        t.join()
    for b in branches.values():
        b.all_done.wait(timeout=10)  # an audit that never completes: the logs say so
    for b in branches.values():
        for link in b.links.values():
            link.queue.put(None)
    for b in branches.values():
        for t in b.readers:
            t.join(timeout=10)
        b.server.close()
        with b.lock:
            b.rec.close(state=b.balance)  # rl
    return [logs / f"{n}.ndjson" for n in BRANCHES]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Four bank branches over TCP, with audits.")
    ap.add_argument("--out", type=Path, required=True, help="directory for the event logs")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--transfers", type=int, default=40, help="transfers each teller makes")
    ap.add_argument("--bug", choices=BUGS)
    a = ap.parse_args(argv)
    for path in run_bank(a.out, seed=a.seed, bug=a.bug, transfers=a.transfers):
        sys.stdout.write(f"{path}\n")
    return 0
