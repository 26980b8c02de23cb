"""Spark pipeline against single-process Python on the same Parquet graph.

    python bench/bench_pipeline.py --dot /tmp/x.dot --model MCToken2
    python bench/bench_pipeline.py --synthetic-mb 1024 --driver-memory 512m

With ``--dot``: ingests the dump once (``local[2]``), then runs the exact
cross-check of the graph with itself three ways, each in its own process so time and
peak memory (resident set of the whole process tree: Python driver, JVM, Python
workers) are measured apart: single-process (pyarrow + sets), Spark ``local[1]``,
Spark ``local[2]``.  Spark's start-up is reported separately from the job.

With ``--campaign N``: writes N edge-tour traces of ``--campaign-model`` (default
MCToken2) and runs the same campaign (reference node, in process) single-process (a
loop over the runner; then two such loops at once, no Spark: this machine's own
ceiling for two cores) and on Spark ``local[1]`` and ``local[2]``.  With ``--bfs
MODEL``: the distributed BFS on ``local[1]`` and ``local[2]`` against python_model's
single-process explorer, and the speed-up.

    python bench/bench_pipeline.py --campaign 300 --bfs MCToken2

With ``--grade N``: a class of N submissions (the gallery's packages of both
dialects, correct and buggy, and copies of them made distinct by a comment) graded
on the same campaign (``--grade-scenarios`` x 2 seeds) with ``--local`` (no JVM),
on Spark ``local[1]`` and on ``local[2]``, each in its own process; the gradebooks
must be the same, and the speed-up ``local[2]`` over ``local[1]`` is printed (the
campaign's too).

With ``--big MODEL`` (a model of the manifest larger than ``--cap-mb`` holds): the run a
single process cannot do.  python_model's explorer with its address space capped at
``--cap-mb`` (default 1024: ``RLIMIT_AS``, as ``ulimit -v``) must fail with
``MemoryError``; then the Spark BFS on ``local[2]`` with a 1 GiB driver (the JVM's
heap) and every Python worker capped at the same ``--cap-mb`` explores it to the end,
``--big-partitions`` partitions (default 16), checking the cfg's invariants and
writing only the BFS parents; its counts must equal the manifest's.

    python bench/bench_pipeline.py --big MCTokenComplete3Huge

With ``--synthetic-mb N``: writes a synthetic DOT of about N MB in TLC 2.15's format
(``bench/bench_dot.py``'s generator) and ingests it with ``--driver-memory``
(default 512m) to show that the streaming ingest's memory does not grow with the file.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _tree_rss_kb(root: int) -> tuple[int, int]:
    """Resident memory (kB) of ``root`` and all its descendants, from /proc: the sum,
    and the largest single process's."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status", encoding="utf-8") as fh:
                fields = dict(line.split(":", 1) for line in fh if ":" in line)
        except OSError:
            continue
        pid = int(entry)
        parents[pid] = int(fields.get("PPid", "0").strip())
        rss[pid] = int(fields.get("VmRSS", "0 kB").split()[0])
    total, largest, todo = 0, 0, [root]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        largest = max(largest, rss.get(pid, 0))
        todo += [c for c, p in parents.items() if p == pid]
    return total, largest


def _measure(args: list[str], copies: int = 1) -> dict[str, Any]:
    """Run ``bench_pipeline.py --one ...`` in a child; its JSON plus peak tree RSS.
    With ``copies`` > 1, that many identical children at once: ``seconds`` is the
    slowest one's, ``states`` the sum (the machine's own ceiling for parallel work)."""
    procs = [
        subprocess.Popen(
            [sys.executable, __file__, "--one", *args], stdout=subprocess.PIPE, cwd=ROOT
        )
        for _ in range(copies)
    ]
    peak = largest = 0
    while any(p.poll() is None for p in procs):
        sizes = [_tree_rss_kb(p.pid) for p in procs]
        peak = max(peak, sum(t for t, _ in sizes))
        largest = max(largest, *(one for _, one in sizes))
        time.sleep(0.1)
    results: list[dict[str, Any]] = []
    for proc in procs:
        out = proc.stdout.read().decode() if proc.stdout else ""
        if proc.returncode != 0:
            raise SystemExit(f"child {args} failed with exit {proc.returncode}")
        results.append(json.loads(out.strip().splitlines()[-1]))
    result = results[0]
    if copies > 1:
        result["each"] = [r["seconds"] for r in results]
        result["seconds"] = max(result["each"])
        result["states"] = sum(r["states"] for r in results)
    result["peak_mb"] = peak / 1024
    result["largest_mb"] = largest / 1024
    return result


