"""The TLC 2.15 DOT reader, on dumps written by the real jar (tests/data/dot)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from redletter.errors import InputError
from redletter.python_model.dot import DotEdge, DotNode, iter_dot, load_dot, unescape_label
from redletter.python_model.values import ModelValue, State, record

DATA = Path(__file__).parent / "data" / "dot"


def test_toy_counts_match_tlc() -> None:
    """TLC: 30 states generated, 24 distinct states found (one initial)."""
    g = load_dot(DATA / "Toy.dot")
    assert len(g.nodes) == 24
    assert len(g.initial) == 1
    assert g.edge_lines == 29  # one per generated transition: 30 - 1 initial state
    assert {a for _, a, _ in g.edges} == {"Next"}
    for node in g.nodes.values():
        assert isinstance(node.state, State)


def test_toy_initial_state_parsed() -> None:
    g = load_dot(DATA / "Toy.dot")
    (fp,) = g.initial
    s = g.nodes[fp].state
    assert s["q"] == 'he said "hi"\\ ok'
    assert s["m"] == frozenset({ModelValue("a"), ModelValue("b")})
    assert s["r"] == record(a=(), m=frozenset(), zq=1, ca=2)
    assert s["x"] == 0


def test_named_actions_and_wrapped_labels() -> None:
    g = load_dot(DATA / "Toy2.dot")
    assert len(g.nodes) == 7
    assert len(g.initial) == 2
    assert {a for _, a, _ in g.edges} == {"Inc", "Reset", "Stay"}
    assert all(len(n.state["big"]) in (3, 40) for n in g.nodes.values())  # type: ignore[arg-type]


def test_colorized_one_variable_dump() -> None:
    items = list(iter_dot(DATA / "One.dot"))
    nodes = [i for i in items if isinstance(i, DotNode)]
    edges = [i for i in items if isinstance(i, DotEdge)]
    assert [n.label for n in nodes] == ["x = 0", "x = 1", "x = 2"]
    assert [n.initial for n in nodes] == [True, True, False]
    assert edges[0] == DotEdge(-3406341414084290173, "A", -686636423115914061, line=8)
    assert nodes[0].state == State({"x": 0})


def test_every_fixture_loads() -> None:
    for path in sorted(DATA.glob("*.dot")):
        g = load_dot(path)
        assert g.initial <= g.nodes.keys()
        g.states()


def test_label_unescaping() -> None:
    assert unescape_label('/\\\\ x = \\"a\\\\nb\\"\\n/\\\\ y = 1') == '/\\ x = "a\\nb"\n/\\ y = 1'
    with pytest.raises(InputError) as e:
        unescape_label("a\\qb", path="g.dot", line=3)
    assert (
        str(e.value) == "g.dot:3: expected one of \\\\ \\\" \\n after '\\' in a label, found '\\q'"
    )


HEAD = 'strict digraph DiskGraph {\nnodesep=0.35;\nsubgraph cluster_graph {\ncolor="white";\n'
TAIL = "}\n}"


def _write(tmp_path: Path, body: str, *, head: str = HEAD, tail: str = TAIL) -> Path:
    p = tmp_path / "g.dot"
    p.write_text(head + body + tail, encoding="utf-8")
    return p


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "1 -> 2 [label=Next];\n",
            "g.dot:5: expected a TLC 2.15 DOT line (a state '<fp> [label=\"...\"];', a "
            "transition '<fp> -> <fp> [label=\"...\",...];' or graph syntax), found "
            "'1 -> 2 [label=Next];'",
        ),
        (
            '1 [label="x = 1"]\n',
            "g.dot:5: expected a state line to end with '\"];' or '\",style = filled]'",
        ),
        (
            '99999999999999999999 [label="x = 1"];\n',
            "g.dot:5: expected a signed 64-bit fingerprint, found 99999999999999999999",
        ),
        (
            '1 [label="x = 1"];\n1 [label="x = 2"];\n',
            "g.dot:6: state 1 has a different label than on line 5 (a fingerprint collision?)",
        ),
        (
            '1 [label="x = 1",style = filled]\n'
            '1 -> 2 [label="A",color="black",fontcolor="black"];\n',
            "g.dot:6: the transition on this line refers to state 2, which has no state line"
            " (1 such state(s))",
        ),
    ],
)
def test_malformed_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str, message: str
) -> None:
    _write(tmp_path, body)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError) as e:
        load_dot("g.dot")
    assert str(e.value) == message
    assert e.value.code == "RL-INPUT-DOT"


def test_truncated_file(tmp_path: Path) -> None:
    p = _write(tmp_path, '1 [label="x = 1",style = filled]\n', tail="")
    with pytest.raises(InputError) as e:
        load_dot(p)
    assert str(e.value) == (
        f"{p}:5: unexpected end of file: expected '}}' closing the graph "
        "(did TLC stop before it finished writing?)"
    )


def test_bad_header(tmp_path: Path) -> None:
    with pytest.raises(InputError) as e:
        load_dot(_write(tmp_path, "", head="graph G {\n"))
    assert str(e.value) == (
        "g.dot:1: expected 'strict digraph DiskGraph {' on the first line, found 'graph G {'"
    ).replace("g.dot", str(tmp_path / "g.dot"))


def test_bad_label_names_file_line_and_state(tmp_path: Path) -> None:
    p = _write(tmp_path, '7 [label="/\\\\ x = <<1",style = filled]\n')
    (node,) = [i for i in iter_dot(p) if isinstance(i, DotNode)]
    with pytest.raises(InputError) as e:
        _ = node.state
    assert str(e.value) == (
        f"{p}:5: in the label of state 7: expected ',' or '>>' at column 11, found end of input"
    )


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError) as e:
        list(iter_dot(tmp_path / "nope.dot"))
    assert (
        str(e.value)
        == f"{tmp_path / 'nope.dot'}: cannot read the DOT file: No such file or directory"
    )


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200), st.data())
def test_fuzz_only_input_errors(junk: bytes, data: st.DataObject) -> None:
    import tempfile

    original = (DATA / "One.dot").read_bytes()
    i = data.draw(st.integers(0, len(original)))
    j = data.draw(st.integers(i, min(len(original), i + 10)))
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "f.dot"
        p.write_bytes(original[:i] + junk + original[j:])
        try:
            g = load_dot(p)
            g.states()
        except InputError:
            pass
