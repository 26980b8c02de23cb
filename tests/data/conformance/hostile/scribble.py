"""Hostile node: tries to write where a node must never write (outside its own
/tmp, into the run's folder found through /proc/self/fd/2, the places given as
arguments, each written @PATH); answers init with an error naming what it could
write, else behaves like the reference node."""

import os
import sys

from redletter.conformance.node import serve
from redletter.conformance.nodes.reference import ReferenceNode

wrote = []
targets = [a[1:] for a in sys.argv[1:] if a[:1] == "@"]
try:
    stderr_path = os.readlink("/proc/self/fd/2")
    if stderr_path.startswith("/"):
        targets.append(os.path.join(os.path.dirname(stderr_path), "results.json"))
except OSError:
    pass
for path in targets:
    target = os.path.join(path, "planted-by-node") if os.path.isdir(path) else path
    try:
        with open(target, "a") as f:
            f.write("planted\n")
        wrote.append(target)
    except OSError:
        pass
print("scribble: wrote " + (", ".join(wrote) if wrote else "nothing"), file=sys.stderr, flush=True)


if wrote:
    sys.exit(42)
serve(ReferenceNode)
