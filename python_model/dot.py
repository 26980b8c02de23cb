r"""Streaming reader for the state graph TLC 2.15 writes with ``-dump dot,actionlabels``.

What TLC 2.15 writes (``tlc2.util.DotStateWriter``), one item per line::

    strict digraph DiskGraph {
    edge [colorscheme="paired12"]                        (only with ``colorize``)
    nodesep=0.35;
    subgraph cluster_graph {
    color="white";
    -5908926070601792343 [label="/\\ x = 0\n/\\ y = \"a\"",style = filled]
    -5908926070601792343 -> 650361696926877038 [label="Next",color="black",fontcolor="black"];
    650361696926877038 [label="/\\ x = 1\n/\\ y = \"a\""];
    {rank = same; -5908926070601792343;}
    }
    subgraph cluster_legend {...}                        (only with ``colorize``)
    }

* node ids are the states' signed 64-bit fingerprints; an initial state's line ends
  ``",style = filled]`` (no ``;``), any other state's ``"];``;
* a label is ``TLCState.toString()`` with ``\`` -> ``\\``, ``"`` -> ``\"``, trimmed,
  then line breaks -> ``\n`` -- so a label never spans lines;
* every generated transition is an edge line, written *before* the line of the state
  it discovers, labelled with the action's name only (``""`` without ``actionlabels``;
  ``color`` is a number with ``colorize``); the same edge may appear more than once;
* ``a -> b;`` and ``a -> b [style="dashed"];`` (stuttering) are also accepted.

Lines are matched with plain string operations and two regular expressions; labels are
kept raw and unescaped/parsed only on demand.  pydot and networkx are not used: they
build the whole graph as Python objects from the whole text (a 1 GB dump does not fit)
and their grammar-based parsers are orders of magnitude slower than a line split.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import Final, TypeAlias

from redletter.errors import InputError
from redletter.python_model.values import State, parse_state

__all__ = [
    "DotEdge",
    "DotGraph",
    "DotItem",
    "DotNode",
    "iter_dot",
    "load_dot",
    "unescape_label",
]

_UNESCAPE_RE: Final = re.compile(r"\\(.)")
_UNESCAPES: Final = {"\\": "\\", '"': '"', "n": "\n"}
_INITIAL_END: Final = '",style = filled]'
_OTHER_END: Final = '"];'
_NODE_START: Final = ' [label="'
_EDGE_RE: Final = re.compile(
    r"(-?[0-9]+) -> (-?[0-9]+)"
    r'(?:;| \[label="((?:[^"\\]|\\.)*)",color="[^"]*",fontcolor="[^"]*"\];'
    r'| \[style="dashed"\];)'
)
_FP_RE: Final = re.compile(r"-?[0-9]+")
_OPENERS: Final = frozenset(
    {"strict digraph DiskGraph {", "digraph DiskGraph {", "subgraph cluster_graph {"}
)
_FIXED: Final = frozenset({"nodesep=0.35;", 'color="white";', 'edge [colorscheme="paired12"]', ""})
_LEGEND_OPEN: Final = "subgraph cluster_legend {"
_FP_FIRST: Final = frozenset("-0123456789")
_FP_MIN: Final = -(2**63)
_FP_MAX: Final = 2**63 - 1


def unescape_label(raw: str, *, path: str | None = None, line: int | None = None) -> str:
    r"""Undo TLC's label escaping (``\\``, ``\"``, ``\n``); anything else is an error."""
    if "\\" not in raw:
        return raw

    def sub(m: re.Match[str]) -> str:
        ch = m.group(1)
        if ch not in _UNESCAPES:
            raise InputError(
                f"expected one of \\\\ \\\" \\n after '\\' in a label, found '\\{ch}'",
                path=path,
                line=line,
                code="RL-INPUT-DOT",
            )
        return _UNESCAPES[ch]

    if (len(raw) - len(raw.rstrip("\\"))) % 2 == 1:
        raise InputError(
            "expected a character after '\\' at the end of a label",
            path=path,
            line=line,
            code="RL-INPUT-DOT",
        )
    return _UNESCAPE_RE.sub(sub, raw)


