"""Run SANY and TLC 2.15 and read what they say.

SANY first (:func:`run_sany`): TLC 2.15's SANY exits 0 on *semantic* errors, so
its output is read, not its exit code.  Then TLC (:func:`run_tlc`) in ``-tool``
mode, whose output is a stream of framed messages::

    @!@!@STARTMSG <code>:<level> @!@!@
    <text, one or more lines>
    @!@!@ENDMSG <code> @!@!@

Messages can nest, and a STARTMSG can start in the middle of a line (seen in
the 1000/2154 pair below), so the parser tokenises on the markers, not lines.
Levels seen: 0 info, 1 error, 3 warning, 4 state print.

Message codes of TLC 2.15 as observed on toy specs with the real jar
(``tests/data/tlc/*.out`` are those recordings; ``tlc2.output.EC`` names):

======  =====================================================================
code    meaning (text as printed)
======  =====================================================================
2262    TLC_VERSION "TLC2 Version 2.15 of Day Month 20?? (rev: d5b5a7f)"
2187    TLC_MODE_MC "Running breadth-first search Model-Checking with fp …"
2401    warning: "Please run the Java VM … -XX:+UseParallelGC" (level 3)
2220    SANY_START "Starting SANY..."; SANY's own lines follow *unframed*
2219    SANY_END "SANY finished."
2185    TLC_STARTING "Starting... (date)"
2189    TLC_COMPUTING_INIT "Computing initial states..."
2190    TLC_INIT_GENERATED1 "Finished computing initial states: N distinct state…"
2212    "Implied-temporal checking--satisfiability problem has N branches."
2200    TLC_PROGRESS_STATS "Progress(D) at …: G states generated (…), N distinct
        states found (…), Q states left on queue."
2192    "Checking temporal properties for the complete state space with N total
        distinct states at (…)"
2267    "Finished checking temporal properties in 00s at …"
2193    TLC_SUCCESS "Model checking completed. No error has been found." + the
        fingerprint-collision estimate
2199    TLC_STATS "G states generated, N distinct states found, Q states left on
        queue."  (final counts; also printed after a violation)
2194    TLC_SEARCH_DEPTH "The depth of the complete state graph search is D."
        (absent after a temporal violation and an initial-state violation)
2268    outdegree statistics
2186    TLC_FINISHED "Finished in 454ms at (…)"
2107    "Invariant Neg is violated by the initial state:" + the state (exit 12)
2108    "Property PropInit is violated by the initial state:" + state (exit 13)
2110    "Invariant BadInv is violated."                           (exit 12)
2112    "Action property Shrink is violated."  ([][A]_v PROPERTY) (exit 13)
2114    "Deadlock reached."                                        (exit 11)
2116    "Temporal properties were violated." — no name in 2.15    (exit 13)
2121    "The behavior up to this point is:" (header of a safety trace)
2264    "The following behavior constitutes a counter-example:" (liveness)
2217    one trace state: "N: <Action line L, col C to … of module M>\\nvar = …"
2218    "N: Stuttering" (end of a liveness trace); 2122 "N: Back to state: …"
1000    GENERAL "TLC threw an unexpected exception. …" wrapping a nested message
        (e.g. 2154, a failed operator application); 2103 follows with the
        nested-expression positions                               (exit 75)
3002    "Parsing or semantic analysis failed." after SANY errors   (exit 150)
2229    "The invariant Nope specified in the configuration file\\nis not defined
        in the specification."                                     (exit 151)
======  =====================================================================

SANY 2.15 (``java -cp tla2tools.jar tla2sany.SANY Foo.tla``), by case:

* semantic error (e.g. unknown identifier): exit **0**, prints
  ``Semantic errors:`` / ``*** Errors: 1`` / ``line 5, col 14 to line 5, col 14
  of module Sem`` / ``Unknown operator: `y'.``
* parse error: exit 255, ``***Parse Error***`` / ``Encountered "…" at line 6,
  column 1 and token "1"`` … ``Could not parse module Parse2 from file …``
* lexical error: exit 255, ``Lexical error at line 3, column 17.  Encountered: …``
* missing module: exit 255, ``Cannot find source file for module Nowhere
  imported in module Miss.``
"""

from __future__ import annotations

