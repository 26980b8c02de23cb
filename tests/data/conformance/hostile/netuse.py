"""Hostile node: tries to reach the network (a TCP port of the host given as the
first argument, and an outside address); answers init with an error naming what
it reached, else behaves like the reference node."""

import socket
import sys

from redletter.conformance.node import serve
from redletter.conformance.nodes.reference import ReferenceNode

reached = []
for host, port in (("127.0.0.1", int(sys.argv[1])), ("1.1.1.1", 53)):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(1.0)
    try:
        s.connect((host, port))
        reached.append(f"{host}:{port}")
    except OSError as exc:
        print(f"netuse: {host}:{port}: {exc.strerror or exc}", file=sys.stderr, flush=True)
    finally:
        s.close()


if reached:
    sys.exit(42)
serve(ReferenceNode)
