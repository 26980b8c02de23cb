"""Every option of every command is validated where it is parsed.

The command tree is walked: every option and argument that takes a value must
have one of the validators of :mod:`redletter.cli.options` (or be a free-form
text on the short list below, checked in the command's body), and each
validator is tried with values out of its range: the command must stop with
exit 5 and a message naming the option, before doing any work.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main

from redletter.cli import app, main
from redletter.cli.options import VALIDATORS

#: Options whose value is free text, checked in the command's body (with the
#: option's name in the message): node commands, a runner, a Spark master, names
#: of a mutant or a goal; and the COS 418 package folder, whose own reader says
#: what a package folder must hold.
FREE_TEXT = {
    ("cos418", "test", "package_dir"),
    ("conform", "run", "--node"),
    ("conform", "replay", "--node"),
    ("pipeline", "campaign", "--node"),
    ("pipeline", "campaign", "--runner"),
    ("symbolic", "bmc", "--mutant"),
    ("symbolic", "synth", "--goal"),
    # [MODEL] LOG...: split in the body (a model name first, or none), then each part
    # checked as a model name and as existing files.
    ("conform", "validate", "args"),
    # Names checked in the body against their registries (the message lists them).
    ("teeth", "check", "--property"),
    ("symbolic", "induction", "--variant"),
    ("symbolic", "induction", "--drop"),
    # Checked in the body: a missing Flink Python is Flink not installed (exit 3).
    ("flink", "run", "--flink-python"),
}
FREE_TEXT |= {
    ("pipeline", c, "--master")
    for c in ("explore", "lemmas", "crosscheck", "ingest-dot", "ingest-python", "campaign")
} | {("cos418", "grade", "--master")}


def _commands() -> Iterator[tuple[tuple[str, ...], Any]]:
    def walk(cmd: Any, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
        subs = getattr(cmd, "commands", None)
        if subs:
            for name, sub in subs.items():
                yield from walk(sub, (*path, name))
        else:
            yield path, cmd

    yield from walk(typer.main.get_command(app), ())


def _params() -> list[tuple[tuple[str, ...], Any]]:
    return [
        (path, p)
        for path, cmd in _commands()
        for p in cmd.params
        if not getattr(p, "is_flag", False) and p.name != "help"
    ]


def _name(p: Any) -> str:
    return str(p.opts[0]) if p.opts and p.opts[0].startswith("-") else str(p.name)


def _kind(p: Any) -> tuple[str, tuple[object, ...]] | None:
    if p.callback is None:
        return None
    return VALIDATORS.get(inspect.unwrap(p.callback))


PARAMS = _params()


def test_the_walk_finds_the_commands() -> None:
    paths = {path for path, _ in _commands()}
    assert ("conform", "run") in paths and ("pipeline", "campaign") in paths
    assert len(paths) >= 20


@pytest.mark.parametrize(
    ("path", "param"), PARAMS, ids=[f"{' '.join(p)} {_name(x)}" for p, x in PARAMS]
)
def test_every_option_has_a_validator(path: tuple[str, ...], param: Any) -> None:
    if (*path, _name(param)) in FREE_TEXT:
        return
    assert _kind(param) is not None, f"{' '.join(path)} {_name(param)} is not validated"


def _bad_values(kind: str, args: tuple[object, ...], tmp: Path) -> list[str]:
    if kind == "count":
        minimum, maximum = args
        out = [str(int(str(minimum)) - 1), "-1000000000"]
        if maximum is not None:
            out.append(str(int(str(maximum)) + 1))
        return out
    if kind == "seconds":
        zero, minimum = bool(args[0]), args[1]
        if minimum is not None:
            return ["nan", "inf", "-1", "0", "1e-9", str(float(str(minimum)) / 2)]
        return ["nan", "inf", "-1", *([] if zero else ["0"])]
    if kind == "model":
        return ["../spec/MCToken2", "/etc/MCToken2", "MC Token2"]
    if kind == "output_dir":
        (tmp / "a-file").write_text("x")
        return [str(tmp / "a-file"), str(tmp / "a-file" / "below")]
    if kind == "output_file":  # a folder; a file below a file (a missing folder is made)
        (tmp / "a-file").write_text("x")
        return [str(tmp), str(tmp / "a-file" / "x.out"), str(tmp / "a-file" / "dir" / "x.out")]
    if kind in ("existing_dir", "existing_file", "existing_path"):
        (tmp / "a-file").write_text("x")
        wrong = str(tmp / "a-file") if kind == "existing_dir" else str(tmp)
        return [str(tmp / "nothing-here"), *([wrong] if kind != "existing_path" else [])]
    if kind == "size":
        return ["lots", "-1G", "10"]
    if kind == "choice":
        return ["nonsense"]
    if kind == "jvm_memory":
        return ["lots", "0g", "-2g"]
    if kind == "name":
        return ["../x", "a/b", ""]
    raise AssertionError(f"no bad values for validator kind {kind}")


CHECKED = [(path, p) for path, p in PARAMS if _kind(p) is not None]


def _good_value(p: Any, tmp: Path) -> str:
    """A valid value for a positional argument that comes before the one tried."""
    kind = _kind(p)
    name = kind[0] if kind is not None else ""
    if name == "model":
        return "MCToken2"
    if name == "existing_dir":
        return str(tmp)
    (tmp / "good-file").write_text("x")
    return str(tmp / "good-file")


def _argv(path: tuple[str, ...], param: Any, bad: str, tmp: Path) -> list[str]:
    name = _name(param)
    if name.startswith("-"):
        return [*path, name, bad]
    cmd = dict(_commands())[path]
    before = []
    for p in cmd.params:
        if p.name == param.name:
            break
        if not (p.opts and p.opts[0].startswith("-")):
            before.append(_good_value(p, tmp))
    return [*path, *before, bad]


@pytest.mark.parametrize(
    ("path", "param"), CHECKED, ids=[f"{' '.join(p)} {_name(x)}" for p, x in CHECKED]
)
def test_bad_values_are_refused_naming_the_option(
    path: tuple[str, ...], param: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kind = _kind(param)
    assert kind is not None
    name = _name(param)
    for bad in _bad_values(*kind, tmp_path):
        # The bad value comes first on the command line: it is checked before
        # anything else (a missing required option, say) is noticed.
        argv = _argv(path, param, bad, tmp_path)
        code = main(argv)
        err = capsys.readouterr().err
        assert code == 5, f"{' '.join(argv)} exited {code}: {err}"
        assert f"'{name}'" in err, f"{' '.join(argv)}: the message does not name it: {err}"
        assert err.startswith("error[RL-INPUT-USAGE]: redletter " + " ".join(path) + ": ")


def test_messages_word_for_word(capsys: pytest.CaptureFixture[str]) -> None:
    cases = {
        ("conform", "run", "--timeout", "inf", "--node", "x"): (
            "error[RL-INPUT-USAGE]: redletter conform run: Invalid value for '--timeout': "
            "must be a finite number of seconds, at least 0.1, got inf"
        ),
        ("conform", "run", "--timeout", "1e-9", "--node", "x"): (
            "error[RL-INPUT-USAGE]: redletter conform run: Invalid value for '--timeout': "
            "must be a finite number of seconds, at least 0.1, got 1e-09"
        ),
        ("conform", "replay", "--timeout", "0.05", "t.itf.json", "--node", "x"): (
            "error[RL-INPUT-USAGE]: redletter conform replay: Invalid value for '--timeout': "
            "must be a finite number of seconds, at least 0.1, got 0.05"
        ),
        ("conform", "run", "--budget", "0", "--node", "x"): (
            "error[RL-INPUT-USAGE]: redletter conform run: Invalid value for '--budget': "
            "must be a finite number of seconds, at least 0.1, got 0.0"
        ),
        ("check", "--workers", "-3"): (
            "error[RL-INPUT-USAGE]: redletter check: Invalid value for '--workers': "
            "must be at least 1, got -3"
        ),
        ("explore", "../spec/MCToken2"): (
            "error[RL-INPUT-USAGE]: redletter explore: Invalid value for 'model': a model name "
            "is the name of a module in spec/ (letters, digits and _), not a path; "
            "got '../spec/MCToken2'"
        ),
        ("conform", "traces", "MCToken2", "--out", "x", "--max-len", "0"): (
            "error[RL-INPUT-USAGE]: redletter conform traces: Invalid value for '--max-len': "
            "must be at least 1, got 0"
        ),
    }
    for argv, first in cases.items():
        assert main(list(argv)) == 5
        lines = capsys.readouterr().err.splitlines()
        assert lines[0] == first
        assert lines[1] == (
            "help: run the command with --help to see its arguments and options; "
            "see docs/errors.md#rl-input-usage"
        )


def test_an_unwritable_store_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code = main(["conform", "run", "--node", "true", "--store", str(blocker / "store")])
    assert code == 5
    assert "Invalid value for '--store'" in capsys.readouterr().err


def test_counts_and_seconds_accept_their_bounds() -> None:
    """The validators let the values on their bounds through (the range is not off by one)."""
    for fn, (kind, args) in VALIDATORS.items():
        if kind == "count":
            lo, hi = args
            assert fn(lo) == lo
            if hi is not None:
                assert fn(hi) == hi
        elif kind == "seconds":
            assert fn(0.5) == 0.5
            if args[0]:
                assert fn(0.0) == 0.0
            if args[1] is not None:
                assert fn(args[1]) == args[1]
            assert not math.isnan(fn(1e9))  # type: ignore[arg-type]


def _helps(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every command's ``--help`` text under ``command`` and the texts it is made of
    (help, the line in its group's listing, epilog, each option's help), by path."""
    name = " ".join(("redletter", *path))
    parts = (command.help, command.short_help, command.epilog)
    options = tuple(getattr(p, "help", None) for p in command.params)
    yield path, (command.get_help(typer.Context(command, info_name=name)), parts, options)
    for sub_name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from _helps(sub, (*path, sub_name))


def test_a_command_line_builds_only_its_group_and_reads_as_with_the_whole_tree() -> None:
    from redletter.cli import _command, _lean_command, _tree_for

    whole = _command()
    assert _tree_for([]) is whole and _tree_for(["--help"]) is whole
    assert _tree_for(["chek"]) is whole  # a word no group holds: the whole tree says so
    helps = dict(_helps(whole))
    for name in sorted(whole.commands):
        lean = _lean_command(name)
        assert lean is not None and _tree_for([name, "--help"]) is lean, name
        assert name in lean.commands and len(lean.commands) < len(whole.commands), name
        for path, text in _helps(lean.commands[name], (name,)):
            assert text == helps[path], path
