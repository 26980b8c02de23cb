"""redletter: a formal model and conformance kit for the Chandy–Lamport snapshot.

The name is Dijkstra's word for the marker (EWD 864).
"""

from redletter.version import __version__

__all__ = ["__version__"]
