"""The Princeton COS 418 snapshot assignment's files: ``.top``, ``.events``, ``.snap``.

The formats are described in ``shared/formats/cos418.md``.  This module reads and
writes them (immutable values, exact round trip: ``parse(format(v)) == v`` and
``format(parse(text))`` is the canonical text), generates new scenarios from a
seed, and runs the original simulator's delivery schedule (:func:`simulate`) with a
correct Chandy–Lamport token application, so that expected outcomes can be produced
for any seed.

Every malformed line raises :class:`~redletter.errors.InputError` naming the file,
the line and what was expected.  ``#`` comment lines and blank lines are skipped in
all three formats (the original ``.events`` parser's comment check is broken, so
:func:`format_scenario` writes no comments).
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, TypeAlias

from redletter.errors import InputError, InternalError
from redletter.untrusted import MAX_SMALL_BYTES, read_input

__all__ = [
    "MAX_DELAY",
    "Link",
    "RecordedMessage",
    "Scenario",
    "Send",
    "Server",
    "SimResult",
    "Snap",
    "Snapshot",
    "Step",
    "Tick",
    "Topology",
    "check_scenario",
    "format_scenario",
    "format_snap",
    "format_topology",
    "generate_scenario",
    "generate_topology",
    "parse_scenario",
    "parse_snap",
    "parse_topology",
    "read_scenario",
    "read_snap",
    "read_topology",
    "simulate",
    "simulate_trace",
    "write_scenario",
    "write_snap",
    "write_topology",
]

Link: TypeAlias = tuple[str, str]
#: A step in the spec's action vocabulary: ``(action, params)``.
Step: TypeAlias = tuple[str, dict[str, object]]

#: The original simulator's delay bound: a message is due ``now + 1 + random(0..4)``.
MAX_DELAY: Final = 5


# ---------------------------------------------------------------------------
# values


@dataclass(frozen=True)
class Server:
    """A server of the topology and its initial tokens."""

    id: str
    tokens: int


@dataclass(frozen=True)
class Topology:
    """Servers (in file order) and directed links ``(src, dst)`` (in file order)."""

    servers: tuple[Server, ...]
    links: tuple[Link, ...]

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(s.id for s in self.servers)

    @property
    def total(self) -> int:
        """The number of tokens in the system (conserved by the token app)."""
        return sum(s.tokens for s in self.servers)

    def outbound(self, server: str) -> tuple[Link, ...]:
        """Links out of ``server``, sorted by destination (the simulator's order)."""
        return tuple(sorted(link for link in self.links if link[0] == server))

    def inbound(self, server: str) -> tuple[Link, ...]:
        """Links into ``server``, sorted by source."""
        return tuple(sorted(link for link in self.links if link[1] == server))

    def strongly_connected(self) -> bool:
        ids = self.ids
        if not ids:
            return False
        for forward in (True, False):
            seen = {ids[0]}
            todo = [ids[0]]
            while todo:
                here = todo.pop()
                for a, b in self.links:
                    there = b if forward and a == here else a if not forward and b == here else None
                    if there is not None and there not in seen:
                        seen.add(there)
                        todo.append(there)
            if len(seen) != len(ids):
                return False
        return True


@dataclass(frozen=True)
class Send:
    """``send <src> <dst> <n>``: src passes n tokens to dst."""

    src: str
    dst: str
    n: int


@dataclass(frozen=True)
class Snapshot:
    """``snapshot <server>``: that server starts the next snapshot (ids 0, 1, … in order)."""

    server: str


@dataclass(frozen=True)
class Tick:
    """``tick [n]``: advance simulated time n steps."""

    n: int = 1


Event: TypeAlias = Send | Snapshot | Tick


@dataclass(frozen=True)
class Scenario:
    """The events of an ``.events`` file, in order."""

    events: tuple[Event, ...]

    @property
    def snapshot_starters(self) -> tuple[str, ...]:
        """The starter of snapshot k at index k."""
        return tuple(e.server for e in self.events if isinstance(e, Snapshot))

    def groups(self) -> tuple[tuple[Send | Snapshot, ...], ...]:
        """The non-tick events split at ticks: events of one group are concurrent.

        Empty groups (consecutive ticks) are dropped: only the order matters.
        """
        out: list[tuple[Send | Snapshot, ...]] = []
        cur: list[Send | Snapshot] = []
        for e in self.events:
            if isinstance(e, Tick):
                if cur:
                    out.append(tuple(cur))
                cur = []
            else:
                cur.append(e)
        if cur:
            out.append(tuple(cur))
        return tuple(out)


@dataclass(frozen=True)
class RecordedMessage:
    """A message recorded in flight on the channel src→dst, holding n tokens."""

    src: str
    dst: str
    n: int


@dataclass(frozen=True)
class Snap:
    """One recorded global snapshot: its id, tokens per server, in-flight messages."""

    id: int
    tokens: tuple[tuple[str, int], ...]
    messages: tuple[RecordedMessage, ...] = ()

    def tokens_dict(self) -> dict[str, int]:
        return dict(self.tokens)

    def channel(self, link: Link) -> tuple[int, ...]:
        """The recorded messages of one channel, in order."""
        return tuple(m.n for m in self.messages if (m.src, m.dst) == link)


# ---------------------------------------------------------------------------
# parsing helpers


def _decode(data: str | bytes, path: str) -> str:
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputError(
            f"expected UTF-8 text, got a byte that is not UTF-8 (0x{data[exc.start]:02x})"
            f" at column {col}",
            code="RL-INPUT-COS418",
            path=path,
            line=line,
        ) from None


def _lines(text: str) -> list[tuple[int, list[str], str]]:
    """Numbered non-blank, non-comment lines split into fields."""
    out = []
    for no, raw in enumerate(text.split("\n"), start=1):
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        out.append((no, stripped.split(), stripped))
    return out


def _err(msg: str, path: str, line: int | None) -> InputError:
    return InputError(msg, code="RL-INPUT-COS418", path=path, line=line)


def _int(word: str, what: str, path: str, line: int, *, minimum: int) -> int:
    if not word.isascii() or not word.lstrip("-").isdigit() or word.startswith("+"):
        raise _err(f"expected {what}, got {word!r}", path, line)
    if len(word.lstrip("-")) > 18:  # checked before int(): no 4,300-digit ValueError
        raise _err(f"expected {what}, got a number of {len(word)} digits", path, line)
    value = int(word)
    if value < minimum:
        raise _err(f"expected {what}, got {word!r}", path, line)
    return value


# ---------------------------------------------------------------------------
# .top


def parse_topology(data: str | bytes, path: str = "<topology>") -> Topology:
    """Parse a ``.top`` file's text (see the module docstring)."""
    text = _decode(data, path)
    lines = _lines(text)
    if not lines:
        raise _err(
            "expected the number of servers (a positive integer), got an empty file", path, 1
        )
    no, words, raw = lines[0]
    if len(words) != 1:
        raise _err(f"expected the number of servers (a positive integer), got {raw!r}", path, no)
    count = _int(words[0], "the number of servers (a positive integer)", path, no, minimum=1)
    servers: list[Server] = []
    first_seen: dict[str, int] = {}
    for i in range(count):
        if 1 + i >= len(lines):
            raise _err(
                f"expected {count} servers, got {i} before the end of the file",
                path,
                text.count("\n") + 1,
            )
        no, words, raw = lines[1 + i]
        if len(words) != 2:
            raise _err(
                f"expected '<server-id> <tokens>' (server {i + 1} of {count}), got {raw!r}",
                path,
                no,
            )
        sid = words[0]
        tokens = _int(words[1], "a non-negative number of tokens", path, no, minimum=0)
        if sid in first_seen:
            raise _err(f"duplicate server {sid!r} (first on line {first_seen[sid]})", path, no)
        first_seen[sid] = no
        servers.append(Server(sid, tokens))
    links: list[Link] = []
    link_seen: dict[Link, int] = {}
    for no, words, raw in lines[1 + count :]:
        if len(words) != 2:
            raise _err(f"expected '<src> <dst>' (a link), got {raw!r}", path, no)
        src, dst = words
        for end in (src, dst):
            if end not in first_seen:
                known = ", ".join(first_seen)
                raise _err(f"unknown server {end!r} in a link (servers: {known})", path, no)
        if src == dst:
            raise _err(f"a link from {src} to itself", path, no)
        if (src, dst) in link_seen:
            raise _err(
                f"duplicate link {src} -> {dst} (first on line {link_seen[(src, dst)]})", path, no
            )
        link_seen[(src, dst)] = no
        links.append((src, dst))
    return Topology(tuple(servers), tuple(links))


def format_topology(topology: Topology) -> str:
    """The canonical ``.top`` text (no comments)."""
    out = [str(len(topology.servers))]
    out += [f"{s.id} {s.tokens}" for s in topology.servers]
    out += [f"{a} {b}" for a, b in topology.links]
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------
# .events

_EVENT_FORMS: Final = "'send <src> <dst> <n>', 'snapshot <server>' or 'tick [n]'"


def parse_scenario(data: str | bytes, path: str = "<events>") -> Scenario:
    """Parse an ``.events`` file's text.  Comment lines are accepted (not written)."""
    events: list[Event] = []
    for no, words, raw in _lines(_decode(data, path)):
        verb = words[0]
        if verb == "send" and len(words) == 4:
            n = _int(words[3], "a positive number of tokens", path, no, minimum=1)
            events.append(Send(words[1], words[2], n))
        elif verb == "snapshot" and len(words) == 2:
            events.append(Snapshot(words[1]))
        elif verb == "tick" and len(words) in (1, 2):
            n = (
                1
                if len(words) == 1
                else _int(words[1], "a positive tick count", path, no, minimum=1)
            )
            events.append(Tick(n))
        else:
            raise _err(f"expected {_EVENT_FORMS}, got {raw!r}", path, no)
    return Scenario(tuple(events))


def format_scenario(scenario: Scenario) -> str:
    """The canonical ``.events`` text (``tick`` for one step, no comments)."""
    out: list[str] = []
    for e in scenario.events:
        if isinstance(e, Send):
            out.append(f"send {e.src} {e.dst} {e.n}")
        elif isinstance(e, Snapshot):
            out.append(f"snapshot {e.server}")
        else:
            out.append("tick" if e.n == 1 else f"tick {e.n}")
    return "".join(line + "\n" for line in out)


def check_scenario(topology: Topology, scenario: Scenario, path: str = "<events>") -> None:
    """Raise :class:`InputError` if the scenario names unknown servers or links.

    Event numbers are 1-based positions among the scenario's events.
    """
    ids = set(topology.ids)
    links = set(topology.links)
    for i, e in enumerate(scenario.events, start=1):
        if isinstance(e, Send):
            if (e.src, e.dst) not in links:
                raise InputError(
                    f"event {i}: send {e.src} {e.dst} {e.n}: {e.src} -> {e.dst} "
                    "is not a link of the topology",
                    code="RL-INPUT-COS418",
                    path=path,
                )
        elif isinstance(e, Snapshot) and e.server not in ids:
            raise InputError(
                f"event {i}: snapshot {e.server}: {e.server} is not a server of the topology",
                code="RL-INPUT-COS418",
                path=path,
            )


# ---------------------------------------------------------------------------
# .snap


def parse_snap(data: str | bytes, path: str = "<snap>") -> Snap:
    """Parse a ``.snap`` file's text."""
    lines = _lines(_decode(data, path))
    if not lines:
        raise _err("expected the snapshot id (a non-negative integer), got an empty file", path, 1)
    no, words, raw = lines[0]
    if len(words) != 1:
        raise _err(f"expected the snapshot id (a non-negative integer), got {raw!r}", path, no)
    sid = _int(words[0], "the snapshot id (a non-negative integer)", path, no, minimum=0)
    tokens: list[tuple[str, int]] = []
    seen: dict[str, int] = {}
    messages: list[RecordedMessage] = []
    for no, words, raw in lines[1:]:
        if len(words) == 2:
            server = words[0]
            n = _int(words[1], "a non-negative number of tokens", path, no, minimum=0)
            if server in seen:
                raise _err(f"duplicate server {server!r} (first on line {seen[server]})", path, no)
            seen[server] = no
            tokens.append((server, n))
        elif len(words) == 3:
            word = words[2]
            if not (word.startswith("token(") and word.endswith(")")):
                raise _err(f"expected a message 'token(<n>)', got {word!r}", path, no)
            n = _int(word[6:-1], "a positive number of tokens in token(<n>)", path, no, minimum=1)
            messages.append(RecordedMessage(words[0], words[1], n))
        else:
            raise _err(
                f"expected '<server> <tokens>' or '<src> <dst> token(<n>)', got {raw!r}",
                path,
                no,
            )
    return Snap(sid, tuple(tokens), tuple(messages))


def format_snap(snap: Snap) -> str:
    """The canonical ``.snap`` text."""
    out = [str(snap.id)]
    out += [f"{server} {n}" for server, n in snap.tokens]
    out += [f"{m.src} {m.dst} token({m.n})" for m in snap.messages]
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------
# files


def _read(path: Path, found: bool) -> bytes:
    """A COS 418 file's bytes: a regular file of at most
    :data:`~redletter.untrusted.MAX_SMALL_BYTES` (else an :class:`InputError`).
    ``found``: a file found in a folder (``judge --batch``), not named by the user: a
    link is refused and never read (nor, as root, a hard link to someone else's file),
    so no line of a file the folder only points to is ever quoted."""
    return read_input(
        path, code="RL-INPUT-COS418", limit=MAX_SMALL_BYTES, what="the file", found=found
    )


def read_topology(path: Path, *, found: bool = False) -> Topology:
    return parse_topology(_read(path, found), str(path))


def read_scenario(path: Path, *, found: bool = False) -> Scenario:
    return parse_scenario(_read(path, found), str(path))


def read_snap(path: Path, *, found: bool = False) -> Snap:
    return parse_snap(_read(path, found), str(path))


def write_topology(path: Path, topology: Topology) -> None:
    path.write_text(format_topology(topology), encoding="utf-8")


def write_scenario(path: Path, scenario: Scenario) -> None:
    path.write_text(format_scenario(scenario), encoding="utf-8")


def write_snap(path: Path, snap: Snap) -> None:
    path.write_text(format_snap(snap), encoding="utf-8")


# ---------------------------------------------------------------------------
# generation


def generate_topology(
    seed: int, n_servers: int, *, max_tokens: int = 10, extra_links: int = 1
) -> Topology:
    """A random strongly connected topology: a random ring plus ``extra_links`` chords.

    Servers are ``N1`` … ``Nn``; links are listed sorted.
    """
    if n_servers < 2:
        raise InputError(f"expected at least 2 servers, got {n_servers}", code="RL-INPUT-COS418")
    rng = random.Random(seed)
    ids = [f"N{i}" for i in range(1, n_servers + 1)]
    order = ids[:]
    rng.shuffle(order)
    links = {(order[i], order[(i + 1) % n_servers]) for i in range(n_servers)}
    candidates = sorted((a, b) for a in ids for b in ids if a != b and (a, b) not in links)
    links |= set(rng.sample(candidates, min(extra_links, len(candidates))))
    servers = tuple(Server(i, rng.randint(0, max_tokens)) for i in ids)
    return Topology(servers, tuple(sorted(links)))


def generate_scenario(
    topology: Topology,
    seed: int,
    n_events: int,
    n_snapshots: int,
    *,
    tick_probability: float = 0.3,
) -> Scenario:
    """A random scenario of ``n_events`` sends and ``n_snapshots`` snapshot starts.

    Sends never spend more than the sender is sure to hold (its initial tokens less
    what it already sent), so every schedule of the scenario can perform them.
    Between events a ``tick`` (of 1–3 steps) appears with ``tick_probability``.
    """
    rng = random.Random(seed)
    balance = {s.id: s.tokens for s in topology.servers}
    kinds = ["send"] * n_events + ["snapshot"] * n_snapshots
    rng.shuffle(kinds)
    events: list[Event] = []
    for kind in kinds:
        if events and rng.random() < tick_probability:
            events.append(Tick(rng.randint(1, 3)))
        if kind == "snapshot":
            events.append(Snapshot(rng.choice(topology.ids)))
            continue
        able = [link for link in topology.links if balance[link[0]] > 0]
        if not able:
            continue
        src, dst = rng.choice(able)
        n = rng.randint(1, balance[src])
        balance[src] -= n
        events.append(Send(src, dst, n))
    return Scenario(tuple(events))


# ---------------------------------------------------------------------------
# the original simulator's schedule, with a correct Chandy–Lamport token app


@dataclass
class _SnapState:
    tokens: dict[str, int] = field(default_factory=dict)
    recording: dict[Link, list[int]] = field(default_factory=dict)  # open channels
    closed: dict[Link, tuple[int, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class SimResult:
    """What :func:`simulate_trace` saw: the snapshots and the schedule as steps."""

    snaps: tuple[Snap, ...]
    steps: tuple[Step, ...]
    ticks: int


def simulate_trace(
    topology: Topology, scenario: Scenario, seed: int, *, max_ticks: int = 10_000
) -> SimResult:
    """Run the scenario as COS 418's simulator does, with ``random.Random(seed)`` delays.

    Each send (app message or red letter) is due ``now + 1 + random(0..4)``; each tick,
    servers in sorted order, each server's outbound links in sorted order, only the
    head of a link is considered and at most one message per sending server is
    delivered.  After the events, ticks run until every snapshot is complete and the
    links are empty.  Snapshots are returned sorted by id.
    """
    check_scenario(topology, scenario)
    rng = random.Random(seed)
    now = 0
    tokens = {s.id: s.tokens for s in topology.servers}
    queues: dict[Link, deque[tuple[int, int]]] = {link: deque() for link in topology.links}
    snaps: dict[int, _SnapState] = {}
    steps: list[Step] = []
    next_id = 0
    # A queued message: (due, payload) with payload n > 0 app tokens, -(k+1) red letter k.

    def send(link: Link, payload: int) -> None:
        queues[link].append((now + 1 + rng.randrange(MAX_DELAY), payload))

    def record(server: str, k: int, first: Link | None) -> None:
        st = snaps[k]
        st.tokens[server] = tokens[server]
        for link in topology.inbound(server):
            if link == first:
                st.closed[link] = ()
            else:
                st.recording[link] = []
        for link in topology.outbound(server):
            send(link, -(k + 1))

    def deliver(link: Link, payload: int) -> None:
        src, dst = link
        if payload > 0:
            steps.append(("ReceiveApp", {"c": [src, dst], "i": 1}))
            tokens[dst] += payload
            for st in snaps.values():
                if link in st.recording:
                    st.recording[link].append(payload)
            return
        k = -payload - 1
        steps.append(("ReceiveRedLetter", {"c": [src, dst], "i": 1}))
        st = snaps[k]
        if dst not in st.tokens:
            record(dst, k, link)
        else:
            st.closed[link] = tuple(st.recording.pop(link))

    def tick() -> None:
        nonlocal now
        now += 1
        for server in sorted(tokens):
            for link in topology.outbound(server):
                q = queues[link]
                if q and q[0][0] <= now:
                    deliver(link, q.popleft()[1])
                    break

    for e in scenario.events:
        if isinstance(e, Send):
            if tokens[e.src] < e.n:
                raise InputError(
                    f"send {e.src} {e.dst} {e.n}: {e.src} holds only {tokens[e.src]} tokens "
                    f"at tick {now} (seed {seed})",
                    code="RL-INPUT-COS418",
                )
            tokens[e.src] -= e.n
            steps.append(("SendApp", {"c": [e.src, e.dst], "m": e.n}))
            send((e.src, e.dst), e.n)
        elif isinstance(e, Snapshot):
            snaps[next_id] = _SnapState()
            steps.append(("StartSnapshot", {"p": e.server, "k": next_id}))
            record(e.server, next_id, None)
            next_id += 1
        else:
            for _ in range(e.n):
                tick()

    def done() -> bool:
        return all(not q for q in queues.values()) and all(
            len(st.tokens) == len(tokens) and not st.recording for st in snaps.values()
        )

    spent = 0
    while not done():
        if spent >= max_ticks:
            raise InternalError(f"the simulation did not settle in {max_ticks} ticks (seed {seed})")
        tick()
        spent += 1

    order = {s: i for i, s in enumerate(topology.ids)}
    out = []
    for k in sorted(snaps):
        st = snaps[k]
        msgs = [
            RecordedMessage(src, dst, n)
            for (src, dst) in sorted(st.closed, key=lambda link: (order[link[1]], order[link[0]]))
            for n in st.closed[(src, dst)]
        ]
        out.append(Snap(k, tuple((s, st.tokens[s]) for s in topology.ids), tuple(msgs)))
    return SimResult(tuple(out), tuple(steps), now)


def simulate(topology: Topology, scenario: Scenario, seed: int) -> list[Snap]:
    """The snapshots the original simulator's schedule gives with this seed."""
    return list(simulate_trace(topology, scenario, seed).snaps)
