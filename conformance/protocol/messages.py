"""The protocol's messages: what travels on a channel, what a node records, and the
bodies of the requests and replies (one dataclass each).

Pure data: their JSON schemas are in :mod:`redletter.conformance.protocol.schema`,
their encoding in :mod:`redletter.conformance.protocol.codec`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar, Final, TypeAlias

__all__ = [
    "ALGORITHMS",
    "APPS",
    "APP_NAMES",
    "ERROR_CODES",
    "HARNESS",
    # --- barrier ---
    "MODES",
    "ROLES",
    "AppInternal",
    "AppInternalOk",
    "AppMsg",
    "AppSend",
    "AppSendOk",
    "Barrier",
    "Body",
    "Channel",
    "CheckpointReportOk",
    "CloseChannel",
    "Deliver",
    "DeliverOk",
    "Emit",
    "EmitOk",
    "Envelope",
    "Error",
    "Forward",
    "Idle",
    "IdleOk",
    "InTransit",
    "Init",
    "InitOk",
    "InjectBarrier",
    "InjectBarrierOk",
    "JsonValue",
    "Marker",
    "ObserverWire",
    "RecordMessage",
    "RecordState",
    "Recorded",
    "Reply",
    "Report",
    "ReportOk",
    "Request",
    "Restore",
    "RestoreOk",
    "SavedState",
    "Sent",
    "SnapshotOk",
    "SnapshotRequest",
    "StartSnapshot",
    "StartSnapshotOk",
    "StepReply",
    "StoreRecord",
    "StreamRecord",
    "WireMsg",
]

JsonValue: TypeAlias = "bool | int | float | str | list[JsonValue] | dict[str, JsonValue] | None"
Channel: TypeAlias = tuple[str, str]  #: a directed channel ``(src, dst)``

HARNESS: Final = "harness"  #: the node id of the harness (``src`` of requests)
#: The applications a node may run (keyed-count: the dataflow app of BarrierSnapshot).
APPS: Final = ("token", "diffusing", "history", "keyed-count")
#: The snapshot algorithms a node may be asked to run (``init.algorithm``); the first is
#: the default, EWD 864's, and its name is omitted from ``init``.
ALGORITHMS: Final = ("chandy-lamport", "lazy", "observer", "barrier")
#: The protocol's name of each application module of the spec.
APP_NAMES: Final[Mapping[str, str]] = {
    "TokenApp": "token",
    "DiffusingApp": "diffusing",
    "HistoryApp": "history",
}

# --------------------------------------------------------------------------
# Wire messages (what travels on a channel) and recording events.
# --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AppMsg:
    """An application message carrying an integer payload.

    ``tokens``: the observer algorithm's snapshot tokens the message bears
    (increasing snapshot ids); ``None`` (omitted on the wire) in the other
    algorithms, and read as "no token" by the observer's."""

    payload: int
    tokens: tuple[int, ...] | None = None


@dataclass(frozen=True, slots=True)
class Marker:
    """A red letter (marker) of snapshot ``snapshot``."""

    snapshot: int


# --- barrier --- (Flink's asynchronous barrier snapshots: spec/BarrierSnapshot.tla)


@dataclass(frozen=True, slots=True)
class StreamRecord:
    """A record of a dataflow: the ``index``-th record source ``source`` read, in its
    ``round`` (how often it went round a back edge).  The triple is also its effect on
    the operator that processes it (BarrierSnapshot's ``Rec(s, i, r)``)."""

    source: str
    index: int
    round: int


@dataclass(frozen=True, slots=True)
class Barrier:
    """A checkpoint barrier (BarrierSnapshot's ``Barrier(n)``): the red letter of a dataflow."""

    checkpoint: int


# --- end barrier ---

WireMsg: TypeAlias = "AppMsg | Marker | StreamRecord | Barrier | ObserverWire"


@dataclass(frozen=True, slots=True)
class Sent:
    """A message the node put on the wire: ``msg`` at the tail of ``channel``."""

    channel: Channel
    msg: WireMsg


@dataclass(frozen=True, slots=True)
class RecordState:
    """The node recorded its local state ``state`` for snapshot ``snapshot``."""

    snapshot: int
    state: JsonValue


@dataclass(frozen=True, slots=True)
class RecordMessage:
    """The node appended ``payload`` to its recording of ``channel`` in ``snapshot``."""

    snapshot: int
    channel: Channel
    payload: int


