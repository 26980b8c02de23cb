"""EWD 864's two lemmas by induction for every number of machines, every directed
graph, every number of concurrent snapshots and every starter, with z3 over sorts.

See :mod:`.vocab` for the sorts, :mod:`.invariant` for the conjuncts, :mod:`.prove`
for the questions; ``docs/induction.md`` ("For every N") tells the argument.
"""

from redletter.python_model.symbolic.induction.everyn.invariant import (
    CONJUNCTS,
    LAYERS,
    PROPHECY,
    REALITY,
    Conjunct,
)
from redletter.python_model.symbolic.induction.everyn.prove import prove_every_n, questions
from redletter.python_model.symbolic.induction.everyn.result import (
    LAYER_TITLES,
    EnCti,
    EnOutcome,
    EveryNResult,
)

__all__ = [
    "CONJUNCTS",
    "LAYERS",
    "LAYER_TITLES",
    "PROPHECY",
    "REALITY",
    "Conjunct",
    "EnCti",
    "EnOutcome",
    "EveryNResult",
    "prove_every_n",
    "questions",
]
