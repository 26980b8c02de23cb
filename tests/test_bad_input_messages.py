"""Bad input is bad input (issue 29): each mistake a new user made once gets a
message that says what happened and what to do, asserted word for word, and never
a traceback, a verdict on the algorithm, or a file written where it should not be.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from redletter import api
from redletter.cli import main
from redletter.conformance.judges.drive import CommandNode
from redletter.conformance.traces import write_trace
from redletter.errors import InputError
from redletter.python_model.config import load_model
from tests.cos418_gallery import ENTRIES, materialize
from tests.readme_commands import all_blocks

ROOT = Path(__file__).resolve().parent.parent
PY = ".venv/bin/python"


@pytest.fixture(autouse=True)
def _at_the_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """Commands print the checkout's forms when run from its root by its venv."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(sys, "executable", str(ROOT / ".venv" / "bin" / "python"))


def _err(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return capsys.readouterr().err.splitlines()


@pytest.fixture(scope="module")
def one_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    trace = api.generate_traces("MCToken2", goals=False)[0]
    return write_trace(tmp_path_factory.mktemp("trace") / "t.itf.json", trace)


# --------------------------------------------------------------------------- the node


def test_a_node_whose_module_is_missing_did_not_start_exit_5(
    one_trace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    node = f"{PY} -m no_such_module_of_redletter"
    args = ["conform", "replay", str(one_trace), "--node", node, "--store", str(tmp_path)]
    assert main(args) == 5
    err = _err(capsys)
    assert err[0] == (
        f"error[RL-INPUT-NODE-START]: the node did not start: {node} — node p1 exited with"
        " status 1 before its first step, so no trace was judged (a node that cannot start is"
        " not a verdict on the algorithm): a module it names is not found: check the module's"
        " name, and that this Python has it installed (the node runs in its own working"
        " directory, so a module of the current directory is found only by its path: --node"
        " 'python3 path/to/node.py'); its stderr says: "
        f"{ROOT / '.venv/bin/python'}: No module named no_such_module_of_redletter."
    )
    assert err[-1].startswith("help: fix the command given to --node (quote it whole:")
    assert not any(p.name == "report.html" for p in tmp_path.rglob("*"))  # no verdict


def test_a_node_whose_file_is_missing_did_not_start_exit_5(
    one_trace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    node = f"{PY} {tmp_path / 'no_such_node.py'}"
    args = ["conform", "replay", str(one_trace), "--node", node, "--store", str(tmp_path)]
    assert main(args) == 5
    first = _err(capsys)[0]
    assert first.startswith(f"error[RL-INPUT-NODE-START]: the node did not start: {node} — ")
    assert ": a file it names does not exist: check the path; its stderr says: " in first


@pytest.mark.parametrize(
    ("program", "why"),
    [
        ("/no/such/node", "no such file"),
        ("no-such-node-xyz", "no such program on PATH; give its path (./mynode), or the"
         " interpreter first (--node 'python3 mynode.py')"),
        ("{tmp}", "it is a directory, not a program"),
        ("{tmp}/node.py", "the file is not executable; make it so (chmod +x), or give its"
         " interpreter first (--node 'python3 {tmp}/node.py')"),
    ],
)  # fmt: skip
def test_a_node_program_that_cannot_run_says_why(program: str, why: str, tmp_path: Path) -> None:
    (tmp_path / "node.py").write_text("print('hi')\n", encoding="utf-8")
    program = program.format(tmp=tmp_path)
    with pytest.raises(InputError) as info:
        CommandNode.parse(f"{program} --flag")
    assert info.value.message == f"--node: cannot run {program!r}: {why.format(tmp=tmp_path)}"
    assert info.value.code == "RL-INPUT-NODE-CMD"


def test_an_unquoted_node_command_is_shown_quoted(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["conform", "run", "--quick", "--node", PY, "-m", "redletter.conformance.nodes.x"]
    assert main([*args, "--seed", "1"]) == 5
    assert _err(capsys)[0] == (
        "error[RL-INPUT-USAGE]: redletter conform run: No such option: -m; it belongs to the"
        " node command, which --node takes as one argument: quote it, --node"
        " '.venv/bin/python -m redletter.conformance.nodes.x'"
    )


# --------------------------------------------------------------------------- COS 418


def test_cos418_test_on_a_missing_path_says_it_does_not_exist(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["cos418", "test", "/no/such/package"]) == 5
    assert _err(capsys)[0] == (
        "error[RL-INPUT-COS418-PACKAGE]: /no/such/package: does not exist (expected the folder"
        " of a Go package written against the COS 418 interface)"
    )


def test_cos418_test_on_a_class_points_to_grade(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("servers/base", "servers/deadlock"):
        materialize(name, tmp_path / "class")
    klass = tmp_path / "class" / "servers"
    assert main(["cos418", "test", str(klass)]) == 5
    assert _err(capsys)[0] == (
        f"error[RL-INPUT-COS418-PACKAGE]: {klass}: no Go source files (*.go, other than"
        " *_test.go) in this directory; its 2 folders (base, deadlock) hold Go packages: to"
        f" grade them as a class, run `.venv/bin/redletter cos418 grade {klass}`; to test one,"
        f" give its folder (`.venv/bin/redletter cos418 test {klass / 'base'}`)"
    )


def test_the_gallery_refuses_a_folder_that_holds_it(tmp_path: Path) -> None:
    def gallery() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "tests.cos418_gallery", str(tmp_path / "g")],
            cwd=ROOT, capture_output=True, text=True, timeout=120,
        )  # fmt: skip

    first = gallery()
    assert first.returncode == 0, first.stderr
    lines = first.stdout.splitlines()
    assert lines[0] == f"{'entry':34} {'expect':10} folder"
    assert lines[1] == f"{'servers/base':34} {'pass':10} {tmp_path / 'g/servers/base'}"
    assert len(lines) == 1 + len(ENTRIES)
    (tmp_path / "g/servers/base/mine.go").write_text("// the user's change\n")
    again = gallery()
    assert again.returncode == 5
    assert again.stderr == (
        f"error: {tmp_path / 'g'} already holds the gallery ({len(ENTRIES)} of its"
        f" {len(ENTRIES)} entry folders exist, e.g. {tmp_path / 'g/servers/base'}): they are"
        f" never overwritten; remove {tmp_path / 'g'} first, or give another folder\n"
    )
    assert (tmp_path / "g/servers/base/mine.go").is_file()


# --------------------------------------------------------------------------- conform validate


def test_validate_points_a_cos418_file_to_cos418_judge(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["conform", "validate", "tests/data/cos418/0.snap"]) == 5
    assert _err(capsys)[0] == (
        "error[RL-INPUT-USAGE]: tests/data/cos418/0.snap is a COS 418 .snap file, not an"
        " NDJSON event log: judge COS 418 snapshot files with `.venv/bin/redletter cos418"
        " judge TOP EVENTS SNAP...` (the .top, the .events and the .snap files;"
        " docs/cos418.md)"
    )


@pytest.mark.parametrize("name", ["t.itf.json", "t.json"])
def test_validate_points_a_pretty_printed_trace_to_replay(
    name: str, one_trace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / name
    path.write_text(one_trace.read_text(encoding="utf-8"), encoding="utf-8")
    assert path.read_text(encoding="utf-8").startswith("{\n")  # pretty-printed
    assert main(["conform", "validate", str(path)]) == 5
    what = (
        "a trace (ITF)"
        if name.endswith(".itf.json")
        else ("one JSON document over many lines (a trace?)")
    )
    assert _err(capsys)[0] == (
        f"error[RL-INPUT-USAGE]: {path} is {what}, not an NDJSON event log (one event a line,"
        f" docs/instrument.md): replay a trace against a node with `.venv/bin/redletter"
        f" conform replay {path} --node CMD`, or step through it with `.venv/bin/redletter"
        f" explain --itf {path} -o trace.html`"
    )


# --------------------------------------------------------------------------- models


def test_a_misspelt_model_lists_the_closest_names_not_all(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(InputError) as info:
        load_model("MCTokn2", ROOT / "spec")
    assert info.value.message == (
        f"unknown model 'MCTokn2' in {ROOT / 'spec'}; did you mean 'MCToken2'? (available:"
        " MCToken2, MCLazyToken2, MCTokenStar4, MCObserverToken2, MCTokenValues,"
        " MCTokenComplete3, MCTokenAsymmetric3, MCTokenDirectedRing3 and"
        f" {len(list((ROOT / 'spec').glob('MC*.cfg'))) - 8} more)"
    )


# --------------------------------------------------------------------------- the docs


def test_docs_commands_write_only_under_store() -> None:
    """Every file or folder a printed command is told to write (-o, --out, --store,
    --graph, --export, --publish) is under store/."""
    writes = re.compile(r"(?:^|\s)(?:-o|--out|--store|--graph|--export|--publish)[ =](\S+)")
    bad = [
        f"{b.page}:{c.line}: {c.text}"
        for b in all_blocks()
        for c in b.commands
        for target in writes.findall(c.text)
        if not target.strip("\"'").startswith(("store/", "$", "/"))  # "/": another machine's
    ]
    assert bad == []
    # explain and diagram write ./explain.html, ./diagram.svg when not told where
    for b in all_blocks():
        for c in b.commands:
            if re.search(r"redletter (explain|diagram)\b", c.text) and " -o " not in c.text:
                bad.append(f"{b.page}:{c.line}: {c.text}")
    assert bad == []


def test_the_full_runs_progress_line_counts_the_traces_a_full_run_judges() -> None:
    text = (ROOT / "docs" / "conformance.md").read_text(encoding="utf-8")
    (shown,) = re.findall(r"`judging traces: 50 of (\d+) done", text)
    full = api.generate_traces("MCToken2")  # what `conform run` judges without --quick
    assert int(shown) == len(full)


def test_the_readmes_commands_with_arguments_parse() -> None:
    """A command the README's prose gives with its arguments is complete: its required
    arguments and options are there (`pipeline explore` once lacked --graph)."""
    import shlex

    from redletter.cli import _command

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    parsed = []
    for span in re.findall(r"`(\.venv/bin/redletter [^`]+)`", text):
        args = shlex.split(span)[1:]
        cmd = _command()
        while args and args[0] in getattr(cmd, "commands", {}):
            cmd = cmd.commands[args.pop(0)]
        if not args or any(a == "..." or re.fullmatch(r"[A-Z][A-Z_]*", a) for a in args):
            continue  # a command named, or one with a placeholder (CLASS, DIR, ...)
        cmd.make_context(cmd.name, list(args))  # raises on a missing argument or option
        parsed.append(span)
    assert (
        ".venv/bin/redletter pipeline explore MCTokenComplete3Large --graph store/large --no-tables"
    ) in parsed
