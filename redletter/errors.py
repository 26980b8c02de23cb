"""The kit's one root exception class, and the exit codes every command shares.

Every error a user can see is a :class:`RedletterError` carrying a stable
``code`` (``RL-<AREA>-<WHAT>``), the process exit code it maps to, and a
message that says what happened, why, and what to do.  The CLI prints
``error[<code>]: <message>`` and exits with ``exit_code``; anything else that
escapes is a bug in the kit and is reported as one (exit 4).
"""

from __future__ import annotations

from enum import IntEnum


class Exit(IntEnum):
    """Process exit codes, the same for every command of the kit."""

    OK = 0  #: pass / every row matched
    FAIL = 1  #: a verdict of fail, or a model-check mismatch
    UNKNOWN = 2  #: the kit could not decide (timeout, liveness not judgeable)
    ENVIRONMENT = 3  #: the environment is missing something (Java, a tool)
    INTERNAL = 4  #: a bug in the kit itself
    BAD_INPUT = 5  #: the user's input is malformed (file, option, model name)


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


class EnvironmentMissing(RedletterError):
    """Something the kit needs is not installed (Java, apalache-mc, go)."""

    code = "RL-ENV"
    exit_code = Exit.ENVIRONMENT


class InputError(RedletterError):
    """A file, model name or option the user gave is malformed or unknown.

    Parsers raise this with the file, the line and what was expected.
    """

    code = "RL-INPUT"
    exit_code = Exit.BAD_INPUT

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        path: str | None = None,
        line: int | None = None,
    ) -> None:
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        super().__init__(where + message, code=code)
        self.path = path
        self.line = line


class SpecError(RedletterError):
    """SANY or TLC rejected a spec or model (parse or semantic error).

    Like :class:`InputError`, the message is prefixed with ``path:line:`` when
    the location is known, so editors can jump to it.
    """

    code = "RL-SPEC"
    exit_code = Exit.FAIL

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        path: str | None = None,
        line: int | None = None,
    ) -> None:
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        super().__init__(where + message, code=code)
        self.path = path
        self.line = line


class InternalError(RedletterError):
    """A bug in the kit (e.g. the three lemma checks disagree)."""

    code = "RL-INTERNAL"
    exit_code = Exit.INTERNAL
