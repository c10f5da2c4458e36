"""What the browser tests share besides their fixtures (tests/browser/conftest.py):
their opening lines, the notebook code they run, driving a JupyterLab notebook,
serving a marimo app, bare pages for a widget's module, screenshots.

    ROOT, ARTIFACTS, needs_chromium     the checkout; test-artifacts/browser; the skip
                                        when /usr/bin/chromium is absent
    Server, PageLog                     conftest.py's Server and PageLog, duck-typed
    WIDTH, WIDGET_OUT, HTML_OUT         a notebook column (px); a cell's widget output
                                        and its text/html output
    sibling(name)                       tests/browser/NAME.py by path (not a package)
    CHECKOUT, REFUND_TRACE              a cell's opening: this checkout's package, then
                                        the tour's refund question answered offline
    run_all_cells(page, server, name)   open NAME in JupyterLab, run every cell, wait
                                        until the kernel is idle with every code cell
                                        counted; a cell's error fails at once
    open_notebook(page, server, name, cells)   NAME written and run in JupyterLab at
                                        WIDTH px, the file browser folded: the cells
    faces(cells, sel)                   the widget (cell 1) and static face (cell 2) of SEL
    jupyterlab_dark(page)               JupyterLab's dark theme, drawn
    marimo_template(value)              a one-cell marimo app showing VALUE ({body} to fill)
    serve_marimo(tmp_path, ..., build, value)   that app written and ``marimo run``
    open_marimo(page, server, sel)      the app at WIDTH px: its widget matching SEL
    marimo_dark(page)                   marimo in dark colours
    PAGE, widget_script(render)         a bare page at WIDTH; a widget module rendered
                                        on it with a stand-in model
    assert_light_text(view, sels)       in a dark theme: each SEL's text is light
    assert_no_page_errors(page, log)    no console or page error (late ones included)
    shoot(page, target, name)           test-artifacts/browser/NAME.png with target
                                        in view (the viewport grows to hold it)
    OVERFLOW_JS                         the elements of a view wider than their room
"""

from __future__ import annotations

import contextlib
import importlib.util
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

__all__ = [
    "ARTIFACTS",
    "CHECKOUT",
    "HTML_OUT",
    "OVERFLOW_JS",
    "PAGE",
    "REFUND_TRACE",
    "ROOT",
    "STATE_JS",
    "WIDGET_OUT",
    "WIDTH",
    "PageLog",
    "Server",
    "assert_light_text",
    "assert_no_page_errors",
    "faces",
    "jupyterlab_dark",
    "marimo_dark",
    "marimo_template",
    "needs_chromium",
    "open_marimo",
    "open_notebook",
    "run_all_cells",
    "serve_marimo",
    "shoot",
    "sibling",
    "widget_script",
]

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "browser"
ANSI = re.compile(r"\x1b\[[0-9;]*m")
needs_chromium = pytest.mark.skipif(
    not Path("/usr/bin/chromium").exists(),
    reason="Debian chromium is not installed at /usr/bin/chromium (apt-get install chromium)",
)
Server = Any  # conftest.py's Server and PageLog, duck-typed (not importable from here)
PageLog = Any

WIDTH = 950  # a JupyterLab notebook column
WIDGET_OUT = ".jp-OutputArea-output:not([data-mime-type])"
HTML_OUT = '.jp-OutputArea-output[data-mime-type="text/html"]'

#: A cell's first lines: the kernel imports THIS checkout, not the package the
#: venv was installed from (and says so if it did not).
CHECKOUT = f"""import sys
sys.path.insert(0, {str(ROOT)!r})
import selfrag_nb as sr
assert sr.__file__.startswith({str(ROOT)!r}), sr.__file__
"""
#: Then the refund question of the tour on the sample knowledge base, answered
#: by the offline model: ``trace``.
REFUND_TRACE = (
    CHECKOUT
    + """
kb = sr.KnowledgeBase.sample()
trace = sr.SelfRAG(kb).ask("What is the refund window for a Pro subscription?", user=sr.User("ana"))"""
)


def sibling(name: str) -> Any:
    """A module of tests/browser by path (the browser tests are not a package),
    loaded once: conftest.py's server helpers."""
    spec = importlib.util.spec_from_file_location(
        f"_browser_{name}", ROOT / "tests" / "browser" / f"{name}.py"
    )
    assert spec is not None
    assert spec.loader is not None
    if spec.name in sys.modules:
        return sys.modules[spec.name]
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up while it runs
    spec.loader.exec_module(mod)
    return mod


