"""The model-free log judge (conformance/judges/runlog.py): EWD 864's rules and
lemmas on a run read from its own logs, completion, and the errors of logs that
contradict themselves."""

from __future__ import annotations

import json
import random
import threading
from pathlib import Path
from typing import Any

import pytest

from redletter.cli import main
from redletter.conformance.adapters.instrument import Recorder
from redletter.conformance.judges.log import validate_files
from redletter.conformance.judges.runlog import conserved_sum, validate_run_files
from redletter.errors import InputError
from redletter.project import find_project
from redletter.python_model.config import load_model
from redletter.untrusted import loads

Ev = dict[str, Any]


def _write(tmp: Path, node: str, events: list[Ev], *, end: bool = True) -> Path:
    """``node``'s log: the events numbered 1, 2, 3, ... (and an end event)."""
    lines = [{"node": node, "seq": i, **e} for i, e in enumerate(events, start=1)]
    if end:
        lines.append({"node": node, "seq": len(events) + 1, "event": "end"})
    path = tmp / f"{node}.ndjson"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def init(state: Any, ins: list[str], outs: list[str]) -> Ev:
    return {"event": "init", "state": state, "inputs": ins, "outputs": outs}


def send(src: str, dst: str, v: Any, state: Any = None) -> Ev:
    e: Ev = {"event": "send", "channel": [src, dst], "msg": {"app": v}}
    return e if state is None else {**e, "state": state}


def recv(src: str, dst: str, v: Any, state: Any = None) -> Ev:
    e: Ev = {"event": "receive", "channel": [src, dst], "msg": {"app": v}}
    return e if state is None else {**e, "state": state}


def msend(src: str, dst: str, k: Any) -> Ev:
    return {"event": "send", "channel": [src, dst], "msg": {"marker": k}}


def mrecv(src: str, dst: str, k: Any) -> Ev:
    return {"event": "receive", "channel": [src, dst], "msg": {"marker": k}}


def start(k: Any) -> Ev:
    return {"event": "start_snapshot", "snapshot": k}


def rstate(k: Any, state: Any) -> Ev:
    return {"event": "record_state", "snapshot": k, "state": state}


def rmsg(k: Any, src: str, dst: str, v: Any, of: int | None = None) -> Ev:
    e: Ev = {"event": "record_message", "snapshot": k, "channel": [src, dst], "msg": {"app": v}}
    return e if of is None else {**e, "of": of}


def complete(k: Any, **kw: Any) -> Ev:
    return {"event": "complete", "snapshot": k, **kw}


def _judge(tmp: Path, a: list[Ev], b: list[Ev], **kw: Any) -> Any:
    return validate_run_files([_write(tmp, "ann", a), _write(tmp, "bo", b)], **kw)


def test_a_correct_run_passes_with_its_own_names_payloads_and_ids(tmp_path: Path) -> None:
    a = [
        init(10, ["bo"], ["bo"]),
        send("ann", "bo", "x", 9),
        start("s"),
        rstate("s", 9),
        msend("ann", "bo", "s"),
        recv("bo", "ann", {"y": [1]}, 10),
        rmsg("s", "bo", "ann", {"y": [1]}),
        mrecv("bo", "ann", "s"),
        complete("s", state=9, channels={"bo": [{"y": [1]}]}),
    ]
    b = [
        init(1, ["ann"], ["ann"]),
        send("bo", "ann", {"y": [1]}, 0),
        recv("ann", "bo", "x", 1),
        mrecv("ann", "bo", "s"),
        rstate("s", 1),
        msend("bo", "ann", "s"),
        complete("s", state=1, channels={"ann": []}),
    ]
    v = _judge(tmp_path, a, b)
    assert v.verdict == "pass", v.explanation()
    assert v.explanation().splitlines() == [
        "pass: 18 events of 2 processes judged on their own run (no model): a complete run",
        'snapshot "s": complete, consistent (Lemma 0 and Lemma 1 hold on this run), '
        "recorded as EWD 864 says",
    ]


def test_an_await_between_recording_and_the_markers_is_not_a_divergence(tmp_path: Path) -> None:
    """Between recording and sending its marker, ann takes in a message, changes
    its state and sends on another channel: the real order allows all of it."""
    a = [
        init(5, ["bo"], ["bo", "cy"]),
        start(1),
        rstate(1, 5),
        recv("bo", "ann", 2, 7),  # an await: a message arrives meanwhile
        rmsg(1, "bo", "ann", 2),
        {"event": "internal", "msg": {"internal": "tidy"}, "state": 7},
        msend("ann", "bo", 1),
        msend("ann", "cy", 1),
        mrecv("bo", "ann", 1),
        complete(1),
    ]
    b = [
        init(2, ["ann", "cy"], ["ann"]),
        send("bo", "ann", 2, 0),
        mrecv("ann", "bo", 1),
        rstate(1, 0),
        msend("bo", "ann", 1),
        mrecv("cy", "bo", 1),
        complete(1),
    ]
    c = [
        init(0, ["ann"], ["bo"]),
        mrecv("ann", "cy", 1),
        rstate(1, 0),
        msend("cy", "bo", 1),
        complete(1),
    ]
    paths = [_write(tmp_path, "ann", a), _write(tmp_path, "bo", b), _write(tmp_path, "cy", c)]
    v = validate_run_files(paths, invariant=conserved_sum(None))
    assert v.verdict == "pass", v.explanation()


