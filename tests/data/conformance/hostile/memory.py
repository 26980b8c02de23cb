"""Hostile node: allocates memory without bound."""

import sys

print("memory: allocating without bound", file=sys.stderr, flush=True)
hoard = []
while True:
    hoard.append(bytearray(10_000_000))
