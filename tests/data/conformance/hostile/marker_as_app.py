"""Hostile node: sends an app message -1 where the red letter of snapshot 1 goes
(app v and marker k must never share an encoding)."""

from redletter.conformance import protocol as p
from redletter.conformance.node import serve
from redletter.conformance.nodes.reference import ReferenceNode


class MarkerAsApp(ReferenceNode):
    def send_markers(self, k: int) -> None:
        for to in self.out_to:
            self.send(to, p.AppMsg(-k))


serve(MarkerAsApp)
