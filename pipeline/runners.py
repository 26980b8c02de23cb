"""Runners for :func:`redletter.pipeline.campaign.run_campaign`: judge one ITF trace against a node.

A runner takes a trace path and returns ``verdict``, ``steps``, ``seconds``,
``detail`` and ``actions`` (the action names the executed schedule used); it runs
:func:`redletter.conformance.judges.drive.judge_trace` (drive mode: every step compared with the
reference model, then every message drained and the snapshots reported).

- :func:`reference_runner`: the in-process reference node
  (``--runner redletter.pipeline.runners:reference_runner``);
- :func:`command_runner`: a runner for a node *command* (split with
  :func:`shlex.split`, run without a shell, one process per node, or one hosted);
- :func:`env_runner`: the command in ``$REDLETTER_NODE_CMD``
  (``--runner redletter.pipeline.runners:env_runner``; the variable must be set where the
  executors run);
- :func:`inprocess_runner`: any node factory in this process (e.g. a mutant of
  :data:`redletter.conformance.nodes.mutants.MUTANTS`), and :func:`mutant_runner` by name.

A trace that is not a schedule of its model is a bad input, not a verdict of the
node: the runner raises and the campaign records an ``error`` row saying so.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from redletter.conformance.judges.drive import (
    CommandNode,
    InProcessNode,
    JudgeResult,
    NodeSpec,
    judge_trace,
)
from redletter.conformance.node import NodeFactory
from redletter.conformance.traces import read_trace
from redletter.errors import InputError

__all__ = [
    "NODE_CMD_ENV",
    "command_runner",
    "env_runner",
    "inprocess_runner",
    "judge_one",
    "mutant_runner",
    "node_from_command",
    "reference_runner",
]

NODE_CMD_ENV = "REDLETTER_NODE_CMD"

Runner = Callable[[str], Mapping[str, Any]]


def _row(r: JudgeResult) -> dict[str, Any]:
    return {
        "verdict": r.verdict,
        "steps": len(r.executed),
        "seconds": r.seconds,
        "detail": r.explanation(),
        "actions": sorted({a for a, _ in r.executed}),
    }


def judge_one(path: str, node: NodeSpec, *, log_dir: Path | None = None) -> dict[str, Any]:
    """Judge the trace at ``path`` against ``node``: the campaign's result fields.

    Node logs go to ``log_dir`` (default: a temporary directory, removed after)."""
    trace = read_trace(Path(path))
    if log_dir is not None:
        return _row(judge_trace(trace, node, log_dir=log_dir))
    tmp = tempfile.mkdtemp(prefix="redletter-campaign-")
    try:
        return _row(judge_trace(trace, node, log_dir=Path(tmp)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def inprocess_runner(factory: NodeFactory, label: str = "in-process") -> Runner:
    """A runner judging every trace against nodes built by ``factory`` in this process."""
    node = InProcessNode(factory, label)

    def run(path: str) -> Mapping[str, Any]:
        return judge_one(path, node)

    return run


def reference_runner(path: str) -> Mapping[str, Any]:
    """Judge one trace against the in-process reference node (every trace passes)."""
    from redletter.conformance.nodes.reference import ReferenceNode

    return judge_one(path, InProcessNode(ReferenceNode, "reference"))


def mutant_runner(name: str) -> Runner:
    """A runner for mutant ``name`` of :data:`redletter.conformance.nodes.mutants.MUTANTS`."""
    from redletter.conformance.nodes.mutants import MUTANTS

    if name not in MUTANTS:
        raise InputError(
            f"no mutant named {name!r}; mutants: {', '.join(MUTANTS)}", code="RL-INPUT-NODE-CMD"
        )
    return inprocess_runner(MUTANTS[name].factory, f"mutant {name}")


def node_from_command(cmd: str, *, hosted: bool = False, timeout: float = 10.0) -> CommandNode:
    """The node of a command line (split with :func:`shlex.split`, never a shell)."""
    return CommandNode.parse(cmd, hosted=hosted, timeout=timeout)


def command_runner(cmd: str, *, hosted: bool = False, timeout: float = 10.0) -> Runner:
    """A runner judging every trace against the node command ``cmd``."""
    node = node_from_command(cmd, hosted=hosted, timeout=timeout)

    def run(path: str) -> Mapping[str, Any]:
        return judge_one(path, node)

    return run


def env_runner(path: str) -> Mapping[str, Any]:
    """Judge one trace against the node command in ``$REDLETTER_NODE_CMD``."""
    cmd = os.environ.get(NODE_CMD_ENV, "")
    if not cmd.strip():
        raise InputError(
            f"${NODE_CMD_ENV} is not set: it must hold the node command", code="RL-INPUT-NODE-CMD"
        )
    return judge_one(path, node_from_command(cmd))