def test_a_message_sent_between_recording_and_the_marker_fails_naming_the_rule(
    tmp_path: Path,
) -> None:
    a = [
        init(10, ["bo"], ["bo"]),
        start(1),
        rstate(1, 10),
        send("ann", "bo", 3, 7),  # after turning red, before the red letter
        msend("ann", "bo", 1),
        mrecv("bo", "ann", 1),
        complete(1),
    ]
    b = [
        init(0, ["ann"], ["ann"]),
        recv("ann", "bo", 3, 3),  # bo is still white
        mrecv("ann", "bo", 1),
        rstate(1, 3),
        msend("bo", "ann", 1),
        complete(1),
    ]
    v = _judge(tmp_path, a, b)
    assert v.verdict == "fail"
    assert v.divergence is not None and v.divergence.kind == "red-letter-order"
    assert v.divergence.describe() == (
        f"{tmp_path}/ann.ndjson:4: ann send app 3 on ann -> bo: ann recorded its state for "
        f"snapshot 1 ({tmp_path}/ann.ndjson:3) and sends this message on ann -> bo before red "
        f"letter 1 ({tmp_path}/ann.ndjson:5); EWD 864: “each buffer from a red machine to a "
        "white one contains precisely 1 red letter”: a red machine sends its red letter over "
        f"each output buffer before any other message on it; it reached bo while bo was still "
        f"white ({tmp_path}/bo.ndjson:2), so bo's recorded state counts a message that ann's "
        "recorded state has not sent"
    )
    assert [d.kind for d in v.divergences] == ["red-letter-order", "Lemma0"]
    assert v.explanation().splitlines()[2:] == [
        "1 more:",
        f"  Lemma0 (snapshot 1): {tmp_path}/bo.ndjson:2: bo receive app 3 on ann -> bo",
        "snapshot 1: wrong: it breaks Lemma0 and Lemma1",
    ]


def test_a_message_that_reaches_a_red_machine_is_said_so(tmp_path: Path) -> None:
    a = [
        init(10, ["bo"], ["bo"]),
        start(1),
        rstate(1, 10),
        send("ann", "bo", 3, 7),
        msend("ann", "bo", 1),
        mrecv("bo", "ann", 1),
        complete(1),
    ]
    b = [
        init(0, ["ann"], ["ann"]),
        start(1),
        rstate(1, 0),
        msend("bo", "ann", 1),
        recv("ann", "bo", 3, 3),
        rmsg(1, "ann", "bo", 3),
        mrecv("ann", "bo", 1),
        complete(1),
    ]
    v = _judge(tmp_path, a, b)
    assert v.divergence is not None and v.divergence.model_did.endswith(
        f"it reached bo after bo turned red and while ann -> bo was still white "
        f"({tmp_path}/bo.ndjson:5), so the recorded channel holds a message that ann's "
        "recorded state has not sent"
    )


def _recording_bo(extra: list[Ev]) -> list[Ev]:
    return [
        init(0, ["ann"], ["ann"]),
        start(1),
        rstate(1, 0),
        msend("bo", "ann", 1),
        recv("ann", "bo", "m", "m"),
        *extra,
    ]


ANN_SENDS_M = [
    init("", ["bo"], ["bo"]),
    send("ann", "bo", "m", ""),
    mrecv("bo", "ann", 1),
    rstate(1, ""),
    msend("ann", "bo", 1),
    complete(1),
]


@pytest.mark.parametrize(
    ("extra", "kind", "text"),
    [
        (
            [rmsg(1, "ann", "bo", "m"), rmsg(1, "ann", "bo", "m")],
            "recorded-twice",
            "bo records the message received at {d}/bo.ndjson:5 a second time in snapshot 1 "
            "(first at {d}/bo.ndjson:6); EWD 864: “each red machine records for each of its "
            "input buffers the stream of messages that it receives from that buffer as long "
            "as the latter is white”, once each",
        ),
        (
            [rmsg(1, "ann", "bo", "n")],
            "wrong-record",
            'bo records "n" for the message it received at {d}/bo.ndjson:5, which is "m"; '
            "EWD 864: “each red machine records for each of its input buffers the stream of "
            "messages that it receives from that buffer as long as the latter is white”",
        ),
        (
            [rmsg(1, "ann", "bo", "m"), mrecv("ann", "bo", 1), rmsg(1, "ann", "bo", {"marker": 1})],
            "marker-recorded",
            "bo records the red letter of snapshot 1 (received at {d}/bo.ndjson:7) as a "
            "message of ann -> bo in snapshot 1; a red letter is not a message of the "
            "computation; EWD 864: “each red machine records for each of its input buffers "
            "the stream of messages that it receives from that buffer as long as the latter "
            "is white”",
        ),
        (
            [],
            "missing-record",
            "bo does not record this message of ann -> bo in snapshot 1: it came after bo "
            "recorded its state ({d}/bo.ndjson:3) and before the red letter on the channel "
            "({d}/bo.ndjson:6); EWD 864: “each red machine records for each of its input "
            "buffers the stream of messages that it receives from that buffer as long as the "
            "latter is white”",
        ),
    ],
)
def test_each_recording_bug_is_named(
    tmp_path: Path, extra: list[Ev], kind: str, text: str | None
) -> None:
    tail = [] if any(e.get("msg") == {"marker": 1} for e in extra) else [mrecv("ann", "bo", 1)]
    b = _recording_bo([*extra, *tail, complete(1)])
    v = _judge(tmp_path, ANN_SENDS_M, b)
    assert v.verdict == "fail", v.explanation()
    first = v.divergence
    assert first is not None and first.kind == kind, v.explanation()
    if text is not None:
        assert first.model_did == text.format(d=tmp_path)


def test_a_marker_recorded_as_a_message_says_which_marker(tmp_path: Path) -> None:
    """The recorder links a record to the receive it records: a marker of another
    snapshot put in a channel's record is named as such."""
    ann, bo = Recorder("ann", tmp_path / "ann.ndjson"), Recorder("bo", tmp_path / "bo.ndjson")
    ann.init(0, inputs=["bo"], outputs=["bo"])
    bo.init(0, inputs=["ann"], outputs=["ann"])
    ann.start_snapshot("A")
    ann.record_state("A", 0)
    bo.start_snapshot("B")
    bo.record_state("B", 0)
    cb = bo.send_marker("ann", "B")
    ca = ann.send_marker("bo", "A")
    ann.receive_marker("bo", "B", cb)
    ann.record_message("A", "bo", {"kind": "marker", "id": "B"})  # the bug
    ann.record_state("B", 0)
    cb2 = ann.send_marker("bo", "B")
    bo.receive_marker("ann", "A", ca)
    bo.record_message("B", "ann", {"kind": "marker", "id": "A"})  # the bug
    bo.record_state("A", 0)
    ca2 = bo.send_marker("ann", "A")
    bo.receive_marker("ann", "B", cb2)
    ann.receive_marker("bo", "A", ca2)
    for r, ks in ((ann, "AB"), (bo, "AB")):
        for k in ks:
            r.complete(k)
        r.close()
    v = validate_run_files([tmp_path / "ann.ndjson", tmp_path / "bo.ndjson"])
    assert v.verdict == "fail"
    assert sorted((d.kind, d.why) for d in v.divergences if d.kind == "marker-recorded") == [
        ("marker-recorded", 'snapshot "A"'),
        ("marker-recorded", 'snapshot "B"'),
    ]
    assert v.divergence is not None and v.divergence.kind == "marker-recorded"
    first = next(d for d in v.divergences if d.why == 'snapshot "A"')
    assert first.model_did.startswith(
        f'ann records the red letter of snapshot "B" (received at {tmp_path}/ann.ndjson:5) '
        'as a message of bo -> ann in snapshot "A"'
    )


