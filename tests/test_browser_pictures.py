"""The failure pictures in a real browser at 1,280 px: each shows the bug at its step,
and no text of it is cut off (issue 29).

Three pages a student or a teacher meets when something fails:

- a failing COS 418 report, for each dialect (the gallery's ``marker-after-app`` on a
  two-server scenario whose marker goes out late): the late marker drawn both ways and
  numbered, the times the words use on the time axis, the expected snapshot the one
  Chandy–Lamport records, the first paragraph said once;
- a failing mutant's proof explorer (``explain.html``) at the step where the node
  diverged: the node's own run beside the model's, its shadow network breaking in red
  at that step, the model's keeping step;
- a gradebook: what its columns count, the first failure of each submission.

Every page is checked for text that leaves its SVG's box, an SVG or a table cut by
what shows it (a scroll box, the window), and labels shortened with "…".  Screenshots
go to ``screenshots/`` beside each page, as in ``tests/test_browser.py`` (and, when
``REDLETTER_SCREENSHOTS`` names a folder, a copy there).
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from redletter.cli import main
from tests.test_browser import CHROMIUM, FLAGS, Watched, _missing, failing_mutant_run
from tests.test_cos418_package import needs_go

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = [
    pytest.mark.slow,
    pytest.mark.browser,
    pytest.mark.skipif(_missing() is not None, reason=_missing() or ""),
]

WIDTH = 1280

#: Everything on a page that a reader cannot see whole at this width: a text outside its
#: SVG's box, an SVG cut by a scroll box or the window, a page wider than the window,
#: an element that hides part of its content, a label shortened with "…".
CLIPPED = """() => {
  const out = [];
  const W = window.innerWidth;
  document.querySelectorAll('svg').forEach((svg, i) => {
    if (!svg.getBoundingClientRect().width) { return; }
    const vb = svg.viewBox && svg.viewBox.baseVal;
    const w = vb && vb.width ? vb.width : svg.width.baseVal.value;
    const h = vb && vb.height ? vb.height : svg.height.baseVal.value;
    svg.querySelectorAll('text').forEach(t => {
      const text = t.textContent.trim();
      if (!text) { return; }
      const b = t.getBBox();
      if (b.x < -0.5 || b.y < -0.5 || b.x + b.width > w + 0.5 || b.y + b.height > h + 0.5) {
        out.push('text leaves its picture: ' + text);
      }
      if (/…$/.test(text)) { out.push('text shortened: ' + text); }
    });
    const r = svg.getBoundingClientRect();
    if (r.right > W + 1) { out.push('picture ' + i + ' wider than the window'); }
    for (let el = svg.parentElement; el && el !== document.body; el = el.parentElement) {
      const e = el.getBoundingClientRect();
      const cuts = r.right > e.right + 1 || r.left < e.left - 1;
      if (getComputedStyle(el).overflowX !== 'visible' && cuts) {
        out.push('picture ' + i + ' cut by its box (' + el.tagName + '.' + el.className + ')');
      }
    }
  });
  if (document.documentElement.scrollWidth > W + 1) {
    out.push('page wider than the window: ' + document.documentElement.scrollWidth);
  }
  document.querySelectorAll('body *').forEach(el => {
    const cs = getComputedStyle(el);
    if (cs.display === 'none' || !el.getClientRects().length) { return; }
    if (cs.overflowX !== 'visible' && el.scrollWidth > el.clientWidth + 1) {
      out.push('content cut: <' + el.tagName.toLowerCase() + '> ' + el.textContent.slice(0, 60));
    }
  });
  return out;
}"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


class Shown(Watched):
    """A watched page whose screenshots are also copied to ``$REDLETTER_SCREENSHOTS``."""

    def shot(self, name: str) -> Path:
        path = super().shot(name)
        import os

        keep = os.environ.get("REDLETTER_SCREENSHOTS")
        if keep:
            Path(keep).mkdir(parents=True, exist_ok=True)
            shutil.copy(path, Path(keep) / path.name)
        return path

    def clipped(self) -> list[str]:
        return list(self.page.evaluate(CLIPPED))


@pytest.fixture
def watch(browser: Browser) -> Iterator[Any]:
    pages: list[Shown] = []

    def open_page(url: str, shots: Path) -> Shown:
        page = browser.new_page(viewport={"width": WIDTH, "height": 900})
        w = Shown(page, shots)
        pages.append(w)
        page.goto(url)
        return w

    yield open_page
    for w in pages:
        w.page.close()
    problems = [p for w in pages for p in w.problems]
    assert problems == [], "the page reported problems:\n" + "\n".join(problems)


# --------------------------------------------------------------------------- COS 418

