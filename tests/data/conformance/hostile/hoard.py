"""Hostile node: holds the number of MiB given as its first argument, then behaves
like the reference node (two of them break a run's memory limit together)."""

import sys

from redletter.conformance.node import serve
from redletter.conformance.nodes.reference import ReferenceNode

held = bytearray(int(sys.argv[1]) << 20)
for i in range(0, len(held), 4096):
    held[i] = 1
print(f"hoard: holding {sys.argv[1]} MiB", file=sys.stderr, flush=True)
serve(ReferenceNode)
