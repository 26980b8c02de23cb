"""The run judge and the course's log, on hand-written driver documents (no Go needed).

A document is what the COS 418 driver writes for one run (``rundoc``).  The log
reader keeps the course's own events and drops the student's (``courselog``);
the run judge replays them and compares the returned snapshots with what
Chandy–Lamport records for that run (``run``).  A fail never rests on the log
alone: a departure that changed no returned snapshot is a pass with a note.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from redletter.conformance.judges.courselog import read_course_log
from redletter.conformance.judges.run import judge_run
from redletter.conformance.judges.rundoc import parse_run_document
from redletter.conformance.verdict import Verdict
from redletter.errors import InputError

# Two servers N1 (5 tokens) and N2 (3 tokens), links both ways.
TOP = {
    "servers": [{"id": "N1", "tokens": 5}, {"id": "N2", "tokens": 3}],
    "links": [{"src": "N1", "dest": "N2"}, {"src": "N2", "dest": "N1"}],
}

Step = tuple[str, int, int | None, list[dict[str, object]]]


def _send(src: str, dst: str, what: str, n: int) -> dict[str, object]:
    key = "tokens" if what == "token" else "snapshot_id"
    return {"event": "send", "src": src, "dest": dst, "message": what, key: n}


def _recv(src: str, dst: str, what: str, n: int) -> dict[str, object]:
    return {**_send(src, dst, what, n), "event": "receive"}


def _mark(kind: str, server: str, k: int = 0) -> dict[str, object]:
    return {"event": kind, "server": server, "snapshot_id": k}


def _ev(kind: str, *args: object) -> dict[str, object]:
    if kind == "send":
        return {"kind": "send", "src": args[0], "dest": args[1], "tokens": args[2]}
    if kind == "snapshot":
        return {"kind": "snapshot", "server": args[0]}
    return {"kind": "tick", "ticks": args[0]}


def _doc(
    scenario: list[dict[str, object]],
    steps: Sequence[Step],
    tokens: dict[str, int],
    messages: list[tuple[str, str, int]],
    *,
    returned: int | None = None,
    other_records: int = 0,
) -> dict[str, object]:
    snap_event = next(i for i, e in enumerate(scenario) if e["kind"] == "snapshot")
    last = max(t for _, t, _, _ in steps)
    return {
        "format": "redletter-cos418-run",
        "version": 2,
        "dialect": "servers",
        "package": "chandy_lamport",
        "go_version": "go1.x",
        "request_sha256": "0" * 64,
        "nonce": "n",
        "seed": 1,
        "seed_effective": True,
        "topology": TOP,
        "scenario": scenario,
        "outcome": "complete",
        "error": None,
        "time": last,
        "extra_ticks": 0,
        "collect": {"stopped": "", "waited_ms": 0, "idle_ticks": 100},
        "schedule_available": True,
        "other_records": other_records,
        "schedule": [
            {"phase": p, "time": t, "event_index": i, "events": evs} for p, t, i, evs in steps
        ],
        "snapshots": [
            {
                "id": 0,
                "initiator": "N1",
                "event_index": snap_event,
                "start_time": 0,
                "status": "collected",
                "returned_time": last if returned is None else returned,
                "collected_ms": 1,
                "returned_id": 0,
                "tokens": tokens,
                "messages": [
                    {"src": a, "dest": b, "message": "token", "tokens": n} for a, b, n in messages
                ],
            }
        ],
    }


# A token N2 -> N1 in flight when N1 starts the snapshot: it must be recorded on N2 -> N1.
IN_FLIGHT = [_ev("send", "N2", "N1", 1), _ev("snapshot", "N1"), _ev("tick", 5)]
IN_FLIGHT_STEPS: list[Step] = [
    ("inject", 0, 0, [_send("N2", "N1", "token", 1)]),
    ("inject", 0, 1, [_mark("snapshot_start", "N1"), _send("N1", "N2", "marker", 0)]),
    (
        "tick",
        1,
        2,
        [
            _recv("N1", "N2", "marker", 0),
            _send("N2", "N1", "marker", 0),
            _mark("snapshot_end", "N2"),
            _recv("N2", "N1", "token", 1),
        ],
    ),
    ("tick", 2, 2, [_recv("N2", "N1", "marker", 0), _mark("snapshot_end", "N1")]),
]
GOOD = ({"N1": 5, "N2": 2}, [("N2", "N1", 1)])


def _judge(doc: dict[str, object]) -> tuple[Verdict, str, str]:
    j = judge_run(parse_run_document(doc))
    return j.verdict, j.kind, j.explanation()


def test_a_correct_run_passes() -> None:
    verdict, kind, text = _judge(_doc(IN_FLIGHT, IN_FLIGHT_STEPS, *GOOD))
    assert (verdict, kind) == (Verdict.PASS, "")
    assert text == (
        "each step of the logged run (6 sends and receipts) follows Chandy–Lamport's rules, and"
        " the 1 snapshot(s) returned are the ones the algorithm records for this run"
    )


def test_a_missing_in_flight_message_is_named() -> None:
    verdict, kind, text = _judge(_doc(IN_FLIGHT, IN_FLIGHT_STEPS, {"N1": 5, "N2": 2}, []))
    assert (verdict, kind) == (Verdict.FAIL, "missing-in-flight")
    assert text.startswith(
        "Snapshot 0 does not record token(1) on N2→N1: it arrived at time 1, after N1 recorded"
        " its state (time 0) and before that channel's marker (time 2), so it was in flight."
    )
    assert "(Snapshot 0 holds 7 tokens in all, recorded states and in-flight messages;" in text


def test_a_wrong_state_is_named() -> None:
    verdict, kind, text = _judge(_doc(IN_FLIGHT, IN_FLIGHT_STEPS, {"N1": 6, "N2": 2}, []))
    assert (verdict, kind) == (Verdict.FAIL, "wrong-state")
    assert text.startswith(
        "N1 recorded 6 tokens for snapshot 0, but it held 5 when it started snapshot 0 at time 0."
    )


def test_a_message_recorded_after_its_marker_is_named() -> None:
    scenario = [_ev("snapshot", "N1"), _ev("tick", 1), _ev("send", "N2", "N1", 1), _ev("tick", 5)]
    steps: list[Step] = [
        ("inject", 0, 0, [_mark("snapshot_start", "N1"), _send("N1", "N2", "marker", 0)]),
        (
            "tick",
            1,
            1,
            [
                _recv("N1", "N2", "marker", 0),
                _send("N2", "N1", "marker", 0),
                _mark("snapshot_end", "N2"),
            ],
        ),
        ("inject", 1, 2, [_send("N2", "N1", "token", 1)]),
        ("tick", 2, 3, [_recv("N2", "N1", "marker", 0), _mark("snapshot_end", "N1")]),
        ("tick", 3, 3, [_recv("N2", "N1", "token", 1)]),
    ]
    assert _judge(_doc(scenario, steps, {"N1": 5, "N2": 3}, []))[0] == Verdict.PASS
    verdict, kind, text = _judge(_doc(scenario, steps, {"N1": 5, "N2": 3}, [("N2", "N1", 1)]))
    assert (verdict, kind) == (Verdict.FAIL, "recorded-after-marker")
    assert text.startswith(
        "Snapshot 0 records token(1) on N2→N1, which arrived at time 3, after that channel's"
        " marker of snapshot 0 (time 2). Rule broken: a channel is recorded only until its"
        " marker arrives."
    )


LATE: list[Step] = [
    IN_FLIGHT_STEPS[0],
    ("inject", 0, 1, [_mark("snapshot_start", "N1")]),  # no marker at the start...
    ("tick", 1, 2, [_send("N1", "N2", "marker", 0), *IN_FLIGHT_STEPS[2][3]]),  # ...a tick later
    IN_FLIGHT_STEPS[3],
]


def test_a_late_marker_that_changed_no_snapshot_is_not_held_against_the_package() -> None:
    # The log shows the marker a tick late, but nothing overtook it: the snapshot
    # returned is exactly the one of this run, and a log is the package's own writing.
    verdict, kind, text = _judge(_doc(IN_FLIGHT, LATE, *GOOD))
    assert (verdict, kind) == (Verdict.PASS, "")
    assert text.endswith(
        "(its log shows 1 departure(s) from the rules that changed no snapshot, the first: at"
        " time 0, N1 started snapshot 0 but sent no marker on N1→N2 in that step; it sent it"
        " only at time 1)"
    )


def test_a_late_marker_that_changed_the_snapshot_fails_with_its_cause() -> None:
    verdict, kind, text = _judge(_doc(IN_FLIGHT, LATE, {"N1": 5, "N2": 2}, []))
    assert (verdict, kind) == (Verdict.FAIL, "late-marker")
    assert text.startswith(
        "At time 0, N1 started snapshot 0 but sent no marker on N1→N2 in that step; it sent it"
        " only at time 1."
    )


def test_a_snapshot_returned_before_it_was_complete_is_named() -> None:
    # Returned at time 1 with N1's channel still open: the contents are those of an
    # unfinished snapshot.
    verdict, kind, text = _judge(
        _doc(IN_FLIGHT, IN_FLIGHT_STEPS, {"N1": 5, "N2": 2}, [], returned=1)
    )
    assert (verdict, kind) == (Verdict.FAIL, "collected-early")
    assert text.startswith(
        "CollectSnapshot(0) returned at time 1, but snapshot 0 was complete only at time 2, when"
        " N1 received its last marker (on N2→N1)."
    )


# --------------------------------------------------------------------------- the course's log


def _noisy(steps: Sequence[Step]) -> list[Step]:
    """The package's own records added where students add them: a second received
    event in HandlePacket, a send logged again with its fields swapped, a received
    event with a plain int as its message."""
    out: list[Step] = []
    for phase, t, i, evs in steps:
        new: list[dict[str, object]] = []
        for e in evs:
            new.append(e)
            if e["event"] == "receive":
                new.append(dict(e))
                new.append({"event": "receive", "src": e["src"], "dest": e["dest"],
                            "message": "other", "type": "int"})  # fmt: skip
            if e["event"] == "send" and e["message"] == "token":
                new.append({**e, "src": e["dest"], "dest": e["src"]})
        out.append((phase, t, i, new))
    return out


def test_the_packages_own_log_records_are_not_evidence() -> None:
    doc = _doc(IN_FLIGHT, _noisy(IN_FLIGHT_STEPS), *GOOD, other_records=3)
    log = read_course_log(parse_run_document(doc))
    assert log.usable
    assert log.ignored == (
        "3 of records of the package's own types (debug lines)",
        "3 of received events logged a second time for one delivery",
        "3 of receive events whose message is of type int",
        "1 of sent events logged a second time for one message",
    )
    clean = _doc(IN_FLIGHT, IN_FLIGHT_STEPS, *GOOD)
    assert log.steps == parse_run_document(clean).steps
    verdict, kind, _ = _judge(doc)
    assert (verdict, kind) == (Verdict.PASS, "")
    # ... and a real fault is still found under the noise.
    verdict, kind, _ = _judge(_doc(IN_FLIGHT, _noisy(IN_FLIGHT_STEPS), {"N1": 5, "N2": 2}, []))
    assert (verdict, kind) == (Verdict.FAIL, "missing-in-flight")


def test_two_servers_sending_the_same_marker_back_to_back_are_both_kept() -> None:
    # N1's marker to N2 and N2's marker to N1 in one tick look alike swapped, but
    # two servers' sends are never a duplicate: both are kept.
    scenario = [_ev("snapshot", "N1"), _ev("snapshot", "N2"), _ev("tick", 3)]
    steps: list[Step] = [
        ("inject", 0, 0, [_mark("snapshot_start", "N1"), _send("N1", "N2", "marker", 0)]),
        ("inject", 0, 1, [_mark("snapshot_start", "N2", 1), _send("N2", "N1", "marker", 1)]),
        (
            "tick",
            1,
            2,
            [
                _recv("N1", "N2", "marker", 0),
                _send("N2", "N1", "marker", 0),
                _mark("snapshot_end", "N2"),
                _recv("N2", "N1", "marker", 1),
                _send("N1", "N2", "marker", 1),
                _mark("snapshot_end", "N1", 1),
            ],
        ),
    ]
    doc = _doc(scenario, steps, {"N1": 5, "N2": 3}, [])
    snaps = doc["snapshots"]
    assert isinstance(snaps, list)
    snaps.append({**snaps[0], "id": 1, "initiator": "N2", "event_index": 1, "returned_id": 1})
    log = read_course_log(parse_run_document(doc))
    assert log.usable and log.ignored == ()
    assert sum(len(st.events) for st in log.steps) == 10


@pytest.mark.parametrize(
    ("steps", "reason"),
    [
        (
            [
                ("inject", 0, 0, [_send("N2", "N1", "token", 1), _send("N1", "N2", "token", 2)]),
                *IN_FLIGHT_STEPS[1:],
            ],
            "at time 0 the log shows N1 sending token(2) on N1→N2, which no send event of the"
            " scenario asks for at that step",
        ),
        (
            [*IN_FLIGHT_STEPS[:2], ("tick", 1, 2, [_recv("N2", "N1", "marker", 0)])],
            "at time 1 the log shows N1 receiving marker(0) on N2→N1, but the oldest message in"
            " flight there was token(1)",
        ),
        (IN_FLIGHT_STEPS[1:2], "the log shows none of the scenario's sends"),
    ],
)
def test_a_log_that_cannot_be_read_consistently_is_not_used(steps: list[Step], reason: str) -> None:
    doc = parse_run_document(_doc(IN_FLIGHT, steps, {"N1": 5, "N2": 2}, []))
    log = read_course_log(doc)
    assert (log.usable, log.reason) == (False, reason)
    j = judge_run(doc, log)
    assert (j.verdict, j.kind, j.log_usable) == (Verdict.UNKNOWN, "no-schedule", False)
    assert j.message == f"the run cannot be checked against its own log: {reason}"


def test_a_bad_document_is_bad_input() -> None:
    with pytest.raises(InputError) as err:
        parse_run_document({"format": "something else"})
    assert err.value.code == "RL-INPUT-COS418-RUN"
    assert err.value.message == "not a redletter-cos418-run document (format 'something else')"
    with pytest.raises(InputError) as err:
        parse_run_document({"format": "redletter-cos418-run", "version": 1})
    assert err.value.message == "redletter-cos418-run version 1; this kit reads 2"
