"""What the browser tests share besides their fixtures (tests/browser/conftest.py):
driving a JupyterLab notebook and taking screenshots.

    run_all_cells(page, server, name)   open NAME in JupyterLab, run every cell, wait
                                        until the kernel is idle with every code cell
                                        counted; a cell's error fails at once
    shoot(page, target, name)           test-artifacts/browser/NAME.png with target
                                        in view (the viewport grows to hold it)
    OVERFLOW_JS                         the elements of a view wider than their room
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest

__all__ = ["ARTIFACTS", "OVERFLOW_JS", "STATE_JS", "run_all_cells", "shoot"]

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "browser"
ANSI = re.compile(r"\x1b\[[0-9;]*m")

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
