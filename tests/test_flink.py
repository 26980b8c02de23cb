"""The Flink experiment's judging, on runs recorded from the real engine (no Flink
needed): the golden corpus of ``tests/data/flink/`` (one parametrized test), the
mode verdicts, the workload both sides share, the run folder's parser and its
errors, the results files, the runner's handling of a job that crashes or hangs,
and the command line's exit codes and messages.

The tests that run Flink itself are in ``test_flink_engine.py`` (marked ``flink``).
"""

from __future__ import annotations

import json
import shutil
import stat
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from redletter.cli import main
from redletter.cli.flink import app as flink_app
from redletter.conformance.adapters.flink.evidence import filter_log, read_run, slim_copy
from redletter.conformance.adapters.flink.judge import (
    Outcome,
    RunJudgement,
    decisive,
    judge_mode,
    judge_run,
)
from redletter.conformance.adapters.flink.results import (
    Meta,
    mode_json,
    publish,
    read_meta,
    render_svg,
    write_results,
)
from redletter.conformance.adapters.flink.runner import (
    FlinkEnv,
    Settings,
    find_flink,
    plan_run,
    run_job,
)
from redletter.conformance.adapters.flink.workload import (
    GUARANTEE,
    MODES,
    JobConfig,
    emitted,
    failure_point,
    key_of,
    splits,
)
from redletter.conformance.verdict import Verdict
from redletter.errors import EnvironmentMissing, InputError

DATA = Path(__file__).resolve().parent / "data" / "flink"
runner = CliRunner()

# --------------------------------------------------------------------------- the corpus

#: Every recorded run: (folder, mode, outcome, restored from, explanation word for word).
#: tests/data/flink/README.md says where each comes from.
CORPUS = [
    (
        "aligned-exactly-once",
        "aligned",
        Outcome.EXACT,
        2,
        "the job failed on record 3165, restored from checkpoint 2; all 8 keys counted every"
        " record exactly once",
    ),
    (
        "at-least-once-duplicated",
        "at-least-once",
        Outcome.DUPLICATED,
        3,
        "the job failed on record 3165, restored from checkpoint 3; 6 keys counted 1433 records"
        " twice (k0, k1, k3, k4, k5, k7; e.g. record 1008)",
    ),
    (
        "unaligned-exactly-once",
        "unaligned",
        Outcome.EXACT,
        32,
        "the job failed on record 2187, restored from checkpoint 32; all 8 keys counted every"
        " record exactly once",
    ),
    (
        "aligned-failed-early",
        "aligned",
        Outcome.EXACT,
        1,
        "the job failed on record 3, restored from checkpoint 1; all 8 keys counted every"
        " record exactly once",
    ),
    (
        "unaligned-log-cut-short",
        "unaligned",
        Outcome.EXACT,
        None,
        "the job failed on record 3165, restored from a checkpoint (Flink's log does not say"
        " which); all 8 keys counted every record exactly once",
    ),
    (
        "at-least-once-never-failed",
        "at-least-once",
        Outcome.NOT_RESTORED,
        None,
        "the job was to fail on record 0, never restarted; all 8 keys counted every record"
        " exactly once (the injected failure did not fire, so nothing was restored)",
    ),
    (
        "aligned-timer-lost",
        "aligned",
        Outcome.LOST,
        1,
        "the job failed on record 4550, restored from checkpoint 1; 1 key missed 1000 records"
        " (k1; e.g. record 1); the sink committed no final state for k1",
    ),
    (
        "aligned-taskmanager-died",
        "aligned",
        Outcome.ERROR,
        1,
        "the job did not finish, so its state is not judged: Flink's TaskManager died"
        " (exception in exception handler: java.lang.IllegalStateException: Reference count"
        " must not be negative.), so the job could not restart; the kit stopped it",
    ),
]


def _case(name: str) -> Path:
    return DATA / name


