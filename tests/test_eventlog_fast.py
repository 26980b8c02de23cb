"""The fast path of the log reader (conformance/eventlog.py ``LogFile``) gives, line
for line, what the careful reader ``parse_line_clock`` gives: the same event and
clock, type for type, or the same error with its file and line; and a file's
progress, which orders the merge of several files, counts its lines as they are
read whatever the size of the chunks read."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from redletter.conformance.eventlog import LogFile, parse_line_clock
from redletter.errors import InputError
from redletter.untrusted import InputBudget

SEED = 28
#: values a mutated field takes: each JSON type, and the edges the checks draw
ODD: list[Any] = [
    0, -1, 1, 2, 1.0, 1.5, True, False, None, "", "p1", "p2", "x", [], ["p1"], {}, {"a": 1},
    2**63, 2**70, "p\u200b1",
]  # fmt: skip


def _line(rng: random.Random) -> str:
    """A send or receive line as the recorders write it, mutated 0 to 3 times."""
    event = rng.choice(["send", "receive"])
    src, dst = ("p1", "p2") if event == "send" else ("p2", "p1")
    obj: dict[str, Any] = {
        "node": "p1",
        "seq": rng.randint(1, 400),
        "vc": {"p1": 7, "p2": rng.randint(0, 9), "p3": 0},
        "event": event,
        "channel": [src, dst],
        "msg": rng.choice([{"app": {"amount": 3}}, {"app": 4}, {"marker": 2}, {"marker": "s-1"}]),
    }
    if rng.random() < 0.7:
        obj["state"] = rng.choice([95, {"balance": 1}, None, [1, 2]])
    for _ in range(rng.choice([0, 1, 1, 1, 2, 3])):
        key = rng.choice([*obj, "of", "split", "snapshot", "zzz", "vc", "vc", "msg", "channel"])
        how = rng.random()
        if how < 0.15:
            obj.pop(key, None)
        elif key == "vc" and how < 0.8:
            obj["vc"] = dict(obj.get("vc") or {}) if isinstance(obj.get("vc"), dict) else {}
            obj["vc"][rng.choice(["p1", "p2", "p9"])] = rng.choice(ODD)
            if rng.random() < 0.1:
                obj["vc"].update({f"q{i}": i for i in range(20)})  # past 16 entries
        elif key == "channel" and how < 0.6:
            obj["channel"] = rng.choice([[dst, src], [src], [src, dst, "x"], [src, ""], [1, dst]])
        elif key == "msg" and how < 0.6:
            obj["msg"] = rng.choice(
                [{"marker": v} for v in ODD[:8]] + [{"internal": 1}, {"app": 1, "x": 2}, {}]
            )
        elif key == "event" and how < 0.5:
            obj["event"] = "receive" if obj.get("event") == "send" else "send"
        else:
            obj[key] = rng.choice(ODD)
    return json.dumps(obj)


def _careful(text: str, path: str) -> str:
    try:
        ev, vc = parse_line_clock(text.encode(), path=path, line=1)
    except InputError as exc:
        return f"error {exc.code} {exc.message}"
    return f"{ev!r} {vc!r} {[type(x).__name__ for x in ev]}"


def _fast(path: Path) -> str:
    f = LogFile(path, InputBudget(1 << 30, code="RL-INPUT-LOG"), tolerant=False)
    try:
        got = f.next_clocked()
    except InputError as exc:
        return f"error {exc.code} {exc.message}"
    assert got is not None
    ev, vc = got
    return f"{ev!r} {vc!r} {[type(x).__name__ for x in ev]}"


def test_each_line_is_read_as_the_careful_reader_reads_it(tmp_path: Path) -> None:
    """600 seeded lines of the shape the fast path reads, mutated field by field
    (types, edges, missing and extra keys, clocks past 16 entries, wrong ends):
    the same event, clock and types, or the same error word for word."""
    rng = random.Random(SEED)
    accepted = 0
    for i in range(600):
        text = _line(rng)
        path = tmp_path / f"l{i}.ndjson"
        path.write_text(text + "\n", encoding="utf-8")
        want = _careful(text, str(path))
        assert _fast(path) == want, f"seed {SEED}, line {i}: {text}"
        accepted += not want.startswith("error")
    assert 100 < accepted < 500, accepted  # both paths are exercised


@pytest.mark.parametrize("chunk", [40, 333, 1 << 20])
def test_progress_counts_the_lines_read_whatever_the_chunks(tmp_path: Path, chunk: int) -> None:
    """After each event, a file's progress is the share of its bytes up to the end
    of that event's line (blank lines before it counted, a last line cut short
    not): as read a line at a time, so that the merge's order never depends on
    the size of the chunks it reads."""
    lines = [
        '{"node":"p1","seq":1,"vc":{"p1":1},"event":"init","state":0}',
        "",
        '{"node":"p1","seq":2,"vc":{"p1":2},"event":"send","channel":["p1","p2"],"msg":{"app":1}}',
        "   ",
        '{"node":"p1","seq":3,"event":"internal","msg":{"internal":"tick"}}',
        '{"node":"p1","seq":4,"vc":{"p1":4},"event":"end"}',
    ]
    data = ("\n".join(lines) + "\n" + '{"node":"p1","seq":5,"ev').encode()
    path = tmp_path / "p1.ndjson"
    path.write_bytes(data)
    f = LogFile(path, InputBudget(1 << 30, code="RL-INPUT-LOG"), tolerant=True)
    f.reader.chunk = chunk
    seen = []
    while (got := f.next_clocked()) is not None:
        ev = got[0]
        through = sum(len(x) + 1 for x in lines[: ev.line])
        assert f.progress_through(ev.line) == through / len(data)
        seen.append(ev.seq)
    assert seen == [1, 2, 3, 4]
    assert f.events == 4
    assert f.cut_reason is not None and "(line 7) is cut short" in f.cut_reason
