"""The commands printed in README.md and docs/*.md, read as a test runs them.

Every fenced block whose language is ``sh``, ``bash``, ``shell`` or ``console`` is
a list of commands, run in order, from the checkout's root (docs/readme-test.md
says how, and what the markers below mean):

- ``<!-- readme-test: skip reason="..." -->`` on a line of its own just before a
  block: the block is not run, and the test prints the reason;
- ``<!-- readme-test: expect "TEXT" -->`` (one per claim): the output of the
  block (stdout and stderr of its commands) contains TEXT;
- ``# exit N`` at the end of a command: the command exits with N (else 0);
- in a ``console`` block, lines starting with ``$ `` are commands and the other
  lines are what they print: each must appear in the output, in order, ``…``
  standing for any text (a time, a path).

Commands continue over lines ending in ``\\``.  Plain blocks (no language) are
output or file contents and are never run.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parent.parent
SHELL_LANGS: Final = frozenset({"sh", "bash", "shell", "console"})
MARKER: Final = re.compile(r"^<!--\s*readme-test:\s*(?P<what>skip|expect)\s+(?P<arg>.*?)\s*-->$")
FENCE: Final = re.compile(r"^(?P<indent> *)```(?P<lang>[A-Za-z]*)\s*$")
EXIT: Final = re.compile(r"\s+#\s*exit\s+(?P<code>\d+)\s*$")
SKIP_REASON: Final = re.compile(r'^reason="(?P<reason>[^"]+)"$')
EXPECT_TEXT: Final = re.compile(r'^"(?P<text>.+)"$')

#: Pages whose blocks are neither run nor linted yet, each with the reason printed.
PENDING: Final[dict[str, str]] = {}
#: Pages written for a user of the wheel, whose venv's bin/ is on PATH: there the
#: bare forms (``redletter ...``, ``python ...``) are the ones that run as printed.
WHEEL_PAGES: Final = frozenset({"docs/install.md"})


@dataclass(frozen=True)
class Command:
    """One command of a block: its text (continuations joined) and its exit status."""

    text: str
    exit: int = 0
    line: int = 0  #: the line of the file it starts on


@dataclass(frozen=True)
class Block:
    """One fenced shell block of a page."""

    page: str  #: relative to the root, e.g. ``README.md``
    line: int  #: the line of its opening fence
    lang: str
    commands: tuple[Command, ...]
    skip: str | None = None  #: the reason it is not run
    expects: tuple[str, ...] = ()  #: texts the output contains
    prints: tuple[str, ...] = ()  #: a console block's output lines, in order

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def pages(root: Path = ROOT) -> list[str]:
    """README.md, then docs/*.md in name order (the order the test runs them)."""
    return ["README.md", *(f"docs/{p.name}" for p in sorted((root / "docs").glob("*.md")))]


def _commands(lines: list[tuple[int, str]], console: bool) -> tuple[list[Command], list[str]]:
    commands: list[Command] = []
    prints: list[str] = []
    pending: list[str] = []
    start = 0
    for number, raw in lines:
        text = raw.rstrip()
        if not pending:
            if console:
                if not text.startswith("$ "):
                    if text:
                        prints.append(text)
                    continue
                text = text[2:]
            if not text.strip() or text.lstrip().startswith("#"):
                continue
            start = number
        if text.endswith("\\"):
            pending.append(text[:-1].rstrip())
            continue
        pending.append(text)
        joined = " ".join(p.strip() if i else p for i, p in enumerate(pending))
        pending = []
        code = 0
        found = EXIT.search(joined)
        if found is not None:
            code = int(found.group("code"))
            joined = joined[: found.start()]
        commands.append(Command(joined.strip(), code, start))
    if pending:
        raise ValueError(f"line {start}: a command ends in a continuation backslash")
    return commands, prints


def blocks(page: str, root: Path = ROOT) -> Iterator[Block]:
    """The shell blocks of ``page``, with their markers (ValueError on a bad marker)."""
    lines = (root / page).read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if fence is None:
            i += 1
            continue
        indent = fence.group("indent")
        end = i + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        lang = fence.group("lang")
        if lang in SHELL_LANGS:
            skip, expects = _markers(lines, i, page)
            body = [(n + 1, lines[n][len(indent) :]) for n in range(i + 1, end)]
            try:
                commands, prints = _commands(body, console=lang == "console")
            except ValueError as exc:
                raise ValueError(f"{page}: {exc}") from None
            yield Block(page, i + 1, lang, tuple(commands), skip, tuple(expects), tuple(prints))
        i = end + 1


def _markers(lines: list[str], fence: int, page: str) -> tuple[str | None, list[str]]:
    """The markers on the lines just above the fence (blank lines allowed between)."""
    skip: str | None = None
    expects: list[str] = []
    j = fence - 1
    while j >= 0 and (lines[j].strip() == "" or lines[j].lstrip().startswith("<!--")):
        found = MARKER.match(lines[j].strip())
        if found is None:
            if lines[j].strip():
                break
            j -= 1
            continue
        arg = found.group("arg")
        if found.group("what") == "skip":
            reason = SKIP_REASON.match(arg)
            if reason is None:
                raise ValueError(f'{page}:{j + 1}: a skip marker needs reason="..."')
            skip = reason.group("reason")
        else:
            text = EXPECT_TEXT.match(arg)
            if text is None:
                raise ValueError(f'{page}:{j + 1}: an expect marker needs "TEXT"')
            expects.insert(0, text.group("text"))
        j -= 1
    return skip, expects


def all_blocks(root: Path = ROOT) -> list[Block]:
    """Every shell block of every page (pending pages left out), in run order."""
    return [b for page in pages(root) if page not in PENDING for b in blocks(page, root)]


def program(command: str) -> str:
    """The program a command runs: its first word after ``VAR=value`` assignments
    (``(cd spec && java ...)`` gives ``cd``)."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        words = command.split()
    for w in words:
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", w):
            continue
        return w.lstrip("(")
    return ""


def printed_matches(printed: tuple[str, ...], output: str) -> str | None:
    """None when every printed line appears in ``output`` in order (``…`` matches any
    text); else the first line that does not."""
    at = 0
    for line in printed:
        pattern = ".*?".join(re.escape(part) for part in line.split("…"))
        found = re.compile(pattern).search(output, at)
        if found is None:
            return line
        at = found.end()
    return None


EXIT_MARK: Final = re.compile(r"^@@readme-test exit (?P<code>\d+) index (?P<i>\d+)@@$", re.M)


def script(commands: Sequence[str]) -> str:
    """One bash script for a block's commands, as a user types them into one shell
    (a variable or a ``cd`` carries over), each followed by a line with its status."""
    lines = []
    for i, c in enumerate(commands):
        lines += [c, f"printf '\\n@@readme-test exit %d index {i}@@\\n' $?"]
    return "\n".join(lines) + "\n"


def run_script(
    commands: Sequence[str], *, cwd: Path, env: Mapping[str, str], scratch: Path
) -> tuple[str, dict[int, int], list[str]]:
    """Run ``commands`` in one bash from ``cwd`` (the script itself in ``scratch``,
    stdin /dev/null): the output (stdout and stderr), each command's exit status by
    index, and the output of each command."""
    path = scratch / "block.sh"
    path.write_text(script(commands), encoding="utf-8")
    done = subprocess.run(
        ["bash", "-o", "pipefail", str(path)],
        stdin=subprocess.DEVNULL,
        cwd=cwd,
        env=dict(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=900,
    )
    output = done.stdout
    statuses = {int(m.group("i")): int(m.group("code")) for m in EXIT_MARK.finditer(output)}
    chunks = EXIT_MARK.split(output)
    said = [chunks[3 * i] if 3 * i < len(chunks) else "" for i in range(len(commands))]
    return output, statuses, said
