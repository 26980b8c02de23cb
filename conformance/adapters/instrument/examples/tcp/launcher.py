"""Start the TCP token app: one OS process per node, snapshots, one log per node.

:func:`launch` starts a :mod:`.node` process per node (``python -m ...node``),
tells each its neighbours' ports (every node listens on an ephemeral port of
127.0.0.1), lets the application run a bounded number of steps, starts the
snapshots (every starter of a snapshot at once, every snapshot at once, a
seeded moment into the run), waits until every node has reported every
snapshot complete and the application idle, stops the nodes and returns the
logs: ``DIR/<node>.ndjson`` (or ``DIR/all.ndjson`` with ``shared=True``, every
process appending to one file).

The shape of the run (nodes, links, tokens, snapshots and their starters) is a
:class:`Shape`; :func:`shape_of_model` reads it from a TokenApp model, so the
logs validate against that model::

    python -m redletter.conformance.adapters.instrument.examples.tcp \\
        --model MCConcurrent --out /tmp/tcp-logs --seed 1
    .venv/bin/redletter conform validate MCConcurrent /tmp/tcp-logs/*.ndjson

Every node runs in the kit's sandbox (:mod:`redletter.conformance.sandbox`), the
nodes of one run sharing one loopback network (their TCP links) and one cgroup,
with only their own log file writable; ``Run.sandbox`` says which layers were
active.  Every random choice (link latencies, the moment snapshots start, each node's
sends) comes from ``seed``; the operating system's timing still varies, so two
runs of one seed need not write the same logs.  A node that dies or a run that
does not finish within ``timeout`` seconds raises
:class:`~redletter.conformance.process.NodeCrashed` /
:class:`~redletter.conformance.process.NodeTimeout`; every process is killed
before :func:`launch` returns.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import shlex
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import redletter.errors
from redletter.conformance.adapters.instrument.examples.tcp.node import BUGS
from redletter.conformance.process import NodeCrashed, NodeError, NodeTimeout
from redletter.conformance.sandbox import Sandbox, SandboxPolicy, SandboxReport
from redletter.errors import InputError, RedletterError, advice, escape_terminal
from redletter.project import kit_command, printed

__all__ = ["BUGS", "Run", "Shape", "launch", "shape_of_model"]

NODE_MODULE = "redletter.conformance.adapters.instrument.examples.tcp.node"
#: The directory the running kit's package ``redletter`` is imported from.
KIT_ROOT = str(Path(redletter.errors.__file__).absolute().parent.parent)


@dataclass(frozen=True)
class Shape:
    """What runs: the nodes, the links (src, dst), each node's tokens, and each
    snapshot's starters (every starter starts it)."""

    nodes: tuple[str, ...]
    links: tuple[tuple[str, str], ...]
    tokens: Mapping[str, int]
    snapshots: Mapping[int, tuple[str, ...]]


@dataclass(frozen=True)
class Run:
    """A finished run: its logs and what happened."""

    logs: tuple[Path, ...]
    seed: int
    bug: str | None
    started: Mapping[int, tuple[str, ...]]  #: snapshot -> the nodes told to start it
    stderr: Mapping[str, str] = field(default_factory=dict)  #: each node's stderr
    sandbox: SandboxReport | None = None  #: the layers of the sandbox the nodes ran in


def shape_of_model(name: str, spec_dir: Path) -> Shape:
    """The shape of TokenApp model ``name`` (e.g. MCConcurrent)."""
    from redletter.python_model.apps import TokenApp
    from redletter.python_model.config import load_model

    cfg = load_model(name, spec_dir)
    if not isinstance(cfg.app, TokenApp):
        raise InputError(
            f"the TCP example runs the token app; {name} runs {cfg.app_module}",
            code="RL-INPUT-MODEL",
        )
    return Shape(
        nodes=cfg.procs,
        links=cfg.chans,
        tokens={p: cfg.app.tokens[i] for i, p in enumerate(cfg.procs)},
        snapshots={
            k: tuple(p for i, p in enumerate(cfg.procs) if cfg.starters[j] >> i & 1)
            for j, k in enumerate(cfg.snaps)
        },
    )


