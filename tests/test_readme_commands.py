"""Every command printed in README.md and docs/*.md works as printed.

The fast tests read the pages (and the kit's own printed lines: --help texts, the
replay line, the explorer page's command) and check the form of every command:
``.venv/bin/redletter``, never a bare ``redletter``; no ``<placeholder>`` a shell
would read as a redirect; every skip with its reason, and few of them.  The slow
test runs every block, in order, in a fresh clone (docs/readme-test.md).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any, Final

import pytest
import typer

from redletter.cli import _command
from redletter.conformance.report import replay_command
from tests.readme_commands import (
    PENDING,
    ROOT,
    WHEEL_PAGES,
    Block,
    all_blocks,
    blocks,
    pages,
    printed_matches,
    program,
    run_script,
)

#: Programs a printed command must not start with: they are the venv's, and are on
#: no PATH after the quick start (.venv/bin/redletter, .venv/bin/python, ...).
BARE: frozenset[str] = frozenset({"redletter", "python", "python3", "pytest", "pip", "ruff"})
MAX_SKIPS = 18  #: skipped blocks allowed in all (each says why; docs/readme-test.md)
VERBS = (
    "check|fetch-tlc|check-java|explore|crosscheck|lemmas|diagram|explain|apalache|symbolic"
    "|conform|cos418|pipeline|flink|variants|teeth"
)
#: `redletter VERB ...` in a code span or a line of text, not after a path (/).
BARE_REDLETTER = re.compile(rf"(?<![/\w.-])redletter (?:{VERBS})\b")
PLACEHOLDER = re.compile(r"<[A-Za-z_][^<>\s]*>")


def _unquoted(command: str) -> str:
    """``command`` with its quoted parts removed (what a shell reads unquoted)."""
    return re.sub(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"", "''", command)


def test_every_page_parses_and_the_skips_say_why(capsys: pytest.CaptureFixture[str]) -> None:
    found = all_blocks()
    assert len(found) >= 20, "the pages lost their commands"
    skipped = [b for b in found if b.skip is not None]
    with capsys.disabled():
        for b in skipped:
            print(f"\n  skipped {b.where}: {b.skip}", end="")
        for page, why in PENDING.items():
            print(f"\n  pending {page}: {why}", end="")
    assert all(b.skip and len(b.skip) >= 20 for b in skipped)
    assert len(skipped) <= MAX_SKIPS, [b.where for b in skipped]
    assert all(b.commands for b in found), [b.where for b in found if not b.commands]


def test_printed_commands_use_the_venv_and_no_shell_placeholders() -> None:
    bad: list[str] = []
    for b in all_blocks():
        for c in b.commands:
            if program(c.text) in BARE and b.page not in WHEEL_PAGES:
                bad.append(f"{b.page}:{c.line}: starts with a bare {program(c.text)!r}")
            if BARE_REDLETTER.search(c.text) and b.page not in WHEEL_PAGES:
                bad.append(f"{b.page}:{c.line}: a bare `redletter` command: {c.text}")
            if PLACEHOLDER.search(_unquoted(c.text)):
                bad.append(f"{b.page}:{c.line}: an unquoted placeholder: {c.text}")
    assert bad == []


def test_commands_in_the_text_use_the_venv_too() -> None:
    bad = []
    for page in pages():
        if page in PENDING or page in WHEEL_PAGES:
            continue
        for n, line in enumerate((ROOT / page).read_text(encoding="utf-8").splitlines(), 1):
            for span in re.findall(r"`([^`]+)`", line):
                if BARE_REDLETTER.match(span.strip()):
                    bad.append(f"{page}:{n}: `{span}`")
    assert bad == []


def _help_texts() -> list[tuple[str, str]]:
    """Every command's --help text, as ``(command path, text)``."""
    out: list[tuple[str, str]] = []

    def walk(cmd: Any, path: str) -> None:
        out.append((path, cmd.get_help(typer.Context(cmd, info_name=path))))
        for name, sub in getattr(cmd, "commands", {}).items():
            walk(sub, f"{path} {name}")

    walk(_command(), "redletter")
    return out


def test_help_texts_print_commands_in_the_venv_form() -> None:
    bad = []
    texts = _help_texts()
    assert len(texts) >= 40, "the walk missed the subcommands"
    for path, text in texts:
        # The synopsis ("Usage: redletter conform run [OPTIONS]") is the program's
        # name as click prints it, not a command to copy.
        body = "\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("Usage:"))
        flat = re.sub(r"[\s│╭╮╰╯─]+", " ", body)
        bad += [f"{path}: {m.group(0)}" for m in BARE_REDLETTER.finditer(flat)]
    assert bad == []


