"""The drive judge: replay a trace through the driver and compare every step with
the reference model.

For every step of the trace the model takes the step (``redletter.python_model.actions.step``)
and the judge derives from the successor state ``s -> s'`` everything the node
must show (the seam is :class:`~redletter.conformance.net.Observation`):

- what goes on the wire: per channel, the messages appended to ``buf`` (the app
  message of a SendApp, the red letters of a machine turning red), in order;
- what is recorded: the local state (``recMachine[k][p]`` defined), the app
  messages appended to ``recBuf[k][c]``, the buffers turning red
  (``redBuf[k]``: the node closes that channel's recording);
- completions: all of the acting machine's input buffers red in snapshot k.

After the schedule (and, by default, after draining every message still in
flight in FIFO order, so that every started snapshot can complete) the judge
asks every node to ``report`` every snapshot and compares the answers with the
model's recorded snapshot S* (``recMachine[k]``, ``recBuf[k]``).

The first difference is a :class:`~redletter.conformance.verdict.Divergence`,
explained in words: what the model did, what the node did, and which of
Dijkstra's lemmas (or invariants) that breaks.  The result is a
:class:`JudgeResult` (a :class:`~redletter.conformance.verdict.Result`).
Verdicts: ``pass`` (exit 0), ``fail`` (exit 1), ``unknown`` (exit 2: a node
timed out, or a snapshot cannot complete because the application cannot receive
what is in flight, so liveness cannot be judged).
"""

from __future__ import annotations

import os
import shlex
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, TypeAlias, cast

import redletter.stopping as stopping
from redletter.conformance import protocol as p
from redletter.conformance.driver import Driver, InProcessTransport, ProcessTransport, Transport
from redletter.conformance.net import Observation, Topology, show_channel, show_msg
from redletter.conformance.node import NodeFactory, NodeHost
from redletter.conformance.process import (
    Limits,
    NodeCrashed,
    NodeError,
    NodeProtocolError,
    NodeTimeout,
    escape_terminal,
)
from redletter.conformance.sandbox import SandboxPolicy, SandboxReport
from redletter.conformance.traces import Step, Trace, make_step, model_of, replay_states
from redletter.conformance.verdict import Divergence, Verdict
from redletter.errors import InputError
from redletter.python_model.actions import ActionDisabled, step, successors
from redletter.python_model.config import ModelConfig
from redletter.python_model.state import Local, State

__all__ = [
    "CommandNode",
    "Expected",
    "InProcessNode",
    "JudgeResult",
    "JudgeRun",
    "NodeSpec",
    "StepContext",
    "after_last_reply",
    "check_names",
    "clip",
    "compare_completed",
    "compare_recorded",
    "compare_report",
    "drain_steps",
    "expected_effects",
    "judge_all",
    "judge_trace",
    "model_json",
    "open_transport",
]


# --------------------------------------------------------------------------- nodes


@dataclass(frozen=True)
class InProcessNode:
    """Nodes as Python objects in this process (``factory`` builds one per ``init``)."""

    factory: NodeFactory
    label: str = "in-process"

    def describe(self) -> str:
        return self.label


@dataclass(frozen=True)
class CommandNode:
    """Nodes as child processes running ``argv`` (one per node, or one ``hosted``)."""

    argv: tuple[str, ...]
    hosted: bool = False
    limits: Limits = field(default_factory=Limits)
    isolate: bool = True  #: False: the sandbox's limits and lifetime only (``--sandbox off``)
    sandbox: SandboxPolicy = field(default_factory=SandboxPolicy)

    def describe(self) -> str:
        return " ".join(self.argv) + (" (hosted)" if self.hosted else "")

    @property
    def policy(self) -> SandboxPolicy:
        """The sandbox the node runs in."""
        return self.sandbox if self.isolate else SandboxPolicy.off()

    @staticmethod
    def parse(
        cmd: str,
        *,
        hosted: bool = False,
        timeout: float = 10.0,
        sandbox: SandboxPolicy | None = None,
    ) -> CommandNode:
        """The node of a command line, split with :func:`shlex.split` (never a shell).

        An empty command, one that does not split, or a program that is not on
        PATH is an :class:`InputError` naming ``--node``.
        """
        try:
            argv = tuple(shlex.split(cmd))
        except ValueError as exc:
            raise InputError(
                f"--node: cannot split {cmd!r}: {exc}", code="RL-INPUT-NODE-CMD"
            ) from None
        if not argv:
            raise InputError("--node: the node command is empty", code="RL-INPUT-NODE-CMD")
        if shutil.which(argv[0]) is None:
            raise InputError(
                f"--node: cannot run {argv[0]!r}: {_not_runnable(argv[0])}",
                code="RL-INPUT-NODE-CMD",
            )
        return CommandNode(
            argv,
            hosted=hosted,
            limits=Limits(request_timeout=timeout),
            sandbox=sandbox if sandbox is not None else SandboxPolicy(),
        )


def _not_runnable(program: str) -> str:
    """Why ``program`` (the first word of ``--node``, which PATH does not run) cannot
    be run, and what to do."""
    if os.sep not in program:
        return (
            "no such program on PATH; give its path (./mynode), or the interpreter"
            " first (--node 'python3 mynode.py')"
        )
    path = Path(program)
    if not path.exists():
        return "no such file"
    if path.is_dir():
        return "it is a directory, not a program"
    return (
        "the file is not executable; make it so (chmod +x), or give its interpreter"
        f" first (--node 'python3 {program}')"
    )


