"""sr.explore in real JupyterLab and marimo, driven by Debian chromium at 950 px, light and dark.

Both front ends run the same code: every sample question answered by the
offline model over the sample knowledge base (hashing embedder), each trace
saved to a folder, ``sr.explore(folder)`` shown as the cell's value.
    JupyterLab (jupyterlab fixture)    the widget + the static face (to_html())
    marimo (``marimo run`` of an app written here)   the widget via mo.ui.anywidget
  -> rows visible: one page of rows, counts name every trace
  -> a column filter and the free-text box change the count; every row left matches
  -> clicking a row opens its trace below the table (question and answer shown)
  -> clicking a second row opens the comparison of the two (first divergence banner)
  -> switch to dark: text stays readable; nothing wider than the output;
     screenshots in test-artifacts/browser/explore-*.png; no console / page error
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_support import (
    HTML_OUT,
    WIDGET_OUT,
    WIDTH,
    PageLog,
    Server,
    marimo_template,
    needs_chromium,
    open_notebook,
    shoot,
)
from browser_support import sibling as _sibling

pytestmark = [pytest.mark.browser, pytest.mark.slow, needs_chromium, pytest.mark.timeout(400)]

BUILD = """import pathlib, tempfile
import selfrag_nb as sr

kb = sr.KnowledgeBase.sample(embedder="hashing")
rag = sr.SelfRAG(kb)
folder = pathlib.Path(tempfile.mkdtemp(prefix="explore-"))
for i, q in enumerate(sr.questions("sample")):
    t = rag.ask(q.question, user=q.make_user(), history=[dict(x) for x in q.history])
    t.save(folder / f"{i:03d}.json")
