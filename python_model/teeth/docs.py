"""``docs/teeth.md`` and the "The teeth matrix" section of ``docs/proofs.md``, generated.

Both are written from what the kit holds, never by hand: the properties of the spec
(:mod:`~redletter.python_model.teeth.properties`), the manifest's teeth fields (what
each model that must fail violates and satisfies; ``make check-teeth`` runs every
cell in TLC and the Python model to prove them), the registry of bug classes
(:mod:`redletter.python_model.bugs`) and one measurement, cheap enough to redo in a
test: ``redletter lemmas``'s count of the pairs on which ``Lemma0``'s one witness
fails while the snapshot state is still reachable (``MCNonFifoFailure``).

``make check-teeth`` runs every cell and writes the record of that run
(``docs/teeth-run.json``) and this page; ``.venv/bin/python -m
redletter.python_model.teeth.docs > docs/teeth.md`` rewrites the page from the
record.  :func:`teeth_matrix_section` is the section ``docs/proofs.md`` embeds, and
:func:`teeth_last_run_section` what the last full run found.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from redletter.manifest import Manifest, ModelEntry, load_manifest
from redletter.python_model import bugs
from redletter.python_model.teeth.matrix import (
    ENGINES,
    RECORD_NAME,
    alone,
    load_record,
    must_fail,
    record_problems,
)
from redletter.python_model.teeth.properties import (
    ALONE_PREMISES,
    PROPERTIES,
    PROPERTY_NAMES,
)

__all__ = ["main", "teeth_last_run_section", "teeth_matrix_section", "teeth_page"]

VIOLATED = "\u2717"  # ✗
ALONE = "\u2717\u2080"  # ✗₀: violated with Lemma0 and StableLemma0 holding
HOLDS = "\u00b7"  # ·


def _cell(row: ModelEntry, prop: str) -> str:
    if prop in row.violates:
        return f"**{ALONE}**" if alone(row, prop) else VIOLATED
    if prop in row.satisfies:
        return HOLDS
    return "?"


def _kind(row: ModelEntry) -> str:
    return "liveness" if row.expect == "liveness failure" else "safety"


def teeth_matrix_section(manifest: Manifest, *, heading: str = "##") -> str:
    """The teeth matrix in Markdown: one row per model that must fail, one column per
    property, with the legend and the properties violated alone."""
    rows = must_fail(manifest)
    out: list[str] = [
        f"{heading} The teeth matrix",
        "",
        "Each model that must fail plants one bug class (see the registry below) and is "
        "checked against every property of `spec/ChandyLamport.tla`, **one property per "
        "run**, in TLC and in the Python model (`make check-teeth`; "
        "`spec/manifest.json` records, per model, `violates` and `satisfies`).  "
        f"{VIOLATED}: the model must violate the property; **{ALONE}**: it violates it "
        f"*alone*, while {' and '.join(f'`{p}`' for p in ALONE_PREMISES)} hold (the "
        f"snapshot is right; the error lies after the cut or in the red-letter "
        f"traffic); {HOLDS}: the property must hold.",
        "",
    ]
    header = "| model | bug class | " + " | ".join(f"`{p}`" for p in PROPERTY_NAMES) + " |"
    out.append(header)
    out.append("|" + " --- |" * 2 + " :-: |" * len(PROPERTY_NAMES))
    for row in rows:
        cells = " | ".join(_cell(row, p) for p in PROPERTY_NAMES)
        out.append(f"| `{row.model}` | {row.bug_class} | {cells} |")
    counts = []
    for p in PROPERTY_NAMES:
        n = sum(1 for r in rows if p in r.violates)
        a = sum(1 for r in rows if alone(r, p))
        counts.append(f"{n}" + (f" ({a} alone)" if a else ""))
    out.append("| *models violating it* | | " + " | ".join(counts) + " |")
    out.append("")
    never = [p for p in PROPERTY_NAMES if not any(p in r.violates for r in rows)]
    if never:
        out.append(
            "Never violated: "
            + ", ".join(f"`{p}`" for p in never)
            + ("; every mutant keeps the variables in their types." if never == ["TypeOK"] else ".")
        )
        out.append("")
    out.append("Violated alone:")
    out.append("")
    for p in PROPERTY_NAMES:
        who = [f"`{r.model}`" for r in rows if alone(r, p)]
        if who:
            out.append(f"* `{p}`: {', '.join(who)}")
    out.append("")
    return "\n".join(out)


_ENGINE_NAME = {"tlc": "TLC", "python": "the Python model"}


def teeth_last_run_section(record: dict[str, Any] | None, manifest: Manifest) -> str:
    """What the last full run of ``make check-teeth`` found, from its record
    (``docs/teeth-run.json``): per engine, how many cells it decided as the manifest
    says, which it decided otherwise and which are pending, and why."""
    out = ["## The last full run", ""]
    stale = record_problems(record, manifest)
    if record is None or stale:
        out += [
            "**No current record**: the manifest's matrix has changed since the last "
            "full run of `make check-teeth` (or it never ran); this page shows what the "
            "manifest expects, not what was checked:",
            "",
            *(f"* {line}" for line in stale),
            "",
        ]
        return "\n".join(out)
    rows = record["cells"]
    out.append(
        f"`make check-teeth` ran every one of the {len(rows)} cells once per engine "
        f"(wall time {record['wallSeconds']:,} s on the shared 2-core machine, measured "
        "under load).  Per engine:"
    )
    out.append("")
    for e in ENGINES:
        info = record["engines"].get(e, {})
        said = [(c, c.get(e)) for c in rows]
        same = sum(1 for c, got in said if got == c["expected"])
        pending = [c for c, got in said if got == "pending"]
        other = [c for c, got in said if got not in (c["expected"], "pending")]
        name = _ENGINE_NAME[e][0].upper() + _ENGINE_NAME[e][1:]
        line = f"* {name}: {same} of {len(rows)} cells as the manifest says"
        if e == "tlc" and "jobs" in info:
            line += (
                f" (one TLC run per cell, {info['jobs']} at a time, "
                f"{info['cpuSeconds']:,} s summed over the cells)"
            )
        elif "cpuSeconds" in info:
            line += f" ({info['cpuSeconds']:,} s summed over the cells)"
        line += f"; {len(other)} otherwise; {len(pending)} pending"
        if pending:
            props = sorted({c["property"] for c in pending})
            line += (
                " (needs the Python liveness check: the "
                + ", ".join(f"`{p}`" for p in props)
                + " cells, which are never counted as a pass)"
            )
        out.append(line + ".")
        for c in other:
            out.append(
                f"  * **{c['model']} `{c['property']}`**: the manifest says "
                f"{c['expected']}, {_ENGINE_NAME[e]} says {c.get(e, 'nothing')}"
            )
    reruns = record.get("reruns", [])
    if reruns:
        out.append("")
        out.append(
            "Cells run again on their own after the full run (`.venv/bin/redletter teeth check "
            "--write-docs --model M --property P`), with what the full run had said:"
        )
        out.append("")
        for x in reruns:
            out.append(
                f"* `{x['model']}` `{x['property']}` in {_ENGINE_NAME[x['engine']]}: "
                f"{x['before']} in the full run, {x['after']} on its own"
            )
    out.append("")
    return "\n".join(out)


def _properties_table() -> list[str]:
    out = [
        "| property | checked as | EWD 864's statement it expresses | what it checks |",
        "| --- | --- | --- | --- |",
    ]
    for p in PROPERTIES:
        out.append(f"| `{p.name}` | {p.kind} | {p.ewd} | {p.checks} |")
    return out


def _registry_table() -> list[str]:
    out = [
        "| bug class | what goes wrong | what it breaks | TLC and Python model | z3 | node |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for b in bugs.BUGS.values():
        if b.is_step:
            where = f"`{b.step} <- {b.definition}` in " + ", ".join(f"`{m}`" for m in b.models)
        else:
            where = f"no: {b.no_model}"
        z3_ok, z3_why = bugs.runs_in(b, "z3")
        z3 = "yes" if z3_ok else f"no: {z3_why}"
        if b.node == "derived":
            node = f"derived from the rule (`mutants {b.name}`)"
        elif b.node is not None:
            node = f"hand-written (`{b.node.split(':')[1]}`)"
        else:
            node = f"no: {b.no_node}"
        out.append(f"| `{b.name}` | {b.summary} | {b.breaks} | {where} | {z3} | {node} |")
    return out


def _one_witness(spec_dir: Path) -> list[str]:
    from redletter.python_model.config import load_model
    from redletter.python_model.lemmas import check_lemmas_everywhere

    c = check_lemmas_everywhere(load_model("MCNonFifoFailure", spec_dir))
    return [
        "## Lemma 0 checks one witness",
        "",
        "EWD 864's proof obligation for Lemma 0 is that \u201cthe snapshot state is "
        "reachable from the initial state in reality\u201d.  `Lemma0` checks one witness "
        "of that: the white machines' own actions, replayed in the order they were "
        "taken.  Where a bug reorders what a machine receives, the witness can fail "
        "while the snapshot state is still reachable along another path.  "
        "`.venv/bin/redletter lemmas MODEL` checks both lemmas three ways (replay, reachability "
        "in the application's own state graph, Dijkstra's shadow networks) and says "
        "where they disagree.  On `MCNonFifoFailure` it finds "
        f"{c.pairs:,} (state, snapshot) pairs in {c.states:,} reachable states; the "
        f"replay of the white actions fails on {c.failed['replay'][0]:,} of them and "
        f"the search finds no path on {c.failed['reachability'][0]:,}: on "
        f"**{c.replay_only[0]:,} pairs** the snapshot state is reachable, but not by "
        "the witness.  (With the state constraint the model had before its bound moved "
        "into the guards, the same count was 432 pairs.)  On a model where no snapshot "
        "completes, `.venv/bin/redletter lemmas` says the check is vacuous and exits 2.",
        "",
    ]


def teeth_page(manifest: Manifest, spec_dir: Path, record: dict[str, Any] | None = None) -> str:
    """The whole of ``docs/teeth.md`` (``record``: the last full run's, see
    :func:`~redletter.python_model.teeth.matrix.run_record`)."""
    rows = must_fail(manifest)
    out: list[str] = [
        "# Every property has teeth",
        "",
        "<!-- generated by `python -m redletter.python_model.teeth.docs`; "
        "tests/test_teeth.py fails when it is stale -->",
        "",
        "A check that no bug can make fail proves nothing.  This page lists the "
        f"properties of the spec, the {len(rows)} models that must fail and, for each, "
        "every property it must violate and every one it must not, and the registry of "
        "bug classes behind them.  `make check-teeth` (`.venv/bin/redletter teeth`) proves the "
        "matrix cell by cell: one TLC run per (model, property), and the same cell in "
        "the Python model; a temporal cell in Python waits for the Python liveness "
        "check and is reported *pending* until it is there, never as a pass.",
        "",
        "## The properties and what they express",
        "",
        *_properties_table(),
        "",
        teeth_matrix_section(manifest),
        teeth_last_run_section(record, manifest),
        "## Lemma 0 implies Lemma 1, unless the application is disturbed",
        "",
        "For bugs in colouring, recording and red-letter handling over FIFO buffers, "
        "this spec's `Lemma0` (equality with the replay of the white actions, stronger "
        "than EWD 864's reachability) implies `Lemma1`: `spec/ChandyLamport.tla` states "
        "it as `THEOREM Spec /\\ NoInterference => []Lemma0ImpliesLemma1`, with a proof "
        "sketch that uses none of the steps a bug overrides.  Its hypothesis is "
        "`NoInterference`, Chandy and Lamport's \u201cthe snapshot algorithm does not "
        "interfere with the normal execution of the processes\u201d.  TLC checks "
        "`Lemma0ImpliesLemma1` and `NoInterference` on every model, must-fail ones "
        "included; the models that violate `Lemma1` alone are exactly those that "
        "interfere with the application after the cut (a recording that swallows the "
        "message, messages received out of order once a buffer is red), and they "
        "violate `NoInterference` and `Lemma0ImpliesLemma1` too.  z3 proves the theorem "
        "for the token application on every run up to a bounded length, over every "
        "colouring (`.venv/bin/redletter teeth theorem`).",
        "",
        *_one_witness(spec_dir),
        "## Liveness, and where the bound lies",
        "",
        "The history variables grow with every application action while a snapshot "
        "runs, so every model bounds the application with `MaxAppActions`.  The bound "
        "lies in the guards (`AppBudgetLeft`): a machine may start a send or an "
        "internal event only while the budget lasts, and receipts are never refused "
        "(refusing one would starve the red letters queued behind it).  So every "
        "behaviour of the bounded application is explored to its end, and TLC's "
        "liveness verdicts are sound.  The state constraint `AppActionBound`, which "
        "cuts behaviours at the bound, is used only by models that check no temporal "
        "property (`MCTokenComplete3`, `MCConcurrent` and the benchmark "
        "`MCTokenComplete3Large`; `MCTokenComplete3Live` and `MCConcurrentLive` check "
        "liveness on the same constants without it).  The liveness models fail with "
        "TLC's `Temporal properties were violated`; two of their bugs also break "
        "`OneRedLetterPerBuffer` (the safety half of Dijkstra's completion argument), "
        "the third (`red-letter-left-unread`) breaks no invariant at all.",
        "",
        "## The registry of bug classes",
        "",
        "One registry, `python_model/bugs.py`: a step override is written once, as its "
        "TLA+ definition and a rule over the state, and runs from there in TLC (the "
        "models that plant it), the Python model, z3 (where the symbolic encoding lets "
        "its step vary) and as a conformance node (where the rule reads only what one "
        "machine knows of itself).  A node bug lives in how an implementation stores "
        "or reports what it records, which the spec does not model.",
        "",
        *_registry_table(),
        "",
    ]
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    """Print ``docs/teeth.md`` (run from the project root)."""
    from redletter.project import find_project

    args = sys.argv[1:] if argv is None else list(argv)
    proj = find_project(Path(args[0]) if args else None)
    record = load_record(proj.root / "docs" / RECORD_NAME)
    page = teeth_page(load_manifest(proj.manifest_path), proj.spec_dir, record)
    sys.stdout.write(page)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
