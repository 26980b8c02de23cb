"""One verdict and one result protocol: the three judges answer with the same face."""

from __future__ import annotations

import json
from pathlib import Path

from redletter.conformance.eventlog import read_log
from redletter.conformance.formats.cos418 import parse_scenario, parse_snap, parse_topology
from redletter.conformance.judges.drive import InProcessNode, judge_trace
from redletter.conformance.judges.log import validate, validate_files
from redletter.conformance.judges.outcome import judge_outcome
from redletter.conformance.nodes.reference import ReferenceNode
from redletter.conformance.traces import generate
from redletter.conformance.verdict import Result, Verdict
from redletter.python_model.config import load_model

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "spec"
LOGS = ROOT / "tests" / "data" / "conformance" / "logs"


class NeverRecordsMessages(ReferenceNode):
    def record_message(self, k: int, frm: str, payload: int) -> None:
        return None


def _face(r: Result) -> tuple[Verdict, int, bool, bool, str]:
    """What every result shows (mypy checks each judge's result type against Result)."""
    schedule = r.schedule
    return (
        r.verdict,
        int(r.verdict.exit_code),
        r.divergence is not None,
        schedule is not None and len(schedule) > 0,
        r.explanation(),
    )


def test_verdict_words_and_exit_codes() -> None:
    assert [(v.value, int(v.exit_code)) for v in Verdict] == [
        ("pass", 0),
        ("fail", 1),
        ("unknown", 2),
    ]
    assert json.dumps({"verdict": Verdict.UNKNOWN}) == '{"verdict": "unknown"}'
    assert f"{Verdict.FAIL}: why" == "fail: why"
    assert Verdict("pass") is Verdict.PASS


def test_drive_judge_result() -> None:
    trace = next(t for t in generate("MCToken2", SPEC, goals=False) if "Receive" in str(t.steps))
    ok = judge_trace(trace, InProcessNode(ReferenceNode))
    assert _face(ok) == (Verdict.PASS, 0, False, True, "")
    bad = next(
        r
        for t in generate("MCToken2", SPEC, goals=False)
        if (r := judge_trace(t, InProcessNode(NeverRecordsMessages))).verdict == Verdict.FAIL
    )
    verdict, code, diverged, scheduled, words = _face(bad)
    assert (verdict, code, diverged, scheduled) == (Verdict.FAIL, 1, True, True)
    assert bad.divergence is not None and words == bad.divergence.describe()
    assert words.startswith(f"at step {bad.divergence.step}, ")
    assert bad.schedule == bad.executed[: bad.divergence.step]


def test_log_judge_result() -> None:
    cfg = load_model("MCToken2", SPEC)
    ok = validate_files(cfg, [LOGS / "MCToken2.reference.ndjson"])
    assert _face(ok)[:4] == (Verdict.PASS, 0, False, False)
    events = read_log(LOGS / "MCToken2.reference.ndjson")
    cut = [e for e in events if e.event != "record_state"]
    bad = validate(cfg, cut)
    verdict, code, diverged, scheduled, words = _face(bad)
    assert (verdict, code, diverged, scheduled) == (Verdict.FAIL, 1, True, False)
    assert bad.divergence is not None and bad.divergence.path is not None
    assert bad.divergence.describe().startswith(f"{bad.divergence.path}:{bad.divergence.line}: ")
    assert words == bad.explain()


def test_outcome_judge_result() -> None:
    top = parse_topology("3\nN1 5\nN2 0\nN3 0\nN1 N2\nN2 N3\nN3 N1\nN1 N3\n")
    sc = parse_scenario("send N1 N2 2\nsend N1 N3 1\nsnapshot N2\n")
    ok = judge_outcome(
        top, sc, [parse_snap("0\nN1 2\nN2 0\nN3 0\nN1 N2 token(2)\nN1 N3 token(1)\n")]
    )
    assert _face(ok) == (Verdict.PASS, 0, False, True, ok.message)
    assert ok.schedule == ok.witness
    wrong = "0\nN1 2\nN2 0\nN3 0\nN1 N3 token(2)\nN1 N3 token(1)\n"  # the 2 went to N2
    bad = judge_outcome(top, sc, [parse_snap(wrong)])
    assert _face(bad)[:4] == (Verdict.FAIL, 1, False, True)
    assert bad.schedule == bad.closest
