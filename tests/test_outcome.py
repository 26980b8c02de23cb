"""Judging an outcome: simulated outcomes pass for every seed; wrong snaps fail, explained."""

from __future__ import annotations

import pytest

from redletter.conformance.formats.cos418 import (
    generate_scenario,
    generate_topology,
    parse_scenario,
    parse_snap,
    parse_topology,
    simulate,
)
from redletter.conformance.judges.outcome import judge_outcome, replay_snapshots

TOP3 = parse_topology("3\nN1 5\nN2 0\nN3 0\nN1 N2\nN2 N3\nN3 N1\nN1 N3\n")
SC3 = parse_scenario("send N1 N2 2\nsend N1 N3 1\nsnapshot N2\n")
RIGHT3 = "0\nN1 2\nN2 0\nN3 0\nN1 N2 token(2)\nN1 N3 token(1)\n"


@pytest.mark.parametrize("seed", range(60))
def test_simulated_outcomes_pass_for_every_seed(seed: int) -> None:
    top = generate_topology(seed, 2 + seed % 3, extra_links=seed % 2)
    sc = generate_scenario(top, seed, 6, 1 + seed % 3)
    snaps = simulate(top, sc, seed)
    j = judge_outcome(top, sc, snaps)
    assert j.verdict == "pass", f"seed {seed}: {j.message}"
    assert j.witness is not None
    # the witness really yields the snapshots
    rec = replay_snapshots(top, j.witness)
    for snap in snaps:
        toks, chans = rec[snap.id]
        assert toks == snap.tokens_dict(), f"seed {seed}"
        for link in top.links:
            assert chans.get(link, ()) == snap.channel(link), f"seed {seed}"


def test_one_outcome_many_schedules() -> None:
    """Outcomes of different seeds differ, and each is judged by outcome, not by seed."""
    top = generate_topology(7, 3, extra_links=2)
    sc = generate_scenario(top, 7, 8, 2, tick_probability=0.1)
    outcomes = {tuple(simulate(top, sc, seed)) for seed in range(40)}
    assert len(outcomes) > 1
    for snaps in outcomes:
        assert judge_outcome(top, sc, list(snaps)).verdict == "pass"


def test_witness_is_in_the_shared_vocabulary() -> None:
    j = judge_outcome(TOP3, SC3, [parse_snap(RIGHT3)])
    assert j.verdict == "pass"
    assert j.message == "a FIFO schedule of 9 steps yields these snapshots"
    assert j.witness is not None
    assert j.witness[:3] == (
        ("SendApp", {"c": ["N1", "N2"], "m": 2}),
        ("SendApp", {"c": ["N1", "N3"], "m": 1}),
        ("StartSnapshot", {"p": "N2", "k": 0}),
    )
    assert {a for a, _ in j.witness} <= {
        "SendApp",
        "ReceiveApp",
        "ReceiveRedLetter",
        "StartSnapshot",
    }


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        (
            "tokens lost",
            "0\nN1 2\nN2 0\nN3 0\nN1 N2 token(2)\n",
            "snapshot 0 does not conserve tokens: it records 2 tokens at the servers and 2 in "
            "flight, 4 in all, but the system holds 5",
        ),
        (
            "message recorded twice",
            "0\nN1 2\nN2 0\nN3 0\nN1 N2 token(2)\nN1 N2 token(2)\nN1 N3 token(1)\n",
            "snapshot 0 does not conserve tokens: it records 2 tokens at the servers and 5 in "
            "flight, 7 in all, but the system holds 5",
        ),
        (
            "message on the wrong channel",
            "0\nN1 2\nN2 0\nN3 0\nN1 N3 token(2)\nN1 N3 token(1)\n",
            "no FIFO schedule of the scenario yields these snapshots:\n"
            "- no FIFO schedule records [] on N1 -> N2 for snapshot 0 "
            "(the closest schedule records [token(2)])\n"
            "- no FIFO schedule records [token(2), token(1)] on N1 -> N3 for snapshot 0 "
            "(the closest schedule records [token(1)])\n"
            "the closest schedule (9 steps) matches 5 of 7 fields",
        ),
        (
            "message on a non-link",
            "0\nN1 2\nN2 0\nN3 0\nN2 N1 token(2)\nN1 N3 token(1)\n",
            "snapshot 0 records a message on N2 -> N1, which is not a link of the topology",
        ),
        ("server missing", "0\nN1 5\nN2 0\n", "snapshot 0 records no tokens for N3"),
        (
            "unknown snapshot",
            "1\nN1 5\nN2 0\nN3 0\n",
            "snapshot 1 is not started by the scenario (it starts snapshots 0)",
        ),
    ],
)
def test_wrong_snaps_fail_with_the_reason(name: str, text: str, message: str) -> None:
    j = judge_outcome(TOP3, SC3, [parse_snap(text)])
    assert j.verdict == "fail", name
    assert j.message == message


