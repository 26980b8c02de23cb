"""Lazy red letters (LazyChandyLamport.tla) mirrored in Python: the state's TLA+
codec, the spec's own invariants, the cfg's overrides (the must-fail models' guard
and fairness), and the cross-check's label reader on the variant's states.  The
counts and verdicts against the manifest are tests/test_model_counts.py's (every
mirrored row); the exact comparison with TLC's graph is `make check`'s."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from redletter.errors import InputError
from redletter.python_model.config import load_model
from redletter.python_model.crosscheck import LabelReader, compare_graphs, read_tlc_graph
from redletter.python_model.engines import load_engine
from redletter.python_model.explore import explore
from redletter.python_model.lazy import (
    LazyEngine,
    LazyState,
    lazy_red_letter_invariant,
    lazy_type_ok,
)
from redletter.python_model.liveness import temporal_of
from redletter.python_model.values import print_state
from redletter.tlc import ResultKind, TlcResult

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "spec"


@pytest.fixture(scope="module")
def token2() -> LazyEngine:
    engine = load_engine("MCLazyToken2", SPEC)
    assert isinstance(engine, LazyEngine)
    return engine


@pytest.fixture(scope="module")
def states(token2: LazyEngine) -> list[LazyState]:
    g = explore(token2, graph=True).graph
    assert g is not None
    return list(g.states)


def test_every_state_reads_back_from_its_tla_print(
    token2: LazyEngine, states: list[LazyState]
) -> None:
    assert len(states) == 4284  # spec/manifest.json's MCLazyToken2
    for s in states[::5]:  # every fifth (BFS order: every depth), to stay fast
        assert token2.from_tla(token2.to_tla(s)) == s
    assert len({token2.fingerprint(s) for s in states}) == len(states)


def test_the_state_prints_owed_as_tlc_does(token2: LazyEngine) -> None:
    (init,) = token2.init_states()
    assert print_state(token2.to_tla(init)).splitlines()[-1] == "/\\ owed = <<{}>>"
    started = next(t for a, _, t in token2.successors(init) if a == 5)  # StartSnapshot
    assert print_state(token2.to_tla(started)).splitlines()[-1] == (
        '/\\ owed = <<{<<"p1", "p2">>}>>'
    )


def test_a_foreign_owed_is_refused(token2: LazyEngine) -> None:
    (init,) = token2.init_states()
    t = dict(token2.to_tla(init))
    t["owed"] = (frozenset({("p1", "p9")}),)
    with pytest.raises(InputError, match=r"owed\[k\] holds \('p1', 'p9'\), which is not a buffer"):
        token2.from_tla(t)
    del t["owed"]
    with pytest.raises(InputError, match="missing variables owed"):
        token2.from_tla(t)


def test_the_red_letter_invariant_is_the_lazy_one(
    token2: LazyEngine, states: list[LazyState]
) -> None:
    cfg = token2.cfg
    owing = next(s for s in states if s.owed[0] and not any(s.buf))
    c = next(i for i in range(len(cfg.chans)) if owing.owed[0] >> i & 1)
    assert lazy_red_letter_invariant(cfg, owing) and lazy_type_ok(cfg, owing)
    # the red letter in the buffer while it is still owed: two, in the spec's count
    both = dataclasses.replace(
        owing, buf=tuple((-1,) if i == c else b for i, b in enumerate(owing.buf))
    )
    assert not lazy_red_letter_invariant(cfg, both)
    assert token2.violated_invariant(both) == "RedLetterInvariant"
    # neither paid nor owed
    neither = dataclasses.replace(owing, owed=(0,))
    assert not lazy_red_letter_invariant(cfg, neither)
    # owed by a machine that is still white: OwedByRedMachinesOnly
    white = dataclasses.replace(owing, owed=(cfg.all_chans,))
    assert not lazy_type_ok(cfg, white)
    assert token2.violated_invariant(white) == "TypeOK"


def test_no_application_message_overtakes_an_owed_red_letter(
    token2: LazyEngine, states: list[LazyState]
) -> None:
    cfg = token2.cfg
    for s in states:
        for a, raw, _ in token2.successors(s):
            if a == 0:  # SendApp(c): MaySend(c)
                assert not any(o >> raw[0] & 1 for o in s.owed), print_state(token2.to_tla(s))
    late = load_engine("MCLazyLateRedLetterFailure", SPEC)  # MaySend <- SendAnyway
    sends_anyway = [
        s
        for s in states
        if s.owed[0] & 1 and any(a == 0 and raw[0] == 0 for a, raw, _ in late.successors(s))
    ]
    assert sends_anyway and cfg.chans[0] == ("p1", "p2")


def test_fairness_is_read_with_the_cfgs_override() -> None:
    fair = {f.name for f in temporal_of(load_engine("MCLazyToken2", SPEC)).fairness}
    assert fair == {"ReceiveApp", "ReceiveRedLetter", "PayRedLetter"}
    unpaid = temporal_of(load_engine("MCLazyUnpaidFailure", SPEC))
    assert {f.name for f in unpaid.fairness} == {"ReceiveApp", "ReceiveRedLetter"}
    assert [p.label for p in unpaid.properties] == ["SnapshotsComplete[k = 1]"]


def test_an_override_of_another_module_names_the_variants_steps(tmp_path: Path) -> None:
    for f in ("MCLazyToken2.tla", "LazyChandyLamportToken.tla"):
        (tmp_path / f).write_text((SPEC / f).read_text(encoding="utf-8"), encoding="utf-8")
    cfg = (SPEC / "MCLazyToken2.cfg").read_text(encoding="utf-8")
    cfg = cfg.replace("SPECIFICATION", "    MaySend <- [ChandyLamport] SendAnyway\nSPECIFICATION")
    (tmp_path / "MCLazyToken2.cfg").write_text(cfg, encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_model("MCLazyToken2", tmp_path)
    assert str(info.value) == (
        f"{tmp_path / 'MCLazyToken2.cfg'}:10: unknown binding MaySend <- [ChandyLamport]"
        " SendAnyway: only the steps of LazyChandyLamport (MaySend, RedLetterFairness) are"
        " overridden in a module"
    )


def _label(engine: LazyEngine, s: LazyState) -> str:
    raw = print_state(engine.to_tla(s)).replace("\\", "\\\\").replace('"', '\\"')
    return raw.replace("\n", "\\n")


def test_the_label_reader_reads_the_variants_states(
    token2: LazyEngine, states: list[LazyState]
) -> None:
    reader = LabelReader(token2, states[0])
    for s in states[:200]:
        assert reader.state(_label(token2, s)) == s == reader.slow(_label(token2, s))


def test_a_graph_that_differs_is_a_mismatch_with_a_path(token2: LazyEngine, tmp_path: Path) -> None:
    """The comparison is the engine's: a DOT dump written from the Python graph with
    one edge left out differs by that edge, shown with the variant's actions."""
    py = explore(token2, graph=True)
    g = py.graph
    assert g is not None
    lines = ["strict digraph DiskGraph {", "subgraph cluster_graph {"]
    for i, s in enumerate(g.states):
        end = '",style = filled]' if i in g.initial else '"];'
        lines.append(f'{i + 1} [label="{_label(token2, s)}{end}')
    dropped = next(j for j, a in enumerate(g.edge_action) if a == 3)  # a SendRedLetter edge
    for j, (src, a, dst) in enumerate(g.edges()):
        if j != dropped:
            lines.append(f'{src + 1} -> {dst + 1} [label="{a}",color="black",fontcolor="black"];')
    lines += ["}", "}"]
    dot = tmp_path / "g.dot"
    dot.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tlc = read_tlc_graph(token2, dot, LabelReader(token2, g.states[0]))
    result = TlcResult(
        model="MCLazyToken2",
        kind=ResultKind.SUCCESS,
        violated=None,
        distinct=py.distinct,
        total=py.total,
        depth=py.depth,
        trace="",
        error=None,
        exit_code=0,
        seconds=0.0,
    )
    r = compare_graphs(token2, tlc, result, py, manifest_distinct=4284)
    assert not r.exact
    assert "edges only in Python: 1" in r.problems
    (d,) = r.differences
    assert (d.kind, d.side, d.action) == ("edge", "Python", "SendRedLetter")
    assert d.params is not None and set(d.params) == {"c", "k"}
