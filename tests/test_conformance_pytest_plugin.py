"""The pytest plugin: implementers run the conformance suite in their own CI."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from redletter.project import kit_command

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "spec"
REFERENCE = f"{sys.executable} -m redletter.conformance.nodes.reference"
BROKEN = f"{sys.executable} {ROOT / 'tests/data/conformance_judge/broken_node.py'}"


def _run(pytester: pytest.Pytester, node: str, limit: int) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        "--redletter-node",
        node,
        "--redletter-hosted",
        "--redletter-spec",
        str(SPEC),
        "--redletter-limit",
        str(limit),
        "--redletter-out",
        str(pytester.path / "out"),
        "--junitxml",
        str(pytester.path / "junit.xml"),
        "-p",
        "no:cacheprovider",
    )


def test_reference_node_passes_one_test_per_trace(pytester: pytest.Pytester) -> None:
    result = _run(pytester, REFERENCE, 4)
    result.assert_outcomes(passed=4)
    cases = ET.parse(pytester.path / "junit.xml").getroot().iter("testcase")
    assert len(list(cases)) == 4


def test_broken_node_fails_with_the_divergence_and_a_replay_command(
    pytester: pytest.Pytester,
) -> None:
    result = _run(pytester, BROKEN, 40)
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) >= 1
    text = result.stdout.str()
    assert "fail: at step" in text
    assert "recorded nothing for channel" in text
    assert "(Lemma 0)" in text
    # the kit as it runs from pytester's folder (outside the checkout: its path)
    assert f"replay: {kit_command()} conform replay " in text
    assert "--hosted" in text


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--redletter-timeout", "inf", "--redletter-timeout must be a finite number of seconds,"
         " more than 0, got inf"),
        ("--redletter-walks", "-1", "--redletter-walks must be at least 0, got -1"),
        ("--redletter-model", "../spec/MCToken2", "--redletter-model: a model name is the name"
         " of a module (letters, digits and _), not a path; got '../spec/MCToken2'"),
    ],
)  # fmt: skip
def test_out_of_range_options_are_refused_before_any_trace(
    pytester: pytest.Pytester, option: str, value: str, message: str
) -> None:
    result = pytester.runpytest_subprocess(
        "--redletter-node",
        REFERENCE,
        "--redletter-spec",
        str(SPEC),
        option,
        value,
        "--redletter-out",
        str(pytester.path / "out"),
        "-p",
        "no:cacheprovider",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"ERROR: {message}" in result.stderr.lines
    assert not (pytester.path / "out").exists()
