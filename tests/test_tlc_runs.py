"""The runner against the real SANY and TLC 2.15 (marked ``tlc``: needs Java)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from redletter.check import check_models
from redletter.cli import main
from redletter.errors import Exit, SpecError
from redletter.manifest import load_manifest
from redletter.project import Project
from redletter.tlc import Progress, ResultKind, run_sany, run_sany_all, run_tlc

pytestmark = pytest.mark.tlc

SPECS = Path(__file__).resolve().parent / "data" / "specs"


@pytest.fixture
def specs(tmp_path: Path) -> Path:
    return Path(shutil.copytree(SPECS, tmp_path / "specs"))


def test_semantic_error_names_file_and_line(specs: Path, tlc_jar: Path) -> None:
    with pytest.raises(SpecError) as info:
        run_sany(specs / "Sem.tla", jar=tlc_jar)
    assert info.value.exit_code is Exit.FAIL
    assert (info.value.path, info.value.line) == (str(specs / "Sem.tla"), 5)
    assert str(info.value) == (
        f"{specs / 'Sem.tla'}:5: col 14: SANY found a semantic error in module Sem: "
        "Unknown operator: `y'. — fix the spec and run the check again."
    )


def test_one_sany_run_for_many_modules_names_the_module_in_error(
    specs: Path, tlc_jar: Path
) -> None:
    """`redletter check` parses a whole suite in one SANY run; an error found there is
    reported exactly as the module's own run reports it (module, file, line)."""
    clean = [specs / "Counter.tla", specs / "Instanced.tla"]
    run_sany_all(clean, jar=tlc_jar)  # no error
    with pytest.raises(SpecError) as info:
        run_sany_all([*clean, specs / "Sem.tla"], jar=tlc_jar)
    assert (info.value.path, info.value.line) == (str(specs / "Sem.tla"), 5)
    assert "SANY found a semantic error in module Sem: Unknown operator: `y'." in str(info.value)


def test_parse_error_names_file_and_line(specs: Path, tlc_jar: Path) -> None:
    with pytest.raises(SpecError) as info:
        run_sany(specs / "Parse2.tla", jar=tlc_jar)
    assert str(info.value) == (
        f"{specs / 'Parse2.tla'}:6: col 1: SANY could not parse the module (encountered "
        '"Beginning of definition") — fix the spec and run the check again.'
    )


def test_lexical_error(specs: Path, tlc_jar: Path) -> None:
    with pytest.raises(SpecError) as info:
        run_sany(specs / "Lex.tla", jar=tlc_jar)
    assert str(info.value).startswith(
        f"{specs / 'Lex.tla'}:3: col 17: SANY found a lexical error (Encountered: "
    )


def test_missing_module(specs: Path, tlc_jar: Path) -> None:
    with pytest.raises(SpecError) as info:
        run_sany(specs / "Miss.tla", jar=tlc_jar)
    assert str(info.value) == (
        f"{specs / 'Miss.tla'}: module Miss imports module Nowhere, but there is no "
        f"Nowhere.tla in {specs} nor among TLC's standard modules — add it or fix the name."
    )


def test_run_tlc_success_streams_progress_and_keeps_spec_clean(
    toy_project: Path, tlc_jar: Path
) -> None:
    project = Project(toy_project)
    before = sorted(p.name for p in project.spec_dir.iterdir())
    seen: list[Progress] = []
    result = run_tlc(
        "MCToy",
        spec_dir=project.spec_dir,
        jar=tlc_jar,
        cache_dir=project.cache_dir,
        check_deadlock=False,
        on_progress=seen.append,
    )
    assert (result.kind, result.distinct, result.total, result.depth) == (
        ResultKind.SUCCESS,
        6,
        6,
        6,
    )
    assert seen and seen[-1].distinct == 6
    assert result.log_path == project.cache_dir / "tlc-logs" / "MCToy.log"
    assert "@!@!@STARTMSG 2193:0 @!@!@" in result.log_path.read_text(encoding="utf-8")
    assert sorted(p.name for p in project.spec_dir.iterdir()) == before


def test_run_tlc_passes_extra_args(toy_project: Path, tlc_jar: Path, tmp_path: Path) -> None:
    dot = tmp_path / "graph"
    run_tlc(
        "MCToy",
        spec_dir=toy_project / "spec",
        jar=tlc_jar,
        cache_dir=toy_project / ".cache",
        check_deadlock=False,
        extra_args=["-dump", "dot,actionlabels", str(dot)],
    )
    assert Path(str(dot) + ".dot").read_text(encoding="utf-8").startswith("strict digraph")


def test_deadlock_is_checked_unless_the_manifest_says_not(toy_project: Path, tlc_jar: Path) -> None:
    result = run_tlc(
        "MCToy",
        spec_dir=toy_project / "spec",
        jar=tlc_jar,
        cache_dir=toy_project / ".cache",
        check_deadlock=True,
    )
    assert result.kind is ResultKind.DEADLOCK


