"""Hostile node: answers init with a line that is not JSON."""

import sys

print("garbage: about to answer", file=sys.stderr, flush=True)
sys.stdin.readline()
print("hello, world", flush=True)
sys.stdin.readline()