NodeSpec: TypeAlias = InProcessNode | CommandNode


def open_transport(node: NodeSpec, nodes: Sequence[str], log_dir: Path | None) -> Transport:
    """Start the nodes of one run (in one sandbox that hides the run's folder; their
    logs in ``log_dir``, by default ``store/logs`` below the working directory)."""
    log_dir = log_dir if log_dir is not None else Path.cwd() / "store" / "logs"
    if isinstance(node, InProcessNode):
        return InProcessTransport(NodeHost(node.factory))
    make = ProcessTransport.hosted if node.hosted else ProcessTransport.per_node
    logs = log_dir.resolve()
    # A run folder's logs (store/<run>/logs): the whole run folder is hidden.
    policy = node.policy.with_hidden(logs, *((logs.parent,) if logs.name == "logs" else ()))
    return make(node.argv, nodes, log_dir=log_dir, limits=node.limits, policy=policy)


# --------------------------------------------------------------------------- values


def _json(cfg: ModelConfig, s: Local | None) -> p.JsonValue:
    """A model local state in the protocol's JSON (``None`` for no state)."""
    return None if s is None else cfg.app.local_to_json(s)


_SHOWN: Final = 200  #: characters of a value a node gave, quoted in an explanation


def _clip(text: str) -> str:
    text = escape_terminal(text, newlines=True)
    return text if len(text) <= _SHOWN else text[:_SHOWN] + f"... ({len(text)} characters)"


def _show_json(v: p.JsonValue) -> str:
    def show(v: p.JsonValue, depth: int) -> str:
        if depth > 20:
            return "..."
        if isinstance(v, list):
            return "[" + ", ".join(show(x, depth + 1) for x in v[:50]) + "]"
        if isinstance(v, dict):
            items = sorted(v.items())[:50]
            return "[" + ", ".join(f"{k} = {show(x, depth + 1)}" for k, x in items) + "]"
        if isinstance(v, bool):
            return "TRUE" if v else "FALSE"
        return "nothing" if v is None else str(v)

    return _clip(show(v, 0))


def _show_seq(xs: Sequence[int]) -> str:
    return _clip("[" + ", ".join(str(x) for x in xs[:50]) + ("..." if len(xs) > 50 else "") + "]")


#: A message on a channel, tagged: ``("app", v)`` or ``("marker", k)``.  App
#: payloads and markers never share an encoding (the model writes a red letter
#: of snapshot k as -k in its buffers; a node's app message -1 is not marker 1).
Wire: TypeAlias = tuple[str, int]


def _model_wire(x: int) -> Wire:
    """A model buffer entry (app v >= 0, red letter -k) as a tagged message."""
    return ("app", x) if x >= 0 else ("marker", -x)


def _msg_id(m: p.WireMsg) -> int:
    """The number a message of another algorithm is shown with (its snapshot,
    checkpoint or record index)."""
    if isinstance(m, p.Barrier):
        return m.checkpoint
    if isinstance(m, p.StreamRecord):
        return m.index
    if isinstance(m, p.AppMsg):
        return m.payload
    return m.snapshot


def _wire(m: p.WireMsg) -> Wire:
    if isinstance(m, p.AppMsg):
        return ("app", m.payload)
    if isinstance(m, p.Marker):
        return ("marker", m.snapshot)
    return (show_msg(m).split(" ", 1)[0], _msg_id(m))  # another algorithm's message


def _show_wire(xs: Sequence[Wire]) -> str:
    """Tagged messages as ``app 3, marker 1``."""
    if not xs:
        return "nothing"
    return _clip(", ".join(f"{kind} {v}" for kind, v in xs))


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class JudgeResult:
    """The drive judge's verdict on one trace (a :class:`~redletter.conformance.verdict.Result`)."""

    trace: Trace
    verdict: Verdict
    executed: tuple[Step, ...]  #: the steps performed (schedule, then the drain)
    drained: int  #: how many of them the drain added
    observations: tuple[Observation, ...]
    divergence: Divergence | None = None
    reason: str = ""  #: for unknown, and for a node error: what happened
    node_error: NodeError | None = None
    seconds: float = 0.0
    sandbox: SandboxReport | None = None  #: the sandbox's layers (None: nodes in-process)

    @property
    def exit_code(self) -> int:
        """The process exit code of the verdict (0, 1 or 2)."""
        return int(self.verdict.exit_code)

    def explanation(self) -> str:
        """The divergence or the reason, in words ("" for a pass)."""
        if self.divergence is not None:
            return self.divergence.describe()
        return self.reason

    @property
    def schedule(self) -> tuple[Step, ...]:
        """The executed steps up to and including the divergence (all of them when there
        is none, or when it is in the final report); minimal after shrinking."""
        if self.divergence is not None and self.divergence.step:
            return self.executed[: self.divergence.step]
        return self.executed


# --------------------------------------------------------------------------- model side


