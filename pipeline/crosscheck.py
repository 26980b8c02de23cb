"""Exact cross-check of two graph directories (e.g. TLC's and the Python model's).

States are compared by their canonical text (``canon``), initial states as a set,
edges as ``(src, action, dst)`` after mapping each graph's own ids to states: left
anti-joins both ways.  The Spark job joins on a 64-bit fingerprint of the canonical
text (Spark's native ``xxhash64``, the same in both graphs), the text itself only a
tie-break: states on ``(fingerprint, text)`` -- exact -- and edges on
``(fingerprint of src, action, fingerprint of dst)``, 20 bytes a row where the text
would be two kilobytes.  That is exact too once each graph's fingerprints are
checked one-to-one with its texts (a clash stops the run, ``RL-INTERNAL-FP``): an
edge could then only match a different edge through a state one graph lacks, which
the state comparison reports.  The distinct-state counts are
compared with ``spec/manifest.json`` when the model has a row there and passes.
For a handful of differences a shortest path from an initial state of the graph
that has them is found (BFS by joins, :mod:`redletter.pipeline.reach`).

Two engines give the same :class:`CrosscheckReport`: :func:`crosscheck` (Spark)
and :func:`crosscheck_local` (one Python process over the same Parquet, pyarrow
only), used as the benchmark baseline and as an oracle for the Spark job.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow.compute as pc  # type: ignore[import-untyped, unused-ignore]
import pyarrow.parquet as pq  # type: ignore[import-untyped, unused-ignore]

from redletter.errors import InputError, InternalError
from redletter.pipeline.ingest import read_graph_info

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "CrosscheckReport",
    "Difference",
    "GraphCounts",
    "crosscheck",
    "crosscheck_local",
    "format_report",
]

Edge = tuple[str, str, str]  # (src canon, action or "", dst canon)
Path_ = tuple[tuple[str, str], ...]  # ((action or "" for the first, canon), ...)


@dataclass(frozen=True)
class GraphCounts:
    """Distinct states, distinct labelled edges and initial states of one graph."""

    states: int
    edges: int
    initial: int


@dataclass(frozen=True)
class Difference:
    """A state, initial state or edge that only one graph has, with a shortest path
    to it (to the edge's source, then the edge) in that graph."""

    kind: str  # "state" | "initial" | "edge"
    only_in: str  # the name of the graph that has it
    state: str  # the state (kind state/initial) or the edge's source, canon text
    action: str | None = None  # edges only
    dst: str | None = None  # edges only
    path: Path_ = ()


@dataclass(frozen=True)
class CrosscheckReport:
    """Everything :func:`crosscheck` found; ``matches`` when nothing differs."""

    model: str
    names: tuple[str, str]
    counts: tuple[GraphCounts, GraphCounts]
    only_states: tuple[int, int]  # states only in the first / only in the second
    only_initial: tuple[int, int]
    only_edges: tuple[int, int]
    manifest_distinct: int | None
    differences: tuple[Difference, ...]

    @property
    def problems(self) -> tuple[str, ...]:
        """One sentence per mismatch, in a fixed order."""
        out: list[str] = []
        a, b = self.names
        for what, pair in (
            ("states", self.only_states),
            ("initial states", self.only_initial),
            ("edges", self.only_edges),
        ):
            if pair[0]:
                out.append(f"{pair[0]} {what} in {a} are not in {b}")
            if pair[1]:
                out.append(f"{pair[1]} {what} in {b} are not in {a}")
        if self.manifest_distinct is not None:
            for name, c in zip(self.names, self.counts, strict=True):
                if c.states != self.manifest_distinct:
                    out.append(
                        f"{name} has {c.states} distinct states, spec/manifest.json says"
                        f" {self.manifest_distinct} for {self.model}"
                    )
        return tuple(out)

    @property
    def matches(self) -> bool:
        """True when the graphs are equal and agree with the manifest."""
        return not self.problems


def _manifest_distinct(manifest: Path | None, model: str) -> int | None:
    if manifest is None:
        return None
    from redletter.manifest import load_manifest

    for entry in load_manifest(manifest).models:
        if entry.model == model:
            return entry.distinct if entry.expect == "success" else None
    return None


def _check_dirs(dirs: Iterable[Path], model: str) -> None:
    for d in dirs:
        info = read_graph_info(d)
        if info.states < 0:
            raise InputError(
                "the graph directory was not finished (ingest stopped before parsing the"
                " states); run the ingest again",
                path=str(d),
                code="RL-INPUT-GRAPH",
            )
        if info.model != model:
            raise InputError(
                f"the graph directory holds model {info.model}, not {model}",
                path=str(d),
                code="RL-INPUT-GRAPH",
            )


# --------------------------------------------------------------------------- Spark


def _side(spark: SparkSession, d: Path, model: str) -> tuple[DataFrame, DataFrame]:
    from pyspark.sql import functions as F

    states = spark.read.parquet(str(d / "states")).filter(F.col("model") == model)
    edges = spark.read.parquet(str(d / "edges")).filter(F.col("model") == model)
    return states.select("fp", "canon", "initial"), edges.select("src", "action", "dst")


def _fp_edges(states: DataFrame, edges: DataFrame) -> DataFrame:
    """The edges as ``(hs, action, hd)``: the fingerprints of their states' texts."""
    from pyspark.sql import functions as F

    s = states.select(F.col("fp").alias("src"), F.col("h").alias("hs"))
    d = states.select(F.col("fp").alias("dst"), F.col("h").alias("hd"))
    return (
        edges.join(s, "src")
        .join(d, "dst")
        .select("hs", F.coalesce(F.col("action"), F.lit("")).alias("action"), "hd")
        .distinct()
    )


def _one_to_one(texts: DataFrame, model: str, name: str) -> None:
    """Each fingerprint of one graph names one text (else the edges' join on
    fingerprints would not be exact)."""
    from pyspark.sql import functions as F

    clash = texts.groupBy("h").agg(F.count("*").alias("n")).filter("n > 1").limit(1).collect()
    if clash:
        pair = texts.filter(F.col("h") == clash[0].h).limit(2).collect()
        raise InternalError(
            f"{model}: two states of the {name} graph share the 64-bit fingerprint"
            f" {clash[0].h}: {pair[0].canon!r} and {pair[1].canon!r}; compare these graphs"
            " with 'crosscheck_local' (it compares the texts)",
            code="RL-INTERNAL-FP",
        )


def crosscheck(
    spark: SparkSession,
    a_dir: str | Path,
    b_dir: str | Path,
    model: str,
    *,
    names: tuple[str, str] = ("tlc", "python"),
    manifest: Path | None = None,
    show: int = 3,
) -> CrosscheckReport:
    """Compare two graph directories exactly with Spark joins.

    ``show`` differences of each kind and side get a shortest path.
    """
    from pyspark.sql import functions as F

    from redletter.pipeline.reach import shortest_paths

    dirs = (Path(a_dir), Path(b_dir))
    _check_dirs(dirs, model)
    sides = [
        (s.withColumn("h", F.xxhash64("canon")), e)
        for s, e in (_side(spark, d, model) for d in dirs)
    ]
    canon = [s.select("h", "canon").distinct().localCheckpoint() for s, _ in sides]
    for texts, name in zip(canon, names, strict=True):
        _one_to_one(texts, model, name)
    init = [s.filter("initial").select("h", "canon").distinct() for s, _ in sides]
    fedges = [_fp_edges(s, e).localCheckpoint() for s, e in sides]
    counts = tuple(
        GraphCounts(c.count(), e.count(), i.count())
        for c, e, i in zip(canon, fedges, init, strict=True)
    )
    only_s, only_i, only_e = [], [], []
    diffs: list[Difference] = []
    for me, other in ((0, 1), (1, 0)):
        s_only = canon[me].join(canon[other], ["h", "canon"], "left_anti")
        i_only = init[me].join(init[other], ["h", "canon"], "left_anti")
        e_only = fedges[me].join(fedges[other], ["hs", "action", "hd"], "left_anti")
        only_s.append(s_only.count())
        only_i.append(i_only.count())
        only_e.append(e_only.count())
        picked: list[tuple[str, str, str | None, str | None]] = [
            ("state", r.canon, None, None) for r in s_only.orderBy("canon").limit(show).collect()
        ]
        picked += [
            ("initial", r.canon, None, None) for r in i_only.orderBy("canon").limit(show).collect()
        ]
        text = canon[me].select(F.col("h").alias("hs"), F.col("canon").alias("sc"))
        e_text = e_only.join(text, "hs").join(
            text.select(F.col("hs").alias("hd"), F.col("sc").alias("dc")), "hd"
        )
        picked += [
            ("edge", r.sc, r.action, r.dc)
            for r in e_text.orderBy("sc", "action", "dc").limit(show).collect()
        ]
        if not picked:
            continue
        states, edges = sides[me]
        wanted = sorted({p[1] for p in picked})
        fp_of = {
            r.canon: r.fp
            for r in states.filter(F.col("canon").isin(wanted)).select("canon", "fp").collect()
        }
        sources = states.filter("initial").select(F.col("fp").alias("node"))
        paths = shortest_paths(edges, sources, sorted(fp_of.values()))
        need = {step.node for p in paths.values() for step in p}
        canon_of = {
            r.fp: r.canon
            for r in states.filter(F.col("fp").isin(sorted(need))).select("fp", "canon").collect()
        }
        for kind, state, action, dst in picked:
            steps = paths.get(fp_of.get(state), ())
            path = tuple((s.action or "", canon_of[s.node]) for s in steps)
            diffs.append(Difference(kind, names[me], state, action, dst, path))
    return CrosscheckReport(
        model=model,
        names=names,
        counts=(counts[0], counts[1]),
        only_states=(only_s[0], only_s[1]),
        only_initial=(only_i[0], only_i[1]),
        only_edges=(only_e[0], only_e[1]),
        manifest_distinct=_manifest_distinct(manifest, model),
        differences=tuple(diffs),
    )


# --------------------------------------------------------------------------- local


@dataclass(frozen=True)
class _LocalGraph:
    canon: dict[int, str]
    initial: frozenset[str]
    edges: frozenset[tuple[int, str, int]]

    def canon_edges(self) -> frozenset[Edge]:
        c = self.canon
        return frozenset((c[s], a, c[d]) for s, a, d in self.edges)

    def path_to(self, target: str) -> Path_:
        starts = [fp for fp, c in self.canon.items() if c in self.initial]
        parent: dict[int, tuple[int, str] | None] = dict.fromkeys(starts)
        out: dict[int, list[tuple[str, int]]] = {}
        for s, a, d in sorted(self.edges):
            out.setdefault(s, []).append((a, d))
        queue = deque(starts)
        goal = None
        while queue:
            n = queue.popleft()
            if self.canon[n] == target:
                goal = n
                break
            for a, d in out.get(n, ()):
                if d not in parent:
                    parent[d] = (n, a)
                    queue.append(d)
        if goal is None:
            return ()
        steps: list[tuple[str, str]] = []
        cur: int | None = goal
        while cur is not None:
            p = parent[cur]
            steps.append((p[1] if p else "", self.canon[cur]))
            cur = p[0] if p else None
        return tuple(reversed(steps))


def _read_local(d: Path, model: str) -> _LocalGraph:
    st = pq.read_table(d / "states", columns=["model", "fp", "canon", "initial"])
    st = st.filter(pc.equal(st["model"], model))
    ed = pq.read_table(d / "edges", columns=["model", "src", "action", "dst"])
    ed = ed.filter(pc.equal(ed["model"], model))
    fps, canons, inits = (st[c].to_pylist() for c in ("fp", "canon", "initial"))
    return _LocalGraph(
        canon=dict(zip(fps, canons, strict=True)),
        initial=frozenset(c for c, i in zip(canons, inits, strict=True) if i),
        edges=frozenset(
            zip(
                ed["src"].to_pylist(),
                (a or "" for a in ed["action"].to_pylist()),
                ed["dst"].to_pylist(),
                strict=True,
            )
        ),
    )


def crosscheck_local(
    a_dir: str | Path,
    b_dir: str | Path,
    model: str,
    *,
    names: tuple[str, str] = ("tlc", "python"),
    manifest: Path | None = None,
    show: int = 3,
) -> CrosscheckReport:
    """The same comparison in one Python process (pyarrow + sets); same report."""
    dirs = (Path(a_dir), Path(b_dir))
    _check_dirs(dirs, model)
    g = [_read_local(d, model) for d in dirs]
    canon = [frozenset(x.canon.values()) for x in g]
    cedges = [x.canon_edges() for x in g]
    diffs: list[Difference] = []
    only_s, only_i, only_e = [], [], []
    for me, other in ((0, 1), (1, 0)):
        s_only = sorted(canon[me] - canon[other])
        i_only = sorted(g[me].initial - g[other].initial)
        e_only = sorted(cedges[me] - cedges[other])
        only_s.append(len(s_only))
        only_i.append(len(i_only))
        only_e.append(len(e_only))
        for kind, items in (("state", s_only), ("initial", i_only)):
            for c in items[:show]:
                diffs.append(Difference(kind, names[me], c, None, None, g[me].path_to(c)))
        for sc, a, dc in e_only[:show]:
            diffs.append(Difference("edge", names[me], sc, a, dc, g[me].path_to(sc)))
    counts = [
        GraphCounts(len(c), len(e), len(x.initial))
        for c, e, x in zip(canon, cedges, g, strict=True)
    ]
    return CrosscheckReport(
        model=model,
        names=names,
        counts=(counts[0], counts[1]),
        only_states=(only_s[0], only_s[1]),
        only_initial=(only_i[0], only_i[1]),
        only_edges=(only_e[0], only_e[1]),
        manifest_distinct=_manifest_distinct(manifest, model),
        differences=tuple(diffs),
    )


# --------------------------------------------------------------------------- text


def _indent(text: str, pad: str) -> str:
    return "\n".join(pad + line for line in text.splitlines())


def format_report(report: CrosscheckReport, *, full_paths: bool = False) -> str:
    """The report as plain text (TLA+ syntax for states)."""
    a, b = report.names
    ca, cb = report.counts
    lines = [
        f"cross-check {report.model}: {a} vs {b}",
        f"  distinct states  {a} {ca.states:>10,}   {b} {cb.states:>10,}"
        + (
            f"   manifest {report.manifest_distinct:,}"
            if report.manifest_distinct is not None
            else ""
        ),
        f"  labelled edges   {a} {ca.edges:>10,}   {b} {cb.edges:>10,}",
        f"  initial states   {a} {ca.initial:>10,}   {b} {cb.initial:>10,}",
    ]
    if report.matches:
        lines.append("  MATCH: same states, initial states and labelled edges")
        return "\n".join(lines)
    lines.append("  MISMATCH:")
    lines += [f"    {p}" for p in report.problems]
    for d in report.differences:
        if d.kind == "edge":
            lines.append(f"  edge only in {d.only_in}: {d.action or '(unlabelled)'} from")
            lines.append(_indent(d.state, "      "))
            lines.append("    to")
            lines.append(_indent(d.dst or "", "      "))
        else:
            lines.append(f"  {d.kind} only in {d.only_in}:")
            lines.append(_indent(d.state, "      "))
        if not d.path:
            lines.append("    (not reachable from an initial state of that graph)")
            continue
        acts = " -> ".join(["Init", *(s[0] for s in d.path[1:])])
        target = "its source" if d.kind == "edge" else "it"
        lines.append(f"    shortest path to {target} ({len(d.path) - 1} steps): {acts}")
        shown = d.path if full_paths else d.path[-2:]
        if not full_paths and len(d.path) > 2:
            lines.append("    ... (--full-paths prints every state)")
        for action, state in shown:
            lines.append(f"    {action or 'Init'}:")
            lines.append(_indent(state, "      "))
    return "\n".join(lines)
