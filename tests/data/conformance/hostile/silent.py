"""Hostile node: never reads its input and never answers."""

import sys
import time

print("silent: not listening", file=sys.stderr, flush=True)
time.sleep(3600)
