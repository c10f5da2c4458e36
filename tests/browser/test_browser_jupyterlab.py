"""The notebook views in a real JupyterLab, driven by Debian chromium.

    jupyterlab fixture (127.0.0.1, token, tmp root)  <-  01_tour.ipynb copied in
                                                      <-  hostile.ipynb generated
    chromium opens /lab/tree/<nb> -> window.jupyterapp (--expose-app-in-browser)
      -> notebook:run-all-cells; poll the notebook model until the kernel is idle
         and every code cell has an execution count (fail fast on an error output)
      -> assert the AnyWidget views are in the DOM, one card per stage
      -> interact: expand a retrieved chunk and a graded chunk, select a claim and
         read its evidence span, toggle the selection from the verify card
      -> no console error, no page error; screenshots in test-artifacts/browser/

The hostile notebook builds a knowledge base from a document carrying a
``<script>``, an ``<img onerror>``, ``javascript:`` links and bidi / zero-width
characters, shows the trace both as the widget and as ``trace.to_html()``
through ``IPython.display.HTML`` (outputs produced in the session are trusted,
so JupyterLab would run a script there), and checks none of it executed.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "browser"
needs_chromium = pytest.mark.skipif(
    not Path("/usr/bin/chromium").exists(),
    reason="Debian chromium is not installed at /usr/bin/chromium (apt-get install chromium)",
)
# The fixtures' types (conftest.py's Server and PageLog) are not importable
# from here without a package; they are duck-typed as Any.
Server = Any
PageLog = Any

pytestmark = [pytest.mark.browser, pytest.mark.slow, needs_chromium, pytest.mark.timeout(300)]

TOUR = ROOT / "notebooks" / "01_tour.ipynb"
# The widget renderer (a Lumino panel) sets no data-mime-type, unlike every
# mime renderer; the static face is the text/html one.
WIDGET_OUT = ".jp-OutputArea-output:not([data-mime-type])"
HTML_OUT = '.jp-OutputArea-output[data-mime-type="text/html"]'
RUN_BUDGET_S = 200.0
ANSI = re.compile(r"\x1b\[[0-9;]*m")

# Console errors JupyterLab itself may print that say nothing about our views.
# Each entry is a substring of the message; keep this list short and explained.
BENIGN_CONSOLE: tuple[str, ...] = ()

# --------------------------------------------------------------- notebook I/O

HOSTILE_DOC = (
    "# Payment policy\n\n"
    "The payment deadline is 30 days after the invoice date. "
    "<script>window.__srnb_pwned = 1</script>\n"
    "Late payments are charged a fee of 2 percent. "
    '<img src=x onerror="window.__srnb_pwned=2"> '
    "Details are in [the portal](javascript:window.__srnb_pwned=3) and "
    '<a href="javascript:window.__srnb_pwned=4">here</a>.\n\n'
    "Invoices are issued in \u202eEUR\u202c by the finance team\u200b, and "
    "\u05e9\u05dc\u05d5\u05dd \u0645\u0631\u062d\u0628\u0627 the deadline is strict.\n"
)

HOSTILE_CELLS = [
    f"""import tempfile
from pathlib import Path

import selfrag_nb as sr

work = Path(tempfile.mkdtemp())
(work / "docs").mkdir()
(work / "docs" / "payments.md").write_text({HOSTILE_DOC!r}, encoding="utf-8")
kb = sr.KnowledgeBase.open(work / "kb", embedder="hashing")
report = kb.ingest(work / "docs")
assert report.added == ["payments.md"], report""",
    """rag = sr.SelfRAG(kb)
trace = rag.ask("What is the payment deadline after the invoice date?")
assert [h.source for h in trace.retrieval.hits] == ["payments.md"], trace.retrieval.hits
trace""",
    """from IPython.display import HTML, display

