"""What the kit needs to know about a COS 418 package before it builds it.

:func:`inspect_package` reads the folder without running anything: the package
name (the ``package`` clause of its non-test ``.go`` files: usually
``chandy_lamport``, not always), whether it has a ``go.mod`` (packages of the
GOPATH era have none), its ``test_data/`` and its own tests, and which of the two
dialects of the assignment it is written against (:data:`DIALECTS`): the first
(``Simulator`` / ``Server``) or the later one (``ChandyLamportSim`` / ``Node`` /
``Message`` / ``GlobalSnapshot``).  The dialect is read from the names the
package declares; a folder that has neither dialect's names is bad input that
names what it lacks, never a failing implementation.

Reading is bounded and never follows what the folder names: symbolic links,
FIFOs, devices and sockets are refused before anything is read, and every file
has a size cap.
"""

from __future__ import annotations

import os
import re
import shlex
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from redletter.errors import InputError
from redletter.untrusted import foreign_link

__all__ = [
    "DIALECTS",
    "MAX_FILE_BYTES",
    "Dialect",
    "GoPackage",
    "Need",
    "inspect_package",
    "lacks_names",
    "read_bounded",
    "scan_tree",
]

#: The largest file of a package folder the kit reads or copies.
MAX_FILE_BYTES: Final = 4 << 20
#: The most files and folders a package folder may hold.
MAX_ENTRIES: Final = 5000
_PACKAGE_RE: Final = re.compile(r"^\s*package\s+([A-Za-z_][A-Za-z0-9_]*)", re.MULTILINE)
_GO_DIRECTIVE_RE: Final = re.compile(r"^\s*go\s+(\d+(?:\.\d+){0,2})\s*$", re.MULTILINE)
_MODULE_RE: Final = re.compile(r"^\s*module\s+\"?([^\s\"]+)\"?\s*$", re.MULTILINE)


# --------------------------------------------------------------------------- dialects


@dataclass(frozen=True)
class Need:
    """A name the driver relies on: a type (with fields), a function or a method."""

    kind: str  #: ``type``, ``func`` or ``method``
    name: str
    owner: str = ""  #: the receiver type of a method ("" : any type)
    fields: tuple[str, ...] = ()  #: fields the type must declare

    def describe(self) -> str:
        if self.kind == "method":
            return f"{self.owner}.{self.name}" if self.owner else f"a method {self.name}"
        if self.kind == "func":
            return f"{self.name}()"
        if self.fields:
            return f"{self.name}{{{', '.join(self.fields)}}}"
        return self.name


@dataclass(frozen=True)
class Dialect:
    """One version of the assignment's interface and what the driver uses of it."""

    key: str  #: ``servers`` or ``nodes`` (the driver's dialect part)
    title: str
    #: names the driver calls or reads: without any of them it does not build or
    #: cannot read a snapshot
    needs: tuple[Need, ...]
    #: the logger's four kinds of events: without them the run is judged without
    #: its log (by outcome)
    log_types: tuple[str, ...]
    add_server: str
    add_link: str
    inject: str
    notify: str
    result: str
    tokens_field: str
    server_field: str
    #: the files a package of this dialect is written in (named in help lines)
    files: tuple[str, ...] = ()
    #: the error code of a package closest to this dialect that lacks its names
    code: str = "RL-INPUT-COS418-PACKAGE"


