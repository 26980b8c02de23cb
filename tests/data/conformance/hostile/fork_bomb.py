"""Hostile node: forks sleeping children until it cannot, then behaves like the
reference node."""

import os
import sys
import time

from redletter.conformance.node import serve
from redletter.conformance.nodes.reference import ReferenceNode

children = 0
while children < 100_000:
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(3600)
        os._exit(0)
    children += 1
print(f"fork_bomb: {children} children", file=sys.stderr, flush=True)
serve(ReferenceNode)
