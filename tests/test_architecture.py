"""The layout is the architecture: these tests read every ``import`` in the kit.

Data flows one way (spec -> model -> pictures -> harness -> pipeline -> API ->
command line), and so do imports: a module imports only from its own layer or
the layers below it, no two modules import each other (directly or round a
cycle), and only the command room imports every package.  Imports are read from
the source at any depth (inside functions and ``TYPE_CHECKING`` blocks too), so
a cycle cannot hide behind a function-local import.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "redletter"

#: Layers from the ground up; a module belongs to the first prefix it matches
#: (longest prefix wins).  ``redletter`` itself is the package's front door.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "ground",
        (
            "redletter.errors",
            "redletter.stopping",
            "redletter.untrusted",
            "redletter.safewrite",
            "redletter.project",
            "redletter.toolchain",
            "redletter.tlc",
            "redletter.manifest",
            "redletter.check",
        ),
    ),
    ("model", ("redletter.python_model",)),
    ("render", ("redletter.render",)),
    ("harness", ("redletter.conformance",)),
    ("pipeline", ("redletter.pipeline",)),
    ("api", ("redletter.api", "redletter.variants", "redletter")),
    ("cli", ("redletter.cli", "redletter.__main__", "redletter.pipeline.jobs")),
)

PACKAGES = ("redletter.python_model", "redletter.render", "redletter.conformance",
            "redletter.pipeline")  # fmt: skip


def _module_files() -> Iterator[tuple[str, Path]]:
    """Every module of the distribution, named as it is imported (the symlinked
    layers under redletter/ are followed)."""
    seen: set[Path] = set()
    paths = [
        Path(d) / f
        for d, _, fs in os.walk(PACKAGE, followlinks=True)
        for f in fs
        if f.endswith(".py")
    ]
    for path in sorted(paths):
        real = path.resolve()
        if real in seen:
            continue
        seen.add(real)
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        yield ".".join(parts), path


def _resolve(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


@cache
def _ast(path: Path) -> ast.Module:
    """``path`` parsed, once for all the tests of a process (each walks every file)."""
    return ast.parse(path.read_text(encoding="utf-8"))


@cache
def import_graph() -> dict[str, frozenset[str]]:
    """Module -> the kit's modules it imports, at any depth of its source."""
    files = dict(_module_files())
    names = set(files)
    graph: dict[str, frozenset[str]] = {}
    for module, path in files.items():
        is_package = path.name == "__init__.py"
        targets: set[str] = set()
        for node in ast.walk(_ast(path)):
            found: list[str] = []
            if isinstance(node, ast.Import):
                found = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(module, node, is_package)
                found = [f"{base}.{a.name}" for a in node.names] + [base]
            for name in found:
                # The longest prefix that is a module of the kit.
                parts = name.split(".")
                while parts and ".".join(parts) not in names:
                    parts.pop()
                if parts and ".".join(parts) != module:
                    targets.add(".".join(parts))
        graph[module] = frozenset(targets)
    return graph


def layer_of(module: str) -> int:
    best, rank = -1, -1
    for i, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, rank = len(prefix), i
    assert rank >= 0, f"{module} is in no layer: add it to LAYERS"
    return rank


def test_every_module_is_in_a_layer() -> None:
    for module in import_graph():
        layer_of(module)


def test_no_import_reaches_up_a_layer() -> None:
    upward = [
        f"{m} ({LAYERS[layer_of(m)][0]}) imports {t} ({LAYERS[layer_of(t)][0]})"
        for m, targets in sorted(import_graph().items())
        for t in sorted(targets)
        if layer_of(t) > layer_of(m)
    ]
    assert upward == []


