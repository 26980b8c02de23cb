"""TLA+ values as TLC 2.15 prints them: a canonical Python form, a parser and a printer.

Representation (immutable, hashable, canonical: equal TLA+ values are equal Python
values and nothing else is):

============================  ===========================================
TLA+                          Python
============================  ===========================================
``42``, ``-1``                ``int``
``TRUE``, ``FALSE``           :data:`TRUE`, :data:`FALSE` (:class:`Bool`, never a
                              Python ``bool``: ``True == 1`` in Python, so a set
                              ``{TRUE, 1}`` would collapse)
``"abc"``                     ``str``
``a`` (model value)           :class:`ModelValue`
``<<a, b>>``                  ``tuple`` (every function with domain ``1..n``,
                              including the empty function/record ``<<>>``)
``{a, b}``, ``1..3``          ``frozenset``
``[a |-> 1]``                 :class:`Record` (every non-empty function whose domain
                              is a set of strings)
``(k :> v @@ ...)``           :class:`Fcn` (every other non-empty function)
============================  ===========================================

TLA+ semantics decide the shape, not the spelling: ``(1 :> "a" @@ 2 :> "b")`` parses
to ``("a", "b")``; ``("x" :> 1)`` and ``[x |-> 1]`` both parse to ``Record``; ``<< >>``
(TLC's spelling of an empty function) is ``()``.  Use :func:`fcn` to build a function
from pairs; it picks the canonical shape.

Printing follows TLC's ``Value.toString``: sequences as ``<<...>>``, string-domain
functions as records when every field is what TLC's ``FcnRcdValue.isName`` accepts
(letters, digits, ``_``, at least one letter, not ``WF_``/``SF_``), otherwise as
``(k :> v @@ ...)``; strings escape ``\\ " \\n \\t \\r \\f``.

Order.  TLC sorts sets, record fields and function domains with ``Value.compareTo``:
integers numerically, ``FALSE`` before ``TRUE``, tuples/sets/functions by size then
element by element -- but strings, record field names and model values by the order in
which TLC *interned* them (``UniqueString.tok``: first occurrence in the parsed modules
and the model), which cannot be recovered from a value alone.  :func:`sort_key` is
therefore TLC's order except that strings, field names and model values sort by code
point.  Printed text can differ from TLC's in that order only (and ``1..3``, which TLC
keeps as an interval, prints as ``{1, 2, 3}``); compare parsed values, not strings.

The parser is hand-written (a regular-expression tokenizer and recursive descent with
an explicit depth limit): TLC's printed format is not a grammar that any maintained
parsing library reads -- it mixes TLA+ expression syntax with TLC-only spellings such as
``<< >>`` and line-wrapped, indented pretty-printing -- and a 30-line descent gives
exact error positions with no dependency.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Final, TypeAlias, Union

from redletter.errors import InputError

__all__ = [
    "FALSE",
    "MAX_DEPTH",
    "TRUE",
    "Bool",
    "Fcn",
    "ModelValue",
    "Record",
    "State",
    "Value",
    "apply_fn",
    "check_value",
    "fcn",
    "is_tlc_name",
    "parse_state",
    "parse_value",
    "print_state",
    "print_value",
    "record",
    "sort_key",
]


@dataclass(frozen=True, slots=True)
class Bool:
    """A TLA+ boolean.  Use :data:`TRUE` and :data:`FALSE`; never equal to an ``int``."""

    value: bool

    def __bool__(self) -> bool:
        return self.value

    def __repr__(self) -> str:
        return "TRUE" if self.value else "FALSE"


TRUE: Final = Bool(True)
FALSE: Final = Bool(False)


@dataclass(frozen=True, slots=True)
class ModelValue:
    """A TLC model value (a bare identifier such as ``p1`` in a state)."""

    name: str

    def __repr__(self) -> str:
        return f"ModelValue({self.name!r})"


Value: TypeAlias = Union[
    int, Bool, str, ModelValue, tuple["Value", ...], frozenset["Value"], "Record", "Fcn"
]
"""Any TLA+ value in canonical form."""

SortKey: TypeAlias = tuple[object, ...]


class Record(Mapping[str, Value]):
    """A non-empty TLA+ function whose domain is a set of strings, fields sorted by name.

    Immutable and hashable; equal only to another :class:`Record` with the same fields.
    """

    __slots__ = ("_fields", "_hash", "_index")

    _fields: tuple[tuple[str, Value], ...]
    _index: dict[str, Value]
    _hash: int

    def __init__(self, fields: Iterable[tuple[str, Value]]) -> None:
        index: dict[str, Value] = {}
        for name, value in fields:
            if not isinstance(name, str):
                raise InputError(
                    f"record field name {name!r} is not a string", code="RL-VALUE-TYPE"
                )
            if name in index:
                raise InputError(f"record field {name!r} given twice", code="RL-VALUE-DUP")
            index[name] = value
        if not index:
            raise InputError(
                "a record needs at least one field (the empty record is <<>>)",
                code="RL-VALUE-EMPTY",
            )
        object.__setattr__(self, "_fields", tuple(sorted(index.items())))
        object.__setattr__(self, "_index", index)
        object.__setattr__(self, "_hash", hash((Record, self._fields)))

    @property
    def fields(self) -> tuple[tuple[str, Value], ...]:
        """The (name, value) pairs, sorted by name."""
        return self._fields

    def __getitem__(self, key: str) -> Value:
        return self._index[key]

    def __iter__(self) -> Iterator[str]:
        return (name for name, _ in self._fields)

    def __len__(self) -> int:
        return len(self._fields)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Record) and self._fields == other._fields

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return self._hash

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Record is immutable (cannot set {name!r})")

    def __repr__(self) -> str:
        return "Record(" + ", ".join(f"{k}={v!r}" for k, v in self._fields) + ")"


class Fcn(Mapping[Value, Value]):
    """A non-empty TLA+ function that is neither a sequence nor a record.

    Pairs are kept in :func:`sort_key` order of their keys.  Build with :func:`fcn`,
    which returns a tuple or a :class:`Record` when the domain calls for one.
    """

    __slots__ = ("_hash", "_index", "_pairs")

    _pairs: tuple[tuple[Value, Value], ...]
    _index: dict[Value, Value]
    _hash: int

    def __init__(self, pairs: Iterable[tuple[Value, Value]]) -> None:
        index: dict[Value, Value] = {}
        for key, value in pairs:
            if key in index:
                raise InputError(
                    f"function key {print_value(key)} given twice", code="RL-VALUE-DUP"
                )
            index[key] = value
        shape = _function_shape(index)
        if shape != "fcn":
            raise InputError(
                f"a function with this domain is a {shape}, not a Fcn; build it with fcn()",
                code="RL-VALUE-NONCANONICAL",
            )
        object.__setattr__(
            self, "_pairs", tuple(sorted(index.items(), key=lambda kv: sort_key(kv[0])))
        )
        object.__setattr__(self, "_index", index)
        object.__setattr__(self, "_hash", hash((Fcn, frozenset(self._pairs))))

    @property
    def pairs(self) -> tuple[tuple[Value, Value], ...]:
        """The (key, value) pairs, keys in :func:`sort_key` order."""
        return self._pairs

    def __getitem__(self, key: Value) -> Value:
        return self._index[key]

    def __iter__(self) -> Iterator[Value]:
        return (key for key, _ in self._pairs)

    def __len__(self) -> int:
        return len(self._pairs)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Fcn) and self._pairs == other._pairs

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return self._hash

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Fcn is immutable (cannot set {name!r})")

    def __repr__(self) -> str:
        return "Fcn(" + ", ".join(f"{k!r}: {v!r}" for k, v in self._pairs) + ")"


def _function_shape(index: Mapping[Value, Value]) -> str:
    """'sequence', 'record' or 'fcn': the canonical shape of a function."""
    n = len(index)
    if n == 0:
        return "sequence"
    if all(type(k) is int for k in index) and all(k in index for k in range(1, n + 1)):
        return "sequence"
    if all(isinstance(k, str) for k in index):
        return "record"
    return "fcn"


def fcn(pairs: Iterable[tuple[Value, Value]]) -> Value:
    """The TLA+ function with these (key, value) pairs, in canonical shape.

    Domain ``1..n`` (or empty) gives a tuple, a set of strings a :class:`Record`,
    anything else a :class:`Fcn`.  A key given twice raises :class:`InputError`.
    """
    index: dict[Value, Value] = {}
    for key, value in pairs:
        if key in index:
            raise InputError(f"function key {print_value(key)} given twice", code="RL-VALUE-DUP")
        index[key] = value
    shape = _function_shape(index)
    if shape == "sequence":
        return tuple(index[i] for i in range(1, len(index) + 1))
    if shape == "record":
        return Record((str(k), v) for k, v in index.items())
    return Fcn(index.items())


def record(**fields: Value) -> Value:
    """``[f1 |-> v1, ...]``; with no fields, the empty function ``()``."""
    return Record(fields.items()) if fields else ()


def apply_fn(f: Value, x: Value) -> Value:
    """``f[x]`` for a TLA+ function value in canonical shape (KeyError when outside)."""
    if isinstance(f, tuple):
        if type(x) is int and 1 <= x <= len(f):
            return f[x - 1]
        raise KeyError(x)
    if isinstance(f, Record):
        if isinstance(x, str):
            return f[x]
        raise KeyError(x)
    if isinstance(f, Fcn):
        return f[x]
    raise KeyError(x)


# --------------------------------------------------------------------------- order

_RANK_MODEL, _RANK_BOOL, _RANK_INT, _RANK_STR, _RANK_FCN, _RANK_SET = range(6)


def sort_key(v: Value) -> SortKey:
    """A total order on values: TLC's, except strings/names by code point.

    Model values first, then booleans (``FALSE`` < ``TRUE``), integers, strings,
    functions (tuples, records and :class:`Fcn` alike: by size, then domain, then
    values) and sets (by size, then elements in order).
    """
    if type(v) is int:
        return (_RANK_INT, v)
    if isinstance(v, str):
        return (_RANK_STR, v)
    if isinstance(v, Bool):
        return (_RANK_BOOL, v.value)
    if isinstance(v, ModelValue):
        return (_RANK_MODEL, v.name)
    if isinstance(v, tuple):
        return (_RANK_FCN, len(v), (), tuple(sort_key(x) for x in v))
    if isinstance(v, frozenset):
        return (_RANK_SET, len(v), tuple(sorted(sort_key(x) for x in v)))
    if isinstance(v, Record):
        return (
            _RANK_FCN,
            len(v),
            tuple((_RANK_STR, k) for k, _ in v.fields),
            tuple(sort_key(x) for _, x in v.fields),
        )
    if isinstance(v, Fcn):
        return (
            _RANK_FCN,
            len(v),
            tuple(sort_key(k) for k, _ in v.pairs),
            tuple(sort_key(x) for _, x in v.pairs),
        )
    raise _not_a_value(v)


def _not_a_value(v: object) -> InputError:
    hint = " (use TRUE/FALSE)" if isinstance(v, bool) else ""
    return InputError(f"{type(v).__name__} {v!r} is not a TLA+ value{hint}", code="RL-VALUE-TYPE")


def check_value(v: object) -> Value:
    """Return ``v`` if it is a canonical :data:`Value`, else raise :class:`InputError`."""
    stack: list[object] = [v]
    while stack:
        x = stack.pop()
        if type(x) is int or isinstance(x, (str, Bool, ModelValue)):
            continue
        if isinstance(x, tuple | frozenset):
            stack.extend(x)
        elif isinstance(x, Record):
            stack.extend(x.values())
        elif isinstance(x, Fcn):
            stack.extend(x.keys())
            stack.extend(x.values())
        else:
            raise _not_a_value(x)
    return v  # type: ignore[return-value]


# --------------------------------------------------------------------------- printer

_ESCAPES: Final = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r", "\f": "\\f"}
_ESCAPE_RE: Final = re.compile(r'["\\\n\t\r\f]')


def is_tlc_name(s: str) -> bool:
    """TLC's ``FcnRcdValue.isName``: may this string print as a record field?"""
    has_letter = False
    for ch in s:
        if ch == "_":
            continue
        if not ch.isalnum():
            return False
        has_letter = has_letter or ch.isalpha()
    return has_letter and not (len(s) >= 4 and (s.startswith("WF_") or s.startswith("SF_")))