def _explore_workers(spec_dir: str, model: str, mode: str, workers: int) -> dict[str, Any]:
    """The Python model on ``workers`` processes (1: the single-process explorer), the
    cfg's safety properties (``safety``) or with its temporal ones too (``full``)."""
    from redletter.python_model.engines import load_engine
    from redletter.python_model.explore import explore
    from redletter.python_model.liveness import check_liveness, full_check, temporal_of
    from redletter.python_model.parallel import explore_parallel

    engine = load_engine(model, Path(spec_dir))
    live = mode == "full" and bool(engine.liveness)
    t0 = time.perf_counter()
    if workers == 1:
        r, verdict = full_check(engine) if live else (explore(engine), None)
    else:
        r = explore_parallel(model, Path(spec_dir), workers=workers, liveness=live)
        verdict = None
        if live and r.violation is None:
            verdict, _ = check_liveness(engine, explored=r, temporal=temporal_of(engine))
    seconds = time.perf_counter() - t0
    result = verdict.result if verdict is not None and r.violation is None else r.result
    return {
        "startup": 0.0,
        "seconds": seconds,
        "states": r.distinct,
        "total": r.total,
        "depth": r.depth,
        "result": result,
        "workers": [[w.states, w.peak_rss, w.cpu] for w in r.workers],
        "cpu": time.process_time(),
    }


