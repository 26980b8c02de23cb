r"""Temporal formulas read from the spec's own text: fairness and liveness properties.

The liveness check must use the fairness of the cfg's SPECIFICATION and the
properties its PROPERTIES name, as TLC does, without a second copy of them in
Python.  This module reads them from the modules TLC reads: the model's ``MC*.tla``,
every module it EXTENDS and every module it instantiates without a name
(``INSTANCE ChandyLamport WITH ...``), and parses the small fragment of TLA+ that
temporal formulas of this kind are written in:

* fairness: conjunctions of ``WF_v(A(args))`` / ``SF_v(A(args))`` under ``\A x \in S :``
  quantifiers, reached through definitions (``ProgressSpec == FairSpec /\ Progress``);
  ``Init`` and ``[][Next]_vars`` are recognised and left to the engine;
* properties: ``P ~> Q``, ``[]<>P``, ``<>[]P``, ``<>P`` and ``[]P`` under ``\A``
  quantifiers and conjunctions, where ``P`` and ``Q`` are state predicates built with
  ``/\``, ``\/``, ``~``, ``=>``, ``TRUE``/``FALSE`` from operator applications
  (``Started(k)``).  An application the engine mirrors (:meth:`Engine.predicate`) is
  evaluated by the engine; any other is expanded from its definition, so
  ``InProgress(k) == Started(k) /\ ~Complete(k)`` needs nothing more.

Anything outside the fragment is refused with :class:`UnsupportedFormula` naming the
file, the line and the piece not understood, never guessed.

Why by hand: no Python library parses TLA+ (SANY is Java and gives no AST in 2.15's
command line), and the fragment is a few dozen lines of recursive descent.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from redletter.errors import SpecError
from redletter.python_model.values import Value, parse_value, print_value, sort_key

__all__ = [
    "Fairness",
    "Property",
    "TemporalSpec",
    "UnsupportedFormula",
    "read_definitions",
    "read_module_uses",
    "read_temporal",
]

#: Modules of the standard library: no definitions of the spec's own in them.
STANDARD: Final = frozenset(
    {"Naturals", "Integers", "Sequences", "FiniteSets", "TLC", "Bags", "Reals", "TLCExt"}
)


class UnsupportedFormula(SpecError):
    """A temporal formula outside the fragment the Python liveness check reads."""

    code = "RL-SPEC-TEMPORAL"


@dataclass(frozen=True)
class Definition:
    """``name(params) == body`` in ``path`` at ``line`` (body on one line, comments out)."""

    name: str
    params: tuple[str, ...]
    body: str
    path: Path
    line: int


@dataclass(frozen=True)
class Fairness:
    """One fairness condition: ``kind`` ``"WF"`` or ``"SF"`` of action ``name(args)``
    (subscript ``sub``, the spec's ``vars``)."""

    kind: str
    name: str
    args: tuple[Value, ...]
    sub: str

    def show(self) -> str:
        inner = ", ".join(print_value(a) for a in self.args)
        return (
            f"{self.kind}_{self.sub}({self.name}({inner}))"
            if self.args
            else (f"{self.kind}_{self.sub}({self.name})")
        )


@dataclass(frozen=True)
class Property:
    """One instance of a temporal property.

    ``form`` is ``"leadsto"`` (``p ~> q``), ``"always-eventually"`` (``[]<>p``),
    ``"eventually-always"`` (``<>[]p``), ``"eventually"`` (``<>p``) or ``"always"``
    (``[]p``); ``q`` is used by ``leadsto`` only.  ``label`` is the property's name
    with the values of its quantifiers (``SnapshotsComplete[k = 1]``) and ``text`` the
    formula with them substituted, for messages.
    """

    name: str
    label: str
    form: str
    p: Callable[[Any], bool]
    q: Callable[[Any], bool] | None
    text: str


@dataclass(frozen=True)
class TemporalSpec:
    """The fairness of a SPECIFICATION and the instances of the temporal properties."""

    specification: str
    fairness: tuple[Fairness, ...]
    properties: tuple[Property, ...]
    names: tuple[str, ...] = field(default=())  #: the cfg's temporal property names


# --------------------------------------------------------------------------- modules

_BLOCK_COMMENT = re.compile(r"\(\*.*?\*\)", re.DOTALL)
_DEF = re.compile(r"^(?:LOCAL\s+)?([A-Za-z_]\w*)\s*(?:\(([^)]*)\))?\s*==(?!=)(.*)$")
_INSTANCE = re.compile(r"^(?:LOCAL\s+)?INSTANCE\s+(\w+)")


def _strip_line_comment(line: str) -> str:
    in_str = False
    i = 0
    while i < len(line):
        ch = line[i]
        if in_str:
            if ch == "\\":
                i += 2
                continue
            if ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif line.startswith("\\*", i):
            return line[:i]
        i += 1
    return line


def _read_module(path: Path, source: str | None = None) -> tuple[list[str], list[Definition]]:
    """The modules ``path`` EXTENDS or instantiates unnamed, and its definitions
    (``source``: the module's text, when it is not read from ``path``)."""
    raw_text = path.read_text(encoding="utf-8") if source is None else source
    text = _BLOCK_COMMENT.sub(lambda m: "\n" * m.group().count("\n"), raw_text)
    uses: list[str] = []
    defs: list[Definition] = []
    cur: tuple[str, tuple[str, ...], int, list[str]] | None = None
    in_extends = False

    def close() -> None:
        nonlocal cur
        if cur is not None:
            name, params, line, body = cur
            defs.append(Definition(name, params, "\n".join(body).rstrip(), path, line))
        cur = None

    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = _strip_line_comment(raw).rstrip()
        if not line.strip():
            continue
        if line.startswith("===="):
            break
        starts_col0 = not line[:1].isspace()
        if starts_col0:
            close()
            in_extends = False
        if line.startswith("----") or re.match(r"^-+\s*MODULE", line):
            continue
        if line.startswith("EXTENDS"):
            uses += [x.strip() for x in line[len("EXTENDS") :].split(",") if x.strip()]
            in_extends = True
            continue
        if in_extends and not starts_col0:
            uses += [x.strip() for x in line.split(",") if x.strip()]
            continue
        m = _INSTANCE.match(line) if starts_col0 else None
        if m is not None:
            uses.append(m.group(1))
            continue
        m = _DEF.match(line) if starts_col0 else None
        if m is not None:
            params = tuple(p.strip() for p in (m.group(2) or "").split(",") if p.strip())
            # the body keeps its columns: bulleted /\ lists are split by alignment
            col = len(line) - len(m.group(3))
            cur = (m.group(1), params, lineno, [" " * col + m.group(3)])
            continue
        if cur is not None and not starts_col0:
            cur[3].append(line)
    close()
    return uses, defs


def read_module_uses(tla_path: Path, source: str | None = None) -> list[str]:
    """The modules ``tla_path`` EXTENDS or instantiates unnamed (its own lines only;
    ``source``: its text, when it is not read from the file, e.g. a trace's model)."""
    return _read_module(tla_path, source)[0]


def read_definitions(tla_path: Path) -> dict[str, Definition]:
    """Every definition visible in the model ``tla_path``: its own, then those of the
    modules it extends or instantiates unnamed, depth first (the first one wins)."""
    out: dict[str, Definition] = {}
    seen: set[str] = set()

    def visit(path: Path) -> None:
        if path.stem in seen:
            return
        seen.add(path.stem)
        uses, defs = _read_module(path)
        for d in defs:
            out.setdefault(d.name, d)
        for mod in uses:
            if mod not in STANDARD and (path.parent / f"{mod}.tla").is_file():
                visit(path.parent / f"{mod}.tla")

    visit(tla_path)
    return out


# --------------------------------------------------------------------------- parsing

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<str>"(?:[^"\\]|\\.)*")
      | (?P<num>\d+)
      | (?P<fair>[WS]F_)
      | (?P<op>\\A|\\E|\\in|\\/|/\\|~>|=>|\[\]|<>|<<|>>|==|[~()\[\],:{}=_])
      | (?P<id>[A-Za-z][\w]*(?:![A-Za-z]\w*)*)
    )""",
    re.VERBOSE,
)

# AST: tuples, tagged by their first element.
Node = tuple[Any, ...]


def _tokens(text: str, where: Definition) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise _unsupported(where, f"cannot read {text[pos:].strip()[:40]!r}")
        kind = m.lastgroup or ""
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


def _unsupported(d: Definition, what: str) -> UnsupportedFormula:
    return UnsupportedFormula(
        f"{d.name}: {what} (the Python liveness check reads fairness WF_/SF_ under \\A "
        "and properties ~>, []<>, <>[], <>, [] of state predicates)",
        path=str(d.path),
        line=d.line,
    )


class _Parser:
    """Recursive descent over one definition's tokens."""

    def __init__(self, d: Definition, text: str) -> None:
        self.d = d
        self.toks = _tokens(text, d)
        self.i = 0

    def peek(self) -> str | None:
        return self.toks[self.i][1] if self.i < len(self.toks) else None

    def take(self, want: str | None = None) -> str:
        if self.i >= len(self.toks):
            raise _unsupported(self.d, "unexpected end of formula")
        tok = self.toks[self.i][1]
        if want is not None and tok != want:
            raise _unsupported(self.d, f"expected {want!r}, found {tok!r}")
        self.i += 1
        return tok

    def parse(self) -> Node:
        e = self.expr()
        if self.i != len(self.toks):
            raise _unsupported(self.d, f"unexpected {self.peek()!r}")
        return e

    def expr(self) -> Node:
        if self.peek() in ("\\A", "\\E"):
            q = self.take()
            var = self.take()
            self.take("\\in")
            dom = self.binary(0)
            self.take(":")
            return ("quant", q, var, dom, self.expr())
        return self.binary(0)

    _LEVELS: Final = (("~>",), ("=>",), ("\\/",), ("/\\",), ("=",))

    def binary(self, level: int) -> Node:
        if level == len(self._LEVELS):
            return self.unary()
        ops = self._LEVELS[level]
        if self.peek() in ops and level >= 2:  # a leading bullet
            self.take()
        left = self.binary(level + 1)
        while self.peek() in ops:
            op = self.take()
            right = self.expr() if self.peek() in ("\\A", "\\E") else self.binary(level + 1)
            left = ("bin", op, left, right)
        return left

    def unary(self) -> Node:
        tok = self.peek()
        if tok in ("[]", "<>", "~"):
            self.take()
            return ("un", tok, self.unary())
        if tok in ("WF_", "SF_"):
            self.take()
            sub = self.take()
            self.take("(")
            act = self.expr()
            self.take(")")
            return ("fair", tok[:2], sub, act)
        if tok == "[":  # [A]_v: an action formula (the spec's [][Next]_vars)
            self.take()
            act = self.expr()
            self.take("]")
            self.take("_")
            return ("box", act, self.take())
        if tok == "(":
            self.take()
            e = self.expr()
            self.take(")")
            return e
        if tok == "<<":
            self.take()
            items = [] if self.peek() == ">>" else self.args(">>")
            self.take(">>")
            return ("tuple", tuple(items))
        kind = self.toks[self.i][0] if self.i < len(self.toks) else ""
        if kind in ("str", "num"):
            return ("lit", parse_value(self.take()))
        if kind == "id":
            name = self.take()
            if name in ("TRUE", "FALSE"):
                return ("lit", parse_value(name))
            args: list[Node] = []
            if self.peek() == "(":
                self.take()
                args = self.args(")")
                self.take(")")
            return ("app", name, tuple(args))
        raise _unsupported(self.d, f"unexpected {tok!r}")

    def args(self, close: str) -> list[Node]:
        out = [self.expr()]
        while self.peek() == ",":
            self.take()
            out.append(self.expr())
        return out


