"""The conformance protocol: message schemas in code, one JSON object per line.

Every line a node reads or writes is one JSON object (an *envelope*)::

    {"src": "harness", "dest": "p1", "body": {"type": "deliver", "msg_id": 7, ...}}

The harness is the network.  A node never talks to another node: it tells the
harness, in its reply, what it put on the wire, and the harness queues those
messages (FIFO per channel) and later delivers them, in an order it chooses,
with a ``deliver`` request.  So every step is one request and one reply, and a
run is deterministic.

This package is the single source of truth for the protocol, in four parts:

- :mod:`~redletter.conformance.protocol.messages`: the dataclasses the harness and
  the node library exchange;
- :mod:`~redletter.conformance.protocol.schema`: a small library of JSON type specs
  and :data:`MESSAGES`, the schema table (fields, types, meaning, an example);
- :mod:`~redletter.conformance.protocol.codec`: :func:`decode` validates a line
  strictly against the table (raising :class:`~redletter.errors.InputError` with
  the offending line), :func:`encode` writes a line;
- :mod:`~redletter.conformance.protocol.docs`: :func:`render_markdown` generates
  ``docs/protocol.md`` (``python -m redletter.conformance.protocol > docs/protocol.md``).

Everything public is re-exported here: ``from redletter.conformance import protocol as p``.
"""

from redletter.conformance.protocol.codec import MAX_SHOWN, body_to_json, decode, encode
from redletter.conformance.protocol.docs import render_markdown

# --- barrier ---
from redletter.conformance.protocol.messages import (
    ALGORITHMS,
    APP_NAMES,
    APPS,
    ERROR_CODES,
    HARNESS,
    MODES,
    ROLES,
    AppInternal,
    AppInternalOk,
    AppMsg,
    AppSend,
    AppSendOk,
    Barrier,
    Body,
    Channel,
    CheckpointReportOk,
    CloseChannel,
    Deliver,
    DeliverOk,
    Emit,
    EmitOk,
    Envelope,
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
    ObserverWire,
    Recorded,
    RecordMessage,
    RecordState,
    Reply,
    Report,
    ReportOk,
    Request,
    Restore,
    RestoreOk,
    SavedState,
    Sent,
    SnapshotOk,
    SnapshotRequest,
    StartSnapshot,
    StartSnapshotOk,
    StepReply,
    StoreRecord,
    StreamRecord,
    WireMsg,
)

# --- end barrier ---
from redletter.conformance.protocol.schema import MESSAGES, MessageSchema

__all__ = [
    "ALGORITHMS",
    "APPS",
    "APP_NAMES",
    "ERROR_CODES",
    "HARNESS",
    "MAX_SHOWN",
    "MESSAGES",
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
    "MessageSchema",
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
    "body_to_json",
    "decode",
    "encode",
    "render_markdown",
]
