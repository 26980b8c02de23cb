"""Hypothesis strategies for canonical TLA+ values (shared by the value and ITF tests)."""

from __future__ import annotations

from hypothesis import strategies as st

from redletter.python_model.values import FALSE, TRUE, ModelValue, Value, fcn

_names = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,6}", fullmatch=True)

scalars: st.SearchStrategy[Value] = st.one_of(
    st.integers(min_value=-(2**40), max_value=2**40),
    st.sampled_from([TRUE, FALSE]),
    st.text(max_size=8),
    _names.filter(lambda n: n not in ("TRUE", "FALSE")).map(ModelValue),
)


def _compound(children: st.SearchStrategy[Value]) -> st.SearchStrategy[Value]:
    return st.one_of(
        st.lists(children, max_size=4).map(tuple),
        st.frozensets(children, max_size=4),
        st.dictionaries(st.text(max_size=5), children, max_size=4).map(lambda d: fcn(d.items())),
        st.dictionaries(children, children, max_size=4).map(lambda d: fcn(d.items())),
    )


tla_values: st.SearchStrategy[Value] = st.recursive(scalars, _compound, max_leaves=20)