DIALECTS: Final[Mapping[str, Dialect]] = {
    "servers": Dialect(
        key="servers",
        title="the first dialect (Simulator, Server)",
        needs=(
            Need("type", "Simulator", fields=("nextSnapshotId", "logger")),
            Need("func", "NewSimulator"),
            Need("method", "AddServer", "Simulator"),
            Need("method", "AddForwardLink", "Simulator"),
            Need("method", "InjectEvent", "Simulator"),
            Need("method", "Tick", "Simulator"),
            Need("method", "CollectSnapshot", "Simulator"),
            Need("method", "NewEpoch"),
            Need("type", "PassTokenEvent", fields=("src", "dest", "tokens")),
            Need("type", "SnapshotEvent", fields=("serverId",)),
            Need("type", "TokenMessage", fields=("numTokens",)),
            Need("type", "MarkerMessage", fields=("snapshotId",)),
            Need("type", "SnapshotState", fields=("id", "tokens", "messages")),
            Need("type", "SnapshotMessage", fields=("src", "dest", "message")),
        ),
        log_types=("SentMessageEvent", "ReceivedMessageEvent", "StartSnapshot", "EndSnapshot"),
        add_server="AddServer",
        add_link="AddForwardLink",
        inject="InjectEvent",
        notify="NotifySnapshotComplete",
        result="SnapshotState",
        tokens_field="tokens",
        server_field="serverId",
        files=("server.go", "simulator.go"),
        code="RL-INPUT-COS418-SERVERS",
    ),
    "nodes": Dialect(
        key="nodes",
        title="the second dialect (ChandyLamportSim, Node, Message, GlobalSnapshot)",
        needs=(
            Need("type", "ChandyLamportSim", fields=("nextSnapshotId", "logger")),
            Need("func", "NewSimulator"),
            Need("method", "AddNode", "ChandyLamportSim"),
            Need("method", "AddLink", "ChandyLamportSim"),
            Need("method", "ProcessEvent", "ChandyLamportSim"),
            Need("method", "Tick", "ChandyLamportSim"),
            Need("method", "CollectSnapshot", "ChandyLamportSim"),
            Need("method", "NewEpoch"),
            Need("type", "PassTokenEvent", fields=("src", "dest", "tokens")),
            Need("type", "SnapshotEvent", fields=("nodeId",)),
            Need("type", "Message", fields=("isMarker", "data")),
            Need("type", "GlobalSnapshot", fields=("id", "tokenMap", "messages")),
            Need("type", "MsgSnapshot", fields=("src", "dest", "message")),
        ),
        log_types=(
            "SentMsgRecord",
            "ReceivedMsgRecord",
            "StartSnapshotRecord",
            "EndSnapshotRecord",
        ),
        add_server="AddNode",
        add_link="AddLink",
        inject="ProcessEvent",
        notify="NotifyCompletedSnapshot",
        result="GlobalSnapshot",
        tokens_field="tokenMap",
        server_field="nodeId",
        files=("node.go", "simulator.go"),
        code="RL-INPUT-COS418-NODES",
    ),
}


# --------------------------------------------------------------------------- reading safely


def _refuse(path: Path, what: str, root: Path) -> InputError:
    rel = path.relative_to(root) if path != root and root in path.parents else path
    return InputError(
        f"{rel} is {what}; the kit reads only plain files and folders of a package (it never"
        " follows links or opens FIFOs, devices or sockets): remove it or copy the package"
        " without it",
        code="RL-INPUT-COS418-PACKAGE",
        path=str(root),
    )


def scan_tree(root: Path, *, skip: tuple[str, ...] = (".git",)) -> list[tuple[Path, bool]]:
    """Every entry below ``root`` as ``(path, is_dir)``, checked with ``lstat``: a
    symbolic link, FIFO, device or socket, a file over :data:`MAX_FILE_BYTES` or more
    than :data:`MAX_ENTRIES` entries is bad input (nothing is opened)."""
    out: list[tuple[Path, bool]] = []
    todo = [root]
    while todo:
        d = todo.pop()
        try:
            names = sorted(os.listdir(d))
        except OSError as exc:
            raise InputError(
                f"cannot list {d}: {exc.strerror}", code="RL-INPUT-COS418-PACKAGE", path=str(root)
            ) from None
        for name in names:
            p = d / name
            if d == root and name in skip:
                continue
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                raise _refuse(p, f"a symbolic link (to {os.readlink(p)})", root)
            if stat.S_ISDIR(st.st_mode):
                out.append((p, True))
                todo.append(p)
            elif stat.S_ISREG(st.st_mode):
                if st.st_size > MAX_FILE_BYTES:
                    raise _refuse(
                        p, f"a file of {st.st_size:,} bytes (the limit is {MAX_FILE_BYTES:,})", root
                    )
                out.append((p, False))
            else:
                kind = (
                    "a FIFO"
                    if stat.S_ISFIFO(st.st_mode)
                    else "a socket"
                    if stat.S_ISSOCK(st.st_mode)
                    else "a device"
                )
                raise _refuse(p, kind, root)
            if len(out) > MAX_ENTRIES:
                raise InputError(
                    f"more than {MAX_ENTRIES:,} files and folders: give the folder of one Go"
                    " package",
                    code="RL-INPUT-COS418-PACKAGE",
                    path=str(root),
                )
    return out