import collections
import dataclasses
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import IO

from redletter.errors import Exit, RedletterError, SpecError, escape_terminal

# --- message codes -----------------------------------------------------------------

MSG_GENERAL = 1000
MSG_NESTED_EXPRESSION = 2103
MSG_INVARIANT_VIOLATED_INITIAL = 2107
MSG_PROPERTY_VIOLATED_INITIAL = 2108
MSG_INVARIANT_VIOLATED = 2110
MSG_ACTION_PROPERTY_VIOLATED = 2112
MSG_DEADLOCK = 2114
MSG_TEMPORAL_VIOLATED = 2116
MSG_BEHAVIOR_HEADER = 2121
MSG_BACK_TO_STATE = 2122
MSG_SUCCESS = 2193
MSG_SEARCH_DEPTH = 2194
MSG_STATS = 2199
MSG_PROGRESS = 2200
MSG_STATE = 2217
MSG_STUTTERING = 2218
MSG_COUNTEREXAMPLE_HEADER = 2264
MSG_PARSING_FAILED = 3002

LEVEL_ERROR = 1
LEVEL_STATE = 4

_TRACE_CODES = frozenset(
    {MSG_BEHAVIOR_HEADER, MSG_COUNTEREXAMPLE_HEADER, MSG_STATE, MSG_STUTTERING, MSG_BACK_TO_STATE}
)
_VIOLATION_CODES = frozenset(
    {
        MSG_INVARIANT_VIOLATED_INITIAL,
        MSG_PROPERTY_VIOLATED_INITIAL,
        MSG_INVARIANT_VIOLATED,
        MSG_ACTION_PROPERTY_VIOLATED,
        MSG_DEADLOCK,
        MSG_TEMPORAL_VIOLATED,
    }
)

# Numbers are bounded in the patterns (TLC's never come near): absurd output is
# not matched, never a ValueError of int() on thousands of digits.
_MARKER = re.compile(r"@!@!@STARTMSG (\d{1,9}):(\d{1,9}) @!@!@|@!@!@ENDMSG (\d{1,9}) @!@!@")
_STATS = re.compile(
    r"(?<![\d,])([\d,]{1,30}) states generated.*?, ([\d,]{1,30}) distinct states found.*?, "
    r"([\d,]{1,30}) states left on queue"
)
_PROGRESS = re.compile(r"Progress\((\d{1,18})\)")
_DEPTH = re.compile(r"depth of the complete state graph search is (\d{1,18})")
_NAMED = re.compile(r"^(?:Invariant|Action property|Property) (\S+) is violated")


class ResultKind(StrEnum):
    """How a TLC run ended, in the words the manifest uses."""

    SUCCESS = "success"
    SAFETY_FAILURE = "safety failure"
    LIVENESS_FAILURE = "liveness failure"
    DEADLOCK = "deadlock failure"
    ERROR = "error"


@dataclass(frozen=True)
class TlcMessage:
    """One framed ``-tool`` message: its code, level and text (nested ones inline)."""

    code: int
    level: int
    text: str


@dataclass(frozen=True)
class Progress:
    """A ``Progress(...)`` report: BFS depth so far and state counts so far."""

    depth: int
    generated: int
    distinct: int
    queue: int


@dataclass(frozen=True)
class TlcResult:
    """What one TLC run found.

    ``distinct``/``total``/``depth`` are ``None`` when TLC did not report them
    (e.g. an initial-state violation).  ``trace`` is the counterexample as TLC
    printed it (states separated by blank lines), empty on success.
    """

    model: str
    kind: ResultKind
    violated: str | None
    distinct: int | None
    total: int | None
    depth: int | None
    trace: str
    error: str | None
    exit_code: int
    seconds: float
    log_path: Path | None = None
    messages: tuple[TlcMessage, ...] = field(default=(), repr=False)
    stalls: int = 0  #: runs of TLC that stalled and were killed before this one (0 or 1)

    def describe(self) -> str:
        """Short human form of the outcome, e.g. ``safety failure (Lemma0)``."""
        if self.violated is not None:
            return f"{self.kind.value} ({self.violated})"
        return self.kind.value


def _int(text: str) -> int:
    return int(text.replace(",", ""))


