"""A stop the user asked for (Ctrl-C, SIGTERM), kept where every layer can see it.

The command room's signal handler (:func:`redletter.cli.main`) records the signal
here with :func:`request` and raises the interruption (KeyboardInterrupt, or
:class:`Terminated` for SIGTERM) in the main thread, wherever it is.  That alone
does not always stop a command: Python drops an exception raised inside a
finalizer -- a ``__del__`` method or a weakref callback, such as z3's
``AstRef.__del__`` (run thousands of times a second while z3 solves),
``subprocess.Popen.__del__`` and threading's bookkeeping when a node process is
let go -- with "Exception ignored in ..." on stderr, and goes on.  An
interruption that lands there is lost, and ``conform run`` went on judging its
hundreds of traces.  So the loops that run long (judging traces, waiting for a
node's reply or for its sandbox to start, making a sandbox, generating traces,
shrinking) call :func:`check`, which raises the interruption again once a stop
was asked for.

The flag is a plain list, not a :class:`threading.Event`: the handler runs in the
main thread between any two bytecodes, also while that thread holds a lock, so
it must take none.
"""

from __future__ import annotations

import signal
from typing import Final

__all__ = [
    "Terminated",
    "check",
    "clear",
    "interruption",
    "request",
    "requested",
    "signal_number",
]


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the command runs, so it stops as on Ctrl-C: the context
    managers on the way out kill its nodes at once and remove their sandboxes."""


#: The signals that asked this process to stop (SIGINT, SIGTERM), in order.
_SIGNALS: Final[list[int]] = []


def request(signum: int) -> None:
    """Record that ``signum`` asked the command to stop (the signal handler's part)."""
    _SIGNALS.append(signum)


def requested() -> bool:
    """Whether a stop was asked for since :func:`clear`."""
    return bool(_SIGNALS)


def signal_number() -> int | None:
    """The signal that first asked to stop, or None."""
    return _SIGNALS[0] if _SIGNALS else None


def clear() -> None:
    """Forget the stop (a command starts, or has ended and said why it stopped)."""
    _SIGNALS.clear()


def interruption() -> KeyboardInterrupt:
    """The exception that stops the command: :class:`Terminated` after SIGTERM, else
    KeyboardInterrupt."""
    return Terminated() if signal_number() == signal.SIGTERM else KeyboardInterrupt()


def check() -> None:
    """Raise the interruption if a stop was asked for: a long loop calls this at each
    turn, so a Ctrl-C whose KeyboardInterrupt was lost still stops it."""
    if _SIGNALS:
        raise interruption()
