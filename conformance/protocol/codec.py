"""The protocol's codec: one envelope per line of JSON, validated strictly against
the schemas of :mod:`redletter.conformance.protocol.schema`."""

from __future__ import annotations

import json
from typing import Final

from redletter.conformance.protocol.messages import Body, Envelope, JsonValue
from redletter.conformance.protocol.schema import (
    BY_CLASS,
    MESSAGES,
    Invalid,
    Missing,
    object_fields,
    show,
)
from redletter.errors import InputError, escape_terminal

__all__ = ["MAX_SHOWN", "body_to_json", "decode", "encode"]

MAX_SHOWN: Final = 200  #: characters of an offending line quoted in an error message
INT_MIN: Final = -(1 << 63)  #: integers are 64-bit signed, as in every language a node is
INT_MAX: Final = (1 << 63) - 1  #: written in (so a 5,000-digit number is an error, not a hang)


class _Reject(ValueError):
    """A JSON number or constant the protocol does not accept."""


def _parse_int(text: str) -> int:
    # Checked on the digits, before int() converts them: no quadratic conversion,
    # and no bare ValueError from Python's 4,300-digit limit.
    if len(text.lstrip("-")) > 19:
        raise _Reject(f"an integer of {len(text.lstrip('-'))} digits, beyond 64 bits")
    value = int(text)
    if not INT_MIN <= value <= INT_MAX:
        raise _Reject(f"the integer {value} does not fit in 64 bits")
    return value


def _parse_constant(name: str) -> object:
    raise _Reject(f"{name} is not JSON")


def _parse_float(text: str) -> float:
    if len(text) > 64:
        raise _Reject(f"a number of {len(text)} characters")
    value = float(text)
    if value != value or value in (float("inf"), float("-inf")):
        raise _Reject(f"the number {text[:40]} is out of range")
    return value


def body_to_json(body: Body) -> dict[str, JsonValue]:
    """The JSON object of a body (``type`` first)."""
    schema = BY_CLASS[type(body)]
    out: dict[str, JsonValue] = {"type": schema.type}
    for f in schema.fields:
        value = getattr(body, f.attribute)
        if f.optional and value is None:
            continue
        out[f.name] = f.spec.enc(value)
    return out


def encode(env: Envelope) -> str:
    """One protocol line (without the newline)."""
    return json.dumps(
        {"src": env.src, "dest": env.dest, "body": body_to_json(env.body)},
        separators=(",", ":"),
    )


def _body(obj: object, where: str) -> Body:
    if not isinstance(obj, dict):
        raise Invalid(f"{where} must be an object, got {show(obj)}")
    kind = obj.get("type")
    schema = MESSAGES.get(kind) if isinstance(kind, str) else None
    if schema is None:
        raise Invalid(f"{where}.type must be a message type of the protocol; got {show(kind)}")
    body: Body = schema.cls(**object_fields(obj, schema.fields, where, skip=("type",)))
    return body


def decode(line: str | bytes, *, source: str | None = None, lineno: int | None = None) -> Envelope:
    """Parse and validate one protocol line.

    ``source`` names where the line came from (a node, a file) for the error
    message; every problem raises :class:`InputError` whose message quotes the
    offending line (shortened to :data:`MAX_SHOWN` characters).
    """
    text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
    try:
        obj = json.loads(
            text,
            parse_int=_parse_int,
            parse_float=_parse_float,
            parse_constant=_parse_constant,
        )
    except (json.JSONDecodeError, RecursionError, _Reject) as exc:
        reason = (
            f"not JSON ({exc.msg})"
            if isinstance(exc, json.JSONDecodeError)
            else f"not JSON the protocol accepts ({exc})"
            if isinstance(exc, _Reject)
            else "nested too deeply"
        )
        raise _line_error(reason, text, source, lineno, "RL-PROTO-JSON") from None
    try:
        if not isinstance(obj, dict):
            raise Invalid(f"a line must be a JSON object, got {show(obj)}")
        for key in obj:
            if key not in ("src", "dest", "body"):
                raise Invalid(f"the envelope has an unknown field {key!r}")
        for key in ("src", "dest"):
            value = obj.get(key, Missing())
            if not isinstance(value, str) or not value:
                raise Invalid(f"{key} must be a node id, got {show(value)}")
        if "body" not in obj:
            raise Invalid("the envelope lacks the required field 'body'")
        body = _body(obj["body"], "body")
    except Invalid as exc:
        raise _line_error(str(exc), text, source, lineno, "RL-PROTO-INVALID") from None
    return Envelope(obj["src"], obj["dest"], body)


def _line_error(
    reason: str, text: str, source: str | None, lineno: int | None, code: str
) -> InputError:
    shown = text.rstrip("\n")
    if len(shown) > MAX_SHOWN:
        shown = shown[:MAX_SHOWN] + f"... ({len(shown)} characters)"
    shown = escape_terminal(shown, newlines=True)
    return InputError(f"bad protocol line: {reason}: {shown}", code=code, path=source, line=lineno)