@pytest.mark.parametrize(("name", "mode", "outcome", "restored", "explanation"), CORPUS)
def test_recorded_runs(
    name: str, mode: str, outcome: Outcome, restored: int | None, explanation: str | None
) -> None:
    ev = read_run(_case(name))
    run = judge_run(ev)
    assert run.mode == mode
    assert run.outcome is outcome, run.explanation
    if restored is not None:
        assert run.restored_from == restored
    if explanation is not None:
        assert run.explanation == explanation
    if outcome is Outcome.ERROR:
        assert run.keys == ()  # a job that did not finish is not judged
        return
    # Whatever the outcome, the per-key figures add up to what the source emitted.
    want = emitted(ev.config.records, ev.config.keys)
    assert [k.key for k in run.keys] == sorted(want)
    for k in run.keys:
        assert k.emitted == len(want[k.key])
        assert k.counted == k.emitted - len(k.lost) + k.extra


# --------------------------------------------------------------------------- the workload


def test_the_source_emits_each_id_once_under_its_key() -> None:
    by_key = emitted(20, 3)
    assert sorted(by_key) == ["k0", "k1", "k2"]
    assert sorted(i for ids in by_key.values() for i in ids) == list(range(1, 21))
    assert by_key["k1"] == [1, 4, 7, 10, 13, 16, 19]
    assert all(key_of(i, 3) == k for k, ids in by_key.items() for i in ids)


def test_splits_are_those_of_number_sequence_source() -> None:
    assert splits(8000, 2) == [(1, 4000), (4001, 8000)]
    assert splits(10, 3) == [(1, 4), (5, 7), (8, 10)]
    assert splits(2, 3) == [(1, 1), (2, 2)]


def test_failure_points_are_seeded_and_late_in_a_split() -> None:
    # Golden: the same on every machine (random.Random with an integer seed).
    assert [failure_point(0, i, 8000, 2) for i in (1, 2, 3)] == [3165, 2187, 3213]
    assert [failure_point(7, i, 1000, 3) for i in (1, 2, 3)] == [223, 937, 888]
    for run in range(1, 200):
        f = failure_point(5, run, 8000, 2)
        first, last = next(s for s in splits(8000, 2) if s[0] <= f <= s[1])
        assert first + 0.5 * (last - first) - 1 <= f <= first + 0.9 * (last - first), run


def test_job_config_round_trips_and_refuses_other_fields() -> None:
    cfg = plan_run("aligned", 3, 2, Settings(), Path("/tmp/x"))
    assert JobConfig.from_json(cfg.to_json()) == cfg
    assert cfg.fail_at == failure_point(3, 2, 8000, 2)
    data = json.loads(cfg.to_json())
    data["extra"] = 1
    with pytest.raises(ValueError, match="a job config has exactly the fields"):
        JobConfig.from_json(json.dumps(data))


def test_every_mode_has_a_guarantee() -> None:
    assert set(GUARANTEE) == set(MODES) == {"aligned", "unaligned", "at-least-once"}


# --------------------------------------------------------------------------- mode verdicts


def _run(
    run: int, mode: str, outcome: Outcome, restored: int | None = 3, error: str | None = None
) -> RunJudgement:
    return RunJudgement(
        run=run, mode=mode, fail_at=100 + run, outcome=outcome, explanation=f"run {run} said so",
        keys=(), restored_from=restored, restored=restored is not None, restarts=1,
        checkpoints=4, checkpoint_ms=(10, 30), checkpoint_bytes=(1000, 2000), declined=0,
        replay_from=(7, 9), seconds=1.0, error=error,
    )  # fmt: skip


