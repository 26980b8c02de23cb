"""The instrumented example programs (conformance/adapters/instrument/examples/): each
correct run passes without a model, each injected bug fails naming its rule, a
crashed run is never a pass, and every run cut at every point gets, from both
judges, the verdict the cut rule's table gives (docs/instrument.md)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from redletter.conformance.adapters.instrument.examples.bank.bank import run_bank
from redletter.conformance.adapters.instrument.examples.chat.chat import run_chat
from redletter.conformance.adapters.instrument.examples.inbox.inbox import run_inbox
from redletter.conformance.adapters.instrument.examples.ledger.ledger import run_ledger
from redletter.conformance.adapters.instrument.examples.tcp.launcher import (
    launch,
    shape_of_model,
)
from redletter.conformance.eventlog import LogEvent
from redletter.conformance.gonode import find_go
from redletter.conformance.judges.log import Validation, validate_logs
from redletter.conformance.judges.runlog import conserved_sum, validate_run, validate_run_files
from redletter.conformance.logcheck import CASES, LogMerge
from redletter.python_model.config import load_model

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "conformance" / "adapters" / "instrument" / "examples"


def _kinds(v: Validation) -> list[str]:
    return [d.kind for d in v.divergences]


def _first(v: Validation) -> str:
    assert v.divergence is not None, v.explanation()
    # the first finding's line starts with its rule's name
    assert v.explanation().splitlines()[1].startswith(f"{v.divergence.kind}: "), v.explanation()
    return v.divergence.kind


# --------------------------------------------------------------------------- the chat


@pytest.mark.parametrize("seed", [0, 1])
def test_chat_passes(tmp_path: Path, seed: int) -> None:
    v = validate_run_files(run_chat(tmp_path, seed=seed))
    assert v.verdict == "pass", v.explanation()
    assert sorted(s.message for s in v.snapshots) == [
        f'snapshot "{k}": complete, consistent (Lemma 0 and Lemma 1 hold on this run), '
        "recorded as EWD 864 says"
        for k in ("alice-1", "carol-1")
    ]


def test_chat_marker_recorded_as_a_message_fails(tmp_path: Path) -> None:
    v = validate_run_files(run_chat(tmp_path, bug="marker-as-message"))
    assert v.verdict == "fail"
    assert _first(v) == "marker-recorded"
    assert v.divergence is not None
    assert "a red letter is not a message of the computation" in v.divergence.model_did


def test_chat_late_marker_fails_on_the_message_that_overtakes_it(tmp_path: Path) -> None:
    v = validate_run_files(run_chat(tmp_path, bug="late-marker"))
    assert v.verdict == "fail"
    assert _first(v) == "red-letter-order"
    assert v.divergence is not None
    assert "before red letter" in v.divergence.model_did


def test_a_crashed_chat_is_unknown(tmp_path: Path) -> None:
    """The chat process dies (os._exit) at bob's 30th event: no log ends."""
    done = subprocess.run(
        [sys.executable, "-m", "redletter.conformance.adapters.instrument.examples.chat",
         "--out", str(tmp_path), "--crash", "bob:30"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 70, (done.returncode, done.stdout[-2000:], done.stderr[-2000:])
    v = validate_run_files([tmp_path / f"{n}.ndjson" for n in ("alice", "bob", "carol")])
    assert v.verdict == "unknown", v.explanation()
    assert any("bob's log ends without its end event" in n for n in v.notes)


# --------------------------------------------------------------------------- the bank


@pytest.mark.parametrize("seed", [0, 1])
def test_bank_passes_and_conserves_money(tmp_path: Path, seed: int) -> None:
    v = validate_run_files(run_bank(tmp_path, seed=seed), invariant=conserved_sum("amount"))
    assert v.verdict == "pass", v.explanation()
    assert len(v.snapshots) == 2


def test_bank_marker_recorded_as_a_transfer_fails(tmp_path: Path) -> None:
    v = validate_run_files(run_bank(tmp_path, bug="marker-as-message"))
    assert v.verdict == "fail"
    assert _first(v) == "marker-recorded"


def test_bank_recording_after_the_marker_fails(tmp_path: Path) -> None:
    v = validate_run_files(run_bank(tmp_path, bug="record-after-close"))
    assert v.verdict == "fail"
    assert _first(v) == "record-after-close"
    assert v.divergence is not None and "after the channel turned red" in v.divergence.model_did


# --------------------------------------------------------------------------- the ledger


@pytest.mark.parametrize("order", ["debit-first", "write-first"])
def test_ledger_passes_with_sends_in_two_halves(tmp_path: Path, order: str) -> None:
    v = validate_run_files(run_ledger(tmp_path, order=order), invariant=conserved_sum("amount"))
    assert v.verdict == "pass", v.explanation()
    assert [s.ok for s in v.snapshots] == [True, True]


@pytest.mark.parametrize(
    ("order", "rule"), [("debit-first", "straddling-send"), ("write-first", "red-letter-order")]
)
def test_ledger_audit_that_does_not_wait_for_transfers_in_progress_fails(
    tmp_path: Path, order: str, rule: str
) -> None:
    """The same program without the wait: an audit starts while a transfer is
    between its halves, every run (the operator is cued by the teller)."""
    v = validate_run_files(
        run_ledger(tmp_path, order=order, bug="straddle"), invariant=conserved_sum("amount")
    )
    assert v.verdict == "fail"
    assert _first(v) == rule
    assert "invariant" in _kinds(v)  # and the audit's money is wrong


def test_ledger_logged_as_one_event_fails_a_correct_run(tmp_path: Path) -> None:
    """Logged at the write as one send (the old advice), the correct debit-first run
    fails: the recorded balance holds debits the log puts after the recording."""
    v = validate_run_files(run_ledger(tmp_path, log="one-event"))
    assert v.verdict == "fail"
    assert {"wrong-state", "red-letter-order"} <= set(_kinds(v)), v.explanation()


# --------------------------------------------------------------------------- the inbox


@pytest.mark.parametrize("seed", [0, 1])
def test_inbox_passes_recording_the_lines_it_holds(tmp_path: Path, seed: int) -> None:
    v = validate_run_files(run_inbox(tmp_path, seed=seed))
    assert v.verdict == "pass", v.explanation()
    assert len(v.snapshots) == 2


def test_inbox_that_forgets_its_held_lines_fails(tmp_path: Path) -> None:
    v = validate_run_files(run_inbox(tmp_path, bug="forget-inbox"))
    assert v.verdict == "fail"
    assert _first(v) == "missing-record"
    assert v.divergence is not None
    assert "took it in before recording its state" in v.divergence.model_did
    assert "and applied it only after" in v.divergence.model_did


def test_inbox_logged_as_one_receipt_hides_the_bug(tmp_path: Path) -> None:
    """Logged as one receipt, the log says a held line was in the state: the bug
    passes and the correct program fails.  Two halves are what the program does."""
    buggy = validate_run_files(run_inbox(tmp_path / "bug", bug="forget-inbox", log="one-event"))
    assert buggy.verdict == "pass", buggy.explanation()
    right = validate_run_files(run_inbox(tmp_path / "ok", log="one-event"))
    assert right.verdict == "fail"
    assert _first(right) == "record-before-red"


# --------------------------------------------------------------------------- Go


def _go_build(folder: Path, out: Path) -> Path:
    """The Go example in ``folder`` built as docs/instrument.md builds it."""
    go = find_go()
    if go is None:
        pytest.skip("no Go toolchain (.venv/bin/go or go on PATH): the Go example did not run")
    env = {**os.environ, "GOTOOLCHAIN": "local", "GOFLAGS": "-mod=mod", "CGO_ENABLED": "0"}
    done = subprocess.run(
        [go, "build", "-o", str(out), "."],
        cwd=folder, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return out


@pytest.fixture(scope="module")
def goring(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield _go_build(EXAMPLES / "goring", tmp_path_factory.mktemp("goring") / "goring")


def _run_go(binary: Path, out: Path, *args: str) -> list[Path]:
    done = subprocess.run(
        [str(binary), "-out", str(out), *args],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return [out / f"{n}.ndjson" for n in ("paris", "tokyo", "lima")]


@pytest.mark.slow
@pytest.mark.go
def test_go_program_passes(goring: Path, tmp_path: Path) -> None:
    v = validate_run_files(_run_go(goring, tmp_path, "-seed", "3"))
    assert v.verdict == "pass", v.explanation()
    assert len(v.snapshots) == 2


@pytest.mark.slow
@pytest.mark.go
def test_go_marker_recorded_as_a_reading_fails(goring: Path, tmp_path: Path) -> None:
    v = validate_run_files(_run_go(goring, tmp_path, "-bug", "marker-as-message"))
    assert v.verdict == "fail"
    assert _first(v) == "marker-recorded"


@pytest.mark.slow
@pytest.mark.go
def test_go_missing_marker_fails_liveness(goring: Path, tmp_path: Path) -> None:
    v = validate_run_files(_run_go(goring, tmp_path, "-bug", "skip-one-output"))
    assert v.verdict == "fail"
    assert "liveness-missing-red-letter" in _kinds(v)
    assert any(
        "never sends red letter" in d.model_did
        for d in v.divergences
        if d.kind == "liveness-missing-red-letter"
    )


@pytest.fixture(scope="module")
def gomodules(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The Go program in two modules."""
    yield _go_build(EXAMPLES / "gomodules" / "app", tmp_path_factory.mktemp("gomodules") / "app")


@pytest.mark.slow
@pytest.mark.go
def test_go_program_in_two_modules_passes_with_and_without_a_model(
    gomodules: Path, tmp_path: Path
) -> None:
    done = subprocess.run(
        [str(gomodules), "-out", str(tmp_path)], capture_output=True, text=True, timeout=60,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    paths = [tmp_path / "p1.ndjson", tmp_path / "p2.ndjson"]
    assert validate_run_files(paths).verdict == "pass"
    from redletter.conformance.judges.log import validate_files

    v = validate_files(_MODEL("MCToken2"), paths)
    assert v.verdict == "pass", v.explain()
    # docs/instrument.md prints this run's event count: the run is the same
    # every time (it once depended on the scheduler: 20 or 21 events), and
    # p2 records the token that was on its way when the snapshot began.
    again = tmp_path / "again"
    done = subprocess.run(
        [str(gomodules), "-out", str(again)], capture_output=True, text=True, timeout=60,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    for p in paths:
        assert (again / p.name).read_bytes() == p.read_bytes(), p.name
    p2 = paths[1].read_text(encoding="utf-8")
    assert '"event":"record_message","snapshot":1,"channel":["p1","p2"]' in p2
    assert sum(len(p.read_text(encoding="utf-8").splitlines()) for p in paths) == 20


def test_the_go_modules_say_require_and_replace_in_full() -> None:
    """docs/instrument.md prints app/go.mod in full: the file is what it prints."""
    doc = (ROOT / "docs" / "instrument.md").read_text(encoding="utf-8")
    mod = (EXAMPLES / "gomodules" / "app" / "go.mod").read_text(encoding="utf-8")
    assert f"```\n{mod}```" in doc
    for text in (mod, (EXAMPLES / "gomodules" / "peer" / "go.mod").read_text("utf-8")):
        assert "require" in text and "redletter/instrument =>" in text


# --------------------------------------------------------------------------- every cut


def _MODEL(name: str):  # type: ignore[no-untyped-def]
    return load_model(name, ROOT / "spec")


def _snapshots_of(ev: LogEvent) -> object:
    if ev.snapshot is not None:
        return ev.snapshot
    if ev.msg is not None and ev.msg[0] == "marker":
        return ev.msg[1]
    return None


def _expected(cut: list[LogEvent], nodes: set[str], whole: bool) -> tuple[str, str]:
    """The verdict and case the table of the cut rule gives a correct run's cut."""
    snaps = {k for ev in cut if (k := _snapshots_of(ev)) is not None}
    if not snaps:
        return "unknown", CASES["none"]
    if whole:
        return "pass", CASES["whole"]
    done = {(ev.node, ev.snapshot) for ev in cut if ev.event == "complete"}
    if all((n, k) in done for k in snaps for n in nodes):
        return "pass", CASES["after"]
    return "unknown", CASES["inside"]


def _every_cut(
    paths: list[Path], model: str | None = None, invariant: bool = False
) -> dict[tuple[str, str], int]:
    """Judge every prefix of the run the logs record (a consistent cut: each log cut
    where the run was at that point); the verdicts counted by case.  Each must be
    the one the cut rule gives, from both judges when a model fits."""
    order = [ev for _, ev, _ in LogMerge.of_files(paths)]
    index = {str(p): i for i, p in enumerate(paths)}
    nodes = {ev.node for ev in order}
    cfg = _MODEL(model) if model else None
    seen: dict[tuple[str, str], int] = {}
    for i in range(len(order) + 1):
        logs: list[list[LogEvent]] = [[] for _ in paths]
        for ev in order[:i]:
            logs[index[ev.path]].append(ev)
        ended = {ev.node for ev in order[:i] if ev.event == "end"}
        want = _expected(order[:i], nodes, whole=ended == nodes)
        v = validate_run(logs, invariant=conserved_sum("amount") if invariant else None)
        got = (str(v.verdict), v.case)
        assert got == want, f"cut after {i} of {len(order)} events: {v.explanation()}"
        if cfg is not None:
            m = validate_logs(cfg, logs)
            assert (str(m.verdict), m.case) == want, (
                f"in {model}, cut after {i} of {len(order)} events: {m.explain()}"
            )
        seen[want] = seen.get(want, 0) + 1
    return seen


def _all_cases(seen: dict[tuple[str, str], int]) -> None:
    assert set(seen) == {
        ("unknown", CASES["none"]),
        ("unknown", CASES["inside"]),
        ("pass", CASES["after"]),
        ("pass", CASES["whole"]),
    }, seen


def test_every_cut_of_the_chat(tmp_path: Path) -> None:
    _all_cases(_every_cut(run_chat(tmp_path, lines=6)))


def test_every_cut_of_the_bank(tmp_path: Path) -> None:
    _all_cases(_every_cut(run_bank(tmp_path, transfers=8), invariant=True))


@pytest.mark.parametrize("order", ["debit-first", "write-first"])
def test_every_cut_of_the_ledger(tmp_path: Path, order: str) -> None:
    _all_cases(_every_cut(run_ledger(tmp_path, order=order, transfers=8), invariant=True))


def test_every_cut_of_the_inbox(tmp_path: Path) -> None:
    _all_cases(_every_cut(run_inbox(tmp_path, lines=6)))


def test_every_cut_of_the_tcp_token_app_by_both_judges(tmp_path: Path) -> None:
    run = launch(shape_of_model("MCConcurrent", ROOT / "spec"), tmp_path, seed=0, steps=6)
    _all_cases(_every_cut(list(run.logs), model="MCConcurrent"))


def test_every_cut_of_the_reference_fixture_by_both_judges() -> None:
    logs = ROOT / "tests" / "data" / "conformance" / "logs"
    seen = _every_cut(
        [logs / "MCToken2.reference.p1.ndjson", logs / "MCToken2.reference.p2.ndjson"],
        model="MCToken2",
    )
    # its logs have no end events: the whole run is a cut after the snapshot completed
    assert set(seen) == {
        ("unknown", CASES["none"]),
        ("unknown", CASES["inside"]),
        ("pass", CASES["after"]),
    }, seen


@pytest.mark.slow
@pytest.mark.go
def test_every_cut_of_the_go_programs_by_both_judges(
    goring: Path, gomodules: Path, tmp_path: Path
) -> None:
    _all_cases(_every_cut(_run_go(goring, tmp_path / "ring", "-seed", "0")))
    done = subprocess.run(
        [str(gomodules), "-out", str(tmp_path / "two")], capture_output=True, text=True,
        timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    two = [tmp_path / "two" / "p1.ndjson", tmp_path / "two" / "p2.ndjson"]
    _all_cases(_every_cut(two, model="MCToken2"))


def test_every_cut_of_the_documented_python_example_by_both_judges(tmp_path: Path) -> None:
    """docs/instrument.md's copy-pasteable two_nodes.py, run as the page says."""
    page = (ROOT / "docs" / "instrument.md").read_text(encoding="utf-8")
    code = page.split("```python\n# two_nodes.py\n", 1)[1].split("```", 1)[0]
    (tmp_path / "two_nodes.py").write_text(code, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "two_nodes.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    paths = [tmp_path / "p1.ndjson", tmp_path / "p2.ndjson"]
    from redletter.conformance.judges.log import validate_files

    v = validate_files(_MODEL("MCToken2"), paths)
    assert v.verdict == "pass", v.explain()
    assert [s.message for s in v.snapshots] == ["snapshot 1: the one the algorithm must record"]
    _all_cases(_every_cut(paths, model="MCToken2"))