def _print_str(s: str) -> str:
    return '"' + _ESCAPE_RE.sub(lambda m: _ESCAPES[m.group()], s) + '"'


def print_value(v: Value) -> str:
    """TLC's one-line spelling of ``v`` (see the module docstring on order)."""
    out: list[str] = []
    _print_into(v, out)
    return "".join(out)


def _print_into(v: Value, out: list[str]) -> None:
    if type(v) is int:
        out.append(str(v))
    elif isinstance(v, str):
        out.append(_print_str(v))
    elif isinstance(v, Bool):
        out.append("TRUE" if v.value else "FALSE")
    elif isinstance(v, ModelValue):
        out.append(v.name)
    elif isinstance(v, tuple):
        out.append("<<")
        for i, x in enumerate(v):
            if i:
                out.append(", ")
            _print_into(x, out)
        out.append(">>")
    elif isinstance(v, frozenset):
        out.append("{")
        for i, x in enumerate(sorted(v, key=sort_key)):
            if i:
                out.append(", ")
            _print_into(x, out)
        out.append("}")
    elif isinstance(v, Record) and all(is_tlc_name(k) for k in v):
        out.append("[")
        for i, (k, x) in enumerate(v.fields):
            out.append(", " + k + " |-> " if i else k + " |-> ")
            _print_into(x, out)
        out.append("]")
    elif isinstance(v, Record | Fcn):
        pairs: Iterable[tuple[Value, Value]] = v.fields if isinstance(v, Record) else v.pairs
        out.append("(")
        for i, (key, x) in enumerate(pairs):
            if i:
                out.append(" @@ ")
            _print_into(key, out)
            out.append(" :> ")
            _print_into(x, out)
        out.append(")")
    else:
        raise _not_a_value(v)


