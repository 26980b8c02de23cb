"""``python -m redletter.conformance.protocol``: print docs/protocol.md."""

from redletter.conformance.protocol.docs import main

main()
