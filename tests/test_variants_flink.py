"""The comparison page's "Apache Flink itself" section: written from
docs/data/flink-results.json (part B's measurements), per mode the runs, restores and
per-key verdicts, and findings judged against the models -- a disagreement is
written as one."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from redletter.errors import InputError
from redletter.variants.flink import FLINK_RESULTS, flink_section, load_flink_results

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / FLINK_RESULTS


def _data() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(RESULTS.read_text(encoding="utf-8"))
    return data


def _write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "flink-results.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_every_published_mode_is_on_the_page_with_its_runs_and_keys() -> None:
    modes = load_flink_results(RESULTS)
    assert modes is not None
    assert [m.label for m in modes] == list(_data()["modes"])
    text = "\n".join(flink_section(modes))
    for m in modes:
        assert f"### {m.label}" in text
        assert m.command in text
        for r in m.runs:  # one row per run: run, failure point, restored checkpoint
            assert f"| {r.run} | {r.fail_at} | {r.restored_from} |" in text
    assert "DISAGREES" not in text  # what part B measured agrees with the models


def test_the_findings_say_each_mode_agrees_with_its_model() -> None:
    modes = load_flink_results(RESULTS)
    assert modes is not None
    lines = [x for x in flink_section(modes) if x.startswith("* **aligned**")]
    assert lines == [
        "* **aligned**: every key exactly once in all 5 runs (5 restored from a"
        " checkpoint); agrees with the model, `MCBarrierAligned` (passes: exactly once"
        " after restore)."
    ]


def test_a_lost_record_in_an_exactly_once_mode_is_a_finding(tmp_path: Path) -> None:
    data = copy.deepcopy(_data())
    aligned = data["modes"]["aligned"]
    aligned["keys_lost"] = 1
    aligned["lost_records"] = 3
    modes = load_flink_results(_write(tmp_path, data))
    assert modes is not None
    text = "\n".join(flink_section(modes))
    assert (
        "* **aligned**: 0 key(s) duplicated and 1 lost in 5 runs; **DISAGREES with the"
        " model** (a finding)" in text
    )


def test_at_least_once_without_duplicates_is_a_finding(tmp_path: Path) -> None:
    data = copy.deepcopy(_data())
    mode = data["modes"]["at-least-once"]
    for r in mode["per_run"]:
        r["duplicated_records"] = 0
    modes = load_flink_results(_write(tmp_path, data))
    assert modes is not None
    text = "\n".join(flink_section(modes))
    assert "* **at-least-once**: records counted twice after the restore in 0 of 5 runs" in text
    assert "DISAGREES" in text


def test_no_results_file_says_how_to_measure(tmp_path: Path) -> None:
    assert load_flink_results(tmp_path / "absent.json") is None
    assert flink_section(None) == [
        "Not measured yet: `docs/data/flink-results.json` is absent; `make flink` then"
        " `make flink-results PUBLISH=1` run the experiment and publish it.",
        "",
    ]


def test_a_malformed_results_file_names_the_field(tmp_path: Path) -> None:
    data = copy.deepcopy(_data())
    del data["modes"]["aligned"]["per_run"]
    path = _write(tmp_path, data)
    with pytest.raises(InputError) as info:
        load_flink_results(path)
    assert info.value.code == "RL-INPUT-FLINK"
    assert str(info.value) == (
        f"{path}: malformed Flink results (KeyError: 'per_run'); the file is what"
        " `.venv/bin/redletter flink run --publish` writes: publish the modes again with"
        " `make flink-results PUBLISH=1`"
    )
