"""TLA+ values as TLC prints them: canonical form, parser, printer, errors."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from redletter.errors import InputError, RedletterError
from redletter.python_model.values import (
    FALSE,
    MAX_DEPTH,
    TRUE,
    Fcn,
    Record,
    State,
    Value,
    check_value,
    fcn,
    is_tlc_name,
    parse_state,
    parse_value,
    print_state,
    print_value,
    record,
)
from tests.value_strategies import tla_values

# --------------------------------------------------------------------------- canonical form


def test_true_is_not_one() -> None:
    assert TRUE != 1  # type: ignore[comparison-overlap]
    assert FALSE != 0  # type: ignore[comparison-overlap]
    assert len(frozenset({TRUE, 1, FALSE, 0})) == 4
    assert parse_value("{TRUE, 1}") == frozenset({TRUE, 1})


def test_function_with_domain_1_to_n_is_a_sequence() -> None:
    assert parse_value('(1 :> "a" @@ 2 :> "b")') == ("a", "b")
    assert parse_value('(2 :> "b" @@ 1 :> "a")') == parse_value('<<"a", "b">>')
    assert fcn([(1, "a"), (2, "b")]) == ("a", "b")


def test_empty_function_record_and_sequence_are_one_value() -> None:
    assert parse_value("<< >>") == parse_value("<<>>") == () == record()
    assert fcn([]) == ()


def test_string_domain_function_is_a_record() -> None:
    assert parse_value('("b" :> 2 @@ "a" :> 1)') == parse_value("[a |-> 1, b |-> 2]")
    assert parse_value("[b |-> 2, a |-> 1]") == record(a=1, b=2)
    assert isinstance(parse_value('("a b" :> 1)'), Record)


def test_other_functions_are_fcn() -> None:
    v = parse_value("(0 :> 0 @@ 1 :> 1)")
    assert isinstance(v, Fcn)
    assert v[1] == 1
    assert v == fcn([(1, 1), (0, 0)])
    assert hash(v) == hash(fcn([(1, 1), (0, 0)]))
    assert isinstance(parse_value("(2 :> 2)"), Fcn)


def test_values_are_immutable() -> None:
    r = record(a=1)
    assert isinstance(r, Record)
    with pytest.raises(AttributeError):
        r._fields = ()
    s = parse_state("/\\ x = 1\n/\\ y = 2")
    with pytest.raises(TypeError):
        s["x"] = 2  # type: ignore[index]
    assert hash(s) == hash(State({"y": 2, "x": 1}))


def test_non_canonical_construction_is_refused() -> None:
    with pytest.raises(InputError) as e:
        Fcn([(1, "a")])
    assert str(e.value) == (
        "a function with this domain is a sequence, not a Fcn; build it with fcn()"
    )
    assert e.value.code == "RL-VALUE-NONCANONICAL"
    with pytest.raises(InputError) as e:
        Record([])
    assert str(e.value) == "a record needs at least one field (the empty record is <<>>)"


def test_python_bool_is_not_a_value() -> None:
    with pytest.raises(InputError) as e:
        print_value(True)
    assert str(e.value) == "bool True is not a TLA+ value (use TRUE/FALSE)"
    with pytest.raises(InputError):
        check_value((1, [2]))


def test_tlc_names() -> None:
    assert is_tlc_name("a_1")
    assert is_tlc_name("1a")
    assert not is_tlc_name("1")
    assert not is_tlc_name("")
    assert not is_tlc_name("a b")
    assert not is_tlc_name("WF_x")
    assert is_tlc_name("WF_")


# --------------------------------------------------------------------------- printing as TLC


@pytest.mark.parametrize(
    "text",
    [
        "<<>>",
        "{}",
        "-3",
        '"he said \\"hi\\"\\\\ ok"',
        '"a\\nb\\tc\\r\\f"',
        "[a |-> <<>>, m |-> {}]",
        '("" :> "" @@ "1" :> "1" @@ "a b" :> "a b")',
        "(0 :> 0 @@ 1 :> 1 @@ 2 :> 2)",
        "(-1 :> 1 @@ 2 :> 3)",
        "(<<1>> :> <<1>> @@ <<2>> :> <<2>>)",
        "(a :> 1 @@ b :> 2)",
        "{<<>>, <<1>>, <<-1, 2>>, <<1, -1>>, <<1, 2, 3>>}",
        "{{}, {1}, {0, 5}, {1, 2}}",
        "{-1, 2, 3, 10}",
        "{FALSE, TRUE}",
        "{[a |-> 1], [p |-> 1]}",
        '<<TRUE, "t\\\\n", {-1, 2, 3, 10}, {{}, {1}, {0, 5}, {1, 2}}>>',
    ],
)
def test_prints_as_tlc(text: str) -> None:
    """Strings copied from TLC 2.15's output (tests/data/dot/Toy*.dot)."""
    assert print_value(parse_value(text)) == text


def test_interval_is_a_set() -> None:
    assert parse_value("1..3") == frozenset({1, 2, 3})
    assert parse_value("2..1") == frozenset()
    assert print_value(parse_value("-1..1")) == "{-1, 0, 1}"


