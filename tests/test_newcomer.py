"""The newcomer's path (issue 22): the small things a first run trips over, each
with its message word for word."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from redletter.cli import _missing_extra, main
from redletter.cli.live import ProgressLines
from redletter.cli.ui import plural
from redletter.conformance.traces import QUICK_TRACES, Trace, make_step, quick_subset
from redletter.errors import InputError, did_you_mean
from redletter.manifest import load_manifest
from redletter.project import kit_command
from redletter.python_model.config import load_model

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "spec"


def test_a_misspelt_model_gets_the_closest_name() -> None:
    with pytest.raises(InputError) as info:
        load_model("MCTokn2", SPEC)
    assert str(info.value).startswith(
        f"unknown model 'MCTokn2' in {SPEC}; did you mean 'MCToken2'?"
        " (available: MCToken2, MCLazyToken2, "
    )
    with pytest.raises(InputError) as info:
        load_model("Nothing", SPEC)
    assert str(info.value).startswith(f"unknown model 'Nothing' in {SPEC} (available: ")
    assert str(info.value).endswith(" more)")  # the closest 8, not all of them
    with pytest.raises(InputError) as info:
        load_manifest(SPEC / "manifest.json").select(["MCSed"])
    assert str(info.value).startswith(
        f"{SPEC / 'manifest.json'}: unknown model(s) MCSed (did you mean 'MCSeed'?); the"
        " manifest lists MCSeed, MCSequential, "
    )
    assert did_you_mean("MCConcurent", ["MCConcurrent", "MCConcurrent3"]) == (
        "did you mean 'MCConcurrent'?"
    )
    assert did_you_mean("xyz", ["MCToken2"]) == ""


def test_one_trace_is_a_trace() -> None:
    assert [plural(n, "trace") for n in (0, 1, 2)] == ["0 traces", "1 trace", "2 traces"]
    assert plural(1, "run", "runs") == "1 run"


def test_progress_lines_every_n_items_or_every_ten_seconds() -> None:
    now = [0.0]
    lines = ProgressLines("judging traces", 60, clock=lambda: now[0])
    shown = []
    for i in range(60):
        now[0] = i * 0.1 if i < 30 else 3 + (i - 29) * 4.0
        line = lines.advance(f"{i + 1} pass")
        if line is not None:
            shown.append(line)
    # 25 items in 2.4 s: a line for the count; then one item every 4 s: a line when
    # 10 s have passed since the last (every third item), and one for the last.
    assert shown == [
        "judging traces: 25 of 60 done (25 pass), 2 s",
        *(
            f"judging traces: {n} of 60 done ({n} pass), {t} s"
            for n, t in zip(range(33, 61, 3), range(15, 124, 12), strict=True)
        ),
    ]
    counter = ProgressLines("shrinking the failure", None, clock=lambda: 0.0)
    assert [counter.advance() for _ in range(25)][-1] == "shrinking the failure: 25 done, 0 s"


def _trace(name: str, source: str, *steps: tuple[str, dict[str, object]]) -> Trace:
    return Trace(name, "MCToy", source, tuple(make_step(a, p) for a, p in steps), "", "")


def test_the_quick_subset_keeps_goals_and_picks_tours_that_add_steps() -> None:
    a: tuple[str, dict[str, object]] = ("SendApp", {"c": ["p1", "p2"], "m": 1})
    b: tuple[str, dict[str, object]] = ("ReceiveApp", {"c": ["p1", "p2"]})
    c: tuple[str, dict[str, object]] = ("StartSnapshot", {"p": "p1", "k": 1})
    traces = [
        _trace("t1", "edge-tour", a, b),
        _trace("t2", "edge-tour", a, b),  # adds nothing t1 has not
        _trace("t3", "edge-tour", c, a),
        _trace("g1", "z3 goal records-2", a),
        _trace("t4", "edge-tour", b, a),  # only the pair (b, a) is new
    ]
    picked = [t.name for t in quick_subset(traces, seed=0)]
    assert picked[0] != "t2" and "g1" in picked and len(picked) == 4
    assert {"t1", "t2"} & set(picked) and not {"t1", "t2"} <= set(picked)
    assert picked == [t.name for t in quick_subset(traces, seed=0)]  # one seed, one subset
    assert [t.name for t in quick_subset(traces, seed=0, limit=1)] == ["g1"]
    with pytest.raises(ValueError, match="limit must be at least 1, not 0"):
        quick_subset(traces, seed=0, limit=0)


def test_the_cli_says_the_same_quick_limit_as_the_library() -> None:
    from redletter.cli import conform

    assert conform.QUICK_TRACES == QUICK_TRACES


def test_a_node_usage_error_is_bad_input_not_a_fail(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    node = tmp_path / "node.py"
    node.write_text(
        "import sys\nprint('usage: node.py NAME', file=sys.stderr)\nsys.exit(2)\n",
        encoding="utf-8",
    )
    code = main(
        [
            "conform",
            "run",
            "--quick",
            "--node",
            f"{sys.executable} {node}",
            "--store",
            str(tmp_path / "store"),
            "--root",
            str(ROOT),
            # The node must run to print its usage: pytest's tmp_path (0700) is not
            # readable by the sandbox's own user.
            "--sandbox",
            "off",
        ]
    )
    err = capsys.readouterr().err.splitlines()
    assert code == 5
    assert err[0] == (
        "error[RL-INPUT-NODE-USAGE]: the node command looks wrong: node p1 exited with status"
        " 2, the status of a usage error, before its first step, so no trace was judged (a"
        " usage error is not a verdict on the algorithm)."
    )
    # ("before replying to" or "while the harness sent it to": whichever it was doing)
    assert err[1].startswith("node p1 exited with status 2 ")
    assert err[1].endswith(" to init (msg_id 1).")
    assert err[-1].startswith("help: read the node's last lines in the message, fix the arguments")


def test_explain_says_where_it_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["explain", "--root", str(ROOT)]) == 0
    assert capsys.readouterr().out.splitlines()[0] == (
        f"wrote {tmp_path / 'explain.html'} (MCSeed, 17 steps)"
    )
    assert main(["diagram", "MCSeed", "--seed-example", "--root", str(ROOT)]) == 0
    assert (
        capsys.readouterr()
        .out.splitlines()[0]
        .startswith(f"wrote {tmp_path / 'diagram.svg'} (17 steps, ")
    )


def test_the_tcp_example_takes_a_relative_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from redletter.conformance.adapters.instrument.examples.tcp.launcher import run_main

    monkeypatch.chdir(tmp_path)
    assert run_main(["--model", "MCConcurrent", "--out", "store/tcp", "--seed", "3"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "seed 3: 2 log(s) in store/tcp; validate them with",
        # the kit as it runs from tmp_path (the checkout's by its path; test_outside_checkout)
        f"  {kit_command()} conform validate MCConcurrent store/tcp/p1.ndjson store/tcp/p2.ndjson",
    ]
    assert (tmp_path / "store/tcp/p1.ndjson").stat().st_size > 0
    assert (tmp_path / "store/tcp/p2.ndjson").stat().st_size > 0


def test_a_missing_extra_says_which_and_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(ROOT)  # in the checkout's root, `make extra-spark` is what exists
    assert _missing_extra(ModuleNotFoundError("no pyspark", name="pyspark.sql")) == (
        "RL-ENV-SPARK",
        "this command needs the 'spark' extra, which is not installed (no module 'pyspark'):"
        " run `make extra-spark`",
    )
    assert _missing_extra(ModuleNotFoundError("no thing", name="thing")) is None


#: Run a command of the core with every extra made unimportable.
_BLOCKED = """
import sys, importlib.abc
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {blocked!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None
sys.meta_path.insert(0, Block())
from redletter.cli import main
raise SystemExit(main({argv!r}))
"""
EXTRA_MODULES = (
    "pyspark",
    "pyarrow",
    "py4j",
    "playwright",
    "greenlet",
    "adhoccomputing",
    "networkx",
    "requests",
    "pytest",
    "hypothesis",
    "mypy",
)


@pytest.mark.parametrize(
    "argv",
    [
        ["explore", "MCToken2"],
        ["explain", "-o", "{tmp}/e.html"],
        ["conform", "traces", "MCToken2", "--out", "{tmp}/traces"],
        ["pipeline", "explore", "MCToken2", "--graph", "{tmp}/g"],
    ],
    ids=["explore", "explain", "traces", "pipeline"],
)
def test_the_core_commands_need_no_extra(argv: list[str], tmp_path: Path) -> None:
    args = [a.format(tmp=tmp_path) for a in argv]
    code = _BLOCKED.format(blocked=set(EXTRA_MODULES), argv=args)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if argv[0] == "pipeline":  # Spark's: the one that needs an extra says which
        assert done.returncode == 3, done.stderr
        assert done.stderr.splitlines()[0] == (
            "error[RL-ENV-SPARK]: this command needs the 'spark' extra, which is not installed"
            " (no module 'pyarrow'): run `make extra-spark`"
        )
    else:
        assert done.returncode == 0, done.stderr


def test_make_flink_results_writes_the_tracked_file_only_when_asked() -> None:
    def recipe(*extra: str) -> list[str]:
        done = subprocess.run(
            ["make", "-n", "-o", "flink", "flink-results", *extra],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        return [
            ln
            for ln in done.stdout.splitlines()
            if ln.startswith((".venv/bin/redletter flink run", "if [ -n"))
        ]

    plain = recipe()
    assert len(plain) == 4
    assert all("--publish store/flink-results.json" in ln for ln in plain[:3])
    assert "docs/data" not in "\n".join(plain[:3])
    published = recipe("PUBLISH=1")
    assert all("--publish docs/data/flink-results.json" in ln for ln in published[:3])
    assert "python -m redletter.variants > docs/variants.md.tmp" in published[3]


def test_a_program_behind_a_symlinked_directory_runs_from_its_real_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from redletter.conformance.process import _resolve_argv

    (tmp_path / "real" / "bin").mkdir(parents=True)
    (tmp_path / "real" / "bin" / "python").symlink_to(sys.executable)  # a venv's python
    (tmp_path / "real" / "node.py").write_text("", encoding="utf-8")
    (tmp_path / ".venv").symlink_to(tmp_path / "real")
    monkeypatch.chdir(tmp_path)
    real = os.path.realpath(tmp_path / "real")
    assert _resolve_argv([".venv/bin/python", ".venv/node.py", "-x", "word"]) == (
        f"{real}/bin/python",  # the link's own name: the venv's, not its base interpreter
        f"{real}/node.py",
        "-x",
        "word",
    )
