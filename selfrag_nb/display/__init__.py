"""Views of records, traces and search hits: three faces for each object.

    record / Trace / Hits
      ._repr_mimebundle_() -> mimebundle(obj)
           text/plain   text_summary(obj)        one line          (text.py)
           text/html    static_html(obj)         no script         (html.py)
           widget view  TraceWidget(obj)         only inside a kernel (widget.py,
                                                 static/trace.js + trace.css)
      ._display_()         -> marimo_view(obj)   mo.ui.anywidget(...) in marimo
      view(obj)            -> TraceWidget        the interactive view, explicitly
      charts.*             -> plotly figures     (charts.py, plotly imported lazily)

Views never call models; records never hold widgets. Importing this package
imports neither anywidget nor plotly: the widget is built only when a kernel
can show it, and a failure to build it falls back to the static HTML.
"""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING, Any

from selfrag_nb.display.html import static_html
from selfrag_nb.display.text import text_summary

if TYPE_CHECKING:
    from selfrag_nb.display.widget import TraceWidget

__all__ = ["StaticView", "in_kernel", "marimo_view", "mimebundle", "static_html", "text_summary", "view"]

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
_log = logging.getLogger(__name__)


def in_kernel() -> bool:
    """True inside a Jupyter kernel (a widget comm can reach a front end)."""
    if "IPython" not in sys.modules:  # plain python: do not import IPython for nothing
        return False
    try:
        from IPython import get_ipython

        shell = get_ipython()
    except Exception:  # noqa: BLE001 - a broken IPython means "no kernel", not a crash in repr
        return False
    return shell is not None and getattr(shell, "kernel", None) is not None


def view(obj: object) -> TraceWidget:
    """The interactive AnyWidget view of a Trace, a stage record or Hits."""
    from selfrag_nb.display.widget import view as _view

    return _view(obj)


def mimebundle(obj: object) -> dict[str, Any]:
    """text/plain + text/html always; the widget view too when in a kernel."""
    bundle: dict[str, Any] = {"text/plain": text_summary(obj), "text/html": static_html(obj)}
    if in_kernel():
        try:
            widget = view(obj)
            data: Any = widget._repr_mimebundle_()
            if isinstance(data, tuple):  # anywidget returns (data, metadata)
                data = data[0]
            if data and WIDGET_MIME in data:
                bundle[WIDGET_MIME] = data[WIDGET_MIME]
        except Exception:  # noqa: BLE001 - a display hook must never raise; the static HTML still shows
            _log.debug("widget view unavailable, showing static HTML", exc_info=True)
    return bundle


class StaticView:
    """Static HTML with a text fallback, for front ends without widgets."""

    def __init__(self, obj: object) -> None:
        self.html = static_html(obj)
        self.text = text_summary(obj)

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        return self.text


def _marimo_running() -> bool:
    if "marimo" not in sys.modules:
        return False
    try:
        import marimo as mo

        return bool(mo.running_in_notebook())
    except Exception:  # noqa: BLE001 - marimo internals changed: behave as outside marimo
        return False


def marimo_view(obj: object) -> Any:
    """What marimo shows for ``obj``: the AnyWidget wrapped by ``mo.ui.anywidget``
    when marimo runs the cell, else static HTML (``mo.Html``) or a StaticView."""
    if _marimo_running():
        import marimo as mo

        try:
            return mo.ui.anywidget(view(obj))
        except Exception:  # noqa: BLE001 - no widget support in this marimo: show the static face
            return mo.Html(static_html(obj))
    return StaticView(obj)
