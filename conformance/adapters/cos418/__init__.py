"""Judge a package written for Princeton's COS 418 snapshot assignment, as it is.

The one entry point is :func:`check_package` (the campaign's one home, see
:mod:`.check`); the modules, in the order data flows through them:

- :mod:`.package`: read the folder (its dialect of the assignment, its own tests);
- :mod:`.workspace`: copy it, add the driver (``driver/``), build, run sandboxed;
- :mod:`.judge`: the verdict on one run and the evidence it rests on;
- :mod:`.campaign`: the scenarios, running them, shrinking a failure;
- :mod:`.course`: the package's own ``go test``, for the course's verdict;
- :mod:`.summary`, :mod:`.report`, :mod:`.export`: the result, the run folder,
  and the failure as a ``go test`` the student can run.
"""

from redletter.conformance.adapters.cos418.check import CheckEvents, check_package
from redletter.conformance.adapters.cos418.package import DIALECTS, GoPackage, inspect_package
from redletter.conformance.adapters.cos418.summary import CheckOptions, PackageCheck
from redletter.conformance.adapters.cos418.workspace import RunLimits

__all__ = [
    "DIALECTS",
    "CheckEvents",
    "CheckOptions",
    "GoPackage",
    "PackageCheck",
    "RunLimits",
    "check_package",
    "inspect_package",
]
