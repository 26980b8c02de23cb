"""The protocol: round trips, strict validation (messages word for word), fuzzing,
and the generated document being up to date."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from redletter.conformance import protocol as p
from redletter.errors import InputError

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("schema", list(p.MESSAGES.values()), ids=lambda s: s.type)
def test_every_example_round_trips(schema: p.MessageSchema) -> None:
    assert schema.example is not None
    body = schema.example()
    env = p.Envelope(p.HARNESS, "p1", body)
    assert p.decode(p.encode(env)) == env
    assert isinstance(body, p.Request) == (schema.direction == "request")


def test_every_request_names_its_reply() -> None:
    for schema in p.MESSAGES.values():
        for reply in schema.replies:
            assert p.MESSAGES[reply].direction == "reply"
        assert bool(schema.replies) == (schema.direction == "request")


def test_docs_are_up_to_date() -> None:
    committed = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    assert committed == p.render_markdown(), (
        "docs/protocol.md is stale: run"
        " `python -m redletter.conformance.protocol > docs/protocol.md`"
    )


def _err(line: str) -> InputError:
    with pytest.raises(InputError) as err:
        p.decode(line, source="node p1", lineno=3)
    return err.value


def _line(body: dict[str, object]) -> str:
    return json.dumps({"src": "p1", "dest": "harness", "body": body})


def test_not_json() -> None:
    e = _err("{oops")
    assert e.message == (
        "node p1:3: bad protocol line: not JSON (Expecting property name enclosed in double "
        "quotes): {oops"
    )
    assert e.code == "RL-PROTO-JSON"


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ({"type": "nope"}, 'body.type must be a message type of the protocol; got "nope"'),
        ({"type": "init", "msg_id": 1}, "body lacks the required field 'node_id'"),
        (
            {"type": "start_snapshot", "msg_id": 1, "snapshot": 0},
            "body.snapshot must be >= 1, got 0",
        ),
        (
            {"type": "start_snapshot", "msg_id": 1, "snapshot": 1.0},
            "body.snapshot must be an integer, got 1.0",
        ),
        (
            {"type": "report", "msg_id": True, "snapshot": 1},
            "body.msg_id must be an integer, got true",
        ),
        (
            {"type": "report", "msg_id": 1, "snapshot": 1, "extra": 2},
            "body has an unknown field 'extra'",
        ),
        (
            {"type": "deliver", "msg_id": 1, "from": "p2", "msg": {"type": "letter"}},
            "body.msg.type must be one of app, marker, record, barrier, request, saved_state,"
            ' forward; got "letter"',
        ),
        (
            {
                "type": "deliver_ok",
                "in_reply_to": 1,
                "sent": [{"channel": ["p1"], "msg": {}}],
                "recorded": [],
                "completed": [],
            },
            'body.sent[0].channel must be a channel [src, dst] of node ids, got ["p1"]',
        ),
        (
            {"type": "error", "in_reply_to": 1, "code": "oops", "text": "x"},
            "body.code must be one of bad-request, not-initialised, precondition-failed, "
            'unsupported, internal; got "oops"',
        ),
    ],
)
def test_invalid_bodies(body: dict[str, object], reason: str) -> None:
    line = _line(body)
    e = _err(line)
    assert e.message == f"node p1:3: bad protocol line: {reason}: {line}"
    assert e.code == "RL-PROTO-INVALID"


def test_bad_envelopes() -> None:
    assert _err("[1]").message == (
        "node p1:3: bad protocol line: a line must be a JSON object, got [1]: [1]"
    )
    assert _err('{"src": "", "dest": "x", "body": {}}').message.startswith(
        'node p1:3: bad protocol line: src must be a node id, got ""'
    )
    assert _err('{"src": "a", "dest": "b"}').message == (
        "node p1:3: bad protocol line: the envelope lacks the required field 'body': "
        '{"src": "a", "dest": "b"}'
    )


def test_long_lines_are_shortened() -> None:
    line = "x" * 1000
    e = _err(line)
    assert e.message.endswith("x" * 200 + "... (1000 characters)")


def test_deliver_marker_has_no_state() -> None:
    env = p.decode(
        '{"src":"harness","dest":"p1","body":{"type":"deliver","msg_id":4,"from":"p2",'
        '"msg":{"type":"marker","snapshot":2},"new_state":null}}'
    )
    assert env.body == p.Deliver(4, "p2", p.Marker(2), None)
    assert '"new_state"' not in p.encode(env)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(["src", "dest", "body", "type", "msg_id", "sent", "msg", "x"]),
            inner,
            max_size=5,
        )
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(JSON)
def test_fuzz_json_raises_only_input_error(value: object) -> None:
    with contextlib.suppress(InputError):
        p.decode(json.dumps(value))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_fuzz_bytes_raise_only_input_error(data: bytes) -> None:
    with contextlib.suppress(InputError):
        p.decode(data)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([s for s in p.MESSAGES.values()]), st.data())
def test_fuzz_mutated_examples(schema: p.MessageSchema, data: st.DataObject) -> None:
    assert schema.example is not None
    obj = json.loads(p.encode(p.Envelope("a", "b", schema.example())))
    body = obj["body"]
    key = data.draw(st.sampled_from(sorted(body)))
    body[key] = data.draw(JSON)
    try:
        env = p.decode(json.dumps(obj))
    except InputError:
        return
    assert p.decode(p.encode(env)) == env
