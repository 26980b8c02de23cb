"""Instrumentation for programs that schedule themselves (docs/instrument.md).

The recorder writes the event-log format byte for byte; a real multi-process
implementation (the TCP token app: one OS process per node, asyncio, TCP on
127.0.0.1) validates from its own logs on several seeds, each of its three
injected bugs is found with the first divergence explained, and damaged logs
(lost or cut lines, clocks that contradict the logs, interleaved writes) are
an InputError naming the file and line, never a verdict.  The Go package's own
test runs when a Go toolchain is present.

TCP runs take about half a second each (the processes' start-up); the operating
system's timing varies between runs of one seed, so a bug test tries a few
seeds and names them when none finds the bug.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from redletter.conformance.adapters.instrument import Recorder, attach, detach
from redletter.conformance.adapters.instrument.examples.tcp.launcher import (
    BUGS,
    Run,
    launch,
    shape_of_model,
)
from redletter.conformance.eventlog import EVENTS, parse_log
from redletter.conformance.gonode import find_go
from redletter.conformance.judges.log import Validation, validate, validate_files
from redletter.conformance.logcheck import (
    CODE_CLOCK,
    CODE_LOST,
    check_logs,
    merge_logs,
    read_logs,
)
from redletter.conformance.process import NodeCrashed, NodeTimeout
from redletter.errors import CODES, InputError
from redletter.python_model.config import ModelConfig, load_model

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "spec"
FIXTURES = ROOT / "tests" / "data" / "conformance" / "logs"
GO_PACKAGE = ROOT / "conformance" / "adapters" / "instrument" / "go"


@cache
def _cfg(model: str) -> ModelConfig:
    return load_model(model, SPEC)


def _run(model: str, out: Path, seed: int, **kw: object) -> Run:
    return launch(shape_of_model(model, SPEC), out, seed=seed, **kw)  # type: ignore[arg-type]


def _checked(cfg: ModelConfig, paths: list[Path]) -> Validation:
    """What ``redletter conform validate`` does, with the integrity check first."""
    logs = read_logs(paths)
    check_logs(logs)
    return validate(cfg, merge_logs(logs))


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines(keepends=True)


# --------------------------------------------------------------------------- the recorder


def test_recorder_writes_the_reference_fixture_byte_for_byte(tmp_path: Path) -> None:
    """The MCToken2 run of the log judge's fixtures, written with two recorders."""
    p1, p2 = Recorder("p1", tmp_path / "p1.ndjson"), Recorder("p2", tmp_path / "p2.ndjson")
    with p2.step():
        p2.start_snapshot(1)
        m2 = p2.send_marker("p1", 1)
        p2.record_state(1, 0)
    c1 = p1.send_app("p2", 1, state=1)
    with p1.step():
        p1.receive_marker("p2", 1, m2)
        m1 = p1.send_marker("p2", 1)
        p1.record_state(1, 1)
        p1.close_channel(1, "p2")
        p1.complete(1, state=1, channels={"p2": []})
    with p2.step():
        p2.receive_app("p1", 1, c1, state=1)
        p2.record_message(1, "p1", 1)
    with p2.step():
        p2.receive_marker("p1", 1, m1)
        p2.close_channel(1, "p1")
        p2.complete(1, state=0, channels={"p1": [1]})
    p1.close()
    p2.close()
    # The fixture, plus what the recorder adds: the receive a record_message
    # records ("of") and the end event close() writes.
    ends = {
        "p1": b'{"node":"p1","seq":7,"vc":{"p1":7,"p2":2},"event":"end"}\n',
        "p2": b'{"node":"p2","seq":9,"vc":{"p2":9,"p1":3},"event":"end"}\n',
    }
    for n in ("p1", "p2"):
        want = (FIXTURES / f"MCToken2.reference.{n}.ndjson").read_bytes()
        want = want.replace(
            b'"msg":{"app":1}}\n{"node":"p2","seq":6',
            b'"msg":{"app":1},"of":4}\n{"node":"p2","seq":6',
        )
        assert (tmp_path / f"{n}.ndjson").read_bytes() == want + ends[n]
    v = validate_files(_cfg("MCToken2"), [tmp_path / "p1.ndjson", tmp_path / "p2.ndjson"])
    assert v.verdict == "pass"


