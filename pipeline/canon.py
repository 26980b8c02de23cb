r"""Canonical encoding of states, and a fast memoised parser for TLC's DOT labels.

:func:`canon_state` is the one encoding every engine's states are compared by:
``/\ var = value`` lines, variables sorted by name, values printed by
:func:`redletter.python_model.values.print_value` (canonical order of sets, records and
function domains; one line per value).  It is valid TLA+ for
:func:`redletter.python_model.values.parse_state`, so mismatch reports print it as is.

:class:`LabelCanon` turns a DOT label into that encoding about an order of magnitude
faster than :func:`parse_state` on the snapshot spec's graphs: a label is
``/\ var = text`` blocks, and the same block text recurs across many states (most
variables change rarely), so each distinct block is parsed once and its printed
value remembered (the memo is bounded; it is cleared when full).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from redletter.errors import InputError
from redletter.python_model.dot import unescape_label
from redletter.python_model.values import Value, parse_state, print_value

__all__ = ["LabelCanon", "canon_state", "fp64"]

_SEP = "\n/\\ "


def canon_state(state: Mapping[str, Value]) -> str:
    """The canonical TLA+ text of a state (variables sorted by name)."""
    return "\n".join(f"/\\ {name} = {print_value(state[name])}" for name in sorted(state))


def fp64(canon: str) -> int:
    """A stable signed 64-bit id for a canonical state text (BLAKE2b, first 8 bytes)."""
    digest = hashlib.blake2b(canon.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


class LabelCanon:
    """Memoised ``raw DOT label -> (canon, {var: printed value})``.

    Not thread-safe; make one per partition / worker.  ``max_entries`` bounds the
    memo (blocks of distinct text); ``hits``/``misses`` count block look-ups.
    """

    def __init__(self, max_entries: int = 200_000) -> None:
        self._memo: dict[str, tuple[str, str]] = {}
        self._max = max_entries
        self.hits = 0
        self.misses = 0

    def _block(self, block: str, path: str | None, line: int | None) -> tuple[str, str]:
        found = self._memo.get(block)
        if found is not None:
            self.hits += 1
            return found
        self.misses += 1
        parsed = parse_state("/\\ " + block, path=path, line=line)
        ((name, value),) = parsed.items()
        result = (name, print_value(value))
        if len(self._memo) >= self._max:
            self._memo.clear()
        self._memo[block] = result
        return result

    def variables(
        self, raw_label: str, *, path: str | None = None, line: int | None = None
    ) -> dict[str, str]:
        """The printed value of each variable of a raw (escaped) DOT label."""
        text = unescape_label(raw_label, path=path, line=line).strip()
        if not text.startswith("/\\ "):  # one variable (``x = 1``) or none
            state = parse_state(text, path=path, line=line)
            return {k: print_value(v) for k, v in state.items()}
        out: dict[str, str] = {}
        for block in text[3:].split(_SEP):
            name, printed = self._block(block, path, line)
            if name in out:
                raise InputError(
                    f"variable {name} given twice in a state label",
                    path=path,
                    line=line,
                    code="RL-INPUT-DOT",
                )
            out[name] = printed
        return out

    def canon(self, raw_label: str, *, path: str | None = None, line: int | None = None) -> str:
        """The canonical text (:func:`canon_state`) of a raw DOT label."""
        return canon_of_printed(self.variables(raw_label, path=path, line=line))


def canon_of_printed(printed: Mapping[str, str]) -> str:
    """:func:`canon_state` from already printed values."""
    return "\n".join(f"/\\ {name} = {printed[name]}" for name in sorted(printed))
