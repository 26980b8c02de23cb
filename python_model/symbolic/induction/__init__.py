"""EWD 864's two lemmas proved by induction with z3, unbounded in the run's length.

See :mod:`.invariant` for the invariant and :mod:`.prove` for the checks;
``docs/induction.md`` tells the argument.
"""

from redletter.python_model.symbolic.induction.case import (
    APPS,
    TOPOLOGIES,
    VARIANTS,
    Case,
    Variant,
    variant_named,
)
from redletter.python_model.symbolic.induction.invariant import (
    CONJUNCTS,
    LAYERS,
    PROPHECY,
    REALITY,
    SHADOW1,
    Conjunct,
)
from redletter.python_model.symbolic.induction.prove import prove
from redletter.python_model.symbolic.induction.result import (
    LAYER_TITLES,
    Budget,
    Cti,
    InductionResult,
    Outcome,
    Verdict,
)

__all__ = [
    "APPS",
    "CONJUNCTS",
    "LAYERS",
    "LAYER_TITLES",
    "PROPHECY",
    "REALITY",
    "SHADOW1",
    "TOPOLOGIES",
    "VARIANTS",
    "Budget",
    "Case",
    "Conjunct",
    "Cti",
    "InductionResult",
    "Outcome",
    "Variant",
    "Verdict",
    "prove",
    "variant_named",
]
