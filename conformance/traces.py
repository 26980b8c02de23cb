"""Conformance traces: schedules generated from the Python model, stored as ITF.

A :class:`Trace` is a schedule in the spec's vocabulary (``(action, params)``
steps, see the preamble of docs/protocol.md) for one model.  It carries its
model's source (the ``MC*.tla`` and ``.cfg`` texts) so that a trace file is
self-contained: :func:`model_of` loads the model from it, whether it came from
``spec/`` or from a generated random topology.

Three generators:

- :func:`edge_tours`: paths from the initial state that together cover every
  labelled edge ``(state, action, state')`` of the model's state graph (greedy:
  take an uncovered edge while there is one, else walk the shortest path to the
  nearest state that has one; a new path when it is out of reach or the path
  would grow past ``max_len``);
- :func:`random_walks`: seeded random walks on random strongly connected token
  topologies larger than TLC can exhaust (:func:`random_token_model`);
- :func:`goal_traces`: z3 goals (two concurrent snapshots, a channel recording
  two messages, two starters) solved by :mod:`redletter.python_model.symbolic`.

Files are ITF (``*.itf.json``): every state carries the model's full state and
its ``#meta`` the ``action`` and ``params`` of the step that led to it
(``Init`` and ``{}`` for the first); the trace's ``#meta`` names the model, the
generator and the model's source.
"""

from __future__ import annotations

import itertools
import random
import re
import tempfile
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Final, TypeAlias, TypeVar

from frozendict import frozendict

import redletter.stopping as stopping
from redletter.errors import InputError
from redletter.python_model.actions import (
    ACTION_NAMES,
    ActionDisabled,
    app_action_bound,
    init_states,
    step,
    successors,
)
from redletter.python_model.config import ModelConfig, load_model
from redletter.python_model.itf import (
    FrozenJson,
    ItfState,
    freeze_json,
    json_text,
    read_itf,
    thaw_json,
    trace_to_json,
)
from redletter.python_model.state import State, to_tla
from redletter.untrusted import MAX_TRACE_BYTES, loads, read_input

__all__ = [
    "QUICK_TRACES",
    "SCHEDULE_FORMAT",
    "Coverage",
    "Params",
    "Step",
    "Trace",
    "coverage",
    "edge_tours",
    "generate",
    "goal_traces",
    "load_carried",
    "model_of",
    "model_source",
    "quick_subset",
    "random_token_model",
    "random_walks",
    "read_schedule",
    "read_trace",
    "replay_states",
    "trace_to_itf",
    "write_schedule",
    "write_trace",
    "write_traces",
]

Params: TypeAlias = frozendict[str, FrozenJson]
"""Step parameters in the shared vocabulary, frozen (``c`` is a tuple)."""

Step: TypeAlias = tuple[str, Params]
"""One step of a schedule: ``(action, params)``."""

FORMAT: Final = "redletter-conformance-trace/1"
T = TypeVar("T")


def make_step(action: str, params: Mapping[str, object]) -> Step:
    """A frozen step from plain ``(action, params)``."""
    frozen = freeze_json(dict(params), path="params")
    assert isinstance(frozen, frozendict)
    return action, frozen


@dataclass(frozen=True)
class Trace:
    """A schedule for one model: ``steps`` from the model's (only) initial state."""

    name: str  #: file stem, e.g. ``MCToken2-tour-0007``
    model: str  #: the model's name (``MCToken2``)
    source: str  #: the generator (``edge-tour``, ``random-walk seed 3``, ``z3 goal ...``)
    steps: tuple[Step, ...]
    model_tla: str  #: the MC*.tla text
    model_cfg: str  #: the MC*.cfg text

    def with_steps(self, steps: Sequence[Step], *, name: str | None = None) -> Trace:
        """The same trace with other steps (and maybe another name)."""
        return Trace(
            name if name is not None else self.name,
            self.model,
            self.source,
            tuple(steps),
            self.model_tla,
            self.model_cfg,
        )


