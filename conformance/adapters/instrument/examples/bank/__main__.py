"""``python -m redletter.conformance.adapters.instrument.examples.bank``: run the bank."""

from redletter.conformance.adapters.instrument.examples.bank.bank import main

raise SystemExit(main())
