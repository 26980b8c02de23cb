"""The three judges, one per kind of evidence, each returning a
:class:`~redletter.conformance.verdict.Result`:

- :mod:`~redletter.conformance.judges.drive`: drive a node step by step along a trace;
- :mod:`~redletter.conformance.judges.log`: replay an implementation's event log in a model;
- :mod:`~redletter.conformance.judges.runlog`: judge an event log on its own run, no model;
- :mod:`~redletter.conformance.judges.outcome`: find a schedule explaining recorded snapshots.
"""
