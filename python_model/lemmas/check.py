"""The three ways together: they must agree (see :mod:`redletter.python_model.lemmas`),
on one trace (:func:`check_trace`) or on every reachable state of a model
(:func:`check_lemmas_everywhere`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise

from redletter.errors import InternalError
from redletter.python_model.actions import ACTION_NAMES, Params, fast_successors, params_of
from redletter.python_model.config import OVERRIDES, ModelConfig
from redletter.python_model.explore import explore
from redletter.python_model.invariants import snapshot, snapshot_part
from redletter.python_model.lemmas.reachability import AppGraph
from redletter.python_model.lemmas.replay import replay_verdicts
from redletter.python_model.lemmas.shadow import Reality, ShadowVerdict, reality, shadow_verdicts
from redletter.python_model.lemmas.verdict import Verdict
from redletter.python_model.state import GState, State, to_tla
from redletter.python_model.values import print_state

__all__ = [
    "WAYS",
    "LemmaCounts",
    "Verdicts",
    "check_lemmas_everywhere",
    "check_trace",
    "describe_counts",
    "describe_disagreement",
    "is_mutant",
    "label_step",
]

WAYS = ("replay", "reachability", "shadow")


@dataclass(frozen=True)
class Verdicts:
    """The six answers for snapshot ``snap`` (an id): two lemmas, three ways."""

    snap: int
    replay0: Verdict
    replay1: Verdict
    reach0: Verdict
    reach1: Verdict
    shadow0: Verdict
    shadow1: Verdict

    def way(self, way: str, lemma: int) -> Verdict:
        """The verdict of ``way`` (one of :data:`WAYS`) on Lemma ``lemma`` (0 or 1)."""
        attr = {"replay": "replay", "reachability": "reach", "shadow": "shadow"}[way]
        v = getattr(self, f"{attr}{lemma}")
        assert isinstance(v, Verdict)
        return v

    def describe(self) -> str:
        return "; ".join(f"Lemma {n} by {w}: {self.way(w, n)}" for n in (0, 1) for w in WAYS)


def is_mutant(cfg: ModelConfig) -> bool:
    """Does the model override any step of the algorithm with a mutant's?"""
    return any(cfg.overrides.get(op, names[0]) != names[0] for op, names in OVERRIDES.items())


def _agree(cfg: ModelConfig, v: Verdicts) -> str | None:
    """None when the three ways agree, else what is wrong."""
    for n in (0, 1):
        sh, rp, re = v.way("shadow", n), v.way("replay", n), v.way("reachability", n)
        if sh.ok and not rp.ok:
            return f"Lemma {n}: the shadow network keeps step but the replay fails"
        if rp.ok and not re.ok:
            return f"Lemma {n}: the replay succeeds but the search finds no path"
        if not is_mutant(cfg) and not (sh.ok == rp.ok == re.ok):
            return f"Lemma {n}: the three ways disagree on a model without mutant steps"
    return None


def _disagreement(cfg: ModelConfig, s: State, v: Verdicts, what: str) -> InternalError:
    return InternalError(
        f"the lemma checks disagree on model {cfg.name}, snapshot {v.snap}: {what}. "
        f"{v.describe()}. State:\n{print_state(to_tla(cfg, s))}",
        code="RL-INTERNAL-LEMMAS",
    )


def check_trace(
    cfg: ModelConfig,
    states: Sequence[State],
    steps: Sequence[tuple[str, Params]],
    graph: AppGraph | None = None,
) -> list[Verdicts]:
    """All three ways on every snapshot completed in the trace's last state (replay
    and reachability on that state, the shadows along the trace); raises
    :class:`InternalError` if they disagree.  ``graph`` carries the reachability memo."""
    g = graph if graph is not None else AppGraph(cfg)
    last = states[-1]
    out: list[Verdicts] = []
    r: Reality | None = None
    for k, sf in enumerate(last.sf):
        if sf is None:
            continue
        if r is None:
            r = reality(cfg, states, steps)
        sh0, sh1 = shadow_verdicts(cfg, r, k)
        s0 = last.s0[k]
        assert s0 is not None
        rp0, rp1 = replay_verdicts(cfg, last, k)
        re0, re1 = g.verdicts(s0, snapshot(last, k), sf)
        v = Verdicts(cfg.snaps[k], rp0, rp1, re0, re1, sh0, sh1)
        bad = _agree(cfg, v)
        if bad is not None:
            raise _disagreement(cfg, last, v, bad)
        out.append(v)
    return out


