"""Counterexamples as lanes: what each machine does at each step, in words.

TLC prints a counterexample as whole states, the action's name between them; the
comparison page shows it shortened, as a table with one column per machine (a
space-time diagram turned on its side: time runs down, each message leaves one
lane and arrives in another).  Each step is read from the difference between a
state and the next, with the family's own vocabulary: red letters and red machines
for EWD 864 and the lazy rule, tokens and forwards for the observer, records,
barriers and checkpoints for Flink's barrier snapshots.

The states are parsed with :func:`redletter.python_model.values.parse_state`, the
kit's reader of TLC's printed values.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from redletter.python_model.values import (
    Fcn,
    Record,
    State,
    Value,
    apply_fn,
    parse_state,
    print_value,
)
from redletter.variants.measure import Counterexample

__all__ = ["Lane", "Lanes", "lanes", "last_state"]

NOTE = ""  #: the lane of the notes column (what happens to the whole run)
ARROW = "\u2192"


@dataclass(frozen=True)
class Lane:
    """One row of the table: the step number, the action, and what each machine
    (or the note column, key ``""``) does in it."""

    step: int
    action: str
    cells: Mapping[str, str]


@dataclass(frozen=True)
class Lanes:
    """A counterexample as a table."""

    machines: tuple[str, ...]
    rows: tuple[Lane, ...]


# --------------------------------------------------------------------------- values


def items(f: Value) -> Iterator[tuple[Value, Value]]:
    """The (key, value) pairs of a TLA+ function value in canonical shape."""
    if isinstance(f, tuple):
        yield from ((i + 1, v) for i, v in enumerate(f))
    elif isinstance(f, (Record, Fcn)):
        yield from ((k, f[k]) for k in f)  # type: ignore[index]


def get(f: Value, k: Value, default: Value = ()) -> Value:
    """``f[k]``, or ``default`` outside the domain."""
    try:
        return apply_fn(f, k)
    except KeyError:
        return default


def bag(f: Value) -> dict[Value, int]:
    """A bag (function from elements to counts) as a dict."""
    return {k: int(v) for k, v in items(f) if isinstance(v, int)}


def show(v: Value) -> str:
    """A value on one line, as TLC prints it."""
    return " ".join(print_value(v).split())


def names(vs: Sequence[Value]) -> str:
    """Machine names, joined."""
    return ", ".join(str(v) for v in vs)


def _seq(v: Value) -> tuple[Value, ...]:
    return v if isinstance(v, tuple) else ()


def _set(v: Value) -> frozenset[Value]:
    return v if isinstance(v, frozenset) else frozenset()


def _chan(c: Value) -> tuple[str, str]:
    assert isinstance(c, tuple) and len(c) == 2
    return str(c[0]), str(c[1])


def _field(m: Value, name: str) -> Value:
    assert isinstance(m, Record)
    return m[name]


def _grown(before: Value, after: Value) -> dict[Value, tuple[Value, ...]]:
    """Per key of a function of sequences: the elements appended."""
    out: dict[Value, tuple[Value, ...]] = {}
    for k, a in items(after):
        b = _seq(get(before, k))
        s = _seq(a)
        if len(s) > len(b) and s[: len(b)] == b:
            out[k] = s[len(b) :]
    return out


def _removed_head(before: Value, after: Value) -> dict[Value, Value]:
    """Per key of a function of sequences: the element that left from the front.  (No
    step both takes from a buffer and appends to it: no buffer leads from a machine to
    itself.)"""
    out: dict[Value, Value] = {}
    for k, b in items(before):
        bs, a = _seq(b), _seq(get(after, k))
        if bs and a == bs[1:]:
            out[k] = bs[0]
    return out


def _overtaken(before: Value, after: Value) -> tuple[Value, ...]:
    """The records ahead of the one barrier that left the sequence ``before``."""
    bs, a = _seq(before), _seq(after)
    for i, m in enumerate(bs):
        if _field(m, "kind") == "barrier" and bs[:i] + bs[i + 1 :] == a:
            return bs[:i]
    return ()


def _new_members(before: Value, after: Value) -> dict[Value, frozenset[Value]]:
    """Per key of a function of sets: the members added."""
    out: dict[Value, frozenset[Value]] = {}
    for k, a in items(after):
        new = _set(a) - _set(get(before, k, frozenset()))
        if new:
            out[k] = new
    return out


def _domain_grew(before: Value, after: Value) -> list[Value]:
    b = {k for k, _ in items(before)}
    return [k for k, _ in items(after) if k not in b]


# --------------------------------------------------------------------------- families

Reader = Callable[[str, State, State, Mapping[str, object]], dict[str, str]]


def _add(cells: dict[str, str], lane: str, text: str) -> None:
    cells[lane] = f"{cells[lane]}; {text}" if lane in cells else text


def _red_letter_step(action: str, s: State, t: State, ctx: Mapping[str, object]) -> dict[str, str]:
    """EWD 864 and the lazy rule."""
    cells: dict[str, str] = {}
    lazy = "owed" in t
    newly_red = _new_members(s["red"], t["red"])
    sent = _grown(s["buf"], t["buf"])
    got = _removed_head(s["buf"], t["buf"])
    recorded = {k: _grown(get(s["recBuf"], k), v) for k, v in items(t["recBuf"])}
    owes = _new_members(s["owed"], t["owed"]) if lazy else {}

    def turned_red(p: str) -> str:
        ks = [k for k, ps in newly_red.items() if p in ps]
        if not ks:
            return ""
        k = ks[0]
        text = f"turns red in {k}, records its state ({show(get(s['local'], p))})"
        if lazy and k in owes:
            dst = sorted(_chan(c)[1] for c in owes[k] if _chan(c)[0] == p)
            text += f", owes a red letter to {names(dst)}"
        else:
            dst = sorted(
                _chan(c)[1]
                for c, ms in sent.items()
                if _chan(c)[0] == p and any(_field(m, "kind") == "red" for m in ms)
            )
            if dst:
                text += f", red letters \u2192 {names(dst)}"
        return text

    if action == "StartSnapshot":
        for ps in newly_red.values():
            for p in sorted(str(x) for x in ps):
                _add(cells, p, "starts the snapshot: " + turned_red(p))
    elif action in ("SendApp", "SendRedLetter"):
        for c, ms in sent.items():
            src, dst = _chan(c)
            for m in ms:
                if _field(m, "kind") == "app":
                    _add(cells, src, f"sends {show(_field(m, 'val'))} \u2192 {dst}")
                else:
                    _add(
                        cells, src, f"pays the red letter of {show(_field(m, 'snap'))} \u2192 {dst}"
                    )
    elif action in ("ReceiveApp", "ReceiveRedLetter"):
        for c, m in got.items():
            src, dst = _chan(c)
            if _field(m, "kind") == "app":
                text = f"receives {show(_field(m, 'val'))} from {src}"
                if any(c in grown for grown in recorded.values()):
                    text += f", records it for {src} \u2192 {dst}"
                _add(cells, dst, text)
            else:
                text = f"receives the red letter from {src}"
                more = turned_red(dst)
                _add(cells, dst, text + (", " + more if more else ""))
    for k in _domain_grew(s["Sf"], t["Sf"]):
        _add(cells, NOTE, f"snapshot {k} complete")
    return cells


def _observer_step(action: str, s: State, t: State, ctx: Mapping[str, object]) -> dict[str, str]:
    """The observer with the piggybacked token."""
    cells: dict[str, str] = {}
    newly_red = _new_members(s["red"], t["red"])
    red_now = {p for ps in newly_red.values() for p in ps}

    def saved(p: str) -> str:
        return f"saves its state ({show(get(s['local'], p))}) and sends it to the observer"

    if action == "StartSnapshot":
        for k, ps in newly_red.items():
            for p in ps:
                others = sorted(str(x) for x in _set(get(t["requests"], k, frozenset())))
                _add(
                    cells,
                    str(p),
                    f"observes snapshot {k}: {saved(str(p))}; requests \u2192 {names(others)}",
                )
    elif action == "ReceiveRequest":
        for k, b in items(s["requests"]):
            for p in sorted(str(x) for x in _set(b) - _set(get(t["requests"], k, frozenset()))):
                text = f"request {k} arrives"
                text += (
                    f": {saved(p)}, with its counts" if p in red_now else " (already red: nothing)"
                )
                _add(cells, p, text)
    elif action in ("SendApp", "ReceiveApp"):
        for c, after in items(t["buf"]):
            src, dst = _chan(c)
            b0, b1 = bag(get(s["buf"], c)), bag(after)
            for m in set(b0) | set(b1):
                delta = b1.get(m, 0) - b0.get(m, 0)
                toks = _set(_field(m, "toks"))
                bears = f"bearing token {names(sorted(toks, key=str))}" if toks else "with no token"
                val = show(_field(m, "val"))
                if delta > 0:
                    _add(cells, src, f"sends {val} \u2192 {dst}, {bears}")
                elif delta < 0:
                    text = f"receives {val} from {src}, {bears}"
                    if dst in red_now:
                        text += f": first token, so it {saved(dst)} before accepting it"
                    fwd = any(
                        bag(get(get(t["recBuf"], k), c)) != bag(get(get(s["recBuf"], k), c))
                        for k, _ in items(t["recBuf"])
                    )
                    if fwd:
                        text += (
                            ": no token at a red machine, forwarded to the observer as in transit"
                        )
                    _add(cells, dst, text)
    elif action == "DeclareComplete":
        for k in _domain_grew(s["Sf"], t["Sf"]):
            _add(cells, NOTE, f"the observer declares snapshot {k} complete")
    return cells


def _rec(m: Value) -> str:
    name = f"{_field(m, 'src')}.{_field(m, 'idx')}"
    r = _field(m, "round")
    return name if r == 0 else f"{name} (round {r})"


def _effects(b: Value) -> str:
    parts = []
    for e, n in sorted(bag(b).items(), key=lambda kv: show(kv[0])):
        assert isinstance(e, tuple)
        name = f"{e[0]}.{e[1]}" + (f" (round {e[2]})" if e[2] != 0 else "")
        parts.append(name if n == 1 else f"{name} \u00d7{n}")
    return "{" + ", ".join(parts) + "}"


def _barrier_step(action: str, s: State, t: State, ctx: Mapping[str, object]) -> dict[str, str]:
    """Flink's barrier snapshots."""
    cells: dict[str, str] = {}
    sent = _grown(s["buf"], t["buf"])
    newly = _new_members(s["snapped"], t["snapped"])
    arrived = _new_members(s["barrierIn"], t["barrierIn"])
    stored = {k: _grown(get(s["recChan"], k), v) for k, v in items(t["recChan"])}

    def barriers_to(p: str, n: Value) -> str:
        dst = sorted(
            _chan(c)[1]
            for c, ms in sent.items()
            if _chan(c)[0] == p
            and any(_field(m, "kind") == "barrier" and _field(m, "ckpt") == n for m in ms)
        )
        return f", barrier {n} \u2192 {names(dst)}" if dst else ""

    if action == "Emit":
        for c, ms in sent.items():
            src, dst = _chan(c)
            for m in ms:
                _add(cells, src, f"reads {_rec(m)} \u2192 {dst}")
    elif action == "Process":
        for c, m in _removed_head(s["buf"], t["buf"]).items():
            if _field(m, "kind") != "rec":
                continue
            src, p = _chan(c)
            text = f"applies {_rec(m)}"
            onward = [(d, x) for d, xs in sent.items() for x in xs if _field(x, "kind") == "rec"]
            for d, x in onward:
                text += f", sends {_rec(x)} \u2192 {_chan(d)[1]}"
            logged = [n for n, g in stored.items() if c in g]
            if logged:
                text += f", logs it for checkpoint {names(logged)}"
            _add(cells, p, text)
    elif action == "InjectBarrier":
        for n, ps in newly.items():
            for p in sorted(str(x) for x in ps):
                pos = get(get(t["recPos"], n), p)
                _add(cells, p, f"checkpoint {n}: records position {show(pos)}{barriers_to(p, n)}")
    elif action == "ReceiveBarrier":
        for n, cs in arrived.items():
            for c in cs:
                src, p = _chan(c)
                text = f"barrier {n} from {src}"
                over = _overtaken(get(s["buf"], c), get(t["buf"], c))
                if over:
                    kept = "stored" if stored.get(n, {}).get(c) else "not stored"
                    text += f", overtaking {names([_rec(m) for m in over])} ({kept})"
                if p in _set(newly.get(n, frozenset())):
                    state = get(get(t["recState"], n), p)
                    text += f"; snapshots its state {_effects(state)}{barriers_to(p, n)}"
                elif p in _set(get(s["snapped"], n, frozenset())):
                    text += "; that input's recording for the checkpoint ends"
                elif ctx.get("blocks") is True:
                    text += "; blocks that input until the other barriers arrive"
                elif ctx.get("blocks") is False:
                    text += "; keeps processing that input (alignment skipped)"
                _add(cells, p, text)
        for n in _domain_grew(s["Sf"], t["Sf"]):
            _add(cells, NOTE, f"checkpoint {n} complete")
    elif action == "Restore":
        n = t["restored"]
        chans = [
            f"{ARROW.join(_chan(c))}: {names([_rec(m) for m in _seq(v)])}"
            for c, v in items(t["buf"])
            if _seq(v)
        ]
        _add(
            cells,
            NOTE,
            f"the job fails and restores checkpoint {n}: positions {show(t['pos'])}, states "
            + ", ".join(f"{p} {_effects(v)}" for p, v in items(t["state"]))
            + (f", stored records {'; '.join(chans)}" if chans else ", no stored records"),
        )
    return cells


