"""The one registry of bug classes: every bug the kit plants, and where it runs.

A bug class is either a **step override** -- one of the steps of
``spec/ChandyLamport.tla`` (:data:`redletter.python_model.mutants.STEPS`) replaced by
a faulty definition -- or a **node bug** that lives in how an implementation stores
or reports what it records, which the spec's variables do not model.

A step override is written once, here: its TLA+ definition (the text the
``MC*Failure.tla`` models carry; a test checks every copy against it) and its
*rule*, a plain Python function of a :class:`~redletter.python_model.stepview.StepView`.
From that one rule

* **TLC** runs it through the models in :attr:`BugClass.models` (``.cfg``:
  ``Recording <- [ChandyLamport] NoRecording``);
* **the Python model** runs it on the same models (``config.py`` reads the override,
  :func:`redletter.python_model.mutants.make_steps` wraps the rule);
* **z3** runs it where the symbolic engine's encoding lets that step vary
  (``Deliverable``, ``Recording``, ``RedLettersOut``, ``TurnsRed``, token app):
  the encoding enumerates the rule over the inputs the step may read
  (:data:`redletter.python_model.stepview.FOOTPRINTS`);
* **a conformance node** runs it where the rule reads only what one machine knows
  of itself (``conformance/nodes/steps.py`` derives the node; the zoo
  ``conformance/nodes/mutants.py`` lists it).

So a new bug class is one entry here plus the models that plant it; no engine
needs new code.  :func:`runs_in` says, per engine, whether a class runs there and
why not where it does not.  ``docs/teeth.md`` is generated from this registry and
from the teeth matrix (which property each model must violate).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final

from redletter.errors import InputError
from redletter.python_model.stepview import FOOTPRINTS, StepView

__all__ = [
    "BUGS",
    "ENGINES",
    "BugClass",
    "Rule",
    "bug_for_override",
    "get",
    "runs_in",
]

Rule = Callable[..., object]
"""A step override's rule: ``rule(view, *step arguments)`` (see :data:`STEPS` in
:mod:`redletter.python_model.mutants` for each step's arguments and result)."""

ENGINES: Final = ("tlc", "python", "z3", "node")


@dataclass(frozen=True)
class BugClass:
    """One bug class.

    ``step`` / ``definition`` / ``tla`` / ``rule`` are set for a step override and
    ``None`` for a node bug; ``node`` is ``"derived"`` (the zoo builds the node from
    the rule), ``"module:Class"`` (a hand-written node in the zoo) or ``None`` with
    ``no_node`` saying why no node can have the bug.
    """

    name: str  #: canonical, kebab-case
    summary: str  #: what goes wrong, one line
    breaks: str  #: which of EWD 864's statements it breaks, in words
    step: str | None = None
    definition: str | None = None
    tla: str | None = None  #: the TLA+ definition, as the models write it
    rule: Rule | None = None
    models: tuple[str, ...] = ()  #: the MC models that plant it (TLC and Python)
    node: str | None = None
    no_node: str = ""
    no_model: str = ""  #: for a node bug: why the spec cannot express it
    aliases: tuple[str, ...] = field(default=())  #: older names (zoo, symbolic --mutant)
    #: the property a conformance judge names when it catches the bug at a node
    lemma: str = "Lemma0"

    @property
    def is_step(self) -> bool:
        return self.step is not None


# --------------------------------------------------------------------------- rules


def _no_recording(v: StepView, k: int, p: int, c: int) -> bool:
    return False


def _late_enqueue(v: StepView, c: int) -> int:
    n = v.length(c)
    return 1 if n > 0 and v.letter_at(c, n) is not None else 0


def _stop_at_first(v: StepView, k: int, p: int, c: int) -> bool:
    return v.red(k, p) and not any(v.red_buf(k, d) for d in v.ins(p))


def _any_position(v: StepView, c: int, i: int) -> bool:
    return True


def _turns_red_in_all(v: StepView, c: int, k: int, j: int) -> bool:
    return j == k or v.red(j, v.dst(c))