def drain_steps(cfg: ModelConfig, s: State, *, limit: int = 10_000) -> list[Step]:
    """Deliver every message in flight, in buffer order, FIFO, while the application
    can receive it: the steps, from ``s``.

    For a scripted application (a model whose specification is ``ProgressSpec``:
    "a machine that can act does not stop for ever"), when no message can be
    received the first enabled application action is taken instead, so a red
    letter queued behind a message the script receives later is freed.  Stops
    when nothing is left to do.
    """
    out: list[Step] = []
    scripted = cfg.specification == "ProgressSpec"
    while len(out) < limit:
        progress = False
        for ci, c in enumerate(cfg.chans):
            if not s.buf[ci]:
                continue
            action = "ReceiveRedLetter" if s.buf[ci][0] < 0 else "ReceiveApp"
            st = make_step(action, {"c": list(c), "i": 1})
            try:
                s = step(cfg, s, action, st[1])
            except ActionDisabled:
                continue
            out.append(st)
            progress = True
        if progress:
            continue
        if not scripted:
            break
        app = next(
            (
                (name, params, t)
                for name, params, t in successors(cfg, s)
                if name in ("InternalEvent", "SendApp")
            ),
            None,
        )
        if app is None:
            break
        name, params, s = app
        out.append(
            make_step(name, {k: list(v) if isinstance(v, tuple) else v for k, v in params.items()})
        )
    return out


def after_last_reply(transport: Transport) -> tuple[str, NodeError] | None:
    """The first node (by id) that did not end as the protocol says once the harness
    closed its input: it wrote on stdout after its last reply, or it exited with a
    status other than 0 or was killed by a signal; the reason in words and the
    node's error (every judge ends a run with this check); None when all did."""
    for n, ending in sorted(transport.finish().items()):
        if isinstance(ending, NodeError):
            return ending.message, ending
        text = (
            f"node {n} wrote on stdout after its last reply, when the harness had"
            f" asked nothing more: {_clip(ending)}; a node writes exactly one line per"
            " request, and its logging on stderr"
        )
        return text, NodeProtocolError(text + ".", node=n)
    return None


def _acting_node(action: str, params: Mapping[str, object]) -> str:
    if action in ("SendApp",):
        return str(cast(Sequence[str], params["c"])[0])
    if action in ("ReceiveApp", "ReceiveRedLetter"):
        return str(cast(Sequence[str], params["c"])[1])
    return str(params["p"])


@dataclass(frozen=True)
class _Expected:
    sent: Mapping[tuple[str, str], tuple[int, ...]]
    states: Mapping[int, p.JsonValue]  #: snapshot -> recorded local state
    messages: Mapping[tuple[int, tuple[str, str]], tuple[int, ...]]
    closes: frozenset[tuple[int, tuple[str, str]]]
    completed: frozenset[int]


def _expected(
    cfg: ModelConfig, s: State, t: State, action: str, params: Mapping[str, object]
) -> _Expected:
    node = _acting_node(action, params)
    pi = cfg.proc_index[node]
    base = list(s.buf)
    if action in ("ReceiveApp", "ReceiveRedLetter"):
        c = cast(Sequence[str], params["c"])
        ci = cfg.chan_index[(str(c[0]), str(c[1]))]
        i = cast(int, params["i"])
        base[ci] = (*base[ci][: i - 1], *base[ci][i:])
    sent = {}
    for ci, ch in enumerate(cfg.chans):
        after = t.buf[ci]
        sent[ch] = after[len(base[ci]) :] if after[: len(base[ci])] == base[ci] else after
    states: dict[int, p.JsonValue] = {}
    messages: dict[tuple[int, tuple[str, str]], tuple[int, ...]] = {}
    closes: set[tuple[int, tuple[str, str]]] = set()
    completed: set[int] = set()
    inputs = cfg.in_mask[pi]
    for k, kid in enumerate(cfg.snaps):
        if s.rec_machine[k][pi] is None and t.rec_machine[k][pi] is not None:
            states[kid] = _json(cfg, t.rec_machine[k][pi])
        for ci, ch in enumerate(cfg.chans):
            new = t.rec_buf[k][ci][len(s.rec_buf[k][ci]) :]
            if new:
                messages[(kid, ch)] = new
            if t.red_buf[k] >> ci & 1 and not s.red_buf[k] >> ci & 1:
                closes.add((kid, ch))
        if t.red_buf[k] & inputs == inputs and s.red_buf[k] & inputs != inputs:
            completed.add(kid)
    return _Expected(sent, states, messages, frozenset(closes), frozenset(completed))


# --------------------------------------------------------------------------- explanations


class _Ctx:
    """What the explanations need to know about the run so far."""

    def __init__(self, cfg: ModelConfig, s: State, t: State, index: int, obs: Observation) -> None:
        self.cfg, self.s, self.t, self.index, self.obs = cfg, s, t, index, obs

    def what(self) -> str:
        return self.obs.describe().split(":", 1)[0].split(" ", 1)[1]

    def div(self, kind: str, summary: str, model: str, node: str, why: str) -> Divergence:
        return Divergence(kind, self.obs.node, summary, model, node, why, step=self.index)

    def tokens_phrase(self, amount: int) -> str:
        if self.cfg.app_module == "TokenApp":
            return f"the snapshot loses {amount} token{'s' if amount != 1 else ''}"
        return "the recorded buffer misses a message a white machine sent"


