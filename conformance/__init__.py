"""The conformance harness: judge an implementation of the snapshot algorithm
against the model (imported as ``redletter.conformance``).

- :mod:`.verdict`: the one :class:`~.verdict.Verdict` (pass / fail / unknown) and the
  one :class:`~.verdict.Result` protocol every judge returns, with its
  :class:`~.verdict.Divergence`;
- :mod:`.judges`: the drive judge (a node driven along a trace), the log judge (an
  event log replayed in the model) and the outcome judge (recorded snapshots
  explained by some schedule);
- :mod:`.protocol`: the messages between the harness and a node, their schemas, codec
  and document; :mod:`.net`, :mod:`.driver`, :mod:`.process` and :mod:`.node` run nodes
  over it (in process or as child processes); :mod:`.nodes`: the reference and mutant
  nodes; :mod:`.gonode`: the Go reference node;
- :mod:`.traces`: schedules generated from the model, as ITF files; :mod:`.shrink`:
  a failing trace made minimal; :mod:`.report`: a run's folder and report;
- :mod:`.eventlog`: the NDJSON event-log format; :mod:`.walks`: seeded walks and the
  event logs driven runs write (for tests, benchmarks and the mutant zoo);
- :mod:`.formats`: other people's formats (COS 418) and implementations (adhoccomputing);
- :mod:`.pytest_plugin`: one pytest test per trace, for implementers' CI.
"""
