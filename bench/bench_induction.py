"""The lemmas by induction: the results table (proved / open / counterexample, z3 time).

    python bench/bench_induction.py [--topologies ring,complete] [--machines 2,3,4]
                                    [--snapshots 1,2] [--apps generic]
                                    [--call-units 50000000] [--case-seconds 3600]
                                    [--drops CASE] [--variants] [--readme] [--out FILE]
    python bench/bench_induction.py --every-n [--repeat 3] [--drops every-n] [--variants]
                                    [--readme] [--out FILE]

``--every-n`` measures the proof for every number of machines instead (no topology):
its time per layer and per action (the wall-clock seconds of each question: building
it, z3's answer, the check that some state takes the step), z3's quantifier
instantiations and the fragment of each question, over ``--repeat`` runs (the
table gives the median of each question and the total's minimum and median);
with ``--drops every-n`` one row per conjunct dropped, with ``--variants`` one row
per bug class (the finite counterexample: its network's size and its time), and
``--readme`` writes them into docs/induction.md between ``<!-- everyn-table:begin
-->`` and ``<!-- everyn-table:end -->``.

Every case is checked with the same invariant (every conjunct of
``redletter.python_model.symbolic.induction.CONJUNCTS``), the same obligations and
the same budget, stated in the output: z3 resource units per solver call (its
deterministic ``rlimit``, so a verdict does not depend on the machine's load) and a
wall-clock safety budget per case.  A case is *proved* when z3 answered unsat to
every question, *open* when it answered unknown to some question within the budget
(never reported as proved), *counterexample* when it found one.  Times are
wall-clock seconds on this machine, under whatever load it carries.

``--drops CASE`` (e.g. ``complete-2-1``) adds a table with one row per conjunct:
the invariant without it, the first counterexample to induction z3 finds, and what
it breaks.  ``--variants`` adds a table with one row per bug class on the smallest
case where it shows.  ``--readme`` writes the tables into docs/model.md between the
markers ``<!-- induction-table:begin -->`` and ``<!-- induction-table:end -->``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from redletter.python_model.symbolic.induction import (
    CONJUNCTS,
    VARIANTS,
    Budget,
    Case,
    InductionResult,
    prove,
)

ROOT = Path(__file__).resolve().parent.parent
BEGIN, END = "<!-- induction-table:begin -->", "<!-- induction-table:end -->"
EN_BEGIN, EN_END = "<!-- everyn-table:begin -->", "<!-- everyn-table:end -->"

#: the smallest case on which each bug class shows (2 machines have one input buffer
#: each, so stopping at the first red letter is correct there; mixing snapshots needs 2)
VARIANT_CASES = {
    "stop-at-first-red-letter": ("complete", 3, 1),
    "mixed-snapshots": ("complete", 2, 2),
}


def _case_row(r: InductionResult) -> str:
    c = r.case
    questions = sum(1 for o in r.outcomes if o.obligations)
    obligations = sum(o.obligations for o in r.outcomes)
    return (
        f"| {c.topology} | {c.machines} | {len(c.chans)} | {c.snapshots} | {c.app} "
        f"| {len(r.conjuncts)} | {questions} / {obligations} | {r.lemma0} | {r.lemma1} "
        f"| {r.solver_seconds:.0f} | {r.seconds:.0f} |"
    )


def _first(r: InductionResult) -> str:
    if not r.ctis:
        return "—"
    cti = r.ctis[0]
    return f"{cti.layer}: {cti.check} breaks {', '.join(cti.broken[:2])}"


def run_cases(args: argparse.Namespace, budget: Budget) -> list[str]:
    lines = [
        "| topology | machines | buffers | snapshots | app | conjuncts | questions / "
        "obligations | Lemma 0 | Lemma 1 | z3 s | wall s |",
        "| --- | ---: | ---: | ---: | --- | ---: | ---: | --- | --- | ---: | ---: |",
    ]
    for topology in args.topologies.split(","):
        for machines in (int(x) for x in args.machines.split(",")):
            for snapshots in (int(x) for x in args.snapshots.split(",")):
                for app in args.apps.split(","):
                    case = Case(topology, machines, snapshots, app)
                    t0 = time.perf_counter()
                    r = prove(case, budget=budget)
                    print(
                        f"{case.name}: Lemma 0 {r.lemma0}, Lemma 1 {r.lemma1}, "
                        f"{time.perf_counter() - t0:.0f} s",
                        file=sys.stderr,
                        flush=True,
                    )
                    for o in r.open_checks:
                        print(f"  open: {o.layer} {o.check}: {o.reason}", file=sys.stderr)
                    lines.append(_case_row(r))
    return lines


def run_drops(spec: str, budget: Budget) -> list[str]:
    topology, machines, snapshots = spec.rsplit("-", 2)
    lines = [
        f"Each conjunct dropped in turn ({topology}, {machines} machines, {snapshots} "
        "snapshot(s), any application): the first counterexample to induction.",
        "",
        "| dropped | layer | Lemma 0 | Lemma 1 | first counterexample | z3 s |",
        "| --- | --- | --- | --- | --- | ---: |",
    ]
    for name, conjunct in CONJUNCTS.items():
        case = Case(topology, int(machines), int(snapshots))
        r = prove(case, drop=(name,), budget=budget, stop_at_first=True)
        print(f"drop {name}: {_first(r)}", file=sys.stderr, flush=True)
        lines.append(
            f"| {name} | {conjunct.layer} | {r.lemma0} | {r.lemma1} | {_first(r)} "
            f"| {r.solver_seconds:.1f} |"
        )
    return lines


def run_variants(budget: Budget) -> list[str]:
    lines = [
        "Each bug class on the smallest case where it shows: the first counterexample "
        "to induction.",
        "",
        "| bug class | case | Lemma 0 | Lemma 1 | first counterexample | z3 s |",
        "| --- | --- | --- | --- | --- | ---: |",
    ]
    for name in VARIANTS:
        if name == "correct":
            continue
        topology, machines, snapshots = VARIANT_CASES.get(name, ("complete", 2, 1))
        case = Case(topology, machines, snapshots, "generic", name)
        r = prove(case, budget=budget, stop_at_first=True)
        print(f"variant {name}: {_first(r)}", file=sys.stderr, flush=True)
        lines.append(
            f"| {name} | {topology} {machines}m {snapshots}s | {r.lemma0} | {r.lemma1} "
            f"| {_first(r)} | {r.solver_seconds:.1f} |"
        )
    return lines


def run_every_n(repeat: int, budget: Budget) -> list[str]:
    """The every-N proof, ``repeat`` times: per question (layer, action) its median
    time, quantifier instantiations and fragment; per layer and in all the median."""
    from statistics import median

    from redletter.python_model.symbolic.induction.everyn import prove_every_n

    runs = []
    for i in range(repeat):
        t0 = time.perf_counter()
        r = prove_every_n(budget=budget)
        wall = time.perf_counter() - t0
        print(
            f"every-N run {i + 1}: Lemma 0 {r.lemma0}, Lemma 1 {r.lemma1}, liveness "
            f"{r.liveness}, {wall:.1f} s",
            file=sys.stderr,
            flush=True,
        )
        runs.append((r, wall))
    first = runs[0][0]
    lines = [
        f"The proof for every N, {repeat} run(s): Lemma 0 {first.lemma0}, Lemma 1 "
        f"{first.lemma1}, liveness premises {first.liveness}; total wall-clock time "
        f"{min(w for _, w in runs):.1f} s (fastest), {median(w for _, w in runs):.1f} s (median).",
        "",
        "| layer | question | verdict | obligations | s (median) | quantifier instantiations "
        "| fragment |",
        "| --- | --- | --- | ---: | ---: | ---: | --- |",
    ]
    fragments = sorted({o.fragment for o in first.outcomes})
    for n, o in enumerate(first.outcomes):
        secs = median(r.outcomes[n].seconds for r, _ in runs)
        lines.append(
            f"| {o.layer} | {o.check} | {o.verdict} | {o.obligations} | {secs:.2f} "
            f"| {o.instantiations} | {fragments.index(o.fragment) + 1} |"
        )
    lines += ["", "Fragments:", ""]
    lines += [f"{i + 1}. {f}" for i, f in enumerate(fragments)]
    lines += ["", "| layer | questions | s (median of the runs) |", "| --- | ---: | ---: |"]
    for layer in ("reality", "prophecy", "shadow1", "liveness"):
        secs = median(r.layer_seconds(layer) for r, _ in runs)
        count = sum(1 for o in first.outcomes if o.layer == layer)
        lines.append(f"| {layer} | {count} | {secs:.1f} |")
    return lines


def run_every_n_ctis(kind: str, budget: Budget) -> list[str]:
    """One row per dropped conjunct (``kind`` "drops") or per bug class ("variants"):
    the first counterexample to induction, its network, and for a bug class a run
    from Init on that network that breaks the same layer."""
    from redletter.python_model.symbolic.induction.everyn import CONJUNCTS as EN
    from redletter.python_model.symbolic.induction.everyn import prove_every_n
    from redletter.python_model.symbolic.induction.everyn.witness import reachable_violation

    drops = kind == "drops"
    if drops:
        title = (
            "Each conjunct of the every-N invariant dropped in turn: the first counterexample "
            "to induction (on the smallest network z3 finds it)."
        )
        head = "| dropped | layer | Lemma 0 | Lemma 1 | first counterexample | network | s |"
        items = [(name, c.layer) for name, c in EN.items()]
    else:
        title = (
            "Each bug class for every N: the first counterexample to induction, the network "
            "z3 chose, and a run from Init on that network that breaks the same layer (found "
            "by breadth-first search in the interpreter)."
        )
        head = "| bug class | Lemma 0 | Lemma 1 | first counterexample | network | run | s |"
        items = [(name, "") for name in VARIANTS if name != "correct"]
    lines = [title, "", head, "| --- | --- | --- | --- | --- | --- | ---: |"]
    for name, layer in items:
        t0 = time.perf_counter()
        if drops:
            r = prove_every_n(drop=(name,), budget=budget, stop_at_first=True)
        else:
            r = prove_every_n(name, budget=budget, stop_at_first=True)
        secs = time.perf_counter() - t0
        cti = r.ctis[0] if r.ctis else None
        first = f"{cti.layer}: {cti.check} breaks {', '.join(cti.broken)}" if cti else "—"
        size = cti.size() if cti else "—"
        print(f"every-N {kind} {name}: {first} ({secs:.1f} s)", file=sys.stderr, flush=True)
        if drops:
            cells = [name, layer, r.lemma0, r.lemma1, first, size]
        else:
            w = reachable_violation(cti.net, name) if cti is not None else None
            run = f"{len(w.steps)} steps, breaks {', '.join(w.broken)}" if w else "—"
            cells = [name, r.lemma0, r.lemma1, first, size, run]
        lines.append("| " + " | ".join([*cells, f"{secs:.1f}"]) + " |")
    return lines


def every_n_main(args: argparse.Namespace, budget: Budget) -> None:
    command = " ".join(["python bench/bench_induction.py", *sys.argv[1:]])
    from redletter.python_model.symbolic.induction.everyn.explain import budget_words

    out = [
        f"Budget: {budget_words(budget)}; measured {time.strftime('%Y-%m-%d')} with `{command}` "
        "(2 cores, shared: wall-clock seconds under whatever load the machine carried).",
        "",
        *run_every_n(args.repeat, budget),
    ]
    if args.drops:
        out += ["", *run_every_n_ctis("drops", budget)]
    if args.variants:
        out += ["", *run_every_n_ctis("variants", budget)]
    _emit(out, args, ROOT / "docs" / "induction.md", EN_BEGIN, EN_END)


def _emit(out: list[str], args: argparse.Namespace, doc: Path, begin: str, end: str) -> None:
    """Print the tables, write them to ``--out``, and with ``--readme`` into ``doc``
    between its markers."""
    text = "\n".join(out) + "\n"
    print(text)
    if args.out is not None:
        args.out.write_text(text, encoding="utf-8")
    if args.readme:
        body = doc.read_text(encoding="utf-8")
        if begin not in body or end not in body:
            raise SystemExit(f"{doc.relative_to(ROOT)} has no {begin} ... {end} section")
        head, rest = body.split(begin, 1)
        _, tail = rest.split(end, 1)
        doc.write_text(f"{head}{begin}\n{text}{end}{tail}", encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--topologies", default="ring,complete")
    ap.add_argument("--machines", default="2,3,4")
    ap.add_argument("--snapshots", default="1,2")
    ap.add_argument("--apps", default="generic")
    ap.add_argument("--call-units", type=int, default=Budget().call_units)
    ap.add_argument("--case-seconds", type=float, default=Budget().case_seconds)
    ap.add_argument("--drops", default="", help="a case topology-machines-snapshots")
    ap.add_argument("--variants", action="store_true")
    ap.add_argument("--readme", action="store_true")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--every-n", action="store_true", help="the proof for every N")
    ap.add_argument("--repeat", type=int, default=3, help="--every-n: runs of the proof")
    args = ap.parse_args()
    budget = Budget(call_units=args.call_units, case_seconds=args.case_seconds)
    if args.every_n:
        every_n_main(args, budget)
        return
    started = time.strftime("%Y-%m-%d")
    command = " ".join(["python bench/bench_induction.py", *sys.argv[1:]])
    out = [
        f"Budget per case: {budget.describe()}; measured {started} with "
        f"`{command}` (2 cores, shared).  A case whose budget runs out is open, "
        "never proved.",
        "",
        *run_cases(args, budget),
    ]
    if args.drops:
        out += ["", *run_drops(args.drops, budget)]
    if args.variants:
        out += ["", *run_variants(budget)]
    _emit(out, args, ROOT / "docs" / "model.md", BEGIN, END)


if __name__ == "__main__":
    main()
