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

- a lone surrogate (``"\\ud800"``: half of a UTF-16 pair, which JSON's escapes can
  spell but no text holds): refused with its line, so it never reaches a terminal or
  a file as an encoding error.

Nothing is evaluated: the result is plain JSON values.

:func:`read_input` is the one way the kit reads a file a user named (a trace, an
event log, a COS 418 file, the manifest), and :func:`check_regular` the check it
makes first, for a file found in a folder the user named: only a regular file is
read (a FIFO would block the kit for ever, a device may never end; a symlink to
the user's own file is fine), and never more than a bound of bytes.  Files found
in a folder someone else wrote (``found=True``: a directory given to
``cos418 judge --batch``) are read without following any link: a symbolic link
is refused, unread, and so is a hard link that may name someone else's file
(:func:`foreign_link`) when the kit runs as root.
:class:`LineReader` reads such a file a line at a time (event logs of any length,
in memory bounded by the longest line), under an :class:`InputBudget` shared by
every file of one run.

Text from outside is also *printed*: a node's name, a payload, a snapshot id.
:func:`show_id`, :func:`show_json` and :func:`show_text` write it so that it can
neither start a line of its own, nor move the cursor, reorder what is shown
(bidirectional controls), hide (zero-width characters) or pass for another name
(look-alike letters): see their docstrings.

On the ground floor: it imports nothing of the kit but :mod:`redletter.errors`.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final, cast

# orjson: a strict JSON parser (Rust), about four times as fast as the json module's C
# scanner.  An event log has millions of lines, and json alone took a third of the
# time `conform validate` may spend on one (issue 28's 50,000 events a second).
import orjson

from redletter.errors import InputError

__all__ = [
    "MAX_DIGITS",
    "MAX_LINE_BYTES",
    "MAX_LOGS_TOTAL",
    "MAX_LOG_BYTES",
    "MAX_SMALL_BYTES",
    "MAX_TRACE_BYTES",
    "FastRefused",
    "InputBudget",
    "LineReader",
    "check_regular",
    "decode_utf8",
    "fast_loads",
    "foreign_link",
    "kind_of",
    "loads",
    "read_input",
    "show_bytes",
    "show_id",
    "show_json",
    "show_text",
]

MAX_DIGITS: Final = 4000  #: the longest integer accepted (digits)

_MiB: Final = 1 << 20

# The most the kit reads of one input file.  Generous bounds, far above what a real
# input holds, that keep a runaway or hostile file from exhausting memory: parsed JSON
# takes several times its size in Python objects, so a bound of 256 MiB already means
# a few GiB of memory.
#: ITF traces (and variants' schedule files): the kit's own are kilobytes to a few
#: megabytes (every state, and the model's source, in every file).
MAX_TRACE_BYTES: Final = 256 * _MiB
#: NDJSON event logs: a few hundred bytes an event, so about a million events.
MAX_LOG_BYTES: Final = 256 * _MiB
#: Event logs read a line at a time (``conform validate``): the most read in one run,
#: all files together.  Memory does not grow with it; time does (about 20 s per 100 MiB on
#: one core: bench/bench_logs.py).
MAX_LOGS_TOTAL: Final = 4 * 1024 * _MiB
#: The longest line :class:`LineReader` accepts (one event of an event log).
MAX_LINE_BYTES: Final = 64 * _MiB
#: COS 418 ``.top`` / ``.events`` / ``.snap`` files and spec/manifest.json: small
#: text files written by hand or by a test harness (kilobytes).
MAX_SMALL_BYTES: Final = 16 * _MiB

_CHUNK: Final = 1 << 20


class _Refused(ValueError):
    """A number or constant refused while decoding (becomes a located InputError)."""


def _where(text: str, index: int) -> tuple[int, int]:
    """The line and column (1-based) of ``text[index]``."""
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def decode_utf8(data: bytes, *, path: str | None, code: str, line: int = 1) -> str:
    """``data`` as text, or an InputError at the line and column of the first byte
    that is not UTF-8 (``line``: the line ``data`` starts on in its file)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        first = line
        line = first + data.count(b"\n", 0, exc.start)
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
    first = line if line is not None else 1
    if isinstance(data, bytes) and max_digits >= 18 and _LONG not in data.translate(_DIGITS):
        # The common case, in orjson.  It reads every text it accepts as json does, but
        # for integers past 64 bits, which it makes floats: a text with 19 digits in a
        # row is read by json below.  What it refuses (not UTF-8, not JSON, NaN, a lone
        # surrogate, nesting past 1024, a number past a double's range) is read again
        # below, which names the problem, or reads it as json does (1e400, deep nesting).
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass
    # Text decoded here from UTF-8 holds no surrogate: strict decoding refuses them.
    if isinstance(data, bytes):
        decoded = True
        try:
            text = data.decode()
        except UnicodeDecodeError:  # said with its line and column
            text = decode_utf8(data, path=path, code=code, line=first)
    else:
        decoded, text = False, data
    if len(text) <= max_digits and "\\u" not in text:
        # The common case, at C speed: no integer can be too long, no escape can
        # spell a surrogate.  Anything the fast scan refuses is parsed again below,
        # for the located error.
        try:
            value, end = _SCAN(text, 0)
        except Exception:  # the slow path below names the problem
            value, end = None, -1
        if (end == len(text) or (end > 0 and text[end:].isspace())) and (
            decoded or not _SURROGATE.search(text)
        ):
            return value

    def parse_int(digits: str) -> int:
        if len(digits.lstrip("-")) > max_digits:
            raise _Refused(f"an integer of {len(digits.lstrip('-'))} digits")
        return int(digits)

    def parse_constant(name: str) -> Any:
        raise _Refused(f"{name} is not JSON")

    try:
        # An integer longer than max_digits needs a text longer than that: only then is
        # every integer checked in Python (the C parser is several times faster).
        if len(text) > max_digits:
            value = json.loads(text, parse_int=parse_int, parse_constant=parse_constant)
        else:
            value = json.loads(text, parse_constant=parse_constant)
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
    if _SURROGATE.search(text) or (
        "\\u" in text and _SURROGATE_ESCAPE.search(text) and _holds_surrogate(value)
    ):
        lone = next((m for m in _SURROGATE_ESCAPE.finditer(text) if _lone_at(text, m)), None)
        at = lone.start() if lone is not None else _SURROGATE.search(text).start()  # type: ignore[union-attr]
        shown = lone.group(0) if lone is not None else f"\\u{ord(text[at]):04x}"
        raise InputError(
            f"not text the kit accepts: a lone surrogate {shown} (half of a UTF-16 pair, which "
            "no Unicode text holds) in a string; write the character itself, or both halves "
            "of its pair",
            code=code,
            path=path,
            line=first + _where(text, at)[0] - 1,
        )
    return value


#: :func:`loads` for a line of a :class:`LineReader` chunk that is :attr:`~LineReader.plain`
#: (no run of 19 digits): orjson itself, which reads such a line as :func:`loads` does
#: whenever it accepts it.  Where it refuses one (:data:`FastRefused`), :func:`loads`
#: reads it again, to name the problem or read it as json does.
fast_loads: Final[Callable[[bytes], Any]] = orjson.loads
FastRefused: Final = orjson.JSONDecodeError


def _refuse_constant(name: str) -> Any:
    raise _Refused(f"{name} is not JSON")


#: The C scanner of the json module, refusing NaN and Infinity (see :func:`loads`).
_SCAN: Final[Callable[[str, int], tuple[Any, int]]] = cast(
    Any, json.JSONDecoder(parse_constant=_refuse_constant)
).scan_once

#: Every ASCII digit made ``0``, every other byte a space (``bytes.translate``), and
#: the run of digits that may be an integer orjson reads differently (see :func:`loads`).
_DIGITS: Final = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_LONG: Final = b"0" * 19

_SURROGATE_ESCAPE: Final = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def _holds_surrogate(value: Any) -> bool:
    """Whether a decoded JSON value holds a lone surrogate anywhere (a key or a
    string); a pair of escapes that makes one character does not."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if _SURROGATE.search(v):
                return True
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return False


def _lone_at(text: str, m: re.Match[str]) -> bool:
    """Whether the surrogate escape ``m`` in ``text`` is not half of a pair (a
    backslash before it may escape it: then it is no escape at all)."""
    backslashes = len(text[: m.start()]) - len(text[: m.start()].rstrip("\\"))
    if backslashes % 2:
        return False
    unit = int(m.group(0)[2:], 16)
    if unit < 0xDC00:  # a high half: a low one must follow
        nxt = text[m.end() : m.end() + 6]
        return not re.fullmatch(r"\\u[dD][c-fC-F][0-9a-fA-F]{2}", nxt)
    prev = text[max(0, m.start() - 6) : m.start()]
    return not re.fullmatch(r"\\u[dD][89abAB][0-9a-fA-F]{2}", prev)


# --------------------------------------------------------------------------- files


def kind_of(mode: int) -> str | None:
    """What a file that is not a regular file is (None: it is one)."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"


def _not_regular(kind: str, *, code: str, what: str, path: str) -> InputError:
    return InputError(
        f"{what} is {kind}, not a regular file: the kit reads its inputs from regular"
        " files only (a FIFO or a device could block it for ever); give the file itself",
        code=code,
        path=path,
    )


def _show_bytes(n: int) -> str:
    return f"{n // _MiB} MiB" if n % _MiB == 0 else f"{n} bytes"


def _too_large(limit: int, *, code: str, what: str, path: str) -> InputError:
    return InputError(
        f"{what} is larger than {_show_bytes(limit)}, the most the kit reads from one such"
        " file (a bound that keeps a runaway file from exhausting memory); check that it is"
        " the file you meant, or split it",
        code=code,
        path=path,
    )


def _cannot_read(exc: OSError, what: str) -> str:
    return f"cannot read {what}: {exc.strerror or exc}"


def foreign_link(st: os.stat_result, folder: os.stat_result) -> str:
    """Why a file (``st``, from ``fstat`` of what was opened) found in ``folder``
    must not be read: ``""`` when it may be.

    Only a kit running as root needs this: every other user reads only what the
    system lets them read.  Root reads everything, so a hard link to a root-only
    file, planted in a student's folder, would be read and shown as the folder's
    own (``lstat`` sees a plain file).  So, as root, a file with more than one
    name is read only when the folder's owner owns it and is not root: such a
    user could have copied the file themselves."""
    if os.geteuid() != 0 or st.st_nlink <= 1:
        return ""
    if st.st_uid != 0 and st.st_uid == folder.st_uid:
        return ""
    return (
        f"a hard link (a file with {st.st_nlink} names) owned by uid {st.st_uid}, while its"
        f" folder belongs to uid {folder.st_uid}: the kit runs as root and does not read a"
        " hard-linked file its folder's owner does not own (the other name may be a file"
        " they cannot read); put a copy of the file in its place"
    )


def check_regular(
    path: str | Path, *, code: str, what: str = "the file", found: bool = False
) -> None:
    """Refuse ``path`` unless it is a regular file, with an :class:`InputError`
    naming it; for the files of a folder the user named, before any of them is
    read.  A symlink is followed, unless ``found`` (a folder someone else wrote:
    a link is refused, unread, naming where it points)."""
    where = str(path)
    try:
        st = os.lstat(path) if found else os.stat(path)
    except OSError as exc:
        raise InputError(_cannot_read(exc, what), code=code, path=where) from None
    if found and stat.S_ISLNK(st.st_mode):
        raise _link(path, code=code, what=what)
    kind = kind_of(st.st_mode)
    if kind is not None:
        raise _not_regular(kind, code=code, what=what, path=where)


def _link(path: str | Path, *, code: str, what: str) -> InputError:
    try:
        target = os.readlink(path)
    except OSError:
        target = "?"
    return InputError(
        f"{what} is a symbolic link (to {target}): the kit never follows a link in a folder"
        " it reads (it could name a file you did not mean to show); put the file itself there",
        code=code,
        path=str(path),
    )


def read_input(
    path: str | Path,
    *,
    code: str,
    limit: int,
    what: str = "the file",
    unreadable: Callable[[OSError], str] | None = None,
    found: bool = False,
) -> bytes:
    """The bytes of a file the user named, or an :class:`InputError` (``code``) naming
    it: it cannot be opened (``unreadable`` words the message, default ``cannot read
    WHAT: <reason>``), it is not a regular file (a FIFO, a device, a socket or a
    directory is refused before anything is read from it: the file is opened
    non-blocking and checked with fstat), or it is larger than ``limit`` bytes (never
    more than ``limit + 1`` bytes are read, even of a file that grows).  With
    ``found`` (a file found in a folder someone else wrote) a symbolic link is
    refused and never opened, and so is a hard link :func:`foreign_link` refuses."""
    where = str(path)

    def failed(exc: OSError) -> InputError:
        text = unreadable(exc) if unreadable is not None else _cannot_read(exc, what)
        return InputError(text, code=code, path=where)

    try:
        # Look before opening: opening a device can have effects of its own.
        seen = os.lstat(path) if found else os.stat(path)
    except OSError as exc:
        raise failed(exc) from None
    if found and stat.S_ISLNK(seen.st_mode):
        raise _link(path, code=code, what=what)
    kind = kind_of(seen.st_mode)
    if kind is not None:
        raise _not_regular(kind, code=code, what=what, path=where)
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0)
    if found:
        flags |= os.O_NOFOLLOW
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise failed(exc) from None
    try:
        st = os.fstat(fd)  # what was opened, whatever the path names by now
        kind = kind_of(st.st_mode)
        if kind is not None:
            raise _not_regular(kind, code=code, what=what, path=where)
        if found:
            try:
                why = foreign_link(st, os.stat(Path(path).parent))
            except OSError as exc:
                raise failed(exc) from None
            if why:
                raise InputError(f"{what} is {why}", code=code, path=where)
        if st.st_size > limit:
            raise _too_large(limit, code=code, what=what, path=where)
        chunks: list[bytes] = []
        total = 0
        while True:
            try:
                chunk = os.read(fd, min(_CHUNK, limit + 1 - total))
            except OSError as exc:
                raise failed(exc) from None
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise _too_large(limit, code=code, what=what, path=where)
        return b"".join(chunks)
    finally:
        os.close(fd)


def show_bytes(n: int) -> str:
    """``4 GiB``, ``256 MiB`` or ``1000 bytes``: a bound in words."""
    if n % (1024 * _MiB) == 0:
        return f"{n // (1024 * _MiB)} GiB"
    return _show_bytes(n)


# ------------------------------------------------------------------ reading by lines


class InputBudget:
    """The most bytes one run reads from all the files it is given together: each
    :class:`LineReader` spends from it, and going past it is an :class:`InputError`
    naming the file that did (exit 5), before the bytes are parsed."""

    def __init__(self, limit: int, *, code: str, hint: str = "") -> None:
        self.limit, self.code, self.hint = limit, code, hint
        self.spent = 0  #: bytes read
        self.planned = 0  #: the sizes of the files opened, when they were opened

    def plan(self, size: int, path: str, what: str) -> None:
        """A file of ``size`` bytes is opened: refuse it at once when the files
        opened so far already hold more than the bound."""
        self.planned += size
        self._check(self.planned, path, what)

    def spend(self, n: int, path: str, what: str) -> None:
        """``n`` more bytes were read (a file that grows is caught here)."""
        self.spent += n
        self._check(self.spent, path, what)

    def _check(self, total: int, path: str, what: str) -> None:
        if total > self.limit:
            raise InputError(
                f"{what} brings the input to more than {show_bytes(self.limit)} in all, the "
                "most the kit reads in one run (a bound that keeps a runaway input from "
                "running for hours); check that these are the files you meant"
                + (f", or {self.hint}" if self.hint else ""),
                code=self.code,
                path=path,
            )


class LineReader:
    """One file read a line at a time, as :func:`read_input` reads a whole one: a
    regular file only, every problem an :class:`InputError` (``code``) naming it.

    The file is opened for each chunk it reads and closed again, so that a run can
    read thousands of files side by side without running out of file descriptors;
    memory holds one chunk and the longest line (at most :data:`MAX_LINE_BYTES`).
    :meth:`next_line` returns ``(number, bytes)`` without the newline, or ``None``
    at the end; a last line without its newline is returned with :attr:`cut` set.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        code: str,
        budget: InputBudget,
        what: str = "the file",
        chunk: int = 1 << 18,
    ) -> None:
        self.path, self.code, self.budget, self.what = str(path), code, budget, what
        self.chunk = chunk
        self.offset = 0  # bytes read so far
        self.line = 0  # the number of the last line returned
        self.cut = False  # the last line returned had no newline (the writer stopped)
        self.size = 0
        self.consumed = 0  # bytes of the lines returned
        self._rest = b""  # a line not yet ended
        #: the chunk read last holds no run of 19 digits (see :meth:`chunks`)
        self.plain = False
        self._lines: list[bytes] = []
        self._i = 0
        self._eof = False
        self._iter: Iterator[bytes] | None = None
        try:
            st = os.stat(self.path)
        except OSError as exc:
            raise InputError(_cannot_read(exc, what), code=code, path=self.path) from None
        kind = kind_of(st.st_mode)
        if kind is not None:
            raise _not_regular(kind, code=code, what=what, path=self.path)
        self.size = st.st_size
        budget.plan(st.st_size, self.path, what)

    def _fill(self) -> bool:
        """Read the next chunk and split it into lines; False at the end of the file."""
        if self._eof:
            return False
        flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0)
        try:
            fd = os.open(self.path, flags)
        except OSError as exc:
            raise InputError(_cannot_read(exc, self.what), code=self.code, path=self.path) from None
        try:
            kind = kind_of(os.fstat(fd).st_mode)
            if kind is not None:
                raise _not_regular(kind, code=self.code, what=self.what, path=self.path)
            try:
                data = os.pread(fd, self.chunk, self.offset)
            except OSError as exc:
                raise InputError(
                    _cannot_read(exc, self.what), code=self.code, path=self.path
                ) from None
        finally:
            os.close(fd)
        if not data:
            self._eof = True
            return False
        self.budget.spend(len(data), self.path, self.what)
        self.offset += len(data)
        data = self._rest + data
        # (one pass in C over the chunk, instead of one per line in loads)
        self.plain = _LONG not in data.translate(_DIGITS)
        lines = data.split(b"\n")
        self._rest = lines.pop()  # after the last newline: the start of the next line
        if len(self._rest) > MAX_LINE_BYTES:
            raise InputError(
                f"{self.what} has a line longer than {show_bytes(MAX_LINE_BYTES)}: one "
                "event is never that long (is this the file you meant?)",
                code=self.code,
                path=self.path,
                line=self.line + len(lines) + 1,
            )
        self._lines = lines
        self._i = 0
        return True

    def __iter__(self) -> Iterator[bytes]:
        """The lines left, each without its newline (:attr:`line`: the number of the
        last one given; :attr:`cut`: it had no newline, the writer stopped in it)."""
        while True:
            lines = self._lines
            while self._i < len(lines):
                raw = lines[self._i]
                self._i += 1
                self.line += 1
                self.consumed += len(raw) + 1
                yield raw
            if not self._fill():
                break
        if self._rest:
            raw, self._rest = self._rest, b""
            self.line += 1
            self.cut = True
            yield raw

    def chunks(self) -> Iterator[list[bytes]]:
        """The lines left, a chunk at a time, for a reader of millions of lines that
        numbers them itself: each line without its newline; the last line, when it
        has no newline, comes alone in a chunk of its own with :attr:`cut` set.

        :attr:`plain`: no line of the chunk holds a run of 19 digits, so that
        :data:`fast_loads` reads each line as :func:`loads` does wherever it accepts
        it.  :attr:`line` and :attr:`consumed` count the chunks given before this
        one (the caller counts within a chunk)."""
        while True:
            lines = self._lines[self._i :] if self._i else self._lines
            self._lines, self._i = [], 0
            if lines:
                yield lines
                self.line += len(lines)
                self.consumed += sum(map(len, lines)) + len(lines)
            if not self._fill():
                break
        if self._rest:
            raw, self._rest = self._rest, b""
            self.cut = True
            yield [raw]
            self.line += 1

    def next_line(self) -> tuple[int, bytes] | None:
        """The next line (its number and its bytes, without the newline), or None."""
        if self._iter is None:
            self._iter = iter(self)
        raw = next(self._iter, None)
        return None if raw is None else (self.line, raw)

    @property
    def progress(self) -> float:
        """The share of the file returned so far (0 to 1)."""
        return self.consumed / self.size if self.size else 1.0