class ToolOutputParser:
    """Incremental parser of TLC ``-tool`` output.

    Feed it lines with :meth:`feed` (returns the :class:`Progress` reports the
    line completed, for live display); call :meth:`result` at the end.
    """

    def __init__(self, source: str = "TLC output") -> None:
        self.source = source  #: where the output comes from (a log file), for errors
        self.line = 0  #: lines fed so far
        self._stack: list[tuple[int, int, list[str]]] = []
        self.messages: list[TlcMessage] = []
        self.plain: list[str] = []

    def feed(self, line: str) -> list[Progress]:
        """Consume one line of output (with or without its newline)."""
        if not line.endswith("\n"):
            line += "\n"
        reports: list[Progress] = []
        pos = 0
        for match in _MARKER.finditer(line):
            self._text(line[pos : match.start()])
            pos = match.end()
            if match.group(1) is not None:
                self._stack.append((int(match.group(1)), int(match.group(2)), []))
            elif self._stack:
                code, level, parts = self._stack.pop()
                text = "".join(parts).strip("\n")
                if self._stack:  # nested message: keep its text inside the outer one
                    self._stack[-1][2].append(text + "\n")
                msg = TlcMessage(code=code, level=level, text=text)
                self.messages.append(msg)
                if code == MSG_PROGRESS:
                    progress = parse_progress(text)
                    if progress is not None:
                        reports.append(progress)
        self._text(line[pos:])
        return reports

    def _text(self, text: str) -> None:
        if not text:
            return
        if self._stack:
            self._stack[-1][2].append(text)
        else:
            self.plain.append(text)

    def result(
        self, *, model: str, exit_code: int, seconds: float, log_path: Path | None = None
    ) -> TlcResult:
        """Classify the run from the messages seen so far."""
        return classify(
            self.messages,
            model=model,
            exit_code=exit_code,
            seconds=seconds,
            log_path=log_path,
            plain="".join(self.plain),
        )


def parse_progress(text: str) -> Progress | None:
    """Read a ``Progress(D) at …: G states generated …, N distinct states found …``."""
    depth = _PROGRESS.search(text)
    stats = _STATS.search(text)
    if depth is None or stats is None:
        return None
    return Progress(
        depth=int(depth.group(1)),
        generated=_int(stats.group(1)),
        distinct=_int(stats.group(2)),
        queue=_int(stats.group(3)),
    )


def classify(
    messages: Sequence[TlcMessage],
    *,
    model: str,
    exit_code: int,
    seconds: float,
    log_path: Path | None = None,
    plain: str = "",
) -> TlcResult:
    """Turn a run's messages into a :class:`TlcResult`."""
    kind: ResultKind | None = None
    violated: str | None = None
    error: str | None = None
    distinct: int | None = None
    total: int | None = None
    depth: int | None = None
    trace: list[str] = []
    for msg in messages:
        if msg.code == MSG_STATS:
            stats = _STATS.search(msg.text)
            if stats is not None:
                total, distinct = _int(stats.group(1)), _int(stats.group(2))
        elif msg.code == MSG_SEARCH_DEPTH:
            found = _DEPTH.search(msg.text)
            if found is not None:
                depth = int(found.group(1))
        elif msg.code in _TRACE_CODES:
            trace.append(msg.text)
        elif msg.code in _VIOLATION_CODES and kind is None:
            if msg.code == MSG_DEADLOCK:
                kind = ResultKind.DEADLOCK
            elif msg.code in (MSG_TEMPORAL_VIOLATED, MSG_PROPERTY_VIOLATED_INITIAL):
                kind = ResultKind.LIVENESS_FAILURE
            else:
                kind = ResultKind.SAFETY_FAILURE
            named = _NAMED.match(msg.text)
            violated = named.group(1) if named else None
            if msg.code in (MSG_INVARIANT_VIOLATED_INITIAL, MSG_PROPERTY_VIOLATED_INITIAL):
                trace.append(msg.text)
        elif msg.code == MSG_SUCCESS and kind is None:
            kind = ResultKind.SUCCESS
        elif msg.level == LEVEL_ERROR and error is None and msg.code not in _TRACE_CODES:
            error = msg.text
    if error is not None and kind in (None, ResultKind.SUCCESS):
        kind = ResultKind.ERROR
    if kind is None:
        kind = ResultKind.ERROR
        if error is None:
            tail = plain.strip().splitlines()[-5:]
            error = f"TLC exited with code {exit_code} without a verdict" + (
                ": " + " / ".join(tail) if tail else ""
            )
    if kind is ResultKind.SUCCESS and exit_code != 0:
        kind = ResultKind.ERROR
        error = f"TLC reported success but exited with code {exit_code}"
    return TlcResult(
        model=model,
        kind=kind,
        violated=violated,
        distinct=distinct,
        total=total,
        depth=depth,
        trace="\n\n".join(trace),
        error=error,
        exit_code=exit_code,
        seconds=seconds,
        log_path=log_path,
        messages=tuple(messages),
    )