def label_step(cfg: ModelConfig, s: State, t: State) -> tuple[str, Params]:
    """The action and parameters of a step ``s -> t`` (the first binding of ``Next``
    that yields t)."""
    for action, raw, u in fast_successors(cfg, s):
        if u == t:
            return ACTION_NAMES[action], params_of(cfg, action, raw)
    raise InternalError(f"{cfg.name}: no action leads from the given state to the next")


@dataclass
class LemmaCounts:
    """What :func:`check_lemmas_everywhere` checked and found."""

    model: str
    mutant: bool
    states: int = 0  #: reachable states explored
    completed_states: int = 0  #: states with at least one completed snapshot
    pairs: int = 0  #: (state, completed snapshot) pairs, each checked all three ways
    #: way -> lemma (0/1) -> number of pairs on which that way found a violation
    failed: dict[str, list[int]] = field(default_factory=lambda: {w: [0, 0] for w in WAYS})
    #: way -> distinct evaluations (replays, searches, shadow runs along a trace)
    evaluations: dict[str, int] = field(default_factory=lambda: {w: 0 for w in WAYS})
    app_states_searched: int = 0  #: application states the reachability searches visited
    #: way -> the first violation it found: (state id, snapshot id, lemma, why)
    first: dict[str, tuple[int, int, int, str]] = field(default_factory=dict)
    #: lemma (0/1) -> pairs on which the replay fails and the search finds a path
    replay_only: list[int] = field(default_factory=lambda: [0, 0])
    #: lemma (0/1) -> pairs on which the shadow network fails and the replay holds
    shadow_only: list[int] = field(default_factory=lambda: [0, 0])
    #: lemma (0/1) -> the first such pair of each kind: (state id, snapshot id)
    first_replay_only: dict[int, tuple[int, int]] = field(default_factory=dict)
    first_shadow_only: dict[int, tuple[int, int]] = field(default_factory=dict)

    def passed(self, way: str, lemma: int) -> int:
        return self.pairs - self.failed[way][lemma]

    @property
    def all_pass(self) -> bool:
        return all(n == 0 for f in self.failed.values() for n in f)

    @property
    def vacuous(self) -> bool:
        """No reachable state has a completed snapshot: nothing was checked."""
        return self.pairs == 0

    @property
    def agree(self) -> bool:
        """The three ways gave the same verdict on every (state, snapshot) pair."""
        return not any(self.replay_only) and not any(self.shadow_only)

    @property
    def all_report_violation(self) -> bool:
        """Every way found a violation of some lemma somewhere."""
        return all(any(f) for f in self.failed.values())


