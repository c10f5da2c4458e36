"""The interactive view of a Trace, a stage record or Hits: the generic ViewWidget.

    TraceWidget(obj)                         python side
      tree = to_json(view_tree(obj))  ---->  static/mount.js (the one widget script)
      selected_claim  <------------------>   click a claim (data-claim) -> its evidence
                                             (data-for-claim) lights up
      .update(obj, baseline=, what_if=)      a stepper re-running a stage refreshes the
                                             view; baseline: the trace before its what-if,
                                             folded below; open folds and pages are kept
      _repr_mimebundle_  the widget view + text/html (the same tree through to_html,
                   with the stylesheet) + text/plain (its summary): nbconvert, GitHub
                   and a notebook saved without widget state show the static view

The tree is built once in Python (display/html.py), so the widget and the
static HTML cannot drift apart. anywidget is imported here only, and this
module is imported only when a view is actually built.
"""

from __future__ import annotations

from typing import Any

from selfrag_nb.display.html import view_tree
from selfrag_nb.display.tree_widget import ViewWidget
from selfrag_nb.trace import Trace


class TraceWidget(ViewWidget):
    """Interactive view of a Trace, a stage record or Hits."""

    def __init__(self, obj: object, **kwargs: Any) -> None:
        super().__init__(view_tree(obj), shown=obj, **kwargs)

    def update(self, obj: object, baseline: Trace | None = None, what_if: str = "") -> None:
        """Show ``obj`` instead (same kind or not); the claim selection resets.
        ``baseline``: a Trace shown below ``obj`` as "before the what-if"."""
        self.show(view_tree(obj, baseline=baseline, what_if=what_if), shown=obj)
