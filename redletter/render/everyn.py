"""The space-time diagram of a run of the every-N induction's interpreter (a bug
class's run behind its counterexample to induction), drawn by
:mod:`redletter.render.diagram`: application messages with their identities,
red letters of every snapshot, the states recorded and the messages recorded."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from redletter.python_model.symbolic.induction.everyn.concrete import Net, Reality, Step
from redletter.render.diagram import Diagram, Event, RecordNote, layout

__all__ = ["everyn_diagram"]


def _tokens(n: int) -> str:
    return f"{n} token{'s' * (n != 1)}"


def everyn_diagram(
    net: Net, states: Sequence[Reality], steps: Sequence[Step], *, title: str = ""
) -> Diagram:
    """The diagram of ``steps`` from ``states[0]`` (TokenApp: local states and values
    are token counts)."""
    names = [net.name(p) for p in range(net.machines)]
    letter_ids: dict[tuple[tuple[int, int], int], deque[int]] = {}
    next_letter = len(net.msgs) + 1
    events: list[Event] = []
    for t, st in enumerate(steps, start=1):
        r, u = states[t - 1], states[t]
        received: list[Event] = []
        recorded: list[Event] = []
        sent: list[Event] = []
        if st.action == "InternalEvent":
            assert st.p is not None
            received.append(Event("internal", names[st.p], label=f"e{st.e}"))
        for k in range(net.snapshots):
            for p in sorted(u.red[k] - r.red[k]):
                recorded.append(Event("record_state", names[p], snapshot=k + 1))
        for i, c in enumerate(net.links):
            chan = (names[c[0]], names[c[1]])
            if st.action == "ReceiveApp" and st.m is not None and net.chan(st.m) == c:
                received.append(Event("receive", chan[1], chan, st.m))
                for k in range(net.snapshots):
                    if len(u.rec[k][i]) > len(r.rec[k][i]):
                        recorded.append(Event("record_message", chan[1], chan, st.m, k + 1))
            if st.action == "SendApp" and st.m is not None and net.chan(st.m) == c:
                sent.append(Event("send", chan[0], chan, st.m, label=_tokens(net.val(st.m))))
            for k in range(net.snapshots):
                before = sum(1 for x in r.bufs[i] if x == ("r", k))
                after = sum(1 for x in u.bufs[i] if x == ("r", k))
                gone = st.action == "ReceiveRedLetter" and (st.p, st.q) == c and st.k == k
                if gone:
                    lid = letter_ids[(c, k)].popleft()
                    received.append(Event("receive", chan[1], chan, lid, snapshot=k + 1))
                for _ in range(after - before + int(gone)):
                    letter_ids.setdefault((c, k), deque()).append(next_letter)
                    sent.append(Event("send", chan[0], chan, next_letter, snapshot=k + 1))
                    next_letter += 1
        events += [
            Event(e.kind, e.machine, e.channel, e.msg_id, e.snapshot, e.label, t)
            for e in received + recorded + sent
        ]
    end = states[-1]
    notes: list[RecordNote] = []
    for k in range(net.snapshots):
        if not any(s.red[k] for s in states):
            continue
        for p in range(net.machines):
            rm = end.rm[k][p]
            parts = [_tokens(rm) if rm is not None else "white: nothing recorded"]
            for i, c in enumerate(net.links):
                if c[1] != p:
                    continue
                stream = "[" + ", ".join(_tokens(net.val(m)) for m in end.rec[k][i]) + "]"
                if c not in end.rb[k]:
                    stream += " open"
                parts.append(f"{net.chan_name(c)}: {stream}")
            notes.append(RecordNote(k + 1, names[p], f"snapshot {k + 1}: " + "; ".join(parts)))
    return layout(names, events, title=title, records=notes)
