"""Hostile node: burns CPU for ever without answering."""

import sys

print("cpu_spin: spinning", file=sys.stderr, flush=True)
n = 0
while True:
    n += 1
