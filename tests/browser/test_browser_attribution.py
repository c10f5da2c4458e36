"""trace.attribution() in real JupyterLab and marimo, driven by Debian chromium at 950 px, light and dark.

Both front ends run THIS checkout's package (the cell puts the checkout first
on sys.path and asserts where selfrag_nb came from): the refund question of the
tour on the sample knowledge base, answered and attributed by the offline model.
    JupyterLab (jupyterlab fixture)    the widget (the cell's value) + the static
                                       face (to_html(), shown as HTML)
    marimo (``marimo run`` of an app written here)   the widget via mo.ui.anywidget
What a person sees, read from the rendered page:
  -> the matrix: which claim x chunk is decisive (row text x column name): the
     refund-window claim and the processing-fee claim each stand on one chunk of
     the 2025 refund policy; the superseded 2024 policy (⚠) decides nothing;
     a decisive cell looks unlike an unaffected one (symbol, border, background)
  -> the widget: clicking a claim lights up its decisive cells (and only those)
     and shows its sentence in the answer and the evidence span it quoted;
     clicking another claim moves the light
  -> nothing wider than the output at 950 px; in the dark theme text stays light;
     screenshots in test-artifacts/browser/attribution-*.png; no console / page error
"""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_support import OVERFLOW_JS, run_all_cells, shoot

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "browser"
needs_chromium = pytest.mark.skipif(
    not Path("/usr/bin/chromium").exists(),
    reason="Debian chromium is not installed at /usr/bin/chromium (apt-get install chromium)",
)
Server = Any  # conftest.py's Server and PageLog, duck-typed
PageLog = Any

pytestmark = [pytest.mark.browser, pytest.mark.slow, needs_chromium, pytest.mark.timeout(400)]

WIDTH = 950
WIDGET_OUT = ".jp-OutputArea-output:not([data-mime-type])"
HTML_OUT = '.jp-OutputArea-output[data-mime-type="text/html"]'

# The kernel imports this checkout, not the package the venv was installed from.
BUILD = f"""import sys
sys.path.insert(0, {str(ROOT)!r})
import selfrag_nb as sr
assert sr.__file__.startswith({str(ROOT)!r}), sr.__file__

kb = sr.KnowledgeBase.sample()
trace = sr.SelfRAG(kb).ask("What is the refund window for a Pro subscription?", user=sr.User("ana"))
a = trace.attribution()
assert a.decisive_cells >= 2, str(a)"""
CELLS = [BUILD + "\na", "from IPython.display import HTML, display\n\ndisplay(HTML(a.to_html()))"]

MARIMO_APP = """import marimo

app = marimo.App(width="medium")


@app.cell
def _():
    import marimo as mo
{body}
    a
    return


if __name__ == "__main__":
    app.run()
"""

#: What the matrix must show: claim (words of its row) -> the one column it is lost without.
REFUND_CLAIM = "within 30 days of your first payment"
FEE_CLAIM = "cancel an annual subscription"
CURRENT = "Refund Policy (2025)"
SUPERSEDED = "Refund Policy (2024)"


# The matrix as a person reads it: column heads, and per row its claim text and cell symbols.
MATRIX_JS = """(root) => {
  const t = root.querySelector("table.srnb-attr-matrix");
  const heads = Array.from(t.querySelectorAll("thead th")).slice(1).map((e) => e.innerText.trim());
  const rows = Array.from(t.querySelectorAll("tbody tr")).map((tr) => ({
    claim: tr.querySelector("th").innerText.trim(),
    cells: Array.from(tr.querySelectorAll("td")).map((td) => td.innerText.trim()),
  }));
  return { heads, rows };
}"""


