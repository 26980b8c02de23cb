"""What the pipeline's commands show (rich), on the kit's consoles of :mod:`redletter.ui`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TransferSpeedColumn,
)
from rich.table import Table

from redletter.pipeline.campaign import CampaignSummary
from redletter.pipeline.crosscheck import CrosscheckReport, format_report
from redletter.pipeline.ingest import GraphInfo
from redletter.ui import console, err_console

__all__ = ["ingest_progress", "show_campaign", "show_crosscheck", "show_graph"]


@contextmanager
def ingest_progress(path: Path, *, enabled: bool | None = None) -> Iterator[Progress]:
    """A bar over the bytes of the file being streamed (stderr, terminals only)."""
    progress = Progress(
        TextColumn("streaming {task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
        disable=not (err_console.is_terminal if enabled is None else enabled),
    )
    with progress:
        yield progress


def show_graph(info: GraphInfo, out: Path) -> None:
    """The counts of an ingested graph."""
    table = Table(title=f"graph {info.model} -> {out}", title_justify="left")
    for col in ("source", "state lines", "edge lines", "stuttering", "states", "edges", "initial"):
        table.add_column(col, justify="left" if col == "source" else "right")
    table.add_row(
        info.source,
        f"{info.state_lines:,}",
        f"{info.edge_lines:,}",
        f"{info.stuttering_lines:,}",
        f"{info.states:,}",
        f"{info.edges:,}",
        f"{info.initial:,}",
    )
    console.print(table)


def show_crosscheck(report: CrosscheckReport, *, full_paths: bool = False) -> None:
    """The cross-check report, plain text (states in TLA+)."""
    console.print(format_report(report, full_paths=full_paths), markup=False, soft_wrap=True)


def show_campaign(summary: CampaignSummary) -> None:
    """Verdict counts, coverage table and the first failures."""
    if not console.is_terminal:
        console.width = 160
    console.print(
        f"campaign {summary.campaign}: {summary.traces} traces, {summary.done_before} done"
        f" before this run, {summary.ran} run now in {summary.partitions} partitions",
        markup=False,
    )
    verdicts = Table(title="verdicts", title_justify="left")
    verdicts.add_column("verdict")
    verdicts.add_column("traces", justify="right")
    for verdict, n in summary.verdicts:
        style = {"pass": "green", "fail": "bold red", "error": "bold red"}.get(verdict, "yellow")
        verdicts.add_row(f"[{style}]{verdict}[/]", str(n))
    missing = summary.traces - sum(n for _, n in summary.verdicts)
    if missing:
        verdicts.add_row("[yellow]no result yet[/]", str(missing))
    console.print(verdicts)
    if summary.coverage:
        cov = Table(title="coverage by action", title_justify="left")
        for col in ("action", "traces", "passed"):
            cov.add_column(col, justify="left" if col == "action" else "right")
        for action, n, passed in summary.coverage:
            cov.add_row(action, str(n), str(passed))
        console.print(cov)
    console.print(
        f"{summary.steps:,} steps, {summary.seconds:.1f} s of runner time"
        + (f", {summary.duplicates} duplicate result(s) dropped" if summary.duplicates else ""),
        markup=False,
    )
    for trace_id, detail in summary.failures:
        console.print(f"  {trace_id}: {detail}", markup=False, soft_wrap=True)