def read_bounded(path: Path, limit: int = MAX_FILE_BYTES) -> bytes:
    """A regular file's bytes, opened without following a link, at most ``limit``
    bytes (more is an :class:`OSError`, as is a hard link the kit must not read as
    root: :func:`~redletter.untrusted.foreign_link`)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"{path} is not a regular file")
        linked = foreign_link(st, os.stat(path.parent))
        if linked:
            raise OSError(f"{path.name} is {linked}")
        chunks = []
        total = 0
        while True:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            total += len(chunk)
            if total > limit:
                raise OSError(f"{path} holds more than {limit:,} bytes")
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


# --------------------------------------------------------------------------- the package


@dataclass(frozen=True)
class GoPackage:
    """A COS 418 package as found in the user's folder."""

    source: Path
    name: str  #: the package clause (``chandy_lamport``, ``snapshot``, ...)
    gomod: bool  #: has a go.mod (else: built in GOPATH mode)
    go_directive: str | None  #: the ``go`` line of go.mod
    files: tuple[str, ...]  #: the non-test .go files
    test_data: Path | None  #: its ``test_data/`` directory, if any
    dialect: Dialect
    tests: tuple[str, ...] = ()  #: its own ``*_test.go`` files
    notes: tuple[str, ...] = ()  #: what the kit could not find (e.g. the log's types)
    module: str = ""  #: the ``module`` line of go.mod
    #: names of ``dialect`` (the closest one) the driver uses that the package lacks:
    #: bad input, said once the package is known to compile (:func:`lacks_names`)
    lacks: tuple[Need, ...] = ()

    @property
    def import_path(self) -> str:
        """How Go names the package in stacks: its module's path (the package is the
        module's root), or its name in GOPATH mode."""
        return self.module if self.gomod and self.module else self.name

    @property
    def has_course_test(self) -> bool:
        """It ships its own tests and their ``test_data/`` (the course's harness)."""
        return bool(self.tests) and self.test_data is not None


def _strip(text: str) -> str:
    """Go source without comments and string literals (their text cannot declare)."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.DOTALL)
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"`[^`]*`", '""', text)
    return re.sub(r'"(?:[^"\\\n]|\\.)*"', '""', text)


@dataclass(frozen=True)
class _Decls:
    types: Mapping[str, frozenset[str]]  #: type name -> field names ("" : not a struct)
    funcs: frozenset[str]
    methods: frozenset[tuple[str, str]]  #: (receiver type, name)


_SPEC_RE: Final = re.compile(
    r"\s*([A-Za-z_]\w*)(?:\[[^\]\n]*\])?\s+(?:=\s*)?(struct\s*\{)?", re.MULTILINE
)
_FUNC_RE: Final = re.compile(r"^func\s+([A-Za-z_]\w*)\s*[\[(]", re.MULTILINE)
_METHOD_RE: Final = re.compile(
    r"^func\s*\(\s*(?:[A-Za-z_]\w*\s+)?\*?\s*([A-Za-z_]\w*)(?:\[[^\]]*\])?\s*\)"
    r"\s*([A-Za-z_]\w*)\s*\(",
    re.MULTILINE,
)


def _block(text: str, start: int) -> tuple[str, int]:
    """The text between the brace or parenthesis at ``start`` and its match, and
    the match's position."""
    open_, close = text[start], {"{": "}", "(": ")"}[text[start]]
    depth = 0
    for i in range(start, len(text)):
        if text[i] == open_:
            depth += 1
        elif text[i] == close:
            depth -= 1
            if depth == 0:
                return text[start + 1 : i], i
    return text[start + 1 :], len(text)


def _fields(body: str) -> frozenset[str]:
    """The field names of a struct body (``a, b int`` names two; an embedded
    ``*Logger`` names ``Logger``)."""
    names: set[str] = set()
    depth = 0
    for line in body.splitlines():
        if depth == 0:
            m = re.match(r"^\s*([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s+\S", line)
            e = re.match(r"^\s*\*?\s*(?:[A-Za-z_]\w*\.)?([A-Za-z_]\w*)\s*$", line)
            if m:
                names |= {n.strip() for n in m.group(1).split(",")}
            elif e:
                names.add(e.group(1))
        depth += line.count("{") - line.count("}")
    return frozenset(names)