def _lemma0_missing(ctx: _Ctx, k: int, ch: tuple[str, str], vals: Sequence[int]) -> str:
    amount = sum(vals)
    many = len(vals) > 1
    what = f"the app messages {_show_seq(vals)} were" if many else f"the app message {vals[0]} was"
    return (
        f"{what} in flight when {ch[1]} turned red in snapshot {k} ({ch[0]} sent "
        f"{'them' if many else 'it'} while white); without {'them' if many else 'it'} "
        f"{ctx.tokens_phrase(amount)}, so it is not reachable from S0 (Lemma 0)"
    )


def _check_names(ctx: _Ctx) -> Divergence | None:
    """What a node reported must name the model's snapshots and its own input
    channels: anything else is the node's fault, said in words (never a lookup
    error of the judge)."""
    cfg, n = ctx.cfg, ctx.obs.node
    snaps = ", ".join(str(k) for k in cfg.snaps)
    inputs = [c for c in cfg.chans if c[1] == n]
    shown_inputs = ", ".join(show_channel(c) for c in inputs) or "none"

    def unknown(k: int, did: str) -> Divergence:
        return ctx.div(
            "unknown-snapshot",
            f"{ctx.what()}: {n} {did} for snapshot {k}, which does not exist",
            f"the run's snapshots are {snaps}; nothing else is recorded",
            f"{did} for snapshot {k}",
            "a node records, sends red letters and completes only for snapshots the harness"
            " started (start_snapshot) or whose red letter it received (docs/protocol.md)",
        )

    for s_ in ctx.obs.sent:
        if isinstance(s_.msg, p.Marker) and s_.msg.snapshot not in cfg.snap_index:
            return unknown(s_.msg.snapshot, f"sent a red letter on {show_channel(s_.channel)}")
    for r in ctx.obs.recorded:
        if r.snapshot not in cfg.snap_index:
            what = (
                "recorded a local state"
                if isinstance(r, p.RecordState)
                else f"recorded a message of {show_channel(r.channel)}"
                if isinstance(r, p.RecordMessage)
                else f"closed {show_channel(r.channel)}"
            )
            return unknown(r.snapshot, what)
        if isinstance(r, p.RecordMessage | p.CloseChannel) and r.channel not in inputs:
            verb = "recorded a message of" if isinstance(r, p.RecordMessage) else "closed"
            return ctx.div(
                "unknown-channel",
                f"{ctx.what()}: {n} {verb} channel {show_channel(r.channel)} in snapshot"
                f" {r.snapshot}, which is not one of its input channels",
                f"{n} records only its input channels ({shown_inputs})",
                f"{verb} {show_channel(r.channel)}",
                "a machine records the buffers it receives from, and only those (rule 2);"
                " a recording of another buffer is not part of any snapshot",
            )
    for k in ctx.obs.completed:
        if k not in cfg.snap_index:
            return unknown(k, "declared its part complete")
    return None


def _compare_sent(ctx: _Ctx, exp: _Expected) -> Divergence | None:
    actual: dict[tuple[str, str], list[Wire]] = {}
    for s_ in ctx.obs.sent:
        actual.setdefault(s_.channel, []).append(_wire(s_.msg))
    channels = list(ctx.cfg.chans) + sorted(set(actual) - set(ctx.cfg.chans))
    for ch in channels:
        want = tuple(_model_wire(x) for x in exp.sent.get(ch, ()))
        got = tuple(actual.get(ch, ()))
        if want == got:
            continue
        chs = show_channel(ch)
        model = f"{ch[0]} puts {_show_wire(want)} on {chs}"
        node = f"put {_show_wire(got)} on {chs}"
        summary = f"{ctx.what()} sends the wrong messages on {chs}"
        missing_red = [v for kind, v in want if kind == "marker" and ("marker", v) not in got]
        extra_red = [v for kind, v in got if kind == "marker" and ("marker", v) not in want]
        if missing_red:
            k = missing_red[0]
            why = (
                f"{ch[0]} turned red in snapshot {k} and must send a red letter on each of its "
                f"output buffers before any later message; without it the buffer {chs} from a "
                f"red machine holds no red letter (RedLetterInvariant), so {ch[1]} never turns "
                "red through it and never closes its recording: the snapshot does not complete "
                "(SnapshotsComplete) or records messages sent after S* (Lemma 0)"
            )
            return ctx.div("missing-red-letter", summary, model, node, why)
        if extra_red:
            k = extra_red[0]
            why = (
                f"a machine sends one red letter per output buffer per snapshot, when it turns "
                f"red; a second red letter of snapshot {k} on {chs} would make its receiver close "
                "a recording that is already closed, or close one too early (RedLetterInvariant)"
            )
            return ctx.div("extra-red-letter", summary, model, node, why)
        if sorted(want) == sorted(got):
            why = (
                f"on {chs} an app message overtakes the red letter (or falls behind it): a "
                "message sent after its sender turned red would be recorded as in flight, or "
                "one sent before would be missed; the recorded state is then not reachable "
                "from S0 (Lemma 0)"
            )
            return ctx.div("red-letter-order", summary, model, node, why)
        why = (
            "the harness computes the application and the node must put exactly the app "
            f"message it was told to send on {chs}; the run no longer follows the schedule"
        )
        return ctx.div("wrong-app-traffic", summary, model, node, why)
    return None


def _colour(ctx: _Ctx, k: int, n: str) -> str:
    red = ctx.s.red[ctx.cfg.snap_index[k]] >> ctx.cfg.proc_index[n] & 1
    return "already red" if red else "still white"