class _Proc:
    def __init__(self, name: str, proc: asyncio.subprocess.Process) -> None:
        self.name = name
        self.proc = proc
        self.lines: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self.stderr = b""

    async def read(self) -> None:
        assert self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            self.lines.put_nowait(json.loads(line))
        self.lines.put_nowait(None)

    async def drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        self.stderr = await self.proc.stderr.read()

    def send(self, **message: Any) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(message) + "\n").encode())

    async def next(self, waiting_for: str) -> dict[str, Any]:
        """The node's next control line (NodeCrashed if it exits first)."""
        msg = await self.lines.get()
        if msg is None:
            await self.proc.wait()
            await asyncio.sleep(0)  # let drain_stderr finish reading
            raise NodeCrashed(
                f"node {self.name} exited (status {self.proc.returncode}) while the launcher "
                f"waited for {waiting_for}",
                node=self.name,
                exit_status=self.proc.returncode,
                stderr_tail=self.stderr.decode(errors="replace").splitlines()[-10:],
            )
        return msg

    async def expect(self, key: str) -> dict[str, Any]:
        """The node's next control line holding ``key`` (earlier ones are dropped)."""
        while key not in (msg := await self.next(repr(key))):
            pass
        return msg


async def _launch(
    shape: Shape,
    out: Path,
    *,
    seed: int,
    steps: int,
    bug: str | None,
    shared: bool,
    python: str,
    sandbox: Sandbox,
) -> Run:
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    logs = [out / "all.ndjson"] if shared else [out / f"{p}.ndjson" for p in shape.nodes]
    for log in logs:
        log.write_bytes(b"")
    procs: dict[str, _Proc] = {}
    helpers: list[asyncio.Task[None]] = []
    try:
        for p in shape.nodes:
            config = {
                "name": p,
                "inputs": [a for a, b in shape.links if b == p],
                "outputs": [b for a, b in shape.links if a == p],
                "tokens": shape.tokens.get(p, 0),
                "steps": steps,
                "seed": seed,
                "bug": bug,
                "log": str(logs[0] if shared else out / f"{p}.ndjson"),
                "shared": shared,
                "latency": {
                    b: rng.choice((0.0005, 0.002, 0.008)) for a, b in shape.links if a == p
                },
                "think": 0.0002,
                "patience": 0.005,
            }
            log = Path(str(config["log"]))
            launch = sandbox.launch(
                [python, "-m", NODE_MODULE, json.dumps(config)],
                env={
                    "PATH": "/usr/bin:/bin",
                    "LANG": "C.UTF-8",
                    "PYTHONUNBUFFERED": "1",
                    # The node imports the kit the launcher runs (the sandbox shows it),
                    # whatever the interpreter's own site-packages would pick.
                    "PYTHONPATH": KIT_ROOT,
                },
                writable=[log],
                home=True,
            )
            try:
                proc = await asyncio.create_subprocess_exec(
                    *launch.argv,
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                    pass_fds=launch.pass_fds,
                    env=launch.env,
                    start_new_session=True,
                )
            except BaseException:
                launch.abandon()
                raise
            sandbox.adopt(proc.pid)
            procs[p] = _Proc(p, proc)  # killed and reaped below if it does not start
            await asyncio.get_running_loop().run_in_executor(None, launch.started)
            helpers += [
                asyncio.create_task(procs[p].read()),
                asyncio.create_task(procs[p].drain_stderr()),
            ]
        ports = {p: (await x.expect("port"))["port"] for p, x in procs.items()}
        for x in procs.values():
            x.send(peers=ports)
        for x in procs.values():
            await x.expect("ready")
        for x in procs.values():
            x.send(go=True)
        await asyncio.sleep(rng.uniform(0.005, 0.03))
        started: dict[int, tuple[str, ...]] = {}
        for k, starters in sorted(shape.snapshots.items()):
            if starters:
                started[k] = starters
                for p in starters:
                    procs[p].send(start=k)
        for x in procs.values():
            need = {f"complete:{k}" for k in started} | {"idle"}
            while need:
                msg = await x.next("the snapshots to complete")
                need.discard("idle" if "idle" in msg else f"complete:{msg.get('complete')}")
        for x in procs.values():
            x.send(stop=True)
        for x in procs.values():
            await x.expect("bye")
            await x.proc.wait()
        await asyncio.gather(*helpers)
        return Run(
            tuple(logs),
            seed,
            bug,
            started,
            {p: x.stderr.decode(errors="replace") for p, x in procs.items()},
            sandbox.report(),
        )
    finally:
        for x in procs.values():
            if x.proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    x.proc.kill()
                await x.proc.wait()
        for task in helpers:
            task.cancel()


