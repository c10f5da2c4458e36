"""The marimo app under ``marimo run``, driven by Debian chromium.

marimo_app fixture: marimo run selfrag_app.py --headless (127.0.0.1, token password)
chromium opens /?access_token=<token>
  -> the app runs every cell: sample KB, controls, SelfRAG, rag.ask(default question)
  -> the trace renders through mo.ui.anywidget (inside <marimo-anywidget>'s open
     shadow root: Playwright's CSS selectors pierce it)
  -> interact: expand a retrieved chunk, select a claim and read its evidence span
  -> change the question in the text box: the app re-runs and a new trace replaces
     the old one (a greeting: no retrieval)
  -> no console error, no page error; screenshots in test-artifacts/browser/
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

# Every stage of the flow: the default question is answered from the documents, so each runs.
from selfrag_nb.flow import STAGES

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "browser"
APP = ROOT / "notebooks" / "selfrag_app.py"
needs_chromium = pytest.mark.skipif(
    not Path("/usr/bin/chromium").exists(),
    reason="Debian chromium is not installed at /usr/bin/chromium (apt-get install chromium)",
)
# conftest.py's Server and PageLog are not importable without a package: duck-typed.
Server = Any
PageLog = Any

pytestmark = [pytest.mark.browser, pytest.mark.slow, needs_chromium, pytest.mark.timeout(300)]

FIRST_RENDER_MS = 180_000  # every cell runs on first load; two shared cores


def shoot(page: Any, name: str) -> None:
    """Whole-app screenshot: marimo scrolls inside its own container, so the
    viewport is grown to the app's height instead of using full_page."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    size = page.viewport_size
    height = page.evaluate(
        "() => Math.max(...Array.from(document.querySelectorAll('*')).map((e) => e.scrollHeight))"
    )
    page.set_viewport_size({"width": size["width"], "height": int(min(max(size["height"], height), 8000))})
    try:
        page.wait_for_timeout(200)
        page.screenshot(path=str(ARTIFACTS / f"{name}.png"))
    finally:
        page.set_viewport_size(size)


HEX24 = re.compile(r"\b[0-9a-f]{24}\b")
# Cards wider than their box, grade-bar tick x per row (same scale in every row).
MEASURE_JS = """(root) => ({
  overflow: Array.from(root.querySelectorAll(".srnb-card")).filter((c) => c.scrollWidth > c.clientWidth + 1).map((c) => c.className),
  ticks: Array.from(root.querySelectorAll(".srnb-card-grade .srnb-grade")).map((r) => Array.from(r.querySelectorAll(".srnb-tick")).map((t) => Math.round(t.getBoundingClientRect().left * 10) / 10)),
})"""
LINE_JS = (
    """(el) => ({ white: getComputedStyle(el).whiteSpace, over: el.scrollWidth > el.clientWidth + 1 })"""
)


def check_layout_and_names(page: Any, view: Any) -> None:
    """At 950 px: no card overflows, grade ticks line up, the rerank card
    names documents (no bare chunk id), the answer line wraps; screenshots
    of the app in light and dark."""
    size = page.viewport_size
    page.set_viewport_size({"width": 950, "height": size["height"]})
    try:
        page.wait_for_timeout(400)
        m = page.evaluate(MEASURE_JS, view.element_handle())
        assert not m["overflow"], m["overflow"]
        assert m["ticks"], "no grade rows"
        for row in m["ticks"]:
            assert row == pytest.approx(m["ticks"][0], abs=0.6), m["ticks"]
        rerank = view.locator(".srnb-card-rerank").first.inner_text()
        assert ".md" in rerank
        assert not HEX24.search(rerank), HEX24.search(rerank)
        line = page.locator(".srnb-answer-line").first
        got = page.evaluate(LINE_JS, line.element_handle())
        assert got["white"] == "pre-wrap"
        assert not got["over"], "the answer line runs off the page"
        for tag, scheme in (("light", "light"), ("dark", "dark")):
            page.emulate_media(color_scheme=scheme)
            page.evaluate("(s) => document.documentElement.setAttribute('data-theme', s)", scheme)
            page.evaluate("(s) => document.body.classList.toggle('dark', s === 'dark')", scheme)
            shoot(page, f"marimo-app-layout-{tag}")
            for card in ("rerank", "grade"):  # close-ups: the whole app is too tall to read
                view.locator(f".srnb-card-{card}").first.screenshot(
                    path=str(ARTIFACTS / f"marimo-app-{card}-{tag}.png")
                )
        page.emulate_media(color_scheme="light")
        page.evaluate(
            "() => { document.body.classList.remove('dark'); document.documentElement.setAttribute('data-theme', 'light'); }"
        )
    finally:
        page.set_viewport_size(size)


def test_marimo_app_renders_interactive_trace(marimo_app: Server, page: Any, page_log: PageLog) -> None:
    page.goto(f"{marimo_app.base}/?access_token={marimo_app.token}")
    view = page.locator("marimo-anywidget .srnb-root")
    view.first.wait_for(timeout=FIRST_RENDER_MS)
    assert view.count() == 1

    # The default question is answered from the sample data: every stage has its card.
    q = view.locator(".srnb-head .srnb-q")
    default = re.search(r"mo\.ui\.text\(\s*value=\"([^\"]+)\"", APP.read_text(encoding="utf-8"))
    assert default, "the app's question box has no default value"
    assert q.inner_text() == default.group(1)
    for stage in STAGES:
        assert view.locator(f".srnb-card-{stage}").count() >= 1, f"no {stage} card"
    assert view.locator("script").count() == 0
    outcome = view.locator(".srnb-card-finish .srnb-badge").first.inner_text()
    assert page.get_by_text(f"{outcome}:", exact=False).count() >= 1  # the plain-text answer line

    # Expand a retrieved chunk: its text is folded until opened.
    hit = view.locator(".srnb-card-retrieve details.srnb-hit").first
    assert not hit.locator(".srnb-block").is_visible()
    hit.locator(":scope > summary").click()
    hit.locator(".srnb-block").wait_for()
    assert hit.get_attribute("open") is not None
    assert hit.locator(".srnb-block").inner_text().strip()

    # Select a claim in the answer: it and its evidence light up, the evidence's
    # fold in Verify opens and shows the span marked in its chunk.
    claim = view.locator(".srnb-card-generate [data-claim]").first
    claim.click()
    index = claim.get_attribute("data-claim")
    evidence = view.locator(f".srnb-card-verify [data-for-claim='{index}']")
    evidence.wait_for()
    assert "srnb-sel" in (evidence.get_attribute("class") or "")
    mark = evidence.locator("mark.srnb-mark").first
    mark.wait_for()
    assert mark.inner_text().strip()
    # The chunk opened above is still open.
    assert view.locator(".srnb-card-retrieve details.srnb-hit").first.get_attribute("open") is not None
    shoot(page, "marimo-app-trace")
    check_layout_and_names(page, view)

    # A new question re-runs the app: the new trace replaces the old view.
    box = page.locator("marimo-text input").first
    box.fill("Hello!")
    box.press("Enter")
    q.filter(has_text="Hello!").wait_for(timeout=60_000)
    assert view.count() == 1
    assert view.locator(".srnb-card-decide .srnb-badge").first.inner_text() == "NO RETRIEVE"
    assert view.locator(".srnb-card-retrieve").count() == 0
    shoot(page, "marimo-app-greeting")

    page.wait_for_timeout(300)  # late console errors from the last render
    assert not page_log.errors, "console / page errors:\n" + "\n".join(page_log.errors)
