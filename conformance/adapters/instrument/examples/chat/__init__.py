"""A chat room over TCP with asyncio, with Chandy–Lamport snapshots: :mod:`.chat`.

``python -m redletter.conformance.adapters.instrument.examples.chat --help``.
"""