@pytest.mark.parametrize("mode", ["aligned", "unaligned"])
def test_exactly_once_modes(mode: str) -> None:
    ok = judge_mode(mode, [_run(1, mode, Outcome.EXACT), _run(2, mode, Outcome.EXACT)], 2)
    assert ok.verdict is Verdict.PASS
    assert ok.explanation == (
        "exactly once in all 2 runs; 2 restored from a checkpoint and replayed the source"
        " from its recorded position"
    )
    bad = judge_mode(mode, [_run(1, mode, Outcome.EXACT), _run(2, mode, Outcome.DUPLICATED)], 5)
    assert bad.verdict is Verdict.FAIL
    assert bad.explanation == (
        f"{mode} checkpoints must give exactly once, but run 2: run 2 said so"
    )
    lost = judge_mode(mode, [_run(1, mode, Outcome.LOST)], 1)
    assert lost.verdict is Verdict.FAIL
    untested = judge_mode(
        mode,
        [_run(1, mode, Outcome.FROM_NOTHING, None), _run(2, mode, Outcome.ERROR, None, "boom")],
        2,
    )
    assert untested.verdict is Verdict.UNKNOWN
    assert untested.explanation == (
        "none of the 2 runs both restored from a checkpoint and finished, so the guarantee"
        " was not tested (1 run did not finish)"
    )


def test_at_least_once_mode() -> None:
    m = "at-least-once"
    dup = judge_mode(m, [_run(1, m, Outcome.EXACT), _run(2, m, Outcome.DUPLICATED)], 4)
    assert dup.verdict is Verdict.PASS
    assert dup.first_duplicates == 2
    assert dup.explanation == (
        "at least once holds: no record lost in 2 runs; the duplicates of run 2 are what this"
        " mode allows (the model shows them too when alignment is skipped): run 2 said so"
    )
    out = judge_mode(m, [_run(1, m, Outcome.EXACT), _run(2, m, Outcome.EXACT)], 2)
    assert out.verdict is Verdict.UNKNOWN
    assert out.explanation == (
        "budget out: 2 runs restored from a checkpoint, none duplicated a record (the model"
        " says alignment skipped can duplicate; the engine did not show it in 2 runs)"
    )
    lost = judge_mode(m, [_run(1, m, Outcome.DUPLICATED), _run(2, m, Outcome.BOTH)], 2)
    assert lost.verdict is Verdict.FAIL
    assert lost.explanation == (
        "run 2 lost records, which at-least-once must never do: run 2 said so"
    )
    nothing = judge_mode(m, [_run(1, m, Outcome.NOT_RESTORED, None)], 1)
    assert nothing.verdict is Verdict.UNKNOWN
    assert nothing.explanation == (
        "the run did not both restore from a checkpoint and finish, so nothing was tested"
    )


def test_a_campaign_stops_when_the_verdict_is_settled() -> None:
    assert decisive(_run(1, "aligned", Outcome.DUPLICATED))
    assert decisive(_run(1, "aligned", Outcome.LOST))
    assert not decisive(_run(1, "aligned", Outcome.EXACT))
    assert decisive(_run(1, "at-least-once", Outcome.DUPLICATED))
    assert not decisive(_run(1, "at-least-once", Outcome.DUPLICATED, restored=None))
    assert not decisive(_run(1, "at-least-once", Outcome.EXACT))
    with pytest.raises(ValueError, match="unknown mode"):
        judge_mode("sideways", [], 1)


# --------------------------------------------------------------------------- the run folder


def _copy(name: str, tmp_path: Path) -> Path:
    dst = tmp_path / name
    shutil.copytree(_case(name), dst)
    return dst


def _first_part(folder: Path) -> Path:
    return sorted(p for p in (folder / "sink").rglob("part-*") if p.is_file())[0]


def test_a_lost_final_state_is_lost_records(tmp_path: Path) -> None:
    folder = _copy("aligned-exactly-once", tmp_path)
    part = _first_part(folder)
    lines = part.read_text(encoding="utf-8").splitlines()
    gone = json.loads(lines[0])
    part.write_text("\n".join(lines[1:]) + "\n", encoding="utf-8")
    run = judge_run(read_run(folder))
    assert run.outcome is Outcome.LOST
    (k,) = [k for k in run.keys if k.lost]
    assert k.key == gone["key"] and k.missing_state and len(k.lost) == k.emitted
    assert run.explanation.endswith(
        f"1 key missed {k.emitted} records ({k.key}; e.g. record {k.lost[0]}); the counter"
        f" emitted the final state of {k.key} but the sink did not commit it"
    )


