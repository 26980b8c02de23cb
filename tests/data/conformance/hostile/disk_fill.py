"""Hostile node: fills its working directory until the disk is full, then behaves
like the reference node."""

import contextlib
import os
import sys

from redletter.conformance.node import serve
from redletter.conformance.nodes.reference import ReferenceNode

written = 0
try:
    with open("filler", "wb") as f:
        while written < (1 << 34):
            f.write(b"\0" * (1 << 20))
            f.flush()
            written += 1 << 20
except OSError as exc:
    print(f"disk_fill: full after {written >> 20} MiB: {exc.strerror}", file=sys.stderr, flush=True)
with contextlib.suppress(OSError):
    os.remove("filler")
serve(ReferenceNode)
