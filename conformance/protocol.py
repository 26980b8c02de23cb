"""The conformance protocol: message schemas in code, one JSON object per line.

Every line a node reads or writes is one JSON object (an *envelope*)::

    {"src": "harness", "dest": "p1", "body": {"type": "deliver", "msg_id": 7, ...}}

The harness is the network.  A node never talks to another node: it tells the
harness, in its reply, what it put on the wire, and the harness queues those
messages (FIFO per channel) and later delivers them, in an order it chooses,
with a ``deliver`` request.  So every step is one request and one reply, and a
run is deterministic.

This module is the single source of truth for the protocol: the dataclasses
below are what the harness and the node library exchange, :data:`MESSAGES` is
the schema table (fields, types, meaning, an example), :func:`decode` validates
a line strictly against it (raising :class:`~redletter.errors.InputError` with
the offending line), :func:`encode` writes a line, and :func:`render_markdown`
generates ``docs/protocol.md`` (``python -m redletter.conformance.protocol > docs/protocol.md``).
"""

from __future__ import annotations

import builtins
import json
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, TypeAlias

from redletter.errors import InputError

JsonValue: TypeAlias = "bool | int | float | str | list[JsonValue] | dict[str, JsonValue] | None"
Channel: TypeAlias = tuple[str, str]  #: a directed channel ``(src, dst)``

HARNESS: Final = "harness"  #: the node id of the harness (``src`` of requests)
APPS: Final = ("token", "diffusing", "history")  #: the applications a node may run
MAX_SHOWN: Final = 200  #: characters of an offending line quoted in an error message

# --------------------------------------------------------------------------
# Wire messages (what travels on a channel) and recording events.
# --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AppMsg:
    """An application message carrying an integer payload."""

    payload: int


@dataclass(frozen=True, slots=True)
class Marker:
    """A red letter (marker) of snapshot ``snapshot``."""

    snapshot: int


WireMsg: TypeAlias = AppMsg | Marker


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


Recorded: TypeAlias = RecordState | RecordMessage | CloseChannel

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


@dataclass(frozen=True, slots=True)
class StartSnapshot(Request):
    type: ClassVar[str] = "start_snapshot"
    snapshot: int = 0


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

# --------------------------------------------------------------------------
# Type specs: validation, encoding and documentation of one field's values.
# --------------------------------------------------------------------------


class _Invalid(Exception):
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
            raise _Invalid(f"{where} must be an integer, got {_show(v)}")
        if self.minimum is not None and v < self.minimum:
            raise _Invalid(f"{where} must be >= {self.minimum}, got {v}")
        return v

    def enc(self, v: Any) -> JsonValue:
        return int(v)


class _Bool(Spec):
    name = "bool"

    def conv(self, v: object, where: str) -> Any:
        if type(v) is not bool:
            raise _Invalid(f"{where} must be true or false, got {_show(v)}")
        return v

    def enc(self, v: Any) -> JsonValue:
        return bool(v)


class _Str(Spec):
    def __init__(self, name: str = "string", choices: Sequence[str] | None = None) -> None:
        self.name = name
        self.choices = tuple(choices) if choices is not None else None

    def conv(self, v: object, where: str) -> Any:
        if not isinstance(v, str) or (self.name == "node id" and not v):
            raise _Invalid(f"{where} must be a {self.name}, got {_show(v)}")
        if self.choices is not None and v not in self.choices:
            raise _Invalid(f"{where} must be one of {', '.join(self.choices)}; got {_show(v)}")
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
            raise _Invalid(f"{where} must be a channel [src, dst] of node ids, got {_show(v)}")
        return (v[0], v[1])

    def enc(self, v: Any) -> JsonValue:
        return [v[0], v[1]]


class _List(Spec):
    def __init__(self, item: Spec) -> None:
        self.item = item
        self.name = f"list of {item.name}"

    def conv(self, v: object, where: str) -> Any:
        if not isinstance(v, list):
            raise _Invalid(f"{where} must be a list, got {_show(v)}")
        return tuple(self.item.conv(x, f"{where}[{i}]") for i, x in enumerate(v))

    def enc(self, v: Any) -> JsonValue:
        return [self.item.enc(x) for x in v]