def test_recording_on_a_channel_after_its_marker_is_named(tmp_path: Path) -> None:
    a = [*ANN_SENDS_M[:5], send("ann", "bo", "late", ""), ANN_SENDS_M[5]]
    b = _recording_bo(
        [
            rmsg(1, "ann", "bo", "m"),
            mrecv("ann", "bo", 1),
            recv("ann", "bo", "late", "late"),
            rmsg(1, "ann", "bo", "late"),
            complete(1),
        ]
    )
    v = _judge(tmp_path, a, b)
    assert v.divergence is not None and v.divergence.kind == "record-after-close"
    assert v.divergence.model_did == (
        f'bo records "late" on ann -> bo in snapshot 1 after the channel turned red: its red '
        f"letter arrived at {tmp_path}/bo.ndjson:7 and this message after it "
        f"({tmp_path}/bo.ndjson:8); EWD 864: “each red machine records for each of its input "
        "buffers the stream of messages that it receives from that buffer as long as the "
        "latter is white”"
    )


def test_a_wrong_recorded_state_is_named(tmp_path: Path) -> None:
    a = [*ANN_SENDS_M[:3], rstate(1, "stale"), *ANN_SENDS_M[4:]]
    b = _recording_bo([rmsg(1, "ann", "bo", "m"), mrecv("ann", "bo", 1), complete(1)])
    v = _judge(tmp_path, a, b)
    assert v.divergence is not None and v.divergence.kind == "wrong-state"
    assert v.divergence.model_did == (
        f'ann records "stale", but its state then was "" (after {tmp_path}/ann.ndjson:2); '
        "EWD 864: “upon turning red, each machine records its own state”"
    )


def test_taking_a_message_after_the_marker_before_recording_is_named(tmp_path: Path) -> None:
    a = [
        init(0, ["bo"], ["bo"]),
        start(1),
        rstate(1, 0),
        msend("ann", "bo", 1),
        send("ann", "bo", 4, 0),  # after the marker: a red message
        mrecv("bo", "ann", 1),
        complete(1),
    ]
    b = [
        init(0, ["ann"], ["ann"]),
        mrecv("ann", "bo", 1),
        recv("ann", "bo", 4, 4),  # taken before bo records: the record counts it
        rstate(1, 4),
        msend("bo", "ann", 1),
        complete(1),
    ]
    v = _judge(tmp_path, a, b)
    assert v.divergence is not None and v.divergence.kind == "late-record"


def test_completing_before_every_input_is_red_is_named(tmp_path: Path) -> None:
    b = _recording_bo([rmsg(1, "ann", "bo", "m"), complete(1), mrecv("ann", "bo", 1)])
    v = _judge(tmp_path, ANN_SENDS_M, b)
    assert v.divergence is not None and v.divergence.kind == "early-complete"
    assert v.divergence.model_did.startswith(
        "bo declares snapshot 1 complete while ann -> bo is still white (no red letter yet)"
    )


# --------------------------------------------------------------------------- completion


def test_a_crashed_run_is_unknown_never_pass(tmp_path: Path) -> None:
    """The issue's run: one log empty, another with one line."""
    (tmp_path / "bo.ndjson").write_bytes(b"")
    one = _write(tmp_path, "ann", [start(1)], end=False)
    v = validate_run_files([one, tmp_path / "bo.ndjson"])
    assert v.verdict == "unknown", v.explanation()
    assert v.explanation().splitlines() == [
        "unknown: 1 event of 1 process judged on their own run (no model): cut inside a snapshot",
        "snapshot 1: never completes: ann never recorded its state",
        "the channels are read from the traffic (no init event lists every node's inputs "
        "and outputs): a channel that carried nothing is not known",
        "not judged: ann starts snapshot 1 and never records its state (EWD 864: “upon "
        "turning red, each machine records its own state”)",
        f"the logs may not hold the whole run: {tmp_path}/bo.ndjson is empty: its process "
        f"wrote no event (it crashed or never started); ann's log ends without its end event "
        f"({tmp_path}/ann.ndjson:1): the process may have crashed or its log been cut short",
    ]


def test_a_crash_before_the_red_letter_arrives_is_unknown_not_a_missing_record(
    tmp_path: Path,
) -> None:
    # bo records its state, takes ann's "m" while ann -> bo is white, and dies before
    # ann's red letter arrives: a program may write a channel's stream when the red
    # letter comes, so the missing record_message proves nothing (the chat example
    # under load found this: its crashed runs were judged fail)
    b = _recording_bo([])
    v = validate_run_files(
        [_write(tmp_path, "ann", ANN_SENDS_M, end=False), _write(tmp_path, "bo", b, end=False)]
    )
    assert v.verdict == "unknown", v.explanation()
    assert "missing-record" not in [d.kind for d in v.divergences]
    # the same run ended cleanly: the red letter that never arrives is the finding
    v = _judge(tmp_path, ANN_SENDS_M, b)
    assert v.verdict == "fail"
    assert [d.kind for d in v.divergences] == ["liveness-open-channel"]


def test_a_log_cut_mid_line_is_unknown(tmp_path: Path) -> None:
    b = _recording_bo([rmsg(1, "ann", "bo", "m")])
    path = _write(tmp_path, "bo", b, end=False)
    with path.open("a", encoding="utf-8") as f:
        f.write('{"node": "bo", "seq": 7, "event": "rec')
    v = validate_run_files([_write(tmp_path, "ann", ANN_SENDS_M), path])
    assert v.verdict == "unknown"
    assert f"the last line of {path} (line 7) is cut short" in v.explanation()