def model_source(model: str, spec_dir: Path) -> tuple[str, str]:
    """The ``(tla, cfg)`` texts of a model of ``spec_dir`` (checked by loading it)."""
    load_model(model, spec_dir)
    return (
        (spec_dir / f"{model}.tla").read_text(encoding="utf-8"),
        (spec_dir / f"{model}.cfg").read_text(encoding="utf-8"),
    )


MODEL_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,199}")


def load_carried(
    model: str, tla: str, cfg: str, loader: Callable[[str, Path], T], *, what: str = "valid"
) -> T:
    """A model from the texts a trace carries, read by ``loader`` (any spec family's:
    ``load_model``, a variant's).  The model's name becomes a file name in a temporary
    directory, so it must be a module name (an identifier), never a path: a trace
    cannot write outside that directory.  An invalid model names the trace's field,
    not the temporary file (``the model the trace carries is not {what}: ...``)."""
    if not MODEL_NAME.fullmatch(model):
        raise InputError(
            f"#meta.model must be a model name (letters, digits and _), never a path;"
            f" got {model[:80]!r}",
            code="RL-INPUT-ITF",
        )
    with tempfile.TemporaryDirectory(prefix="redletter-model-") as tmp:
        d = Path(tmp)
        (d / f"{model}.tla").write_bytes(tla.encode("utf-8", "surrogatepass"))
        (d / f"{model}.cfg").write_bytes(cfg.encode("utf-8", "surrogatepass"))
        try:
            return loader(model, d)
        except InputError as exc:
            text = exc.message
            for suffix, field in ((".tla", "#meta.model_tla"), (".cfg", "#meta.model_cfg")):
                text = text.replace(f"{d / model}{suffix}", field)
            raise InputError(
                f"the model the trace carries is not {what}: {text}", code=exc.code
            ) from None


@lru_cache(maxsize=64)
def _load_source(model: str, tla: str, cfg: str) -> ModelConfig:
    """The Chandy-Lamport model of a trace, from the texts it carries (cached)."""
    return load_carried(model, tla, cfg, load_model)


def model_of(trace: Trace) -> ModelConfig:
    """The model a trace was generated for (loaded from the source it carries)."""
    return _load_source(trace.model, trace.model_tla, trace.model_cfg)


def _initial(cfg: ModelConfig) -> State:
    inits = init_states(cfg)
    if len(inits) != 1:
        raise InputError(
            f"model {cfg.name} has {len(inits)} initial states; a schedule needs exactly one",
            code="RL-INPUT-MODEL",
        )
    return inits[0]


def replay_states(cfg: ModelConfig, steps: Iterable[Step]) -> list[State]:
    """The model's states along ``steps`` (Init first); raises ActionDisabled."""
    s = _initial(cfg)
    out = [s]
    for action, params in steps:
        s = step(cfg, s, action, params)
        out.append(s)
    return out


# --------------------------------------------------------------------------- ITF


def trace_to_itf(trace: Trace, cfg: ModelConfig | None = None) -> dict[str, Any]:
    """The ITF document of a trace (every state, with action and params in #meta)."""
    cfg = cfg if cfg is not None else model_of(trace)
    states = replay_states(cfg, trace.steps)
    items: list[ItfState] = []
    for n, s in enumerate(states):
        action, params = ("Init", frozendict()) if n == 0 else trace.steps[n - 1]
        items.append(ItfState.of(to_tla(cfg, s), {"action": action, "params": thaw_json(params)}))
    meta = {
        "kind": FORMAT,
        "name": trace.name,
        "model": trace.model,
        "source": trace.source,
        "model_tla": trace.model_tla,
        "model_cfg": trace.model_cfg,
    }
    return trace_to_json(items, meta)


