"""COS 418 files: round trips, error messages word for word, fuzzing, generation, simulation."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from redletter.conformance.formats.cos418 import (
    RecordedMessage,
    Scenario,
    Send,
    Server,
    Snap,
    Snapshot,
    Tick,
    Topology,
    format_scenario,
    format_snap,
    format_topology,
    generate_scenario,
    generate_topology,
    parse_scenario,
    parse_snap,
    parse_topology,
    read_scenario,
    read_snap,
    read_topology,
    simulate,
    simulate_trace,
)
from redletter.errors import InputError

DATA = Path(__file__).parent / "data" / "cos418"


def test_read_fixtures() -> None:
    top = read_topology(DATA / "2nodes.top")
    assert top == Topology((Server("N1", 1), Server("N2", 0)), (("N1", "N2"), ("N2", "N1")))
    assert format_topology(top) == "2\nN1 1\nN2 0\nN1 N2\nN2 N1\n"
    sc = read_scenario(DATA / "2nodes.events")
    assert sc.events == (Send("N1", "N2", 1), Snapshot("N2"), Tick(1), Snapshot("N1"), Tick(3))
    assert format_scenario(sc) == (DATA / "2nodes.events").read_text()
    snap = read_snap(DATA / "0.snap")
    assert snap.tokens == (("N1", 5), ("N2", 1), ("N3", 2))
    assert snap.channel(("N1", "N2")) == (3, 2)
    assert format_snap(snap) == (DATA / "0.snap").read_text()


def test_canonical_forms() -> None:
    assert (
        format_scenario(parse_scenario("tick 1\n# note\n\nsnapshot N1\n")) == "tick\nsnapshot N1\n"
    )
    assert (
        format_topology(parse_topology("  2 \nA 1\n#x\nB 2\nA B\nB A\n"))
        == "2\nA 1\nB 2\nA B\nB A\n"
    )


@pytest.mark.parametrize(
    ("parser", "text", "message"),
    [
        (
            parse_topology,
            "x\n",
            "t:1: expected the number of servers (a positive integer), got 'x'",
        ),
        (
            parse_topology,
            "0\n",
            "t:1: expected the number of servers (a positive integer), got '0'",
        ),
        (
            parse_topology,
            "2\nN1\n",
            "t:2: expected '<server-id> <tokens>' (server 1 of 2), got 'N1'",
        ),
        (parse_topology, "1\nN1 -1\n", "t:2: expected a non-negative number of tokens, got '-1'"),
        (parse_topology, "2\nN1 1\n", "t:3: expected 2 servers, got 1 before the end of the file"),
        (parse_topology, "2\nN1 1\nN1 2\n", "t:3: duplicate server 'N1' (first on line 2)"),
        (parse_topology, "1\nN1 1\nN1 N2\n", "t:3: unknown server 'N2' in a link (servers: N1)"),
        (parse_topology, "1\nN1 1\nN1 N1\n", "t:3: a link from N1 to itself"),
        (
            parse_topology,
            "1\nN1 1\nN1 N2 N3\n",
            "t:3: expected '<src> <dst>' (a link), got 'N1 N2 N3'",
        ),
        (
            parse_topology,
            "2\nA 1\nB 1\nA B\nA B\n",
            "t:5: duplicate link A -> B (first on line 4)",
        ),
        (
            parse_topology,
            "",
            "t:1: expected the number of servers (a positive integer), got an empty file",
        ),
        (
            parse_scenario,
            "send N1 N2\n",
            "t:1: expected 'send <src> <dst> <n>', 'snapshot <server>' or 'tick [n]', "
            "got 'send N1 N2'",
        ),
        (parse_scenario, "send N1 N2 0\n", "t:1: expected a positive number of tokens, got '0'"),
        (parse_scenario, "tick x\n", "t:1: expected a positive tick count, got 'x'"),
        (
            parse_snap,
            "",
            "t:1: expected the snapshot id (a non-negative integer), got an empty file",
        ),
        (parse_snap, "a b\n", "t:1: expected the snapshot id (a non-negative integer), got 'a b'"),
        (parse_snap, "0\nN1 x\n", "t:2: expected a non-negative number of tokens, got 'x'"),
        (parse_snap, "0\nN1 N2 3\n", "t:2: expected a message 'token(<n>)', got '3'"),
        (
            parse_snap,
            "0\nN1 N2 token(x)\n",
            "t:2: expected a positive number of tokens in token(<n>), got 'x'",
        ),
        (
            parse_snap,
            "0\na b c d\n",
            "t:2: expected '<server> <tokens>' or '<src> <dst> token(<n>)', got 'a b c d'",
        ),
        (parse_snap, "0\nN1 1\nN1 2\n", "t:3: duplicate server 'N1' (first on line 2)"),
        (
            parse_snap,
            b"0\n\xff\n",
            "t:2: expected UTF-8 text, got a byte that is not UTF-8 (0xff) at column 1",
        ),
    ],
)
def test_error_messages(parser: object, text: str | bytes, message: str) -> None:
    assert callable(parser)
    with pytest.raises(InputError) as info:
        parser(text, "t")
    assert str(info.value) == message
    assert info.value.code == "RL-INPUT-COS418"


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        read_snap(tmp_path / "nope.snap")
    assert (
        str(info.value)
        == f"{tmp_path / 'nope.snap'}: cannot read the file: No such file or directory"
    )


_words = st.sampled_from(
    ["send", "snapshot", "tick", "N1", "N2", "1", "0", "-3", "token(2)", "#", "x"]
)
_line = st.lists(_words, max_size=5).map(" ".join)
_texts = st.one_of(st.text(max_size=80), st.lists(_line, max_size=8).map("\n".join))


@settings(max_examples=300, deadline=None)
@given(_texts, st.binary(max_size=40))
def test_fuzz_only_input_errors(text: str, data: bytes) -> None:
    for parser in (parse_topology, parse_scenario, parse_snap):
        for raw in (text, data):
            with contextlib.suppress(InputError):
                parser(raw, "fuzz")


_ids = st.text(alphabet="abcN0123456789_", min_size=1, max_size=4)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(_ids, st.integers(0, 99)), min_size=1, max_size=5, unique_by=lambda t: t[0]),
    st.data(),
)
def test_round_trips(servers: list[tuple[str, int]], data: st.DataObject) -> None:
    names = [s for s, _ in servers]
    pairs = [(a, b) for a in names for b in names if a != b]
    links = data.draw(st.lists(st.sampled_from(pairs), unique=True) if pairs else st.just([]))
    top = Topology(tuple(Server(s, n) for s, n in servers), tuple(links))
    assert parse_topology(format_topology(top)) == top
    events = data.draw(
        st.lists(
            st.one_of(
                st.builds(Send, st.sampled_from(names), st.sampled_from(names), st.integers(1, 9)),
                st.builds(Snapshot, st.sampled_from(names)),
                st.builds(Tick, st.integers(1, 5)),
            ),
            max_size=10,
        )
    )
    sc = Scenario(tuple(events))
    assert parse_scenario(format_scenario(sc)) == sc
    msgs = data.draw(
        st.lists(
            st.builds(
                RecordedMessage, st.sampled_from(names), st.sampled_from(names), st.integers(1, 9)
            ),
            max_size=4,
        )
    )
    snap = Snap(data.draw(st.integers(0, 9)), tuple(servers), tuple(msgs))
    assert parse_snap(format_snap(snap)) == snap


@pytest.mark.parametrize("seed", range(20))
def test_generated_topologies_and_simulation(seed: int) -> None:
    top = generate_topology(seed, 2 + seed % 4, extra_links=seed % 3)
    assert top.strongly_connected(), f"seed {seed}"
    sc = generate_scenario(top, seed, 8, 2)
    assert parse_scenario(format_scenario(sc)) == sc
    result = simulate_trace(top, sc, seed)
    assert simulate(top, sc, seed) == list(result.snaps), f"seed {seed}: not reproducible"
    assert [s.id for s in result.snaps] == [0, 1]
    for snap in result.snaps:
        total = sum(n for _, n in snap.tokens) + sum(m.n for m in snap.messages)
        assert total == top.total, f"seed {seed}: snapshot {snap.id} not conserved"
