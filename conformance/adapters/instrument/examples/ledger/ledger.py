"""Three ledgers over TCP with threads, whose transfers have two halves.

Written the way a threaded socket program is usually written, then
instrumented: every line that exists only for redletter ends with the comment
``# rl`` (count them with ``grep -c '# rl'``).

Three branches (``oslo``, ``rome``, ``lima``) hold balances and are linked by
one TCP connection each way (six directed channels).  Each branch has a teller
thread and a reader thread per incoming connection.  A transfer has two halves
that do not happen together, as in many real programs:

``--order debit-first`` (the default)
    the teller debits the balance (under the branch's lock), prepares the
    message for a while (a sleep), then writes it on the connection (under that
    connection's lock, the only lock a write takes);
``--order write-first``
    the teller writes the transfer first, waits for the network for a while,
    and only then debits the balance.

Neither half is atomic with the other, so each is logged where it happens:
``send_change`` at the debit and ``send_app(change=...)`` at the write, or
``send_app(split=True)`` at the write and ``apply`` at the debit.  A transfer
whose first half is done and whose second is not is *in progress*.

Audits (snapshots): ``rome`` starts ``audit-1`` while its own teller is in the
middle of a transfer (the operator is told when the first half is done), and
``oslo`` starts ``audit-2`` a little later.  A branch turns red at its start or
at the first marker of an audit.  Turning red, it stops new transfers from
starting and lets every transfer in progress finish *on the side of the cut its
first half is on*: debit first, it records its balance (the debit is in it),
waits for the writes in progress, then sends a marker on every outgoing
connection; write first, it waits for the debits in progress, then records and
sends its markers.  It records the transfers that arrive on a connection after
recording and before that connection's marker.  Money is conserved: every audit
must find the 300 the branches started with (``--conserved-sum amount``).

The bug (``--bug straddle``) is the same program without the wait.  Debit
first, the debit is in the recorded balance and the write comes after the
marker (the snapshot loses the money: ``straddling-send``); write first, the
write is before the marker and the debit after the recorded balance (the
snapshot counts the money twice: ``red-letter-order``).

``--log one-event`` logs each transfer as one send at its write, with the
balance then (what a program does when it logs "where the message's place on
its channel is fixed"): the correct debit-first run then fails with
``red-letter-order``, although its audits are right, since the log puts the
debit after the recording.  Two halves are what the program does.

Run it::

    python -m redletter.conformance.adapters.instrument.examples.ledger --out /tmp/ledger
    .venv/bin/redletter conform validate --conserved-sum amount /tmp/ledger/*.ndjson
"""

from __future__ import annotations

import argparse
import json
import random
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from redletter.conformance.adapters.instrument.redletter_recorder import Recorder, attach, detach

__all__ = ["BRANCHES", "BUGS", "LOGGING", "ORDERS", "main", "run_ledger"]

BUGS: Final = ("straddle",)
ORDERS: Final = ("debit-first", "write-first")
LOGGING: Final = ("two-halves", "one-event")
BRANCHES: Final = {"oslo": 100, "rome": 120, "lima": 80}
#: (branch, audit, the teller's transfer during which the operator starts it; 0: later)
STARTERS: Final = (("rome", "audit-1", 5), ("oslo", "audit-2", 0))


@dataclass
class Audit:
    balance: int
    open: set[str]
    channels: dict[str, list[Any]] = field(default_factory=dict)
    done: bool = False


