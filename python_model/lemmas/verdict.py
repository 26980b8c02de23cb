"""One way's answer on one lemma of one snapshot (shared by the three ways)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PASS", "Verdict"]


@dataclass(frozen=True)
class Verdict:
    """One way's answer for one lemma of one snapshot: ``ok`` and, if not, why."""

    ok: bool
    why: str = ""

    def __str__(self) -> str:
        return "holds" if self.ok else f"fails ({self.why})"


PASS = Verdict(True)