def test_wrapped_value() -> None:
    text = "<< [alpha |-> <<1, {1, 2}>>, beta |-> <<1, {1, 2}>>],\n   [alpha |-> <<2>>] >>"
    assert parse_value(text) == (
        record(alpha=(1, frozenset({1, 2})), beta=(1, frozenset({1, 2}))),
        record(alpha=(2,)),
    )


def test_parse_state_forms() -> None:
    s = parse_state('/\\ x = 0\n/\\ big = <<"a\\nb">>')
    assert list(s) == ["x", "big"]
    assert s["big"] == ("a\nb",)
    assert parse_state("x = 0") == State({"x": 0})
    assert parse_state("") == State()
    assert print_state(s) == '/\\ x = 0\n/\\ big = <<"a\\nb">>'
    assert print_state(State({"x": 0})) == "x = 0"


# --------------------------------------------------------------------------- errors, word for word


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("<<1, 2", "spec.dot:12: expected ',' or '>>' at column 7, found end of input"),
        ("{1 2}", "spec.dot:12: expected ',' or '}' at column 4, found '2'"),
        ("[a |-> 1, a |-> 2]", "spec.dot:12: record field a given twice at column 11"),
        ("[1 |-> 2]", "spec.dot:12: expected a field name at column 2, found '1'"),
        ('"abc', "spec.dot:12: expected a value at column 1, found an unterminated string"),
        (
            '"a\\qb"',
            "spec.dot:12: unknown escape '\\q' in a string "
            '(expected one of \\" \\\\ \\n \\t \\r \\f) at column 3',
        ),
        ("(1 :> 2 @@ 1 :> 3)", "spec.dot:12: function key 1 given twice at column 12"),
        ("(1 :> 2 3)", "spec.dot:12: expected '@@' or ')' at column 9, found '3'"),
        ("", "spec.dot:12: expected a value at column 1, found end of input"),
        ("<<1>> x", "spec.dot:12: expected end of input at column 7, found 'x'"),
        ("1..x", "spec.dot:12: expected an integer after '..' at column 4, found 'x'"),
        ("1..2000000", "spec.dot:12: interval has more than 1000000 elements at column 4"),
        ("9" * 4001, "spec.dot:12: integer longer than 4000 digits at column 1"),
        ("<<" * 201, f"spec.dot:12: values nested deeper than {MAX_DEPTH} levels at column 401"),
        ("{1,\n 2,\n <<3}", "spec.dot:14: expected ',' or '>>' at column 5, found '}'"),
    ],
)
def test_error_messages(text: str, message: str) -> None:
    with pytest.raises(InputError) as e:
        parse_value(text, path="spec.dot", line=12)
    assert str(e.value) == message
    assert e.value.code == "RL-INPUT-VALUE"
    assert e.value.path == "spec.dot"


def test_error_without_path_gives_line_and_column() -> None:
    with pytest.raises(InputError) as e:
        parse_value("{1,\n 2,\n <<3}")
    assert str(e.value) == "expected ',' or '>>' at line 3, column 5, found '}'"


def test_state_errors() -> None:
    with pytest.raises(InputError) as e:
        parse_state("/\\ x = 1\n/\\ x = 2")
    assert str(e.value) == "variable x given twice at line 2, column 4"
    with pytest.raises(InputError) as e:
        parse_state("/\\ x = 1\n y = 2")
    assert str(e.value) == "expected '/\\' or end of input at line 2, column 2, found 'y'"
    with pytest.raises(InputError) as e:
        parse_state("x = 1 y = 2")
    assert str(e.value) == "expected end of input at column 7, found 'y'"


# --------------------------------------------------------------------------- properties


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tla_values)
def test_round_trip(v: Value) -> None:
    text = print_value(v)
    assert parse_value(text) == v
    assert print_value(parse_value(text)) == text


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(st.from_regex(r"[a-z][a-z0-9_]{0,5}", fullmatch=True), tla_values, max_size=4)
)
def test_state_round_trip(d: dict[str, Value]) -> None:
    s = State(d)
    assert parse_state(print_state(s)) == s


_ALPHABET = st.sampled_from(list('<>{}[]()|-:@.,=/\\" \nabTRUEFALS0123456789\t\\'))


@settings(max_examples=1000, deadline=None)
@given(st.one_of(st.text(max_size=40), st.text(_ALPHABET, max_size=40)))
def test_fuzz_only_input_errors(text: str) -> None:
    with contextlib.suppress(InputError):
        parse_value(text, path="f", line=1)
    with contextlib.suppress(InputError):
        parse_state(text)


@settings(max_examples=300, deadline=None)
@given(tla_values, st.data())
def test_fuzz_mutated_values(v: Value, data: st.DataObject) -> None:
    text = print_value(v)
    i = data.draw(st.integers(0, len(text)))
    j = data.draw(st.integers(i, min(len(text), i + 3)))
    junk = data.draw(st.text(_ALPHABET, max_size=3))
    try:
        parse_value(text[:i] + junk + text[j:])
    except RedletterError as e:
        assert isinstance(e, InputError)
