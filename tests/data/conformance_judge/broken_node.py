"""A broken node for the judge's tests: it never records channel messages."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from redletter.conformance.node import serve
from redletter.conformance.nodes.reference import ReferenceNode


class NeverRecordsMessages(ReferenceNode):
    """Turns red and forwards red letters correctly, but records no channel state."""

    def record_message(self, k: int, frm: str, payload: int) -> None:
        return None


if __name__ == "__main__":
    serve(NeverRecordsMessages)
