"""The unbounded state of the induction, as z3 variables.

**Reality** (the spec's variables, without the history variables):

* ``("loc", p)`` -- ``local[p]``, an integer;
* a buffer ``c`` is kept as the sequence of its application messages
  ``("app", c)`` (a z3 sequence of integers, unbounded) and, for each snapshot k,
  whether it carries the red letter of k, ``("has", k, c)``, with the messages before
  and after that letter, ``("pre", k, c)`` and ``("post", k, c)`` (all of them before,
  none after, when it carries none); ``("ord", c, j, k)`` (j < k) says that the red
  letter of j comes before that of k when both stand between the same messages.
  Each snapshot's view of a buffer is then a variable, not a term built from the
  others: z3's sequence solver handles concatenations of variables well, and
  filters, offsets and case splits over positions badly.  At most one red letter
  of each snapshot per buffer is built in (the step obligation
  ``AtMostOneRedLetter`` shows no step adds a second);
* ``("red", k, p)``, ``("rb", k, c)`` -- ``red[k]``, ``redBuf[k]``;
* ``("rm", k, p)`` -- ``recMachine[k][p]`` (meaningful once p is red in k);
* ``("rec", k, c)`` -- ``recBuf[k][c]``, a sequence.

**Prophecy** of snapshot k (Lemma 1's shadow is defined from reality's future):

* ``("sig", k, p)`` -- the local state p will record (its state when it turns red);
* ``("phi", k, c)`` -- the application messages c's source will still send into c
  before its red letter of k;
* ``("acc", k, c)``, ``("accl", k, c)`` -- the application messages c's destination
  will still receive from c while white in k, and whether it will receive c's red
  letter of k while white (that letter turns it red).

**Ghost** of snapshot k: Lemma 1's shadow network, ``("gl", k, p)`` its machines,
and per buffer its contents as ``("gpre", k, c)``, red letter ``("ghas", k, c)``,
``("gpost", k, c)`` (the messages before and after the red letter of k).

``k`` is a snapshot *index* into ``Case.snaps``, ``p`` and ``c`` machine and buffer
indices.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

from redletter.python_model.symbolic.induction.case import Case
from redletter.python_model.z3env import z3

__all__ = [
    "EMPTY",
    "SEQ",
    "Key",
    "SymState",
    "Terms",
    "concat",
    "fresh_state",
    "keys",
    "unit",
    "well_formed",
]

Expr: TypeAlias = Any  # z3.ExprRef
Key: TypeAlias = tuple[Any, ...]

SEQ = z3.SeqSort(z3.IntSort())
EMPTY = z3.Empty(SEQ)

REALITY = ("loc", "app", "has", "pre", "post", "ord", "red", "rb", "rm", "rec")
PROPHECY = ("sig", "phi", "acc", "accl", "rst")
GHOST = ("gl", "gpre", "ghas", "gpost")
_SORT = {
    "loc": "int",
    "app": "seq",
    "has": "bool",
    "pre": "seq",
    "post": "seq",
    "ord": "bool",
    "red": "bool",
    "rb": "bool",
    "rm": "int",
    "rec": "seq",
    "sig": "int",
    "phi": "seq",
    "acc": "seq",
    "accl": "bool",
    "rst": "seq",
    "gl": "int",
    "gpre": "seq",
    "ghas": "bool",
    "gpost": "seq",
}


def unit(v: Expr) -> Expr:
    """The one-message sequence ``<< v >>``."""
    return z3.Unit(v)


def concat(*parts: Expr) -> Expr:
    """``parts[0] \\o parts[1] \\o ...`` (the empty sequence for no parts)."""
    items = [p for p in parts if not (z3.is_app(p) and p.eq(EMPTY))]
    if not items:
        return EMPTY
    return items[0] if len(items) == 1 else z3.Concat(*items)


def keys(case: Case) -> Iterator[Key]:
    """Every variable of a state, reality first."""
    np, nc, ns = len(case.procs), len(case.chans), case.snapshots
    for p in range(np):
        yield ("loc", p)
    for c in range(nc):
        yield ("app", c)
        for k in range(ns):
            yield ("has", k, c)
            yield ("pre", k, c)
            yield ("post", k, c)
        for j in range(ns):
            for k in range(j + 1, ns):
                yield ("ord", c, j, k)
    for k in range(ns):
        for p in range(np):
            yield ("red", k, p)
            yield ("rm", k, p)
        for c in range(nc):
            yield ("rb", k, c)
            yield ("rec", k, c)
    for k in range(ns):
        for p in range(np):
            yield ("sig", k, p)
            yield ("gl", k, p)
        for c in range(nc):
            yield ("phi", k, c)
            yield ("acc", k, c)
            yield ("accl", k, c)
            yield ("rst", k, c)
            yield ("gpre", k, c)
            yield ("ghas", k, c)
            yield ("gpost", k, c)


@dataclass(frozen=True)
class SymState:
    """The z3 variables of one state, by key."""

    vars: Mapping[Key, Expr]
    tag: str

    def __getitem__(self, key: Key) -> Expr:
        return self.vars[key]


def fresh_state(case: Case, tag: str) -> SymState:
    """A state of fresh variables named ``<key>@<tag>``."""
    out: dict[Key, Expr] = {}
    for key in keys(case):
        name = "_".join(str(x) for x in key) + "@" + tag
        sort = _SORT[key[0]]
        if sort == "int":
            out[key] = z3.Int(name)
        elif sort == "bool":
            out[key] = z3.Bool(name)
        else:
            out[key] = z3.Const(name, SEQ)
    return SymState(out, tag)


class Terms:
    """The derived terms of one state: red letters, the buffers seen by snapshot k,
    Started/Complete, and the two shadow states."""

    def __init__(self, case: Case, s: SymState) -> None:
        self.case = case
        self.s = s
        self.ns = case.snapshots

    # ---------------------------------------------------------------- buffers

    def app_all(self, c: int) -> Expr:
        """The application messages of buffer c (AppValues(buf[c]))."""
        return self.s["app", c]

    def has(self, k: int, c: int) -> Expr:
        """Buffer c carries the red letter of snapshot index k."""
        return self.s["has", k, c]

    def pre(self, k: int, c: int) -> Expr:
        """The application messages of c before its red letter of k (all of them if
        it has none): the spec's Before(buf[c], k)."""
        return self.s["pre", k, c]

    def post(self, k: int, c: int) -> Expr:
        """The application messages of c after its red letter of k (none if none)."""
        return self.s["post", k, c]

    def before(self, c: int, j: int, k: int) -> Expr:
        """The red letter of j comes before that of k in buffer c (both carried)."""
        if j < k:
            return self.s["ord", c, j, k]
        return z3.Not(self.s["ord", c, k, j])

    # ---------------------------------------------------------------- colours

    def red(self, k: int, p: int) -> Expr:
        return self.s["red", k, p]

    def started(self, k: int) -> Expr:
        return z3.Or([self.s["red", k, p] for p in range(len(self.case.procs))])

    def complete(self, k: int) -> Expr:
        return z3.And([self.s["rb", k, c] for c in range(len(self.case.chans))])

    def in_progress(self, k: int) -> Expr:
        return z3.And(self.started(k), z3.Not(self.complete(k)))

    # ---------------------------------------------------------------- shadows

    def shadow0_local(self, k: int, p: int) -> Expr:
        """Shadow0(k).local[p]: rule (ii) of Lemma 0."""
        return z3.If(self.s["red", k, p], self.s["rm", k, p], self.s["loc", p])

    def shadow0_buf(self, k: int, c: int) -> Expr:
        """Shadow0(k).buf[c]: rule (iii) of Lemma 0, the spec's one formula."""
        return concat(self.s["rec", k, c], z3.If(self.s["rb", k, c], EMPTY, self.pre(k, c)))

    def pinned(self, k: int, c: int) -> Expr:
        """What snapshot k's stream for c is: recorded so far, then what Lemma 1's
        shadow still holds before its red letter (nothing if the letter is not in the
        shadow buffer: it turns a white machine red, or it was received)."""
        s = self.s
        return concat(s["rec", k, c], z3.If(s["ghas", k, c], s["gpre", k, c], EMPTY))

    def ghost_app(self, k: int, c: int) -> Expr:
        """The application messages of Lemma 1's shadow buffer c."""
        return concat(self.s["gpre", k, c], self.s["gpost", k, c])


