"""The overridable steps of ChandyLamport.tla and the mutants' versions of them.

Each model that must fail overrides exactly one step in its ``.cfg``
(``Recording <- NoRecording`` ...); :func:`make_steps` picks the Python mirror of
every step by the name the cfg binds.  Machines and buffers are indices, ``k`` a
snapshot *index* (into ``ModelConfig.snaps``); sets of buffers/snapshots are bitmasks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from redletter.errors import InputError
from redletter.python_model.state import State

__all__ = ["STEP_FUNCTIONS", "Steps", "Wiring", "make_steps"]


class Wiring(Protocol):
    """What the steps read of a model: who is wired to which buffer
    (:class:`~redletter.python_model.config.ModelConfig` is one)."""

    @property
    def chan_dst(self) -> tuple[int, ...]:
        """Per buffer: the index of the machine it delivers to."""

    @property
    def in_mask(self) -> tuple[int, ...]:
        """Per machine: the bitmask of its input buffers."""

    @property
    def out_mask(self) -> tuple[int, ...]:
        """Per machine: the bitmask of its output buffers."""


_EMPTY: tuple[int, ...] = ()
_FIRST: tuple[int, ...] = (1,)


# Deliverable(c): the positions of buffer c whose message may be received next.
def deliverable(s: State, c: int) -> Sequence[int]:
    """``Deliverable(c) == IF buf[c] = << >> THEN {} ELSE {1}`` (FIFO)."""
    return _FIRST if s.buf[c] else _EMPTY


def any_position(s: State, c: int) -> Sequence[int]:
    """``AnyPosition(c) == 1..Len(buf[c])`` (the non-FIFO mutant)."""
    return range(1, len(s.buf[c]) + 1)


# Enqueue(s, m): the buffer s after application message m is sent into it.
def enqueue(b: tuple[int, ...], m: int) -> tuple[int, ...]:
    """``Enqueue(s, m) == Append(s, m)``."""
    return (*b, m)


def late_enqueue(b: tuple[int, ...], m: int) -> tuple[int, ...]:
    """``LateEnqueue(s, m) == IF s # << >> /\\ s[Len(s)].kind = "red"
    THEN Append(SubSeq(s, 1, Len(s) - 1), m) \\o << s[Len(s)] >> ELSE Append(s, m)``."""
    if b and b[-1] < 0:
        return (*b[:-1], m, b[-1])
    return (*b, m)


# RedLettersOut(p, k): the buffers p sends red letters of k over when it turns red.
def red_letters_out(cfg: Wiring, s: State, p: int, k: int) -> int:
    """``RedLettersOut(p, k) == Out(p)``."""
    return cfg.out_mask[p]


def starter_only(cfg: Wiring, s: State, p: int, k: int) -> int:
    """``StarterOnly(p, k) == IF red[k] = {} THEN Out(p) ELSE {}``."""
    return cfg.out_mask[p] if s.red[k] == 0 else 0


# Recording(k, p, c): does red machine p record what it receives from c for k?
def recording(cfg: Wiring, s: State, k: int, p: int, c: int) -> bool:
    """``Recording(k, p, c) == p \\in red[k] /\\ c \\notin redBuf[k]``."""
    return bool(s.red[k] >> p & 1) and not s.red_buf[k] >> c & 1


def no_recording(cfg: Wiring, s: State, k: int, p: int, c: int) -> bool:
    """``NoRecording(k, p, c) == FALSE``."""
    return False


def stop_at_first(cfg: Wiring, s: State, k: int, p: int, c: int) -> bool:
    """``StopAtFirst(k, p, c) == p \\in red[k] /\\ In(p) \\cap redBuf[k] = {}``."""
    return bool(s.red[k] >> p & 1) and not (cfg.in_mask[p] & s.red_buf[k])


# TurnsRed(c, k): the snapshots in which c turns red on receipt of a red letter of k.
def turns_red(cfg: Wiring, s: State, c: int, k: int) -> int:
    """``TurnsRed(c, k) == {k}``."""
    return 1 << k


def turns_red_in_all(cfg: Wiring, s: State, c: int, k: int) -> int:
    """``TurnsRedInAll(c, k) == {k} \\cup {j \\in Snap : Dst(c) \\in red[j]}``."""
    dst = cfg.chan_dst[c]
    out = 1 << k
    for j, m in enumerate(s.red):
        if m >> dst & 1:
            out |= 1 << j
    return out


@dataclass(frozen=True)
class Steps:
    """The overridable steps a model uses."""

    deliverable: Callable[[State, int], Sequence[int]]
    enqueue: Callable[[tuple[int, ...], int], tuple[int, ...]]
    red_letters_out: Callable[[Wiring, State, int, int], int]
    recording: Callable[[Wiring, State, int, int, int], bool]
    turns_red: Callable[[Wiring, State, int, int], int]
    names: Mapping[str, str]  #: operator -> the TLA+ definition mirrored


#: operator -> TLA+ definition name -> Python mirror
STEP_FUNCTIONS: Mapping[str, Mapping[str, object]] = {
    "Deliverable": {"Deliverable": deliverable, "AnyPosition": any_position},
    "Enqueue": {"Enqueue": enqueue, "LateEnqueue": late_enqueue},
    "RedLettersOut": {"RedLettersOut": red_letters_out, "StarterOnly": starter_only},
    "Recording": {
        "Recording": recording,
        "NoRecording": no_recording,
        "StopAtFirst": stop_at_first,
    },
    "TurnsRed": {"TurnsRed": turns_red, "TurnsRedInAll": turns_red_in_all},
}


def make_steps(overrides: Mapping[str, str]) -> Steps:
    """The steps for ``overrides`` (operator -> definition; missing ones: the spec's)."""
    chosen: dict[str, object] = {}
    for op, table in STEP_FUNCTIONS.items():
        name = overrides.get(op, op)
        if name not in table:
            raise InputError(
                f"unknown override {op} <- {name}: the Python model mirrors " + ", ".join(table),
                code="RL-INPUT-MODEL",
            )
        chosen[op] = table[name]
    return Steps(
        deliverable=chosen["Deliverable"],  # type: ignore[arg-type]
        enqueue=chosen["Enqueue"],  # type: ignore[arg-type]
        red_letters_out=chosen["RedLettersOut"],  # type: ignore[arg-type]
        recording=chosen["Recording"],  # type: ignore[arg-type]
        turns_red=chosen["TurnsRed"],  # type: ignore[arg-type]
        names={op: overrides.get(op, op) for op in STEP_FUNCTIONS},
    )
