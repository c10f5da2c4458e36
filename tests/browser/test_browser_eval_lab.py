"""The evaluation report in a real JupyterLab (Debian chromium), light and dark,
in a ~950 px notebook column, as a person sees it.

    a notebook whose kernel imports THIS checkout (sys.path first, asserted)
      cell 0  report = eval_fixtures.browser_report(); report   -> the widget (mount.js)
      cell 1  HTML(report.to_html())                           -> the static face
      cell 2  report.failures                                  -> a DataFrame
      cell 3  charts.latency_box(report.table)                 -> a plotly figure, on request
    light, then JupyterLab Dark:
      -> widget and static face: eval_fixtures.MEASURE / check (no table cut at a
         card's edge, no id broken inside, every per-role row whole, the
         variants' colours, chart text following the theme)
      -> report.failures names evidence by file, no chunk hash
      -> the plotly figure: no white block (transparent paper), tick text with
         contrast >= 3 on the notebook's background, one time unit (s: a 12 s
         question), no "k"/"m" suffixed ticks
Screenshots: test-artifacts/browser/jupyterlab-eval-{widget,static,failures,plotly}-{light,dark}.png
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from browser_support import run_all_cells, shoot
from eval_fixtures import MEASURE, check

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "browser"
needs_chromium = pytest.mark.skipif(
    not Path("/usr/bin/chromium").exists(),
    reason="Debian chromium is not installed at /usr/bin/chromium (apt-get install chromium)",
)
PageLog = Any
Server = Any

pytestmark = [pytest.mark.browser, pytest.mark.slow, needs_chromium, pytest.mark.timeout(300)]

WIDGET_OUT = ".jp-OutputArea-output:not([data-mime-type])"
HTML_OUT = '.jp-OutputArea-output[data-mime-type="text/html"]'
HEX = re.compile(r"\b[0-9a-f]{24}\b")  # a chunk id (eval_fixtures.chunk_id)
CELLS = [
    """import sys
sys.path[:0] = [{root!r}, {support!r}]  # this checkout's package, whatever the venv installed
import selfrag_nb as sr
assert sr.__file__.startswith({root!r}), sr.__file__
from eval_fixtures import browser_report
report = browser_report()
report""",
    "from IPython.display import HTML\nHTML(report.to_html())",
    "report.failures",
    "from selfrag_nb.eval import charts\ncharts.latency_box(report.table)",
]
# The plotly figure as seen: its paper colour, its tick texts and their colour,
# the y title, and the colour behind the output (the notebook's background).
PLOTLY_JS = """(out) => {
  const svg = out.querySelector('.main-svg');
  const bg = (el) => {
    for (let e = el; e; e = e.parentElement) {
      const c = getComputedStyle(e).backgroundColor;
      if (c && c !== 'rgba(0, 0, 0, 0)' && c !== 'transparent') return c;
    }
    return 'rgb(255, 255, 255)';
  };
  const ticks = Array.from(out.querySelectorAll('.ytick text'));
  return {
    paper: svg.querySelector('rect.bg') ? getComputedStyle(svg).backgroundColor : '',
    paperFill: (out.querySelector('.main-svg rect') || {getAttribute: () => ''}).getAttribute('style') || '',
    svgBg: getComputedStyle(svg).backgroundColor,
    ticks: ticks.map((t) => t.textContent),
    tickFill: ticks.length ? getComputedStyle(ticks[0]).fill : '',
    ytitle: (out.querySelector('.g-ytitle text') || {textContent: ''}).textContent,
    title: (out.querySelector('.gtitle') || {textContent: ''}).textContent,
    behind: bg(out.parentElement),
  };
}"""


def _lum(css: str) -> float:
    r, g, b = (int(x) / 255 for x in re.findall(r"\d+", css)[:3])

    def ch(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * ch(r) + 0.7152 * ch(g) + 0.0722 * ch(b)


def contrast(a: str, b: str) -> float:
    la, lb = sorted((_lum(a), _lum(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def test_eval_report_in_jupyterlab_light_and_dark(jupyterlab: Server, page: Any, page_log: PageLog) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    cells = [c.format(root=str(ROOT), support=str(ROOT / "tests" / "support")) for c in CELLS]
    jupyterlab.write_notebook("eval.ipynb", cells)
    page.set_viewport_size({"width": 1100, "height": 1000})
    run_all_cells(page, jupyterlab, "eval.ipynb")
    page.evaluate("() => window.jupyterapp.shell.collapseLeft()")  # the file browser off: a ~950 px column
    nb = page.locator(".jp-Notebook .jp-Cell")
    widget = nb.nth(0).locator(f"{WIDGET_OUT} .srnb-ev")
    static = nb.nth(1).locator(f"{HTML_OUT} .srnb-ev")
    failures = nb.nth(2).locator(".jp-OutputArea-output")
    plot = nb.nth(3).locator(".jp-OutputArea-output").last  # plotly's own renderer (jupyterlab-plotly)
    widget.locator(".srnb-ev-roles tbody tr").first.wait_for()
    plot.locator(".main-svg").first.wait_for(timeout=60_000)
    for theme in ("light", "dark"):
        if theme == "dark":
            page.evaluate(
                """() => window.jupyterapp.commands.execute("apputils:change-theme", {theme: "JupyterLab Dark"})"""
            )
            page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'", timeout=30_000)
            page.wait_for_timeout(500)  # the theme's stylesheet settles
        for face, name in ((widget, "widget"), (static, "static")):
            assert face.count() == 1, name
            width = face.evaluate("(e) => e.getBoundingClientRect().width")
            assert 850 <= width <= 1000, width  # the notebook column of the finding
            check(face.evaluate(MEASURE), f"jupyterlab {name}", theme)
            shoot(page, face, f"jupyterlab-eval-{name}-{theme}")

        text = failures.inner_text()
        assert "refund-policy-2024.md" in text
        assert not HEX.search(text), HEX.search(text)  # no chunk hash where a name can be shown
        shoot(page, failures, f"jupyterlab-eval-failures-{theme}")

        fig = plot.evaluate(PLOTLY_JS)
        assert fig["svgBg"] in ("rgba(0, 0, 0, 0)", "transparent"), fig  # no white block on dark
        assert contrast(fig["tickFill"], fig["behind"]) >= 3, fig
        assert fig["ytitle"] == "s", fig  # one unit: a 12 s question puts the whole figure in s
        assert "(s)" in fig["title"], fig
        assert all(re.fullmatch(r"[0-9.,]+", t) for t in fig["ticks"]), fig  # no "k" / "m" suffixes
        shoot(page, plot, f"jupyterlab-eval-plotly-{theme}")
    assert not page_log.errors, "console / page errors:\n" + "\n".join(page_log.errors)
