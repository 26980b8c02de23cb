"""The recorder of event logs, for a program that runs the kit installed:
``from redletter.recorder import Recorder, attach, detach``.

It is the one-file module ``conformance/adapters/instrument/redletter_recorder.py``
(standard library only: copy it into a project that does not install the kit);
docs/instrument.md says where each call goes.
"""

from redletter.conformance.adapters.instrument import *  # noqa: F403 (its names, as they are)
from redletter.conformance.adapters.instrument import __all__ as __all__
