"""Reading models from spec/: definitions, bindings, errors word for word."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from redletter.errors import InputError
from redletter.python_model.config import load_model, parse_definition
from redletter.python_model.values import Fcn, Record, fcn

SPEC = Path(__file__).resolve().parent.parent / "spec"


def test_definitions_with_top_level_function_operators() -> None:
    assert parse_definition('1 :> {"p1", "p2"}') == (frozenset({"p1", "p2"}),)
    assert parse_definition('(1 :> {"p1"}) @@ (2 :> {"p2"})') == (
        frozenset({"p1"}),
        frozenset({"p2"}),
    )
    assert parse_definition("(2 :> 1) @@ (2 :> 5) @@ (3 :> 7)") == Fcn([(2, 1), (3, 7)])
    assert parse_definition("[p1 |-> 2,\n p2 |-> 0]") == Record([("p1", 2), ("p2", 0)])
    assert parse_definition('"a" :> 1 @@ "b" :> 2') == fcn([("a", 1), ("b", 2)])


def test_model_constants_and_sections() -> None:
    cfg = load_model("MCConcurrent", SPEC)
    assert cfg.app_module == "TokenApp"
    assert cfg.procs == ("p1", "p2")
    assert cfg.snaps == (1, 2)
    assert cfg.starters == (0b01, 0b10)
    assert not cfg.sequential and cfg.max_app_actions == 2
    assert cfg.constraints == ("AppActionBound",)  # safety only: the constraint is sound
    assert cfg.specification == "Spec"
    assert cfg.invariants[:4] == ("TypeOK", "RedLetterInvariant", "OneRedLetterPerBuffer", "Lemma0")
    assert cfg.properties == ("ShadowLemma0", "NoInterference")
    assert cfg.liveness == ()
    live = load_model("MCConcurrentLive", SPEC)  # the same constants, liveness, no constraint
    assert live.constraints == () and live.liveness == ("SnapshotsComplete",)
    assert live.definitions == cfg.definitions
    assert cfg.definitions["MCStarters"] == (frozenset({"p1"}), frozenset({"p2"}))


def test_multi_line_script_definition() -> None:
    cfg = load_model("MCSeed", SPEC)
    assert cfg.app_module == "HistoryApp"
    script = cfg.constants["Script"]
    assert isinstance(script, Record)
    first = script["P1"]
    assert isinstance(first, tuple) and len(first) == 5


def test_overrides_select_the_mutants() -> None:
    assert load_model("MCNoChannelRecordingFailure", SPEC).steps.names["Recording"] == "NoRecording"
    assert load_model("MCNonFifoFailure", SPEC).steps.names["Deliverable"] == "AnyPosition"
    assert load_model("MCToken2", SPEC).steps.names["Recording"] == "Recording"


def test_unknown_model_lists_the_available_ones(tmp_path: Path) -> None:
    (tmp_path / "MCA.tla").write_text("")
    (tmp_path / "MCA.cfg").write_text("")
    (tmp_path / "MCB.tla").write_text("")  # no cfg: not a model
    with pytest.raises(InputError) as e:
        load_model("MCNope", tmp_path)
    assert str(e.value) == f"unknown model 'MCNope' in {tmp_path} (available: MCA)"
    assert e.value.code == "RL-INPUT-MODEL"


def _copy(tmp_path: Path, model: str) -> Path:
    spec = tmp_path / "spec"
    spec.mkdir()
    for suffix in (".tla", ".cfg"):
        shutil.copy(SPEC / f"{model}{suffix}", spec / f"{model}{suffix}")
    return spec


def test_unknown_override_names_the_cfg_line(tmp_path: Path) -> None:
    spec = _copy(tmp_path, "MCNoChannelRecordingFailure")
    cfg = spec / "MCNoChannelRecordingFailure.cfg"
    text = cfg.read_text().replace(
        "Recording <- [ChandyLamport] NoRecording", "Recording <- [ChandyLamport] RecordEverything"
    )
    cfg.write_text(text)
    line = text.splitlines().index("    Recording <- [ChandyLamport] RecordEverything") + 1
    with pytest.raises(InputError) as e:
        load_model("MCNoChannelRecordingFailure", spec)
    assert str(e.value) == (
        f"{cfg}:{line}: unknown override Recording <- RecordEverything: "
        "the Python model mirrors Recording, NoRecording, StopAtFirst, StopAfterOut "
        "(a new bug class goes in the registry, python_model/bugs.py)"
    )


def test_unknown_binding_and_invariant(tmp_path: Path) -> None:
    spec = _copy(tmp_path, "MCToken2")
    cfg = spec / "MCToken2.cfg"
    original = cfg.read_text()
    cfg.write_text(original.replace("Snap <- MCSnap", "Snap <- MCSnap\n    Bogus <- MCSnap"))
    with pytest.raises(InputError) as e:
        load_model("MCToken2", spec)
    assert str(e.value) == f"{cfg}:7: unknown binding Bogus <- MCSnap"
    cfg.write_text(original.replace("    Lemma1\n", "    Lemma2\n"))
    line = original.splitlines().index("    Lemma1") + 1
    with pytest.raises(InputError) as e:
        load_model("MCToken2", spec)
    assert str(e.value).startswith(
        f"{cfg}:{line}: unknown invariant Lemma2 (the Python model knows TypeOK,"
    )


def test_constant_bound_to_an_undefined_name(tmp_path: Path) -> None:
    spec = _copy(tmp_path, "MCToken2")
    cfg = spec / "MCToken2.cfg"
    cfg.write_text(cfg.read_text().replace("Tokens <- MCTokens", "Tokens <- MCCoins"))
    with pytest.raises(InputError) as e:
        load_model("MCToken2", spec)
    assert (
        str(e.value)
        == f"{cfg}:5: Tokens is bound to MCCoins, which MCToken2.tla does not define as a value"
    )