@dataclass(frozen=True, slots=True)
class CloseChannel:
    """The node stopped recording ``channel`` in ``snapshot`` (its red letter arrived)."""

    snapshot: int
    channel: Channel


# --- barrier ---


@dataclass(frozen=True, slots=True)
class StoreRecord:
    """The node stored ``record`` with checkpoint ``snapshot`` as in flight on its input
    ``channel`` (BarrierSnapshot's ``recChan``: a record a barrier overtook, or one
    received from an input before its barrier once the node has snapshotted)."""

    snapshot: int
    channel: Channel
    record: StreamRecord


# --- end barrier ---

Recorded: TypeAlias = RecordState | RecordMessage | CloseChannel | StoreRecord

# --------------------------------------------------------------------------
# Bodies.  Requests go harness -> node and carry msg_id; replies go
# node -> harness and carry in_reply_to.
# --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Body:
    """Fields common to every body; ``type`` is a class attribute."""

    type: ClassVar[str] = ""


@dataclass(frozen=True, slots=True)
class Request(Body):
    """A request from the harness; the node answers with exactly one reply."""

    msg_id: int = 0


@dataclass(frozen=True, slots=True)
class Reply(Body):
    """A reply from a node to the request whose ``msg_id`` is ``in_reply_to``."""

    in_reply_to: int = 0
    msg_id: int | None = None


@dataclass(frozen=True, slots=True)
class Init(Request):
    type: ClassVar[str] = "init"
    node_id: str = ""
    node_ids: tuple[str, ...] = ()
    in_channels: tuple[Channel, ...] = ()
    out_channels: tuple[Channel, ...] = ()
    app: str = "token"
    app_state: JsonValue = None
    algorithm: str | None = None  #: None: chandy-lamport (the field is then omitted)
    # --- barrier --- (absent in every other algorithm's init)
    role: str | None = None  #: "source" or "operator"
    back_edges: tuple[Channel, ...] | None = None  #: the input channels that are back edges
    mode: str | None = None  #: "aligned" or "unaligned"
    #: the observer algorithm: snapshot id -> its observer (None in the other algorithms)
    observers: Mapping[int, str] | None = None


@dataclass(frozen=True, slots=True)
class AppSend(Request):
    type: ClassVar[str] = "app_send"
    to: str = ""
    payload: int = 0
    new_state: JsonValue = None


@dataclass(frozen=True, slots=True)
class AppInternal(Request):
    type: ClassVar[str] = "app_internal"
    event: int = 0
    new_state: JsonValue = None


@dataclass(frozen=True, slots=True)
class Deliver(Request):
    type: ClassVar[str] = "deliver"
    from_: str = ""
    msg: WireMsg = AppMsg(0)
    new_state: JsonValue = None
    # --- barrier --- (absent in every other algorithm's deliver)
    outputs: tuple[Sent, ...] | None = None  #: the records an operator sends on (None: none)
    overtaken: tuple[StreamRecord, ...] | None = None  #: records an unaligned barrier overtook


@dataclass(frozen=True, slots=True)
class StartSnapshot(Request):
    type: ClassVar[str] = "start_snapshot"
    snapshot: int = 0


@dataclass(frozen=True, slots=True)
class Idle(Request):
    type: ClassVar[str] = "idle"


@dataclass(frozen=True, slots=True)
class Report(Request):
    type: ClassVar[str] = "report"
    snapshot: int = 0


@dataclass(frozen=True, slots=True)
class InitOk(Reply):
    type: ClassVar[str] = "init_ok"


@dataclass(frozen=True, slots=True)
class StepReply(Reply):
    """The reply to every step request: what the step put on the wire and recorded."""

    sent: tuple[Sent, ...] = ()
    recorded: tuple[Recorded, ...] = ()
    completed: tuple[int, ...] = ()
    blocked: tuple[Channel, ...] | None = None  #: barrier: inputs blocked after the step


@dataclass(frozen=True, slots=True)
class AppSendOk(StepReply):
    type: ClassVar[str] = "app_send_ok"


@dataclass(frozen=True, slots=True)
class AppInternalOk(StepReply):
    type: ClassVar[str] = "app_internal_ok"


@dataclass(frozen=True, slots=True)
class DeliverOk(StepReply):
    type: ClassVar[str] = "deliver_ok"


