"""What a COS 418 report shows as expected: Chandy–Lamport's run on the logged
application schedule with every marker sent when the rules say
(``conformance/judges/expected.py``), never the package's own late or missing markers.

Hand-written driver documents (``tests/test_cos418_runjudge.py``'s) pin the cases in
words; runs made in Python (``tests/cos418_runs.py``) check the properties on many
scenarios: on a correct run the expectation is exactly the run's own record; on a
package that holds its markers back (the gallery's ``marker-after-app``) every expected
snapshot conserves the tokens, and the failure names the places where the package's
snapshot differs from it.
"""

from __future__ import annotations

from html import escape

from hypothesis import given, settings
from hypothesis import strategies as st

from redletter.conformance.adapters.cos418.campaign import generate_case
from redletter.conformance.adapters.cos418.judge import RunResult
from redletter.conformance.adapters.cos418.report import snapshots_html
from redletter.conformance.formats.cos418 import RecordedMessage, Snap
from redletter.conformance.judges.expected import expected_run
from redletter.conformance.judges.run import RunJudgement, differences, judge_run
from redletter.conformance.judges.rundoc import RunDocument, parse_run_document
from redletter.conformance.verdict import Verdict
from tests.cos418_runs import course_run
from tests.test_cos418_runjudge import (
    GOOD,
    IN_FLIGHT,
    IN_FLIGHT_STEPS,
    Step,
    _doc,
    _ev,
    _mark,
    _recv,
    _send,
)

CASES = st.tuples(st.integers(0, 10_000), st.integers(0, 200), st.integers(0, 10_000))


def check_expectation(r: RunResult) -> None:
    """What a failing run's report shows as expected (the gallery's slow test calls this
    on every failing package of both dialects): every expected snapshot conserves the
    system's tokens, and the report lists exactly the places where the package's
    snapshots differ from them (in the failure's words too, when the failure is the run
    judge's); a run judged without its log shows no expectation."""
    if r.document is None or r.run is None or not r.run.log_usable:
        assert r.expected == (), r.message  # the report says why there is none
        return
    top = r.document.topology
    assert len(r.expected) == len(r.document.snapshots), r.message  # all complete
    for s in r.expected:
        assert _total(s) == top.total, (s, r.message)
    diffs = differences(r.expected, r.recorded, top.ids, top.links)
    finding = r.run.finding
    if finding is None:  # a failure the log's rules do not explain (a data race)
        assert diffs == (), (diffs, r.message)
        return
    assert finding.differences == diffs, r.message
    html = "".join(snapshots_html(r, top.ids, top.links))
    for d in diffs:
        assert f"<li>{escape(d.describe())}</li>" in html, (d, html)
    if diffs and finding.message in r.message:
        listed = "; ".join(d.describe() for d in diffs[:6])
        assert f"Where the package's snapshots differ from Chandy–Lamport's: {listed}" in (
            r.message
        ), r.message


def _total(s: Snap) -> int:
    return sum(n for _, n in s.tokens) + sum(m.n for m in s.messages)


def _norm(snaps: tuple[Snap, ...]) -> list[tuple[object, ...]]:
    """Snapshots as sets of facts: tokens by server, messages by link in their order."""
    return sorted(
        (
            s.id,
            tuple(sorted(s.tokens)),
            tuple(sorted({(m.src, m.dst): s.channel((m.src, m.dst)) for m in s.messages}.items())),
        )
        for s in snaps
    )


def test_a_correct_runs_expectation_is_its_own_record() -> None:
    doc = parse_run_document(_doc(IN_FLIGHT, IN_FLIGHT_STEPS, *GOOD))
    run = expected_run(doc)
    assert run is not None
    assert run.snaps == (Snap(0, (("N1", 5), ("N2", 2)), (RecordedMessage("N2", "N1", 1),)),)
    assert run.moved == () and run.after == 0 and run.notes() == ()
    assert {e.origin for e in run.events} == {"logged"}


# N1 starts snapshot 0 and, in the same step, sends token(2) to N2; its marker leaves
# only a tick later, behind the token (the gallery's marker-after-app).  N2 counts the
# token in its state: 5 + 2 + 2 = 9 tokens in an 8-token system.
OVERTAKEN = [_ev("snapshot", "N1"), _ev("send", "N1", "N2", 2), _ev("tick", 5)]
OVERTAKEN_STEPS: list[Step] = [
    ("inject", 0, 0, [_mark("snapshot_start", "N1")]),
    ("inject", 0, 1, [_send("N1", "N2", "token", 2)]),
    ("tick", 1, 2, [_send("N1", "N2", "marker", 0)]),
    (
        "tick",
        2,
        2,
        [
            _recv("N1", "N2", "token", 2),
        ],
    ),
    (
        "tick",
        3,
        2,
        [
            _recv("N1", "N2", "marker", 0),
            _send("N2", "N1", "marker", 0),
            _mark("snapshot_end", "N2"),
        ],
    ),
    ("tick", 4, 2, [_recv("N2", "N1", "marker", 0), _mark("snapshot_end", "N1")]),
]


