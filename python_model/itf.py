"""ITF (Apalache's Informal Trace Format, JSON) codec for the values of :mod:`values`.

Encoding (https://apalache-mc.org/docs/adr/015adr-trace.html):

=======================  ==============================================
value                    ITF
=======================  ==============================================
``int``                  ``{"#bigint": "-3"}`` (plain JSON integers are read too)
:class:`Bool`            ``true`` / ``false``
``str``                  ``"abc"``
``tuple``                ``[...]`` (Apalache's ``Seq``), or ``{"#tup": [...]}`` with
                         ``tuples="tup"``; both are read
``frozenset``            ``{"#set": [...]}`` in :func:`sort_key` order
:class:`Record`          ``{"f": ...}`` when no field name starts with ``#``,
                         else ``{"#map": ...}``
:class:`Fcn`             ``{"#map": [[k, v], ...]}``
:class:`ModelValue`      ``{"#unserializable": "name"}``
=======================  ==============================================

Reading goes through :func:`values.fcn`, so ``{"#map": [[1, "a"], [2, "b"]]}`` is the
tuple ``("a", "b")``, exactly as in TLA+.  Apalache's variants (``{"tag": .., "value":
..}``) are read as the records they are in TLA+.

``itf-py`` is used for interoperability tests only: its decoder builds namedtuples
(which reject field names that are not Python identifiers, and turn ``tag``/``value``
records into variants), keeps Python ``bool``s (``True == 1``), and fails with bare
``KeyError``/``TypeError`` on malformed input; this kit needs canonical values and
:class:`InputError` with the JSON path of the bad element.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal, TypeAlias

import orjson
from frozendict import frozendict

from redletter.errors import InputError
from redletter.python_model.values import (
    FALSE,
    TRUE,
    Bool,
    Fcn,
    ModelValue,
    Record,
    State,
    Value,
    fcn,
    sort_key,
)
from redletter.untrusted import MAX_TRACE_BYTES, loads, read_input

__all__ = [
    "FrozenJson",
    "ItfState",
    "ItfTrace",
    "freeze_json",
    "itf_trace_to_json",
    "read_itf",
    "thaw_json",
    "trace_from_json",
    "trace_to_json",
    "value_from_itf",
    "value_to_itf",
]

Json: TypeAlias = Any
"""A JSON document as :func:`json.loads` returns it."""

FrozenJson: TypeAlias = (
    "bool | int | float | str | tuple[FrozenJson, ...] | frozendict[str, FrozenJson] | None"
)
"""JSON made immutable: arrays are tuples, objects are ``frozendict``."""

TupleStyle: TypeAlias = Literal["list", "tup"]

_MAX_DEPTH: Final = 200
_FORMAT_URL: Final = "https://apalache-mc.org/docs/adr/015adr-trace.html"
_IDENT_RE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _child(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    if _IDENT_RE.fullmatch(key) or key.startswith("#"):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key)}]"


def _bad(path: str, message: str) -> InputError:
    return InputError(f"{path or 'the document'}: {message}", code="RL-INPUT-ITF")


def _kind(obj: Json) -> str:
    if obj is None:
        return "null"
    if isinstance(obj, bool):
        return "a boolean"
    if isinstance(obj, int | float):
        return "a number"
    if isinstance(obj, str):
        return "a string"
    if isinstance(obj, list):
        return "an array"
    if isinstance(obj, dict):
        return "an object"
    return type(obj).__name__


# --------------------------------------------------------------------------- JSON meta


def freeze_json(obj: Json, *, path: str = "#meta") -> FrozenJson:
    """An immutable, hashable copy of a JSON document."""
    if obj is None or isinstance(obj, bool | int | float | str):
        return obj
    if isinstance(obj, list | tuple):
        return tuple(freeze_json(x, path=_child(path, i)) for i, x in enumerate(obj))
    if isinstance(obj, Mapping):
        return _freeze_object(obj, path)
    raise _bad(path, f"expected JSON, found {_kind(obj)}")


def _freeze_object(obj: Mapping[str, Json], path: str) -> frozendict[str, FrozenJson]:
    out: dict[str, FrozenJson] = {}
    for k, v in obj.items():
        if not isinstance(k, str):
            raise _bad(path, f"expected string keys, found {k!r}")
        out[k] = freeze_json(v, path=_child(path, k))
    return frozendict(out)


def thaw_json(obj: FrozenJson) -> Json:
    """The plain (mutable) JSON document of :func:`freeze_json`'s result."""
    if isinstance(obj, tuple):
        return [thaw_json(x) for x in obj]
    if isinstance(obj, frozendict):
        return {k: thaw_json(v) for k, v in obj.items()}
    return obj