# --------------------------------------------------------------------------- parser

MAX_DEPTH: Final = 200
"""Deepest nesting the parser accepts (TLC states rarely nest past 10)."""

_MAX_INTERVAL: Final = 1_000_000
_MAX_INT_DIGITS: Final = 4000

_TOKEN_RE: Final = re.compile(
    r"""
    (?P<ws>\s+)
    |(?P<str>"(?:[^"\\]|\\.)*")
    |(?P<name>[^\W\d]\w*|\d+[^\W\d]\w*)
    |(?P<int>-?\d+)
    |(?P<punct><<|>>|\|->|:>|@@|\.\.|/\\|[{}\[\](),=])
    |(?P<bad>"|.)
    """,
    re.VERBOSE | re.DOTALL,
)
_UNESCAPE_RE: Final = re.compile(r"\\(.)", re.DOTALL)
_UNESCAPES: Final = {'"': '"', "\\": "\\", "n": "\n", "t": "\t", "r": "\r", "f": "\f"}

_Token: TypeAlias = tuple[str, str, int]  # (kind, text, offset); kind "end" at the end


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    for m in _TOKEN_RE.finditer(text):
        kind = m.lastgroup
        assert kind is not None
        if kind != "ws":
            tokens.append((kind, m.group(), m.start()))
    tokens.append(("end", "", len(text)))
    return tokens


