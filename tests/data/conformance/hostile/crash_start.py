"""Hostile node: exits with status 3 at once, before reading anything."""

import sys

print("crash_start: giving up at once", file=sys.stderr, flush=True)
sys.exit(3)
