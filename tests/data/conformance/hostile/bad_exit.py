"""Hostile node: a correct node (the reference) until its input ends, then it exits
with the status given as its first argument, or kills itself with SIGSEGV ("segv")."""

import os
import signal
import sys

from redletter.conformance.node import NodeHost
from redletter.conformance.nodes.reference import ReferenceNode

NodeHost(ReferenceNode).serve(sys.stdin, sys.stdout, sys.stderr)
print("bad_exit: leaving badly", file=sys.stderr, flush=True)
if sys.argv[1] == "segv":
    signal.signal(signal.SIGSEGV, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGSEGV)
sys.exit(int(sys.argv[1]))
