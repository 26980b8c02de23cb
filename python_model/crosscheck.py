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
import threading
import time
from array import array
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, fields, replace
from functools import partial
from itertools import pairwise
from pathlib import Path
from typing import Any, Final, Protocol

from redletter.errors import InputError, InternalError, RedletterError
from redletter.manifest import ModelEntry, load_manifest
from redletter.python_model.config import ModelConfig
from redletter.python_model.dot import DotNode, iter_dot, unescape_label
from redletter.python_model.engine import Engine
from redletter.python_model.engines import load_engine
from redletter.python_model.explore import ExploreResult, Graph, as_engine, explore, parent_chain
from redletter.python_model.liveness import check_liveness, fair_bit_table, temporal_of
from redletter.python_model.values import State as TlaState
from redletter.python_model.values import Value, parse_state, parse_value, print_state, print_value
from redletter.tlc import ResultKind, TlcResult, ToolStalled, run_tlc
from redletter.toolchain import require_java, require_tlc_jar

__all__ = [
    "NO_MIRROR",
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
    "state_fields",
    "tlc_trace_length",
    "tlc_trace_states",
]

#: The ``cross-check`` column of a model whose manifest row says ``"python": false``.
NO_MIRROR: Final = "none: no Python mirror yet"
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


#: A state of any engine (the engine's own immutable dataclass).
State = Any


def state_fields(s: State) -> tuple[object, ...]:
    """The values of an engine state's init fields, in order: the spec's variables
    (every engine's states are dataclasses built as ``type(s)(*state_fields(s))``)."""
    return tuple(getattr(s, f.name) for f in fields(s) if f.init)


def _as_engine(model: ModelConfig | Engine[Any]) -> Engine[Any]:
    return as_engine(model)


class LabelReader:
    """Turns TLC's raw DOT labels into the engine's states, memoising each variable.

    The engine's states are dataclasses whose init fields are the spec's variables in
    :attr:`Engine.variables` order, so one variable is converted by
    :meth:`Engine.from_tla` of a template state with that variable replaced, and its
    field taken.  Not thread-safe (it owns a cache); one per cross-check.
    """

    def __init__(self, model: ModelConfig | Engine[Any], template: State) -> None:
        self.engine = _as_engine(model)
        self._template = self.engine.to_tla(template)
        self._cls = type(template)
        self._fields = tuple(f.name for f in fields(template) if f.init)
        self._position = {tla: i for i, tla in enumerate(self.engine.variables)}
        if len(self._fields) != len(self._position):
            raise InternalError(
                f"the states of {self.engine.name} have {len(self._fields)} fields for"
                f" {len(self._position)} variables"
            )
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
        converted = getattr(self.engine.from_tla(values), self._fields[pos])
        return pos, converted

    def slow(self, raw: str, path: str = "", line: int = 0) -> State:
        """The exact conversion of a whole label, with no memo."""
        return self.engine.from_tla(parse_state(unescape_label(raw, path=path, line=line)))

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
                return self._cls(*fields)
        # a string value holding the separator, or a label of another shape
        return self.slow(raw, path, line)


# --------------------------------------------------------------------------- TLC side


