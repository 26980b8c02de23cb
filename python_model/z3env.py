"""z3, loaded with the kit's settings: every module of the kit imports it from here.

z3 installs a SIGINT handler of its own for the length of every check, even one
running in a worker thread, and answers ``unknown`` instead of letting the
interrupt through: the kit's own handler never runs, and a Ctrl-C is lost (the
command goes on).  ``ctrl_c=false`` turns that off, so a Ctrl-C always reaches the
kit, which stops what runs (a check in a worker thread is abandoned).
"""

from __future__ import annotations

import z3

z3.set_param("ctrl_c", False)

__all__ = ["z3"]
