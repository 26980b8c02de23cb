"""Hostile node: ignores SIGTERM and never answers."""

import signal
import sys
import time

signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("ignore_term: SIGTERM ignored", file=sys.stderr, flush=True)
while True:
    time.sleep(1)
