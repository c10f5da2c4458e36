"""mount.js in real Chromium: the widget face of a view tree is the DOM the
static face describes, built without parsing markup, and the declared
behaviours (pager, claim selection, remembered <details>) work."""

from __future__ import annotations

import json
from typing import Any

import pytest

from selfrag_nb.display.js import module
from selfrag_nb.display.tree import h, to_html, to_json

pytestmark = pytest.mark.browser

HOSTILE = '<img src=x onerror="window.__pwned=1"> \u202e<script>window.__pwned=2</script>'

# mount.js is an ES module: import it from a blob URL and keep its exports on window
_LOAD = """async (src) => {
  const url = URL.createObjectURL(new Blob([src], {type: "text/javascript"}));
  window.M = await import(url);
}"""


def _load(page: Any) -> None:
    page.set_content("<!doctype html><html><body><div id=w></div><div id=s></div></body></html>")
    page.evaluate(_LOAD, module("mount.js", "tree_view.js"))


def _sample() -> Any:
    claims = [h("p", "srnb-claim", f"claim {i}: {HOSTILE}", data_claim=i) for i in range(2)]
    evidence = [h("div", "srnb-ev", f"evidence for {i}", data_for_claim=i) for i in range(2)]
    return h(
        "section",
        "srnb-card",
        h("h4", "", "Verify ", h("span", "srnb-badge", "2 claims")),
        h("div", "srnb-bar", h("span", "", style="width: 40%"), title='score "40"'),
        claims,
        evidence,
        h("details", "", h("summary", "", "model calls"), h("pre", "", HOSTILE), data_key="calls"),
        h("svg", "", h("rect", "", x=0, y=0, width=10, height=5), viewBox="0 0 10 5", width=100, height=50),
    )


def test_widget_dom_equals_the_static_face_and_never_runs_data(page: Any) -> None:
    _load(page)
    tree = _sample()
    same = page.evaluate(
        """([data, html]) => {
          const w = document.getElementById("w"), s = document.getElementById("s");
          w.replaceChildren(window.M.build(data));   // before attach() adds focus and roles
          s.innerHTML = html;   // the test parses the static face to compare; the widget never does
          return [w.firstChild.isEqualNode(s.firstChild), w.querySelectorAll("script, img").length];
        }""",
        [to_json(tree), to_html(tree)],
    )
    assert same == [True, 0]
    assert page.evaluate("window.__pwned") is None
    text = page.inner_text("#w")
    assert "<img src=x" in text
    assert "U+202E" in text


def test_a_tree_from_elsewhere_cannot_add_scripts_handlers_or_links(page: Any) -> None:
    _load(page)
    forged = {
        "t": "div",
        "a": {"onclick": "window.__pwned=3", "style": "background:url(http://127.0.0.1:9/x)", "title": "ok"},
        "k": [
            {"t": "script", "k": ["window.__pwned=4"]},
            {"t": "a", "a": {"href": "javascript:window.__pwned=5"}, "k": ["link"]},
            {"t": "span", "a": {"data-note": "kept"}, "k": ["text"]},
        ],
    }
    html = page.evaluate(
        """(data) => { const w = document.getElementById("w");
          window.M.mount(w, data, null, window.M.newState()); w.firstChild.click(); return w.innerHTML; }""",
        forged,
    )
    assert html == '<div title="ok"><span data-note="kept">text</span></div>'
    assert page.evaluate("window.__pwned") is None


def test_pager_claim_selection_and_remembered_details(page: Any) -> None:
    _load(page)
    items = [h("li", "", f"item {i}") for i in range(25)]
    tree = h("div", "", h("ul", "", items, data_page=10, data_key="hits"), _sample())
    page.evaluate(
        """(data) => { window.S = window.M.newState();
          window.M.mount(document.getElementById("w"), data, null, window.S); }""",
        to_json(tree),
    )
    visible = "() => Array.from(document.querySelectorAll('#w li')).filter(li => !li.hidden).map(li => li.textContent)"
    assert page.evaluate(visible) == [f"item {i}" for i in range(10)]
    assert page.inner_text("#w .srnb-pager span") == "1–10 of 25"
    page.click("#w .srnb-pager button:has-text('next')")
    page.click("#w .srnb-pager button:has-text('next')")
    assert page.evaluate(visible) == [f"item {i}" for i in range(20, 25)]
    assert page.inner_text("#w .srnb-pager span") == "21–25 of 25"
    assert page.is_disabled("#w .srnb-pager button:has-text('next')")

    page.click("#w [data-claim='1']")
    selected = (
        "() => Array.from(document.querySelectorAll('#w .srnb-sel')).map(e => e.textContent.slice(0, 14))"
    )
    assert page.evaluate(selected) == ["claim 1: <img ", "evidence for 1"]
    page.focus("#w [data-claim='0']")
    page.keyboard.press("Enter")
    assert page.evaluate(selected) == ["claim 0: <img ", "evidence for 0"]

    page.click("#w details[data-key='calls'] summary")
    page.wait_for_function("window.S.open.get('calls') === true")  # toggle fires as a task
    # a redraw (the stepper refreshing the view) keeps the open <details> and the page
    page.evaluate(
        "(data) => window.M.mount(document.getElementById('w'), data, null, window.S)",
        json.loads(json.dumps(to_json(tree))),
    )
    assert page.evaluate("document.querySelector(\"#w details[data-key='calls']\").open") is True
    assert page.inner_text("#w .srnb-pager span") == "21–25 of 25"
