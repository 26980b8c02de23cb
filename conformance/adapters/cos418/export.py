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
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from redletter.conformance.adapters.cos418.summary import PackageCheck
from redletter.conformance.adapters.cos418.workspace import assemble
from redletter.conformance.formats.cos418 import format_scenario, format_snap, format_topology
from redletter.errors import InputError

__all__ = ["REPRO_NAME", "write_export"]

#: The name of the exported scenario's files (and of the test's data).
REPRO_NAME: Final = "redletter-repro"


def _comment(text: str) -> str:
    """``text`` as Go line comments (wrapped at 76 columns)."""
    import textwrap

    lines = textwrap.wrap(" ".join(text.split()), 76) or [""]
    return "\n".join(f"// {ln}" for ln in lines)[3:]


def write_export(dest: Path, check: PackageCheck) -> tuple[Path, ...]:
    """Write the shrunk failure of ``check`` into ``dest`` (module docstring)."""
    shown = check.shown
    if shown is None:
        return ()
    r = shown.result
    try:
        data = dest / "test_data"
        data.mkdir(parents=True, exist_ok=True)
        written = []
        top = data / f"{REPRO_NAME}.top"
        top.write_text(format_topology(shown.case.topology), encoding="utf-8")
        events = data / f"{REPRO_NAME}.events"
        # The course's parser has no comments: write none.
        events.write_text(format_scenario(shown.case.scenario), encoding="utf-8")
        written += [top, events]
        for snap in r.expected:
            p = data / f"{REPRO_NAME}{snap.id}.snap"
            p.write_text(format_snap(snap), encoding="utf-8")
            written.append(p)
        finding = f"{r.kind}: {r.message}" if r.kind else r.message
        test = dest / "redletter_repro_test.go"
        test.write_text(
            assemble(
                "repro_test.go.tmpl",
                check.package,
                name=REPRO_NAME,
                seed=str(shown.seed),
                finding=_comment(finding),
            ),
            encoding="utf-8",
        )
        written.append(test)
        race = " -race" if r.kind == "data-race" or check.options.race else ""
        readme = dest / "README.txt"
        readme.write_text(
            f"The smallest failing scenario redletter found in {check.package.source}\n"
            f"(simulator seed {shown.seed}), as a test in the course harness's style.\n\n"
            "Copy these files into the package's folder and run its own Go:\n\n"
            f"    cp -r {dest}/. {check.package.source}/\n"
            f"    cd {check.package.source} && GODEBUG=randseednop=0 go test{race}"
            " -run Redletter .\n\n"
            f"What the kit found:\n  {finding}\n",
            encoding="utf-8",
        )
        written.append(readme)
    except OSError as exc:
        raise InputError(
            f"cannot write the exported test into {dest}: {exc.strerror}",
            code="RL-INPUT-USAGE",
            path=str(dest),
        ) from None
    return tuple(written)
