"""Spark ingest and cross-check on real TLC dumps (small), with exact counts."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]
import pyarrow.parquet as pq  # type: ignore[import-untyped, unused-ignore]
import pytest

from redletter.errors import InputError
from redletter.manifest import load_manifest
from redletter.pipeline.canon import LabelCanon, canon_state
from redletter.pipeline.crosscheck import crosscheck, crosscheck_local, format_report
from redletter.pipeline.ingest import (
    GraphInfo,
    ingest_dot,
    ingest_python_jsonl,
    read_graph_info,
    write_python_graph,
)
from redletter.python_model.dot import DotNode, iter_dot, load_dot
from redletter.python_model.values import print_state

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

ROOT = Path(__file__).resolve().parent.parent
DOTS = ROOT / "tests" / "data" / "dot"
MANIFEST = ROOT / "spec" / "manifest.json"
EDGE_LINE = re.compile(r'^-?[0-9]+ -> -?[0-9]+ \[label="[A-Za-z]+"')
STUTTER_LINE = re.compile(r'^-?[0-9]+ -> -?[0-9]+ \[style="dashed"\];$')

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def spark() -> Iterator[SparkSession]:
    from redletter.pipeline.session import SparkConfig, get_session

    yield get_session(SparkConfig(master="local[2]", driver_memory="1g"))


@pytest.fixture(scope="module")
def toy(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("toy") / "g"
    ingest_dot(spark, DOTS / "Toy2.dot", "Toy2", out)
    return out


@pytest.fixture(scope="module")
def token2_dot(tmp_path_factory: pytest.TempPathFactory, tlc_jar: Path) -> Path:
    work = tmp_path_factory.mktemp("tlc")
    spec = work / "spec"
    shutil.copytree(ROOT / "spec", spec)
    subprocess.run(
        # the quick compiler only, as `redletter check` runs a model this small
        ["java", "-XX:TieredStopAtLevel=1", f"-Djava.io.tmpdir={work}", "-cp", str(tlc_jar),
         "tlc2.TLC",
         "-workers", "1", "-fp", "0", "-deadlock",
         "-dump", "dot,actionlabels", str(work / "x"), "-metadir", str(work / "meta"),
         "-config", "MCToken2.cfg", "MCToken2.tla"],
        cwd=spec, check=True, capture_output=True, timeout=240,
    )  # fmt: skip
    return work / "x.dot"


@pytest.fixture(scope="module")
def token2(spark: SparkSession, token2_dot: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tok2") / "g"
    ingest_dot(spark, token2_dot, "MCToken2", out, batch_rows=500)
    return out


def test_ingest_agrees_with_load_dot(toy: Path) -> None:
    graph = load_dot(DOTS / "Toy2.dot")
    info = read_graph_info(toy)
    assert (info.states, info.edges, info.initial) == (
        len(graph.nodes),
        len({e for e in graph.edges}),
        len(graph.initial),
    )
    states = pq.read_table(toy / "states")
    got = dict(zip(states["fp"].to_pylist(), states["canon"].to_pylist(), strict=True))
    assert got == {fp: canon_state(n.state) for fp, n in graph.nodes.items()}
    edges = pq.read_table(toy / "edges")
    assert set(zip(edges["src"].to_pylist(), edges["action"].to_pylist(),
                   edges["dst"].to_pylist(), strict=True)) == set(graph.edges)  # fmt: skip


def test_label_memo_equals_parse_state() -> None:
    memo = LabelCanon(max_entries=3)  # tiny: the memo is cleared several times
    for name in ("Toy.dot", "Toy2.dot", "Toy3.dot", "One.dot"):
        for item in iter_dot(DOTS / name):
            if isinstance(item, DotNode):
                assert memo.canon(item.raw_label) == canon_state(item.state)
    assert memo.hits > 0


@pytest.mark.tlc
@pytest.mark.slow
def test_ingest_token2_matches_manifest(token2: Path, token2_dot: Path) -> None:
    entry = next(m for m in load_manifest(MANIFEST).models if m.model == "MCToken2")
    lines = token2_dot.read_text(encoding="utf-8").splitlines()
    info = read_graph_info(token2)
    assert info.states == entry.distinct == info.state_lines
    assert info.edge_lines == info.edges == sum(1 for ln in lines if EDGE_LINE.match(ln))
    assert info.stuttering_lines == sum(1 for ln in lines if STUTTER_LINE.match(ln))
    assert info.initial == sum(1 for ln in lines if ln.endswith('",style = filled]'))


@pytest.mark.tlc
@pytest.mark.slow
def test_crosscheck_with_itself(spark: SparkSession, token2: Path) -> None:
    report = crosscheck(spark, token2, token2, "MCToken2", manifest=MANIFEST)
    assert report.matches
    assert report.counts[0].states == 5462
    assert report == crosscheck_local(token2, token2, "MCToken2", manifest=MANIFEST)
    assert format_report(report).endswith("MATCH: same states, initial states and labelled edges")


def _perturb(src: Path, out: Path) -> tuple[str, str, tuple[int, str, int]]:
    """Copy ``src`` changing one non-initial state's text and dropping one edge.

    Returns (old canon, new canon, dropped edge).
    """
    shutil.copytree(src, out)
    states = pq.read_table(out / "states")
    rows = sorted(states.to_pylist(), key=lambda r: r["fp"])
    victim = next(r for r in rows if not r["initial"])
    old = victim["canon"]
    new = old + "\n/\\ zz = 1"
    for r in rows:
        if r["fp"] == victim["fp"]:
            r["canon"] = new
    shutil.rmtree(out / "states")
    (out / "states").mkdir()
    pq.write_table(pa.Table.from_pylist(rows, schema=states.schema), out / "states" / "p.parquet")
    edges = pq.read_table(out / "edges").to_pylist()
    keyed = sorted(edges, key=lambda e: (e["src"], e["action"], e["dst"]))
    drop = next(e for e in keyed if victim["fp"] not in (e["src"], e["dst"]))
    kept = [e for e in edges if e is not drop]
    shutil.rmtree(out / "edges")
    (out / "edges").mkdir()
    pq.write_table(pa.Table.from_pylist(kept), out / "edges" / "p.parquet")
    return old, new, (drop["src"], drop["action"], drop["dst"])


@pytest.mark.tlc
@pytest.mark.slow
# CI time: `make test-long` runs it; test_python_adapter_and_jsonl_match_tlc and the fast
# perturbation tests cover the cross-check's differences
@pytest.mark.long
def test_crosscheck_perturbed(spark: SparkSession, token2: Path, tmp_path: Path) -> None:
    old, new, _ = _perturb(token2, tmp_path / "p")
    edges = pq.read_table(token2 / "edges")
    states = pq.read_table(token2 / "states")
    canon = dict(zip(states["fp"].to_pylist(), states["canon"].to_pylist(), strict=True))
    touching = sum(
        1
        for s, d in zip(edges["src"].to_pylist(), edges["dst"].to_pylist(), strict=True)
        if old in (canon[s], canon[d])
    )
    report = crosscheck(spark, token2, tmp_path / "p", "MCToken2", manifest=MANIFEST)
    assert report.problems == (
        "1 states in tlc are not in python",
        "1 states in python are not in tlc",
        f"{touching + 1} edges in tlc are not in python",
        f"{touching} edges in python are not in tlc",
    )
    # Both engines find the same differences and paths of the same lengths (BFS may
    # break ties between parents differently).
    local = crosscheck_local(token2, tmp_path / "p", "MCToken2", manifest=MANIFEST)
    assert _same_but_paths(report, local)
    first = report.differences[0]
    assert (first.kind, first.only_in, first.state) == ("state", "tlc", old)
    assert first.path[-1][1] == old
    initial = {c for c, i in zip(canon.values(), states["initial"].to_pylist(), strict=True) if i}
    assert first.path[0] == ("", next(iter(initial)))  # starts at the initial state
    text = format_report(report)
    assert "  state only in tlc:\n" + "\n".join("      " + ln for ln in old.splitlines()) in text
    assert "  state only in python:\n" + "\n".join("      " + ln for ln in new.splitlines()) in text


def _same_but_paths(a: object, b: object) -> bool:
    from dataclasses import replace

    from redletter.pipeline.crosscheck import CrosscheckReport

    assert isinstance(a, CrosscheckReport) and isinstance(b, CrosscheckReport)
    strip = [tuple(replace(d, path=()) for d in r.differences) for r in (a, b)]
    lengths = [[len(d.path) for d in r.differences] for r in (a, b)]
    return replace(a, differences=strip[0]) == replace(b, differences=strip[1]) and (
        lengths[0] == lengths[1]
    )


def test_python_adapter_and_jsonl_match_tlc(spark: SparkSession, toy: Path, tmp_path: Path) -> None:
    graph = load_dot(DOTS / "Toy2.dot")
    ids = {fp: i for i, fp in enumerate(sorted(graph.nodes))}  # explorer-style ids
    write_python_graph(
        tmp_path / "py",
        "Toy2",
        ((ids[fp], n.state, n.initial) for fp, n in graph.nodes.items()),
        ((ids[s], a or "", ids[d]) for s, a, d in graph.edges),
    )
    assert crosscheck(spark, toy, tmp_path / "py", "Toy2").matches
    src = tmp_path / "jsonl"
    src.mkdir()
    with (src / "states.jsonl").open("w") as f:
        for fp, n in graph.nodes.items():
            f.write(json.dumps({"id": ids[fp], "state": print_state(n.state),
                                "initial": n.initial}) + "\n")  # fmt: skip
    with (src / "edges.jsonl").open("w") as f:
        for s, a, d in graph.edges:
            f.write(json.dumps({"src": ids[s], "action": a, "dst": ids[d]}) + "\n")
    info = ingest_python_jsonl(spark, src, "Toy2", tmp_path / "pyj")
    assert isinstance(info, GraphInfo) and info.states == len(graph.nodes)
    assert crosscheck(spark, toy, tmp_path / "pyj", "Toy2").matches


def test_edge_to_missing_state_is_an_input_error(spark: SparkSession, tmp_path: Path) -> None:
    dot = tmp_path / "bad.dot"
    dot.write_text(
        'strict digraph DiskGraph {\nnodesep=0.35;\nsubgraph cluster_graph {\ncolor="white";\n'
        '1 [label="/\\\\ x = 0",style = filled]\n'
        '1 -> 7 [label="Next",color="black",fontcolor="black"];\n}\n}\n',
        encoding="utf-8",
    )
    with pytest.raises(InputError) as e:
        ingest_dot(spark, dot, "Bad", tmp_path / "g")
    assert e.value.message == (
        f"{dot}: a transition refers to state 7, which has no state line (1 such state(s))"
    )


def test_bad_label_is_an_input_error(spark: SparkSession, tmp_path: Path) -> None:
    dot = tmp_path / "bad.dot"
    dot.write_text(
        'strict digraph DiskGraph {\nnodesep=0.35;\nsubgraph cluster_graph {\ncolor="white";\n'
        '1 [label="/\\\\ x = <<1",style = filled]\n}\n}\n',
        encoding="utf-8",
    )
    with pytest.raises(InputError) as e:
        ingest_dot(spark, dot, "Bad", tmp_path / "g")
    assert e.value.message.startswith(f"in the label of state 1: {dot}:5: ")


def test_crosscheck_refuses_other_model(spark: SparkSession, toy: Path) -> None:
    with pytest.raises(InputError) as e:
        crosscheck(spark, toy, toy, "MCToken2")
    assert e.value.message == f"{toy}: the graph directory holds model Toy2, not MCToken2"