def _describe(tok: _Token) -> str:
    kind, text, _ = tok
    if kind == "end":
        return "end of input"
    if kind == "bad" and text == '"':
        return "an unterminated string"
    if len(text) > 20:
        text = text[:17] + "..."
    return f"'{text}'"


class _Parser:
    __slots__ = ("depth", "line", "path", "pos", "text", "tokens")

    def __init__(self, text: str, path: str | None, line: int | None) -> None:
        self.text = text
        self.path = path
        self.line = line
        self.tokens = _tokenize(text)
        self.pos = 0
        self.depth = 0

    # errors ------------------------------------------------------------------
    def error(self, message: str, tok: _Token, *, found: bool = False) -> InputError:
        offset = tok[2]
        row = self.text.count("\n", 0, offset)
        col = offset - (self.text.rfind("\n", 0, offset) + 1) + 1
        if self.line is not None:
            where = f"at column {col}"
            line: int | None = self.line + row
        else:
            where = f"at line {row + 1}, column {col}" if "\n" in self.text else f"at column {col}"
            line = None
        tail = f", found {_describe(tok)}" if found else ""
        return InputError(
            f"{message} {where}{tail}",
            path=self.path,
            line=line,
            code="RL-INPUT-VALUE",
        )

    def expected(self, what: str) -> InputError:
        return self.error(f"expected {what}", self.tokens[self.pos], found=True)

    # helpers -----------------------------------------------------------------
    def peek(self) -> str:
        return self.tokens[self.pos][1] if self.tokens[self.pos][0] == "punct" else ""

    def expect(self, text: str) -> None:
        tok = self.tokens[self.pos]
        if tok[0] != "punct" or tok[1] != text:
            raise self.expected(f"'{text}'")
        self.pos += 1

    def at_end(self) -> bool:
        return self.tokens[self.pos][0] == "end"

    # grammar -----------------------------------------------------------------
    def value(self) -> Value:
        tok = self.tokens[self.pos]
        kind, text, _ = tok
        if kind == "int":
            self.pos += 1
            low = self.int_of(tok)
            if self.peek() == "..":
                self.pos += 1
                high_tok = self.tokens[self.pos]
                if high_tok[0] != "int":
                    raise self.expected("an integer after '..'")
                self.pos += 1
                high = self.int_of(high_tok)
                if high - low >= _MAX_INTERVAL:
                    raise self.error(f"interval has more than {_MAX_INTERVAL} elements", high_tok)
                return frozenset(range(low, high + 1))
            return low
        if kind == "str":
            self.pos += 1
            return self.string_of(tok)
        if kind == "name":
            self.pos += 1
            if text == "TRUE":
                return TRUE
            if text == "FALSE":
                return FALSE
            return ModelValue(text)
        if kind == "punct" and text in ("<<", "{", "[", "("):
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise self.error(f"values nested deeper than {MAX_DEPTH} levels", tok)
            self.pos += 1
            result: Value
            if text == "<<":
                result = tuple(self.items(">>"))
            elif text == "{":
                result = frozenset(self.items("}"))
            elif text == "[":
                result = self.record_body()
            else:
                result = self.function_body()
            self.depth -= 1
            return result
        raise self.expected("a value")

    def items(self, close: str) -> list[Value]:
        out: list[Value] = []
        if self.peek() == close:
            self.pos += 1
            return out
        while True:
            out.append(self.value())
            if self.peek() == ",":
                self.pos += 1
                continue
            if self.peek() == close:
                self.pos += 1
                return out
            raise self.expected(f"',' or '{close}'")

    def record_body(self) -> Value:
        fields: dict[str, Value] = {}
        while True:
            tok = self.tokens[self.pos]
            if tok[0] != "name":
                raise self.expected("a field name")
            if tok[1] in fields:
                raise self.error(f"record field {tok[1]} given twice", tok)
            self.pos += 1
            self.expect("|->")
            fields[tok[1]] = self.value()
            if self.peek() == ",":
                self.pos += 1
                continue
            if self.peek() == "]":
                self.pos += 1
                return Record(fields.items())
            raise self.expected("',' or ']'")

    def function_body(self) -> Value:
        index: dict[Value, Value] = {}
        while True:
            tok = self.tokens[self.pos]
            key = self.value()
            if key in index:
                raise self.error(f"function key {print_value(key)} given twice", tok)
            self.expect(":>")
            index[key] = self.value()
            if self.peek() == "@@":
                self.pos += 1
                continue
            if self.peek() == ")":
                self.pos += 1
                return fcn(index.items())
            raise self.expected("'@@' or ')'")

    def int_of(self, tok: _Token) -> int:
        digits = tok[1].lstrip("-")
        if len(digits) > _MAX_INT_DIGITS:
            raise self.error(f"integer longer than {_MAX_INT_DIGITS} digits", tok)
        return int(tok[1])

    def string_of(self, tok: _Token) -> str:
        body = tok[1][1:-1]
        if "\\" not in body:
            return body

        def unescape(m: re.Match[str]) -> str:
            ch = m.group(1)
            if ch not in _UNESCAPES:
                ch = ch if ch.isprintable() else f"U+{ord(ch):04X}"
                bad = (tok[0], tok[1], tok[2] + 1 + m.start())
                raise self.error(
                    f"unknown escape '\\{ch}' in a string (expected one of"
                    ' \\" \\\\ \\n \\t \\r \\f)',
                    bad,
                )
            return _UNESCAPES[ch]

        return _UNESCAPE_RE.sub(unescape, body)


