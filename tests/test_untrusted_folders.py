"""Folders others wrote: what the kit reads there and what it writes there.

A class folder, a student's package, a ``judge --batch`` folder, an ``--export``
folder, a store and a grade's ``--out`` folder may hold what someone planted: a
symbolic link to a secret, a hard link to a root-only file (``lstat`` sees a plain
file), a FIFO (that would block the kit), a dangling link where the kit is about
to write.  Every case here is refused with its message asserted word for word (or,
for a name the kit can pass over, passed over), nothing is followed, and a
planted secret is in no output.  No Go is needed: every refusal comes before a
build.  The Go side (a hard link embedded by a package, a package filling its
disk) is in ``tests/test_hostile_cos418.py``.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from redletter.cli import main
from redletter.conformance.adapters.cos418.export import check_export
from redletter.conformance.adapters.cos418.workspace import read_package
from redletter.conformance.formats.gosource import package_fingerprint, tokens
from redletter.conformance.report import new_run_folder
from redletter.errors import InputError
from redletter.pipeline.grade import _check_out, discover_submissions
from redletter.safewrite import SafeFolder
from tests.cos418_gallery import materialize

pytestmark = pytest.mark.timeout(60)  # a FIFO that is opened hangs: fail, do not hang

ROOT = Path(__file__).resolve().parent.parent
COS418 = ROOT / "tests" / "data" / "cos418"
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="hard links matter when the kit is root")


@pytest.fixture
def secret(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A root-only file holding a random token (on the same file system as tmp_path,
    so that it can be hard-linked)."""
    token = "rl-secret-" + secrets.token_hex(10)
    d = tmp_path / "secret-home"
    d.mkdir(mode=0o700)
    path = d / "secret"
    path.write_text(token + "\n")
    path.chmod(0o600)
    yield token, path