def test_a_snapshot_left_open_in_a_run_that_ended_cleanly_fails_liveness(
    tmp_path: Path,
) -> None:
    b = _recording_bo([rmsg(1, "ann", "bo", "m")])  # ann never sends its red letter ...
    a = [x for x in ANN_SENDS_M if x.get("msg") != {"marker": 1} or x["event"] != "send"]
    v = _judge(tmp_path, a, b)
    assert v.verdict == "fail"
    assert [d.kind for d in v.divergences] == [
        "liveness-open-channel",
        "liveness-missing-red-letter",
    ]
    assert [d.model_did for d in v.divergences][1] == (
        "ann turned red here and never sends red letter 1 on ann -> bo (EWD 864: on “the "
        "receipt of a red letter”, “if the receiving machine was white, it sends one red "
        "letter over each of its output buffers and becomes red” (here: it records before "
        "it takes another message from that buffer))"
    )
    # the same logs without their end events: unknown, and --whole-run makes it a fail
    a2, b2 = _write(tmp_path, "ann", a, end=False), _write(tmp_path, "bo", b, end=False)
    assert validate_run_files([a2, b2]).verdict == "unknown"
    assert validate_run_files([a2, b2], whole_run=True).verdict == "fail"


def test_a_run_without_a_snapshot_is_unknown(tmp_path: Path) -> None:
    v = _judge(tmp_path, [init(1, ["bo"], ["bo"]), send("ann", "bo", 1, 0)], [recv("ann", "bo", 1)])
    assert v.verdict == "unknown"
    assert "no snapshot in the logs: nothing to judge (start one in the run)" in v.notes


def _bo_makes_money(pay: Any) -> tuple[list[Ev], list[Ev]]:
    """ann sends bo 5 (``pay``) and bo's app counts 6: the snapshot is consistent,
    and the application's total is not."""
    a = [
        init(5, ["bo"], ["bo"]),
        send("ann", "bo", pay, 0),
        start(1),
        rstate(1, 0),
        msend("ann", "bo", 1),
        mrecv("bo", "ann", 1),
        complete(1),
    ]
    b = [
        init(0, ["ann"], ["ann"]),
        recv("ann", "bo", pay, 6),  # bo's app makes money
        mrecv("ann", "bo", 1),
        rstate(1, 6),
        msend("bo", "ann", 1),
        complete(1),
    ]
    return a, b


def test_the_application_invariant_is_checked_when_named(tmp_path: Path) -> None:
    a, b = _bo_makes_money({"amount": 5})
    assert _judge(tmp_path, a, b).verdict == "pass"
    v = _judge(tmp_path, a, b, invariant=conserved_sum("amount"))
    assert v.verdict == "fail"
    # the finding points at the event where the run's own total first changed
    assert v.divergence is not None
    assert f"{v.divergence.path}:{v.divergence.line}" == f"{tmp_path}/bo.ndjson:2"
    assert v.divergence.model_did == (
        "snapshot 1: the snapshot holds a total of 6 (states 6, channels 0); the run started "
        "with 5; the run's own total (the states and the messages in flight) first changes "
        "here, from 5 to 6"
    )


# --------------------------------------------------------------------------- the run itself


def test_a_channel_that_reorders_is_not_fifo(tmp_path: Path) -> None:
    a = [init(0, ["bo"], ["bo"]), send("ann", "bo", 1), send("ann", "bo", 2)]
    b = [init(0, ["ann"], ["ann"]), recv("ann", "bo", 2), recv("ann", "bo", 1)]
    v = _judge(tmp_path, a, b)
    assert v.verdict == "fail"
    assert v.divergence is not None and v.divergence.kind == "not-fifo"
    assert v.divergence.model_did == (
        f"ann -> bo delivers 2 (sent at {tmp_path}/ann.ndjson:3) before 1, sent before it "
        f"({tmp_path}/ann.ndjson:2): the channel is not FIFO (EWD 864's buffers are first-in "
        "first-out)"
    )


def test_logs_that_contradict_themselves_are_an_error_naming_both_lines(tmp_path: Path) -> None:
    a = [init(0, ["bo"], ["bo"]), send("ann", "bo", 1)]
    with pytest.raises(InputError) as err:
        _judge(tmp_path, a, [init(0, ["ann"], ["ann"]), recv("ann", "bo", 9)])
    assert err.value.code == "RL-INPUT-LOG-CONFLICT"
    assert err.value.message == (
        f"{tmp_path}/bo.ndjson:2: bo receive app 9 on ann -> bo matches no send: the next "
        f"message sent on ann -> bo is app 1 ({tmp_path}/ann.ndjson:2), and no later send on "
        "it carries this one"
    )
    # a send logged after the message it sent caused a reply that came back
    a = [init(0, ["bo"], ["bo"]), recv("bo", "ann", "re"), send("ann", "bo", "q")]
    b = [init(0, ["ann"], ["ann"]), recv("ann", "bo", "q"), send("bo", "ann", "re")]
    with pytest.raises(InputError) as err:
        _judge(tmp_path, a, b)
    assert err.value.code == "RL-INPUT-LOG-CONFLICT"
    assert "log it before the message is written" in err.value.message


def test_a_report_that_contradicts_what_was_recorded_fails_naming_both_lines(
    tmp_path: Path,
) -> None:
    b = _recording_bo(
        [rmsg(1, "ann", "bo", "m"), mrecv("ann", "bo", 1), complete(1, channels={"ann": []})]
    )
    v = _judge(tmp_path, ANN_SENDS_M, b)
    assert v.verdict == "fail"
    assert v.divergence is not None and v.divergence.kind == "report-contradicts-record"
    assert v.divergence.model_did == (
        "bo's report of snapshot 1 gives ann -> bo as [], but its record_message lines "
        f'record ["m"] ({tmp_path}/bo.ndjson:6 ...): it reports what it did not record'
    )
    b = _recording_bo(
        [rmsg(1, "ann", "bo", "m"), mrecv("ann", "bo", 1), complete(1, state="other")]
    )
    v = _judge(tmp_path, ANN_SENDS_M, b)
    assert v.divergence is not None and v.divergence.model_did == (
        f'bo\'s report of snapshot 1 gives its state as "other", but it recorded 0 '
        f"({tmp_path}/bo.ndjson:3): it reports what it did not record"
    )