def test_a_record_counted_twice_is_a_duplicate(tmp_path: Path) -> None:
    folder = _copy("aligned-exactly-once", tmp_path)
    part = _first_part(folder)
    lines = part.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["multi"] = {str(first["ids"][5]): 2}
    part.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
    run = judge_run(read_run(folder))
    assert run.outcome is Outcome.DUPLICATED
    assert run.duplicated_records == 1
    assert f"1 key counted 1 record twice ({first['key']}; e.g. record {first['ids'][5]})" in (
        run.explanation
    )


def test_an_id_the_source_never_emitted_is_corrupt(tmp_path: Path) -> None:
    folder = _copy("aligned-exactly-once", tmp_path)
    part = _first_part(folder)
    lines = part.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["ids"] = [*first["ids"], 10**9]
    part.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
    run = judge_run(read_run(folder))
    assert run.outcome is Outcome.CORRUPT
    assert run.outcome.duplicates and run.outcome.losses


@pytest.mark.parametrize(
    ("file", "text", "message"),
    [
        ("sink", "not json\n", "not a JSON line (Expecting value)"),
        ("sink", '{"key": 1}\n', 'a final-state line needs "key" (a string), "ids" (a list)'
         ' and "multi" (an object)'),
        ("sink", '{"key": "k0", "ids": [1], "multi": {"2": 2}, "attempt": 0, "subtask": 0}\n',
         '"multi" names id 2, which is not in "ids"'),
        ("events", '{"event": "teleport"}\n', "unknown event 'teleport'"),
        ("events", '{"event": "first", "attempt": "0", "subtask": 0, "id": 1}\n',
         "\"attempt\" must be an integer, got '0'"),
    ],
)  # fmt: skip
def test_malformed_files_are_bad_input_with_path_and_line(
    tmp_path: Path, file: str, text: str, message: str
) -> None:
    folder = _copy("aligned-exactly-once", tmp_path)
    if file == "sink":
        target = folder / "sink" / "x" / "part-extra-0"
    else:
        target = folder / "events" / "zz-0-0.ndjson"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_run(folder)
    assert info.value.code == "RL-INPUT-FLINK"
    assert str(info.value) == f"{target}:1: {message}"


def test_a_missing_or_bad_config_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read the run's config"):
        read_run(tmp_path)
    (tmp_path / "config.json").write_text("{}", encoding="utf-8")
    with pytest.raises(InputError, match="not a job config: a job config has exactly the fields"):
        read_run(tmp_path)


def test_in_progress_sink_files_are_not_read(tmp_path: Path) -> None:
    folder = _copy("aligned-exactly-once", tmp_path)
    hidden = folder / "sink" / "x" / ".part-abc-0.inprogress.123"
    hidden.parent.mkdir(parents=True, exist_ok=True)
    hidden.write_text("garbage from a failed attempt\n", encoding="utf-8")
    assert judge_run(read_run(folder)).outcome is Outcome.EXACT


def test_slim_copy_keeps_what_the_judge_reads(tmp_path: Path) -> None:
    src = _case("at-least-once-duplicated")
    copy = slim_copy(src, tmp_path / "copy")
    assert judge_run(read_run(copy)) == judge_run(read_run(src))
    log = (copy / "log" / "flink.log").read_text(encoding="utf-8")
    assert filter_log(log) == log


_STATES = (
    "Job j (ab12) switched from state CREATED to RUNNING.",
    "Job j (ab12) switched from state RUNNING to RESTARTING.",
    "Job j (ab12) switched from state RESTARTING to RUNNING.",
    "No checkpoint found during restore.",
    "Job j (ab12) switched from state RUNNING to FINISHED.",
)


def test_a_restart_from_nothing_tests_nothing(tmp_path: Path) -> None:
    # Flink here takes checkpoint 1 as soon as the tasks run, before the first
    # record, so no recorded run restarted from nothing: the log says so here.
    folder = _copy("aligned-failed-early", tmp_path)
    (folder / "log" / "flink.log").write_text("\n".join(_STATES) + "\n", encoding="utf-8")
    run = judge_run(read_run(folder))
    assert run.outcome is Outcome.FROM_NOTHING and not run.tested
    assert run.explanation == (
        "the job failed on record 3, restarted from nothing (no checkpoint had completed);"
        " all 8 keys counted every record exactly once"
    )