def _starter_only(v: StepView, p: int, k: int, frm: int, d: int) -> bool:
    return frm < 0


def _stop_after_out(v: StepView, k: int, p: int, c: int) -> bool:
    reds = sum(1 for d in v.ins(p) if v.red_buf(k, d))
    return v.red(k, p) and not v.red_buf(k, c) and reds < len(v.outs(p))


def _newest_first(v: StepView, k: int, c: int, rec: tuple[int, ...], m: int) -> tuple[int, ...]:
    return (m, *rec)


def _consume_recorded(v: StepView, p: int, c: int) -> bool:
    return any(v.red(k, p) and not v.red_buf(k, c) for k in range(v.n_snaps))


def _any_position_once_red(v: StepView, c: int, i: int) -> bool:
    return i == 1 or all(v.red_buf(k, c) for k in range(v.n_snaps))


def _records_red_letter(v: StepView, k: int, p: int, c: int) -> tuple[int, ...]:
    return (0,) if v.red(k, p) and not v.red_buf(k, c) else ()


def _resend_on_white(v: StepView, p: int, k: int, c: int, d: int) -> bool:
    return not v.red_buf(k, c)


def _ignored_once_red(v: StepView, c: int, k: int, j: int) -> bool:
    return j == k and not v.red(k, v.dst(c))


def _not_back_to_sender(v: StepView, p: int, k: int, frm: int, d: int) -> bool:
    return frm < 0 or v.dst(d) != v.src(frm)


def _leaves_red_letters(v: StepView, c: int, i: int) -> bool:
    if i != 1:
        return False
    k = v.letter_at(c, 1)
    return k is None or not v.red(k, v.dst(c))


_NOT_AT_A_NODE_NETWORK = (
    "the harness is the network: it keeps every buffer FIFO and decides what is "
    "received, so no node can have this bug"
)
_NOT_AT_A_NODE_APP = (
    "the harness delivers application messages and computes the application's "
    "state, so no node can keep a message from its application"
)