def _cycles(graph: dict[str, frozenset[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10_000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle() -> None:
    assert _cycles(dict(import_graph())) == []


def test_cycle_finder_finds_a_cycle() -> None:
    """The check above has teeth."""
    graph = {"a": frozenset({"b"}), "b": frozenset({"c"}), "c": frozenset({"a"}), "d": frozenset()}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_only_the_command_room_imports_every_package() -> None:
    def packages_of(module: str) -> set[str]:
        return {p for t in import_graph()[module] for p in PACKAGES if t.startswith(p)}

    roof = len(LAYERS) - 1
    everything = [
        m for m in import_graph() if packages_of(m) == set(PACKAGES) and layer_of(m) != roof
    ]
    assert everything == []


def test_no_generic_top_level_import_names() -> None:
    """``conformance``, ``pipeline`` and ``python_model`` are folders, imported only
    as ``redletter.<folder>``: nothing installs them as top-level names."""
    offenders = []
    paths = [p for _, p in _module_files()]
    paths += [*(ROOT / "tests").rglob("*.py"), *(ROOT / "bench").rglob("*.py")]
    for path in paths:
        for node in ast.walk(_ast(path)):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            else:
                continue
            offenders += [
                f"{path.relative_to(ROOT)}:{node.lineno}: {n}"
                for n in names
                if n.split(".")[0] in ("conformance", "pipeline", "python_model")
            ]
    assert offenders == []


@pytest.mark.parametrize("args", [["--help"], ["conform", "--help"], ["pipeline", "--help"]])
def test_help_loads_neither_z3_nor_pyspark(args: list[str]) -> None:
    code = (
        "import sys\n"
        "from redletter.cli import main\n"
        f"rc = main({args!r})\n"
        "heavy = sorted(m for m in ('z3', 'pyspark', 'py4j') if m in sys.modules)\n"
        "print('HEAVY', heavy, rc)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    assert out.strip().splitlines()[-1] == "HEAVY [] 0"


def _imports_of(path: Path) -> Iterator[tuple[int, str]]:
    """Every module name ``path`` imports (absolute imports, at any depth)."""
    for node in ast.walk(_ast(path)):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module


def test_the_command_line_lives_in_the_command_room() -> None:
    """Typer (the command line) and rich (the reporter) are imported only in the
    command room; every package below it computes and returns, it does not show."""
    roof = len(LAYERS) - 1
    offenders = [
        f"{module}:{line}: {name}"
        for module, path in _module_files()
        if layer_of(module) != roof
        for line, name in _imports_of(path)
        if name.split(".")[0] in ("typer", "rich", "click")
    ]
    assert offenders == []


def test_no_print_outside_the_command_room() -> None:
    roof = len(LAYERS) - 1
    offenders = [
        f"{module}:{node.lineno}"
        for module, path in _module_files()
        if layer_of(module) != roof
        for node in ast.walk(_ast(path))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "print"
    ]
    assert offenders == []


def test_only_the_reporter_makes_consoles() -> None:
    """``rich.console.Console`` is constructed in one module: redletter.cli.ui."""
    makers = sorted(
        module
        for module, path in _module_files()
        for node in ast.walk(_ast(path))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name | ast.Attribute)
        and (node.func.id if isinstance(node.func, ast.Name) else node.func.attr) == "Console"
    )
    assert set(makers) == {"redletter.cli.ui"}


@pytest.mark.parametrize(
    "args",
    [
        ["apalache", "--help"],
        ["symbolic", "--help"],
        ["cos418", "--help"],
        ["explore", "--help"],
        ["conform", "run", "--help"],
        ["pipeline", "explore", "--help"],
    ],
)
def test_help_of_every_group_loads_neither_z3_nor_pyspark(args: list[str]) -> None:
    code = (
        "import sys\n"
        "from redletter.cli import main\n"
        f"rc = main({args!r})\n"
        "heavy = sorted(m for m in ('z3', 'pyspark', 'py4j') if m in sys.modules)\n"
        "print('HEAVY', heavy, rc)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    assert out.strip().splitlines()[-1] == "HEAVY [] 0"
