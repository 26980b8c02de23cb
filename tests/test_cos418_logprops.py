"""Properties of the run judge on correct runs made in Python (``tests/cos418_runs.py``).

The worst verdict the kit can give is a fail on correct code.  A correct run's
log, read as the course writes it, must pass, with or without the records
students add to their logs; and a snapshot changed by one token must fail.
"""

from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from redletter.conformance.adapters.cos418.campaign import generate_case
from redletter.conformance.judges.courselog import read_course_log
from redletter.conformance.judges.run import judge_run
from redletter.conformance.judges.rundoc import parse_run_document
from redletter.conformance.verdict import Verdict
from tests.cos418_runs import course_run

CASES = st.tuples(st.integers(0, 10_000), st.integers(0, 200), st.integers(0, 10_000))


@settings(max_examples=150, deadline=None)
@given(CASES)
def test_a_correct_runs_log_passes_and_nothing_is_dropped(case: tuple[int, int, int]) -> None:
    seed, index, sim_seed = case
    c = generate_case(seed, index)
    doc = parse_run_document(course_run(c.topology, c.scenario, sim_seed))
    log = read_course_log(doc)
    assert (log.usable, log.ignored) == (True, ()), (c.name, seed, sim_seed, log.reason)
    j = judge_run(doc, log)
    assert j.verdict == Verdict.PASS, (c.name, seed, sim_seed, j.message)


@settings(max_examples=150, deadline=None)
@given(CASES)
def test_the_packages_own_records_never_turn_a_pass_into_a_fail(
    case: tuple[int, int, int],
) -> None:
    seed, index, sim_seed = case
    c = generate_case(seed, index)
    doc = parse_run_document(course_run(c.topology, c.scenario, sim_seed, noise=True))
    j = judge_run(doc)
    assert j.verdict == Verdict.PASS, (c.name, seed, sim_seed, j.message)


@settings(max_examples=80, deadline=None)
@given(CASES, st.booleans())
def test_a_snapshot_changed_by_one_token_fails(case: tuple[int, int, int], noise: bool) -> None:
    seed, index, sim_seed = case
    c = generate_case(seed, index)
    data = course_run(c.topology, c.scenario, sim_seed, noise=noise)
    bad = copy.deepcopy(data)
    snaps = bad["snapshots"]
    assert isinstance(snaps, list) and snaps
    tokens = snaps[-1]["tokens"]
    server = sorted(tokens)[index % len(tokens)]
    tokens[server] += 1
    j = judge_run(parse_run_document(bad))
    assert (j.verdict, j.kind) == (Verdict.FAIL, "wrong-state"), (c.name, seed, sim_seed)