def parse_tool_output(
    lines: Iterable[str],
    *,
    model: str = "",
    exit_code: int = 0,
    seconds: float = 0.0,
    source: str = "TLC output",
) -> TlcResult:
    """Parse a complete recorded ``-tool`` output (tests, offline logs); ``source``
    names it in errors."""
    parser = ToolOutputParser(source)
    for line in lines:
        parser.feed(line)
    return parser.result(model=model, exit_code=exit_code, seconds=seconds)


# --- SANY ----------------------------------------------------------------------------

_SANY_SEMANTIC = re.compile(
    r"line (\d{1,9}), col (\d{1,9}) to line \d+, col \d+ of module (\w{1,200})\s*\n\s*\n?(.+)"
)
_SANY_PARSE = re.compile(r"Encountered (.+?) at line (\d{1,9}), column? (\d{1,9})")
_SANY_LEXICAL = re.compile(r"Lexical error at line (\d{1,9}), column (\d{1,9})\.\s*(.*)")
_SANY_PARSING_FILE = re.compile(r"^Parsing file (.+)$", re.MULTILINE)
_SANY_MISSING = re.compile(r"Cannot find source file for module (\w+) imported in module (\w+)")


def _module_file(spec_dir: Path, module: str) -> str:
    """The module's file in ``spec_dir`` (a module name read from SANY's output is an
    identifier; anything else, or a name too long for a file, is not a file here)."""
    if re.fullmatch(r"\w{1,200}", module) is None:
        return f"module {module[:80]}"
    path = spec_dir / f"{module}.tla"
    try:
        return str(path) if path.is_file() else f"module {module}"
    except OSError:
        return f"module {module}"


def sany_error(
    output: str, exit_code: int, *, spec_dir: Path, module_file: Path
) -> SpecError | None:
    """The :class:`SpecError` SANY's output describes, or ``None`` if it is clean.

    Pure function of the output (tested on recordings), because SANY 2.15's
    exit code cannot be trusted: it is 0 after semantic errors.
    """
    advice = "fix the spec and run the check again"
    parsing = _SANY_PARSING_FILE.findall(output)
    current = parsing[-1].strip() if parsing else str(module_file)
    if "Semantic errors:" in output or "*** Errors:" in output:
        found = _SANY_SEMANTIC.search(output)
        if found is not None:
            line, col, module, what = found.groups()
            return SpecError(
                f"col {col}: SANY found a semantic error in module {module}: "
                f"{what.strip()} — {advice}.",
                path=_module_file(spec_dir, module),
                line=int(line),
            )
        return SpecError(f"SANY found semantic errors: {_tail(output)} — {advice}.", path=current)
    lexical = _SANY_LEXICAL.search(output)
    if lexical is not None:
        line, col, what = lexical.groups()
        return SpecError(
            f"col {col}: SANY found a lexical error ({what.strip()}) — {advice}.",
            path=current,
            line=int(line),
        )
    if "***Parse Error***" in output or "Parse Error" in output:
        parse = _SANY_PARSE.search(output)
        if parse is not None:
            what, line, col = parse.groups()
            return SpecError(
                f"col {col}: SANY could not parse the module (encountered {what.strip()}) "
                f"— {advice}.",
                path=current,
                line=int(line),
            )
        return SpecError(
            f"SANY could not parse the module: {_tail(output)} — {advice}.", path=current
        )
    missing = _SANY_MISSING.search(output)
    if missing is not None:
        module, importer = missing.groups()
        return SpecError(
            f"module {importer} imports module {module}, but there is no {module}.tla "
            f"in {spec_dir} nor among TLC's standard modules — add it or fix the name.",
            path=_module_file(spec_dir, importer),
        )
    if exit_code != 0 or "*** Abort messages" in output or "Fatal errors" in output:
        return SpecError(
            f"SANY rejected the spec (exit {exit_code}): {_tail(output)} — {advice}.",
            path=current,
        )
    return None


