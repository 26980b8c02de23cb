"""Every input file the kit reads is read by one careful reader
(:func:`redletter.untrusted.read_input`): a regular file only (a FIFO, a device or a
socket is refused before anything is read: a FIFO would hang the kit), never more
than a bound of bytes, every problem bad input (exit 5) naming the file.

The bounds are tried on sparse files (their size costs no disk and no time).
"""

from __future__ import annotations

import os
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from redletter.cli import main
from redletter.conformance.traces import Trace, make_step, model_source, write_trace
from redletter.errors import InputError
from redletter.manifest import load_manifest
from redletter.render.teach import seed_schedule
from redletter.untrusted import (
    MAX_LOG_BYTES,
    MAX_LOGS_TOTAL,
    MAX_SMALL_BYTES,
    MAX_TRACE_BYTES,
    check_regular,
    read_input,
)

pytestmark = pytest.mark.timeout(60)  # a FIFO that is read hangs: fail, do not hang

ROOT = Path(__file__).resolve().parent.parent
COS418 = ROOT / "tests" / "data" / "cos418"

FIFO = (
    "is a FIFO (named pipe), not a regular file: the kit reads its inputs from regular files"
    " only (a FIFO or a device could block it for ever); give the file itself"
)


def _large(what: str, limit: str) -> str:
    return (
        f"{what} is larger than {limit}, the most the kit reads from one such file (a bound"
        " that keeps a runaway file from exhausting memory); check that it is the file you"
        " meant, or split it"
    )


def _sparse(path: Path, size: int) -> Path:
    with open(path, "wb") as f:
        f.truncate(size)
    return path


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def _error(capsys: pytest.CaptureFixture[str]) -> str:
    return capsys.readouterr().err.splitlines()[0]


# --------------------------------------------------------------------------- the reader


def test_a_regular_file_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 100)
    assert read_input(path, code="RL-INPUT", limit=100) == b"x" * 100
    link = tmp_path / "link"
    link.symlink_to(path)  # a symlink to the user's own file is fine
    assert read_input(link, code="RL-INPUT", limit=100) == b"x" * 100