def open_notebook(page: Any, server: Server, name: str, cells: list[str]) -> Any:
    """NAME written with ``cells`` and run in JupyterLab at WIDTH px, the file
    browser folded so the notebook gets the page's width; its cells' locator."""
    server.write_notebook(name, cells)
    page.set_viewport_size({"width": WIDTH, "height": 1000})
    run_all_cells(page, server, name)
    page.evaluate(
        """() => { const s = window.jupyterapp.shell;
                   if (!s.leftCollapsed) return window.jupyterapp.commands.execute("application:toggle-left-area"); }"""
    )
    page.wait_for_timeout(300)
    return page.locator(".jp-Notebook .jp-Cell")


def faces(cells: Any, selector: str) -> tuple[Any, Any]:
    """The view matching ``selector`` as the first cell's widget (its value) and
    as the second cell's static face (text/html), once the widget is drawn."""
    view = cells.nth(0).locator(f"{WIDGET_OUT} {selector}")
    static = cells.nth(1).locator(f"{HTML_OUT} {selector}")
    view.wait_for(timeout=30_000)
    return view, static


def jupyterlab_dark(page: Any) -> None:
    """Switch JupyterLab to its dark theme and let it draw."""
    page.evaluate(
        """() => window.jupyterapp.commands.execute("apputils:change-theme", {theme: "JupyterLab Dark"})"""
    )
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'", timeout=30_000)
    page.wait_for_timeout(500)


_MARIMO_APP = """import marimo

app = marimo.App(width="medium")


@app.cell
def _():
    import marimo as mo
{body}
    VALUE
    return


if __name__ == "__main__":
    app.run()
"""


def marimo_template(value: str) -> str:
    """A one-cell marimo app whose output is ``value``; ``.format(body=...)``
    puts the cell's code (indented four spaces) before it."""
    return _MARIMO_APP.replace("VALUE", value)


@contextlib.contextmanager
def serve_marimo(
    tmp_path: Path, sample_cache: Path, request: pytest.FixtureRequest, *, name: str, build: str, value: str
) -> Iterator[Server]:
    """``marimo run`` of the app NAME.py: ``build`` in one cell showing ``value``
    (conftest.py's run_marimo: its own home, a token, the log kept)."""
    root = tmp_path / "app"
    root.mkdir()
    body = "\n".join("    " + line if line else "" for line in build.splitlines())
    app = root / f"{name}.py"
    app.write_text(marimo_template(value).format(body=body), encoding="utf-8")
    with sibling("conftest").run_marimo(app, tmp_path, sample_cache, request) as server:
        yield server


def open_marimo(page: Any, server: Server, selector: str) -> Any:
    """The marimo app at WIDTH px; its widget view matching ``selector``, once drawn."""
    page.set_viewport_size({"width": WIDTH, "height": 1000})
    page.goto(f"{server.base}/?access_token={server.token}")
    view = page.locator(f"marimo-anywidget {selector}")
    view.first.wait_for(timeout=180_000)
    return view


def marimo_dark(page: Any) -> None:
    """marimo in dark colours: the media query, its data-theme and body class."""
    page.emulate_media(color_scheme="dark")
    page.evaluate("() => document.documentElement.setAttribute('data-theme', 'dark')")
    page.evaluate("() => document.body.classList.add('dark')")
    page.wait_for_timeout(500)


def assert_light_text(view: Any, selectors: tuple[str, ...]) -> None:
    """In a dark theme, the first element of ``view`` matching each selector has
    light text (mean of its colour's channels above 128)."""
    for sel in selectors:
        fg = view.locator(sel).first.evaluate("(e) => getComputedStyle(e).color")
        channels = [int(x) for x in re.findall(r"\d+", fg)[:3]]
        assert sum(channels) / 3 > 128, (sel, fg)


def assert_no_page_errors(page: Any, page_log: PageLog) -> None:
    """No console or page error, after a moment for late ones."""
    page.wait_for_timeout(300)
    assert not page_log.errors, "console / page errors:\n" + "\n".join(page_log.errors)


