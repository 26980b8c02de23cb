"""Hostile node: answers init with one line of 200 MB."""

import sys

sys.stdin.readline()
print("huge_line: writing 200 MB on one line", file=sys.stderr, flush=True)
chunk = b"7" * (1 << 20)
out = sys.stdout.buffer
try:
    out.write(b'{"src": "p1", "dest": "harness", "body": {"type": "init_ok", "in_reply_to": ')
    for _ in range(200):
        out.write(chunk)
    out.write(b"}}\n")
    out.flush()
except BrokenPipeError:
    pass