def parse_value(text: str, *, path: str | None = None, line: int | None = None) -> Value:
    """Parse one TLA+ value as TLC prints it (any whitespace and line breaks allowed).

    ``path`` and ``line`` (the line the text starts on) go into error messages.
    Raises :class:`InputError` (code ``RL-INPUT-VALUE``) on anything else.
    """
    p = _Parser(text, path, line)
    v = p.value()
    if not p.at_end():
        raise p.expected("end of input")
    return v


# --------------------------------------------------------------------------- states


class State(Mapping[str, Value]):
    """A TLC state: variable name to value, immutable and hashable.

    Iteration follows the order the variables were given in (TLC's order when
    parsed); equality and hash ignore that order.
    """

    __slots__ = ("_hash", "_index")

    _index: dict[str, Value]
    _hash: int

    def __init__(self, items: Iterable[tuple[str, Value]] | Mapping[str, Value] = ()) -> None:
        pairs = items.items() if isinstance(items, Mapping) else items
        index: dict[str, Value] = {}
        for name, value in pairs:
            if name in index:
                raise InputError(f"variable {name} given twice", code="RL-VALUE-DUP")
            index[name] = value
        object.__setattr__(self, "_index", index)
        object.__setattr__(self, "_hash", hash(frozenset(index.items())))

    def __getitem__(self, key: str) -> Value:
        return self._index[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._index)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, State) and self._index == other._index

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return self._hash

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"State is immutable (cannot set {name!r})")

    def __repr__(self) -> str:
        return "State(" + ", ".join(f"{k}={v!r}" for k, v in self._index.items()) + ")"


