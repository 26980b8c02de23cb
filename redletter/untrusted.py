"""Reading JSON that comes from outside the kit: one careful reader.

Traces, event logs, the manifest, COS 418 run documents and the like are
written by other programs (or by hand), so their reader must turn every
problem into an :class:`~redletter.errors.InputError` naming the file and the
line, and must not be made to spend unbounded time or memory:

- bytes that are not UTF-8: the line and column of the first bad byte;
- not JSON: JSON's own message with its line;
- nesting deeper than Python's recursion allows: said so, not a RecursionError;
- an integer of more digits than ``max_digits``: refused with its line before
  ``int()`` converts it (Python refuses 4,300 digits with a bare ValueError, and
  converting is quadratic);
- ``NaN`` and ``Infinity``, which the json module accepts but JSON does not.

Nothing is evaluated: the result is plain JSON values.  On the ground floor: it
imports nothing of the kit but :mod:`redletter.errors`.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

from redletter.errors import InputError

__all__ = ["MAX_DIGITS", "decode_utf8", "loads"]

MAX_DIGITS: Final = 4000  #: the longest integer accepted (digits)


class _Refused(ValueError):
    """A number or constant refused while decoding (becomes a located InputError)."""


def _where(text: str, index: int) -> tuple[int, int]:
    """The line and column (1-based) of ``text[index]``."""
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def decode_utf8(data: bytes, *, path: str | None, code: str) -> str:
    """``data`` as text, or an InputError at the line and column of the first byte
    that is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputError(
            f"expected UTF-8 text, got a byte that is not UTF-8 (0x{data[exc.start]:02x})"
            f" at column {col}",
            code=code,
            path=path,
            line=line,
        ) from None


def loads(
    data: str | bytes,
    *,
    path: str | None,
    code: str,
    max_digits: int = MAX_DIGITS,
    line: int | None = None,
) -> Any:
    """Parse JSON from outside the kit (see the module docstring).  ``line`` is the
    line ``data`` starts on in its file (for one line of an NDJSON file)."""
    text = decode_utf8(data, path=path, code=code) if isinstance(data, bytes) else data
    first = line if line is not None else 1

    def parse_int(digits: str) -> int:
        if len(digits.lstrip("-")) > max_digits:
            raise _Refused(f"an integer of {len(digits.lstrip('-'))} digits")
        return int(digits)

    def parse_constant(name: str) -> Any:
        raise _Refused(f"{name} is not JSON")

    try:
        return json.loads(text, parse_int=parse_int, parse_constant=parse_constant)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"not JSON: {exc.msg} (column {exc.colno})",
            code=code,
            path=path,
            line=first + exc.lineno - 1,
        ) from None
    except _Refused as exc:
        where = re.search(rf"-?[0-9]{{{max_digits + 1},}}|NaN|-?Infinity", text)
        at = _where(text, where.start())[0] if where is not None else 1
        raise InputError(
            f"not JSON the kit accepts: {exc}", code=code, path=path, line=first + at - 1
        ) from None
    except RecursionError:
        raise InputError(
            "not JSON the kit accepts: nested too deeply", code=code, path=path, line=first
        ) from None