def _compare_recorded(ctx: _Ctx, exp: _Expected) -> Divergence | None:
    states: dict[int, list[p.JsonValue]] = {}
    messages: dict[tuple[int, tuple[str, str]], list[int]] = {}
    closes: list[tuple[int, tuple[str, str]]] = []
    for r in ctx.obs.recorded:
        if isinstance(r, p.RecordState):
            states.setdefault(r.snapshot, []).append(r.state)
        elif isinstance(r, p.RecordMessage):
            messages.setdefault((r.snapshot, r.channel), []).append(r.payload)
        else:
            closes.append((r.snapshot, r.channel))
    n = ctx.obs.node
    what = ctx.what()
    for k in sorted(set(exp.states) | set(states)):
        got = states.get(k, [])
        if k in exp.states and not got:
            return ctx.div(
                "missing-record-state",
                f"{what} turns {n} red in snapshot {k} but {n} recorded no local state",
                f"{n} records its local state {_show_json(exp.states[k])} for snapshot {k}",
                "recorded nothing",
                f"a machine records its own state when it turns red (rule 1); without it the "
                f"snapshot has no local state for {n}, so it is no global state at all (Lemma 0)",
            )
        if k not in exp.states:
            return ctx.div(
                "extra-record-state",
                f"{what}: {n} recorded a local state for snapshot {k} when the model records none",
                f"{n} is {_colour(ctx, k, n)} in snapshot {k} and records nothing",
                f"recorded the local state {_show_json(got[0])}",
                "a machine records its state exactly once per snapshot, when it turns red; a "
                "state recorded at another moment is not the one S* holds (Lemma 0)",
            )
        if got != [exp.states[k]]:
            return ctx.div(
                "wrong-record-state",
                f"{what}: {n} recorded the wrong local state for snapshot {k}",
                f"{n} records {_show_json(exp.states[k])}",
                "recorded " + ", ".join(_show_json(x) for x in got),
                f"the recorded state must be {n}'s local state at the moment it turns red; "
                "another state makes the snapshot unreachable from S0 (Lemma 0)",
            )
    keys = sorted(set(exp.messages) | set(messages))
    for key in keys:
        k, ch = key
        want = list(exp.messages.get(key, ()))
        got_m = messages.get(key, [])
        if want == got_m:
            continue
        chs = show_channel(ch)
        if want and not got_m:
            return ctx.div(
                "missing-record-message",
                f"{what}: {n} recorded nothing for channel {chs} in snapshot {k}, but the model "
                f"records {_show_seq(want)}",
                f"{n} is red in snapshot {k} and {chs} is still white, so it records "
                f"{_show_seq(want)} in {chs}",
                "recorded nothing",
                _lemma0_missing(ctx, k, ch, want),
            )
        if got_m and not want:
            ki = ctx.cfg.snap_index[k]
            ci = ctx.cfg.chan_index.get(ch, -1)
            reason = (
                f"{chs} is already red in snapshot {k} (its red letter arrived)"
                if ci >= 0 and ctx.s.red_buf[ki] >> ci & 1
                else f"{n} is still white in snapshot {k}"
            )
            return ctx.div(
                "extra-record-message",
                f"{what}: {n} recorded {_show_seq(got_m)} for channel {chs} in snapshot {k}, but "
                "the model records nothing",
                f"records nothing: {reason}",
                f"recorded {_show_seq(got_m)} in {chs}",
                f"the message was sent after its sender turned red (or received before {n} "
                "did), so it is not in flight in S*; recording it counts it twice or invents "
                "it, and the snapshot is not reachable from S0 (Lemma 0)",
            )
        return ctx.div(
            "wrong-record-message",
            f"{what}: {n} recorded {_show_seq(got_m)} for channel {chs} in snapshot {k}, "
            f"the model {_show_seq(want)}",
            f"records {_show_seq(want)} in {chs}",
            f"recorded {_show_seq(got_m)}",
            "the recording of a buffer is exactly the app messages received on it between "
            "the receiver turning red and the buffer's red letter (Lemma 0)",
        )
    got_closes = set(closes)
    for k, ch in sorted(exp.closes - got_closes):
        return ctx.div(
            "missing-close",
            f"{what}: the red letter of snapshot {k} arrived on {show_channel(ch)} but {n} did "
            "not close that channel's recording",
            f"the buffer {show_channel(ch)} turns red in snapshot {k}: its recording ends",
            "did not close it",
            "after the red letter, every message on the buffer was sent after its sender turned "
            "red; recording them puts messages in S* that are not in flight there (Lemma 0)",
        )
    for k, ch in sorted(got_closes - exp.closes):
        return ctx.div(
            "extra-close",
            f"{what}: {n} closed the recording of {show_channel(ch)} in snapshot {k}, but no "
            "red letter of that snapshot arrived on it",
            f"{show_channel(ch)} stays white in snapshot {k} (still recording)",
            f"closed {show_channel(ch)}",
            "a buffer's recording ends only with its own red letter; closing it early loses the "
            "messages still in flight on it, so the snapshot is not reachable from S0 (Lemma 0)",
        )
    if len(closes) != len(got_closes):
        return ctx.div(
            "duplicate-close",
            f"{what}: {n} closed the same recording twice",
            "closes each buffer once per snapshot",
            "closed one twice",
            "each buffer carries exactly one red letter per snapshot (OneRedLetterPerBuffer)",
        )
    return None