# --------------------------------------------------------------------------- the command


def test_the_command_judges_without_a_model_by_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    b = _recording_bo([rmsg(1, "ann", "bo", "m"), mrecv("ann", "bo", 1), complete(1)])
    paths = [str(_write(tmp_path, "ann", ANN_SENDS_M)), str(_write(tmp_path, "bo", b))]
    assert main(["conform", "validate", *paths]) == 0
    assert capsys.readouterr().out.splitlines()[0] == (
        "pass: 16 events of 2 processes judged on their own run (no model): a complete run"
    )
    assert main(["conform", "validate", "--from-log", *paths]) == 0
    (tmp_path / "bo.ndjson").write_bytes(b"")
    assert main(["conform", "validate", *paths]) == 2  # unknown
    assert "unknown:" in capsys.readouterr().out


def test_a_model_refuses_payloads_it_cannot_hold(tmp_path: Path) -> None:
    b = _recording_bo([rmsg(1, "ann", "bo", "m"), mrecv("ann", "bo", 1), complete(1)])
    paths = [_write(tmp_path, "ann", ANN_SENDS_M), _write(tmp_path, "bo", b)]
    cfg = load_model("MCToken2", find_project().spec_dir)
    with pytest.raises(InputError) as err:
        validate_files(cfg, paths)
    assert err.value.message.endswith(
        ": the model MCToken2 holds integer payloads (>= 0) and integer snapshot ids (>= 1), "
        'not "m"; judge the logs on their own run instead, without a model: '
        ".venv/bin/redletter conform validate --from-log LOG..."
    )


# --------------------------------------------------------------------------- the recorder


def test_the_recorder_never_blocks_threads_on_each_other(tmp_path: Path) -> None:
    """A thread inside ``step()`` waits for the program's lock while the thread
    holding that lock logs: with a recorder lock held across the step, this deadlocks."""
    rec = Recorder("ann", tmp_path / "ann.ndjson")
    app = threading.Lock()
    app.acquire()
    inside = threading.Event()

    def worker() -> None:
        with rec.step():
            rec.internal("a")
            inside.set()
            with app:
                rec.internal("b")

    t = threading.Thread(target=worker)
    t.start()
    assert inside.wait(5)
    rec.internal("c")  # would block forever if the step held the recorder's lock
    app.release()
    t.join(5)
    assert not t.is_alive()
    rec.close()
    lines = (tmp_path / "ann.ndjson").read_text(encoding="utf-8").splitlines()
    assert [json.loads(x)["msg"]["internal"] for x in lines[:3]] == ["a", "c", "b"]


def test_an_exception_leaving_the_recorder_writes_no_end(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), Recorder("ann", tmp_path / "ann.ndjson") as rec:
        rec.start_snapshot("s")
        raise RuntimeError("the process dies")
    lines = (tmp_path / "ann.ndjson").read_text(encoding="utf-8").splitlines()
    assert [json.loads(x)["event"] for x in lines] == ["start_snapshot"]
    with Recorder("bo", tmp_path / "bo.ndjson") as rec:
        rec.init({"n": 1})
    lines = (tmp_path / "bo.ndjson").read_text(encoding="utf-8").splitlines()
    assert [json.loads(x)["event"] for x in lines] == ["init", "end"]


# --------------------------------------------------------------------------- your own model

RING3_TLA = """---- MODULE MCRing3 ----
EXTENDS ChandyLamportToken

MCProc          == {"north", "east", "south"}
MCChan          == {<<"north", "east">>, <<"east", "south">>, <<"south", "north">>}
MCTokens        == [north |-> 2, east |-> 0, south |-> 0]
MCSnap          == {1}
MCStarters      == 1 :> {"north"}
MCSequential    == FALSE
MCMaxAppActions == 2
====
"""
RING3_CFG = """CONSTANTS
    Proc <- MCProc
    Chan <- MCChan
    Tokens <- MCTokens
    Snap <- MCSnap
    Starters <- MCStarters
    Sequential <- MCSequential
    MaxAppActions <- MCMaxAppActions
SPECIFICATION FairSpec
INVARIANTS
    TypeOK
    Lemma0
    Lemma1
"""


def _ring3_logs(d: Path) -> list[str]:
    n, e, s = (Recorder(x, d / f"{x}.ndjson") for x in ("north", "east", "south"))
    c = n.send_app("east", 1, state=1)
    n.start_snapshot(1)
    n.record_state(1, 1)
    m = n.send_marker("east", 1)
    e.receive_app("north", 1, c, state=1)
    e.receive_marker("north", 1, m)
    e.record_state(1, 1)
    m = e.send_marker("south", 1)
    e.close_channel(1, "north")
    e.complete(1)
    s.receive_marker("east", 1, m)
    s.record_state(1, 0)
    m = s.send_marker("north", 1)
    s.close_channel(1, "east")
    s.complete(1)
    n.receive_marker("south", 1, m)
    n.close_channel(1, "south")
    n.complete(1)
    for r in (n, e, s):
        r.close()
    return [str(d / f"{x}.ndjson") for x in ("north", "east", "south")]


def test_your_own_model_with_root_and_a_spec_here_that_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "spec"
    spec.mkdir()
    (spec / "MCRing3.tla").write_text(RING3_TLA, encoding="utf-8")
    (spec / "MCRing3.cfg").write_text(RING3_CFG, encoding="utf-8")
    logs = tmp_path / "logs"
    logs.mkdir()
    paths = _ring3_logs(logs)
    for root in (tmp_path, spec):  # a folder holding spec/, or the models' own folder
        assert main(["conform", "validate", "MCRing3", *paths, "--root", str(root)]) == 0
        assert capsys.readouterr().out.splitlines()[-1] == (
            "snapshot 1: the one the algorithm must record"
        )
    assert main(["conform", "validate", *paths]) == 0  # and without a model
    capsys.readouterr()
    monkeypatch.chdir(tmp_path)
    assert main(["conform", "validate", "MCRing3", *paths]) == 5
    err = capsys.readouterr().err
    assert f"error[RL-INPUT-ROOT]: {spec} is not used: it holds no manifest.json" in err
    assert "pass --root . to use it" in err
    assert main(["conform", "validate", "MCRing3", *paths, "--root", "."]) == 0


