"""The protocol's schemas: a small library of JSON type specs, and the table of
every message type built from it.

A :class:`Spec` converts one field's JSON value to its Python value (validating it
strictly, raising :class:`Invalid` with the field's path) and back, and names its
type for the docs.  :data:`MESSAGES` is the single source of truth for the
protocol: each :class:`MessageSchema` gives a message type's dataclass (from
:mod:`redletter.conformance.protocol.messages`), direction, fields with their types
and meanings, the replies a request allows, and an example.  The codec and the
document generator read it.
"""

from __future__ import annotations

import builtins
import itertools
import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

# --- barrier ---
from redletter.conformance.protocol.messages import (
    ALGORITHMS,
    APPS,
    ERROR_CODES,
    MODES,
    ROLES,
    AppInternal,
    AppInternalOk,
    AppMsg,
    AppSend,
    AppSendOk,
    Barrier,
    Body,
    CheckpointReportOk,
    CloseChannel,
    Deliver,
    DeliverOk,
    Emit,
    EmitOk,
    Error,
    Forward,
    Idle,
    IdleOk,
    Init,
    InitOk,
    InjectBarrier,
    InjectBarrierOk,
    InTransit,
    JsonValue,
    Marker,
    RecordMessage,
    RecordState,
    Report,
    ReportOk,
    Restore,
    RestoreOk,
    SavedState,
    Sent,
    SnapshotOk,
    SnapshotRequest,
    StartSnapshot,
    StartSnapshotOk,
    StoreRecord,
    StreamRecord,
)

# --- end barrier ---

__all__ = [
    "BY_CLASS",
    "MESSAGES",
    "RECORDED",
    "SENT",
    "WIRE_MSG",
    "Field",
    "Invalid",
    "MessageSchema",
    "Missing",
    "Spec",
    "Variant",
    "object_fields",
    "show",
]

# --------------------------------------------------------------------------
# Type specs: validation, encoding and documentation of one field's values.
# --------------------------------------------------------------------------


class Invalid(Exception):
    """Raised inside validation; turned into an InputError with the whole line."""


class Spec(ABC):
    """The type of a field: converts JSON to the Python value and back."""

    name: str  #: the type as the docs write it

    @abstractmethod
    def conv(self, v: object, where: str) -> Any:
        """The Python value of JSON value ``v`` (``where``: the field's path)."""

    @abstractmethod
    def enc(self, v: Any) -> JsonValue:
        """The JSON value of Python value ``v``."""


class _Int(Spec):
    def __init__(self, name: str = "int", minimum: int | None = None) -> None:
        self.name = name
        self.minimum = minimum

    def conv(self, v: object, where: str) -> Any:
        if type(v) is not int:
            raise Invalid(f"{where} must be an integer, got {show(v)}")
        if self.minimum is not None and v < self.minimum:
            raise Invalid(f"{where} must be >= {self.minimum}, got {v}")
        return v

    def enc(self, v: Any) -> JsonValue:
        return int(v)


class _Bool(Spec):
    name = "bool"

    def conv(self, v: object, where: str) -> Any:
        if type(v) is not bool:
            raise Invalid(f"{where} must be true or false, got {show(v)}")
        return v

    def enc(self, v: Any) -> JsonValue:
        return bool(v)


class _Str(Spec):
    def __init__(self, name: str = "string", choices: Sequence[str] | None = None) -> None:
        self.name = name
        self.choices = tuple(choices) if choices is not None else None

    def conv(self, v: object, where: str) -> Any:
        if not isinstance(v, str) or (self.name == "node id" and not v):
            raise Invalid(f"{where} must be a {self.name}, got {show(v)}")
        if self.choices is not None and v not in self.choices:
            raise Invalid(f"{where} must be one of {', '.join(self.choices)}; got {show(v)}")
        return v

    def enc(self, v: Any) -> JsonValue:
        return str(v)


class _Json(Spec):
    name = "JSON"

    def conv(self, v: object, where: str) -> Any:
        return v

    def enc(self, v: Any) -> JsonValue:
        return _thaw(v)


