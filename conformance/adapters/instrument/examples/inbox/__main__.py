"""``python -m redletter.conformance.adapters.instrument.examples.inbox``: run the chat."""

from redletter.conformance.adapters.instrument.examples.inbox.inbox import main

raise SystemExit(main())
