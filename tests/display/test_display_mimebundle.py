"""The three faces through the display protocols: outside a kernel, inside a
real Jupyter kernel (nbclient) and for marimo."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from display_fixtures import build_full_trace
from notebook_support import export_marimo, run_in_kernel, widget_states

from selfrag_nb.display import WIDGET_MIME, StaticView, in_kernel, marimo_view, mimebundle
from selfrag_nb.store.types import Hits
from selfrag_nb.trace import Trace

ROOT = Path(__file__).parents[2]


def test_outside_a_kernel_every_object_offers_html_and_text(full_trace: Trace, hits_obj: Hits) -> None:
    assert not in_kernel()
    for obj in (full_trace, *full_trace.records):
        bundle = obj._repr_mimebundle_()
        assert set(bundle) == {"text/plain", "text/html"}
        assert bundle["text/html"] == obj.to_html()
        assert bundle["text/plain"] == obj.to_text()
    assert hits_obj._repr_mimebundle_() == mimebundle(hits_obj)
    assert isinstance(hits_obj._display_(), StaticView)
    bundle = mimebundle(hits_obj)
    assert bundle["text/plain"].startswith("Hits: 3")
    assert "srnb-card-search" in bundle["text/html"]


def test_display_needs_no_widget_library_to_be_imported() -> None:
    code = (
        "import sys, json; sys.path.insert(0, 'tests/support'); from display_fixtures import build_full_trace;"
        "t = build_full_trace(); b = t._repr_mimebundle_();"
        "print(json.dumps([sorted(b), [m for m in ('anywidget', 'ipywidgets', 'plotly', 'IPython') if m in sys.modules]]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    keys, heavy = json.loads(out.stdout.strip().splitlines()[-1])
    assert keys == ["text/html", "text/plain"]
    assert heavy == []


def test_marimo_view_outside_marimo_is_static(full_trace: Trace) -> None:
    v = full_trace._display_()
    assert isinstance(v, StaticView)
    assert v._repr_html_() == full_trace.to_html()
    assert repr(v) == full_trace.to_text()
    assert isinstance(marimo_view(full_trace.records[0]), StaticView)


@pytest.mark.slow
def test_inside_a_kernel_the_widget_view_is_offered(tmp_path: Path) -> None:
    trace_path = build_full_trace().save(tmp_path / "t.json")
    nb = run_in_kernel(
        [
            f"from selfrag_nb.trace import Trace\ntrace = Trace.load({str(trace_path)!r})\ntrace",
            "trace.grades",
        ],
        tmp_path,
    )
    for cell in nb.cells:
        data = cell.outputs[-1]["data"]
        assert WIDGET_MIME in data, data.keys()
        assert data[WIDGET_MIME]["model_id"]
        assert data["text/html"].startswith('<div class="srnb-root tex2jax_ignore mathjax_ignore"')
        assert data["text/plain"].split(":")[0] in ("Trace", "Grades")
    # the widget's state went to the notebook's widget store with its JSON data
    ours = widget_states(nb, "TraceWidget")
    assert len(ours) == 2
    assert "What is the refund window?" in json.dumps(ours[0]["state"]["tree"], ensure_ascii=False)


@pytest.mark.slow
def test_in_marimo_records_display_as_mo_ui_anywidget(tmp_path: Path) -> None:
    html = export_marimo(
        f"sys.path.insert(0, {str(ROOT / 'tests' / 'support')!r})\n"
        "from display_fixtures import build_full_trace\n"
        "trace = build_full_trace()\n"
        "trace.grades",
        tmp_path,
    )
    # _display_ returned mo.ui.anywidget(TraceWidget): marimo embeds its element and the widget id
    assert "marimo-anywidget" in html
    assert "selfrag_nb.display.widget.TraceWidget" in html


def test_an_explicit_view_carries_the_static_face_too(full_trace: Trace) -> None:
    """``sr.view(trace)`` / ``step.view()`` return the widget itself: where no
    kernel renders it (nbconvert, GitHub, a notebook saved without widget
    state) its bundle's text/html is the record's static view, and the text
    is the record's summary, never "<TraceWidget object at 0x...>"."""
    from selfrag_nb.display.widget import TraceWidget

    def data(widget: TraceWidget) -> dict[str, Any]:
        bundle = widget._repr_mimebundle_()
        return bundle[0] if isinstance(bundle, tuple) else bundle  # (data, metadata) or data

    widget = TraceWidget(full_trace)
    bundle = data(widget)
    assert WIDGET_MIME in bundle
    assert bundle["text/html"] == full_trace.to_html()
    assert bundle["text/plain"] == full_trace.to_text()
    record = full_trace.records[0]
    widget.update(record)  # a stepper refreshing its view: the static face follows
    assert data(widget)["text/html"] == record.to_html()
