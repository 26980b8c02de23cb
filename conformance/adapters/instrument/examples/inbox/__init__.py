"""A chat over TCP with asyncio whose lines are read now and shown (applied) later,
and its Chandy–Lamport snapshots: :mod:`.inbox`.

``python -m redletter.conformance.adapters.instrument.examples.inbox --help``.
"""
