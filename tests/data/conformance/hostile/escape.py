"""Hostile node: leaves children behind that escape its process group (setsid and a
double fork), busy for ever; then behaves like the reference node."""

import os
import sys
import time

from redletter.conformance.node import serve
from redletter.conformance.nodes.reference import ReferenceNode

for _ in range(3):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            while True:
                time.sleep(0.05)
        os._exit(0)
print("escape: three grandchildren left in their own sessions", file=sys.stderr, flush=True)
serve(ReferenceNode)