#: A bare page at ``width`` px in a theme's colours (JupyterLab's --jp-* variables):
#: ``css``, ``theme``, ``width``, ``body`` and ``script`` to fill.
PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><style>{css}</style>
<style>body{{margin:0;font-family:sans-serif;{theme}}} #out{{width:{width}px;box-sizing:border-box;padding:8px}}</style>
</head><body><div id="out">{body}</div>{script}</body></html>
"""

_WIDGET_SCRIPT = """<script type="module">
{module}
const traits = {traits};
const model = {{
  get: (k) => traits[k],
  set: (k, v) => {{ traits[k] = v; }},
  save_changes: () => {{}},
SEND  on: () => {{}},
  off: () => {{}},
}};
RENDER({{ model, el: document.getElementById("out") }});
window.__rendered = true;
</script>"""


def widget_script(render: str, *, send: bool = False) -> str:
    """PAGE's script for a widget's ES module: a stand-in anywidget model over
    ``traits`` (set in place, nothing reaches a kernel; ``send`` adds a
    ``model.send`` that drops the message), then the module's ``render``
    function drawing into #out. ``.format(module=..., traits=json)`` fills it."""
    return _WIDGET_SCRIPT.replace("SEND", "  send: () => {{}},\n" if send else "").replace("RENDER", render)


#: The current notebook's kernel status, execution counts and error outputs,
#: read from JupyterLab's own models.
STATE_JS = """() => {
  const p = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  if (!p || !p.content || !p.sessionContext || !p.content.widgets) return null;
  const cells = p.content.widgets.filter((c) => c.model.type === "code");
  const errors = [];
  for (const c of cells) {
    for (let i = 0; i < c.model.outputs.length; i++) {
      const o = c.model.outputs.get(i).toJSON();
      if (o.output_type === "error") errors.push(o.ename + ": " + o.evalue + "\\n" + (o.traceback || []).join("\\n"));
    }
  }
  const k = p.sessionContext.session && p.sessionContext.session.kernel;
  return { status: k ? k.status : null, counts: cells.map((c) => c.model.executionCount), errors };
}"""

#: Every element of a view wider than the output area it sits in (at most 10).
OVERFLOW_JS = """(root) => {
  const out = [];
  const area = root.closest(".jp-OutputArea-output") || root.parentElement;
  const right = area.getBoundingClientRect().right + 1;
  if (root.scrollWidth > root.clientWidth + 1) out.push(["root", root.scrollWidth, root.clientWidth]);
  for (const e of root.querySelectorAll("*")) {
    const r = e.getBoundingClientRect();
    if (r.width && r.right > right) out.push([e.className && e.className.baseVal === undefined ? String(e.className) : e.tagName, Math.round(r.right), Math.round(right)]);
  }
  return out.slice(0, 10);
}"""


def run_all_cells(page: Any, server: Any, name: str, budget: float = 200.0) -> None:
    """Open ``name`` in JupyterLab, run all its cells, wait for the kernel to settle."""
    page.goto(server.url(f"/lab/tree/{name}"))
    page.wait_for_function(
        """(name) => {
          const p = window.jupyterapp && window.jupyterapp.shell && window.jupyterapp.shell.currentWidget;
          return !!(p && p.context && p.context.path === name && p.sessionContext
                    && p.sessionContext.session && p.sessionContext.session.kernel);
        }""",
        arg=name,
        timeout=60_000,
    )
    page.wait_for_selector(".jp-Notebook .jp-Cell", state="attached")
    page.evaluate(
        """async () => {
          const app = window.jupyterapp;
          await app.shell.currentWidget.sessionContext.ready;
          void app.commands.execute("notebook:run-all-cells");
        }"""
    )
    deadline = time.monotonic() + budget
    settled = 0
    state: dict[str, Any] | None = None
    while time.monotonic() < deadline:
        state = page.evaluate(STATE_JS)
        assert state is not None, "the notebook panel went away"
        if state["errors"]:
            pytest.fail("a cell raised:\n" + ANSI.sub("", "\n\n".join(state["errors"])))
        done = state["status"] == "idle" and all(c is not None for c in state["counts"])
        settled = settled + 1 if done else 0  # two idle polls: idle between cells is brief
        if settled >= 2:
            return
        time.sleep(0.5)
    pytest.fail(f"{name}: not finished after {budget} s: {state}")


def shoot(page: Any, target: Any, name: str) -> Path:
    """Screenshot with ``target`` in view; the viewport grows to hold all of it."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    size = page.viewport_size
    box = target.bounding_box()
    height = int(min(max(size["height"], (box["height"] if box else 0) + 250), 6000))
    page.set_viewport_size({"width": size["width"], "height": height})
    path = ARTIFACTS / f"{name}.png"
    try:
        target.scroll_into_view_if_needed()
        page.wait_for_timeout(200)
        page.screenshot(path=str(path))
    finally:
        page.set_viewport_size(size)
    return path
