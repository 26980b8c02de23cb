"""The proofs along a run (render/proof.py), the explorer page, and ``redletter explain``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from redletter.cli import main
from redletter.conformance.traces import Trace, make_step, model_source, write_trace
from redletter.manifest import load_manifest
from redletter.python_model.actions import init_states
from redletter.python_model.config import ModelConfig, load_model
from redletter.python_model.engines import family_of
from redletter.python_model.explore import explore
from redletter.python_model.lemmas.shadow import reality, shadow_verdicts
from redletter.render.explorer import explorer_data, render_explorer
from redletter.render.proof import prove_run
from redletter.render.teach import seed_schedule

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "spec"
#: The proof explorer draws ChandyLamport's runs: the models of its family only (the
#: variants' must-fail models are the comparison page's, docs/variants.md).
MUST_FAIL = sorted(
    (row.model, row.violated or "")
    for row in load_manifest(SPEC / "manifest.json").models
    if row.expect == "safety failure"
    and row.suite == "default"
    and family_of(row.model, SPEC) == "ChandyLamport"
)


@pytest.fixture(scope="module")
def seed() -> ModelConfig:
    return load_model("MCSeed", SPEC)


def test_seed_shadow_networks_move_by_move(seed: ModelConfig) -> None:
    pr = prove_run(seed, init_states(seed)[0], seed_schedule())
    assert pr.breaks == ()
    w0, w1 = (w.walk for w in pr.walks)
    assert w0 is not None and w1 is not None
    assert (w0.t0, w0.tf, w0.verdict.ok, w1.verdict.ok) == (2, 15, True, True)
    # Lemma 0: the white machines' steps are copied, the red ones' skipped
    assert [m.kind for m in w0.moves] == [
        "start", "letter", "copy", "letter", "skip", "copy", "copy", "copy", "letter",
        "skip", "skip", "skip", "skip", "skip",
    ]  # fmt: skip
    # Lemma 1: the other way round (C and D are P1's red actions)
    assert [m.step for m in w1.moves if m.kind == "copy"] == [12, 13]
    # both end where the lemma says: the snapshot state, the final state
    end = pr.states[15]
    assert w0.moves[-1].state[0] == end.rec_machine[0]
    assert w1.moves[-1].state[0] == end.sf[0][0]  # type: ignore[index]


def test_explorer_names_the_rules_as_they_fire(seed: ModelConfig) -> None:
    pr = prove_run(seed, init_states(seed)[0], seed_schedule())
    data = explorer_data(pr, title="t")
    (l0,) = [w for w in data["walks"] if w["lemma"] == 0]  # type: ignore[attr-defined]
    step5 = next(m for m in l0["moves"] if m["step"] == 5)
    assert step5["text"] == (
        "the white step: P3 is white; the shadow network performs the same step (the receipt "
        "of the red letter) and, as P3 turns red, sends red letters on P3→P1, P3→P2"
    )
    assert step5["fired"] == [
        "P3 turns red: (ii b) the state of a red machine is as in the snapshot state",
        "P1→P3 from (iii c) to (iii b): a buffer from a red to a red machine holds what the "
        "snapshot state holds",
        "P2→P3 from (iii a) to (iii d): a buffer from a white machine to a red one holds the "
        "record of incoming messages as recorded in reality by the red machine, postfixed by "
        "the contents of the buffer in reality",
        "P3→P1 from (iii d) to (iii b): a buffer from a red to a red machine holds what the "
        "snapshot state holds",
        "P3→P2 from (iii a) to (iii c): a buffer from a red machine to a white one holds, from "
        "the contents in reality, the prefix up to and including the red letter",
    ]
    start = l0["moves"][0]
    assert start["kind"] == "start" and start["fired"][3] == (
        "P1→P2: (iii a) a buffer from a white to a white machine holds what it holds in reality"
    )
    step9 = next(m for m in l0["moves"] if m["step"] == 9)
    assert step9["text"] == (
        "the white step: P2 is white, so the shadow network performs exactly the same action "
        "(P2 sends H to P1)"
    )
    assert step9["match"]["m"] == [True, True, True]  # P2 did H: {F, G, H}, what it records
    step8 = next(m for m in l0["moves"] if m["step"] == 8)
    assert step8["match"]["m"] == [True, False, True]  # after G, P2 is {F, G}: not yet
    last = l0["moves"][-1]
    assert all(last["match"]["m"]) and all(last["match"]["b"])  # converged to S*


@pytest.mark.parametrize(("model", "violated"), MUST_FAIL)
def test_counterexample_breaks_what_the_manifest_says(model: str, violated: str) -> None:
    cfg = load_model(model, SPEC)
    v = explore(cfg).violation
    assert v is not None
    steps = [(s.action, dict(s.params)) for s in v.trace[1:]]
    pr = prove_run(cfg, init_states(cfg)[0], steps)
    names = {b.name: b for b in pr.breaks}
    assert names[violated].step == len(steps)  # the last state breaks it, as TLC says
    assert names[violated].why  # and the page says how
    r = reality(cfg, pr.states, steps)
    for w in pr.walks:  # the explorer shows the lemma checks' own verdicts
        if w.walk is not None:
            k = cfg.snap_index[w.snap]
            assert w.walk.verdict == shadow_verdicts(cfg, r, k)[w.lemma]
    page = render_explorer(explorer_data(pr, title=model))
    assert "{{" not in page
    payload = re.search(r'<script type="application/json" id="rl-data">(.*?)</script>', page, re.S)
    assert payload is not None
    assert len(json.loads(payload.group(1))["runs"][0]["states"]) == len(steps) + 1


def test_explorer_is_self_contained(seed: ModelConfig) -> None:
    page = render_explorer(
        explorer_data(prove_run(seed, init_states(seed)[0], seed_schedule()), title="t")
    )
    assert "<link" not in page and " src=" not in page and "fetch(" not in page
    assert re.findall(r"https?://[^\s\"'<]+", page) == ["http://www.w3.org/2000/svg"]


def _run(args: list[str]) -> int:
    return main([*args, "--root", str(ROOT)])


def test_explain_default_is_the_seed_example(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "e.html"
    assert _run(["explain", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.splitlines() == [
        f"wrote {out} (MCSeed, 17 steps)",
        "  Lemma 0, snapshot 1: the shadow network keeps step from state 2 to state 15",
        "  Lemma 1, snapshot 1: the shadow network keeps step from state 2 to state 15",
        f"open it in a browser: {out.resolve().as_uri()}#step=0",
    ]
    assert "MCSeed: the worked example of seeds/001" in out.read_text()


def test_explain_a_must_fail_model_shows_its_counterexample(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "e.html"
    assert _run(["explain", "MCNeverForwardFailure", "-o", str(out)]) == 0
    assert capsys.readouterr().out.splitlines()[1:4] == [
        "  Invariant OneRedLetterPerBuffer is violated at step 2: buffer p2→p3 has carried 0 "
        "red letters of snapshot 1 (in flight or received), but its source p2 is red: it must "
        "have carried 1",
        "  Invariant RedLetterInvariant is violated at step 2: buffer p2→p3 goes from red p2 "
        "to white p3 in snapshot 1 and holds 0 red letters of it",
        "  snapshot 1: snapshot 1 does not complete in this run: the shadow networks are "
        "defined from the snapshot state, which is known only when the last red letter has "
        "been received",
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["explain", "MCToken2"],
            "say which run of MCToken2 to show: --itf TRACE, or --counterexample for a model "
            "that must fail (--seed-example is a run of MCSeed)",
        ),
        (
            ["explain", "MCToken2", "--seed-example"],
            "the worked example of seeds/001 is a run of MCSeed, not of MCToken2",
        ),
        (
            ["explain", "--seed-example", "--counterexample"],
            "choose one run: --seed-example and --counterexample were both given",
        ),
        (
            ["diagram", "MCSequential", "--counterexample"],
            "MCSequential has no counterexample: the Python explorer checked 4,098 states and "
            "found no violation of the invariants and properties its cfg lists; give a run "
            "with --itf TRACE (or, for MCSeed, --seed-example)",
        ),
    ],
)
def test_explain_says_what_to_give(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(args) == 5
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"error[RL-INPUT-EXPLAIN]: {message}"
    assert err[1].startswith("help: give one of --itf TRACE, --seed-example (MCSeed)")


def _trace(tmp_path: Path) -> Path:
    tla, cfg_text = model_source("MCSeed", SPEC)
    steps = tuple(make_step(a, p) for a, p in seed_schedule())
    trace = Trace("seed", "MCSeed", "test", steps, tla, cfg_text)
    return write_trace(tmp_path / "seed.itf.json", trace)


def test_explain_a_conformance_trace_needs_no_model(tmp_path: Path) -> None:
    path = _trace(tmp_path)
    assert _run(["explain", "--itf", str(path), "-o", str(tmp_path / "a.html")]) == 0
    assert _run(["diagram", "--itf", str(path), "-o", str(tmp_path / "a.svg")]) == 0
    assert (tmp_path / "a.svg").read_text().startswith("<svg")


def test_explain_a_trace_of_another_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _trace(tmp_path)
    assert _run(["explain", "MCToken2", "--itf", str(path)]) == 5
    assert capsys.readouterr().err.splitlines()[0] == (
        f"error[RL-INPUT-EXPLAIN]: {path}: the trace is a run of MCSeed, not of MCToken2; "
        "leave the model out or name the trace's own"
    )


def test_explain_a_plain_itf_trace_needs_its_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = _trace(tmp_path)
    doc = json.loads(src.read_text())
    doc["#meta"] = {"source": "elsewhere"}
    plain = tmp_path / "plain.itf.json"
    plain.write_text(json.dumps(doc))
    assert _run(["explain", "--itf", str(plain)]) == 5
    assert capsys.readouterr().err.splitlines()[0] == (
        f"error[RL-INPUT-EXPLAIN]: {plain}: say which model the trace is a run of: "
        ".venv/bin/redletter explain MODEL --itf TRACE"
    )
    assert _run(["explain", "MCSeed", "--itf", str(plain), "-o", str(tmp_path / "p.html")]) == 0


@pytest.mark.parametrize("command", ["diagram", "explain"])
@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\xff\xfe{}", "1: expected UTF-8 text, got a byte that is not UTF-8 (0xff) at column 1"),
        (
            b'{"#meta": {"source": "caf\xc3',
            "1: expected UTF-8 text, got a byte that is not UTF-8 (0xc3) at column 26",
        ),
        (b'{"vars": ["x"],\n "states": [', "2: not JSON: Expecting value (column 13)"),
        (b"", "1: not JSON: Expecting value (column 1)"),
    ],
    ids=["not-utf8", "cut-in-a-character", "cut-short", "empty"],
)
def test_a_malformed_trace_file_is_bad_input(
    command: str, content: bytes, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Whatever bytes the trace holds, diagram and explain say what is wrong with the
    file and exit 5, as conform replay does (never an internal error)."""
    path = tmp_path / "t.itf.json"
    path.write_bytes(content)
    assert _run([command, "MCSeed", "--itf", str(path), "-o", str(tmp_path / "out")]) == 5
    assert capsys.readouterr().err.splitlines()[0] == f"error[RL-INPUT-ITF]: {path}:{message}"