def test_recorder_is_thread_safe_one_line_per_write(tmp_path: Path) -> None:
    path = tmp_path / "p1.ndjson"
    rec = Recorder("p1", path)

    def work(t: int) -> None:
        for i in range(150):
            if i % 10 == 0:
                with rec.step():
                    rec.internal(t, state=i)
                    rec.record_state(1, {"thread": t, "i": i})
            else:
                rec.internal(i, state=[t, i])

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    rec.close()
    events = parse_log(path.read_bytes(), path=str(path))  # every line parses, seq increases
    assert len(events) == 8 * 165 + 1  # and the end event
    assert [e.seq for e in events] == list(range(1, 8 * 165 + 2))
    assert events[-1].event == "end"
    check_logs([events])


def test_recorder_carries_the_clock_and_refuses_misuse(tmp_path: Path) -> None:
    a, b = Recorder("a", tmp_path / "a.ndjson"), Recorder("b", tmp_path / "b.ndjson")
    body, clock = detach(json.loads(json.dumps(attach({"tokens": 2}, a.send_app("b", 2)))))
    assert body == {"tokens": 2}
    b.receive_app("a", body["tokens"], clock)
    assert b.clock == {"b": 1, "a": 1}
    assert detach({"tokens": 1}) == ({"tokens": 1}, None)
    for bad in (
        lambda: a.send_app("b", {1, 2}),  # not JSON
        lambda: a.send_app("b", float("nan")),
        lambda: a.send_marker("b", 0),
        lambda: a.send_marker("b", ""),
        lambda: a.send_app("", 1),
        lambda: b.receive_app("a", 1, {"a": -1}),
        lambda: detach({"vc": {"a": "1"}}),
    ):
        with pytest.raises(ValueError):
            bad()
    assert a.seq == 1 and b.seq == 1  # a refused event takes no seq
    a.close()
    with pytest.raises(ValueError, match="closed"):
        a.internal(0)
    assert set(json.loads(_lines(tmp_path / "b.ndjson")[0])) == {
        "node", "seq", "vc", "event", "channel", "msg",
    }  # fmt: skip


# --------------------------------------------------------------------------- the TCP app


@pytest.mark.parametrize(
    ("model", "seed"),
    [
        ("MCConcurrent", 1),  # p1 starts snapshot 1 while p2 starts snapshot 2
        ("MCConcurrent", 2),
        ("MCConcurrent", 3),
        ("MCTokenComplete3Large", 1),  # three processes; p1 and p2 both start snapshot 1
        ("MCTokenComplete3Large", 2),
        ("MCToken2", 4),
    ],
)
def test_tcp_logs_validate(model: str, seed: int, tmp_path: Path) -> None:
    run = _run(model, tmp_path, seed)
    paths = list(run.logs)
    assert [p.name for p in paths] == [f"{n}.ndjson" for n in _cfg(model).procs]
    v = validate_files(_cfg(model), paths)
    why = f"seed {seed}, logs in {tmp_path}:\n{v.explain()}"
    assert v.verdict == "pass", why
    assert v.first is None, why
    assert [s.message for s in v.snapshots] == [
        f"snapshot {k}: the one the algorithm must record" for k in sorted(run.started)
    ], why
    check_logs(read_logs(paths))  # and the logs are whole
    assert {n: e for n, e in run.stderr.items() if e} == {}, why  # no node complained