class _Map(Spec):
    def __init__(self, value: Spec, key: str) -> None:
        self.value = value
        self.name = f"object from {key} to {value.name}"

    def conv(self, v: object, where: str) -> Any:
        if not isinstance(v, dict):
            raise _Invalid(f"{where} must be an object, got {_show(v)}")
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
            raise _Invalid(f"{where} must be a {self.name} object, got {_show(v)}")
        tag = v.get(self.tag)
        variant = self.variants.get(tag) if isinstance(tag, str) else None
        if variant is None:
            allowed = ", ".join(self.variants)
            raise _Invalid(f"{where}.{self.tag} must be one of {allowed}; got {_show(tag)}")
        return variant.cls(**_fields(v, variant.fields, where, skip=(self.tag,)))

    def enc(self, v: Any) -> JsonValue:
        variant = self.by_cls[type(v)]
        out: dict[str, JsonValue] = {self.tag: variant.tag_value}
        for f in variant.fields:
            out[f.name] = f.spec.enc(getattr(v, f.attribute))
        return out


class _Object(Spec):
    def __init__(self, name: str, cls: type[Any], fields: Sequence[Field]) -> None:
        self.name = name
        self.cls = cls
        self.fields = tuple(fields)

    def conv(self, v: object, where: str) -> Any:
        if not isinstance(v, dict):
            raise _Invalid(f"{where} must be a {self.name} object, got {_show(v)}")
        return self.cls(**_fields(v, self.fields, where, skip=()))

    def enc(self, v: Any) -> JsonValue:
        return {f.name: f.spec.enc(getattr(v, f.attribute)) for f in self.fields}


