"""``python -m redletter`` is the ``redletter`` command."""

from redletter.cli import entry

entry()
