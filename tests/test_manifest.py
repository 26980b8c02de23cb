"""spec/manifest.json: loading, validation messages, and comparison with TLC."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from redletter.errors import Exit, InputError
from redletter.manifest import EXPECT_VALUES, ModelEntry, compare, load_manifest
from redletter.tlc import ResultKind, TlcResult

TOY_MANIFEST = Path(__file__).resolve().parent / "data" / "project" / "spec" / "manifest.json"

SUCCESS_ROW = ModelEntry(
    model="MCTokenRing",
    suite="default",
    app="token",
    processes=2,
    snapshots=1,
    check_deadlock=False,
    expect="success",
    violated=None,
    distinct=123,
    total=456,
    depth=17,
    bug=None,
)
FAILURE_ROW = replace(
    SUCCESS_ROW,
    model="MCNoChannelRecordingFailure",
    expect="safety failure",
    violated="Lemma0",
    distinct=0,
    total=0,
    depth=0,
    bug="channels not recorded",
)


def result(
    kind: ResultKind = ResultKind.SUCCESS,
    violated: str | None = None,
    counts: tuple[int | None, int | None, int | None] = (123, 456, 17),
    error: str | None = None,
) -> TlcResult:
    return TlcResult(
        model="M",
        kind=kind,
        violated=violated,
        distinct=counts[0],
        total=counts[1],
        depth=counts[2],
        trace="",
        error=error,
        exit_code=0,
        seconds=1.0,
    )


def test_toy_manifest_loads() -> None:
    manifest = load_manifest(TOY_MANIFEST)
    assert [m.model for m in manifest.suite("default")] == ["MCToy", "MCToyFailure"]
    assert manifest.tlc.version == "2.15"


def test_success_matches() -> None:
    comparison = compare(SUCCESS_ROW, result())
    assert comparison.matches
    assert comparison.problems == ()


def test_count_drift_is_reported_per_count() -> None:
    comparison = compare(SUCCESS_ROW, result(counts=(124, 456, 18)))
    assert not comparison.matches
    assert comparison.problems == (
        "distinct states: expected 123, got 124",
        "depth: expected 17, got 18",
    )


def test_with_several_tlc_workers_a_deeper_search_is_no_mismatch() -> None:
    # Several workers need not find each state along a shortest path: the depth may
    # grow, never shrink; the counts are exact with any number of workers.
    assert compare(SUCCESS_ROW, result(counts=(123, 456, 18)), workers=2).matches
    assert compare(SUCCESS_ROW, result(counts=(123, 456, 16)), workers=2).problems == (
        "depth: expected 17, got 16",
    )
    assert compare(SUCCESS_ROW, result(counts=(124, 456, 18)), workers=2).problems == (
        "distinct states: expected 123, got 124",
    )
    assert compare(SUCCESS_ROW, result(counts=(123, 456, 18)), workers=1).problems == (
        "depth: expected 17, got 18",
    )


def test_failure_rows_ignore_counts() -> None:
    got = result(ResultKind.SAFETY_FAILURE, "Lemma0", counts=(7, 9, 3))
    assert compare(FAILURE_ROW, got).matches


def test_failure_naming_another_invariant() -> None:
    got = result(ResultKind.SAFETY_FAILURE, "TypeOK")
    assert compare(FAILURE_ROW, got).problems == ("violated: expected Lemma0, got TypeOK",)


def test_mutant_that_passes() -> None:
    assert compare(FAILURE_ROW, result()).problems == (
        "result: expected safety failure, got success",
    )


def test_error_result_quotes_tlc() -> None:
    got = result(
        ResultKind.ERROR,
        counts=(None, None, None),
        error="The invariant Nope specified in the configuration file\nis not defined",
    )
    assert compare(SUCCESS_ROW, got).problems == (
        "result: expected success, got error: "
        "The invariant Nope specified in the configuration file",
    )


def write(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(data) if not isinstance(data, str) else data, encoding="utf-8")
    return path


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        load_manifest(tmp_path / "manifest.json")
    assert info.value.exit_code is Exit.BAD_INPUT
    assert str(info.value) == (
        f"{tmp_path / 'manifest.json'}: cannot read the manifest (No such file or directory); "
        "it lists the models to check and their expected results — create it or run from "
        "the project root."
    )


def test_bad_json(tmp_path: Path) -> None:
    path = write(tmp_path, '{"tlc": {}\n,,}')
    with pytest.raises(InputError) as info:
        load_manifest(path)
    assert str(info.value) == (
        f"{path}:2: the manifest is not valid JSON: Expecting property name enclosed in"
        " double quotes (column 2); fix the syntax."
    )


def _good() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(TOY_MANIFEST.read_text(encoding="utf-8"))
    return data


def test_toy_manifest_rows() -> None:
    toy, failure = load_manifest(TOY_MANIFEST).models
    assert (toy.expect, toy.distinct, toy.total, toy.depth, toy.violated, toy.bug) == (
        "success",
        6,
        6,
        6,
        None,
        None,
    )
    assert (failure.expect, failure.violated, failure.distinct, failure.check_deadlock) == (
        "safety failure",
        "Tiny",
        0,
        False,
    )
    assert failure.bug == "the bound is too small"


def test_spec_manifest_uses_the_examples_field_names() -> None:
    spec = TOY_MANIFEST.parents[4] / "spec" / "manifest.json"
    rows = json.loads(spec.read_text(encoding="utf-8"))["models"]
    for row in rows:
        assert row["result"] in EXPECT_VALUES
        if row["result"] == "success":
            assert {"distinctStates", "totalStates", "stateDepth"} <= row.keys()
    assert {m.model for m in load_manifest(spec).models} == {r["model"] for r in rows}


def test_bad_result(tmp_path: Path) -> None:
    data = _good()
    data["models"][0]["result"] = "passes"
    path = write(tmp_path, data)
    with pytest.raises(InputError) as info:
        load_manifest(path)
    assert str(info.value) == (
        f'{path}: models[0] (MCToy): "result" must be one of "success", "safety failure", '
        '"liveness failure", "deadlock failure", got "passes"; see \'How to add a model\' in '
        "docs/checking.md for the format."
    )


def test_field_of_the_earlier_format_names_its_new_name(tmp_path: Path) -> None:
    data = _good()
    data["models"][0]["expect"] = data["models"][0].pop("result")
    path = write(tmp_path, data)
    with pytest.raises(InputError) as info:
        load_manifest(path)
    assert str(info.value) == (
        f'{path}: models[0] (MCToy): unknown field "expect" (now called "result"); see '
        "'How to add a model' in docs/checking.md for the format."
    )
    data = _good()
    data["models"][1]["distinctstates"] = 3
    with pytest.raises(InputError, match=r'unknown field "distinctstates"; the fields are model, '):
        load_manifest(write(tmp_path, data))


def test_counts_are_required_for_success_rows_only(tmp_path: Path) -> None:
    data = _good()
    del data["models"][0]["stateDepth"]
    with pytest.raises(InputError, match=r'models\[0\] \(MCToy\) has no "stateDepth"'):
        load_manifest(write(tmp_path, data))
    data = _good()
    data["models"][1]["distinctStates"] = 12
    assert load_manifest(write(tmp_path, data)).models[1].distinct == 12


def test_safety_failure_needs_the_violated_property(tmp_path: Path) -> None:
    data = _good()
    del data["models"][1]["violatedProperty"]
    path = write(tmp_path, data)
    with pytest.raises(InputError) as info:
        load_manifest(path)
    assert str(info.value) == (
        f'{path}: models[1] (MCToyFailure): a "safety failure" row must name the property '
        "TLC reports in \"violatedProperty\"; see 'How to add a model' in docs/checking.md for the "
        "format."
    )


def test_wrong_type(tmp_path: Path) -> None:
    data = _good()
    data["models"][1]["distinctStates"] = "many"
    path = write(tmp_path, data)
    with pytest.raises(InputError) as info:
        load_manifest(path)
    assert str(info.value) == (
        f'{path}: models[1] (MCToyFailure): "distinctStates" must be int, got "many"; see '
        "'How to add a model' in docs/checking.md for the format."
    )


def test_bool_is_not_an_int(tmp_path: Path) -> None:
    data = _good()
    data["models"][0]["processes"] = True
    with pytest.raises(InputError, match='"processes" must be int, got true'):
        load_manifest(write(tmp_path, data))


def test_missing_key_and_duplicate(tmp_path: Path) -> None:
    data = _good()
    del data["models"][0]["suite"]
    with pytest.raises(InputError, match=r'models\[0\] \(MCToy\) has no "suite"'):
        load_manifest(write(tmp_path, data))
    data = _good()
    data["models"][1]["model"] = "MCToy"
    with pytest.raises(InputError, match="model MCToy is listed twice"):
        load_manifest(write(tmp_path, data))


def test_unknown_model_selection() -> None:
    manifest = load_manifest(TOY_MANIFEST)
    with pytest.raises(InputError) as info:
        manifest.select(["MCNope"])
    assert str(info.value) == (
        f"{TOY_MANIFEST}: unknown model(s) MCNope; the manifest lists MCToy, MCToyFailure "
        "— pick one of those or add a row for the new model."
    )


def test_python_mirror_defaults_to_true_and_must_be_a_bool(tmp_path: Path) -> None:
    toy, failure = load_manifest(TOY_MANIFEST).models
    assert (toy.python, failure.python) == (True, True)
    data = _good()
    data["models"][0]["python"] = False
    assert load_manifest(write(tmp_path, data)).models[0].python is False
    data["models"][0]["python"] = "no"
    path = write(tmp_path, data)
    with pytest.raises(InputError) as info:
        load_manifest(path)
    assert str(info.value) == (
        f'{path}: models[0] (MCToy): "python" must be bool, got "no"; see '
        "'How to add a model' in docs/checking.md for the format."
    )


def test_spec_manifest_says_mirrored_exactly_for_the_models_an_engine_mirrors() -> None:
    """A row says "python": false exactly when no Python engine mirrors its spec (since
    issue 13 part C every variant has one, so every row is mirrored)."""
    from redletter.errors import InputError
    from redletter.python_model.engines import load_engine

    spec = TOY_MANIFEST.parents[4] / "spec" / "manifest.json"
    for entry in load_manifest(spec).models:
        try:
            load_engine(entry.model, spec.parent)
            mirrored = True
        except InputError:
            mirrored = False
        assert entry.python is mirrored, entry.model