@dataclass(frozen=True)
class TlcGraph:
    """TLC's graph as read from the DOT dump: states in file order, edges by index.

    ``edge_action[j]`` indexes :attr:`actions` (the engine's ``action_names`` first,
    then any other name TLC wrote, ``""`` for an unlabelled edge).
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


def read_tlc_graph(model: ModelConfig | Engine[Any], path: Path, reader: LabelReader) -> TlcGraph:
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
    actions = list(_as_engine(model).action_names)
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


# --------------------------------------------------------------------------- streaming


def _read_into_ids(
    model: str, spec_dir: str, dot_path: str
) -> tuple[bytes, list[list[object]], dict[str, object]]:
    """In a child process: read a DOT dump (a FIFO TLC is writing, or a file) and
    return its states as per-variable value ids, the value tables, and the rest of
    the graph -- compact to send back (the values repeat: a few thousand distinct
    variable values for a million states).  The objects the memo shares are keyed by
    ``id()``, so no value is hashed twice."""
    engine = load_engine(model, Path(spec_dir))
    reader = LabelReader(engine, next(iter(engine.init_states())))
    try:
        g = read_tlc_graph(engine, Path(dot_path), reader)
    except RedletterError as e:
        # keep TLC writing (a full pipe would stop it), and raise a picklable error
        with open(dot_path, "rb") as rest_of_it:
            while rest_of_it.read(1 << 20):
                pass
        raise RuntimeError(f"error[{e.code}]: {e.message}") from None
    width = len(engine.variables)
    tables: list[list[object]] = [[] for _ in range(width)]
    index: list[dict[int, int]] = [{} for _ in range(width)]
    ids: array[int] = array("I")
    for st in g.states:
        for pos, value in enumerate(state_fields(st)):
            known = index[pos].get(id(value))
            if known is None:
                known = index[pos][id(value)] = len(tables[pos])
                tables[pos].append(value)
            ids.append(known)
    rest = {
        "fps": g.fps.tobytes(),
        "initial": g.initial,
        "edge_src": g.edge_src.tobytes(),
        "edge_action": g.edge_action.tobytes(),
        "edge_dst": g.edge_dst.tobytes(),
        "actions": g.actions,
        "stutter_lines": g.stutter_lines,
        "stutter_other": g.stutter_other,
        "seconds": g.seconds,
        "labels": reader.count,
        "parsed": reader.misses,
    }
    return ids.tobytes(), tables, rest


def _from_ids(
    ids_bytes: bytes, tables: list[list[object]], rest: Mapping[str, object], cls: type
) -> TlcGraph:
    """The :class:`TlcGraph` the child process read (states of class ``cls``, the
    engine's, rebuilt from value ids)."""
    ids: array[int] = array("I")
    ids.frombytes(ids_bytes)
    width = len(tables)
    t = tables
    states = [cls(*(t[p][ids[i + p]] for p in range(width))) for i in range(0, len(ids), width)]

    def arr(code: str, key: str) -> array[int]:
        a: array[int] = array(code)
        a.frombytes(rest[key])  # type: ignore[arg-type]
        return a

    return TlcGraph(
        states=states,
        fps=arr("q", "fps"),
        initial=list(rest["initial"]),  # type: ignore[call-overload]
        edge_src=arr("i", "edge_src"),
        edge_action=arr("b", "edge_action"),
        edge_dst=arr("i", "edge_dst"),
        actions=list(rest["actions"]),  # type: ignore[call-overload]
        stutter_lines=int(rest["stutter_lines"]),  # type: ignore[call-overload]
        stutter_other=int(rest["stutter_other"]),  # type: ignore[call-overload]
        seconds=float(rest["seconds"]),  # type: ignore[arg-type]
    )


def graph_only_spec(spec_dir: Path, model: str, into: Path) -> Path:
    """A copy of ``spec_dir`` whose ``model``.cfg keeps the constants, the
    SPECIFICATION and the CONSTRAINT and drops every INVARIANT and PROPERTY: TLC then
    only builds (and dumps) the state graph, which is what the cross-check compares;
    the invariants are checked by ``redletter check`` and the Python explorer."""
    shutil.copytree(spec_dir, into, dirs_exist_ok=True)
    cfg = into / f"{model}.cfg"
    out: list[str] = []
    dropping = False
    for line in cfg.read_text(encoding="utf-8").splitlines():
        words = line.split()
        if words and not line[:1].isspace() and words[0].isupper():
            dropping = words[0] in ("INVARIANT", "INVARIANTS", "PROPERTY", "PROPERTIES")
        if not dropping:
            out.append(line)
    cfg.write_text("\n".join(out) + "\n", encoding="utf-8")
    return into


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
    mode: str  #: "graph" (a passing model) or "violation" (a model that must fail)
    distinct: int  #: the Python model's distinct states
    total: int  #: the Python model's generated states
    problems: tuple[str, ...]  #: count and verdict differences, in words
    differences: tuple[Difference, ...]  #: the first few state and edge differences
    counts: Mapping[str, int] = field(default_factory=dict)  #: difference counts by kind
    seconds: Mapping[str, float] = field(default_factory=dict)  #: time per phase
    violated: str | None = None  #: the invariant both engines found violated (must-fail)
    liveness: str | None = None  #: the Python liveness verdict, when the cfg has liveness

    @property
    def exact(self) -> bool:
        """True when TLC and the Python model agree exactly."""
        return not self.problems and not self.differences

    def summary(self) -> str:
        """The ``cross-check`` column: ``exact (3370/6483)``, ``same violation (Lemma0)``
        or ``MISMATCH``."""
        if not self.exact:
            return "MISMATCH"
        if self.mode == "violation":
            return f"same violation ({self.violated})"
        if self.mode == "liveness":
            return "same verdict (liveness failure)"
        live = ", liveness agrees" if self.liveness is not None else ""
        return f"exact ({self.distinct}/{self.total}{live})"


def format_result(r: CrosscheckResult) -> list[str]:
    """The lines printed for a cross-check: the verdict, then every problem and the
    first differences with a shortest path each."""
    if r.exact:
        if r.mode == "liveness":
            return [
                f"{r.model}: cross-check exact: TLC and the Python model both report a"
                f" liveness failure (Python: {r.violated})."
            ]
        if r.mode == "violation":
            return [
                f"{r.model}: cross-check exact: TLC and the Python model both report"
                f" {r.violated} violated (Python counterexample: {r.total} states,"
                f" TLC's: {r.counts.get('tlc trace', 0)})."
            ]
        live = f"; liveness: {r.liveness} in both" if r.liveness is not None else ""
        return [
            f"{r.model}: cross-check exact: {r.distinct} states, {r.total} states generated,"
            f" {r.counts.get('edges', 0)} edges, the same in TLC and the Python model{live}."
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


def _params(engine: Engine[Any], s: State, action: str, t: State) -> Mapping[str, object] | None:
    names = engine.action_names
    for a, raw, u in engine.successors(s):
        if names[a] == action and u == t:
            return engine.params(a, raw)
    return None


def _path(
    engine: Engine[Any],
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
        steps.append(PathStep(name, _params(engine, states[a], name, states[b])))
    return tuple(steps)


def compare_graphs(
    model: ModelConfig | Engine[Any],
    tlc: TlcGraph,
    tlc_result: TlcResult,
    py: ExploreResult,
    *,
    manifest_distinct: int | None,
    show: int = SHOW,
    stutter: bool | None = None,
    tlc_workers: int = 1,
) -> CrosscheckResult:
    """Compare TLC's graph and counts with the Python explorer's, exactly.
    ``stutter``: does TLC's dump have a stuttering self-loop per state (it has when it
    checked temporal properties; by default, when the engine has any).  TLC's depth is
    compared when it ran with one worker: with several, a worker may reach a state
    first from a deeper parent and record it a level too deep (as it may give a
    counterexample longer than the shortest), so its depth is not promised."""
    engine = _as_engine(model)
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
    # the Python action codes index engine.action_names; TLC's extend them
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
    if tlc_workers == 1:
        count("depth", tlc_result.depth, py.depth)
    count("state lines in the DOT dump", len(tlc.states), py.distinct)
    count("edge lines in the DOT dump", len(tlc.edge_src), len(g.edge_src))
    if stutter is None:
        stutter = bool(engine.liveness)
    expected_stutter = len(tlc.states) if stutter else 0
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
            engine,
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
        model=engine.name,
        mode="graph",
        distinct=py.distinct,
        total=py.total,
        problems=tuple(problems),
        differences=tuple(differences),
        counts=counts,
        seconds={"compare": time.perf_counter() - start},
    )


def _differences(
    engine: Engine[Any],
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
        return engine.to_tla(s)

    def tlc_path(i: int) -> tuple[PathStep, ...]:
        return _path(engine, tlc.states, t_parent, t_via, tlc.actions, i)

    def py_path(j: int) -> tuple[PathStep, ...]:
        return _path(engine, g.states, p_parent, p_via, engine.action_names, j)

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
                name = engine.action_names[a]
                path = py_path(s)
            out.append(
                Difference(
                    "edge",
                    side,
                    tla(src),
                    action=name,
                    params=_params(engine, src, name, dst),
                    target=tla(dst),
                    path=path,
                )
            )
    return out


def tlc_trace_length(trace: str) -> int:
    """The number of states in a counterexample as TLC printed it."""
    return len(_TRACE_STATE.findall(trace))


def tlc_trace_states(engine: Engine[Any], trace: str) -> list[State]:
    """The states of a safety counterexample as TLC printed it (``N: <Action ...>``,
    then the state's ``/\\ var = value`` lines), as the engine's states."""
    starts = [m.start() for m in _TRACE_STATE.finditer(trace)]
    states: list[State] = []
    for a, b in zip(starts, [*starts[1:], len(trace)], strict=True):
        block = trace[a:b].split("\n", 1)
        states.append(engine.from_tla(parse_state(block[1] if len(block) > 1 else "")))
    return states


def _tlc_trace_problem(engine: Engine[Any], trace: str) -> str | None:
    """Why TLC's safety counterexample is not a behaviour of the Python model ending
    at its first violation, or ``None`` when it is: it starts in an initial state,
    each state is a successor of the one before, and only the last violates an
    invariant.  (TLC with several workers promises a counterexample, not the shortest:
    its length is compared with the Python model's, never its states.)"""
    try:
        states = tlc_trace_states(engine, trace)
    except RedletterError as e:
        return f"TLC's counterexample could not be read: {e.message}"
    if not states:
        return "TLC printed no counterexample"
    if states[0] not in set(engine.init_states()):
        return "TLC's counterexample does not start in an initial state of the Python model"
    for n, (s, t) in enumerate(pairwise(states), start=2):
        if engine.violated_invariant(s) is not None:
            return f"TLC's counterexample violates an invariant at state {n - 1}, before its end"
        if not any(u == t for _a, _r, u in engine.successors(s)):
            return f"state {n} of TLC's counterexample is no successor of state {n - 1}"
    if engine.violated_invariant(states[-1]) is None:
        return "the last state of TLC's counterexample violates no invariant in the Python model"
    return None


def compare_violation(
    model: ModelConfig | Engine[Any], tlc_result: TlcResult, py: ExploreResult
) -> CrosscheckResult:
    """For a model that must fail: the same violated invariant, a Python
    counterexample no longer than TLC's, and TLC's a behaviour of the Python model
    (for an invariant)."""
    problems: list[str] = []
    v = py.violation
    tlc_len = tlc_trace_length(tlc_result.trace)
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
    elif v.kind == "invariant":
        problem = _tlc_trace_problem(_as_engine(model), tlc_result.trace)
        if problem is not None:
            problems.append(problem)
    return CrosscheckResult(
        model=model.name,
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
    model: ModelConfig | Engine[Any],
    tlc_result: TlcResult,
    dot_path: Path,
    *,
    entry: ModelEntry | None,
    py: ExploreResult | None = None,
    on_phase: Callable[[str], None] | None = None,
    tlc_graph: TlcGraph | None = None,
    liveness: bool = True,
    tlc_workers: int = 1,
) -> CrosscheckResult:
    """Cross-check a finished TLC run on ``tlc_workers`` workers (its DOT dump at
    ``dot_path``, or the graph already read from it, ``tlc_graph``) with the Python
    model (explored here unless ``py`` is given, with ``graph=True``).  ``entry`` is
    the model's manifest row, if it has one: a row that expects a failure, or a run
    where TLC found one, compares the verdicts only."""

    def phase(name: str) -> None:
        if on_phase is not None:
            on_phase(name)

    live_fail = (
        entry.expect == "liveness failure"
        if entry is not None
        else tlc_result.kind is ResultKind.LIVENESS_FAILURE
    )
    must_fail = (
        entry.expect != "success"
        if entry is not None
        else tlc_result.kind in (ResultKind.SAFETY_FAILURE, ResultKind.LIVENESS_FAILURE)
    )
    seconds: dict[str, float] = {"tlc": tlc_result.seconds}
    engine = _as_engine(model)
    temporal = temporal_of(engine) if engine.liveness and liveness else None
    if py is None or (
        temporal is not None and temporal.fairness and py.graph is not None and not py.graph.enabled
    ):
        phase("explore")
        t0 = time.perf_counter()
        py = explore_for_crosscheck(
            engine, must_fail=must_fail and not live_fail, liveness=liveness
        )
        seconds["explore"] = time.perf_counter() - t0
    else:
        seconds["explore"] = py.seconds
    if live_fail:
        return _with_seconds(compare_liveness_failure(engine, tlc_result, py), seconds)
    if must_fail:
        return _with_seconds(compare_violation(engine, tlc_result, py), seconds)
    if py.graph is None or not py.graph.states:
        raise InternalError(f"the Python model of {engine.name} kept no graph or has no state")
    phase("parse")
    if tlc_graph is None:
        reader = LabelReader(engine, py.graph.states[py.graph.initial[0]])
        tlc = read_tlc_graph(engine, dot_path, reader)
    else:
        tlc = tlc_graph
    seconds["parse"] = tlc.seconds
    phase("compare")
    manifest_distinct = entry.distinct if entry is not None else None
    r = compare_graphs(
        engine,
        tlc,
        tlc_result,
        py,
        manifest_distinct=manifest_distinct,
        stutter=bool(engine.liveness) and liveness,
        tlc_workers=tlc_workers,
    )
    seconds["compare"] = r.seconds["compare"]
    if temporal is not None and py.violation is None:
        phase("liveness")
        live, _ = check_liveness(engine, explored=py, temporal=temporal)
        seconds["liveness"] = live.seconds
        problems = list(r.problems)
        if live.result != tlc_result.kind.value:
            problems.append(f"liveness: TLC {tlc_result.kind.value}, Python {live.result}")
        r = replace(r, problems=tuple(problems), liveness=live.result)
    return _with_seconds(r, seconds)


def explore_for_crosscheck(
    engine: Engine[Any], *, must_fail: bool, liveness: bool = True
) -> ExploreResult:
    """The Python side of a cross-check: the graph (unless the model must fail a
    safety property), with the fairness data when the cfg has temporal properties."""
    if must_fail:
        return explore(engine)
    if engine.liveness and liveness:
        bits = fair_bit_table(engine, temporal_of(engine).fairness)
        return explore(engine, fair_bits=bits)
    return explore(engine, graph=True)


def compare_liveness_failure(
    engine: Engine[Any], tlc_result: TlcResult, py: ExploreResult
) -> CrosscheckResult:
    """For a model that must fail a temporal property: both engines report a
    liveness failure (TLC 2.15 does not name the property, so only the verdict is
    compared) and the Python model no safety violation first."""
    problems: list[str] = []
    if tlc_result.kind is not ResultKind.LIVENESS_FAILURE:
        problems.append(f"TLC found no liveness violation: {tlc_result.describe()}")
    violated: str | None = None
    if py.violation is not None:
        problems.append(f"the Python model found a safety violation first: {py.violation.name}")
    else:
        live, _ = check_liveness(engine, explored=py)
        v = live.violated
        if v is None:
            problems.append("the Python model found no liveness violation")
        else:
            violated = v.prop.label
    return CrosscheckResult(
        model=engine.name,
        mode="liveness",
        distinct=py.distinct,
        total=py.total,
        problems=tuple(problems),
        differences=(),
        violated=violated,
        liveness="liveness failure" if violated else "success",
    )


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
    def work_dir(self) -> Path: ...

    @property
    def manifest_path(self) -> Path: ...


def crosscheck(
    model: str,
    project: _ProjectLike,
    *,
    workers: int = 2,
    parallel: bool = True,
    graph_only: bool = False,
    on_phase: Callable[[str], None] | None = None,
    explore_workers: int = 1,
) -> CrosscheckResult:
    """Run TLC on ``model`` with the state graph dumped, then cross-check it with the
    Python model (:func:`_crosscheck_once`).  A TLC that gets stuck while it writes its
    graph into the pipe cannot simply be run again (the reader has half a graph): the
    whole cross-check runs once more, and a second stuck TLC is
    :class:`~redletter.tlc.ToolStalled` (``RL-TLC-STALLED``)."""
    once = partial(
        _crosscheck_once,
        model,
        project,
        workers=workers,
        parallel=parallel,
        graph_only=graph_only,
        on_phase=on_phase,
        explore_workers=explore_workers,
    )
    try:
        return once(stalled_before=0)
    except ToolStalled as stuck:
        if stuck.run_again:
            raise
    return once(stalled_before=1)


def _crosscheck_once(
    model: str,
    project: _ProjectLike,
    *,
    workers: int,
    parallel: bool,
    graph_only: bool,
    on_phase: Callable[[str], None] | None,
    explore_workers: int,
    stalled_before: int,
) -> CrosscheckResult:
    """Run TLC on ``model`` with the state graph dumped, then cross-check it with the
    Python model.

    With ``explore_workers`` above 1 (and a model that must pass), the Python model
    explores on that many partitions (:mod:`redletter.python_model.parallel`, the same
    graph), in this process while TLC runs -- TLC is then the longer half and has the
    cores -- and in worker processes from the first level after TLC has ended, when
    the explorer has become the longer half.

    The dump is never written to disk: TLC writes it into a named pipe that a child
    process reads and parses while TLC runs (the label memo keeps it well ahead of
    TLC), and sends the graph back as value ids (see :func:`_read_into_ids`).  With
    ``parallel`` the Python model also explores while TLC runs.  ``graph_only`` runs
    TLC on a copy of the cfg without invariants and properties (see
    :func:`graph_only_spec`): for models that pass, when only the graphs are to be
    compared (the verdicts are ``redletter check``'s); the phase times are each one's
    own (``tlc``, ``explore``, ``parse`` = the reader's time, ``parse tail`` = the wait
    for it after TLC ended, ``rebuild``, ``compare``)."""
    import multiprocessing as mp

    engine = load_engine(model, project.spec_dir)
    entry = _entry(project.manifest_path, model)
    require_java()
    jar = require_tlc_jar(project.cache_dir)
    must_fail = entry is not None and entry.expect != "success"
    if graph_only and must_fail:
        raise InputError(
            f"{model} must fail ({entry.expect if entry else ''}): its cross-check compares"
            " verdicts, so it needs the invariants; run it without --graph-only",
            code="RL-INPUT-MODEL",
        )
    with tempfile.TemporaryDirectory(prefix="redletter-crosscheck-") as tmp:
        base = Path(tmp) / model
        spec_dir = (
            graph_only_spec(project.spec_dir, model, Path(tmp) / "spec")
            if graph_only
            else project.spec_dir
        )
        dot = base.with_suffix(".dot")
        stream = not must_fail
        if stream:
            os.mkfifo(dot)

        def run() -> TlcResult:
            return run_tlc(
                model,
                spec_dir=spec_dir,
                jar=jar,
                cache_dir=project.work_dir,
                check_deadlock=entry.check_deadlock if entry is not None else False,
                workers=workers,
                extra_args=dump_args(base),
                retry=not stream,  # the reader of the pipe cannot start again
                stalled_before=stalled_before,
            )

        if on_phase is not None:
            on_phase("tlc")
        py: ExploreResult | None = None
        live_fail = entry is not None and entry.expect == "liveness failure"

        def explore_now(tlc_done: Callable[[], bool]) -> ExploreResult:
            return _explore_beside(
                engine,
                project.spec_dir,
                must_fail=must_fail and not live_fail,
                liveness=not graph_only,
                workers=explore_workers,
                tlc_done=tlc_done,
            )

        ctx = mp.get_context("spawn")
        with ThreadPoolExecutor(max_workers=2) as pool, ctx.Pool(1) as readers:
            pending = pool.submit(run)
            reading = (
                readers.apply_async(_read_into_ids, (model, str(project.spec_dir), str(dot)))
                if stream
                else None
            )
            if parallel:
                if on_phase is not None:
                    on_phase("explore")
                t0 = time.perf_counter()
                py = explore_now(pending.done)
                explore_seconds = time.perf_counter() - t0
            result = pending.result()
            t_end = time.perf_counter()
            tlc_graph: TlcGraph | None = None
            tail = rebuild = 0.0
            if reading is not None:
                while not reading.ready():  # TLC ended before opening it: end the reader
                    _release_fifo(dot)
                    reading.wait(0.5)
                try:
                    ids, tables, rest = reading.get()
                except Exception:
                    if result.kind is ResultKind.SUCCESS:
                        raise
                    return _tlc_failed(engine.name, result)
                tail = time.perf_counter() - t_end
                t1 = time.perf_counter()
                tlc_graph = _from_ids(ids, tables, rest, type(next(iter(engine.init_states()))))
                rebuild = time.perf_counter() - t1
        if py is None:
            t0 = time.perf_counter()
            py = explore_now(lambda: True)
            explore_seconds = time.perf_counter() - t0
        r = crosscheck_run(
            engine,
            result,
            dot,
            entry=entry,
            py=py,
            on_phase=on_phase,
            tlc_graph=tlc_graph,
            liveness=not graph_only,
            tlc_workers=workers,
        )
        seconds = dict(r.seconds)
        seconds["explore"] = explore_seconds
        if tlc_graph is not None:
            seconds["parse tail"] = tail
            seconds["rebuild"] = rebuild
        return replace(r, seconds=seconds)


def _explore_beside(
    engine: Engine[Any],
    spec_dir: Path,
    *,
    must_fail: bool,
    liveness: bool,
    workers: int,
    tlc_done: Callable[[], bool],
) -> ExploreResult:
    """The Python side of :func:`crosscheck`: :func:`explore_for_crosscheck`, or on
    ``workers`` partitions that take worker processes once ``tlc_done()`` (a model
    that must fail keeps the single-process explorer: its counterexample is compared,
    and such models are small)."""
    if workers <= 1 or must_fail:
        return explore_for_crosscheck(engine, must_fail=must_fail, liveness=liveness)
    from redletter.python_model.parallel import explore_parallel

    return explore_parallel(
        engine.name,
        spec_dir,
        workers=workers,
        graph=True,
        liveness=bool(engine.liveness) and liveness,
        spawn_when=tlc_done,
    )


def _release_fifo(fifo: Path) -> None:
    """Open the write end of ``fifo`` once and close it: a reader still waiting for
    a writer (TLC ended before it opened the dump) then sees the end of the file."""
    try:
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:
        return  # no reader waiting (ENXIO): it already has its writer and its end
    os.close(fd)


def _tlc_failed(model: str, result: TlcResult) -> CrosscheckResult:
    return CrosscheckResult(
        model=model,
        mode="graph",
        distinct=0,
        total=0,
        problems=(f"TLC did not succeed: {result.describe()}",),
        differences=(),
    )


def _require_dot(result: TlcResult, dot: Path) -> None:
    if result.kind is ResultKind.SUCCESS and not dot.is_file():
        raise InternalError(f"TLC wrote no DOT dump at {dot} (see {result.log_path})")


class CrosscheckHook:
    """The cross-check as ``redletter check``'s hook: :meth:`tlc_args` adds the
    ``-dump`` arguments to the TLC run check already does, :meth:`__call__` reads the
    dump, cross-checks, deletes the dump and returns the ``cross-check`` column.
    Results are kept in :attr:`results` for the details printed below the table.
    """

    def __init__(self, spec_dir: Path, *, tlc_workers: int = 1) -> None:
        self.spec_dir = spec_dir
        self.tlc_workers = tlc_workers
        self.results: list[CrosscheckResult] = []
        self._tmp: Path | None = None
        self._lock = threading.Lock()  # ``redletter check --jobs``: models at once

    def _dir(self) -> Path:
        with self._lock:
            if self._tmp is None:
                self._tmp = Path(tempfile.mkdtemp(prefix="redletter-crosscheck-"))
            return self._tmp

    def tlc_args(self, entry: ModelEntry) -> list[str]:
        """The extra TLC arguments for ``entry``'s run (none without a Python mirror)."""
        return dump_args(self._dir() / entry.model) if entry.python else []

    def __call__(self, entry: ModelEntry, result: TlcResult) -> str:
        if not entry.python:  # the manifest row says no Python engine mirrors its spec yet
            return NO_MIRROR
        base = self._dir() / entry.model
        dot = base.with_suffix(".dot")
        try:
            if result.kind is ResultKind.ERROR:
                return "— (TLC error)"
            _require_dot(result, dot)
            r = crosscheck_run(
                load_engine(entry.model, self.spec_dir),
                result,
                dot,
                entry=entry,
                tlc_workers=self.tlc_workers,
            )
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
        with self._lock:
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