def _compare_completed(ctx: _Ctx, exp: _Expected) -> Divergence | None:
    got = list(ctx.obs.completed)
    n = ctx.obs.node
    for k in sorted(exp.completed - set(got)):
        return ctx.div(
            "missing-complete",
            f"{ctx.what()}: every input buffer of {n} is red in snapshot {k}, but {n} did not "
            "declare its part complete",
            f"{n}'s part of snapshot {k} is complete",
            "did not complete it",
            "a machine's part of a snapshot is complete when every one of its input buffers is "
            "red; a node that never says so makes the snapshot never complete "
            "(SnapshotsComplete)",
        )
    for k in sorted(set(got) - exp.completed):
        return ctx.div(
            "early-complete",
            f"{ctx.what()}: {n} declared snapshot {k} complete while an input buffer of {n} is "
            "still white in it",
            f"{n}'s part of snapshot {k} is not complete yet",
            f"declared snapshot {k} complete",
            "a buffer still white may hold messages in flight in S*; declaring the snapshot "
            "complete before its red letter arrives loses them (Lemma 0)",
        )
    if len(got) != len(set(got)):
        return ctx.div(
            "duplicate-complete",
            f"{ctx.what()}: {n} declared the same snapshot complete twice",
            "completes each snapshot once",
            "completed one twice",
            "a snapshot completes once at each machine",
        )
    return None


def _compare_report(
    cfg: ModelConfig, s: State, node: str, k: int, rep: p.ReportOk
) -> Divergence | None:
    ki, pi = cfg.snap_index[k], cfg.proc_index[node]
    want_state = _json(cfg, s.rec_machine[ki][pi])
    inputs = cfg.in_mask[pi]
    complete = s.red_buf[ki] & inputs == inputs

    def div(kind: str, summary: str, model: str, got: str, why: str) -> Divergence:
        return Divergence(kind, node, summary, model, got, why)

    sources = {ch[0] for ch in cfg.chans if ch[1] == node}
    extra = sorted(set(rep.channels) - sources)
    if extra:
        shown = ", ".join(_clip(repr(x)) for x in extra[:5])
        return div(
            "report-channel",
            f"node {node} reports recorded messages for snapshot {k} keyed by {shown}, which is"
            f" not the source of one of its input channels",
            f"{node}'s input channels come from {', '.join(sorted(sources)) or 'nobody'}",
            f"reported channels {shown}",
            "report_ok.channels holds one entry per input channel [src, self], keyed by src"
            " (docs/protocol.md)",
        )
    if rep.local_state != want_state:
        return div(
            "report-state",
            f"node {node} reports the local state {_show_json(rep.local_state)} for snapshot "
            f"{k}, the model's S* holds {_show_json(want_state)}",
            f"S* of snapshot {k} holds {_show_json(want_state)} for {node}",
            f"reported {_show_json(rep.local_state)}",
            "the report must give what was recorded when the machine turned red; a different "
            "local state is not in S*, which Lemma 0 says is reachable from S0",
        )
    for ci, ch in enumerate(cfg.chans):
        if ch[1] != node:
            continue
        want = tuple(s.rec_buf[ki][ci])
        got = tuple(rep.channels.get(ch[0], ()))
        if want != got:
            return div(
                "report-channel",
                f"node {node} reports {_show_seq(got)} for channel {show_channel(ch)} in "
                f"snapshot {k}, the model's S* records {_show_seq(want)}",
                f"S* of snapshot {k} records {_show_seq(want)} in {show_channel(ch)}",
                f"reported {_show_seq(got)}",
                "a recorded buffer must list exactly the messages recorded on it, once each and "
                "in order; with others the snapshot is not reachable from S0 (Lemma 0)",
            )
    if rep.complete != complete:
        return div(
            "report-complete",
            f"node {node} reports snapshot {k} {'complete' if rep.complete else 'not complete'}"
            f", the model {'complete' if complete else 'not complete'} at {node}",
            f"{node}'s part of snapshot {k} is {'complete' if complete else 'not complete'}",
            f"reported {'complete' if rep.complete else 'not complete'}",
            "completion at a machine means every input buffer is red (SnapshotsComplete)",
        )
    return None


# --------------------------------------------------------------------------- the judge