# --------------------------------------------------------------------------- values


def value_to_itf(v: Value, *, tuples: TupleStyle = "list") -> Json:
    """The ITF JSON of a value (see the module docstring for the encoding)."""
    return _to_itf(v, tuples, 0)


def _to_itf(v: Value, tuples: TupleStyle, depth: int) -> Json:
    if depth > _MAX_DEPTH:
        raise InputError(f"value nested deeper than {_MAX_DEPTH} levels", code="RL-VALUE-DEPTH")
    d = depth + 1
    if type(v) is int:
        return {"#bigint": str(v)}
    if isinstance(v, Bool):
        return v.value
    if isinstance(v, str):
        return v
    if isinstance(v, ModelValue):
        return {"#unserializable": v.name}
    if isinstance(v, tuple):
        items = [_to_itf(x, tuples, d) for x in v]
        return items if tuples == "list" else {"#tup": items}
    if isinstance(v, frozenset):
        return {"#set": [_to_itf(x, tuples, d) for x in sorted(v, key=sort_key)]}
    if isinstance(v, Record) and not any(k.startswith("#") for k in v):
        return {k: _to_itf(x, tuples, d) for k, x in v.fields}
    if isinstance(v, Record | Fcn):
        pairs: Iterable[tuple[Value, Value]] = v.fields if isinstance(v, Record) else v.pairs
        return {"#map": [[_to_itf(k, tuples, d), _to_itf(x, tuples, d)] for k, x in pairs]}
    raise InputError(
        f"{type(v).__name__} {v!r} is not a TLA+ value"
        + (" (use TRUE/FALSE)" if isinstance(v, bool) else ""),
        code="RL-VALUE-TYPE",
    )


def value_from_itf(obj: Json, *, path: str = "") -> Value:
    """The value an ITF JSON element encodes; :class:`InputError` names ``path``."""
    return _from_itf(obj, path, 0)


def _from_itf(obj: Json, path: str, depth: int) -> Value:
    if depth > _MAX_DEPTH:
        raise _bad(path, f"values nested deeper than {_MAX_DEPTH} levels")
    d = depth + 1
    if isinstance(obj, bool):
        return TRUE if obj else FALSE
    if isinstance(obj, int):
        return obj
    if isinstance(obj, str):
        return obj
    if isinstance(obj, list):
        return tuple(_from_itf(x, _child(path, i), d) for i, x in enumerate(obj))
    if isinstance(obj, dict):
        special = [k for k in obj if isinstance(k, str) and k.startswith("#")]
        if not special:
            if not obj:
                return ()
            return Record((k, _from_itf(x, _child(path, k), d)) for k, x in obj.items())
        if len(obj) != 1:
            raise _bad(
                path,
                f"expected an object with only the key {special[0]!r}, "
                f"found keys {', '.join(sorted(map(str, obj)))}",
            )
        key = special[0]
        body = obj[key]
        sub = _child(path, key)
        if key == "#bigint":
            if not isinstance(body, str) or not re.fullmatch(r"-?[0-9]{1,4000}", body):
                raise _bad(sub, f"expected a string of decimal digits, found {_show(body)}")
            return int(body)
        if key == "#unserializable":
            if not isinstance(body, str) or not body:
                raise _bad(sub, f"expected a model value's name, found {_show(body)}")
            return ModelValue(body)
        if key in ("#tup", "#set", "#map") and not isinstance(body, list):
            raise _bad(sub, f"expected an array, found {_kind(body)}")
        if key == "#tup":
            return tuple(_from_itf(x, _child(sub, i), d) for i, x in enumerate(body))
        if key == "#set":
            return frozenset(_from_itf(x, _child(sub, i), d) for i, x in enumerate(body))
        if key == "#map":
            pairs: list[tuple[Value, Value]] = []
            seen: set[Value] = set()
            for i, pair in enumerate(body):
                where = _child(sub, i)
                if not isinstance(pair, list) or len(pair) != 2:
                    raise _bad(where, f"expected a [key, value] pair, found {_show(pair)}")
                k = _from_itf(pair[0], _child(where, 0), d)
                if k in seen:
                    raise _bad(where, "the same key appears twice in the map")
                seen.add(k)
                pairs.append((k, _from_itf(pair[1], _child(where, 1), d)))
            return fcn(pairs)
        raise _bad(
            path,
            f"expected one of #bigint, #tup, #set, #map, #unserializable, found {key}",
        )
    raise _bad(path, f"expected an ITF value, found {_kind(obj)}")


