"""Instrumentation for programs that schedule themselves: write the kit's event log.

- :mod:`.recorder` (standard library only; copy the file into your project):
  :class:`~.recorder.Recorder`, one per node, writes the NDJSON event log
  (:mod:`redletter.conformance.eventlog`) with vector clocks, thread-safe, one
  flushed line per write; :func:`~.recorder.attach` / :func:`~.recorder.detach`
  carry the clock on a JSON message.
- ``go/``: the same as a Go package (standard library only, its own go.mod).
- :mod:`.check` (the kit's side): the logs' integrity (a lost or cut line, a
  vector clock that contradicts the logs, a file order that contradicts the
  clocks) as an :class:`~redletter.errors.InputError` naming the file and line,
  before the log judge gives a verdict.
- ``examples/tcp/``: a real multi-process implementation (one OS process per
  node, TCP on 127.0.0.1, asyncio), instrumented with the recorder, with three
  bugs that can be switched on.

See ``docs/instrument.md``.
"""

from redletter.conformance.adapters.instrument.recorder import (
    CLOCK_KEY,
    Clock,
    Recorder,
    attach,
    detach,
)

__all__ = ["CLOCK_KEY", "Clock", "Recorder", "attach", "detach"]