#: Two servers; N4 starts the snapshot, N3 sends tokens to N4 before and after its
#: first marker comes: marker-after-app holds N3's marker back behind the second send.
TOP = "2\nN3 4\nN4 0\nN3 N4\nN4 N3\n"
EVENTS = "snapshot N4\nsend N3 N4 2\ntick 3\nsend N3 N4 2\n"


@pytest.mark.go
@needs_go
@pytest.mark.parametrize("dialect", ["servers", "nodes"])
def test_a_failing_cos418_report_shows_the_late_marker_at_its_step(
    dialect: str, watch: Any, tmp_path: Path
) -> None:
    from tests.cos418_gallery import materialize

    pkg = materialize(f"{dialect}/marker-after-app", tmp_path / "gallery")
    (tmp_path / "s.top").write_text(TOP)
    (tmp_path / "s.events").write_text(EVENTS)
    store = tmp_path / "store"
    args = ["cos418", "test", str(pkg), "--top", str(tmp_path / "s.top"), "--events",
            str(tmp_path / "s.events"), "--seed", "1", "--seeds", "1", "--no-course-test",
            "--store", str(store)]  # fmt: skip
    assert main(args) == 1
    (folder,) = [p for p in store.iterdir() if p.is_dir()]
    w = watch((folder / "report.html").as_uri(), folder / "screenshots")
    body = w.text("body")
    why = w.text("#first-failure + p")
    assert why.startswith(
        "At time 2, N3 received its first marker of snapshot 0 (on N4→N3) but sent no marker on"
        " N3→N4 in that step; it sent it only at time 7."
    )
    assert body.count(why) == 1, "the explanation is said once"
    assert w.text("body > p:nth-of-type(1)").startswith("The first failure")
    # the expected snapshot is Chandy–Lamport's: it conserves the 4 tokens; the row
    # where the package's differs is marked
    assert "snapshot 0 on N3→N4 (returned [token(2), token(2)]; Chandy–Lamport records" in body
    row = w.page.locator("tr.fail").first.inner_text()
    assert row.split("\t") == ["N3→N4", "token(2)", "token(2), token(2)"]
    # the picture: the marker where the rules send it and where the package sent it,
    # both numbered 1 and explained under it; the times the words use on the axis
    svg = "svg"
    assert w.page.locator(f"{svg} line.rl-due").count() == 1
    assert w.page.locator(f"{svg} line.rl-late").count() == 1
    assert w.page.locator(f"{svg} .rl-callout").count() == 2
    notes = [str(t) for t in w.page.locator(f"{svg} text.rl-note").all_text_contents()]
    assert notes[0].startswith("① Marker 0 on N3→N4 was due at time 2; the package sent it at")
    times = {int(t) for t in re.findall(r"\btime (\d+)", why)}
    shown = {
        int(str(x)) for x in w.page.locator(f"{svg} text.rl-time").evaluate_all(
            "ts => ts.map(t => t.getAttribute('data-time'))"
        )
    }  # fmt: skip
    assert times == {2, 3, 7} and times <= shown, (times, shown)
    # the token sent after the cut is not drawn as recorded: one thick arrow only
    assert w.page.locator(f"{svg} line.rl-recorded").count() == 1
    assert w.clipped() == []
    w.shot(f"cos418-{dialect}-marker-after-app")
    w.page.locator("svg").first.scroll_into_view_if_needed()
    w.page.screenshot(path=str(folder / "screenshots" / f"cos418-{dialect}-picture.png"))


# --------------------------------------------------------------------------- a mutant


@pytest.fixture(scope="module")
def failing_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return failing_mutant_run(tmp_path_factory)


def test_a_failing_mutants_explorer_breaks_in_red_at_its_step(
    watch: Any, failing_run: Path
) -> None:
    w = watch((failing_run / "explain.html").as_uri() + "#step=3", failing_run / "screenshots")
    assert w.text("#rl-now") == "Step 3 of 5: p2 receives a message from p1"
    # the node's own run, shown first, beside the model's
    captions = [str(t) for t in w.page.locator("figure.rl-run figcaption").all_inner_texts()]
    assert captions == [
        "The node's own run (what it sent and recorded)",
        "The model's run of the schedule (what Chandy–Lamport does)",
    ]
    assert w.page.locator("input[name=rl-run]").first.is_checked()
    # its shadow network breaks in red at the step where it diverged: rule (iii d)
    lemma0 = w.text("#rl-lemma0")
    assert (
        "Snapshot 1: the initial state is state 0, the final state is state 5. ✗ the shadow"
        " network breaks at step 3"
    ) in lemma0
    assert "✗ The shadow network breaks: rule (iii d)" in lemma0
    assert w.page.locator("#rl-lemma0 .rl-move.broken").count() == 1
    assert "broken" in str(w.page.locator("#rl-steplist li").nth(3).get_attribute("class"))
    # the step is marked in both pictures; the node's notes show its empty recording
    for fig in (0, 1):
        col = w.page.locator(f"figure.rl-run >> nth={fig}").locator(".rl-col[data-step='3']")
        assert "rl-diverged" in str(col.get_attribute("class"))
    node_notes = w.page.locator("figure.rl-run >> nth=0").locator("text.rl-record")
    assert "snapshot 1: 0 tokens; p1→p2: [] open" in node_notes.all_text_contents()
    assert w.clipped() == []
    w.shot("mutant-node-run-step-3")
    # the model's run keeps step to the end
    w.page.locator("input[name=rl-run]").nth(1).check()
    assert w.page.evaluate("location.hash") == "#step=3&run=1"
    assert "✓ the shadow network keeps step to the end" in w.text("#rl-lemma0 p:nth-of-type(1)")
    model_notes = w.page.locator("figure.rl-run >> nth=1").locator("text.rl-record")
    assert "snapshot 1: 0 tokens; p1→p2: [1] open" in model_notes.all_text_contents()
    assert w.clipped() == []
    w.shot("mutant-model-run-step-3")