def launch(
    shape: Shape,
    out: Path,
    *,
    seed: int = 0,
    steps: int = 30,
    bug: str | None = None,
    shared: bool = False,
    timeout: float = 20.0,
    python: str | None = None,
    policy: SandboxPolicy | None = None,
) -> Run:
    """Run the TCP token app in the shape ``shape`` (see the module docstring).

    A relative ``out`` is the caller's: it is resolved against the current
    directory here, before the nodes start in the sandbox (whose working directory
    is its own), so each node is told the absolute path of its log."""
    out = Path(out).absolute()
    if bug is not None and bug not in BUGS:
        raise InputError(f"unknown bug {bug!r} (one of {', '.join(BUGS)})", code="RL-INPUT-USAGE")
    pol = replace(policy if policy is not None else SandboxPolicy(), network="loopback")

    async def bounded(sandbox: Sandbox) -> Run:
        try:
            return await asyncio.wait_for(
                _launch(
                    shape,
                    out,
                    seed=seed,
                    steps=steps,
                    bug=bug,
                    shared=shared,
                    python=_real_dir(shutil.which(python or sys.executable) or str(python)),
                    sandbox=sandbox,
                ),
                timeout,
            )
        except TimeoutError:
            raise NodeTimeout(
                f"the TCP run (seed {seed}) did not finish within {timeout} s",
                node=",".join(shape.nodes),
            ) from None

    with Sandbox(pol, name="tcp") as sandbox:
        return asyncio.run(bounded(sandbox))


def _real_dir(program: str) -> str:
    """``program`` with the symlinks of its directory resolved and its name kept: the
    sandbox shows a node real paths only (a ``.venv`` that links elsewhere), and a
    venv's ``python`` must keep its name to start in its venv."""
    full = os.path.abspath(program)
    return os.path.join(os.path.realpath(os.path.dirname(full)), os.path.basename(full))


def run_main(argv: Sequence[str] | None = None) -> int:
    """``python -m redletter.conformance.adapters.instrument.examples.tcp``."""
    import argparse

    from redletter.project import find_project

    ap = argparse.ArgumentParser(
        prog="python -m redletter.conformance.adapters.instrument.examples.tcp",
        description="Run the TCP token app (one process per node) and write one log per node.",
    )
    ap.add_argument(
        "--model", default="MCConcurrent", help="a TokenApp model (default: %(default)s)"
    )
    ap.add_argument("--out", type=Path, required=True, help="directory for the logs")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--steps", type=int, default=30, help="app steps per node")
    ap.add_argument("--bug", choices=BUGS, default=None, help="switch on one injected bug")
    ap.add_argument("--shared-log", action="store_true", help="every node appends to one file")
    ap.add_argument("--timeout", type=float, default=20.0)
    args = ap.parse_args(argv)
    out = Path(args.out)
    try:
        shape = shape_of_model(args.model, find_project().spec_dir)
        run = launch(
            shape,
            out,
            seed=args.seed,
            steps=args.steps,
            bug=args.bug,
            shared=args.shared_log,
            timeout=args.timeout,
        )
    except RedletterError as exc:
        sys.stderr.write(_error_lines(exc))
        return int(exc.exit_code)
    # The logs as the caller named them: relative to their directory when they were.
    shown = [_as_given(p, out) for p in run.logs]
    sys.stdout.write(
        f"seed {run.seed}: {len(run.logs)} log(s) in {out}; validate them with\n"
        f"  {kit_command()} conform validate {args.model} {' '.join(shown)}\n"
    )
    return 0


def _as_given(log: Path, out: Path) -> str:
    """``log`` (absolute, inside ``out``) written as the caller wrote ``out``."""
    return shlex.quote(str(out / log.name) if not out.is_absolute() else str(log))


def _error_lines(exc: RedletterError) -> str:
    """``error[CODE]: message``, the node's last stderr lines, and the help line."""
    lines = [f"error[{exc.code}]: {printed(escape_terminal(exc.message))}"]
    if isinstance(exc, NodeError) and exc.stderr_tail:
        lines.append(f"last lines of node {exc.node}'s stderr:")
        lines += [f"  {escape_terminal(t)}" for t in exc.stderr_tail]
    lines.append(f"help: {printed(advice(exc.code))}")
    return "\n".join(lines) + "\n"
