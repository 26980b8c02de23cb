"""The ITF codec: symmetric with the values, readable by itf-py, errors with JSON paths."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import itf_py
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from redletter.errors import InputError
from redletter.python_model.itf import (
    ItfState,
    ItfTrace,
    itf_trace_to_json,
    read_itf,
    trace_from_json,
    trace_to_json,
    value_from_itf,
    value_to_itf,
)
from redletter.python_model.values import FALSE, TRUE, ModelValue, Value, fcn, parse_value, record
from tests.value_strategies import tla_values


def test_encoding() -> None:
    assert value_to_itf(-3) == {"#bigint": "-3"}
    assert value_to_itf(TRUE) is True
    assert value_to_itf(("a", 1)) == ["a", {"#bigint": "1"}]
    assert value_to_itf(("a",), tuples="tup") == {"#tup": ["a"]}
    assert value_to_itf(frozenset({2, 1})) == {"#set": [{"#bigint": "1"}, {"#bigint": "2"}]}
    assert value_to_itf(record(a=FALSE)) == {"a": False}
    assert value_to_itf(fcn([("#set", 1)])) == {"#map": [["#set", {"#bigint": "1"}]]}
    assert value_to_itf(parse_value("(0 :> 1)")) == {"#map": [[{"#bigint": "0"}, {"#bigint": "1"}]]}
    assert value_to_itf(ModelValue("p1")) == {"#unserializable": "p1"}


def test_decoding_is_canonical() -> None:
    assert value_from_itf({"#map": [[1, "a"], [2, "b"]]}) == ("a", "b")
    assert value_from_itf({"#tup": ["a"]}) == value_from_itf(["a"]) == ("a",)
    assert value_from_itf({"#map": [["x", 1]]}) == record(x=1)
    assert value_from_itf({}) == ()
    assert value_from_itf(7) == 7
    assert value_from_itf(True) == TRUE


@settings(max_examples=300, deadline=None)
@given(tla_values, st.sampled_from(["list", "tup"]))
def test_value_round_trip(v: Value, tuples: Any) -> None:
    doc = json.loads(json.dumps(value_to_itf(v, tuples=tuples)))
    assert value_from_itf(doc) == v


def _trace() -> ItfTrace:
    s0 = ItfState.of({"x": 0, "buf": ()}, {"action": "Init"})
    s1 = ItfState.of({"x": 1, "buf": ("m",)}, {"action": "Send", "params": {"p": "p1"}})
    return ItfTrace(("x", "buf"), (s0, s1), trace_from_json(trace_to_json([])).meta, ("N",), 1)


def test_trace_round_trip() -> None:
    t = _trace()
    doc = json.loads(json.dumps(itf_trace_to_json(t)))
    assert doc["states"][1]["#meta"] == {"index": 1, "action": "Send", "params": {"p": "p1"}}
    assert doc["loop"] == 1
    assert trace_from_json(doc) == t
    assert hash(trace_from_json(doc)) == hash(t)


def test_itf_py_reads_our_traces() -> None:
    doc = itf_trace_to_json(_trace(), tuples="tup")
    other = itf_py.trace_from_json(json.loads(json.dumps(doc)))
    assert other.vars == ["x", "buf"]
    assert other.states[1].values["buf"] == ("m",)
    assert other.states[1].meta["action"] == "Send"
    theirs = itf_py.trace_to_json(other)
    assert trace_from_json(theirs).states == _trace().states


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ([], "the document: expected an ITF trace object, found an array"),
        ({"states": []}, "the document: expected the key 'vars'"),
        ({"vars": ["x"], "states": {}}, "states: expected an array of states, found an object"),
        ({"vars": ["x"], "states": [{"x": 1}, {}]}, "states[1]: expected variable x, found none"),
        (
            {"vars": ["x"], "states": [{"x": 1, "y": 2}]},
            "states[0].y: is not one of the trace's vars",
        ),
        (
            {"vars": ["buf"], "states": [{"buf": {"#set": [1, {"#bigint": "x"}]}}]},
            'states[0].buf.#set[1].#bigint: expected a string of decimal digits, found "x"',
        ),
        (
            {"vars": ["buf"], "states": [{"buf": {"#map": [[1]]}}]},
            "states[0].buf.#map[0]: expected a [key, value] pair, found [1]",
        ),
        (
            {"vars": ["buf"], "states": [{"buf": {"#map": [[1, 2], [1, 3]]}}]},
            "states[0].buf.#map[1]: the same key appears twice in the map",
        ),
        (
            {"vars": ["buf"], "states": [{"buf": {"#set": [], "x": 1}}]},
            "states[0].buf: expected an object with only the key '#set', found keys #set, x",
        ),
        (
            {"vars": ["buf"], "states": [{"buf": {"#frob": 1}}]},
            "states[0].buf: expected one of #bigint, #tup, #set, #map, #unserializable,"
            " found #frob",
        ),
        (
            {"vars": ["b"], "states": [{"b": 1.5}]},
            "states[0].b: expected an ITF value, found a number",
        ),
        (
            {"vars": ["b"], "states": [{"b": None}]},
            "states[0].b: expected an ITF value, found null",
        ),
        (
            {"vars": ["x"], "loop": 3, "states": [{"x": 1}]},
            "loop: expected null or a state index, found 3",
        ),
    ],
)
def test_errors_name_the_json_path(doc: Any, message: str) -> None:
    with pytest.raises(InputError) as e:
        trace_from_json(doc)
    assert str(e.value) == message
    assert e.value.code == "RL-INPUT-ITF"


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda c: (
        st.lists(c, max_size=3)
        | st.dictionaries(
            st.sampled_from(["#set", "#map", "#tup", "#bigint", "a", "vars"]), c, max_size=3
        )
    ),
    max_leaves=15,
)


@settings(max_examples=500, deadline=None)
@given(_json)
def test_fuzz_only_input_errors(doc: Any) -> None:
    with contextlib.suppress(InputError):
        value_from_itf(doc)
    with contextlib.suppress(InputError):
        trace_from_json({"vars": ["v"], "states": [{"v": doc}]})


def test_read_itf_round_trips_a_file(tmp_path: Path) -> None:
    path = tmp_path / "t.itf.json"
    path.write_text(json.dumps(itf_trace_to_json(_trace())), encoding="utf-8")
    assert read_itf(path) == _trace()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read the trace: No such file or directory"),
        (b"\xff{}", "expected UTF-8 text, got a byte that is not UTF-8 (0xff) at column 1"),
        (b'{"vars": [\n  "x",\n}', "not JSON: Expecting value (column 1)"),
        (
            b'{"vars": ["b"], "states": [{"b": 1.5}]}',
            "states[0].b: expected an ITF value, found a number",
        ),
    ],
)
def test_read_itf_errors_name_the_file(tmp_path: Path, content: bytes | None, message: str) -> None:
    path = tmp_path / "t.itf.json"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(InputError) as e:
        read_itf(path)
    assert e.value.code == "RL-INPUT-ITF"
    assert e.value.path == str(path)
    line = "3:" if message.startswith("not JSON") else "1:" if "UTF-8" in message else ""
    assert str(e.value) == f"{path}:{line} {message}"
