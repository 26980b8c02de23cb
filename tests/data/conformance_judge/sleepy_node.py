"""A node for the judge's tests that hangs when asked to start a snapshot."""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from redletter.conformance.node import serve
from redletter.conformance.nodes.reference import ReferenceNode


class Sleepy(ReferenceNode):
    def on_start_snapshot(self, k: int) -> None:
        time.sleep(60)


if __name__ == "__main__":
    serve(Sleepy)
