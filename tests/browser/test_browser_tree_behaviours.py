"""mount.js's declared behaviours for tabs and sortable tables, in real Chromium:
generic (data attributes on any view tree), so every view gets them.

    data-tabs + data-tab="label" children   one panel at a time, a button per label;
                                            data-tab-open picks the first; a redraw
                                            keeps the chosen tab (data-key)
    table[data-sort]                        a header click sorts the rows by the
                                            number in the cells' text (n/a last),
                                            a second click reverses; kept on redraw
"""

from __future__ import annotations

from typing import Any

import pytest

from selfrag_nb.display.js import module
from selfrag_nb.display.tree import h, to_json

pytestmark = pytest.mark.browser

_LOAD = """async (src) => {
  const url = URL.createObjectURL(new Blob([src], {type: "text/javascript"}));
  window.M = await import(url);
}"""


def _mount(page: Any, tree: Any, fresh: bool = True) -> None:
    if fresh:
        page.set_content("<!doctype html><html><body><div id=w></div></body></html>")
        page.evaluate(_LOAD, module("mount.js", "tree_view.js"))
        page.evaluate("() => { window.S = window.M.newState(); }")
    page.evaluate("(d) => window.M.mount(document.getElementById('w'), d, null, window.S)", to_json(tree))


def _tabs() -> Any:
    panels = [
        h("div", "", h("h5", "", label), f"panel {label}", data_tab=label, data_tab_open=label == "b" or None)
        for label in ("a", "b", "c")
    ]
    return h("div", "", panels, data_tabs="", data_key="charts")


def test_tabs_show_one_panel_and_keep_the_choice_across_redraws(page: Any) -> None:
    _mount(page, _tabs())
    visible = "() => Array.from(document.querySelectorAll('[data-tab]')).filter((p) => !p.hidden).map((p) => p.getAttribute('data-tab'))"
    assert page.evaluate(visible) == ["b"]  # data-tab-open
    assert page.locator(".srnb-tabbar button").all_inner_texts() == ["a", "b", "c"]
    assert page.locator(".srnb-tabbar .srnb-tab-on").inner_text() == "b"
    page.click(".srnb-tabbar button:has-text('c')")
    assert page.evaluate(visible) == ["c"]
    assert page.is_visible("text=panel c")
    assert not page.is_visible("text=panel b")
    _mount(page, _tabs(), fresh=False)  # the view redrawn (an update): still on c
    assert page.evaluate(visible) == ["c"]


def _table() -> Any:
    rows = [("x", "0.500"), ("y", "n/a"), ("z", "1,250 ms"), ("w", "$0.0010")]
    body = [h("tr", "", h("td", "", name), h("td", "", value)) for name, value in rows]
    head = h("thead", "", h("tr", "", h("th", "", "name"), h("th", "", "value")))
    return h("table", "", head, h("tbody", "", body), data_sort="", data_key="t")


def test_a_header_click_sorts_by_the_number_in_the_cells(page: Any) -> None:
    _mount(page, _table())
    names = "() => Array.from(document.querySelectorAll('tbody tr')).map((r) => r.cells[0].textContent)"
    assert page.evaluate(names) == ["x", "y", "z", "w"]  # as built until a click
    page.click("th:has-text('value')")
    assert page.evaluate(names) == ["z", "x", "w", "y"]  # largest first, n/a last
    assert page.get_attribute("th:has-text('value')", "data-sorted") == "desc"
    page.click("th:has-text('value')")
    assert page.evaluate(names) == ["w", "x", "z", "y"]  # smallest first, n/a still last
    page.click("th:has-text('name')")
    assert page.evaluate(names) == ["z", "y", "x", "w"]  # text, descending
    _mount(page, _table(), fresh=False)
    assert page.evaluate(names) == ["z", "y", "x", "w"]  # kept across a redraw
