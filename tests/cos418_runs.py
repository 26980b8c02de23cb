"""Driver documents of correct COS 418 runs, made in Python for the log's property tests.

:func:`course_run` runs a scenario the way the course's simulator does (delays
``1 + random(0..4)``, servers and their outbound links in sorted order, the head
of a link only, one delivery per sending server and tick) with a correct
Chandy–Lamport server, and writes what the kit's driver would: the course's four
kinds of log events at the course's places (a send when a message goes on a
link, a receipt just before the server handles it, a start when the snapshot is
injected, an end when a server's part is done), and the snapshots collected.
With ``noise``, it adds what students add to their logs (a second received
event, a send logged again with its fields swapped, a message of type int, debug
records), drawn from the same seed.  With ``late_markers``, the server has the bug of
the gallery's ``marker-after-app``: a marker is held back while messages are pending
on its link, and sent (and logged) only once the link is empty, so tokens sent after
the recording overtake it.
"""

from __future__ import annotations

import random
from collections import deque

from redletter.conformance.formats.cos418 import Scenario, Send, Snapshot, Tick, Topology
from redletter.conformance.judges.rundoc import scenario_json, topology_json

__all__ = ["course_run"]

Event = dict[str, object]


def _msg(payload: int) -> Event:
    return (
        {"message": "token", "tokens": payload}
        if payload > 0
        else {"message": "marker", "snapshot_id": -payload - 1}
    )


def course_run(
    topology: Topology,
    scenario: Scenario,
    seed: int,
    *,
    noise: bool = False,
    late_markers: bool = False,
) -> dict[str, object]:
    """The driver's document of a correct run of ``scenario`` (module docstring)."""
    rng = random.Random(seed)
    noise_rng = random.Random(f"noise:{seed}")
    tokens = {s.id: s.tokens for s in topology.servers}
    ids = sorted(tokens)
    queues: dict[tuple[str, str], deque[tuple[int, int]]] = {
        link: deque() for link in topology.links
    }
    # per snapshot: recorded tokens, open channels' messages, closed channels, done servers
    rec: dict[int, dict[str, int]] = {}
    open_: dict[int, dict[tuple[str, str], list[int]]] = {}
    closed: dict[int, dict[tuple[str, str], list[int]]] = {}
    done: dict[int, set[str]] = {}
    held: dict[tuple[str, str], list[int]] = {link: [] for link in topology.links}
    now = 0
    steps: list[dict[str, object]] = []
    current: list[Event] = []
    other = 0

    def log(e: Event) -> None:
        nonlocal other
        current.append(e)
        if not noise:
            return
        r = noise_rng.random()
        if e["event"] == "receive" and r < 0.3:
            current.append(dict(e))  # a second received event from HandlePacket
        elif e["event"] == "receive" and r < 0.45:
            current.append({**e, "src": e["dest"], "dest": e["src"]})  # fields swapped
        elif e["event"] == "receive" and r < 0.55:
            current.append({**e, "message": "other", "type": "int", "tokens": 0})
        elif e["event"] == "send" and r < 0.2:
            current.append({**e, "src": e["dest"], "dest": e["src"]})  # fields swapped
        elif r < 0.65:
            other += 1  # a debug record of the package's own type

    def send(src: str, dst: str, payload: int) -> None:
        queues[(src, dst)].append((now + 1 + rng.randrange(5), payload))
        log({"event": "send", "src": src, "dest": dst, **_msg(payload)})

    def finish(server: str, k: int) -> None:
        if server in done[k]:
            return
        if all(link in closed[k] for link in topology.inbound(server)):
            done[k].add(server)
            log({"event": "snapshot_end", "server": server, "snapshot_id": k})

    def record(server: str, k: int, first: tuple[str, str] | None) -> None:
        rec[k][server] = tokens[server]
        for link in topology.inbound(server):
            if link == first:
                closed[k][link] = []
            else:
                open_[k][link] = []
        for _, dst in sorted(topology.outbound(server)):
            if late_markers and queues[(server, dst)]:
                held[(server, dst)].append(k)  # the bug: held while the link is busy
            else:
                send(server, dst, -(k + 1))
        finish(server, k)

    def step(phase: str, index: int | None) -> None:
        nonlocal current
        if current:
            steps.append({"phase": phase, "time": now, "event_index": index, "events": current})
        current = []

    def tick(index: int | None) -> None:
        nonlocal now
        now += 1
        for server in ids:
            for link in sorted(topology.outbound(server)):
                q = queues[link]
                if q and q[0][0] <= now:
                    _, payload = q.popleft()
                    src, dst = link
                    log({"event": "receive", "src": src, "dest": dst, **_msg(payload)})
                    if payload > 0:
                        tokens[dst] += payload
                        for k in open_:
                            if link in open_[k]:
                                open_[k][link].append(payload)
                    else:
                        k = -payload - 1
                        if dst not in rec[k]:
                            record(dst, k, link)
                        elif link in open_[k]:
                            closed[k][link] = open_[k].pop(link)
                            finish(dst, k)
                    if not q and held[link]:
                        for k in held[link]:
                            send(src, dst, -(k + 1))
                        held[link].clear()
                    break
        step("tick", index)

    snapshots: list[dict[str, object]] = []
    for i, e in enumerate(scenario.events):
        if isinstance(e, Send):
            tokens[e.src] -= e.n
            send(e.src, e.dst, e.n)
            step("inject", i)
        elif isinstance(e, Snapshot):
            k = len(snapshots)
            rec[k], open_[k], closed[k], done[k] = {}, {}, {}, set()
            log({"event": "snapshot_start", "server": e.server, "snapshot_id": k})
            record(e.server, k, None)
            snapshots.append({"id": k, "initiator": e.server, "event_index": i, "start_time": now})
            step("inject", i)
        elif isinstance(e, Tick):
            for _ in range(e.n):
                tick(i)
    last = now
    while any(len(done[k]) < len(ids) for k in done):
        tick(None)
    for _ in range(6):
        tick(None)
    out_snaps = []
    for s in snapshots:
        k = int(str(s["id"]))
        msgs = [
            {"src": a, "dest": b, "message": "token", "tokens": n}
            for (a, b) in sorted(closed[k], key=lambda link: (link[1], link[0]))
            for n in closed[k][(a, b)]
        ]
        out_snaps.append(
            {
                **s,
                "status": "collected",
                "returned_time": now,
                "collected_ms": 0,
                "returned_id": k,
                "tokens": dict(rec[k]),
                "messages": msgs,
            }
        )
    return {
        "format": "redletter-cos418-run",
        "version": 2,
        "dialect": "servers",
        "package": "chandy_lamport",
        "go_version": "python",
        "request_sha256": "",
        "nonce": "",
        "seed": seed,
        "seed_effective": True,
        "topology": topology_json(topology),
        "scenario": scenario_json(scenario),
        "outcome": "complete",
        "error": None,
        "time": now,
        "extra_ticks": now - last,
        "collect": {"stopped": "", "waited_ms": 0, "idle_ticks": 100},
        "schedule_available": True,
        "other_records": other,
        "schedule": steps,
        "snapshots": out_snaps,
    }
