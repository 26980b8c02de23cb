"""The public API: load a model, make traces, and judge an implementation.

Everything an embedder needs is here and re-exported by :mod:`redletter`::

    import redletter as rl

    model = rl.load_model("MCToken2")                    # spec/MCToken2.tla + .cfg
    traces = rl.generate_traces(model, walks=2, seed=7)  # edge tours, z3 goals, walks
    node = rl.command_node("python -m mynode")           # or rl.InProcessNode(MyNode)
    for trace in traces:
        result = rl.check_trace(trace, node)
        if result.verdict is not rl.Verdict.PASS:
            print(result.explanation())                  # the first divergence, in words
            rl.write_trace(f"{trace.name}.itf.json", trace)

Three judges, one :class:`Verdict` (pass / fail / unknown, with its exit code) and
one :class:`Result` shape (verdict, explanation, divergence, schedule):

- :func:`check_trace` drives a node step by step along a trace (the harness is the
  network) and compares every observable step with the reference model;
- :func:`check_log` judges the NDJSON event logs of an implementation that ran by
  itself: on the run they record (no model), or replayed in a model;
- :func:`check_outcome` decides whether some FIFO schedule of a COS 418 scenario
  yields the snapshots a black box recorded;
- :func:`check_package` judges a COS 418 Go package as it is, run exactly as the
  course's own harness runs it, on a campaign of scenarios.

Heavy engines load on first use only (z3 when goal traces are generated).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from redletter.conformance.adapters.cos418.summary import CheckOptions, PackageCheck
from redletter.conformance.formats.cos418 import (
    Scenario,
    Snap,
    Topology,
    read_scenario,
    read_snap,
    read_topology,
)
from redletter.conformance.judges.drive import (
    CommandNode,
    InProcessNode,
    JudgeResult,
    NodeSpec,
    judge_trace,
)
from redletter.conformance.judges.log import Validation, validate_files
from redletter.conformance.judges.outcome import Judgement, judge_outcome
from redletter.conformance.traces import Trace, read_trace, write_trace
from redletter.conformance.verdict import Divergence, Result, Verdict
from redletter.errors import InputError, RedletterError
from redletter.project import find_project
from redletter.python_model.config import ModelConfig
from redletter.python_model.config import load_model as _load_model

__all__ = [
    "CommandNode",
    "Divergence",
    "InProcessNode",
    "Model",
    "NodeSpec",
    "RedletterError",
    "Result",
    "Trace",
    "Verdict",
    "check_log",
    "check_outcome",
    "check_package",
    "check_trace",
    "command_node",
    "generate_traces",
    "load_model",
    "model_from_text",
    "read_trace",
    "write_trace",
]

Model = ModelConfig
"""A model: the constants of one ``MC*.tla`` / ``.cfg`` pair, read as TLC reads them."""

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _model_name(name: str) -> str:
    if not _IDENT.fullmatch(name):
        raise InputError(
            f"model name {name!r} is not a TLA+ module name (letters, digits, _); "
            f"name a model of spec/manifest.json, e.g. MCToken2, not a path.",
            code="RL-INPUT-MODEL",
        )
    return name


def load_model(name: str, *, spec_dir: str | Path | None = None) -> Model:
    """The model ``name`` of ``spec_dir`` (default: the project's ``spec/``)."""
    where = Path(spec_dir) if spec_dir is not None else find_project().spec_dir
    return _load_model(_model_name(name), where)


def model_from_text(name: str, tla: str, cfg: str) -> Model:
    """A model from the texts of its ``MC*.tla`` module and ``.cfg`` file (the modules
    it extends come from the project's ``spec/``)."""
    import tempfile

    _model_name(name)
    spec = find_project().spec_dir
    with tempfile.TemporaryDirectory(prefix="redletter-model-") as tmp:
        d = Path(tmp)
        for module in spec.glob("*.tla"):
            (d / module.name).write_text(module.read_text(encoding="utf-8"), encoding="utf-8")
        (d / f"{name}.tla").write_text(tla, encoding="utf-8")
        (d / f"{name}.cfg").write_text(cfg, encoding="utf-8")
        return _load_model(name, d)


def generate_traces(
    model: Model | str,
    *,
    walks: int = 0,
    seed: int = 0,
    tours: bool = True,
    goals: bool = True,
    max_len: int = 60,
    spec_dir: str | Path | None = None,
) -> list[Trace]:
    """Traces of ``model``: tours that together cover every labelled edge of its state
    graph, z3-solved goal traces (two concurrent snapshots, a buffer recording two
    messages, ...) and ``walks`` seeded random walks on larger random topologies."""
    from redletter.conformance.traces import generate

    name = _model_name(model if isinstance(model, str) else model.name)
    where = Path(spec_dir) if spec_dir is not None else find_project().spec_dir
    return generate(name, where, walks=walks, seed=seed, tours=tours, goals=goals, max_len=max_len)


def command_node(command: str, *, hosted: bool = False, timeout: float = 10.0) -> CommandNode:
    """A node under test run as child processes of ``command`` (no shell): one per
    machine, or one ``hosted`` process for all; ``timeout`` bounds each reply (s)."""
    return CommandNode.parse(command, hosted=hosted, timeout=timeout)


def check_trace(trace: Trace, node: NodeSpec, *, log_dir: str | Path | None = None) -> JudgeResult:
    """Drive ``node`` along ``trace`` and judge every observable step against the model."""
    return judge_trace(trace, node, log_dir=Path(log_dir) if log_dir is not None else None)


def check_log(
    model: Model | str | None, logs: Sequence[str | Path], *, whole_run: bool = False
) -> Validation:
    """Judge event logs (one per process, or one holding them all).

    ``model`` None: on the run they record, without a model (EWD 864's rules,
    Lemma 0 and Lemma 1 on the run's own events, completion).  A model: replayed
    in it.  ``whole_run``: the logs hold the whole run even without end events
    (else what a log without one leaves open or owes at its end is unknown)."""
    paths = [Path(p) for p in logs]
    if model is None:
        from redletter.conformance.judges.runlog import validate_run_files

        return validate_run_files(paths, whole_run=whole_run)
    cfg = load_model(model) if isinstance(model, str) else model
    return validate_files(cfg, paths, whole_run=whole_run)


def check_outcome(
    topology: Topology | str | Path,
    scenario: Scenario | str | Path,
    snaps: Sequence[Snap | str | Path],
) -> Judgement:
    """Decide whether some FIFO schedule of a COS 418 scenario (``.top`` and
    ``.events``) yields the recorded snapshots (``.snap`` files)."""
    top = topology if isinstance(topology, Topology) else read_topology(Path(topology))
    events = scenario if isinstance(scenario, Scenario) else read_scenario(Path(scenario))
    recorded = [s if isinstance(s, Snap) else read_snap(Path(s)) for s in snaps]
    return judge_outcome(top, events, recorded)


def check_package(
    package: str | Path,
    *,
    scenarios: int = 50,
    seeds: int = 4,
    seed: int = 0,
    race: bool = False,
    store: str | Path | None = None,
    export: str | Path | None = None,
    options: CheckOptions | None = None,
) -> PackageCheck:
    """Judge the COS 418 Go package in ``package`` (either dialect of the assignment):
    build it with the kit's driver, run ``scenarios`` generated scenarios (and its own
    test_data) under ``seeds`` simulator seeds each, exactly as the course's harness
    runs a package, judge every run, shrink the first failure and write the run
    folder into ``store`` (default ``./store``).  ``options`` gives every setting at
    once (:class:`~redletter.conformance.adapters.cos418.CheckOptions`)."""
    from dataclasses import replace

    from redletter.conformance.adapters.cos418 import CheckOptions as Options
    from redletter.conformance.adapters.cos418 import check_package as check

    opts = (
        options
        if options is not None
        else Options(scenarios=scenarios, seeds=seeds, seed=seed, race=race)
    )
    if store is not None:
        opts = replace(opts, store=Path(store))
    if export is not None:
        opts = replace(opts, export=Path(export))
    return check(Path(package), opts)
