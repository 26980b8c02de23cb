"""The overridable steps of ChandyLamport.tla, and how a model's cfg picks them.

A model that must fail overrides one step in its ``.cfg`` (``Recording <-
[ChandyLamport] NoRecording``); :func:`make_steps` gives the Python model the
function for every step: the spec's own definition, written here for speed, or a
bug class's rule from the one registry (:mod:`redletter.python_model.bugs`), run on
a :class:`~redletter.python_model.stepview.ModelView` of the state.  Machines and
buffers are indices, ``k`` a snapshot *index* (into ``ModelConfig.snaps``); sets of
buffers and snapshots are bitmasks.

:data:`STEPS` lists the steps: their TLA+ signature, what the spec defines them
as, and the arguments and result of a bug class's rule for each.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Protocol, cast

from redletter.errors import InputError
from redletter.python_model.bugs import BUGS, BugClass, bug_for_override
from redletter.python_model.state import State
from redletter.python_model.stepview import ModelView, StepView

__all__ = ["OVERRIDES", "STEPS", "StepOperator", "Steps", "Wiring", "make_steps"]


class Wiring(Protocol):
    """What the steps read of a model: who is wired to which buffer
    (:class:`~redletter.python_model.config.ModelConfig` is one)."""

    @property
    def chan_src(self) -> tuple[int, ...]:
        """Per buffer: the index of the machine it comes from."""

    @property
    def chan_dst(self) -> tuple[int, ...]:
        """Per buffer: the index of the machine it delivers to."""

    @property
    def in_mask(self) -> tuple[int, ...]:
        """Per machine: the bitmask of its input buffers."""

    @property
    def out_mask(self) -> tuple[int, ...]:
        """Per machine: the bitmask of its output buffers."""

    @property
    def snaps(self) -> tuple[int, ...]:
        """The snapshot ids, in index order."""

    @property
    def procs(self) -> tuple[str, ...]:
        """The machines, in index order."""


@dataclass(frozen=True)
class StepOperator:
    """One overridable step: its TLA+ signature and the spec's definition, and the
    form of a bug class's rule for it."""

    name: str
    signature: str
    spec: str  #: the spec's definition (TLA+)
    rule: str  #: a bug class's rule: arguments -> result


STEPS: Final[Mapping[str, StepOperator]] = {
    s.name: s
    for s in (
        StepOperator(
            "Deliverable",
            "Deliverable(c)",
            "IF buf[c] = << >> THEN {} ELSE {1}",
            "(view, c, i) -> bool: may position i of buffer c be received next",
        ),
        StepOperator(
            "Enqueue",
            "Enqueue(s, m)",
            "Append(s, m)",
            "(view, c) -> int: how many messages at the tail of c the new message "
            "goes in front of (0: appended)",
        ),
        StepOperator(
            "RedLettersOut",
            "RedLettersOut(p, k, from)",
            "Out(p)",
            "(view, p, k, frm, d) -> bool: does p, turning red in k (frm: the buffer the "
            "red letter came from, -1 for a starter), send a red letter over d in Out(p)",
        ),
        StepOperator(
            "RedLettersAgain",
            "RedLettersAgain(p, k, c)",
            "{}",
            "(view, p, k, c, d) -> bool: does p, already red in k, send a red letter "
            "again over d in Out(p) on a red letter from c",
        ),
        StepOperator(
            "Recording",
            "Recording(k, p, c)",
            "p \\in red[k] /\\ c \\notin redBuf[k]",
            "(view, k, p, c) -> bool: does p record what it receives from c for k",
        ),
        StepOperator(
            "RecordMessage",
            "RecordMessage(s, m)",
            "Append(s, m)",
            "(view, k, c, rec, m) -> tuple[int, ...]: the recorded stream of c in k "
            "after m is recorded",
        ),
        StepOperator(
            "RedLetterRecord",
            "RedLetterRecord(k, p, c)",
            "<< >>",
            "(view, k, p, c) -> tuple[int, ...]: what the red letter that ends c's "
            "recording in k adds to the recorded stream",
        ),
        StepOperator(
            "RecordingConsumes",
            "RecordingConsumes(p, c)",
            "FALSE",
            "(view, p, c) -> bool: does the message p records from c stay from p's application",
        ),
        StepOperator(
            "TurnsRed",
            "TurnsRed(c, k)",
            "{k}",
            "(view, c, k, j) -> bool: does a red letter of k from c turn c red in j",
        ),
    )
}
"""Every overridable step of ChandyLamport.tla, in the order the spec defines them."""

OVERRIDES: Final[Mapping[str, tuple[str, ...]]] = {
    op: (op, *[b.definition for b in BUGS.values() if b.step == op and b.definition])
    for op in STEPS
}
"""Per step: the spec's own definition name, then every bug class's definition."""

_EMPTY: tuple[int, ...] = ()
_FIRST: tuple[int, ...] = (1,)


# --------------------------------------------------------------------------- the spec's steps
# Hand-written over the bitmasks: the explorer calls them on every successor.