def check_lemmas_everywhere(cfg: ModelConfig) -> LemmaCounts:
    """Explore every reachable state of ``cfg`` (no stop at a violation: the model's
    invariants are not checked here) and, for every completed snapshot of every state,
    check both lemmas all three ways: replay on the state, reachability in the
    application's graph, and the shadow networks along a shortest trace to the state
    (BFS parents; a snapshot's shadows depend only on the trace up to its completion,
    so they run once per completion and are shared by the states after it).
    Raises :class:`InternalError` if the ways disagree (see the module docstring)."""
    result = explore(dataclasses.replace(cfg, invariants=(), properties=()), graph=True)
    graph = result.graph
    assert graph is not None
    states = graph.states
    n = len(states)
    parent = [-1] * n
    has_parent = [False] * n
    for i in graph.initial:
        has_parent[i] = True
    for src, dst in zip(graph.edge_src, graph.edge_dst, strict=True):
        if not has_parent[dst]:
            has_parent[dst] = True
            parent[dst] = src
    counts = LemmaCounts(cfg.name, is_mutant(cfg), states=n)
    app_graph = AppGraph(cfg)
    labels: dict[int, tuple[str, Params]] = {}
    nk = len(cfg.snaps)
    completion: list[tuple[int, ...]] = []  # per state: per k, the node where k completed
    replay_memo: dict[tuple[object, ...], tuple[Verdict, Verdict]] = {}
    reach_memo: dict[tuple[GState, GState, GState], tuple[Verdict, Verdict]] = {}
    shadow_memo: dict[tuple[int, int], tuple[ShadowVerdict, ShadowVerdict]] = {}

    def path(j: int) -> tuple[list[State], list[tuple[str, Params]]]:
        chain: list[int] = []
        while j >= 0:
            chain.append(j)
            j = parent[j]
        chain.reverse()
        steps: list[tuple[str, Params]] = []
        for a, b in pairwise(chain):
            lab = labels.get(b)
            if lab is None:
                lab = labels[b] = label_step(cfg, states[a], states[b])
            steps.append(lab)
        return [states[i] for i in chain], steps

    for j, s in enumerate(states):
        p = parent[j]
        comp = tuple(
            -1 if s.sf[k] is None else (completion[p][k] if p >= 0 and completion[p][k] >= 0 else j)
            for k in range(nk)
        )
        completion.append(comp)
        done = [k for k in range(nk) if comp[k] >= 0]
        if not done:
            continue
        counts.completed_states += 1
        for k in done:
            counts.pairs += 1
            key = snapshot_part(s, k)
            rp = replay_memo.get(key)
            if rp is None:
                rp = replay_memo[key] = replay_verdicts(cfg, s, k)
                counts.evaluations["replay"] += 1
            s0, sf = s.s0[k], s.sf[k]
            assert s0 is not None and sf is not None
            star = snapshot(s, k)
            rkey = (s0, star, sf)
            re = reach_memo.get(rkey)
            if re is None:
                re = reach_memo[rkey] = app_graph.verdicts(s0, star, sf)
                counts.evaluations["reachability"] += 1
            sh = shadow_memo.get((k, comp[k]))
            if sh is None:
                tr_states, tr_steps = path(comp[k])
                sh = shadow_memo[(k, comp[k])] = shadow_verdicts(
                    cfg, reality(cfg, tr_states, tr_steps), k
                )
                counts.evaluations["shadow"] += 1
            v = Verdicts(cfg.snaps[k], rp[0], rp[1], re[0], re[1], sh[0], sh[1])
            bad = _agree(cfg, v)
            if bad is not None:
                raise _disagreement(cfg, s, v, bad)
            for way in WAYS:
                for lemma in (0, 1):
                    w = v.way(way, lemma)
                    if not w.ok:
                        counts.failed[way][lemma] += 1
                        counts.first.setdefault(way, (j, cfg.snaps[k], lemma, w.why))
            for lemma in (0, 1):
                # the ways nest (shadow => replay => reachable, checked by _agree); where
                # they differ, the weaker way found what the stronger one missed
                if not v.way("replay", lemma).ok and v.way("reachability", lemma).ok:
                    counts.replay_only[lemma] += 1
                    counts.first_replay_only.setdefault(lemma, (j, cfg.snaps[k]))
                if not v.way("shadow", lemma).ok and v.way("replay", lemma).ok:
                    counts.shadow_only[lemma] += 1
                    counts.first_shadow_only.setdefault(lemma, (j, cfg.snaps[k]))
    counts.app_states_searched = app_graph.explored
    return counts


def describe_counts(c: LemmaCounts) -> list[str]:
    """The lines ``redletter lemmas`` prints."""
    lines = [
        f"{c.model}: {c.states:,} reachable states, {c.completed_states:,} with a completed "
        f"snapshot, {c.pairs:,} (state, snapshot) pairs checked each way"
        + (" (a mutant model)" if c.mutant else ""),
    ]
    for way in WAYS:
        lines.append(
            f"  {way:<13} Lemma 0: {c.passed(way, 0):,} hold, {c.failed[way][0]:,} fail;"
            f"  Lemma 1: {c.passed(way, 1):,} hold, {c.failed[way][1]:,} fail"
            f"  ({c.evaluations[way]:,} distinct evaluations)"
        )
    lines.append(f"  reachability searched {c.app_states_searched:,} application states")
    for way, (state, snap, lemma, why) in c.first.items():
        lines.append(
            f"  first {way} violation: state {state}, snapshot {snap}, Lemma {lemma}: {why}"
        )
    lines += describe_disagreement(c)
    return lines


_STATES = {0: ("the snapshot state", "the initial state", "white"),
           1: ("the final state", "the snapshot state", "red")}  # fmt: skip


def describe_disagreement(c: LemmaCounts) -> list[str]:
    """Where the three ways differ, in words (empty when they agree everywhere)."""
    lines: list[str] = []
    for lemma in (0, 1):
        target, source, colour = _STATES[lemma]
        n = c.replay_only[lemma]
        if n:
            state, snap = c.first_replay_only[lemma]
            lines.append(
                f"  disagreement on Lemma {lemma}: on {n:,} of the {c.failed['replay'][lemma]:,}"
                f" pairs where the replay fails, the search finds a path: {target} is "
                f"reachable from {source}, but not by the {colour} machines' own actions in "
                f"their order (the replay checks one witness; first: state {state}, "
                f"snapshot {snap})"
            )
        n = c.shadow_only[lemma]
        if n:
            state, snap = c.first_shadow_only[lemma]
            lines.append(
                f"  disagreement on Lemma {lemma}: on {n:,} of the {c.failed['shadow'][lemma]:,}"
                f" pairs where the shadow network fails, the replay succeeds: Dijkstra's "
                f"rules break step by step where the recorded actions still replay "
                f"(first: state {state}, snapshot {snap})"
            )
    return lines
