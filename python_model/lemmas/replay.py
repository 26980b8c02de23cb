"""Way 1, **replay**: the recorded action sequences of a completed snapshot
replay -- ``whiteActs[k]`` from S0 to S*, ``redActs[k]`` from S* to Sf
(:func:`redletter.python_model.invariants.replay`, the spec's Lemma0/Lemma1)."""

from __future__ import annotations

from redletter.errors import InputError, SpecError
from redletter.python_model.config import ModelConfig
from redletter.python_model.invariants import act_enabled, act_result, replay, snapshot
from redletter.python_model.lemmas.verdict import PASS, Verdict
from redletter.python_model.state import Act, GState, State

__all__ = ["replay_verdicts"]


def replay_verdicts(cfg: ModelConfig, s: State, k: int) -> tuple[Verdict, Verdict]:
    """Way 1 on completed snapshot index ``k`` of ``s``: Lemma0 and Lemma1 by replay
    of the recorded sequences (the spec's formulas)."""
    s0, sf = s.s0[k], s.sf[k]
    if s0 is None or sf is None:
        raise InputError(f"snapshot {cfg.snaps[k]} has not completed in this state")
    star = snapshot(s, k)
    out: list[Verdict] = []
    for name, start, acts, end in (
        ("whiteActs", s0, s.white_acts[k], star),
        ("redActs", star, s.red_acts[k], sf),
    ):
        try:
            ok, g = replay(cfg, start, acts)
        except SpecError as e:
            out.append(Verdict(False, f"replaying {name} is an evaluation error: {e.message}"))
            continue
        if not ok:
            done = _replayed_prefix(cfg, start, acts)
            out.append(Verdict(False, f"action {done + 1} of {name} is not enabled"))
        elif g != end:
            target = "the snapshot state" if end is star else "the final state"
            out.append(Verdict(False, f"replaying {name} does not end in {target}"))
        else:
            out.append(PASS)
    return out[0], out[1]


def _replayed_prefix(cfg: ModelConfig, g: GState, acts: tuple[Act, ...]) -> int:
    for n, a in enumerate(acts):
        if not act_enabled(cfg, g, a):
            return n
        g = act_result(cfg, g, a)
    return len(acts)