def judge_trace(
    trace: Trace,
    node: NodeSpec,
    *,
    cfg: ModelConfig | None = None,
    log_dir: Path | None = None,
    drain: bool = True,
    on_step: Callable[[Observation], None] | None = None,
) -> JudgeResult:
    """Replay ``trace`` against ``node`` and judge it step by step (see the module doc).

    Raises :class:`InputError` when the trace is not a schedule of its model (a step
    whose guard fails, or a non-FIFO receive).
    """
    start = time.perf_counter()
    cfg = cfg if cfg is not None else model_of(trace)
    if cfg.app_module not in p.APP_NAMES:
        raise InputError(f"model {cfg.name}: no protocol app for {cfg.app_module}")
    topo = Topology(cfg.procs, cfg.chans)
    states = replay_states(cfg, ())
    steps = list(trace.steps)
    try:
        for st in steps:
            states.append(step(cfg, states[-1], st[0], st[1]))
    except ActionDisabled as exc:
        raise InputError(
            f"trace {trace.name} is not a schedule of {cfg.name}: {exc.message}",
            code="RL-INPUT-SCHEDULE",
        ) from None
    extra = drain_steps(cfg, states[-1]) if drain else []
    for st in extra:
        states.append(step(cfg, states[-1], st[0], st[1]))
    executed = tuple(steps + extra)
    observations: list[Observation] = []

    def result(verdict: Verdict, **kw: object) -> JudgeResult:
        return JudgeResult(
            trace,
            verdict,
            executed,
            len(extra),
            tuple(observations),
            seconds=time.perf_counter() - start,
            **kw,  # type: ignore[arg-type]
        )

    initial = {n: _json(cfg, states[0].local[i]) for i, n in enumerate(cfg.procs)}
    transport = open_transport(node, cfg.procs, log_dir)
    report = transport.sandbox_report
    try:
        with Driver(transport, topo, p.APP_NAMES[cfg.app_module], initial) as d:
            d.init()
            report = transport.sandbox_report
            for i, (action, params) in enumerate(executed):
                s, t = states[i], states[i + 1]
                acting = _acting_node(action, params)
                new_state = (
                    _json(cfg, t.local[cfg.proc_index[acting]])
                    if action in ("SendApp", "InternalEvent", "ReceiveApp")
                    else None
                )
                obs = d.perform(action, params, new_state)
                observations.append(obs)
                if on_step is not None:
                    on_step(obs)
                ctx = _Ctx(cfg, s, t, i + 1, obs)
                exp = _expected(cfg, s, t, action, params)
                div = (
                    _check_names(ctx)
                    or _compare_sent(ctx, exp)
                    or _compare_recorded(ctx, exp)
                    or _compare_completed(ctx, exp)
                )
                if div is not None:
                    return result(Verdict.FAIL, divergence=div, sandbox=report)
            final = states[-1]
            for kid in cfg.snaps:
                for n in cfg.procs:
                    div = _compare_report(cfg, final, n, kid, d.report(n, kid))
                    if div is not None:
                        return result(Verdict.FAIL, divergence=div, sandbox=report)
            # Nothing may follow the last reply: a node that writes on is not
            # speaking the protocol (its extra lines would answer nothing).
            late = after_last_reply(d.transport)
            if late is not None:
                return result(Verdict.FAIL, reason=late[0], node_error=late[1], sandbox=report)
            stuck = [
                kid
                for ki, kid in enumerate(cfg.snaps)
                if final.s0[ki] is not None and final.sf[ki] is None
            ]
            if stuck:
                why = (
                    "the application cannot receive every message still in flight"
                    if drain
                    else "the schedule ends before its last red letter is received (no drain)"
                )
                return result(
                    Verdict.UNKNOWN,
                    reason=(
                        f"snapshot {', '.join(map(str, stuck))} never completed: {why}, so "
                        "liveness cannot be judged on this trace (every step agreed with "
                        "the model)"
                    ),
                    sandbox=report,
                )
    except NodeTimeout as exc:
        return result(Verdict.UNKNOWN, reason=exc.message, node_error=exc, sandbox=report)
    except NodeError as exc:
        return result(Verdict.FAIL, reason=exc.message, node_error=exc, sandbox=report)
    return result(Verdict.PASS, sandbox=report)


# --------------------------------------------------------------------------- many traces


@dataclass(frozen=True)
class JudgeRun:
    """The results of judging many traces, and why the run stopped early (if it did)."""

    results: tuple[JudgeResult, ...]
    total: int  #: traces asked for
    stopped: str = ""  #: why traces were left unjudged ("" when all were judged)

    @property
    def verdict(self) -> Verdict:
        """fail if any failed, else unknown if any was unknown or traces were left, else pass."""
        if any(r.verdict == Verdict.FAIL for r in self.results):
            return Verdict.FAIL
        if self.stopped or any(r.verdict == Verdict.UNKNOWN for r in self.results):
            return Verdict.UNKNOWN
        if not self.results:
            return Verdict.UNKNOWN
        return Verdict.PASS


def usage_error(result: JudgeResult) -> InputError | None:
    """The error to raise instead of a verdict when the node never started: it exited
    before taking a single step, with the status of a usage error (2, as argparse,
    click and getopt programs exit) or a ``usage:`` line among its last lines of
    stderr.  That is the ``--node`` command being wrong (a misspelt argument, a
    missing one), not the algorithm failing, so no verdict is given."""
    err = result.node_error
    if not isinstance(err, NodeCrashed) or result.observations:
        return None
    said_usage = any(line.lstrip().lower().startswith("usage:") for line in err.stderr_tail)
    if err.exit_status != 2 and not said_usage:
        return None
    why = (
        "exited with status 2, the status of a usage error,"
        if err.exit_status == 2
        else "printed a usage message"
    )
    return InputError(
        f"the node command looks wrong: node {err.node} {why} before its first step,"
        " so no trace was judged (a usage error is not a verdict on the algorithm).\n"
        f"{err.message}",
        code="RL-INPUT-NODE-USAGE",
    )