def _one(argv: list[str]) -> None:
    """Child side: one measured run, JSON on the last line of stdout."""
    what, graph, model, master, memory = argv[:5]
    t0 = time.perf_counter()
    if what == "explore-workers":  # graph: the spec directory, master: the mode
        print(json.dumps(_explore_workers(graph, model, master, int(memory))))
        return
    if what in ("campaign-local", "explore-local"):
        if what == "campaign-local":
            from redletter.pipeline.campaign import discover_traces
            from redletter.pipeline.runners import reference_runner

            refs = discover_traces(graph)
            verdicts = [reference_runner(r.path)["verdict"] for r in refs]
            assert set(verdicts) == {"pass"}
            n = len(refs)
        else:
            from redletter.python_model.config import load_model
            from redletter.python_model.explore import explore

            n = explore(load_model(model, ROOT / "spec")).distinct
        print(json.dumps({"startup": 0.0, "seconds": time.perf_counter() - t0, "states": n}))
        return
    if what == "explore-capped":  # argv[5]: the address-space cap in MiB
        import resource

        cap = int(argv[5]) * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        from redletter.python_model.config import load_model
        from redletter.python_model.explore import ExploreProgress, explore

        reached = [0]

        def progress(p: ExploreProgress) -> None:
            reached[0] = p.distinct

        try:
            n = explore(load_model(model, ROOT / "spec"), on_progress=progress).distinct
            error = ""
        # an allocation refused under RLIMIT_AS surfaces as MemoryError, or as a
        # SystemError from a C function whose allocation failed
        except (MemoryError, SystemError) as e:
            n, error = reached[0], f"{type(e).__name__} after {reached[0]:,} states"
        t = time.perf_counter() - t0
        print(json.dumps({"startup": 0.0, "seconds": t, "states": n, "error": error}))
        return
    if what == "explore-spark-capped":  # argv[5]: out, argv[6]: cap MiB, argv[7]: partitions
        from redletter.pipeline.explore import explore_spark
        from redletter.pipeline.session import SparkConfig, get_session
        from redletter.python_model.config import load_model

        session = get_session(
            SparkConfig(master=master, driver_memory=memory, python_memory=f"{argv[6]}m")
        )
        t1 = time.perf_counter()
        r = explore_spark(
            session,
            load_model(model, ROOT / "spec"),
            argv[5],
            graph=False,
            partitions=int(argv[7]),
            on_level=lambda lv: print(
                f"  depth {lv.depth} new {lv.new:,} distinct {lv.distinct:,} {lv.seconds:.1f} s",
                file=sys.stderr,
                flush=True,
            ),
        )
        out = {
            "startup": t1 - t0,
            "seconds": time.perf_counter() - t1,
            "states": r.distinct,
            "counts": [r.distinct, r.total, r.depth],
            "violation": r.violation.name if r.violation else None,
        }
        print(json.dumps(out))
        return
    if what == "grade":
        from redletter.pipeline.grade import GradeConfig, discover_submissions, grade_class

        dest = Path(argv[5])
        shutil.rmtree(dest, ignore_errors=True)
        # The kit's campaign only (no `go test` of each package's own, no per-submission
        # time limit): what the published figures of docs/spark.md measure.
        cfg = GradeConfig(
            scenarios=int(argv[6]),
            seeds=2,
            shrink=False,
            course_test=False,
            submission_timeout=None,
        )
        spark = None
        t1 = t0
        if master != "-":
            from redletter.pipeline.session import SparkConfig, get_session

            spark = get_session(SparkConfig(master=master, driver_memory=memory))
            t1 = time.perf_counter()
        graded = grade_class(discover_submissions(graph), dest, cfg, spark=spark)
        book = [(r["submission"], r["verdict"], r["passed"], r["failed"]) for r in graded.rows]
        print(
            json.dumps(
                {
                    "startup": t1 - t0,
                    "seconds": time.perf_counter() - t1,
                    "states": len(graded.rows),
                    "book": book,
                }
            )
        )
        return
    if what in ("campaign-spark", "explore-spark"):
        from redletter.pipeline.session import SparkConfig, get_session

        spark = get_session(SparkConfig(master=master, driver_memory=memory))
        t1 = time.perf_counter()
        if what == "campaign-spark":
            from redletter.pipeline.campaign import discover_traces, run_campaign
            from redletter.pipeline.runners import reference_runner

            res = Path(argv[5])
            shutil.rmtree(res, ignore_errors=True)
            summary = run_campaign(spark, discover_traces(graph), reference_runner, res, chunk=16)
            assert summary.verdicts == (("pass", summary.traces),)
            n = summary.traces
        else:
            from redletter.pipeline.explore import explore_spark
            from redletter.python_model.config import load_model

            graph_out = len(argv) > 6 and argv[6] == "graph"
            n = explore_spark(
                spark, load_model(model, ROOT / "spec"), argv[5], graph=graph_out
            ).distinct
        out = {"startup": t1 - t0, "seconds": time.perf_counter() - t1, "states": n}
        print(json.dumps(out))
        return
    if what == "local":
        from redletter.pipeline.crosscheck import crosscheck_local

        report = crosscheck_local(graph, graph, model)
        out = {"startup": 0.0, "seconds": time.perf_counter() - t0}
    else:
        from redletter.pipeline.session import SparkConfig, get_session

        spark = get_session(SparkConfig(master=master, driver_memory=memory))
        t1 = time.perf_counter()
        if what == "spark":
            from redletter.pipeline.crosscheck import crosscheck

            report = crosscheck(spark, graph, graph, model)
        else:  # ingest: argv[5] is the DOT file
            from redletter.pipeline.ingest import ingest_dot

            info = ingest_dot(spark, argv[5], model, graph)
            out = {"startup": t1 - t0, "seconds": time.perf_counter() - t1, "states": info.states}
            print(json.dumps(out))
            return
        out = {"startup": t1 - t0, "seconds": time.perf_counter() - t1}
    assert report.matches, "a graph must match itself"
    out["states"] = report.counts[0].states
    print(json.dumps(out))


