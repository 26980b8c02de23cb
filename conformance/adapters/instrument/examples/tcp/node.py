"""One node of the TCP token app: an OS process, asyncio, TCP links on 127.0.0.1.

The application is the model's TokenApp: a node holds tokens and, a bounded
number of times, sends some of them (1..all it holds) to a neighbour; a node
that receives a message adds its tokens.  The Chandy–Lamport snapshot runs on
top: any node may start a snapshot ``k`` (several at once, several snapshots at
once); a node turns red in ``k`` when it starts it or at the first marker of
``k``, records its token count and sends a marker of ``k`` on every output link
before any later message there; it records the messages that arrive on an
input link while red and before that link's marker, and the snapshot is
complete here when every input link's marker has arrived.

Every link ``p -> q`` is its own TCP connection (opened by ``p``), so it is FIFO;
each link delays its messages by a fixed latency (a slow network), so messages
are in flight while a snapshot runs.  The node writes its event log with
:class:`~redletter.conformance.adapters.instrument.redletter_recorder.Recorder`, the
vector clock riding on every message under ``"vc"``.

Run by the launcher (:mod:`.launcher`)::

    python -m redletter.conformance.adapters.instrument.examples.tcp.node CONFIG_JSON

Control lines (JSON) on stdin: ``{"peers": {name: port}}``, ``{"go": true}``,
``{"start": k}``, ``{"stop": true}``; on stdout: ``{"port": n}``,
``{"ready": true}``, ``{"complete": k}``, ``{"idle": true}``, ``{"bye": true}``.

``bug`` (one of :data:`BUGS`, or none) switches on a wrong implementation:

``no-channel-recording``
    never records a message in flight (the snapshot's channels stay empty);
``late-marker``
    on turning red, holds each output link's marker back until the next app
    message on that link has gone (or a while has passed): the app message
    overtakes its marker;
``stop-at-first-marker``
    stops recording every input link of a snapshot at the first marker of it
    (instead of each link at its own marker).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import sys
from dataclasses import dataclass, field
from typing import Any, Final

from redletter.conformance.adapters.instrument.redletter_recorder import Recorder, attach, detach

__all__ = ["BUGS", "Node", "main"]

BUGS: Final = ("no-channel-recording", "late-marker", "stop-at-first-marker")


@dataclass
class _Snapshot:
    state: int  #: the token count recorded when this node turned red
    recorded: dict[str, list[int]]  #: input link's source -> messages recorded
    closed: set[str] = field(default_factory=set)  #: input links whose marker arrived
    done: bool = False


class _Link:
    """An output link: one TCP connection, FIFO, every message delayed by ``latency``."""

    def __init__(self, writer: asyncio.StreamWriter, latency: float) -> None:
        self.writer = writer
        self.latency = latency
        self.queue: asyncio.Queue[tuple[float, bytes] | None] = asyncio.Queue()
        self.held: list[int] = []  #: markers held back (the late-marker bug)
        self.task = asyncio.get_running_loop().create_task(self._pump())

    def put(self, message: dict[str, Any]) -> None:
        due = asyncio.get_running_loop().time() + self.latency
        self.queue.put_nowait((due, (json.dumps(message) + "\n").encode()))

    async def _pump(self) -> None:
        loop = asyncio.get_running_loop()
        while (item := await self.queue.get()) is not None:
            due, data = item
            delay = due - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            try:
                self.writer.write(data)
                await self.writer.drain()
            except ConnectionError:  # the peer stopped first: the rest stays in flight
                return

    async def close(self) -> None:
        self.queue.put_nowait(None)
        await self.task
        self.writer.close()
        with contextlib.suppress(ConnectionError):
            await self.writer.wait_closed()


class Node:
    """One node: its tokens, its links, its snapshots and its recorder."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.name: str = config["name"]
        self.inputs: list[str] = list(config["inputs"])
        self.outputs: list[str] = list(config["outputs"])
        self.tokens: int = config["tokens"]
        self.steps: int = config["steps"]
        self.think: float = config.get("think", 0.0002)
        self.patience: float = config.get("patience", 0.02)
        self.latency: dict[str, float] = dict(config.get("latency", {}))
        self.hold: float = config.get("hold", 0.02)
        self.bug: str | None = config.get("bug")
        if self.bug is not None and self.bug not in BUGS:
            raise ValueError(f"unknown bug {self.bug!r} (one of {', '.join(BUGS)})")
        self.rng = random.Random(f"{config['seed']}:{self.name}")
        self.rec = Recorder(self.name, config["log"], append=config.get("shared", False))
        self.links: dict[str, _Link] = {}
        self.accepted: set[str] = set()
        self.snapshots: dict[int, _Snapshot] = {}
        self.all_linked = asyncio.Event()
        self.got_tokens = asyncio.Event()
        self.readers: list[tuple[asyncio.Task[Any], asyncio.StreamWriter]] = []
        self.stopping = False

    # -- control ----------------------------------------------------------------

    def tell(self, **message: Any) -> None:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()

    async def run(self) -> None:
        server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        self.tell(port=port)
        control = asyncio.StreamReader()
        loop = asyncio.get_running_loop()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(control), sys.stdin)
        app: asyncio.Task[None] | None = None
        try:
            while line := await control.readline():
                cmd = json.loads(line)
                if "peers" in cmd:
                    await self._connect(cmd["peers"])
                elif "go" in cmd:
                    app = loop.create_task(self._app())
                elif "start" in cmd:
                    self.start(int(cmd["start"]))
                elif "stop" in cmd:
                    break
        finally:
            if app is not None:
                app.cancel()
            for link in self.links.values():
                self._release(link)
                await link.close()
            self.stopping = True  # what arrives from now on stays in flight
            for _, writer in self.readers:
                writer.close()
            await asyncio.gather(*(task for task, _ in self.readers), return_exceptions=True)
            server.close()
            self.rec.close()
            self.tell(bye=True)

    async def _connect(self, peers: dict[str, int]) -> None:
        for q in self.outputs:
            _, writer = await asyncio.open_connection("127.0.0.1", peers[q])
            writer.write((json.dumps({"from": self.name}) + "\n").encode())
            self.links[q] = _Link(writer, self.latency.get(q, 0.002))
        self._check_linked()
        await self.all_linked.wait()
        self.tell(ready=True)

    def _check_linked(self) -> None:
        if len(self.links) == len(self.outputs) and self.accepted == set(self.inputs):
            self.all_linked.set()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        hello = json.loads(await reader.readline())
        src = hello["from"]
        self.accepted.add(src)
        self._check_linked()
        task = asyncio.current_task()
        assert task is not None
        self.readers.append((task, writer))
        with contextlib.suppress(ConnectionError):
            while (line := await reader.readline()) and not self.stopping:
                self.receive(src, json.loads(line))

    async def _app(self) -> None:
        """``steps`` rounds: wait (a while at most) for tokens, think, send some."""
        for _ in range(self.steps):
            if self.tokens == 0:
                self.got_tokens.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.got_tokens.wait(), self.patience)
            await asyncio.sleep(self.rng.uniform(0, 2 * self.think))
            if self.tokens > 0 and self.outputs:
                self.send_tokens(self.rng.choice(self.outputs), self.rng.randint(1, self.tokens))
        self.tell(idle=True)

    # -- the application and the snapshot algorithm ------------------------------

    def send_tokens(self, dst: str, n: int) -> None:
        """SendApp: give ``n`` tokens to ``dst``."""
        link = self.links[dst]
        with self.rec.step():
            self.tokens -= n
            clock = self.rec.send_app(dst, n, state=self.tokens)
            link.put(attach({"tokens": n}, clock))
            if self.bug == "late-marker":
                self._release(link)

    def receive(self, src: str, message: dict[str, Any]) -> None:
        body, clock = detach(message)
        with self.rec.step():
            if "marker" in body:
                self._receive_marker(src, int(body["marker"]), clock)
            else:
                self._receive_tokens(src, int(body["tokens"]), clock)

    def _receive_tokens(self, src: str, n: int, clock: dict[str, int] | None) -> None:
        self.tokens += n
        self.got_tokens.set()
        self.rec.receive_app(src, n, clock, state=self.tokens)
        for k, snap in self.snapshots.items():
            if src in snap.closed or snap.done or self.bug == "no-channel-recording":
                continue
            if self.bug == "stop-at-first-marker" and snap.closed:
                continue
            snap.recorded[src].append(n)
            self.rec.record_message(k, src, n)

    def _receive_marker(self, src: str, k: int, clock: dict[str, int] | None) -> None:
        self.rec.receive_marker(src, k, clock)
        snap = self.snapshots.get(k)
        if snap is None:
            snap = self._turn_red(k)
        snap.closed.add(src)
        self.rec.close_channel(k, src)
        if snap.closed >= set(self.inputs) and not snap.done:
            snap.done = True
            self.rec.complete(k, state=snap.state, channels=snap.recorded)
            self.tell(complete=k)

    def start(self, k: int) -> None:
        """StartSnapshot: unless this node is already red in ``k``."""
        if k in self.snapshots:
            return
        with self.rec.step():
            self.rec.start_snapshot(k)
            self._turn_red(k)

    def _turn_red(self, k: int) -> _Snapshot:
        snap = _Snapshot(self.tokens, {q: [] for q in self.inputs})
        self.snapshots[k] = snap
        self.rec.record_state(k, self.tokens)
        for q, link in self.links.items():
            if self.bug == "late-marker":
                link.held.append(k)
                asyncio.get_running_loop().call_later(self.hold, self._release, link)
            else:
                link.put(attach({"marker": k}, self.rec.send_marker(q, k)))
        return snap

    def _release(self, link: _Link) -> None:
        """Send the markers held back on ``link`` (the late-marker bug)."""
        q = next(name for name, x in self.links.items() if x is link)
        held, link.held = link.held, []
        with self.rec.step():
            for k in held:
                link.put(attach({"marker": k}, self.rec.send_marker(q, k)))


def main(argv: list[str] | None = None) -> int:
    """Run one node with the JSON config given as the only argument."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        sys.stderr.write("usage: node.py CONFIG_JSON\n")
        return 2
    config = json.loads(args[0])

    async def go() -> None:
        await Node(config).run()

    asyncio.run(go())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