ex = sr.explore(folder)"""
CELLS = [
    BUILD + "\nex",
    "from IPython.display import HTML, display\n\ndisplay(HTML(ex.to_html()))",
    'print("selected:", [t.question for t in ex.selected])',
]

MARIMO_APP = marimo_template("ex")


def _count(view: Any) -> tuple[int, int]:
    text = view.locator(".srnb-xp-count").inner_text()
    m = re.fullmatch(r"([\d,]+) of ([\d,]+) traces", text.strip())
    assert m, text
    return int(m.group(1).replace(",", "")), int(m.group(2).replace(",", ""))


def _outcomes(view: Any) -> list[str]:
    return [
        s.strip() for s in view.locator("tbody .srnb-xp-row td:nth-child(4) .srnb-badge").all_inner_texts()
    ]


def exercise(page: Any, view: Any, tag: str) -> dict[str, float]:
    """The rules every front end must keep; returns the filter / open latencies (ms)."""
    shown, total = _count(view)
    assert shown == total >= 50
    size = 25  # ExploreWidget.page_size
    rows = view.locator("tbody .srnb-xp-row")
    assert rows.count() == size  # one page in the DOM
    assert view.locator("script").count() == 0

    # a column filter: every row left is refused, the count drops
    outcome = view.locator('input.srnb-xp-filter[data-key="outcome"]')
    t0 = time.perf_counter()
    outcome.fill("refused")
    view.locator(".srnb-xp-count").filter(has_text=re.compile(r"^(?!.*\b(\d+) of \1\b)")).wait_for()
    filter_ms = (time.perf_counter() - t0) * 1000
    n_refused, _ = _count(view)
    assert 0 < n_refused < total
    assert set(_outcomes(view)) == {"refused"}
    assert len(_outcomes(view)) == min(n_refused, size)
    outcome.fill("")
    assert _count(view) == (total, total)

    # free text: the count follows; every question shown that is not an answer match holds it
    box = view.locator("input.srnb-xp-text")
    box.fill("refund")
    page.wait_for_timeout(600)  # debounce + the kernel's answer-text hits
    n_text, _ = _count(view)
    assert 0 < n_text < total
    box.fill("")
    assert _count(view) == (total, total)

    # sort by latency, descending: the first row is the slowest
    head = view.locator('th.srnb-xp-sort[data-key="latency_ms"]')
    head.click()
    head.click()
    assert "▼" in head.inner_text()

    # open one row: its trace appears under the table
    first = rows.nth(0)
    question = first.locator("td.srnb-xp-q").inner_text().strip()
    t0 = time.perf_counter()
    first.click()
    opened = view.locator('.srnb-xp-opened[data-kind="trace"]')
    opened.wait_for(timeout=30_000)
    open_ms = (time.perf_counter() - t0) * 1000
    # the trace's own full view: its header, every stage's card, the answer
    assert question.rstrip("…") in opened.locator(".srnb-q").first.inner_text()
    assert opened.locator(".srnb-answer").first.inner_text().strip()
    assert opened.locator(".srnb-card").count() >= 5
    assert "srnb-xp-sel" in (first.get_attribute("class") or "")
    shoot(page, view, f"explore-{tag}-trace-light")

    # a second row: the comparison of the two
    rows.nth(1).click()
    cmp = view.locator('.srnb-xp-opened[data-kind="compare"]')
    cmp.wait_for(timeout=30_000)
    assert cmp.locator(".srnb-cmp-banner").is_visible()
    assert cmp.locator("section.srnb-cmp-row[data-stage]").count() >= 3  # sr.compare's own view
    shoot(page, view, f"explore-{tag}-compare-light")
    return {"filter_ms": filter_ms, "open_ms": open_ms}


def check_dark(page: Any, view: Any, tag: str) -> None:
    fg = view.locator(".srnb-xp-count").evaluate("(e) => getComputedStyle(e).color")
    channels = [int(x) for x in re.findall(r"\d+", fg)[:3]]
    assert sum(channels) / 3 > 128, fg
    shoot(page, view, f"explore-{tag}-compare-dark")


# ------------------------------------------------------------------ JupyterLab


def test_explorer_in_jupyterlab_light_and_dark(jupyterlab: Server, page: Any, page_log: PageLog) -> None:
    # the notebook gets the page's width: 950 px, no file browser beside it
    cells = open_notebook(page, jupyterlab, "explore.ipynb", CELLS)
    view = cells.nth(0).locator(f"{WIDGET_OUT} .srnb-xp")
    static = cells.nth(1).locator(f"{HTML_OUT} .srnb-xp")
    assert view.count() == 1
    assert static.locator("tbody tr").count() == _count(view)[1]
    assert static.locator("script").count() == 0
    # questions stay readable in both faces: their column is not squeezed by the others
    for face in (view, static):
        widths = face.locator("td.srnb-xp-q").evaluate_all(
            "(es) => es.map((e) => e.getBoundingClientRect().width)"
        )
        assert min(widths) >= 200, widths[:5]
        align = face.locator("td.srnb-xp-q").first.evaluate("(e) => getComputedStyle(e).textAlign")
        assert align in ("left", "start"), align
    assert view.evaluate(OVERFLOW_JS) == []
    assert static.evaluate(OVERFLOW_JS) == []
    exercise(page, view, "jupyterlab")
    shoot(page, static, "explore-jupyterlab-static-light")

    page.evaluate(
        """() => window.jupyterapp.commands.execute("apputils:change-theme", {theme: "JupyterLab Dark"})"""
    )
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'", timeout=30_000)
    page.wait_for_timeout(500)
    # the kernel knows what was ticked: ex.selected, run again now
    page.evaluate(
        """async () => { const p = window.jupyterapp.shell.currentWidget;
                         p.content.activeCellIndex = 2;
                         await window.jupyterapp.commands.execute("notebook:run-cell"); }"""
    )
    out = cells.nth(2).locator(".jp-OutputArea-output")
    out.filter(has_text="selected: ['").wait_for(timeout=30_000)
    picked = [
        q.strip().rstrip("…") for q in view.locator("tbody .srnb-xp-sel td.srnb-xp-q").all_inner_texts()
    ]
    assert len(picked) == 2
    printed = out.inner_text()
    for q in picked:
        assert q[:40] in printed, (q, printed)
    check_dark(page, view, "jupyterlab")
    shoot(page, static, "explore-jupyterlab-static-dark")
    assert view.evaluate(OVERFLOW_JS) == []
    page.wait_for_timeout(300)
    assert not page_log.errors, "console / page errors:\n" + "\n".join(page_log.errors)


# ------------------------------------------------------------------ marimo


# The view and its direct children against the output area: the table scrolls
# inside its own wrapper, so only what sticks out of the view counts here.
OVERFLOW_JS = """(root) => {
  const area = root.closest(".jp-OutputArea-output") || root.parentElement;
  const right = area.getBoundingClientRect().right + 1;
  const out = [];
  for (const e of [root, ...root.querySelectorAll(":scope > *")]) {
    const r = e.getBoundingClientRect();
    if (r.width && r.right > right) out.push([String(e.className), Math.round(r.right), Math.round(right)]);
  }
  return out;
}"""


@pytest.fixture
def marimo_explore(tmp_path: Path, sample_cache: Path, request: pytest.FixtureRequest) -> Iterator[Server]:
    cf = _sibling("conftest")
    root = tmp_path / "app"
    root.mkdir()
    body = "\n".join("    " + line if line else "" for line in BUILD.splitlines())
    app = root / "explore_app.py"
    app.write_text(MARIMO_APP.format(body=body), encoding="utf-8")
    with cf.run_marimo(app, tmp_path, sample_cache, request) as server:
        yield server


def test_explorer_in_marimo_light_and_dark(marimo_explore: Server, page: Any, page_log: PageLog) -> None:
    page.set_viewport_size({"width": WIDTH, "height": 1000})
    page.goto(f"{marimo_explore.base}/?access_token={marimo_explore.token}")
    view = page.locator("marimo-anywidget .srnb-xp")
    view.first.wait_for(timeout=180_000)
    assert view.count() == 1
    exercise(page, view, "marimo")
    page.emulate_media(color_scheme="dark")
    page.evaluate("() => document.documentElement.setAttribute('data-theme', 'dark')")
    page.evaluate("() => document.body.classList.add('dark')")
    page.wait_for_timeout(500)
    check_dark(page, view, "marimo")
    page.wait_for_timeout(300)
    assert not page_log.errors, "console / page errors:\n" + "\n".join(page_log.errors)


# ------------------------------------------------------------ hostile data, no server

HOSTILE = (
    '<img src=x onerror="window.__pwned=1"> refund \u202eevil "quoted" <script>window.__pwned=2</script>'
)
PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><style>{css}</style></head><body><div id="out" style="width:930px"></div>
<script type="module">
{module}
const traits = {traits};
const handlers = {{}};
let dirty = {{}};
const model = {{
  get: (k) => traits[k],
  set: (k, v) => {{ traits[k] = v; dirty[k] = v; }},
  save_changes: async () => {{
    const sent = dirty; dirty = {{}};
    const back = JSON.parse(await window.py_sync(JSON.stringify(sent)));
    for (const [k, v] of Object.entries(back)) {{ traits[k] = v; (handlers["change:" + k] || []).forEach((f) => f()); }}
  }},
  on: (ev, f) => {{ (handlers[ev] = handlers[ev] || []).push(f); }},
  off: () => {{}},
}};
render({{ model, el: document.getElementById("out") }});
window.__rendered = true;
</script></body></html>
"""