@dataclass(frozen=True)
class DotNode:
    """A state line: fingerprint, raw (escaped) label, and whether it is initial.

    ``label`` (unescaped text) and ``state`` (parsed) are computed on first use.
    """

    fp: int
    raw_label: str
    initial: bool
    path: str = field(compare=False, repr=False)
    line: int = field(compare=False)

    @cached_property
    def label(self) -> str:
        """The state as TLC printed it, line breaks restored."""
        return unescape_label(self.raw_label, path=self.path, line=self.line)

    @cached_property
    def state(self) -> State:
        """The parsed state; :class:`InputError` names the DOT file and line."""
        try:
            return parse_state(self.label)
        except InputError as e:
            raise InputError(
                f"in the label of state {self.fp}: {e.message}",
                path=self.path,
                line=self.line,
                code=e.code,
            ) from None


@dataclass(frozen=True, slots=True)
class DotEdge:
    """A transition line: source and target fingerprints and the action's name.

    ``action`` is ``None`` when TLC wrote no name (``-dump dot`` without
    ``actionlabels``, or a bare ``a -> b;``); ``stuttering`` for a dashed edge.
    """

    src: int
    action: str | None
    dst: int
    line: int = field(compare=False)
    stuttering: bool = False


DotItem: TypeAlias = DotNode | DotEdge


def _fp(text: str, path: str, line: int) -> int:
    # At most 20 characters (a sign and 19 digits) before int() converts them: a
    # fingerprint of thousands of digits is refused, not a bare ValueError.
    value = int(text) if len(text) <= 20 else _FP_MAX + 1
    if not _FP_MIN <= value <= _FP_MAX:
        raise InputError(
            f"expected a signed 64-bit fingerprint, found {text}",
            path=path,
            line=line,
            code="RL-INPUT-DOT",
        )
    return value


def _bad_line(text: str, path: str, line: int) -> InputError:
    shown = text if len(text) <= 60 else text[:57] + "..."
    return InputError(
        "expected a TLC 2.15 DOT line (a state '<fp> [label=\"...\"];', a transition "
        f"'<fp> -> <fp> [label=\"...\",...];' or graph syntax), found {shown!r}",
        path=path,
        line=line,
        code="RL-INPUT-DOT",
    )


def iter_dot(path: str | Path) -> Iterator[DotItem]:
    """Yield the nodes and edges of a TLC DOT dump in file order, one line at a time.

    Never holds more than one line in memory.  A line that is not TLC 2.15 DOT, or a
    file that ends before the graph is closed (TLC killed mid-run), raises
    :class:`InputError` with the file and line.
    """
    name = str(path)
    depth = 0
    started = False
    lineno = 0
    try:
        fh = open(path, encoding="utf-8", newline="\n")  # noqa: SIM115 - closed below
    except OSError as e:
        raise InputError(
            f"cannot read the DOT file: {e.strerror}", path=name, code="RL-INPUT-DOT"
        ) from None
    with fh:
        try:
            for raw in fh:
                lineno += 1
                text = raw[:-1] if raw.endswith("\n") else raw
                first = text[:1]
                if first in _FP_FIRST:
                    if not started or depth == 0:
                        raise _bad_line(text, name, lineno)
                    space = text.find(" ")
                    if text.startswith(_NODE_START, space):
                        if text.endswith(_OTHER_END):
                            initial = False
                            end = len(text) - len(_OTHER_END)
                        elif text.endswith(_INITIAL_END):
                            initial = True
                            end = len(text) - len(_INITIAL_END)
                        else:
                            raise InputError(
                                "expected a state line to end with '\"];' or '\",style = filled]'",
                                path=name,
                                line=lineno,
                                code="RL-INPUT-DOT",
                            )
                        fp_text = text[:space]
                        if not _FP_RE.fullmatch(fp_text):
                            raise _bad_line(text, name, lineno)
                        yield DotNode(
                            _fp(fp_text, name, lineno),
                            text[space + len(_NODE_START) : end],
                            initial,
                            name,
                            lineno,
                        )
                        continue
                    m = _EDGE_RE.fullmatch(text)
                    if m is None:
                        raise _bad_line(text, name, lineno)
                    label = m.group(3)
                    action = unescape_label(label, path=name, line=lineno) if label else None
                    yield DotEdge(
                        _fp(m.group(1), name, lineno),
                        action,
                        _fp(m.group(2), name, lineno),
                        lineno,
                        text.endswith('[style="dashed"];'),
                    )
                    continue
                depth = _structure_line(text, depth, started, name, lineno)
                started = True
        except UnicodeDecodeError as e:
            raise InputError(
                f"expected UTF-8 text, found byte 0x{e.object[e.start]:02x}",
                path=name,
                line=lineno + 1,
                code="RL-INPUT-DOT",
            ) from None
    if not started or depth != 0:
        raise InputError(
            "unexpected end of file: expected '}' closing the graph "
            "(did TLC stop before it finished writing?)",
            path=name,
            line=lineno,
            code="RL-INPUT-DOT",
        )