def _tail(output: str, n: int = 3) -> str:
    lines = [ln.strip() for ln in output.strip().splitlines() if ln.strip()]
    return " / ".join(lines[-n:]) if lines else "(no output)"


def _run_sany(cmd: Sequence[str], *, cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    """SANY's run; one that outlasts ``timeout`` (it parses the suite's modules in
    seconds) is stuck: :class:`ToolStalled`, never a traceback."""
    try:
        return subprocess.run(
            cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout or b""  # bytes, whatever text= says (subprocess's docs)
        text = out.decode("utf-8", "replace") if isinstance(out, bytes) else out
        modules = escape_terminal(" ".join(c for c in cmd if c.endswith(".tla")), newlines=True)
        raise ToolStalled(
            f"SANY, TLC's parser, did not finish parsing {modules} in"
            f" {timeout:.0f} s (it parses them in seconds), so the kit stopped it: a fault"
            " of SANY or of this machine, not of the spec. Its last lines:"
            f" {escape_terminal(_tail(text), newlines=True)}. Run the command again; if it"
            " happens again, report it.",
            code="RL-SANY-TIMEOUT",
        ) from None


def run_sany(module_file: Path, *, jar: Path, java: str = "java", timeout: float = 300.0) -> str:
    """Parse ``module_file`` with SANY; raise :class:`SpecError` on any error.

    Returns SANY's output when the module (and everything it extends or
    instantiates from its directory) parses and passes semantic analysis.
    """
    spec_dir = module_file.parent
    # SANY, like TLC, writes the standard modules it parses (Naturals.tla, ...) to
    # java.io.tmpdir; SANY processes sharing /tmp can read a module another one is
    # rewriting and die with a NullPointerException, so each run gets its own.
    with tempfile.TemporaryDirectory(prefix="redletter-sany-") as tmpdir:
        proc = _run_sany(
            [java, f"-Djava.io.tmpdir={tmpdir}", "-cp", str(jar.resolve()), "tla2sany.SANY",
             module_file.name],
            cwd=spec_dir,
            timeout=timeout,
        )  # fmt: skip
    output = proc.stdout + proc.stderr
    problem = sany_error(output, proc.returncode, spec_dir=spec_dir, module_file=module_file)
    if problem is not None:
        raise problem
    return output


def run_sany_all(
    module_files: Sequence[Path], *, jar: Path, java: str = "java", timeout: float = 300.0
) -> None:
    """Parse every module of ``module_files`` (all in one directory) in one SANY run,
    one JVM instead of one a module (a suite of 42 models spent about 1.7 s of CPU
    starting a JVM for each); on any error, parse the modules one at a time so that
    the :class:`SpecError` names the right module, file and line."""
    files = list(module_files)
    if not files:
        return
    spec_dir = files[0].parent
    with tempfile.TemporaryDirectory(prefix="redletter-sany-") as tmpdir:
        proc = _run_sany(
            [java, f"-Djava.io.tmpdir={tmpdir}", "-cp", str(jar.resolve()), "tla2sany.SANY",
             *(f.name for f in files)],
            cwd=spec_dir,
            timeout=timeout * max(1, len(files) // 8),
        )  # fmt: skip
    output = proc.stdout + proc.stderr
    # Clean output is clean whichever module it is read for; anything else (or an
    # output this reading mistakes for an error) is parsed again module by module.
    if proc.returncode != 0 or sany_error(output, 0, spec_dir=spec_dir, module_file=files[0]):
        for f in files:  # the first module with an error raises, with its own output
            run_sany(f, jar=jar, java=java, timeout=timeout)


# --- TLC -----------------------------------------------------------------------------


def tlc_command(
    model: str,
    *,
    jar: Path,
    metadir: Path,
    check_deadlock: bool = True,
    workers: int = 2,
    fp: int = 0,
    extra_args: Sequence[str] = (),
    java: str = "java",
    tmpdir: Path | None = None,
    small: bool = False,
) -> list[str]:
    """The exact TLC command line, run with the spec directory as cwd.  ``tmpdir``:
    the JVM's ``java.io.tmpdir``, where TLC writes the standard modules (Integers.tla,
    ...) it parses; TLC processes sharing one (``/tmp``) can read a module another
    is rewriting and fail in SANY with a NullPointerException.

    ``small``: the run is known to be short (a model of fewer than
    :data:`redletter.check.SMALL_MODEL_STATES` distinct states, or one that must fail
    early), so the JVM compiles with its quick compiler only (``-XX:TieredStopAtLevel=1``).  On a
    short run the optimising compiler costs more than it saves: measured on a
    two-core machine with the state graph dumped, MCToken2 (5,462 states) took 20.1 s
    of CPU with it and 10.3 s without, MCNonFifoFailure 2.9 s and 1.8 s; on
    MCBarrierTwoCheckpoints (15,058 states) it pays, 47.4 s against 59.9 s.  The
    states, the verdict and the output are the same either way."""
    cmd = [
        java,
        "-XX:+UseParallelGC",
        *(["-XX:TieredStopAtLevel=1"] if small else []),
        "-Xss4m",
        *([f"-Djava.io.tmpdir={tmpdir.resolve()}"] if tmpdir is not None else []),
        "-cp",
        str(jar.resolve()),
        "tlc2.TLC",
        "-tool",
        "-workers",
        str(workers),
        "-fp",
        str(fp),
        "-metadir",
        str(metadir.resolve()),
        # Liveness checked once, on the complete state graph, not again and again on
        # the partial one (TLC's full check of MCTokenComplete3Large: 144 s against
        # 165 s), and no checkpoints (the kit never resumes a run).  TLC still
        # suspends its workers every minute (see STALL_SECONDS).
        "-lncheck",
        "final",
        "-checkpoint",
        "0",
    ]
    if not check_deadlock:
        cmd.append("-deadlock")  # in TLC, -deadlock means "do NOT check for deadlock"
    cmd += [*extra_args, "-config", f"{model}.cfg", f"{model}.tla"]
    return cmd


#: A TLC that prints nothing and uses no CPU for this long is stuck, not slow.  TLC 2.15
#: was seen stuck for 19 minutes on a model it checks in 10 s (MCTokenStar4, one worker):
#: its main thread waiting in ``StateQueue.suspendAll`` (periodic liveness work) for a
#: worker that waited in ``StateQueue.isAvail`` for it, both at 0 CPU.  No option
#: avoids that moment: read from the jar, ``ModelChecker.doPeriodicWork`` (3 s after
#: the start, then every minute) suspends the workers whenever the model has a temporal
#: property and the behaviour graph grew, also under ``-lncheck final`` (which only
#: skips the check once they are suspended), so this watchdog is what keeps a run from
#: hanging.  Working, TLC prints a progress report every minute or uses CPU (liveness
#: on the whole graph is silent but busy); the JVM idle uses about 0.2 % of a core.
STALL_SECONDS: float = 180.0

#: Below this share of one core between two looks, TLC counts as using no CPU.
_IDLE_SHARE = 0.02


class ToolStalled(RedletterError):
    """TLC (a tool the kit runs) stopped working: no output and no CPU for minutes.
    ``run_again``: the kit already ran it a second time (a caller may run it again
    only when it was not)."""

    code = "RL-TLC-STALLED"
    exit_code = Exit.UNKNOWN

    def __init__(self, message: str, *, code: str | None = None, run_again: bool = True) -> None:
        super().__init__(message, code=code)
        self.run_again = run_again


def _cpu_seconds(pid: int) -> float | None:
    """The CPU time process ``pid`` has used (all its threads), from ``/proc``;
    ``None`` where there is no ``/proc``."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None
    # After "pid (comm)": utime and stime are fields 14 and 15 (proc(5)).
    return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS


def _waits_outside(pid: int) -> bool:
    """Does a thread of ``pid`` wait on something outside it rather than on itself:
    stopped (SIGSTOP, a debugger), in a disk wait (state D), or blocked writing a pipe
    (its ``wchan``: ``pipe_write``, ``anon_pipe_write``; the kit's reader of its output,
    or the cross-check's reader of its DOT dump, is behind; TLC reads no pipe)?  Slow,
    not stuck: a deadlocked TLC's threads all wait on futexes (Java monitors)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat", "rb") as f:
                if f.read().rsplit(b")", 1)[1].split()[0] in (b"D", b"T", b"t"):
                    return True
            with open(f"/proc/{pid}/task/{tid}/wchan", "rb") as f:
                if b"pipe" in f.read():
                    return True
        except (OSError, IndexError):
            continue
    return False


_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _run_watched(
    cmd: Sequence[str],
    *,
    cwd: Path,
    log: IO[str],
    parser: ToolOutputParser,
    on_progress: Callable[[Progress], None] | None,
    stall_seconds: float,
) -> tuple[int, bool, str]:
    """Run ``cmd``, feeding its output to ``log`` and ``parser``, and kill it when it
    stalls (nothing printed and less than :data:`_IDLE_SHARE` of a core used for
    ``stall_seconds``).  Returns its exit code, whether it was killed for stalling, and
    its last lines (escaped, indented) for a message."""
    tail: collections.deque[str] = collections.deque(maxlen=5)
    last_active = [time.monotonic()]
    stalled = threading.Event()
    done = threading.Event()
    with subprocess.Popen(
        cmd,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        bufsize=1,
    ) as proc:

        def watch() -> None:
            look = min(5.0, stall_seconds / 10)
            before = _cpu_seconds(proc.pid)
            then = time.monotonic()
            while not done.wait(look):
                now_cpu = _cpu_seconds(proc.pid)
                now = time.monotonic()
                if now_cpu is None or before is None:
                    return  # no /proc (or the process is gone): cannot tell stuck from busy
                busy = now_cpu - before >= _IDLE_SHARE * (now - then)
                if busy or _waits_outside(proc.pid):
                    last_active[0] = now
                before, then = now_cpu, now
                if now - last_active[0] >= stall_seconds:
                    stalled.set()
                    proc.kill()
                    return

        watcher = threading.Thread(target=watch, name="redletter-tlc-watchdog", daemon=True)
        watcher.start()
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                last_active[0] = time.monotonic()
                log.write(line)
                if line.strip() and not line.startswith("@!@!@"):
                    tail.append(line)
                for report in parser.feed(line):
                    if on_progress is not None:
                        on_progress(report)
            exit_code = proc.wait()
        finally:
            done.set()
            watcher.join()
    lines = "\n".join("  " + escape_terminal(t.rstrip("\n"), newlines=True) for t in tail)
    return exit_code, stalled.is_set(), lines or "  (nothing)"


def run_tlc(
    model: str,
    *,
    spec_dir: Path,
    jar: Path,
    cache_dir: Path,
    check_deadlock: bool = True,
    workers: int = 2,
    fp: int = 0,
    extra_args: Sequence[str] = (),
    on_progress: Callable[[Progress], None] | None = None,
    java: str = "java",
    sany: bool = True,
    small: bool = False,
    stall_seconds: float | None = None,
    retry: bool = True,
    stalled_before: int = 0,
) -> TlcResult:
    """Model-check ``spec_dir/<model>.tla`` with ``spec_dir/<model>.cfg``.

    Runs SANY first (a spec error raises :class:`SpecError` naming file and
    line), then TLC with its state queue under ``cache_dir/tlc-states/<model>-*`` (its own)
    so the spec directory stays clean.  TLC's full output goes to
    ``cache_dir/tlc-logs/<model>.log``; ``on_progress`` is called for every
    ``Progress(...)`` report while TLC runs.  ``extra_args`` are passed to TLC
    before ``-config`` (e.g. ``["-dump", "dot,actionlabels", "/tmp/g"]``).
    ``sany=False`` leaves the parse to TLC's own SANY (a caller that has parsed the
    modules already, :func:`run_sany_all`); ``small``: see :func:`tlc_command`.

    A TLC that prints nothing and uses no CPU for ``stall_seconds`` (default
    :data:`STALL_SECONDS`) is stuck: it is killed and run once more; stuck twice, the run
    raises :class:`ToolStalled` (exit 2: the kit could not decide).  ``retry=False``:
    :class:`ToolStalled` at the first stall, for a caller that cannot simply run TLC
    again (one reading the dump from a pipe starts a new reader and calls again, with
    ``stalled_before=1``, so a second stall says twice).
    """
    module_file = spec_dir / f"{model}.tla"
    for needed in (module_file, spec_dir / f"{model}.cfg"):
        if not needed.is_file():
            raise SpecError(
                f"model {model} has no {needed.name} in {spec_dir}; every model in "
                f"spec/manifest.json needs a {model}.tla and a {model}.cfg.",
                code="RL-SPEC-MISSING",
            )
    if sany:
        run_sany(module_file, jar=jar, java=java)
    # A state queue and a java.io.tmpdir (see tlc_command) of this run's own: two
    # runs of one model at once (two `redletter check --model M`, two tests on two
    # workers) never share them (one removing the other's states was a TLC error).
    (cache_dir / "tlc-states").mkdir(parents=True, exist_ok=True)
    (cache_dir / "tlc-tmp").mkdir(parents=True, exist_ok=True)
    metadir = Path(tempfile.mkdtemp(prefix=f"{model}-", dir=cache_dir / "tlc-states"))
    tmpdir = Path(tempfile.mkdtemp(prefix=f"{model}-", dir=cache_dir / "tlc-tmp"))
    log_path = cache_dir / "tlc-logs" / f"{model}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    cmd = tlc_command(
        model,
        jar=jar,
        metadir=metadir,
        check_deadlock=check_deadlock,
        workers=workers,
        fp=fp,
        extra_args=extra_args,
        java=java,
        tmpdir=tmpdir,
        small=small,
    )
    if stall_seconds is None:
        stall_seconds = STALL_SECONDS
    start = time.monotonic()
    try:
        # After a stall the caller ran again, the log goes on (it says what happened).
        with log_path.open("a" if stalled_before else "w", encoding="utf-8") as log:
            log.write("$ (cd " + str(spec_dir) + " && " + " ".join(cmd) + ")\n")
            stalls = stalled_before
            while True:
                parser = ToolOutputParser()
                exit_code, stalled, tail = _run_watched(
                    cmd,
                    cwd=spec_dir,
                    log=log,
                    parser=parser,
                    on_progress=on_progress,
                    stall_seconds=stall_seconds,
                )
                if not stalled:
                    break
                stalls += 1
                again = retry and stalls == 1
                log.write(
                    f"# redletter: TLC printed nothing and used no CPU for {stall_seconds:.0f} s;"
                    " the kit killed it" + (" and runs it again\n" if again else "\n")
                )
                log.flush()
                if not again:
                    raise ToolStalled(
                        f"TLC stopped working on model {model}: {'twice ' if stalls > 1 else ''}it"
                        f" printed nothing and used no CPU for {stall_seconds:.0f} s, and the kit"
                        " killed it (TLC 2.15 can deadlock inside itself; this is a fault of TLC"
                        " or of this machine, not of the model). The last lines it printed:\n"
                        f"{tail}\n"
                        f"Its whole output is in {log_path}. Run the command again; if it stalls"
                        " again, run the model alone (`.venv/bin/redletter check --model"
                        f" {model}`) and report the log.",
                        code="RL-TLC-STALLED",
                        run_again=stalls > 1,
                    )
                shutil.rmtree(metadir, ignore_errors=True)  # a fresh state queue
                metadir.mkdir()
    finally:
        shutil.rmtree(metadir, ignore_errors=True)
        shutil.rmtree(tmpdir, ignore_errors=True)
    seconds = time.monotonic() - start
    result = parser.result(model=model, exit_code=exit_code, seconds=seconds, log_path=log_path)
    if stalls:
        result = dataclasses.replace(result, stalls=stalls)
    if any(m.code == MSG_PARSING_FAILED for m in result.messages):
        # SANY passed above, so this is TLC's own parse of the model; report it.
        problem = sany_error("".join(parser.plain), 1, spec_dir=spec_dir, module_file=module_file)
        if problem is not None:
            raise problem
    return result
