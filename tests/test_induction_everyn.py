"""EWD 864's lemmas by induction for every N: the proof over sorts, a counterexample
for every conjunct dropped and every bug class (replayed, on a small network, with a
real run behind each bug class), open never proved, vacuity and a counterexample
that does not replay are errors, the fragment each question sits in, and the
command's words."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

import redletter.python_model.symbolic.induction.everyn.prove as prove_mod
from redletter.cli.symbolic import app as symbolic_app
from redletter.errors import InputError, InternalError
from redletter.python_model.symbolic.induction import VARIANTS, Budget
from redletter.python_model.symbolic.induction.everyn import (
    CONJUNCTS,
    prove_every_n,
    questions,
)
from redletter.python_model.symbolic.induction.everyn.concrete import prophecy_of_run
from redletter.python_model.symbolic.induction.everyn.explain import cti_lines
from redletter.python_model.symbolic.induction.everyn.fragment import classify
from redletter.python_model.symbolic.induction.everyn.replay import replay
from redletter.python_model.symbolic.induction.everyn.result import EnCti
from redletter.python_model.symbolic.induction.everyn.vocab import Vocabulary, forall
from redletter.python_model.symbolic.induction.everyn.witness import reachable_violation
from redletter.python_model.z3env import z3
from tests.everyn_support import TOKEN, make_net, random_run, shipped

runner = CliRunner()

STRATIFIED = "stratified, decidable (functions Message→Machine; no cycle)"


def test_the_reality_layer_is_proved_for_every_n() -> None:
    r = prove_every_n(layers=("reality",))
    assert r.lemma0 == "proved" and r.lemma1 == "open"
    assert [o.check for o in r.outcomes] == [
        "Initiation",
        "SendApp",
        "InternalEvent",
        "ReceiveApp",
        "ReceiveRedLetter",
        "StartSnapshot",
        "Lemma0EndsInSnapshotState",
    ]
    assert all(o.verdict == "proved" for o in r.outcomes)
    assert {o.fragment for o in r.outcomes} == {STRATIFIED}


@pytest.mark.slow
def test_both_lemmas_are_proved_for_every_n() -> None:
    r = prove_every_n()
    assert (r.lemma0, r.lemma1) == ("proved", "proved"), [
        (o.check, o.reason) for o in r.open_checks
    ]
    assert len(r.outcomes) == questions()
    assert {o.layer for o in r.outcomes} == {"reality", "prophecy", "shadow1", "liveness"}
    assert {o.fragment for o in r.outcomes} == {STRATIFIED}
    assert r.liveness == "proved" and r.verdict == "proved"
    assert not r.ctis


def _needed(name: str) -> None:
    r = prove_every_n(drop=(name,), stop_at_first=True)
    assert r.ctis, f"the invariant without {name} is still proved"
    cti = r.ctis[0]
    assert cti.broken and cti.net.machines >= 2
    # Lemma 0 needs reality's conjuncts only, and not RedBufferHoldsNoLetter (its shadow
    # ignores what a red buffer holds) nor RecordedInSendOrder (nor does it compare a
    # recorded stream with the send order); Lemma 1 needs every conjunct
    lemma0_needs = CONJUNCTS[name].layer == "reality" and name not in (
        "RedBufferHoldsNoLetter",
        "RecordedInSendOrder",
    )
    assert r.lemma0 == ("counterexample" if lemma0_needs else "proved")
    assert r.lemma1 == "counterexample"
    text = cti_lines(cti, "correct", r.dropped)
    assert text[1] == f"  the invariant without {name}"
    why = next(i for i, line in enumerate(text) if line.startswith("  why it is needed:"))
    assert text[why].endswith(" breaks what the dropped conjunct says,")
    assert text[why + 1].startswith(f"    {name} (")
    assert text[why + 1].endswith(": " + CONJUNCTS[name].says)


NEEDED_IN_CI = ("WhiteMachineRecordsNothing", "RedSendsNothingWhite")


@pytest.mark.slow
@pytest.mark.parametrize("name", NEEDED_IN_CI)
def test_a_conjunct_is_needed(name: str) -> None:
    _needed(name)


@pytest.mark.long
@pytest.mark.parametrize("name", [n for n in CONJUNCTS if n not in NEEDED_IN_CI])
def test_every_conjunct_is_needed(name: str) -> None:
    _needed(name)


#: the layer each bug class breaks first, and the fewest snapshots it needs there
FIRST_BROKEN = {
    "no-channel-recording": ("ReceiveApp", 1),
    "late-red-letter": ("SendApp", 1),
    "stop-at-first-red-letter": ("ReceiveApp", 1),
    "non-fifo": ("ReceiveApp", 1),
    "mixed-snapshots": ("ReceiveRedLetter", 2),
    "never-forward": ("ReceiveRedLetter", 1),
    # a machine red in one snapshot and white in another: its application misses a
    # message the white machine's action received (Lemma 0 of the other snapshot)
    "swallowing-recording": ("ReceiveApp", 2),
    "newest-first-recording": ("ReceiveApp", 1),
    "resent-red-letters": ("ReceiveRedLetter", 1),
}


@pytest.mark.slow
@pytest.mark.parametrize("variant", [v for v in VARIANTS if v != "correct"])
def test_every_bug_class_fails_with_a_small_counterexample_and_a_run(variant: str) -> None:
    r = prove_every_n(variant, stop_at_first=True)
    assert r.ctis, f"{variant} passes the every-N induction"
    cti = r.ctis[0]
    action, snapshots = FIRST_BROKEN[variant]
    assert (r.lemma0, cti.layer, cti.check) == ("counterexample", "reality", action)
    assert cti.net.snapshots == snapshots
    assert cti.net.machines == (3 if variant == "stop-at-first-red-letter" else 2)
    w = reachable_violation(cti.net, variant)
    assert w is not None, f"{variant}: no run on the counterexample's network breaks Lemma 0"
    assert len(w.steps) <= 5


@pytest.mark.slow
def test_swallowing_breaks_lemma_1_alone_with_one_snapshot() -> None:
    r = prove_every_n("swallowing-recording", layers=("shadow1",), stop_at_first=True)
    assert r.ctis and r.ctis[0].check == "ReceiveApp"
    assert "RedActionCopied" in r.ctis[0].broken
    net = replace(r.ctis[0].net, snapshots=1)
    w = reachable_violation(net, "swallowing-recording", layer="shadow1")
    assert w is not None and w.kappa == 0 and "RedActionCopied" in w.broken


def test_the_liveness_premises_are_proved_for_every_n() -> None:
    r = prove_every_n(layers=("liveness",))
    assert r.liveness == "proved"
    assert [o.check for o in r.outcomes] == [
        "SendApp",
        "InternalEvent",
        "ReceiveApp",
        "ReceiveRedLetter",
        "StartSnapshot",
        "HeadEnabled",
        "SomeLetterInFlight",
    ]
    # the lemmas are not proved by the liveness layer alone
    assert (r.lemma0, r.lemma1, r.verdict) == ("open", "open", "open")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("variant", "check", "broken"),
    [
        ("late-red-letter", "SendApp", ("NothingGetsAhead",)),
        ("non-fifo", "ReceiveRedLetter", ("HeadTaken",)),
    ],
)
def test_a_bug_class_breaks_a_liveness_premise(
    variant: str, check: str, broken: tuple[str, ...]
) -> None:
    r = prove_every_n(variant, layers=("liveness",), stop_at_first=True)
    assert r.liveness == "counterexample"
    cti = r.ctis[0]
    # z3's model may break more than the premise the bug is about
    assert cti.check == check and set(broken) <= set(cti.broken)
    assert cti.head is not None


def test_without_red_letters_on_white_buffers_no_letter_flies() -> None:
    r = prove_every_n(drop=("WhiteBufferOfRedSourceHoldsLetter",), layers=("liveness",))
    (cti,) = r.ctis
    assert (cti.check, cti.broken) == ("SomeLetterInFlight", ("SomeLetterInFlight",))
    assert cti.snapshot == 0


def test_what_z3_does_not_settle_is_open_never_proved() -> None:
    r = prove_every_n(budget=Budget(call_units=2_000, probe_units=1_000), layers=("reality",))
    assert (r.lemma0, r.lemma1) == ("open", "open") and not r.ctis
    assert r.open_checks
    assert {o.reason for o in r.open_checks} == {"the per-call resource budget is spent"}


def test_a_spent_wall_clock_budget_leaves_it_open() -> None:
    r = prove_every_n(budget=Budget(case_seconds=1e-6))
    assert (r.lemma0, r.lemma1) == ("open", "open") and not r.ctis
    assert {o.reason for o in r.open_checks} == {"the wall-clock budget is spent"}


def test_a_step_no_state_can_take_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    real = prove_mod.make_disjunct

    def blocked(*args: object, **kw: object) -> object:
        d = real(*args, **kw)  # type: ignore[arg-type]
        d.guard.append(z3.BoolVal(False))
        return d

    monkeypatch.setattr(prove_mod, "make_disjunct", blocked)
    with pytest.raises(InternalError) as e:
        prove_every_n(layers=("reality",))
    assert e.value.code == "RL-INTERNAL-INDUCTION"
    assert str(e.value) == (
        "every-N induction (correct), layer reality, SendApp: no state satisfies the invariant "
        "and takes this step, so its obligations hold vacuously; the encoding is wrong"
    )


def test_a_counterexample_that_does_not_replay_is_an_error() -> None:
    net = make_net(2, shipped("complete", 2), 1, 0)
    states, steps = random_run(net, TOKEN, "correct", 3, steps=6)
    pr = prophecy_of_run(net, states, steps, 0)
    r, st, u = states[2], steps[2], states[3]
    honest = EnCti("shadow1", "step", st.action, (), net, r, st, u, pr)
    replay(honest, TOKEN, "correct", ())  # nothing broken, and nothing is
    forged = replace(honest, broken=("RedActionPossible",))
    with pytest.raises(InternalError) as e:
        replay(forged, TOKEN, "correct", ())
    assert (
        "does not replay in the concrete interpreter: z3 says ['RedActionPossible'] break"
        in str(e.value)
    )
    moved = replace(honest, after=states[4])
    with pytest.raises(InternalError, match="leads to"):
        replay(moved, TOKEN, "correct", ())


def test_an_unknown_conjunct_is_bad_input() -> None:
    with pytest.raises(InputError) as e:
        prove_every_n(drop=("ShadowRuleIII",))
    assert str(e.value) == (
        "--drop: unknown conjunct 'ShadowRuleIII'; expected one of " + ", ".join(CONJUNCTS)
    )


def test_the_fragment_of_a_question() -> None:
    v = Vocabulary()
    M, Msg = v.sorts.machine, v.sorts.message
    r = v.rigid
    epr = forall([M, M], lambda p, q: z3.Implies(r.link(p, q), z3.Not(r.link(q, p))))
    assert classify([epr], ["Machine", "Message"]) == (
        "EPR (no function into a quantified sort, no quantifier alternation)"
    )
    fn = forall([Msg], lambda m: r.link(r.src(m), r.dst(m)))
    assert classify([fn], ["Machine", "Message"]) == (
        "stratified, decidable (functions Message→Machine; no cycle)"
    )
    alternation = forall(
        [M], lambda p: z3.Exists([z3.Const("m", Msg)], r.src(z3.Const("m", Msg)) == p)
    )
    assert classify([fn, alternation], ["Machine", "Message"]) == (
        "outside the decidable fragment (functions Message→Machine; ∀∃ Machine→Message; "
        "cycle Machine→Message→Machine)"
    )


# ------------------------------------------------------------------------- the command


def _run(*args: str) -> tuple[int, str]:
    res = runner.invoke(symbolic_app, ["induction", *args], standalone_mode=False)
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        raise res.exception
    return int(res.return_value if res.return_value is not None else 0), res.output


@pytest.mark.slow
def test_the_command_proves_both_lemmas_for_every_n() -> None:
    code, out = _run("--every-n")
    assert code == 0, out
    lines = out.splitlines()
    assert lines[0] == (
        "Induction for every N: any number of machines, any directed graph, any number of "
        "concurrent snapshots, any starters, any application (uninterpreted), variant correct"
    )
    assert lines[2] == (
        "Invariant: reality 8, prophecy 8, shadow1 0 conjuncts, each universally quantified "
        "over machines, snapshots and messages"
    )
    assert lines[-4] == f"  fragment of 28 questions: {STRATIFIED}"
    assert lines[-3:] == [
        "Lemma 0: proved for every number of machines (every directed graph, any number of "
        "concurrent snapshots, any starters; every run, however long, with unbounded "
        "buffers; any application)",
        "Lemma 1: proved for every number of machines (every directed graph, any number of "
        "concurrent snapshots, any starters; every run, however long, with unbounded "
        "buffers; any application; for every snapshot that completes)",
        "Liveness: premises proved for every number of machines (of the ranking argument that "
        "every started snapshot completes on a strongly connected network, under weak fairness "
        "of receipt, for an application that can always receive; the argument from them is on "
        "paper, docs/induction.md)",
    ]


@pytest.mark.slow
def test_the_command_prints_a_bug_class_counterexample_and_draws_its_run(tmp_path: Path) -> None:
    svg = tmp_path / "never-forward.svg"
    code, out = _run("--every-n", "--variant", "never-forward", "--diagram", str(svg))
    assert code == 1, out
    lines = out.splitlines()
    assert lines[0] == (
        "Counterexample to induction in layer reality: reality (the red-letter traffic and "
        "the recording) and Lemma 0"
    )
    assert lines[1] == (
        "  variant never-forward: red letters are never forwarded: only the first machine to "
        "turn red sends them"
    )
    assert lines[2] == "  a finite counterexample: 2 machines, 2 buffers, 1 snapshot, 1 message"
    assert "  the step: ReceiveRedLetter(p1→p2) of red letter k1, taken by p2" in lines or (
        "  the step: ReceiveRedLetter(p2→p1) of red letter k1, taken by p1" in lines
    )
    assert (
        "    WhiteBufferOfRedSourceHoldsLetter: a buffer still white in k whose source is red "
        "in k carries its red letter of k" in lines
    )
    run = next(i for i, line in enumerate(lines) if line.startswith("A run from Init"))
    assert lines[run + 1] == "  1. StartSnapshot(p1, k1)"
    assert lines[run + 3] == "  its last step breaks: WhiteBufferOfRedSourceHoldsLetter"
    assert f"Diagram of the run written to {svg} (2 steps)" in lines
    assert svg.read_text(encoding="utf-8").startswith("<svg")
    assert lines[-3:] == [
        "Lemma 0: counterexample",
        "Lemma 1: counterexample",
        "Liveness: open (not checked: the run stopped at the first counterexample; "
        "--keep-going checks it)",
    ]


def test_every_n_takes_no_topology() -> None:
    with pytest.raises(InputError) as e:
        _run("--every-n", "--machines", "3", "--app", "token")
    assert str(e.value) == (
        "--every-n proves the lemmas for every topology, number of machines and of snapshots, "
        "and any application at once: leave out --machines, --app"
    )


def test_a_diagram_needs_every_n_and_a_bug_class(tmp_path: Path) -> None:
    with pytest.raises(InputError) as e:
        _run("--diagram", str(tmp_path / "x.svg"))
    assert str(e.value) == "--diagram draws a counterexample of --every-n: add --every-n"
    with pytest.raises(InputError) as e:
        _run("--every-n", "--diagram", str(tmp_path / "x.svg"))
    assert str(e.value) == (
        "--diagram draws a run of a bug class: give --variant, and no --drop (a counterexample "
        "to a weakened invariant has no run behind it)"
    )


def test_the_command_lists_the_every_n_conjuncts() -> None:
    code, out = _run("--every-n", "--list")
    assert code == 0
    assert out.splitlines()[0] == "Conjuncts for every N (--drop NAME):"
    for name in (*CONJUNCTS, *VARIANTS):
        assert name in out


def test_the_check_summary_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``redletter check``'s line (the proof itself is the slow test's): one line, and
    False unless everything is proved."""
    import redletter.python_model.symbolic.induction.everyn as everyn
    from redletter.cli.symbolic import every_n_summary

    real = everyn.prove_every_n(layers=("liveness",))
    monkeypatch.setattr(everyn, "prove_every_n", lambda **kw: real)
    assert every_n_summary() is False  # the lemmas' layers were not checked
    assert capsys.readouterr().out.splitlines() == [
        "Induction for every N (redletter symbolic induction --every-n): Lemma 0 OPEN, "
        f"Lemma 1 OPEN, liveness premises proved (7 questions, {real.seconds:.1f} s); run "
        "the command for the details"
    ]
