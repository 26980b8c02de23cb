"""Go source as its tokens: what two packages have in common once comments and
layout are gone.

``cos418 grade`` names, beside each submission, the others whose Go sources are
the same program text: identical after removing comments and whitespace.  Byte
comparison would miss a copy run through ``gofmt`` or given new comments;
removing "whitespace" by regular expression would mangle string literals (a
``"//"`` in a string is not a comment, ``"a  b"`` is not ``"a b"``).  So the
sources are split into tokens the way Go's own scanner (``go/scanner``) splits
them, by the lexical rules of the Go specification:

- comments (``//`` to the end of the line, ``/* ... */``) are dropped;
- string literals (``"..."`` with escapes, raw ```...``` over several lines, their
  carriage returns dropped as Go drops them) and rune literals (``'...'``) are one
  token each, kept byte for byte;
- identifiers, keywords, numbers (with ``_`` separators, hexadecimal, octal,
  binary, exponents, imaginary ``i``) and operators (longest match);
- a newline ends a statement where Go's rule inserts a semicolon (after an
  identifier, a literal, ``break`` ``continue`` ``fallthrough`` ``return``,
  ``++`` ``--`` ``)`` ``]`` ``}``); that semicolon is a token, the same as one
  written out: ``a; b`` and ``a`` newline ``b`` are the same program, ``a b``
  on one line is not; one before ``)`` or ``}``, where Go lets it be left out,
  is dropped (``{ return x }`` on one line or on three is the same).

Written by hand: Python has no Go tokenizer, and running ``go/scanner`` would
need a Go build on the machine that writes the gradebook (the driver of a Spark
grade has none of the executors' builds).  A source that does not scan (an
unterminated string, a stray byte) still gets tokens: the rest of the line as
one token, so the fingerprint stays defined and equal for equal text.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Final

__all__ = ["package_fingerprint", "tokens"]

#: Operators and punctuation of Go, as the specification lists them.
_OPERATOR_TABLE: Final = (
    "+ - * / % & | ^ << >> &^ += -= *= /= %= &= |= ^= <<= >>= &^= && || <- ++ --"
    " == < > = ! ~ != <= >= := ... ( ) [ ] { } , ; . :"
)
#: The same, longest first (the scanner takes the longest).
_OPERATORS: Final = tuple(sorted(_OPERATOR_TABLE.split(), key=len, reverse=True))
#: Keywords after which a newline ends the statement.
_ENDING_WORDS: Final = frozenset({"break", "continue", "fallthrough", "return"})
_ENDING_OPS: Final = frozenset({"++", "--", ")", "]", "}"})


def _is_letter(ch: str) -> bool:
    return ch == "_" or ch.isalpha()


def _ends_statement(tok: str) -> bool:
    """Whether Go inserts a semicolon after ``tok`` at the end of a line."""
    if tok in _ENDING_OPS or tok in _ENDING_WORDS:
        return True
    first = tok[0]
    if first in "\"'`" or first.isdigit() or (first == "." and len(tok) > 1):
        return True  # a literal
    return _is_letter(first) and tok not in _KEYWORDS


_KEYWORD_TABLE: Final = (
    "break case chan const continue default defer else fallthrough for func go goto if"
    " import interface map package range return select struct switch type var"
)
_KEYWORDS: Final = frozenset(_KEYWORD_TABLE.split())


def _quoted(text: str, i: int, quote: str) -> int:
    """The end of a ``"..."`` or ``'...'`` literal starting at ``i`` (escapes skipped;
    an unterminated one ends at the end of its line)."""
    j = i + 1
    n = len(text)
    while j < n:
        ch = text[j]
        if ch == "\\":
            j += 2
            continue
        if ch == quote:
            return j + 1
        if ch == "\n":
            return j
        j += 1
    return n


def _number(text: str, i: int) -> int:
    """The end of a number literal starting at ``i`` (a digit, or ``.`` and a digit)."""
    n = len(text)
    hexa = text.startswith(("0x", "0X"), i)
    exponents = "pP" if hexa else "eE"
    j = i + (2 if hexa else 0)
    while j < n:
        ch = text[j]
        if ch in "+-" and text[j - 1] in exponents:
            j += 1
        elif ch.isalnum() or ch in "_.":
            if ch == "." and text.startswith("..", j):
                break  # not part of the number: `1...` never scans, but stays apart
            j += 1
        else:
            break
    return j


def tokens(source: str) -> list[str]:
    """The tokens of a Go source file (module docstring), comments dropped, the
    semicolons Go inserts at line ends included (as ``;``)."""
    text = source.removeprefix("\ufeff")
    out: list[str] = []
    i, n = 0, len(text)

    def newline() -> None:
        if out and out[-1] != ";" and _ends_statement(out[-1]):
            out.append(";")

    while i < n:
        ch = text[i]
        if ch == "\n":
            newline()
            i += 1
        elif ch in " \t\r":
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end  # the newline itself ends the statement
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            stop = n if end < 0 else end + 2
            if "\n" in text[i:stop]:
                newline()  # a comment over several lines acts as a newline
            i = stop
        elif ch == "`":
            end = text.find("`", i + 1)
            stop = n if end < 0 else end + 1
            out.append(text[i:stop].replace("\r", ""))
            i = stop
        elif ch in "\"'":
            stop = _quoted(text, i, ch)
            out.append(text[i:stop])
            i = stop
        elif ch.isdigit() or (ch == "." and i + 1 < n and text[i + 1].isdigit()):
            stop = _number(text, i)
            out.append(text[i:stop])
            i = stop
        elif _is_letter(ch):
            j = i + 1
            while j < n and (_is_letter(text[j]) or text[j].isdigit()):
                j += 1
            out.append(text[i:j])
            i = j
        else:
            op = next((o for o in _OPERATORS if text.startswith(o, i)), None)
            if op is None:  # a byte Go does not scan: the rest of its line, as is
                end = text.find("\n", i)
                stop = n if end < 0 else end
                out.append(text[i:stop].rstrip())
                i = stop
            else:
                if op in ")}" and out and out[-1] == ";":
                    out.pop()  # optional there: `{ return x }` is `{` return x `}` on lines
                out.append(op)
                i += len(op)
    newline()
    return out


def package_fingerprint(files: Mapping[str, bytes] | Iterable[tuple[str, bytes]]) -> str:
    """One digest of a package's Go files' tokens (file names and order aside: a
    copy whose files were renamed has the same one); ``""`` for no file."""
    items = files.items() if isinstance(files, Mapping) else files
    each = sorted(
        hashlib.sha256(
            "\0".join(tokens(data.decode("utf-8", "surrogateescape"))).encode(
                "utf-8", "surrogateescape"
            )
        ).hexdigest()
        for _, data in items
    )
    if not each:
        return ""
    return hashlib.sha256("\n".join(each).encode()).hexdigest()
