"""redletter: a formal model and conformance kit for the Chandy–Lamport snapshot.

The name is Dijkstra's word for the marker (EWD 864).
"""

__version__ = "0.1.0"
