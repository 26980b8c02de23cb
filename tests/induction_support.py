"""What the induction's semantics tests share: the fixed-topology interpreter's state
compared with the Python model's, and its step as the model's parameters."""

from __future__ import annotations

from collections.abc import Sequence

import redletter.python_model.symbolic.induction.concrete as cc
from redletter.python_model.state import State
from redletter.python_model.symbolic.concrete import Msg
from redletter.python_model.symbolic.induction.case import Case

__all__ = ["model_params", "same_as_model"]


def same_as_model(case: Case, r: cc.Reality, s: State) -> bool:
    """The interpreter's state ``r`` is the model's state ``s``."""

    def buf(b: Sequence[Msg]) -> tuple[int, ...]:
        return tuple(-m.snap if m.kind == "red" else m.val for m in b)

    return (
        r.local == s.local
        and tuple(buf(b) for b in r.buf) == s.buf
        and tuple(sum(1 << p for p in red) for red in r.red) == s.red
        and tuple(sum(1 << c for c in rb) for rb in r.red_buf) == s.red_buf
        and r.rec_machine == s.rec_machine
        and r.rec_buf == s.rec_buf
    )


def model_params(case: Case, st: cc.Step) -> dict[str, object]:
    """The parameters the model's ``actions.step`` takes for the interpreter's step."""
    if st.action == "SendApp":
        return {"c": list(case.chans[st.c or 0]), "m": st.m}
    if st.action in ("ReceiveApp", "ReceiveRedLetter"):
        return {"c": list(case.chans[st.c or 0]), "i": st.i}
    return {"p": case.procs[st.p or 0], "k": st.k}
