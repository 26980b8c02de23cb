"""The token app over TCP: one OS process per node (asyncio), Chandy–Lamport
snapshots started concurrently by several nodes, one event log per node written
with the recorder; three bugs a flag each switches on.

- :mod:`.node`: one node (the process);
- :mod:`.launcher`: starts the processes, runs, snapshots, stops; ``python -m
  redletter.conformance.adapters.instrument.examples.tcp --help``.
"""