def test_without_the_log_the_side_notes_tell_the_restart(tmp_path: Path) -> None:
    folder = _copy("aligned-failed-early", tmp_path)
    shutil.rmtree(folder / "log")
    # Checkpoint 1 held state (k1 had 2 ids) and the sources replay from 2 and 4002.
    run = judge_run(read_run(folder))
    assert run.restored and run.restored_from is None and run.outcome is Outcome.EXACT
    # Sources that replay from their splits' starts into empty state: from nothing.
    for note in (folder / "events").glob("*-1.ndjson"):
        lines = [json.loads(x) for x in note.read_text(encoding="utf-8").splitlines()]
        for ev in lines:
            if ev["event"] == "first":
                ev["id"] = {0: 1, 1: 4001}[ev["subtask"]]
            if ev["event"] == "restored":
                ev["count"] = 0
        note.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    run = judge_run(read_run(folder))
    assert run.outcome is Outcome.FROM_NOTHING
    assert "restarted from nothing (the sources replayed from their starts)" in run.explanation


def test_a_job_that_did_not_finish_is_not_judged(tmp_path: Path) -> None:
    folder = _copy("aligned-exactly-once", tmp_path)
    (folder / "job.json").write_text(
        json.dumps({"status": "failed", "error": "timeout: the job ran longer than 9 s"}),
        encoding="utf-8",
    )
    run = judge_run(read_run(folder))
    assert run.outcome is Outcome.ERROR and run.keys == ()
    assert run.explanation == (
        "the job did not finish, so its state is not judged: timeout: the job ran longer than 9 s"
    )
    (folder / "job.json").unlink()
    assert judge_run(read_run(folder)).explanation == (
        "the job did not finish, so its state is not judged: it was stopped before it wrote"
        " job.json (timeout or killed)"
    )


# --------------------------------------------------------------------------- the runner


def _fake_python(tmp_path: Path, body: str) -> FlinkEnv:
    exe = tmp_path / "fake-python"
    exe.write_text("#!/bin/sh\n" + body + "\n", encoding="utf-8")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return FlinkEnv(python=exe, version="2.3.0", java="17")


def _config(tmp_path: Path) -> JobConfig:
    return plan_run("aligned", 0, 1, Settings(), tmp_path / "run")


def test_a_job_that_crashes_leaves_its_stderr_in_job_json(tmp_path: Path) -> None:
    env = _fake_python(tmp_path, "echo 'Traceback: ImportError: no pyflink here' >&2\nexit 3")
    folder = run_job(env, _config(tmp_path), timeout=60)
    job = json.loads((folder / "job.json").read_text(encoding="utf-8"))
    assert job == {
        "status": "failed",
        "error": "job.py exited with code 3 before writing job.json; its stderr ends:"
        " Traceback: ImportError: no pyflink here",
    }
    assert judge_run(read_run(folder)).outcome is Outcome.ERROR


def test_a_job_that_hangs_is_stopped_at_the_timeout(tmp_path: Path) -> None:
    env = _fake_python(tmp_path, "sleep 60")
    folder = run_job(env, _config(tmp_path), timeout=1.5)
    job = json.loads((folder / "job.json").read_text(encoding="utf-8"))
    assert job["error"] == "timeout: the job ran longer than 1.5 s and the kit stopped it"