def test_generated_lines_use_the_venv_form(tmp_path: Path) -> None:
    line = replay_command(tmp_path / "shrunk.itf.json", ".venv/bin/python -m my node")
    assert line == (
        f".venv/bin/redletter conform replay {tmp_path / 'shrunk.itf.json'}"
        " --node '.venv/bin/python -m my node'"
    )


def test_the_parser_reads_markers_exits_continuations_and_console_output(
    tmp_path: Path,
) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text(
        "text\n\n"
        '<!-- readme-test: expect "PASS: 1" -->\n'
        '<!-- readme-test: expect "two" -->\n'
        "```sh\n"
        "A=1 .venv/bin/redletter conform run \\\n"
        '    --node "x y"  # exit 1\n'
        "# a comment\n"
        "make check\n"
        "```\n\n"
        '<!-- readme-test: skip reason="needs a Spark master at host:7077" -->\n'
        "```console\n"
        "$ .venv/bin/redletter explore MCToken2\n"
        "Explored in …s.\n"
        "```\n"
        "```\nplain output, never run\n```\n",
        encoding="utf-8",
    )
    first, second = blocks("README.md", tmp_path)
    assert first.commands[0].text == 'A=1 .venv/bin/redletter conform run --node "x y"'
    assert (first.commands[0].exit, first.commands[0].line) == (1, 6)
    assert first.commands[1].text == "make check" and first.commands[1].exit == 0
    assert first.expects == ("PASS: 1", "two") and first.skip is None
    assert second.skip == "needs a Spark master at host:7077"
    assert second.prints == ("Explored in …s.",)
    assert program(first.commands[0].text) == ".venv/bin/redletter"
    assert printed_matches(second.prints, "x\nExplored in 0.03s.\n") is None
    assert printed_matches(second.prints, "Explored fast") == "Explored in …s."
    (tmp_path / "README.md").write_text("<!-- readme-test: skip -->\n```sh\nls\n```\n")
    needs = re.escape('README.md:1: a skip marker needs reason="..."')
    with pytest.raises(ValueError, match=needs):
        list(blocks("README.md", tmp_path))


# --------------------------------------------------------------------------- the run

#: What a fresh clone shares with the checkout instead of installing it again: the
#: venv (the quick start's `make check` and `make test`, which CI runs itself) and
#: the pinned TLC jar.
SHARED = (".venv", ".cache/tla2tools.jar")
#: Commands CI runs itself before this test (.ci/run): never run twice.
CI_RUNS = frozenset({"make check", "make test", "make test-slow", "make lint"})


def _fresh_clone(tmp_path: Path) -> Path:
    """A clone of the checkout's HEAD (commit first: the working tree's changes are
    not in it) sharing :data:`SHARED` with the checkout by symlink."""
    clone = tmp_path / "clone"
    subprocess.run(
        ["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(clone)],
        check=True,
        capture_output=True,
    )
    for rel in SHARED:
        (clone / rel).parent.mkdir(parents=True, exist_ok=True)
        (clone / rel).symlink_to(ROOT / rel)
    return clone


def _run_block(b: Block, clone: Path, env: dict[str, str]) -> tuple[list[str], int]:
    """Run ``b``'s commands in ``clone``: the problems found (none: it works as
    printed) and how many commands ran."""
    for c in b.commands:
        if c.text in CI_RUNS:
            print(f"  {b.page}:{c.line}: `{c.text}` not run: CI runs it before this test")
    commands = [c for c in b.commands if c.text not in CI_RUNS]
    if not commands:
        return [], 0
    start = time.monotonic()
    output, statuses, said = run_script(
        [c.text for c in commands], cwd=clone, env=env, scratch=clone.parent
    )
    print(f"  {b.where}: {len(commands)} commands, {time.monotonic() - start:.1f} s")
    problems: list[str] = []
    for i, c in enumerate(commands):
        got = statuses.get(i)
        if got != c.exit:
            tail = "\n    ".join((said[i] or output).strip().splitlines()[-12:])
            problems.append(
                f"{b.page}:{c.line}: `{c.text}` exited {got}, not {c.exit}:\n    {tail}"
            )
    problems += [f"{b.where}: the output lacks {t!r}" for t in b.expects if t not in output]
    missing = printed_matches(b.prints, output)
    if missing is not None:
        problems.append(f"{b.where}: the output lacks the printed line {missing!r}")
    return problems, len(commands)


@pytest.mark.slow
@pytest.mark.tlc
@pytest.mark.timeout(900)
def test_every_printed_command_runs_as_printed_in_a_fresh_clone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    for rel in SHARED:
        if not (ROOT / rel).exists():
            pytest.skip(f"{rel} is missing: run make check first (the quick start)")
    clone = _fresh_clone(tmp_path)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTEST_", "REDLETTER_")) and k != "VIRTUAL_ENV"
    }
    problems: list[str] = []
    ran = skipped = 0
    with capsys.disabled():
        print()
        for b in all_blocks(clone):
            if b.skip is not None:
                print(f"  {b.where}: skipped: {b.skip}")
                skipped += 1
                continue
            found, n = _run_block(b, clone, env)
            problems += found
            ran += n
        left = left_outside_store(clone)
        problems += [f"the commands left {x} (they write only under store/)" for x in left]
        print(f"  {ran} commands run, {skipped} blocks skipped, {len(problems)} problems")
    assert problems == [], "\n".join(problems)