#: What a program's runtime says when it cannot start, in its last lines of stderr,
#: and what to fix: ``(text, the fix)``.  The first that matches names the fix.
_CANNOT_START: Final = (
    ("No module named ", "a module it names is not found: check the module's name, and that"
     " this Python has it installed (the node runs in its own working directory, so a"
     " module of the current directory is found only by its path: --node 'python3"
     " path/to/node.py')"),
    ("Error while finding module specification", "a module it names is not found: check the"
     " module's name, and that this Python has it installed"),
    ("Permission denied", "it may not run or read a file it names: check the file's"
     " permissions (a program needs chmod +x; the node runs as another user in the"
     " sandbox, so its files and their folders must be readable by others)"),
    ("can't open file ", "a file it names does not exist: check the path"),
    ("Unable to access jarfile", "a file it names does not exist: check the path"),
    ("Could not find or load main class", "Java cannot find the main class: check the class"
     " name and the class path"),
    ("Cannot find module", "a module it names is not found: check its name and that it is"
     " installed"),
    ("No such file or directory", "a file or program it names does not exist: check the path"),
    ("command not found", "a program it runs is not found: check its name and PATH"),
)  # fmt: skip
#: Shells' statuses for a program that cannot be executed (126) or is not found (127).
_SHELL_STATUS: Final = {
    126: "status 126 is a shell's \"cannot execute\": check the file's permissions",
    127: "status 127 is a shell's \"command not found\": check the program's name and PATH",
}


def start_error(result: JudgeResult, node: NodeSpec) -> InputError | None:
    """The error to raise instead of a verdict when the node could not start: it exited
    before taking a single step, having written nothing on stdout, and its runtime's
    last lines say why (a missing module, file, class or program, a permission; or a
    shell's status 126 or 127).  That is the ``--node`` command being wrong, not the
    algorithm failing, so no verdict is given (a program that starts and gives up at
    once for a reason of its own is still judged)."""
    err = result.node_error
    if not isinstance(err, NodeCrashed) or result.observations or err.stdout_tail:
        return None
    said = next(
        ((line, fix) for text, fix in _CANNOT_START for line in err.stderr_tail if text in line),
        None,
    )
    if said is not None:
        why = f"{said[1]}; its stderr says: {said[0]}"
    elif err.exit_status in _SHELL_STATUS:
        why = _SHELL_STATUS[err.exit_status]
    else:
        return None
    command = node.describe() if isinstance(node, CommandNode) else err.node
    return InputError(
        f"the node did not start: {command} — node {err.node} exited with status"
        f" {err.exit_status} before its first step, so no trace was judged (a node that"
        f" cannot start is not a verdict on the algorithm): {why}.\n{err.message}",
        code="RL-INPUT-NODE-START",
    )


def judge_all(
    traces: Sequence[Trace],
    node: NodeSpec,
    *,
    log_dir: Path,
    stop_at_first: bool = True,
    budget: float | None = None,
    max_unknown: int | None = 3,
    on_result: Callable[[JudgeResult], None] | None = None,
    judge: Callable[[Trace], JudgeResult] | None = None,
) -> JudgeRun:
    """Judge ``traces`` one by one against ``node``, within bounds.

    Stops at the first fail (unless ``stop_at_first`` is false), after
    ``max_unknown`` unknown verdicts (a node that never answers costs its
    timeout on every trace: three in a row say enough), and when the global
    time ``budget`` (seconds) is spent.  An empty set of traces judges nothing
    and is unknown, never a vacuous pass.  A node that fails the first trace with a
    usage error before its first step raises :func:`usage_error`'s error, and one that
    cannot start :func:`start_error`'s.
    ``judge``: the judge of each trace (by default this module's; a variant's from
    :mod:`.families`).  A stop asked for (Ctrl-C, SIGTERM: :mod:`redletter.stopping`)
    raises its interruption before the next trace, even where its KeyboardInterrupt
    was lost.
    """
    start = time.monotonic()
    results: list[JudgeResult] = []
    unknown = 0
    stopped = "" if traces else "there was no trace to judge"
    for i, t in enumerate(traces):
        stopping.check()
        if budget is not None and time.monotonic() - start >= budget:
            stopped = (
                f"the time budget of {budget:g} s was spent after {i} of {len(traces)} traces"
                " (--budget)"
            )
            break
        r = judge(t) if judge is not None else judge_trace(t, node, log_dir=log_dir)
        if i == 0 and (bad := start_error(r, node) or usage_error(r)) is not None:
            raise bad
        results.append(r)
        if on_result is not None:
            on_result(r)
        if r.verdict == Verdict.FAIL and stop_at_first:
            break
        if r.verdict == Verdict.UNKNOWN:
            unknown += 1
            if max_unknown is not None and unknown >= max_unknown and i + 1 < len(traces):
                stopped = (
                    f"{unknown} traces were unknown, the most a run accepts (--max-unknown);"
                    f" {len(traces) - i - 1} of {len(traces)} traces were not judged"
                )
                break
    return JudgeRun(tuple(results), len(traces), stopped)


# --------------------------------------------------------------------------- shared
# --- shared with the variants' judges ---
# The comparisons of one step's records and completions, and of a final report, with
# ChandyLamport's state: a variant whose state has ChandyLamport's as a part (lazy red
# letters: ``LazyState.cl()``) judges that part with these, and so says the same words.

Expected = _Expected  #: what one step must record and complete (and put on the wire)
StepContext = _Ctx  #: the model states around one step and its observation
expected_effects = _expected
check_names = _check_names
compare_recorded = _compare_recorded
compare_completed = _compare_completed
compare_report = _compare_report
model_json = _json
clip = _clip
