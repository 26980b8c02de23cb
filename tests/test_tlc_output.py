"""Parsing of TLC 2.15 ``-tool`` output, on recordings of the real jar."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from redletter.tlc import (
    Progress,
    ResultKind,
    TlcResult,
    ToolOutputParser,
    parse_progress,
    parse_tool_output,
    run_sany,
    tlc_command,
)

RECORDED = Path(__file__).resolve().parent / "data" / "tlc"


def parse(name: str, exit_code: int) -> TlcResult:
    text = (RECORDED / name).read_text(encoding="utf-8")
    return parse_tool_output(text.splitlines(keepends=True), model="Toy", exit_code=exit_code)


@pytest.mark.parametrize(
    ("name", "exit_code", "kind", "violated", "distinct", "total", "depth"),
    [
        ("success.out", 0, ResultKind.SUCCESS, None, 6, 6, 6),
        ("invariant.out", 12, ResultKind.SAFETY_FAILURE, "BadInv", 4, 4, 4),
        ("invariant_initial.out", 12, ResultKind.SAFETY_FAILURE, "Neg", None, None, None),
        ("action_property.out", 13, ResultKind.SAFETY_FAILURE, "Shrink", 2, 2, 2),
        ("temporal.out", 13, ResultKind.LIVENESS_FAILURE, None, 6, 6, None),
        ("deadlock.out", 11, ResultKind.DEADLOCK, None, 6, 6, 6),
        ("runtime_error.out", 75, ResultKind.ERROR, None, 1, 1, None),
        ("config_error.out", 151, ResultKind.ERROR, None, None, None, None),
        ("semantic_error.out", 150, ResultKind.ERROR, None, None, None, None),
    ],
)
def test_recorded_outcomes(
    name: str,
    exit_code: int,
    kind: ResultKind,
    violated: str | None,
    distinct: int | None,
    total: int | None,
    depth: int | None,
) -> None:
    result = parse(name, exit_code)
    assert (result.kind, result.violated) == (kind, violated)
    assert (result.distinct, result.total, result.depth) == (distinct, total, depth)


def test_safety_trace_text() -> None:
    result = parse("invariant.out", 12)
    assert result.trace == (
        "The behavior up to this point is:\n\n"
        "1: <Initial predicate>\nx = 0\n\n"
        "2: <Next line 5, col 9 to line 5, col 27 of module Toy>\nx = 1\n\n"
        "3: <Next line 5, col 9 to line 5, col 27 of module Toy>\nx = 2\n\n"
        "4: <Next line 5, col 9 to line 5, col 27 of module Toy>\nx = 3"
    )
    assert result.describe() == "safety failure (BadInv)"


def test_liveness_trace_ends_in_stuttering() -> None:
    result = parse("temporal.out", 13)
    assert result.trace.startswith("The following behavior constitutes a counter-example:")
    assert result.trace.endswith("7: Stuttering")


def test_initial_state_violation_keeps_the_state() -> None:
    result = parse("invariant_initial.out", 12)
    assert result.trace == "Invariant Neg is violated by the initial state:\nx = 0"


def test_error_texts() -> None:
    assert parse("config_error.out", 151).error == (
        "The invariant Nope specified in the configuration file\n"
        "is not defined in the specification."
    )
    runtime = parse("runtime_error.out", 75).error
    assert runtime is not None
    assert runtime.startswith("TLC threw an unexpected exception.")
    assert "Cannot cast tlc2.value.impl.StringValue to tlc2.value.impl.IntValue" in runtime
    assert parse("semantic_error.out", 150).error == "Parsing or semantic analysis failed."


def test_success_with_nonzero_exit_is_an_error() -> None:
    result = parse("success.out", 1)
    assert result.kind is ResultKind.ERROR
    assert result.error == "TLC reported success but exited with code 1"


def test_no_verdict_is_an_error_quoting_the_tail() -> None:
    result = parse_tool_output(["Error: could not find or load main class tlc2.TLC\n"], exit_code=1)
    assert result.kind is ResultKind.ERROR
    assert result.error == (
        "TLC exited with code 1 without a verdict: "
        "Error: could not find or load main class tlc2.TLC"
    )


def test_progress_reports_stream_out_while_feeding() -> None:
    parser = ToolOutputParser()
    seen: list[Progress] = []
    for line in (RECORDED / "success.out").read_text(encoding="utf-8").splitlines():
        seen += parser.feed(line)
    assert seen == [Progress(depth=6, generated=6, distinct=6, queue=0)]


def test_progress_with_thousands_separators() -> None:
    text = (
        "Progress(12) at 2026-11-22 01:43:45: 1,234,567 states generated (801 s/min), "
        "45,678 distinct states found (801 ds/min), 9 states left on queue."
    )
    assert parse_progress(text) == Progress(depth=12, generated=1234567, distinct=45678, queue=9)


def test_nested_message_starting_mid_line() -> None:
    lines = [
        "@!@!@STARTMSG 1000:1 @!@!@\n",
        "outer\n",
        ": @!@!@STARTMSG 2154:0 @!@!@\n",
        "inner\n",
        "@!@!@ENDMSG 2154 @!@!@\n",
        "@!@!@ENDMSG 1000 @!@!@\n",
    ]
    parser = ToolOutputParser()
    for line in lines:
        parser.feed(line)
    assert [(m.code, m.text) for m in parser.messages] == [
        (2154, "inner"),
        (1000, "outer\n: inner"),
    ]


def test_command_line(tmp_path: Path) -> None:
    jar = tmp_path / "tla2tools.jar"
    cmd = tlc_command(
        "MCToy",
        jar=jar,
        metadir=tmp_path / "states",
        check_deadlock=False,
        extra_args=["-dump", "dot,actionlabels", "/tmp/g"],
    )
    assert cmd == [
        "java",
        "-XX:+UseParallelGC",
        "-Xss4m",
        "-cp",
        str(jar),
        "tlc2.TLC",
        "-tool",
        "-workers",
        "2",
        "-fp",
        "0",
        "-metadir",
        str(tmp_path / "states"),
        # Liveness checked once, at the end; no checkpoints (docs/checking.md).
        "-lncheck",
        "final",
        "-checkpoint",
        "0",
        "-deadlock",
        "-dump",
        "dot,actionlabels",
        "/tmp/g",
        "-config",
        "MCToy.cfg",
        "MCToy.tla",
    ]


def test_sany_runs_with_a_private_tmpdir(tmp_path: Path) -> None:
    """SANY writes the standard modules it parses to java.io.tmpdir; two runs sharing
    /tmp once raced in CI (``/tmp/Naturals.tla`` read while rewritten, a
    NullPointerException), so each run must get a directory of its own."""
    record = tmp_path / "args"
    java = tmp_path / "java"
    java.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {record}\necho "Semantic processing"\n')
    java.chmod(0o755)
    spec = tmp_path / "Toy.tla"
    spec.write_text("---- MODULE Toy ----\n====\n")
    run_sany(spec, jar=tmp_path / "tla2tools.jar", java=str(java))
    args = record.read_text().splitlines()
    tmpdirs = [a for a in args if a.startswith("-Djava.io.tmpdir=")]
    assert len(tmpdirs) == 1, args
    private = Path(tmpdirs[0].split("=", 1)[1])
    assert private.name.startswith("redletter-sany-") and private != Path(tempfile.gettempdir())
    assert not private.exists()  # removed after the run
