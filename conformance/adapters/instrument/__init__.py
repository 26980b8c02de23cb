"""Instrumentation for programs that schedule themselves: write the kit's event log.

- :mod:`.redletter_recorder` (standard library only; copy the file into your
  project; also ``redletter.recorder``; ``.recorder`` is its old name):
  :class:`~.recorder.Recorder`, one per process, writes the NDJSON event log
  (:mod:`redletter.conformance.eventlog`) with vector clocks, from any thread or
  coroutine, never holding its lock across your code; :func:`~.recorder.attach`
  / :func:`~.recorder.detach` carry the clock on a JSON message.
- ``go/``: the same as a Go package (standard library only, its own go.mod).
- ``examples/``: programs instrumented with them, each with bugs a flag
  switches on: ``chat/`` (asyncio over TCP), ``bank/`` (threads over TCP, a
  directed topology), ``goring/`` (Go goroutines and channels), judged without a
  model; ``tcp/`` (the token app, one OS process per node), replayed in a model.

The logs are judged by :mod:`redletter.conformance.judges.runlog` (the run
itself, no model) or :mod:`redletter.conformance.judges.log` (in a model),
after :mod:`redletter.conformance.logcheck` checked their integrity.  See
``docs/instrument.md``.
"""

from redletter.conformance.adapters.instrument.redletter_recorder import (
    CLOCK_KEY,
    Clock,
    Recorder,
    attach,
    decode_clock,
    detach,
    encode_clock,
)

__all__ = ["CLOCK_KEY", "Clock", "Recorder", "attach", "decode_clock", "detach", "encode_clock"]
