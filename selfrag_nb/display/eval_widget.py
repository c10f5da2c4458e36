"""The interactive face of evaluation results: the generic view widget with the
evaluation stylesheet.

    EvalWidget(obj)    obj: EvalReport | Calibration | RegressionDiff
      tree = to_json(eval_html.eval_view(obj))   ----->  static/mount.js (textContent only)
        charts: SVG nodes (svg_charts.py), one tab each (data-tabs)
        summary table: sorted by a click on a column header (data-sort)
        failures: one <details data-key> per variant, open across redraws
      .update(obj)   shows another result in the same widget
    faces.widget(obj) -> EvalWidget(obj)   registered in eval_html.py with the text and
                         static faces; the static face is the same tree through to_html
"""

from __future__ import annotations

from typing import Any

from selfrag_nb.display.eval_html import eval_css, eval_view
from selfrag_nb.display.tree_widget import ViewWidget


class EvalWidget(ViewWidget):
    """An EvalReport, a Calibration or a RegressionDiff, mounted by mount.js."""

    _css = eval_css()  # anywidget takes a path or the CSS text

    def __init__(self, obj: object, **kwargs: Any) -> None:
        super().__init__(eval_view(obj), shown=obj, **kwargs)

    def update(self, obj: object) -> None:
        """Show ``obj`` instead (open <details>, the chosen tab and sort are kept)."""
        self.show(eval_view(obj), shown=obj)
