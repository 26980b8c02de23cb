"""Adapters: how the kit runs real implementations, one per kind of program.

Protocol nodes speak the kit's JSON-lines protocol (:mod:`redletter.conformance.process`
runs them, :mod:`redletter.conformance.judges.drive` judges them).  The adapters here
run programs written for something else and end in the same judges, verdicts and
reports:

- COS 418 Go packages (:mod:`.cos418`, one function: ``check_package``): the package
  is copied to a temporary directory, the driver of ``cos418/driver/`` is added as a
  ``_test.go`` file, built once with the project's Go toolchain and run per scenario
  and seed exactly as the course's own harness runs it (either dialect of the
  assignment); each run is judged on what the package cannot fake and, where its log
  reads consistently, against the delivery order that happened
  (:mod:`redletter.conformance.judges.run`);
- programs that schedule themselves (:mod:`.instrument`): a recorder library, in
  Python and in Go, that writes the kit's NDJSON event log for
  :mod:`redletter.conformance.judges.log`;
- Apache Flink (:mod:`.flink`, an optional extra): a keyed-count job run on the
  real engine in its own environment, failed and restored from its checkpoints
  in the three modes of seed 002, each key's final state judged against the
  records its source emitted.
"""