class _Channel(Spec):
    name = "channel"

    def conv(self, v: object, where: str) -> Any:
        if not isinstance(v, list) or len(v) != 2 or not all(isinstance(x, str) and x for x in v):
            raise Invalid(f"{where} must be a channel [src, dst] of node ids, got {show(v)}")
        return (v[0], v[1])

    def enc(self, v: Any) -> JsonValue:
        return [v[0], v[1]]


class _List(Spec):
    def __init__(self, item: Spec) -> None:
        self.item = item
        self.name = f"list of {item.name}"

    def conv(self, v: object, where: str) -> Any:
        if not isinstance(v, list):
            raise Invalid(f"{where} must be a list, got {show(v)}")
        return tuple(self.item.conv(x, f"{where}[{i}]") for i, x in enumerate(v))

    def enc(self, v: Any) -> JsonValue:
        return [self.item.enc(x) for x in v]


class _Map(Spec):
    def __init__(self, value: Spec, key: str) -> None:
        self.value = value
        self.name = f"object from {key} to {value.name}"

    def conv(self, v: object, where: str) -> Any:
        if not isinstance(v, dict):
            raise Invalid(f"{where} must be an object, got {show(v)}")
        return {k: self.value.conv(x, f"{where}.{k}") for k, x in v.items()}

    def enc(self, v: Any) -> JsonValue:
        return {k: self.value.enc(x) for k, x in v.items()}


@dataclass(frozen=True)
class Field:
    """One field of an object: JSON name, type, meaning, Python attribute."""

    name: str
    spec: Spec
    doc: str
    optional: bool = False
    attr: str = ""

    @property
    def attribute(self) -> str:
        return self.attr or self.name


@dataclass(frozen=True)
class Variant:
    """One kind of a tagged object (``tag`` field = ``tag_value``)."""

    tag_value: str
    cls: type[Any]
    doc: str
    fields: tuple[Field, ...]


class _Tagged(Spec):
    """An object whose ``tag`` field selects one of several variants."""

    def __init__(self, name: str, tag: str, variants: Sequence[Variant]) -> None:
        self.name = name
        self.tag = tag
        self.variants = {v.tag_value: v for v in variants}
        self.by_cls = {v.cls: v for v in variants}

    def conv(self, v: object, where: str) -> Any:
        if not isinstance(v, dict):
            raise Invalid(f"{where} must be a {self.name} object, got {show(v)}")
        tag = v.get(self.tag)
        variant = self.variants.get(tag) if isinstance(tag, str) else None
        if variant is None:
            allowed = ", ".join(self.variants)
            raise Invalid(f"{where}.{self.tag} must be one of {allowed}; got {show(tag)}")
        return variant.cls(**object_fields(v, variant.fields, where, skip=(self.tag,)))

    def enc(self, v: Any) -> JsonValue:
        variant = self.by_cls[type(v)]
        out: dict[str, JsonValue] = {self.tag: variant.tag_value}
        for f in variant.fields:
            value = getattr(v, f.attribute)
            if f.optional and value is None:
                continue
            out[f.name] = f.spec.enc(value)
        return out


class _Object(Spec):
    def __init__(self, name: str, cls: type[Any], fields: Sequence[Field]) -> None:
        self.name = name
        self.cls = cls
        self.fields = tuple(fields)

    def conv(self, v: object, where: str) -> Any:
        if not isinstance(v, dict):
            raise Invalid(f"{where} must be a {self.name} object, got {show(v)}")
        return self.cls(**object_fields(v, self.fields, where, skip=()))

    def enc(self, v: Any) -> JsonValue:
        return {
            f.name: f.spec.enc(getattr(v, f.attribute))
            for f in self.fields
            if not (f.optional and getattr(v, f.attribute) is None)
        }


