"""``python -m redletter.conformance.adapters.instrument.examples.tcp``: run the TCP token app."""

from redletter.conformance.adapters.instrument.examples.tcp.launcher import run_main

raise SystemExit(run_main())