# --------------------------------------------------------------------------- robustness


def _random_logs(rng: random.Random, d: Path) -> list[Path]:
    nodes = ["a", "b", "c"]
    paths = []
    for n in nodes:
        others = [x for x in nodes if x != n]
        evs: list[Ev] = []
        if rng.random() < 0.5:
            evs.append(init(0, others, others))
        for _ in range(rng.randint(0, 7)):
            q, k, v = rng.choice(others), rng.choice([1, "s"]), rng.randint(0, 2)
            evs.append(
                rng.choice(
                    [
                        send(n, q, v, rng.randint(0, 3)),
                        recv(q, n, v),
                        msend(n, q, k),
                        mrecv(q, n, k),
                        start(k),
                        rstate(k, rng.randint(0, 3)),
                        rmsg(k, q, n, v),
                        rmsg(k, q, n, v, of=rng.randint(1, 6)),
                        {"event": "close_channel", "snapshot": k, "channel": [q, n]},
                        complete(k, state=rng.randint(0, 3), channels={q: [v]}),
                        {"event": "internal", "msg": {"internal": v}, "state": v},
                    ]
                )
            )
        paths.append(_write(d, n, evs, end=rng.random() < 0.6))
    return paths


def test_any_log_gets_a_verdict_or_an_input_error(tmp_path: Path) -> None:
    """Seeded random logs (most contradict themselves): the judge never crashes,
    and a pass only ever comes with every started snapshot complete."""
    verdicts: set[str] = set()
    for seed in range(300):
        rng = random.Random(seed)
        d = tmp_path / str(seed)
        d.mkdir()
        try:
            v = validate_run_files(_random_logs(rng, d), whole_run=rng.random() < 0.2)
        except InputError:
            continue
        verdicts.add(v.verdict)
        v.explanation()
        if v.verdict == "pass":
            assert all(s.ok for s in v.snapshots)
    assert {"fail", "unknown"} <= verdicts


def test_the_command_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    b = _recording_bo([rmsg(1, "ann", "bo", "m")])  # ann never sends its red letter
    a = [x for x in ANN_SENDS_M if x.get("msg") != {"marker": 1} or x["event"] != "send"]
    paths = [str(_write(tmp_path, "ann", a, end=False)), str(_write(tmp_path, "bo", b, end=False))]
    assert main(["conform", "validate", *paths]) == 2
    assert main(["conform", "validate", "--whole-run", *paths]) == 1
    capsys.readouterr()
    assert main(["conform", "validate", "--from-log", "--model", "MCToken2", *paths]) == 5
    assert capsys.readouterr().err.startswith(
        "error[RL-INPUT-USAGE]: --model and --from-log exclude each other: --from-log judges "
        "the logs on their own run, without a model"
    )
    assert main(["conform", "validate", "MCToken2", "--conserved-sum", "amount", *paths]) == 5
    assert capsys.readouterr().err.startswith(
        "error[RL-INPUT-USAGE]: --conserved-sum applies to the judge without a model; with "
        "the model MCToken2, the model's own invariants apply"
    )
    assert main(["conform", "validate", "--conserved-sum=a/b", *paths]) == 5
    assert "a field name is 1 to 100 letters, digits or '_'" in capsys.readouterr().err


def test_conserved_sum_without_a_field_counts_numbers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """States and payloads that are numbers need no FIELD; the option takes one only
    when the word after it is a field name, not a log."""
    a, b = _bo_makes_money(5)
    paths = [str(_write(tmp_path, "ann", a)), str(_write(tmp_path, "bo", b))]
    assert main(["conform", "validate", *paths]) == 0
    for argv in (
        ["--conserved-sum", *paths],
        [*paths, "--conserved-sum"],
        ["--conserved-sum", "--whole-run", *paths],
    ):
        capsys.readouterr()
        assert main(["conform", "validate", *argv]) == 1, argv
        out = capsys.readouterr().out.splitlines()
        assert out[1] == (
            f"invariant: {tmp_path}/bo.ndjson:2: bo receive app 5 on ann -> bo: snapshot 1: the "
            "snapshot holds a total of 6 (states 6, channels 0); the run started with 5; the "
            "run's own total (the states and the messages in flight) first changes here, from "
            "5 to 6"
        )


