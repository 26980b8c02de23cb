"""``cos418 test --export DIR``: the shrunk failure, for the student's own ``go test``.

:func:`write_export` writes into DIR what reproduces the failure without the
kit, in the course harness's style:

- ``test_data/redletter-repro.top`` and ``.events``: the shrunk scenario;
- ``test_data/redletter-repro<k>.snap``: what Chandy–Lamport records for the
  failing run (this package, this seed), where the kit knows it;
- ``redletter_repro_test.go``: ``TestRedletterRepro``, which runs the scenario
  as the course's harness does under the failing seed and checks what the course
  checks (the token total), then compares with those ``.snap`` files;
- ``README.txt``: how to run it (``go test -run Redletter``).

Copy DIR's contents into the package's folder and run ``go test -run Redletter``.

DIR may hold what others left: nothing there is followed or opened.  Each file is
made under a fresh name (``O_CREAT | O_EXCL | O_NOFOLLOW``) and renamed into place;
a name that is a link, a FIFO or anything but what goes there is bad input naming
it, found before the campaign starts (:func:`check_export`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from redletter.conformance.adapters.cos418.summary import PackageCheck
from redletter.conformance.adapters.cos418.workspace import assemble
from redletter.conformance.formats.cos418 import format_scenario, format_snap, format_topology
from redletter.safewrite import SafeFolder

__all__ = ["EXPORTED", "REPRO_NAME", "check_export", "write_export"]

#: The name of the exported scenario's files (and of the test's data).
REPRO_NAME: Final = "redletter-repro"


def _comment(text: str) -> str:
    """``text`` as Go line comments (wrapped at 76 columns)."""
    import textwrap

    lines = textwrap.wrap(" ".join(text.split()), 76) or [""]
    return "\n".join(f"// {ln}" for ln in lines)[3:]


#: The files --export writes (besides ``test_data/<REPRO_NAME><k>.snap``).
EXPORTED: Final = (
    f"test_data/{REPRO_NAME}.top",
    f"test_data/{REPRO_NAME}.events",
    "redletter_repro_test.go",
    "README.txt",
)


def check_export(dest: Path) -> None:
    """Before any work: ``dest`` can be written, and none of the names the export
    writes is a link, a FIFO or anything but what goes there (bad input naming it)."""
    with SafeFolder(dest, code="RL-INPUT-USAGE") as folder:
        folder.probe()
        folder.check(*EXPORTED)


def write_export(dest: Path, check: PackageCheck) -> tuple[Path, ...]:
    """Write the shrunk failure of ``check`` into ``dest`` (module docstring): every
    file made fresh and renamed into place, nothing already there followed or opened
    (:class:`~redletter.safewrite.SafeFolder`)."""
    shown = check.shown
    if shown is None:
        return ()
    r = shown.result
    written = []
    with (
        SafeFolder(dest, code="RL-INPUT-USAGE") as folder,
        folder.folder("test_data") as data,
    ):
        written.append(data.write(f"{REPRO_NAME}.top", format_topology(shown.case.topology)))
        # The course's parser has no comments: write none.
        written.append(data.write(f"{REPRO_NAME}.events", format_scenario(shown.case.scenario)))
        for snap in r.expected:
            written.append(data.write(f"{REPRO_NAME}{snap.id}.snap", format_snap(snap)))
        finding = f"{r.kind}: {r.message}" if r.kind else r.message
        test = assemble(
            "repro_test.go.tmpl",
            check.package,
            name=REPRO_NAME,
            seed=str(shown.seed),
            finding=_comment(finding),
        )
        written.append(folder.write("redletter_repro_test.go", test))
        race = " -race" if r.kind == "data-race" or check.options.race else ""
        written.append(
            folder.write(
                "README.txt",
                f"The smallest failing scenario redletter found in {check.package.source}\n"
                f"(simulator seed {shown.seed}), as a test in the course harness's style.\n\n"
                "Copy these files into the package's folder and run its own Go:\n\n"
                f"    cp -r {dest}/. {check.package.source}/\n"
                f"    cd {check.package.source} && GODEBUG=randseednop=0 go test{race}"
                " -run Redletter .\n\n"
                f"What the kit found:\n  {finding}\n",
            )
        )
    return tuple(written)
