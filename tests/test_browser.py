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
    # one headline: the first break of a property the cfg checks; the others folded
    assert w.page.locator("#rl-banner .rl-headline").count() == 1
    assert w.text("#rl-banner .rl-headline").startswith(
        "Invariant Lemma0 is violated at step 5 (conjunct EndsInSnapshotState)"
    )
    assert w.text("#rl-banner details.rl-more summary") == (
        "6 more violations in this run, earliest first"
    )
    assert w.page.locator("#rl-banner details.rl-more").get_attribute("open") is None
    assert w.page.locator("#rl-banner details.rl-more p").first.is_hidden()
    w.shot("norec-headline-folded")
    w.page.click("#rl-banner details.rl-more summary")
    banner = w.text("#rl-banner")
    assert "Action property ShadowLemma0 is violated at step 3 (conjunct SkipOtherwise)" in banner
    assert (
        "Lemma 0's shadow network breaks (snapshot 1) at step 3: rule (iii d), “a buffer from a "
        "white machine to a red one holds the record of incoming messages as recorded in reality "
        "by the red machine, postfixed by the contents of the buffer in reality” — after step 3 "
        "(p2 receives a message from p1): buffer p1→p2 holds [1] in the shadow, but rule (iii d) "
        "says []"
    ) in banner
    w.shot("norec-unfolded")
    w.page.get_by_role("link", name="at step 3").first.click()
    assert w.text("#rl-stepno") == "3 / 5"
    assert "The shadow network breaks: rule (iii d)" in w.text("#rl-lemma0")
    assert "broken" in str(w.page.locator("#rl-steplist li").nth(3).get_attribute("class"))
    w.shot("norec-step-3")
    w.page.keyboard.press("End")
    row = w.page.locator("#rl-props tr", has_text="Lemma0").first.inner_text()
    assert row.split("\t")[:2] == ["Lemma0", "✗ VIOLATED"]
    w.shot("norec-step-5")