def _out(capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    got = capsys.readouterr()
    return got.out, got.err


def _batch(tmp_path: Path) -> Path:
    batch = tmp_path / "batch"
    batch.mkdir()
    (batch / "2nodes.events").write_bytes((COS418 / "2nodes.events").read_bytes())
    (batch / "2nodes.snap").write_bytes((COS418 / "0.snap").read_bytes())
    return batch


# --------------------------------------------------------------------------- reading


def test_judge_batch_never_follows_a_link_to_quote_it(
    tmp_path: Path, secret: tuple[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    token, path = secret
    batch = _batch(tmp_path)
    (batch / "2nodes.top").symlink_to(path)
    assert main(["cos418", "judge", "--batch", str(batch)]) == 5
    out, err = _out(capsys)
    assert err.splitlines()[0] == (
        f"error[RL-INPUT-COS418]: {batch / '2nodes.top'}: the file is a symbolic link (to"
        f" {path}): the kit never follows a link in a folder it reads (it could name a file you"
        " did not mean to show); put the file itself there"
    )
    assert token not in out + err


@as_root
def test_judge_batch_never_reads_a_hard_link_to_a_root_only_file(
    tmp_path: Path, secret: tuple[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    token, path = secret
    batch = _batch(tmp_path)
    os.link(path, batch / "2nodes.top")
    assert main(["cos418", "judge", "--batch", str(batch)]) == 5
    out, err = _out(capsys)
    assert err.splitlines()[0] == (
        f"error[RL-INPUT-COS418]: {batch / '2nodes.top'}: the file is a hard link (a file with 2"
        " names) owned by uid 0, while its folder belongs to uid 0: the kit runs as root and"
        " does not read a hard-linked file its folder's owner does not own (the other name may"
        " be a file they cannot read); put a copy of the file in its place"
    )
    assert token not in out + err


@as_root
def test_a_hard_link_its_folders_owner_owns_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    batch = _batch(tmp_path)
    own = tmp_path / "own.top"
    own.write_bytes((COS418 / "2nodes.top").read_bytes())
    os.link(own, batch / "2nodes.top")
    for p in (batch, own):
        os.chown(p, 4242, 4242)
    assert main(["cos418", "judge", "--verdict-only", "--batch", str(batch)]) in (0, 1)
    out, _ = _out(capsys)
    assert out.splitlines()[0] in ("2nodes: pass", "2nodes: fail")


@as_root
def test_a_package_holding_a_hard_link_to_a_root_only_file_is_refused_unread(
    tmp_path: Path, secret: tuple[str, Path]
) -> None:
    token, path = secret
    pkg = materialize("servers/base", tmp_path / "g")
    os.link(path, pkg / "notes.txt")
    with pytest.raises(InputError) as err:
        read_package(pkg)
    assert err.value.message == (
        f"{pkg}: notes.txt is a hard link (a file with 2 names) owned by uid 0, while its folder"
        " belongs to uid 0: the kit runs as root and does not read a hard-linked file its"
        " folder's owner does not own (the other name may be a file they cannot read); put a"
        " copy of the file in its place"
    )
    assert token not in err.value.message
    # Graded in a class, it is a row of its own: bad input, never read.
    folder = tmp_path / "class"
    folder.mkdir()
    pkg.rename(folder / "ann")
    (sub,) = discover_submissions(folder)
    assert (
        sub.bad.startswith(f"{folder / 'ann'}: notes.txt is a hard link") and token not in sub.bad
    )


def test_a_folder_swapped_for_a_link_is_never_followed(
    tmp_path: Path, secret: tuple[str, Path]
) -> None:
    token, path = secret
    pkg = materialize("servers/base", tmp_path / "g")
    data = pkg / "test_data"
    for f in data.iterdir():
        f.unlink()
    data.rmdir()
    data.symlink_to(path.parent)
    with pytest.raises(InputError) as err:
        read_package(pkg)
    assert err.value.message == (
        f"{pkg}: test_data is a symbolic link (to {path.parent}); the kit reads only plain files"
        " and folders of a package (it never follows links or opens FIFOs, devices or"
        " sockets): remove it or copy the package without it"
    )
    assert token not in err.value.message


def test_a_class_lists_every_folder_it_cannot_grade_as_bad_input(tmp_path: Path) -> None:
    folder = tmp_path / "class"
    folder.mkdir()
    materialize("servers/base", tmp_path / "g").rename(folder / "Jane Doé")
    (folder / "link").symlink_to(folder / "Jane Doé")
    (folder / ".hidden").mkdir()
    os.mkfifo(folder / "fifo")
    (folder / "README.txt").write_text("not a submission\n")
    subs = {s.name: s for s in discover_submissions(folder)}
    assert sorted(subs) == [".hidden", "Jane Doé", "fifo", "link"]
    assert subs["Jane Doé"].bad == "" and len(subs["Jane Doé"].digest) == 64
    assert subs["Jane Doé"].folder == "Jane-Do-" + subs["Jane Doé"].folder[-8:]
    assert subs["link"].bad == (
        f"a symbolic link (to {folder / 'Jane Doé'}): the kit never follows a link to a"
        " submission (it could name a folder that is not the student's); put the folder itself"
        " in the class"
    )
    assert subs[".hidden"].bad == (
        "a hidden folder (its name starts with a dot): listed as bad input so that it is seen,"
        " not left out; rename it to grade it"
    )
    assert subs["fifo"].bad == "a FIFO, not a folder: a submission is a folder"


# --------------------------------------------------------------------------- writing


def test_a_safe_folder_writes_replaces_and_refuses_what_was_planted(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.write_text("untouched\n")
    d = tmp_path / "d"
    d.mkdir()
    (d / "old").write_text("old\n")
    (d / "link").symlink_to(outside)
    (d / "dangling").symlink_to(tmp_path / "nowhere")
    os.mkfifo(d / "fifo")
    with SafeFolder(d, code="RL-INPUT-USAGE") as folder:
        folder.write("new", "new\n")
        folder.write("old", "replaced\n")
        for name, what in (
            ("link", f"a symbolic link (to {outside})"),
            ("dangling", f"a symbolic link (to {tmp_path / 'nowhere'})"),
            ("fifo", "a FIFO (named pipe)"),
        ):
            with pytest.raises(InputError) as err:
                folder.write(name, "x")
            assert err.value.message == (
                f"{d}: {name} is {what}, where the kit writes a file: it never writes through a"
                " link nor opens what others left in its folders; remove it (or give another"
                " folder)"
            )
        with pytest.raises(InputError) as err:
            folder.folder("link")
        assert err.value.message.startswith(f"{d}: link is a symbolic link (to {outside}), where")
        with pytest.raises(InputError) as err:
            folder.check("sub/fifo", "fifo")
        assert err.value.message.startswith(f"{d}: fifo is a FIFO (named pipe), where the kit")
        with folder.folder("sub") as sub:
            sub.write("f", b"\x00")
    assert (d / "new").read_text() == "new\n" and (d / "old").read_text() == "replaced\n"
    assert outside.read_text() == "untouched\n" and not (tmp_path / "nowhere").exists()
    assert sorted(p.name for p in d.iterdir()) == ["dangling", "fifo", "link", "new", "old", "sub"]


def test_export_refuses_links_and_fifos_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    victim = tmp_path / "victim"
    victim.write_text("untouched\n")
    dest = tmp_path / "export"
    dest.mkdir()
    (dest / "README.txt").symlink_to(victim)
    with pytest.raises(InputError) as err:
        check_export(dest)
    assert err.value.message == (
        f"{dest}: README.txt is a symbolic link (to {victim}), where the kit writes a file: it"
        " never writes through a link nor opens what others left in its folders; remove it (or"
        " give another folder)"
    )
    (dest / "README.txt").unlink()
    (dest / "test_data").symlink_to(tmp_path)
    with pytest.raises(InputError) as err:
        check_export(dest)
    assert err.value.message.startswith(f"{dest}: test_data is a symbolic link (to {tmp_path}),")
    (dest / "test_data").unlink()
    os.mkfifo(dest / "redletter_repro_test.go")
    # On the command line: bad input at once, before the package is built.
    pkg = materialize("servers/base", tmp_path / "g")
    code = main(["cos418", "test", str(pkg), "--export", str(dest), "--store", str(tmp_path / "s")])
    assert code == 5
    _, err_text = _out(capsys)
    assert err_text.splitlines()[0] == (
        f"error[RL-INPUT-USAGE]: {dest}: redletter_repro_test.go is a FIFO (named pipe), where"
        " the kit writes a file: it never writes through a link nor opens what others left in"
        " its folders; remove it (or give another folder)"
    )
    assert victim.read_text() == "untouched\n"


def test_dangling_links_in_the_store_are_passed_over_or_a_typed_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "store"
    store.mkdir()
    now = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
    planted = store / "20250102T030405Z-cos418-pkg"
    planted.symlink_to(tmp_path / "elsewhere")
    folder = new_run_folder(store, "cos418-pkg", now=now)
    assert folder.path == store / "20250102T030405Z-cos418-pkg-2" and folder.logs.is_dir()
    assert planted.is_symlink() and not (tmp_path / "elsewhere").exists()
    # A store that is itself a dangling link: bad input, not an internal error.
    dangling = tmp_path / "dangling-store"
    dangling.symlink_to(tmp_path / "gone")
    pkg = materialize("servers/base", tmp_path / "g")
    assert main(["cos418", "test", str(pkg), "--store", str(dangling)]) == 5
    _, err = _out(capsys)
    assert err.splitlines()[0] == (
        f"error[RL-INPUT-USAGE]: {dangling}: cannot write run folders into {dangling}: cannot"
        " write into it: File exists; give a writable folder with --store"
    )


def test_a_grades_folder_with_planted_links_or_fifos_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "grade"
    (out / "journal").mkdir(parents=True)
    (out / "journal" / "results-x-00000.ndjson").symlink_to(tmp_path / "anything")
    with pytest.raises(InputError) as err:
        _check_out(out)
    assert err.value.message == (
        f"{out}: journal/results-x-00000.ndjson is not a plain file (a link or a FIFO?): the"
        " grade reads only the journals it wrote; remove it"
    )
    (out / "journal" / "results-x-00000.ndjson").unlink()
    os.mkfifo(out / "gradebook.html")
    with pytest.raises(InputError) as err:
        _check_out(out)
    assert err.value.message.startswith(f"{out}: gradebook.html is a FIFO (named pipe), where")


# --------------------------------------------------------------------------- copies


def test_go_tokens_drop_comments_and_layout_and_keep_literals() -> None:
    a = (
        "package p\n\n// Send forwards.\nfunc Send(x int) string {\n"
        '\ts := "a  // b" /* c */\n\tr := `raw\r\n  /* kept */`\n'
        '\treturn s + r + "\\"" + string(\'"\')\n}\n'
    )
    b = (
        'package p\nfunc Send(x int) string { s := "a  // b"; r := `raw\n  /* kept */`;'
        ' return s + r + "\\"" + string(\'"\') }'
    )
    assert tokens(a) == tokens(b)
    assert '"a  // b"' in tokens(a) and "`raw\n  /* kept */`" in tokens(a)
    assert tokens(a.replace('"a  // b"', '"a // b"')) != tokens(a), "string literals are kept"
    assert tokens("x := a\n-b\n") != tokens("x := a -b\n"), "a newline ends a statement"
    assert tokens("v := 0x1e+2") == ["v", ":=", "0x1e", "+", "2", ";"]
    assert tokens("v := 1.5e+2i") == ["v", ":=", "1.5e+2i", ";"]
    same = package_fingerprint({"server.go": a.encode(), "sim.go": b"package p\n"})
    assert same == package_fingerprint({"node.go": b"package p", "x.go": b.encode()})
    assert same != package_fingerprint({"server.go": a.replace("Send", "Sent").encode()})
    assert package_fingerprint({}) == ""
