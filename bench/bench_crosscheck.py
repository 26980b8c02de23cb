"""The cross-check end to end on a model of about a million states, time per phase.

    python bench/bench_crosscheck.py [--model MCTokenComplete3Large] [--workers 2]
                                     [--sequential]

Phases: TLC with ``-dump dot,actionlabels`` into a temporary directory (deleted at the
end, whatever happens), the Python explorer (by default while TLC runs: TLC is another
process and the machine has two cores; ``--sequential`` runs one after the other), the
DOT read (labels converted to the model's states, memoised per variable), and the
comparison.  Prints each phase's seconds, the DOT size, the label memo's hit rate, the
wall time and the verdict; exit 1 when the cross-check is not exact.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from redletter.manifest import load_manifest
from redletter.python_model.config import load_model
from redletter.python_model.crosscheck import (
    LabelReader,
    compare_graphs,
    dump_args,
    format_result,
    read_tlc_graph,
)
from redletter.python_model.explore import ExploreResult, explore
from redletter.tlc import TlcResult, run_tlc
from redletter.toolchain import require_tlc_jar

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--model", default="MCTokenComplete3Large")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--sequential", action="store_true", help="TLC, then the explorer")
    args = ap.parse_args()
    spec = ROOT / "spec"
    cache = ROOT / ".cache"
    model: str = args.model
    cfg = load_model(model, spec)
    entry = next(
        (m for m in load_manifest(spec / "manifest.json").models if m.model == model), None
    )
    jar = require_tlc_jar(cache)
    wall = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-crosscheck-") as tmp:
        base = Path(tmp) / model

        def run() -> TlcResult:
            return run_tlc(
                model,
                spec_dir=spec,
                jar=jar,
                cache_dir=cache,
                check_deadlock=False,
                workers=args.workers,
                extra_args=dump_args(base),
            )

        py: ExploreResult
        if args.sequential:
            tlc_result = run()
            py = explore(cfg, graph=True)
        else:
            with ThreadPoolExecutor(max_workers=1) as pool:
                pending = pool.submit(run)
                py = explore(cfg, graph=True)
                tlc_result = pending.result()
        both = time.perf_counter() - wall
        dot = base.with_suffix(".dot")
        dot_bytes = sum(p.stat().st_size for p in Path(tmp).glob("*.dot"))
        assert py.graph is not None
        reader = LabelReader(cfg, py.graph.states[py.graph.initial[0]])
        tlc = read_tlc_graph(cfg, dot, reader)
        r = compare_graphs(
            cfg,
            tlc,
            tlc_result,
            py,
            manifest_distinct=entry.distinct if entry is not None else None,
        )
    total = time.perf_counter() - wall
    mode = "one after the other" if args.sequential else "at once"
    print(
        f"model {model}: {py.distinct:,} distinct states, {py.total:,} generated,"
        f" {len(py.graph.edge_src):,} edges"
    )
    print(f"  TLC (-dump dot, {args.workers} workers)  {tlc_result.seconds:8.1f} s")
    print(
        f"  Python explorer                 {py.seconds:8.1f} s"
        f"  ({py.states_per_second:,.0f} states/s)"
    )
    print(f"  TLC and explorer, {mode:<19} {both:6.1f} s wall")
    print(
        f"  DOT read + label conversion     {tlc.seconds:8.1f} s"
        f"  ({dot_bytes / 1e6:,.0f} MB of DOT, {len(tlc.states) / tlc.seconds:,.0f} states/s,"
        f" {reader.misses:,} variable texts parsed for {reader.count:,} labels)"
    )
    print(f"  compare                         {r.seconds['compare']:8.1f} s")
    print(f"  total (wall)                    {total:8.1f} s")
    for line in format_result(r):
        print(line)
    return 0 if r.exact else 1


if __name__ == "__main__":
    raise SystemExit(main())
