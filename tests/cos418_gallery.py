"""The COS 418 gallery (tests/data/cos418_gallery): its entries and a materializer.

Each dialect of the assignment has one complete, course-faithful base package
(``servers/base``, ``nodes/base``, with its own ``snapshot_test.go`` and
``test_data/``); every other entry is a unified diff against its dialect's base
(``<dialect>/patches/<entry>.diff``).  ``entries.json`` says what each entry is
expected to do.  ``materialize(name, dest)`` writes an entry as a package folder,
applying its diff with the small strict applier below (no ``patch``, no git).

    .venv/bin/python -m tests.cos418_gallery OUT    # every entry, as OUT/<dialect>/<entry>
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

GALLERY = Path(__file__).resolve().parent / "data" / "cos418_gallery"
DIALECTS = ("servers", "nodes")
EXPECTS = ("pass", "fail", "fail-race", "bad-input")
SHOWS_ON = ("one", "sequential", "concurrent", "same-tick")
COURSE_TESTS = ("pass", "fail")


@dataclass(frozen=True)
class Entry:
    """One line of entries.json.

    ``expect``: ``pass`` (a correct solution), ``fail`` (a bug the kit must find),
    ``fail-race`` (fails only under ``-race``), ``bad-input`` (not a package of
    either dialect).  ``shows_on``: the scenario classes on which the bug shows.
    ``course_test``: what the package's own snapshot_test.go says (with ``-race``
    for the race entries)."""

    name: str
    dialect: str
    patch: str | None
    expect: str
    rule: str
    shows_on: tuple[str, ...]
    course_test: str
    why: str

    @property
    def entry(self) -> str:
        """The entry's name within its dialect (``base``, ``deadlock``, ...)."""
        return self.name.split("/", 1)[1]


class GalleryError(Exception):
    """entries.json or a patch of the gallery is malformed, or does not apply."""


def _field(raw: dict[str, object], key: str, where: str) -> object:
    if key not in raw:
        raise GalleryError(f"{where}: no {key!r}")
    return raw[key]


def _text(raw: dict[str, object], key: str, where: str, allowed: tuple[str, ...] = ()) -> str:
    value = _field(raw, key, where)
    if not isinstance(value, str) or not value:
        raise GalleryError(f"{where}: {key!r} must be a non-empty string, not {value!r}")
    if allowed and value not in allowed:
        raise GalleryError(f"{where}: {key!r} is {value!r}, not one of {', '.join(allowed)}")
    return value


def _entry(raw: object, index: int) -> Entry:
    where = f"entries.json[{index}]"
    if not isinstance(raw, dict):
        raise GalleryError(f"{where}: not an object")
    name = _text(raw, "name", where)
    dialect = _text(raw, "dialect", where, DIALECTS)
    if not name.startswith(dialect + "/") or "/" in name[len(dialect) + 1 :]:
        raise GalleryError(f"{where}: name {name!r} is not {dialect}/<entry>")
    patch = _field(raw, "patch", where)
    if patch is not None and not isinstance(patch, str):
        raise GalleryError(f"{where}: 'patch' must be a path or null, not {patch!r}")
    if (patch is None) != (name == f"{dialect}/base"):
        raise GalleryError(f"{where}: only a base has no patch")
    shows_on = _field(raw, "shows_on", where)
    if not isinstance(shows_on, list) or not all(s in SHOWS_ON for s in shows_on):
        raise GalleryError(f"{where}: 'shows_on' must list some of {', '.join(SHOWS_ON)}")
    return Entry(
        name=name,
        dialect=dialect,
        patch=patch,
        expect=_text(raw, "expect", where, EXPECTS),
        rule=_text(raw, "rule", where),
        shows_on=tuple(str(s) for s in shows_on),
        course_test=_text(raw, "course_test", where, COURSE_TESTS),
        why=_text(raw, "why", where),
    )