def test_tcp_logs_validate_with_the_command_line(tmp_path: Path) -> None:
    """The documented commands, each in its own process: run the app, validate."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    launcher = subprocess.run(
        [sys.executable, "-m", "redletter.conformance.adapters.instrument.examples.tcp",
         "--model", "MCConcurrent", "--out", str(tmp_path), "--seed", "7"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert launcher.returncode == 0, launcher.stderr
    command = launcher.stdout.splitlines()[-1].split()
    assert command[:4] == [".venv/bin/redletter", "conform", "validate", "MCConcurrent"]
    done = subprocess.run(
        [sys.executable, "-m", "redletter", *command[1:], "--root", str(ROOT)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    out = done.stdout.splitlines()
    assert done.returncode == 0, f"seed 7, logs in {tmp_path}:\n{done.stdout}{done.stderr}"
    assert out[0].startswith("pass: ") and out[0].endswith(
        " events replayed in the model: a complete run"
    )
    assert out[1:] == [
        "snapshot 1: the one the algorithm must record",
        "snapshot 2: the one the algorithm must record",
    ]


def test_processes_sharing_one_file_write_whole_lines(tmp_path: Path) -> None:
    """Three processes append to one file (O_APPEND, one write a line): no line is
    torn, and the file's order is causal, so it validates as one log."""
    seed = 5
    run = _run("MCTokenComplete3Large", tmp_path, seed, shared=True)
    assert [p.name for p in run.logs] == ["all.ndjson"]
    logs = read_logs(list(run.logs))
    assert {e.node for e in logs[0]} == {"p1", "p2", "p3"}
    check_logs(logs)
    v = validate_files(_cfg("MCTokenComplete3Large"), list(run.logs))
    assert v.verdict == "pass", f"seed {seed}, logs in {tmp_path}:\n{v.explain()}"


#: bug -> (model, the first divergence's kind, words its explanation must hold)
BUG_FINDINGS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "no-channel-recording": (
        "MCConcurrent",
        "missing-effect",
        ("receive app", "the model records app", "in this step; the log does not"),
    ),
    "late-marker": (
        "MCConcurrent",
        "red-letter-order",
        (
            "send app",
            "the model put marker",
            "before this app message",
            "overtakes its red letter",
            "Lemma0 breaks",
        ),
    ),
    "stop-at-first-marker": (
        "MCTokenComplete3Large",  # the bug shows only at a node with two input links
        "missing-effect",
        ("receive app", "the model records app", "in this step; the log does not"),
    ),
}
BUG_SEEDS = range(8)


def test_every_bug_has_a_finding() -> None:
    assert set(BUG_FINDINGS) == set(BUGS)


@pytest.mark.parametrize("bug", sorted(BUG_FINDINGS))
def test_injected_bug_is_found_with_the_first_divergence_explained(
    bug: str, tmp_path: Path
) -> None:
    model, kind, words = BUG_FINDINGS[bug]
    cfg = _cfg(model)
    tried: list[str] = []
    for seed in BUG_SEEDS:
        out = tmp_path / f"seed{seed}"
        run = _run(model, out, seed, bug=bug)
        v = _checked(cfg, list(run.logs))  # a bug is not a damaged log: the check passes
        if v.verdict == "pass":
            tried.append(f"seed {seed}: pass")
            continue
        why = f"--bug {bug} --seed {seed}, logs in {out}:\n{v.explain()}"
        assert v.first is not None, why
        assert v.first.kind == kind, why
        said = v.first.describe()
        assert all(w in said for w in words), why
        # the divergence names the log line it is about
        assert v.first.path is not None and v.first.line is not None, why
        line = json.loads(_lines(Path(v.first.path))[v.first.line - 1])
        assert said.startswith(f"{v.first.path}:{v.first.line}: {line['node']} "), why
        if kind == "missing-effect":
            assert any("not the one the algorithm must record" in s.message for s in v.snapshots)
        return
    pytest.fail(f"--bug {bug} not found on {model} with seeds {list(BUG_SEEDS)}: {tried}")


