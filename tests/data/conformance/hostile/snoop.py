"""Hostile node: tries to read what a node must never see; answers init with an
error naming what it could read, else behaves like the reference node.

Arguments: paths it must not be able to read (the project, the store, ...), each
written @PATH (so the harness does not take them for the node's own files)."""

import os
import sys

from redletter.conformance.node import serve
from redletter.conformance.nodes.reference import ReferenceNode

read = []
for path in ["/etc/shadow", "/root/.bashrc", *(a[1:] for a in sys.argv[1:] if a[:1] == "@")]:
    try:
        if os.path.isdir(path):
            # A directory the sandbox exposes nothing of shows nothing (the
            # directories leading to exposed files show only those).
            names = [n for n in os.listdir(path) if n not in (".pyenv", ".venv")]
            if names:
                read.append(f"{path} ({len(names)} entries: {', '.join(sorted(names)[:5])})")
        else:
            with open(path, "rb") as f:
                f.read(1)
            read.append(path)
    except OSError:
        pass
# The host's processes: a node in its own PID namespace sees only its own.
procs = [n for n in os.listdir("/proc") if n.isdigit()]
if len(procs) > 8:
    read.append(f"/proc ({len(procs)} processes)")
print("snoop: read " + (", ".join(read) if read else "nothing"), file=sys.stderr, flush=True)


if read:
    sys.exit(42)
serve(ReferenceNode)