def test_a_dead_taskmanager_stops_the_job_early(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import redletter.conformance.adapters.flink.runner as flink_runner

    monkeypatch.setattr(flink_runner, "_DEAD_GRACE", 0.1)
    env = _fake_python(
        tmp_path,
        'printf "%s\\n" "2026-01-01 ERROR Task [] - FATAL - exception in exception handler of'
        ' task count (1/2)#0 (abc)." "java.lang.IllegalStateException: Reference count must'
        ' not be negative." "2026-01-01 ERROR MiniCluster [] - TaskManager #0 failed."'
        ' > "$FLINK_LOG_DIR/flink.log"\nsleep 60',
    )
    folder = run_job(env, _config(tmp_path), timeout=50)
    job = json.loads((folder / "job.json").read_text(encoding="utf-8"))
    assert job["error"] == (
        "Flink's TaskManager died (exception in exception handler:"
        " java.lang.IllegalStateException: Reference count must not be negative.), so the"
        " job could not restart; the kit stopped it"
    )


def test_without_flink_the_hint_says_make_flink(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("REDLETTER_FLINK_PYTHON", raising=False)
    with pytest.raises(EnvironmentMissing) as info:
        find_flink(tmp_path)
    assert info.value.code == "RL-ENV-FLINK"
    assert str(info.value) == (
        f"Apache Flink is not installed: {tmp_path}/.venv-flink/bin/python does not exist;"
        " run `make flink` (it installs apache-flink 2.3.0 into .venv-flink/ from"
        " requirements-flink.lock), or point --flink-python at a Python that has PyFlink."
    )
    with pytest.raises(EnvironmentMissing) as info:
        find_flink(tmp_path, Path(sys.executable))
    assert str(info.value).startswith(
        f"Apache Flink is not installed in {sys.executable}: `import pyflink` failed"
        " (ModuleNotFoundError: No module named 'pyflink'); run `make flink`"
    )


def test_settings_out_of_range_are_bad_input() -> None:
    with pytest.raises(InputError, match="--parallelism must be at least 2, got 1"):
        Settings(parallelism=1).check()
    with pytest.raises(InputError, match=r"--keys \(19\) must not exceed --records \(18\)"):
        Settings(records=18, keys=19).check()
    with pytest.raises(InputError, match=r"--delay-ms and --skew-ms must be within 0\.\.1000 ms"):
        Settings(skew_ms=-1).check()
    with pytest.raises(InputError, match="--timeout must be a finite number of seconds"):
        Settings(timeout=float("inf")).check()


# --------------------------------------------------------------------------- results


def _meta(mode: str = "aligned") -> Meta:
    return Meta(
        command=f"redletter flink run --mode {mode} --runs 1 --seed 0",
        seed=0,
        settings=Settings(),
        pyflink="2.3.0",
        java="17.0.15",
        measured="2026-11-24T00:00:00Z",
    )


def test_results_json_report_and_picture(tmp_path: Path) -> None:
    run = judge_run(read_run(_case("at-least-once-duplicated")))
    mj = judge_mode("at-least-once", [run], planned=3)
    data = write_results(tmp_path, mj, _meta("at-least-once"))
    stored = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert stored == data
    assert stored["verdict"] == "pass" and stored["exit_code"] == 0
    assert stored["runs"] == 1 and stored["runs_planned"] == 3
    assert stored["first_run_with_duplicates"] == 1
    assert stored["keys_duplicated"] == run.count("duplicated")
    assert stored["duplicated_records"] == run.duplicated_records > 0
    assert stored["per_run"][0]["outcome"] == "duplicated"
    svg = (tmp_path / "report.svg").read_text(encoding="utf-8")
    assert svg.count("<rect") == len(run.keys) + 3  # one per key, three in the legend
    assert svg == render_svg(mj) + "\n"
    assert "<h1>Flink, at-least-once checkpoints: pass</h1>" in (
        (tmp_path / "report.html").read_text(encoding="utf-8")
    )
    assert read_meta(tmp_path / "results.json") == _meta("at-least-once")


def test_publish_keeps_the_other_modes(tmp_path: Path) -> None:
    target = tmp_path / "docs" / "data" / "flink-results.json"
    for name, mode in (("at-least-once-duplicated", "at-least-once"),
                       ("aligned-exactly-once", "aligned")):  # fmt: skip
        mj = judge_mode(mode, [judge_run(read_run(_case(name)))], planned=1)
        publish(target, mode_json(mj, _meta(mode)))
    doc = json.loads(target.read_text(encoding="utf-8"))
    assert doc["schema"] == 1
    assert list(doc["modes"]) == ["aligned", "at-least-once"]
    assert (
        doc["modes"]["aligned"]["command"] == "redletter flink run --mode aligned --runs 1 --seed 0"
    )
    target.write_text('{"schema": 0}', encoding="utf-8")
    with pytest.raises(InputError) as info:
        publish(target, mode_json(mj, _meta("aligned")))
    assert str(info.value) == (
        f'{target}: not a Flink results file of schema 1 (an object with "schema" and "modes");'
        " move it away or fix it"
    )


# --------------------------------------------------------------------------- the command line


def test_flink_run_without_flink_exits_3(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["flink", "run", "--mode", "aligned", "--flink-python", "/nonexistent/python"])
    assert code == 3
    err = capsys.readouterr().err
    assert err.splitlines()[0] == (
        "error[RL-ENV-FLINK]: Apache Flink is not installed: /nonexistent/python does not exist;"
        " run `make flink` (it installs apache-flink 2.3.0 into .venv-flink/ from"
        " requirements-flink.lock), or point --flink-python at a Python that has PyFlink."
    )
    assert err.splitlines()[1].startswith("help: run `make flink`")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--mode", "aligned", "--runs", "0"], "error[RL-INPUT-USAGE]: redletter flink run:"
         " Invalid value for '--runs': must be at least 1, got 0"),
        (["--mode", "aligned", "--parallelism", "1"], "error[RL-INPUT-USAGE]: redletter flink"
         " run: Invalid value for '--parallelism': must be at least 2, got 1"),
    ],
)  # fmt: skip
def test_flink_run_bad_options_exit_5(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["flink", "run", *args, "--flink-python", "/nonexistent"]) == 5
    assert capsys.readouterr().err.splitlines()[0] == message


