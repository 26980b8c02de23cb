"""Three ledgers over TCP with threads, whose transfers have two halves (a debit
and a write, in either order), and audits (Chandy–Lamport snapshots): :mod:`.ledger`.

``python -m redletter.conformance.adapters.instrument.examples.ledger --help``.
"""
