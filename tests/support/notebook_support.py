"""The notebooks the display tests show a record in, as a user would.

    run_in_kernel(cells, tmp_path)   a real Jupyter kernel (nbclient) runs the cells,
                                     this checkout first on sys.path -> the notebook
                                     (outputs; widget state in its metadata)
    widget_states(nb, "EvalWidget")  the states the kernel left for one widget class
    export_marimo(cell, tmp_path)    ``marimo export html`` of a one-cell app -> the page

A missing nbformat / nbclient / marimo skips the test that asked for it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

__all__ = ["CHECKOUT", "export_marimo", "run_in_kernel", "widget_states"]

#: The checkout these tests run from: notebooks import its package first.
CHECKOUT = Path(__file__).resolve().parents[2]


def run_in_kernel(cells: list[str], tmp_path: Path) -> Any:
    """A notebook of ``cells`` run in a real Jupyter kernel (nbclient) in
    ``tmp_path``, the first cell putting this checkout first on sys.path; the
    executed notebook (outputs, widget state in its metadata). Skips the test
    where nbformat or nbclient is not installed."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    cells = [f"import sys; sys.path.insert(0, {str(CHECKOUT)!r})\n" + cells[0], *cells[1:]]
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    client = nbclient.NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    return nb


def widget_states(nb: Any, widget: str) -> list[dict[str, Any]]:
    """The widget states a kernel left in ``nb`` for the anywidget class ``widget``."""
    states = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    return [s for s in states.values() if s["state"].get("_anywidget_id", "").endswith(widget)]


_MARIMO_APP = """
import marimo

app = marimo.App()


@app.cell
def _():
{body}
    return


if __name__ == "__main__":
    app.run()
"""


def export_marimo(cell: str, tmp_path: Path) -> str:
    """``marimo export html`` of an app with one cell: this checkout first on
    sys.path, then ``cell`` (its last line the value shown); the exported page.
    Skips the test where marimo is not installed."""
    pytest.importorskip("marimo")
    cell = f"import sys\nsys.path.insert(0, {str(CHECKOUT)!r})\n" + cell
    app = tmp_path / "app.py"
    body = "\n".join("    " + line if line else "" for line in cell.splitlines())
    app.write_text(_MARIMO_APP.format(body=body), encoding="utf-8")
    out = tmp_path / "out.html"
    run = subprocess.run(
        [sys.executable, "-m", "marimo", "export", "html", str(app), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return out.read_text(encoding="utf-8")