def write_trace(path: Path, trace: Trace, cfg: ModelConfig | None = None) -> Path:
    """Write ``trace`` as ITF to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json_text(trace_to_itf(trace, cfg)), encoding="utf-8")
    return path


def write_traces(out: Path, traces: Sequence[Trace]) -> list[Path]:
    """Write every trace to ``out/<name>.itf.json``."""
    return [write_trace(out / f"{t.name}.itf.json", t) for t in traces]


SCHEDULE_FORMAT: Final = "redletter-variant-schedule/1"


def write_schedule(path: Path, trace: Trace) -> Path:
    """Write a variant's trace (lazy, observer, barrier) as a schedule file: the
    harness's steps and the model's texts, without states.  A variant's model state
    depends on choices its spec leaves to the node (when to pay a red letter, when
    to declare completion), so the states of a run are the judge's, not the file's;
    :func:`read_schedule` reads it back."""
    doc = {
        "kind": SCHEDULE_FORMAT,
        "name": trace.name,
        "model": trace.model,
        "source": trace.source,
        "model_tla": trace.model_tla,
        "model_cfg": trace.model_cfg,
        "steps": [{"action": a, "params": thaw_json(ps)} for a, ps in trace.steps],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json_text(doc), encoding="utf-8")
    return path


def read_schedule(path: Path) -> Trace:
    """Read a schedule file written by :func:`write_schedule` (strictly: every field,
    the kind, a model name, each step an action and an object of params)."""

    def bad(what: str) -> InputError:
        return InputError(
            f"not a redletter variant schedule: {what}", path=str(path), code="RL-INPUT-ITF"
        )

    data = read_input(path, code="RL-INPUT-ITF", limit=MAX_TRACE_BYTES, what="the schedule")
    doc = loads(data, path=str(path), code="RL-INPUT-ITF")
    if not isinstance(doc, dict) or doc.get("kind") != SCHEDULE_FORMAT:
        raise bad(f'"kind" must be {SCHEDULE_FORMAT!r}')
    texts: dict[str, str] = {}
    for key in ("name", "model", "source", "model_tla", "model_cfg"):
        v = doc.get(key)
        if not isinstance(v, str):
            raise bad(f"{key!r} must be a string")
        texts[key] = v
    if not MODEL_NAME.fullmatch(texts["model"]):
        raise bad(f"'model' must be a model name, never a path; got {texts['model'][:80]!r}")
    raw = doc.get("steps")
    if not isinstance(raw, list):
        raise bad("'steps' must be a list")
    steps: list[Step] = []
    for i, st in enumerate(raw):
        if (
            not isinstance(st, dict)
            or not isinstance(st.get("action"), str)
            or not isinstance(st.get("params"), dict)
        ):
            raise bad(f"steps[{i}] must be an object with 'action' (a string) and 'params'")
        steps.append(make_step(st["action"], st["params"]))
    return Trace(
        texts["name"],
        texts["model"],
        texts["source"],
        tuple(steps),
        texts["model_tla"],
        texts["model_cfg"],
    )


def _meta_str(meta: Mapping[str, FrozenJson], key: str, path: Path) -> str:
    v = meta.get(key)
    if not isinstance(v, str):
        raise InputError(
            f"not a redletter conformance trace: #meta.{key} is missing "
            "(write traces with `.venv/bin/redletter conform traces`)",
            path=str(path),
            code="RL-INPUT-ITF",
        )
    return v


def read_trace(path: Path) -> Trace:
    """Read a trace written by :func:`write_trace`; the states are checked against the
    model (each must be the model's successor by the step its #meta names)."""
    itf = read_itf(path)
    meta = itf.meta
    name = _meta_str(meta, "name", path)
    model = _meta_str(meta, "model", path)
    if not MODEL_NAME.fullmatch(model):
        raise InputError(
            f"#meta.model must be a model name (letters, digits and _), never a path;"
            f" got {model[:80]!r}",
            path=str(path),
            code="RL-INPUT-ITF",
        )
    source = _meta_str(meta, "source", path)
    tla = _meta_str(meta, "model_tla", path)
    cfg_text = _meta_str(meta, "model_cfg", path)
    steps: list[Step] = []
    for i, st in enumerate(itf.states[1:], start=1):
        action = st.meta.get("action")
        params = st.meta.get("params")
        if not isinstance(action, str) or not isinstance(params, frozendict):
            raise InputError(
                f"states[{i}].#meta must carry 'action' (a string) and 'params' (an object)",
                path=str(path),
                code="RL-INPUT-ITF",
            )
        steps.append((action, params))
    trace = Trace(name, model, source, tuple(steps), tla, cfg_text)
    try:
        cfg = model_of(trace)
        states = replay_states(cfg, trace.steps)
    except ActionDisabled as exc:
        raise InputError(
            f"the trace is not a behaviour of its model: {exc.message}",
            path=str(path),
            code="RL-INPUT-ITF",
        ) from None
    except InputError as exc:
        if exc.path is not None:
            raise
        raise InputError(exc.message, path=str(path), code=exc.code) from None
    for i, (st, s) in enumerate(zip(itf.states, states, strict=True)):
        if st.values != to_tla(cfg, s):
            raise InputError(
                f"states[{i}] is not the state the model reaches by the steps before it",
                path=str(path),
                code="RL-INPUT-ITF",
            )
    return trace


# --------------------------------------------------------------------------- edge tours


@dataclass(frozen=True)
class _Graph:
    states: tuple[State, ...]
    out: tuple[tuple[tuple[Step, int], ...], ...]  #: per state: (step, dst) per labelled edge


def state_graph(cfg: ModelConfig) -> _Graph:
    """The labelled state graph (one edge per distinct (src, action, dst), the first
    binding in ``Next``'s order giving its parameters), under the cfg's CONSTRAINT."""
    init = _initial(cfg)
    index: dict[State, int] = {init: 0}
    states = [init]
    out: list[tuple[tuple[Step, int], ...]] = []
    i = 0
    constrained = bool(cfg.constraints)
    while i < len(states):
        edges: list[tuple[Step, int]] = []
        seen: set[tuple[str, int]] = set()
        for name, params, t in successors(cfg, states[i]):
            if constrained and not app_action_bound(cfg, t):
                continue
            j = index.get(t)
            if j is None:
                j = len(states)
                index[t] = j
                states.append(t)
            if (name, j) not in seen:
                seen.add((name, j))
                edges.append((make_step(name, params), j))
        out.append(tuple(edges))
        i += 1
    return _Graph(tuple(states), tuple(out))


def edge_tours(cfg: ModelConfig, source: tuple[str, str], *, max_len: int = 60) -> list[Trace]:
    """Paths from the initial state covering every labelled edge of the state graph."""
    g = state_graph(cfg)
    uncovered: list[set[int]] = [set(range(len(e))) for e in g.out]
    remaining = sum(len(u) for u in uncovered)
    traces: list[Trace] = []

    def nearest(start: int) -> list[int] | None:
        """Edge indices of a shortest path from start to a state with an uncovered edge."""
        prev: dict[int, tuple[int, int]] = {start: (-1, -1)}
        todo = deque([start])
        while todo:
            x = todo.popleft()
            if uncovered[x]:
                path: list[int] = []
                while x != start:
                    px, e = prev[x]
                    path.append(e)
                    x = px
                path.reverse()
                return path
            for e, (_st, y) in enumerate(g.out[x]):
                if y not in prev:
                    prev[y] = (x, e)
                    todo.append(y)
        return None

    while remaining:
        stopping.check()
        cur = 0
        steps: list[Step] = []
        while True:
            if uncovered[cur]:
                e = min(uncovered[cur])
                uncovered[cur].discard(e)
                remaining -= 1
                st, cur = g.out[cur][e]
                steps.append(st)
                continue
            path = nearest(cur)
            if path is None or (steps and len(steps) + len(path) >= max_len):
                break
            for e in path:
                st, cur = g.out[cur][e]
                steps.append(st)
        name = f"{cfg.name}-tour-{len(traces) + 1:05d}"
        traces.append(Trace(name, cfg.name, "edge-tour", tuple(steps), *source))
    return traces


# --------------------------------------------------------------------------- random


def random_token_model(seed: int, *, procs: int = 5, snaps: int = 2) -> tuple[str, str, str]:
    """A random strongly connected token model: ``(name, tla, cfg)``.

    A directed ring through a random permutation of the machines plus random
    chords; random token counts; ``snaps`` concurrent snapshots, each with one or
    two random starters.  Deterministic for ``seed``.
    """
    rng = random.Random(seed)
    names = [f"p{i + 1}" for i in range(procs)]
    order = names[:]
    rng.shuffle(order)
    chans = {(order[i], order[(i + 1) % procs]) for i in range(procs)}
    for a in names:
        for b in names:
            if a != b and rng.random() < 0.3:
                chans.add((a, b))
    tokens = {p: rng.randrange(0, 3) for p in names}
    if sum(tokens.values()) == 0:
        tokens[names[0]] = 2
    starters = {k: sorted(rng.sample(names, rng.choice((1, 2)))) for k in range(1, snaps + 1)}
    name = f"MCRandom{seed}"

    def q(s: str) -> str:
        return f'"{s}"'

    tla = "\n".join(
        [
            f"---- MODULE {name} ----",
            f"\\* A random token topology (seed {seed}), generated by redletter conform.",
            "EXTENDS ChandyLamport, TokenApp",
            "MCProc == {" + ", ".join(q(p) for p in names) + "}",
            "MCChan == {" + ", ".join(f"<<{q(a)}, {q(b)}>>" for a, b in sorted(chans)) + "}",
            "MCTokens == [" + ", ".join(f"{p} |-> {t}" for p, t in tokens.items()) + "]",
            "MCSnap == {" + ", ".join(str(k) for k in starters) + "}",
            "MCStarters == "
            + " @@ ".join(
                f"({k} :> {{{', '.join(q(p) for p in ps)}}})" for k, ps in starters.items()
            ),
            "MCSequential == FALSE",
            "MCMaxAppActions == 1000",
            "====",
            "",
        ]
    )
    bindings = [
        ("Proc", "MCProc"),
        ("Chan", "MCChan"),
        ("Tokens", "MCTokens"),
        ("Snap", "MCSnap"),
        ("Starters", "MCStarters"),
        ("Sequential", "MCSequential"),
        ("MaxAppActions", "MCMaxAppActions"),
        ("AppLocalStates", "LocalStates"),
        ("AppLocalInit", "LocalInit"),
        ("AppSendable", "Sendable"),
        ("AppAfterSend", "AfterSend"),
        ("AppEvents", "Events"),
        ("AppAfterEvent", "AfterEvent"),
        ("AppCanReceive", "CanReceive"),
        ("AppAfterReceive", "AfterReceive"),
        ("AppMayStart", "MayStart"),
        ("AppStable", "Stable"),
        ("AppInv", "Inv"),
    ]
    cfg = "\n".join(
        ["CONSTANTS", *(f"    {a} <- {b}" for a, b in bindings), "SPECIFICATION Spec", ""]
    )
    return name, tla, cfg


def random_walks(
    n: int, *, seed: int, procs: int = 5, snaps: int = 2, length: int = 80
) -> list[Trace]:
    """``n`` seeded random walks, each on its own random topology (seed ``seed + i``).

    Each walk picks uniformly among the enabled bindings, except that a snapshot
    start is taken with probability 0.1 when one is enabled; it stops after
    ``length`` steps or when nothing is enabled.
    """
    out: list[Trace] = []
    for i in range(n):
        stopping.check()
        s_i = seed + i
        name, tla, cfg_text = random_token_model(s_i, procs=procs, snaps=snaps)
        trace = Trace(f"{name}-walk", name, f"random-walk seed {s_i}", (), tla, cfg_text)
        cfg = model_of(trace)
        rng = random.Random(s_i)
        s = _initial(cfg)
        steps: list[Step] = []
        for _ in range(length):
            succ = list(successors(cfg, s))
            if not succ:
                break
            starts = [x for x in succ if x[0] == "StartSnapshot"]
            others = [x for x in succ if x[0] != "StartSnapshot"]
            pool = starts if starts and (not others or rng.random() < 0.1) else others
            action, params, s = pool[rng.randrange(len(pool))]
            steps.append(make_step(action, params))
        out.append(trace.with_steps(steps))
    return out


# --------------------------------------------------------------------------- z3 goals


def goal_traces(
    cfg: ModelConfig, source: tuple[str, str], model_file: Path, *, max_steps: int = 12
) -> list[Trace]:
    """Traces solving z3 goals (token models only): two concurrent snapshots, a channel
    recording two messages, a snapshot with two starters.  Goals that do not apply to
    the model, or have no solution within ``max_steps``, give no trace."""
    if cfg.app_module != "TokenApp":
        return []
    from redletter.python_model.symbolic import (
        goal_concurrent,
        goal_records,
        goal_two_starters,
        params_from_model,
        synthesize,
    )

    params = params_from_model(model_file)
    goals: list[tuple[str, Any]] = []
    if len(cfg.snaps) >= 2:
        goals.append(("concurrent", goal_concurrent(cfg.snaps[0], cfg.snaps[1])))
    for c in cfg.chans:
        goals.append((f"records-2-{c[0]}-{c[1]}", goal_records(cfg.snaps[0], c, 2)))
        break
    for k, mask in zip(cfg.snaps, cfg.starters, strict=True):
        if bin(mask).count("1") >= 2:
            goals.append((f"two-starters-{k}", goal_two_starters(k)))
            break
    out: list[Trace] = []
    for label, goal in goals:
        stopping.check()
        found = synthesize(params, goal, max_steps)
        if found is None:
            continue
        steps = [make_step(a, p) for a, p in found.pairs()]
        try:
            replay_states(cfg, steps)  # the Python model accepts it, or ActionDisabled
        except ActionDisabled as e:
            # The symbolic encoding bounds a run by its length, not by the application's
            # budget in the guards (AppBudgetLeft): a solution with more application
            # actions in a snapshot than MaxAppActions is no behaviour of the model.
            # Any other refusal is a disagreement between the two models: raise it.
            if "~AppBudgetLeft" not in str(e):
                raise
            continue
        out.append(
            Trace(f"{cfg.name}-goal-{label}", cfg.name, f"z3 goal {label}", tuple(steps), *source)
        )
    return out


# --------------------------------------------------------------------------- coverage


@dataclass(frozen=True)
class Coverage:
    """How much of a model a set of traces exercises."""

    model: str
    traces: int
    steps: int
    actions: Mapping[str, int]  #: steps per action name
    edges_total: int
    edges_covered: int
    concurrent_snapshots: int  #: traces reaching two snapshots in progress at once
    channel_recordings: int  #: traces reaching a non-empty recorded channel
    two_message_recordings: int  #: traces reaching a channel recording of >= 2 messages

    @property
    def edge_percent(self) -> float:
        return 100.0 * self.edges_covered / self.edges_total if self.edges_total else 100.0

    def describe(self) -> str:
        acts = ", ".join(f"{a} {self.actions.get(a, 0)}" for a in ACTION_NAMES)
        return (
            f"{self.model}: {self.traces} traces, {self.steps} steps; actions: {acts}; "
            f"edges {self.edges_covered}/{self.edges_total} ({self.edge_percent:.1f}%); "
            f"concurrent snapshots in {self.concurrent_snapshots} traces, non-empty channel "
            f"recordings in {self.channel_recordings} (two messages or more in "
            f"{self.two_message_recordings})"
        )


def _in_progress(s: State, k: int) -> bool:
    return s.s0[k] is not None and s.sf[k] is None


def coverage(cfg: ModelConfig, traces: Sequence[Trace], *, graph: bool = True) -> Coverage:
    """The coverage of ``traces`` (all of model ``cfg``); ``graph=False`` skips the edge
    count (for models too large to explore)."""
    g = state_graph(cfg) if graph else None
    index = {s: i for i, s in enumerate(g.states)} if g is not None else {}
    edges: set[tuple[int, str, int]] = set()
    actions: dict[str, int] = {}
    conc = recs = recs2 = steps = 0
    for t in traces:
        states = replay_states(cfg, t.steps)
        steps += len(t.steps)
        for (action, _p), a, b in zip(t.steps, states, states[1:], strict=False):
            actions[action] = actions.get(action, 0) + 1
            if g is not None and a in index and b in index:
                edges.add((index[a], action, index[b]))
        ks = range(len(cfg.snaps))
        conc += any(sum(_in_progress(s, k) for k in ks) >= 2 for s in states)
        lens = [len(b) for s in states for rb in s.rec_buf for b in rb]
        recs += any(n >= 1 for n in lens)
        recs2 += any(n >= 2 for n in lens)
    total = sum(len(o) for o in g.out) if g is not None else 0
    return Coverage(cfg.name, len(traces), steps, actions, total, len(edges), conc, recs, recs2)


# --------------------------------------------------------------------------- all


QUICK_TRACES: Final = 24  #: how many traces ``conform run --quick`` judges at most


def quick_subset(traces: Sequence[Trace], *, seed: int, limit: int = QUICK_TRACES) -> list[Trace]:
    """A representative subset of ``traces`` for a quick run (``conform run --quick``).

    Every trace that is not an edge tour (z3 goals, random walks) is kept: each was
    made for one situation.  The tours are then picked greedily, each time the one
    that adds the most features not yet covered, where a feature is a step (action
    and parameters) or two consecutive steps (so orders such as "a red letter after
    an application message on one buffer" count), until ``limit`` traces are
    picked or nothing new is added.  Ties are broken by a shuffle seeded with
    ``seed``, so one seed always picks the same subset.  The result keeps the order
    of ``traces``."""
    if limit < 1:
        raise ValueError(f"limit must be at least 1, not {limit}")

    def features(t: Trace) -> frozenset[object]:
        labels = [(a, tuple(sorted(p.items()))) for a, p in t.steps]
        return frozenset([*labels, *itertools.pairwise(labels)])

    keep = [i for i, t in enumerate(traces) if t.source != "edge-tour"][:limit]
    covered: set[object] = set()
    for i in keep:
        covered |= features(traces[i])
    tours = [i for i, t in enumerate(traces) if t.source == "edge-tour"]
    random.Random(seed).shuffle(tours)
    feats = {i: features(traces[i]) for i in tours}
    while len(keep) < limit and tours:
        best = max(tours, key=lambda i: len(feats[i] - covered))
        if not feats[best] - covered:
            break
        keep.append(best)
        covered |= feats[best]
        tours.remove(best)
    return [traces[i] for i in sorted(keep)]


def generate(
    model: str,
    spec_dir: Path,
    *,
    walks: int = 0,
    seed: int = 0,
    tours: bool = True,
    goals: bool = True,
    max_len: int = 60,
) -> list[Trace]:
    """Every trace for ``model``: its edge tours, its z3 goal traces, and ``walks``
    random walks on random topologies (seeds ``seed``, ``seed + 1``, ...).  Each
    part checks for a stop asked for (:func:`redletter.stopping.check`): z3 runs
    finalizers by the thousand, where a Ctrl-C's KeyboardInterrupt is lost."""
    source = model_source(model, spec_dir)
    cfg = load_model(model, spec_dir)
    out: list[Trace] = []
    if tours:
        out.extend(edge_tours(cfg, source, max_len=max_len))
    if goals:
        out.extend(goal_traces(cfg, source, spec_dir / f"{model}.tla"))
    if walks:
        out.extend(random_walks(walks, seed=seed))
    return out