_READERS: Mapping[str, Reader] = {
    "chandy-lamport": _red_letter_step,
    "lazy": _red_letter_step,
    "observer": _observer_step,
    "barrier": _barrier_step,
}


def _machines(family: str, first: State) -> tuple[str, ...]:
    if family == "barrier":
        sources = sorted(str(k) for k, _ in items(first["pos"]))
        ops = sorted(str(k) for k, _ in items(first["state"]))
        return (*sources, *ops)
    return tuple(sorted(str(k) for k, _ in items(first["local"])))


def lanes(c: Counterexample, family: str, ctx: Mapping[str, object]) -> Lanes:
    """The counterexample ``c`` of a model of ``family`` as a table; ``ctx`` says what
    the reader cannot see in a state (``blocks``: whether alignment blocks an input)."""
    read = _READERS[family]
    parsed: list[State | None] = [parse_state(s.text) if s.text else None for s in c.states]
    first = parsed[0]
    assert first is not None, "a counterexample starts with a state"
    machines = _machines(family, first)
    rows: list[Lane] = []
    for i, step in enumerate(c.states):
        now = parsed[i]
        if i == 0:
            continue
        if step.action == "Stuttering":
            rows.append(
                Lane(i + 1, "(stuttering)", {NOTE: "from here on nothing happens, for ever"})
            )
            continue
        if step.back_to is not None:
            rows.append(
                Lane(
                    i + 1,
                    "(loop)",
                    {NOTE: f"back to the state after step {step.back_to}, for ever"},
                )
            )
            continue
        before = parsed[i - 1]
        assert before is not None and now is not None
        rows.append(Lane(i + 1, step.action, read(step.action, before, now, ctx)))
    return Lanes(machines=machines, rows=tuple(rows))


def last_state(c: Counterexample, shown: Sequence[str]) -> list[str]:
    """The last state of ``c`` (the one the property fails in), one ``var = value`` line
    per shown variable."""
    texts = [s.text for s in c.states if s.text]
    state = parse_state(texts[-1])
    return [f"{v} = {show(state[v])}" for v in shown if v in state]
