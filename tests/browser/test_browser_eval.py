"""The evaluation views in a real browser (Debian chromium) at notebook width,
as a person sees them: nothing cut at a card's edge, no id broken inside,
the per-role card's last row whole, charts in the variants' colours.

    eval_fixtures.browser_report()   4 variants x 28 questions, per-role usage,
                                     short ("fact-01") and long ids, hashed chunk ids
      -> static face: report.to_html() set as the page, 950 px, light and dark
      -> widget face: EvalWidget's tree mounted by its module (mount.js) with a
         minimal model, 950 px, light and dark
      -> in both: MEASURE (below); the tabs and the sortable summary work in the widget
Screenshots: test-artifacts/browser/eval_{static,widget}_{light,dark}.png
The same checks run in a real JupyterLab (test_browser_eval_lab.py).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from browser_support import ARTIFACTS, PAGE, WIDTH, PageLog, needs_chromium, widget_script
from eval_fixtures import MEASURE, browser_report, check

from selfrag_nb.display.eval_html import eval_css
from selfrag_nb.display.eval_widget import EvalWidget

pytestmark = [pytest.mark.browser, pytest.mark.slow, needs_chromium, pytest.mark.timeout(300)]

THEMES = {
    "light": "--jp-content-font-color1: rgba(0,0,0,0.87); --jp-content-font-color2: rgba(0,0,0,0.54);"
    " --jp-border-color2: #e0e0e0; --jp-layout-color2: #eeeeee; --jp-layout-color0: #ffffff;"
    " background: #ffffff; color: rgba(0,0,0,0.87);",
    "dark": "--jp-content-font-color1: rgba(255,255,255,1); --jp-content-font-color2: rgba(255,255,255,0.7);"
    " --jp-border-color2: #424242; --jp-layout-color2: #424242; --jp-layout-color0: #111111;"
    " background: #111111; color: #ffffff;",
}
WIDGET_SCRIPT = widget_script("renderTree")  # the tree's own render, on PAGE's #out


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_eval_views_at_950px(page: Any, page_log: PageLog, theme: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.set_viewport_size({"width": WIDTH, "height": 900})
    rep = browser_report()

    html = PAGE.format(css="", theme=THEMES[theme], width=WIDTH, body=rep.to_html(), script="")
    page.set_content(html, wait_until="load")
    page.screenshot(path=str(ARTIFACTS / f"eval_static_{theme}.png"), full_page=True)
    check(page.locator(".srnb-ev").evaluate(MEASURE), "static", theme)

    w = EvalWidget(rep)
    script = WIDGET_SCRIPT.format(module=w._esm, traits=json.dumps({"tree": w.tree, "selected_claim": -1}))
    page.set_content(
        PAGE.format(css=eval_css(), theme=THEMES[theme], width=WIDTH, body="", script=script),
        wait_until="load",
    )
    page.wait_for_function("() => window.__rendered === true")
    page.screenshot(path=str(ARTIFACTS / f"eval_widget_{theme}.png"), full_page=True)
    check(page.locator(".srnb-ev").evaluate(MEASURE), "widget", theme)

    # The charts are tabs: one shown at a time; the latency tab has one unit, s here (a 12 s question).
    charts = page.locator(".srnb-ev-charts")
    assert charts.locator(".srnb-chart:visible").count() == 1
    charts.locator(".srnb-tabbar button", has_text="latency").click()
    assert "latency per question (s, lower is better)" in charts.locator(".srnb-chart:visible").inner_text()
    # A click on a column header sorts the summary by it.
    summary = page.locator("table.srnb-ev-summary")
    summary.locator("th", has_text="outcome accuracy").click()
    col = summary.evaluate(
        "(t) => { const i = Array.from(t.tHead.rows[0].cells).findIndex((c) => c.textContent.startsWith('outcome accuracy'));"
        " return Array.from(t.tBodies[0].rows).map((r) => parseFloat(r.cells[i].textContent)); }"
    )
    assert col == sorted(col, reverse=True)
    assert page_log.errors == []