def test_a_failing_mutants_report_sets_its_snapshot_beside_the_models(
    watch: Any, failing_run: Path
) -> None:
    w = watch((failing_run / "report.html").as_uri(), failing_run / "screenshots")
    assert w.text("tr.rl-here").startswith("3\tp2 receives a message from p1 ← diverges here")
    snap = w.page.locator("section", has_text="Snapshot 1: what Chandy–Lamport records")
    assert snap.locator("tr.rl-differs").first.inner_text().split("\t") == [
        "p1→p2",
        "[1]",
        "[] ✗ differs",
    ]
    # the picture of what the node did: its empty recording of p1→p2, whole
    notes = [str(t) for t in w.page.locator("svg text.rl-record").all_text_contents()]
    assert "snapshot 1: 0 tokens; p1→p2: []" in notes
    titles = [str(t) for t in w.page.locator("svg .rl-records > text").all_text_contents()]
    assert "recorded by each snapshot" in titles
    assert w.clipped() == []
    w.shot("mutant-report")


# --------------------------------------------------------------------------- a gradebook


def _rows() -> list[dict[str, object]]:
    """A class as the gradebook lists it: every field of its schema, by type."""
    from redletter.pipeline.grade import GRADEBOOK

    def row(**given: object) -> dict[str, object]:
        out: dict[str, object] = {}
        for field in GRADEBOOK:
            t = str(field.type)
            out[field.name] = 0 if t.startswith("int") else 0.0 if t.startswith("double") else ""
        return {**out, **given}

    return [
        row(submission="ada", path="ada", dialect="servers", verdict="pass", runs=200,
            passed=200, seconds=41.5, report="reports/ada/report.html"),
        row(submission="cy", path="cy", dialect="nodes", verdict="fail", runs=9, passed=8,
            failed=1, not_run=191, failed_one=1, first_rule="marker-overtaken",
            first_scenario="s000-one", first_seed=2,
            first_explanation="At time 2, N3 received its first marker of snapshot 0 ...",
            shrunk_size="2 servers, 2 links, 3 events", seconds=12.0,
            report="reports/cy/report.html"),
        row(submission="ed", path="ed", dialect="servers", verdict="build", build_failures=1,
            first_explanation="the package does not build (go test -vet=off -c -o pkg.test .):"
            " ./server.go:12:9: cannot use x (variable of type int) as string value",
            seconds=3.1, report="reports/ed/report.html"),
    ]  # fmt: skip


def test_a_gradebook_says_what_it_counts_and_each_first_failure(watch: Any, tmp_path: Path) -> None:
    """Needs issue 27b's gradebook (pipeline/grade.py): the class columns say they count
    failed runs, and a build error's first-failure cell is filled."""
    from redletter.pipeline.grade import write_gradebook

    write_gradebook(_rows(), tmp_path)
    w = watch((tmp_path / "gradebook.html").as_uri(), tmp_path / "screenshots")
    w.shot("gradebook")
    heads = [str(t) for t in w.page.locator("th").all_inner_texts()]
    for klass in ("one", "sequential", "concurrent", "same-tick"):
        label = next((h for h in heads if klass in h), "")
        assert "fail" in label.lower(), (klass, heads)  # it says it counts failed runs
    first = heads.index(next(h for h in heads if "first failure" in h))
    cells = {
        str(r.locator("td").first.inner_text()): str(r.locator("td").nth(first).inner_text())
        for r in w.page.locator("tr:has(td)").all()
    }
    assert cells["cy"].startswith("marker-overtaken (s000-one, seed 2)")
    assert cells["ed"] != "", "a build error's first failure names the build"
    assert cells["ada"] == ""
    assert w.clipped() == []