def _structure_line(text: str, depth: int, started: bool, path: str, line: int) -> int:
    """Check a line that is neither a state nor a transition; return the new depth."""
    if not started:
        if text in ("strict digraph DiskGraph {", "digraph DiskGraph {"):
            return 1
        raise InputError(
            f"expected 'strict digraph DiskGraph {{' on the first line, found {text[:60]!r}",
            path=path,
            line=line,
            code="RL-INPUT-DOT",
        )
    if depth == 0:
        raise _bad_line(text, path, line)
    if text in _FIXED:
        return depth
    if text in _OPENERS:
        return depth + 1
    if text.startswith("{rank = same;") and text.endswith("}"):
        return depth
    if text.startswith(_LEGEND_OPEN):
        return depth + 1
    if text.startswith("node [") or ("[label=" in text and ",fillcolor=" in text and depth >= 2):
        return depth  # legend entries of -dump dot,colorize
    if text and text.strip("}") == "":
        if len(text) > depth:
            raise InputError(
                "found '}' with no graph or subgraph left to close",
                path=path,
                line=line,
                code="RL-INPUT-DOT",
            )
        return depth - len(text)
    raise _bad_line(text, path, line)


@dataclass(frozen=True)
class DotGraph:
    """A whole DOT dump: states by fingerprint, initial states, distinct labelled edges.

    ``edges`` holds each distinct ``(src, action, dst)`` once; ``edge_lines`` counts
    the edge lines (TLC writes one per generated transition).
    """

    path: str
    nodes: Mapping[int, DotNode] = field(hash=False)
    initial: frozenset[int]
    edges: frozenset[tuple[int, str | None, int]]
    edge_lines: int

    def states(self) -> dict[int, State]:
        """Every state, parsed (this parses every label: slow on big graphs)."""
        return {fp: node.state for fp, node in self.nodes.items()}


def load_dot(path: str | Path) -> DotGraph:
    """Read a whole DOT dump (labels stay raw until a node's ``state`` is used).

    Besides :func:`iter_dot`'s checks: two different labels for one fingerprint, and
    an edge to or from a state that has no line, raise :class:`InputError`.
    """
    name = str(path)
    nodes: dict[int, DotNode] = {}
    edges: set[tuple[int, str | None, int]] = set()
    first_line: dict[int, int] = {}
    edge_lines = 0
    for item in iter_dot(path):
        if isinstance(item, DotNode):
            old = nodes.get(item.fp)
            if old is not None:
                if old.raw_label != item.raw_label:
                    raise InputError(
                        f"state {item.fp} has a different label than on line {old.line}"
                        " (a fingerprint collision?)",
                        path=name,
                        line=item.line,
                        code="RL-INPUT-DOT",
                    )
                if item.initial and not old.initial:
                    nodes[item.fp] = item
                continue
            nodes[item.fp] = item
        else:
            edge_lines += 1
            edges.add((item.src, item.action, item.dst))
            first_line.setdefault(item.src, item.line)
            first_line.setdefault(item.dst, item.line)
    missing = [(line, fp) for fp, line in first_line.items() if fp not in nodes]
    if missing:
        line, fp = min(missing)
        raise InputError(
            f"the transition on this line refers to state {fp}, which has no state line"
            f" ({len(missing)} such state(s))",
            path=name,
            line=line,
            code="RL-INPUT-DOT",
        )
    return DotGraph(
        path=name,
        nodes=MappingProxyType(nodes),
        initial=frozenset(fp for fp, n in nodes.items() if n.initial),
        edges=frozenset(edges),
        edge_lines=edge_lines,
    )
