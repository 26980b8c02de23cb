"""Fixed parameters of the symbolic engine: machines, buffers, snapshots, tokens, bounds.

The symbolic engine encodes the transition relation of ``spec/ChandyLamport.tla``
superposed on ``spec/TokenApp.tla`` for one fixed choice of the constants.  The
constants come either from a model's ``MC*.tla`` literal definitions
(:func:`params_from_model`, read with :func:`redletter.python_model.values.parse_value`, the
same source of truth as TLC) or from :func:`complete_graph`.

Two bounds make the encoding finite; both are stated, never hidden:

* ``capacity`` -- the number of message slots of each buffer.  An action that would
  append to a full buffer is disabled.  For the token app no reachable buffer holds
  more than ``Total + |Snap|`` messages (every application message carries at least
  one token; every machine sends at most one red letter per snapshot per buffer), so
  :func:`exact_capacity` makes the bound exact.
* ``record_capacity`` -- the number of slots of each recorded buffer stream.  A
  receipt that would record past it is disabled.  A run of ``n`` steps records at
  most ``n`` messages, so a bound of ``depth`` is exact for bounded model checking.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

from redletter.errors import InputError
from redletter.python_model.values import Bool, Record, Value, parse_value

Chan = tuple[str, str]


_LEGACY: tuple[tuple[str, str], ...] = (
    ("CORRECT", "correct"),
    ("NO_RECORDING", "no-recording"),  # Recording(k, p, c) == FALSE
    ("NON_FIFO", "non-fifo"),  # Deliverable(c) == 1..Len(buf[c])
    ("STOP_AT_FIRST", "stop-at-first"),  # recording ends at p's first red letter
    ("NEVER_FORWARD", "never-forward"),  # only a starter sends red letters
    ("MIXED_SNAPSHOTS", "mixed-snapshots"),  # a red letter turns its buffer red everywhere
)


def _members() -> list[tuple[str, str]]:
    """The encoding's variants: the correct algorithm, then every bug class of the
    registry (python_model/bugs.py) the encoding can run -- the older names first,
    as the symbolic engine's ``--mutant`` has always called them."""
    from redletter.python_model import bugs

    covered = {bugs.get(v).name for _, v in _LEGACY[1:]}
    extra = [
        (b.name.upper().replace("-", "_"), b.name)
        for b in bugs.BUGS.values()
        if b.name not in covered and bugs.runs_in(b, "z3")[0]
    ]
    return [*_LEGACY, *extra]


if TYPE_CHECKING:

    class Mutant(Enum):
        """The encoding's variants: the correct algorithm and the bug classes of the
        registry it can run (at run time every such class is a member)."""

        CORRECT = "correct"
        NO_RECORDING = "no-recording"
        NON_FIFO = "non-fifo"
        STOP_AT_FIRST = "stop-at-first"
        NEVER_FORWARD = "never-forward"
        MIXED_SNAPSHOTS = "mixed-snapshots"

else:

    class _Variants(Enum):
        """A variant is looked up by its value or by any name the registry has for
        its bug class (``Mutant("stop-at-first-red-letter")``)."""

        @classmethod
        def _missing_(cls, value: object) -> object:
            from redletter.errors import InputError
            from redletter.python_model import bugs

            try:
                wanted = bugs.get(str(value)).name
            except InputError:
                return None
            for m in cls:
                if m.value != "correct" and bugs.get(m.value).name == wanted:
                    return m
            return None

    Mutant = _Variants("Mutant", _members(), module=__name__, qualname="Mutant")
    Mutant.__doc__ = (
        "The encoding's variants: the correct algorithm, and every bug class of the "
        "registry (python_model/bugs.py) whose step the encoding lets vary; each "
        "member's value is a name the registry knows."
    )


