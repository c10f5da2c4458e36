"""labels.annotate(trace, qid) in real JupyterLab and marimo, driven by Debian chromium at 950 px, light and dark.

Both front ends run THIS checkout's package (the cell puts the checkout first
on sys.path and asserts where selfrag_nb came from): the refund question of the
tour on the sample knowledge base, answered by the offline model, and a label
sheet over a labels file in the test's tmp folder.
    JupyterLab (jupyterlab fixture)    the widget (the cell's value) + the static
                                       face (to_html(), shown as HTML)
    marimo (``marimo run`` of an app written here)   the widget via mo.ui.anywidget
What a person does and sees:
  -> click "not relevant" on the first graded chunk and "partly" on the
     refund-window claim: the labels file holds exactly those two lines (kind,
     question id, chunk id / claim text, value), and the view shows both marks
     ticked ("✓ not relevant", "✓ partly") with "your label" saying so
  -> the static face: the same marks as plain text, no script
  -> nothing wider than the output at 950 px; in the dark theme text stays light;
     screenshots in test-artifacts/browser/labels-*.png; no console / page error
"""

from __future__ import annotations

import json
import re
import time
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

QID = "refund-pro"
REFUND_CLAIM = "within 30 days of your first payment"


def _build(path: Path) -> str:
    """This checkout's package answers the tour's refund question (REFUND_TRACE);
    a label sheet over the labels file at ``path``."""
    return REFUND_TRACE + f"\nlabels = sr.Labels({str(path)!r})\nsheet = labels.annotate(trace, {QID!r})"


def _lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def _wait_lines(path: Path, n: int, timeout: float = 20.0) -> list[dict[str, Any]]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = _lines(path)
        if len(got) >= n:
            return got
        time.sleep(0.2)
    return _lines(path)


def check_face(face: Any, theme: str) -> None:
    """The sheet as a person reads it: chunks, claims, answer, each with marks."""
    assert face.count() == 1
    assert face.locator("script").count() == 0
    chunks = face.locator('[data-label-kind="chunk"]')
    claims = face.locator('[data-label-kind="claim"]')
    assert chunks.count() >= 2
    assert claims.count() >= 2
    assert face.locator('[data-label-kind="answer"]').count() == 1
    first = chunks.first.inner_text()
    assert "judge:" in first
    assert "relevant" in first
    assert re.search(r"\.md\b", first), first  # named by its file, not its id
    for kind, words in (
        ("chunk", ["relevant", "not relevant"]),
        ("claim", ["supported", "partly", "not supported"]),
    ):
        marks = face.locator(f'[data-label-kind="{kind}"]').first.locator('[data-send="label"]')
        assert [m.removeprefix("✓ ") for m in marks.all_inner_texts()] == words
    overflow = OVERFLOW_JS
    assert face.evaluate(overflow) == [], theme


def label(page: Any, view: Any, path: Path, tag: str) -> None:
    """Click "not relevant" on the first chunk and "partly" on the refund claim."""
    chunk = view.locator('[data-label-kind="chunk"]').first
    chunk_id = chunk.locator('[data-send="label"]').first.get_attribute("data-item")
    chunk.locator('[data-send="label"][data-value="no"]').click()
    view.locator('[data-label-kind="chunk"]').first.locator(".srnb-lmark-on").wait_for(timeout=20_000)
    claim = view.locator('[data-label-kind="claim"]').filter(has_text=REFUND_CLAIM)
    claim.locator('[data-send="label"][data-value="partial"]').press("Enter")  # the keyboard path
    view.locator('[data-label-kind="claim"]').filter(has_text=REFUND_CLAIM).locator(
        ".srnb-lmark-on"
    ).wait_for(timeout=20_000)

    lines = _wait_lines(path, 2)
    assert [(x["kind"], x["id"]) for x in lines] == [("chunk", QID), ("claim", QID)], lines
    assert lines[0]["chunk_id"] == chunk_id
    assert lines[0]["relevant"] is False
    assert REFUND_CLAIM in lines[1]["claim"]
    assert lines[1]["support"] == "partial"

    chunk = view.locator('[data-label-kind="chunk"]').first
    assert chunk.locator(".srnb-lmark-on").inner_text() == "✓ not relevant"
    assert "your label: not relevant" in chunk.inner_text()
    claim = view.locator('[data-label-kind="claim"]').filter(has_text=REFUND_CLAIM)
    assert claim.locator(".srnb-lmark-on").inner_text() == "✓ partly"
    assert view.locator(".srnb-lmark-on").count() == 2
    # the ticked mark is drawn unlike the others (border and weight, not colour alone)
    style = "(e) => { const s = getComputedStyle(e); return [s.borderTopColor, s.fontWeight]; }"
    on = chunk.locator(".srnb-lmark-on").evaluate(style)
    off = chunk.locator('[data-value="yes"]').evaluate(style)
    assert on != off
    shoot(page, view, f"labels-{tag}-light")


