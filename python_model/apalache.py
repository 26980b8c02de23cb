"""A binding to Apalache (``apalache-mc``): check, simulate, typecheck.

Every run is a subprocess without a shell, with a timeout, whose output directory
is a fresh temporary directory (``--out-dir`` and ``--run-dir``); counterexamples
and examples Apalache writes as ITF (``*.itf.json``) are read back through
:mod:`redletter.python_model.itf`.  Apalache is not obtainable from the registries this kit
uses; when ``apalache-mc`` is not on PATH every entry point raises
:class:`EnvironmentMissing` (exit 3) with :data:`APALACHE_MISSING`.

Apalache's exit codes: 0 no error found, 12 a counterexample (check) or a
violation (simulate), 120 a type error, 75 a parse error, anything else an error.

:func:`check_model` checks one model of ``spec/manifest.json`` and compares the
verdict with the row (``redletter apalache check`` runs it on a suite).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from redletter.errors import EnvironmentMissing, InputError
from redletter.manifest import ModelEntry
from redletter.python_model.itf import ItfTrace, trace_from_json
from redletter.toolchain import APALACHE_HINT

#: The one message the kit gives when Apalache is missing (see redletter.toolchain).
APALACHE_MISSING = APALACHE_HINT + "."
EXIT_OK = 0
EXIT_COUNTEREXAMPLE = 12
EXIT_TYPECHECK = 120
EXIT_PARSE = 75

Verdict = Literal["ok", "violation", "type-error", "parse-error", "error", "timeout"]
Outcome = Literal["ok", "MISMATCH", "unknown"]


def find_apalache(executable: str = "apalache-mc", path: str | None = None) -> str:
    """The absolute path of ``apalache-mc``, or :class:`EnvironmentMissing` (exit 3)."""
    exe = shutil.which(executable, path=path)
    if exe is None:
        raise EnvironmentMissing(APALACHE_MISSING, code="RL-ENV-APALACHE")
    return exe


def _common(
    spec: Path, config: Path | None, out_dir: Path, extra: Sequence[str]
) -> tuple[list[str], list[str]]:
    opts = [f"--out-dir={out_dir}", f"--run-dir={out_dir / 'run'}"]
    tail = []
    if config is not None:
        tail.append(f"--config={config.name}")
    tail += list(extra)
    tail.append(spec.name)
    return opts, tail


def check_command(
    exe: str,
    spec: Path,
    out_dir: Path,
    *,
    config: Path | None = None,
    length: int = 10,
    inv: Sequence[str] = (),
    init: str | None = None,
    next: str | None = None,
    cinit: str | None = None,
    extra: Sequence[str] = (),
) -> list[str]:
    """``apalache-mc [--out-dir --run-dir] check --length=N [--init --next --cinit
    --inv=A,B --config] [extra] Spec.tla`` (run from the spec's directory)."""
    opts, tail = _common(spec, config, out_dir, extra)
    cmd = [exe, *opts, "check", f"--length={length}"]
    if init is not None:
        cmd.append(f"--init={init}")
    if next is not None:
        cmd.append(f"--next={next}")
    if cinit is not None:
        cmd.append(f"--cinit={cinit}")
    if inv:
        cmd.append(f"--inv={','.join(inv)}")
    return cmd + tail


def simulate_command(
    exe: str,
    spec: Path,
    out_dir: Path,
    *,
    config: Path | None = None,
    length: int = 10,
    max_run: int = 100,
    inv: Sequence[str] = (),
    extra: Sequence[str] = (),
) -> list[str]:
    """``apalache-mc [...] simulate --length=N --max-run=R [--inv] [--config] Spec.tla``."""
    opts, tail = _common(spec, config, out_dir, extra)
    cmd = [exe, *opts, "simulate", f"--length={length}", f"--max-run={max_run}"]
    if inv:
        cmd.append(f"--inv={','.join(inv)}")
    return cmd + tail


def typecheck_command(exe: str, spec: Path, out_dir: Path) -> list[str]:
    """``apalache-mc [--out-dir --run-dir] typecheck Spec.tla``."""
    opts, tail = _common(spec, None, out_dir, ())
    return [exe, *opts, "typecheck", *tail]


@dataclass(frozen=True)
class ApalacheResult:
    """One run: the command, its exit code and verdict, output, and the ITF traces."""

    command: tuple[str, ...]
    returncode: int | None
    verdict: Verdict
    stdout: str
    stderr: str
    counterexamples: tuple[ItfTrace, ...]
    examples: tuple[ItfTrace, ...]

    def tail(self, lines: int = 20) -> str:
        """The last lines of the run's output (for error messages)."""
        return "\n".join((self.stdout + self.stderr).splitlines()[-lines:])


def _verdict(code: int) -> Verdict:
    if code == EXIT_OK:
        return "ok"
    if code == EXIT_COUNTEREXAMPLE:
        return "violation"
    if code == EXIT_TYPECHECK:
        return "type-error"
    if code == EXIT_PARSE:
        return "parse-error"
    return "error"


def _read_itf(run_dir: Path, pattern: str) -> tuple[ItfTrace, ...]:
    out = []
    for file in sorted(run_dir.rglob(pattern)):
        try:
            doc = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise InputError(f"cannot read Apalache's ITF output: {exc}", path=str(file)) from exc
        out.append(trace_from_json(doc))
    return tuple(out)


def run(cmd: Sequence[str], cwd: Path, out_dir: Path, timeout: float) -> ApalacheResult:
    """Run one prepared command and collect its ITF output from ``out_dir``."""
    try:
        proc = subprocess.run(
            list(cmd), cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired as exc:

        def text(b: bytes | str | None) -> str:
            return b.decode(errors="replace") if isinstance(b, bytes) else (b or "")

        return ApalacheResult(
            tuple(cmd), None, "timeout", text(exc.stdout), text(exc.stderr), (), ()
        )
    except OSError as exc:
        raise EnvironmentMissing(
            f"{APALACHE_MISSING} (running {cmd[0]} failed: {exc.strerror})",
            code="RL-ENV-APALACHE",
        ) from exc
    return ApalacheResult(
        tuple(cmd),
        proc.returncode,
        _verdict(proc.returncode),
        proc.stdout,
        proc.stderr,
        _read_itf(out_dir, "violation*.itf.json"),
        _read_itf(out_dir, "example*.itf.json"),
    )


def check(
    spec: Path,
    *,
    config: Path | None = None,
    length: int = 10,
    inv: Sequence[str] = (),
    timeout: float = 600.0,
    executable: str = "apalache-mc",
) -> ApalacheResult:
    """``apalache-mc check`` on ``spec`` (from its directory) in a temporary out dir."""
    exe = find_apalache(executable)
    with tempfile.TemporaryDirectory(prefix="redletter-apalache-") as tmp:
        out = Path(tmp)
        cmd = check_command(exe, spec, out, config=config, length=length, inv=inv)
        return run(cmd, spec.parent, out, timeout)


def simulate(
    spec: Path,
    *,
    config: Path | None = None,
    length: int = 10,
    max_run: int = 100,
    inv: Sequence[str] = (),
    timeout: float = 600.0,
    executable: str = "apalache-mc",
) -> ApalacheResult:
    """``apalache-mc simulate`` on ``spec`` in a temporary out dir."""
    exe = find_apalache(executable)
    with tempfile.TemporaryDirectory(prefix="redletter-apalache-") as tmp:
        out = Path(tmp)
        cmd = simulate_command(
            exe, spec, out, config=config, length=length, max_run=max_run, inv=inv
        )
        return run(cmd, spec.parent, out, timeout)


def typecheck(
    spec: Path, *, timeout: float = 300.0, executable: str = "apalache-mc"
) -> ApalacheResult:
    """``apalache-mc typecheck`` on ``spec`` in a temporary out dir."""
    exe = find_apalache(executable)
    with tempfile.TemporaryDirectory(prefix="redletter-apalache-") as tmp:
        out = Path(tmp)
        return run(typecheck_command(exe, spec, out), spec.parent, out, timeout)


@dataclass(frozen=True)
class ApalacheRow:
    """One model of a suite: its manifest row, Apalache's run, and the time it had."""

    entry: ModelEntry
    result: ApalacheResult
    timeout: float

    @property
    def expected(self) -> Verdict:
        """What Apalache must say: ``ok`` for a model that passes, else ``violation``."""
        return "ok" if self.entry.expect == "success" else "violation"

    @property
    def outcome(self) -> Outcome:
        """``ok`` when Apalache agrees with the row, ``unknown`` on a timeout, else
        ``MISMATCH`` (a type or parse error is a mismatch too)."""
        if self.result.verdict == "timeout":
            return "unknown"
        return "ok" if self.result.verdict == self.expected else "MISMATCH"


def check_model(
    spec_dir: Path,
    entry: ModelEntry,
    *,
    length: int = 10,
    timeout: float = 600.0,
    executable: str = "apalache-mc",
) -> ApalacheRow:
    """``apalache-mc check`` on ``<model>.tla`` with its ``.cfg``, compared with the row."""
    result = check(
        spec_dir / f"{entry.model}.tla",
        config=spec_dir / f"{entry.model}.cfg",
        length=length,
        timeout=timeout,
        executable=executable,
    )
    return ApalacheRow(entry, result, timeout)