@pytest.fixture
def unix_socket(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "sock"
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(str(path))
    try:
        yield path
    finally:
        s.close()


def test_what_is_not_a_regular_file_is_refused_before_it_is_read(
    tmp_path: Path, unix_socket: Path
) -> None:
    cases = {
        _fifo(tmp_path / "fifo"): "a FIFO (named pipe)",
        Path("/dev/zero"): "a character device",  # would never end
        unix_socket: "a socket",
        tmp_path: "a directory",
    }
    for path, kind in cases.items():
        with pytest.raises(InputError) as e:
            read_input(path, code="RL-INPUT-LOG", what="the log", limit=10)
        with pytest.raises(InputError) as e2:
            check_regular(path, code="RL-INPUT-LOG", what="the log")
        for err in (e.value, e2.value):
            assert err.code == "RL-INPUT-LOG"
            assert str(err) == (
                f"{path}: the log is {kind}, not a regular file: the kit reads its inputs from"
                " regular files only (a FIFO or a device could block it for ever); give the"
                " file itself"
            )


def test_a_file_larger_than_the_bound_is_refused_without_reading_it(tmp_path: Path) -> None:
    path = _sparse(tmp_path / "big", MAX_TRACE_BYTES + 1)
    with pytest.raises(InputError) as e:
        read_input(path, code="RL-INPUT-ITF", limit=MAX_TRACE_BYTES, what="the trace")
    assert str(e.value) == f"{path}: {_large('the trace', '256 MiB')}"
    # On the bound itself it is read.
    path.write_bytes(b"y" * 10)
    assert read_input(path, code="RL-INPUT", limit=10) == b"y" * 10


def test_a_file_that_says_it_is_small_is_read_no_further_than_the_bound() -> None:
    # /proc files have a size of 0 and more than 100 bytes of content.
    with pytest.raises(InputError) as e:
        read_input("/proc/self/status", code="RL-INPUT", limit=100)
    assert str(e.value) == f"/proc/self/status: {_large('the file', '100 bytes')}"


def test_the_bounds() -> None:
    assert (MAX_TRACE_BYTES, MAX_LOG_BYTES, MAX_SMALL_BYTES) == (256 << 20, 256 << 20, 16 << 20)


# --------------------------------------------------------------------------- each reader


def test_a_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for path, message in (
        (_fifo(tmp_path / "fifo.itf.json"), f"the trace {FIFO}"),
        (_sparse(tmp_path / "big.itf.json", MAX_TRACE_BYTES + 1), _large("the trace", "256 MiB")),
    ):
        assert main(["conform", "replay", str(path), "--node", "true", "--root", str(ROOT)]) == 5
        assert _error(capsys) == f"error[RL-INPUT-ITF]: {path}: {message}"


def test_an_event_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Event logs are read a line at a time (memory does not grow with them), under
    one bound on all the logs of a run together (time does)."""
    total = (
        "the log brings the input to more than {} in all, the most the kit reads in one run"
        " (a bound that keeps a runaway input from running for hours); check that these are"
        " the files you meant, or raise the bound with --max-input"
    )
    for path, message in (
        (_fifo(tmp_path / "fifo.ndjson"), f"the event log {FIFO}"),
        (_sparse(tmp_path / "big.ndjson", MAX_LOGS_TOTAL + 1), total.format("4 GiB")),
    ):
        for model in (["MCToken2"], []):
            argv = ["conform", "validate", *model, str(path), "--root", str(ROOT)]
            assert main(argv) == 5
            assert _error(capsys) == f"error[RL-INPUT-LOG]: {path}: {message}"
    # four logs each far under the bound, together over it (the OOM-killed run)
    logs = [_sparse(tmp_path / f"p{i}.ndjson", 300 << 10) for i in range(4)]
    assert main(["conform", "validate", *map(str, logs), "--max-input", "1M"]) == 5
    assert _error(capsys) == f"error[RL-INPUT-LOG]: {logs[3]}: {total.format('1 MiB')}"


def test_a_cos418_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    events, snap = COS418 / "2nodes.events", COS418 / "0.snap"
    for path, message in (
        (_fifo(tmp_path / "fifo.top"), f"the file {FIFO}"),
        (_sparse(tmp_path / "big.top", MAX_SMALL_BYTES + 1), _large("the file", "16 MiB")),
    ):
        assert main(["cos418", "judge", str(path), str(events), str(snap)]) == 5
        assert _error(capsys) == f"error[RL-INPUT-COS418]: {path}: {message}"


def test_the_manifest(tmp_path: Path) -> None:
    for path, message in (
        (_fifo(tmp_path / "fifo.json"), f"the manifest {FIFO}"),
        (_sparse(tmp_path / "big.json", MAX_SMALL_BYTES + 1), _large("the manifest", "16 MiB")),
    ):
        with pytest.raises(InputError) as e:
            load_manifest(path)
        assert (e.value.code, str(e.value)) == ("RL-INPUT-MANIFEST", f"{path}: {message}")


# --------------------------------------------------------------------------- folders


def test_a_fifo_in_a_folder_of_traces(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    traces = tmp_path / "traces"
    traces.mkdir()
    tla, cfg = model_source("MCSeed", ROOT / "spec")
    steps = tuple(make_step(a, p) for a, p in seed_schedule())
    write_trace(traces / "seed.itf.json", Trace("seed", "MCSeed", "test", steps, tla, cfg))
    fifo = _fifo(traces / "zz-fifo.itf.json")
    store = tmp_path / "store"
    argv = ["conform", "run", "--traces", str(traces), "--node", "true", "--store", str(store)]
    assert main([*argv, "--root", str(ROOT)]) == 5
    assert _error(capsys) == f"error[RL-INPUT-ITF]: {fifo}: the trace {FIFO}"
    assert not store.exists()  # refused before anything was judged


def test_a_fifo_in_a_batch_of_cos418_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    batch = tmp_path / "batch"
    batch.mkdir()
    shutil.copy(COS418 / "2nodes.top", batch / "2nodes.top")
    fifo = _fifo(batch / "2nodes.events")
    (batch / "2nodes.snap").write_text("0\nN1 1\nN2 0\n")
    assert main(["cos418", "judge", "--batch", str(batch)]) == 5
    assert _error(capsys) == f"error[RL-INPUT-COS418]: {fifo}: the file {FIFO}"