def deliverable(cfg: Wiring, s: State, c: int) -> Sequence[int]:
    """``Deliverable(c) == IF buf[c] = << >> THEN {} ELSE {1}`` (FIFO)."""
    return _FIRST if s.buf[c] else _EMPTY


def enqueue(b: tuple[int, ...], m: int) -> tuple[int, ...]:
    """``Enqueue(s, m) == Append(s, m)``."""
    return (*b, m)


def red_letters_out(cfg: Wiring, s: State, p: int, k: int, frm: int) -> int:
    """``RedLettersOut(p, k, from) == Out(p)``."""
    return cfg.out_mask[p]


def red_letters_again(cfg: Wiring, s: State, p: int, k: int, c: int) -> int:
    """``RedLettersAgain(p, k, c) == {}``."""
    return 0


def recording(cfg: Wiring, s: State, k: int, p: int, c: int) -> bool:
    """``Recording(k, p, c) == p \\in red[k] /\\ c \\notin redBuf[k]``."""
    return bool(s.red[k] >> p & 1) and not s.red_buf[k] >> c & 1


def record_message(
    cfg: Wiring, s: State, k: int, c: int, rec: tuple[int, ...], m: int
) -> tuple[int, ...]:
    """``RecordMessage(s, m) == Append(s, m)``."""
    return (*rec, m)


def red_letter_record(cfg: Wiring, s: State, k: int, p: int, c: int) -> tuple[int, ...]:
    """``RedLetterRecord(k, p, c) == << >>``."""
    return _EMPTY


def recording_consumes(cfg: Wiring, s: State, p: int, c: int) -> bool:
    """``RecordingConsumes(p, c) == FALSE``."""
    return False


def turns_red(cfg: Wiring, s: State, c: int, k: int) -> int:
    """``TurnsRed(c, k) == {k}``."""
    return 1 << k


# --------------------------------------------------------------------------- a bug's rule as a step


class _BufferView:
    """Just one buffer, for an Enqueue rule: ``length`` and ``letter_at`` of it (a red
    letter's snapshot index, or -1 for a stand-in whose snapshot is unknown)."""

    __slots__ = ("_b", "_snaps")

    def __init__(self, b: tuple[int, ...], snaps: tuple[int, ...]) -> None:
        self._b = b
        self._snaps = snaps

    def length(self, c: int) -> int:
        return len(self._b)

    def letter_at(self, c: int, i: int) -> int | None:
        v = self._b[i - 1]
        if v >= 0:
            return None
        return self._snaps.index(-v) if -v in self._snaps else -1


def _bits(cfg: Wiring, mask: int) -> range:
    return range(mask.bit_length())


def _wrap(bug: BugClass, snaps: tuple[int, ...]) -> object:
    """The Python model's step function for ``bug``'s rule (its step's signature)."""
    rule = bug.rule
    assert rule is not None
    op = bug.step
    if op == "Deliverable":

        def f_deliverable(cfg: Wiring, s: State, c: int) -> Sequence[int]:
            v = ModelView(cfg, s)
            return [i for i in range(1, len(s.buf[c]) + 1) if rule(v, c, i)]

        return f_deliverable
    if op == "Enqueue":

        def f_enqueue(b: tuple[int, ...], m: int) -> tuple[int, ...]:
            off = cast(int, rule(_BufferView(b, snaps), 0))
            at = len(b) - off
            return (*b[:at], m, *b[at:])

        return f_enqueue
    if op == "RedLettersOut":

        def f_out(cfg: Wiring, s: State, p: int, k: int, frm: int) -> int:
            v = ModelView(cfg, s)
            out = cfg.out_mask[p]
            return sum(1 << d for d in _bits(cfg, out) if out >> d & 1 and rule(v, p, k, frm, d))

        return f_out
    if op == "RedLettersAgain":

        def f_again(cfg: Wiring, s: State, p: int, k: int, c: int) -> int:
            v = ModelView(cfg, s)
            out = cfg.out_mask[p]
            return sum(1 << d for d in _bits(cfg, out) if out >> d & 1 and rule(v, p, k, c, d))

        return f_again
    if op == "Recording":

        def f_recording(cfg: Wiring, s: State, k: int, p: int, c: int) -> bool:
            return bool(rule(ModelView(cfg, s), k, p, c))

        return f_recording
    if op == "RecordMessage":

        def f_record(
            cfg: Wiring, s: State, k: int, c: int, rec: tuple[int, ...], m: int
        ) -> tuple[int, ...]:
            return tuple(cast(tuple[int, ...], rule(ModelView(cfg, s), k, c, rec, m)))

        return f_record
    if op == "RedLetterRecord":

        def f_letter_record(cfg: Wiring, s: State, k: int, p: int, c: int) -> tuple[int, ...]:
            return tuple(cast(tuple[int, ...], rule(ModelView(cfg, s), k, p, c)))

        return f_letter_record
    if op == "RecordingConsumes":

        def f_consumes(cfg: Wiring, s: State, p: int, c: int) -> bool:
            return bool(rule(ModelView(cfg, s), p, c))

        return f_consumes
    if op == "TurnsRed":

        def f_turns(cfg: Wiring, s: State, c: int, k: int) -> int:
            v = ModelView(cfg, s)
            return sum(1 << j for j in range(len(s.red)) if rule(v, c, k, j))

        return f_turns
    raise InputError(f"bug class {bug.name} overrides {op}, which is no step of the spec")


