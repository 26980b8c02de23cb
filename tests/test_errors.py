"""The error catalogue cannot drift: these tests read every ``RL-*`` code in the source.

Every code used anywhere under ``redletter/`` (the symlinked layers followed) is
in :data:`redletter.errors.CATALOGUE`, every catalogued code is still used, the
exit code and class of an entry match the class that raises it wherever the
source says which class that is, and ``docs/errors.md`` is the catalogue's
current rendering.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from redletter import errors
from redletter.errors import (
    CATALOGUE,
    CODES,
    DOC,
    EnvironmentMissing,
    ErrorCode,
    Exit,
    InputError,
    InternalError,
    LocatedError,
    RedletterError,
    SpecError,
    advice,
    describe,
    nearest,
)

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "redletter"
CODE_RE = re.compile(r"RL-[A-Z0-9]+(?:-[A-Z0-9]+)*")
#: Who raises a code when no exception class does (the command room's handlers).
COMMAND_LINE = "the command line"

#: (code, class) pairs raised today against the catalogue, each with its reason.
#: A fix in the raising code makes the pair disappear, and then this test asks
#: for the entry to be removed here.
KNOWN_MISMATCHES: dict[tuple[str, str], str] = {
    # conformance/driver.py: "the driver must init the nodes before any step" is a
    # bug of the caller, raised as InputError (exit 5) under RL-INTERNAL (exit 4);
    # it should be an InternalError.
    ("RL-INTERNAL", "InputError"): "an internal misuse raised as InputError",
}


def test_docs_are_up_to_date() -> None:
    committed = (ROOT / DOC).read_text(encoding="utf-8")
    assert committed == errors.render_markdown(), (
        "docs/errors.md is stale: run `python -m redletter.errors > docs/errors.md`"
    )


# --------------------------------------------------------------------------- the scan


@dataclass(frozen=True)
class Use:
    """One ``RL-*`` literal in the source, with the class it is raised with (if known)."""

    code: str
    where: str  #: path:line
    raised_by: str | None


@dataclass(frozen=True)
class ErrorClass:
    """A subclass of RedletterError as the source defines it."""

    name: str
    where: str
    bases: tuple[str, ...]
    code: str | None  #: its class-level ``code = "RL-..."``
    exit: ast.expr | None  #: its class-level ``exit_code = ...``


@cache
def _modules() -> tuple[tuple[Path, ast.Module], ...]:
    """Every module under redletter/ (the symlinked layers followed), once each,
    parsed once a process (the scans below each walk every one)."""
    seen: set[Path] = set()
    out: list[tuple[Path, ast.Module]] = []
    for d, _, fs in sorted(os.walk(PACKAGE, followlinks=True)):
        for f in sorted(fs):
            path = Path(d) / f
            if f.endswith(".py") and path.resolve() not in seen:
                seen.add(path.resolve())
                out.append((path, ast.parse(path.read_text(encoding="utf-8"))))
    return tuple(out)


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value  # a string annotation
    return None


def _code(node: ast.expr | None) -> str | None:
    value = node.value if isinstance(node, ast.Constant) else None
    return value if isinstance(value, str) and CODE_RE.fullmatch(value) else None


def _catalogue_nodes(tree: ast.Module) -> set[int]:
    """The ids of the nodes inside ``CATALOGUE = (...)``: the registry is not a use."""
    out: set[int] = set()
    for node in tree.body:
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if any(isinstance(t, ast.Name) and t.id == "CATALOGUE" for t in targets):
            out |= {id(n) for n in ast.walk(node)}
    return out


@cache
def error_classes() -> dict[str, ErrorClass]:
    """Every class deriving (by name) from RedletterError, by name."""
    found: list[ErrorClass] = []
    for path, tree in _modules():
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            code: str | None = None
            exit_: ast.expr | None = None
            for stmt in node.body:
                if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                    target, value = stmt.targets[0], stmt.value
                elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                    target, value = stmt.target, stmt.value
                else:
                    continue
                if isinstance(target, ast.Name) and target.id == "code":
                    code = _code(value)
                elif isinstance(target, ast.Name) and target.id == "exit_code":
                    exit_ = value
            bases = tuple(b for b in map(_name, node.bases) if b is not None)
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            found.append(ErrorClass(node.name, where, bases, code, exit_))
    known = {"RedletterError"}
    grew = True
    while grew:
        grew = False
        for c in found:
            if c.name not in known and any(b in known for b in c.bases):
                known.add(c.name)
                grew = True
    out: dict[str, ErrorClass] = {}
    for c in found:
        if c.name in known:
            assert c.name not in out, f"two classes named {c.name}: {out[c.name].where}, {c.where}"
            out[c.name] = c
    return out


def exit_of(name: str) -> Exit:
    """The exit code of error class ``name``, read from the source (inherited if unset)."""
    c = error_classes()[name]
    if c.exit is None:
        base = next(b for b in c.bases if b in error_classes())
        return exit_of(base)
    if isinstance(c.exit, ast.Attribute) and isinstance(c.exit.value, ast.Name):
        if c.exit.value.id == "Exit":
            return Exit[c.exit.attr]
        if c.exit.attr == "exit_code":  # exit_code = EnvironmentMissing.exit_code
            return exit_of(c.exit.value.id)
    raise AssertionError(f"{c.where}: cannot read the exit_code of {name}")


def code_of(name: str) -> str:
    c = error_classes()[name]
    if c.code is not None:
        return c.code
    return code_of(next(b for b in c.bases if b in error_classes()))


@cache
def uses() -> tuple[Use, ...]:
    """Every ``RL-*`` literal in the source, with the class raising it where it can be read."""
    classes = error_classes()
    out: list[Use] = []
    for path, tree in _modules():
        rel = path.relative_to(ROOT)
        skip = _catalogue_nodes(tree)
        nodes = list(ast.walk(tree))  # walked once: three passes read it
        # Module-level constants holding a code (CODE = "RL-INPUT-LOG").
        constants: dict[str, str] = {}
        # Functions of this module that return an error and take a code (_line_error).
        makers: dict[str, str] = {}
        for stmt in tree.body:  # CODE = "..." or CODE: Final = "..."
            if isinstance(stmt, ast.Assign | ast.AnnAssign) and _code(stmt.value) is not None:
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                constants |= {
                    t.id: str(_code(stmt.value)) for t in targets if isinstance(t, ast.Name)
                }
        for fn in nodes:
            if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) and fn.returns:
                ret = _name(fn.returns)
                if ret in classes:
                    makers[fn.name] = ret
        attributed: dict[int, str] = {}  # id of the literal node -> class name
        for node in nodes:
            if isinstance(node, ast.ClassDef) and node.name in classes:
                for stmt in node.body:
                    if isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None:
                        attributed[id(stmt.value)] = node.name
            if not isinstance(node, ast.Call):
                continue
            callee = _name(node.func)
            if callee in classes:
                for kw in node.keywords:
                    if kw.arg != "code":
                        continue
                    attributed[id(kw.value)] = callee
                    ref = _name(kw.value) if not isinstance(kw.value, ast.Constant) else None
                    if ref in constants:  # code=CODE
                        out.append(Use(constants[ref], f"{rel}:{node.lineno}", callee))
            elif callee in makers:
                for arg in [*node.args, *(kw.value for kw in node.keywords)]:
                    if _code(arg) is not None:
                        attributed[id(arg)] = makers[callee]
        for lit in nodes:
            code = _code(lit) if isinstance(lit, ast.expr) else None
            if code is not None and id(lit) not in skip:
                lineno = getattr(lit, "lineno", 0)
                out.append(Use(code, f"{rel}:{lineno}", attributed.get(id(lit))))
    return tuple(out)


# --------------------------------------------------------------------------- the tests


def test_the_scan_reads_the_kit() -> None:
    """The scan itself works: it sees the layers and the known ways of passing a code."""
    where = {u.where.split(":")[0] for u in uses()}
    assert any(w.startswith("redletter/python_model/") for w in where)
    assert any(w.startswith("redletter/conformance/") for w in where)
    assert any(w.startswith("redletter/pipeline/") for w in where)
    attributed = {(u.code, u.raised_by) for u in uses()}
    assert ("RL-INPUT-LOG", "InputError") in attributed  # via CODE = "RL-INPUT-LOG"
    assert ("RL-PROTO-JSON", "InputError") in attributed  # via _line_error(..., code)
    assert ("RL-NODE-TIMEOUT", "NodeTimeout") in attributed  # class-level code
    assert ("RL-ENV-TLC", "ToolchainError") in attributed
    assert len(CATALOGUE) >= 53


def test_the_static_reading_agrees_with_the_classes() -> None:
    for cls in (RedletterError, EnvironmentMissing, InputError, SpecError, InternalError):
        assert exit_of(cls.__name__) == cls.exit_code
        assert code_of(cls.__name__) == cls.code


def test_every_code_used_is_catalogued() -> None:
    missing = sorted({f"{u.code} ({u.where})" for u in uses() if u.code not in CODES})
    assert not missing, (
        "codes used in the source but not in redletter/errors.py's CATALOGUE (add an"
        " entry, then regenerate docs/errors.md): " + ", ".join(missing)
    )


def test_every_catalogued_code_is_used() -> None:
    used = {u.code for u in uses()}
    stale = sorted(e.code for e in CATALOGUE if e.code not in used)
    assert not stale, "catalogued codes no longer used anywhere: " + ", ".join(stale)


def test_each_code_is_raised_by_its_classes_with_its_exit_code() -> None:
    problems: set[str] = set()
    seen: set[tuple[str, str]] = set()
    for u in uses():
        if u.raised_by is None or u.code not in CODES:
            continue
        entry = CODES[u.code]
        pair = (u.code, u.raised_by)
        seen.add(pair)
        if pair in KNOWN_MISMATCHES:
            continue
        if u.raised_by not in entry.raised_by:
            problems.add(f"{u.where}: {u.code} is raised by {u.raised_by}, not listed")
        got = exit_of(u.raised_by)
        if got != entry.exit:
            problems.add(
                f"{u.where}: {u.code} is raised by {u.raised_by} (exit {int(got)}),"
                f" catalogued with exit {int(entry.exit)}"
            )
    assert not problems, "\n".join(sorted(problems))
    fixed = sorted(str(p) for p in KNOWN_MISMATCHES if p not in seen)
    assert not fixed, f"fixed in the source, remove from KNOWN_MISMATCHES: {fixed}"


def test_each_listed_class_exists_with_the_entry_exit_code() -> None:
    classes = error_classes()
    for e in CATALOGUE:
        for name in e.raised_by:
            if name == COMMAND_LINE:
                continue
            assert name in classes, f"{e.code}: no error class named {name}"
            assert exit_of(name) == e.exit, f"{e.code}: {name} exits {exit_of(name)}"


def test_every_class_level_code_is_its_own_entry() -> None:
    for name, c in error_classes().items():
        if c.code is not None:
            assert name in CODES[c.code].raised_by, f"{c.where}: {name} not in {c.code}"


# --------------------------------------------------------------------------- the entries


def test_entries_are_well_formed() -> None:
    assert len(CODES) == len(CATALOGUE), "a code is catalogued twice"
    for e in CATALOGUE:
        assert CODE_RE.fullmatch(e.code), e.code
        assert isinstance(e.exit, Exit) and e.exit != Exit.OK, e.code
        assert e.raised_by, e.code
        for text in (e.meaning, e.remedy, e.see):
            assert "\n" not in text and text == text.strip(), e.code
            assert not text.endswith("."), f"{e.code}: no final period (advice adds one)"
        assert e.meaning and e.remedy, e.code
    assert len({e.anchor for e in CATALOGUE}) == len(CATALOGUE)


def test_the_places_to_read_more_exist() -> None:
    for e in CATALOGUE:
        if not e.see or e.see.startswith("https://"):
            continue
        file, _, section = e.see.partition(", section ")
        assert (ROOT / file).is_file(), f"{e.code}: {file} does not exist"
        if section:
            title = section.split("”")[0].strip("“")
            text = (ROOT / file).read_text(encoding="utf-8")
            headings = {ln.lstrip("#").strip() for ln in text.splitlines() if ln[:1] == "#"}
            assert title in headings, f"{e.code}: no section “{title}” in {file}"


def test_describe_and_advice() -> None:
    root = describe("RL-INPUT-ROOT")
    assert isinstance(root, ErrorCode) and root.exit == Exit.BAD_INPUT
    assert root.link == "docs/errors.md#rl-input-root"
    line = advice("RL-INPUT-ROOT")
    assert line == root.remedy + "; see docs/errors.md#rl-input-root"
    assert "\n" not in line
    with pytest.raises(KeyError, match="RL-NOPE is not in the error catalogue"):
        describe("RL-NOPE")
    # advice never fails: an unknown code gets its family's advice.
    assert nearest("RL-INPUT-NEWTHING") == CODES["RL-INPUT"]
    assert advice("RL-INPUT-NEWTHING").endswith("see docs/errors.md#rl-input")
    assert nearest("nonsense") == CODES["RL-ERROR"]


def test_every_anchor_is_in_the_docs() -> None:
    doc = errors.render_markdown()
    for e in CATALOGUE:
        assert f"\n### {e.code}\n" in doc
        assert f"](#{e.anchor})" in doc


# --------------------------------------------------------------------------- located errors


@pytest.mark.parametrize("cls", [InputError, SpecError])
def test_located_errors_share_one_form(cls: type[LocatedError]) -> None:
    assert issubclass(cls, LocatedError)
    e = cls("expected a value", path="spec/MC.cfg", line=3, code="RL-X")
    assert (e.message, str(e), e.path, e.line, e.code) == (
        "spec/MC.cfg:3: expected a value",
        "spec/MC.cfg:3: expected a value",
        "spec/MC.cfg",
        3,
        "RL-X",
    )
    assert cls("oops", path="f.json").message == "f.json: oops"
    assert cls("oops", line=4).message == "oops"
    plain = cls("oops")
    assert (plain.message, plain.path, plain.line, plain.code) == ("oops", None, None, cls.code)
    assert InputError("x").exit_code == Exit.BAD_INPUT
    assert SpecError("x").exit_code == Exit.FAIL