def test_flink_run_unknown_mode_exits_5() -> None:
    assert main(["flink", "run", "--mode", "sideways"]) == 5


@pytest.mark.parametrize(
    ("name", "code", "verdict"),
    [
        (
            "aligned-exactly-once",
            0,
            "PASS: exactly once in the one run; 1 restored from a checkpoint",
        ),
        ("unaligned-exactly-once", 0, "PASS: exactly once in the one run"),
        (
            "at-least-once-duplicated",
            0,
            "PASS: at least once holds: no record lost in 1 run; the duplicates of run 1 are"
            " what this mode allows",
        ),
        ("aligned-timer-lost", 1, "FAIL: aligned checkpoints must give exactly once, but run 1:"),
        (
            "aligned-taskmanager-died",
            2,
            "UNKNOWN: the run did not both restore from a checkpoint"
            " and finish, so the guarantee was not tested (1 run did not finish)",
        ),
        (
            "at-least-once-never-failed",
            2,
            "UNKNOWN: the run did not both restore from a"
            " checkpoint and finish, so nothing was tested",
        ),
    ],
)
def test_flink_judge_exit_codes(name: str, code: int, verdict: str) -> None:
    r = runner.invoke(flink_app, ["judge", str(_case(name))])
    assert r.exit_code == code, r.output
    assert verdict in r.output
    assert "restores seen" in r.output


def test_flink_judge_of_a_lost_key_exits_1(tmp_path: Path) -> None:
    folder = _copy("aligned-exactly-once", tmp_path)
    part = _first_part(folder)
    part.write_text("\n".join(part.read_text(encoding="utf-8").splitlines()[1:]) + "\n")
    r = runner.invoke(flink_app, ["judge", str(folder)])
    assert r.exit_code == 1, r.output
    assert "FAIL: aligned checkpoints must give exactly once, but run" in r.output


def test_flink_judge_of_nothing_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        runner.invoke(flink_app, ["judge", str(tmp_path)], catch_exceptions=False)
    assert str(info.value) == (
        f"{tmp_path}: neither a run folder (no config.json) nor a campaign folder (no runs/)"
    )