def test_conserved_sum_on_processes_without_channels(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run of lone processes (no channel at all) is judged, not a crash of the kit:
    its snapshot ends with the last state recorded, where the finding points."""
    a = [init(0, [], []), start(1), rstate(1, 0), complete(1)]
    ok = str(_write(tmp_path, "ann", a))
    assert main(["conform", "validate", "--conserved-sum", ok]) == 0
    assert capsys.readouterr().out.splitlines()[0] == (
        "pass: 5 events of 1 process judged on their own run (no model): a complete run"
    )
    b = [init(0, [], []), start(1), rstate(1, 5), complete(1)]
    bad = str(_write(tmp_path, "bo", b))
    assert main(["conform", "validate", "--conserved-sum", bad]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (
        "fail: 5 events of 1 process judged on their own run (no model): a complete run"
    )
    assert "  invariant (snapshot 1): " + bad + ":3: bo record state for snapshot 1" in out
    assert out[-1] == (
        "snapshot 1: wrong: it breaks Lemma0; the application's invariant does not hold: the "
        "snapshot holds a total of 5 (states 5, channels 0); the run started with 0"
    )


# --------------------------------------------------------------------------- two halves


def _pair(d: Path) -> tuple[Recorder, Recorder]:
    ann, bo = Recorder("ann", d / "ann.ndjson"), Recorder("bo", d / "bo.ndjson")
    ann.init(10, inputs=["bo"], outputs=["bo"])
    bo.init(0, inputs=["ann"], outputs=["ann"])
    return ann, bo


def _closed_and_judged(d: Path, ann: Recorder, bo: Recorder, ok: bool, rule: str) -> Any:
    """Close both logs and judge them (with the money conserved): a pass when ``ok``,
    else a fail whose first finding is ``rule``."""
    ann.close()
    bo.close()
    v = validate_run_files([d / "ann.ndjson", d / "bo.ndjson"], invariant=conserved_sum(None))
    assert v.verdict == ("pass" if ok else "fail"), v.explanation()
    assert ok or (v.divergence is not None and v.divergence.kind == rule), v.explanation()
    return v


@pytest.mark.parametrize("straddle", [False, True])
def test_a_send_whose_debit_comes_before_its_write(tmp_path: Path, straddle: bool) -> None:
    """ann debits 3, then (a sleep) writes the transfer.  Correct: the write goes
    before ann's red letter.  The bug: ann records and sends its red letter in
    between, so the transfer is written after the cut while its debit is before:
    the snapshot loses 3."""
    ann, bo = _pair(tmp_path)
    change = ann.send_change("bo", 3, state=7)  # the debit
    if not straddle:
        c = ann.send_app("bo", 3, change=change)  # the write, before the red letter
    ann.start_snapshot(1)
    ann.record_state(1, 7)
    m = ann.send_marker("bo", 1)
    if straddle:
        c = ann.send_app("bo", 3, change=change)  # BUG: after the red letter
    if not straddle:
        bo.receive_app("ann", 3, c, state=3)
    bo.receive_marker("ann", 1, m)
    bo.record_state(1, 3 if not straddle else 0)
    m2 = bo.send_marker("ann", 1)
    bo.complete(1, channels={"ann": []})
    if straddle:
        bo.receive_app("ann", 3, c, state=3)
    ann.receive_marker("bo", 1, m2)
    ann.complete(1, channels={"bo": []})
    v = _closed_and_judged(tmp_path, ann, bo, not straddle, "straddling-send")
    if not straddle:
        return
    assert v.divergence.describe() == (
        f"{tmp_path}/ann.ndjson:5: ann send marker 1 on ann -> bo: ann changed its state for 3 "
        f"on ann -> bo ({tmp_path}/ann.ndjson:2) before recording its state "
        f"({tmp_path}/ann.ndjson:4) and writes that message only after this red letter: the "
        "recorded state has sent a message that the channel's stream puts after the cut, so "
        "the snapshot loses it; EWD 864: “each buffer from a red machine to a white one "
        "contains precisely 1 red letter”: a red machine sends its red letter over each "
        "output buffer before any other message on it"
    )
    assert [d.kind for d in v.divergences] == ["straddling-send", "Lemma0", "invariant"]


@pytest.mark.parametrize("early", [False, True])
def test_a_send_written_before_its_debit(tmp_path: Path, early: bool) -> None:
    """ann writes the transfer, then debits.  Correct: the debit comes before ann
    records.  The bug: ann records in between, so the transfer is before the red
    letter on the channel while its debit is after the recording: money made."""
    ann, bo = _pair(tmp_path)
    c = ann.send_app("bo", 3, split=True)  # the write
    if not early:
        ann.apply(c["ann"], state=7)  # the debit, before recording
    ann.start_snapshot(1)
    ann.record_state(1, 7 if not early else 10)
    if early:
        ann.apply(c["ann"], state=7)  # BUG: the debit after the recording
    m = ann.send_marker("bo", 1)
    bo.receive_app("ann", 3, c, state=3)
    bo.receive_marker("ann", 1, m)
    bo.record_state(1, 3)
    m2 = bo.send_marker("ann", 1)
    bo.complete(1)
    ann.receive_marker("bo", 1, m2)
    ann.complete(1)
    v = _closed_and_judged(tmp_path, ann, bo, not early, "red-letter-order")
    if not early:
        return
    assert v.divergence.model_did.startswith(
        f"ann writes this message on ann -> bo before red letter 1 ({tmp_path}/ann.ndjson:6), "
        f"but changes its state for it at {tmp_path}/ann.ndjson:5, after recording its state "
        f"for snapshot 1 ({tmp_path}/ann.ndjson:4): the recorded state has not sent it"
    )
    assert "invariant" in [d.kind for d in v.divergences]


@pytest.mark.parametrize("held", ["applied", "recorded", "lost"])
def test_a_message_taken_in_now_and_applied_later(tmp_path: Path, held: str) -> None:
    """bo takes ann's 3 in, and applies it later.  Correct: it applies it before
    recording, or it records it in the channel's stream (it is still in the
    channel, from the state's side).  The bug: neither: the snapshot loses 3."""
    ann, bo = _pair(tmp_path)
    c = ann.send_app("bo", 3, state=7)
    seq = bo.receive_app("ann", 3, c, split=True)  # taken in, not applied
    if held == "applied":
        bo.apply(seq, state=3)
    ann.start_snapshot(1)
    ann.record_state(1, 7)
    m = ann.send_marker("bo", 1)
    bo.receive_marker("ann", 1, m)
    bo.record_state(1, 3 if held == "applied" else 0)
    if held == "recorded":
        bo.record_message(1, "ann", 3, of=seq)
    m2 = bo.send_marker("ann", 1)
    if held != "applied":
        bo.apply(seq, state=3)  # applied after the recording
    bo.complete(1)
    ann.receive_marker("bo", 1, m2)
    ann.complete(1)
    v = _closed_and_judged(tmp_path, ann, bo, held != "lost", "missing-record")
    if held != "lost":
        return
    assert v.divergence.describe() == (
        f"{tmp_path}/bo.ndjson:2: bo receive app 3 on ann -> bo: bo does not record this "
        f"message of ann -> bo in snapshot 1: bo took it in before recording its state "
        f"({tmp_path}/bo.ndjson:4) and applied it only after, so its recorded state does not "
        "hold it, and the channel's record must; EWD 864: “each red machine records for each "
        "of its input buffers the stream of messages that it receives from that buffer as "
        "long as the latter is white”"
    )


# --------------------------------------------------------------------------- the docs


def _section(title: str) -> str:
    doc = (Path(__file__).resolve().parent.parent / "docs" / "instrument.md").read_text("utf-8")
    start = doc.index(f"\n## {title}\n")
    return doc[start : doc.index("\n## ", start + 1)]


def _table_rows(text: str) -> list[list[str]]:
    rows = [
        [c.strip() for c in line.strip().strip("|").split("|")]
        for line in text.splitlines()
        if line.startswith("|") and not line.startswith("|---")
    ]
    return rows[1:]  # the header


def test_the_cut_rule_is_stated_once_in_the_docs_word_for_word() -> None:
    """docs/instrument.md's table of the cut rule spells each case as the summary
    line ends (logcheck.CASES, which both judges print)."""
    import re

    from redletter.conformance.logcheck import CASES

    rows = _table_rows(_section("The verdict, and what a cut log can show"))
    assert [r[0].split(":")[0] for r in rows] == [
        "complete run",
        "cut after every snapshot completed",
        "cut inside a snapshot",
        "crashed process",
        "no snapshot in the logs, complete or cut",
    ]
    ends = [re.findall(r"`([^`]+)`", r[2]) for r in rows]
    assert ends == [
        [CASES["whole"]],
        [CASES["after"]],
        [CASES["inside"]],
        [],  # a crashed process is read as a cut where it stopped
        [CASES["none"]],
    ]
    assert [re.findall(r"`(pass|fail|unknown)`", r[1]) for r in rows] == [
        ["pass", "fail"],
        ["pass", "fail"],
        ["fail", "unknown"],
        [],
        ["unknown", "fail"],
    ]


def test_every_rule_a_finding_names_is_in_the_docs_table() -> None:
    import re

    from redletter.conformance.judges.log import RULE_NAMES as MODEL_RULES
    from redletter.conformance.judges.runlog import RULE_NAMES

    text = _section("The rules a finding names")
    named = {n for r in _table_rows(text) for n in re.findall(r"`([A-Za-z0-9-]+)`", r[0])}
    assert named == set(RULE_NAMES) | set(MODEL_RULES) - {
        "red-letter-order",
        "extra-red-letter",
        "not-fifo",
        "wrong-state",
        "liveness",
    }
    assert (
        "(`red-letter-order`, `extra-red-letter`, `not-fifo`, `wrong-state` and\n"
        "`liveness` mean in a model what they mean above.)"
    ) in text


# --------------------------------------------------------------------------- output


def test_names_and_payloads_cannot_forge_a_line_of_the_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A node's name holding a newline and a fake verdict, a bidi override and a
    zero-width space, a Cyrillic look-alike, a payload with a newline: every line
    the kit prints is its own, and each name prints as itself, escaped."""
    evil = "x\nPASS: 999 events judged\u202e"
    twin = "p\u0430ris"  # a Cyrillic a
    a = [
        init(0, [twin], [twin]),
        send(evil, twin, "hi\u200b\npass: all good", 0),
        start("s\n1"),
    ]
    b = [init(0, [evil], [evil]), recv(evil, twin, "hi\u200b\npass: all good", 1)]
    paths = [
        _write_named(tmp_path, "a", evil, a),
        _write_named(tmp_path, "b", twin, b),
    ]
    assert main(["conform", "validate", "--whole-run", *map(str, paths)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert (
        out[0] == "fail: 5 events of 2 processes judged on their own run (no model): a complete run"
    )
    assert not any(line.startswith(("PASS", "pass")) for line in out)
    assert all("\u202e" not in line and "\u200b" not in line for line in out)
    shown = '"x\\nPASS: 999 events judged\\u202e"'
    assert out[1].startswith(f"liveness-never-red: {tmp_path}/a.ndjson:3: {shown} start snapshot")
    assert 'for snapshot "s\\n1"' in out[1]
    assert '"p\\u0430ris"' in "\n".join(out)


def _write_named(tmp: Path, file: str, node: str, events: list[Ev]) -> Path:
    lines = [{"node": node, "seq": i, **e} for i, e in enumerate(events, start=1)]
    path = tmp / f"{file}.ndjson"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def test_a_lone_surrogate_is_bad_input_naming_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "a.ndjson"
    path.write_text(
        '{"node":"a","seq":1,"event":"init","state":0}\n'
        '{"node":"a","seq":2,"event":"internal","msg":{"internal":"x\\udc00"}}\n',
        encoding="utf-8",
    )
    assert main(["conform", "validate", str(path)]) == 5
    assert capsys.readouterr().err.splitlines()[0] == (
        f"error[RL-INPUT-LOG]: {path}:2: not text the kit accepts: a lone surrogate \\udc00 "
        "(half of a UTF-16 pair, which no Unicode text holds) in a string; write the "
        "character itself, or both halves of its pair"
    )


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1180591620717411303424}',  # 2**70: past 64 bits
        '{"a": 1180591620717411303425, "b": [-9223372036854775809, 18446744073709551616]}',
        '{"a": 9223372036854775807, "b": -9223372036854775808, "c": 18446744073709551615}',
        '{"a": 1e400, "b": -1e400, "c": 1e-400}',  # inf, -inf and 0.0, as json reads them
        '{"a": 0.1, "b": 1.0, "c": -0.0, "d": 1E2, "e": 5e-324, "f": 1.7976931348623157e308}',
        '{"a": 1, "a": 2, "b": true, "c": null, "d": "x\\ud83d\\ude00\\u00e9\\n"}',
        "  [1, [2, [3, {}]]]  ",
    ],
)
def test_a_log_line_is_read_as_the_json_module_reads_it(text: str) -> None:
    """The fast reader (orjson) gives what json gives, type for type: an integer past
    64 bits stays an integer (orjson would make it a float, so two different payloads
    would compare equal), and 1e400 is inf as before."""
    got = loads(text.encode(), path="x", code="RL-INPUT-LOG", line=1)
    want = json.loads(text)
    assert repr(got) == repr(want)
    assert json.dumps(got) == json.dumps(want)


def test_no_line_is_printed_twice(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's run with --whole-run: a snapshot that never completes, said once
    as the liveness finding and once as the snapshot's line, never twice."""
    b = _recording_bo([rmsg(1, "ann", "bo", "m")])  # ann never sends its red letter
    a = [x for x in ANN_SENDS_M if x.get("msg") != {"marker": 1} or x["event"] != "send"]
    paths = [str(_write(tmp_path, "ann", a, end=False)), str(_write(tmp_path, "bo", b, end=False))]
    assert main(["conform", "validate", "--whole-run", *paths]) == 1
    out = capsys.readouterr().out.splitlines()
    assert len(out) == len(set(out)), out
    assert out[0].endswith(": a complete run")