def _judge(doc: RunDocument) -> RunJudgement:
    j = judge_run(doc)
    assert j.finding is not None, j.message
    return j


def test_a_late_marker_is_the_finding_not_an_input_to_the_expectation() -> None:
    doc = parse_run_document(_doc(OVERTAKEN, OVERTAKEN_STEPS, {"N1": 5, "N2": 5}, []))
    j = _judge(doc)
    # the logged order would expect what the package returned (N2 with the token);
    # on time, the marker travels ahead of the token, which is in neither record
    assert j.expected == (Snap(0, (("N1", 5), ("N2", 3)), ()),)
    assert _total(j.expected[0]) == 8 and _total(j.recorded[0]) == 10
    finding = j.finding
    assert finding is not None and finding.kind == "marker-overtaken"
    assert finding.differences == differences(j.expected, j.recorded, ("N1", "N2"), ())
    assert [d.describe() for d in finding.differences] == [
        "snapshot 0 at N2 (returned 5 tokens; Chandy–Lamport records 3 tokens)"
    ]
    assert finding.message.endswith(
        "Where the package's snapshots differ from Chandy–Lamport's: snapshot 0 at N2"
        " (returned 5 tokens; Chandy–Lamport records 3 tokens)."
    )
    run = j.expected_run
    assert run is not None
    moved, follows = run.moved
    assert moved.describe() == (
        "marker 0 on N1→N2 was due at time 0; the package sent it at time 1, after"
        " token(2) sent at time 0, which on time travels behind it; on time it arrives at"
        " time 2"
    )
    # N2's own marker was on time for the package's run; with N1's on time, N2 records
    # (and sends it) earlier
    assert follows.describe() == (
        "marker 0 on N2→N1 follows: with the markers on time, N2 records its state and"
        " sends it at time 2 (in the package's run its first marker came at time 3); on"
        " time it arrives at time 4"
    )
    # drawn both ways: the rule's marker, and the package's where the log shows it
    markers = [
        (e.kind, e.origin, e.step)
        for e in run.events
        if e.message == "marker" and e.link == ("N1", "N2")
    ]
    assert markers == [
        ("send", "rule", 0),
        ("send", "package", 2),
        ("receive", "rule", 3),
        ("receive", "package", 4),
    ]


MISSING_STEPS: list[Step] = [
    ("inject", 0, 0, [_mark("snapshot_start", "N1")]),  # N1 never sends its marker
    ("inject", 0, 1, [_send("N1", "N2", "token", 2)]),
    ("tick", 2, 2, [_recv("N1", "N2", "token", 2)]),
]


def test_a_marker_never_sent_arrives_where_the_rules_put_it() -> None:
    doc = parse_run_document(_doc(OVERTAKEN, MISSING_STEPS, {"N1": 5, "N2": 5}, [], returned=2))
    run = expected_run(doc)
    assert run is not None
    # ahead of the token on N1→N2; N2's own marker arrives after the run
    assert run.snaps == (Snap(0, (("N1", 5), ("N2", 3)), ()),)
    assert run.after == 1
    (moved, *rest) = run.moved
    assert moved.describe() == (
        "marker 0 on N1→N2 was due at time 0; the package never sent it, after token(2)"
        " sent at time 0, which on time travels behind it; on time it arrives at time 2"
    )
    assert [m.link for m in rest] == [("N2", "N1")]
    assert run.notes()[-1] == (
        "The expected run goes on 1 step(s) after the logged run: the markers the package"
        " never delivered arrive then (what is still in flight is delivered link by link,"
        " oldest first)."
    )


@settings(max_examples=120, deadline=None)
@given(CASES)
def test_on_a_correct_run_the_expectation_is_the_logged_runs(case: tuple[int, int, int]) -> None:
    seed, index, sim_seed = case
    c = generate_case(seed, index)
    doc = parse_run_document(course_run(c.topology, c.scenario, sim_seed))
    j = judge_run(doc)
    assert j.verdict == Verdict.PASS, (c.name, seed, sim_seed, j.message)
    assert _norm(j.expected) == _norm(doc.snaps()), (c.name, seed, sim_seed)
    assert j.expected_run is not None and j.expected_run.moved == ()