display(HTML(trace.to_html()))""",
]


def _cell_sources(path: Path) -> list[str]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in nb["cells"]]


# ----------------------------------------------------------------- page driving

# The state of the current notebook, read from JupyterLab's own models.
STATE_JS = """() => {
  const app = window.jupyterapp;
  const panel = app && app.shell.currentWidget;
  if (!panel || !panel.content || !panel.sessionContext || !panel.content.widgets) return null;
  const cells = panel.content.widgets.filter((c) => c.model.type === "code");
  const errors = [];
  const stderr = [];
  for (const c of cells) {
    const outs = c.model.outputs;
    for (let i = 0; i < outs.length; i++) {
      const o = outs.get(i).toJSON();
      if (o.output_type === "error") errors.push(o.ename + ": " + o.evalue + "\\n" + (o.traceback || []).join("\\n"));
      if (o.output_type === "stream" && o.name === "stderr") stderr.push(String(o.text));
    }
  }
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  return {
    path: panel.context ? panel.context.path : null,
    status: kernel ? kernel.status : null,
    counts: cells.map((c) => c.model.executionCount),
    errors,
    stderr,
  };
}"""

RUN_ALL_JS = """async (name) => {
  const app = window.jupyterapp;
  const panel = app.shell.currentWidget;
  await panel.sessionContext.ready;
  // Not awaited: the run takes minutes; Python polls the models instead.
  void app.commands.execute("notebook:run-all-cells");
  return panel.context.path;
}"""


def open_notebook(page: Any, lab: Server, name: str) -> None:
    page.goto(lab.url(f"/lab/tree/{name}"))
    page.wait_for_function(
        """(name) => {
          const app = window.jupyterapp;
          const p = app && app.shell && app.shell.currentWidget;
          return !!(p && p.context && p.context.path === name && p.sessionContext
                    && p.sessionContext.session && p.sessionContext.session.kernel);
        }""",
        arg=name,
        timeout=60_000,
    )
    page.wait_for_selector(".jp-Notebook .jp-Cell", state="attached")


def run_all(page: Any, name: str) -> dict[str, Any]:
    """Run every cell and wait until the kernel is idle with every code cell
    counted; an error output fails at once with its traceback."""
    assert page.evaluate(RUN_ALL_JS, name) == name
    deadline = time.monotonic() + RUN_BUDGET_S
    state: dict[str, Any] | None = None
    settled = 0
    while time.monotonic() < deadline:
        state = page.evaluate(STATE_JS)
        assert state is not None, "the notebook panel went away"
        if state["errors"]:
            pytest.fail(f"{name}: a cell raised:\n" + ANSI.sub("", "\n\n".join(state["errors"])))
        done = state["status"] == "idle" and all(c is not None for c in state["counts"])
        # Two idle polls in a row: a kernel is briefly idle between two cells.
        settled = settled + 1 if done else 0
        if settled >= 2:
            return state
        time.sleep(0.5)
    pytest.fail(f"{name}: not finished after {RUN_BUDGET_S} s: {state}")


def cell(page: Any, index: int) -> Any:
    return page.locator(".jp-Notebook .jp-Cell").nth(index)


def index_of(sources: list[str], needle: str) -> int:
    hits = [i for i, s in enumerate(sources) if needle in s]
    assert hits, f"no cell contains {needle!r}"
    return hits[0]


def assert_clean_console(log: PageLog) -> None:
    errors = [e for e in log.errors if not any(b in e for b in BENIGN_CONSOLE)]
    assert not errors, "console / page errors:\n" + "\n".join(errors)


def shoot(page: Any, target: Any, name: str) -> None:
    """Screenshot with ``target`` in view; the viewport grows to hold all of
    it (an element screenshot inside JupyterLab's scroller is clipped)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    size = page.viewport_size
    box = target.bounding_box()
    height = int(min(max(size["height"], (box["height"] if box else 0) + 250), 6000))
    page.set_viewport_size({"width": size["width"], "height": height})
    try:
        target.scroll_into_view_if_needed()
        page.wait_for_timeout(200)  # let the notebook re-lay out at the new size
        page.screenshot(path=str(ARTIFACTS / f"{name}.png"))
    finally:
        page.set_viewport_size(size)


def expand(details: Any) -> None:
    """Open a <details> by clicking its summary, as a user would."""
    details.locator(":scope > summary").click()
    details.page.wait_for_function("(d) => d.open", arg=details.element_handle())


def select_claim(view: Any) -> Any:
    """Click the first claim of the verify card; return the <mark> on the span
    its evidence block (revealed and highlighted by the selection) shows."""
    view.locator(".srnb-card-verify [data-claim]").first.click()
    evidence = view.locator(".srnb-card-verify .srnb-evidence-for.srnb-sel").first
    evidence.wait_for()
    mark = evidence.locator("mark.srnb-mark").first
    mark.wait_for()  # visible: the claim's fold opened to show it
    return mark


# ------------------------------------------------------------------------ tests


def test_tour_runs_and_views_are_interactive(jupyterlab: Server, page: Any, page_log: PageLog) -> None:
    assert TOUR.exists(), "notebooks/01_tour.ipynb is missing"
    (jupyterlab.root / TOUR.name).write_bytes(TOUR.read_bytes())
    sources = _cell_sources(TOUR)

    open_notebook(page, jupyterlab, TOUR.name)
    state = run_all(page, TOUR.name)
    assert not any("Traceback" in s for s in state["stderr"]), state["stderr"]

    # One widget view per displayed record; every stage has its card somewhere.
    widgets = page.locator(f"{WIDGET_OUT} .srnb-root")
    assert widgets.count() >= 10, widgets.count()
    for stage in (
        "decide",
        "rewrite",
        "retrieve",
        "grade",
        "rerank",
        "assess",
        "generate",
        "verify",
        "usefulness",
        "finish",
    ):
        assert page.locator(f"{WIDGET_OUT} .srnb-card-{stage}").count() >= 1, stage
    assert page.locator(".jp-OutputArea-output .srnb-root script").count() == 0

    # The stepper cells: each shows the card of the stage it ran.
    for stage in (
        "decide",
        "rewrite",
        "retrieve",
        "grade",
        "rerank",
        "assess",
        "generate",
        "verify",
        "usefulness",
        "finish",
    ):
        c = cell(page, index_of(sources, f"step.{stage}()"))
        card = c.locator(f"{WIDGET_OUT} .srnb-card-{stage}")
        assert card.count() == 1, f"step.{stage}() shows no {stage} card"

    # The whole trace: header, every stage, the timeline.
    at = index_of(sources, "trace = rag.ask(")
    asked = re.search(r"rag\.ask\(\s*\"([^\"]+)\"", sources[at])
    assert asked, sources[at]
    view = cell(page, at).locator(f"{WIDGET_OUT} .srnb-root")
    assert view.count() == 1
    assert view.locator(".srnb-head .srnb-q").inner_text() == asked.group(1)
    assert view.locator(".srnb-card-totals .srnb-tl-bar").count() >= 5

    # Expand a retrieved chunk: its text is folded until opened.
    hit = view.locator(".srnb-card-retrieve details.srnb-hit").first
    assert not hit.locator(".srnb-block").is_visible()
    expand(hit)
    assert hit.locator(".srnb-block").inner_text().strip()

    # Click a claim in the answer: it and its evidence in Verify light up, the
    # evidence's fold opens and shows the marked span.
    claim = view.locator(".srnb-card-generate [data-claim]").first
    claim.click()
    index = claim.get_attribute("data-claim")
    evidence = view.locator(f".srnb-card-verify [data-for-claim='{index}']")
    evidence.wait_for()
    assert "srnb-sel" in (claim.get_attribute("class") or "")
    assert "srnb-sel" in (evidence.get_attribute("class") or "")
    assert evidence.locator("mark.srnb-mark").first.inner_text().strip()

    # Expand a graded chunk.
    graded = view.locator(".srnb-card-grade .srnb-grade-notes details").first
    expand(graded)
    assert graded.locator(".srnb-block").inner_text().strip()

    shoot(page, view, "jupyterlab-tour-trace")

    # Claim-level support (the stepper's verify cell): select a claim,
    # read the marked evidence span, then clear the selection.
    support = page.locator(f"{WIDGET_OUT} .srnb-root").filter(has=page.locator(".srnb-card-verify")).last
    assert support.count() == 1, "no widget shows a verify card"
    mark = select_claim(support)
    assert mark.inner_text().strip()
    support.locator(".srnb-card-verify [data-claim].srnb-sel").click()  # a second click clears it
    support.locator(".srnb-card-verify .srnb-sel").first.wait_for(state="detached")
    assert support.locator(".srnb-sel").count() == 0
    mark = select_claim(support)
    shoot(page, support, "jupyterlab-tour-support")

    page.wait_for_timeout(300)  # late console errors from the last re-render
    assert_clean_console(page_log)


def test_hostile_document_runs_no_script(jupyterlab: Server, page: Any, page_log: PageLog) -> None:
    name = "hostile.ipynb"
    jupyterlab.write_notebook(name, HOSTILE_CELLS)

    open_notebook(page, jupyterlab, name)
    run_all(page, name)

    widget = cell(page, 1).locator(f"{WIDGET_OUT} .srnb-root")
    static = cell(page, 2).locator(f"{HTML_OUT} .srnb-root")
    assert widget.count() == 1
    assert static.count() == 1

    # Open every chunk in both faces so the hostile text is in the DOM.
    hits = widget.locator(".srnb-card-retrieve details.srnb-hit")
    assert hits.count() >= 1
    for i in range(hits.count()):
        expand(hits.nth(i))
    mark = select_claim(widget)
    assert mark.inner_text() == "The payment deadline is 30 days after the invoice date."
    # The chunks opened above stay open across the re-render the selection caused.
    assert hits.first.get_attribute("open") is not None
    details = static.locator("details")
    for i in range(details.count()):
        d = details.nth(i)
        if d.is_visible() and d.get_attribute("open") is None:
            d.locator(":scope > summary").click()
    page.wait_for_timeout(500)  # an onerror handler would fire on the broken image now

    assert page.evaluate("() => typeof window.__srnb_pwned") == "undefined"
    for face in (widget, static):
        text = face.inner_text()
        # The markup arrives as text, shown to the reader, never as elements.
        assert "<script>window.__srnb_pwned = 1</script>" in text
        assert 'onerror="window.__srnb_pwned=2"' in text
        assert face.locator("script, img, iframe, object, embed").count() == 0
        assert face.locator("[href], [src], [onerror], [onclick]").count() == 0
        # Bidi override and zero-width space are labelled, not applied.
        assert face.locator(".srnb-ctl").filter(has_text="U+202E").count() >= 1
        assert face.locator(".srnb-ctl").filter(has_text="U+200B").count() >= 1
        assert "\u202e" not in text
    assert page.locator('.jp-OutputArea a[href^="javascript:"]').count() == 0

    shoot(page, widget, "jupyterlab-hostile-widget")
    shoot(page, static, "jupyterlab-hostile-static")
    assert page.evaluate("() => typeof window.__srnb_pwned") == "undefined"
    assert_clean_console(page_log)


# ------------------------------------------------------------- layout checks

# A question with two dollar amounts: MathJax would typeset "$20 and $" as maths.
LAYOUT_QUESTION = "What is the refund window if I paid $20 and then $30?"
LAYOUT_CELLS = [
    f"""import selfrag_nb as sr
from IPython.display import HTML, display

rag = sr.SelfRAG(sr.KnowledgeBase.sample())
trace = rag.ask({LAYOUT_QUESTION!r})
assert trace.rerank is not None and trace.grades is not None
trace""",
    "trace.rerank",
    "trace.grades",
    "trace.generation",
    "display(HTML(trace.to_html()))",
    "display(HTML(trace.rerank.to_html()))",
]

# Measured in the page, for every view root given: MathJax output inside it,
# cards wider than their box, grade-bar tick x positions per row, the visible
# text, and the alignment of plain table cells.
MEASURE_JS = """(roots) => roots.map((root) => {
  const cards = Array.from(root.querySelectorAll(".srnb-card"));
  const rows = Array.from(root.querySelectorAll(".srnb-card-grade .srnb-grade"));
  const td = root.querySelector(".srnb-table td:not(.srnb-r)");
  return {
    mathjax: root.querySelectorAll("mjx-container, .MathJax, .MathJax_Preview").length,
    overflow: cards.filter((c) => c.scrollWidth > c.clientWidth + 1).map((c) => c.className + " " + c.scrollWidth + ">" + c.clientWidth),
    ticks: rows.map((r) => Array.from(r.querySelectorAll(".srnb-tick")).map((t) => Math.round(t.getBoundingClientRect().left * 10) / 10)),
    text: root.innerText,
    td_align: td ? getComputedStyle(td).textAlign : null,
  };
})"""

HEX24 = re.compile(r"\b[0-9a-f]{24}\b")


def measure(page: Any, roots: Any) -> list[dict[str, Any]]:
    return page.evaluate(MEASURE_JS, roots.element_handles())


def check_layout(m: dict[str, Any], where: str) -> None:
    assert m["mathjax"] == 0, f"{where}: MathJax typeset our output"
    assert not m["overflow"], f"{where}: cards overflow horizontally: {m['overflow']}"
    if m["ticks"]:
        first = m["ticks"][0]
        assert len(first) == 2, f"{where}: cutoff ticks missing"
        for row in m["ticks"]:
            assert row == pytest.approx(first, abs=0.6), f"{where}: grade ticks at {row}, first row {first}"
    if m["td_align"] is not None:
        assert m["td_align"] in ("left", "start"), f"{where}: table cells aligned {m['td_align']}"


def test_views_keep_their_layout_and_name_documents(jupyterlab: Server, page: Any, page_log: PageLog) -> None:
    name = "layout.ipynb"
    jupyterlab.write_notebook(name, LAYOUT_CELLS)
    page.set_viewport_size({"width": 950, "height": 1000})
    open_notebook(page, jupyterlab, name)
    run_all(page, name)
    # MathJax typesets asynchronously after a render: give it the time it would take.
    page.wait_for_timeout(1500)

    widgets = [cell(page, i).locator(f"{WIDGET_OUT} .srnb-root").first for i in range(4)]
    statics = [cell(page, i).locator(f"{HTML_OUT} .srnb-root").first for i in (4, 5)]
    for w in widgets + statics:
        w.wait_for()
    # Open every grade's chunk and every hit so long texts are in the layout too.
    for view in (widgets[0], statics[0]):
        hits = view.locator(".srnb-card-retrieve details.srnb-hit")
        for i in range(min(hits.count(), 5)):
            hits.nth(i).locator(":scope > summary").click()

    names = [
        "widget trace",
        "widget rerank",
        "widget grades",
        "widget generation",
        "static trace",
        "static rerank",
    ]
    for where, root in zip(names, widgets + statics, strict=True):
        (m,) = measure(page, root)
        check_layout(m, where)
        if "trace" in where:  # the question's dollars stay text
            assert LAYOUT_QUESTION in m["text"], f"{where}: the question was changed (maths?)"

    # A rerank cell alone names its documents, never by a bare chunk id.
    for where, root in (("widget rerank", widgets[1]), ("static rerank", statics[1])):
        text = root.inner_text()
        assert ".md" in text, f"{where}: no file names"
        assert not HEX24.search(text), f"{where}: a bare chunk id is shown: {HEX24.search(text)}"
        # sample data: the 2024 refund policy is superseded, and it says so wherever it appears
        if "refund-policy-2024.md" in text:
            assert "superseded" in text, f"{where}: superseded document not flagged"
    assert not HEX24.search(widgets[2].inner_text()), "grades: a bare chunk id is shown"
    assert not HEX24.search(widgets[3].inner_text()), "generation: a bare chunk id is shown"

    for theme, tag in (("JupyterLab Light", "light"), ("JupyterLab Dark", "dark")):
        page.evaluate("(t) => window.jupyterapp.commands.execute('apputils:change-theme', {theme: t})", theme)
        page.wait_for_timeout(1200)
        # legible in either theme: the card titles follow the theme's text colour
        fg = (
            widgets[0].locator(".srnb-card-generate .srnb-stage").evaluate("(e) => getComputedStyle(e).color")
        )
        level = sum(int(x) for x in re.findall(r"\d+", fg)[:3]) / 3
        assert (level > 128) if tag == "dark" else (level < 128), f"{tag}: card title colour {fg}"
        shoot(page, widgets[0], f"jupyterlab-layout-trace-{tag}")
        shoot(page, widgets[1], f"jupyterlab-layout-rerank-{tag}")
        shoot(page, widgets[2], f"jupyterlab-layout-grades-{tag}")
        shoot(page, statics[0], f"jupyterlab-layout-static-{tag}")
    page.evaluate(
        "() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Light'})"
    )
    assert_clean_console(page_log)