BUGS: Final[Mapping[str, BugClass]] = {
    b.name: b
    for b in (
        BugClass(
            "no-channel-recording",
            "a red machine never records the messages it receives from white input buffers",
            "Lemma 0: the tokens in flight at the cut are lost from the snapshot state",
            step="Recording",
            definition="NoRecording",
            tla="NoRecording(k, p, c) == FALSE",
            rule=_no_recording,
            models=("MCNoChannelRecordingFailure", "MCDiffusingNoRecordingFailure"),
            node="derived",
            aliases=("no-recording",),
        ),
        BugClass(
            "late-red-letter",
            "a message sent right after a red letter is put in front of it on the same buffer",
            "Lemma 0: a message sent by a red machine is received by a white one",
            step="Enqueue",
            definition="LateEnqueue",
            tla=(
                "LateEnqueue(s, m) ==\n"
                '    IF s # << >> /\\ s[Len(s)].kind = "red"\n'
                "    THEN Append(SubSeq(s, 1, Len(s) - 1), m) \\o << s[Len(s)] >>\n"
                "    ELSE Append(s, m)"
            ),
            rule=_late_enqueue,
            models=("MCLateRedLetterFailure",),
            node="redletter.conformance.nodes.mutants:MarkerAfterApp",
            aliases=("marker-after-app",),
        ),
        BugClass(
            "stop-at-first-red-letter",
            "a machine stops recording on all its input buffers at the first red letter",
            "Lemma 0: messages still in flight on the other buffers are not recorded",
            step="Recording",
            definition="StopAtFirst",
            tla="StopAtFirst(k, p, c) == p \\in red[k] /\\ In(p) \\cap redBuf[k] = {}",
            rule=_stop_at_first,
            models=("MCStopAtFirstRedLetterFailure",),
            node="derived",
            aliases=("stop-at-first", "stop-all-at-first"),
        ),
        BugClass(
            "non-fifo",
            "buffers are not FIFO: any message in a buffer may be received",
            "Lemma 0 (one witness: the white actions no longer replay in their order)",
            step="Deliverable",
            definition="AnyPosition",
            tla="AnyPosition(c) == 1..Len(buf[c])",
            rule=_any_position,
            models=("MCNonFifoFailure",),
            no_node=_NOT_AT_A_NODE_NETWORK,
        ),
        BugClass(
            "mixed-snapshots",
            "the snapshot id on a red letter is ignored: it turns its buffer red in every "
            "snapshot the receiver is red in",
            "Lemma 0 of the other concurrent snapshot, whose recording stops too early",
            step="TurnsRed",
            definition="TurnsRedInAll",
            tla="TurnsRedInAll(c, k) == {k} \\cup {j \\in Snap : Dst(c) \\in red[j]}",
            rule=_turns_red_in_all,
            models=("MCMixedSnapshotsFailure",),
            node="derived",
        ),
        BugClass(
            "never-forward",
            "only a starter sends red letters: a machine turned red by a red letter forwards none",
            "the red-letter invariant; the snapshot never completes",
            step="RedLettersOut",
            definition="StarterOnly",
            tla="StarterOnly(p, k, from) == IF from = {} THEN Out(p) ELSE {}",
            rule=_starter_only,
            models=("MCNeverForwardFailure", "MCNeverForwardLivenessFailure"),
            node="derived",
            lemma="RedLetterInvariant",
        ),
        BugClass(
            "stop-after-out-count",
            "a machine stops recording once it has received as many red letters as it has "
            "output buffers (it counts Out(p), not In(p))",
            "Lemma 0, on a machine with more input than output buffers",
            step="Recording",
            definition="StopAfterOut",
            tla=(
                "StopAfterOut(k, p, c) ==\n"
                "    /\\ p \\in red[k] /\\ c \\notin redBuf[k]\n"
                "    /\\ Cardinality(In(p) \\cap redBuf[k]) < Cardinality(Out(p))"
            ),
            rule=_stop_after_out,
            models=("MCStopAfterOutCountFailure",),
            node="derived",
        ),
        BugClass(
            "newest-first-recording",
            "a recorded stream is kept newest first",
            "Lemma 0: the recorded buffer is not the order the messages were sent in",
            step="RecordMessage",
            definition="RecordNewestFirst",
            tla="RecordNewestFirst(s, m) == << m >> \\o s",
            rule=_newest_first,
            models=("MCNewestFirstRecordingFailure",),
            node="derived",
        ),
        BugClass(
            "swallowing-recording",
            "a red machine that records an in-flight message keeps it from its application "
            "(recording consumes the message)",
            "Lemma 1 only: the snapshot is right, the system after the cut is wrong",
            step="RecordingConsumes",
            definition="ConsumeRecorded",
            tla="ConsumeRecorded(p, c) == \\E k \\in Snap : Recording(k, p, c)",
            rule=_consume_recorded,
            models=("MCSwallowingRecordingFailure",),
            no_node=_NOT_AT_A_NODE_APP,
        ),
        BugClass(
            "reorder-after-cut",
            "once a buffer is red in every snapshot its messages are received in any "
            "order (the implementation keeps order only while it records)",
            "Lemma 1 only: after the cut the application receives out of order",
            step="Deliverable",
            definition="AnyPositionOnceRed",
            tla=(
                "AnyPositionOnceRed(c) ==\n"
                "    IF buf[c] = << >> THEN {}\n"
                "    ELSE IF \\A k \\in Snap : c \\in redBuf[k] THEN 1..Len(buf[c]) ELSE {1}"
            ),
            rule=_any_position_once_red,
            models=("MCReorderAfterCutFailure",),
            no_node=_NOT_AT_A_NODE_NETWORK,
        ),
        BugClass(
            "red-letter-recorded",
            "the red letter that ends a buffer's recording is recorded as a message",
            "Lemma 0; a terminated computation is not seen to have terminated (StableLemma0)",
            step="RedLetterRecord",
            definition="RecordsRedLetter",
            tla=(
                "RecordsRedLetter(k, p, c) ==\n"
                "    IF p \\in red[k] /\\ c \\notin redBuf[k] THEN << 0 >> ELSE << >>"
            ),
            rule=_records_red_letter,
            models=("MCHistoryRedLetterRecordedFailure",),
            node="derived",
        ),
        BugClass(
            "resent-red-letters",
            "a red machine sends red letters again each time a red letter closes one of "
            "its input buffers",
            "EWD 864's 'each buffer has accepted 1 red letter' (OneRedLetterPerBuffer)",
            step="RedLettersAgain",
            definition="ResendOnWhite",
            tla="ResendOnWhite(p, k, c) == IF c \\in redBuf[k] THEN {} ELSE Out(p)",
            rule=_resend_on_white,
            models=("MCResentRedLettersFailure",),
            node="derived",
            lemma="OneRedLetterPerBuffer",
        ),
        BugClass(
            "ignores-red-letters-once-red",
            "a machine that is already red ignores the red letters it receives: their "
            "buffers never turn red",
            "liveness: the snapshot never completes (SnapshotsComplete)",
            step="TurnsRed",
            definition="IgnoredOnceRed",
            tla="IgnoredOnceRed(c, k) == IF Dst(c) \\in red[k] THEN {} ELSE {k}",
            rule=_ignored_once_red,
            models=("MCIgnoresRedLettersLivenessFailure",),
            node="derived",
        ),
        BugClass(
            "no-red-letter-back",
            "a machine turned red by a red letter sends none back to the machine it came "
            "from (a red letter never sent on one buffer)",
            "liveness: the buffer back never turns red, so the snapshot never completes",
            step="RedLettersOut",
            definition="NotBackToSender",
            tla=(
                "NotBackToSender(p, k, from) ==\n"
                "    {d \\in Out(p) : \\A c \\in from : Dst(d) # Src(c)}"
            ),
            rule=_not_back_to_sender,
            models=("MCNoRedLetterBackLivenessFailure",),
            node="derived",
            lemma="RedLetterInvariant",
        ),
        BugClass(
            "red-letter-left-unread",
            "a machine that is red in a red letter's snapshot never takes that letter from "
            "its buffer (it stops reading red letters once red)",
            "liveness only: no invariant sees it, the snapshot never completes",
            step="Deliverable",
            definition="LeavesRedLetters",
            tla=(
                "LeavesRedLetters(c) ==\n"
                "    IF buf[c] = << >> THEN {}\n"
                '    ELSE IF buf[c][1].kind = "red" /\\ Dst(c) \\in red[buf[c][1].snap] THEN {}\n'
                "    ELSE {1}"
            ),
            rule=_leaves_red_letters,
            models=("MCRedLetterLeftUnreadLivenessFailure",),
            no_node=_NOT_AT_A_NODE_NETWORK,
        ),
        # ---------------------------------------------------------------- node bugs
        BugClass(
            "late-state",
            "the local state is recorded after the node's next step (recorded lazily)",
            "Lemma 0: the recorded state includes an action of the red machine",
            node="redletter.conformance.nodes.mutants:LateState",
            no_model="the spec records the state in the atomic action that turns the machine "
            "red (TurnRed); a state recorded later has no step to override",
        ),
        BugClass(
            "early-state",
            "the local state recorded is the one before the node's last application step",
            "Lemma 0: the recorded state misses an action of the white machine",
            node="redletter.conformance.nodes.mutants:EarlyState",
            no_model="the spec keeps no earlier local state to record",
        ),
        BugClass(
            "first-channel-recorded",
            "the channel the first marker came on is recorded like the others",
            "Lemma 0: the snapshot holds a message sent by a red machine",
            node="redletter.conformance.nodes.mutants:FirstChannelRecorded",
            no_model="in the spec the first red letter turns its buffer red in the same action "
            "(Receipt1), which no step lets a bug postpone",
        ),
        BugClass(
            "complete-at-first",
            "a node declares its part complete at the first marker (it counts markers)",
            "Lemma 0: the snapshot taken at completion misses in-flight messages",
            node="redletter.conformance.nodes.mutants:CompleteAtFirst",
            no_model="completion is a property of the spec's state (every buffer red), "
            "not a step a machine takes",
        ),
        BugClass(
            "shared-recording",
            "one recorded-message list per channel, shared by every snapshot in progress",
            "Lemma 0 of the snapshot whose channel was already closed",
            node="redletter.conformance.nodes.mutants:SharedRecording",
            no_model="the spec's records are values, one per snapshot: two snapshots cannot "
            "share one list",
        ),
        BugClass(
            "duplicated-messages",
            "every recorded message is recorded twice (a retry that appends again)",
            "Lemma 0: the channel state holds a message twice",
            node="redletter.conformance.nodes.mutants:DuplicatedMessages",
            no_model="expressible as RecordMessage <- (s \\o << m, m >>); not planted in a "
            "model yet",
        ),
        BugClass(
            "aliased-messages",
            "one list object per channel is reused by every snapshot's recording",
            "Lemma 0 of an earlier, completed snapshot",
            node="redletter.conformance.nodes.mutants:AliasedMessages",
            no_model="TLA+ values cannot alias",
        ),
        BugClass(
            "crash-on-concurrent",
            "the node crashes when a second snapshot starts while one is in progress",
            "liveness: the concurrent snapshot never completes",
            node="redletter.conformance.nodes.mutants:CrashOnConcurrent",
            no_model="a crash is not a step of the spec",
            lemma="SnapshotsComplete",
        ),
        BugClass(
            "waits-for-message",
            "a channel is assumed non-empty: closed only after a message arrives on it",
            "Lemma 0: the message recorded was sent after its sender turned red",
            node="redletter.conformance.nodes.mutants:WaitsForMessage",
            no_model="the spec closes a buffer in the receipt of its red letter; waiting for "
            "a later message has no step to override",
        ),
        BugClass(
            "live-state-report",
            "the live local state is reported instead of the recorded one",
            "Lemma 0: the reported state includes actions of the red machine",
            node="redletter.conformance.nodes.mutants:LiveStateReport",
            no_model="reporting is outside the spec (see 'The collection' in ChandyLamport.tla)",
        ),
    )
}
"""Every bug class, by canonical name."""

