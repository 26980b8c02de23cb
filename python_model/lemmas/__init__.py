"""EWD 864's two lemmas checked three ways that must agree.

For a snapshot k that has completed ("the initial state" S0 just before the first
machine turned red, "the snapshot state" S*, "the final state" Sf when the last red
letter was received):

1. **replay** -- the recorded action sequences: ``whiteActs[k]`` replays from S0 to
   S* and ``redActs[k]`` from S* to Sf (:func:`redletter.python_model.invariants.replay`, the
   spec's Lemma0/Lemma1);
2. **reachability** -- S* is reachable from S0, and Sf from S*, in the
   application's own state graph (:class:`AppGraph`: global application states, the
   application's actions only, no snapshot algorithm), found by breadth-first search
   and independent of the recorded sequences;
3. **shadow** -- Dijkstra's shadow networks executed along the whole trace
   (:func:`shadow_lemma0`, :func:`shadow_lemma1`): the shadow state is *defined* at
   every moment from reality by his rules (i)-(iii), and at every step of reality
   the shadow must take the corresponding step from the state the rules define now
   and arrive at the state the rules define next.

The three are not the same check: a shadow that keeps step with reality proves that
the white (red) actions replay, and a replay is a path in the application's graph,
so ``shadow => replay => reachable`` for each lemma on every completed snapshot.  In
a model without mutant steps all three must pass; in a mutant the implications must
hold.  Anything else is a bug in the kit and raises :class:`InternalError` naming the
model, the state and what each way said.  :func:`check_lemmas_everywhere` does this
on every reachable state of a model and counts where the ways differ (a mutant may
break the replay, one witness, and leave the state reachable along another path);
:func:`describe_disagreement` says so in words.

The package holds one module per way -- :mod:`.replay`, :mod:`.reachability`,
:mod:`.shadow` -- and :mod:`.check`, where they must agree.
"""

from redletter.python_model.lemmas.check import (
    WAYS,
    LemmaCounts,
    Verdicts,
    check_lemmas_everywhere,
    check_trace,
    describe_counts,
    describe_disagreement,
    is_mutant,
    label_step,
)
from redletter.python_model.lemmas.reachability import AppGraph
from redletter.python_model.lemmas.replay import replay_verdicts
from redletter.python_model.lemmas.shadow import ShadowVerdict, shadow_lemma0, shadow_lemma1
from redletter.python_model.lemmas.verdict import Verdict

__all__ = [
    "WAYS",
    "AppGraph",
    "LemmaCounts",
    "ShadowVerdict",
    "Verdict",
    "Verdicts",
    "check_lemmas_everywhere",
    "check_trace",
    "describe_counts",
    "describe_disagreement",
    "is_mutant",
    "label_step",
    "replay_verdicts",
    "shadow_lemma0",
    "shadow_lemma1",
]
