"""A chat room over TCP with asyncio, with Chandy–Lamport snapshots of it.

Written the way a chat program is usually written, then instrumented: every
line that exists only for redletter ends with the comment ``# rl`` (count them
with ``grep -c '# rl'``).

Three people (``alice``, ``bob``, ``carol``) each run a small server; each one
opens a TCP connection to every other one, so every directed pair is one FIFO
channel.  Each person says a number of lines at random moments; a line goes
to everybody.  A person's state is what they said and heard (two counters).
The messages on the wire are JSON lines: ``{"text": "..."}`` for chat,
``{"marker": "alice-1"}`` for a snapshot's marker.  Outgoing messages go into
one queue per connection, which a writer task drains in order, so a message's
place on its channel is fixed when it is queued: that is where its send is
logged.

Snapshots: ``alice`` and ``carol`` start one each at the same moment (ids
``alice-1`` and ``carol-1``).  A person turns red at their own start or at the
first marker of a snapshot, records their counters, *saves them* (an ``await``
that lets the other coroutines run) and then queues a marker on every
outgoing connection; posting is held back meanwhile by the ``gate`` lock, so
no chat line can slip between the recording and the markers.  Lines that
arrive on a connection after the recording and before that connection's marker
are recorded as in flight.

Two bugs, each a flag (``--bug``):

``marker-as-message``
    the recording loop runs on every incoming message before looking at its
    kind, so a marker of the *other* snapshot that arrives on a channel being
    recorded is recorded as a chat line;
``late-marker``
    the gate is released before the save, so a chat line can go out on a
    connection after the recording and before its marker.

Run it::

    python -m redletter.conformance.adapters.instrument.examples.chat --out /tmp/chat
    .venv/bin/redletter conform validate /tmp/chat/*.ndjson
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from redletter.conformance.adapters.instrument.redletter_recorder import Recorder, attach, detach

__all__ = ["BUGS", "PEOPLE", "main", "run_chat"]

BUGS: Final = ("marker-as-message", "late-marker")
PEOPLE: Final = ("alice", "bob", "carol")
STARTERS: Final = (("alice", "alice-1"), ("carol", "carol-1"))


@dataclass
class Snapshot:
    counters: dict[str, int]
    open: set[str]
    channels: dict[str, list[Any]] = field(default_factory=dict)
    done: bool = False


class Person:
    def __init__(
        self, name: str, others: list[str], logs: Path, rng: random.Random, bug: str | None
    ) -> None:
        self.name, self.others, self.rng, self.bug = name, others, rng, bug
        self.said = 0
        self.heard = 0
        self.snapshots: dict[str, Snapshot] = {}
        self.queues: dict[str, asyncio.Queue[dict[str, Any] | None]] = {
            q: asyncio.Queue() for q in others
        }
        self.gate = asyncio.Lock()  # held while posting, and from recording to the markers
        self.completed = asyncio.Event()
        self.readers: list[asyncio.Task[None]] = []
        self.crash_at = 0
        self.rec = Recorder(name, logs / f"{name}.ndjson")  # rl
        self.rec.init(self.counters(), inputs=others, outputs=others)  # rl

    def counters(self) -> dict[str, int]:
        return {"said": self.said, "heard": self.heard}

    def logged(self) -> None:
        if self.crash_at and self.rec.seq >= self.crash_at:
            os._exit(70)  # the process dies mid-run (--crash)

    # -- the network ---------------------------------------------------------------

    async def serve(self) -> int:
        server = await asyncio.start_server(self.accept, "127.0.0.1", 0)
        self.server = server
        return int(server.sockets[0].getsockname()[1])

    async def accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        hello = json.loads(await reader.readline())
        src = hello["hello"]
        task = asyncio.current_task()
        assert task is not None
        self.readers.append(task)
        while line := await reader.readline():
            await self.handle(src, json.loads(line))
        writer.close()

    async def connect(self, ports: dict[str, int]) -> list[asyncio.Task[None]]:
        tasks = []
        for q in self.others:
            _, writer = await asyncio.open_connection("127.0.0.1", ports[q])
            writer.write((json.dumps({"hello": self.name}) + "\n").encode())
            tasks.append(asyncio.create_task(self.write_out(q, writer)))
        return tasks

    async def write_out(self, q: str, writer: asyncio.StreamWriter) -> None:
        while (msg := await self.queues[q].get()) is not None:
            writer.write((json.dumps(msg) + "\n").encode())
            await writer.drain()
        writer.close()
        await writer.wait_closed()

    # -- chatting --------------------------------------------------------------------

    async def chat(self, lines: int) -> None:
        for _ in range(lines):
            await asyncio.sleep(self.rng.uniform(0.001, 0.004))
            async with self.gate:
                self.said += 1
                text = f"{self.name}: line {self.said}"
                for q in self.others:
                    clock = self.rec.send_app(q, text, state=self.counters())  # rl
                    self.queues[q].put_nowait(attach({"text": text}, clock))  # rl: attach
                    self.logged()

    async def handle(self, src: str, raw: dict[str, Any]) -> None:
        msg, clock = detach(raw)  # rl: detach
        if "marker" in msg:
            self.rec.receive_marker(src, msg["marker"], clock)  # rl
        else:
            self.heard += 1
            self.rec.receive_app(src, msg["text"], clock, state=self.counters())  # rl
        self.logged()
        if self.bug == "marker-as-message" or "marker" not in msg:
            for k, snap in self.snapshots.items():
                if src in snap.open:  # still recording that channel
                    snap.channels[src].append(msg.get("text", msg))
                    self.rec.record_message(k, src, msg.get("text", msg))  # rl
        if "marker" in msg:
            k = msg["marker"]
            if k not in self.snapshots:
                await self.turn_red(k)
            snap = self.snapshots[k]
            snap.open.discard(src)
            self.rec.close_channel(k, src)  # rl
            self.check_done(k)

    # -- snapshots ---------------------------------------------------------------------

    async def start(self, k: str) -> None:
        self.rec.start_snapshot(k)  # rl
        await self.turn_red(k)
        self.check_done(k)

    async def turn_red(self, k: str) -> None:
        async with self.gate:
            snap = Snapshot(self.counters(), set(self.others), {q: [] for q in self.others})
            self.snapshots[k] = snap
            self.rec.record_state(k, snap.counters)  # rl
            if self.bug == "late-marker":
                self.gate.release()  # BUG: posting may resume before the markers
            await self.save(k, snap)  # other coroutines run here
            if self.bug == "late-marker":
                await self.gate.acquire()
            for q in self.others:
                clock = self.rec.send_marker(q, k)  # rl
                self.queues[q].put_nowait(attach({"marker": k}, clock))  # rl: attach

    async def save(self, k: str, snap: Snapshot) -> None:
        await asyncio.sleep(0.01)  # stands for writing the recorded state to disk

    def check_done(self, k: str) -> None:
        snap = self.snapshots[k]
        if not snap.open and not snap.done:
            snap.done = True
            self.rec.complete(k, state=snap.counters, channels=snap.channels)  # rl
            if sum(s.done for s in self.snapshots.values()) == len(STARTERS):
                self.completed.set()


async def _run(
    logs: Path, seed: int, bug: str | None, lines: int, crash: tuple[str, int] | None
) -> None:
    rng = random.Random(seed)
    people = {
        n: Person(n, [q for q in PEOPLE if q != n], logs, random.Random(rng.random()), bug)
        for n in PEOPLE
    }
    if crash is not None:
        people[crash[0]].crash_at = crash[1]
    ports = {n: await p.serve() for n, p in people.items()}
    writers = [t for p in people.values() for t in await p.connect(ports)]
    talk = [asyncio.create_task(p.chat(lines)) for p in people.values()]
    await asyncio.sleep(0.015)
    await asyncio.gather(*(people[n].start(k) for n, k in STARTERS))
    await asyncio.gather(*talk)
    with contextlib.suppress(TimeoutError):  # a snapshot that never completes: the logs say so
        await asyncio.wait_for(
            asyncio.gather(*(p.completed.wait() for p in people.values())), timeout=10
        )
    for p in people.values():
        for q in p.queues.values():
            q.put_nowait(None)
    await asyncio.gather(*writers)
    for p in people.values():
        await asyncio.gather(*p.readers)
        p.server.close()
        p.rec.close(state=p.counters())  # rl


def run_chat(
    logs: Path,
    *,
    seed: int = 0,
    bug: str | None = None,
    lines: int = 30,
    crash: tuple[str, int] | None = None,
) -> list[Path]:
    """Run the chat once; the event logs it wrote (one per person)."""
    if bug is not None and bug not in BUGS:
        raise ValueError(f"unknown bug {bug!r}: one of {', '.join(BUGS)}")
    logs.mkdir(parents=True, exist_ok=True)
    asyncio.run(_run(logs, seed, bug, lines, crash))
    return [logs / f"{n}.ndjson" for n in PEOPLE]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="A chat over TCP (asyncio) with snapshots.")
    ap.add_argument("--out", type=Path, required=True, help="directory for the event logs")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--lines", type=int, default=30, help="lines each person says")
    ap.add_argument("--bug", choices=BUGS)
    ap.add_argument("--crash", metavar="PERSON:N", help="the process dies at PERSON's N-th event")
    a = ap.parse_args(argv)
    crash = None
    if a.crash:
        who, _, n = a.crash.partition(":")
        crash = (who, int(n))
    for path in run_chat(a.out, seed=a.seed, bug=a.bug, lines=a.lines, crash=crash):
        sys.stdout.write(f"{path}\n")
    return 0