class Branch:
    def __init__(
        self, name: str, logs: Path, rng: random.Random, order: str, bug: str | None, log: str
    ) -> None:
        self.name, self.rng, self.order, self.bug = name, rng, order, bug
        self.halves = log == "two-halves"  # rl: how a transfer is logged
        self.balance = BRANCHES[name]
        self.others = [q for q in BRANCHES if q != name]
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)  # a transfer or an audit moved on
        self.in_progress = 0  # transfers with one half done
        self.pending = 0  # write first: amounts written and not debited yet
        self.gate = 0  # audits turning red here: no transfer starts meanwhile
        self.conns: dict[str, socket.socket] = {}
        self.conn_locks = {q: threading.Lock() for q in self.others}
        self.audits: dict[str, Audit] = {}
        self.turning: set[str] = set()
        self.all_done = threading.Event()
        self.half_done = threading.Event()  # the operator's cue (see STARTERS)
        self.readers: list[threading.Thread] = []
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.rec = Recorder(name, logs / f"{name}.ndjson")  # rl
        self.rec.init(self.balance, inputs=self.others, outputs=self.others)  # rl

    # -- the network -----------------------------------------------------------------

    def accept_all(self) -> None:
        for _ in self.others:
            conn, _ = self.server.accept()
            t = threading.Thread(target=self.read, args=(conn,), daemon=True)
            self.readers.append(t)
            t.start()

    def connect(self, ports: dict[str, int]) -> None:
        for q in self.others:
            sock = socket.create_connection(("127.0.0.1", ports[q]))
            sock.sendall((json.dumps({"from": self.name}) + "\n").encode())
            self.conns[q] = sock

    def write(self, q: str, msg: dict[str, Any]) -> None:
        """Write on the connection to ``q``; the caller holds its lock."""
        self.conns[q].sendall((json.dumps(msg) + "\n").encode())

    def read(self, conn: socket.socket) -> None:
        with conn, conn.makefile("r", encoding="utf-8") as lines:
            src = json.loads(next(lines))["from"]
            for line in lines:
                msg, clock = detach(json.loads(line))  # rl: detach
                with self.lock:
                    self.handle(src, msg, clock)

    # -- transfers ----------------------------------------------------------------------

    def teller(self, transfers: int, cue_at: int) -> None:
        made = 0
        for _ in range(transfers):
            time.sleep(self.rng.uniform(0.001, 0.003))
            q = self.rng.choice(self.others)
            with self.lock:
                self.changed.wait_for(lambda: not self.gate)
                amount = self.rng.randint(1, 9)
                if self.balance - self.pending < amount:
                    continue
                self.in_progress += 1
                made += 1
                if self.order == "debit-first":  # the first half: the debit
                    self.balance -= amount
                    if self.halves:  # rl
                        change = self.rec.send_change(
                            q, {"amount": amount}, state=self.balance
                        )  # rl
                else:
                    self.pending += amount
            if self.order == "write-first":  # the first half: the write
                with self.conn_locks[q]:
                    clock = self.rec.send_app(q, {"amount": amount}, split=self.halves)  # rl
                    self.write(q, attach({"kind": "transfer", "amount": amount}, clock))  # rl
            if made == cue_at:
                self.half_done.set()  # the operator starts an audit now
            time.sleep(self.rng.uniform(0.005, 0.015) + (0.05 if made == cue_at else 0))
            if self.order == "debit-first":  # the second half: the write
                with self.conn_locks[q]:
                    if self.halves:  # rl
                        clock = self.rec.send_app(q, {"amount": amount}, change=change)  # rl
                    else:  # rl: one event, at the write, with the balance now
                        clock = self.rec.send_app(q, {"amount": amount}, state=self.balance)  # rl
                    self.write(q, attach({"kind": "transfer", "amount": amount}, clock))  # rl
            with self.lock:
                if self.order == "write-first":  # the second half: the debit
                    self.balance -= amount
                    self.pending -= amount
                    if self.halves:  # rl
                        self.rec.apply(clock[self.name], state=self.balance)  # rl
                self.in_progress -= 1
                self.changed.notify_all()

    def handle(self, src: str, msg: dict[str, Any], clock: dict[str, int] | None) -> None:
        """A message from ``src``; the caller holds ``self.lock``."""
        if msg["kind"] == "marker":
            k = msg["audit"]
            self.rec.receive_marker(src, k, clock)  # rl
            if k not in self.audits:
                self.turn_red(k)
            audit = self.audits[k]
            audit.open.discard(src)
            self.rec.close_channel(k, src)  # rl
            self.check_done(k)
            return
        self.balance += msg["amount"]
        self.rec.receive_app(src, {"amount": msg["amount"]}, clock, state=self.balance)  # rl
        for k, audit in self.audits.items():
            if src in audit.open:
                audit.channels[src].append({"amount": msg["amount"]})
                self.rec.record_message(k, src, {"amount": msg["amount"]})  # rl

    # -- audits -----------------------------------------------------------------------------

    def start(self, k: str) -> None:
        with self.lock:
            if k in self.audits or k in self.turning:
                return
            self.rec.start_snapshot(k)  # rl
            self.turn_red(k)
            self.check_done(k)

    def turn_red(self, k: str) -> None:
        """Record for audit ``k`` and send its markers; the caller holds ``self.lock``."""
        if k in self.turning:  # another thread is turning red for it: wait for it
            self.changed.wait_for(lambda: k in self.audits)
            return
        self.turning.add(k)
        self.gate += 1
        finish = self.bug != "straddle"  # transfers in progress end on their first half's side
        if finish and self.order == "write-first":
            # written before the markers: their debits come before the recording
            self.changed.wait_for(lambda: self.in_progress == 0)
        audit = Audit(self.balance, set(self.others), channels={q: [] for q in self.others})
        self.audits[k] = audit
        self.rec.record_state(k, self.balance)  # rl
        if finish and self.order == "debit-first":
            # debited in the recorded balance: their writes come before the markers
            self.changed.wait_for(lambda: self.in_progress == 0)
        for q in self.others:
            with self.conn_locks[q]:
                clock = self.rec.send_marker(q, k)  # rl
                self.write(q, attach({"kind": "marker", "audit": k}, clock))  # rl: attach
        self.turning.discard(k)
        self.gate -= 1
        self.changed.notify_all()

    def check_done(self, k: str) -> None:
        audit = self.audits[k]
        if not audit.open and not audit.done:
            audit.done = True
            self.rec.complete(k, state=audit.balance, channels=audit.channels)  # rl
            if sum(a.done for a in self.audits.values()) == len(STARTERS):
                self.all_done.set()