def object_fields(
    obj: dict[str, object], fields: Sequence[Field], where: str, skip: Sequence[str]
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    known = {f.name for f in fields}
    for key in obj:
        if key not in known and key not in skip:
            raise Invalid(f"{where} has an unknown field {key!r}")
    for f in fields:
        if f.name in obj:
            value = obj[f.name]
            if f.optional and value is None:
                out[f.attribute] = None
            else:
                out[f.attribute] = f.spec.conv(value, f"{where}.{f.name}")
        elif not f.optional:
            raise Invalid(f"{where} lacks the required field {f.name!r}")
    return out


def show(v: object) -> str:
    text = json.dumps(v) if not isinstance(v, Missing) else "nothing"
    return text if len(text) <= 40 else text[:37] + "..."


class Missing:
    pass


def _thaw(v: Any) -> JsonValue:
    if isinstance(v, tuple):
        return [_thaw(x) for x in v]
    return v  # type: ignore[no-any-return]


# --- observer --- (the specs the observer's messages need)


class _Increasing(_List):
    """A list of snapshot ids in strictly increasing order (a set, canonically)."""

    def conv(self, v: object, where: str) -> Any:
        out = super().conv(v, where)
        if any(a >= b for a, b in itertools.pairwise(out)):
            raise Invalid(f"{where} must list snapshot ids in increasing order, got {show(v)}")
        return out


class _BySnapshot(Spec):
    """An object keyed by snapshot ids (decimal strings, as JSON keys are strings)."""

    def __init__(self, value: Spec) -> None:
        self.value = value
        self.name = f"object from snapshot id to {value.name}"

    def conv(self, v: object, where: str) -> Any:
        if not isinstance(v, dict):
            raise Invalid(f"{where} must be an object, got {show(v)}")
        out: dict[int, Any] = {}
        for k, x in v.items():
            if not (k.isascii() and k.isdigit() and k[0] != "0" and len(k) <= 18):
                raise Invalid(f"{where} has the key {show(k)}, which is not a snapshot id (>= 1)")
            out[int(k)] = self.value.conv(x, f"{where}.{k}")
        return out

    def enc(self, v: Any) -> JsonValue:
        return {str(k): self.value.enc(x) for k, x in v.items()}


# The specs of the protocol's values.
INT = _Int()
SNAPSHOT = _Int("snapshot id (int >= 1)", minimum=1)
MSG_ID = _Int("int", minimum=0)
NODE = _Str("node id")
CHANNEL = _Channel()
JSON = _Json()
# --- barrier ---
CHECKPOINT = _Int("checkpoint id (int >= 1)", minimum=1)
STREAM_RECORD = _Object(
    "record",
    StreamRecord,
    [
        Field("source", NODE, "The source that read it."),
        Field(
            "index", _Int("int >= 1", minimum=1), "Its position in the source's input (1, 2, ...)."
        ),
        Field(
            "round", _Int("int >= 0", minimum=0), "How often it went round a back edge (0 first)."
        ),
    ],
)
# --- end barrier ---

WIRE_MSG = _Tagged(
    "message",
    "type",
    [
        Variant(
            "app",
            AppMsg,
            "An application message.",
            (
                Field("payload", INT, "The message: an integer, as in the spec."),
                # --- observer ---
                Field(
                    "tokens",
                    _Increasing(_Int("snapshot id (int >= 1)", minimum=1)),
                    "The observer algorithm only: the snapshot tokens the message bears, "
                    "i.e. the snapshots whose token its sender held when it sent it "
                    "(ObserverSnapshot's TokensHeld), in increasing order.  Absent in "
                    "the other algorithms; absent or [] means the message bears no token.",
                    optional=True,
                ),
            ),
        ),
        Variant(
            "marker",
            Marker,
            "A red letter (marker).",
            (Field("snapshot", SNAPSHOT, "The id of the snapshot it belongs to."),),
        ),
        # --- barrier ---
        Variant(
            "record",
            StreamRecord,
            "A record of a dataflow (algorithm barrier); it is also its effect on the "
            "operator that processes it.",
            STREAM_RECORD.fields,
        ),
        Variant(
            "barrier",
            Barrier,
            "A checkpoint barrier (algorithm barrier): the red letter of a dataflow.",
            (Field("checkpoint", CHECKPOINT, "The id of the checkpoint it belongs to."),),
        ),
        # --- end barrier ---
        # --- observer ---
        Variant(
            "request",
            SnapshotRequest,
            "The observer algorithm's rule 1: the observer's snapshot request, bearing "
            "the snapshot token, on [observer, q] for every other process q (whether or "
            "not that is an app channel).",
            (Field("snapshot", SNAPSHOT, "The snapshot whose token it bears."),),
        ),
        Variant(
            "saved_state",
            SavedState,
            "The observer algorithm's rule 2: the saved state a process sends its "
            "snapshot's observer when it first holds the token, with its message counts "
            "at that moment (ObserverSnapshot's SendsState and SendsCounts), on "
            "[self, observer].",
            (
                Field("snapshot", SNAPSHOT, "The snapshot."),
                Field(
                    "state",
                    JSON,
                    "The process's local app state, saved before the "
                    "message that brought the token is accepted.",
                ),
                Field(
                    "sent",
                    _Map(_Int("int", minimum=0), "output channel destination"),
                    "For every output channel [self, dst], keyed by dst: the app messages "
                    "sent on it since the start of the run.",
                ),
                Field(
                    "received",
                    _Map(_Int("int", minimum=0), "input channel source"),
                    "For every input channel [src, self], keyed by src: the app messages "
                    "received from it since the start of the run (the message bringing "
                    "the token not included).",
                ),
            ),
        ),
        Variant(
            "forward",
            Forward,
            "The observer algorithm's rule 3: a token-less app message received by a "
            "process that holds the token, forwarded to the observer as in transit, on "
            "[self, observer].",
            (
                Field("snapshot", SNAPSHOT, "The snapshot it is in transit in."),
                Field(
                    "from",
                    NODE,
                    "The source of the app channel [from, self] it was received on.",
                    attr="from_",
                ),
                Field("payload", INT, "The app message's payload."),
            ),
        ),
    ],
)
SENT = _Object(
    "sent",
    Sent,
    [
        Field("channel", CHANNEL, "The channel [self, dst]: one of the node's out_channels."),
        Field("msg", WIRE_MSG, "The message appended to the tail of that channel."),
    ],
)
RECORDED = _Tagged(
    "recorded event",
    "event",
    [
        Variant(
            "record_state",
            RecordState,
            "The node recorded its local state for a snapshot (it turned red).",
            (
                Field("snapshot", SNAPSHOT, "The snapshot."),
                Field("state", JSON, "The local app state recorded (as given by the harness)."),
            ),
        ),
        Variant(
            "record_message",
            RecordMessage,
            "The node appended a received app message to a channel's recording.",
            (
                Field("snapshot", SNAPSHOT, "The snapshot."),
                Field("channel", CHANNEL, "The input channel [src, self] recorded."),
                Field("payload", INT, "The payload appended to that channel's recording."),
            ),
        ),
        Variant(
            "close_channel",
            CloseChannel,
            "The node stopped recording an input channel: its marker arrived.",
            (
                Field("snapshot", SNAPSHOT, "The snapshot."),
                Field("channel", CHANNEL, "The input channel [src, self] closed."),
            ),
        ),
        # --- barrier ---
        Variant(
            "store_record",
            StoreRecord,
            "The node stored a record with a checkpoint as in flight on an input channel "
            "(algorithm barrier: a record its barrier overtook, or one received before the "
            "channel's barrier once the node had snapshotted).",
            (
                Field("snapshot", SNAPSHOT, "The checkpoint."),
                Field("channel", CHANNEL, "The input channel [src, self]."),
                Field("record", STREAM_RECORD, "The record stored."),
            ),
        ),
        # --- end barrier ---
    ],
)

# --- observer ---
IN_TRANSIT = _Object(
    "in transit",
    InTransit,
    [
        Field("channel", CHANNEL, "An app channel [src, dst]."),
        Field(
            "payloads",
            _List(INT),
            "The messages in transit on it in the snapshot (a bag: increasing order).",
        ),
    ],
)

# --------------------------------------------------------------------------
# The schema table.
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class MessageSchema:
    """One message type: who sends it, its fields, its meaning, an example."""

    type: str
    cls: builtins.type[Body]
    direction: str  #: "request" (harness -> node) or "reply" (node -> harness)
    doc: str
    fields: tuple[Field, ...]
    replies: tuple[str, ...] = ()  #: for a request: the reply types allowed (besides error)
    example: Callable[[], Body] | None = None


_STEP_FIELDS = (
    Field(
        "sent",
        _List(SENT),
        "Every message the node put on the wire during this step, in order "
        "(app messages and markers).",
    ),
    Field(
        "recorded",
        _List(RECORDED),
        "Every recording event of this step, in the order they happened.",
    ),
    Field(
        "completed",
        _List(SNAPSHOT),
        "The snapshots whose local part this step completed: the node has recorded "
        "its state and closed every input channel.  Each id at most once per run.",
    ),
    # --- barrier ---
    Field(
        "blocked",
        _List(CHANNEL),
        "Algorithm barrier: the input channels [src, self] the node blocks after this step "
        "(aligned mode: an input whose barrier arrived, until every input has it); the "
        "harness delivers nothing from them.  Absent: none (every other algorithm).",
        optional=True,
    ),
    # --- end barrier ---
)
_REQ = (Field("msg_id", MSG_ID, "Unique per request; the reply's in_reply_to."),)
_REP = (
    Field("in_reply_to", MSG_ID, "The msg_id of the request answered."),
    Field("msg_id", MSG_ID, "The node's own message id (optional, ignored).", optional=True),
)

# --- barrier --- the dataflow nodes' requests and replies (docs: BARRIER_SECTION)
_BARRIER_MESSAGES: Final = (
    MessageSchema(
        "emit",
        Emit,
        "request",
        "Algorithm barrier, to a source: read the next record and send it (spec: Emit).  "
        "The harness computes the app: it names the record and the operator it goes to; "
        "the source must put it on [self, to].",
        (
            *_REQ,
            Field("record", STREAM_RECORD, "The record (source = self, index = position + 1)."),
            Field("to", NODE, "The operator it goes to: [self, to] is one of out_channels."),
            Field("new_state", JSON, "The source's position after the read (= record.index)."),
        ),
        ("emit_ok",),
        lambda: Emit(msg_id=8, record=StreamRecord("p1", 1, 0), to="p2", new_state=1),
    ),
    MessageSchema(
        "inject_barrier",
        InjectBarrier,
        "request",
        "Algorithm barrier, to a source: inject the barrier of a checkpoint (spec: "
        "InjectBarrier): record the position and send the barrier on every output.",
        (*_REQ, Field("checkpoint", CHECKPOINT, "The checkpoint id.")),
        ("inject_barrier_ok",),
        lambda: InjectBarrier(msg_id=9, checkpoint=1),
    ),
    MessageSchema(
        "restore",
        Restore,
        "request",
        "Algorithm barrier: the job failed and restarts from a completed checkpoint (spec: "
        "Restore).  Sent to every node; the harness has emptied every channel.  The node "
        "resets its state to what it recorded for the checkpoint (a source: its position; "
        "an operator: its state), forgets every checkpoint in progress and hands back the "
        "records it stored with the checkpoint for its input channels.",
        (*_REQ, Field("checkpoint", CHECKPOINT, "The checkpoint restored.")),
        ("restore_ok",),
        lambda: Restore(msg_id=10, checkpoint=1),
    ),
    MessageSchema(
        "emit_ok",
        EmitOk,
        "reply",
        "The record was read and sent.",
        (*_REP, *_STEP_FIELDS),
        example=lambda: EmitOk(
            in_reply_to=8, sent=(Sent(("p1", "p2"), StreamRecord("p1", 1, 0)),), blocked=()
        ),
    ),
    MessageSchema(
        "inject_barrier_ok",
        InjectBarrierOk,
        "reply",
        "The barrier was injected.",
        (*_REP, *_STEP_FIELDS),
        example=lambda: InjectBarrierOk(
            in_reply_to=9,
            sent=(Sent(("p1", "p2"), Barrier(1)),),
            recorded=(RecordState(1, 1),),
            completed=(1,),
            blocked=(),
        ),
    ),
    MessageSchema(
        "restore_ok",
        RestoreOk,
        "reply",
        "The node restored the checkpoint.",
        (
            *_REP,
            *_STEP_FIELDS,
            Field(
                "state", JSON, "The node's state after the restore (position or operator state)."
            ),
            Field(
                "requeued",
                _Map(_List(STREAM_RECORD), "input channel source"),
                "The records stored with the checkpoint for each input channel [src, self], "
                "keyed by src, oldest first: the harness puts them back in the channel.",
            ),
        ),
        example=lambda: RestoreOk(
            in_reply_to=10, blocked=(), state=[["s1", 1, 0]], requeued={"s2": ()}
        ),
    ),
    MessageSchema(
        "checkpoint_report_ok",
        CheckpointReportOk,
        "reply",
        "Algorithm barrier: the reply to `report`, what the node recorded for the checkpoint.",
        (
            *_REP,
            Field(
                "state",
                JSON,
                "The recorded position (source) or state (operator); null if the node has not "
                "snapshotted the checkpoint.",
            ),
            Field(
                "channels",
                _Map(_List(STREAM_RECORD), "input channel source"),
                "For every input channel [src, self], keyed by src: the records stored with "
                "the checkpoint, in order (empty list if none).",
            ),
            Field(
                "complete",
                _Bool(),
                "True iff the node snapshotted and the barrier arrived on every input.",
            ),
        ),
        example=lambda: CheckpointReportOk(
            in_reply_to=6, state=[["s1", 1, 0]], channels={"s1": (), "s2": ()}, complete=True
        ),
    ),
)
# --- end barrier ---

MESSAGES: Final[dict[str, MessageSchema]] = {
    s.type: s
    for s in [
        MessageSchema(
            "init",
            Init,
            "request",
            "The first request to every node: who it is, its channels, its app and its "
            "initial local app state.  A process hosting several nodes receives one init "
            "per node (`dest` = the node id).",
            (
                *_REQ,
                Field("node_id", NODE, "The id of the node being initialised (= dest)."),
                Field("node_ids", _List(NODE), "Every node of the network."),
                Field(
                    "in_channels",
                    _List(CHANNEL),
                    "The node's input channels [src, self], in a fixed order.",
                ),
                Field(
                    "out_channels",
                    _List(CHANNEL),
                    "The node's output channels [self, dst], in a fixed order; markers "
                    "are sent on them in this order.",
                ),
                Field("app", _Str("app name", APPS), "The application: " + ", ".join(APPS)),
                Field("app_state", JSON, "The node's initial local app state."),
                Field(
                    "algorithm",
                    _Str("algorithm name", ALGORITHMS),
                    "The snapshot algorithm the node must run: "
                    + ", ".join(ALGORITHMS)
                    + ".  Absent for chandy-lamport (EWD 864's, the default); a node that "
                    "does not implement the one asked answers `error` `unsupported`.",
                    optional=True,
                ),
                # --- barrier ---
                Field(
                    "role",
                    _Str("role", ROLES),
                    "Algorithm barrier: source (reads the input, no input channels) or "
                    "operator.  Absent for every other algorithm.",
                    optional=True,
                ),
                Field(
                    "back_edges",
                    _List(CHANNEL),
                    "Algorithm barrier: the node's input channels that are back edges "
                    "(close a cycle; never blocked, their records logged).  Absent: none.",
                    optional=True,
                ),
                Field(
                    "mode",
                    _Str("mode", MODES),
                    "Algorithm barrier: aligned (block each input after its barrier until "
                    "every input has one) or unaligned (snapshot at the first barrier, which "
                    "overtakes the records ahead of it).",
                    optional=True,
                ),
                # --- end barrier ---
                # --- observer ---
                Field(
                    "observers",
                    _BySnapshot(NODE),
                    "The observer algorithm only (absent otherwise): for every snapshot "
                    "id, the node that is its observer (ObserverSnapshot's Observer), "
                    "where saved states and forwarded messages go.",
                    optional=True,
                ),
            ),
            ("init_ok",),
            lambda: Init(
                msg_id=1,
                node_id="p1",
                node_ids=("p1", "p2"),
                in_channels=(("p2", "p1"),),
                out_channels=(("p1", "p2"),),
                app="token",
                app_state=3,
            ),
        ),
        MessageSchema(
            "app_send",
            AppSend,
            "request",
            "Perform the app action 'send payload to `to`' (spec: SendApp).  The harness "
            "computes the app and gives the node its new local state; the node must put "
            "the app message on channel [self, to].",
            (
                *_REQ,
                Field("to", NODE, "The receiver: [self, to] is one of out_channels."),
                Field("payload", INT, "The app message to send."),
                Field("new_state", JSON, "The node's local app state after the send."),
            ),
            ("app_send_ok",),
            lambda: AppSend(msg_id=2, to="p2", payload=1, new_state=2),
        ),
        MessageSchema(
            "app_internal",
            AppInternal,
            "request",
            "Perform an internal app event (spec: InternalEvent).",
            (
                *_REQ,
                Field("event", INT, "The event."),
                Field("new_state", JSON, "The node's local app state after the event."),
            ),
            ("app_internal_ok",),
            lambda: AppInternal(msg_id=3, event=0, new_state={"active": False}),
        ),
        MessageSchema(
            "deliver",
            Deliver,
            "request",
            "Receive the message at the head of channel [from, self] (spec: ReceiveApp "
            "or ReceiveRedLetter).  The harness removed it from the channel.",
            (
                *_REQ,
                Field(
                    "from", NODE, "The sender: [from, self] is one of in_channels.", attr="from_"
                ),
                Field("msg", WIRE_MSG, "The message received."),
                Field(
                    "new_state",
                    JSON,
                    "For an app message: the node's local app state after receiving it. "
                    "Absent (or null) for a marker.",
                    optional=True,
                ),
                # --- barrier ---
                Field(
                    "outputs",
                    _List(SENT),
                    "Algorithm barrier, for a record: the records the operator must send on "
                    "after applying it (spec: Outputs(p, m)), in order.  Absent: none.",
                    optional=True,
                ),
                Field(
                    "overtaken",
                    _List(STREAM_RECORD),
                    "Algorithm barrier, unaligned mode, for a barrier: the records ahead of it "
                    "in the channel, which it overtakes (they stay in the channel and are "
                    "delivered later).  Absent: none.",
                    optional=True,
                ),
                # --- end barrier ---
            ),
            ("deliver_ok",),
            lambda: Deliver(msg_id=4, from_="p2", msg=Marker(1)),
        ),
        MessageSchema(
            "start_snapshot",
            StartSnapshot,
            "request",
            "Start snapshot `snapshot` as if a red letter came from nowhere (spec: StartSnapshot).",
            (*_REQ, Field("snapshot", SNAPSHOT, "The snapshot id.")),
            ("start_snapshot_ok",),
            lambda: StartSnapshot(msg_id=5, snapshot=1),
        ),
        MessageSchema(
            "idle",
            Idle,
            "request",
            "Nothing happens in the application: the node may take the steps its algorithm "
            "lets it take at any time (the lazy algorithm pays owed markers; an observer "
            "declares a snapshot complete).  The harness sends it when the schedule gives "
            "a node a turn with nothing to receive (the fairness of those steps: a node "
            "that never takes them when idle fails).  A Chandy-Lamport node does nothing.",
            _REQ,
            ("idle_ok",),
            lambda: Idle(msg_id=7),
        ),
        MessageSchema(
            "report",
            Report,
            "request",
            "Report what the node recorded for a snapshot.  Not a step: it changes nothing.  "
            "In the observer algorithm the snapshot's observer answers `snapshot_ok` (the "
            "whole snapshot), every other node `report_ok` (its saved state, no channels).",
            (*_REQ, Field("snapshot", SNAPSHOT, "The snapshot id.")),
            ("report_ok", "checkpoint_report_ok", "snapshot_ok"),
            lambda: Report(msg_id=6, snapshot=1),
        ),
        MessageSchema(
            "init_ok",
            InitOk,
            "reply",
            "The node is initialised.",
            _REP,
            example=lambda: InitOk(in_reply_to=1),
        ),
        MessageSchema(
            "app_send_ok",
            AppSendOk,
            "reply",
            "The send was performed.",
            (*_REP, *_STEP_FIELDS),
            example=lambda: AppSendOk(in_reply_to=2, sent=(Sent(("p1", "p2"), AppMsg(1)),)),
        ),
        MessageSchema(
            "app_internal_ok",
            AppInternalOk,
            "reply",
            "The internal event was performed.",
            (*_REP, *_STEP_FIELDS),
            example=lambda: AppInternalOk(in_reply_to=3),
        ),
        MessageSchema(
            "deliver_ok",
            DeliverOk,
            "reply",
            "The message was received.",
            (*_REP, *_STEP_FIELDS),
            example=lambda: DeliverOk(
                in_reply_to=4,
                sent=(Sent(("p1", "p2"), Marker(1)),),
                recorded=(RecordState(1, 2), CloseChannel(1, ("p2", "p1"))),
                completed=(1,),
            ),
        ),
        MessageSchema(
            "start_snapshot_ok",
            StartSnapshotOk,
            "reply",
            "The snapshot was started.",
            (*_REP, *_STEP_FIELDS),
            example=lambda: StartSnapshotOk(
                in_reply_to=5,
                sent=(Sent(("p1", "p2"), Marker(1)),),
                recorded=(RecordState(1, 2),),
            ),
        ),
        MessageSchema(
            "idle_ok",
            IdleOk,
            "reply",
            "The idle turn was taken (what it sent, recorded and completed).",
            (*_REP, *_STEP_FIELDS),
            example=lambda: IdleOk(in_reply_to=7),
        ),
        MessageSchema(
            "report_ok",
            ReportOk,
            "reply",
            "What the node recorded for the snapshot so far.",
            (
                *_REP,
                Field(
                    "local_state",
                    JSON,
                    "The recorded local app state; null if the node has not recorded one "
                    "(app states are never null).",
                ),
                Field(
                    "channels",
                    _Map(_List(INT), "input channel source"),
                    "For every input channel [src, self], keyed by src: the payloads "
                    "recorded for it, in order (empty list if none).",
                ),
                Field(
                    "complete",
                    _Bool(),
                    "True iff the node recorded its state and closed every input channel.",
                ),
            ),
            example=lambda: ReportOk(
                in_reply_to=6, local_state=2, channels={"p2": (1,)}, complete=True
            ),
        ),
        # --- observer ---
        MessageSchema(
            "snapshot_ok",
            SnapshotOk,
            "reply",
            "The observer algorithm: the observer's report of its snapshot as it has built "
            "it so far (ObserverSnapshot's Snapshot(k)).",
            (
                *_REP,
                Field(
                    "complete",
                    _Bool(),
                    "True iff the observer has declared the snapshot complete.",
                ),
                Field(
                    "states",
                    _Map(JSON, "node id"),
                    "The saved state of every process it has (its own included), by node.",
                ),
                Field(
                    "in_transit",
                    _List(IN_TRANSIT),
                    "The messages in transit, per app channel: one entry per channel with "
                    "at least one forwarded message (each channel at most once).",
                ),
            ),
            example=lambda: SnapshotOk(
                in_reply_to=6,
                complete=True,
                states={"p1": 1, "p2": 0},
                in_transit=(InTransit(("p2", "p1"), (1,)),),
            ),
        ),
        MessageSchema(
            "error",
            Error,
            "reply",
            "The node could not perform the request.  The harness reports it as a failure "
            "of the node, with code and text.",
            (
                *_REP,
                Field("code", _Str("error code", tuple(ERROR_CODES)), "One of the codes below."),
                Field("text", _Str(), "What went wrong, for a human."),
            ),
            example=lambda: Error(
                in_reply_to=5, code="precondition-failed", text="p1 already recorded snapshot 1"
            ),
        ),
        *_BARRIER_MESSAGES,
    ]
}

#: The schema of each body class.
BY_CLASS: Final[dict[type[Body], MessageSchema]] = {s.cls: s for s in MESSAGES.values()}
