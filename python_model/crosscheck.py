r"""The exact cross-check of the Python model against TLC's state graph.

:func:`crosscheck` runs TLC with ``-dump dot,actionlabels`` into a temporary
directory, reads the DOT dump (:func:`redletter.python_model.dot.iter_dot`), turns every state
label into the model's :class:`~redletter.python_model.state.State`, explores the model with the
Python explorer, and compares:

* the set of states, the set of initial states and the set of labelled edges
  ``(state, action name, successor)``, exactly;
* the number of generated transitions: TLC's "states generated" equals the Python
  explorer's total (initial states plus every successor generated, constraint-violating
  ones included), and the number of DOT edge lines equals the number of transitions
  into constraint-satisfying states -- TLC 2.15 writes no node and no edge for a
  successor that violates the CONSTRAINT (see :mod:`redletter.python_model.explore`);
* the dashed self-loops TLC adds when it checks liveness (``-dump`` writes one
  ``fp -> fp [style="dashed"]`` per distinct state when the cfg has a temporal
  property, none otherwise);
* the distinct-state count and depth with TLC's, and the distinct-state count with
  ``spec/manifest.json``.

A model that must fail stops TLC early, so only the verdicts are compared: both engines
report the same violated invariant, and the Python counterexample (a shortest one) is no
longer than TLC's.

Speed: a DOT label is ``/\ var = text`` lines joined by ``\n``.  Each ``var = text``
piece is converted once (parse, then :func:`~redletter.python_model.state.from_tla` of that one
variable) and memoised: most pieces repeat across states.  ``from_tla`` converts each
variable on its own, so converting a variable inside a template state and taking its
field is exact; the first states and a sample of the rest are also converted the slow
way (:func:`~redletter.python_model.values.parse_state` of the whole label) and compared, so a
difference between the two paths is an internal error, never a silent one.

Nothing here prints; :func:`format_result` gives the lines the CLI prints.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from array import array
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from itertools import pairwise
from pathlib import Path
from typing import Final, Protocol

from redletter.errors import InputError, InternalError, RedletterError
from redletter.manifest import ModelEntry, load_manifest
from redletter.python_model.actions import ACTION_NAMES, successors
from redletter.python_model.config import ModelConfig, load_model
from redletter.python_model.dot import DotNode, iter_dot, unescape_label
from redletter.python_model.explore import ExploreResult, Graph, explore, parent_chain
from redletter.python_model.state import TLA_NAMES, State, from_tla, to_tla
from redletter.python_model.values import State as TlaState
from redletter.python_model.values import Value, parse_state, parse_value, print_state, print_value
from redletter.tlc import ResultKind, TlcResult, run_tlc
from redletter.toolchain import require_java, require_tlc_jar

__all__ = [
    "CrosscheckHook",
    "CrosscheckResult",
    "Difference",
    "LabelReader",
    "PathStep",
    "TlcGraph",
    "compare_graphs",
    "compare_violation",
    "crosscheck",
    "crosscheck_run",
    "dump_args",
    "format_result",
    "read_tlc_graph",
    "tlc_trace_length",
]

#: How many differences of each kind are shown (with a shortest path each).
SHOW: Final = 3
#: Labels also converted the slow way to confirm the memoised conversion.
VERIFY_FIRST: Final = 32
VERIFY_EVERY: Final = 4999

_SEP: Final = "\\n/\\\\ "  # the raw (escaped) text between two variables of a label
_START: Final = "/\\\\ "  # the raw text that starts a label
_TRACE_STATE: Final = re.compile(r"^\d+: <", re.MULTILINE)


def dump_args(dot_base: Path) -> list[str]:
    """TLC's arguments to dump the state graph to ``<dot_base>.dot``.

    With a temporal property TLC 2.15 also dumps its liveness graph, several times the
    size of the state graph and unused here, to ``<dot_base>_liveness.dot``: that path
    is made a symbolic link to the null device first, so it costs no disk."""
    liveness = dot_base.with_name(dot_base.name + "_liveness.dot")
    if not liveness.is_symlink():
        liveness.unlink(missing_ok=True)
        liveness.symlink_to(os.devnull)
    return ["-dump", "dot,actionlabels", str(dot_base)]


# --------------------------------------------------------------------------- labels


class LabelReader:
    """Turns TLC's raw DOT labels into :class:`State` values, memoising each variable.

    Not thread-safe (it owns a cache); one per cross-check.
    """

    def __init__(self, cfg: ModelConfig, template: State) -> None:
        self.cfg = cfg
        self._template = to_tla(cfg, template)
        self._fields = tuple(TLA_NAMES)
        self._position = {tla: i for i, tla in enumerate(TLA_NAMES.values())}
        self._memo: dict[str, tuple[int, object]] = {}
        self.count = 0
        self.misses = 0

    def _piece(self, piece: str, path: str, line: int) -> tuple[int, object] | None:
        eq = piece.find(" = ")
        pos = self._position.get(piece[:eq]) if eq > 0 else None
        if pos is None:
            return None
        value = parse_value(unescape_label(piece[eq + 3 :], path=path, line=line), path=path)
        values = dict(self._template.items())
        values[piece[:eq]] = value
        converted = getattr(from_tla(self.cfg, values), self._fields[pos])
        return pos, converted

    def slow(self, raw: str, path: str = "", line: int = 0) -> State:
        """The exact conversion of a whole label, with no memo."""
        return from_tla(self.cfg, parse_state(unescape_label(raw, path=path, line=line)))

    def state(self, raw: str, path: str = "", line: int = 0) -> State:
        """The state a raw (escaped) DOT label prints."""
        self.count += 1
        memo = self._memo
        n = len(self._fields)
        pieces = raw[len(_START) :].split(_SEP) if raw.startswith(_START) else []
        if len(pieces) == n:
            fields: list[object] = [None] * n
            filled = 0
            for piece in pieces:
                got = memo.get(piece)
                if got is None:
                    got = self._piece(piece, path, line)
                    if got is None:
                        break
                    self.misses += 1
                    memo[piece] = got
                pos, value = got
                if fields[pos] is None:
                    filled += 1
                fields[pos] = value
            if filled == n:
                return State(*fields)  # type: ignore[arg-type]
        # a string value holding the separator, or a label of another shape
        return self.slow(raw, path, line)


# --------------------------------------------------------------------------- TLC side


@dataclass(frozen=True)
class TlcGraph:
    """TLC's graph as read from the DOT dump: states in file order, edges by index.

    ``edge_action[j]`` indexes :attr:`actions` (``ACTION_NAMES`` first, then any other
    name TLC wrote, ``""`` for an unlabelled edge).
    """

    states: list[State]
    fps: array[int]
    initial: list[int]
    edge_src: array[int]
    edge_action: array[int]
    edge_dst: array[int]
    actions: list[str]
    stutter_lines: int
    stutter_other: int  #: dashed edges that are not a self-loop
    seconds: float


def read_tlc_graph(cfg: ModelConfig, path: Path, reader: LabelReader) -> TlcGraph:
    """Read a DOT dump into a :class:`TlcGraph` (labels converted with ``reader``).

    A fingerprint with two different labels, or an edge to or from a fingerprint with no
    state line, raises :class:`InputError` naming the file and line.
    """
    start = time.perf_counter()
    name = str(path)
    index: dict[int, int] = {}
    states: list[State] = []
    fps: array[int] = array("q")
    initial: list[int] = []
    actions = list(ACTION_NAMES)
    action_code = {a: i for i, a in enumerate(actions)}
    raw_src: array[int] = array("q")
    raw_dst: array[int] = array("q")
    edge_action: array[int] = array("b")
    edge_line: array[int] = array("q")
    stutter = stutter_other = 0
    verify_next = 0
    for item in iter_dot(path):
        if isinstance(item, DotNode):
            known = index.get(item.fp)
            if known is not None:
                if reader.state(item.raw_label, name, item.line) != states[known]:
                    raise InputError(
                        f"state {item.fp} is a different state than before"
                        " (a fingerprint collision?)",
                        path=name,
                        line=item.line,
                        code="RL-INPUT-DOT",
                    )
                if item.initial and known not in initial:
                    initial.append(known)
                continue
            s = reader.state(item.raw_label, name, item.line)
            if len(states) < VERIFY_FIRST or len(states) == verify_next:
                verify_next = len(states) + VERIFY_EVERY
                if reader.slow(item.raw_label, name, item.line) != s:
                    raise InternalError(
                        f"the memoised label conversion differs from parse_state on the"
                        f" state on line {item.line} of {name}"
                    )
            index[item.fp] = len(states)
            fps.append(item.fp)
            states.append(s)
            if item.initial:
                initial.append(len(states) - 1)
        elif item.stuttering:
            if item.src == item.dst:
                stutter += 1
            else:
                stutter_other += 1
        else:
            label = item.action or ""
            code = action_code.get(label)
            if code is None:
                code = action_code[label] = len(actions)
                actions.append(label)
            raw_src.append(item.src)
            raw_dst.append(item.dst)
            edge_action.append(code)
            edge_line.append(item.line)
    edge_src: array[int] = array("i", bytes(4 * len(raw_src)))
    edge_dst: array[int] = array("i", bytes(4 * len(raw_src)))
    for j in range(len(raw_src)):
        a, b = index.get(raw_src[j]), index.get(raw_dst[j])
        if a is None or b is None:
            raise InputError(
                f"the transition on this line refers to state "
                f"{raw_src[j] if a is None else raw_dst[j]}, which has no state line",
                path=name,
                line=edge_line[j],
                code="RL-INPUT-DOT",
            )
        edge_src[j] = a
        edge_dst[j] = b
    return TlcGraph(
        states=states,
        fps=fps,
        initial=initial,
        edge_src=edge_src,
        edge_action=edge_action,
        edge_dst=edge_dst,
        actions=actions,
        stutter_lines=stutter,
        stutter_other=stutter_other,
        seconds=time.perf_counter() - start,
    )


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class PathStep:
    """One step of a shortest path: action name and parameters (``None`` when no
    Python successor matches TLC's edge, so the parameters are unknown)."""

    action: str
    params: Mapping[str, object] | None

    def show(self) -> str:
        """``SendApp(c = <<"p1", "p2">>, m = 1)``, or ``SendApp(?)``."""
        if self.params is None:
            return f"{self.action}(?)"
        inner = ", ".join(f"{k} = {print_value(_tla(v))}" for k, v in self.params.items())
        return f"{self.action}({inner})"


def _tla(v: object) -> Value:
    if isinstance(v, list | tuple):
        return tuple(_tla(x) for x in v)
    if isinstance(v, int | str):
        return v
    raise InternalError(f"an action parameter that is not a TLA+ value: {v!r}")


@dataclass(frozen=True)
class Difference:
    """A state, initial state or edge that one side has and the other has not."""

    kind: str  #: "state", "initial state" or "edge"
    side: str  #: "TLC" or "Python": the side that has it
    state: TlaState  #: the state (an edge's source)
    action: str | None = None  #: an edge's action
    params: Mapping[str, object] | None = None  #: an edge's parameters, where known
    target: TlaState | None = None  #: an edge's target
    path: tuple[PathStep, ...] = ()  #: a shortest path to ``state`` on that side

    def lines(self) -> list[str]:
        """The difference as printed: what, which side, the state(s), the path."""
        where = "TLC's graph" if self.side == "TLC" else "the Python model's graph"
        route = " -> ".join(["Init", *(p.show() for p in self.path)])
        out: list[str] = []
        if self.kind == "edge":
            step = PathStep(self.action or "", self.params).show()
            out.append(f"edge only in {where}: {step} from the state")
            out += _indent(print_state(self.state))
            out.append("  to the state")
            assert self.target is not None
            out += _indent(print_state(self.target))
            out.append(f"  shortest path to its source in {where}: {route}")
        else:
            out.append(f"{self.kind} only in {where}:")
            out += _indent(print_state(self.state))
            out.append(f"  shortest path in {where}: {route}")
        return out


def _indent(text: str) -> list[str]:
    return ["    " + line for line in text.split("\n")]


@dataclass(frozen=True)
class CrosscheckResult:
    """The outcome of one cross-check; :attr:`exact` when nothing differs."""

    model: str
    #: "graph" (a passing model), "violation" (a model that must fail) or "pending" (a
    #: liveness failure, which the Python model cannot judge without a liveness check)
    mode: str
    distinct: int  #: the Python model's distinct states
    total: int  #: the Python model's generated states
    problems: tuple[str, ...]  #: count and verdict differences, in words
    differences: tuple[Difference, ...]  #: the first few state and edge differences
    counts: Mapping[str, int] = field(default_factory=dict)  #: difference counts by kind
    seconds: Mapping[str, float] = field(default_factory=dict)  #: time per phase
    violated: str | None = None  #: the invariant both engines found violated (must-fail)

    @property
    def exact(self) -> bool:
        """True when TLC and the Python model agree exactly."""
        return not self.problems and not self.differences

    def summary(self) -> str:
        """The ``cross-check`` column: ``exact (3370/6483)``, ``same violation (Lemma0)``
        or ``MISMATCH``."""
        if not self.exact:
            return "MISMATCH"
        if self.mode == "pending":
            return "pending (needs the Python liveness check)"
        if self.mode == "violation":
            return f"same violation ({self.violated})"
        return f"exact ({self.distinct}/{self.total})"


def format_result(r: CrosscheckResult) -> list[str]:
    """The lines printed for a cross-check: the verdict, then every problem and the
    first differences with a shortest path each."""
    if r.exact:
        if r.mode == "pending":
            return [
                f"{r.model}: cross-check pending: TLC reports a liveness failure and the "
                "Python model, which checks safety only, finds no safety violation; the "
                "liveness verdict needs the Python liveness check."
            ]
        if r.mode == "violation":
            return [
                f"{r.model}: cross-check exact: TLC and the Python model both report"
                f" {r.violated} violated (Python counterexample: {r.total} states,"
                f" TLC's: {r.counts.get('tlc trace', 0)})."
            ]
        return [
            f"{r.model}: cross-check exact: {r.distinct} states, {r.total} states generated,"
            f" {r.counts.get('edges', 0)} edges, the same in TLC and the Python model."
        ]
    lines = [f"{r.model}: cross-check MISMATCH"]
    lines += [f"  {p}" for p in r.problems]
    for d in r.differences:
        lines += ["  " + x for x in d.lines()]
    return lines


# --------------------------------------------------------------------------- comparison


def _encode(src: int, action: int, dst: int, n: int) -> int:
    return (src * 64 + action) * n + dst


def _bfs_parents(
    n: int, initial: Sequence[int], src: array[int], act: array[int], dst: array[int]
) -> tuple[array[int], array[int]]:
    """BFS parents (``-1`` for an initial state, ``-2`` unreached) and the action of
    the edge each state was reached by."""
    adj: dict[int, list[int]] = {}
    for j in range(len(src)):
        adj.setdefault(src[j], []).append(j)
    parent: array[int] = array("q", [-2]) * n
    via: array[int] = array("q", [-1]) * n
    queue: deque[int] = deque()
    for i in initial:
        if parent[i] == -2:
            parent[i] = -1
            queue.append(i)
    while queue:
        i = queue.popleft()
        for j in adj.get(i, ()):
            d = dst[j]
            if parent[d] == -2:
                parent[d] = i
                via[d] = act[j]
                queue.append(d)
    return parent, via


def _params(cfg: ModelConfig, s: State, action: str, t: State) -> Mapping[str, object] | None:
    for name, params, u in successors(cfg, s):
        if name == action and u == t:
            return params
    return None


def _path(
    cfg: ModelConfig,
    states: Sequence[State],
    parent: array[int],
    via: array[int],
    actions: Sequence[str],
    last: int,
) -> tuple[PathStep, ...]:
    chain = parent_chain(parent, last)
    steps: list[PathStep] = []
    for a, b in pairwise(chain):
        name = actions[via[b]]
        steps.append(PathStep(name, _params(cfg, states[a], name, states[b])))
    return tuple(steps)


def compare_graphs(
    cfg: ModelConfig,
    tlc: TlcGraph,
    tlc_result: TlcResult,
    py: ExploreResult,
    *,
    manifest_distinct: int | None,
    show: int = SHOW,
) -> CrosscheckResult:
    """Compare TLC's graph and counts with the Python explorer's, exactly."""
    start = time.perf_counter()
    g = py.graph
    if g is None:
        raise InternalError("the Python exploration kept no graph")
    problems: list[str] = []
    if tlc_result.kind is not ResultKind.SUCCESS:
        problems.append(f"TLC did not succeed: {tlc_result.describe()}")
    if py.violation is not None:
        problems.append(f"the Python model found a violation: {py.violation.describe()}")
    py_index: dict[State, int] = {s: i for i, s in enumerate(g.states)}
    n_py = len(g.states)
    # joint ids: Python states keep theirs, TLC-only states follow
    joint: array[int] = array("q", bytes(8 * len(tlc.states)))
    hit = bytearray(n_py)
    tlc_only: list[int] = []
    duplicates = 0
    for i, s in enumerate(tlc.states):
        j = py_index.get(s)
        if j is None:
            joint[i] = n_py + len(tlc_only)
            tlc_only.append(i)
        else:
            if hit[j]:
                duplicates += 1
            hit[j] = 1
            joint[i] = j
    py_only = [j for j in range(n_py) if not hit[j]]
    n = n_py + len(tlc_only)
    # the Python action codes are ACTION_NAMES; TLC's extend them
    py_edges = {
        _encode(s, a, d, n) for s, a, d in zip(g.edge_src, g.edge_action, g.edge_dst, strict=True)
    }
    tlc_edges = {
        _encode(joint[s], a, joint[d], n)
        for s, a, d in zip(tlc.edge_src, tlc.edge_action, tlc.edge_dst, strict=True)
    }
    edges_only_tlc = sorted(tlc_edges - py_edges)
    edges_only_py = sorted(py_edges - tlc_edges)
    py_initial = set(g.initial)
    tlc_initial = {int(joint[i]) for i in tlc.initial}
    init_only_tlc = sorted(tlc_initial - py_initial)
    init_only_py = sorted(py_initial - tlc_initial)

    def count(what: str, tlc_n: int | None, py_n: int) -> None:
        if tlc_n != py_n:
            shown = "none" if tlc_n is None else str(tlc_n)
            problems.append(f"{what}: TLC {shown}, Python {py_n}")

    count("distinct states", tlc_result.distinct, py.distinct)
    count("states generated", tlc_result.total, py.total)
    count("depth", tlc_result.depth, py.depth)
    count("state lines in the DOT dump", len(tlc.states), py.distinct)
    count("edge lines in the DOT dump", len(tlc.edge_src), len(g.edge_src))
    expected_stutter = len(tlc.states) if cfg.liveness else 0
    if tlc.stutter_lines != expected_stutter or tlc.stutter_other:
        problems.append(
            f"dashed (stuttering) edge lines in the DOT dump: {tlc.stutter_lines} self-loops"
            f" and {tlc.stutter_other} others, expected {expected_stutter} self-loops"
        )
    if manifest_distinct is not None and manifest_distinct != py.distinct:
        problems.append(
            f"distinct states: spec/manifest.json {manifest_distinct}, Python {py.distinct}"
        )
    if duplicates:
        problems.append(f"{duplicates} TLC state(s) are the same Python state as another")
    counts = {
        "states": n_py,
        "edges": len(py_edges),
        "states only in TLC": len(tlc_only),
        "states only in Python": len(py_only),
        "initial states only in TLC": len(init_only_tlc),
        "initial states only in Python": len(init_only_py),
        "edges only in TLC": len(edges_only_tlc),
        "edges only in Python": len(edges_only_py),
    }
    for what in counts:
        if "only" in what and counts[what]:
            problems.append(f"{what}: {counts[what]}")
    differences: list[Difference] = []
    if any(counts[k] for k in counts if "only" in k):
        differences = _differences(
            cfg,
            tlc,
            g,
            joint,
            n,
            tlc_only=tlc_only,
            py_only=py_only,
            init_only=(init_only_tlc, init_only_py),
            edges_only=(edges_only_tlc, edges_only_py),
            show=show,
        )
    return CrosscheckResult(
        model=cfg.name,
        mode="graph",
        distinct=py.distinct,
        total=py.total,
        problems=tuple(problems),
        differences=tuple(differences),
        counts=counts,
        seconds={"compare": time.perf_counter() - start},
    )


def _differences(
    cfg: ModelConfig,
    tlc: TlcGraph,
    g: Graph,
    joint: array[int],
    n: int,
    *,
    tlc_only: list[int],
    py_only: list[int],
    init_only: tuple[list[int], list[int]],
    edges_only: tuple[list[int], list[int]],
    show: int,
) -> list[Difference]:
    n_py = len(g.states)
    t_parent, t_via = _bfs_parents(
        len(tlc.states), tlc.initial, tlc.edge_src, tlc.edge_action, tlc.edge_dst
    )
    p_parent, p_via = _bfs_parents(n_py, g.initial, g.edge_src, g.edge_action, g.edge_dst)
    # joint id -> TLC index (for TLC-side paths)
    tlc_of: dict[int, int] = {int(joint[i]): i for i in range(len(tlc.states))}

    def tla(s: State) -> TlaState:
        return to_tla(cfg, s)

    def tlc_path(i: int) -> tuple[PathStep, ...]:
        return _path(cfg, tlc.states, t_parent, t_via, tlc.actions, i)

    def py_path(j: int) -> tuple[PathStep, ...]:
        return _path(cfg, g.states, p_parent, p_via, ACTION_NAMES, j)

    out: list[Difference] = []
    for i in tlc_only[:show]:
        out.append(Difference("state", "TLC", tla(tlc.states[i]), path=tlc_path(i)))
    for j in py_only[:show]:
        out.append(Difference("state", "Python", tla(g.states[j]), path=py_path(j)))
    for x in init_only[0][:show]:
        i = tlc_of[x]
        out.append(Difference("initial state", "TLC", tla(tlc.states[i])))
    for j in init_only[1][:show]:
        out.append(Difference("initial state", "Python", tla(g.states[j])))
    for side, keys in (("TLC", edges_only[0]), ("Python", edges_only[1])):
        for key in keys[:show]:
            rest, d = divmod(key, n)
            s, a = divmod(rest, 64)
            if side == "TLC":
                si, di = tlc_of[s], tlc_of[d]
                src, dst = tlc.states[si], tlc.states[di]
                name = tlc.actions[a]
                path = tlc_path(si)
            else:
                src, dst = g.states[s], g.states[d]
                name = ACTION_NAMES[a]
                path = py_path(s)
            out.append(
                Difference(
                    "edge",
                    side,
                    tla(src),
                    action=name,
                    params=_params(cfg, src, name, dst),
                    target=tla(dst),
                    path=path,
                )
            )
    return out


def tlc_trace_length(trace: str) -> int:
    """The number of states in a counterexample as TLC printed it."""
    return len(_TRACE_STATE.findall(trace))


def compare_violation(
    cfg: ModelConfig, tlc_result: TlcResult, py: ExploreResult
) -> CrosscheckResult:
    """For a model that must fail: the same violated invariant, and a Python
    counterexample no longer than TLC's."""
    problems: list[str] = []
    v = py.violation
    tlc_len = tlc_trace_length(tlc_result.trace)
    if tlc_result.kind is ResultKind.LIVENESS_FAILURE and v is None:
        return CrosscheckResult(
            model=cfg.name,
            mode="pending",
            distinct=py.distinct,
            total=py.total,
            problems=(),
            differences=(),
        )
    if tlc_result.kind is not ResultKind.SAFETY_FAILURE:
        problems.append(f"TLC found no safety violation: {tlc_result.describe()}")
    if v is None:
        problems.append("the Python model found no violation")
    elif v.name != tlc_result.violated:
        problems.append(f"violated: TLC {tlc_result.violated or 'nothing'}, Python {v.name}")
    elif len(v.trace) > tlc_len:
        problems.append(
            f"the Python counterexample has {len(v.trace)} states, TLC's {tlc_len}:"
            " a breadth-first counterexample is never longer"
        )
    return CrosscheckResult(
        model=cfg.name,
        mode="violation",
        distinct=py.distinct,
        total=len(v.trace) if v is not None else 0,
        problems=tuple(problems),
        differences=(),
        counts={"tlc trace": tlc_len},
        violated=v.name if v is not None else None,
    )


# --------------------------------------------------------------------------- drivers


def crosscheck_run(
    cfg: ModelConfig,
    tlc_result: TlcResult,
    dot_path: Path,
    *,
    entry: ModelEntry | None,
    py: ExploreResult | None = None,
    on_phase: Callable[[str], None] | None = None,
) -> CrosscheckResult:
    """Cross-check a finished TLC run (its DOT dump at ``dot_path``) with the Python
    model (explored here unless ``py`` is given, with ``graph=True``).  ``entry`` is
    the model's manifest row, if it has one: a row that expects a failure, or a run
    where TLC found one, compares the verdicts only."""

    def phase(name: str) -> None:
        if on_phase is not None:
            on_phase(name)

    must_fail = (
        entry.expect != "success"
        if entry is not None
        else tlc_result.kind is ResultKind.SAFETY_FAILURE
    )
    seconds: dict[str, float] = {"tlc": tlc_result.seconds}
    if py is None:
        phase("explore")
        t0 = time.perf_counter()
        py = explore(cfg, graph=not must_fail)
        seconds["explore"] = time.perf_counter() - t0
    else:
        seconds["explore"] = py.seconds
    if must_fail:
        return _with_seconds(compare_violation(cfg, tlc_result, py), seconds)
    if py.graph is None or not py.graph.states:
        raise InternalError(f"the Python model of {cfg.name} kept no graph or has no state")
    phase("parse")
    reader = LabelReader(cfg, py.graph.states[py.graph.initial[0]])
    tlc = read_tlc_graph(cfg, dot_path, reader)
    seconds["parse"] = tlc.seconds
    phase("compare")
    manifest_distinct = entry.distinct if entry is not None else None
    r = compare_graphs(cfg, tlc, tlc_result, py, manifest_distinct=manifest_distinct)
    seconds["compare"] = r.seconds["compare"]
    return _with_seconds(r, seconds)


def _with_seconds(r: CrosscheckResult, seconds: dict[str, float]) -> CrosscheckResult:
    return replace(r, seconds=dict(seconds))


def _entry(manifest_path: Path, model: str) -> ModelEntry | None:
    if not manifest_path.is_file():
        return None
    manifest = load_manifest(manifest_path)
    return next((m for m in manifest.models if m.model == model), None)


class _ProjectLike(Protocol):
    """What :func:`crosscheck` needs of :class:`redletter.check.Project`."""

    @property
    def spec_dir(self) -> Path: ...

    @property
    def cache_dir(self) -> Path: ...

    @property
    def manifest_path(self) -> Path: ...


def crosscheck(
    model: str,
    project: _ProjectLike,
    *,
    workers: int = 2,
    parallel: bool = True,
    on_phase: Callable[[str], None] | None = None,
) -> CrosscheckResult:
    """Run TLC on ``model`` with the state graph dumped to a temporary directory
    (deleted afterwards), then cross-check it with the Python model.

    With ``parallel`` the Python model explores while TLC runs (TLC is another
    process; the thread that waits for it holds no lock), so the wall time is about
    the longer of the two, not their sum; the phase times are then each one's own."""
    cfg = load_model(model, project.spec_dir)
    entry = _entry(project.manifest_path, model)
    require_java()
    jar = require_tlc_jar(project.cache_dir)
    must_fail = entry is not None and entry.expect != "success"
    with tempfile.TemporaryDirectory(prefix="redletter-crosscheck-") as tmp:
        base = Path(tmp) / model

        def run() -> TlcResult:
            return run_tlc(
                model,
                spec_dir=project.spec_dir,
                jar=jar,
                cache_dir=project.cache_dir,
                check_deadlock=entry.check_deadlock if entry is not None else False,
                workers=workers,
                extra_args=dump_args(base),
            )

        if on_phase is not None:
            on_phase("tlc")
        py: ExploreResult | None = None
        if parallel:
            with ThreadPoolExecutor(max_workers=1) as pool:
                pending = pool.submit(run)
                if on_phase is not None:
                    on_phase("explore")
                py = explore(cfg, graph=not must_fail)
                result = pending.result()
        else:
            result = run()
        dot = base.with_suffix(".dot")
        _require_dot(result, dot)
        return crosscheck_run(cfg, result, dot, entry=entry, py=py, on_phase=on_phase)


def _require_dot(result: TlcResult, dot: Path) -> None:
    if result.kind is ResultKind.SUCCESS and not dot.is_file():
        raise InternalError(f"TLC wrote no DOT dump at {dot} (see {result.log_path})")


class CrosscheckHook:
    """The cross-check as ``redletter check``'s hook: :meth:`tlc_args` adds the
    ``-dump`` arguments to the TLC run check already does, :meth:`__call__` reads the
    dump, cross-checks, deletes the dump and returns the ``cross-check`` column.
    Results are kept in :attr:`results` for the details printed below the table.
    """

    def __init__(self, spec_dir: Path) -> None:
        self.spec_dir = spec_dir
        self.results: list[CrosscheckResult] = []
        self._tmp: Path | None = None

    def _dir(self) -> Path:
        if self._tmp is None:
            self._tmp = Path(tempfile.mkdtemp(prefix="redletter-crosscheck-"))
        return self._tmp

    def tlc_args(self, entry: ModelEntry) -> list[str]:
        """The extra TLC arguments for ``entry``'s run."""
        return dump_args(self._dir() / entry.model)

    def __call__(self, entry: ModelEntry, result: TlcResult) -> str:
        base = self._dir() / entry.model
        dot = base.with_suffix(".dot")
        try:
            if result.kind is ResultKind.ERROR:
                return "— (TLC error)"
            _require_dot(result, dot)
            cfg = load_model(entry.model, self.spec_dir)
            r = crosscheck_run(cfg, result, dot, entry=entry)
        except RedletterError as e:
            r = CrosscheckResult(
                model=entry.model,
                mode="graph",
                distinct=0,
                total=0,
                problems=(f"the cross-check could not run: error[{e.code}]: {e.message}",),
                differences=(),
            )
        finally:
            dot.unlink(missing_ok=True)
            base.with_name(f"{entry.model}_liveness.dot").unlink(missing_ok=True)  # the link
        self.results.append(r)
        return r.summary()

    def close(self) -> None:
        """Delete the temporary directory."""
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def __enter__(self) -> CrosscheckHook:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def iter_mismatch_lines(results: Sequence[CrosscheckResult]) -> Iterator[str]:
    """The details of every cross-check that is not exact."""
    for r in results:
        if not r.exact:
            yield from format_result(r)
