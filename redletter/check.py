"""``redletter check``: model-check a suite and compare it with the manifest.

This module computes; :mod:`redletter.ui` shows.  :func:`check_models` runs TLC
on each model (several at once if asked), compares each result with its manifest
row, and asks an optional cross-check hook for the last column of the table.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from redletter.errors import InputError
from redletter.manifest import Comparison, Manifest, ModelEntry, compare, load_manifest
from redletter.project import Project
from redletter.tlc import Progress, TlcResult, run_sany_all, run_tlc
from redletter.toolchain import require_java, require_tlc_jar

CrosscheckHook = Callable[[ModelEntry, TlcResult], str]
"""Given a model and TLC's result, return the text of the ``cross-check`` column."""

TlcArgsHook = Callable[[ModelEntry], Sequence[str]]
"""Given a model, the extra TLC arguments its run needs for the cross-check hook
(e.g. ``-dump dot,actionlabels <file>``), so that TLC runs once per model."""

NO_CROSSCHECK = "—"

SMALL_MODEL_STATES = 11_000
"""A model the manifest gives fewer distinct states than this (or one that must
fail, which TLC stops at its first violation) runs TLC with the JVM's quick compiler
only (:func:`redletter.tlc.tlc_command`'s ``small``).  Where the optimising compiler
starts to pay, measured in CPU seconds with the graph dumped (quick only against
both): MCTokenDirectedRing3 (10,086 states) 18.2 against 25.4, MCTokenValues
(10,497) 17.5 against 26.4, MCBarrierTwoCheckpoints (15,058) 59.9 against 47.4,
MCTokenAsymmetric3 (20,159) 41.1 against 40.5."""


def is_small(entry: ModelEntry) -> bool:
    """True when TLC's run of ``entry`` is short (see :data:`SMALL_MODEL_STATES`)."""
    return entry.expect != "success" or entry.distinct < SMALL_MODEL_STATES


@dataclass(frozen=True)
class CheckRow:
    """One line of the results table."""

    comparison: Comparison
    crosscheck: str

    @property
    def matches(self) -> bool:
        """True when TLC agreed with the manifest."""
        return self.comparison.matches


class CheckObserver:
    """Callbacks a reporter implements to show a check as it runs (no-ops here)."""

    def model_started(self, entry: ModelEntry, index: int, count: int) -> None:
        """TLC is about to run on ``entry``."""

    def progress(self, entry: ModelEntry, report: Progress) -> None:
        """TLC reported progress on ``entry``."""

    def model_finished(self, row: CheckRow) -> None:
        """``entry`` is done."""


def select_models(
    manifest: Manifest, suite: str | None, names: Sequence[str] = ()
) -> tuple[ModelEntry, ...]:
    """The models to run: the named ones if any, else the whole suite."""
    if names:
        return manifest.select(list(names))
    chosen = manifest.suite(suite or "default")
    if not chosen:
        raise InputError(
            f'suite {suite!r} has no models; give each model a "suite" of "default" or "large".',
            path=str(manifest.path),
        )
    return chosen


def check_models(
    project: Project,
    entries: Sequence[ModelEntry],
    *,
    observer: CheckObserver | None = None,
    crosscheck_hook: CrosscheckHook | None = None,
    tlc_args: TlcArgsHook | None = None,
    workers: int = 2,
    jobs: int = 1,
) -> list[CheckRow]:
    """Run TLC on each entry and compare with the manifest; ``tlc_args``
    adds arguments to each TLC run, ``crosscheck_hook`` fills the last column.

    ``jobs`` models are checked at once (each TLC with ``workers`` workers, and
    each model's cross-check beside the next model's TLC run); the rows come back
    in the order of ``entries`` whatever the order the models finish in.
    """
    require_java()
    jar = require_tlc_jar(project.cache_dir)
    # Every model parsed in one SANY run (a spec error names its module, file and
    # line before any TLC starts); TLC then skips its separate SANY run.
    modules = [project.spec_dir / f"{e.model}.tla" for e in entries]
    run_sany_all([m for m in modules if m.is_file()], jar=jar)  # a missing one: run_tlc says
    obs = observer or CheckObserver()
    lock = threading.Lock()

    def one(index: int, entry: ModelEntry) -> CheckRow:
        with lock:
            obs.model_started(entry, index, len(entries))

        def on_progress(report: Progress) -> None:
            with lock:
                obs.progress(entry, report)

        result = run_tlc(
            entry.model,
            spec_dir=project.spec_dir,
            jar=jar,
            cache_dir=project.work_dir,
            check_deadlock=entry.check_deadlock,
            workers=workers,
            extra_args=tlc_args(entry) if tlc_args is not None else (),
            on_progress=on_progress,
            sany=False,
            small=is_small(entry),
        )
        cross = crosscheck_hook(entry, result) if crosscheck_hook is not None else NO_CROSSCHECK
        row = CheckRow(comparison=compare(entry, result, workers=workers), crosscheck=cross)
        with lock:
            obs.model_finished(row)
        return row

    if jobs <= 1 or len(entries) <= 1:
        return [one(i, e) for i, e in enumerate(entries)]
    pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="redletter-check")
    try:
        # In the manifest's order, whose large models are spread among small ones.
        # Largest first was measured slower (make check 422 -> 498 s in CI): two
        # large TLC runs at once slow each other, and their cross-checks then
        # contend for this process's interpreter lock with no TLC run beside.
        futures = [pool.submit(one, i, e) for i, e in enumerate(entries)]
        return [f.result() for f in futures]
    finally:
        # On an error or an interrupt: start no other model; the TLC runs under way
        # end with the kit (their JVMs are its children and read its pipe).
        pool.shutdown(wait=False, cancel_futures=True)


def load_project_manifest(project: Project) -> Manifest:
    """The project's manifest (an :class:`InputError` if missing or malformed)."""
    return load_manifest(project.manifest_path)