def run_ledger(
    logs: Path,
    *,
    seed: int = 0,
    order: str = "debit-first",
    bug: str | None = None,
    transfers: int = 20,
    log: str = "two-halves",
) -> list[Path]:
    """Run the ledgers once; the event logs they wrote (one per branch)."""
    if bug is not None and bug not in BUGS:
        raise ValueError(f"unknown bug {bug!r}: one of {', '.join(BUGS)}")
    if order not in ORDERS:
        raise ValueError(f"unknown order {order!r}: one of {', '.join(ORDERS)}")
    if log not in LOGGING:
        raise ValueError(f"unknown logging {log!r}: one of {', '.join(LOGGING)}")
    logs.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    branches = {n: Branch(n, logs, random.Random(rng.random()), order, bug, log) for n in BRANCHES}
    ports = {n: b.port for n, b in branches.items()}
    accepting = [threading.Thread(target=b.accept_all) for b in branches.values()]
    for t in accepting:
        t.start()
    for b in branches.values():
        b.connect(ports)
    for t in accepting:
        t.join()
    cues = {n: at for n, _, at in STARTERS}
    tellers = [
        threading.Thread(target=b.teller, args=(transfers, cues.get(n, 0)))
        for n, b in branches.items()
    ]
    for t in tellers:
        t.start()
    for n, k, at in STARTERS:  # the operator
        b = branches[n]
        if at:
            b.half_done.wait(timeout=10)
        else:
            time.sleep(0.02)
        b.start(k)
    for t in tellers:
        t.join()
    for b in branches.values():
        b.all_done.wait(timeout=10)  # an audit that never completes: the logs say so
    for b in branches.values():
        for q, sock in b.conns.items():
            with b.conn_locks[q]:
                sock.close()
    for b in branches.values():
        for t in b.readers:
            t.join(timeout=10)
        b.server.close()
        with b.lock:
            b.rec.close(state=b.balance)  # rl
    return [logs / f"{n}.ndjson" for n in BRANCHES]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description="Three ledgers over TCP whose transfers have two halves."
    )
    ap.add_argument("--out", type=Path, required=True, help="directory for the event logs")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--order", choices=ORDERS, default="debit-first")
    ap.add_argument("--transfers", type=int, default=20, help="transfers each teller makes")
    ap.add_argument("--bug", choices=BUGS)
    ap.add_argument("--log", choices=LOGGING, default="two-halves", help="how a transfer is logged")
    a = ap.parse_args(argv)
    done = run_ledger(
        a.out, seed=a.seed, order=a.order, bug=a.bug, transfers=a.transfers, log=a.log
    )
    for path in done:
        sys.stdout.write(f"{path}\n")
    return 0
