"""Four bank branches over TCP with threads, a directed topology, and audits
(Chandy–Lamport snapshots): :mod:`.bank`.

``python -m redletter.conformance.adapters.instrument.examples.bank --help``.
"""
