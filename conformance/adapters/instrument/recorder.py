"""The recorder's old name: it is :mod:`.redletter_recorder` now (a name no program
of yours uses, for when you copy the file).  Importing this module still works."""

from redletter.conformance.adapters.instrument.redletter_recorder import *  # noqa: F403
from redletter.conformance.adapters.instrument.redletter_recorder import __all__ as __all__