@dataclass(frozen=True)
class Steps:
    """The overridable steps a model uses (Python functions over its states)."""

    deliverable: Callable[[Wiring, State, int], Sequence[int]]
    enqueue: Callable[[tuple[int, ...], int], tuple[int, ...]]
    red_letters_out: Callable[[Wiring, State, int, int, int], int]
    red_letters_again: Callable[[Wiring, State, int, int, int], int]
    recording: Callable[[Wiring, State, int, int, int], bool]
    record_message: Callable[[Wiring, State, int, int, tuple[int, ...], int], tuple[int, ...]]
    red_letter_record: Callable[[Wiring, State, int, int, int], tuple[int, ...]]
    recording_consumes: Callable[[Wiring, State, int, int], bool]
    turns_red: Callable[[Wiring, State, int, int], int]
    names: Mapping[str, str]  #: step -> the TLA+ definition bound to it
    bug: BugClass | None = None  #: the bug class the model plants, if any


_SPEC: Final[Mapping[str, object]] = {
    "Deliverable": deliverable,
    "Enqueue": enqueue,
    "RedLettersOut": red_letters_out,
    "RedLettersAgain": red_letters_again,
    "Recording": recording,
    "RecordMessage": record_message,
    "RedLetterRecord": red_letter_record,
    "RecordingConsumes": recording_consumes,
    "TurnsRed": turns_red,
}


def make_steps(overrides: Mapping[str, str], snaps: tuple[int, ...] = ()) -> Steps:
    """The steps for ``overrides`` (step -> definition; missing ones: the spec's)."""
    chosen: dict[str, object] = dict(_SPEC)
    planted: BugClass | None = None
    for op, name in overrides.items():
        if op not in STEPS:
            raise InputError(
                f"unknown step {op}: the steps of ChandyLamport.tla are " + ", ".join(STEPS),
                code="RL-INPUT-MODEL",
            )
        if name == op:
            continue
        bug = bug_for_override(op, name)
        if bug is None:
            raise InputError(
                f"unknown override {op} <- {name}: the registry of bug classes "
                "(python_model/bugs.py) has " + ", ".join(OVERRIDES[op]),
                code="RL-INPUT-MODEL",
            )
        chosen[op] = _wrap(bug, snaps)
        planted = bug
    return Steps(
        deliverable=chosen["Deliverable"],  # type: ignore[arg-type]
        enqueue=chosen["Enqueue"],  # type: ignore[arg-type]
        red_letters_out=chosen["RedLettersOut"],  # type: ignore[arg-type]
        red_letters_again=chosen["RedLettersAgain"],  # type: ignore[arg-type]
        recording=chosen["Recording"],  # type: ignore[arg-type]
        record_message=chosen["RecordMessage"],  # type: ignore[arg-type]
        red_letter_record=chosen["RedLetterRecord"],  # type: ignore[arg-type]
        recording_consumes=chosen["RecordingConsumes"],  # type: ignore[arg-type]
        turns_red=chosen["TurnsRed"],  # type: ignore[arg-type]
        names={op: overrides.get(op, op) for op in STEPS},
        bug=planted,
    )


def spec_view_rule(op: str) -> Callable[..., object]:
    """The spec's own definition of step ``op`` as a rule over a
    :class:`~redletter.python_model.stepview.StepView` (for engines that evaluate
    rules, e.g. a conformance node when the model plants no bug in ``op``)."""
    return _SPEC_RULES[op]


def _s_deliverable(v: StepView, c: int, i: int) -> bool:
    return i == 1


def _s_enqueue(v: StepView, c: int) -> int:
    return 0


def _s_out(v: StepView, p: int, k: int, frm: int, d: int) -> bool:
    return True


def _s_again(v: StepView, p: int, k: int, c: int, d: int) -> bool:
    return False


def _s_recording(v: StepView, k: int, p: int, c: int) -> bool:
    return v.red(k, p) and not v.red_buf(k, c)


def _s_record(v: StepView, k: int, c: int, rec: tuple[int, ...], m: int) -> tuple[int, ...]:
    return (*rec, m)


def _s_letter_record(v: StepView, k: int, p: int, c: int) -> tuple[int, ...]:
    return ()


def _s_consumes(v: StepView, p: int, c: int) -> bool:
    return False


def _s_turns(v: StepView, c: int, k: int, j: int) -> bool:
    return j == k


_SPEC_RULES: Final[Mapping[str, Callable[..., object]]] = {
    "Deliverable": _s_deliverable,
    "Enqueue": _s_enqueue,
    "RedLettersOut": _s_out,
    "RedLettersAgain": _s_again,
    "Recording": _s_recording,
    "RecordMessage": _s_record,
    "RedLetterRecord": _s_letter_record,
    "RecordingConsumes": _s_consumes,
    "TurnsRed": _s_turns,
}