def check_dark(view: Any) -> None:
    assert_light_text(view, (".srnb-lmark", ".srnb-lmark-on", ".srnb-lhead"))


# ------------------------------------------------------------------ JupyterLab


def test_label_sheet_in_jupyterlab_light_and_dark(jupyterlab: Server, page: Any, page_log: PageLog) -> None:
    path = Path(jupyterlab.root) / "labels.jsonl"
    cells = [
        _build(path) + "\nsheet",
        "from IPython.display import HTML, display\n\ndisplay(HTML(sheet.to_html()))",
    ]
    nb = open_notebook(page, jupyterlab, "labels.ipynb", cells)
    view, static = faces(nb, ".srnb-labels")
    for face in (view, static):
        check_face(face, "light")
    assert _lines(path) == []
    label(page, view, path, "jupyterlab")
    # the static face marks nothing: a click on its text sends nothing
    static.locator('[data-label-kind="chunk"]').first.locator('[data-value="yes"]').click()
    page.wait_for_timeout(500)
    assert len(_lines(path)) == 2
    # run the static cell again: it shows the labels now in the file, as plain text
    page.evaluate(
        """async () => { const p = window.jupyterapp.shell.currentWidget;
                         p.content.activeCellIndex = 1;
                         await window.jupyterapp.commands.execute("notebook:run-cell"); }"""
    )
    static.locator(".srnb-lmark-on").nth(1).wait_for(timeout=30_000)
    assert static.locator(".srnb-lmark-on").all_inner_texts() == ["✓ not relevant", "✓ partly"]
    assert static.locator("script").count() == 0
    shoot(page, static, "labels-jupyterlab-static-light")

    jupyterlab_dark(page)
    for face in (view, static):
        check_face(face, "dark")
        check_dark(face)
    shoot(page, view, "labels-jupyterlab-dark")
    shoot(page, static, "labels-jupyterlab-static-dark")
    assert_no_page_errors(page, page_log)


# ------------------------------------------------------------------ marimo


@pytest.fixture
def marimo_labels(tmp_path: Path, sample_cache: Path, request: pytest.FixtureRequest) -> Iterator[Server]:
    build = _build(tmp_path / "app" / "labels.jsonl")
    with serve_marimo(
        tmp_path, sample_cache, request, name="labels_app", build=build, value="sheet"
    ) as server:
        yield server


def test_label_sheet_in_marimo_light_and_dark(marimo_labels: Server, page: Any, page_log: PageLog) -> None:
    path = Path(marimo_labels.root) / "labels.jsonl"
    view = open_marimo(page, marimo_labels, ".srnb-labels")
    check_face(view, "light")
    label(page, view, path, "marimo")
    marimo_dark(page)
    check_face(view, "dark")
    check_dark(view)
    shoot(page, view, "labels-marimo-dark")
    assert_no_page_errors(page, page_log)