def test_a_bug_fails_the_command_line_naming_file_and_line(tmp_path: Path) -> None:
    # Whether a run shows late-marker is the scheduler's: the marker is held until the
    # next app message on its link or 20 ms, so a run whose app is idle by then (a
    # launcher or node held off the CPU) sends it in time.  The command line is judged
    # on the first seed whose run the judge in process fails, as the test above does.
    cfg = _cfg("MCConcurrent")
    tried: list[str] = []
    for seed in BUG_SEEDS:
        out_dir = tmp_path / f"seed{seed}"
        run = _run("MCConcurrent", out_dir, seed, bug="late-marker")
        if _checked(cfg, list(run.logs)).verdict == "pass":
            tried.append(f"seed {seed}: pass")
            continue
        done = subprocess.run(
            [sys.executable, "-m", "redletter", "conform", "validate", "MCConcurrent",
             *map(str, run.logs), "--root", str(ROOT)],
            cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        out = done.stdout.splitlines()
        assert done.returncode == 1, f"seed {seed}, logs in {out_dir}:\n{done.stdout}"
        assert out[0].startswith("fail: ")
        assert out[1].startswith(f"red-letter-order: {out_dir}/p")
        assert "overtakes its red letter" in out[1]
        return
    seeds = list(BUG_SEEDS)
    pytest.fail(f"--bug late-marker not found on MCConcurrent with seeds {seeds}: {tried}")


def test_a_run_that_does_not_finish_times_out_and_leaves_no_process(tmp_path: Path) -> None:
    before = _children()
    with pytest.raises(NodeTimeout, match=r"did not finish within 1\.5 s"):
        _run("MCConcurrent", tmp_path, 0, steps=10**9, timeout=1.5)
    assert _children() <= before


def test_a_node_that_dies_is_named(tmp_path: Path) -> None:
    before = _children()
    with pytest.raises(NodeCrashed, match=r"node p1 exited .* while the launcher waited"):
        _run("MCConcurrent", tmp_path, 0, python="false")  # exits at once, status 1
    assert _children() <= before


def _children() -> set[int]:
    """This process's living children."""
    me = str(os.getpid())
    out = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[1] == me and fields[0] != "Z":
            out.add(int(pid))
    return out


# --------------------------------------------------------------------------- damaged logs


@pytest.fixture(scope="module")
def good_logs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The logs of a correct run of MCConcurrent (seed 0), p1's and p2's."""
    out = tmp_path_factory.mktemp("good")
    run = _run("MCConcurrent", out, 0)
    p1, p2 = run.logs
    assert validate_files(_cfg("MCConcurrent"), [p1, p2]).verdict == "pass"
    return p1, p2


def _first(path: Path, pred: Callable[[dict[str, Any]], bool]) -> int:
    """The 0-based index of the first line of ``path`` whose JSON satisfies ``pred``."""
    return next(i for i, x in enumerate(_lines(path)) if pred(json.loads(x)))


def _received_by_p2(p2: Path) -> Callable[[dict[str, Any]], bool]:
    """A p1 app send p2 received (p2's clock shows it)."""
    seen = max(
        int(x["vc"].get("p1", 0)) for x in map(json.loads, _lines(p2)) if x["event"] == "receive"
    )
    return lambda x: x["event"] == "send" and "app" in x["msg"] and int(x["seq"]) <= seen


def _damage(
    good: tuple[Path, Path], out: Path, case: str
) -> tuple[list[Path], str, str, int, tuple[str, ...]]:
    """Damaged copies of the good logs: (paths, code, file, line, words)."""
    p1, p2 = good
    a, b = _lines(p1), _lines(p2)
    q1, q2 = out / "p1.ndjson", out / "p2.ndjson"
    paths = [q1, q2]
    words: tuple[str, ...]
    if case == "lost send":
        received = _received_by_p2(p2)
        i = _first(p1, lambda x: received(x) and int(x["seq"]) > 1)
        del a[i]
        code, where, line = CODE_LOST, q1, i + 1
        words = (
            f"seq {i + 2} of p1 follows seq {i}",
            f"its event {i + 1} is missing (a lost line)",
        )
    elif case == "lost effect":
        i = _first(p1, lambda x: x["event"] == "record_state")
        del a[i]
        code, where, line = CODE_LOST, q1, i + 1
        words = (f"its event {i + 1} is missing (a lost line)",)
    elif case == "lost tail":
        i = _first(p1, _received_by_p2(p2))
        a = a[: i + 1]
        j = _first(p2, lambda x: int(x["vc"].get("p1", 0)) > i + 1)
        dep = json.loads(b[j])["vc"]["p1"]
        code, where, line = CODE_LOST, q2, j + 1
        words = (
            f"the vector clock of p2 follows event {dep} of p1, which p1's log does not hold",
            f"it ends at seq {i + 1} ({q1}:{i + 1}); its last lines are lost, or it was cut short",
        )
    elif case == "cut last line":
        a[-1] = a[-1][: len(a[-1]) // 2]
        code, where, line = CODE_LOST, q1, len(a)
        words = ("the last line is cut short (not JSON:",)
    elif case == "missing log":
        paths = [q2]
        j = _first(p2, lambda x: "p1" in x["vc"])
        code, where, line = CODE_LOST, q2, j + 1
        words = ("but no log holds p1's events: give p1's log too",)
    elif case == "clock from nowhere":
        j = len(b) // 2
        x = json.loads(b[j])
        x["vc"]["p1"] = 999
        b[j] = json.dumps(x) + "\n"
        code, where, line = CODE_LOST, q2, j + 1
        words = ("follows event 999 of p1, which p1's log does not hold: it ends at seq",)
    elif case == "clock goes back":
        j = len(b) - 1
        x = json.loads(b[j])
        x["vc"]["p1"] = 0
        b[j] = json.dumps(x) + "\n"
        code, where, line = CODE_CLOCK, q2, j + 1
        words = ("p2's vector clock goes back: p1: 0 here",)
    elif case == "own clock is not seq":
        x = json.loads(b[2])
        x["vc"]["p2"] = 7
        b[2] = json.dumps(x) + "\n"
        code, where, line = CODE_CLOCK, q2, 3
        words = ("must give p2 its own seq 3",)
    elif case == "skewed wall clocks":
        # one file, the lines sorted by wall clocks that disagree: p2's run an hour
        # behind, so all of p2's lines come first
        q = out / "all.ndjson"
        q.write_text("".join(b + a), encoding="utf-8")
        j = _first(p2, lambda x: "p1" in x["vc"])
        dep = json.loads(b[j])["vc"]["p1"]
        return (
            [q],
            CODE_CLOCK,
            str(q),
            j + 1,
            (f"follows event {dep} of p1 (its vector clock), which comes later in the file "
             f"({q}:{len(b) + dep})", "the file's order contradicts the vector clocks"),
        )  # fmt: skip
    else:
        raise AssertionError(case)
    q1.write_text("".join(a), encoding="utf-8")
    q2.write_text("".join(b), encoding="utf-8")
    return paths, code, str(where), line, words


DAMAGE = (
    "lost send",
    "lost effect",
    "lost tail",
    "cut last line",
    "missing log",
    "clock from nowhere",
    "clock goes back",
    "own clock is not seq",
    "skewed wall clocks",
)


@pytest.mark.parametrize("case", DAMAGE)
def test_damaged_logs_are_an_input_error_naming_file_and_line(
    case: str, good_logs: tuple[Path, Path], tmp_path: Path
) -> None:
    paths, code, where, line, words = _damage(good_logs, tmp_path, case)
    with pytest.raises(InputError) as err:
        _checked(_cfg("MCConcurrent"), paths)
    e = err.value
    assert (e.code, e.path, e.line) == (code, where, line), e.message
    assert all(w in e.message for w in words), e.message
    assert e.code in CODES
    assert str(e).startswith(f"{where}:{line}: ")


@pytest.mark.parametrize("case", DAMAGE)
def test_validate_files_rejects_damaged_logs(
    case: str, good_logs: tuple[Path, Path], tmp_path: Path
) -> None:
    paths, code, where, line, _ = _damage(good_logs, tmp_path, case)
    if case == "cut last line":
        # A judge reads a last line cut short as a crashed process's log: the cut rule
        # (docs/instrument.md), never a fail on this correct run, never a silent pass.
        v = validate_files(_cfg("MCConcurrent"), paths)
        assert v.verdict != "fail", v.explain()
        assert any(f"the last line of {where} (line {line}) is cut short" in n for n in v.notes)
        return
    with pytest.raises(InputError) as err:
        validate_files(_cfg("MCConcurrent"), paths)
    assert (err.value.code, err.value.path, err.value.line) == (code, where, line)


def test_interleaved_lines_are_input_errors_and_a_cut_one_a_crash(
    good_logs: tuple[Path, Path], tmp_path: Path
) -> None:
    """What the log format's parser catches, through the CLI's own function; a last
    line cut short is a crashed process's log (the cut rule), not an error."""
    p1, p2 = good_logs
    a = _lines(p1)
    cut = tmp_path / "cut" / "p1.ndjson"
    cut.parent.mkdir()
    cut.write_text("".join(a[:-1]) + a[-1][:20], encoding="utf-8")
    # two writers without a lock: line 4 lands in the middle of line 3
    torn = tmp_path / "torn" / "p1.ndjson"
    torn.parent.mkdir()
    torn.write_text("".join(a[:2]) + a[2][:25] + a[3] + a[2][25:] + "".join(a[4:]), "utf-8")
    # two writers that take their seqs before the lock: lines 3 and 4 swapped
    swapped = tmp_path / "swapped" / "p1.ndjson"
    swapped.parent.mkdir()
    swapped.write_text("".join([*a[:2], a[3], a[2], *a[4:]]), encoding="utf-8")
    v = validate_files(_cfg("MCConcurrent"), [cut, p2])  # a crashed process's log
    assert v.verdict != "fail" and any("is cut short" in n for n in v.notes), v.explain()
    for path, line, words in (
        (torn, 3, "not JSON"),
        (swapped, 4, "seq 3 of p1 does not follow seq 4 (line 3): a node's seq must increase"),
    ):
        with pytest.raises(InputError) as err:
            validate_files(_cfg("MCConcurrent"), [path, p2])
        assert err.value.code in ("RL-INPUT-LOG", CODE_LOST)
        assert (err.value.path, err.value.line) == (str(path), line)
        assert words in err.value.message


def test_wall_clocks_and_file_order_do_not_matter(good_logs: tuple[Path, Path]) -> None:
    """The logs carry no wall-clock time; the merge follows the vector clocks, so the
    order of the files (or their times) changes nothing."""
    p1, p2 = good_logs
    assert all(set(EVENTS) >= {json.loads(x)["event"]} for x in _lines(p1))
    keys = {k for x in _lines(p1) + _lines(p2) for k in json.loads(x)}
    assert keys <= {
        "node", "seq", "vc", "event", "channel", "msg", "snapshot", "state", "channels", "of",
    }  # fmt: skip
    os.utime(p1, (1, 1))  # p1's file written "in 1970"
    one = _checked(_cfg("MCConcurrent"), [p1, p2])
    other = _checked(_cfg("MCConcurrent"), [p2, p1])
    assert one.verdict == other.verdict == "pass"
    assert one.explain() == other.explain()


# --------------------------------------------------------------------------- Go


@pytest.mark.go
def test_go_package(tmp_path: Path) -> None:
    go = find_go()
    if go is None:
        pytest.skip(
            "no Go toolchain (.venv/bin/go or go on PATH): the Go package's test did not run"
        )
    env = {
        **os.environ,
        "GOTOOLCHAIN": "local",
        "GOFLAGS": "-mod=mod",
        "CGO_ENABLED": "0",
        "REDLETTER_INSTRUMENT_OUT": str(tmp_path),
    }
    done = subprocess.run(
        [go, "test", "-count=1", "."],
        cwd=GO_PACKAGE, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    paths = [tmp_path / "p1.ndjson", tmp_path / "p2.ndjson"]
    v = _checked(_cfg("MCToken2"), paths)
    assert v.verdict == "pass", v.explain()
    assert [s.message for s in v.snapshots] == ["snapshot 1: the one the algorithm must record"]


# --------------------------------------------------------------------------- two halves, bytes


def test_the_recorder_logs_messages_in_two_halves(tmp_path: Path) -> None:
    """send_change then send_app(change=), send_app(split=True) then apply, and
    receive_app(split=True) then apply: the lines the Go package writes too."""
    rec = Recorder("p1", tmp_path / "p1.ndjson")
    change = rec.send_change("p2", 1, state=4)
    rec.send_app("p2", 1, change=change)
    clock = rec.send_app("p2", 2, split=True)
    rec.apply(clock["p1"], state=2)
    seq = rec.receive_app("p2", 5, {"p2": 1}, split=True)
    rec.apply(seq, state=7)
    with pytest.raises(ValueError, match="p1's event 5 is not a split send or receive"):
        rec.apply(seq)
    with pytest.raises(ValueError, match="not a send_change still to be written"):
        rec.send_app("p2", 1, change=change)
    rec.close()
    got = [
        {k: v for k, v in json.loads(x).items() if k not in ("node", "vc")}
        for x in _lines(tmp_path / "p1.ndjson")
    ]
    assert [json.dumps(x, sort_keys=True, separators=(",", ":")) for x in got] == [
        '{"channel":["p1","p2"],"event":"apply","msg":{"app":1},"seq":1,"state":4}',
        '{"channel":["p1","p2"],"event":"send","msg":{"app":1},"of":1,"seq":2}',
        '{"channel":["p1","p2"],"event":"send","msg":{"app":2},"seq":3,"split":true}',
        '{"channel":["p1","p2"],"event":"apply","msg":{"app":2},"of":3,"seq":4,"state":2}',
        '{"channel":["p2","p1"],"event":"receive","msg":{"app":5},"seq":5,"split":true}',
        '{"channel":["p2","p1"],"event":"apply","msg":{"app":5},"of":5,"seq":6,"state":7}',
        '{"event":"end","seq":7}',
    ]


def test_a_clock_in_bytes_is_the_go_package_s_byte_for_byte() -> None:
    """encode_clock writes what Go's Clock.AppendBinary writes (recorder_test.go's
    TestClockBytes holds the same bytes), and decode_clock reads it back."""
    from redletter.conformance.adapters.instrument import decode_clock, encode_clock

    data = encode_clock({"p1": 3, "zürich": 128, "b": 300})
    assert data.hex() == "030162ac0202703103077ac3bc726963688001"
    assert decode_clock(data + b"rest") == ({"b": 300, "p1": 3, "zürich": 128}, len(data))
    with pytest.raises(ValueError, match="end in the middle"):
        decode_clock(data[:-1])
    go_test = (GO_PACKAGE / "recorder_test.go").read_text(encoding="utf-8")
    assert 'const want = "030162ac0202703103077ac3bc726963688001"' in go_test


def test_the_recorder_imports_under_its_names() -> None:
    """redletter.recorder (the kit installed), redletter_recorder.py (the file to
    copy: a name no program uses) and recorder (its old name) are one recorder."""
    from redletter import recorder
    from redletter.conformance.adapters.instrument import recorder as old
    from redletter.conformance.adapters.instrument import redletter_recorder

    assert recorder.Recorder is redletter_recorder.Recorder is old.Recorder is Recorder
    copy = (ROOT / "conformance" / "adapters" / "instrument" / "redletter_recorder.py").read_text(
        encoding="utf-8"
    )
    imports = [line for line in copy.splitlines() if line.startswith(("import ", "from "))]
    assert all(
        line.split()[1].split(".")[0] in {"__future__", "json", "os", "threading", "collections",
                                         "contextlib", "types", "typing"}
        for line in imports
    ), imports  # fmt: skip
