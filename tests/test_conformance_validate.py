"""Validating NDJSON event logs in the model: fixtures, merging, errors, fuzzing."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from redletter.conformance.eventlog import dump_log, parse_log, read_log
from redletter.conformance.judges.log import validate, validate_files
from redletter.conformance.judges.runlog import validate_run_files
from redletter.conformance.logcheck import merge_logs
from redletter.conformance.nodes.mutants import MUTANTS
from redletter.conformance.nodes.reference import ReferenceNode
from redletter.conformance.walks import drive_and_log, model_walk
from redletter.errors import InputError
from redletter.python_model.config import ModelConfig, load_model

ROOT = Path(__file__).resolve().parent.parent
LOGS = Path(__file__).resolve().parent / "data" / "conformance" / "logs"


@cache
def _cfg(name: str) -> ModelConfig:
    return load_model(name, ROOT / "spec")


def test_reference_log_fixture_passes() -> None:
    v = validate_files(_cfg("MCToken2"), [LOGS / "MCToken2.reference.ndjson"])
    assert v.verdict == "pass"
    assert v.first is None
    assert [s.message for s in v.snapshots] == ["snapshot 1: the one the algorithm must record"]


def test_mutant_log_fixture_fails_at_the_right_line() -> None:
    path = LOGS / "MCToken2.no-channel-recording.ndjson"
    v = validate_files(_cfg("MCToken2"), [path])
    assert v.verdict == "fail"
    assert v.first is not None
    assert v.first.describe() == (
        f"{path}:10: p2 receive app 1 on p1 -> p2: the model records app 1 on p1 -> p2 for "
        "snapshot 1 in this step; the log does not (next event of p2: line 11)"
    )
    assert v.snapshots[0].broken == ("Lemma0", "Lemma1")
    assert "p1 -> p2 holds [], the algorithm records [1]" in v.snapshots[0].message


@pytest.mark.parametrize("name", ["reference", "no-channel-recording"])
def test_per_node_logs_merge_by_vector_clocks(name: str) -> None:
    cfg = _cfg("MCToken2")
    whole = validate_files(cfg, [LOGS / f"MCToken2.{name}.ndjson"])
    split = validate_files(cfg, [LOGS / f"MCToken2.{name}.{n}.ndjson" for n in ("p2", "p1")])
    assert split.verdict == whole.verdict
    assert [s.message for s in split.snapshots] == [s.message for s in whole.snapshots]


def test_merge_orders_a_receive_after_its_send() -> None:
    p1 = parse_log('{"node":"p1","seq":1,"event":"send","channel":["p1","p2"],"msg":{"app":1}}\n')
    p2 = parse_log(
        '{"node":"p2","seq":1,"event":"receive","channel":["p1","p2"],"msg":{"app":1}}\n'
    )
    merged = merge_logs([p2, p1])
    assert [e.event for e in merged] == ["send", "receive"]


@pytest.mark.parametrize("model", ["MCToken2", "MCTokenComplete3", "MCConcurrent", "MCDiffusing"])
@pytest.mark.parametrize("seed", range(5))
def test_reference_logs_of_model_walks_pass(model: str, seed: int) -> None:
    cfg = _cfg(model)
    log = dump_log(drive_and_log(cfg, ReferenceNode, model_walk(cfg, seed)))
    v = validate(cfg, parse_log(log), may_be_cut=False)
    # A walk ends where it ends: a snapshot it leaves open makes the log unknown
    # (never a pass), and the reference never diverges.
    assert v.divergence is None and all(s.ok for s in v.snapshots), f"seed {seed}: {v.explain()}"
    open_ = any("not complete when the log ends" in s.message for s in v.snapshots)
    assert v.verdict == ("unknown" if open_ else "pass"), f"seed {seed}: {v.explain()}"


def test_marker_after_app_fails_at_the_overtaking_send() -> None:
    cfg = _cfg("MCToken2")
    sched = [("StartSnapshot", {"p": "p1", "k": 1}), ("SendApp", {"c": ["p1", "p2"], "m": 1})]
    v = validate(
        cfg,
        parse_log(dump_log(drive_and_log(cfg, MUTANTS["marker-after-app"].factory, sched))),
        may_be_cut=False,
    )
    assert v.first is not None
    assert v.first.describe() == (
        "<log>:3: p1 send app 1 on p1 -> p2: the model put marker 1 on p1 -> p2 when p1 turned "
        "red (<log>:1), before this app message; the log sends the app message first, so it "
        "overtakes its red letter: whether its receiver is white or red when it arrives, the "
        "snapshot counts a message that the sender's recorded state has not sent (Lemma0 breaks)"
    )


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("[1]", "bad.ndjson:2: expected a JSON object, got list"),
        (
            '{"node":"p1","seq":0,"event":"send"}',
            "bad.ndjson:2: 'seq' must be an integer >= 1, got 0",
        ),
        (
            '{"node":"p1","seq":2,"event":"jump"}',
            "bad.ndjson:2: 'event' must be one of send, receive, apply, internal, start_snapshot, "
            'record_state, record_message, close_channel, complete, init, end, got "jump"',
        ),
        (
            '{"node":"p1","seq":2,"event":"send","channel":["p2","p1"],"msg":{"app":1}}',
            "bad.ndjson:2: a send event of p1 must have p1 as the channel's src, got p2 -> p1",
        ),
        (
            '{"node":"p1","seq":2,"event":"send","channel":["p1","p2"],"msg":{"marker":0}}',
            'bad.ndjson:2: \'msg\' must be {"app": any value}, {"marker": snapshot} or '
            '{"internal": e}, got {"marker": 0}',
        ),
        (
            '{"node":"p1","seq":1,"event":"start_snapshot","snapshot":1}',
            "bad.ndjson:2: seq 1 of p1 does not follow seq 1 (line 1): a node's seq must increase",
        ),
        (
            "{",
            "bad.ndjson:2: not JSON: Expecting property name enclosed in double quotes (column 2)",
        ),
    ],
)
def test_malformed_lines_name_file_and_line(line: str, message: str) -> None:
    first = '{"node":"p1","seq":1,"event":"start_snapshot","snapshot":1}'
    with pytest.raises(InputError) as err:
        parse_log(first + "\n" + line + "\n", path="bad.ndjson")
    assert err.value.message == message
    assert err.value.line == 2
    assert err.value.code == "RL-INPUT-LOG"


def test_unreadable_log_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError) as err:
        read_log(tmp_path / "missing.ndjson")
    assert (
        err.value.message
        == f"{tmp_path / 'missing.ndjson'}: cannot read the log: No such file or directory"
    )


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=4),
    lambda kids: (
        st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=6), kids, max_size=4)
    ),
    max_leaves=10,
)
_keys = st.sampled_from(
    ["node", "seq", "vc", "event", "channel", "msg", "snapshot", "state", "channels"]
)
_objs = st.dictionaries(
    _keys, _json | st.sampled_from(["p1", "send", "receive", "complete"]), max_size=8
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_objs.map(json.dumps) | st.text(max_size=20), max_size=6))
def test_fuzz_parser_raises_only_input_errors(lines: list[str]) -> None:
    try:
        events = parse_log("\n".join(lines))
    except InputError as exc:
        assert exc.code == "RL-INPUT-LOG"
        return
    validate(_cfg("MCToken2"), events)  # never crashes on a parsed log


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=60))
def test_fuzz_parser_bytes(data: bytes) -> None:
    try:
        parse_log(data)
    except InputError as exc:
        assert exc.code == "RL-INPUT-LOG"


def test_an_empty_log_is_bad_input_not_a_pass(tmp_path: Path) -> None:
    empty = tmp_path / "run.ndjson"
    empty.write_text("\n\n")
    with pytest.raises(InputError) as err:
        validate_files(load_model("MCToken2", ROOT / "spec"), [empty])
    assert err.value.message == (
        f"{empty}:1: no event in {empty}: an empty log proves nothing (is the"
        " implementation's logger writing to this file?)"
    )
    assert err.value.exit_code == 5


@pytest.mark.parametrize("ended", [True, False])
def test_a_snapshot_left_open_is_never_a_pass_in_a_model(tmp_path: Path, ended: bool) -> None:
    """The issue-23 run: a snapshot started and never completed.  Every log ends
    with its end event: a liveness failure; a log without it (a crash): unknown."""
    from redletter.conformance.adapters.instrument import Recorder

    p1, p2 = Recorder("p1", tmp_path / "p1.ndjson"), Recorder("p2", tmp_path / "p2.ndjson")
    p1.send_app("p2", 1, state=1)
    p2.start_snapshot(1)
    p2.send_marker("p1", 1)
    p2.record_state(1, 0)
    if ended:
        p1.close()
        p2.close()
    v = validate_files(_cfg("MCToken2"), [tmp_path / "p1.ndjson", tmp_path / "p2.ndjson"])
    assert v.verdict == ("fail" if ended else "unknown"), v.explain()
    if ended:
        assert v.case == "a complete run"
        assert v.divergence is not None and v.divergence.kind == "liveness"
        assert v.divergence.model_did == (
            "snapshot 1 never completes, and the logs hold the whole run (SnapshotsComplete: "
            "every started snapshot completes)"
        )
    else:
        assert v.case == "cut inside a snapshot"
        assert v.notes[0] == (
            "snapshot 1 is not complete when the logs end, and the log of p1, p2 has no end "
            "event (a process that crashed, or a log cut short): whether it completes is not "
            "known"
        )


def _cut(tmp_path: Path, name: str, i: int, j: int, end: bool = False) -> list[Path]:
    """The per-node logs of fixture ``name``, p1's cut to ``i`` lines and p2's to ``j``."""
    out = []
    for node, n in (("p1", i), ("p2", j)):
        lines = (LOGS / f"MCToken2.{name}.{node}.ndjson").read_text(encoding="utf-8")
        kept = lines.splitlines(keepends=True)[:n]
        if end:
            seq = len(kept) + 1
            kept.append(json.dumps({"node": node, "seq": seq, "event": "end"}) + "\n")
        path = tmp_path / f"{name}-{i}-{j}" / f"{node}.ndjson"
        path.parent.mkdir(exist_ok=True)
        path.write_text("".join(kept), encoding="utf-8")
        out.append(path)
    return out


def test_a_correct_run_cut_short_anywhere_is_never_a_fail_in_a_model(tmp_path: Path) -> None:
    """The reference run's logs (no end events, as a crashed process leaves them)
    cut at every pair of lines: unknown, or an input error where a receive's
    vector clock names a send the cut removed; pass only for the whole run."""
    cfg = _cfg("MCToken2")
    verdicts = {}
    for i in range(1, 7):
        for j in range(1, 9):
            try:
                verdicts[i, j] = str(validate_files(cfg, _cut(tmp_path, "reference", i, j)).verdict)
            except InputError as err:
                assert "the vector clock of" in err.message, err.message
    assert verdicts.pop((6, 8)) == "pass"
    assert len(verdicts) == 36  # 11 cuts are input errors
    assert set(verdicts.values()) == {"unknown"}, verdicts


def test_a_log_cut_inside_a_step_owes_its_records_unknown_and_fails_when_whole(
    tmp_path: Path,
) -> None:
    cfg = _cfg("MCToken2")
    paths = _cut(tmp_path, "reference", 5, 8)  # p1 stops before its complete line
    v = validate_files(cfg, paths)
    assert (str(v.verdict), v.first) == ("unknown", None)
    assert [s.message for s in v.snapshots] == [
        "snapshot 1: not judged: p1's log ends without its end event before it logs its part"
    ]
    assert v.notes[0] == (
        f"{paths[0]}:2: p1's log ends in the step of p1 receive marker 1 on p2 -> p1, where "
        "the model completes snapshot 1 at p1; its log has no end event (a process that "
        "crashed, or a log cut short): whether it would have is not known"
    )
    assert v.case == "cut inside a snapshot"
    for whole in (
        validate_files(cfg, paths, whole_run=True),
        validate_files(cfg, _cut(tmp_path, "reference", 5, 8, end=True)),
    ):
        assert str(whole.verdict) == "fail"
        assert whole.first is not None and whole.first.describe().endswith(
            "p1 receive marker 1 on p2 -> p1: the model completes snapshot 1 at p1 in this "
            "step; the log does not (the log ends)"
        )


def test_a_bug_the_log_shows_before_its_cut_still_fails(tmp_path: Path) -> None:
    """no-channel-recording: p2 goes on after the receive it does not record, so the
    cut after that proves the bug; a cut right after the receive proves nothing."""
    cfg = _cfg("MCToken2")
    after = validate_files(cfg, _cut(tmp_path, "no-channel-recording", 6, 5))
    assert str(after.verdict) == "fail"
    assert after.first is not None and after.first.kind == "missing-effect"
    at = validate_files(cfg, _cut(tmp_path, "no-channel-recording", 6, 4))
    assert str(at.verdict) == "unknown"


def test_cli_whole_run_applies_in_a_model(tmp_path: Path) -> None:
    from redletter.cli import main

    paths = [str(p) for p in _cut(tmp_path, "reference", 5, 8)]
    assert main(["conform", "validate", "MCToken2", *paths]) == 2
    assert main(["conform", "validate", "MCToken2", "--whole-run", *paths]) == 1


def test_a_report_that_contradicts_the_record_lines_fails_in_a_model(tmp_path: Path) -> None:
    """A complete report no longer silently overrides the record_message lines."""
    text = (LOGS / "MCToken2.reference.p2.ndjson").read_text(encoding="utf-8")
    bad = text.replace('"channels":{"p1":[1]}', '"channels":{"p1":[]}')
    assert bad != text
    (tmp_path / "p2.ndjson").write_text(bad, encoding="utf-8")
    paths = [LOGS / "MCToken2.reference.p1.ndjson", tmp_path / "p2.ndjson"]
    v = validate_files(_cfg("MCToken2"), paths)
    assert v.verdict == "fail"
    assert v.snapshots[0].message.startswith(
        "snapshot 1: not the one the algorithm must record: p1 -> p2 holds [], the algorithm "
        f"records [1]; p2's report of it ({tmp_path}/p2.ndjson:8) gives p1 -> p2 as [], but "
        f"its record_message lines record [1] ({tmp_path}/p2.ndjson:5 ...): it reports what "
        "it did not record"
    )


def test_a_run_without_a_snapshot_is_unknown_in_a_model_too(tmp_path: Path) -> None:
    """The issue's run: cut before any snapshot, the model judge said pass ("6 events
    replayed in the model"); a verdict about snapshots with none is vacuous."""
    paths = _cut(tmp_path, "reference", 1, 0)
    for v in (validate_files(_cfg("MCToken2"), paths), validate_run_files(paths)):
        assert (str(v.verdict), v.case) == ("unknown", "no snapshot to judge"), v.explain()
        assert "no snapshot in the logs: nothing to judge (start one in the run)" in v.notes


def test_a_model_refuses_a_message_in_two_halves(tmp_path: Path) -> None:
    from redletter.conformance.adapters.instrument import Recorder

    p1 = Recorder("p1", tmp_path / "p1.ndjson")
    change = p1.send_change("p2", 1, state=1)
    p1.send_app("p2", 1, change=change)
    p1.close()
    with pytest.raises(InputError) as err:
        validate_files(_cfg("MCToken2"), [tmp_path / "p1.ndjson"])
    assert err.value.message == (
        f"{tmp_path}/p1.ndjson:1: p1 apply app 1 on p1 -> p2: the model MCToken2 takes a send "
        "or a receipt as one step, so it cannot replay a message whose state change is logged "
        "on its own (an apply event, or a split send or receive); judge the logs on their own "
        "run instead, without a model, which judges both halves: .venv/bin/redletter conform "
        "validate --from-log LOG..."
    )
