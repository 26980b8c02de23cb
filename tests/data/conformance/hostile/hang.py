"""Hostile node: reads its requests and never answers."""

import sys
import time

print("hang: reading and never answering", file=sys.stderr, flush=True)
sys.stdin.readline()
time.sleep(3600)