@dataclass(frozen=True)
class SymParams:
    """The constants of one model, plus the encoding's bounds and variant."""

    procs: tuple[str, ...]
    chans: tuple[Chan, ...]
    tokens: tuple[int, ...]  #: tokens[i]: initial tokens of procs[i]
    snaps: tuple[int, ...]
    starters: tuple[frozenset[str], ...]  #: starters[i]: Starters[snaps[i]]
    sequential: bool = False
    capacity: int = 4
    record_capacity: int = 4
    mutant: Mutant = Mutant.CORRECT

    def __post_init__(self) -> None:
        if len(self.procs) < 2 or len(set(self.procs)) != len(self.procs):
            raise InputError("the model needs at least two distinct machines")
        if len(self.tokens) != len(self.procs) or any(t < 0 for t in self.tokens):
            raise InputError("tokens: expected one non-negative count per machine")
        for src, dst in self.chans:
            if src not in self.procs or dst not in self.procs or src == dst:
                raise InputError(f"buffer <<{src}, {dst}>> does not join two distinct machines")
        if (
            not self.snaps
            or any(k < 1 for k in self.snaps)
            or len(self.starters) != len(self.snaps)
        ):
            raise InputError("snapshots: expected ids >= 1, each with a set of starters")
        if self.capacity < 1 or self.record_capacity < 0:
            raise InputError("capacity must be >= 1 and record_capacity >= 0")
        if not _strongly_connected(self.procs, self.chans):
            raise InputError("the buffers do not connect the machines strongly")

    @property
    def total(self) -> int:
        """Total: the tokens in the network."""
        return sum(self.tokens)

    def proc_index(self, p: str) -> int:
        return self.procs.index(p)

    def chan_index(self, c: Chan) -> int:
        return self.chans.index(c)

    def snap_index(self, k: int) -> int:
        return self.snaps.index(k)

    def out_chans(self, p: str) -> tuple[int, ...]:
        """Indices of Out(p)."""
        return tuple(i for i, c in enumerate(self.chans) if c[0] == p)

    def in_chans(self, p: str) -> tuple[int, ...]:
        """Indices of In(p)."""
        return tuple(i for i, c in enumerate(self.chans) if c[1] == p)

    def describe(self) -> str:
        return (
            f"{len(self.procs)} machines, {len(self.chans)} buffers, snapshots "
            f"{list(self.snaps)}, tokens {dict(zip(self.procs, self.tokens, strict=True))}, "
            f"buffer capacity {self.capacity}, recorded-stream capacity "
            f"{self.record_capacity}, variant {self.mutant.value}"
        )


def exact_capacity(procs_tokens: Sequence[int], n_snaps: int) -> int:
    """The buffer capacity no reachable token-app state exceeds: Total + |Snap|."""
    return max(1, sum(procs_tokens) + n_snaps)


