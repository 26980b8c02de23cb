"""Hostile node: the reference node, but it writes one more line when its input ends."""

import sys

from redletter.conformance.node import NodeHost
from redletter.conformance.nodes.reference import ReferenceNode

code = NodeHost(ReferenceNode).serve(sys.stdin, sys.stdout, sys.stderr)
print('{"src": "p1", "dest": "harness", "body": {"type": "init_ok", "in_reply_to": 1}}')
sys.stdout.flush()
sys.exit(code)
