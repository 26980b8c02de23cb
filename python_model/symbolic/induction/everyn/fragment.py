"""Where a question sits: in the decidable fragment or not, and why.

A question is the conjunction of its context and the negation of its obligations.
Put in negation normal form and skolemized, it is *effectively propositional*
(EPR) when it has no function into a quantified sort and no existential under a
universal.  Ivy's decidable extension (and what z3's model-based quantifier
instantiation decides) allows functions and skolem functions as long as the graph
they draw between the sorts has no cycle: then every quantified sort has finitely
many ground terms, so finitely many instances.  This module computes that graph
from the question's formulas -- the uninterpreted functions into the quantified
sorts (Machine, Snapshot, Message), and one skolem function per existential
quantifier under universal ones -- and says which case holds.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from redletter.python_model.z3env import z3

__all__ = ["classify"]

Edge = tuple[str, str, str]  #: (from sort, to sort, why)


def _edges(formulas: Iterable[Any], quantified: set[str]) -> set[Edge]:
    """The edges between sorts that the formulas' functions and skolem functions draw.
    (Written against z3's C API: the Python wrappers cost a millisecond a node.)"""
    out: set[Edge] = set()
    seen: set[tuple[int, int, tuple[str, ...]]] = set()
    names: dict[int, str] = {}
    formulas = list(formulas)
    if not formulas:
        return out
    ctx = formulas[0].ctx_ref()

    def sort_name(srt: Any) -> str:
        return str(z3.Z3_get_symbol_string(ctx, z3.Z3_get_sort_name(ctx, srt)))

    def is_bool(a: Any) -> bool:
        return bool(z3.Z3_get_sort_kind(ctx, z3.Z3_get_sort(ctx, a)) == z3.Z3_BOOL_SORT)

    def walk(a: Any, polarity: int, universals: tuple[str, ...]) -> None:
        key = (z3.Z3_get_ast_id(ctx, a), polarity, universals)
        if key in seen:
            return
        seen.add(key)
        kind = z3.Z3_get_ast_kind(ctx, a)
        if kind == z3.Z3_QUANTIFIER_AST:
            n = z3.Z3_get_quantifier_num_bound(ctx, a)
            sorts = tuple(sort_name(z3.Z3_get_quantifier_bound_sort(ctx, a, i)) for i in range(n))
            body = z3.Z3_get_quantifier_body(ctx, a)
            forall = z3.Z3_is_quantifier_forall(ctx, a)
            if polarity == 0 or forall != (polarity > 0):
                why = (
                    "a quantifier under an equivalence"
                    if polarity == 0
                    else "an existential under a universal"
                )
                for src in universals:
                    for s in sorts:
                        if s in quantified:
                            out.add((src, s, why))
            if polarity == 0 or forall == (polarity > 0):
                universals = universals + sorts
            walk(body, polarity, universals)
            return
        if kind != z3.Z3_APP_AST:
            return
        d = z3.Z3_get_app_decl(ctx, a)
        dk = z3.Z3_get_decl_kind(ctx, d)
        nargs = z3.Z3_get_app_num_args(ctx, a)
        args = [z3.Z3_get_app_arg(ctx, a, i) for i in range(nargs)]
        if dk == z3.Z3_OP_UNINTERPRETED and nargs > 0:
            rng = sort_name(z3.Z3_get_range(ctx, d))
            if rng in quantified:
                fname = z3.Z3_get_symbol_string(ctx, z3.Z3_get_decl_name(ctx, d))
                for i in range(nargs):
                    dom = sort_name(z3.Z3_get_domain(ctx, d, i))
                    if dom in quantified:
                        out.add((dom, rng, f"the function {fname}"))
        if dk == z3.Z3_OP_NOT:
            walk(args[0], -polarity, universals)
        elif dk in (z3.Z3_OP_AND, z3.Z3_OP_OR):
            for x in args:
                walk(x, polarity, universals)
        elif dk == z3.Z3_OP_IMPLIES:
            walk(args[0], -polarity, universals)
            walk(args[1], polarity, universals)
        elif dk == z3.Z3_OP_ITE:
            walk(args[0], 0, universals)
            walk(args[1], polarity, universals)
            walk(args[2], polarity, universals)
        else:
            # =, distinct, iff, xor, and the arguments of functions: both polarities
            for x in args:
                walk(x, 0 if is_bool(x) else polarity, universals)

    del names
    for f in formulas:
        walk(f.as_ast(), 1, ())
    return out


def _cycle(edges: set[Edge]) -> list[str] | None:
    graph: dict[str, set[str]] = {}
    for a, b, _ in edges:
        graph.setdefault(a, set()).add(b)
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        path.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return [*path[path.index(m) :], m]
            if m not in state:
                found = visit(m)
                if found:
                    return found
        path.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            found = visit(n)
            if found:
                return found
    return None


def classify(formulas: Sequence[Any], quantified: Sequence[str]) -> str:
    """The fragment of the conjunction of ``formulas`` (the question, with its goal
    already negated), in words."""
    edges = _edges(formulas, set(quantified))
    if not edges:
        return "EPR (no function into a quantified sort, no quantifier alternation)"
    cycle = _cycle(edges)
    funcs = sorted({f"{a}→{b}" for a, b, why in edges if why.startswith("the function")})
    alts = sorted({f"{a}→{b}" for a, b, why in edges if not why.startswith("the function")})
    parts = []
    if funcs:
        parts.append("functions " + ", ".join(funcs))
    if alts:
        parts.append("∀∃ " + ", ".join(alts))
    if cycle is None:
        return "stratified, decidable (" + "; ".join(parts) + "; no cycle)"
    return (
        "outside the decidable fragment (" + "; ".join(parts) + "; cycle " + "→".join(cycle) + ")"
    )