def _bullets(body: str) -> str:
    """A bulleted ``/\\`` (or ``\\/``) list laid out by columns, as one parenthesised
    conjunction: each bullet at the first bullet's column starts a new item."""
    lines = body.split("\n")
    while len(lines) > 1 and not lines[0].strip():  # `Name ==` alone on its line
        lines = lines[1:]
    first = lines[0].lstrip()
    bullet = first[:2]
    if bullet not in ("/\\", "\\/"):
        return " ".join(x.strip() for x in lines)
    col = len(lines[0]) - len(first)
    items: list[list[str]] = []
    for ln in lines:
        stripped = ln.lstrip()
        at = len(ln) - len(stripped)
        if at == col and stripped.startswith(bullet):
            items.append([stripped[2:]])
        elif items:
            items[-1].append(ln.strip())
    joiner = " /\\ " if bullet == "/\\" else " \\/ "
    return joiner.join("(" + " ".join(it) + ")" for it in items)


_TEMPORAL_HINT: Final = re.compile(r"WF_|SF_|\[\]|<>|~>")
_WORD: Final = re.compile(r"[A-Za-z]\w*")


class _Reader:
    def __init__(self, defs: Mapping[str, Definition], engine: Any) -> None:
        self.defs = defs
        self.engine = engine
        self._ast: dict[str, Node] = {}

    def ast(self, d: Definition) -> Node:
        got = self._ast.get(d.name)
        if got is None:
            got = self._ast[d.name] = _Parser(d, _bullets(d.body)).parse()
        return got

    def temporal(self, d: Definition, depth: int = 0) -> bool:
        """Does ``d`` use a temporal operator, itself or through a definition it names?"""
        if _TEMPORAL_HINT.search(d.body):
            return True
        if depth > 50:
            return False
        return any(
            self.temporal(self.defs[w], depth + 1)
            for w in set(_WORD.findall(d.body))
            if w in self.defs and w != d.name and not self.defs[w].params
        )

    def lookup(self, name: str, where: Definition) -> Definition:
        d = self.defs.get(name)
        if d is None:
            raise _unsupported(where, f"{name} is not defined in the spec's modules")
        return d

    # ---------------------------------------------------------------- values

    def value(self, e: Node, env: Mapping[str, Value], where: Definition) -> Value:
        tag = e[0]
        if tag == "lit":
            v: Value = e[1]
            return v
        if tag == "tuple":
            return tuple(self.value(x, env, where) for x in e[1])
        if tag == "app" and not e[2]:
            name = e[1]
            if name in env:
                return env[name]
            try:
                return self.engine.constant(name)  # type: ignore[no-any-return]
            except KeyError:
                pass
        raise _unsupported(where, f"cannot evaluate {_show(e)} to a value")

    def domain(self, e: Node, env: Mapping[str, Value], where: Definition) -> list[Value]:
        v = self.value(e, env, where)
        if not isinstance(v, frozenset):
            raise _unsupported(where, f"{_show(e)} is not a set")
        return sorted(v, key=sort_key)

    # ---------------------------------------------------------------- fairness

    def fairness(self, e: Node, env: dict[str, Value], where: Definition) -> Iterator[Fairness]:
        tag = e[0]
        if tag == "quant":
            _, q, var, dom, body = e
            if q != "\\A":
                raise _unsupported(where, "fairness under \\E")
            for x in self.domain(dom, env, where):
                yield from self.fairness(body, {**env, var: x}, where)
        elif tag == "bin" and e[1] == "/\\":
            yield from self.fairness(e[2], env, where)
            yield from self.fairness(e[3], env, where)
        elif tag == "fair":
            _, kind, sub, act = e
            if act[0] != "app":
                raise _unsupported(where, f"{kind}_{sub} of {_show(act)}, not of A(args)")
            args = tuple(self.value(a, env, where) for a in act[2])
            yield Fairness(kind, act[1], args, sub)
        elif tag == "box":
            return  # [][Next]_vars: the engine's next-state relation
        elif tag == "app" and not e[2]:
            d = self.lookup(e[1], where)
            if d.params or not self.temporal(d):
                return  # Init, or another state predicate: not fairness
            yield from self.fairness(self.ast(d), env, d)
        elif tag == "un" and e[1] == "[]" and e[2][0] == "box":
            return
        else:
            raise _unsupported(where, f"{_show(e)} in a specification")

    # ---------------------------------------------------------------- predicates

    def predicate(
        self, e: Node, env: Mapping[str, Value], where: Definition, depth: int = 0
    ) -> tuple[Callable[[Any], bool], str]:
        tag = e[0]
        if depth > 50:
            raise _unsupported(where, "definitions nested too deep")
        if tag == "lit" and isinstance(e[1], bool):
            b = e[1]
            return (lambda s: b), str(b).upper()
        if tag == "un" and e[1] == "~":
            f, t = self.predicate(e[2], env, where, depth + 1)
            return (lambda s: not f(s)), f"~{t}"
        if tag == "bin" and e[1] in ("/\\", "\\/", "=>"):
            f, ft = self.predicate(e[2], env, where, depth + 1)
            g, gt = self.predicate(e[3], env, where, depth + 1)
            op = e[1]
            if op == "/\\":
                return (lambda s: f(s) and g(s)), f"({ft} /\\ {gt})"
            if op == "\\/":
                return (lambda s: f(s) or g(s)), f"({ft} \\/ {gt})"
            return (lambda s: not f(s) or g(s)), f"({ft} => {gt})"
        if tag == "app":
            name = e[1]
            args = tuple(self.value(a, env, where) for a in e[2])
            text = name + (f"({', '.join(print_value(a) for a in args)})" if args else "")
            mirrored = self.engine.predicate(name, args)
            if mirrored is not None:
                return mirrored, text
            d = self.defs.get(name)
            if d is not None and len(d.params) == len(args):
                f, _ = self.predicate(
                    self.ast(d), dict(zip(d.params, args, strict=True)), d, depth + 1
                )
                return f, text
            raise _unsupported(
                where, f"{text} is neither mirrored by the Python engine nor defined"
            )
        raise _unsupported(where, f"{_show(e)} is not a state predicate the check reads")

    # ---------------------------------------------------------------- properties

    def properties(
        self, name: str, e: Node, env: dict[str, Value], where: Definition
    ) -> Iterator[Property]:
        tag = e[0]
        if tag == "quant" and e[1] == "\\A":
            _, _, var, dom, body = e
            for x in self.domain(dom, env, where):
                yield from self.properties(name, body, {**env, var: x}, where)
            return
        if tag == "bin" and e[1] == "/\\":
            yield from self.properties(name, e[2], env, where)
            yield from self.properties(name, e[3], env, where)
            return
        if tag == "app" and not e[2] and e[1] in self.defs and not self.defs[e[1]].params:
            d = self.defs[e[1]]
            yield from self.properties(name, self.ast(d), env, d)
            return
        label = name + (
            "[" + ", ".join(f"{k} = {print_value(v)}" for k, v in env.items()) + "]" if env else ""
        )
        if tag == "bin" and e[1] == "~>":
            p, pt = self.predicate(e[2], env, where)
            q, qt = self.predicate(e[3], env, where)
            yield Property(name, label, "leadsto", p, q, f"{pt} ~> {qt}")
            return
        if tag == "un" and e[1] in ("[]", "<>"):
            inner = e[2]
            if inner[0] == "un" and inner[1] in ("[]", "<>") and inner[1] != e[1]:
                p, pt = self.predicate(inner[2], env, where)
                form = "always-eventually" if e[1] == "[]" else "eventually-always"
                yield Property(name, label, form, p, None, f"{e[1]}{inner[1]}{pt}")
                return
            p, pt = self.predicate(inner, env, where)
            form = "always" if e[1] == "[]" else "eventually"
            yield Property(name, label, form, p, None, f"{e[1]}{pt}")
            return
        raise _unsupported(where, f"{_show(e)} is not a temporal property the check reads")


