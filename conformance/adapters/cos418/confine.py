"""Start a COS 418 test binary with ``/proc`` and ``/sys`` out of its reach.

Run inside the kit's sandbox as ``python -I -S confine.py -- BINARY ARGS...``:
it restricts itself with Landlock (Linux 5.13 and later: a restriction any
process may put on itself and everything it starts, and never lift) so that
files may be opened only beneath the top-level folders of the sandbox's view
other than ``/proc`` and ``/sys``, then executes the binary in its place.

Why: the package under test runs in the same process as the kit's driver, whose
key authenticates what the driver writes.  The binary is execute-only (it cannot
be read, so neither can ``/proc/self/exe``), which also makes the process
non-dumpable; without Landlock a package could still read its own memory through
``/proc/self/mem`` where the sandbox's user owns it (when the kit does not run as
root).  With it, the package's code reaches its memory only through ``unsafe``
or system calls, which the kit's scan of the source names (``docs/security.md``).

Where Landlock is missing (an older kernel, or a kernel without it) the binary is
executed unconfined; the kit asks the kernel itself (:func:`available`) and says
which in its report.  Only the standard library is used (the script runs with
``-I -S`` in the sandbox), and nothing is printed.
"""

from __future__ import annotations

import ctypes
import os
import stat
import sys

_CREATE_RULESET = 444
_ADD_RULE = 445
_RESTRICT_SELF = 446
_VERSION = 1  # LANDLOCK_CREATE_RULESET_VERSION
_PATH_BENEATH = 1
_NO_NEW_PRIVS = 38
#: Access rights of files (the rest concern folders), by the ABI that added them.
_FILE_RIGHTS = 0b111  # execute, write, read
_TRUNCATE = 1 << 14  # ABI 3
_IOCTL_DEV = 1 << 15  # ABI 5
#: Top-level folders of the view the binary never needs: its memory and the
#: kernel's view of it.
_OUT_OF_REACH = ("proc", "sys")


class _Beneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _call(libc: ctypes.CDLL, *args: object) -> int:
    ret = int(libc.syscall(*args))
    if ret < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return ret


def available() -> int:
    """The kernel's Landlock ABI version, 0 when it has none."""
    try:
        return _call(_libc(), _CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_VERSION))
    except (OSError, AttributeError):
        return 0


def _handled(abi: int) -> int:
    rights = (1 << 13) - 1  # ABI 1: execute ... make_sym
    if abi >= 2:
        rights |= 1 << 13  # refer
    if abi >= 3:
        rights |= _TRUNCATE
    if abi >= 5:
        rights |= _IOCTL_DEV
    return rights


def confine() -> bool:
    """Restrict this process (and what it executes) to the view without
    ``/proc`` and ``/sys``; False where Landlock is missing."""
    abi = available()
    if abi <= 0:
        return False
    libc = _libc()
    handled = _handled(abi)
    attr = ctypes.c_uint64(handled)
    size = ctypes.c_size_t(8)  # the ruleset's first field: the file system's rights
    ruleset = _call(libc, _CREATE_RULESET, ctypes.byref(attr), size, ctypes.c_uint32(0))
    try:
        for name in sorted(os.listdir("/")):
            if name in _OUT_OF_REACH:
                continue
            path = "/" + name
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                rights = handled
                if not stat.S_ISDIR(os.fstat(fd).st_mode):
                    rights &= _FILE_RIGHTS | _TRUNCATE | _IOCTL_DEV
                rule = _Beneath(rights, fd)
                _call(libc, _ADD_RULE, ruleset, _PATH_BENEATH, ctypes.byref(rule), 0)
            finally:
                os.close(fd)
        libc.prctl(_NO_NEW_PRIVS, 1, 0, 0, 0)
        _call(libc, _RESTRICT_SELF, ruleset, 0)
    finally:
        os.close(ruleset)
    return True


def main(argv: list[str]) -> None:
    if len(argv) < 3 or argv[1] != "--":
        sys.exit(2)
    confine()
    os.execv(argv[2], argv[2:])


if __name__ == "__main__":
    main(sys.argv)
