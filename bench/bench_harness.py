"""Micro-benchmark of the conformance harness: steps per second.

    python bench/bench_harness.py [--steps 20000] [--nodes 3] [--seed 1] [--go PATH]

Drives the reference node along a seeded random walk of the token app (three
concurrent snapshots) through the same :class:`~redletter.conformance.driver.Driver`:
in-process (node objects called directly, target >= 10,000 steps/s), and over
the subprocess protocol, one process per node and one process hosting all
nodes (target >= 2,000 steps/s); with ``--go``, the Go reference node too.
Every run must produce the same observations (checked).
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from redletter.conformance.driver import Driver, InProcessTransport, ProcessTransport, Transport
from redletter.conformance.net import Topology
from redletter.conformance.node import NodeHost
from redletter.conformance.nodes.reference import ReferenceNode
from redletter.conformance.walks import initial_app_states, random_walk
from redletter.python_model.apps import TokenApp

log = logging.getLogger("bench_harness")


def _run(name: str, transport: Transport, nodes: int, steps: int, seed: int) -> list[object]:
    topo = Topology.complete([f"p{i + 1}" for i in range(nodes)])
    app = TokenApp([3] * len(topo.nodes))
    with Driver(transport, topo, "token", initial_app_states(app, topo.nodes)) as d:
        d.init()
        t = time.perf_counter()
        obs = random_walk(d, app, seed=seed, steps=steps, snapshots=(1, 2, 3))
        dt = time.perf_counter() - t
    log.info("%-28s %7d steps in %6.2fs: %9.0f steps/s", name, len(obs), dt, len(obs) / dt)
    return [(o.action, o.params, o.sent, o.recorded, o.completed) for o in obs]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20000)
    parser.add_argument("--nodes", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--go", type=Path, default=None, help="the built Go reference node")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    names = [f"p{i + 1}" for i in range(args.nodes)]
    py = [sys.executable, "-m", "redletter.conformance.nodes.reference"]
    log.info("seed %d, %d nodes, complete topology, token app", args.seed, args.nodes)
    with tempfile.TemporaryDirectory(prefix="bench-harness-") as tmp:
        logs = Path(tmp)
        runs: dict[str, Callable[[], Transport]] = {
            "in-process (Python)": lambda: InProcessTransport(NodeHost(ReferenceNode)),
            "subprocess per node (Python)": lambda: ProcessTransport.per_node(
                py, names, log_dir=logs
            ),
            "subprocess hosted (Python)": lambda: ProcessTransport.hosted(py, names, log_dir=logs),
        }
        if args.go is not None:
            go = [str(args.go.resolve())]
            runs["subprocess per node (Go)"] = lambda: ProcessTransport.per_node(
                go, names, log_dir=logs
            )
            runs["subprocess hosted (Go)"] = lambda: ProcessTransport.hosted(
                go, names, log_dir=logs
            )
        results = {
            name: _run(name, make(), args.nodes, args.steps, args.seed)
            for name, make in runs.items()
        }
    first = next(iter(results.values()))
    same = all(r == first for r in results.values())
    log.info("all runs showed the same steps: %s", "yes" if same else "NO")
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