def test_missing_snapshot() -> None:
    j = judge_outcome(TOP3, SC3, [])
    assert (j.verdict, j.message) == ("fail", "snapshot 0 (started by N2) was not produced")
    assert judge_outcome(TOP3, SC3, [], require_all=False).verdict == "pass"


TOP2 = parse_topology("2\nN1 3\nN2 0\nN1 N2\nN2 N1\n")
SC2 = parse_scenario("send N1 N2 1\ntick\nsend N1 N2 2\ntick\nsnapshot N2\n")


def test_only_a_non_fifo_schedule_gives_it() -> None:
    # N2 received the 2 before the 1: only possible if the link reordered them.
    j = judge_outcome(TOP2, SC2, [parse_snap("0\nN1 0\nN2 2\nN1 N2 token(1)\n")])
    assert j.verdict == "fail"
    assert j.message == (
        "no FIFO schedule of the scenario yields these snapshots:\n"
        "- no FIFO schedule records N2 with 2 tokens for snapshot 0 "
        "(the closest schedule records 3 tokens)\n"
        "- no FIFO schedule records [token(1)] on N1 -> N2 for snapshot 0 "
        "(the closest schedule records [])\n"
        "the closest schedule (7 steps) matches 2 of 4 fields"
    )
    assert j.closest is not None and len(j.closest) == 7
    # the FIFO counterpart passes
    ok = judge_outcome(TOP2, SC2, [parse_snap("0\nN1 0\nN2 1\nN1 N2 token(2)\n")])
    assert ok.verdict == "pass"


def test_events_of_one_tick_keep_their_file_order() -> None:
    """The simulator performs a group's events in file order: the 1 leaves first."""
    sc = parse_scenario("send N1 N2 1\nsend N1 N2 2\ntick\nsnapshot N2\n")
    j = judge_outcome(TOP2, sc, [parse_snap("0\nN1 0\nN2 2\nN1 N2 token(1)\n")])
    assert j.verdict == "fail"


def test_nothing_is_delivered_between_two_events_of_one_tick() -> None:
    """With ticks, N2 cannot receive the token between the send and its snapshot;
    without (a program that schedules itself), it can."""
    sc = parse_scenario("send N1 N2 1\nsnapshot N2\n")
    snap = parse_snap("0\nN1 2\nN2 1\n")
    ticked = judge_outcome(TOP2, sc, [snap])
    assert (ticked.verdict, ticked.message.splitlines()[1]) == (
        "fail",
        "- no FIFO schedule records N2 with 1 tokens for snapshot 0 "
        "(the closest schedule records 0 tokens)",
    )
    assert judge_outcome(TOP2, sc, [snap], ticks=False).verdict == "pass"


def test_without_time_to_explain_a_fail_names_fields_that_clash() -> None:
    j = judge_outcome(TOP2, SC2, [parse_snap("0\nN1 0\nN2 2\nN1 N2 token(1)\n")], explain=0)
    assert (j.verdict, j.message, j.closest) == (
        "fail",
        "no FIFO schedule of the scenario yields these snapshots; these fields cannot all "
        "hold together:\n"
        "- snapshot 0 records [token(1)] on N1 -> N2",
        None,
    )


def test_budget_gives_unknown() -> None:
    j = judge_outcome(TOP2, SC2, [parse_snap("0\nN1 0\nN2 1\nN1 N2 token(2)\n")], budget=2)
    assert (j.verdict, j.message) == (
        "unknown",
        "the solver's budget of 2 units ran out before a FIFO schedule yielding these "
        "snapshots was found or ruled out",
    )
