"""Way 2, **reachability**: S* is reachable from S0, and Sf from S*, in the
application's own state graph (:class:`AppGraph`: global application states, the
application's actions only, no snapshot algorithm), found by breadth-first search and
independent of the recorded sequences."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator

from redletter.python_model.config import ModelConfig
from redletter.python_model.lemmas.verdict import PASS, Verdict
from redletter.python_model.state import ACT_INTERNAL, ACT_RECEIVE, ACT_SEND, Act, GState

__all__ = ["AppGraph"]


class _Search:
    """An incremental breadth-first search from one source."""

    def __init__(self, src: GState) -> None:
        self.seen: set[GState] = {src}
        self.frontier: deque[GState] = deque([src])


class AppGraph:
    """The application's own state graph: global application states (machines'
    local states and buffers of application messages), the application's actions
    (send, internal event, FIFO receipt) and nothing of the snapshot algorithm.

    :meth:`reachable` runs a breadth-first search from the source, kept between
    calls (memo per source), so each model explores each source's graph at most once.
    """

    def __init__(self, cfg: ModelConfig) -> None:
        self.cfg = cfg
        self._searches: dict[GState, _Search] = {}
        self.explored = 0  #: application states visited over all searches

    def successors(self, g: GState) -> Iterator[tuple[Act, GState]]:
        """Every application action enabled in ``g`` and its result."""
        cfg, app = self.cfg, self.cfg.app
        loc, bufs = g
        for c in range(len(cfg.chans)):
            p, q = cfg.chan_src[c], cfg.chan_dst[c]
            x = loc[p]
            for m in app.sendable(p, q, x):
                yield (
                    (ACT_SEND, p, q, m),
                    (
                        (*loc[:p], app.after_send(p, q, m, x), *loc[p + 1 :]),
                        (*bufs[:c], (*bufs[c], m), *bufs[c + 1 :]),
                    ),
                )
        for p, x in enumerate(loc):
            for e in app.events(p, x):
                yield (
                    (ACT_INTERNAL, p, p, e),
                    (
                        (*loc[:p], app.after_event(p, e, x), *loc[p + 1 :]),
                        bufs,
                    ),
                )
        for c, b in enumerate(bufs):
            if not b:
                continue
            p, q = cfg.chan_dst[c], cfg.chan_src[c]
            x, m = loc[p], b[0]
            if app.can_receive(p, q, m, x):
                yield (
                    (ACT_RECEIVE, p, q, m),
                    (
                        (*loc[:p], app.after_receive(p, q, m, x), *loc[p + 1 :]),
                        (*bufs[:c], b[1:], *bufs[c + 1 :]),
                    ),
                )

    def reachable(self, src: GState, dst: GState) -> bool:
        """Is ``dst`` reachable from ``src`` by application actions?  A partial state
        (a machine without a state) is no application state: only itself reaches it."""
        if src == dst:
            return True
        if any(x is None for x in src[0]) or any(x is None for x in dst[0]):
            return False
        search = self._searches.get(src)
        if search is None:
            search = self._searches[src] = _Search(src)
        seen, frontier = search.seen, search.frontier
        if dst in seen:
            return True
        while frontier:
            g = frontier.popleft()
            found = False
            for _, h in self.successors(g):
                if h not in seen:
                    seen.add(h)
                    frontier.append(h)
                    self.explored += 1
                    found = found or h == dst
            if found:
                return True
        return False

    def verdicts(self, s0: GState, star: GState, sf: GState) -> tuple[Verdict, Verdict]:
        """Way 2: S0 reaches S*, and S* reaches Sf."""
        v0 = (
            PASS
            if self.reachable(s0, star)
            else Verdict(False, "the snapshot state is not reachable from the initial state")
        )
        v1 = (
            PASS
            if self.reachable(star, sf)
            else Verdict(False, "the final state is not reachable from the snapshot state")
        )
        return v0, v1
