"""Hostile node: prints terminal escapes (clear screen, a fake PASS) and crashes."""

import sys

sys.stdin.readline()
fake = "\x1b[2J\x1b[H\x1b[1;32mPASS\x1b[0m: 1 trace judged, 1 passed\r"
sys.stdout.write(fake + "\n")
sys.stdout.flush()
sys.stderr.write(fake + "\n")
sys.stderr.flush()
sys.exit(9)
