"""Hostile node: records its state for snapshot 99, which nobody started."""

from redletter.conformance.node import serve
from redletter.conformance.nodes.reference import ReferenceNode


class UnknownSnapshot(ReferenceNode):
    def on_start_snapshot(self, k: int) -> None:
        super().on_start_snapshot(k)
        self.record_state(99)


serve(UnknownSnapshot)
