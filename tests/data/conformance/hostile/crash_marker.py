"""Hostile node: the reference node, until its first red letter: then it exits (status 7)."""

import os
import sys

from redletter.conformance.node import serve
from redletter.conformance.nodes.reference import ReferenceNode


class CrashOnMarker(ReferenceNode):
    def on_marker(self, frm: str, k: int) -> None:
        print(f"crash_marker: a red letter of {k} from {frm}: exiting", file=sys.stderr, flush=True)
        os._exit(7)


serve(CrashOnMarker)