def _show(e: Node) -> str:
    tag = e[0]
    if tag == "app":
        return str(e[1]) + (f"({', '.join(_show(a) for a in e[2])})" if e[2] else "")
    if tag == "lit":
        return repr(e[1])
    if tag == "bin":
        return f"{_show(e[2])} {e[1]} {_show(e[3])}"
    if tag == "un":
        return f"{e[1]}{_show(e[2])}"
    if tag == "fair":
        return f"{e[1]}_{e[2]}({_show(e[3])})"
    if tag == "quant":
        return f"{e[1]} {e[2]} \\in {_show(e[3])} : {_show(e[4])}"
    if tag == "box":
        return f"[{_show(e[1])}]_{e[2]}"
    return str(e)


def read_temporal(
    engine: Any,
    tla_path: Path,
    specification: str,
    properties: tuple[str, ...],
    overrides: Mapping[str, str] | None = None,
) -> TemporalSpec:
    """The fairness of ``specification`` and the instances of ``properties``, read
    from ``tla_path`` and the modules it uses; state predicates and constants come
    from ``engine`` (:meth:`Engine.predicate`, :meth:`Engine.constant`).  ``overrides``
    are the cfg's ``name <- [Module] definition`` bindings of definitions the formulas
    use (a must-fail model's weaker fairness): ``name`` reads as ``definition``."""
    defs = read_definitions(tla_path)
    for name, by in (overrides or {}).items():  # the cfg's `name <- [Module] by`
        if by in defs:
            defs[name] = replace(defs[by], name=name)
    reader = _Reader(defs, engine)
    root = Definition(specification, (), specification, tla_path, 0)
    spec_def = reader.lookup(specification, root)
    fair: list[Fairness] = []
    for f in reader.fairness(reader.ast(spec_def), {}, spec_def):
        if f.sub != "vars":
            raise _unsupported(
                spec_def, f"{f.show()}: only the subscript vars (all variables) is read"
            )
        if f not in fair:
            fair.append(f)
    props: list[Property] = []
    for name in properties:
        d = reader.lookup(name, root)
        props.extend(reader.properties(name, reader.ast(d), {}, d))
    return TemporalSpec(specification, tuple(fair), tuple(props), tuple(properties))
