"""The interactive face of a Comparison: the generic ViewWidget over its tree.

    CompareWidget(cmp)
      tree = to_json(compare_tree(cmp))  ---->  static/mount.js (the one widget script)
        the first divergence's <details> start open; every <details data-key>
        stays as the reader left it across updates
      .update(cmp) shows another comparison

One tree (compare_html.compare_tree) feeds both faces, so the widget and the
static HTML show the same rows. anywidget is imported here only (through
tree_widget), and this module only when a view is built.
"""

from __future__ import annotations

from typing import Any

from selfrag_nb.comparison import Comparison
from selfrag_nb.display.compare_html import compare_css, compare_tree
from selfrag_nb.display.tree_widget import ViewWidget
from selfrag_nb.errors import InputTypeError


def _checked(cmp: object) -> Comparison:
    if not isinstance(cmp, Comparison):
        raise InputTypeError(f"CompareWidget shows a Comparison (sr.compare(a, b)), not {type(cmp).__name__}")
    return cmp


class CompareWidget(ViewWidget):
    """Interactive view of ``sr.compare(a, b)``."""

    _css = compare_css()

    def __init__(self, obj: object, **kwargs: Any) -> None:
        cmp = _checked(obj)
        super().__init__(compare_tree(cmp), shown=cmp, **kwargs)

    def update(self, obj: object) -> None:
        """Show ``obj`` (a Comparison) instead."""
        cmp = _checked(obj)
        self.show(compare_tree(cmp), shown=cmp)
