"""Findings on adhoccomputing's ChandyLamportComponentModel, pinned per scenario.

Scenarios are generated (seeded) COS 418 scenarios on 2–4 servers with one or two
snapshots; the adapter drives the library's components and the outcome judge rules,
without the simulator's ticks (``ticks=False``): the adapter delivers messages
between any two events, in a seeded order of its own.
"""

from __future__ import annotations

import importlib.util

import pytest

from redletter.conformance.formats.cos418 import (
    Snap,
    generate_scenario,
    generate_topology,
    parse_scenario,
    parse_topology,
)
from redletter.conformance.judges.outcome import judge_outcome

if (
    importlib.util.find_spec("adhoccomputing") is None
    or importlib.util.find_spec("networkx") is None
):
    pytest.skip(
        "adhoccomputing not installed: "
        ".venv/bin/pip install adhoccomputing==2.1.7 networkx requests",
        allow_module_level=True,
    )

from redletter.conformance.formats.adhoc import adhoc_version, run_adhoc

# (seed, servers, snapshots, verdict, first line of the explanation)
FINDINGS = [
    (0, 2, 1, "pass", "a FIFO schedule of 7 steps yields these snapshots"),
    (1, 3, 1, "pass", "a FIFO schedule of 15 steps yields these snapshots"),
    (2, 4, 1, "pass", "a FIFO schedule of 16 steps yields these snapshots"),
    (3, 2, 2, "fail", "no FIFO schedule of the scenario yields these snapshots:"),
    (4, 3, 2, "fail", "snapshot 1 records no tokens for N3"),
    (5, 4, 2, "fail", "no FIFO schedule of the scenario yields these snapshots:"),
    (6, 2, 1, "pass", "a FIFO schedule of 11 steps yields these snapshots"),
    (7, 3, 1, "pass", "a FIFO schedule of 11 steps yields these snapshots"),
    (8, 4, 1, "pass", "a FIFO schedule of 16 steps yields these snapshots"),
    (9, 2, 2, "fail", "no FIFO schedule of the scenario yields these snapshots:"),
    (10, 3, 2, "fail", "snapshot 1 records no tokens for N1"),
    (11, 4, 2, "fail", "no FIFO schedule of the scenario yields these snapshots:"),
]


def test_version() -> None:
    assert adhoc_version() == "2.1.7"


@pytest.mark.parametrize(("seed", "servers", "snapshots", "verdict", "first"), FINDINGS)
def test_findings(seed: int, servers: int, snapshots: int, verdict: str, first: str) -> None:
    top = generate_topology(seed, 2 + seed % 3)
    sc = generate_scenario(top, seed, 5, 1 + (seed // 3) % 2)
    assert (len(top.servers), len(sc.snapshot_starters)) == (servers, snapshots)
    run = run_adhoc(top, sc, seed)
    assert run.crashed is None, f"seed {seed}: {run.crashed}"
    j = judge_outcome(top, sc, run.snaps, ticks=False)
    assert (j.verdict, j.message.splitlines()[0]) == (verdict, first), f"seed {seed}: {j.message}"


TOP = parse_topology("2\nN1 9\nN2 8\nN1 N2\nN2 N1\n")
SC = parse_scenario(
    "send N1 N2 1\nsend N2 N1 5\nsend N1 N2 8\nsnapshot N2\nsnapshot N1\ntick\nsend N2 N1 3\ntick\n"
)


def test_concurrent_snapshots_are_merged_into_one() -> None:
    """No snapshot ids: two concurrent snapshots are one recording, reported twice."""
    run = run_adhoc(TOP, SC, 3)
    assert [s.id for s in run.snaps] == [0, 1]
    assert (run.snaps[0].tokens, run.snaps[0].messages) == (
        run.snaps[1].tokens,
        run.snaps[1].messages,
    )
    j = judge_outcome(TOP, SC, run.snaps, ticks=False)
    assert j.message == (
        "no FIFO schedule of the scenario yields these snapshots:\n"
        "- no FIFO schedule records N1 with 0 tokens for snapshot 0 "
        "(the closest schedule records 5 tokens)\n"
        "- no FIFO schedule records [token(5)] on N2 -> N1 for snapshot 0 "
        "(the closest schedule records [])\n"
        "- no FIFO schedule records N2 with 4 tokens for snapshot 1 "
        "(the closest schedule records 12 tokens)\n"
        "- no FIFO schedule records [token(8)] on N1 -> N2 for snapshot 1 "
        "(the closest schedule records [])\n"
        "the closest schedule (14 steps) matches 4 of 8 fields"
    )


def test_reported_channel_states_alias_live_lists() -> None:
    """A later snapshot appends to the lists an earlier report holds: tokens appear."""
    top = generate_topology(15, 2)
    sc = generate_scenario(top, 15, 5, 2)
    run = run_adhoc(top, sc, 15)
    j = judge_outcome(top, sc, run.snaps, ticks=False)
    assert j.verdict == "fail"
    assert j.message.startswith("snapshot 0 does not conserve tokens:")


def test_library_wiring_never_completes() -> None:
    """Wired as the library's Topology wires nodes, no snapshot ever completes."""
    top = generate_topology(0, 3)
    sc = generate_scenario(top, 0, 5, 1)
    run = run_adhoc(top, sc, 0, register_inbound=False)
    assert (run.snaps, run.reports, run.crashed) == ((), 0, None)
    j = judge_outcome(top, sc, list[Snap](), ticks=False)
    assert (j.verdict, j.message) == (
        "fail",
        f"snapshot 0 (started by {sc.snapshot_starters[0]}) was not produced",
    )
