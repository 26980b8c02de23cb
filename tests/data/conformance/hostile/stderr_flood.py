"""Hostile node: writes 64 MiB on stderr at start, then behaves like the reference node."""

import sys

from redletter.conformance.node import serve
from redletter.conformance.nodes.reference import ReferenceNode

block = b"flood " * 10923 + b"\n"  # 64 KiB a line
for _ in range(1024):
    sys.stderr.buffer.write(block)
sys.stderr.buffer.flush()
serve(ReferenceNode)
