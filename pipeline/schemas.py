"""The Parquet tables of the pipeline: the interface between the engines.

A *graph directory* (what ``ingest-dot`` and the Python-graph ingest write, and what
``crosscheck`` reads) holds::

    DIR/states/     Parquet (Spark output; pyarrow reads it too)   STATES
    DIR/edges/      Parquet                                         EDGES
    DIR/raw/        Parquet written by the driver while streaming   RAW_STATES, EDGES
    DIR/graph.json  what was ingested: model, source, counts

``STATES``: ``model``; ``fp`` — the state's id in its graph: TLC's signed 64-bit
fingerprint, or for Python states their explorer id or :func:`redletter.pipeline.canon.fp64`
of the canonical text; ``canon`` — the canonical encoding (:func:`redletter.pipeline.canon.
canon_state`: one ``/\\ var = value`` line per variable, variables sorted by name,
each value printed by :func:`redletter.python_model.values.print_value`, whose printer orders
sets, records and function domains canonically), so two engines agree on a state
exactly when their ``canon`` strings are equal, and ``canon`` is itself TLA+ that
:func:`redletter.python_model.values.parse_state` reads; ``initial``.  With ``--var-columns``
a ``vars`` map (variable name to printed value) is added.

``EDGES``: ``model``, ``src``, ``action`` (``null`` when the source did not name
it), ``dst``, one row per distinct labelled transition.  TLC's dashed stuttering
self-loops are counted in ``graph.json`` but not stored: they carry no action.

``RESULTS`` (campaigns): one row per trace run.
"""

from __future__ import annotations

from typing import Final

import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]

__all__ = [
    "EDGES",
    "EDGES_DDL",
    "RAW_STATES",
    "RESULTS",
    "RESULTS_DDL",
    "STATES",
    "STATES_DDL",
    "STATES_VARS",
    "STATES_VARS_DDL",
    "TRACES",
]

RAW_STATES: Final = pa.schema(
    [
        pa.field("model", pa.string(), nullable=False),
        pa.field("fp", pa.int64(), nullable=False),
        pa.field("initial", pa.bool_(), nullable=False),
        pa.field("label", pa.string(), nullable=False),  # as in the DOT file (escaped)
        pa.field("line", pa.int64(), nullable=False),  # line number in the DOT file
    ]
)

STATES: Final = pa.schema(
    [
        pa.field("model", pa.string(), nullable=False),
        pa.field("fp", pa.int64(), nullable=False),
        pa.field("canon", pa.string(), nullable=False),
        pa.field("initial", pa.bool_(), nullable=False),
    ]
)
STATES_DDL: Final = "model string, fp bigint, canon string, initial boolean"

STATES_VARS: Final = STATES.append(pa.field("vars", pa.map_(pa.string(), pa.string())))
STATES_VARS_DDL: Final = STATES_DDL + ", vars map<string,string>"

EDGES: Final = pa.schema(
    [
        pa.field("model", pa.string(), nullable=False),
        pa.field("src", pa.int64(), nullable=False),
        pa.field("action", pa.string()),
        pa.field("dst", pa.int64(), nullable=False),
    ]
)
EDGES_DDL: Final = "model string, src bigint, action string, dst bigint"

TRACES: Final = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("path", pa.string(), nullable=False),
    ]
)

RESULTS: Final = pa.schema(
    [
        pa.field("key", pa.string(), nullable=False),  # campaign, implementation, trace content
        pa.field("campaign", pa.string(), nullable=False),
        pa.field("implementation", pa.string(), nullable=False),  # node command or runner
        pa.field("id", pa.string(), nullable=False),  # trace id
        pa.field("path", pa.string(), nullable=False),
        pa.field("digest", pa.string(), nullable=False),  # SHA-256 of the trace file
        pa.field("verdict", pa.string(), nullable=False),  # pass | fail | unknown | error
        pa.field("steps", pa.int64(), nullable=False),
        pa.field("seconds", pa.float64(), nullable=False),
        pa.field("detail", pa.string(), nullable=False),
        pa.field("actions", pa.list_(pa.string()), nullable=False),  # for coverage
        pa.field("partition", pa.int64(), nullable=False),
        pa.field("finished_at", pa.float64(), nullable=False),  # Unix time
    ]
)
RESULTS_DDL: Final = (
    "key string, campaign string, implementation string, id string, path string,"
    " digest string, verdict string, steps bigint,"
    " seconds double, detail string, actions array<string>, partition bigint,"
    " finished_at double"
)