@settings(max_examples=150, deadline=None)
@given(CASES)
def test_with_markers_held_back_the_expectation_conserves_and_the_failure_says_where(
    case: tuple[int, int, int],
) -> None:
    seed, index, sim_seed = case
    c = generate_case(seed, index)
    doc = parse_run_document(course_run(c.topology, c.scenario, sim_seed, late_markers=True))
    j = judge_run(doc)
    where = (c.name, seed, sim_seed)
    total = c.topology.total
    assert j.expected_run is not None, where
    assert len(j.expected) == len(doc.snapshots), where  # every snapshot completes
    for s in j.expected:
        assert _total(s) == total, (where, s)
    diffs = differences(j.expected, j.recorded, c.topology.ids, c.topology.links)
    finding = j.finding
    if finding is None:
        # nothing overtook a held marker: the snapshots are the algorithm's
        assert diffs == (), (where, diffs)
        return
    # the failure says exactly where the package's snapshots differ from the expected
    assert finding.differences == diffs, where
    listed = finding.message.split("Where the package's snapshots differ from Chandy–Lamport's: ")
    if not diffs:
        assert len(listed) == 1, where
        return
    shown = "; ".join(d.describe() for d in diffs[:6])
    assert listed[1].startswith(shown), (where, listed[1])
    # a snapshot that does not hold the system's tokens differs somewhere
    for s in j.recorded:
        if _total(s) != total:
            assert any(d.snapshot == s.id for d in diffs), (where, s)


def test_a_run_judged_by_outcome_alone_shows_no_expected_table() -> None:
    """Where the log cannot be used, the snapshots are judged only up to some FIFO
    schedule: the report says so instead of a table of one expected snapshot."""
    from redletter.conformance.adapters.cos418.judge import judge_raw
    from redletter.conformance.adapters.cos418.workspace import RawRun, RunLimits
    from redletter.conformance.verdict import Verdict as V

    data = _doc(IN_FLIGHT, IN_FLIGHT_STEPS, {"N1": 5, "N2": 2}, [])
    data["schedule_available"] = False
    data["schedule_note"] = "the simulator's log could not be read"
    doc = parse_run_document(data)
    raw = RawRun(doc.topology, doc.scenario, 1, data, "", 0, "", "", 0.1, RunLimits(), False,
                 "0" * 64, "n")  # fmt: skip

    def outcome(*_: object) -> tuple[V, str]:
        return V.FAIL, "no FIFO schedule gives N2→N1 nothing while N1 holds 5"

    r = judge_raw(raw, outcome=outcome)
    assert r.verdict == V.FAIL and r.expected == ()
    html = "".join(snapshots_html(r, doc.topology.ids, doc.topology.links))
    assert html.startswith(
        "<p>There is no one snapshot Chandy–Lamport records to show here: this run's log could"
        " not be used, so the snapshots were judged by outcome, up to <i>some</i> FIFO schedule"
        " of the scenario (does any such schedule yield them?). What the package returned:</p>"
    )
    assert "Chandy–Lamport records</th>" not in html
    assert "<th>the package returned</th>" in html
    check_expectation(r)


# N1's marker goes out late behind token(2); meanwhile N2 sends a token back.  On time
# the marker could arrive any time from time 1 to time 3, and what N2 records depends on
# whether it comes before or after N2's send at time 2.
WINDOW = [
    _ev("snapshot", "N1"),
    _ev("send", "N1", "N2", 2),
    _ev("tick", 2),
    _ev("send", "N2", "N1", 1),
    _ev("tick", 5),
]
WINDOW_STEPS: list[Step] = [
    ("inject", 0, 0, [_mark("snapshot_start", "N1")]),
    ("inject", 0, 1, [_send("N1", "N2", "token", 2)]),
    ("tick", 1, 2, [_send("N1", "N2", "marker", 0)]),
    ("inject", 2, 3, [_send("N2", "N1", "token", 1)]),
    ("tick", 3, 4, [_recv("N1", "N2", "token", 2)]),
    ("tick", 4, 4, [_recv("N1", "N2", "marker", 0), _send("N2", "N1", "marker", 0),
                    _mark("snapshot_end", "N2")]),
    ("tick", 5, 4, [_recv("N2", "N1", "token", 1)]),
    ("tick", 6, 4, [_recv("N2", "N1", "marker", 0), _mark("snapshot_end", "N1")]),
]  # fmt: skip


def test_where_the_moment_a_marker_arrives_is_free_the_expectation_says_so() -> None:
    doc = parse_run_document(_doc(WINDOW, WINDOW_STEPS, {"N1": 5, "N2": 4}, [("N2", "N1", 1)]))
    run = expected_run(doc)
    assert run is not None
    # the latest moment: just before token(2) arrives, after N2 sent token(1)
    assert run.snaps == (Snap(0, (("N1", 5), ("N2", 2)), (RecordedMessage("N2", "N1", 1),)),)
    assert _total(run.snaps[0]) == 8
    moved = run.moved[0]
    assert moved.window == (1, 3)
    assert moved.describe().endswith(
        "on time it arrives at time 3 (any time from 1 to 3 keeps the application's"
        " schedule, and what N2 records depends on when: the expected snapshot takes the"
        " latest)"
    )
