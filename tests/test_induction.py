"""EWD 864's lemmas by induction with z3: proofs of the small cases, a counterexample
to induction for every conjunct dropped, every bug class caught, open never proved,
and the command's words."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from redletter.cli.symbolic import app as symbolic_app
from redletter.errors import InputError
from redletter.python_model.symbolic.induction import (
    CONJUNCTS,
    VARIANTS,
    Budget,
    Case,
    prove,
)
from redletter.python_model.symbolic.induction.explain import cti_lines
from redletter.python_model.symbolic.induction.prove import questions

runner = CliRunner()


@pytest.mark.parametrize("app", ["generic", "token"])
def test_the_smallest_case_is_proved(app: str) -> None:
    case = Case("complete", 2, 1, app)
    r = prove(case)
    assert (r.lemma0, r.lemma1) == ("proved", "proved")
    assert all(o.verdict == "proved" for o in r.outcomes)
    assert len(r.outcomes) == questions(case)
    assert {o.layer for o in r.outcomes} == {"reality", "prophecy", "shadow1"}
    assert not r.ctis and not r.open_checks


@pytest.mark.slow
@pytest.mark.parametrize(
    ("topology", "machines", "snapshots"),
    [
        ("complete", 2, 2),
        ("ring", 3, 1),
        ("directed-ring", 3, 1),
        pytest.param("ring", 4, 1, marks=pytest.mark.long),  # CI time
    ],
)
def test_small_cases_are_proved(topology: str, machines: int, snapshots: int) -> None:
    r = prove(Case(topology, machines, snapshots))
    assert (r.lemma0, r.lemma1) == ("proved", "proved"), [
        (o.check, o.reason) for o in r.open_checks
    ]


@pytest.mark.long
@pytest.mark.parametrize(
    ("topology", "machines", "snapshots"),
    [("complete", 3, 2), ("complete", 4, 1), ("ring", 4, 2), ("complete", 4, 2)],
)
def test_the_larger_cases_are_proved(topology: str, machines: int, snapshots: int) -> None:
    # 1 to 17 minutes each on the shared 2-core machine (docs/model.md, "The lemmas by
    # induction"); the default budget gives a case an hour
    r = prove(Case(topology, machines, snapshots))
    assert (r.lemma0, r.lemma1) == ("proved", "proved"), [
        (o.check, o.reason) for o in r.open_checks
    ]


@pytest.mark.parametrize("name", list(CONJUNCTS))
def test_every_conjunct_is_needed(name: str) -> None:
    case = Case("complete", 2, 1)
    r = prove(case, drop=(name,), stop_at_first=True)
    assert r.ctis, f"the invariant without {name} is still proved"
    cti = r.ctis[0]
    assert cti.broken
    # Lemma 0 needs reality's conjuncts only, and not RedBufferHoldsNoLetter: its
    # shadow ignores what a red buffer holds; Lemma 1's does not
    lemma0_needs = CONJUNCTS[name].layer == "reality" and name != "RedBufferHoldsNoLetter"
    assert r.lemma0 == ("counterexample" if lemma0_needs else "proved")
    assert r.lemma1 == "counterexample"
    text = cti_lines(case, cti, r.dropped)
    assert text[1] == f"  the invariant without {name}"
    assert "  broken:" in text
    # the student is told which instance of the dropped conjunct the state breaks
    why = next(i for i, line in enumerate(text) if line.startswith("  why it is needed:"))
    assert text[why].endswith(" breaks what the dropped conjunct says,")
    assert text[why + 1].startswith(f"    {name}(")
    assert text[why + 1].endswith(": " + CONJUNCTS[name].says)


def _smallest(variant: str) -> Case:
    topology, machines, snapshots = {
        "stop-at-first-red-letter": ("complete", 3, 1),
        "mixed-snapshots": ("complete", 2, 2),
    }.get(variant, ("complete", 2, 1))
    return Case(topology, machines, snapshots, "generic", variant)


@pytest.mark.parametrize("variant", [v for v in VARIANTS if v != "correct"])
def test_every_bug_class_breaks_the_invariant(variant: str) -> None:
    r = prove(_smallest(variant), stop_at_first=True)
    assert r.ctis, f"{variant} passes the induction"
    if variant == "swallowing-recording":  # the snapshot is right, the system is wrong
        assert (r.lemma0, r.lemma1) == ("proved", "counterexample")
        assert r.ctis[0].layer == "shadow1"
    else:
        assert r.lemma0 == "counterexample"


def test_stopping_at_the_first_red_letter_is_no_bug_with_one_input_buffer() -> None:
    # on two machines every machine has one input buffer: its first red letter
    # closes its only white buffer, so the "bug" changes nothing
    r = prove(Case("complete", 2, 1, "generic", "stop-at-first-red-letter"))
    assert (r.lemma0, r.lemma1) == ("proved", "proved")


def test_what_z3_does_not_settle_is_open_never_proved() -> None:
    r = prove(
        Case("complete", 2, 1),
        budget=Budget(call_units=2_000, probe_units=1_000),
        layers=("reality",),
    )
    assert (r.lemma0, r.lemma1) == ("open", "open") and not r.ctis
    assert r.open_checks
    assert {o.reason for o in r.open_checks} == {"the per-call resource budget is spent"}


def test_a_spent_wall_clock_budget_leaves_the_case_open() -> None:
    r = prove(Case("complete", 2, 1), budget=Budget(case_seconds=1e-6))
    assert (r.lemma0, r.lemma1) == ("open", "open") and not r.ctis
    # only questions with no obligation at all (a step that touches nothing the
    # layer reads) are settled without z3
    assert all(o.obligations == 0 for o in r.outcomes if o.verdict == "proved")
    assert {o.reason for o in r.open_checks} == {"the case's wall-clock budget is spent"}


def test_an_unknown_conjunct_is_bad_input() -> None:
    with pytest.raises(InputError) as e:
        prove(Case("complete", 2, 1), drop=("RedLetterInvariant",))
    assert str(e.value) == (
        "--drop: unknown conjunct 'RedLetterInvariant'; expected one of " + ", ".join(CONJUNCTS)
    )
    assert e.value.code == "RL-INPUT-USAGE"


def test_a_case_out_of_range_is_bad_input() -> None:
    with pytest.raises(InputError) as e:
        Case("star", 3, 1)
    assert str(e.value) == (
        "--topology: unknown topology 'star'; expected one of ring, directed-ring, complete"
    )


# ------------------------------------------------------------------------- the command


def _run(*args: str) -> tuple[int, str]:
    res = runner.invoke(symbolic_app, ["induction", *args], standalone_mode=False)
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        raise res.exception
    return int(res.return_value if res.return_value is not None else 0), res.output


def test_the_command_proves_and_says_what_was_proved() -> None:
    code, out = _run("--topology", "complete", "--machines", "2")
    assert code == 0, out
    lines = out.splitlines()
    assert lines[0] == (
        "Induction: complete of 2 machines (2 buffers), 1 snapshot, application generic, "
        "variant correct"
    )
    assert lines[1] == (
        "Budget: 50M z3 resource units per solver call (5M before a question is split into "
        "cases), 3600 s of wall-clock time per case"
    )
    assert lines[2] == "Invariant: reality 5, prophecy 3, shadow1 2 conjuncts"
    assert lines[-2:] == [
        "Lemma 0: proved (for every run, however long, with unbounded buffers and values, "
        "for any application)",
        "Lemma 1: proved (for every run, however long, with unbounded buffers and values, "
        "for any application)",
    ]


def test_the_command_prints_the_counterexample_when_a_conjunct_is_dropped() -> None:
    code, out = _run(
        "--topology", "complete", "--machines", "2", "--drop", "WhiteMachineRecordsNothing"
    )
    assert code == 1, out
    lines = out.splitlines()
    assert lines[0] == (
        "Counterexample to induction in layer reality: reality (the red-letter traffic and "
        "the recording) and Lemma 0"
    )
    assert lines[1] == "  the invariant without WhiteMachineRecordsNothing"
    assert "  the step: ReceiveApp(p1→p2, i = 1) of " in out
    assert (
        "    WhiteMachineRecordsNothing(1, p1→p2): a machine white in k has recorded "
        "nothing on its input buffers for k" in lines
    )
    assert (
        "    WhiteActionPossible(1): Lemma 0's shadow can take the action a white machine "
        "takes" in lines
    )
    assert (
        "  stopped at the first counterexample: 32 questions not asked (--keep-going asks "
        "them)" in lines
    )
    assert lines[-2:] == ["Lemma 0: counterexample", "Lemma 1: counterexample"]


def test_the_command_says_open_when_the_budget_is_too_small() -> None:
    code, out = _run("--topology", "complete", "--machines", "2", "--call-units", "2000")
    assert code == 2, out
    assert out.splitlines()[-1] == (
        "Lemma 1: open (not proved: z3 did not settle every question within the budget)"
    )


def test_the_command_lists_conjuncts_and_variants() -> None:
    code, out = _run("--list")
    assert code == 0
    for name in (*CONJUNCTS, *VARIANTS):
        assert name in out


def test_the_command_refuses_an_unknown_variant() -> None:
    res = runner.invoke(symbolic_app, ["induction", "--variant", "nope"], standalone_mode=False)
    assert isinstance(res.exception, InputError)
    assert str(res.exception) == ("unknown variant 'nope'; expected one of " + ", ".join(VARIANTS))


def test_a_layer_not_checked_proves_nothing() -> None:
    r = prove(Case("complete", 2, 1), layers=("reality",))
    assert (r.lemma0, r.lemma1) == ("proved", "open")
