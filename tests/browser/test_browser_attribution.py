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

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_support import (
    OVERFLOW_JS,
    REFUND_TRACE,
    PageLog,
    Server,
    assert_light_text,
    assert_no_page_errors,
    faces,
    jupyterlab_dark,
    marimo_dark,
    needs_chromium,
    open_marimo,
    open_notebook,
    serve_marimo,
    shoot,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow, needs_chromium, pytest.mark.timeout(400)]

# This checkout's package answers the tour's refund question (REFUND_TRACE), then attributes it.
BUILD = (
    REFUND_TRACE
    + """
a = trace.attribution()
assert a.decisive_cells >= 2, str(a)"""
)
CELLS = [BUILD + "\na", "from IPython.display import HTML, display\n\ndisplay(HTML(a.to_html()))"]

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
    assert_light_text(view, ("tbody th", ".srnb-attr-title", "td[data-effect='decisive']"))


# ------------------------------------------------------------------ JupyterLab


def test_attribution_in_jupyterlab_light_and_dark(jupyterlab: Server, page: Any, page_log: PageLog) -> None:
    cells = open_notebook(page, jupyterlab, "attribution.ipynb", CELLS)
    view, static = faces(cells, ".srnb-attr")
    for face in (view, static):
        check_matrix(face, "light")
    assert static.locator("details[open]").count() == 0
    shoot(page, static, "attribution-jupyterlab-static-light")
    exercise(page, view, "jupyterlab")

    jupyterlab_dark(page)
    for face in (view, static):
        check_matrix(face, "dark")
        check_dark(face)
    shoot(page, view, "attribution-jupyterlab-claim-dark")
    shoot(page, static, "attribution-jupyterlab-static-dark")
    assert_no_page_errors(page, page_log)


# ------------------------------------------------------------------ marimo


@pytest.fixture
def marimo_attribution(
    tmp_path: Path, sample_cache: Path, request: pytest.FixtureRequest
) -> Iterator[Server]:
    with serve_marimo(
        tmp_path, sample_cache, request, name="attribution_app", build=BUILD, value="a"
    ) as server:
        yield server


def test_attribution_in_marimo_light_and_dark(
    marimo_attribution: Server, page: Any, page_log: PageLog
) -> None:
    view = open_marimo(page, marimo_attribution, ".srnb-attr")
    check_matrix(view, "light")
    exercise(page, view, "marimo")
    marimo_dark(page)
    check_matrix(view, "dark")
    check_dark(view)
    shoot(page, view, "attribution-marimo-claim-dark")
    assert_no_page_errors(page, page_log)