def _make_class(folder: Path, n: int) -> Path:
    """N submissions from the gallery, cycling through its entries (both dialects,
    correct and buggy); a copy made distinct by a comment in one file."""
    from tests.cos418_gallery import ENTRIES, materialize

    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    pool = [e.name for e in ENTRIES if e.expect in ("pass", "fail") and "sleepy" not in e.name]
    made = Path(tempfile.mkdtemp(prefix="bench_class_"))
    for i in range(n):
        entry = pool[i % len(pool)]
        src = materialize(entry, made / str(i))
        dest = folder / f"s{i:03d}-{entry.replace('/', '-')}"
        shutil.copytree(src, dest)
        go = sorted(dest.glob("*.go"))[0]
        go.write_text(go.read_text() + f"\n// submission {i}\n")
    shutil.rmtree(made, ignore_errors=True)
    return folder


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        _one(sys.argv[2:])
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--dot", type=Path, help="a TLC -dump dot,actionlabels file")
    ap.add_argument("--model", default="MCToken2")
    ap.add_argument("--synthetic-mb", type=int, default=0, help="synthetic DOT size (MB)")
    ap.add_argument("--driver-memory", default="512m", help="driver memory for the ingest")
    ap.add_argument("--keep", type=Path, help="directory to keep the graphs in")
    ap.add_argument("--campaign", type=int, default=0, help="traces for the campaign")
    ap.add_argument(
        "--campaign-model", default="MCToken2", help="the model whose edge tours the campaign runs"
    )
    ap.add_argument("--bfs", default="", help="model for the distributed BFS (e.g. MCToken2)")
    ap.add_argument("--grade", type=int, default=0, help="submissions in the class to grade")
    ap.add_argument("--grade-scenarios", type=int, default=10, help="scenarios of the class")
    ap.add_argument("--big", default="", help="a model no single process can explore in --cap-mb")
    ap.add_argument("--cap-mb", type=int, default=1024, help="memory cap of --big's runs (MiB)")
    ap.add_argument("--big-partitions", type=int, default=16, help="partitions of --big's BFS")
    ap.add_argument(
        "--bfs-graph",
        action="store_true",
        help="the Spark BFS also writes the graph directory (canon text, edges)",
    )
    a = ap.parse_args()
    work = a.keep or Path(tempfile.mkdtemp(prefix="bench_pipeline_"))
    work.mkdir(parents=True, exist_ok=True)
    rows: list[tuple[str, dict[str, Any]]] = []
    if a.dot:
        graph = str(work / "graph")
        rows.append(
            ("ingest local[2]", _measure(["ingest", graph, a.model, "local[2]", "2g", str(a.dot)]))
        )
        rows.append(("crosscheck single-process", _measure(["local", graph, a.model, "-", "-"])))
        for master in ("local[1]", "local[2]"):
            rows.append(
                (f"crosscheck spark {master}", _measure(["spark", graph, a.model, master, "2g"]))
            )
    if a.campaign:
        from redletter.conformance.traces import generate, write_traces

        tdir = work / "traces"
        tours = generate(a.campaign_model, ROOT / "spec", goals=False)[: a.campaign]
        write_traces(tdir, tours)
        print(f"campaign: {len(tours):,} edge tours of {a.campaign_model}, the reference node")
        alone = ["campaign-local", str(tdir), "-", "-", "-"]
        rows.append(("campaign single-process", _measure(alone)))
        # The same loop twice at once, no Spark: what two cores of this machine give
        # two processes, the ceiling of any local[2] over local[1].
        rows.append(("campaign single-process, 2 at once", _measure(alone, copies=2)))
        for master in ("local[1]", "local[2]"):
            rows.append(
                (
                    f"campaign spark {master}",
                    _measure(["campaign-spark", str(tdir), "-", master, "2g", str(work / "res")]),
                )
            )
    if a.grade:
        cls = _make_class(work / "class", a.grade)
        for master in ("-", "local[1]", "local[2]"):
            name = "grade --local" if master == "-" else f"grade spark {master}"
            rows.append(
                (
                    name,
                    _measure(
                        [
                            "grade",
                            str(cls),
                            "-",
                            master,
                            "2g",
                            str(work / "grade"),
                            str(a.grade_scenarios),
                        ]
                    ),
                )
            )
    if a.bfs:
        rows.append(("explore single-process", _measure(["explore-local", "-", a.bfs, "-", "-"])))
        for master in ("local[1]", "local[2]"):
            rows.append(
                (
                    f"explore spark {master}",
                    _measure(
                        [
                            "explore-spark",
                            "-",
                            a.bfs,
                            master,
                            "2g",
                            str(work / "bfs"),
                            "graph" if a.bfs_graph else "-",
                        ]
                    ),
                )
            )
    if a.big:
        cap = str(a.cap_mb)
        rows.append(
            (
                f"explore single-process, {a.cap_mb} MiB",
                _measure(["explore-capped", "-", a.big, "-", "-", cap]),
            )
        )
        rows.append(
            (
                f"explore spark local[2], {a.cap_mb} MiB a worker",
                _measure(
                    [
                        "explore-spark-capped",
                        "-",
                        a.big,
                        "local[2]",
                        "1g",
                        str(work / "big"),
                        cap,
                        str(a.big_partitions),
                    ]
                ),
            )
        )
    if a.synthetic_mb:
        from bench.bench_dot import write_dump

        dot = work / "synthetic.dot"
        per_state = 1130  # bytes a state line plus its 3 edge lines take in write_dump
        t = time.perf_counter()
        write_dump(dot, states=a.synthetic_mb * 1_000_000 // per_state, degree=3)
        size = dot.stat().st_size / 1e6
        print(f"synthetic DOT: {size:,.0f} MB written in {time.perf_counter() - t:.0f} s")
        rows.append(
            (
                f"ingest {size:,.0f} MB, driver {a.driver_memory}, local[2]",
                _measure(
                    [
                        "ingest",
                        str(work / "synth"),
                        "Synthetic",
                        "local[2]",
                        a.driver_memory,
                        str(dot),
                    ]
                ),
            )
        )
    print(f"{'run':<48} {'states':>9} {'startup s':>9} {'job s':>8} {'peak RSS MB':>11}")
    for name, r in rows:
        print(
            f"{name:<48} {int(r['states']):>9,} {r['startup']:>9.1f} {r['seconds']:>8.2f}"
            f" {r['peak_mb']:>11,.0f}"
        )
    spark_rows = {n: r for n, r in rows if n.startswith("crosscheck spark")}
    if len(spark_rows) == 2:
        one, two = (spark_rows[f"crosscheck spark local[{k}]"]["seconds"] for k in (1, 2))
        print(f"speed-up local[2] over local[1]: {one / two:.2f}x")
    pair = {n: r for n, r in rows if n.startswith("campaign single-process")}
    if len(pair) == 2:
        one = pair["campaign single-process"]["seconds"]
        both = pair["campaign single-process, 2 at once"]
        print(
            f"this machine's ceiling: one campaign loop alone {one:.2f} s; two at once"
            f" {' and '.join(format(s, '.2f') for s in both['each'])} s: 2 cores give"
            f" {2 * one / both['seconds']:.2f}x one core's work, without Spark"
        )
    for what in ("campaign", "grade"):
        pair = {n: r for n, r in rows if n.startswith(f"{what} spark")}
        if len(pair) == 2:
            one, two = (pair[f"{what} spark local[{k}]"]["seconds"] for k in (1, 2))
            print(f"{what} speed-up local[2] over local[1]: {one / two:.2f}x (target >= 1.8)")
    books = [(n, r["book"]) for n, r in rows if n.startswith("grade")]
    if books:
        same = all(b == books[0][1] for _, b in books)
        print(f"gradebooks of the grade runs the same: {same}")
        if not same:  # the rows that differ, (submission, verdict, passed, failed) per run
            first_name, first = books[0]
            for name, book in books[1:]:
                for a_row, b_row in zip(first, book, strict=False):
                    if tuple(a_row) != tuple(b_row):
                        print(f"  {first_name}: {tuple(a_row)}  {name}: {tuple(b_row)}")
    bfs_rows = {n: r for n, r in rows if n.startswith("explore spark")}
    if len(bfs_rows) == 2:
        one, two = (bfs_rows[f"explore spark local[{k}]"]["seconds"] for k in (1, 2))
        single = next(r for n, r in rows if n == "explore single-process")["seconds"]
        print(
            "BFS: both sides check the cfg's invariants and action properties; the Spark BFS"
            + (" also writes the graph directory" if a.bfs_graph else " writes no graph")
        )
        print(f"BFS speed-up local[2] over local[1]: {one / two:.2f}x (target >= 1.7)")
        print(f"BFS Spark local[2] / single process: {two / single:.2f}x the time (target <= 3)")
    big = {n: r for n, r in rows if n.startswith("explore") and "MiB" in n}
    if big:
        from redletter.manifest import load_manifest

        entry = {e.model: e for e in load_manifest(ROOT / "spec" / "manifest.json").models}.get(
            a.big
        )
        single, spark_row = list(big.values())
        print(
            f"{a.big}: the single process within {a.cap_mb} MiB:"
            f" {single['error'] or 'finished (' + format(single['states'], ',') + ' states)'}"
            f" after {single['seconds']:.0f} s"
        )
        want = [entry.distinct, entry.total, entry.depth] if entry else None
        print(
            f"{a.big}: Spark (driver 1g, Python workers {a.cap_mb} MiB) distinct/total/depth"
            f" {spark_row['counts']} in {spark_row['seconds']:.0f} s, peak RSS of the tree"
            f" {spark_row['peak_mb']:,.0f} MB, of its largest process"
            f" {spark_row['largest_mb']:,.0f} MB; the manifest's {want}:"
            f" {'equal' if want == spark_row['counts'] else 'DIFFERENT'}"
        )
    print(f"graphs in {work}")


if __name__ == "__main__":
    main()