def _type_specs(text: str, types: dict[str, frozenset[str]], *, one: bool) -> None:
    """Read type specs (``Name struct {...}``, ``Name = T``, ``Name T``) from ``text``."""
    pos = 0
    while pos < len(text):
        m = _SPEC_RE.match(text, pos)
        if m is None:
            nl = text.find("\n", pos)
            if one or nl < 0:
                return
            pos = nl + 1
            continue
        name = m.group(1)
        if m.group(2):
            body, end = _block(text, m.end() - 1)
            types.setdefault(name, _fields(body))
            pos = end + 1
        else:
            types.setdefault(name, frozenset())
            nl = text.find("\n", m.end())
            pos = nl + 1 if nl >= 0 else len(text)
        if one:
            return


def _declarations(sources: list[str]) -> _Decls:
    types: dict[str, frozenset[str]] = {}
    funcs: set[str] = set()
    methods: set[tuple[str, str]] = set()
    for src in sources:
        text = _strip(src)
        for m in re.finditer(r"^type\b[ \t]*", text, re.MULTILINE):
            if text[m.end() : m.end() + 1] == "(":
                body, _ = _block(text, m.end())
                _type_specs(body, types, one=False)
            else:
                _type_specs(text[m.end() :], types, one=True)
        funcs |= {m.group(1) for m in _FUNC_RE.finditer(text)}
        methods |= {(m.group(1), m.group(2)) for m in _METHOD_RE.finditer(text)}
    return _Decls(types, frozenset(funcs), frozenset(methods))


def _missing(d: Dialect, decls: _Decls) -> list[Need]:
    out = []
    for need in d.needs:
        if need.kind == "func":
            ok = need.name in decls.funcs
        elif need.kind == "method":
            ok = any(
                name == need.name and (not need.owner or recv == need.owner)
                for recv, name in decls.methods
            )
        else:
            fields = decls.types.get(need.name)
            ok = fields is not None and all(f in fields for f in need.fields)
        if not ok:
            out.append(need)
    return out


def _dialect(decls: _Decls) -> tuple[Dialect, tuple[Need, ...], tuple[str, ...]]:
    """The closest dialect, the names of it the package lacks, and notes."""
    scored = [(len(_missing(d, decls)), d) for d in DIALECTS.values()]
    scored.sort(key=lambda x: x[0])
    best = scored[0][1]
    lacks = tuple(_missing(best, decls))
    notes: list[str] = []
    absent = [t for t in best.log_types if t not in decls.types]
    if absent and not lacks:
        notes.append(
            f"the package declares no {', '.join(absent)}: the logger's course events cannot"
            " all be read, so runs are judged without their log where it is incomplete"
        )
    return best, lacks, tuple(notes)


def lacks_names(package: GoPackage) -> None:
    """:class:`InputError` (the closest dialect's code, whose help line names that
    dialect's files) when the package lacks a name of its dialect the driver uses."""
    if not package.lacks:
        return
    best = package.dialect
    shown = ", ".join(n.describe() for n in package.lacks)
    raise InputError(
        "this folder is not written against either dialect of the COS 418 snapshot"
        f" assignment: it is closest to {best.title}, but lacks {shown}"
        f" ({len(best.needs) - len(package.lacks)} of the {len(best.needs)} names the kit's"
        " driver uses are there); see docs/cos418.md for the names of each dialect",
        code=best.code,
        path=str(package.source),
    )


def _a_class(path: Path, entries: list[tuple[Path, bool]]) -> str:
    """For a folder with no Go file of its own whose subfolders hold Go files (a class
    of submissions, one folder each): the pointer to ``cos418 grade``; else ""."""
    held = sorted(
        {p.parent.name for p, is_dir in entries if not is_dir and p.suffix == ".go"
         and p.parent.parent == path}
    )  # fmt: skip
    if not held:
        return ""
    shown = ", ".join(held[:3]) + (", ..." if len(held) > 3 else "")
    return (
        f"; its {len(held)} folder{'s' if len(held) > 1 else ''} ({shown}) hold Go"
        f" packages: to grade them as a class, run `.venv/bin/redletter cos418 grade"
        f" {shlex.quote(str(path))}`; to test one, give its folder"
        f" (`.venv/bin/redletter cos418 test {shlex.quote(str(path / held[0]))}`)"
    )


