"""Hostile node: floods stdout, with one endless line ("line") or blank lines ("lines")."""

import sys

mode = sys.argv[1]
chunk = b"x" * 65536 if mode == "line" else b"\n" * 65536
print(f"flood: {mode}", file=sys.stderr, flush=True)
while True:
    sys.stdout.buffer.write(chunk)
    sys.stdout.buffer.flush()