# ------------------------------------------------------------------ printing outside text

#: A name printed as it is: ASCII letters, digits and ``_ . @ / + -``.
_PLAIN_ID: Final = re.compile(r"[A-Za-z0-9_.@/+\-]+")

# Characters that a terminal or a viewer acts on or does not show: C0 and C1
# controls and DEL; the bidirectional marks, embeddings, overrides and isolates;
# zero-width and invisible characters (joiners, the BOM, word joiner, invisible
# operators, soft hyphen, Hangul fillers, Braille blank, variation selectors and
# tags); line and paragraph separators; every space but the plain one; private use.
_HIDDEN: Final = re.compile(
    "[\x00-\x1f\x7f-\x9f\xa0\xad\u034f\u061c\u115f\u1160\u1680\u17b4\u17b5\u180b-\u180f"
    "\u2000-\u200f\u2028-\u202f\u205f-\u206f\u2800\u3000\u3164\ufe00-\ufe0f\ufeff"
    "\uffa0\ufff0-\ufffb\ue000-\uf8ff\U000e0000-\U000e0fff\U000f0000-\U0010ffff]"
)


def _escape_char(m: re.Match[str]) -> str:
    c = ord(m.group(0))
    return f"\\x{c:02x}" if c < 0x100 else (f"\\u{c:04x}" if c < 0x10000 else f"\\U{c:08x}")


