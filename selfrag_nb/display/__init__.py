"""Views of records, traces, search hits, evaluation results and the Prompt Lab:
three faces for each object, registered per type in one seam (faces.py).

    obj (a Displayable: record / Trace / Hits / EvalReport / Calibration /
         RegressionDiff / PromptLab / LabRun / Comparison / IngestReport /
         Explorer / Attribution)
      faces.tree(obj)      the view tree (tree.py), built once: records, Trace and Hits
                           (html.py view_tree), Comparison (compare_tree), IngestReport
                           (ingest_tree), LabelSheet (label_view.py; its widget,
                           label_widget.py, writes the label a mark sends); their text/html is to_html of it and their
                           widget mounts to_json of it (static/mount.js); the
                           evaluation views (eval_html.py) and the attribution matrix
                           (attribution_view.py) are trees too
      ._repr_mimebundle_() -> faces.mimebundle(obj)
           text/plain   faces.text(obj)     records: text_summary   (text.py)
                                            eval: the objects' own to_text
                                            lab: lab_text / run_text (prompt_lab_html.py)
                                            compare: compare_text (compare_html.py)
                                            ingest: ingest_text (ingest_html.py)
                                            explorer: explore_text (explore_view.py)
                                            attribution: attribution_view.py
           text/html    faces.html(obj)     records: static_html    (html.py)
                                            eval: eval_html.py
                                            lab: prompt_lab_html.py
                                            compare: compare_html.py
                                            ingest: ingest_html.py (static only)
                                            explorer: explore_view.py
                                            attribution: attribution_view.py
           widget view  faces.widget(obj)   TraceWidget (widget.py), EvalWidget
                                            (eval_widget.py), PromptLabWidget
                                            (prompt_lab_widget.py), CompareWidget
                                            (compare_widget.py), ExploreWidget
                                            (explore_widget.py), AttributionWidget
                                            (attribution_widget.py): only inside a kernel
      ._display_()         -> faces.marimo_view(obj)   mo.ui.anywidget(...) in marimo
      view(obj)            -> faces.widget(obj)        the interactive view, explicitly
      charts.*             -> plotly figures           (charts.py, plotly imported lazily)

Text enters HTML only through markup.py's ``escape`` (escaped, bidi and
invisible characters shown as labels); a view tree labels them while it is
built (tree.text_kids), and the explorer widget's JS labels the same set
(selfrag_nb.text.VIEW_CONTROLS, generated into its module by js.ctl_line).

Importing this package registers every renderer (text.py, html.py,
eval_html.py, prompt_lab_html.py, compare_html.py, ingest_html.py and the widget faces below). Views never
call models; records never hold widgets. Importing this package imports
neither anywidget nor plotly: a widget module is imported only when a view
is built, and a failure to build it falls back to the static HTML.
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
