"""Micro-benchmark of the DOT reader on a synthetic dump in TLC 2.15's exact format.

    python bench/bench_dot.py [--states 200000] [--out-degree 3] [--parse 2000]

Writes a temporary ``strict digraph`` with ``--states`` state lines (labels of about
1 KB, like the snapshot spec's) and ``--out-degree`` edge lines per state, then reports
lines/second and MB/second for :func:`iter_dot` (streaming), :func:`load_dot`, and
states/second for parsing ``--parse`` labels into values.
"""

from __future__ import annotations

import argparse
import logging
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from redletter.python_model.dot import DotNode, iter_dot, load_dot

log = logging.getLogger("bench_dot")


def _label(i: int, rng: random.Random) -> str:
    procs = ["p1", "p2", "p3"]
    buf = ", ".join(
        f'[kind |-> "app", snap |-> {rng.randint(0, 3)}, val |-> {rng.randint(-5, 50)}]'
        for _ in range(rng.randint(0, 4))
    )
    chans = " @@ ".join(f"<<{a}, {b}>> :> <<{buf}>>" for a in procs for b in procs if a != b)
    color = ", ".join(f'{p} |-> "{rng.choice(["white", "red"])}"' for p in procs)
    state = (
        f"/\\ chan = ({chans})\n/\\ color = [{color}]\n/\\ count = {i}\n"
        f"/\\ rec = {{{', '.join(str(rng.randint(0, 9)) for _ in range(5))}}}\n"
        f'/\\ note = "id \\"{i}\\""'
    )
    return state.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def write_dump(path: Path, states: int, degree: int, seed: int = 0) -> int:
    rng = random.Random(seed)
    fps = [rng.randint(-(2**63), 2**63 - 1) for _ in range(states)]
    actions = ["SendApp", "ReceiveApp", "SendMarker", "ReceiveMarker", "Start"]
    lines = 0
    with path.open("w", encoding="utf-8") as f:
        f.write(
            'strict digraph DiskGraph {\nnodesep=0.35;\nsubgraph cluster_graph {\ncolor="white";\n'
        )
        for i, fp in enumerate(fps):
            end = '",style = filled]' if i == 0 else '"];'
            f.write(f'{fp} [label="{_label(i, rng)}{end}\n')
            for _ in range(degree):
                dst = fps[rng.randrange(states)]
                act = rng.choice(actions)
                f.write(f'{fp} -> {dst} [label="{act}",color="black",fontcolor="black"];\n')
            lines += 1 + degree
        f.write(f"{{rank = same; {fps[0]};}}\n}}\n}}")
    return lines + 7


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--states", type=int, default=200_000)
    ap.add_argument("--out-degree", type=int, default=3)
    ap.add_argument("--parse", type=int, default=2000, help="labels to parse into values")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stdout)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "synthetic.dot"
        t = time.perf_counter()
        lines = write_dump(path, args.states, args.out_degree)
        mb = path.stat().st_size / 1e6
        log.info("wrote %d lines, %.1f MB in %.1fs", lines, mb, time.perf_counter() - t)

        t = time.perf_counter()
        n = sum(1 for _ in iter_dot(path))
        dt = time.perf_counter() - t
        log.info("iter_dot: %d items, %.0f lines/s, %.0f MB/s", n, lines / dt, mb / dt)

        t = time.perf_counter()
        g = load_dot(path)
        dt = time.perf_counter() - t
        log.info(
            "load_dot: %d states, %d edge lines, %.0f lines/s",
            len(g.nodes),
            g.edge_lines,
            lines / dt,
        )

        nodes = [item for item in iter_dot(path) if isinstance(item, DotNode)][: args.parse]
        t = time.perf_counter()
        for node in nodes:
            _ = node.state
        dt = time.perf_counter() - t
        log.info("parse_state: %.0f states/s (%d labels)", len(nodes) / dt, len(nodes))


if __name__ == "__main__":
    main()