def parse_state(text: str, *, path: str | None = None, line: int | None = None) -> State:
    r"""Parse a state as TLC prints it.

    Accepts the conjunction form ``/\ x = 1`` then ``/\ y = <<>>`` (one per line,
    values possibly wrapped over several lines, as in traces and DOT labels once
    ``\n`` is unescaped), TLC's form for a one-variable spec ``x = 1``, and the
    empty string (a spec without variables).
    """
    p = _Parser(text, path, line)
    items: list[tuple[str, Value]] = []
    seen: set[str] = set()
    conj = p.peek() == "/\\"
    if not conj and p.at_end():
        return State()
    while True:
        if conj:
            p.expect("/\\")
        tok = p.tokens[p.pos]
        if tok[0] != "name":
            raise p.expected("a variable name")
        if tok[1] in seen:
            raise p.error(f"variable {tok[1]} given twice", tok)
        seen.add(tok[1])
        p.pos += 1
        p.expect("=")
        items.append((tok[1], p.value()))
        if p.at_end():
            return State(items)
        if not conj:
            raise p.expected("end of input")
        if p.peek() != "/\\":
            raise p.expected("'/\\' or end of input")


def print_state(state: Mapping[str, Value]) -> str:
    r"""TLC's spelling of a state: ``/\ x = v`` lines (``x = v`` for one variable)."""
    if len(state) == 1:
        ((name, value),) = state.items()
        return f"{name} = {print_value(value)}"
    return "\n".join(f"/\\ {name} = {print_value(value)}" for name, value in state.items())
