"""Not hostile: prints the network interfaces it can see on stderr, then exits 0."""

import socket
import sys

names = sorted(name for _, name in socket.if_nameindex())
print("interfaces: " + " ".join(names), file=sys.stderr, flush=True)
