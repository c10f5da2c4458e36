"""Views of records, traces, search hits, evaluation results and the Prompt Lab:
three faces for each object, registered per type in one seam (faces.py).

    obj (a Displayable: record / Trace / Hits / EvalReport / Calibration / RegressionDiff /
         PromptLab / LabRun / Comparison / IngestReport / Explorer / Attribution / LabelSheet)
      faces.tree(obj)      the view tree (tree.py), built once by the type's view module:
                           html.py (records, Trace, Hits), eval_html.py, prompt_lab_html.py,
                           compare_html.py, ingest_html.py, explore_view.py,
                           attribution_view.py, label_view.py
      ._repr_mimebundle_() -> faces.mimebundle(obj)
           text/plain   faces.text(obj)     text.py for records; the view module's *_text
           text/html    faces.html(obj)     tree.to_html of the tree, stylesheet inlined
           widget view  faces.widget(obj)   to_json of the tree mounted by static/mount.js
                                            (TraceWidget, EvalWidget, PromptLabWidget, ...):
                                            only inside a kernel
      ._display_()         -> faces.marimo_view(obj)   mo.ui.anywidget(...) in marimo
      view(obj)            -> faces.widget(obj)        the interactive view, explicitly
      charts.*             -> plotly figures           (charts.py, plotly imported lazily)

Text enters HTML only through markup.py's ``escape`` (escaped, bidi and
invisible characters shown as labels); a view tree labels them while it is
built (tree.text_kids), and no widget script labels them itself: the
explorer's rows carry such a text as its view tree.

Importing this package registers every renderer. Views never call models;
records never hold widgets. Importing this package imports neither anywidget
nor plotly: a widget module is imported only when a view is built, and a
failure to build it falls back to the static HTML.
"""

from __future__ import annotations

from typing import Any

from selfrag_nb.display import attribution_view as _attribution_view  # noqa: F401 - registers the attribution faces
from selfrag_nb.display import compare_html as _compare_html  # noqa: F401 - registers the comparison faces
from selfrag_nb.display import eval_html as _eval_html  # noqa: F401 - registers the evaluation faces
from selfrag_nb.display import explore_view as _explore_view  # noqa: F401 - registers the explorer's faces
from selfrag_nb.display import ingest_html as _ingest_html  # noqa: F401 - registers the ingest report's faces
from selfrag_nb.display import label_view as _label_view  # noqa: F401 - registers the label sheet's faces
from selfrag_nb.display import prompt_lab_html as _prompt_lab_html  # noqa: F401 - registers the lab's faces
from selfrag_nb.display.faces import WIDGET_MIME, StaticView, in_kernel, marimo_view, mimebundle
from selfrag_nb.display.html import RECORD_TYPES, static_html, view_tree
from selfrag_nb.display.text import text_summary

__all__ = [
    "WIDGET_MIME",
    "StaticView",
    "in_kernel",
    "marimo_view",
    "mimebundle",
    "static_html",
    "text_summary",
    "view",
]


def view(obj: object) -> Any:
    """The interactive AnyWidget view of ``obj``: a TraceWidget for a Trace,
    a stage record or Hits; an EvalWidget for evaluation results; the Prompt
    Lab's widget for a PromptLab."""
    from selfrag_nb.display.faces import widget

    return widget(obj)


def _trace_widget(obj: object) -> Any:
    from selfrag_nb.display.widget import TraceWidget

    return TraceWidget(obj)


def _register() -> None:
    from selfrag_nb.display import faces

    for cls in RECORD_TYPES:
        faces.register(cls, text=text_summary, tree=view_tree, html=static_html, widget=_trace_widget)


_register()
