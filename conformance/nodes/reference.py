"""The reference node: Chandy–Lamport as in EWD 864, several snapshots at once.

Correct by construction and written to be read next to spec/ChandyLamport.tla.
Per snapshot k a machine is white or red, and so is each of its input buffers:

- turning red (``start_snapshot`` k: "as if it has received a red letter from
  nowhere", or the first red letter of k) it records its own state and sends
  one red letter over each of its output buffers, in the order of
  ``out_channels``;
- the input buffer a red letter of k comes from turns red in k (it is closed:
  its recording for k ends; for the first red letter, it stays empty);
- a red machine records, for k, the app messages it receives from input
  buffers that are still white in k (recording rule 2);
- when every input buffer is red in k, k is complete at this machine.

The app state and the app actions come from the harness (see
:mod:`redletter.conformance.node`), so the same node serves the token, diffusing and
history apps.  Run it as ``python -m redletter.conformance.nodes.reference``; it hosts
one node or several (routed by ``dest``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from redletter.conformance import protocol as p
from redletter.conformance.node import NodeFailure, SnapshotNode, serve
from redletter.conformance.protocol import JsonValue


@dataclass
class _Snapshot:
    """What this machine knows of one snapshot: its red state and recordings."""

    state: JsonValue  #: the local state recorded on turning red
    channels: dict[str, list[int]]  #: per input buffer (by source): messages recorded
    red_inputs: set[str] = field(default_factory=set)  #: input buffers red in this snapshot
    complete: bool = False


class ReferenceNode(SnapshotNode):
    """The correct algorithm; the base class of the mutants."""

    def __init__(self, init: p.Init) -> None:
        super().__init__(init)
        self.snapshots: dict[int, _Snapshot] = {}  #: the snapshots this machine is red in

    def turn_red(self, k: int) -> None:
        """Rule 1 and the red-letter traffic: record own state, send red letters."""
        self.snapshots[k] = _Snapshot(self.state, {q: [] for q in self.in_from})
        self.record_state(k)
        self.send_markers(k)

    def on_start_snapshot(self, k: int) -> None:
        if k in self.snapshots:
            raise NodeFailure(
                "precondition-failed", f"{self.node_id} is already red in snapshot {k}"
            )
        self.turn_red(k)
        self._check_complete(k)

    def on_marker(self, frm: str, k: int) -> None:
        if k not in self.snapshots:
            self.turn_red(k)
        snap = self.snapshots[k]
        if frm in snap.red_inputs:
            raise NodeFailure(
                "precondition-failed",
                f"a second red letter of snapshot {k} arrived on {frm} -> {self.node_id}",
            )
        snap.red_inputs.add(frm)
        self.close_channel(k, frm)
        self._check_complete(k)

    def on_app_message(self, frm: str, payload: int) -> None:
        for k in sorted(self.snapshots):
            snap = self.snapshots[k]
            if frm not in snap.red_inputs:
                snap.channels[frm].append(payload)
                self.record_message(k, frm, payload)

    def _check_complete(self, k: int) -> None:
        snap = self.snapshots[k]
        if not snap.complete and len(snap.red_inputs) == len(self.in_from):
            snap.complete = True
            self.complete(k)

    def report(self, k: int) -> tuple[JsonValue, Mapping[str, tuple[int, ...]], bool]:
        snap = self.snapshots.get(k)
        if snap is None:
            return None, {q: () for q in self.in_from}, False
        return snap.state, {q: tuple(ms) for q, ms in snap.channels.items()}, snap.complete


def main() -> None:
    """Serve the reference node on stdin/stdout."""
    serve(ReferenceNode)


if __name__ == "__main__":
    main()
