"""Nodes under test shipped with the kit: the reference nodes (Python, Go)."""