def show_text(text: str) -> str:
    """``text`` with every character :data:`_HIDDEN` names written as an escape
    (``\\x1b``, ``\\u200b``): for text quoted in the kit's own lines (a path, a
    message) that may come from outside.  A newline becomes ``\\x0a``, so one line
    stays one."""
    return _HIDDEN.sub(_escape_char, text)


def show_id(name: str) -> str:
    """A name from outside (a node, a channel's end), as the kit prints it: as it is
    when it is plain ASCII (``p1``, ``north``, ``10.0.0.7``), else as a JSON string
    with every character outside printable ASCII escaped (``"Z\\u00fcrich"``,
    ``"p\\u0430ris"``): quoted, it cannot pass for the kit's own words or start a
    line, and two names that differ never print alike (a Cyrillic a is not a Latin
    one, a zero-width space is seen)."""
    if _PLAIN_ID.fullmatch(name):
        return name
    return json.dumps(name, ensure_ascii=True)


def show_json(value: Any) -> str:
    """A JSON value from outside (a payload, a state, a snapshot id), as the kit
    prints it: ``3``, ``"hi"``, ``{"a": [1, 2]}``; strings keep their printable
    letters of any script, and every character :func:`show_text` escapes is written
    as a JSON escape."""
    return _HIDDEN.sub(_escape_char, json.dumps(value, separators=(", ", ": "), ensure_ascii=False))
