"""Every parser of outside input, fuzzed: protocol lines, ITF traces, NDJSON event
logs, COS 418 files and run documents, TLC's DOT dumps, TLC's and SANY's output,
the manifest, model .tla/.cfg files and TLA+ values.

Each parser gets mutations of valid samples (bytes flipped, inserted, deleted,
repeated; tokens a hostile writer would use: a 5,000-digit number, invalid
UTF-8, NUL, deep nesting, NaN, a path that climbs out) and random bytes, from
hypothesis.  The only exceptions allowed to escape are the kit's own typed
errors, each naming the file and the line (or, in JSON, the element); no input
may take more than a second of CPU per kilobyte (one second at least); names
taken from the input never reach the file system outside a temporary directory.

The fast suite runs :data:`FAST` inputs per parser; ``make test-long`` runs the
``long`` variant with at least 100,000 inputs per parser (``REDLETTER_FUZZ_LONG``
sets the number) and prints the count.
"""

from __future__ import annotations

import functools
import gc
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from redletter.conformance import protocol as p
from redletter.conformance.eventlog import parse_log
from redletter.conformance.formats.cos418 import parse_scenario, parse_snap, parse_topology
from redletter.conformance.judges.rundoc import read_run_document
from redletter.conformance.traces import generate, read_trace, trace_to_itf
from redletter.errors import LocatedError, RedletterError
from redletter.manifest import load_manifest
from redletter.python_model.config import load_model
from redletter.python_model.dot import load_dot
from redletter.python_model.itf import read_itf
from redletter.python_model.values import parse_state, parse_value
from redletter.tlc import parse_tool_output, sany_error

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
SPEC = ROOT / "spec"
FAST = int(os.environ.get("REDLETTER_FUZZ_FAST", "150"))
LONG = int(os.environ.get("REDLETTER_FUZZ_LONG", "100000"))

#: What a hostile writer puts in a file.
TOKENS: tuple[bytes, ...] = (
    b"9" * 5000, b"-9" + b"9" * 30, b"\xff\xfe", b"\x00", b"\xc3", b"[" * 3000, b"{" * 3000,
    b"NaN", b"Infinity", b"1e999999", b"-1", b"0", b'"', b"\\", b"\\u0000", b"\n", b"\r\n",
    b"../../etc/passwd", b"/tmp/x", b"\x1b[2J", b"\t", b"true", b"null", b"[]", b"{}",
    b"\xe2\x80\xae", b"a" * 300, b"<<", b">>", b":>", b"@@", b"|->", b"(*", b"*)", b"\\*",
)  # fmt: skip


@dataclass(frozen=True)
class Mutation:
    op: str
    at: int
    data: bytes


MUTATIONS = st.builds(
    Mutation,
    st.sampled_from(["flip", "insert", "delete", "repeat", "replace", "truncate"]),
    st.integers(0, 1 << 20),
    st.one_of(st.sampled_from(TOKENS), st.binary(min_size=1, max_size=12)),
)


def mutate(sample: bytes, mutations: list[Mutation]) -> bytes:
    data = bytearray(sample)
    for m in mutations:
        n = len(data)
        i = m.at % (n + 1)
        if m.op == "flip" and n:
            data[i % n] ^= 1 << (m.at % 8)
        elif m.op == "insert":
            data[i:i] = m.data
        elif m.op == "delete":
            del data[i : i + 1 + m.at % 64]
        elif m.op == "repeat" and n:
            data[i:i] = data[i : i + 1 + m.at % 256] * (1 + m.at % 50)
        elif m.op == "replace":
            data[i : i + len(m.data)] = m.data
        elif m.op == "truncate":
            del data[i:]
    return bytes(data)


@dataclass(frozen=True)
class Target:
    """One parser: its valid samples, and how to feed it bytes (``tmp`` is a fresh
    directory for file-based parsers)."""

    name: str
    #: the samples, or how to make them (when that is costly: made when first used,
    #: not when pytest collects the tests)
    given: tuple[bytes, ...] | Callable[[], tuple[bytes, ...]]
    parse: Callable[[bytes, Path], Any]
    lines: bool = True  #: its errors name a line (else an element of the document)

    @functools.cached_property
    def samples(self) -> tuple[bytes, ...]:
        return self.given() if callable(self.given) else self.given


