"""``python -m redletter`` is the ``redletter`` command."""

from redletter.cli import main

raise SystemExit(main())