def _sibling(name: str) -> Any:
    """A module of this folder by path (the browser tests are not a package)."""
    spec = importlib.util.spec_from_file_location(f"_attrib_{name}", Path(__file__).parent / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    if spec.name in sys.modules:
        return sys.modules[spec.name]
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def _decisive(matrix: dict[str, Any]) -> set[tuple[str, str]]:
    """(claim row, column head) of every cell showing the decisive symbol."""
    return {
        (row["claim"], matrix["heads"][j])
        for row in matrix["rows"]
        for j, sym in enumerate(row["cells"])
        if sym == "●"
    }


def check_matrix(face: Any, theme: str) -> None:
    assert face.count() == 1
    assert face.locator("script").count() == 0
    matrix = face.evaluate(MATRIX_JS)
    heads = matrix["heads"]
    assert any(SUPERSEDED in h and "⚠" in h for h in heads), heads  # the superseded policy is flagged
    marked = _decisive(matrix)
    by_claim = {claim: {h for c, h in marked if c == claim} for claim, _ in marked}
    refund = [c for c in by_claim if REFUND_CLAIM in c]
    fee = [c for c in by_claim if FEE_CLAIM in c]
    assert len(refund) == len(fee) == 1, marked
    for claim in (refund[0], fee[0]):
        (head,) = by_claim[claim]  # lost without exactly one chunk ...
        assert CURRENT in head, (claim, head)  # ... of the current policy
    assert not [h for _, h in marked if SUPERSEDED in h], marked
    # a decisive cell is drawn unlike an unaffected one (not by colour alone: border style too)
    dec = face.locator('td[data-effect="decisive"]').first
    plain = face.locator('td[data-effect="unaffected"]').first
    style = (
        "(e) => { const s = getComputedStyle(e); return [s.outlineStyle, s.backgroundColor, s.fontWeight]; }"
    )
    d, p = dec.evaluate(style), plain.evaluate(style)
    assert d[0] == "solid", (d, theme)
    assert p[0] == "none", (p, theme)
    assert d[1] != p[1], theme
    legend = face.locator(".srnb-attr-legend").inner_text()
    for word in ("decisive", "weakened", "unaffected", "strengthened", "unknown"):
        assert word in legend
    assert face.evaluate(OVERFLOW_JS) == [], theme


def exercise(page: Any, view: Any, tag: str) -> None:
    """Click a claim: its decisive cells light up and its sentence and evidence show."""
    assert view.locator(".srnb-sel").count() == 0
    claim = view.locator("summary [data-claim]").filter(has_text=REFUND_CLAIM)
    i = claim.get_attribute("data-claim")
    details = view.locator(f'details[data-key="attr-claim-{i}"]')
    sentence = details.locator(f'mark[data-for-claim="{i}"]')
    assert not sentence.is_visible()  # folded until asked
    claim.click()
    sentence.wait_for(state="visible")
    assert REFUND_CLAIM in sentence.inner_text()
    span = details.locator(".srnb-attr-span").first
    assert span.is_visible()
    assert "30 days" in span.inner_text()
    row = view.locator("tbody tr").filter(has_text=REFUND_CLAIM)
    lit = view.locator("td.srnb-sel")
    assert lit.count() == 1
    assert lit.first.get_attribute("data-effect") == "decisive"
    assert row.locator("td.srnb-sel").count() == 1  # the claim's own row
    col = int(lit.first.get_attribute("data-chunk") or 0)
    head = view.locator(f'thead th[data-chunk="{col}"]').inner_text()
    assert CURRENT in head
    # the lit cell is drawn unlike the same kind of cell in another row
    ring = "(e) => getComputedStyle(e).outlineColor"
    other = view.locator("tbody tr").filter(has_text=FEE_CLAIM).locator('td[data-effect="decisive"]')
    assert lit.first.evaluate(ring) != other.evaluate(ring)
    shoot(page, view, f"attribution-{tag}-claim-light")

    # another claim, from its matrix row: the light moves to its cell
    row_head = view.locator("tbody tr").filter(has_text=FEE_CLAIM).locator("th[data-claim]")
    row_head.click()
    assert view.locator("td.srnb-sel").count() == 1
    assert other.get_attribute("class") is not None
    assert "srnb-sel" in (other.get_attribute("class") or "").split()
    assert "srnb-sel" in (row_head.get_attribute("class") or "").split()
    assert row.locator("td.srnb-sel").count() == 0


def check_dark(view: Any) -> None:
    for sel in ("tbody th", ".srnb-attr-title", "td[data-effect='decisive']"):
        fg = view.locator(sel).first.evaluate("(e) => getComputedStyle(e).color")
        channels = [int(x) for x in re.findall(r"\d+", fg)[:3]]
        assert sum(channels) / 3 > 128, (sel, fg)


# ------------------------------------------------------------------ JupyterLab


def test_attribution_in_jupyterlab_light_and_dark(jupyterlab: Server, page: Any, page_log: PageLog) -> None:
    name = "attribution.ipynb"
    jupyterlab.write_notebook(name, CELLS)
    page.set_viewport_size({"width": WIDTH, "height": 1000})
    run_all_cells(page, jupyterlab, name)
    page.evaluate(
        """() => { const s = window.jupyterapp.shell;
                   if (!s.leftCollapsed) return window.jupyterapp.commands.execute("application:toggle-left-area"); }"""
    )
    page.wait_for_timeout(300)
    cells = page.locator(".jp-Notebook .jp-Cell")
    view = cells.nth(0).locator(f"{WIDGET_OUT} .srnb-attr")
    static = cells.nth(1).locator(f"{HTML_OUT} .srnb-attr")
    view.wait_for(timeout=30_000)
    for face in (view, static):
        check_matrix(face, "light")
    assert static.locator("details[open]").count() == 0
    shoot(page, static, "attribution-jupyterlab-static-light")
    exercise(page, view, "jupyterlab")

    page.evaluate(
        """() => window.jupyterapp.commands.execute("apputils:change-theme", {theme: "JupyterLab Dark"})"""
    )
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'", timeout=30_000)
    page.wait_for_timeout(500)
    for face in (view, static):
        check_matrix(face, "dark")
        check_dark(face)
    shoot(page, view, "attribution-jupyterlab-claim-dark")
    shoot(page, static, "attribution-jupyterlab-static-dark")
    page.wait_for_timeout(300)
    assert not page_log.errors, "console / page errors:\n" + "\n".join(page_log.errors)


# ------------------------------------------------------------------ marimo


@pytest.fixture
def marimo_attribution(
    tmp_path: Path, sample_cache: Path, request: pytest.FixtureRequest
) -> Iterator[Server]:
    cf = _sibling("conftest")
    root = tmp_path / "app"
    root.mkdir()
    body = "\n".join("    " + line if line else "" for line in BUILD.splitlines())
    app = root / "attribution_app.py"
    app.write_text(MARIMO_APP.format(body=body), encoding="utf-8")
    with cf.run_marimo(app, tmp_path, sample_cache, request) as server:
        yield server


def test_attribution_in_marimo_light_and_dark(
    marimo_attribution: Server, page: Any, page_log: PageLog
) -> None:
    page.set_viewport_size({"width": WIDTH, "height": 1000})
    page.goto(f"{marimo_attribution.base}/?access_token={marimo_attribution.token}")
    view = page.locator("marimo-anywidget .srnb-attr")
    view.first.wait_for(timeout=180_000)
    check_matrix(view, "light")
    exercise(page, view, "marimo")
    page.emulate_media(color_scheme="dark")
    page.evaluate("() => document.documentElement.setAttribute('data-theme', 'dark')")
    page.evaluate("() => document.body.classList.add('dark')")
    page.wait_for_timeout(500)
    check_matrix(view, "dark")
    check_dark(view)
    shoot(page, view, "attribution-marimo-claim-dark")
    page.wait_for_timeout(300)
    assert not page_log.errors, "console / page errors:\n" + "\n".join(page_log.errors)