def _show(obj: Json) -> str:
    text = json.dumps(obj) if _jsonable(obj) else repr(obj)
    return text if len(text) <= 40 else text[:37] + "..."


def _jsonable(obj: Json) -> bool:
    try:
        json.dumps(obj)
    except (TypeError, ValueError):
        return False
    return True


# --------------------------------------------------------------------------- traces


@dataclass(frozen=True)
class ItfState:
    """One ITF state: variable values plus its ``#meta`` (e.g. ``action``, ``params``)."""

    values: State
    meta: frozendict[str, FrozenJson] = field(default_factory=frozendict)

    @staticmethod
    def of(values: Mapping[str, Value], meta: Mapping[str, Json] | None = None) -> ItfState:
        """Build from plain mappings (meta is frozen)."""
        return ItfState(State(values), _freeze_object(meta or {}, "#meta"))


@dataclass(frozen=True)
class ItfTrace:
    """An ITF trace: variable names, states, optional loop index, parameters, meta."""

    vars: tuple[str, ...]
    states: tuple[ItfState, ...]
    meta: frozendict[str, FrozenJson] = field(default_factory=frozendict)
    params: tuple[str, ...] = ()
    loop: int | None = None


def json_text(doc: Mapping[str, Any]) -> str:
    """``doc`` as indented JSON text ending in a newline, as the kit writes its ITF
    and schedule files.  orjson (a core dependency): the json module's encoder is
    pure Python once it indents, and was half of `conform traces`' time (22 of 51 s on
    MCToken2's 819 traces).  A document orjson cannot write (an integer beyond 64
    bits) is written by the json module."""
    try:
        return orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode("utf-8") + "\n"
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return json.dumps(doc, indent=2) + "\n"


def trace_to_json(
    states: Sequence[ItfState | Mapping[str, Value]],
    meta: Mapping[str, Json] | None = None,
    loop: int | None = None,
    *,
    vars: Sequence[str] | None = None,
    params: Sequence[str] = (),
    tuples: TupleStyle = "list",
) -> dict[str, Json]:
    """The ITF JSON object of a trace (``json.dumps`` it to write a ``.itf.json``).

    ``states`` are :class:`ItfState` (values plus per-state ``#meta``) or plain
    mappings; ``vars`` defaults to the first state's variables.  An :class:`ItfTrace`
    is written with ``trace_to_json(t.states, t.meta, t.loop, vars=t.vars,
    params=t.params)``; see :func:`itf_trace_to_json`.
    """
    items = [s if isinstance(s, ItfState) else ItfState(State(s)) for s in states]
    names = list(vars) if vars is not None else (list(items[0].values) if items else [])
    if loop is not None and not 0 <= loop < max(len(items), 1):
        raise InputError(
            f"loop index {loop} is outside the trace of {len(items)} states",
            code="RL-INPUT-ITF",
        )
    out_states: list[dict[str, Json]] = []
    for i, st in enumerate(items):
        if set(st.values) != set(names):
            raise InputError(
                f"states[{i}] has variables {sorted(st.values)}, expected {sorted(names)}",
                code="RL-INPUT-ITF",
            )
        obj: dict[str, Json] = {"#meta": {"index": i, **thaw_json(st.meta)}}
        for name in names:
            obj[name] = value_to_itf(st.values[name], tuples=tuples)
        out_states.append(obj)
    doc: dict[str, Json] = {
        "#meta": {"format": "ITF", "format-description": _FORMAT_URL, **dict(meta or {})},
        "vars": names,
    }
    if params:
        doc["params"] = list(params)
    if loop is not None:
        doc["loop"] = loop
    doc["states"] = out_states
    return doc


