"""The lemmas by induction: the results table (proved / open / counterexample, z3 time).

    python bench/bench_induction.py [--topologies ring,complete] [--machines 2,3,4]
                                    [--snapshots 1,2] [--apps generic]
                                    [--call-units 50000000] [--case-seconds 3600]
                                    [--drops CASE] [--variants] [--readme] [--out FILE]

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
    args = ap.parse_args()
    budget = Budget(call_units=args.call_units, case_seconds=args.case_seconds)
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
    text = "\n".join(out) + "\n"
    print(text)
    if args.out is not None:
        args.out.write_text(text, encoding="utf-8")
    if args.readme:
        readme = ROOT / "docs" / "model.md"
        body = readme.read_text(encoding="utf-8")
        if BEGIN not in body or END not in body:
            raise SystemExit(f"docs/model.md has no {BEGIN} ... {END} section")
        head, rest = body.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        readme.write_text(f"{head}{BEGIN}\n{text}{END}{tail}", encoding="utf-8")


if __name__ == "__main__":
    main()
