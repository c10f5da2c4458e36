"""The Prompt Lab under marimo: ``marimo export html`` runs the notebook
tests/lab/marimo_prompt_lab.py in marimo's own runtime, where the lab's
display is its AnyWidget wrapped by ``mo.ui.anywidget`` (not the static
fallback faces.py uses when a widget cannot be built)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from selfrag_nb.promptlab import ROLE_LABELS

NOTEBOOK = Path(__file__).with_name("marimo_prompt_lab.py")

pytestmark = pytest.mark.slow


def test_prompt_lab_renders_as_a_widget_under_marimo(tmp_path: Path) -> None:
    pytest.importorskip("marimo")
    env = dict(os.environ)
    env["SELFRAG_NB_CACHE"] = str(tmp_path / "cache")
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    for k in [k for k in env if k.endswith("_API_KEY")]:
        del env[k]
    target = tmp_path / "lab.html"
    marimo = Path(sys.executable).with_name("marimo")
    out = subprocess.run(
        [str(marimo), "export", "html", str(NOTEBOOK), "-o", str(target)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr[-4000:]
    page = target.read_text(encoding="utf-8")
    # No cell failed.
    assert "marimo+error" not in page
    assert "Traceback" not in page
    # The lab is shown as an AnyWidget, opened on the role asked for, with what it is scored on.
    assert "marimo-anywidget" in page
    assert ROLE_LABELS["generate"] in page
    assert '"role": "generate"' in page  # the widget's synced state
    # The run is shown by its static face, which MathJax must leave alone.
    assert "srnb-root srnb-lab tex2jax_ignore mathjax_ignore" in page
    # Nothing was written next to where marimo ran (exports only go to prompt_lab_exports/ on demand).
    assert {p.name for p in tmp_path.iterdir()} <= {"cache", "lab.html"}
