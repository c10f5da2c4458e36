"""sr.compare in a real JupyterLab, driven by Debian chromium, light and dark.

jupyterlab fixture (conftest.py)  <-  compare.ipynb generated here:
    two traces of one question on the sample knowledge base, rerank off / on,
    shown as the widget (the cell's value) and as static HTML (to_html())
chromium at 1000 px wide opens /lab/tree/compare.ipynb (window.jupyterapp)
  -> notebook:run-all-cells; poll the notebook model until every cell ran
  -> both faces: the first divergence (Rerank) is the one highlighted row,
     its banner and row are visible, nothing is wider than the output area
  -> the widget: click a stage's title, its items appear (chunk names, ids on hover)
  -> switch to JupyterLab Dark, check again; screenshots of both themes in
     test-artifacts/browser/; no console error, no page error
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from browser_support import OVERFLOW_JS, run_all_cells, shoot

from selfrag_nb.flow import FLOW

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "browser"
needs_chromium = pytest.mark.skipif(
    not Path("/usr/bin/chromium").exists(),
    reason="Debian chromium is not installed at /usr/bin/chromium (apt-get install chromium)",
)
Server = Any  # conftest.py's Server and PageLog, duck-typed (not importable from here)
PageLog = Any

pytestmark = [pytest.mark.browser, pytest.mark.slow, needs_chromium, pytest.mark.timeout(300)]

# The viewport; with the file browser collapsed the notebook column is about
# 950 px wide (JupyterLab's side bars and margins take the rest).
WIDTH = 1100
WIDGET_OUT = ".jp-OutputArea-output:not([data-mime-type])"
HTML_OUT = '.jp-OutputArea-output[data-mime-type="text/html"]'

CELLS = [
    """import selfrag_nb as sr

kb = sr.KnowledgeBase.sample()
rag = sr.SelfRAG(kb)
q = "What is the refund window for a Pro subscription?"
on = rag.ask(q, user=sr.User("ana"))
off = rag.with_settings(rerank=False).ask(q, user=sr.User("ana"))
cmp = sr.compare(off, on, labels=("rerank off", "rerank on"))
assert cmp.first_divergence.stage == "rerank", cmp.to_text()
cmp""",
    """from IPython.display import HTML, display

display(HTML(cmp.to_html()))""",
]


def _check_face(face: Any, theme: str) -> None:
    assert face.count() == 1
    classes = (face.get_attribute("class") or "").split()
    assert {"srnb-cmp", "tex2jax_ignore", "mathjax_ignore"} <= set(classes)
    assert face.locator("script").count() == 0
    rows = face.locator(".srnb-cmp-row[data-stage]")
    assert rows.count() == len(FLOW)  # one row per stage of the flow
    first = face.locator(".srnb-cmp-first")
    assert first.count() == 1
    assert first.get_attribute("data-stage") == "rerank"
    first.scroll_into_view_if_needed()
    assert first.is_visible()
    banner = face.locator(".srnb-cmp-banner")
    assert banner.is_visible()
    assert banner.inner_text().startswith("First divergence: Rerank")
    # Highlighted: the first divergent row is drawn unlike an identical one.
    colour = "(e) => getComputedStyle(e).backgroundColor"
    same = face.locator('.srnb-cmp-row[data-stage="decide"]')
    assert first.evaluate(colour) != same.evaluate(colour), theme
    assert first.evaluate("(e) => getComputedStyle(e).borderTopColor") != same.evaluate(
        "(e) => getComputedStyle(e).borderTopColor"
    )
    assert face.evaluate(OVERFLOW_JS) == [], theme
    text = face.inner_text()
    assert not re.search(r"\b[0-9a-f]{24}\b", text), "a chunk is named by its bare id"


def test_compare_view_in_jupyterlab_light_and_dark(jupyterlab: Server, page: Any, page_log: PageLog) -> None:
    name = "compare.ipynb"
    jupyterlab.write_notebook(name, CELLS)
    page.set_viewport_size({"width": WIDTH, "height": 1000})
    run_all_cells(page, jupyterlab, name)
    page.evaluate("() => window.jupyterapp.shell.collapseLeft()")  # a 950 px column
    page.wait_for_timeout(300)

    cells = page.locator(".jp-Notebook .jp-Cell")
    widget = cells.nth(0).locator(f"{WIDGET_OUT} .srnb-root")
    static = cells.nth(1).locator(f"{HTML_OUT} .srnb-root")
    for face in (widget, static):
        _check_face(face, "light")

    # The widget: the first divergence starts expanded (chunk names, ids on hover);
    # another stage's details open on a click.
    items = widget.locator(".srnb-cmp-first .srnb-cmp-item")
    assert items.count() >= 1
    assert items.first.is_visible()
    assert re.fullmatch(r"chunk [0-9a-f]{24}.*", items.first.get_attribute("title") or "")
    grade = widget.locator('.srnb-cmp-row[data-stage="grade"]')
    assert not grade.locator(".srnb-cmp-item").first.is_visible()
    grade.locator("details > summary").first.click()
    grade.locator(".srnb-cmp-item").first.wait_for()
    assert "›" in grade.locator(".srnb-cmp-item").first.inner_text()
    shoot(page, widget, "jupyterlab-compare-widget-light")
    shoot(page, static, "jupyterlab-compare-static-light")

    page.evaluate(
        """() => window.jupyterapp.commands.execute("apputils:change-theme", {theme: "JupyterLab Dark"})"""
    )
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'", timeout=30_000)
    page.wait_for_timeout(500)  # the theme's stylesheet settles
    for face in (widget, static):
        _check_face(face, "dark")
    # Text stays readable on the dark background: light text colour.
    fg = widget.locator(".srnb-cmp-first .srnb-stage").evaluate("(e) => getComputedStyle(e).color")
    channels = [int(x) for x in re.findall(r"\d+", fg)[:3]]
    assert sum(channels) / 3 > 128, fg
    shoot(page, widget, "jupyterlab-compare-widget-dark")
    shoot(page, static, "jupyterlab-compare-static-dark")

    page.wait_for_timeout(300)
    assert not page_log.errors, "console / page errors:\n" + "\n".join(page_log.errors)
