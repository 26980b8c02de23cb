"""The pages in a real browser: the proof explorer and a failing run's report.html.

Debian's chromium (``make browser``; ``$REDLETTER_CHROMIUM`` or ``/usr/bin/chromium``),
driven headless by Playwright's Python package through ``executable_path`` (no
browser is ever downloaded).  The tests click through the steps and assert what the
page shows; any console error, uncaught exception or network request fails them
(the pages are self-contained and open from ``file://``).  Screenshots go to a
``screenshots/`` folder beside each page (printed at the end of the session), so a
person can look at what the tests saw.  Without Chromium or Playwright every test
is skipped with the reason.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from redletter.cli import main
from redletter.conformance.traces import generate, write_traces

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("REDLETTER_CHROMIUM", "/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _missing() -> str | None:
    if shutil.which(CHROMIUM) is None:
        return f"no Chromium at {CHROMIUM}: run `make browser` (installs Debian's chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright is not installed: run `make venv` (it is in requirements.lock)"
    return None


pytestmark = [
    pytest.mark.slow,
    pytest.mark.browser,
    pytest.mark.skipif(_missing() is not None, reason=_missing() or ""),
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


class Watched:
    """A page whose console errors, uncaught exceptions and network requests are kept."""

    def __init__(self, page: Page, shots: Path) -> None:
        self.page = page
        self.shots = shots
        self.problems: list[str] = []
        page.on(
            "console",
            lambda m: (
                self.problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None
            ),
        )
        page.on("pageerror", lambda e: self.problems.append(f"uncaught: {e}"))
        page.on(
            "request",
            lambda r: (
                None
                if r.url.startswith(("file:", "data:", "about:"))
                else self.problems.append(f"network request: {r.url}")
            ),
        )

    def shot(self, name: str) -> Path:
        self.shots.mkdir(parents=True, exist_ok=True)
        path = self.shots / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path

    def text(self, selector: str) -> str:
        return self.page.locator(selector).inner_text()


@pytest.fixture
def watch(browser: Browser) -> Iterator[Any]:
    pages: list[Watched] = []

    def open_page(url: str, shots: Path) -> Watched:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        w = Watched(page, shots)
        pages.append(w)
        page.goto(url)
        return w

    yield open_page
    for w in pages:
        w.page.close()
    problems = [p for w in pages for p in w.problems]
    assert problems == [], "the page reported problems:\n" + "\n".join(problems)


@pytest.fixture(scope="module")
def seed_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("explain-seed")
    out = run / "explain.html"
    assert main(["explain", "MCSeed", "--seed-example", "-o", str(out), "--root", str(ROOT)]) == 0
    return out


def _cls(w: Watched, selector: str) -> str:
    return str(w.page.locator(selector).first.get_attribute("class") or "")


def test_explorer_steps_through_the_seed_example(watch: Any, seed_page: Path) -> None:
    w = watch(seed_page.as_uri(), seed_page.parent / "screenshots")
    assert w.text("#rl-stepno") == "0 / 17"
    assert w.text("#rl-now") == "State 0: the initial state"
    assert "Lemma 0 and Lemma 1 hold for snapshot 1" in w.text("#rl-banner")
    for _ in range(3):
        w.page.click("#rl-next")
    assert w.text("#rl-stepno") == "3 / 17"
    assert w.text("#rl-now") == "Step 3 of 17: P1 starts snapshot 1 (a red letter from nowhere)"
    assert w.page.evaluate("location.hash") == "#step=3"
    assert w.page.get_attribute("#rl-permalink", "href") == "#step=3"
    # P1 is red, in words as well as in colour; its red letters sit in its output buffers
    assert w.text("#rl-machines tr:nth-child(2)") == "P1\t{A, B}\t● red recorded {A, B}"
    assert w.text("#rl-buffers tr:nth-child(2)") == "P1→P2\tB R1\t○ white"
    assert w.text("#rl-buffers tr:nth-child(3)") == "P1→P3\tR1\t○ white"
    assert w.page.locator("#rl-buffers .rl-chip.letter").count() == 2
    # the diagram: step 3's column shaded, later events faded, earlier ones not
    assert "current" in _cls(w, 'svg .rl-col[data-step="3"]')
    assert "rl-future" in _cls(w, 'svg .rl-rec[data-step="5"]')
    assert "rl-future" not in _cls(w, 'svg .rl-rec[data-step="3"]')
    # Lemma 0: P1 is white when it starts, so its step is copied; the rules that now apply
    lemma0 = w.text("#rl-lemma0 .rl-move")
    assert lemma0.startswith(
        "Step 3: the white step: P1 is white; the shadow network performs the same step "
        "(the start: a red letter from nowhere) and, as P1 turns red, sends red letters on "
        "P1→P2, P1→P3"
    )
    assert "P1 turns red: (ii b) the state of a red machine is as in the snapshot state" in lemma0
    assert w.text("#rl-lemma1 .rl-move").startswith(
        "Step 3: the white skip: P1 is white, so the shadow network skips"
    )
    w.shot("seed-step-3")


def test_explorer_keys_slider_permalink_and_columns(watch: Any, seed_page: Path) -> None:
    w = watch(seed_page.as_uri() + "#step=10", seed_page.parent / "screenshots")
    assert w.text("#rl-stepno") == "10 / 17"
    assert w.text("#rl-now") == "Step 10 of 17: P2 receives a red letter from P3"
    w.shot("seed-permalink-step-10")
    w.page.keyboard.press("End")
    assert w.text("#rl-stepno") == "17 / 17"
    assert w.text("#rl-lemma0 .rl-move") == (
        "Done: the snapshot completed at state 15; the shadow network ended in the snapshot state."
    )
    assert w.text("#rl-lemma0 .rl-converge") == (
        "9 of 9 machines and buffers are already as in the snapshot state."
    )
    w.page.keyboard.press("ArrowLeft")
    assert w.text("#rl-stepno") == "16 / 17"
    w.page.keyboard.press("Home")
    w.page.keyboard.press("ArrowLeft")
    assert w.text("#rl-stepno") == "0 / 17"
    w.page.eval_on_selector(
        "#rl-slider", "e => { e.value = '12'; e.dispatchEvent(new Event('input')); }"
    )
    assert w.text("#rl-now") == "Step 12 of 17: P1 performs internal event 3"
    assert "P1 is red, so the shadow network performs exactly the same action" in w.text(
        "#rl-lemma1 .rl-move"
    )
    box = w.page.locator('svg .rl-col[data-step="7"]').bounding_box()
    assert box is not None
    w.page.mouse.click(box["x"] + box["width"] / 2, box["y"] + 5)
    assert w.text("#rl-stepno") == "7 / 17"
    w.page.locator("#rl-steplist li").nth(13).click()
    assert w.text("#rl-stepno") == "13 / 17"
    assert "current" in str(w.page.locator("#rl-steplist li").nth(13).get_attribute("class"))


def test_explorer_is_readable_at_100_percent_and_prints(watch: Any, seed_page: Path) -> None:
    w = watch(seed_page.as_uri() + "#step=9", seed_page.parent / "screenshots")
    size = w.page.evaluate("parseFloat(getComputedStyle(document.body).fontSize)")
    assert size >= 15
    # nothing but the diagram's own scroll box is wider than the window
    assert w.page.evaluate("document.documentElement.scrollWidth") <= 1280
    w.page.emulate_media(media="print")
    assert w.page.locator(".rl-controls").is_hidden()
    w.shot("seed-print")
    pdf = w.shots / "seed-step-9.pdf"
    w.page.pdf(path=str(pdf), format="A4", landscape=True, print_background=True)
    assert pdf.read_bytes().startswith(b"%PDF")


def test_explorer_of_a_must_fail_model_shows_where_it_breaks(
    watch: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    run = tmp_path_factory.mktemp("explain-norec")
    out = run / "explain.html"
    args = ["explain", "MCNoChannelRecordingFailure", "-o", str(out), "--root", str(ROOT)]
    assert main(args) == 0
    w = watch(out.as_uri(), run / "screenshots")
    banner = w.text("#rl-banner")
    assert "Invariant Lemma0 is violated at step 5 (conjunct EndsInSnapshotState)" in banner
    assert "Action property ShadowLemma0 is violated at step 3 (conjunct SkipOtherwise)" in banner
    assert (
        "Lemma 0's shadow network breaks (snapshot 1) at step 3: rule (iii d), “a buffer from a "
        "white machine to a red one holds the record of incoming messages as recorded in reality "
        "by the red machine, postfixed by the contents of the buffer in reality” — after step 3 "
        "(p2 receives a message from p1): buffer p1→p2 holds [1] in the shadow, but rule (iii d) "
        "says []"
    ) in banner
    w.page.get_by_role("link", name="at step 3").first.click()
    assert w.text("#rl-stepno") == "3 / 5"
    assert "The shadow network breaks: rule (iii d)" in w.text("#rl-lemma0")
    assert "broken" in str(w.page.locator("#rl-steplist li").nth(3).get_attribute("class"))
    w.shot("norec-step-3")
    w.page.keyboard.press("End")
    row = w.page.locator("#rl-props tr", has_text="Lemma0").first.inner_text()
    assert row.split("\t")[:2] == ["Lemma0", "✗ VIOLATED"]
    w.shot("norec-step-5")


@pytest.fixture(scope="module")
def failing_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    traces = tmp_path_factory.mktemp("traces")
    write_traces(traces, generate("MCToken2", ROOT / "spec", goals=False)[:6])
    store = tmp_path_factory.mktemp("store")
    node = f"{sys.executable} -m redletter.conformance.nodes.mutants no-channel-recording"
    args = ["conform", "run", "--node", node, "--traces", str(traces), "--store", str(store)]
    assert main([*args, "--root", str(ROOT)]) == 1
    (folder,) = [p for p in store.iterdir() if p.is_dir()]
    return folder


def test_report_of_a_failing_mutant(watch: Any, failing_run: Path) -> None:
    w = watch((failing_run / "report.html").as_uri(), failing_run / "screenshots")
    assert w.text("h1") == "redletter conform: fail"
    assert w.text("#rl-div-h") == "Where node p2 parts from the model: step 3"
    assert w.text(".rl-breaks") == "Lemma0"
    assert w.text("tr.rl-here") == (
        "3\tp2 receives a message from p1 ← diverges here\tReceiveApp p1 -> p2"
    )
    assert w.page.locator("svg .rl-col[data-step='3']").count() == 1
    assert ".venv/bin/redletter conform replay" in w.text("pre")
    w.shot("report")
    w.page.get_by_role("link", name="Step through this schedule in the proof explorer").click()
    w.page.wait_for_selector("#rl-stepno")
    assert w.text("#rl-stepno") == "3 / 3"
    assert w.text("#rl-notes").startswith("Node p2 parts from the model here: at step 3")
    w.shot("report-explorer")


def test_explorer_of_two_concurrent_snapshots_switches_between_them(
    watch: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    run = tmp_path_factory.mktemp("explain-mixed")
    out = run / "explain.html"
    args = ["explain", "MCMixedSnapshotsFailure", "-o", str(out), "--root", str(ROOT)]
    assert main(args) == 0
    w = watch(out.as_uri() + "#step=5&snapshot=2", run / "screenshots")
    assert w.text("#rl-lemma0 p:nth-of-type(1)") == (
        "Snapshot 2: the initial state is state 2, the final state is state 5. "
        "✗ the shadow network breaks at step 5"
    )
    w.shot("mixed-snapshot-2")
    w.page.locator("input[name=rl-snap]").first.check()
    assert w.page.evaluate("location.hash") == "#step=5&snapshot=1"
    assert w.text("#rl-lemma0 p:nth-of-type(1)") == (
        "Snapshot 1: the initial state is state 0, the final state is state 5. "
        "✓ the shadow network keeps step to the end"
    )
    assert (
        w.text("#rl-lemma0 .rl-move")
        == "Step 5: the red skip: p1 is red, so the shadow network skips"
    )
