"""``python -m redletter.conformance.adapters.instrument.examples.chat``: run the chat."""

from redletter.conformance.adapters.instrument.examples.chat.chat import main

raise SystemExit(main())