def test_hostile_text_in_rows_and_opened_traces_stays_text(
    chromium: Any, page_log: PageLog, tmp_path: Path
) -> None:
    """The widget's real module, a model that calls back into this process as a
    kernel would: a question and an answer holding markup and a bidi control
    are shown as characters, in the table and in the opened trace."""
    import json

    import selfrag_nb as sr
    from selfrag_nb.display.explore_widget import ExploreWidget, explore_module

    base = sr.Trace.load(_one_trace(tmp_path))
    fin = base.finish
    assert fin is not None
    hostile = base.model_copy(
        update={
            "question": HOSTILE,
            "records": [*base.records[:-1], fin.model_copy(update={"answer": HOSTILE + " (answer)"})],
        }
    )
    w = ExploreWidget(sr.explore([hostile, base]))
    traits = {k: v for k, v in w.get_state().items() if not k.startswith("_")}

    def py_sync(payload: str) -> str:
        for k, v in json.loads(payload).items():
            setattr(w, k, v)
        return json.dumps({"opened": w.opened, "text_hits": w.text_hits})

    page = chromium.new_page(viewport={"width": WIDTH, "height": 900})
    page.on("pageerror", lambda exc: page_log.errors.append(f"pageerror: {exc}"))
    page.expose_function("py_sync", py_sync)
    page.set_content(
        # "</" escaped: the traits sit inside an inline <script> (the data holds "</script>")
        PAGE.format(css=w._css, module=explore_module(), traits=json.dumps(traits).replace("</", "<\\/")),
        wait_until="load",
    )
    page.wait_for_function("() => window.__rendered === true")
    view = page.locator(".srnb-xp")
    first = view.locator("tbody .srnb-xp-row").first
    assert "<img src=x" in first.inner_text()
    assert "U+202E" in first.inner_text()
    first.click()
    opened = view.locator('.srnb-xp-opened[data-kind="trace"]')
    opened.wait_for()
    assert (
        "<script>window.__pwned=2</script> (answer)"
        in opened.locator(".srnb-card-finish .srnb-answer").inner_text()
    )
    assert page.locator("img").count() == 0
    assert page.locator("#out script").count() == 0
    assert page.evaluate("() => window.__pwned") is None
    assert w.explorer.selected[0].question == HOSTILE
    shoot(page, view, "explore-hostile-light")
    page.close()
    assert not page_log.errors, "\n".join(page_log.errors)


def _one_trace(tmp_path: Path) -> Path:
    """One real trace: a sample question answered by the offline model (hashing embedder)."""
    import selfrag_nb as sr

    kb = sr.KnowledgeBase.sample(embedder="hashing")
    return sr.SelfRAG(kb).ask("What is the refund window for a Pro subscription?").save(tmp_path / "t.json")
