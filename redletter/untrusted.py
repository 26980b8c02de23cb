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

On the ground floor: it imports nothing of the kit but :mod:`redletter.errors`.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from redletter.errors import InputError

__all__ = [
    "MAX_DIGITS",
    "MAX_LOG_BYTES",
    "MAX_SMALL_BYTES",
    "MAX_TRACE_BYTES",
    "check_regular",
    "decode_utf8",
    "foreign_link",
    "kind_of",
    "loads",
    "read_input",
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
