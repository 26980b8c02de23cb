"""redletter: a formal model and conformance kit for the Chandy–Lamport snapshot.

The name is Dijkstra's word for the marker (EWD 864).  The public API is
:mod:`redletter.api`, re-exported here; it is imported on first use, so importing
a submodule (``redletter.errors``, say) does not load the whole kit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from redletter.version import __version__

if TYPE_CHECKING:
    from redletter.api import (
        CommandNode,
        Divergence,
        InProcessNode,
        Model,
        NodeSpec,
        RedletterError,
        Result,
        Trace,
        Verdict,
        check_log,
        check_outcome,
        check_package,
        check_trace,
        command_node,
        generate_traces,
        load_model,
        model_from_text,
        read_trace,
        write_trace,
    )

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
    "__version__",
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


def __getattr__(name: str) -> Any:
    """PEP 562: the API's names, imported from :mod:`redletter.api` on first use."""
    if name in __all__:
        from redletter import api

        return getattr(api, name)
    raise AttributeError(f"module 'redletter' has no attribute {name!r}")