#: What may be in a clone after the pages' commands besides its tracked files: the
#: run folders (store/), what the quick start makes (.venv, .cache: the TLC jar and,
#: in a checkout, TLC's state queues and logs) and Python's bytecode.
MAY_BE_LEFT = re.compile(r"^(store/|\.venv$|\.venv/|\.cache/)|(^|/)__pycache__/$|\.pyc$")


def left_outside_store(clone: Path) -> list[str]:
    """``git status`` of ``clone``: every tracked file changed and every file that is
    neither tracked nor allowed by :data:`MAY_BE_LEFT`, as ``XY path`` (git's two
    status letters: `` M`` changed, ``??`` new, ``!!`` new and ignored)."""
    done = subprocess.run(
        ["git", "status", "--porcelain", "--ignored=matching", "--untracked-files=all"],
        cwd=clone,
        check=True,
        capture_output=True,
        text=True,
    )
    out = []
    for line in done.stdout.splitlines():
        status, path = line[:2], line[3:]
        if status in ("??", "!!") and MAY_BE_LEFT.search(path):
            continue
        out.append(line)
    return out


def test_a_clone_with_a_changed_file_or_a_stray_one_is_reported(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    (repo / ".gitignore").write_text("store/\n.cache/\n__pycache__/\n", encoding="utf-8")
    (repo / "tracked.md").write_text("one\n", encoding="utf-8")
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
    subprocess.run([*git, "add", "."], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "x"], cwd=repo, check=True)
    for rel in ("store/run/report.html", ".cache/tlc-logs/MCToken2.log", "tests/__pycache__/x.pyc"):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text("", encoding="utf-8")
    assert left_outside_store(repo) == []
    (repo / "tracked.md").write_text("two\n", encoding="utf-8")
    (repo / "seed.html").write_text("", encoding="utf-8")
    assert left_outside_store(repo) == [" M tracked.md", "?? seed.html"]


#: Paths a page names that the commands make (not in the repository until then).
MADE: Final = ("store/", ".venv/", ".cache/", ".venv-flink/")


def test_nothing_the_readme_names_lies_outside_the_repository() -> None:
    """Every file or folder the README names, in a link or a code span that is a
    path, is in the repository (or is one the commands make: store/, .venv/)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    named = set(re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", text))
    named |= {
        span
        for span in re.findall(r"`([^`\s]+)`", text)
        if "/" in span and re.fullmatch(r"[\w.-]+(/[\w.*-]+)*/?", span)
    }
    assert named, "the README names no file"
    missing = sorted(
        n for n in named if not n.startswith(MADE) and not list(ROOT.glob(n.rstrip("/")))
    )
    assert missing == [], f"the README names what the repository does not hold: {missing}"


def test_the_readme_is_a_front_page_that_links_every_page() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250
    linked = set(re.findall(r"\]\((docs/[\w.-]+\.md)(?:#[\w-]*)?\)", readme))
    on_disk = {f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md")}
    assert on_disk - linked == set(), "a page of docs/ the README's table does not link"
    assert linked - on_disk == set(), "a link of the README to a page that is not there"
    for page in sorted(on_disk):  # every relative link of a page leads somewhere
        text = (ROOT / page).read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", text):
            assert (ROOT / "docs" / target).exists(), f"{page}: a link to {target}"
