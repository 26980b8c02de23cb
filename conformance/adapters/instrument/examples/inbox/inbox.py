"""A chat over TCP with asyncio whose lines are read now and shown later.

Written the way a chat program is usually written, then instrumented: every
line that exists only for redletter ends with the comment ``# rl`` (count them
with ``grep -c '# rl'``).

Three people (``ada``, ``ben``, ``cyd``) each run a small server and open a TCP
connection to every other one (every directed pair is one FIFO channel).  Each
says lines at random moments; a line goes to everybody.  A connection's reader
takes a line in at once and puts it in the person's *inbox*; a slower task (the
screen) takes lines out of the inbox one at a time and shows them, and only then
does the line count as heard.  A person's state is ``{"said": n, "heard": m}``.

So a line is taken in now and applied to the state later: it is logged in two
halves, ``receive_app(..., split=True)`` where the reader takes it in and
``apply`` where the screen shows it.  While a line waits in the inbox, it is in
neither the sender's nor the receiver's state: from the state's side, it is still
in the channel.

Snapshots: ``ada`` starts ``ada-1`` once her inbox holds lines, and ``cyd``
starts ``cyd-1`` a moment later.  A person turns red at their start or at the
first marker of a snapshot: they record their counters, *record every line
still in their inbox* as a message of the channel it came on (it is in flight,
from the state's side), and send their markers.  Lines that come in on a
channel after that and before the channel's marker are recorded too.

The bug (``--bug forget-inbox``) is the same program without recording the
inbox: the lines waiting there are in no recorded state and in no channel's
record, so the snapshot loses them (``missing-record``).

``--log one-event`` logs a line as one receipt where the reader takes it in
(with the counters then) and its showing as an internal event: the log then
says the line was in the state when the person recorded, and the bug passes
unseen.  Two halves are what the program does.

Run it::

    python -m redletter.conformance.adapters.instrument.examples.inbox --out /tmp/inbox
    .venv/bin/redletter conform validate /tmp/inbox/*.ndjson
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from redletter.conformance.adapters.instrument.redletter_recorder import Recorder, attach, detach

__all__ = ["BUGS", "LOGGING", "PEOPLE", "main", "run_inbox"]

BUGS: Final = ("forget-inbox",)
LOGGING: Final = ("two-halves", "one-event")
PEOPLE: Final = ("ada", "ben", "cyd")
STARTERS: Final = (("ada", "ada-1"), ("cyd", "cyd-1"))


@dataclass
class Snapshot:
    counters: dict[str, int]
    open: set[str]
    channels: dict[str, list[Any]] = field(default_factory=dict)
    done: bool = False


@dataclass
class Held:
    src: str
    text: str
    seq: int  # rl: the seq of its receipt, for apply and record_message


class Person:
    def __init__(
        self,
        name: str,
        others: list[str],
        logs: Path,
        rng: random.Random,
        bug: str | None,
        log: str = "two-halves",
    ) -> None:
        self.name, self.others, self.rng, self.bug = name, others, rng, bug
        self.halves = log == "two-halves"  # rl: how a line is logged
        self.said = 0
        self.heard = 0
        self.inbox: list[Held] = []
        self.arrived = asyncio.Event()
        self.snapshots: dict[str, Snapshot] = {}
        self.queues: dict[str, asyncio.Queue[dict[str, Any] | None]] = {
            q: asyncio.Queue() for q in others
        }
        self.completed = asyncio.Event()
        self.readers: list[asyncio.Task[None]] = []
        self.rec = Recorder(name, logs / f"{name}.ndjson")  # rl
        self.rec.init(self.counters(), inputs=others, outputs=others)  # rl

    def counters(self) -> dict[str, int]:
        return {"said": self.said, "heard": self.heard}

    # -- the network ---------------------------------------------------------------

    async def serve(self) -> int:
        self.server = await asyncio.start_server(self.accept, "127.0.0.1", 0)
        return int(self.server.sockets[0].getsockname()[1])

    async def accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        src = json.loads(await reader.readline())["hello"]
        task = asyncio.current_task()
        assert task is not None
        self.readers.append(task)
        while line := await reader.readline():
            self.take(src, json.loads(line))
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
            await asyncio.sleep(self.rng.uniform(0.001, 0.003))
            self.said += 1
            text = f"{self.name}: line {self.said}"
            for q in self.others:
                clock = self.rec.send_app(q, text, state=self.counters())  # rl
                self.queues[q].put_nowait(attach({"text": text}, clock))  # rl: attach

    def take(self, src: str, raw: dict[str, Any]) -> None:
        """A message off the wire: a line goes to the inbox, a marker is acted on."""
        msg, clock = detach(raw)  # rl: detach
        if "marker" in msg:
            k = msg["marker"]
            self.rec.receive_marker(src, k, clock)  # rl
            if k not in self.snapshots:
                self.turn_red(k)
            snap = self.snapshots[k]
            snap.open.discard(src)
            self.rec.close_channel(k, src)  # rl
            self.check_done(k)
            return
        if self.halves:  # rl
            seq = self.rec.receive_app(src, msg["text"], clock, split=True)  # rl: split
        else:  # rl: one receipt, with the counters now
            seq = self.rec.receive_app(src, msg["text"], clock, state=self.counters())  # rl
        self.inbox.append(Held(src, msg["text"], seq))
        self.arrived.set()
        for k, snap in self.snapshots.items():
            if src in snap.open:  # still recording that channel
                snap.channels[src].append(msg["text"])
                self.rec.record_message(k, src, msg["text"], of=seq)  # rl

    async def screen(self) -> None:
        """Show the lines of the inbox, one at a time: only then are they heard."""
        while True:
            while not self.inbox:
                self.arrived.clear()
                await self.arrived.wait()
            await asyncio.sleep(self.rng.uniform(0.002, 0.006))
            line = self.inbox.pop(0)
            self.heard += 1
            if self.halves:  # rl
                self.rec.apply(line.seq, state=self.counters())  # rl
            else:  # rl
                self.rec.internal("show", state=self.counters())  # rl

    # -- snapshots ---------------------------------------------------------------------

    def start(self, k: str) -> None:
        if k in self.snapshots:
            return
        self.rec.start_snapshot(k)  # rl
        self.turn_red(k)
        self.check_done(k)

    def turn_red(self, k: str) -> None:
        snap = Snapshot(self.counters(), set(self.others), {q: [] for q in self.others})
        self.snapshots[k] = snap
        self.rec.record_state(k, snap.counters)  # rl
        if self.bug != "forget-inbox":
            # the lines waiting in the inbox are in flight: the channels' records hold them
            for line in self.inbox:
                snap.channels[line.src].append(line.text)
                self.rec.record_message(k, line.src, line.text, of=line.seq)  # rl
        for q in self.others:
            clock = self.rec.send_marker(q, k)  # rl
            self.queues[q].put_nowait(attach({"marker": k}, clock))  # rl: attach

    def check_done(self, k: str) -> None:
        snap = self.snapshots[k]
        if not snap.open and not snap.done:
            snap.done = True
            self.rec.complete(k, state=snap.counters, channels=snap.channels)  # rl
            if sum(s.done for s in self.snapshots.values()) == len(STARTERS):
                self.completed.set()


async def _run(logs: Path, seed: int, bug: str | None, lines: int, log: str) -> None:
    rng = random.Random(seed)
    people = {
        n: Person(n, [q for q in PEOPLE if q != n], logs, random.Random(rng.random()), bug, log)
        for n in PEOPLE
    }
    ports = {n: await p.serve() for n, p in people.items()}
    writers = [t for p in people.values() for t in await p.connect(ports)]
    screens = [asyncio.create_task(p.screen()) for p in people.values()]
    talk = [asyncio.create_task(p.chat(lines)) for p in people.values()]
    first = people[STARTERS[0][0]]
    while len(first.inbox) < 2:  # the operator starts a snapshot while lines wait
        await asyncio.sleep(0.001)
    for n, k in STARTERS:
        people[n].start(k)
        await asyncio.sleep(0.005)
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
    while any(p.inbox for p in people.values()):  # the screens show what is left
        await asyncio.sleep(0.005)
    for s in screens:
        s.cancel()
    for p in people.values():
        p.rec.close(state=p.counters())  # rl


def run_inbox(
    logs: Path,
    *,
    seed: int = 0,
    bug: str | None = None,
    lines: int = 20,
    log: str = "two-halves",
) -> list[Path]:
    """Run the chat once; the event logs it wrote (one per person)."""
    if bug is not None and bug not in BUGS:
        raise ValueError(f"unknown bug {bug!r}: one of {', '.join(BUGS)}")
    if log not in LOGGING:
        raise ValueError(f"unknown logging {log!r}: one of {', '.join(LOGGING)}")
    logs.mkdir(parents=True, exist_ok=True)
    asyncio.run(_run(logs, seed, bug, lines, log))
    return [logs / f"{n}.ndjson" for n in PEOPLE]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="A chat whose lines are read now, shown later.")
    ap.add_argument("--out", type=Path, required=True, help="directory for the event logs")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--lines", type=int, default=20, help="lines each person says")
    ap.add_argument("--bug", choices=BUGS)
    ap.add_argument("--log", choices=LOGGING, default="two-halves", help="how a line is logged")
    a = ap.parse_args(argv)
    for path in run_inbox(a.out, seed=a.seed, bug=a.bug, lines=a.lines, log=a.log):
        sys.stdout.write(f"{path}\n")
    return 0
