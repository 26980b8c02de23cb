"""Writing the kit's files into a folder someone else may have written first.

``cos418 test --export DIR``, the store of run folders and a grade's ``--out``
folder are named by the user but may hold what others planted: a symbolic link
where the kit is about to write (which would make it write through the link,
outside the folder, as root), a FIFO (which would block it for ever), a folder
where a file goes.  :class:`SafeFolder` writes there without ever opening an
existing name:

- the folder the user named is opened once (a link the user gave is theirs to
  give); every folder below it is opened relative to its parent's descriptor
  with ``O_NOFOLLOW`` (made if missing, refused if it is anything but a folder);
- a file is written under a fresh random name created with
  ``O_CREAT | O_EXCL | O_NOFOLLOW`` and then renamed over its name (a rename
  replaces a name, never follows it);
- a name that holds a symbolic link, a FIFO, a device, a socket or a folder where
  a file goes is bad input naming it, refused before anything is written;
  a regular file of that name is replaced.

On the ground floor: it imports nothing of the kit but :mod:`redletter.errors` and
:mod:`redletter.untrusted`.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path
from typing import Final

from redletter.errors import InputError
from redletter.untrusted import kind_of

__all__ = ["FolderError", "SafeFolder", "planted"]

_DIR_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_NEW_FILE: Final = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def _what(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a folder"
    return kind_of(mode) or "a file"


def planted(path: Path, *, want_dir: bool) -> str:
    """Why the kit must not write ``path`` (``""`` when it may): it exists and is not
    a regular file (``want_dir``: not a folder), read with ``lstat``."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return ""
    ok = stat.S_ISDIR(st.st_mode) if want_dir else stat.S_ISREG(st.st_mode)
    if ok:
        return ""
    what = _what(st.st_mode)
    if stat.S_ISLNK(st.st_mode):
        with contextlib.suppress(OSError):
            what += f" (to {os.readlink(path)})"
    return what


class FolderError(InputError):
    """Bad input about a folder the kit writes into; :attr:`reason` is the message
    without its location (for a caller that says where in its own words)."""

    def __init__(self, reason: str, *, code: str, path: str) -> None:
        super().__init__(reason, code=code, path=path)
        self.reason = reason


class SafeFolder:
    """A folder the kit writes files into without following or opening what is there
    (module docstring).  Close it (or use it as a context manager)."""

    def __init__(self, path: Path, *, code: str, create: bool = True, _fd: int = -1) -> None:
        self.path = path
        self.code = code
        if _fd >= 0:
            self._fd = _fd
            return
        try:
            if create:
                path.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(path, _DIR_FLAGS)
        except OSError as exc:
            raise self._error(path, f"cannot write into it: {exc.strerror or exc}") from None

    def _error(self, path: Path, why: str) -> FolderError:
        return FolderError(why, code=self.code, path=str(path))

    def _refuse(self, name: str, what: str, want: str) -> FolderError:
        return self._error(
            self.path,
            f"{name} is {what}, where the kit writes {want}: it never writes through a link"
            " nor opens what others left in its folders; remove it (or give another folder)",
        )

    def _check(self, name: str, *, want_dir: bool) -> bool:
        """Whether ``name`` exists (as what it should be); bad input if it is not."""
        if "/" in name or name in ("", ".", ".."):
            raise self._error(self.path, f"{name!r} is not a plain name")
        try:
            st = os.stat(name, dir_fd=self._fd, follow_symlinks=False)
        except FileNotFoundError:
            return False
        ok = stat.S_ISDIR(st.st_mode) if want_dir else stat.S_ISREG(st.st_mode)
        if not ok:
            what = _what(st.st_mode)
            if stat.S_ISLNK(st.st_mode):
                with contextlib.suppress(OSError):
                    what += f" (to {os.readlink(name, dir_fd=self._fd)})"
            raise self._refuse(name, what, "a folder" if want_dir else "a file")
        return True

    def check(self, *names: str) -> None:
        """Refuse at once (before any work) names that could not be written: each
        ``a/b/c`` is checked folder by folder, the last part as a file (as a folder
        when the name ends with ``/``)."""
        for name in names:
            parts = name.rstrip("/").split("/")
            here: Path = self.path
            for i, part in enumerate(parts):
                is_dir = i < len(parts) - 1 or name.endswith("/")
                why = planted(here / part, want_dir=is_dir)
                if why:
                    want = "a folder" if is_dir else "a file"
                    raise self._refuse("/".join(parts[: i + 1]), why, want)
                here = here / part

    def folder(self, name: str) -> SafeFolder:
        """The sub-folder ``name`` (made if missing), opened without following a link."""
        if not self._check(name, want_dir=True):
            try:
                os.mkdir(name, 0o755, dir_fd=self._fd)
            except FileExistsError:
                self._check(name, want_dir=True)  # raced: refused unless a folder
            except OSError as exc:
                raise self._error(self.path / name, f"cannot make it: {exc.strerror}") from None
        try:
            fd = os.open(name, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=self._fd)
        except OSError as exc:
            raise self._error(self.path / name, f"cannot open it: {exc.strerror}") from None
        return SafeFolder(self.path / name, code=self.code, _fd=fd)

    def write(self, name: str, data: bytes | str, *, mode: int = 0o644) -> Path:
        """Write ``name`` whole: a fresh file renamed over it (module docstring)."""
        self._check(name, want_dir=False)
        body = data.encode("utf-8") if isinstance(data, str) else data
        tmp = f".{name}.{secrets.token_hex(6)}.part"
        try:
            fd = os.open(tmp, _NEW_FILE, mode, dir_fd=self._fd)
        except OSError as exc:
            raise self._error(self.path / name, f"cannot write it: {exc.strerror}") from None
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(body)
            os.replace(tmp, name, src_dir_fd=self._fd, dst_dir_fd=self._fd)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=self._fd)
            raise self._error(self.path / name, f"cannot write it: {exc.strerror}") from None
        return self.path / name

    def probe(self) -> None:
        """Prove the folder writable (a fresh file made and removed), following nothing."""
        tmp = f".redletter-write-test-{secrets.token_hex(6)}"
        try:
            os.close(os.open(tmp, _NEW_FILE, 0o600, dir_fd=self._fd))
            os.unlink(tmp, dir_fd=self._fd)
        except OSError as exc:
            raise self._error(self.path, f"cannot write into it: {exc.strerror}") from None

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> SafeFolder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