def well_formed(case: Case, s: SymState) -> list[tuple[str, Expr]]:
    """The state space of the induction, as named constraints: each snapshot's view
    of a buffer splits its messages at its red letter, red letters are ordered by
    the messages before them, and a shadow buffer without a red letter keeps its
    messages in ``gpre``."""
    ns = case.snapshots
    out: list[tuple[str, Expr]] = []
    for c in range(len(case.chans)):
        name = case.chan_name(c)
        w = s["app", c]
        for k, kid in enumerate(case.snaps):
            pre, post = s["pre", k, c], s["post", k, c]
            out.append(
                (
                    f"{name} as snapshot {kid} sees it",
                    z3.If(s["has", k, c], w == concat(pre, post), z3.And(pre == w, post == EMPTY)),
                )
            )
        for j in range(ns):
            for k in range(j + 1, ns):
                both = z3.And(s["has", j, c], s["has", k, c])
                lj, lk = z3.Length(s["pre", j, c]), z3.Length(s["pre", k, c])
                out.append(
                    (
                        f"red letters {case.snaps[j]} and {case.snaps[k]} of {name} in order",
                        z3.Implies(
                            both,
                            z3.And(
                                z3.Implies(lj < lk, s["ord", c, j, k]),
                                z3.Implies(lk < lj, z3.Not(s["ord", c, j, k])),
                            ),
                        ),
                    )
                )
        for k in range(ns):
            out.append(
                (
                    f"shadow buffer {name} of snapshot {case.snaps[k]} is normal",
                    z3.Implies(z3.Not(s["ghas", k, c]), s["gpost", k, c] == EMPTY),
                )
            )
    return out