def test_manifest_drift_gives_exact_mismatch(
    toy_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = toy_project / "spec" / "manifest.json"
    path.write_text(
        path.read_text(encoding="utf-8").replace('"distinctStates": 6', '"distinctStates": 7'),
        encoding="utf-8",
    )
    project = Project(toy_project)
    rows = check_models(project, load_manifest(path).suite("default"))
    assert [r.matches for r in rows] == [False, True]
    assert rows[0].comparison.problems == ("distinct states: expected 7, got 6",)
    assert rows[1].comparison.result.violated == "Tiny"
    assert rows[0].crosscheck == "—"

    # The toy models are not ChandyLamport models: only the TLC half is checked here.
    code = main(["check", "--root", str(toy_project), "--no-crosscheck"])
    out = capsys.readouterr().out
    assert code == Exit.FAIL
    log = toy_project / ".cache" / "tlc-logs" / "MCToy.log"
    assert (
        "MISMATCH MCToy:\n"
        "  distinct states: expected 7, got 6\n"
        f"  full TLC output: {log}\n"
        "1 of 2 models match the manifest.\n"
    ) in out


def test_check_all_match_exits_0(toy_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--root", str(toy_project), "--no-crosscheck"]) == Exit.OK
    out = capsys.readouterr().out
    assert "2 of 2 models match the manifest." in out
    row = next(line for line in out.splitlines() if "MCToyFailure" in line)
    cells = [c.strip() for c in row.strip("│┃ ").split("│")]
    assert cells[:9] == [
        "MCToyFailure",
        "counter",
        "1",
        "0",
        "safety failure (Tiny)",
        "safety failure (Tiny)",
        *cells[6:9],
    ]
    assert cells[10] == "—"


def test_spec_error_through_the_cli(toy_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tla = toy_project / "spec" / "MCToy.tla"
    tla.write_text(
        tla.read_text(encoding="utf-8").replace("x' = x + 1", "x' = y + 1"), encoding="utf-8"
    )
    argv = ["check", "--root", str(toy_project), "--model", "MCToy", "--no-crosscheck"]
    assert main(argv) == Exit.FAIL
    assert capsys.readouterr().err == (
        f"error[RL-SPEC]: {tla}:6: col 23: SANY found a semantic error in module MCToy: "
        "Unknown operator: `y'. — fix the spec and run the check again.\n"
        "help: open the module at the line shown, fix the TLA+ as SANY's quoted words say, "
        "and run the command again; see docs/errors.md#rl-spec\n"
    )


def test_crosscheck_refuses_a_model_no_engine_mirrors(
    toy_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", "--root", str(toy_project), "--model", "MCToy"]) == Exit.FAIL
    tla = toy_project / "spec" / "MCToy.tla"
    assert (
        "MCToy: cross-check MISMATCH\n"
        f"  the cross-check could not run: error[RL-INPUT-MODEL]: {tla}: no Python engine"
        " mirrors the modules MCToy uses (Naturals); the engines: ChandyLamport,"
        " LazyChandyLamport, ObserverSnapshot, BarrierSnapshot\n"
    ) in capsys.readouterr().out


def _dot_labels(dot: Path) -> set[str]:
    text = Path(str(dot) + ".dot").read_text(encoding="utf-8")
    return {
        line.split('[label="', 1)[1].split('"', 1)[0]
        for line in text.splitlines()
        if " -> " in line and "[label=" in line
    }


def test_tlc_2_15_cannot_name_actions_inside_an_instance(
    specs: Path, tlc_jar: Path, tmp_path: Path
) -> None:
    # Why ChandyLamport's Next is LOCAL and each ChandyLamport<App> module restates it:
    # a next-state relation reached through an INSTANCE with substitutions is one
    # action to TLC 2.15, and its DOT dump labels every transition "UnnamedAction".
    labels = {}
    for module in ("Counter", "Instanced"):
        dot = tmp_path / module
        result = run_tlc(
            module,
            spec_dir=specs,
            jar=tlc_jar,
            cache_dir=tmp_path / "cache",
            check_deadlock=False,
            extra_args=["-dump", "dot,actionlabels", str(dot)],
        )
        assert (result.kind, result.distinct) == (ResultKind.SUCCESS, 3)
        labels[module] = _dot_labels(dot)
    assert labels == {"Counter": {"Up", "Down"}, "Instanced": {"UnnamedAction"}}


def test_the_spec_labels_transitions_with_the_action_names(tlc_jar: Path, tmp_path: Path) -> None:
    # MCToken2 extends ChandyLamportToken, which instantiates ChandyLamport: the labels
    # must still be the plain action names the Python model and the cross-check use.
    spec = Path(__file__).resolve().parent.parent / "spec"
    dot = tmp_path / "MCToken2"
    result = run_tlc(
        "MCToken2",
        spec_dir=spec,
        jar=tlc_jar,
        cache_dir=tmp_path / "cache",
        check_deadlock=False,
        extra_args=["-dump", "dot,actionlabels", str(dot)],
        workers=1,
        small=True,  # as `redletter check` runs it (5,462 states: the quick compiler)
    )
    assert (result.kind, result.distinct, result.total) == (ResultKind.SUCCESS, 5462, 9527)
    assert _dot_labels(dot) == {"SendApp", "ReceiveApp", "ReceiveRedLetter", "StartSnapshot"}


def test_check_says_which_models_have_no_python_mirror(
    toy_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A row with "python": false is model-checked, and its cross-check column says
    plainly that there is nothing to cross-check yet (not a pass, not a failure)."""
    path = toy_project / "spec" / "manifest.json"
    path.write_text(
        path.read_text(encoding="utf-8").replace(
            '"checkDeadlock": false,', '"checkDeadlock": false, "python": false,'
        ),
        encoding="utf-8",
    )
    assert main(["check", "--root", str(toy_project)]) == Exit.OK
    out = capsys.readouterr().out
    for model in ("MCToy", "MCToyFailure"):
        row = next(line for line in out.splitlines() if f"│ {model} " in line)
        assert row.rstrip(" │").endswith("none: no Python mirror yet")
    assert out.endswith(
        "2 of 2 models match the manifest.\n"
        'Not cross-checked: 2 model(s) whose spec has no Python mirror yet ("python": false'
        " in spec/manifest.json): MCToy, MCToyFailure.\n"
    )