def _fields(
    obj: dict[str, object], fields: Sequence[Field], where: str, skip: Sequence[str]
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    known = {f.name for f in fields}
    for key in obj:
        if key not in known and key not in skip:
            raise _Invalid(f"{where} has an unknown field {key!r}")
    for f in fields:
        if f.name in obj:
            value = obj[f.name]
            if f.optional and value is None:
                out[f.attribute] = None
            else:
                out[f.attribute] = f.spec.conv(value, f"{where}.{f.name}")
        elif not f.optional:
            raise _Invalid(f"{where} lacks the required field {f.name!r}")
    return out


def _show(v: object) -> str:
    text = json.dumps(v) if not isinstance(v, _Missing) else "nothing"
    return text if len(text) <= 40 else text[:37] + "..."


class _Missing:
    pass


def _thaw(v: Any) -> JsonValue:
    if isinstance(v, tuple):
        return [_thaw(x) for x in v]
    return v  # type: ignore[no-any-return]


# The specs of the protocol's values.
INT = _Int()
SNAPSHOT = _Int("snapshot id (int >= 1)", minimum=1)
MSG_ID = _Int("int", minimum=0)
NODE = _Str("node id")
CHANNEL = _Channel()
JSON = _Json()

WIRE_MSG = _Tagged(
    "message",
    "type",
    [
        Variant(
            "app",
            AppMsg,
            "An application message.",
            (Field("payload", INT, "The message: an integer, as in the spec."),),
        ),
        Variant(
            "marker",
            Marker,
            "A red letter (marker).",
            (Field("snapshot", SNAPSHOT, "The id of the snapshot it belongs to."),),
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
)
_REQ = (Field("msg_id", MSG_ID, "Unique per request; the reply's in_reply_to."),)
_REP = (
    Field("in_reply_to", MSG_ID, "The msg_id of the request answered."),
    Field("msg_id", MSG_ID, "The node's own message id (optional, ignored).", optional=True),
)

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
            "report",
            Report,
            "request",
            "Report what the node recorded for a snapshot.  Not a step: it changes nothing.",
            (*_REQ, Field("snapshot", SNAPSHOT, "The snapshot id.")),
            ("report_ok",),
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
    ]
}

_BY_CLS: Final[dict[type[Body], MessageSchema]] = {s.cls: s for s in MESSAGES.values()}

# --------------------------------------------------------------------------
# Encode and decode.
# --------------------------------------------------------------------------


def body_to_json(body: Body) -> dict[str, JsonValue]:
    """The JSON object of a body (``type`` first)."""
    schema = _BY_CLS[type(body)]
    out: dict[str, JsonValue] = {"type": schema.type}
    for f in schema.fields:
        value = getattr(body, f.attribute)
        if f.optional and value is None:
            continue
        out[f.name] = f.spec.enc(value)
    return out


def encode(env: Envelope) -> str:
    """One protocol line (without the newline)."""
    return json.dumps(
        {"src": env.src, "dest": env.dest, "body": body_to_json(env.body)},
        separators=(",", ":"),
    )


def body_from_json(obj: object, where: str = "body") -> Body:
    """Validate a JSON body strictly and return its dataclass.

    Raises :class:`InputError` (code ``RL-PROTO-INVALID``).
    """
    try:
        return _body(obj, where)
    except _Invalid as exc:
        raise InputError(str(exc), code="RL-PROTO-INVALID") from None


def _body(obj: object, where: str) -> Body:
    if not isinstance(obj, dict):
        raise _Invalid(f"{where} must be an object, got {_show(obj)}")
    kind = obj.get("type")
    schema = MESSAGES.get(kind) if isinstance(kind, str) else None
    if schema is None:
        raise _Invalid(f"{where}.type must be a message type of the protocol; got {_show(kind)}")
    body: Body = schema.cls(**_fields(obj, schema.fields, where, skip=("type",)))
    return body


def decode(line: str | bytes, *, source: str | None = None, lineno: int | None = None) -> Envelope:
    """Parse and validate one protocol line.

    ``source`` names where the line came from (a node, a file) for the error
    message; every problem raises :class:`InputError` whose message quotes the
    offending line (shortened to :data:`MAX_SHOWN` characters).
    """
    text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
    try:
        obj = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        reason = (
            f"not JSON ({exc.msg})"
            if isinstance(exc, json.JSONDecodeError)
            else "nested too deeply"
        )
        raise _line_error(reason, text, source, lineno, "RL-PROTO-JSON") from None
    try:
        if not isinstance(obj, dict):
            raise _Invalid(f"a line must be a JSON object, got {_show(obj)}")
        for key in obj:
            if key not in ("src", "dest", "body"):
                raise _Invalid(f"the envelope has an unknown field {key!r}")
        for key in ("src", "dest"):
            value = obj.get(key, _Missing())
            if not isinstance(value, str) or not value:
                raise _Invalid(f"{key} must be a node id, got {_show(value)}")
        if "body" not in obj:
            raise _Invalid("the envelope lacks the required field 'body'")
        body = _body(obj["body"], "body")
    except _Invalid as exc:
        raise _line_error(str(exc), text, source, lineno, "RL-PROTO-INVALID") from None
    return Envelope(obj["src"], obj["dest"], body)


def _line_error(
    reason: str, text: str, source: str | None, lineno: int | None, code: str
) -> InputError:
    shown = text.rstrip("\n")
    if len(shown) > MAX_SHOWN:
        shown = shown[:MAX_SHOWN] + f"... ({len(shown)} characters)"
    return InputError(f"bad protocol line: {reason}: {shown}", code=code, path=source, line=lineno)


def reply_types(request: type[Request]) -> tuple[str, ...]:
    """The reply types (besides ``error``) allowed for a request class."""
    return _BY_CLS[request].replies


def schema_of(body: Body) -> MessageSchema:
    """The schema of a body."""
    return _BY_CLS[type(body)]


# --------------------------------------------------------------------------
# The protocol document.
# --------------------------------------------------------------------------

_INTRO = """\
# The redletter conformance protocol

<!-- Generated by `python -m redletter.conformance.protocol > docs/protocol.md` from the
schemas in conformance/protocol.py.  Do not edit: a test fails when it is stale. -->

A node under test is a program that reads requests on **stdin** and writes
replies on **stdout**, **one JSON object per line** (UTF-8, `\\n`-terminated).
Its **stderr** is its log: the harness saves it to a file and quotes its last
lines when the node fails.  Blank lines on stdout are ignored.

Every line is an envelope:

```json
{"src": "harness", "dest": "p1", "body": {"type": "init", "msg_id": 1, ...}}
```

| field | type | meaning |
|---|---|---|
| `src` | node id | who sends the line: `harness` for requests, the node's id for replies |
| `dest` | node id | who it is for: a node id for requests, `harness` for replies |
| `body` | object | the message; `type` says which (below) |

**The harness is the network.**  Nodes never talk to each other.  A node tells
the harness, in the `sent` field of each step reply, which messages it put on
which of its output channels, in order; the harness appends them to its FIFO
queue of that channel, and later delivers the head of a channel of its choice
with a `deliver` request.  So the harness knows every message in flight without
trusting the implementation, and a run is deterministic: **one request, one
reply, nothing else**.  A node must answer every request with exactly one reply
(`<type>_ok` or `error`) whose `in_reply_to` is the request's `msg_id`, and
must not write anything else on stdout.

**The harness computes the application.**  Every app action (send, internal
event, receipt of an app message) comes with the node's new local app state
(`new_state`): a node stores it and never needs the app's logic.  A node only
implements the snapshot algorithm (Chandy–Lamport, as in EWD 864): recording
its state when it turns red, sending markers, recording input channels, for
several snapshots at once, told apart by snapshot id.

**Lifecycle.**  The harness starts the process, sends `init` to each node it
hosts (one process per node, or one process for every node: requests are
addressed by `dest`, and a process hosting several nodes must route by it),
then steps, then `report`s, then closes stdin.  On end of input a node exits
with status 0.  A node that exits early, writes a line that is not a valid
reply, takes longer than the timeout, or writes too much is reported as failed
(with its exit status, the last lines of its stdout and stderr, and the path of
its log); the harness kills its whole process group at the end.

**Strictness.**  Unknown message types and unknown fields are errors, integers
must be JSON integers (not `1.0`, not `true`), snapshot ids are integers >= 1.

**Steps and the spec's actions** (see spec/ChandyLamport.tla):

| request | spec action | vocabulary params |
|---|---|---|
| `app_send` | `SendApp` | `{"c": [self, to], "m": payload}` |
| `app_internal` | `InternalEvent` | `{"p": self, "e": event}` |
| `deliver` of an app message | `ReceiveApp` | `{"c": [from, self], "i": 1}` |
| `deliver` of a marker | `ReceiveRedLetter` | `{"c": [from, self], "i": 1}` |
| `start_snapshot` | `StartSnapshot` | `{"p": self, "k": snapshot}` |

What a correct node does in each step, per snapshot k (EWD 864's rules):
turning red (on `start_snapshot` k, or on the first marker of k) it records its
local state (`record_state`) and sends one marker of k on each output channel,
in the order of `out_channels`; the input channel a marker of k arrives on is
closed for k (`close_channel`; the first marker's channel is recorded empty);
an app message received on an input channel that is not closed for k, while
red in k, is recorded for k (`record_message`, one event per such snapshot, in
increasing snapshot order); when every input channel is closed for k, k is
`completed` at this node.  Events within one step are listed in the order they
happened (the reference nodes: `record_state`, then `close_channel`, then any
`record_message`s in increasing snapshot order).  The harness's judges compare
the events of one step as a multiset: a step is atomic, the order inside it is
not observable in the spec.

"""


def _type_md(spec: Spec) -> str:
    return spec.name


def render_markdown() -> str:
    """The protocol document (docs/protocol.md), generated from :data:`MESSAGES`."""
    out = [_INTRO]
    for direction, title in (
        ("request", "Requests (harness → node)"),
        ("reply", "Replies (node → harness)"),
    ):
        out.append(f"## {title}\n\n")
        for schema in MESSAGES.values():
            if schema.direction != direction:
                continue
            out.append(f"### `{schema.type}`\n\n{schema.doc}\n\n")
            if schema.replies:
                answers = ", ".join(f"`{r}`" for r in (*schema.replies, "error"))
                out.append(f"Answered by: {answers}.\n\n")
            out.append("| field | type | required | meaning |\n|---|---|---|---|\n")
            out.append("| `type` | string | yes | `" + schema.type + "` |\n")
            for f in schema.fields:
                req = "no" if f.optional else "yes"
                out.append(f"| `{f.name}` | {_type_md(f.spec)} | {req} | {f.doc} |\n")
            if schema.example is not None:
                example = schema.example()
                src, dest = (HARNESS, "p1") if direction == "request" else ("p1", HARNESS)
                line = encode(Envelope(src, dest, example))
                out.append(f"\nExample:\n\n```json\n{line}\n```\n\n")
    out.append("## Values\n\n")
    for spec in (WIRE_MSG, RECORDED):
        out.append(f"### {spec.name}\n\nTagged by `{spec.tag}`:\n\n")
        for v in spec.variants.values():
            fields = ", ".join(f"`{f.name}` ({f.spec.name}): {f.doc}" for f in v.fields)
            out.append(f"- `{v.tag_value}` — {v.doc} Fields: {fields}\n")
        out.append("\n")
    out.append("### sent\n\n")
    for f in SENT.fields:
        out.append(f"- `{f.name}` ({f.spec.name}): {f.doc}\n")
    out.append("\n### channel\n\nA JSON list `[src, dst]` of two node ids.\n\n")
    out.append("### Error codes\n\n| code | meaning |\n|---|---|\n")
    for code, meaning in ERROR_CODES.items():
        out.append(f"| `{code}` | {meaning} |\n")
    return "".join(out)


def main() -> None:
    """``python -m redletter.conformance.protocol``: print docs/protocol.md."""
    sys.stdout.write(render_markdown())


if __name__ == "__main__":
    main()
