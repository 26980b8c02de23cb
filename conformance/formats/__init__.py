"""Other people's formats and implementations the kit reads and runs:

- :mod:`~redletter.conformance.formats.cos418`: the Princeton COS 418 snapshot
  assignment's ``.top``, ``.events`` and ``.snap`` files, and its simulator;
- :mod:`~redletter.conformance.formats.adhoc`: an adapter running adhoccomputing's
  Chandy–Lamport component on COS 418 scenarios.
"""