def inspect_package(path: Path, *, strict: bool = True) -> GoPackage:
    """Read what the kit needs to know about the package in ``path``.

    Raises :class:`InputError` (``RL-INPUT-COS418-PACKAGE``) when ``path`` is not a
    directory of Go files of one package, or holds what the kit does not read
    (links, FIFOs, huge files); and, with ``strict``, when it is not written against
    one dialect of the assignment (:func:`lacks_names`).  Without ``strict`` that
    is left to the caller, once the package is known to compile (the closest
    dialect and what it lacks are in :attr:`GoPackage.lacks`): a package whose own
    code does not compile is a build failure, not bad input.
    """
    where = str(path)
    try:
        st = os.lstat(path)
    except OSError:
        st = None
    if st is None or not stat.S_ISDIR(st.st_mode):
        raise InputError(
            f"{'does not exist' if st is None else 'not a directory'} (expected the folder"
            " of a Go package written against the COS 418 interface)",
            code="RL-INPUT-COS418-PACKAGE",
            path=where,
        )
    entries = scan_tree(path)
    files = sorted(
        p.name
        for p, is_dir in entries
        if not is_dir and p.parent == path and p.suffix == ".go" and not p.name.endswith("_test.go")
    )
    tests = sorted(
        p.name
        for p, is_dir in entries
        if not is_dir and p.parent == path and p.name.endswith("_test.go")
    )
    if not files:
        raise InputError(
            "no Go source files (*.go, other than *_test.go) in this directory"
            + _a_class(path, entries),
            code="RL-INPUT-COS418-PACKAGE",
            path=where,
        )
    names: dict[str, list[str]] = {}
    sources: list[str] = []
    for f in files:
        try:
            text = read_bounded(path / f).decode("utf-8", errors="replace")
        except OSError as exc:
            raise InputError(
                f"cannot read {f}: {exc}", code="RL-INPUT-COS418-PACKAGE", path=where
            ) from None
        sources.append(text)
        m = _PACKAGE_RE.search(_strip(text))
        if m is None:
            raise InputError(
                f"{f} has no package clause", code="RL-INPUT-COS418-PACKAGE", path=where
            )
        names.setdefault(m.group(1), []).append(f)
    if len(names) != 1:
        shown = "; ".join(f"package {n}: {', '.join(fs)}" for n, fs in sorted(names.items()))
        raise InputError(
            f"the Go files belong to more than one package ({shown}); give the folder of"
            " one package",
            code="RL-INPUT-COS418-PACKAGE",
            path=where,
        )
    (name,) = names
    if name == "main":
        raise InputError(
            "this is a command (package main), not a package written against the COS 418"
            " interface (package chandy_lamport or similar)",
            code="RL-INPUT-COS418-PACKAGE",
            path=where,
        )
    dialect, lacks, notes = _dialect(_declarations(sources))
    gomod = any(p == path / "go.mod" and not d for p, d in entries)
    directive = None
    module = ""
    if gomod:
        try:
            text = read_bounded(path / "go.mod").decode("utf-8", "replace")
        except OSError as exc:
            raise InputError(
                f"cannot read go.mod: {exc}", code="RL-INPUT-COS418-PACKAGE", path=where
            ) from None
        m = _GO_DIRECTIVE_RE.search(text)
        directive = m.group(1) if m else None
        mm = _MODULE_RE.search(_strip(text))
        module = mm.group(1) if mm else ""
    test_data = path / "test_data"
    has_data = any(p == test_data and d for p, d in entries)
    pkg = GoPackage(
        source=path.resolve(),
        name=name,
        gomod=gomod,
        go_directive=directive,
        files=tuple(files),
        test_data=test_data.resolve() if has_data else None,
        dialect=dialect,
        tests=tuple(tests),
        notes=notes,
        module=module,
        lacks=lacks,
    )
    if strict:
        lacks_names(pkg)
    return pkg