def failing_mutant_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run folder of ``conform run`` failing the no-channel-recording mutant."""
    traces = tmp_path_factory.mktemp("traces")
    write_traces(traces, generate("MCToken2", ROOT / "spec", goals=False)[:6])
    store = tmp_path_factory.mktemp("store")
    node = f"{sys.executable} -m redletter.conformance.nodes.mutants no-channel-recording"
    args = ["conform", "run", "--node", node, "--traces", str(traces), "--store", str(store)]
    assert main([*args, "--root", str(ROOT)]) == 1
    (folder,) = [p for p in store.iterdir() if p.is_dir()]
    return folder


@pytest.fixture(scope="module")
def failing_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return failing_mutant_run(tmp_path_factory)


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
    # the shrunk schedule's 3 steps, then the model's completion (2 steps)
    assert w.text("#rl-stepno") == "3 / 5"
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


# --------------------------------------------------------------------------- issue 22 (5)


def _rows(w: Watched, selector: str) -> int:
    """Data rows of the first table under ``selector`` (the header row excluded)."""
    return int(w.page.locator(f"{selector} table").first.locator("tr").count()) - 1


def test_failing_mutants_explorer_shows_both_shadow_networks(watch: Any, failing_run: Path) -> None:
    # the model's run (run 1; the node's own run, run 0, is tests/test_browser_pictures.py's)
    w = watch(
        (failing_run / "explain.html").as_uri() + "#step=3&run=1", failing_run / "screenshots"
    )
    assert w.page.locator("input[name=rl-run]").nth(1).is_checked()
    assert w.text("#rl-now") == "Step 3 of 5: p2 receives a message from p1"
    assert w.text("#rl-notes").startswith("Node p2 parts from the model here: at step 3")
    # both shadow networks at the failing step: 2 machines and 2 buffers each
    assert _rows(w, "#rl-lemma0") == 4
    assert _rows(w, "#rl-lemma1") == 4
    assert w.text("#rl-lemma0 p:nth-of-type(1)") == (
        "Snapshot 1: the initial state is state 0, the final state is state 5. "
        "✓ the shadow network keeps step to the end"
    )
    assert "does not complete" not in w.text("#rl-lemma0") + w.text("#rl-lemma1")
    assert "steps 4–5 are the model's own completion" in w.text("#rl-subtitle")
    assert w.page.locator("#rl-steplist li.added").count() == 2
    w.shot("mutant-both-shadows-step-3")
    w.page.keyboard.press("End")
    assert w.text("#rl-notes").startswith("This step is the model's own completion")
    assert w.text("#rl-lemma0 .rl-converge") == (
        "4 of 4 machines and buffers are already as in the snapshot state."
    )
    assert w.text("#rl-lemma1 .rl-converge") == (
        "4 of 4 machines and buffers are already as in the final state."
    )


def _svg_texts(w: Watched, selector: str = "svg text") -> list[str]:
    """The texts of SVG elements (SVG text has no inner text: its text content)."""
    return [str(t) for t in w.page.locator(selector).all_text_contents()]


def _record_notes(w: Watched, run: int = 0) -> list[str]:
    """The record notes of the diagram of run ``run`` (a failing node's page shows its
    own run, 0, and the model's, 1)."""
    many = w.page.locator("figure.rl-run").count() > 0
    where = f"figure.rl-run[data-run='{run}'] " if many else ""
    return _svg_texts(w, f"{where}svg text.rl-record")


def test_step_0_records_nothing_of_the_future(watch: Any, failing_run: Path) -> None:
    w = watch((failing_run / "explain.html").as_uri() + "#step=0", failing_run / "screenshots")
    assert _record_notes(w) == ["snapshot 1: not started yet", "snapshot 1: not started yet"]
    assert w.text("#rl-recorded") == "Snapshot 1 — not started"
    w.shot("mutant-step-0-records")
    w.page.click("#rl-next")
    assert _record_notes(w) == [
        "snapshot 1: state not recorded yet; p2→p1: [] open",
        "snapshot 1: 0 tokens; p1→p2: [] open",
    ]
    w.page.keyboard.press("End")
    assert _record_notes(w, 1) == [
        "snapshot 1: 1 token; p2→p1: []",
        "snapshot 1: 0 tokens; p1→p2: [1]",
    ]
    # the node's own run: its recording of p1→p2 closed empty
    assert _record_notes(w, 0) == [
        "snapshot 1: 1 token; p2→p1: []",
        "snapshot 1: 0 tokens; p1→p2: []",
    ]


def test_the_rules_of_ewd_864_stand_in_a_legend(watch: Any, failing_run: Path) -> None:
    w = watch((failing_run / "explain.html").as_uri() + "#step=3", failing_run / "screenshots")
    legend = w.page.locator("#rl-rules")
    assert legend.is_visible()
    assert w.text("#rl-rule-a-record-1") == (
        "recording rule 1: “upon turning red, each machine records its own state”"
    )
    assert w.text("#rl-rule-0-iii-c") == (
        "(iii c) “a buffer from a red machine to a white one holds, from the contents in "
        "reality, the prefix up to and including the red letter”"
    )
    assert legend.locator("dd").count() == 4 + 8 + 8
    # every rule code in the shadow tables links to its words, with them as a tooltip
    refs = w.page.locator("#rl-lemma0 table a.rl-ruleref")
    assert refs.count() == 4
    assert refs.nth(0).inner_text() == "ii a"
    assert refs.nth(0).get_attribute("href") == "#rl-rule-0-ii-a"
    assert refs.nth(0).get_attribute("title") == "the state of a white machine is as in reality"
    refs.nth(0).click()
    assert "rl-flash" in _cls(w, "#rl-rule-0-ii-a")
    w.shot("rules-legend")


_OVERLAPS = """() => {
  const texts = Array.from(document.querySelectorAll('#rl-svgwrap svg text'))
    .filter(t => t.textContent.trim() !== '')
    .map(t => [t.textContent, t.getBBox()]);
  const out = [];
  for (let i = 0; i < texts.length; i++) {
    for (let j = i + 1; j < texts.length; j++) {
      const [a, p] = texts[i], [b, q] = texts[j];
      const apart = p.x >= q.x + q.width || q.x >= p.x + p.width
        || p.y >= q.y + q.height || q.y >= p.y + p.height;
      if (!apart) {
        out.push([a, b]);
      }
    }
  }
  return out;
}"""


def test_no_labels_overlap_with_two_concurrent_snapshots(
    watch: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    run = tmp_path_factory.mktemp("explain-concurrent")
    out = run / "explain.html"
    assert main(["explain", "MCMixedSnapshotsFailure", "-o", str(out), "--root", str(ROOT)]) == 0
    w = watch(out.as_uri() + "#step=5", run / "screenshots")
    assert w.page.locator("svg .rl-cut").count() == 2
    assert w.page.evaluate("document.querySelectorAll('#rl-svgwrap svg text').length") > 20
    # the browser's own boxes of the texts, as the fonts it has draw them
    assert w.page.evaluate(_OVERLAPS) == []
    w.shot("concurrent-no-overlap")


@pytest.fixture(scope="module")
def barrier_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from redletter.conformance.judges.barrier import generate as barrier_traces
    from redletter.conformance.judges.barrier import judge_trace
    from redletter.conformance.judges.drive import InProcessNode
    from redletter.conformance.nodes.barrier import MUTANTS
    from redletter.conformance.report import new_run_folder, write_report

    store = tmp_path_factory.mktemp("barrier-store")
    trace = barrier_traces("MCBarrierAtLeastOnceFailure", ROOT / "spec", walks=0)[0]
    r = judge_trace(trace, InProcessNode(MUTANTS["NeverBlocked"][0]), log_dir=store)
    folder = new_run_folder(store, "barrier")
    write_report(folder, [r], node_cmd="barrier node NeverBlocked")
    return folder.path


def test_a_barrier_run_is_drawn_with_barriers_and_its_restore(
    watch: Any, barrier_run: Path
) -> None:
    w = watch((barrier_run / "report.html").as_uri(), barrier_run / "screenshots")
    texts = _svg_texts(w)
    assert "barrier" in texts
    assert "cut of checkpoint 1" in texts
    assert texts.count("restore checkpoint 1") == 3
    assert not [t for t in texts if "red letter" in t or t.startswith("snapshot")]
    assert any(t.startswith("restore of checkpoint 1: every operator and source") for t in texts)
    assert w.page.evaluate(_OVERLAPS.replace("#rl-svgwrap svg", "svg")) == []
    w.shot("barrier-restore")


def test_a_cos418_picture_says_expected_and_recorded(
    watch: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    from redletter.conformance.adapters.cos418.report import diagram_of
    from redletter.conformance.judges.rundoc import parse_run_document
    from tests.test_cos418_runjudge import GOOD, IN_FLIGHT, IN_FLIGHT_STEPS, _doc

    # the package returned snapshot 0 without the token in flight on N2→N1
    doc = parse_run_document(_doc(IN_FLIGHT, IN_FLIGHT_STEPS, {"N1": 5, "N2": 2}, []))
    want = parse_run_document(_doc(IN_FLIGHT, IN_FLIGHT_STEPS, *GOOD)).snaps()
    svg = diagram_of(doc, "a token in flight left out", expected=want, recorded=doc.snaps())
    run = tmp_path_factory.mktemp("cos418-picture")
    page = run / "picture.html"
    page.write_text(f"<!doctype html><meta charset='utf-8'><body>{svg}</body>", encoding="utf-8")
    w = watch(page.as_uri(), run / "screenshots")
    texts = _svg_texts(w)
    assert "message the algorithm records in the stream (expected)" in texts
    assert "message recorded in a buffer's stream" not in texts
    assert "expected vs recorded, by snapshot" in texts
    assert "snapshot 0 expected: 5 tokens, N2→N1: [1]" in texts
    assert "snapshot 0 recorded: 5 tokens, N2→N1: [] (differs)" in texts
    assert "snapshot 0 recorded: 2 tokens, no messages in flight (as expected)" in texts
    assert w.page.evaluate(_OVERLAPS.replace("#rl-svgwrap svg", "svg")) == []
    w.shot("cos418-expected-vs-recorded")