def _strongly_connected(procs: Sequence[str], chans: Iterable[Chan]) -> bool:
    succ: dict[str, set[str]] = {p: set() for p in procs}
    for s, d in chans:
        succ[s].add(d)
    for start in procs:
        seen = {start}
        todo = [start]
        while todo:
            for nxt in succ[todo.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        if len(seen) != len(procs):
            return False
    return True


def complete_graph(
    n: int,
    *,
    snapshots: int = 1,
    tokens: Sequence[int] | None = None,
    starters: Mapping[int, Iterable[str]] | None = None,
    sequential: bool = False,
    capacity: int | None = None,
    record_capacity: int = 4,
    mutant: Mutant = Mutant.CORRECT,
) -> SymParams:
    """Machines p1..pn, every ordered pair a buffer, snapshots 1..snapshots.

    Defaults: one token per machine; every machine may start every snapshot;
    buffer capacity :func:`exact_capacity`.
    """
    if n < 2:
        raise InputError(f"--procs: expected at least 2 machines, got {n}")
    if snapshots < 1:
        raise InputError(f"--snapshots: expected at least 1 snapshot, got {snapshots}")
    procs = tuple(f"p{i}" for i in range(1, n + 1))
    chans = tuple((a, b) for a in procs for b in procs if a != b)
    toks = tuple(tokens) if tokens is not None else tuple(1 for _ in procs)
    snaps = tuple(range(1, snapshots + 1))
    st = tuple(
        frozenset(starters[k]) if starters is not None and k in starters else frozenset(procs)
        for k in snaps
    )
    cap = capacity if capacity is not None else exact_capacity(toks, len(snaps))
    return SymParams(procs, chans, toks, snaps, st, sequential, cap, record_capacity, mutant)


_DEF_RE = re.compile(r"^(MC[A-Za-z0-9_]+)\s*==\s*(.*?)(?=^\S|\Z)", re.M | re.S)


def _definitions(text: str) -> dict[str, str]:
    """The ``MCName == <literal>`` definitions of an MC*.tla module."""
    body = text.split("=" * 10)[0]
    out: dict[str, str] = {}
    for m in _DEF_RE.finditer(body):
        out[m.group(1)] = " ".join(m.group(2).split())
    return out


def _parse(defs: Mapping[str, str], name: str, path: str) -> Value:
    if name not in defs:
        raise InputError(f"expected a definition {name} == ...", path=path)
    text = defs[name]
    if ":>" in text and not text.startswith("("):
        text = f"({text})"
    text = re.sub(r"\)\s*@@\s*\(", " @@ ", text)
    return parse_value(text, path=path)


def params_from_model(
    model_file: Path,
    *,
    capacity: int | None = None,
    record_capacity: int = 4,
    mutant: Mutant = Mutant.CORRECT,
) -> SymParams:
    """The constants of a token-app model, read from its ``MC*.tla`` literal definitions."""
    path = str(model_file)
    try:
        text = model_file.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read the model: {exc.strerror}", path=path) from exc
    defs = _definitions(text)
    proc_v = _parse(defs, "MCProc", path)
    chan_v = _parse(defs, "MCChan", path)
    tok_v = _parse(defs, "MCTokens", path)
    snap_v = _parse(defs, "MCSnap", path)
    start_v = _parse(defs, "MCStarters", path)
    seq_v = _parse(defs, "MCSequential", path)
    if not isinstance(proc_v, frozenset) or not all(isinstance(p, str) for p in proc_v):
        raise InputError("MCProc: expected a set of strings", path=path)
    procs = tuple(sorted(str(p) for p in proc_v))
    chans: list[Chan] = []
    if not isinstance(chan_v, frozenset):
        raise InputError("MCChan: expected a set of pairs", path=path)
    for c in chan_v:
        if not (isinstance(c, tuple) and len(c) == 2 and all(isinstance(x, str) for x in c)):
            raise InputError("MCChan: expected a set of <<src, dst>> pairs", path=path)
        chans.append((str(c[0]), str(c[1])))
    if not isinstance(tok_v, Record):
        raise InputError("MCTokens: expected a record [p |-> n, ...]", path=path)
    tokens = tuple(v if isinstance(v := tok_v[p], int) else 0 for p in procs)
    if not isinstance(snap_v, frozenset) or not all(type(k) is int for k in snap_v):
        raise InputError("MCSnap: expected a set of integers", path=path)
    snaps = tuple(sorted(int(k) for k in snap_v if type(k) is int))
    starters: list[frozenset[str]] = []
    for k in snaps:
        try:
            entry = start_v[k - 1] if isinstance(start_v, tuple) else start_v[k]  # type: ignore[index]
        except (KeyError, IndexError, TypeError) as exc:
            raise InputError(f"MCStarters: no starters for snapshot {k}", path=path) from exc
        if not isinstance(entry, frozenset):
            raise InputError("MCStarters: expected sets of machines", path=path)
        starters.append(frozenset(str(p) for p in entry))
    sequential = isinstance(seq_v, Bool) and seq_v.value
    cap = capacity if capacity is not None else exact_capacity(tokens, len(snaps))
    return SymParams(
        procs,
        tuple(sorted(chans)),
        tokens,
        snaps,
        tuple(starters),
        sequential,
        cap,
        record_capacity,
        mutant,
    )
