"""The symbolic engine: ChandyLamport.tla + TokenApp.tla encoded in z3 for fixed
parameters -- bounded model checking, inductive invariant checks, goal-directed
trace synthesis -- with a concrete interpreter that replays every answer.

Public API (see each module):

* :class:`SymParams`, :class:`Mutant`, :func:`complete_graph`, :func:`params_from_model`
* :func:`bmc` -> :class:`BmcResult`
* :func:`induct` -> :class:`InductionResult` (with :class:`Cti`), :data:`STRENGTHENING`
* :func:`synthesize` with goals :func:`goal_records`, :func:`goal_concurrent`,
  :func:`goal_two_starters`, :func:`goal_complete`
* :class:`Trace`, :func:`trace_to_itf`; concrete :func:`replay`, :func:`apply`
"""

from redletter.python_model.symbolic.concrete import (
    CState,
    Msg,
    Step,
    apply,
    init_state,
    replay,
    step,
)
from redletter.python_model.symbolic.engine import (
    STRENGTHENING,
    BmcResult,
    Cti,
    Goal,
    InductionResult,
    SymTrace,
    Trace,
    bmc,
    goal_complete,
    goal_concurrent,
    goal_records,
    goal_two_starters,
    induct,
    named_goal,
    necessary_conjuncts,
    synthesize,
    trace_to_itf,
)
from redletter.python_model.symbolic.params import (
    Mutant,
    SymParams,
    complete_graph,
    exact_capacity,
    params_from_model,
)

__all__ = [
    "STRENGTHENING",
    "BmcResult",
    "CState",
    "Cti",
    "Goal",
    "InductionResult",
    "Msg",
    "Mutant",
    "Step",
    "SymParams",
    "SymTrace",
    "Trace",
    "apply",
    "bmc",
    "complete_graph",
    "exact_capacity",
    "goal_complete",
    "goal_concurrent",
    "goal_records",
    "goal_two_starters",
    "induct",
    "init_state",
    "named_goal",
    "necessary_conjuncts",
    "params_from_model",
    "replay",
    "step",
    "synthesize",
    "trace_to_itf",
]