_BY_NAME: Final[Mapping[str, BugClass]] = {
    **{a: b for b in BUGS.values() for a in b.aliases},
    **BUGS,
}


def get(name: str) -> BugClass:
    """The bug class called ``name`` (or one of its older names)."""
    bug = _BY_NAME.get(name)
    if bug is None:
        raise InputError(
            f"unknown bug class {name!r}; the registry has {', '.join(BUGS)}",
            code="RL-INPUT-USAGE",
        )
    return bug


def bug_for_override(step: str, definition: str) -> BugClass | None:
    """The bug class a cfg's ``step <- [ChandyLamport] definition`` plants, if any."""
    for b in BUGS.values():
        if b.step == step and b.definition == definition:
            return b
    return None


def runs_in(bug: BugClass, engine: str) -> tuple[bool, str]:
    """Whether ``bug`` runs in ``engine`` (one of :data:`ENGINES`), and if not, why."""
    if engine in ("tlc", "python"):
        if not bug.is_step:
            return False, bug.no_model
        if not bug.models:
            return False, "no model plants it yet"
        return True, ""
    if engine == "z3":
        if not bug.is_step:
            return False, bug.no_model
        if bug.step not in FOOTPRINTS:
            return False, (
                f"the symbolic encoding fixes {bug.step} (it varies " + ", ".join(FOOTPRINTS) + ")"
            )
        return True, ""
    if engine == "node":
        if bug.node is None:
            return False, bug.no_node
        return True, ""
    raise InputError(f"unknown engine {engine!r}; expected one of {', '.join(ENGINES)}")