def _write(tmp: Path, name: str, data: bytes) -> Path:
    path = tmp / name
    path.write_bytes(data)
    return path


@functools.cache
def _itf_samples() -> tuple[bytes, ...]:
    traces = generate("MCToken2", SPEC, goals=False)
    return tuple(
        json.dumps(trace_to_itf(t.with_steps(t.steps[:4]))).encode()
        for t in (traces[0], traces[len(traces) // 2])
    )


def _read_trace(data: bytes, tmp: Path) -> Any:
    path = _write(tmp, "t.itf.json", data)
    before = set(_fs_snapshot(tmp))
    try:
        return read_trace(path)
    finally:
        # A model name in the trace never becomes a file outside the kit's own
        # temporary directory (it is an identifier, never a path).
        assert set(_fs_snapshot(tmp)) <= before | {path}


def _fs_snapshot(tmp: Path) -> list[Path]:
    return [*tmp.iterdir(), *tmp.parent.iterdir()]


def _model(data: bytes, tmp: Path, which: str) -> Any:
    """Model ``MCFuzz``: MCToken2 with its .tla or its .cfg replaced by ``data``."""
    tla = (SPEC / "MCToken2.tla").read_bytes().replace(b"MCToken2", b"MCFuzz")
    cfg = (SPEC / "MCToken2.cfg").read_bytes()
    mine = data.replace(b"MCToken2", b"MCFuzz")
    (tmp / "MCFuzz.tla").write_bytes(mine if which == "tla" else tla)
    (tmp / "MCFuzz.cfg").write_bytes(data if which == "cfg" else cfg)
    return load_model("MCFuzz", tmp)


def _tool_output(data: bytes, tmp: Path) -> Any:
    return parse_tool_output(
        data.decode("utf-8", "replace").splitlines(), model="MCFuzz", source=str(tmp / "tlc.log")
    )


def _sany(data: bytes, tmp: Path) -> Any:
    return sany_error(
        data.decode("utf-8", "replace"), 0, spec_dir=tmp, module_file=tmp / "MCFuzz.tla"
    )


DOTS = ("Toy.dot", "One.dot")
VALUES = (
    b'[a |-> <<1, 2>>, b |-> {"x", "y"}, c |-> (1 :> TRUE @@ 2 :> FALSE)]',
    b"<<>>",
    b'{<<"p1", "p2">>}',
)


def _targets() -> tuple[Target, ...]:
    proto = [
        p.encode(p.Envelope(p.HARNESS, "p1", s.example()))
        for s in p.MESSAGES.values()
        if s.example is not None
    ]
    log = (DATA / "conformance" / "logs" / "MCToken2.reference.ndjson").read_bytes()
    tool = tuple(f.read_bytes()[:20000] for f in sorted((DATA / "tlc").glob("*.out"))[:3])
    sany = (
        b"Parsing file /x/MCFuzz.tla\nSemantic errors:\n\n*** Errors: 1\n\nline 3, col 1 to"
        b" line 3, col 4 of module MCFuzz\n\nUnknown operator: `Foo'.\n",
        b'Parsing file /x/MCFuzz.tla\n***Parse Error***\nEncountered "x" at line 2, column 3\n',
        b"Cannot find source file for module Foo imported in module MCFuzz\n",
    )
    return (
        Target("protocol line", tuple(x.encode() for x in proto),
               lambda d, t: p.decode(d, source=str(t / "stdout"), lineno=1)),
        Target("ITF trace", _itf_samples, lambda d, t: read_itf(_write(t, "t.itf.json", d)),
               lines=False),
        Target("conformance trace", _itf_samples, _read_trace, lines=False),
        Target("NDJSON event log", (log, log[: log.index(b"\n", len(log) // 3) + 1]),
               lambda d, t: parse_log(d, path=str(t / "run.ndjson"))),
        Target("COS 418 .top", ((DATA / "cos418" / "2nodes.top").read_bytes(),),
               lambda d, t: parse_topology(d, str(t / "x.top"))),
        Target("COS 418 .events", ((DATA / "cos418" / "2nodes.events").read_bytes(),),
               lambda d, t: parse_scenario(d, str(t / "x.events"))),
        Target("COS 418 .snap", ((DATA / "cos418" / "0.snap").read_bytes(),),
               lambda d, t: parse_snap(d, str(t / "x.snap"))),
        Target("COS 418 run document", (_run_document(),),
               lambda d, t: read_run_document(_write(t, "run.json", d)), lines=False),
        Target("TLC DOT dump", tuple((DATA / "dot" / n).read_bytes() for n in DOTS),
               lambda d, t: load_dot(_write(t, "g.dot", d))),
        Target("TLC -tool output", tool, _tool_output),
        Target("SANY output", sany, _sany),
        Target("manifest", ((SPEC / "manifest.json").read_bytes(),),
               lambda d, t: load_manifest(_write(t, "manifest.json", d)), lines=False),
        Target("model .cfg", ((SPEC / "MCToken2.cfg").read_bytes(),),
               lambda d, t: _model(d, t, "cfg")),
        Target("model .tla", ((SPEC / "MCToken2.tla").read_bytes(),),
               lambda d, t: _model(d, t, "tla")),
        Target("TLA+ value", VALUES,
               lambda d, t: parse_value(d.decode("utf-8", "replace"), path=str(t / "v"), line=1)),
        Target("TLA+ state", ((DATA / "model" / "MCSeed_state.txt").read_bytes(),),
               lambda d, t: parse_state(d.decode("utf-8", "replace"), path=str(t / "s"), line=1)),
    )  # fmt: skip


def _run_document() -> bytes:
    doc = {
        "format": "redletter-cos418-run", "version": 2, "dialect": "servers",
        "package": "chandy_lamport", "go_version": "go1.22", "request_sha256": "0" * 64,
        "nonce": "n", "seed": 1, "seed_effective": True,
        "topology": {"servers": [{"id": "N1", "tokens": 5}, {"id": "N2", "tokens": 3}],
                     "links": [{"src": "N1", "dest": "N2"}, {"src": "N2", "dest": "N1"}]},
        "scenario": [{"kind": "send", "src": "N1", "dest": "N2", "tokens": 2},
                     {"kind": "snapshot", "server": "N1"}, {"kind": "tick", "ticks": 3}],
        "outcome": "complete", "error": None, "time": 5, "extra_ticks": 0,
        "collect": {"stopped": "", "waited_ms": 0, "idle_ticks": 100},
        "schedule_available": True, "schedule_note": "", "other_records": 0,
        "schedule": [{"phase": "inject", "time": 0, "event_index": 0, "events": [
            {"event": "send", "src": "N1", "dest": "N2", "message": "token", "tokens": 2}]}],
        "snapshots": [{"id": 0, "initiator": "N1", "event_index": 1, "start_time": 0,
                       "status": "collected", "returned_time": 4, "collected_ms": 0,
                       "returned_id": 0, "tokens": {"N1": 3, "N2": 3}, "messages": []}],
    }  # fmt: skip
    return json.dumps(doc).encode()


TARGETS = _targets()
COUNTS: dict[str, int] = {}


def check(target: Target, data: bytes, tmp: Path) -> None:
    """Feed ``data`` to ``target``: a typed, located error or a result; bounded CPU."""
    COUNTS[target.name] = COUNTS.get(target.name, 0) + 1
    # The bound is on the parser's own work: this thread's CPU (process_time counts
    # every thread of the test process), with the cyclic collector paused (a full
    # collection walks whatever earlier tests left in the worker: the heap's cost,
    # not the parser's).  A CI run measured 1.45 s of process CPU for a 553-byte
    # parse that takes 0.1 ms alone and passed when hypothesis repeated it.
    collecting = gc.isenabled()
    gc.disable()
    start = time.thread_time()
    try:
        target.parse(data, tmp)
    except RedletterError as exc:
        # Typed, and located: the file, and the line (or, in a JSON document, the
        # element: the message names its path).
        assert exc.code.startswith("RL-"), exc
        if isinstance(exc, LocatedError):
            assert exc.path is not None, f"{target.name}: no file named: {exc.message}"
            if target.lines and exc.line is None:
                raise AssertionError(f"{target.name}: no line named: {exc.message}") from exc
        else:
            raise AssertionError(
                f"{target.name}: {type(exc).__name__} {exc.code} is not a located error: {exc}"
            ) from exc
    finally:
        spent = time.thread_time() - start
        if collecting:
            gc.enable()
    assert spent <= max(1.0, len(data) / 1024), (
        f"{target.name}: {spent:.2f} s of CPU for {len(data)} bytes"
    )


def _fresh(tmp_path: Path) -> Path:
    """The directory a parser reads its files from (each input overwrites them)."""
    d = tmp_path / "work"
    d.mkdir(exist_ok=True)
    return d


def _fuzz(target: Target, examples: int, tmp_path: Path) -> None:
    common = settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        print_blob=True,
    )

    @common
    @given(st.sampled_from(target.samples), st.lists(MUTATIONS, max_size=6))
    def mutated(sample: bytes, mutations: list[Mutation]) -> None:
        check(target, mutate(sample, mutations), work)

    @common
    @given(st.binary(max_size=4096))
    def random_bytes(data: bytes) -> None:
        check(target, data, work)

    work = _fresh(tmp_path)

    mutated()
    random_bytes()


IDS = [t.name for t in TARGETS]


def test_the_samples_are_valid(tmp_path: Path) -> None:
    """The fuzzing starts from inputs each parser accepts (else it tests nothing)."""
    for target in TARGETS:
        for sample in target.samples:
            target.parse(sample, _fresh(tmp_path))


@pytest.mark.parametrize("target", TARGETS, ids=IDS)
def test_fuzz(target: Target, tmp_path: Path) -> None:
    _fuzz(target, FAST, tmp_path)


@pytest.mark.long
@pytest.mark.timeout(7200)
@pytest.mark.parametrize("target", TARGETS, ids=IDS)
def test_fuzz_long(target: Target, tmp_path: Path) -> None:
    before = COUNTS.get(target.name, 0)
    _fuzz(target, LONG // 2 + 1, tmp_path)
    done = COUNTS.get(target.name, 0) - before
    print(f"fuzzed {target.name}: {done} inputs")
    assert done >= LONG


# --------------------------------------------------------------------------- names from input


@pytest.mark.parametrize("model", ["/tmp/redletter-evil/MCToken2", "../spec/MCToken2", "MC..X"])
def test_a_trace_cannot_write_outside_its_directory(model: str, tmp_path: Path) -> None:
    """The model name of a trace is a module name, never a path: a trace naming
    ``../spec/MCToken2`` or an absolute path is refused before anything is written."""
    t = generate("MCToken2", SPEC, goals=False)[0]
    doc = trace_to_itf(t.with_steps(t.steps[:2]))
    doc["#meta"]["model"] = model
    path = tmp_path / "evil.itf.json"
    path.write_text(json.dumps(doc))
    before = {p: p.stat().st_mtime_ns for p in SPEC.iterdir()}
    with pytest.raises(RedletterError) as err:
        read_trace(path)
    assert err.value.message == (
        f"{path}: #meta.model must be a model name (letters, digits and _), never a path;"
        f" got {model!r}"
    )
    assert err.value.exit_code == 5
    assert {p: p.stat().st_mtime_ns for p in SPEC.iterdir()} == before
    assert not Path("/tmp/redletter-evil").exists()


def test_model_names_are_identifiers(tmp_path: Path) -> None:
    with pytest.raises(RedletterError) as err:
        load_model("../spec/MCToken2", SPEC)
    assert err.value.message == (
        "'../spec/MCToken2' is not a model name: a model is named by its module (letters,"
        " digits and _), never by a path"
    )