@dataclass(frozen=True, slots=True)
class StartSnapshotOk(StepReply):
    type: ClassVar[str] = "start_snapshot_ok"


@dataclass(frozen=True, slots=True)
class IdleOk(StepReply):
    type: ClassVar[str] = "idle_ok"


@dataclass(frozen=True, slots=True)
class ReportOk(Reply):
    type: ClassVar[str] = "report_ok"
    local_state: JsonValue = None
    channels: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    complete: bool = False


@dataclass(frozen=True, slots=True)
class Error(Reply):
    type: ClassVar[str] = "error"
    code: str = "internal"
    text: str = ""


# --- barrier --- requests and replies of the dataflow nodes


@dataclass(frozen=True, slots=True)
class Emit(Request):
    type: ClassVar[str] = "emit"
    record: StreamRecord = StreamRecord("", 1, 0)
    to: str = ""
    new_state: JsonValue = None


@dataclass(frozen=True, slots=True)
class InjectBarrier(Request):
    type: ClassVar[str] = "inject_barrier"
    checkpoint: int = 0


@dataclass(frozen=True, slots=True)
class Restore(Request):
    type: ClassVar[str] = "restore"
    checkpoint: int = 0


@dataclass(frozen=True, slots=True)
class EmitOk(StepReply):
    type: ClassVar[str] = "emit_ok"


@dataclass(frozen=True, slots=True)
class InjectBarrierOk(StepReply):
    type: ClassVar[str] = "inject_barrier_ok"


@dataclass(frozen=True, slots=True)
class RestoreOk(StepReply):
    type: ClassVar[str] = "restore_ok"
    state: JsonValue = None
    requeued: Mapping[str, tuple[StreamRecord, ...]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CheckpointReportOk(Reply):
    type: ClassVar[str] = "checkpoint_report_ok"
    state: JsonValue = None
    channels: Mapping[str, tuple[StreamRecord, ...]] = field(default_factory=dict)
    complete: bool = False


#: The roles and checkpointing modes of a dataflow node (``init.role``, ``init.mode``).
ROLES: Final = ("source", "operator")
MODES: Final = ("aligned", "unaligned")

# --- end barrier ---


@dataclass(frozen=True, slots=True)
class Envelope:
    """One line of the protocol."""

    src: str
    dest: str
    body: Body


#: The error codes a node may put in an ``error`` body, and what each means.
ERROR_CODES: Final[Mapping[str, str]] = {
    "bad-request": "the request was not valid for this node (e.g. unknown destination)",
    "not-initialised": "a request other than init came before init",
    "precondition-failed": "the request is not enabled in the node's state "
    "(e.g. start_snapshot of a snapshot the node already recorded)",
    "unsupported": "the node does not implement this request or application",
    "internal": "any other failure inside the node",
}


# --- observer ---
# The observer with a piggybacked token (seeds/003, spec/ObserverSnapshot.tla): the
# messages of the observer's own channels, and the observer's report of a snapshot.


@dataclass(frozen=True, slots=True)
class SnapshotRequest:
    """Rule 1: the observer's snapshot request, bearing the token of ``snapshot``."""

    snapshot: int


@dataclass(frozen=True, slots=True)
class SavedState:
    """Rule 2: a process's saved state for ``snapshot``, sent to its observer, with its
    message counts at that moment (the spec's SendsState and SendsCounts)."""

    snapshot: int
    state: JsonValue
    sent: Mapping[str, int]  #: per output channel [self, dst], by dst: app messages sent
    received: Mapping[str, int]  #: per input channel [src, self], by src: app messages received


@dataclass(frozen=True, slots=True)
class Forward:
    """Rule 3: a token-less app message ``payload`` received on [from_, sender] by a
    process holding the token of ``snapshot``, forwarded to the observer as in transit."""

    snapshot: int
    from_: str
    payload: int


ObserverWire: TypeAlias = SnapshotRequest | SavedState | Forward


@dataclass(frozen=True, slots=True)
class InTransit:
    """The messages of the snapshot in transit on ``channel`` (a bag, increasing)."""

    channel: Channel
    payloads: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class SnapshotOk(Reply):
    """The observer's report of a snapshot: the spec's Snapshot(k)."""

    type: ClassVar[str] = "snapshot_ok"
    complete: bool = False
    states: Mapping[str, JsonValue] = field(default_factory=dict)
    in_transit: tuple[InTransit, ...] = ()