def load_entries(path: Path = GALLERY / "entries.json") -> tuple[Entry, ...]:
    """Read and check entries.json: one entry per name, each patch present."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(raw, list):
        raise GalleryError("entries.json: not a list")
    entries = tuple(_entry(item, i) for i, item in enumerate(raw))
    names = [e.name for e in entries]
    for name in names:
        if names.count(name) > 1:
            raise GalleryError(f"entries.json: {name!r} appears {names.count(name)} times")
    for e in entries:
        if e.patch is not None and not (path.parent / e.patch).is_file():
            raise GalleryError(f"entries.json: {e.name}: no patch file {e.patch}")
    return entries


ENTRIES: tuple[Entry, ...] = load_entries()


def entry(name: str) -> Entry:
    """The entry called ``name`` (``<dialect>/<entry>``)."""
    for e in ENTRIES:
        if e.name == name:
            return e
    raise KeyError(f"no gallery entry {name!r}; known: {', '.join(e.name for e in ENTRIES)}")


# --------------------------------------------------------------------------- diffs
# A unified diff as `diff -u` / difflib / `git diff` write it: per file a
# `--- a/<path>` / `+++ b/<path>` pair (`/dev/null` on one side for a new or a
# deleted file) and hunks `@@ -<start>[,<count>] +<start>[,<count>] @@`.  Every
# hunk must apply at exactly the line it names (shifted by the earlier hunks of
# the same file) and its context and removed lines must match exactly.

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_IGNORED = ("diff ", "index ", "new file mode ", "deleted file mode ")
_NO_NEWLINE = "\\ No newline at end of file"


@dataclass
class _Hunk:
    old_start: int
    new_start: int
    old: list[str]
    new: list[str]


@dataclass
class _FilePatch:
    old_path: str | None  # None: a new file
    new_path: str | None  # None: the file is deleted
    hunks: list[_Hunk]


def _lines(text: str) -> list[str]:
    """Split on newlines only, each line keeping its newline."""
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _path(header: str, prefix: str, lineno: int) -> str | None:
    name = header.rstrip("\n").split("\t", 1)[0]
    if name == "/dev/null":
        return None
    if name.startswith(prefix):
        name = name[len(prefix) :]
    pure = PurePosixPath(name)
    if not name or pure.is_absolute() or ".." in pure.parts:
        raise GalleryError(f"line {lineno}: unsafe or empty path {name!r}")
    return str(pure)


def parse_diff(text: str) -> list[_FilePatch]:
    """Parse a unified diff; raise GalleryError on anything it does not expect."""
    lines = _lines(text)
    files: list[_FilePatch] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith(_IGNORED) or not line.strip():
            i += 1
            continue
        if not line.startswith("--- "):
            raise GalleryError(f"line {i + 1}: expected a '--- ' file header, got {line!r}")
        if i + 1 >= len(lines) or not lines[i + 1].startswith("+++ "):
            raise GalleryError(f"line {i + 2}: a '--- ' header must be followed by '+++ '")
        current = _FilePatch(_path(line[4:], "a/", i + 1), _path(lines[i + 1][4:], "b/", i + 2), [])
        if current.old_path is None and current.new_path is None:
            raise GalleryError(f"line {i + 1}: /dev/null on both sides")
        files.append(current)
        i += 2
        while i < len(lines) and lines[i].startswith("@@"):
            m = _HUNK.match(lines[i])
            if m is None:
                raise GalleryError(f"line {i + 1}: malformed hunk header {lines[i]!r}")
            old_count = 1 if m.group(2) is None else int(m.group(2))
            new_count = 1 if m.group(4) is None else int(m.group(4))
            hunk = _Hunk(int(m.group(1)), int(m.group(3)), [], [])
            i += 1
            while len(hunk.old) < old_count or len(hunk.new) < new_count:
                if i >= len(lines):
                    raise GalleryError("the diff ends inside a hunk")
                body = lines[i]
                tag, content = body[:1], body[1:]
                if tag == " ":
                    hunk.old.append(content)
                    hunk.new.append(content)
                elif tag == "-":
                    hunk.old.append(content)
                elif tag == "+":
                    hunk.new.append(content)
                else:
                    raise GalleryError(f"line {i + 1}: unexpected line in a hunk: {body!r}")
                i += 1
                if i < len(lines) and lines[i].rstrip("\n") == _NO_NEWLINE:
                    # the line just read has no newline in its file (or both)
                    if tag in " -":
                        hunk.old[-1] = hunk.old[-1].rstrip("\n")
                    if tag in " +":
                        hunk.new[-1] = hunk.new[-1].rstrip("\n")
                    i += 1
            if len(hunk.old) != old_count or len(hunk.new) != new_count:
                raise GalleryError(f"line {i}: hunk line counts do not match its header")
            current.hunks.append(hunk)
        if not current.hunks:
            raise GalleryError(f"{current.new_path or current.old_path}: a file without hunks")
    if not files:
        raise GalleryError("an empty diff")
    return files


def _apply_hunks(path: str, original: list[str], hunks: list[_Hunk]) -> list[str]:
    result = list(original)
    shift = 0
    for number, hunk in enumerate(hunks, 1):
        # a hunk that removes and keeps nothing names the line before it
        start = hunk.old_start - 1 if hunk.old else hunk.old_start
        at = start + shift
        found = result[at : at + len(hunk.old)]
        if at < 0 or found != hunk.old:
            for k, want in enumerate(hunk.old):
                got = result[at + k] if 0 <= at + k < len(result) else "<end of file>"
                if got != want:
                    raise GalleryError(
                        f"{path}: hunk {number} does not apply at line {start + 1}: "
                        f"line {at + k + 1} is {got!r}, the diff expects {want!r}"
                    )
            raise GalleryError(f"{path}: hunk {number} does not apply at line {start + 1}")
        result[at : at + len(hunk.old)] = hunk.new
        shift += len(hunk.new) - len(hunk.old)
    return result


def apply_diff(text: str, root: Path) -> None:
    """Apply a unified diff to the files under ``root``: all or nothing."""
    writes: dict[Path, str] = {}
    deletes: list[Path] = []
    for fp in parse_diff(text):
        if fp.old_path is None:
            assert fp.new_path is not None
            target = root / fp.new_path
            if target.exists() or target in writes:
                raise GalleryError(f"{fp.new_path}: the diff creates it, but it exists")
            writes[target] = "".join(_apply_hunks(fp.new_path, [], fp.hunks))
            continue
        source = root / fp.old_path
        if source in writes:
            original = _lines(writes[source])
        elif source.is_file() and source not in deletes:
            original = _lines(source.read_text(encoding="utf-8"))
        else:
            raise GalleryError(f"{fp.old_path}: the diff changes it, but there is no such file")
        result = _apply_hunks(fp.old_path, original, fp.hunks)
        if fp.new_path is None:
            if result:
                raise GalleryError(f"{fp.old_path}: the diff deletes it but leaves lines in it")
            writes.pop(source, None)
            deletes.append(source)
            continue
        if fp.new_path != fp.old_path:
            deletes.append(source)
            writes.pop(source, None)
        writes[root / fp.new_path] = "".join(result)
    for path in deletes:
        path.unlink()
    for path, content in writes.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")


def materialize(name: str, dest: Path) -> Path:
    """Write entry ``name`` as a package folder ``dest/<dialect>/<entry>`` and return it.

    The folder is a copy of the dialect's base (with its snapshot_test.go and
    test_data/) with the entry's diff applied.  It must not exist yet."""
    e = entry(name)
    target = dest / e.dialect / e.entry
    if target.exists():
        raise FileExistsError(f"{target} exists")
    shutil.copytree(GALLERY / e.dialect / "base", target)
    if e.patch is not None:
        try:
            apply_diff((GALLERY / e.patch).read_text(encoding="utf-8"), target)
        except GalleryError as exc:
            shutil.rmtree(target)
            raise GalleryError(f"{e.name}: {exc}") from exc
    return target


def main(argv: list[str]) -> int:
    """``python -m tests.cos418_gallery OUT``: write every entry under OUT and list them
    (entry, expected verdict, folder) under a header; exit 0.  An OUT that already
    holds an entry's folder is refused before anything is written (exit 5): the
    folders are never overwritten, since they may hold a user's changes."""
    if len(argv) != 1:
        print("usage: python -m tests.cos418_gallery OUT", file=sys.stderr)
        return 2
    out = Path(argv[0])
    taken = [e for e in ENTRIES if (out / e.dialect / e.entry).exists()]
    if taken:
        first = out / taken[0].dialect / taken[0].entry
        print(
            f"error: {out} already holds the gallery ({len(taken)} of its {len(ENTRIES)}"
            f" entry folders exist, e.g. {first}): they are never overwritten; remove"
            f" {out} first, or give another folder",
            file=sys.stderr,
        )
        return 5
    print(f"{'entry':34} {'expect':10} folder")
    for e in ENTRIES:
        print(f"{e.name:34} {e.expect:10} {materialize(e.name, out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
