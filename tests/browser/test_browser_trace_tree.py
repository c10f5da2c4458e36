"""The trace view as a person uses it, in real Chromium: the one tree
(display/html.py) mounted by mount.js with trace.css, at a notebook's width.

    click a claim in the answer   -> it and its evidence light up; the evidence's
                                     fold in Verify opens and the marked span shows
    45 hits                       -> a pager: 20 at a time, "21–40 of 45 hits"
    a stepper's redraw            -> open folds and the page stay as they were
    the rerank card               -> five distinct chunk labels; the superseded note
    light and dark                -> screenshots at 950 px; text stays legible
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from display_fixtures import build_full_trace, make_hits

from selfrag_nb.display.html import css, view_tree
from selfrag_nb.display.js import module
from selfrag_nb.display.tree import to_json
from selfrag_nb.trace import Retrieval, Trace

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "browser"

_LOAD = """async ([src, sheet]) => {
  const style = document.createElement("style");
  style.textContent = sheet;
  document.head.appendChild(style);
  const url = URL.createObjectURL(new Blob([src], {type: "text/javascript"}));
  window.M = await import(url);
  window.S = window.M.newState();
}"""
_MOUNT = "(data) => window.M.mount(document.getElementById('w'), data, null, window.S)"
DARK = "body { background: #111418; color: #e6e6e6; }"


def _open(page: Any, tree: Any, dark: bool = False) -> None:
    page.set_viewport_size({"width": 950, "height": 1000})
    page.set_content("<!doctype html><html><body><div id=w></div></body></html>")
    page.evaluate(_LOAD, [module("mount.js", "tree_view.js"), css() + (DARK if dark else "")])
    page.evaluate(_MOUNT, tree)


def _luminance(rgb: str) -> float:
    r, g, b = (int(x) for x in rgb.split("(")[1].split(")", maxsplit=1)[0].split(",")[:3])
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255


def test_clicking_a_claim_reveals_its_evidence(page: Any) -> None:
    _open(page, to_json(view_tree(build_full_trace())))
    evidence = page.locator("#w [data-for-claim='1']")
    assert not evidence.is_visible()  # folded in Verify until asked for
    page.locator("#w .srnb-card-generate [data-claim='1']").click()
    assert evidence.is_visible()
    assert "srnb-sel" in (evidence.get_attribute("class") or "")
    assert "srnb-sel" in (
        page.locator("#w .srnb-card-generate [data-claim='1']").get_attribute("class") or ""
    )
    mark = evidence.locator("mark.srnb-mark")
    assert mark.inner_text() == "full refund within 30 days of purchase"
    # the same claim in Verify's list is selected too; a second click clears both
    assert page.locator("#w .srnb-sel").count() == 3
    page.locator("#w .srnb-card-generate [data-claim='1']").click()
    assert page.locator("#w .srnb-sel").count() == 0
    assert page.evaluate("window.__pwned") is None


def test_long_hit_lists_are_paged_and_a_redraw_keeps_the_page_and_folds(page: Any) -> None:
    t = Trace(question="many hits", started_at=0.0)
    t.append(Retrieval(hits=make_hits(45)))
    tree = to_json(view_tree(t))
    _open(page, tree)
    hits = page.locator("#w details.srnb-hit")
    visible = (
        "() => Array.from(document.querySelectorAll('#w details.srnb-hit')).filter(d => !d.hidden).length"
    )
    assert hits.count() == 45
    assert page.evaluate(visible) == 20
    assert page.inner_text("#w .srnb-pager span") == "1–20 of 45 hits"
    page.click("#w .srnb-pager button:has-text('next')")
    assert page.inner_text("#w .srnb-pager span") == "21–40 of 45 hits"
    first = page.locator("#w details.srnb-hit:not([hidden])").first
    first.locator(":scope > summary").click()
    assert first.locator(".srnb-block").is_visible()
    page.wait_for_timeout(50)  # toggle events fire as a task
    page.evaluate(_MOUNT, tree)  # the stepper redraws the view
    assert page.inner_text("#w .srnb-pager span") == "21–40 of 45 hits"
    assert page.locator("#w details.srnb-hit:not([hidden])").first.get_attribute("open") is not None


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_the_trace_at_notebook_width_light_and_dark(page: Any, dark: bool) -> None:
    _open(page, to_json(view_tree(build_full_trace())), dark=dark)
    rerank = page.locator("#w .srnb-card-rerank")
    labels = rerank.locator("svg text").all_text_contents()
    before = [x for x in labels if x[:1].isdigit()][:5]
    assert len(set(before)) == 5, before  # five chunks, five names
    assert "1. #1 ⚠ refund-policy.md › Refund window" in labels
    assert "2. [2] ⚠ refund-policy.md › Exceptions" in labels
    assert "superseded document ranks first" in rerank.inner_text()
    # nothing overflows its card at 950 px
    overflow = page.evaluate(
        "() => Array.from(document.querySelectorAll('#w .srnb-card'))"
        ".filter(c => c.scrollWidth > c.clientWidth + 1).map(c => c.className)"
    )
    assert overflow == []
    fg = page.locator("#w .srnb-card-generate .srnb-stage").evaluate("(e) => getComputedStyle(e).color")
    assert (_luminance(fg) > 0.7) if dark else (_luminance(fg) < 0.3), fg
    page.locator("#w .srnb-card-generate [data-claim='1']").click()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    name = "dark" if dark else "light"
    page.screenshot(path=str(ARTIFACTS / f"trace_tree_950_{name}.png"), full_page=True)
    rerank.screenshot(path=str(ARTIFACTS / f"trace_tree_rerank_950_{name}.png"))