def itf_trace_to_json(trace: ItfTrace, *, tuples: TupleStyle = "list") -> dict[str, Json]:
    """The ITF JSON object of an :class:`ItfTrace` (inverse of :func:`trace_from_json`)."""
    return trace_to_json(
        trace.states,
        thaw_json(trace.meta),
        trace.loop,
        vars=trace.vars,
        params=trace.params,
        tuples=tuples,
    )


def _string_list(doc: Mapping[str, Json], key: str) -> tuple[str, ...]:
    obj = doc.get(key, [])
    if not isinstance(obj, list) or not all(isinstance(x, str) for x in obj):
        raise _bad(key, f"expected an array of names, found {_show(obj)}")
    return tuple(obj)


def trace_from_json(obj: Json) -> ItfTrace:
    """Read an ITF trace (a parsed JSON document).

    The ``index`` that :func:`trace_to_json` writes into each state's ``#meta`` is
    dropped, so reading what was written gives the trace back.
    """
    if not isinstance(obj, dict):
        raise _bad("", f"expected an ITF trace object, found {_kind(obj)}")
    meta = obj.get("#meta", {})
    if not isinstance(meta, dict):
        raise _bad("#meta", f"expected an object, found {_kind(meta)}")
    meta = {k: v for k, v in meta.items() if k not in ("format", "format-description")}
    if "vars" not in obj:
        raise _bad("", "expected the key 'vars'")
    names = _string_list(obj, "vars")
    params = _string_list(obj, "params")
    raw_states = obj.get("states")
    if not isinstance(raw_states, list):
        raise _bad("states", f"expected an array of states, found {_kind(raw_states)}")
    loop = obj.get("loop")
    if loop is not None and (
        isinstance(loop, bool) or not isinstance(loop, int) or not 0 <= loop < len(raw_states)
    ):
        raise _bad("loop", f"expected null or a state index, found {_show(loop)}")
    states: list[ItfState] = []
    for i, raw in enumerate(raw_states):
        where = f"states[{i}]"
        if not isinstance(raw, dict):
            raise _bad(where, f"expected a state object, found {_kind(raw)}")
        smeta = raw.get("#meta", {})
        if not isinstance(smeta, dict):
            raise _bad(_child(where, "#meta"), f"expected an object, found {_kind(smeta)}")
        smeta = {k: v for k, v in smeta.items() if k != "index"}
        keys = [k for k in raw if k != "#meta"]
        missing = [n for n in names if n not in raw]
        if missing:
            raise _bad(where, f"expected variable {missing[0]}, found none")
        extra = [k for k in keys if k not in names]
        if extra:
            raise _bad(_child(where, extra[0]), "is not one of the trace's vars")
        values = State((n, value_from_itf(raw[n], path=_child(where, n))) for n in names)
        states.append(ItfState(values, _freeze_object(smeta, _child(where, "#meta"))))
    return ItfTrace(names, tuple(states), _freeze_object(meta, "#meta"), params, loop)


def read_itf(path: Path) -> ItfTrace:
    """Read an ITF trace file (``*.itf.json``): the one reader of ITF files.

    Every problem is an :class:`InputError` (code ``RL-INPUT-ITF``) naming the file
    and what is wrong: it cannot be read, is not a regular file or is larger than
    :data:`~redletter.untrusted.MAX_TRACE_BYTES` (:func:`~redletter.untrusted.read_input`),
    it is not UTF-8 JSON (with the line and column), or it is not an ITF trace (with
    the JSON path of the bad element, as :func:`trace_from_json` names it).
    """
    where = str(path)
    data = read_input(path, code="RL-INPUT-ITF", limit=MAX_TRACE_BYTES, what="the trace")
    doc = loads(data, path=where, code="RL-INPUT-ITF")
    try:
        return trace_from_json(doc)
    except InputError as exc:
        raise InputError(exc.message, code=exc.code, path=where) from None
