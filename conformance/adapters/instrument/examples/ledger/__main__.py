"""``python -m redletter.conformance.adapters.instrument.examples.ledger``: run the ledgers."""

from redletter.conformance.adapters.instrument.examples.ledger.ledger import main

raise SystemExit(main())
